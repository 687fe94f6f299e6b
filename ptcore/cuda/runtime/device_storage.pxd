from ptcore._tensor cimport Storage, _TensorBase, device, dtype
from ptcore.cuda.allocator.caching_allocator cimport Block, CachingAllocator


cdef class DeviceMemory:
    cdef readonly CachingAllocator alloc
    cdef readonly Block block
    cdef object __weakref__


cpdef device cuda_device(Py_ssize_t idx)
cpdef Py_ssize_t index_of(device dev) except -1
cpdef Storage new_storage(Py_ssize_t idx, Py_ssize_t nbytes)
cdef _TensorBase _dense_like(_TensorBase ta)
cdef _TensorBase _dense_like_as(_TensorBase ta, dtype dt)
cdef _TensorBase _same_strides_like(_TensorBase ta)
cdef _TensorBase _dense_matrix(_TensorBase like, dtype dt, Py_ssize_t m, Py_ssize_t n)
cdef _TensorBase _dense_shaped(_TensorBase like, dtype dt, int nd, Py_ssize_t* shape)
cdef bint _dense_pair(a, b) except -1


cdef inline bint _dense_float_cuda(_TensorBase t) noexcept:
    """A contiguous floating tensor on a cuda device (the dense fast paths' operand)."""
    return t._dtype._category == 2 and t._storage.device._type_code == 1 and t._is_contig()
