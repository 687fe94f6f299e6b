# The CUDA caching allocator's bookkeeping as extension types (see
# _caching_allocator.pyx).  Declared here so that other Cython modules (the
# owners of device storages) allocate and free at C speed.
cimport cython
from cpython.pythread cimport PyThread_type_lock
from libc.stdint cimport int64_t


@cython.final
cdef class Block:
    cdef readonly unsigned long long ptr     # device address (0 for a zero-size block)
    cdef readonly Py_ssize_t size            # rounded bytes
    cdef readonly Py_ssize_t requested_size
    cdef readonly object stream              # the stream it is allocated on and reused on
    cdef readonly bint is_small
    cdef readonly bint allocated
    cdef readonly int event_count            # record_stream events still pending
    cdef readonly Py_ssize_t owner           # the allocator's id; 0 once the object is retired
    cdef Block prev                          # neighbours inside the segment
    cdef Block next
    cdef set stream_uses                     # streams from record_stream, or None
    cdef object __weakref__


@cython.final
cdef class CachingAllocator:
    cdef readonly object backend
    cdef readonly object device
    cdef Py_ssize_t _id
    # one lock; a call from inside a held call on the same thread (a
    # destructor the GC runs while the allocator makes objects) is seen
    # through _holder (the holding thread's ident, 0 when free) and never blocks
    cdef PyThread_type_lock _mutex
    cdef long _holder
    cdef list _deferred                      # frees queued by such calls
    # free blocks, per pool: stream -> list of Blocks sorted by (size, ptr)
    cdef dict _free_small
    cdef dict _free_large
    cdef dict _active                        # ptr -> Block, allocated or waiting on events
    cdef dict _events                        # stream -> deque of (event, Block), record order
    cdef list _event_pool
    cdef Py_ssize_t _total_allocated_memory  # bytes obtained from the backend
    cdef Py_ssize_t _allowed_memory_maximum  # -1: no limit (set_memory_fraction)
    cdef double _fraction
    # [stat array][all, small pool, large pool][current, peak, allocated, freed]
    cdef int64_t _stats[9][3][4]
    cdef int64_t _oversize_allocations[4]
    cdef int64_t _oversize_segments[4]
    cdef int64_t _counters[6]
    # CUDA graph private pools: while a stream captures, its allocations are
    # served from (and freed back to) the pool key instead of the stream's
    # pool; a pool with users keeps its cached segments (empty_cache skips it)
    cdef dict _capture_pools                 # capturing stream -> pool key
    cdef object _capture_route               # stream -> pool key or None (forked streams)
    cdef dict _pool_use                      # pool key -> use count

    # the hot path, for C callers (ptcore/cuda/runtime/device_storage.pyx)
    cdef Block _malloc(self, Py_ssize_t size, object stream)
    cdef int _free(self, Block block) except -1

    cdef int _lock(self) except -1
    cdef int _unlock(self) except -1
    cdef void _inc2(self, bint is_small, int stat, int64_t n) noexcept
    cdef void _dec2(self, bint is_small, int stat, int64_t n) noexcept
    cdef Block _get_free_block(self, Py_ssize_t rsize, object stream, bint is_small)
    cdef int _insert_free(self, Block block) except -1
    cdef int _remove_free(self, Block block) except -1
    cdef Block _alloc_block(self, Py_ssize_t alloc_size, object stream, bint is_small,
                            bint is_retry)
    cdef Block _alloc_found_block(self, Block block, Py_ssize_t rsize, Py_ssize_t orig_size)
    cdef int _free_locked(self, Block block) except -1
    cdef int _free_block(self, Block block) except -1
    cdef int _insert_events(self, Block block) except -1
    cdef int _process_events(self) except -1
    cdef int _synchronize_and_free_events(self) except -1
    cdef int _release_cached_blocks(self) except -1
    cdef object _capture_pool_of(self, object stream)
    cdef int _raise_oom(self, object alloc_size) except -1
    cdef int _raise_oom_locked(self, object size) except -1
