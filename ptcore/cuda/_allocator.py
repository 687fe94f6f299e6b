"""CUDA caching allocator (PyTorch's ``CUDACachingAllocator`` design).

The bookkeeping is independent of CUDA: it talks to a *backend* that hands
out raw device memory and stream events.  :class:`HostBackend` serves host
memory so that everything here is tested without a GPU; the CUDA driver
backend (``cuMemAlloc``/``cuMemFree``/``cuEvent*``) plugs in through the same
interface.

Rules (all from ``c10/cuda/CUDACachingAllocator.cpp``; constant names are
PyTorch's):

* Request sizes are rounded up to a multiple of ``kMinBlockSize`` (512 B);
  a request of 0 bytes never reaches a segment (``ptr == 0``).
* Rounded sizes ``<= kSmallSize`` (1 MiB) are served by the *small pool*, the
  others by the *large pool*.  New segments (``raw_alloc``) are
  ``kSmallBuffer`` (2 MiB) for the small pool, ``kLargeBuffer`` (20 MiB) for
  sizes below ``kMinLargeAlloc`` (10 MiB), else the size rounded up to
  ``kRoundLarge`` (2 MiB) (``get_allocation_size``).
* Free blocks are kept per (stream, pool) sorted by (size, address); a
  request takes the smallest block that fits, lowest address first
  (``get_free_block``).  The block is split when the remainder is at least
  512 B (small pool) or more than 1 MiB (large pool) (``should_split``).
* A freed block is merged with its free neighbours inside the same segment
  (``free_block``/``try_merge_blocks``); segments go back to the backend only
  when they are entirely free and ``empty_cache()`` runs, or when an
  allocation fails (then the whole cache is released and the allocation
  retried once before :class:`OutOfMemoryError` is raised).
* Blocks are reused only on the stream they were allocated on.  After
  ``record_stream(block, s)`` the block is, when freed, only returned to the
  cache once events recorded on every such ``s`` have completed; pending
  events are polled at the start of every ``malloc`` (``process_events``).
* Statistics follow ``torch.cuda.memory_stats()`` key for key.

The hot path (``malloc``/``free``) uses only dict/list operations and a
``bisect`` on sorted ``(size, ptr, block)`` lists, so the module can later be
compiled unchanged by Cython in pure-Python mode.
"""
import bisect
import collections
import itertools
import operator
import threading

__all__ = [
    "OutOfMemoryError", "BackendOutOfMemory", "Backend", "HostBackend",
    "Block", "CachingAllocator", "format_size",
    "memory_stats", "memory_stats_as_nested_dict", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats",
    "memory_summary", "memory_snapshot", "empty_cache",
    "set_per_process_memory_fraction", "get_per_process_memory_fraction",
    "mem_get_info", "caching_allocator_alloc", "caching_allocator_delete",
]

# ---------------------------------------------------------------------------
# constants (c10/cuda/CUDACachingAllocator.cpp, c10/core/AllocatorConfig.h)
kMinBlockSize = 512            # all sizes are rounded to at least 512 bytes
kSmallSize = 1048576           # largest "small" allocation is 1 MiB
kSmallBuffer = 2097152         # "small" allocations are packed in 2 MiB blocks
kLargeBuffer = 20971520        # "large" allocations may be packed in 20 MiB blocks
kMinLargeAlloc = 10485760      # allocations between 1 and 10 MiB may use kLargeBuffer
kRoundLarge = 2097152          # round up large allocations to 2 MiB

_ALL, _SMALL, _LARGE = 0, 1, 2            # StatType: AGGREGATE, SMALL_POOL, LARGE_POOL
_STAT_TYPE_NAMES = ("all", "small_pool", "large_pool")
# StatArray members, in the order torch._C._cuda_memoryStats builds its dict
_STAT_ARRAYS = ("allocation", "segment", "active", "inactive_split",
                "allocated_bytes", "reserved_bytes", "active_bytes",
                "inactive_split_bytes", "requested_bytes")
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams",
             "num_device_alloc", "num_device_free", "num_oom_rejections")


class OutOfMemoryError(RuntimeError):
    """Raised when the caching allocator cannot serve a request
    (``torch.cuda.OutOfMemoryError``, a ``RuntimeError``)."""


class BackendOutOfMemory(MemoryError):
    """Raised by :meth:`Backend.raw_alloc` when the device has no room
    (``CUDA_ERROR_OUT_OF_MEMORY``).  Any other exception from a backend is
    passed through unchanged by the allocator."""


def format_size(size):
    """Human-readable byte count, exactly as c10's ``format_size``.

    Examples
    --------
    >>> format_size(1024), format_size(3 * 1048576)
    ('1024 bytes', '3.00 MiB')
    """
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1048576:
        return f"{size / 1024.0:.2f} KiB"
    if size <= 1073741824:
        return f"{size / 1048576.0:.2f} MiB"
    return f"{size / 1073741824.0:.2f} GiB"


def round_size(size):
    """Round a request up to a multiple of ``kMinBlockSize`` (512 B).

    Parameters
    ----------
    size : int
        Requested bytes (``>= 0``).
    """
    if size < kMinBlockSize:
        return kMinBlockSize
    return kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize)


def get_allocation_size(size):
    """Size of the segment ``raw_alloc``-ed for a rounded request ``size``."""
    if size <= kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)


# ---------------------------------------------------------------------------
# backends

class Backend:
    """Interface between :class:`CachingAllocator` and a device.

    Each method maps onto one CUDA driver call:

    ========================  ===================================
    ``raw_alloc(n) -> ptr``   ``cuMemAlloc`` (``BackendOutOfMemory`` on
                              ``CUDA_ERROR_OUT_OF_MEMORY``)
    ``raw_free(ptr)``         ``cuMemFree``
    ``mem_get_info()``        ``cuMemGetInfo`` -> ``(free, total)``
    ``event_create()``        ``cuEventCreate(CU_EVENT_DISABLE_TIMING)``
    ``event_record(e, s)``    ``cuEventRecord(e, s)``
    ``event_query(e)``        ``cuEventQuery(e) == CUDA_SUCCESS``
                              (``CUDA_ERROR_NOT_READY`` -> False)
    ``event_synchronize(e)``  ``cuEventSynchronize(e)``
    ``event_destroy(e)``      ``cuEventDestroy``
    ========================  ===================================

    Streams are opaque hashable values (the CUDA backend uses the
    ``CUstream`` handle as an int, 0 being the legacy default stream).
    """

    def raw_alloc(self, nbytes):
        raise NotImplementedError

    def raw_free(self, ptr):
        raise NotImplementedError

    def mem_get_info(self):
        raise NotImplementedError

    def event_create(self):
        raise NotImplementedError

    def event_record(self, event, stream):
        raise NotImplementedError

    def event_query(self, event):
        raise NotImplementedError

    def event_synchronize(self, event):
        raise NotImplementedError

    def event_destroy(self, event):
        raise NotImplementedError


class HostEvent:
    """Event of :class:`HostBackend`: ``complete`` says whether the work
    recorded before it on ``stream`` has finished."""
    __slots__ = ("stream", "complete", "destroyed")

    def __init__(self):
        self.stream = None
        self.complete = True
        self.destroyed = False

    def __repr__(self):
        return f"HostEvent(stream={self.stream!r}, complete={self.complete})"


class HostBackend(Backend):
    """Host-memory stand-in for a GPU, for testing the allocator.

    Memory comes from anonymous ``mmap`` (page aligned, zero filled, only
    touched pages use RAM), so the pointers are real addresses.

    Parameters
    ----------
    total_bytes : int
        Simulated device capacity; ``raw_alloc`` raises
        :class:`BackendOutOfMemory` beyond it.
    auto_complete_events : bool, default True
        When False, recorded events stay pending until the test calls
        :meth:`complete_stream` / :meth:`complete_all` (``event_synchronize``
        completes an event too, as waiting on the GPU would).

    Attributes
    ----------
    external_bytes : int
        Memory "used by other processes": reduces what can be allocated.
    live : dict
        ``ptr -> nbytes`` of outstanding raw allocations.
    n_alloc, n_free, n_failed : int
        Call counters.
    """

    def __init__(self, total_bytes, auto_complete_events=True):
        if total_bytes < 0:
            raise ValueError(f"total_bytes must be >= 0, got {total_bytes}")
        self.total_bytes = int(total_bytes)
        self.external_bytes = 0
        self.auto_complete_events = auto_complete_events
        self.live = {}
        self._maps = {}
        self.used = 0
        self.n_alloc = 0
        self.n_free = 0
        self.n_failed = 0
        self.n_event_synchronize = 0
        self.events = set()
        self.on_raw_alloc = None     # test hook, called before each raw_alloc

    def raw_alloc(self, nbytes):
        if self.on_raw_alloc is not None:
            self.on_raw_alloc(nbytes)
        if nbytes <= 0:
            raise ValueError(f"raw_alloc of {nbytes} bytes")
        if self.used + self.external_bytes + nbytes > self.total_bytes:
            self.n_failed += 1
            raise BackendOutOfMemory(f"host backend: cannot allocate {nbytes} bytes "
                                     f"({self.total_bytes - self.used - self.external_bytes} free)")
        import ctypes
        import mmap
        m = mmap.mmap(-1, nbytes)
        buf = (ctypes.c_char * nbytes).from_buffer(m)
        ptr = ctypes.addressof(buf)
        self._maps[ptr] = (m, buf)
        self.live[ptr] = nbytes
        self.used += nbytes
        self.n_alloc += 1
        return ptr

    def raw_free(self, ptr):
        nbytes = self.live.pop(ptr, None)
        if nbytes is None:
            raise RuntimeError(f"host backend: raw_free of unknown pointer {ptr:#x}")
        m, buf = self._maps.pop(ptr)
        del buf
        m.close()
        self.used -= nbytes
        self.n_free += 1

    def mem_get_info(self):
        return (max(self.total_bytes - self.used - self.external_bytes, 0), self.total_bytes)

    def event_create(self):
        e = HostEvent()
        self.events.add(e)
        return e

    def event_record(self, event, stream):
        if event.destroyed:
            raise RuntimeError("host backend: record of a destroyed event")
        event.stream = stream
        event.complete = self.auto_complete_events

    def event_query(self, event):
        return event.complete

    def event_synchronize(self, event):
        self.n_event_synchronize += 1
        event.complete = True

    def event_destroy(self, event):
        event.destroyed = True
        self.events.discard(event)

    def complete_stream(self, stream):
        """Mark every pending event recorded on ``stream`` complete."""
        for e in self.events:
            if e.stream == stream:
                e.complete = True

    def complete_all(self):
        """Mark every pending event complete."""
        for e in self.events:
            e.complete = True

    def read(self, ptr, nbytes):
        """Copy ``nbytes`` at host address ``ptr`` into ``bytes`` (tests)."""
        import ctypes
        return ctypes.string_at(ptr, nbytes)

    def write(self, ptr, data):
        """Copy ``data`` (bytes) to host address ``ptr`` (tests)."""
        import ctypes
        ctypes.memmove(ptr, data, len(data))


# ---------------------------------------------------------------------------
# blocks

class Block:
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
    allocated : bool
        True while the caller owns it.
    """
    __slots__ = ("ptr", "size", "requested_size", "stream", "is_small",
                 "allocated", "prev", "next", "stream_uses", "event_count",
                 "owner", "__weakref__")

    def __init__(self, ptr, size, stream, is_small, owner):
        self.ptr = ptr
        self.size = size
        self.requested_size = 0
        self.stream = stream
        self.is_small = is_small
        self.allocated = False
        self.prev = None
        self.next = None
        self.stream_uses = None
        self.event_count = 0
        self.owner = owner

    def is_split(self):
        """True when the block does not span its whole segment."""
        return self.prev is not None or self.next is not None

    def __repr__(self):
        state = ("allocated" if self.allocated else
                 "pending free" if self.event_count else "free")
        return (f"Block(ptr={self.ptr:#x}, size={self.size}, stream={self.stream!r}, "
                f"pool={'small' if self.is_small else 'large'}, {state})")


def _inc2(pair, n):
    # Stat::increase of a stat for "all" and for the block's pool
    s = pair[0]
    c = s[0] + n
    s[0] = c
    if c > s[1]:
        s[1] = c
    s[2] += n
    s = pair[1]
    c = s[0] + n
    s[0] = c
    if c > s[1]:
        s[1] = c
    s[2] += n


def _dec2(pair, n):
    # Stat::decrease for "all" and the block's pool
    s = pair[0]
    s[0] -= n
    s[3] += n
    s = pair[1]
    s[0] -= n
    s[3] += n


(_S_ALLOCATION, _S_SEGMENT, _S_ACTIVE, _S_INACTIVE_SPLIT, _S_ALLOCATED_BYTES,
 _S_RESERVED_BYTES, _S_ACTIVE_BYTES, _S_INACTIVE_SPLIT_BYTES, _S_REQUESTED_BYTES) = range(9)

_owner_ids = itertools.count(1)


class CachingAllocator:
    """Per-device caching allocator.

    Parameters
    ----------
    backend : Backend
        Source of raw memory and events.
    device : int, default 0
        Device index, used in messages and snapshots.

    Notes
    -----
    Thread safe (one re-entrant lock).  A ``free`` that happens *inside* an
    allocator call on the same thread (a storage's destructor run by the
    garbage collector while ``malloc`` creates objects) is queued and done
    when the outer call finishes, so it cannot corrupt the free lists.
    """

    def __init__(self, backend, device=0):
        self.backend = backend
        self.device = device
        self._id = next(_owner_ids)
        self._lock = threading.RLock()
        self._busy = False
        self._deferred = []
        # (stream, is_small) -> sorted list of (size, ptr, Block) of free blocks
        self._free = {}
        # ptr -> Block for allocated blocks and blocks waiting on events
        self._active = {}
        # stream -> deque of (event, Block), in record order
        self._events = {}
        self._event_pool = []
        self._total_allocated_memory = 0    # bytes obtained from the backend
        self._allowed_memory_maximum = None  # set by set_memory_fraction
        self._fraction = 1.0
        self._stats = {name: [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
                       for name in _STAT_ARRAYS}
        # _pairs[is_small][_S_X] = (stats of "all", stats of the pool) for stat X
        self._pairs = tuple(tuple((self._stats[name][_ALL], self._stats[name][pool])
                                  for name in _STAT_ARRAYS)
                            for pool in (_LARGE, _SMALL))
        self._oversize_allocations = [0, 0, 0, 0]
        self._oversize_segments = [0, 0, 0, 0]
        self._counters = dict.fromkeys(_COUNTERS, 0)

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
        if size <= 0:
            if size == 0:
                b = Block(0, 0, stream, True, self._id)
                b.allocated = True
                return b
            raise ValueError(f"malloc: size must be >= 0, got {size}")
        with self._lock:
            if self._busy:
                raise RuntimeError("CachingAllocator.malloc called re-entrantly "
                                   "(from a destructor run inside the allocator)")
            self._busy = True
            try:
                if self._events:
                    self._process_events()
                rsize = round_size(size)
                is_small = rsize <= kSmallSize
                block = self._get_free_block(rsize, stream, is_small)
                if block is None:
                    alloc_size = get_allocation_size(rsize)
                    block = self._alloc_block(alloc_size, stream, is_small, False)
                    if block is None:
                        self._release_cached_blocks()
                        block = self._alloc_block(alloc_size, stream, is_small, True)
                        if block is None:
                            self._raise_oom(alloc_size)
                return self._alloc_found_block(block, rsize, size)
            finally:
                self._busy = False
                if self._deferred:
                    self._drain_deferred()

    def free(self, block):
        """Return a block obtained from :meth:`malloc`.

        If :meth:`record_stream` added other streams, the memory becomes
        reusable only after the work queued on them so far has completed.

        Raises
        ------
        RuntimeError
            On a double free or a block of another allocator.
        """
        with self._lock:
            if block.owner != self._id:
                raise RuntimeError(f"free: {block!r} was not allocated by this "
                                   f"allocator (device {self.device})")
            if not block.allocated:
                raise RuntimeError(f"free: double free of the CUDA block at "
                                   f"{block.ptr:#x} ({block.size} bytes)")
            if block.size == 0:
                block.allocated = False
                return
            if self._busy:
                # re-entrant call (a destructor run by the GC inside
                # malloc/free): the block stays "allocated" (so no merge can
                # touch it) and is freed when the outer call finishes
                for d in self._deferred:
                    if d is block:
                        raise RuntimeError(f"free: double free of the CUDA block at "
                                           f"{block.ptr:#x} ({block.size} bytes)")
                self._deferred.append(block)
                return
            self._busy = True
            try:
                self._free_locked(block)
            finally:
                self._busy = False
                if self._deferred:
                    self._drain_deferred()

    def record_stream(self, block, stream):
        """Mark ``block`` as used on ``stream`` (``Tensor.record_stream``).

        The block will not be reused before the work queued on ``stream``
        at the time of ``free`` has completed.  Uses on the allocation stream
        need no tracking; zero-size blocks are ignored.
        """
        if block.size == 0:
            return
        with self._lock:
            if block.owner != self._id or not block.allocated:
                raise RuntimeError(f"record_stream: {block!r} is not a live allocation "
                                   f"of this allocator")
            if stream == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = {stream}
            else:
                block.stream_uses.add(stream)

    # -- internals -----------------------------------------------------------
    def _drain_deferred(self):
        while self._deferred:
            block = self._deferred.pop()
            self._busy = True
            try:
                self._free_locked(block)
            finally:
                self._busy = False

    def _get_free_block(self, rsize, stream, is_small):
        lst = self._free.get((stream, is_small))
        if not lst:
            return None
        i = bisect.bisect_left(lst, (rsize,))
        if i == len(lst):
            return None
        block = lst[i][2]
        del lst[i]
        return block

    def _insert_free(self, block):
        key = (block.stream, block.is_small)
        lst = self._free.get(key)
        if lst is None:
            self._free[key] = [(block.size, block.ptr, block)]
        else:
            bisect.insort(lst, (block.size, block.ptr, block))

    def _remove_free(self, block):
        lst = self._free[(block.stream, block.is_small)]
        i = bisect.bisect_left(lst, (block.size, block.ptr))
        if i == len(lst) or lst[i][2] is not block:
            raise RuntimeError("CachingAllocator: free list corrupted "
                               f"({block!r} is not cached)")
        del lst[i]

    def _alloc_block(self, alloc_size, stream, is_small, is_retry):
        if is_retry:
            self._counters["num_alloc_retries"] += 1
        allowed = self._allowed_memory_maximum
        if allowed is not None and self._total_allocated_memory + alloc_size > allowed:
            return None
        try:
            ptr = self.backend.raw_alloc(alloc_size)
        except BackendOutOfMemory:
            return None
        self._total_allocated_memory += alloc_size
        block = Block(ptr, alloc_size, stream, is_small, self._id)
        pr = self._pairs[is_small]
        _inc2(pr[_S_SEGMENT], 1)
        _inc2(pr[_S_RESERVED_BYTES], alloc_size)
        self._counters["num_device_alloc"] += 1
        return block

    def _alloc_found_block(self, block, rsize, orig_size):
        # block: a free block (not in any free list) of size >= rsize.
        # A fresh Block object always goes to the caller, so a stale handle
        # of an earlier allocation can never free this one.
        pr = self._pairs[block.is_small]
        remaining = block.size - rsize
        split = remaining >= kMinBlockSize if block.is_small else remaining > kSmallSize
        already_split = block.prev is not None or block.next is not None
        new = Block(block.ptr, rsize, block.stream, block.is_small, self._id)
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
                _dec2(pr[_S_INACTIVE_SPLIT_BYTES], rsize)
            else:
                _inc2(pr[_S_INACTIVE_SPLIT_BYTES], remaining)
                _inc2(pr[_S_INACTIVE_SPLIT], 1)
        else:
            # new replaces block in the segment's list
            new.size = block.size
            new.next = block.next
            if new.next is not None:
                new.next.prev = new
            block.prev = block.next = None
            block.owner = 0
            if already_split:
                _dec2(pr[_S_INACTIVE_SPLIT_BYTES], new.size)
                _dec2(pr[_S_INACTIVE_SPLIT], 1)
        new.allocated = True
        new.requested_size = orig_size
        self._active[new.ptr] = new
        size = new.size
        _inc2(pr[_S_ALLOCATION], 1)
        _inc2(pr[_S_ALLOCATED_BYTES], size)
        _inc2(pr[_S_ACTIVE], 1)
        _inc2(pr[_S_ACTIVE_BYTES], size)
        _inc2(pr[_S_REQUESTED_BYTES], orig_size)
        return new

    def _free_locked(self, block):
        block.allocated = False
        pr = self._pairs[block.is_small]
        _dec2(pr[_S_ALLOCATION], 1)
        _dec2(pr[_S_ALLOCATED_BYTES], block.size)
        if block.stream_uses:
            self._insert_events(block)
        else:
            block.stream_uses = None
            self._free_block(block)

    def _free_block(self, block):
        # moves a block (not allocated, no pending events) into the cache,
        # merging it with free neighbours of its segment
        pr = self._pairs[block.is_small]
        original_size = block.size
        requested = block.requested_size
        del self._active[block.ptr]
        d_count = 0
        d_bytes = 0
        prev = block.prev
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
        nxt = block.next
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
            _inc2(pr[_S_INACTIVE_SPLIT], d_count)
        elif d_count < 0:
            _dec2(pr[_S_INACTIVE_SPLIT], -d_count)
        if d_bytes > 0:
            _inc2(pr[_S_INACTIVE_SPLIT_BYTES], d_bytes)
        elif d_bytes < 0:
            _dec2(pr[_S_INACTIVE_SPLIT_BYTES], -d_bytes)
        _dec2(pr[_S_ACTIVE], 1)
        _dec2(pr[_S_ACTIVE_BYTES], original_size)
        _dec2(pr[_S_REQUESTED_BYTES], requested)

    def _insert_events(self, block):
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

    def _process_events(self):
        # per stream, pop completed events in record order (no head-of-line
        # blocking across streams), as process_events() in PyTorch
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

    def _synchronize_and_free_events(self):
        self._counters["num_sync_all_streams"] += 1
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

    def _release_cached_blocks(self):
        # empty_cache semantics: wait for pending cross-stream frees, then give
        # every entirely free segment back to the backend
        self._synchronize_and_free_events()
        raw_free = self.backend.raw_free
        for key, lst in list(self._free.items()):
            keep = []
            for item in lst:
                block = item[2]
                if block.prev is not None or block.next is not None:
                    keep.append(item)
                    continue
                raw_free(block.ptr)
                self._total_allocated_memory -= block.size
                pr = self._pairs[block.is_small]
                _dec2(pr[_S_SEGMENT], 1)
                _dec2(pr[_S_RESERVED_BYTES], block.size)
                self._counters["num_device_free"] += 1
                block.owner = 0
            if keep:
                self._free[key] = keep
            else:
                del self._free[key]
        pool_events = self._event_pool
        while pool_events:
            self.backend.event_destroy(pool_events.pop())

    def _raise_oom(self, alloc_size):
        free, total = self.backend.mem_get_info()
        self._counters["num_ooms"] += 1
        allocated = self._stats["allocated_bytes"][_ALL][0]
        reserved = self._stats["reserved_bytes"][_ALL][0]
        allowed = self._allowed_memory_maximum
        allowed_info = "" if allowed is None else f"{format_size(allowed)} allowed; "
        raise OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {format_size(alloc_size)}. "
            f"GPU {self.device} has a total capacity of {format_size(total)} "
            f"of which {format_size(free)} is free. {allowed_info}"
            f"Of the allocated memory {format_size(allocated)} is allocated by ptcore, "
            f"and {format_size(reserved - allocated)} is reserved by ptcore but unallocated. "
            f"Reserved but unallocated memory is the free part of segments that are "
            f"partly in use (fragmentation); see ptcore.cuda.memory_summary().")

    # -- cold path -----------------------------------------------------------
    def empty_cache(self):
        """Return every entirely unused cached segment to the backend
        (``torch.cuda.empty_cache``).  Waits for pending cross-stream frees
        first."""
        with self._lock:
            if self._busy:
                raise RuntimeError("empty_cache called re-entrantly")
            self._busy = True
            try:
                self._release_cached_blocks()
            finally:
                self._busy = False
                if self._deferred:
                    self._drain_deferred()

    def set_memory_fraction(self, fraction):
        """Limit the memory obtained from the backend to ``fraction`` of the
        device's total (``torch.cuda.set_per_process_memory_fraction``)."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if not 0 <= fraction <= 1:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        with self._lock:
            total = self.backend.mem_get_info()[1]
            self._fraction = float(fraction)
            self._allowed_memory_maximum = (None if fraction >= 1.0
                                            else int(round(fraction * total)))

    def get_memory_fraction(self):
        """The fraction set by :meth:`set_memory_fraction` (1.0 by default)."""
        return self._fraction

    def block_at(self, ptr):
        """The live :class:`Block` starting at device address ``ptr``."""
        b = self._active.get(ptr)
        if b is None or not b.allocated:
            raise KeyError(f"no live allocation at {ptr:#x}")
        return b

    def memory_stats_as_nested_dict(self):
        """Statistics as ``torch._C._cuda_memoryStats`` returns them."""
        with self._lock:
            def stat(s):
                return {"current": s[0], "peak": s[1], "allocated": s[2], "freed": s[3]}
            out = dict(self._counters)
            out["max_split_size"] = -1          # SIZE_MAX as int64: no limit
            for name in _STAT_ARRAYS:
                out[name] = {_STAT_TYPE_NAMES[t]: stat(self._stats[name][t]) for t in range(3)}
            out["oversize_allocations"] = stat(self._oversize_allocations)
            out["oversize_segments"] = stat(self._oversize_segments)
            return out

    def memory_stats(self):
        """Flat, sorted statistics dict with ``torch.cuda.memory_stats`` keys,
        e.g. ``"allocated_bytes.all.current"``."""
        return _flatten(self.memory_stats_as_nested_dict())

    def reset_peak_memory_stats(self):
        """Set every ``peak`` to its ``current`` value."""
        with self._lock:
            for arr in self._stats.values():
                for s in arr:
                    s[1] = s[0]
            for s in (self._oversize_allocations, self._oversize_segments):
                s[1] = s[0]

    def reset_accumulated_memory_stats(self):
        """Zero every ``allocated``/``freed`` total and the event counters."""
        with self._lock:
            for arr in self._stats.values():
                for s in arr:
                    s[2] = s[3] = 0
            for s in (self._oversize_allocations, self._oversize_segments):
                s[2] = s[3] = 0
            for k in self._counters:
                self._counters[k] = 0

    def memory_allocated(self):
        """Bytes currently held by live blocks (``allocated_bytes.all.current``)."""
        return self._stats["allocated_bytes"][_ALL][0]

    def memory_reserved(self):
        """Bytes currently obtained from the backend (``reserved_bytes.all.current``)."""
        return self._stats["reserved_bytes"][_ALL][0]

    def memory_summary(self, abbreviated=False):
        """Human-readable statistics table (the layout of
        ``torch.cuda.memory_summary``)."""
        return _summary_from_stats(self.memory_stats(), self.device, abbreviated)

    def snapshot(self):
        """Segments and their blocks, in ``torch.cuda.memory_snapshot()`` form
        (a list of dicts sorted by address)."""
        with self._lock:
            heads = []
            for lst in self._free.values():
                heads.extend(item[2] for item in lst if item[2].prev is None)
            heads.extend(b for b in self._active.values() if b.prev is None)
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

    def check_invariants(self):
        """Verify the internal bookkeeping; raises AssertionError when broken
        (used by the tests; O(number of blocks))."""
        with self._lock:
            segs = self.snapshot()
            backend_live = getattr(self.backend, "live", None)
            alloc = {_ALL: 0, _SMALL: 0, _LARGE: 0}
            reserved = {_ALL: 0, _SMALL: 0, _LARGE: 0}
            nfree = 0
            for seg in segs:
                pool = _SMALL if seg["segment_type"] == "small" else _LARGE
                addr = seg["address"]
                for b in seg["blocks"]:
                    assert b["address"] == addr, "blocks do not tile their segment"
                    assert b["size"] > 0 and b["size"] % kMinBlockSize == 0
                    addr += b["size"]
                    if b["state"] == "active_allocated":
                        alloc[_ALL] += b["size"]
                        alloc[pool] += b["size"]
                if backend_live is not None:
                    assert backend_live.get(seg["address"]) == seg["total_size"], \
                        "segment does not match a backend allocation"
                reserved[_ALL] += seg["total_size"]
                reserved[pool] += seg["total_size"]
            for key, lst in self._free.items():
                assert lst == sorted(lst, key=lambda it: (it[0], it[1]))
                for size, ptr, b in lst:
                    nfree += 1
                    assert (b.stream, b.is_small) == key
                    assert b.size == size and b.ptr == ptr
                    assert not b.allocated and b.event_count == 0 and b.owner == self._id
                    for nb in (b.prev, b.next):
                        assert nb is None or nb.allocated or nb.event_count > 0, \
                            "two adjacent free blocks were not merged"
            for ptr, b in self._active.items():
                assert b.ptr == ptr and (b.allocated or b.event_count > 0)
            for t in (_ALL, _SMALL, _LARGE):
                assert self._stats["allocated_bytes"][t][0] == alloc[t]
                assert self._stats["reserved_bytes"][t][0] == reserved[t]
            assert self._total_allocated_memory == reserved[_ALL]
            assert self._stats["segment"][_ALL][0] == len(segs)
            nblocks = sum(len(s["blocks"]) for s in segs)
            assert nblocks == nfree + len(self._active)


def _flatten(nested):
    result = []

    def rec(prefix, obj):
        if isinstance(obj, dict):
            if prefix:
                prefix += "."
            for k, v in obj.items():
                rec(prefix + ("_".join(map(str, k)) if isinstance(k, tuple) else str(k)), v)
        else:
            result.append((prefix, obj))

    rec("", nested)
    result.sort()
    return collections.OrderedDict(result)


# ---------------------------------------------------------------------------
# per-device registry and the torch.cuda.memory functions

_allocators = {}
_registry_lock = threading.Lock()
_allocator_factory = None       # callable(device_index) -> CachingAllocator
_current_device = None          # callable() -> int; None means device 0


def _set_allocator_factory(factory, current_device=None):
    """Install the function creating a device's allocator on first use
    (``ptcore.cuda`` does this once the driver is initialised), and
    optionally the function giving the current device index."""
    global _allocator_factory, _current_device
    _allocator_factory = factory
    _current_device = current_device


def _device_index(device):
    if device is None:
        return 0 if _current_device is None else _current_device()
    if isinstance(device, bool):
        raise TypeError(f"Expected a cuda device, but got: {device!r}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"Expected a non-negative device index, but got: {device}")
        return device
    if isinstance(device, str):
        from ptcore import device as _dev
        device = _dev(device)
    typ = getattr(device, "type", None)
    if typ != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    idx = device.index
    if idx is None:
        return 0 if _current_device is None else _current_device()
    return idx


def _get_allocator(device=None, create=False):
    idx = _device_index(device)
    a = _allocators.get(idx)
    if a is None and create:
        with _registry_lock:
            a = _allocators.get(idx)
            if a is None:
                if _allocator_factory is None:
                    raise RuntimeError("ptcore.cuda: CUDA is not available, so there is no "
                                       f"caching allocator for cuda:{idx}")
                a = _allocators[idx] = _allocator_factory(idx)
    return a


def memory_stats_as_nested_dict(device=None):
    """``memory_stats`` as a nested dict (empty before the device is used)."""
    a = _get_allocator(device)
    return {} if a is None else a.memory_stats_as_nested_dict()


def memory_stats(device=None):
    """Caching allocator statistics of ``device`` with PyTorch's key names
    (an empty ``OrderedDict`` before the device is first used).

    Parameters
    ----------
    device : ptcore.device or int or str, optional
        Default: the current device.
    """
    return _flatten(memory_stats_as_nested_dict(device))


def memory_allocated(device=None):
    """Bytes occupied by tensors on ``device``."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """Peak of :func:`memory_allocated` since start or the last
    :func:`reset_peak_memory_stats`."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """Bytes held by the caching allocator on ``device`` (used or cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """Peak of :func:`memory_reserved`."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None):
    """Reset the ``peak`` statistics of ``device``."""
    a = _get_allocator(device)
    if a is not None:
        a.reset_peak_memory_stats()


def reset_accumulated_memory_stats(device=None):
    """Reset the ``allocated``/``freed`` totals and the event counters."""
    a = _get_allocator(device)
    if a is not None:
        a.reset_accumulated_memory_stats()


def empty_cache():
    """Release all unoccupied cached memory of every initialised device."""
    for a in list(_allocators.values()):
        a.empty_cache()


def set_per_process_memory_fraction(fraction, device=None):
    """Limit this process's caching allocator on ``device`` to
    ``fraction * total memory``; larger allocations raise
    :class:`OutOfMemoryError`.

    Parameters
    ----------
    fraction : float
        In ``[0, 1]``.
    device : ptcore.device or int or str, optional
    """
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _get_allocator(device, create=True).set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None):
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 by default)."""
    return _get_allocator(device, create=True).get_memory_fraction()


def mem_get_info(device=None):
    """``(free, total)`` device memory in bytes, as the driver reports it."""
    return _get_allocator(device, create=True).backend.mem_get_info()


def memory_snapshot():
    """Segments of every initialised device (``torch.cuda.memory_snapshot``)."""
    out = []
    for idx in sorted(_allocators):
        out.extend(_allocators[idx].snapshot())
    return out


def caching_allocator_alloc(size, device=None, stream=None):
    """Allocate ``size`` bytes and return the device pointer (int)."""
    a = _get_allocator(device, create=True)
    b = a.malloc(size, 0 if stream is None else stream)
    return b.ptr


def caching_allocator_delete(mem_ptr):
    """Free a pointer from :func:`caching_allocator_alloc`."""
    if mem_ptr == 0:
        return
    for a in _allocators.values():
        b = a._active.get(mem_ptr)
        if b is not None and b.allocated:
            a.free(b)
            return
    raise RuntimeError(f"caching_allocator_delete: {mem_ptr:#x} is not a live allocation")


def _format_size_summary(sz, pref_sz):
    prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_sz < 768 * 1024:
            break
        prefix = new_prefix
        sz //= 1024
        pref_sz /= 1024
    return f"{sz:6d} {prefix}"


def _format_count(cnt, pref_cnt):
    prefixes = [" ", "K", "M"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_cnt < 750 * 1000:
            break
        prefix = new_prefix
        cnt //= 1000
        pref_cnt /= 1000
    return f"{cnt:7d} {prefix} "


def _summary_from_stats(stats, device, abbreviated=False):
    g = stats.get
    lines = ["=" * 75,
             f" {'':16} ptcore CUDA memory summary, device ID {device:<18d} ",
             "-" * 75,
             f"  {'':9} CUDA OOMs: {g('num_ooms', 0):<12d} | {'':6} cudaMalloc retries: "
             f"{g('num_alloc_retries', 0):<8d}  ",
             "=" * 75,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    metrics = [("allocated_bytes", "Allocated memory", _format_size_summary),
               ("active_bytes", "Active memory", _format_size_summary),
               ("requested_bytes", "Requested memory", _format_size_summary),
               ("reserved_bytes", "GPU reserved memory", _format_size_summary),
               ("inactive_split_bytes", "Non-releasable memory", _format_size_summary),
               ("allocation", "Allocations", _format_count),
               ("active", "Active allocs", _format_count),
               ("segment", "GPU reserved segments", _format_count),
               ("inactive_split", "Non-releasable allocs", _format_count)]
    for key, name, fmt in metrics:
        lines.append("-" * 75)
        subs = [("all", name)]
        if not abbreviated:
            subs += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        pref = None
        for sub, subname in subs:
            vals = [g(f"{key}.{sub}.{m}", 0) for m in ("current", "peak", "allocated", "freed")]
            if pref is None:
                pref = vals
            lines.append(f" {subname:<21} | " + " | ".join(fmt(v, p) for v, p in zip(vals, pref)) + " ")
    for key, name in (("oversize_allocations", "Oversize allocations"),
                      ("oversize_segments", "Oversize GPU segments")):
        lines.append("-" * 75)
        vals = [g(f"{key}.{m}", 0) for m in ("current", "peak", "allocated", "freed")]
        lines.append(f" {name:<21} | " + " | ".join(_format_count(v, v) for v in vals) + " ")
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"


def memory_summary(device=None, abbreviated=False):
    """Human-readable table of the allocator statistics of ``device``
    (the layout of ``torch.cuda.memory_summary``).

    Parameters
    ----------
    device : ptcore.device or int or str, optional
    abbreviated : bool, default False
        Omit the per-pool rows.
    """
    return _summary_from_stats(memory_stats(device), _device_index(device), abbreviated)

