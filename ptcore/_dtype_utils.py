"""Type promotion (PyTorch's rules), ``finfo``/``iinfo``.

Categories: bool < integral < floating < complex.  Dimensioned tensors take
precedence over zero-dim tensors, which take precedence over Python scalars
("weak" types): a lower-category participant never changes the result's
dtype, a higher-category one lifts it to the default dtype of its category.
"""
import numpy as _np

from ptcore import _tensor as _C

# lowest to highest; ties that need a wider type are handled in _promote_pair
_ORDER = [_C.bool_, _C.uint8, _C.int8, _C.int16, _C.int32, _C.int64, _C.float16,
          _C.bfloat16, _C.float32, _C.float64, _C.complex32, _C.complex64, _C.complex128]
_RANK = {d._name: i for i, d in enumerate(_ORDER)}


def _promote_pair(a, b):
    names = {a._name, b._name}
    if names == {"uint8", "int8"}:
        return _C.int16
    if names == {"float16", "bfloat16"}:
        return _C.float32
    if a.is_complex != b.is_complex and (a.is_floating_point or b.is_floating_point):
        # complex with a real floating type: the complex type of the promoted reals
        return _promote_pair(a.to_real(), b.to_real()).to_complex()
    return a if _RANK[a._name] >= _RANK[b._name] else b


# PyTorch's limited unsigned types promote only with themselves and with the
# real floating types; the float8 types only with themselves; every other pair
# raises (see _promote)
_LIMITED = (_C.uint16, _C.uint32, _C.uint64)
_LIMITED_PARTNERS = (_C.float16, _C.bfloat16, _C.float32, _C.float64)
_FLOAT8 = (_C.float8_e4m3fn, _C.float8_e5m2, _C.float8_e4m3fnuz, _C.float8_e5m2fnuz)


def _build_table():
    n = len(_C._all_dtypes())
    table = [[None] * n for _ in range(n)]
    for a in _ORDER:
        for b in _ORDER:
            table[a.num][b.num] = _promote_pair(a, b)
    for u in _LIMITED:
        table[u.num][u.num] = u
        for f in _LIMITED_PARTNERS:
            table[u.num][f.num] = table[f.num][u.num] = f
    for f in _FLOAT8:
        table[f.num][f.num] = f
    return table


_PROMOTE = _build_table()


def _promote(a, b):
    """The promoted dtype of dtypes ``a`` and ``b`` (PyTorch's promoteTypes)."""
    r = _PROMOTE[a.num][b.num]
    if r is None and (a in _FLOAT8 or b in _FLOAT8):
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{a._legacy} and {b._legacy}")
    if r is None:
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{a._legacy} and {b._legacy}")
    return r


# C++ type names PyTorch prints in its dtype messages (``typeid`` names, as
# in "Expected out tensor to have dtype float, but got long int instead")
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>",
    "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "unsigned long",
    "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e5m2": "c10::Float8_e5m2",
    "float8_e4m3fnuz": "c10::Float8_e4m3fnuz", "float8_e5m2fnuz": "c10::Float8_e5m2fnuz",
}


def _cpp_name(dt):
    """PyTorch's C++ name of ``dt`` (a ptcore dtype)."""
    return _CPP_NAMES[dt._name]


def _refuse_complex32(kname, *tensors):
    """PyTorch's NotImplementedError for a CPU kernel without ComplexHalf
    (``tensors``: tensors, dtypes or anything else, which is ignored)."""
    for t in tensors:
        if t is _C.complex32 or getattr(t, "dtype", None) is _C.complex32:
            raise NotImplementedError(f"\"{kname}\" not implemented for 'ComplexHalf'")


def _refuse_limited(kname, *tensors):
    """PyTorch's NotImplementedError for a CPU kernel without the limited
    unsigned types uint16/uint32/uint64 (``tensors``: tensors, dtypes or
    anything else, which is ignored)."""
    for t in tensors:
        dt = t if isinstance(t, _C.dtype) else getattr(t, "dtype", None)
        if dt is not None and dt in _LIMITED:
            raise NotImplementedError(f"\"{kname}\" not implemented for '{dt._legacy}'")


def _refuse_float8(kname, *tensors):
    """PyTorch's NotImplementedError for a CPU kernel without the float8 types
    (``tensors``: tensors, dtypes or anything else, which is ignored)."""
    for t in tensors:
        dt = t if isinstance(t, _C.dtype) else getattr(t, "dtype", None)
        if dt is not None and dt in _FLOAT8:
            raise NotImplementedError(f"\"{kname}\" not implemented for '{dt._legacy}'")


_PY_DTYPE_TYPES = (bool, int, float, complex)


def _dtype_param(v, fname, name, pos):
    """A ``torch.dtype`` parameter as torch's parser reads it: a dtype or one of the
    Python types bool/int/float/complex; a string, None or a tensor is a TypeError."""
    if isinstance(v, _C.dtype):
        return v
    if v in _PY_DTYPE_TYPES:
        return _C._as_dtype(v)
    raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be torch.dtype, "
                    f"not {type(v).__name__}")


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` can be safely cast to."""
    a = _dtype_param(type1, "promote_types", "type1", 1)
    b = _dtype_param(type2, "promote_types", "type2", 2)
    if a._category == 4 or b._category == 4:         # quantized dtypes (torch's error)
        if a is b:
            return a
        raise RuntimeError(f"promoteTypes with quantized numbers is not handled yet; figure "
                           f"out what the correct rules should be, offending types: "
                           f"{a._legacy} {b._legacy}")
    return _promote(a, b)


def _category(dt):
    return dt._category


def _combine(higher, lower):
    """PyTorch's combine_categories(higher-priority, lower-priority)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        # a lower-priority complex keeps a floating higher's precision; over an
        # integral or bool higher it is taken as it is (so uint16 + 1j works)
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher._category == 0 or lower.is_floating_point or lower.is_complex:
        return _promote(higher, lower)
    return higher


def _scalar_type(x):
    if isinstance(x, bool):
        return _C.bool_
    if isinstance(x, int):
        return _C.int64
    if isinstance(x, float):
        return _C.get_default_dtype()
    if isinstance(x, complex):
        # torch's default complex type: complex32 under a float16 default
        return _C.complex32 if _C.get_default_dtype() is _C.float16 else \
            _C._get_default_complex_dtype()
    if isinstance(x, _np.generic):
        # torch's Scalar from a NumPy scalar: an integer one is an int, anything else
        # (np.bool_ and np.longdouble included) a double; only np.complex128 (a Python
        # complex) is complex
        if isinstance(x, _np.integer):
            return _C.int64
        if isinstance(x, (_np.bool_, _np.floating)):
            return _C.get_default_dtype()
        return _scalar_type(complex(x))
    raise TypeError(f"result_type: expected a Tensor or a Number, got {type(x).__name__}")


def _result_type(*args):
    """Promotion over any mix of tensors and Python scalars."""
    if len(args) == 2:
        a, b = args
        if isinstance(a, _C._TensorBase) and isinstance(b, _C._TensorBase) and a.dtype is b.dtype:
            return a.dtype                  # the common case, without the category walk
    dim_r = zero_r = wrapped_r = None
    for a in args:
        if isinstance(a, _C._TensorBase):
            dt = a.dtype
            if a.dim() > 0:
                dim_r = dt if dim_r is None else _promote(dim_r, dt)
            else:
                zero_r = dt if zero_r is None else _promote(zero_r, dt)
        elif a is None:
            continue
        else:
            dt = _scalar_type(a)
            wrapped_r = dt if wrapped_r is None else _promote(wrapped_r, dt)
    r = _combine(dim_r, _combine(zero_r, wrapped_r))
    if r is None:
        raise TypeError("result_type: no tensors or numbers given")
    return r


def result_type(tensor, other):
    """dtype of an arithmetic op on the two operands (tensors or numbers)."""
    for v in (tensor, other):
        if not isinstance(v, (_C._TensorBase, bool, int, float, complex, _np.generic)):
            raise TypeError(f"result_type(): arguments must be tensors or numbers, got "
                            f"{type(v).__name__}")
    for t, n in ((tensor, other), (other, tensor)):
        if isinstance(t, _C._TensorBase) and t.dtype is _C.bool_ and type(n) is int \
                and 0x8000000000000000 <= n <= 0xFFFFFFFFFFFFFFFF:
            # (an int past int64 is torch's uint64 Scalar: with a bool tensor it sets the
            # type, and uint64 promotes with nothing; binary ops raise the same)
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               "attempted to promote Bool and UInt64")
    return _result_type(tensor, other)


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` -> ``to`` for in-place/out ops."""
    a = _dtype_param(from_, "can_cast", "from_", 1)
    b = _dtype_param(to, "can_cast", "to", 2)
    if a.is_complex and not b.is_complex:
        return False
    if a.is_floating_point and b._category < 2:
        return False
    if a._category > 0 and b._category == 0:
        return False
    return True


# eps, max, smallest normal of the float8 types (PyTorch's finfo)
_FLOAT8_FINFO = {
    "float8_e4m3fn": (0.125, 448.0, 2.0 ** -6), "float8_e5m2": (0.25, 57344.0, 2.0 ** -14),
    "float8_e4m3fnuz": (0.125, 240.0, 2.0 ** -7), "float8_e5m2fnuz": (0.125, 57344.0, 2.0 ** -15),
}


class finfo:
    """Machine limits of a floating dtype (``torch.finfo``)."""

    def __init__(self, type=None):
        dt = _C.get_default_dtype() if type is None else _dtype_param(type, "finfo", "type", 1)
        if dt.is_complex:
            dt = dt.to_real()
        if not dt.is_floating_point:
            raise TypeError(f"finfo() requires a floating point input type. Use iinfo to handle '{dt!r}'")
        self.dtype = dt._name
        if dt is _C.bfloat16:
            self.bits = 16
            self.eps = 0.0078125
            self.max = 3.3895313892515355e38
            self.min = -3.3895313892515355e38
            self.tiny = self.smallest_normal = 1.1754943508222875e-38
            self.resolution = 0.01
        elif dt in _FLOAT8:
            self.bits = 8
            self.eps, self.max, self.tiny = _FLOAT8_FINFO[dt._name]
            self.min = -self.max
            self.smallest_normal = self.tiny
            self.resolution = 1.0
        else:
            fi = _np.finfo(dt._np)
            self.bits = int(fi.bits)
            self.eps = float(fi.eps)
            self.max = float(fi.max)
            self.min = float(fi.min)
            self.tiny = self.smallest_normal = float(fi.smallest_normal)
            self.resolution = 10.0 ** -int(fi.precision)   # a Python float, as PyTorch

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (``torch.iinfo``)."""

    def __init__(self, type):
        dt = _dtype_param(type, "iinfo", "type", 1)
        if dt.is_floating_point or dt.is_complex:
            raise TypeError(f"iinfo() requires an integer input type. Use finfo to handle '{dt!r}'")
        if dt is _C.bool_:
            raise TypeError("ptcore.bool is not supported by ptcore.iinfo")
        self.dtype = dt._name
        # a quantized dtype: the limits of the integers that store it (as torch's)
        ii = _np.iinfo(_np.int32 if dt is _C.qint32 else _np.int8 if dt is _C.qint8 else
                       _np.uint8) if dt._category == 4 else _np.iinfo(dt._np)
        self.bits, self.min, self.max = int(ii.bits), int(ii.min), int(ii.max)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"    # torch's %g
