# ptcore._tensor, indexing helpers of __getitem__ / __setitem__: the advanced-indexing
# hooks, slicing one dim, Ellipsis rules, what t[idx] = value takes and
# the assignment itself.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

cdef object _advanced_getitem = None
cdef object _advanced_setitem = None


def _set_indexing_hooks(getter, setter):
    """Advanced (tensor/list/mask) indexing lives in ptcore._ops.indexing."""
    global _advanced_getitem, _advanced_setitem
    _advanced_getitem = getter
    _advanced_setitem = setter


cdef _TensorBase _slice_dim(_TensorBase self, int d, Py_ssize_t start, Py_ssize_t end):
    """``at::slice(self, d, start, end)``: wraps negatives, clamps, keeps start's offset."""
    cdef Py_ssize_t size = self._shape[d]
    if start < 0:
        start += size
    if end < 0:
        end += size
    if start < 0:
        start = 0
    elif start >= size:
        start = size
    if end < start:
        end = start
    elif end >= size:
        end = size
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef int i
    for i in range(self._ndim):
        sh[i] = self._shape[i]
    sh[d] = end - start
    return self._view(self._ndim, sh, self._strides, self._offset + start * self._strides[d], VK_SLICE)


def _number_as_tensor(src):
    """``copy_``'s source: torch wraps a Python number as a 0-d tensor of its
    own dtype (bool, int64, float64, complex128); anything else unchanged."""
    if type(src) not in (bool, int, float, complex):
        return src
    if type(src) is int and not -2 ** 63 <= src < 2 ** 63:
        raise OverflowError("int too big to convert")
    return full((), src, dtype=(bool_ if type(src) is bool else int64 if type(src) is int
                                else float64 if type(src) is float else complex128))


#: more pieces than chunk/tensor_split can return (one tensor object each): torch's
#: std::vector of them fails to allocate (RuntimeError), ptcore would build the tuple for
#: hours before running out of memory
_MAX_PIECES = 1 << 24


def _check_pieces(str fname, n):
    if n > _MAX_PIECES:
        raise RuntimeError(f"{fname}: cannot make {n} pieces, one tensor each (torch: "
                           "std::bad_alloc / cannot create std::vector larger than max_size())")


cdef inline bint _is_basic_index(object o) noexcept:
    return (o is None or o is Ellipsis or type(o) is slice or type(o) is int or type(o) is bool)


cdef int _count_ellipses(tuple items) noexcept:
    """How many items are Ellipsis, by identity (``tuple.count`` compares with
    ``==``, which a NumPy array index answers elementwise)."""
    cdef int n = 0
    for it in items:
        if it is Ellipsis:
            n += 1
    return n


cdef tuple _drop_extra_ellipses(tuple items, int nd):
    """PyTorch accepts several Ellipsis in one index: each one advances its
    dimension cursor by the dims the other items leave, so the first expands
    as usual and a later one points past the last dimension, where only more
    Ellipsis and full slices (no-ops) may follow.  The equivalent
    single-Ellipsis index, or IndexError as torch's."""
    cdef int specified = 0, n = 0, second = -1, k
    for it in items:
        if isinstance(it, _TensorBase) and ((<_TensorBase>it)._dtype is bool_
                                            or (<_TensorBase>it)._dtype is uint8):
            specified += (<_TensorBase>it)._ndim      # a mask covers its dims
        elif isinstance(it, _np.ndarray) and it.dtype == _np.bool_:
            specified += it.ndim
        elif it is not None and it is not Ellipsis and type(it) is not bool:
            specified += 1
    if nd - specified <= 0:   # every Ellipsis expands to no dimension
        return tuple(it for it in items if it is not Ellipsis)
    n = 0
    for k in range(len(items)):
        if items[k] is Ellipsis:
            n += 1
            if n == 2:
                second = k
                break
    for it in items[second:]:
        if not (it is Ellipsis or (type(it) is slice and it == slice(None))):
            raise IndexError(f"an index after a second ellipsis ('...') addresses a dimension past "
                             f"the last of a tensor of dimension {nd}")
    return items[:second]


# What ``t[idx] = value`` takes, as PyTorch: a tensor or a Python number
# (NumPy integers count as ints, ``float64``/``complex128`` subclass float and
# complex); lists, arrays and other NumPy scalars are refused with TypeError.
_SETITEM_VALUE_TYPES = (_TensorBase, bool, int, float, complex, _np.integer)


cdef int _refuse_setitem_value(_TensorBase self, object value) except -1:
    cdef type tp = type(value)
    name = tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__name__}"
    # the tensor's legacy type name, as torch's message: ptcore.FloatTensor, ptcore.cuda.FloatTensor
    where = "ptcore.cuda." if self._storage.device._type_code == 1 else "ptcore."
    raise TypeError(f"can't assign a {name} to a {where}{self._dtype._legacy}Tensor")


cdef int _assign(_TensorBase dst, object value) except -1:
    """``dst[...] = value`` for a view ``dst`` (tensor, number or nested data)."""
    cdef _TensorBase src
    if isinstance(value, _TensorBase):
        src = <_TensorBase>value
        # PyTorch drops leading size-1 dims of the value ("slicePrefix1sSize")
        while src._ndim > dst._ndim and src._shape[0] == 1:
            src = src._select(0, 0)
        if src._storage.device._type_code != 0 or dst._storage.device._type_code != 0:
            _device_copy(dst, src, False)
        else:
            _check_partial_overlap(dst, src)
            _copy_into(dst, src)
        return 0
    if isinstance(value, (bool, int, float, complex)) or (
            hasattr(value, "__index__") or hasattr(value, "__float__")) and not hasattr(value, "__len__"):
        if dst._storage.device._type_code != 0:
            _device_fill(dst, value)
        else:
            _fill(dst, value, True)
        return 0
    return _assign(dst, _module_hook(_tensor_from_data_fn, "Tensor.__setitem__")(value, dtype=dst._dtype))
