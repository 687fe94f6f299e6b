"""Storages in caching-allocator blocks: the owner that hands a block back
when its storage dies, and the contiguous ``empty`` of a CUDA tensor with
its shape checked, strides computed and storage made in C.

``ptcore/cuda/ops/tensors.py`` builds every other device tensor on these.
"""
cimport cython
from libc.stdint cimport uintptr_t
cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

from ptcore._ops.kernels._types cimport PT_MAX_DIMS
from ptcore._tensor cimport Storage, _TensorBase, _make_tensor, device, dtype
from ptcore.cuda.allocator.caching_allocator cimport Block, CachingAllocator

from ptcore import _tensor as _C
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.allocator.device_allocators import _allocators

__all__ = ["DeviceMemory", "cuda_device", "index_of", "new_storage", "realloc", "empty"]

cdef extern from *:
    """
    static inline int ptc_dev_mul_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *r) {
        return __builtin_mul_overflow(a, b, r);
    }
    """
    bint ptc_dev_mul_ovf(Py_ssize_t a, Py_ssize_t b, Py_ssize_t* r) noexcept nogil

cdef object _storage_from_pointer = _C._storage_from_pointer
cdef dict _runtime_state = _runtime._state      # updated in place, never rebound
cdef dict _devices = {}                         # ordinal -> ptcore.device("cuda", ordinal)


@cython.final
@cython.no_gc_clear
@cython.freelist(64)
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class DeviceMemory:
    """Owner of a storage's allocator block: the block goes back to the
    caching allocator (on its stream, with any ``record_stream`` uses) when
    the storage dies.

    Parameters
    ----------
    alloc : CachingAllocator
    block : Block
        A live block of ``alloc``.
    """
    def __init__(self, CachingAllocator alloc not None, Block block not None):
        self.alloc = alloc
        self.block = block

    def __dealloc__(self):
        cdef Block b = self.block
        if b is not None:
            self.block = None
            try:
                self.alloc._free(b)
            except Exception:
                pass


cpdef device cuda_device(Py_ssize_t idx):
    """The ``ptcore.device('cuda', idx)`` storages of device ``idx`` carry."""
    d = _devices.get(idx)
    if d is None:
        d = _devices[idx] = device("cuda", idx)
    return <device>d


cpdef Py_ssize_t index_of(device dev) except -1:
    """Ordinal of a cuda ``ptcore.device`` (None index: the current device),
    checked against the devices the driver has."""
    cdef Py_ssize_t idx = dev._idx if dev._idx >= 0 else _runtime.current_device()
    if idx in _allocators:                      # only valid ordinals have one
        return idx
    drv = _runtime_state["driver"]
    if drv is not None and 0 <= idx < drv.device_count():
        return idx
    _runtime.check_index(idx, f"tensor on {dev}")
    return idx


cdef CachingAllocator _allocator_of(Py_ssize_t idx):
    a = _allocators.get(idx)
    if a is None:
        a = _runtime.allocator(idx)
    return <CachingAllocator?>a


cpdef Storage new_storage(Py_ssize_t idx, Py_ssize_t nbytes):
    """``nbytes`` of device ``idx`` (a valid ordinal) from its caching
    allocator, on the current stream, as a Storage owning the block."""
    cdef CachingAllocator alloc = _allocator_of(idx)
    drv = _runtime_state["driver"]
    if drv is None:
        drv = _runtime.lazy_init(f"allocating on cuda:{idx}")
    drv.set_current(idx)
    cdef Block block = alloc._malloc(nbytes, _runtime.current_stream_handle(idx))
    cdef DeviceMemory owner = DeviceMemory.__new__(DeviceMemory)
    owner.alloc = alloc
    owner.block = block
    cdef Storage st = <Storage?>_storage_from_pointer(<uintptr_t>block.ptr, nbytes, owner, cuda_device(idx))
    st._resizable = True        # an allocator block: resize_ may move it (realloc below)
    return st


def realloc(Storage st not None, Py_ssize_t nbytes):
    """The core's ``DEVICE_REALLOC`` hook for cuda storages (``resize_`` of a
    device tensor or storage): a new storage of ``nbytes`` on ``st``'s device
    holding ``st``'s first ``min(nbytes, st.nbytes())`` bytes, copied on the
    current stream (the old block is freed on its own stream after that
    copy, as torch's ``resize_`` does)."""
    cdef Py_ssize_t idx = index_of(st.device)
    cdef Storage new = new_storage(idx, nbytes)
    cdef Py_ssize_t keep = nbytes if nbytes < st.nbytes() else st.nbytes()
    if keep > 0:
        _runtime_state["driver"].memcpy_dtod(new.data_ptr(), st.data_ptr(), keep,
                                             _runtime.current_stream_handle(idx))
    return new


cdef str _shape_str(shape):
    return str([int(s) for s in shape])


def empty(shape, dtype dt not None, device dev not None):
    """Uninitialised contiguous tensor of ``shape`` (a sequence of ints) and
    dtype ``dt`` on cuda device ``dev`` (``DEVICE_OPS.empty``).

    Raises
    ------
    RuntimeError
        For a negative dimension, more than ``PT_MAX_DIMS`` dimensions, or a
        byte count that does not fit in int64; OutOfMemoryError when the
        allocator cannot serve it.
    """
    cdef Py_ssize_t sh[PT_MAX_DIMS]
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t nd = len(shape)
    cdef Py_ssize_t i, acc, nbytes = dt.itemsize
    if nd > PT_MAX_DIMS:
        raise RuntimeError(f"ptcore supports at most {PT_MAX_DIMS} dimensions, got {nd}")
    for i in range(nd):
        s = shape[i]
        if type(s) is not int:
            s = int(s)
        try:
            sh[i] = s
        except OverflowError:
            if s < 0:
                raise RuntimeError(f"empty: Trying to create tensor with negative dimension {s}: "
                                   f"{_shape_str(shape)}") from None
            raise RuntimeError(f"empty: Storage size calculation overflowed with "
                               f"sizes={_shape_str(shape)}") from None
    for i in range(nd):
        if sh[i] < 0:
            raise RuntimeError(f"empty: Trying to create tensor with negative dimension {sh[i]}: "
                               f"{_shape_str(shape)}")
    for i in range(nd):
        if ptc_dev_mul_ovf(nbytes, sh[i], &nbytes):
            raise RuntimeError(f"empty: Storage size calculation overflowed with "
                               f"sizes={_shape_str(shape)}")
    # contiguous strides as the CPU core computes them (sizes 0 and 1 count
    # as 1; with a 0 size the product may wrap, as it does there)
    acc = 1
    for i in range(nd - 1, -1, -1):
        st[i] = acc
        if sh[i] > 1:
            acc = <Py_ssize_t>(<size_t>acc * <size_t>sh[i])
    cdef Storage storage = new_storage(index_of(dev), nbytes)
    return _make_tensor(storage, dt, <int>nd, sh, st, 0)



cdef _TensorBase _dense_like(_TensorBase ta):
    """A new contiguous tensor of ``ta``'s shape, dtype and cuda device."""
    return _dense_like_as(ta, ta._dtype)


cdef _TensorBase _dense_like_as(_TensorBase ta, dtype dt):
    """A new contiguous tensor of ``ta``'s shape and cuda device, of ``dt``."""
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t acc = 1
    cdef int i
    for i in range(ta._ndim - 1, -1, -1):
        st[i] = acc
        if ta._shape[i] > 1:
            acc *= ta._shape[i]
    cdef Storage storage = new_storage(index_of(ta._storage.device), ta._numel * dt.itemsize)
    return _make_tensor(storage, dt, ta._ndim, ta._shape, st, 0)


cdef _TensorBase _same_strides_like(_TensorBase ta):
    """A new tensor of ``ta``'s shape, strides, dtype and cuda device, for a
    ``ta`` whose elements fill ``numel`` consecutive places (a permutation
    of a contiguous layout): ``numel`` elements of storage, offset 0."""
    cdef Storage storage = new_storage(index_of(ta._storage.device), ta._numel * ta._dtype.itemsize)
    return _make_tensor(storage, ta._dtype, ta._ndim, ta._shape, ta._strides, 0)


cdef _TensorBase _dense_matrix(_TensorBase like, dtype dt, Py_ssize_t m, Py_ssize_t n):
    """A new contiguous (m, n) tensor of ``dt`` on ``like``'s cuda device."""
    cdef Py_ssize_t sh[2]
    cdef Py_ssize_t st[2]
    if m < 0 or n < 0 or (n and m > (PY_SSIZE_T_MAX // dt.itemsize) // n):
        raise RuntimeError(f"a ({m}, {n}) tensor of {dt} does not fit in memory sizes")
    sh[0] = m
    sh[1] = n
    st[0] = n if n > 1 else 1
    st[1] = 1
    cdef Storage storage = new_storage(index_of(like._storage.device), m * n * dt.itemsize)
    return _make_tensor(storage, dt, 2, sh, st, 0)


cdef _TensorBase _dense_shaped(_TensorBase like, dtype dt, int nd, Py_ssize_t* shape):
    """A new contiguous tensor of ``shape`` (``nd`` dims) and ``dt`` on
    ``like``'s cuda device; RuntimeError when its size overflows."""
    cdef Py_ssize_t st[PT_MAX_DIMS]
    cdef Py_ssize_t acc = 1, n = 1
    cdef int i
    for i in range(nd - 1, -1, -1):
        st[i] = acc
        if shape[i] < 0 or (shape[i] and n > (PY_SSIZE_T_MAX // dt.itemsize) // shape[i]):
            raise RuntimeError(f"a tensor of shape {[shape[k] for k in range(nd)]} and {dt} does not "
                               "fit in memory sizes")
        n *= shape[i]
        if shape[i] > 1:
            acc *= shape[i]
    cdef Storage storage = new_storage(index_of(like._storage.device), n * dt.itemsize)
    return _make_tensor(storage, dt, nd, shape, st, 0)


def dense_result(a):
    """The uninitialised result of an elementwise op of ``a`` (and a Python
    number) when ``a`` is a contiguous floating tensor on a cuda device (the
    dense fast path of the kernels), else None."""
    if not isinstance(a, _TensorBase) or not _dense_float_cuda(<_TensorBase>a):
        return None
    return _dense_like(<_TensorBase>a)


cdef bint _dense_pair(a, b) except -1:
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase) or type(a) is not type(b):
        return False
    cdef _TensorBase ta = <_TensorBase>a, tb = <_TensorBase>b
    cdef device dev = ta._storage.device
    cdef int i
    if tb._dtype is not ta._dtype or tb._ndim != ta._ndim or not _dense_float_cuda(ta) \
            or not tb._is_contig():
        return False
    if tb._storage.device is not dev and (tb._storage.device._type_code != 1
                                          or tb._storage.device._idx != dev._idx):
        return False
    for i in range(ta._ndim):
        if ta._shape[i] != tb._shape[i]:
            return False
    return True


def dense_pair(a, b):
    """Whether ``a`` and ``b`` are contiguous tensors of one floating dtype,
    one shape and one cuda device."""
    return _dense_pair(a, b)


def dense_pair_result(a, b):
    """The uninitialised result of an elementwise op of ``a`` and ``b`` when
    ``dense_pair(a, b)`` (the dense fast path of the binary kernels), else
    None."""
    return _dense_like(<_TensorBase>a) if _dense_pair(a, b) else None


def dense_self(a):
    """Whether ``a`` is a contiguous floating tensor on a cuda device (an
    in-place op's fast path writes it directly)."""
    return isinstance(a, _TensorBase) and _dense_float_cuda(<_TensorBase>a)
