# ptcore._tensor, tensor construction: _make_tensor, overflow-checked sizes, empty
# tensors (contiguous, strided like another), layout and overlap tests.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# tensor construction
# ---------------------------------------------------------------------------

cdef object _TensorClass = None     # ptcore.Tensor, set by ptcore.tensor
cdef tuple _EMPTY_TUPLE = ()


def _set_tensor_class(cls):
    global _TensorClass
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError("tensor class must subclass _TensorBase")
    _TensorClass = cls


cdef extern from *:
    """
    static PyObject *ptc_new_instance(PyObject *base, PyObject *cls, PyObject *args) {
        return ((PyTypeObject *)base)->tp_new((PyTypeObject *)cls, args, NULL);
    }
    """
    object ptc_new_instance(object base, object cls, object args)


cdef inline _TensorBase _new_instance(object cls):
    # the core's allocator (_TensorBase's tp_new) with cls as the type, never
    # cls.__new__: ptcore.Tensor's Python __new__ is the legacy constructor
    return <_TensorBase>ptc_new_instance(_TensorBase, cls, _EMPTY_TUPLE)


cdef _TensorBase _make_tensor(Storage storage, dtype dt, int ndim,
                              const Py_ssize_t* shape, const Py_ssize_t* strides,
                              Py_ssize_t offset):
    if dt._category == 4:
        raise RuntimeError(f"empty_strided not supported on quantized tensors yet (dtype "
                           f"{dt!r}); make quantized tensors with quantize_per_tensor")
    cdef Py_ssize_t n = _checked_numel(ndim, shape)
    cdef _TensorBase t = _new_instance(_TensorClass)
    t._storage = storage
    t._dtype = dt
    t._offset = offset
    t._alloc_dims(ndim)
    cdef int i
    for i in range(ndim):
        t._shape[i] = shape[i]
        t._strides[i] = strides[i]
    t._numel = n
    return t


cdef Py_ssize_t _checked_numel(int ndim, const Py_ssize_t* shape) except -1:
    """The product of ``shape``, multiplied left to right as PyTorch does;
    RuntimeError when it does not fit in int64."""
    cdef Py_ssize_t n = 1
    cdef int i
    for i in range(ndim):
        if ptc_mul_ovf(n, shape[i], &n):
            raise RuntimeError("numel: integer multiplication overflow")
    return n


cdef Py_ssize_t _storage_nbytes(int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                                Py_ssize_t offset, int itemsize) except -1:
    """Bytes of storage a strided view needs: ``(offset + 1 + sum((size-1)*stride)) *
    itemsize``, 0 when any size is 0; RuntimeError on int64 overflow."""
    cdef Py_ssize_t need = 0, term
    cdef int i
    cdef bint bad = False
    for i in range(ndim):
        if shape[i] == 0:
            return 0
    for i in range(ndim):
        if ptc_mul_ovf(shape[i] - 1, strides[i], &term) or ptc_add_ovf(need, term, &need):
            bad = True
            break
    if not bad:
        bad = (ptc_add_ovf(need, 1, &need) or ptc_add_ovf(need, offset, &need)
               or ptc_mul_ovf(need, itemsize, &need))
    if bad:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_fmt_list([shape[i] for i in range(ndim)])} "
            f"and strides={_fmt_list([strides[i] for i in range(ndim)])}")
    return need


cdef Py_ssize_t _checked_nbytes(int ndim, const Py_ssize_t* shape, int itemsize) except -1:
    """Bytes of a contiguous tensor of ``shape``: negative sizes and int64
    overflow (of the element count, the byte count or a stride) raise RuntimeError."""
    cdef Py_ssize_t n
    cdef unsigned long long numel = 1, dim
    cdef int i
    cdef bint bad = False
    for i in range(ndim):
        if shape[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {shape[i]}: {_fmt_list([shape[j] for j in range(ndim)])}")
    # as torch's computeStorageNbytesContiguous: the element count in uint64 (an overflow
    # sticks, even past a later 0), then the byte count in int64
    for i in range(ndim):
        dim = <unsigned long long>shape[i]
        if dim != 0 and numel > 0xFFFFFFFFFFFFFFFFULL // dim:
            bad = True
        numel *= dim
    if bad or numel > <unsigned long long>(0x7FFFFFFFFFFFFFFF // itemsize):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_fmt_list([shape[j] for j in range(ndim)])}")
    n = <Py_ssize_t>numel * itemsize
    # the contiguous strides (each the product of the later sizes, a 0 counted as 1) must
    # fit too: an empty (0, 2**62, 2**62) has no bytes but its dim-0 stride overflows
    cdef Py_ssize_t stride = 1
    for i in range(ndim - 1, 0, -1):
        if ptc_mul_ovf(stride, shape[i] if shape[i] > 1 else 1, &stride):
            raise RuntimeError("Stride calculation overflowed")
    return n


cdef bint _c32_warned = False


cdef int _warn_complex32() except -1:
    # PyTorch's TORCH_WARN_ONCE at the first allocation of a ComplexHalf tensor
    global _c32_warned
    if not _c32_warned:
        _c32_warned = True
        _warnings.warn("ComplexHalf support is experimental and many operators don't support it yet.",
                       UserWarning, stacklevel=3)
    return 0


cdef bint _complex_cast_warned = False


cpdef int _warn_complex_to_real(dtype src, dtype dst, int stacklevel=1) except -1:
    # PyTorch's TORCH_WARN_ONCE when a copy drops imaginary parts (not to bool)
    global _complex_cast_warned
    if src._category == 3 and dst._category != 3 and dst.num != PT_BOOL and not _complex_cast_warned:
        _complex_cast_warned = True
        _warnings.warn("Casting complex values to real discards the imaginary part",
                       UserWarning, stacklevel=stacklevel)
    return 0


cdef _TensorBase _empty_contig(dtype dt, int ndim, const Py_ssize_t* shape,
                               device dev, bint zero):
    if dt.num == PT_COMPLEX32:
        _warn_complex32()
    if ndim > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {ndim}")
    cdef _TensorBase t
    if dev._type_code != 0:
        _checked_nbytes(ndim, shape, dt.itemsize)
        _require_cpu(dev, "empty")
        t = _ops_of(dev).empty(list(_make_tuple(ndim, shape)), dt, dev)
        if zero:
            t.zero_()
        return t
    # ``shape`` may be another tensor's: copied before anything that could let
    # another thread change (or free) it
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    memcpy(sh, shape, ndim * sizeof(Py_ssize_t))
    cdef Py_ssize_t nbytes = _checked_nbytes(ndim, sh, dt.itemsize)
    cdef Storage st = _new_host_storage(nbytes, zero)
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    _contig_strides(ndim, sh, strides)
    return _make_tensor(st, dt, ndim, sh, strides, 0)


cdef void _like_strides(_TensorBase src, Py_ssize_t* strides) noexcept:
    """PyTorch's preserve_format strides for a tensor like ``src``: src's
    strides verbatim when src is non-overlapping and dense, else dense strides
    in src's dimension order (``infer_dense_strides``)."""
    cdef int nd = src._ndim
    cdef int perm[PT_MAX_DIMS]
    cdef int i, j, dim0, dim1, tmp, cmp
    cdef Py_ssize_t s, s0, s1
    if _non_overlapping_and_dense(src):
        for i in range(nd):
            strides[i] = src._strides[i]
        return
    # infer_dense_strides: stable insertion sort from the fastest dim; 0 strides do not move
    for i in range(nd):
        perm[i] = nd - 1 - i
    for i in range(1, nd):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            s0 = src._strides[perm[dim0]]
            s1 = src._strides[perm[dim1]]
            if s0 == 0 or s1 == 0:
                cmp = 0
            elif s0 < s1:
                cmp = -1
            elif s0 > s1:
                cmp = 1
            elif src._shape[perm[dim0]] > src._shape[perm[dim1]]:
                cmp = 1
            else:
                cmp = 0
            if cmp > 0:
                tmp = perm[dim0]
                perm[dim0] = perm[dim1]
                perm[dim1] = tmp
                dim1 = dim0
            elif cmp < 0:
                break
    s = 1
    for i in range(nd):
        strides[perm[i]] = s
        if src._shape[perm[i]] > 1:
            s *= src._shape[perm[i]]


def _preserve_format_strides(_TensorBase src not None):
    """The strides of a preserve_format tensor like ``src`` (the core's rule,
    for the device runtimes' ``empty_like``/``clone``)."""
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    _like_strides(src, strides)
    return [strides[i] for i in range(src._ndim)]


cdef _TensorBase _empty_strided_like(_TensorBase src, dtype dt, bint zero):
    """A new tensor shaped like ``src`` with PyTorch's preserve_format layout
    (``_like_strides``)."""
    cdef Py_ssize_t strides[PT_MAX_DIMS]
    if dt.num == PT_COMPLEX32:
        _warn_complex32()
    _like_strides(src, strides)
    return _alloc_like(src, dt, strides, zero)


cdef _TensorBase _alloc_like(_TensorBase src, dtype dt, const Py_ssize_t* strides, bint zero):
    """A new tensor on ``src``'s device with its shape and ``strides`` (dense)."""
    cdef device dev = src._storage.device
    cdef Storage st
    cdef _TensorBase t
    if dev._type_code != 0:
        _require_cpu(dev, "empty_like")
        t = _ops_of(dev).empty_strided(list(_make_tuple(src._ndim, src._shape)),
                                       list(_make_tuple(src._ndim, strides)), dt, dev)
        if zero:
            t.zero_()
        return t
    # src's geometry is read once, before the allocation (another thread may resize src)
    cdef int nd = src._ndim
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    memcpy(sh, src._shape, nd * sizeof(Py_ssize_t))
    # checked: an expanded view (stride 0) can hold more elements than any storage
    # (ones(1).expand(2**62).clone(): 2**62 * 4 bytes wrapped to 0, then a copy of 2**62)
    st = _new_host_storage(_checked_nbytes(nd, sh, dt.itemsize), zero)
    return _make_tensor(st, dt, nd, sh, strides, 0)


cdef bint _non_overlapping_and_dense(_TensorBase t) noexcept:
    cdef int nd = t._ndim
    cdef int perm[PT_MAX_DIMS]
    cdef int i, j, k
    cdef Py_ssize_t expected = 1
    if nd == 0 or t._numel == 0:
        return True
    for i in range(nd):
        perm[i] = i
    for i in range(1, nd):
        k = perm[i]
        j = i - 1
        while j >= 0 and (t._strides[perm[j]] > t._strides[k] or
                          (t._strides[perm[j]] == t._strides[k] and t._shape[perm[j]] > t._shape[k])):
            perm[j + 1] = perm[j]
            j -= 1
        perm[j + 1] = k
    for i in range(nd):
        k = perm[i]
        if t._shape[k] == 1:
            continue
        if t._strides[k] != expected:
            return False
        expected *= t._shape[k]
    return True
