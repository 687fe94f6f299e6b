# ptcore._tensor, pickling by value and deepcopy.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# pickling by value, deepcopy
# ---------------------------------------------------------------------------

cdef tuple _reduce_tensor(_TensorBase t):
    cdef _TensorBase c = t
    if t._storage._kind == STORAGE_META:
        # no data: the dtype and geometry (as torch's _rebuild_meta_tensor_no_storage)
        d = getattr(t, "__dict__", None)
        return (_rebuild_meta_tensor, (t._dtype._name, _make_tuple(t._ndim, t._shape),
                                       _make_tuple(t._ndim, t._strides),
                                       bool(t._requires_grad), type(t), dict(d) if d else None))
    if t._storage._kind == STORAGE_WRAPPER:
        # no data either: a wrapper subclass (torch's _rebuild_wrapper_subclass); what
        # it wraps is in its attributes
        d = getattr(t, "__dict__", None)
        return (_rebuild_wrapper_tensor, (t._dtype._name, _make_tuple(t._ndim, t._shape),
                                          _make_tuple(t._ndim, t._strides), t._offset,
                                          str(t._storage.device), bool(t._requires_grad),
                                          type(t), dict(d) if d else None))
    if t._storage.device._type_code != 0:
        c = t.cpu()
    # by value: the tensor's own elements only (never the rest of a larger
    # storage), in torch's preserve_format layout (a transposed or permuted
    # tensor keeps its strides, as torch's pickle does)
    cdef _TensorBase src
    if c._offset != 0 or c._storage._nbytes != c._numel * c._dtype.itemsize \
            or not _non_overlapping_and_dense(c):
        src = c
        c = _empty_strided_like(src, src._dtype, False)
        _copy_into(c, src)
    data = c._storage._bytes()
    state = None
    d = getattr(t, "__dict__", None)
    if d:
        state = dict(d)
    return (_rebuild_tensor, (data, t._dtype._name, _make_tuple(t._ndim, t._shape),
                              bool(t._requires_grad), str(t._storage.device), type(t), state,
                              _make_tuple(c._ndim, c._strides)))


def _rebuild_tensor(bytes data, str dtype_name, tuple shape, bint requires_grad=False,
                    str dev="cpu", cls=None, state=None, tuple strides=None):
    """Rebuild a pickled tensor from its bytes (no code runs beyond this):
    ``strides`` (dense, within the bytes) or contiguous."""
    cdef dtype dt = _dtype_from_name(dtype_name)
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise ValueError("corrupt tensor pickle: too many dimensions")
    for i in range(nd):
        sh[i] = shape[i]
    cdef Py_ssize_t nbytes = _checked_nbytes(nd, sh, dt.itemsize)
    if nbytes != len(data):
        raise ValueError(
            f"corrupt tensor pickle: shape {list(shape)} of {dt!r} needs {nbytes} bytes, got {len(data)}")
    if strides is None:
        _contig_strides(nd, sh, st)
    elif len(strides) != nd:
        raise ValueError(f"corrupt tensor pickle: {len(strides)} strides for {nd} dimensions")
    else:
        for i in range(nd):
            st[i] = strides[i]
            if st[i] < 0:
                raise ValueError(f"corrupt tensor pickle: negative stride in {list(strides)}")
        if _storage_nbytes(nd, sh, st, 0, dt.itemsize) > nbytes:
            raise ValueError(f"corrupt tensor pickle: strides {list(strides)} of shape "
                             f"{list(shape)} reach past its {nbytes} bytes")
    cdef _TensorBase t = _make_tensor(_new_host_storage(nbytes, False), dt, nd, sh, st, 0)
    if nbytes:
        memcpy(t._ptr(), <const char*>data, nbytes)
    r = _rebuilt_as(t, cls, requires_grad, state)
    if dev != "cpu":
        return r.to(dev)
    return r


def _rebuild_meta_tensor(str dtype_name, tuple shape, tuple strides, bint requires_grad=False,
                         cls=None, state=None):
    """Rebuild a pickled meta tensor (no data) from its dtype and geometry."""
    t = empty_strided(shape, strides, dtype=_dtype_from_name(dtype_name), device="meta")
    return _rebuilt_as(t, cls, requires_grad, state)


def _rebuild_wrapper_tensor(str dtype_name, tuple shape, tuple strides, Py_ssize_t offset,
                           str dev, bint requires_grad=False, cls=None, state=None):
    """Rebuild a pickled wrapper subclass (``Tensor._make_wrapper_subclass``): its
    geometry, device and attributes."""
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError(f"corrupt tensor pickle: {cls!r} is not a tensor class")
    t = _make_wrapper_impl(cls, list(shape), list(strides), offset, _dtype_from_name(dtype_name),
                           _as_device(dev), requires_grad)
    if state:
        t.__dict__.update(state)
    return t


cdef object _rebuilt_as(object t, object cls, bint requires_grad, object state):
    """A rebuilt tensor as its pickled class, requires_grad and attributes."""
    if cls is not None and cls is not _TensorClass:
        if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
            raise TypeError(f"corrupt tensor pickle: {cls!r} is not a tensor class")
        t = _TensorClass._make_subclass(cls, t, False)
    if requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


cdef object _deepcopy_tensor(_TensorBase t, dict memo):
    if t._grad_fn is not None:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001")
    key = id(t)
    if key in memo:
        return memo[key]
    cdef Storage st
    if t._storage.device._type_code != 0:
        new = _device_clone(t, True)
    else:
        # as PyTorch: the storage is deep-copied once per memo, so copies of
        # views of one storage still share theirs (same offset and strides)
        skey = id(t._storage)
        st = memo.get(skey)
        if st is None:
            st = _new_host_storage(t._storage._nbytes, False)
            if t._storage._nbytes:
                memcpy(st._data, t._storage._data, t._storage._nbytes)
            memo[skey] = st
            memo.setdefault(id(memo), []).append(t._storage)    # keep the key's object alive
        # a view past the end of a storage that shrank since it was made: the copy's
        # storage grows to hold it, as torch's set_ of the copy grows it (the bytes
        # past the old end uninitialised) -- never a tensor reaching past its storage
        need = _storage_nbytes(t._ndim, t._shape, t._strides, t._offset, t._dtype.itemsize) \
            if t._numel else 0
        if need > st._nbytes:
            st._realloc(need)
        new = _make_tensor(st, t._dtype, t._ndim, t._shape, t._strides, t._offset)
    if type(t) is not _TensorClass:
        new = _TensorClass._make_subclass(type(t), new, False)
    (<_TensorBase>new)._requires_grad = t._requires_grad
    memo[key] = new
    if t._grad is not None:
        import copy as _copy
        (<_TensorBase>new)._grad = _copy.deepcopy(t._grad, memo)
    d = getattr(t, "__dict__", None)
    if d:
        import copy as _copy
        for k, v in d.items():
            setattr(new, k, _copy.deepcopy(v, memo))
    return new
