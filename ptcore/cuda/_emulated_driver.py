"""An emulated CUDA device on the host (``PTCORE_CUDA_EMULATE=N``).

It implements :class:`ptcore.cuda._driver.Driver` so that every layer above
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
  (:mod:`ptcore.cuda._host_kernels`), cuBLAS calls run on the CPU
  (:mod:`ptcore.cuda._host_blas`), cuFFT calls on ``scipy.fft``
  (:mod:`ptcore.cuda._host_fft`) and cuSOLVER calls on scipy's LAPACK
  (:mod:`ptcore.cuda._host_solver`), in stream order.
"""
import collections
import ctypes
import mmap
import os
import threading
import time

from ptcore.cuda._allocator import BackendOutOfMemory
from ptcore.cuda._driver import CudaError, Driver

__all__ = ["EmulatedDriver"]

# cuLaunchKernel's C signature (function, grid x/y/z, block x/y/z, shared
# memory, stream, void** params, void** extra) -> CUresult
_C_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7),
                             ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)

_DEFAULT_MEMORY = 16 << 30
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
    __slots__ = ("handle", "device", "pending", "executed", "enqueued", "destroyed")

    def __init__(self, handle, device):
        self.handle = handle
        self.device = device
        self.pending = collections.deque()   # (position, callable)
        self.executed = 0          # work items completed so far
        self.enqueued = 0          # work items ever queued
        self.destroyed = False


class _Event:
    __slots__ = ("handle", "device", "timing", "stream", "position", "time", "destroyed")

    def __init__(self, handle, device, timing):
        self.handle = handle
        self.device = device
        self.timing = timing
        self.stream = None         # _Stream it was last recorded on
        self.position = 0          # queue position it waits for
        self.time = None           # host clock when its position executed
        self.destroyed = False


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

    def _enqueue(self, stream, fn):
        with self._lock:
            s = self._stream(stream)
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
        self._run_all(device)

    # --- memory --------------------------------------------------------------
    def mem_alloc(self, device, nbytes):
        self._check_device(device)
        if nbytes <= 0:
            raise CudaError("cuMemAlloc", "CUDA_ERROR_INVALID_VALUE", f"cuMemAlloc of {nbytes} bytes")
        with self._lock:
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
        m = mmap.mmap(-1, nbytes)
        buf = (ctypes.c_char * nbytes).from_buffer(m)
        ptr = ctypes.addressof(buf)
        with self._lock:
            self._pinned[ptr] = (m, buf, nbytes)
        return ptr

    def host_free_pinned(self, ptr):
        with self._lock:
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
            self._enqueue(stream, lambda: ctypes.memmove(dst, src_host, nbytes))
        else:
            # pageable memory: the driver stages it before returning
            data = ctypes.string_at(src_host, nbytes)
            self._enqueue(stream, lambda: ctypes.memmove(dst, data, nbytes))

    def memcpy_dtoh(self, dst_host, src, nbytes, stream):
        if nbytes == 0:
            return
        self._find(src, nbytes, "cuMemcpyDtoHAsync")
        self._enqueue(stream, lambda: ctypes.memmove(dst_host, src, nbytes))
        if not self._is_pinned(dst_host, nbytes):
            # pageable memory: returns once the data is on the host
            s = self._stream(stream)
            self._run(s, s.enqueued)

    def memcpy_dtod(self, dst, src, nbytes, stream):
        if nbytes == 0:
            return
        self._find(dst, nbytes, "cuMemcpyDtoDAsync")
        self._find(src, nbytes, "cuMemcpyDtoDAsync")
        self._enqueue(stream, lambda: ctypes.memmove(dst, src, nbytes))

    def memset_d8(self, dst, value, nbytes, stream):
        if nbytes == 0:
            return
        self._find(dst, nbytes, "cuMemsetD8Async")
        self._enqueue(stream, lambda: ctypes.memset(dst, value & 0xFF, nbytes))

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
            self._run(s, s.enqueued)

    def stream_query(self, stream):
        # the emulated device makes progress when the host looks at it
        self.stream_synchronize(stream)
        return True

    def stream_wait_event(self, stream, event):
        with self._lock:
            e = self._event(event)
            src, pos = e.stream, e.position
            if src is None:
                return
            self._enqueue(stream, lambda: self._run(src, pos))

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

    # --- kernels and cuBLAS: host implementations ----------------------------
    def module_load(self, device, source, kernel_names):
        self._check_device(device)
        from ptcore.cuda import _host_kernels
        handles = _host_kernels.load(source, kernel_names)
        if self.launcher is not None:
            for h in handles.values():
                self.launcher.register(h, _host_kernels.kernel_info(h).sizes)
        return handles

    def kernel_name(self, function):
        from ptcore.cuda import _host_kernels
        try:
            return _host_kernels.kernel_info(function).name
        except TypeError:
            raise CudaError("kernel_name", "CUDA_ERROR_INVALID_HANDLE",
                            f"unknown kernel handle {function!r} (not from module_load)") from None

    def launch(self, function, grid, block, args, shared_mem=0, stream=0):
        from ptcore.cuda import _host_kernels
        keep = tuple(args)         # the queued launch owns its arguments
        run = _host_kernels.launcher(function, grid, block, keep, shared_mem)
        self._enqueue(stream, run)

    def _c_launcher(self):
        """The C launcher over a ``cuLaunchKernel``-shaped C callback: it reads
        each parameter's bytes (the kernel's parameter sizes) from the
        ``void*[]`` the launcher built and queues :meth:`launch` -- so the C
        marshalling runs on the emulated device as on a GPU."""
        from ptcore.cuda._fast_launch import KernelLauncher
        from ptcore.cuda import _host_kernels
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
        from ptcore.cuda import _host_blas
        _host_blas.check(transa, transb, m, n, k, a_type, lda, b_type, ldb, c_type, ldc, compute_type, batch)
        self._enqueue(stream, lambda: _host_blas.gemm(
            transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
            compute_type, batch, stride_a, stride_b, stride_c))

    def fft(self, device, stream, kind, shape, batch, idata, odata, direction=-1, stride=1):
        self._check_device(device)
        from ptcore.cuda import _host_fft
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
                                                        stride))

    def solver(self, device, stream, routine, dtype, batch=1, strides=None, **args):
        self._check_device(device)
        from ptcore.cuda import _host_solver
        sizes = _host_solver.check(routine, dtype, args, batch, strides)
        strides = dict(strides or {})
        for name, nbytes in sizes.items():
            if nbytes and batch:
                last = args[name] + (int(batch) - 1) * int(strides.get(name, 0))
                self._find(args[name], nbytes, f"cusolverDn{dtype}{routine}")
                self._find(last, nbytes, f"cusolverDn{dtype}{routine}")
        self._enqueue(stream, lambda: _host_solver.execute(routine, dtype, args, batch, strides))


def _np_itemsize(t):
    import numpy as np
    return np.dtype(t).itemsize
