# ptcore._tensor, a tensor over given memory: bounds of a view in a storage, and the
# implementations of _make_subclass, .data =, set_, resize_ and tensors
# over a Storage or a DLPack payload.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

cdef int _check_in_bounds(Storage st, dtype dt, list sh, list strides, Py_ssize_t off) except -1:
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i, nd = len(sh)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    for i in range(nd):
        csh[i] = sh[i]
        cst[i] = strides[i]
    _checked_numel(nd, csh)
    cdef Py_ssize_t need = _storage_nbytes(nd, csh, cst, off, dt.itemsize)
    if need > st._nbytes:
        _raise_out_of_bounds(sh, strides, off, dt.itemsize, need, st._nbytes)
    return 0


cdef int _raise_out_of_bounds(sizes, strides, Py_ssize_t off, int itemsize, Py_ssize_t need,
                              Py_ssize_t nbytes) except -1:
    raise RuntimeError(
        f"setStorage: sizes {_fmt_list(sizes)}, strides {_fmt_list(strides)}, storage offset {off}, "
        f"and itemsize {itemsize} requiring a storage size of {need} are out of bounds for "
        f"storage of size {nbytes}")


def _make_subclass_impl(cls, _TensorBase data not None, bint require_grad):
    """A ``cls`` instance sharing ``data``'s storage (used by nn.Parameter)."""
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError(f"_make_subclass: {cls!r} is not a subclass of Tensor")
    # the core's allocator, not cls.__new__: a subclass's own __new__ is
    # usually what calls _make_subclass (with arguments of its own)
    cdef _TensorBase t = _TensorBase.__new__(cls)
    t._set_from(data)
    _check_requires_grad(t, require_grad)
    return t


def _make_wrapper_impl(cls, list sizes, list strides, Py_ssize_t offset, dtype dt, device dev,
                       bint require_grad):
    """A ``cls`` instance with these sizes, strides, dtype and device and no data
    (``Tensor._make_wrapper_subclass``): its storage holds no bytes, and is marked so
    that every kernel's access to it raises (``_check_extent``) -- the class's
    ``__torch_dispatch__`` handles the ops on it."""
    if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
        raise TypeError(f"_make_wrapper_subclass: {cls!r} is not a subclass of Tensor")
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i, nd = len(sizes)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    if len(strides) != nd:
        raise RuntimeError(f"_make_wrapper_subclass: {len(strides)} strides for {nd} sizes")
    if offset < 0:
        raise RuntimeError(f"_make_wrapper_subclass: storage offset must be non-negative, "
                           f"got {offset}")
    for i in range(nd):
        csh[i] = sizes[i]
        cst[i] = strides[i]
        if csh[i] < 0:
            raise RuntimeError(f"_make_wrapper_subclass: negative size {csh[i]} in "
                               f"{_fmt_list(sizes)}")
    cdef Storage st = Storage.__new__(Storage)
    st._kind = STORAGE_WRAPPER
    st._data = NULL
    st._nbytes = 0
    st.device = dev
    st._resizable = False
    st._shrunk = True               # every kernel's _ptr() checks the extent: it raises
    cdef _TensorBase view = _make_tensor(st, dt, nd, csh, cst, offset)
    cdef _TensorBase t = _TensorBase.__new__(cls)
    t._set_from(view)
    _check_requires_grad(t, require_grad)
    return t


def _set_data(_TensorBase self not None, _TensorBase other not None):
    """``tensor.data = other``: make self share other's storage and layout.
    Self keeps its version (torch's set_data): its own counter from here on,
    so writes through ``other`` do not invalidate what autograd saved of self."""
    cdef Py_ssize_t v = ptc_version(self)
    self._set_from(other)
    self._vc = _VersionCounter.__new__(_VersionCounter)
    self._vc._version = v


def _set_view_base(_TensorBase self not None, _TensorBase base not None):
    """Make ``self`` (an alias of part of ``base``'s memory) report itself as a
    view of ``base``'s root (``_base``/``_is_view()``): a custom Function's
    output that is a view of an input, as torch's."""
    if self._storage is not base._storage:
        raise ValueError("_set_view_base: the tensor does not share its base's storage")
    self._view_base = base if base._view_base is None else base._view_base


def _resize_impl(_TensorBase self not None, list shape):
    """In-place resize (keeps the data prefix when the storage is big enough)."""
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    shape = _int64_list(shape, "resize_", "size")
    for i in range(nd):
        sh[i] = shape[i]
    _wait_for_readers()             # another thread's kernel may be reading self
    cdef Py_ssize_t nbytes = _checked_nbytes(nd, sh, self._dtype.itemsize)
    _checked_numel(nd, sh)
    _contig_strides(nd, sh, st)
    cdef Py_ssize_t need = 0
    if nbytes > 0 and (ptc_mul_ovf(self._offset, self._dtype.itemsize, &need)
                       or ptc_add_ovf(need, nbytes, &need)):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={_fmt_list(shape)} and storage offset {self._offset}")
    if need > self._storage._nbytes:
        # PyTorch grows the storage in place: every tensor sharing it sees the
        # new memory (device storages through their runtime's DEVICE_REALLOC)
        self._storage._realloc(need)
    self._alloc_dims(nd)
    cdef Py_ssize_t n = 1
    for i in range(nd):
        self._shape[i] = sh[i]
        self._strides[i] = st[i]
        n *= sh[i]
    self._numel = n
    return self


def _set_storage_impl(_TensorBase self not None, Storage storage not None, Py_ssize_t offset, shape, strides):
    """``Tensor.set_(storage, offset, size, stride)``: make ``self`` view ``storage``.

    ``strides`` None gives contiguous strides.  The storage grows in place when
    the view needs more bytes than it has (PyTorch's resize of a resizable
    storage); borrowed or exported storage raises instead.
    """
    cdef list sh = [_operator.index(v) for v in shape]
    cdef int i, nd = len(sh)
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    for i in range(nd):
        csh[i] = sh[i]
        if csh[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {csh[i]}: {_fmt_list(sh)}")
    if strides is None:
        _checked_nbytes(nd, csh, self._dtype.itemsize)
        _contig_strides(nd, csh, cst)
    else:
        st = [_operator.index(v) for v in strides]
        if len(st) != nd:
            raise RuntimeError(
                f"mismatch in length of strides and shape: {len(st)} strides for {nd} dims")
        for i in range(nd):
            cst[i] = st[i]
            if cst[i] < 0:
                raise RuntimeError(f"set_: negative strides are not supported, got {_fmt_list(st)}")
    cdef Py_ssize_t n = _checked_numel(nd, csh)
    cdef Py_ssize_t need = _storage_nbytes(nd, csh, cst, offset, self._dtype.itemsize)
    _wait_for_readers()             # another thread's kernel may be reading self
    if storage.device != self._storage.device:
        raise RuntimeError(
            f"Attempted to set the storage of a tensor on device \"{self._storage.device}\" to a storage "
            f"on different device \"{storage.device}\".  This is no longer allowed; the devices must match.")
    if need > storage._nbytes:
        storage._realloc(need)
    cdef _VersionCounter vc
    if self._vc is None:
        # the counter stays this tensor's (torch's is per tensor, not per
        # storage): the new storage's other tensors do not see its bumps
        vc = _VersionCounter.__new__(_VersionCounter)
        vc._version = self._storage._version
        self._vc = vc
    self._storage = storage
    self._offset = offset
    self._alloc_dims(nd)
    for i in range(nd):
        self._shape[i] = csh[i]
        self._strides[i] = cst[i]
    self._numel = n
    ptc_bump_version(self)      # an in-place op: torch's set_ bumps the version
    return self


def _tensor_from_storage(Storage storage not None, dtype dt, shape, strides, Py_ssize_t offset):
    """A tensor viewing ``storage`` (bounds checked)."""
    cdef list sh = _int64_list(shape, "set_", "size")
    cdef list st = _int64_list(strides, "set_", "stride")
    if len(sh) != len(st):
        raise RuntimeError("shape and strides differ in length")
    for s in st:
        if s < 0:
            raise RuntimeError("negative strides are not supported")
    if offset < 0:
        raise RuntimeError(f"invalid storage offset {offset}")
    _check_in_bounds(storage, dt, sh, st, offset)
    cdef Py_ssize_t csh[PT_MAX_DIMS]
    cdef Py_ssize_t cst[PT_MAX_DIMS]
    cdef int i
    if len(sh) > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions")
    for i in range(len(sh)):
        csh[i] = sh[i]
        cst[i] = st[i]
    return _make_tensor(storage, dt, len(sh), csh, cst, offset)


def _dlpack_storage_new(Py_ssize_t data, Py_ssize_t nbytes, Py_ssize_t managed, bint versioned, dev):
    """Storage owning a DLPack managed tensor (released through its deleter)."""
    return _dlpack_storage(<char*><uintptr_t>data, nbytes, <void*><uintptr_t>managed, versioned,
                           _as_device(dev))
