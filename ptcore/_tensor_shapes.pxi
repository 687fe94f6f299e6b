# ptcore._tensor, shapes: ptcore.Size, dimension wrapping, shape-argument parsing and
# the strides of a view (view's stride computation).
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# Size
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    /* The C base of ptcore.Size: a tuple whose subscript is a C slot (an int
       index costs what it costs on a tuple; a slice is a Size again) and
       whose instances ptc_size_new fills in place (one allocation). */
    static PyTypeObject* ptc_size_type = NULL;      /* ptcore.Size, set at import */

    static PyObject* ptc_size_new(Py_ssize_t n, const Py_ssize_t* v) {
        PyObject* r = ptc_size_type->tp_alloc(ptc_size_type, n);
        if (r == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject* o = PyLong_FromSsize_t(v[i]);
            if (o == NULL) { Py_DECREF(r); return NULL; }
            PyTuple_SET_ITEM(r, i, o);
        }
        return r;
    }

    static PyObject* ptc_size_subscript(PyObject* self, PyObject* key) {
        PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
        if (r == NULL || !PySlice_Check(key) || ptc_size_type == NULL) return r;
        Py_ssize_t n = PyTuple_GET_SIZE(r);
        PyObject* s = ptc_size_type->tp_alloc(ptc_size_type, n);
        if (s == NULL) { Py_DECREF(r); return NULL; }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject* o = PyTuple_GET_ITEM(r, i);
            Py_INCREF(o);
            PyTuple_SET_ITEM(s, i, o);
        }
        Py_DECREF(r);
        return s;
    }

    static PyMappingMethods ptc_size_as_mapping = {0, ptc_size_subscript, 0};

    static PyTypeObject ptc_SizeBase_Type = {
        PyVarObject_HEAD_INIT(NULL, 0)
        "ptcore._tensor._SizeBase",                   /* tp_name */
        sizeof(PyTupleObject) - sizeof(PyObject*),    /* tp_basicsize */
        sizeof(PyObject*),                            /* tp_itemsize */
    };

    static PyObject* ptc_size_base_type(void) {
        if (ptc_SizeBase_Type.tp_base == NULL) {
            ptc_SizeBase_Type.tp_base = &PyTuple_Type;
            ptc_SizeBase_Type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_TUPLE_SUBCLASS;
            ptc_SizeBase_Type.tp_as_mapping = &ptc_size_as_mapping;
            ptc_SizeBase_Type.tp_doc = "C base of ptcore.Size (a tuple).";
            if (PyType_Ready(&ptc_SizeBase_Type) < 0) return NULL;
        }
        Py_INCREF(&ptc_SizeBase_Type);
        return (PyObject*)&ptc_SizeBase_Type;
    }

    static void ptc_set_size_type(PyObject* tp) {
        Py_INCREF(tp);
        ptc_size_type = (PyTypeObject*)tp;
    }
    """
    object ptc_size_base_type()
    object ptc_size_new(Py_ssize_t n, const Py_ssize_t* v)
    void ptc_set_size_type(object tp)


_SizeBase = ptc_size_base_type()


class Size(_SizeBase):
    """The shape of a tensor: a tuple of ints (``torch.Size``)."""

    __slots__ = ()
    __module__ = "ptcore"

    def __new__(cls, sizes=()):
        items = list(sizes)
        for k, s in enumerate(items):
            if isinstance(s, _TensorBase) and (<_TensorBase>s)._numel == 1 \
                    and (<_TensorBase>s)._dtype._category < 2:
                items[k] = int(s.item())     # torch reads a one-element integer tensor as an int
            elif type(s) is bool:
                items[k] = int(s)
            elif isinstance(s, (float, complex, _TensorBase)) or not hasattr(s, "__index__"):
                raise TypeError(f"ptcore.Size() takes an iterable of 'int' "
                                f"(item {k} is '{_typename(s)}')")
        return tuple.__new__(cls, items)

    def __repr__(self):
        return f"{_root_name}.Size([{', '.join(str(s) for s in self)}])"

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self):
        """Number of elements a tensor of this shape holds (the product in int64, wrapping
        as torch's c10::multiply_integers: a product past int64 is not a count)."""
        n = 1
        for s in self:
            n *= s
        return ((n + 0x8000000000000000) & 0xFFFFFFFFFFFFFFFF) - 0x8000000000000000

    def __reduce__(self):
        return (Size, (tuple(self),))


ptc_set_size_type(Size)


cdef inline object _make_size(int n, const Py_ssize_t* v):
    return ptc_size_new(n, v)


cdef inline tuple _make_tuple(int n, const Py_ssize_t* v):
    cdef tuple t = PyTuple_New(n)
    cdef int i
    cdef object o
    for i in range(n):
        o = v[i]
        Py_INCREF(o)
        PyTuple_SET_ITEM(t, i, o)
    return t


# ---------------------------------------------------------------------------
# small helpers on shapes
# ---------------------------------------------------------------------------

cdef inline int _wrap_dim(Py_ssize_t d, int ndim) except -1:
    cdef int n = ndim if ndim > 0 else 1
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return <int>(d + n if d < 0 else d)


def _wrap_dim_py(d, int ndim):
    return _wrap_dim(_operator.index(d), ndim)


cdef Py_ssize_t _dim_arg(object v) except? -1:
    """An ``int64`` argument (a dim, a count) as torch's argument parser reads it:
    a Python or NumPy integer, or a 0-d integer tensor; bools, one-element
    tensors of more dims, bool tensors and NumPy arrays are a TypeError."""
    if type(v) is int:
        return v
    if isinstance(v, bool) or isinstance(v, _np.ndarray) or (
            isinstance(v, _TensorBase) and ((<_TensorBase>v)._ndim != 0
                                            or (<_TensorBase>v)._dtype.num == PT_BOOL
                                            or (<_TensorBase>v)._dtype._category > 1)):
        raise TypeError(f"expected an int, got {_typename(v)}"
                        + (f" of {(<_TensorBase>v)._ndim} dims and dtype {(<_TensorBase>v)._dtype}"
                           if isinstance(v, _TensorBase) else ""))
    return _operator.index(v)


cdef Py_ssize_t _symint_arg(object v) except? -1:
    """A ``SymInt`` argument (an index, a start, a length) as torch reads it: like
    ``operator.index`` (one-element tensors and NumPy arrays included), but a bool
    is a TypeError and a bool tensor a RuntimeError."""
    if type(v) is int and -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        return v
    if isinstance(v, bool):
        raise TypeError(f"expected an int, got bool")
    if isinstance(v, _TensorBase) and (<_TensorBase>v)._dtype.num == PT_BOOL:
        raise RuntimeError("a bool tensor cannot be used as an integer argument")
    v = _operator.index(v)
    if -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        return v
    raise IntArgOverflowError("Overflow when unpacking long long")


_DTYPE_TYPE = dtype      # (for ``view``, whose ``dtype=`` keyword hides the class)


cdef object _view_as_dtype(_TensorBase t, object d):
    return t._view_dtype(<dtype>d)


cdef tuple _kw_shape(tuple args, object kw, str fname):
    """The shape arguments of ``view``/``reshape``/``permute``/``expand``: the positional ones,
    or the one given by keyword (torch's ``x.reshape(shape=...)``, ``x.permute(dims=...)``)."""
    if kw is None:
        return args
    if args:
        raise TypeError(f"{fname}() got its sizes both positionally and by keyword")
    return (kw,)


class IntArgOverflowError(TypeError, ValueError, RuntimeError, OverflowError):
    """An int argument (a size, a stride, an index) outside int64.  torch's argument
    parser raises TypeError for a size or stride and ValueError for an index, its own size
    arithmetic RuntimeError; this is all of them (and the OverflowError a C conversion
    raised before)."""


cdef inline object _int64_checked(object v, str fname, str argname, Py_ssize_t pos):
    """``v`` (a Python int) when it fits int64, else torch's unpacking error."""
    if -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
        return v
    raise IntArgOverflowError(f"{fname}(): argument '{argname}' failed to unpack the object at "
                              f"pos {pos + 1} with error \"Overflow when unpacking long long\"")


cdef list _int64_list(object seq, str fname, str argname):
    """A size or stride sequence as a list of ints, each within int64."""
    cdef list out = []
    for a in seq:
        if isinstance(a, bool):         # (an int to Python, not to torch's parser)
            raise TypeError(f"{fname}(): argument '{argname}' must be tuple of ints, but found "
                            f"element of type bool at pos {len(out)}")
        out.append(_int64_checked(_operator.index(a), fname, argname, len(out)))
    return out


cdef list _parse_shape_args(tuple args, str fname):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(Size)`` -> list of ints."""
    cdef object a
    if len(args) == 1 and not isinstance(args[0], int):
        a = args[0]
        if isinstance(a, (tuple, list)):
            args = tuple(a)
        elif isinstance(a, _TensorBase) or hasattr(a, "__index__"):
            args = (a,)
        else:
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, but found element of type {_typename(a)}")
    cdef list out = []
    for a in args:
        if isinstance(a, bool) or not (isinstance(a, int) or hasattr(a, "__index__")):
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, but found element of type {_typename(a)} at pos {len(out)}")
        if isinstance(a, _TensorBase) and (<_TensorBase>a)._dtype.num == PT_BOOL \
                and fname != "permute":     # (torch's permute reads a bool tensor as 0/1)
            raise RuntimeError(f"{fname}(): a bool tensor cannot be used as a size")
        out.append(_int64_checked(_operator.index(a), fname, "size", len(out)))
    return out


cdef inline void _contig_strides(int ndim, const Py_ssize_t* shape, Py_ssize_t* strides) noexcept:
    cdef Py_ssize_t s = 1
    cdef int i
    for i in range(ndim - 1, -1, -1):
        strides[i] = s
        s *= shape[i] if shape[i] > 1 else 1


cdef list _infer_size(list shape, Py_ssize_t numel):
    cdef Py_ssize_t prod = 1, v
    cdef int infer = -1
    cdef int i
    cdef bint overflow = False
    for i in range(len(shape)):
        v = shape[i]
        if v == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif v < 0:
            raise RuntimeError(f"invalid shape dimension {v}")
        elif not overflow and ptc_mul_ovf(prod, v, &prod):
            overflow = True
    if overflow:
        if numel == 0 and infer < 0:
            raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
    if infer >= 0:
        if prod == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_fmt_list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        if numel % prod != 0:
            raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
        shape = list(shape)
        shape[infer] = numel // prod
    elif prod != numel:
        raise RuntimeError(f"shape '{_fmt_list(shape)}' is invalid for input of size {numel}")
    return shape


cdef str _fmt_list(object seq):
    return "[" + ", ".join(str(x) for x in seq) + "]"


cdef object _compute_view_strides(_TensorBase t, list newshape):
    """Strides for viewing ``t`` as ``newshape`` without copying, or None
    (PyTorch's computeStride)."""
    cdef int old_nd = t._ndim
    cdef int new_nd = len(newshape)
    cdef list newstride = [0] * new_nd
    cdef int i
    if t._numel == 0:
        if [t._shape[i] for i in range(old_nd)] == newshape:
            return [t._strides[i] for i in range(old_nd)]
        s = 1
        for i in range(new_nd - 1, -1, -1):
            newstride[i] = s
            s *= max(newshape[i], 1)
        return newstride
    if old_nd == 0:
        for i in range(new_nd):
            newstride[i] = 1
        return newstride
    cdef int view_d = new_nd - 1
    cdef Py_ssize_t chunk_base_stride = t._strides[old_nd - 1]
    cdef Py_ssize_t tensor_numel = 1
    cdef Py_ssize_t view_numel = 1
    cdef int tensor_d
    for tensor_d in range(old_nd - 1, -1, -1):
        tensor_numel *= t._shape[tensor_d]
        if tensor_d == 0 or (t._shape[tensor_d - 1] != 1 and
                             t._strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = t._strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return newstride
