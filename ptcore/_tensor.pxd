# The typed tensor core: dtypes, devices, storage and the strided view.
#
# Other Cython modules (and third-party extensions) cimport these types to
# read a tensor's metadata at C speed (the pattern of cupy/_core/core.pxd).
from libc.stdint cimport int64_t

cdef enum:
    PT_INLINE_DIMS = 6      # shapes/strides up to this rank live inside the object

# View-op codes passed to the autograd view hook, which names the node as
# PyTorch does (ptcore.autograd._record._VIEW_NAMES holds the same table).
cdef enum:
    VK_GENERIC = 0          # ViewBackward0 / AsStridedBackward0 from the geometry
    VK_VIEW = 1
    VK_TRANSPOSE = 2
    VK_T = 3
    VK_PERMUTE = 4
    VK_SQUEEZE0 = 5
    VK_SQUEEZE1 = 6
    VK_SQUEEZE2 = 7
    VK_UNSQUEEZE = 8
    VK_EXPAND = 9
    VK_SLICE = 10
    VK_SELECT = 11
    VK_DIAGONAL = 12
    VK_UNFOLD = 13
    VK_AS_STRIDED = 14
    VK_SPLIT = 15
    VK_SPLIT_SIZES = 16
    VK_UNBIND = 17
    VK_ALIAS = 18


cdef class dtype:
    cdef readonly int num               # ScalarType number (ptcore._ops.kernels._types)
    cdef readonly int itemsize
    cdef readonly str _name              # 'float32'
    cdef readonly bint is_floating_point
    cdef readonly bint is_complex
    cdef readonly bint is_signed
    cdef readonly int _category          # 0 bool, 1 integral, 2 floating, 3 complex
    cdef readonly object _np             # NumPy dtype, or None (bfloat16)
    cdef readonly str _legacy            # 'Float' for ptcore.FloatTensor


cdef class device:
    cdef readonly str type
    cdef readonly object index           # None or int
    cdef int _type_code                  # 0 cpu, 1 cuda, 2 meta, 3 another torch type
    cdef int _idx                        # -1 when index is None


cdef class Storage:
    cdef char* _data
    cdef Py_ssize_t _nbytes
    cdef int _kind                       # see _tensor.pyx: STORAGE_* constants
    cdef object _owner                   # keeps external memory alive
    cdef void* _dl_managed               # DLPack capsule payload to release
    cdef bint _dl_versioned
    cdef readonly device device
    cdef public Py_ssize_t _version      # bumped by in-place writes (autograd)
    cdef readonly bint _inference        # allocated in inference mode: its tensors are inference tensors
    cdef public object _shared           # shared-memory handle (multiprocessing)
    cdef bint _resizable                 # False for borrowed memory (NumPy, buffers, DLPack imports, shm)
    cdef Py_ssize_t _nexports            # live NumPy arrays / buffers viewing _data: resize_ refuses
    cdef bint _exported                  # a storage slice may view _data: resize_ keeps the old block
    cdef Py_ssize_t _dl_live             # live DLPack exports (capsules, or tensors made from
                                         # them): while any, resize_ keeps the old block
    cdef list _retired                   # old blocks kept alive for exporters (freed with the
                                         # storage, or when the last DLPack export is released)
    cdef bint _shrunk                    # resize_ once made it smaller: views made before may no
                                         # longer fit, so each access checks its extent (_ptr)
    cdef object __weakref__

    cdef bytes _bytes(self)
    cdef int _release_block(self) except -1
    cdef int _realloc(self, Py_ssize_t nbytes) except -1
    cdef tuple _byte_range(self, idx, str what)


cdef class _VersionCounter:
    """A version counter of its own (``Tensor.data`` and the views of it);
    other tensors count in their storage's ``_version``."""
    cdef public Py_ssize_t _version


cdef class _TensorBase:
    cdef Storage _storage
    cdef Py_ssize_t _offset              # in elements
    cdef int _ndim
    cdef Py_ssize_t* _shape
    cdef Py_ssize_t* _strides            # in elements, as PyTorch
    cdef Py_ssize_t _inline[2 * PT_INLINE_DIMS]
    cdef Py_ssize_t _numel
    cdef dtype _dtype
    cdef object _view_base               # the tensor this is a view of, or None
    cdef _VersionCounter _vc             # own version counter (Tensor.data, its views), or None
    # autograd slots, used by ptcore.autograd
    cdef public bint _requires_grad
    cdef public object _grad
    cdef public object _grad_fn
    cdef public object _backward_hooks
    cdef public object _post_acc_hooks
    cdef public bint _retains_grad
    # a leaf's gradient accumulator (autograd.graph.AccumulateGrad), made on first use; a
    # slot, not the instance __dict__, which holds only what user code sets (as torch's)
    cdef public object _grad_acc
    # an instance of a class that overrides __torch_function__, counted in the
    # live instances that keep the protocol's dispatch layer on (_tensor.pyx)
    # 1: counted among the live __torch_function__ overriding instances; 2: among the
    # live layout-class (sparse) instances, whose calls the dispatch entries route
    cdef char _tf_counted
    cdef object __weakref__

    cdef int _alloc_dims(self, int ndim) except -1
    cdef int _check_extent(self) except -1
    # The data pointer every kernel takes (with the GIL) before it reads or
    # writes: RuntimeError when the storage shrank below this view's extent
    # (only a storage that ever shrank pays for the test).
    cdef inline char* _ptr(self) except? NULL:
        if self._storage._shrunk:
            self._check_extent()
        return self._storage._data + self._offset * self._dtype.itemsize
    cdef bint _is_contig(self) noexcept
    cdef _TensorBase _view(self, int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                           Py_ssize_t offset, int kind=*)
    cdef int _set_from(self, _TensorBase other) except -1
    cdef _TensorBase _view_lists(self, list shape, list strides, Py_ssize_t offset, int kind=*)
    cdef _TensorBase _view_dtype(self, dtype dt)
    cdef _TensorBase _select(self, int d, Py_ssize_t i, int kind=*)
    cdef _TensorBase _transpose(self, dim0, dim1, int kind)
    cdef _TensorBase _narrow(self, dim, start, length, int kind)
    cdef _TensorBase _select_index(self, int d, Py_ssize_t i)
    cdef _TensorBase _basic_index(self, tuple items, bint bare=*)
    cdef object _as_numpy(self)


cdef _TensorBase _make_tensor(Storage storage, dtype dt, int ndim,
                              const Py_ssize_t* shape, const Py_ssize_t* strides,
                              Py_ssize_t offset)
cdef _TensorBase _empty_contig(dtype dt, int ndim, const Py_ssize_t* shape,
                               device dev, bint zero)
cdef _TensorBase _empty_strided_like(_TensorBase src, dtype dt, bint zero)
cdef dtype dtype_from_num(int num)

# Kernel sections: code that reads or writes tensor memory after releasing the
# GIL brackets that stretch with these (enter with the GIL held, after taking
# its pointers; exit inside the nogil block, try/finally).  Whatever moves a
# tensor's memory or geometry under other threads' feet (storage resize_,
# Tensor.resize_/set_/.data=, share_memory_) first waits until no other
# thread is inside a section (_wait_for_readers), so a concurrent kernel never
# touches freed memory or a half-changed shape.
cdef void ptc_kernel_enter() noexcept nogil
cdef void ptc_kernel_exit() noexcept nogil
cdef int _wait_for_readers() except -1


# the version autograd checks: the tensor's own counter where it has one
# (``Tensor.data`` and its views, as torch's), else its storage's
cdef inline Py_ssize_t ptc_version(_TensorBase t) noexcept:
    return t._storage._version if t._vc is None else t._vc._version


cdef inline void ptc_bump_version(_TensorBase t) noexcept:
    if t._vc is None:
        t._storage._version += 1
    else:
        t._vc._version += 1
