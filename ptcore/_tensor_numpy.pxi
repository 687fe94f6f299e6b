# ptcore._tensor, NumPy interop: the buffer formats, the __array_struct__ export that
# keeps the tensor alive, from_numpy and views of NumPy arrays.
# Included by _tensor.pyx: one extension module, so that the hot paths (a + b,
# a[0, 0], t.view, t.size()) inline across these files as before the split.

cdef dict _BUFFER_FORMATS = {
    PT_BOOL: b"?", PT_UINT8: b"B", PT_INT8: b"b", PT_INT16: b"h", PT_INT32: b"i",
    PT_INT64: _np.dtype(_np.int64).char.encode(), PT_FLOAT16: b"e", PT_FLOAT32: b"f", PT_FLOAT64: b"d",
    PT_COMPLEX64: b"Zf", PT_COMPLEX128: b"Zd",
    PT_UINT16: b"H", PT_UINT32: b"I", PT_UINT64: _np.dtype(_np.uint64).char.encode(),
}


cdef extern from *:
    """
    /* NumPy's C-level array interface, the struct that __array_struct__'s
       capsule points to (its layout is the protocol's: no NumPy headers) */
    typedef struct {
        int two; int nd; char typekind; int itemsize; int flags;
        Py_ssize_t *shape; Py_ssize_t *strides; void *data; PyObject *descr;
    } ptc_array_interface;
    """
    ctypedef struct ptc_array_interface:
        int two
        int nd
        char typekind
        int itemsize
        int flags
        Py_ssize_t* shape
        Py_ssize_t* strides
        void* data
        PyObject* descr

cdef enum:
    # the interface's flags: NumPy's ALIGNED | NOTSWAPPED | WRITEABLE | ARR_HAS_DESCR
    PTC_ARR_FLAGS = 0x100 | 0x200 | 0x400 | 0x800

cdef char _empty_data = 0      # the data pointer of an empty tensor without memory


cdef void _release_interface_capsule(object capsule) noexcept:
    """A capsule of ``_ArrayExport.__array_struct__`` dies: let go of its export."""
    Py_DECREF(<object>PyCapsule_GetContext(capsule))


@cython.final
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class _ArrayExport:
    """Hands a CPU tensor's memory to NumPy through ``__array_struct__``: the
    array's base, keeping the tensor alive."""
    cdef object _tensor
    cdef Storage _st        # counted in _st._nexports while the array lives
    cdef ptc_array_interface* _inter    # the tensor's layout when exported

    @property
    def __array_struct__(self):
        cap = PyCapsule_New(self._inter, NULL, _release_interface_capsule)
        PyCapsule_SetContext(cap, <void*>self)
        Py_INCREF(self)         # the capsule's reference, dropped by its destructor
        return cap

    def __dealloc__(self):
        if self._st is not None:
            self._st._nexports -= 1
        PyMem_Free(self._inter)


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (changes show through both ways)."""
    return _numpy_view(ndarray, True)


cdef bint _readonly_warned = False


def _numpy_view(ndarray, bint warn_readonly):
    """``from_numpy``; ``warn_readonly``: whether a read-only array gives torch's
    warning (once per process, as its TORCH_WARN_ONCE; ``torch.tensor`` and
    other copying constructors do not warn)."""
    global _readonly_warned
    if not isinstance(ndarray, _np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_typename(ndarray)})")
    arr = ndarray
    npd = arr.dtype
    cdef dtype dt = _NP_TO_DTYPE.get(npd)      # the native supported dtypes
    if dt is None:
        if not npd.isnative:
            raise ValueError(
                "given numpy array has byte order different from the native byte order. Conversion "
                "between byte orders is currently not supported.")
        dt = _dtype_from_numpy(npd)
    # the data pointer through the buffer protocol (a read-only request: a
    # read-only array is taken too, with the warning below); the shape and
    # strides are the array's own (a buffer's strides are normalised where a
    # dimension has size 0 or 1)
    cdef Py_buffer view
    PyObject_GetBuffer(arr, &view, PyBUF_STRIDES)
    cdef char* data = <char*>view.buf
    cdef bint writable = not view.readonly
    PyBuffer_Release(&view)
    shape = arr.shape
    bstrides = arr.strides
    cdef int i, nd = len(shape)
    if nd > PT_MAX_DIMS:
        raise ValueError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t extent = 0, isz = dt.itemsize, n = 1
    for i in range(nd):
        sh[i] = shape[i]
        n *= sh[i]
        if bstrides[i] < 0:
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with negative "
                "strides are not currently supported. (You can probably work around this by making a "
                "copy of your array  with array.copy().) ")
        if bstrides[i] % isz != 0:
            raise ValueError(
                "given numpy array strides not a multiple of the element byte size. Copy the numpy "
                "array to reallocate the memory.")
        st[i] = bstrides[i] // isz
        if sh[i] > 1:
            extent += (sh[i] - 1) * st[i]
    if not writable and warn_readonly and not _readonly_warned:
        _readonly_warned = True
        _warn_at_caller(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You may "
            "want to copy the array to protect its data or make it writable before converting it to "
            "a tensor. This type of warning will be suppressed for the rest of this program.")
    cdef Storage storage = _external_storage(data if n else NULL, (extent + 1) * isz if n else 0,
                                             arr, _CPU)
    return _make_tensor(storage, dt, nd, sh, st, 0)
