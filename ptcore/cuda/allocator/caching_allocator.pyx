"""The CUDA caching allocator's bookkeeping (PyTorch's
``CUDACachingAllocator`` design) as extension types.

:class:`CachingAllocator` hands out :class:`Block` s of device memory that
it obtains from a *backend* (``ptcore.cuda.allocator.device_allocators.Backend``: the driver,
or host memory in the tests) and caches when they are freed.  The rules are
listed in ``ptcore/cuda/allocator/device_allocators.py``, which re-exports everything here
with the per-device registry and the ``torch.cuda`` memory functions.

The hot path (a ``malloc`` served from the cache and a ``free``) runs in C:
sizes, links and statistics are C fields, and each pool's free blocks of a
stream are a list kept sorted by (size, address) and searched by bisection
on those fields.  The backend is called through Python, on a cache miss or a
cross-stream free only.
"""
cimport cython
from cpython.pythread cimport (NOWAIT_LOCK, WAIT_LOCK, PyThread_acquire_lock,
                               PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_get_thread_ident, PyThread_release_lock)
from libc.stdint cimport int64_t

import collections
import operator

from ptcore.cuda.allocator.stats_format import flatten_stats, format_size, summary_from_stats

__all__ = ["OutOfMemoryError", "BackendOutOfMemory", "Block", "CachingAllocator",
           "round_size", "get_allocation_size"]

# ---------------------------------------------------------------------------
# constants (c10/cuda/CUDACachingAllocator.cpp, c10/core/AllocatorConfig.h)
cdef enum:
    MIN_BLOCK_SIZE = 512           # all sizes are rounded to at least 512 bytes
    SMALL_SIZE = 1048576           # largest "small" allocation is 1 MiB
    SMALL_BUFFER = 2097152         # "small" allocations are packed in 2 MiB blocks
    LARGE_BUFFER = 20971520        # "large" allocations may be packed in 20 MiB blocks
    MIN_LARGE_ALLOC = 10485760     # allocations between 1 and 10 MiB may use kLargeBuffer
    ROUND_LARGE = 2097152          # round up large allocations to 2 MiB

kMinBlockSize = MIN_BLOCK_SIZE
kSmallSize = SMALL_SIZE
kSmallBuffer = SMALL_BUFFER
kLargeBuffer = LARGE_BUFFER
kMinLargeAlloc = MIN_LARGE_ALLOC
kRoundLarge = ROUND_LARGE

# requests above this fail as out of memory before any size arithmetic
# (no device has 2**62 bytes; rounding cannot overflow below it)
cdef Py_ssize_t MAX_REQUEST = (<Py_ssize_t>1) << 62

# stat types (StatType: AGGREGATE, SMALL_POOL, LARGE_POOL) and the StatArray
# members, in the order torch._C._cuda_memoryStats builds its dict
cdef enum:
    T_ALL = 0
    T_SMALL = 1
    T_LARGE = 2

cdef enum:
    S_ALLOCATION = 0
    S_SEGMENT
    S_ACTIVE
    S_INACTIVE_SPLIT
    S_ALLOCATED_BYTES
    S_RESERVED_BYTES
    S_ACTIVE_BYTES
    S_INACTIVE_SPLIT_BYTES
    S_REQUESTED_BYTES
    N_STATS

cdef enum:
    C_NUM_ALLOC_RETRIES = 0
    C_NUM_OOMS
    C_NUM_SYNC_ALL_STREAMS
    C_NUM_DEVICE_ALLOC
    C_NUM_DEVICE_FREE
    C_NUM_OOM_REJECTIONS
    N_COUNTERS

_STAT_TYPE_NAMES = ("all", "small_pool", "large_pool")
_STAT_ARRAYS = ("allocation", "segment", "active", "inactive_split",
                "allocated_bytes", "reserved_bytes", "active_bytes",
                "inactive_split_bytes", "requested_bytes")
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams",
             "num_device_alloc", "num_device_free", "num_oom_rejections")


class OutOfMemoryError(RuntimeError):
    """Raised when the caching allocator cannot serve a request
    (``torch.cuda.OutOfMemoryError``, a ``RuntimeError``)."""


class BackendOutOfMemory(MemoryError):
    """Raised by ``Backend.raw_alloc`` when the device has no room
    (``CUDA_ERROR_OUT_OF_MEMORY``).  Any other exception from a backend is
    passed through unchanged by the allocator."""


cdef inline Py_ssize_t _round_size(Py_ssize_t size) noexcept:
    if size < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    return MIN_BLOCK_SIZE * ((size + MIN_BLOCK_SIZE - 1) // MIN_BLOCK_SIZE)


cdef inline Py_ssize_t _allocation_size(Py_ssize_t size) noexcept:
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return ROUND_LARGE * ((size + ROUND_LARGE - 1) // ROUND_LARGE)


def round_size(size):
    """Round a request up to a multiple of ``kMinBlockSize`` (512 B).

    Parameters
    ----------
    size : int
        Requested bytes (``>= 0``).
    """
    return _round_size(size)


def get_allocation_size(size):
    """Size of the segment ``raw_alloc``-ed for a rounded request ``size``."""
    return _allocation_size(size)


# ---------------------------------------------------------------------------
# blocks

@cython.freelist(64)
@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class Block:
    """A piece of a segment: an allocation handed out by
    :meth:`CachingAllocator.malloc`, or a cached free piece.

    Attributes
    ----------
    ptr : int
        Device address (0 for a zero-size allocation).
    size : int
        Rounded size in bytes.
    requested_size : int
        Bytes originally requested.
    stream : hashable
        Stream the block was allocated on (and is reused on).
    is_small : bool
        Whether it belongs to the small pool.
    allocated : bool
        True while the caller owns it.
    """

    def __init__(self, ptr, size, stream, is_small, owner):
        self.ptr = ptr
        self.size = size
        self.stream = stream
        self.is_small = is_small
        self.owner = owner

    def is_split(self):
        """True when the block does not span its whole segment."""
        return self.prev is not None or self.next is not None

    def __repr__(self):
        state = ("allocated" if self.allocated else
                 "pending free" if self.event_count else "free")
        return (f"Block(ptr={self.ptr:#x}, size={self.size}, stream={self.stream!r}, "
                f"pool={'small' if self.is_small else 'large'}, {state})")


cdef inline Block _new_block(unsigned long long ptr, Py_ssize_t size, object stream,
                             bint is_small, Py_ssize_t owner):
    cdef Block b = Block.__new__(Block)
    b.ptr = ptr
    b.size = size
    b.stream = stream
    b.is_small = is_small
    b.owner = owner
    return b


@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _lower_bound(list lst, Py_ssize_t size, unsigned long long ptr):
    """First index of the (size, ptr)-sorted ``lst`` whose block is not
    below (size, ptr) (``bisect_left``)."""
    cdef Py_ssize_t lo = 0, hi = len(lst), mid
    cdef Block b
    while lo < hi:
        mid = (lo + hi) >> 1
        b = <Block>lst[mid]
        if b.size < size or (b.size == size and b.ptr < ptr):
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline void _inc(int64_t* s, int64_t n) noexcept:
    # Stat::increase
    s[0] += n
    if s[0] > s[1]:
        s[1] = s[0]
    s[2] += n


cdef inline void _dec(int64_t* s, int64_t n) noexcept:
    # Stat::decrease
    s[0] -= n
    s[3] += n


cdef dict _stat_dict(const int64_t* s):
    return {"current": s[0], "peak": s[1], "allocated": s[2], "freed": s[3]}


cdef Py_ssize_t _next_owner_id = 1


# ---------------------------------------------------------------------------
# the allocator

@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class CachingAllocator:
    """Per-device caching allocator.

    Parameters
    ----------
    backend : Backend
        Source of raw memory and events.
    device : int, default 0
        Device index, used in messages and snapshots.

    Notes
    -----
    Thread safe (one lock).  A ``free`` that happens *inside* an allocator
    call on the same thread (a storage's destructor run by the garbage
    collector while ``malloc`` creates objects) is queued and done when the
    outer call finishes, so it cannot corrupt the free lists.
    """

    def __cinit__(self, *args, **kwargs):
        self._mutex = PyThread_allocate_lock()
        if self._mutex == NULL:
            raise MemoryError("CachingAllocator: cannot allocate a lock")

    def __init__(self, backend, device=0):
        global _next_owner_id
        self.backend = backend
        self.device = device
        self._id = _next_owner_id
        _next_owner_id += 1
        self._deferred = []
        self._free_small = {}
        self._free_large = {}
        self._active = {}
        self._events = {}
        self._event_pool = []
        self._total_allocated_memory = 0
        self._allowed_memory_maximum = -1
        self._fraction = 1.0
        self._capture_pools = {}
        self._capture_route = None
        self._pool_use = {}

    def __dealloc__(self):
        if self._mutex != NULL:
            PyThread_free_lock(self._mutex)
            self._mutex = NULL

    # -- locking -------------------------------------------------------------
    cdef int _lock(self) except -1:
        """Take the lock: 0, or 1 when this thread holds it already (a call
        made from inside another allocator call)."""
        cdef long me = PyThread_get_thread_ident()
        if self._holder == me:          # only this thread writes its own ident there
            return 1
        if not PyThread_acquire_lock(self._mutex, NOWAIT_LOCK):
            with nogil:
                PyThread_acquire_lock(self._mutex, WAIT_LOCK)
        self._holder = me
        return 0

    cdef int _unlock(self) except -1:
        """Do the frees queued by nested calls, then release the lock."""
        try:
            while self._deferred:
                self._free_locked(<Block>self._deferred.pop())
        finally:
            self._holder = 0
            PyThread_release_lock(self._mutex)
        return 0

    # -- hot path ------------------------------------------------------------
    def malloc(self, size, stream=0):
        """Allocate ``size`` bytes for use on ``stream``.

        Parameters
        ----------
        size : int
            Bytes (``>= 0``; 0 gives a block with ``ptr == 0``).
        stream : hashable, default 0
            Stream the memory will be used on.

        Returns
        -------
        Block

        Raises
        ------
        OutOfMemoryError
            When neither the cache nor the backend (after releasing the
            cache) can serve the request.
        """
        size = operator.index(size)
        if size > MAX_REQUEST:
            self._raise_oom_locked(size)
        return self._malloc(size, stream)

    cdef Block _malloc(self, Py_ssize_t size, object stream):
        cdef Block block
        cdef Py_ssize_t rsize, alloc_size
        cdef bint is_small
        if size <= 0:
            if size == 0:
                block = _new_block(0, 0, stream, True, self._id)
                block.allocated = True
                return block
            raise ValueError(f"malloc: size must be >= 0, got {size}")
        if size > MAX_REQUEST:
            self._raise_oom_locked(size)
        if self._lock():
            raise RuntimeError("CachingAllocator.malloc called re-entrantly "
                               "(from a destructor run inside the allocator)")
        try:
            if self._capture_pools:
                # (no event queries while capturing: as PyTorch's allocator)
                stream = self._capture_pool_of(stream)
            elif self._events:
                self._process_events()
            rsize = _round_size(size)
            is_small = rsize <= SMALL_SIZE
            block = self._get_free_block(rsize, stream, is_small)
            if block is None:
                alloc_size = _allocation_size(rsize)
                block = self._alloc_block(alloc_size, stream, is_small, False)
                if block is None:
                    self._release_cached_blocks()
                    block = self._alloc_block(alloc_size, stream, is_small, True)
                    if block is None:
                        self._raise_oom(alloc_size)
            return self._alloc_found_block(block, rsize, size)
        finally:
            self._unlock()

    def free(self, Block block not None):
        """Return a block obtained from :meth:`malloc`.

        If :meth:`record_stream` added other streams, the memory becomes
        reusable only after the work queued on them so far has completed.

        Raises
        ------
        RuntimeError
            On a double free or a block of another allocator.
        """
        self._free(block)

    cdef int _free(self, Block block) except -1:
        cdef int nested = self._lock()
        try:
            if block.owner != self._id:
                raise RuntimeError(f"free: {block!r} was not allocated by this "
                                   f"allocator (device {self.device})")
            if not block.allocated:
                raise RuntimeError(f"free: double free of the CUDA block at "
                                   f"{block.ptr:#x} ({block.size} bytes)")
            if block.size == 0:
                block.allocated = False
            elif nested:
                # a destructor run by the GC inside malloc/free: the block
                # stays "allocated" (so no merge can touch it) and is freed
                # when the outer call finishes
                for d in self._deferred:
                    if d is block:
                        raise RuntimeError(f"free: double free of the CUDA block at "
                                           f"{block.ptr:#x} ({block.size} bytes)")
                self._deferred.append(block)
            else:
                self._free_locked(block)
        finally:
            if not nested:
                self._unlock()
        return 0

    def record_stream(self, Block block not None, stream):
        """Mark ``block`` as used on ``stream`` (``Tensor.record_stream``).

        The block will not be reused before the work queued on ``stream``
        at the time of ``free`` has completed.  Uses on the allocation stream
        need no tracking; zero-size blocks are ignored.
        """
        if block.size == 0:
            return
        cdef int nested = self._lock()
        try:
            if block.owner != self._id or not block.allocated:
                raise RuntimeError(f"record_stream: {block!r} is not a live allocation "
                                   f"of this allocator")
            if stream == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = {stream}
            else:
                block.stream_uses.add(stream)
        finally:
            if not nested:
                self._unlock()

    # -- internals (called with the lock held) ---------------------------------
    cdef void _inc2(self, bint is_small, int stat, int64_t n) noexcept:
        # a statistic for "all" and for the block's pool
        _inc(&self._stats[stat][T_ALL][0], n)
        _inc(&self._stats[stat][T_SMALL if is_small else T_LARGE][0], n)

    cdef void _dec2(self, bint is_small, int stat, int64_t n) noexcept:
        _dec(&self._stats[stat][T_ALL][0], n)
        _dec(&self._stats[stat][T_SMALL if is_small else T_LARGE][0], n)

    cdef Block _get_free_block(self, Py_ssize_t rsize, object stream, bint is_small):
        # best fit: the smallest block that fits, lowest address first
        cdef object found = (self._free_small if is_small else self._free_large).get(stream)
        if found is None:
            return None
        cdef list lst = <list>found
        cdef Py_ssize_t i = _lower_bound(lst, rsize, 0)
        if i == len(lst):
            return None
        return <Block>lst.pop(i)

    cdef int _insert_free(self, Block block) except -1:
        cdef dict pools = self._free_small if block.is_small else self._free_large
        cdef object found = pools.get(block.stream)
        if found is None:
            pools[block.stream] = [block]
        else:
            (<list>found).insert(_lower_bound(<list>found, block.size, block.ptr), block)
        return 0

    cdef int _remove_free(self, Block block) except -1:
        cdef object found = (self._free_small if block.is_small else self._free_large).get(block.stream)
        cdef list lst
        cdef Py_ssize_t i = -1
        if found is not None:
            lst = <list>found
            i = _lower_bound(lst, block.size, block.ptr)
            if i == len(lst) or lst[i] is not block:
                i = -1
        if i < 0:
            raise RuntimeError("CachingAllocator: free list corrupted "
                               f"({block!r} is not cached)")
        lst.pop(i)
        return 0

    cdef Block _alloc_block(self, Py_ssize_t alloc_size, object stream, bint is_small,
                            bint is_retry):
        if is_retry:
            self._counters[C_NUM_ALLOC_RETRIES] += 1
        if (self._allowed_memory_maximum >= 0
                and self._total_allocated_memory + alloc_size > self._allowed_memory_maximum):
            return None
        try:
            ptr = self.backend.raw_alloc(alloc_size)
        except BackendOutOfMemory:
            return None
        self._total_allocated_memory += alloc_size
        cdef Block block = _new_block(ptr, alloc_size, stream, is_small, self._id)
        self._inc2(is_small, S_SEGMENT, 1)
        self._inc2(is_small, S_RESERVED_BYTES, alloc_size)
        self._counters[C_NUM_DEVICE_ALLOC] += 1
        return block

    cdef Block _alloc_found_block(self, Block block, Py_ssize_t rsize, Py_ssize_t orig_size):
        # block: a free block (not in any free list) of size >= rsize.
        # A fresh Block object always goes to the caller, so a stale handle
        # of an earlier allocation can never free this one.
        cdef bint small = block.is_small
        cdef Py_ssize_t remaining = block.size - rsize
        cdef bint split = remaining >= MIN_BLOCK_SIZE if small else remaining > SMALL_SIZE
        cdef bint already_split = block.prev is not None or block.next is not None
        cdef Block new = _new_block(block.ptr, rsize, block.stream, small, self._id)
        new.prev = block.prev
        if new.prev is not None:
            new.prev.next = new
        if split:
            # [new | block(remainder)]
            new.next = block
            block.prev = new
            block.ptr += rsize
            block.size = remaining
            self._insert_free(block)
            if already_split:
                self._dec2(small, S_INACTIVE_SPLIT_BYTES, rsize)
            else:
                self._inc2(small, S_INACTIVE_SPLIT_BYTES, remaining)
                self._inc2(small, S_INACTIVE_SPLIT, 1)
        else:
            # new replaces block in the segment's list
            new.size = block.size
            new.next = block.next
            if new.next is not None:
                new.next.prev = new
            block.prev = block.next = None
            block.owner = 0
            if already_split:
                self._dec2(small, S_INACTIVE_SPLIT_BYTES, new.size)
                self._dec2(small, S_INACTIVE_SPLIT, 1)
        new.allocated = True
        new.requested_size = orig_size
        self._active[new.ptr] = new
        cdef Py_ssize_t size = new.size
        self._inc2(small, S_ALLOCATION, 1)
        self._inc2(small, S_ALLOCATED_BYTES, size)
        self._inc2(small, S_ACTIVE, 1)
        self._inc2(small, S_ACTIVE_BYTES, size)
        self._inc2(small, S_REQUESTED_BYTES, orig_size)
        return new

    cdef int _free_locked(self, Block block) except -1:
        block.allocated = False
        self._dec2(block.is_small, S_ALLOCATION, 1)
        self._dec2(block.is_small, S_ALLOCATED_BYTES, block.size)
        if block.stream_uses and type(block.stream) is tuple:
            # a graph pool's block: the pool is reused only by captures into it
            # (in capture order) and by replays, never by other streams' work
            block.stream_uses = None
        if block.stream_uses:
            self._insert_events(block)
        else:
            block.stream_uses = None
            self._free_block(block)
        return 0

    cdef int _free_block(self, Block block) except -1:
        # moves a block (not allocated, no pending events) into the cache,
        # merging it with free neighbours of its segment
        cdef bint small = block.is_small
        cdef Py_ssize_t original_size = block.size
        cdef Py_ssize_t requested = block.requested_size
        cdef Py_ssize_t d_count = 0, d_bytes = 0
        del self._active[block.ptr]
        cdef Block prev = block.prev
        if prev is not None and not prev.allocated and prev.event_count == 0:
            # [prev block] -> [block]
            self._remove_free(prev)
            block.ptr = prev.ptr
            block.size += prev.size
            block.prev = prev.prev
            if block.prev is not None:
                block.prev.next = block
            prev.prev = prev.next = None
            prev.owner = 0
            d_count -= 1
            d_bytes -= prev.size
        cdef Block nxt = block.next
        if nxt is not None and not nxt.allocated and nxt.event_count == 0:
            self._remove_free(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if block.next is not None:
                block.next.prev = block
            nxt.prev = nxt.next = None
            nxt.owner = 0
            d_count -= 1
            d_bytes -= nxt.size
        self._insert_free(block)
        if block.prev is not None or block.next is not None:
            d_count += 1
            d_bytes += block.size
        if d_count > 0:
            self._inc2(small, S_INACTIVE_SPLIT, d_count)
        elif d_count < 0:
            self._dec2(small, S_INACTIVE_SPLIT, -d_count)
        if d_bytes > 0:
            self._inc2(small, S_INACTIVE_SPLIT_BYTES, d_bytes)
        elif d_bytes < 0:
            self._dec2(small, S_INACTIVE_SPLIT_BYTES, -d_bytes)
        self._dec2(small, S_ACTIVE, 1)
        self._dec2(small, S_ACTIVE_BYTES, original_size)
        self._dec2(small, S_REQUESTED_BYTES, requested)
        return 0

    cdef int _insert_events(self, Block block) except -1:
        streams = block.stream_uses
        block.stream_uses = None
        backend = self.backend
        for s in streams:
            ev = self._event_pool.pop() if self._event_pool else backend.event_create()
            backend.event_record(ev, s)
            block.event_count += 1
            q = self._events.get(s)
            if q is None:
                q = self._events[s] = collections.deque()
            q.append((ev, block))
        return 0

    cdef int _process_events(self) except -1:
        # per stream, pop completed events in record order (no head-of-line
        # blocking across streams), as process_events() in PyTorch
        cdef Block block
        query = self.backend.event_query
        done = []
        for s, q in self._events.items():
            while q:
                ev, block = q[0]
                if not query(ev):
                    break
                q.popleft()
                self._event_pool.append(ev)
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
            if not q:
                done.append(s)
        for s in done:
            del self._events[s]
        return 0

    cdef int _synchronize_and_free_events(self) except -1:
        cdef Block block
        self._counters[C_NUM_SYNC_ALL_STREAMS] += 1
        sync = self.backend.event_synchronize
        for q in self._events.values():
            while q:
                ev, block = q.popleft()
                sync(ev)
                self._event_pool.append(ev)
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
        self._events.clear()
        return 0

    cdef int _release_cached_blocks(self) except -1:
        # empty_cache semantics: wait for pending cross-stream frees, then give
        # every entirely free segment back to the backend
        cdef Block block
        cdef list keep
        self._synchronize_and_free_events()
        raw_free = self.backend.raw_free
        for pools in (self._free_small, self._free_large):
            for stream, lst in list(pools.items()):
                if self._pool_use.get(stream, 0) > 0:
                    continue            # a live graph replays into these segments
                keep = []
                for block in lst:
                    if block.prev is not None or block.next is not None:
                        keep.append(block)
                        continue
                    raw_free(block.ptr)
                    self._total_allocated_memory -= block.size
                    self._dec2(block.is_small, S_SEGMENT, 1)
                    self._dec2(block.is_small, S_RESERVED_BYTES, block.size)
                    self._counters[C_NUM_DEVICE_FREE] += 1
                    block.owner = 0
                if keep:
                    pools[stream] = keep
                else:
                    del pools[stream]
        pool_events = self._event_pool
        while pool_events:
            self.backend.event_destroy(pool_events.pop())
        return 0

    cdef int _raise_oom(self, object alloc_size) except -1:
        free, total = self.backend.mem_get_info()
        self._counters[C_NUM_OOMS] += 1
        allocated = self._stats[S_ALLOCATED_BYTES][T_ALL][0]
        reserved = self._stats[S_RESERVED_BYTES][T_ALL][0]
        allowed = self._allowed_memory_maximum
        allowed_info = "" if allowed < 0 else f"{format_size(allowed)} allowed; "
        raise OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {format_size(alloc_size)}. "
            f"GPU {self.device} has a total capacity of {format_size(total)} "
            f"of which {format_size(free)} is free. {allowed_info}"
            f"Of the allocated memory {format_size(allocated)} is allocated by ptcore, "
            f"and {format_size(reserved - allocated)} is reserved by ptcore but unallocated. "
            f"Reserved but unallocated memory is the free part of segments that are "
            f"partly in use (fragmentation); see ptcore.cuda.memory_summary().")

    cdef int _raise_oom_locked(self, object size) except -1:
        # a request too large for any device (no rounding, no retry)
        cdef int nested = self._lock()
        try:
            self._raise_oom(size)
        finally:
            if not nested:
                self._unlock()
        return 0

    # -- CUDA graph pools ---------------------------------------------------------
    cdef object _capture_pool_of(self, object stream):
        pool = self._capture_pools.get(stream)
        if pool is not None:
            return pool
        if self._capture_route is not None:
            pool = self._capture_route(stream)
            if pool is not None:
                return pool
        return stream

    def begin_allocate_to_pool(self, pool, stream, route=None):
        """Serve ``stream``'s allocations from the graph pool ``pool`` (a tuple
        of two ints, as ``graph_pool_handle()``) until
        :meth:`end_allocate_to_pool`; ``route(stream)`` names the pool of other
        streams that joined the capture (or None).  Takes a use of the pool."""
        if type(pool) is not tuple:
            raise TypeError(f"a graph pool is a tuple, got {type(pool).__name__}")
        cdef int nested = self._lock()
        try:
            self._capture_pools[stream] = pool
            if route is not None:
                self._capture_route = route
            self._pool_use[pool] = self._pool_use.get(pool, 0) + 1
        finally:
            if not nested:
                self._unlock()

    def end_allocate_to_pool(self, stream):
        """Stop serving ``stream`` from its graph pool (the pool keeps its use)."""
        cdef int nested = self._lock()
        try:
            self._capture_pools.pop(stream, None)
            if not self._capture_pools:
                self._capture_route = None
        finally:
            if not nested:
                self._unlock()

    def release_pool(self, pool):
        """Drop one use of ``pool``; without users its cached segments go back
        to the device at the next :meth:`empty_cache`."""
        cdef int nested = self._lock()
        try:
            n = self._pool_use.get(pool, 0) - 1
            if n > 0:
                self._pool_use[pool] = n
            else:
                self._pool_use.pop(pool, None)
        finally:
            if not nested:
                self._unlock()

    def retain_pool(self, pool):
        """Add one use of ``pool`` (a graph sharing another graph's pool)."""
        cdef int nested = self._lock()
        try:
            self._pool_use[pool] = self._pool_use.get(pool, 0) + 1
        finally:
            if not nested:
                self._unlock()

    def pool_use_count(self, pool):
        return self._pool_use.get(pool, 0)

    # -- cold path -----------------------------------------------------------
    def empty_cache(self):
        """Return every entirely unused cached segment to the backend
        (``torch.cuda.empty_cache``).  Waits for pending cross-stream frees
        first."""
        if self._lock():
            raise RuntimeError("empty_cache called re-entrantly")
        try:
            self._release_cached_blocks()
        finally:
            self._unlock()

    def set_memory_fraction(self, fraction):
        """Limit the memory obtained from the backend to ``fraction`` of the
        device's total (``torch.cuda.set_per_process_memory_fraction``)."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if not 0 <= fraction <= 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        cdef int nested = self._lock()
        try:
            total = self.backend.mem_get_info()[1]
            self._fraction = float(fraction)
            self._allowed_memory_maximum = (-1 if fraction >= 1.0
                                            else int(round(fraction * total)))
        finally:
            if not nested:
                self._unlock()

    def get_memory_fraction(self):
        """The fraction set by :meth:`set_memory_fraction` (1.0 by default)."""
        return self._fraction

    def block_at(self, ptr):
        """The live :class:`Block` starting at device address ``ptr``."""
        b = self._active.get(ptr)
        if b is None or not (<Block>b).allocated:
            raise KeyError(f"no live allocation at {ptr:#x}")
        return b

    def memory_stats_as_nested_dict(self):
        """Statistics as ``torch._C._cuda_memoryStats`` returns them."""
        cdef int i, t
        cdef int nested = self._lock()
        try:
            out = {}
            for i in range(N_COUNTERS):
                out[_COUNTERS[i]] = self._counters[i]
            out["max_split_size"] = -1          # SIZE_MAX as int64: no limit
            for i in range(N_STATS):
                per_type = out[_STAT_ARRAYS[i]] = {}
                for t in range(3):
                    per_type[_STAT_TYPE_NAMES[t]] = _stat_dict(&self._stats[i][t][0])
            out["oversize_allocations"] = _stat_dict(&self._oversize_allocations[0])
            out["oversize_segments"] = _stat_dict(&self._oversize_segments[0])
            return out
        finally:
            if not nested:
                self._unlock()

    def memory_stats(self):
        """Flat, sorted statistics dict with ``torch.cuda.memory_stats`` keys,
        e.g. ``"allocated_bytes.all.current"``."""
        return flatten_stats(self.memory_stats_as_nested_dict())

    def reset_peak_memory_stats(self):
        """Set every ``peak`` to its ``current`` value."""
        cdef int i, t
        cdef int nested = self._lock()
        for i in range(N_STATS):
            for t in range(3):
                self._stats[i][t][1] = self._stats[i][t][0]
        self._oversize_allocations[1] = self._oversize_allocations[0]
        self._oversize_segments[1] = self._oversize_segments[0]
        if not nested:
            self._unlock()

    def reset_accumulated_memory_stats(self):
        """Zero every ``allocated``/``freed`` total and the event counters."""
        cdef int i, t
        cdef int nested = self._lock()
        for i in range(N_STATS):
            for t in range(3):
                self._stats[i][t][2] = self._stats[i][t][3] = 0
        self._oversize_allocations[2] = self._oversize_allocations[3] = 0
        self._oversize_segments[2] = self._oversize_segments[3] = 0
        for i in range(N_COUNTERS):
            self._counters[i] = 0
        if not nested:
            self._unlock()

    def memory_allocated(self):
        """Bytes currently held by live blocks (``allocated_bytes.all.current``)."""
        return self._stats[S_ALLOCATED_BYTES][T_ALL][0]

    def memory_reserved(self):
        """Bytes currently obtained from the backend (``reserved_bytes.all.current``)."""
        return self._stats[S_RESERVED_BYTES][T_ALL][0]

    def memory_summary(self, abbreviated=False):
        """Human-readable statistics table (the layout of
        ``torch.cuda.memory_summary``)."""
        return summary_from_stats(self.memory_stats(), self.device, abbreviated)

    def snapshot(self):
        """Segments and their blocks, in ``torch.cuda.memory_snapshot()`` form
        (a list of dicts sorted by address)."""
        cdef Block b, head
        cdef int nested = self._lock()
        try:
            heads = []
            for pools in (self._free_small, self._free_large):
                for lst in pools.values():
                    for b in lst:
                        if b.prev is None:
                            heads.append(b)
            for b in self._active.values():
                if b.prev is None:
                    heads.append(b)
            out = []
            for head in heads:
                blocks = []
                seg = {"device": self.device, "address": head.ptr, "total_size": 0,
                       "allocated_size": 0, "active_size": 0, "requested_size": 0,
                       "stream": head.stream,
                       "segment_type": "small" if head.is_small else "large",
                       "segment_pool_id": (0, 0), "is_expandable": False,
                       "frames": [], "blocks": blocks}
                b = head
                while b is not None:
                    active = b.allocated or b.event_count > 0
                    state = ("active_allocated" if b.allocated else
                             "active_pending_free" if active else "inactive")
                    blocks.append({"address": b.ptr, "size": b.size,
                                   "requested_size": b.requested_size,
                                   "state": state, "frames": []})
                    seg["total_size"] += b.size
                    if b.allocated:
                        seg["allocated_size"] += b.size
                    if active:
                        seg["active_size"] += b.size
                        seg["requested_size"] += b.requested_size
                    b = b.next
                out.append(seg)
            out.sort(key=lambda s: s["address"])
            return out
        finally:
            if not nested:
                self._unlock()

    def check_invariants(self):
        """Verify the internal bookkeeping; raises AssertionError when broken
        (used by the tests; O(number of blocks))."""
        cdef Block b, nb
        cdef int nested = self._lock()
        try:
            segs = self.snapshot()
            backend_live = getattr(self.backend, "live", None)
            alloc = {T_ALL: 0, T_SMALL: 0, T_LARGE: 0}
            reserved = {T_ALL: 0, T_SMALL: 0, T_LARGE: 0}
            nfree = 0
            for seg in segs:
                pool = T_SMALL if seg["segment_type"] == "small" else T_LARGE
                addr = seg["address"]
                for bl in seg["blocks"]:
                    assert bl["address"] == addr, "blocks do not tile their segment"
                    assert bl["size"] > 0 and bl["size"] % MIN_BLOCK_SIZE == 0
                    addr += bl["size"]
                    if bl["state"] == "active_allocated":
                        alloc[T_ALL] += bl["size"]
                        alloc[pool] += bl["size"]
                if backend_live is not None:
                    assert backend_live.get(seg["address"]) == seg["total_size"], \
                        "segment does not match a backend allocation"
                reserved[T_ALL] += seg["total_size"]
                reserved[pool] += seg["total_size"]
            for is_small, pools in ((True, self._free_small), (False, self._free_large)):
                for stream, lst in pools.items():
                    keys = []
                    for b in lst:
                        keys.append((b.size, b.ptr))
                    assert keys == sorted(keys), "a free list is not sorted by (size, address)"
                    for b in lst:
                        nfree += 1
                        assert b.stream == stream and b.is_small == is_small
                        assert not b.allocated and b.event_count == 0 and b.owner == self._id
                        for nb in (b.prev, b.next):
                            assert nb is None or nb.allocated or nb.event_count > 0, \
                                "two adjacent free blocks were not merged"
            for ptr, b in self._active.items():
                assert b.ptr == ptr and (b.allocated or b.event_count > 0)
            for t in (T_ALL, T_SMALL, T_LARGE):
                assert self._stats[S_ALLOCATED_BYTES][t][0] == alloc[t]
                assert self._stats[S_RESERVED_BYTES][t][0] == reserved[t]
            assert self._total_allocated_memory == reserved[T_ALL]
            assert self._stats[S_SEGMENT][T_ALL][0] == len(segs)
            nblocks = sum(len(s["blocks"]) for s in segs)
            assert nblocks == nfree + len(self._active)
        finally:
            if not nested:
                self._unlock()
