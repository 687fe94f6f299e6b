# ptcore._tensor, dtypes: the dtype objects, the default dtype, dtype lookups by name
# and from NumPy.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

cdef list _DTYPES = [None] * PT_NUM_TYPES
# the root module's name in reprs (``ptcore.float32``; ``torch.float32`` when
# ptcore.as_torch runs a program as torch, as torch prints them)
cdef str _root_name = "ptcore"


def set_root_name(str name):
    """Name the root module in the reprs of dtypes, layouts, memory formats,
    ``Size`` and the legacy type strings (``ptcore.as_torch``: ``"torch"``)."""
    global _root_name
    _root_name = name


def root_name():
    """The root module's name in reprs (see :func:`set_root_name`)."""
    return _root_name
cdef dict _DTYPE_BY_NAME = {}


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class dtype:
    """A tensor element type (``ptcore.float32`` ...), as ``torch.dtype``."""

    def __init__(self, *args, **kwargs):
        raise TypeError("cannot create 'ptcore.dtype' instances; use ptcore.float32, ptcore.int64, ...")

    def __repr__(self):
        return _root_name + "." + self._name

    def __reduce__(self):
        return (_dtype_from_name, (self._name,))

    def to_real(self):
        """The real counterpart of a complex dtype (identity otherwise)."""
        if self.num == PT_COMPLEX64:
            return _DTYPES[PT_FLOAT32]
        if self.num == PT_COMPLEX128:
            return _DTYPES[PT_FLOAT64]
        if self.num == PT_COMPLEX32:
            return _DTYPES[PT_FLOAT16]
        return self

    def to_complex(self):
        """The complex counterpart of a floating dtype."""
        if self.num == PT_FLOAT64:
            return _DTYPES[PT_COMPLEX128]
        if self.num == PT_FLOAT16:
            return _DTYPES[PT_COMPLEX32]
        if self.num in (PT_FLOAT32, PT_BFLOAT16):
            return _DTYPES[PT_COMPLEX64]
        if self.is_complex:
            return self
        raise RuntimeError(f"Unknown Complex ScalarType for {self._legacy}")


cdef dtype _new_dtype(int num, str name, int itemsize, int category, bint signed,
                      object np_dtype, str legacy):
    cdef dtype d = dtype.__new__(dtype)
    d.num = num
    d._name = name
    d.itemsize = itemsize
    d._category = category
    d.is_floating_point = category == 2
    d.is_complex = category == 3
    d.is_signed = signed
    d._np = np_dtype
    d._legacy = legacy
    _DTYPES[num] = d
    _DTYPE_BY_NAME[name] = d
    return d


cdef dtype _new_dtype_q(int num, str name, int itemsize, bint signed, str legacy):
    """A quantized dtype: named and pickled like the others, kept out of _DTYPES."""
    cdef dtype d = dtype.__new__(dtype)
    d.num = num
    d._name = name
    d.itemsize = itemsize
    d._category = 4
    d.is_signed = signed
    d._legacy = legacy
    _DTYPE_BY_NAME[name] = d
    return d


bool_ = _new_dtype(PT_BOOL, "bool", 1, 0, False, _np.dtype(_np.bool_), "Bool")
uint8 = _new_dtype(PT_UINT8, "uint8", 1, 1, False, _np.dtype(_np.uint8), "Byte")
int8 = _new_dtype(PT_INT8, "int8", 1, 1, True, _np.dtype(_np.int8), "Char")
int16 = _new_dtype(PT_INT16, "int16", 2, 1, True, _np.dtype(_np.int16), "Short")
int32 = _new_dtype(PT_INT32, "int32", 4, 1, True, _np.dtype(_np.int32), "Int")
int64 = _new_dtype(PT_INT64, "int64", 8, 1, True, _np.dtype(_np.int64), "Long")
float16 = _new_dtype(PT_FLOAT16, "float16", 2, 2, True, _np.dtype(_np.float16), "Half")
bfloat16 = _new_dtype(PT_BFLOAT16, "bfloat16", 2, 2, True, None, "BFloat16")
float32 = _new_dtype(PT_FLOAT32, "float32", 4, 2, True, _np.dtype(_np.float32), "Float")
float64 = _new_dtype(PT_FLOAT64, "float64", 8, 2, True, _np.dtype(_np.float64), "Double")
complex64 = _new_dtype(PT_COMPLEX64, "complex64", 8, 3, True, _np.dtype(_np.complex64), "ComplexFloat")
complex128 = _new_dtype(PT_COMPLEX128, "complex128", 16, 3, True, _np.dtype(_np.complex128), "ComplexDouble")
# ComplexHalf: no NumPy dtype (``.numpy()`` refuses it, as PyTorch)
complex32 = _new_dtype(PT_COMPLEX32, "complex32", 4, 3, True, None, "ComplexHalf")
# PyTorch's limited unsigned types: creation, copy/cast, NumPy both ways,
# eq/ne, bitwise and/or/xor, mul, sort; most other kernels refuse them
uint16 = _new_dtype(PT_UINT16, "uint16", 2, 1, False, _np.dtype(_np.uint16), "UInt16")
uint32 = _new_dtype(PT_UINT32, "uint32", 4, 1, False, _np.dtype(_np.uint32), "UInt32")
uint64 = _new_dtype(PT_UINT64, "uint64", 8, 1, False, _np.dtype(_np.uint64), "UInt64")
# PyTorch's 8-bit floating types (no NumPy dtype; they promote with no other type):
# creation, copy/cast, views, indexing; most kernels refuse them, as PyTorch's CPU kernels
float8_e4m3fn = _new_dtype(PT_FLOAT8_E4M3FN, "float8_e4m3fn", 1, 2, True, None, "Float8_e4m3fn")
float8_e5m2 = _new_dtype(PT_FLOAT8_E5M2, "float8_e5m2", 1, 2, True, None, "Float8_e5m2")
float8_e4m3fnuz = _new_dtype(PT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 1, 2, True, None,
                             "Float8_e4m3fnuz")
float8_e5m2fnuz = _new_dtype(PT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 1, 2, True, None,
                             "Float8_e5m2fnuz")

cdef dict _NP_TO_DTYPE = {d._np: d for d in _DTYPES if d._np is not None}

# PyTorch's quantized types (category 4): the dtype of a quantized tensor
# (ptcore._quantized), whose values are ints in a storage of the underlying integer
# type.  Their numbers lie past the kernels' tables (_DTYPES holds no quantized type):
# no core tensor has one (_make_tensor refuses them), so no kernel ever sees them.
cdef int PT_QUANTIZED_BASE = 64
qint8 = _new_dtype_q(PT_QUANTIZED_BASE, "qint8", 1, True, "QInt8")
quint8 = _new_dtype_q(PT_QUANTIZED_BASE + 1, "quint8", 1, False, "QUInt8")
qint32 = _new_dtype_q(PT_QUANTIZED_BASE + 2, "qint32", 4, True, "QInt32")
quint4x2 = _new_dtype_q(PT_QUANTIZED_BASE + 3, "quint4x2", 1, False, "QUInt4x2")
quint2x4 = _new_dtype_q(PT_QUANTIZED_BASE + 4, "quint2x4", 1, False, "QUInt2x4")


cdef dtype dtype_from_num(int num):
    return <dtype>_DTYPES[num]


def _setitem_scalar(value, dtype dt):
    """0-d CPU tensor of ``dt`` holding ``value`` converted with ``tensor[idx] = value`` rules."""
    cdef Py_ssize_t sh[1]
    cdef _TensorBase t = _empty_contig(dt, 0, sh, _CPU, False)
    _fill(t, value, True)
    return t


def _checked_scalar(value, dtype dt):
    """0-d CPU tensor of ``dt`` holding ``value`` converted as PyTorch's checked
    ``Scalar.to<T>()`` (masked_fill, alpha): float16 and complex32 must fit
    the half range, the other types as ``fill_``."""
    cdef Py_ssize_t sh[1]
    cdef _TensorBase t = _empty_contig(dt, 0, sh, _CPU, False)
    _encode_scalar(value, dt, t._ptr(), dt.num == PT_COMPLEX32)
    return t


def _dtype_from_name(str name):
    """Inverse of ``dtype.__reduce__`` (pickling by name, no code)."""
    try:
        return _DTYPE_BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown ptcore dtype name {name!r}") from None


def _all_dtypes():
    return list(_DTYPES)


def _dtype_from_numpy(np_dtype):
    """ptcore dtype for a NumPy dtype; TypeError if unsupported."""
    npd = _np.dtype(np_dtype)
    d = _NP_TO_DTYPE.get(npd)
    if d is None and not npd.isnative and _NP_TO_DTYPE.get(npd.newbyteorder("=")) is not None:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported.")
    if d is None:
        # torch names the dtype's scalar type as CPython does (its tp_name): numpy.object_,
        # numpy.datetime64 (no unit), numpy.str_, numpy.void, numpy.longdouble
        t = npd.type
        raise TypeError(
            f"can't convert np.ndarray of type {t.__module__}.{t.__name__}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool.")
    return d


cdef dtype _default_dtype = float32


def get_default_dtype():
    """The default floating point dtype (initially ``ptcore.float32``)."""
    return _default_dtype


def set_default_dtype(d):
    """Set the default floating point dtype (float16, bfloat16, float32 or float64)."""
    global _default_dtype
    if not isinstance(d, dtype) or not (<dtype>d).is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default_dtype = <dtype>d


cdef inline dtype _default_complex():
    return <dtype>_DTYPES[PT_COMPLEX128 if _default_dtype.num == PT_FLOAT64 else PT_COMPLEX64]


def _get_default_complex_dtype():
    return _default_complex()
