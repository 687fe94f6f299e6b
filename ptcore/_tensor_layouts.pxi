# ptcore._tensor, layouts and memory formats (strided, contiguous_format,
# channels_last, ...).
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

# ---------------------------------------------------------------------------
# layouts and memory formats
# ---------------------------------------------------------------------------

@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _Enumish:
    """A named constant of the core (a layout, a memory format): one object per
    name, compared by identity, pickled by name (as a global of this module)."""
    cdef readonly str name

    def __init__(self, *args, **kwargs):
        raise TypeError(f"cannot create '{_root_name}.{type(self).__name__}' instances")

    def __repr__(self):
        return _root_name + "." + self.name

    def __reduce__(self):
        return self.name


@cython.final
@cython.binding(False)
cdef class layout(_Enumish):
    """The type of ``strided`` and of the sparse and jagged layouts (``torch.layout``)."""


@cython.final
@cython.binding(False)
cdef class memory_format(_Enumish):
    """The type of ``contiguous_format``, ``channels_last`` ... (``torch.memory_format``)."""


cdef _Enumish _mk_enum(type cls, str name):
    cdef _Enumish e = cls.__new__(cls)
    e.name = name
    return e


# every layout is defined here, once (ptcore.sparse and ptcore.nested export theirs)
_strided_layout = _mk_enum(layout, "strided")
strided = _strided_layout
sparse_coo = _mk_enum(layout, "sparse_coo")
sparse_csr = _mk_enum(layout, "sparse_csr")
sparse_csc = _mk_enum(layout, "sparse_csc")
# (the block-compressed layouts: no tensor of ptcore has them, but code compares a tensor's
# layout with them, and TorchScript functions that name them compile: PyPose's sparse ops)
sparse_bsr = _mk_enum(layout, "sparse_bsr")
sparse_bsc = _mk_enum(layout, "sparse_bsc")
jagged = _mk_enum(layout, "jagged")
_layout_type = layout       # (for the functions whose parameter is named layout)
contiguous_format = _mk_enum(memory_format, "contiguous_format")
preserve_format = _mk_enum(memory_format, "preserve_format")
channels_last = _mk_enum(memory_format, "channels_last")
channels_last_3d = _mk_enum(memory_format, "channels_last_3d")


cdef tuple _memory_format_perm(_TensorBase t, object fmt):
    if fmt is channels_last:
        if t._ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if fmt is channels_last_3d:
        if t._ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    raise TypeError(f"argument 'memory_format' must be torch.memory_format, not {_typename(fmt)}")


cdef bint _is_contig_format(_TensorBase t, object fmt) except -1:
    """``_is_contig`` of the dims taken in the format's order (read off the
    strides: no view, and no call of a Tensor.permute a user may have
    wrapped -- the memory-format tutorial's checker calls is_contiguous
    from inside such a wrapper).  As torch: False for a tensor of another
    rank than the format's, and no shortcut for empty tensors (their
    strides decide)."""
    if (fmt is channels_last and t._ndim != 4) or (fmt is channels_last_3d and t._ndim != 5):
        return False
    perm = _memory_format_perm(t, fmt)
    cdef Py_ssize_t z = 1
    cdef int i, d
    for i in range(len(perm) - 1, -1, -1):
        d = perm[i]
        if t._shape[d] != 1:
            if t._strides[d] != z:
                return False
            z *= t._shape[d]
    return True


cdef object _to_memory_format(_TensorBase t, object fmt):
    # (the base class's permute: not a user's wrapper of Tensor.permute)
    perm = _memory_format_perm(t, fmt)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    p = _TensorBase.permute(t, perm)
    cdef _TensorBase out = _TensorBase.permute(_clone_contig(<_TensorBase>p), inv)
    cdef Py_ssize_t z = 1
    if out._numel == 0:
        # torch's strides for an empty tensor: plain products of the sizes
        # in the format's order, a zero size kept (empty (2, 0, 4, 5) in
        # channels_last has strides (0, 1, 0, 0)), so is_contiguous of that
        # format holds
        for i in range(len(perm) - 1, -1, -1):
            out._strides[perm[i]] = z
            z *= out._shape[perm[i]]
    return out
