"""An emulated CUDA device on the host (``PTCORE_CUDA_EMULATE=N``).

It implements :class:`ptcore.cuda.driver.interface.Driver` so that every layer above
the driver interface runs unchanged on a machine without a GPU:

* device memory is host memory (anonymous ``mmap`` per allocation, so a
  pointer is a real address), bounded by a simulated capacity
  (``PTCORE_CUDA_EMULATE_MEMORY`` bytes, default 16 GiB) so that
  out-of-memory paths are reachable; copies and memsets check that the
  range lies inside one live allocation of the right device;
* streams are **ordered queues** whose work runs lazily, when something on
  the host waits for it (synchronize, a copy to pageable host memory, an
  event query/synchronize, or a queue growing past a bound).  Work on
  different streams therefore really interleaves differently from program
  order, as on a GPU: a missing ``record_stream``/``wait_event`` shows up as
  a wrong result instead of passing by luck;
* events record a queue position; ``stream_wait_event`` makes a queue wait
  for another queue to reach that position; timing events take the host
  clock when their position executes;
* kernels are the same CUDA C++ sources compiled for the host
  (:mod:`ptcore.cuda.emulated.kernels`), cuBLAS calls run on the CPU
  (:mod:`ptcore.cuda.emulated.blas`), cuFFT calls on ``scipy.fft``
  (:mod:`ptcore.cuda.emulated.fft`) and cuSOLVER calls on scipy's LAPACK
  (:mod:`ptcore.cuda.emulated.solver`), in stream order;
* stream capture (CUDA graphs) records the work queued on a capturing
  stream -- and on the streams that join the capture through events --
  instead of running it; the calls CUDA forbids during a capture (host
  synchronisation of a capturing stream, pageable copies, and, unless the
  thread's capture mode is relaxed, ``cuMemAlloc``/``cuMemFree``/device
  synchronisation) fail with CUDA's error and invalidate the capture, so
  code that breaks capture on a GPU breaks here too.  An instantiated graph
  launches as one queued item running the recorded work in capture order.
"""
import collections
import ctypes
import mmap
import os
import threading
import time

from ptcore.cuda.allocator.device_allocators import BackendOutOfMemory
from ptcore.cuda.driver.fast_launch import KernelLauncher
from ptcore.cuda.driver.interface import CudaError, Driver
from ptcore.cuda.emulated import blas as _host_blas
from ptcore.cuda.emulated import fft as _host_fft
from ptcore.cuda.emulated import kernels as _host_kernels
from ptcore.cuda.emulated import solver as _host_solver

__all__ = ["EmulatedDriver"]

# cuLaunchKernel's C signature (function, grid x/y/z, block x/y/z, shared
# memory, stream, void** params, void** extra) -> CUresult
_C_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7),
                             ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)

_DEFAULT_MEMORY = 16 << 30
_CAPTURE_MODES = ("global", "thread_local", "relaxed")
_MAX_PENDING = 4096          # a queue longer than this runs its work at once


def _capacity():
    v = os.environ.get("PTCORE_CUDA_EMULATE_MEMORY", "").strip()
    if not v:
        return _DEFAULT_MEMORY
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"PTCORE_CUDA_EMULATE_MEMORY must be a byte count, got {v!r}") from None
    if n <= 0:
        raise ValueError(f"PTCORE_CUDA_EMULATE_MEMORY must be positive, got {n}")
    return n


class _Stream:
    __slots__ = ("handle", "device", "pending", "executed", "enqueued", "destroyed",
                 "capture", "capture_seq", "joined")

    def __init__(self, handle, device):
        self.handle = handle
        self.device = device
        self.pending = collections.deque()   # (position, callable)
        self.executed = 0          # work items completed so far
        self.enqueued = 0          # work items ever queued
        self.destroyed = False
        self.capture = None        # the _Capture recording this stream's work
        self.capture_seq = 0       # work items captured from this stream
        self.joined = True         # (a forked stream) joined back into the origin


class _Capture:
    """One stream capture sequence (``cuStreamBeginCapture`` .. ``EndCapture``)."""
    __slots__ = ("id", "origin", "mode", "thread", "nodes", "streams", "invalid")

    def __init__(self, cid, origin, mode, thread):
        self.id = cid
        self.origin = origin       # the _Stream it began on (and must end on)
        self.mode = mode           # "global", "thread_local" or "relaxed"
        self.thread = thread       # ident of the thread that began it
        self.nodes = []            # (label, callable) in capture order
        self.streams = [origin]    # every stream recording into it
        self.invalid = None        # the call that invalidated it


class _Event:
    __slots__ = ("handle", "device", "timing", "stream", "position", "time", "destroyed",
                 "capture", "capture_seq")

    def __init__(self, handle, device, timing):
        self.handle = handle
        self.device = device
        self.timing = timing
        self.stream = None         # _Stream it was last recorded on
        self.position = 0          # queue position it waits for
        self.time = None           # host clock when its position executed
        self.destroyed = False
        self.capture = None        # the _Capture it was recorded into, if any
        self.capture_seq = 0       # its stream's capture_seq when recorded


class EmulatedDriver(Driver):
    """The emulated device driver; see the module docstring."""

    is_emulated = True
    name = "emulated"

    def __init__(self, ndevices=1):
        if ndevices < 1:
            raise ValueError(f"EmulatedDriver needs at least one device, got {ndevices}")
        self._n = int(ndevices)
        self._capacity = _capacity()
        self._lock = threading.RLock()
        self._allocs = {}          # ptr -> (device, nbytes, mmap, ctypes buffer)
        self._used = [0] * self._n
        self._pinned = {}          # ptr -> (mmap, buffer, nbytes)
        self._next = 1
        # the legacy default stream (handle 0) of each device is one queue
        # per device; handle 0 means "the current device's" default stream
        self._current = threading.local()
        self._streams = {}
        self._default = [self._new_stream(d, handle=None) for d in range(self._n)]
        self._events = {}
        self._modules = {}
        self._launch_error = threading.local()
        self._captures = []        # the active _Capture sequences
        self._graphs = {}          # graph handle -> tuple of (label, callable)
        self._execs = {}           # graph exec handle -> tuple of (label, callable)
        self._next_capture_id = 1
        self.launcher = self._c_launcher()

    # --- helpers -------------------------------------------------------------
    def _new_handle(self):
        with self._lock:
            h = self._next
            self._next += 1
            return h << 4          # never 0, looks like a pointer-sized handle

    def _new_stream(self, device, handle):
        s = _Stream(handle if handle is not None else self._new_handle(), device)
        self._streams[s.handle] = s
        return s

    def _check_device(self, device):
        if not isinstance(device, int) or not 0 <= device < self._n:
            raise CudaError("cuDeviceGet", "CUDA_ERROR_INVALID_DEVICE",
                            f"invalid device ordinal {device!r} (the emulated machine has {self._n})")

    def _cur(self):
        return getattr(self._current, "device", 0)

    def _stream(self, handle):
        if handle in (0, None, 1, 2):      # legacy / per-thread default stream
            return self._default[self._cur()]
        s = self._streams.get(handle)
        if s is None or s.destroyed:
            raise CudaError("cuStream", "CUDA_ERROR_INVALID_HANDLE", f"invalid stream handle {handle!r}")
        return s

    def _event(self, handle):
        e = self._events.get(handle)
        if e is None or e.destroyed:
            raise CudaError("cuEvent", "CUDA_ERROR_INVALID_HANDLE", f"invalid event handle {handle!r}")
        return e

    def _enqueue(self, stream, fn, label="work"):
        with self._lock:
            s = self._stream(stream)
            c = s.capture
            if c is not None:
                if c.invalid is not None:
                    call = label if isinstance(label, str) else "cuLaunchKernel"
                    raise CudaError(call, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                    f"{call}: the stream capture was invalidated by {c.invalid}")
                c.nodes.append((label, fn))
                s.capture_seq += 1
                s.joined = s is c.origin
                return
            s.enqueued += 1
            s.pending.append((s.enqueued, fn))
            if len(s.pending) > _MAX_PENDING:
                self._run(s, s.enqueued)

    def _run(self, s, upto):
        """Run ``s``'s queued work up to position ``upto`` (inclusive)."""
        with self._lock:
            while s.pending and s.pending[0][0] <= upto:
                pos, fn = s.pending.popleft()
                fn()
                s.executed = pos

    def _run_all(self, device=None):
        with self._lock:
            for s in list(self._streams.values()):
                if device is None or s.device == device:
                    self._run(s, s.enqueued)

    # --- stream capture: what CUDA forbids while a stream is capturing ----------
    def _invalidate(self, c, call):
        if c.invalid is None:
            c.invalid = call

    def _check_not_capturing(self, s, call):
        """Host synchronisation with (or a pageable copy on) a capturing stream."""
        c = s.capture
        if c is not None:
            self._invalidate(c, call)
            raise CudaError(call, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                            f"{call}: operation not permitted when stream is capturing")

    def _check_unsafe(self, call):
        """A "potentially unsafe" call (cuMemAlloc, cuMemFree, cuCtxSynchronize ...)
        under cuThreadExchangeStreamCaptureMode's rules: prohibited for a thread
        in global mode while any global-mode capture runs or this thread has a
        non-relaxed capture; in thread_local mode only for the latter; never in
        relaxed mode."""
        if not self._captures:
            return
        mode = getattr(self._current, "capture_mode", "global")
        if mode == "relaxed":
            return
        me = threading.get_ident()
        for c in self._captures:
            own = c.thread == me and c.mode != "relaxed"
            if own or (mode == "global" and c.mode == "global"):
                self._invalidate(c, call)
                raise CudaError(call, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                                f"{call}: operation not permitted while a stream is capturing "
                                f"({c.mode} capture mode; the thread's mode is {mode})")

    def _find(self, ptr, nbytes, what):
        """The live allocation holding [ptr, ptr + nbytes), or raise."""
        for base, (dev, size, _m, _b) in self._allocs.items():
            if base <= ptr and ptr + nbytes <= base + size:
                return dev
        raise CudaError(what, "CUDA_ERROR_INVALID_VALUE",
                        f"{what}: [{ptr:#x}, +{nbytes}) is not inside one live allocation of the emulated device")

    # --- devices -------------------------------------------------------------
    def device_count(self):
        return self._n

    def can_access_peer(self, device, peer):
        # every emulated device's memory is host memory, reachable from the others
        self._check_device(device)
        self._check_device(peer)
        return device != peer

    def device_properties(self, device):
        self._check_device(device)
        return {
            "name": "ptcore emulated CUDA device (host)",
            "major": 9, "minor": 0,
            "total_memory": self._capacity,
            "multi_processor_count": 4,
            "max_threads_per_block": 1024,
            "max_shared_memory_per_block": 48 * 1024,
            "warp_size": 32,
            "L2_cache_size": 50 * 1024 * 1024,
            "uuid": f"00000000-0000-0000-0000-{device:012d}",
            "pci_bus_id": device,
        }

    def set_current(self, device):
        # as the real driver: an ordinal already current on this thread was checked
        if type(device) is int and getattr(self._current, "device", None) == device:
            return
        self._check_device(device)
        self._current.device = device

    def device_synchronize(self, device):
        self._check_device(device)
        with self._lock:
            self._check_unsafe("cuCtxSynchronize")
            self._run_all(device)

    # --- memory --------------------------------------------------------------
    def mem_alloc(self, device, nbytes):
        self._check_device(device)
        if nbytes <= 0:
            raise CudaError("cuMemAlloc", "CUDA_ERROR_INVALID_VALUE", f"cuMemAlloc of {nbytes} bytes")
        with self._lock:
            self._check_unsafe("cuMemAlloc")
            if self._used[device] + nbytes > self._capacity:
                raise BackendOutOfMemory(
                    f"emulated device {device}: cannot allocate {nbytes} bytes "
                    f"({self._capacity - self._used[device]} free of {self._capacity})")
            # staggered 256-byte-aligned starts (cuMemAlloc's guarantee): page-aligned operands
            # would alias in the host's store-to-load forwarding (4K aliasing, ~5x slower kernels)
            self._stagger = (getattr(self, "_stagger", 0) + 1) % 16
            skew = self._stagger * 256
            m = mmap.mmap(-1, nbytes + skew)
            buf = (ctypes.c_char * nbytes).from_buffer(m, skew)
            ptr = ctypes.addressof(buf)
            self._allocs[ptr] = (device, nbytes, m, buf)
            self._used[device] += nbytes
            return ptr

    def mem_free(self, device, ptr):
        with self._lock:
            self._check_unsafe("cuMemFree")
            # cuMemFree synchronizes: pending work may still use the block
            self._run_all()
            rec = self._allocs.pop(ptr, None)
            if rec is None:
                raise CudaError("cuMemFree", "CUDA_ERROR_INVALID_VALUE", f"cuMemFree of unknown pointer {ptr:#x}")
            dev, nbytes, m, buf = rec
            del buf, rec            # the tuple holds the exported buffer too
            m.close()
            self._used[dev] -= nbytes

    def mem_get_info(self, device):
        self._check_device(device)
        return (self._capacity - self._used[device], self._capacity)

    def host_alloc_pinned(self, nbytes):
        if nbytes <= 0:
            raise CudaError("cuMemHostAlloc", "CUDA_ERROR_INVALID_VALUE", f"cuMemHostAlloc of {nbytes} bytes")
        with self._lock:
            self._check_unsafe("cuMemHostAlloc")
        m = mmap.mmap(-1, nbytes)
        buf = (ctypes.c_char * nbytes).from_buffer(m)
        ptr = ctypes.addressof(buf)
        with self._lock:
            self._pinned[ptr] = (m, buf, nbytes)
        return ptr

    def host_free_pinned(self, ptr):
        with self._lock:
            self._check_unsafe("cuMemFreeHost")
            self._run_all()
            rec = self._pinned.pop(ptr, None)
            if rec is None:
                raise CudaError("cuMemFreeHost", "CUDA_ERROR_INVALID_VALUE", f"cuMemFreeHost of unknown pointer {ptr:#x}")
            m, buf, _n = rec
            del buf, rec
            m.close()

    def _is_pinned(self, ptr, nbytes):
        for base, (_m, _b, size) in self._pinned.items():
            if base <= ptr and ptr + nbytes <= base + size:
                return True
        return False

    def is_pinned(self, ptr):
        """Whether host address ``ptr`` lies in pinned memory from this driver."""
        with self._lock:
            return self._is_pinned(ptr, 1)

    def memcpy_htod(self, dst, src_host, nbytes, stream):
        if nbytes == 0:
            return
        self._find(dst, nbytes, "cuMemcpyHtoDAsync")
        if self._is_pinned(src_host, nbytes):
            self._enqueue(stream, lambda: ctypes.memmove(dst, src_host, nbytes), "memcpy HtoD")
        else:
            # pageable memory: the driver stages it before returning (not capturable)
            with self._lock:
                self._check_not_capturing(self._stream(stream), "cuMemcpyHtoDAsync (pageable)")
            data = ctypes.string_at(src_host, nbytes)
            self._enqueue(stream, lambda: ctypes.memmove(dst, data, nbytes), "memcpy HtoD")

    def memcpy_dtoh(self, dst_host, src, nbytes, stream):
        if nbytes == 0:
            return
        self._find(src, nbytes, "cuMemcpyDtoHAsync")
        pinned = self._is_pinned(dst_host, nbytes)
        if not pinned:
            with self._lock:
                self._check_not_capturing(self._stream(stream), "cuMemcpyDtoHAsync (pageable)")
        self._enqueue(stream, lambda: ctypes.memmove(dst_host, src, nbytes), "memcpy DtoH")
        if not pinned:
            # pageable memory: returns once the data is on the host
            s = self._stream(stream)
            self._run(s, s.enqueued)

    def memcpy_dtod(self, dst, src, nbytes, stream):
        if nbytes == 0:
            return
        self._find(dst, nbytes, "cuMemcpyDtoDAsync")
        self._find(src, nbytes, "cuMemcpyDtoDAsync")
        self._enqueue(stream, lambda: ctypes.memmove(dst, src, nbytes), "memcpy DtoD")

    def memset_d8(self, dst, value, nbytes, stream):
        if nbytes == 0:
            return
        self._find(dst, nbytes, "cuMemsetD8Async")
        self._enqueue(stream, lambda: ctypes.memset(dst, value & 0xFF, nbytes), "memset")

    # --- streams and events --------------------------------------------------
    def stream_create(self, device, priority=0):
        self._check_device(device)
        with self._lock:
            return self._new_stream(device, None).handle

    def stream_destroy(self, stream):
        with self._lock:
            s = self._stream(stream)
            if s in self._default:
                raise CudaError("cuStreamDestroy", "CUDA_ERROR_INVALID_HANDLE", "cannot destroy a default stream")
            self._run(s, s.enqueued)     # pending work still completes
            s.destroyed = True
            del self._streams[s.handle]

    def stream_synchronize(self, stream):
        with self._lock:
            s = self._stream(stream)
            self._check_not_capturing(s, "cuStreamSynchronize")
            self._run(s, s.enqueued)

    def stream_query(self, stream):
        # the emulated device makes progress when the host looks at it
        with self._lock:
            self._check_not_capturing(self._stream(stream), "cuStreamQuery")
        self.stream_synchronize(stream)
        return True

    def stream_wait_event(self, stream, event):
        with self._lock:
            e = self._event(event)
            s = self._stream(stream)
            if e.capture is not None:
                self._wait_captured_event(s, e)
                return
            src, pos = e.stream, e.position
            if src is None or s.capture is not None:
                # (work recorded before a capture began is not part of the graph)
                return
            self._enqueue(stream, lambda: self._run(src, pos), "wait event")

    def _wait_captured_event(self, s, e):
        """``cuStreamWaitEvent`` on an event recorded into a capture: ``s`` joins
        that capture (a fork), or, already in it, depends on the event's stream
        (a join when nothing was captured on that stream since)."""
        c = e.capture
        if c not in self._captures:
            raise CudaError("cuStreamWaitEvent", "CUDA_ERROR_CAPTURED_EVENT",
                            "cuStreamWaitEvent: the event was recorded in a stream capture that has ended")
        if s.capture is None:
            if s in self._default:
                self._invalidate(c, "cuStreamWaitEvent (legacy stream)")
                raise CudaError("cuStreamWaitEvent", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
                                "cuStreamWaitEvent: the legacy default stream cannot join a capture")
            s.capture = c
            s.capture_seq = 0
            s.joined = True
            c.streams.append(s)
        elif s.capture is not c:
            raise CudaError("cuStreamWaitEvent", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
                            "cuStreamWaitEvent: the event belongs to another stream capture")
        src = e.stream
        if src is not s and src.capture is c and src.capture_seq == e.capture_seq:
            src.joined = True
        # captured work is recorded in one order (the order it was queued), which
        # already puts the event's work before what ``s`` queues next

    def event_create(self, device, timing=False, blocking=False, interprocess=False):
        self._check_device(device)
        with self._lock:
            h = self._new_handle()
            self._events[h] = _Event(h, device, timing)
            return h

    def event_destroy(self, event):
        with self._lock:
            e = self._event(event)
            e.destroyed = True
            del self._events[event]

    def event_record(self, event, stream):
        with self._lock:
            e = self._event(event)
            s = self._stream(stream)
            e.stream = s
            e.time = None
            c = s.capture
            if c is not None:
                if c.invalid is not None:
                    raise CudaError("cuEventRecord", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                    f"cuEventRecord: the stream capture was invalidated by {c.invalid}")
                e.capture = c
                e.capture_seq = s.capture_seq
                return
            e.capture = None

            def mark():
                e.time = time.perf_counter()
            self._enqueue(stream, mark)
            e.position = s.enqueued

    def event_query(self, event):
        self.event_synchronize(event)
        return True

    def event_synchronize(self, event):
        with self._lock:
            e = self._event(event)
            if e.capture is not None:
                if e.capture in self._captures:
                    self._invalidate(e.capture, "cuEventSynchronize")
                    raise CudaError("cuEventSynchronize", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                                    "cuEventSynchronize: the event is part of an active stream capture")
                raise CudaError("cuEventSynchronize", "CUDA_ERROR_CAPTURED_EVENT",
                                "cuEventSynchronize: the event was recorded in a stream capture")
            if e.stream is not None:
                self._run(e.stream, e.position)

    def event_elapsed_ms(self, start, end):
        with self._lock:
            a, b = self._event(start), self._event(end)
            if not (a.timing and b.timing):
                raise CudaError("cuEventElapsedTime", "CUDA_ERROR_INVALID_HANDLE",
                                "elapsed_time needs two events created with enable_timing=True")
            if a.stream is None or b.stream is None:
                raise CudaError("cuEventElapsedTime", "CUDA_ERROR_INVALID_HANDLE",
                                "elapsed_time of an event that was never recorded")
            if a.time is None or b.time is None:
                raise CudaError("cuEventElapsedTime", "CUDA_ERROR_NOT_READY",
                                "elapsed_time of an event that has not completed (synchronize it first)")
            return (b.time - a.time) * 1000.0

    # --- stream capture and graphs ---------------------------------------------
    def stream_begin_capture(self, stream, mode="global"):
        if mode not in _CAPTURE_MODES:
            raise ValueError(f"capture mode must be one of {_CAPTURE_MODES}, got {mode!r}")
        with self._lock:
            s = self._stream(stream)
            if s in self._default:
                raise CudaError("cuStreamBeginCapture", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                                "cuStreamBeginCapture: the legacy default stream cannot be captured")
            if s.capture is not None:
                raise CudaError("cuStreamBeginCapture", "CUDA_ERROR_ILLEGAL_STATE",
                                "cuStreamBeginCapture: the stream is already capturing")
            c = _Capture(self._next_capture_id, s, mode, threading.get_ident())
            self._next_capture_id += 1
            s.capture = c
            s.capture_seq = 0
            s.joined = True
            self._captures.append(c)

    def stream_end_capture(self, stream):
        with self._lock:
            s = self._stream(stream)
            c = s.capture
            if c is None:
                raise CudaError("cuStreamEndCapture", "CUDA_ERROR_ILLEGAL_STATE",
                                "cuStreamEndCapture: the stream is not capturing")
            if c.origin is not s:
                self._invalidate(c, "cuStreamEndCapture on a forked stream")
                raise CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
                                "cuStreamEndCapture: the capture began on another stream")
            if c.mode != "relaxed" and c.thread != threading.get_ident():
                raise CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
                                "cuStreamEndCapture: a non-relaxed capture must end on the thread "
                                "that began it")
            for t in c.streams:
                t.capture = None
            self._captures.remove(c)
            if c.invalid is not None:
                raise CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                                f"cuStreamEndCapture: the capture was invalidated by {c.invalid}")
            unjoined = [t for t in c.streams if t is not s and not t.joined]
            if unjoined:
                raise CudaError("cuStreamEndCapture", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
                                f"cuStreamEndCapture: {len(unjoined)} forked stream(s) did not join "
                                f"back into the capturing stream")
            h = self._new_handle()
            self._graphs[h] = tuple(c.nodes)
            return h

    def stream_capture_info(self, stream):
        with self._lock:
            c = self._stream(stream).capture
            if c is None:
                return 0, 0
            return (2 if c.invalid is not None else 1), c.id

    def exchange_capture_mode(self, mode):
        if mode not in _CAPTURE_MODES:
            raise ValueError(f"capture mode must be one of {_CAPTURE_MODES}, got {mode!r}")
        old = getattr(self._current, "capture_mode", "global")
        self._current.capture_mode = mode
        return old

    def _graph(self, table, handle, call):
        g = table.get(handle)
        if g is None:
            raise CudaError(call, "CUDA_ERROR_INVALID_VALUE", f"{call}: invalid handle {handle!r}")
        return g

    def graph_instantiate(self, graph):
        with self._lock:
            nodes = self._graph(self._graphs, graph, "cuGraphInstantiate")
            h = self._new_handle()
            self._execs[h] = nodes
            return h

    def graph_launch(self, graph_exec, stream):
        with self._lock:
            work = [fn for _label, fn in self._graph(self._execs, graph_exec, "cuGraphLaunch")]

        def run():
            for fn in work:
                fn()
        self._enqueue(stream, run, "graph")

    def graph_exec_destroy(self, graph_exec):
        with self._lock:
            self._graph(self._execs, graph_exec, "cuGraphExecDestroy")
            del self._execs[graph_exec]

    def graph_destroy(self, graph):
        with self._lock:
            self._graph(self._graphs, graph, "cuGraphDestroy")
            del self._graphs[graph]

    def graph_node_labels(self, graph):
        """What each node of ``graph`` does, in order (str; emulated only)."""
        with self._lock:
            nodes = self._graph(self._graphs, graph, "graph_node_labels")
        return [f"kernel {_host_kernels.kernel_info(lab[1]).name}" if isinstance(lab, tuple)
                else lab for lab, _fn in nodes]

    def graph_debug_dot_print(self, graph, path):
        labels = self.graph_node_labels(graph)
        lines = ["digraph ptcore_emulated_graph {"]
        for i, lab in enumerate(labels):
            text = lab.replace('"', "'")
            lines.append(f'  n{i} [label="{text}"];')
            if i:
                lines.append(f"  n{i - 1} -> n{i};")
        lines.append("}")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")

    # --- external profilers: no profiler sees the emulated device --------------
    def profiler_start(self):
        self._profiling = True

    def profiler_stop(self):
        self._profiling = False

    # --- kernels and cuBLAS: host implementations ----------------------------
    def module_load(self, device, source, kernel_names):
        self._check_device(device)
        handles = _host_kernels.load(source, kernel_names)
        if self.launcher is not None:
            for h in handles.values():
                self.launcher.register(h, _host_kernels.kernel_info(h).sizes)
        return handles

    def kernel_name(self, function):
        try:
            return _host_kernels.kernel_info(function).name
        except TypeError:
            raise CudaError("kernel_name", "CUDA_ERROR_INVALID_HANDLE",
                            f"unknown kernel handle {function!r} (not from module_load)") from None

    def launch(self, function, grid, block, args, shared_mem=0, stream=0):
        keep = tuple(args)         # the queued launch owns its arguments
        run = _host_kernels.launcher(function, grid, block, keep, shared_mem)
        self._enqueue(stream, run, ("kernel", function))

    def _c_launcher(self):
        """The C launcher over a ``cuLaunchKernel``-shaped C callback: it reads
        each parameter's bytes (the kernel's parameter sizes) from the
        ``void*[]`` the launcher built and queues :meth:`launch` -- so the C
        marshalling runs on the emulated device as on a GPU."""
        errors = self._launch_error

        def c_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
            try:
                sizes = _host_kernels.kernel_info(f).sizes
                args = [(ctypes.c_char * size).from_buffer_copy(ctypes.string_at(params[i], size))
                        for i, size in enumerate(sizes)]
                self.launch(f, (gx, gy, gz), (bx, by, bz), args, smem, stream or 0)
                return 0
            except BaseException as e:      # (a C callback cannot raise: kept for launch_failed)
                errors.error = e
                return 1                    # CUDA_ERROR_INVALID_VALUE
        cb = _C_LAUNCH(c_launch)
        return KernelLauncher(ctypes.cast(cb, ctypes.c_void_p).value, owner=cb)

    def launch_failed(self, code, function):
        e = getattr(self._launch_error, "error", None)
        self._launch_error.error = None
        if e is not None:
            raise e
        super().launch_failed(code, function)

    def gemm(self, device, stream, transa, transb, m, n, k, alpha, a, a_type, lda,
             b, b_type, ldb, beta, c, c_type, ldc, compute_type, batch=1,
             stride_a=0, stride_b=0, stride_c=0):
        self._check_device(device)
        _host_blas.check(transa, transb, m, n, k, a_type, lda, b_type, ldb, c_type, ldc, compute_type, batch)
        self._enqueue(stream, lambda: _host_blas.gemm(
            transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
            compute_type, batch, stride_a, stride_b, stride_c), "cublasGemmStridedBatchedEx")

    def fft(self, device, stream, kind, shape, batch, idata, odata, direction=-1, stride=1):
        self._check_device(device)
        shape = _host_fft.check(kind, shape, batch, direction, stride)
        nin, nout = _host_fft.sizes(kind, shape)
        tin, tout = _host_fft.KINDS[kind]
        span = int(batch) if stride == 1 else int(stride)       # (interleaved: n * stride elements)
        ibytes = nin * span * _np_itemsize(tin)
        obytes = nout * span * _np_itemsize(tout)
        self._find(idata, ibytes, f"cufftExec{kind}")
        self._find(odata, obytes, f"cufftExec{kind}")
        if idata != odata and kind not in ("C2C", "Z2Z") and not (
                idata + ibytes <= odata or odata + obytes <= idata):
            raise CudaError(f"cufftExec{kind}", "CUFFT_INVALID_VALUE",
                            f"cufftExec{kind}: overlapping input and output")
        self._enqueue(stream, lambda: _host_fft.execute(kind, shape, batch, idata, odata, direction,
                                                        stride), f"cufftExec{kind}")

    def solver(self, device, stream, routine, dtype, batch=1, strides=None, **args):
        self._check_device(device)
        sizes = _host_solver.check(routine, dtype, args, batch, strides)
        strides = dict(strides or {})
        for name, nbytes in sizes.items():
            if nbytes and batch:
                last = args[name] + (int(batch) - 1) * int(strides.get(name, 0))
                self._find(args[name], nbytes, f"cusolverDn{dtype}{routine}")
                self._find(last, nbytes, f"cusolverDn{dtype}{routine}")
        self._enqueue(stream, lambda: _host_solver.execute(routine, dtype, args, batch, strides),
                      f"cusolverDn{dtype}{routine}")


def _np_itemsize(t):
    import numpy as np
    return np.dtype(t).itemsize
