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

The allocator itself (:class:`Block`, :class:`CachingAllocator`) is an
extension type in ``ptcore/cuda/allocator/caching_allocator.pyx``, so that a cache
hit and a free run in C; the statistics are formatted by
``ptcore/cuda/allocator/stats_format.py``.  This module holds the backend interface,
a host-memory backend for the tests, the per-device registry and the
``torch.cuda`` memory functions, and re-exports the rest.

Examples
--------
>>> a = CachingAllocator(HostBackend(64 * 1048576))
>>> b = a.malloc(1000)
>>> b.size, a.memory_allocated(), a.memory_reserved()
(1024, 1024, 2097152)
>>> p = b.ptr
>>> a.free(b)
>>> a.malloc(700).ptr == p          # the cached block is reused
True
"""
import threading
import warnings

from ptcore.cuda.allocator.caching_allocator import (  # noqa: F401
    BackendOutOfMemory, Block, CachingAllocator, OutOfMemoryError, get_allocation_size,
    kLargeBuffer, kMinBlockSize, kMinLargeAlloc, kRoundLarge, kSmallBuffer, kSmallSize,
    round_size,
)
from ptcore.cuda.allocator.stats_format import flatten_stats, format_size, summary_from_stats

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
    return flatten_stats(memory_stats_as_nested_dict(device))


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


def reset_max_memory_allocated(device=None):
    """Deprecated: resets every peak statistic (:func:`reset_peak_memory_stats`)."""
    warnings.warn("ptcore.cuda.reset_max_memory_allocated now calls ptcore.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Deprecated: resets every peak statistic (:func:`reset_peak_memory_stats`)."""
    warnings.warn("ptcore.cuda.reset_max_memory_cached now calls ptcore.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device)


def memory_cached(device=None):
    """Deprecated name of :func:`memory_reserved`."""
    warnings.warn("`ptcore.cuda.memory_cached` has been renamed to `ptcore.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated name of :func:`max_memory_reserved`."""
    warnings.warn("`ptcore.cuda.max_memory_cached` has been renamed to `ptcore.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


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
        try:
            b = a.block_at(mem_ptr)
        except KeyError:
            continue
        a.free(b)
        return
    raise RuntimeError(f"caching_allocator_delete: {mem_ptr:#x} is not a live allocation")


def memory_summary(device=None, abbreviated=False):
    """Human-readable table of the allocator statistics of ``device``
    (the layout of ``torch.cuda.memory_summary``).

    Parameters
    ----------
    device : ptcore.device or int or str, optional
    abbreviated : bool, default False
        Omit the per-pool rows.
    """
    return summary_from_stats(memory_stats(device), _device_index(device), abbreviated)

