"""The real CUDA device: :class:`ptcore.cuda.driver.interface.Driver` over the CUDA
driver API (``cuda.bindings.driver``, Python-level calls) and cuBLAS
(``libcublas`` found by ``cuda.pathfinder`` and called through ``ctypes``).

Design (see ``GPU_NOTES.md``):

* ``cuInit`` once; one *primary* context per device, retained on first use
  (shared with PyTorch and CuPy in the same process, so device pointers
  interoperate) and made current per thread before every call that needs
  it;
* streams are created ``CU_STREAM_NON_BLOCKING``; the handle ``0`` is the
  legacy default stream of the current device;
* kernels: CUDA C++ sources are compiled by
  :func:`ptcore.cuda.driver.compiler.compile` to a **cubin** for the device's exact
  ``sm_XY`` (never PTX: NVRTC 13.x writes PTX newer than a 13.0 driver
  reads), loaded with ``cuModuleLoadData`` and memoised per (device,
  source);  ``launch`` builds ``kernelParams`` (a ``void*[]``) from the
  addresses of the ctypes argument values;
* cuBLAS: one handle per (device, thread), ``cublasSetStream_v2`` before
  every call, ``cublasGemmStridedBatchedEx`` for every GEMM (the ``_v2`` /
  ``Ex`` symbols only: a plain ``cublasSgemm`` is the legacy API);
* cuFFT (:mod:`ptcore.cuda.driver.cufft`): ``cufftPlanMany`` plans cached per
  (device, kind, shape, batch), ``cufftSetStream`` before every
  ``cufftExec*``.
* cuSOLVER (:mod:`ptcore.cuda.driver.cusolver`): the dense legacy API through
  ctypes, a handle per (device, thread), ``cusolverDnSetStream`` before
  every call, workspaces from the caching allocator; cuBLAS ``trsm``.

Every failure raises :class:`~ptcore.cuda.driver.interface.CudaError` naming the call
and the driver's error name; ``CUDA_ERROR_OUT_OF_MEMORY`` from an
allocation raises :class:`~ptcore.cuda.allocator.device_allocators.BackendOutOfMemory`.
"""
import atexit
import ctypes
import hashlib
import threading

from ptcore.cuda.allocator.device_allocators import BackendOutOfMemory, _get_allocator
from ptcore.cuda.driver import compiler as _compiler
from ptcore.cuda.driver.cufft import Cufft
from ptcore.cuda.driver.cusolver import Cusolver
from ptcore.cuda.driver.fast_launch import KernelLauncher
from ptcore.cuda.driver.interface import CudaError, Driver
from ptcore.cuda.emulated import fft as _host_fft
from ptcore.cuda.emulated import solver as _host_solver

__all__ = ["RealDriver"]


def _device_allocator(device):
    """The caching allocator of ``device`` (the runtime created it when it
    initialised this driver), for cuBLAS's and cuSOLVER's workspaces."""
    return _get_allocator(device, create=True)

# driver enum values (cuda.h, CUDA 13)
_CU_STREAM_NON_BLOCKING = 0x1
_CU_EVENT_BLOCKING_SYNC = 0x1
_CU_EVENT_DISABLE_TIMING = 0x2
_CU_EVENT_INTERPROCESS = 0x4
_CU_MEMHOSTALLOC_PORTABLE = 0x1
_CUDA_SUCCESS = 0
_CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1
_CUDA_ERROR_OUT_OF_MEMORY = 2
_CUDA_ERROR_NOT_READY = 600

# cuBLAS enum values (cublas_api.h, library_types.h)
_CUDA_R_32F, _CUDA_R_64F, _CUDA_R_16F, _CUDA_R_16BF = 0, 1, 2, 14
_COMPUTE_32F, _COMPUTE_32F_FAST_16BF, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 75, 77, 70
_GEMM_DEFAULT = -1
# ptcore.cuda.driver.fast_blas's scalar kinds (+2: the complex pair of that type)
_SCALAR_FLOAT, _SCALAR_DOUBLE = 0, 1


class _ParamArrays(dict):
    """``void*[n]`` array types by ``n`` (at least one element)."""

    def __missing__(self, n):
        t = self[n] = ctypes.c_void_p * max(1, n)
        return t


_PARAM_ARRAYS = _ParamArrays()


def _code_name(err):
    try:
        return err.name
    except AttributeError:
        return f"CUresult {int(err)}"


# the driver's descriptions of the stream-capture errors (cuGetErrorString), used
# when the driver cannot be asked: these name what went wrong during a capture
_CAPTURE_ERRORS = {
    900: "operation not permitted when stream is capturing",
    901: "operation failed due to a previous error during capture",
    902: "operation would result in a merge of separate capture sequences",
    903: "capture was not ended in the same stream as it began",
    904: "capturing stream has unjoined work",
    905: "operation would make the legacy stream depend on a capturing blocking stream",
    906: "operation not permitted on an event last recorded in a capturing stream",
    907: "attempt to terminate a thread-local capture sequence from another thread",
}


def _describe(err):
    """The driver's one-line description of a CUresult ('' when unknown)."""
    try:
        from cuda.bindings import driver
        e, s = driver.cuGetErrorString(err)
        if int(e) == _CUDA_SUCCESS and s:
            return s.decode() if isinstance(s, bytes) else str(s)
    except Exception:       # noqa: BLE001 - no driver library, or a fake error value
        pass
    try:
        return _CAPTURE_ERRORS.get(int(err), "")
    except Exception:       # noqa: BLE001
        return ""


def _error_message(call, err):
    msg = f"{call} failed: {_code_name(err)} ({int(err)})"
    what = _describe(err)
    return f"{msg}: {what}" if what else msg


def _check(call, result):
    """Unpack a cuda.bindings result tuple ``(err, *values)``."""
    err = result[0]
    if int(err) != _CUDA_SUCCESS:
        raise CudaError(call, _code_name(err), _error_message(call, err))
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


class _Cublas:
    """cuBLAS through ctypes on the library cuda.pathfinder finds."""

    def __init__(self):
        try:
            from cuda.pathfinder import load_nvidia_dynamic_lib
        except ImportError as e:
            raise RuntimeError("cuBLAS needs cuda-pathfinder (pip install ptcore[cuda])") from e
        loaded = load_nvidia_dynamic_lib("cublas")
        lib = ctypes.CDLL(loaded.abs_path)
        self.path = loaded.abs_path
        vp, i, ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
        self.create = lib.cublasCreate_v2
        self.create.argtypes = [ctypes.POINTER(vp)]
        self.create.restype = i
        self.destroy = lib.cublasDestroy_v2
        self.destroy.argtypes = [vp]
        self.destroy.restype = i
        self.set_stream = lib.cublasSetStream_v2
        self.set_stream.argtypes = [vp, vp]
        self.set_stream.restype = i
        self.set_workspace = lib.cublasSetWorkspace_v2
        self.set_workspace.argtypes = [vp, vp, ctypes.c_size_t]
        self.set_workspace.restype = i
        self.gemm_sbex = lib.cublasGemmStridedBatchedEx
        self.gemm_sbex.argtypes = [vp, i, i, i, i, i, vp, vp, i, i, ll, vp, i, i, ll,
                                   vp, vp, i, i, ll, i, i, i]
        self.gemm_sbex.restype = i
        self.status_string = lib.cublasGetStatusString
        self.status_string.argtypes = [i]
        self.status_string.restype = ctypes.c_char_p
        # the same function called from C (ptcore.cuda.driver.fast_blas), where that module loads
        try:
            # lazy: an optional C fast path; without it the ctypes call serves
            from ptcore.cuda.driver.fast_blas import GemmEx
            self.gemm_c = GemmEx(ctypes.cast(self.gemm_sbex, ctypes.c_void_p).value, lib)
        except Exception:
            self.gemm_c = None

    def check(self, call, status):
        if status != 0:
            try:
                name = self.status_string(status).decode()
            except Exception:
                name = f"cublasStatus {status}"
            raise CudaError(call, name, f"{call} failed: {name} ({status})")


class RealDriver(Driver):
    """The CUDA driver API through cuda.bindings (see the module docstring).

    Raises RuntimeError at construction when cuda-bindings is missing, the
    driver library cannot be loaded, ``cuInit`` fails or no device exists.
    """

    is_emulated = False
    name = "cuda"

    def __init__(self):
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise RuntimeError("the 'cuda' extra is not installed (pip install ptcore[cuda] "
                               "for cuda-bindings)") from e
        self._d = driver
        try:
            err, = driver.cuInit(0)
        except Exception as e:      # DynamicLibNotFoundError: no libcuda.so.1
            raise RuntimeError(f"CUDA driver unusable: {type(e).__name__}: {e}") from e
        if int(err) != _CUDA_SUCCESS:
            raise RuntimeError(f"cuInit failed: {_code_name(err)} (no NVIDIA driver or no device)")
        n = _check("cuDeviceGetCount", driver.cuDeviceGetCount())
        if not n:
            raise RuntimeError("no CUDA device found")
        self._n = int(n)
        self._lock = threading.RLock()
        self._devices = [None] * self._n     # CUdevice per ordinal
        self._contexts = [None] * self._n    # retained primary CUcontext per ordinal
        self._props = [None] * self._n
        self._tls = threading.local()        # .device: ordinal current on this thread
        self._stream_dev = {}                # stream handle -> ordinal
        self._event_dev = {}                 # event handle -> ordinal
        self._pinned = {}                    # host ptr -> nbytes
        self._modules = {}                   # (ordinal, sha256 of source) -> (CUmodule, {name: CUfunction})
        self._functions = {}                 # function handle (int) -> CUfunction
        self._graph_objs = {}                # graph / graph exec handle (int) -> CUgraph(Exec)
        self._function_names = {}            # function handle (int) -> kernel name
        self._cublas = None
        self._cublas_tls = threading.local()
        self._cufft = None
        self._fft_checked = set()      # (kind, shape, batch, direction) already validated
        self._closing = False
        self.launcher = self._c_launcher()
        atexit.register(self._at_exit)

    def _c_launcher(self):
        """The C launcher over the driver's ``cuLaunchKernel`` (legacy default
        stream semantics for handle 0), resolved with ``cuGetProcAddress_v2``
        at the driver's version; None (``launch`` is used) if it cannot be."""
        try:
            lib = ctypes.CDLL("libcuda.so.1")           # the library cuInit loaded
            version = ctypes.c_int(0)
            if lib.cuDriverGetVersion(ctypes.byref(version)) != _CUDA_SUCCESS:
                return None
            get = lib.cuGetProcAddress_v2
            get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                            ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
            pfn, status = ctypes.c_void_p(), ctypes.c_int(-1)
            rc = get(b"cuLaunchKernel", ctypes.byref(pfn), version.value,
                     _CU_GET_PROC_ADDRESS_LEGACY_STREAM, ctypes.byref(status))
            if rc != _CUDA_SUCCESS or status.value != 0 or not pfn.value:
                return None
            return KernelLauncher(pfn.value, owner=lib)
        except (OSError, AttributeError, ValueError):
            return None

    def _param_sizes(self, f):
        """The byte sizes of kernel ``f``'s parameters (``cuFuncGetParamInfo``,
        CUDA 12.4+), or None where the driver cannot tell."""
        get = getattr(self._d, "cuFuncGetParamInfo", None)
        if get is None:
            return None
        sizes = []
        try:
            while True:
                r = get(f, len(sizes))          # (CUresult, offset, size)
                if int(r[0]) != _CUDA_SUCCESS:  # past the last parameter
                    break
                sizes.append(int(r[2]))
        except (TypeError, IndexError, ValueError):
            return None
        return sizes if sizes else None

    def launch_failed(self, code, function):
        err = self._d.CUresult(int(code))
        name = self._function_names.get(function, hex(function))
        raise CudaError("cuLaunchKernel", _code_name(err),
                        f"cuLaunchKernel of {name} failed: {_code_name(err)} ({int(code)})")

    def _at_exit(self):
        """The interpreter is ending: the driver releases the process's memory,
        streams and events itself, so releases from objects collected during
        teardown (when cuda.bindings may be half torn down) become no-ops."""
        self._closing = True

    # --- helpers -------------------------------------------------------------
    def _check_device(self, device):
        if isinstance(device, bool) or not isinstance(device, int) or not 0 <= device < self._n:
            raise CudaError("cuDeviceGet", "CUDA_ERROR_INVALID_DEVICE",
                            f"invalid device ordinal {device!r} (this machine has {self._n})")

    def _context(self, device):
        ctx = self._contexts[device]
        if ctx is None:
            with self._lock:
                if self._contexts[device] is None:
                    dev = _check("cuDeviceGet", self._d.cuDeviceGet(device))
                    self._devices[device] = dev
                    self._contexts[device] = _check("cuDevicePrimaryCtxRetain",
                                                    self._d.cuDevicePrimaryCtxRetain(dev))
                ctx = self._contexts[device]
        return ctx

    def _make_current(self, device):
        if getattr(self._tls, "device", None) != device:
            ctx = self._context(device)
            _check("cuCtxSetCurrent", self._d.cuCtxSetCurrent(ctx))
            self._tls.device = device

    def _cur(self):
        d = getattr(self._tls, "device", None)
        if d is None:
            self._make_current(0)
            d = 0
        return d

    def _on_stream(self, stream):
        """Make ``stream``'s device current; returns that ordinal."""
        dev = self._stream_dev.get(int(stream)) if stream else None
        if dev is None:
            return self._cur()
        self._make_current(dev)
        return dev

    def _attr(self, device, name):
        attr = getattr(self._d.CUdevice_attribute, name)
        self._context(device)
        return int(_check("cuDeviceGetAttribute",
                          self._d.cuDeviceGetAttribute(attr, self._devices[device])))

    # --- devices -------------------------------------------------------------
    def device_count(self):
        return self._n

    def can_access_peer(self, device, peer):
        self._check_device(device)
        self._check_device(peer)
        if device == peer:
            return False
        self._context(device)          # fills self._devices (no context switch)
        self._context(peer)
        return bool(_check("cuDeviceCanAccessPeer", self._d.cuDeviceCanAccessPeer(
            self._devices[device], self._devices[peer])))

    def device_properties(self, device):
        self._check_device(device)
        p = self._props[device]
        if p is not None:
            return dict(p)
        self._context(device)
        dev = self._devices[device]
        raw = _check("cuDeviceGetName", self._d.cuDeviceGetName(256, dev))
        name = bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
        total = int(_check("cuDeviceTotalMem", self._d.cuDeviceTotalMem(dev)))
        try:
            u = bytes(_check("cuDeviceGetUuid", self._d.cuDeviceGetUuid(dev)).bytes)
            h = u.hex()
            uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
        except Exception:
            uuid = ""
        p = {
            "name": name,
            "major": self._attr(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
            "minor": self._attr(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
            "total_memory": total,
            "multi_processor_count": self._attr(device, "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            "max_threads_per_block": self._attr(device, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            "max_shared_memory_per_block": self._attr(
                device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
            "warp_size": self._attr(device, "CU_DEVICE_ATTRIBUTE_WARP_SIZE"),
            "L2_cache_size": self._attr(device, "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE"),
            "uuid": uuid,
            "pci_bus_id": self._attr(device, "CU_DEVICE_ATTRIBUTE_PCI_BUS_ID"),
        }
        self._props[device] = p
        return dict(p)

    def set_current(self, device):
        # called on every allocation and launch: an ordinal already current
        # on this thread was checked when it was made current
        if type(device) is int and getattr(self._tls, "device", None) == device:
            return
        self._check_device(device)
        self._make_current(device)

    def device_synchronize(self, device):
        self._check_device(device)
        self._make_current(device)
        _check("cuCtxSynchronize", self._d.cuCtxSynchronize())

    # --- memory --------------------------------------------------------------
    def mem_alloc(self, device, nbytes):
        self._check_device(device)
        if nbytes <= 0:
            raise CudaError("cuMemAlloc", "CUDA_ERROR_INVALID_VALUE", f"cuMemAlloc of {nbytes} bytes")
        self._make_current(device)
        err, ptr = self._d.cuMemAlloc(nbytes)
        if int(err) == _CUDA_ERROR_OUT_OF_MEMORY:
            free, total = self.mem_get_info(device)
            raise BackendOutOfMemory(f"cuda:{device}: cannot allocate {nbytes} bytes "
                                     f"({free} free of {total})")
        _check("cuMemAlloc", (err,))
        return int(ptr)

    def mem_free(self, device, ptr):
        if self._closing:
            return
        self._make_current(device)
        _check("cuMemFree", self._d.cuMemFree(ptr))

    def mem_get_info(self, device):
        self._check_device(device)
        self._make_current(device)
        free, total = _check("cuMemGetInfo", self._d.cuMemGetInfo())
        return int(free), int(total)

    def host_alloc_pinned(self, nbytes):
        if nbytes <= 0:
            raise CudaError("cuMemHostAlloc", "CUDA_ERROR_INVALID_VALUE", f"cuMemHostAlloc of {nbytes} bytes")
        self._cur()
        err, ptr = self._d.cuMemHostAlloc(nbytes, _CU_MEMHOSTALLOC_PORTABLE)
        if int(err) == _CUDA_ERROR_OUT_OF_MEMORY:
            raise BackendOutOfMemory(f"cannot allocate {nbytes} bytes of pinned host memory")
        _check("cuMemHostAlloc", (err,))
        ptr = int(ptr)
        with self._lock:
            self._pinned[ptr] = nbytes
        return ptr

    def host_free_pinned(self, ptr):
        if self._closing:
            return
        with self._lock:
            if self._pinned.pop(ptr, None) is None:
                raise CudaError("cuMemFreeHost", "CUDA_ERROR_INVALID_VALUE",
                                f"cuMemFreeHost of unknown pointer {ptr:#x}")
        self._cur()
        _check("cuMemFreeHost", self._d.cuMemFreeHost(ptr))

    def is_pinned(self, ptr):
        """Whether host address ``ptr`` lies in pinned memory from this driver."""
        with self._lock:
            for base, n in self._pinned.items():
                if base <= ptr < base + n:
                    return True
        return False

    def _sync_if_pageable(self, host_ptr, nbytes, stream):
        # a copy into pageable memory has landed when the call returns
        if not self.is_pinned(host_ptr) or not self.is_pinned(host_ptr + nbytes - 1):
            self.stream_synchronize(stream)

    def memcpy_htod(self, dst, src_host, nbytes, stream):
        if nbytes == 0:
            return
        self._on_stream(stream)
        # from pageable memory the driver copies the source to a staging buffer
        # before returning ("API synchronization behavior" in the CUDA docs): the
        # host buffer may be reused at once, and no stream synchronisation is
        # needed (which would stall every small host-to-device copy)
        _check("cuMemcpyHtoDAsync", self._d.cuMemcpyHtoDAsync(dst, src_host, nbytes, stream))

    def memcpy_dtoh(self, dst_host, src, nbytes, stream):
        if nbytes == 0:
            return
        self._on_stream(stream)
        _check("cuMemcpyDtoHAsync", self._d.cuMemcpyDtoHAsync(dst_host, src, nbytes, stream))
        self._sync_if_pageable(dst_host, nbytes, stream)

    def memcpy_dtod(self, dst, src, nbytes, stream):
        if nbytes == 0:
            return
        self._on_stream(stream)
        # unified addressing: the driver infers the devices (peer copies included)
        _check("cuMemcpyAsync", self._d.cuMemcpyAsync(dst, src, nbytes, stream))

    def memset_d8(self, dst, value, nbytes, stream):
        if nbytes == 0:
            return
        self._on_stream(stream)
        _check("cuMemsetD8Async", self._d.cuMemsetD8Async(dst, value & 0xFF, nbytes, stream))

    # --- streams and events --------------------------------------------------
    def stream_create(self, device, priority=0):
        self._check_device(device)
        self._make_current(device)
        s = _check("cuStreamCreateWithPriority",
                   self._d.cuStreamCreateWithPriority(_CU_STREAM_NON_BLOCKING, int(priority)))
        h = int(s)
        with self._lock:
            self._stream_dev[h] = device
        return h

    def stream_destroy(self, stream):
        if not stream:
            raise CudaError("cuStreamDestroy", "CUDA_ERROR_INVALID_HANDLE", "cannot destroy a default stream")
        if self._closing:
            return
        self._on_stream(stream)
        _check("cuStreamDestroy", self._d.cuStreamDestroy(stream))
        with self._lock:
            self._stream_dev.pop(int(stream), None)

    def stream_synchronize(self, stream):
        self._on_stream(stream)
        _check("cuStreamSynchronize", self._d.cuStreamSynchronize(stream))

    def stream_query(self, stream):
        self._on_stream(stream)
        err, = self._d.cuStreamQuery(stream)
        if int(err) == _CUDA_ERROR_NOT_READY:
            return False
        _check("cuStreamQuery", (err,))
        return True

    def stream_wait_event(self, stream, event):
        self._on_stream(stream)
        _check("cuStreamWaitEvent", self._d.cuStreamWaitEvent(stream, event, 0))

    def event_create(self, device, timing=False, blocking=False, interprocess=False):
        self._check_device(device)
        self._make_current(device)
        flags = 0 if timing else _CU_EVENT_DISABLE_TIMING
        if blocking:
            flags |= _CU_EVENT_BLOCKING_SYNC
        if interprocess:
            flags |= _CU_EVENT_INTERPROCESS | _CU_EVENT_DISABLE_TIMING
        e = _check("cuEventCreate", self._d.cuEventCreate(flags))
        h = int(e)
        with self._lock:
            self._event_dev[h] = device
        return h

    def _on_event(self, event):
        dev = self._event_dev.get(int(event))
        if dev is not None:
            self._make_current(dev)
        else:
            self._cur()

    def event_destroy(self, event):
        if self._closing:
            return
        self._on_event(event)
        _check("cuEventDestroy", self._d.cuEventDestroy(event))
        with self._lock:
            self._event_dev.pop(int(event), None)

    def event_record(self, event, stream):
        self._on_stream(stream)
        _check("cuEventRecord", self._d.cuEventRecord(event, stream))

    def event_query(self, event):
        self._on_event(event)
        err, = self._d.cuEventQuery(event)
        if int(err) == _CUDA_ERROR_NOT_READY:
            return False
        _check("cuEventQuery", (err,))
        return True

    def event_synchronize(self, event):
        self._on_event(event)
        _check("cuEventSynchronize", self._d.cuEventSynchronize(event))

    def event_elapsed_ms(self, start, end):
        self._on_event(start)
        return float(_check("cuEventElapsedTime", self._d.cuEventElapsedTime(start, end)))

    # --- kernels -------------------------------------------------------------
    def module_load(self, device, source, kernel_names):
        self._check_device(device)
        key = (device, hashlib.sha256(source.encode()).hexdigest())
        with self._lock:
            rec = self._modules.get(key)
            if rec is not None and all(n in rec[1] for n in kernel_names):
                return {n: rec[1][n] for n in kernel_names}
        props = self.device_properties(device)
        cubin = _compiler.compile(source, list(kernel_names), arch=(props["major"], props["minor"]))
        self._make_current(device)
        with self._lock:
            rec = self._modules.get(key)
            if rec is None:
                mod = _check("cuModuleLoadData", self._d.cuModuleLoadData(cubin))
                rec = self._modules[key] = (mod, {})
            mod, funcs = rec
            for n in kernel_names:
                if n not in funcs:
                    f = _check("cuModuleGetFunction", self._d.cuModuleGetFunction(mod, n.encode()))
                    funcs[n] = int(f)
                    self._functions[int(f)] = f
                    self._function_names[int(f)] = n
                    if self.launcher is not None:
                        self.launcher.register(int(f), self._param_sizes(f))
            return {n: funcs[n] for n in kernel_names}

    # --- stream capture and graphs ---------------------------------------------
    _MODES = {"global": 0, "thread_local": 1, "relaxed": 2}     # CUstreamCaptureMode

    def _mode(self, mode):
        v = self._MODES.get(mode)
        if v is None:
            raise ValueError(f"capture mode must be one of {tuple(self._MODES)}, got {mode!r}")
        return self._d.CUstreamCaptureMode(v)

    def stream_begin_capture(self, stream, mode="global"):
        if not stream:
            raise CudaError("cuStreamBeginCapture", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                            "cuStreamBeginCapture: the legacy default stream cannot be captured")
        m = self._mode(mode)
        self._on_stream(stream)
        _check("cuStreamBeginCapture", self._d.cuStreamBeginCapture(stream, m))

    def stream_end_capture(self, stream):
        self._on_stream(stream)
        g = _check("cuStreamEndCapture", self._d.cuStreamEndCapture(stream))
        h = int(g)
        with self._lock:
            self._graph_objs[h] = g
        return h

    def stream_capture_info(self, stream):
        self._on_stream(stream)
        r = self._d.cuStreamGetCaptureInfo(stream)
        _check("cuStreamGetCaptureInfo", (r[0],))
        status = int(r[1])
        return status, (int(r[2]) if status else 0)

    def exchange_capture_mode(self, mode):
        self._cur()
        old = _check("cuThreadExchangeStreamCaptureMode",
                     self._d.cuThreadExchangeStreamCaptureMode(self._mode(mode)))
        names = {v: k for k, v in self._MODES.items()}
        return names[int(old)]

    def _graph_obj(self, handle, call):
        with self._lock:
            g = self._graph_objs.get(int(handle))
        if g is None:
            raise CudaError(call, "CUDA_ERROR_INVALID_VALUE", f"{call}: invalid handle {handle!r}")
        return g

    def graph_instantiate(self, graph):
        g = self._graph_obj(graph, "cuGraphInstantiate")
        self._cur()
        e = _check("cuGraphInstantiate", self._d.cuGraphInstantiate(g, 0))
        h = int(e)
        with self._lock:
            self._graph_objs[h] = e
        return h

    def graph_launch(self, graph_exec, stream):
        e = self._graph_obj(graph_exec, "cuGraphLaunch")
        self._on_stream(stream)
        _check("cuGraphLaunch", self._d.cuGraphLaunch(e, stream))

    def graph_exec_destroy(self, graph_exec):
        e = self._graph_obj(graph_exec, "cuGraphExecDestroy")
        if not self._closing:
            _check("cuGraphExecDestroy", self._d.cuGraphExecDestroy(e))
        with self._lock:
            self._graph_objs.pop(int(graph_exec), None)

    def graph_destroy(self, graph):
        g = self._graph_obj(graph, "cuGraphDestroy")
        if not self._closing:
            _check("cuGraphDestroy", self._d.cuGraphDestroy(g))
        with self._lock:
            self._graph_objs.pop(int(graph), None)

    def graph_debug_dot_print(self, graph, path):
        g = self._graph_obj(graph, "cuGraphDebugDotPrint")
        _check("cuGraphDebugDotPrint", self._d.cuGraphDebugDotPrint(g, str(path).encode(), 0))

    def profiler_start(self):
        self._cur()
        _check("cuProfilerStart", self._d.cuProfilerStart())

    def profiler_stop(self):
        self._cur()
        _check("cuProfilerStop", self._d.cuProfilerStop())

    def kernel_name(self, function):
        name = self._function_names.get(function)
        if name is None:
            raise CudaError("kernel_name", "CUDA_ERROR_INVALID_HANDLE",
                            f"unknown kernel handle {function!r} (not from module_load)")
        return name

    def launch(self, function, grid, block, args, shared_mem=0, stream=0):
        f = self._functions.get(function)
        if f is None:
            raise CudaError("cuLaunchKernel", "CUDA_ERROR_INVALID_HANDLE",
                            f"unknown kernel handle {function!r} (not from module_load)")
        self._on_stream(stream)
        keep = tuple(args)
        # the void*[] of the argument values' addresses, built in one call
        params = _PARAM_ARRAYS[len(keep)](*map(ctypes.addressof, keep))
        gx, gy, gz = grid if len(grid) == 3 else (tuple(grid) + (1, 1, 1))[:3]
        bx, by, bz = block if len(block) == 3 else (tuple(block) + (1, 1, 1))[:3]
        # the driver copies the parameter values before cuLaunchKernel returns
        r = self._d.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared_mem, stream,
                                   ctypes.addressof(params), 0)
        if int(r[0]) != _CUDA_SUCCESS:
            _check("cuLaunchKernel", r)

    # --- cuBLAS --------------------------------------------------------------
    def _blas_handle(self, device):
        if self._cublas is None:
            with self._lock:
                if self._cublas is None:
                    self._cublas = _Cublas()
        handles = getattr(self._cublas_tls, "handles", None)
        if handles is None:
            handles = self._cublas_tls.handles = {}
        h = handles.get(device)
        if h is None:
            self._make_current(device)
            hp = ctypes.c_void_p()
            self._cublas.check("cublasCreate_v2", self._cublas.create(ctypes.byref(hp)))
            h = handles[device] = hp.value
        return h

    def _blas_stream(self, h, stream, device=None):
        """Point cuBLAS handle ``h`` (this thread's) at ``stream`` when it is not there yet,
        with its workspace for that stream (``device``'s)."""
        cur = getattr(self._cublas_tls, "streams", None)
        if cur is None:
            cur = self._cublas_tls.streams = {}
        if cur.get(h, -1) != stream:
            self._cublas.check("cublasSetStream_v2", self._cublas.set_stream(h, stream or None))
            cur[h] = stream
            if device is not None:
                self._blas_workspace(h, stream, device)

    def _blas_workspace(self, h, stream, device):
        """``cublasSetWorkspace`` with memory of the caching allocator, one block per
        (handle, stream) kept for the handle's life, as PyTorch: cuBLAS then never
        allocates device memory itself (which a CUDA graph capture forbids).  32 MiB
        from compute capability 9 (cuBLAS's recommendation for Hopper), 8 MiB + 128 KiB
        before (torch's ``:4096:2:16:8``).  ``cublasSetStream`` resets a handle to
        cuBLAS's own pool, so this follows every stream change."""
        set_ws = getattr(self._cublas, "set_workspace", None)
        if set_ws is None:
            return
        spaces = getattr(self._cublas_tls, "workspaces", None)
        if spaces is None:
            spaces = self._cublas_tls.workspaces = {}
        block = spaces.get((h, stream))
        if block is None:
            major = self.device_properties(device)["major"]
            size = (32 << 20) if major >= 9 else (8 << 20) + (128 << 10)
            block = spaces[(h, stream)] = _device_allocator(device).malloc(size, stream)
        self._cublas.check("cublasSetWorkspace_v2", set_ws(h, block.ptr, block.size))

    def gemm(self, device, stream, transa, transb, m, n, k, alpha, a, a_type, lda,
             b, b_type, ldb, beta, c, c_type, ldc, compute_type, batch=1,
             stride_a=0, stride_b=0, stride_c=0):
        self.set_current(device)
        h = self._blas_handle(device)
        cb = self._cublas
        self._blas_stream(h, stream, device)
        fast = cb.gemm_c
        if fast is not None:
            kind = (_SCALAR_DOUBLE if compute_type == _COMPUTE_64F else _SCALAR_FLOAT) + \
                (2 if int(a_type) in (4, 5) else 0)
            st = fast(h, int(transa), int(transb), int(m), int(n), int(k), alpha,
                      int(a or 0), int(a_type), int(lda), int(stride_a),
                      int(b or 0), int(b_type), int(ldb), int(stride_b), beta,
                      int(c or 0), int(c_type), int(ldc), int(stride_c),
                      int(batch), int(compute_type), _GEMM_DEFAULT, kind)
            if st != 0:
                cb.check("cublasGemmStridedBatchedEx", st)
            return
        scalar = ctypes.c_double if compute_type == _COMPUTE_64F else ctypes.c_float
        if int(a_type) in (4, 5):        # CUDA_C_32F / CUDA_C_64F: cuComplex / cuDoubleComplex scalars
            al, be = complex(alpha), complex(beta)
            al, be = (scalar * 2)(al.real, al.imag), (scalar * 2)(be.real, be.imag)
        else:
            al, be = scalar(alpha), scalar(beta)
        cb.check("cublasGemmStridedBatchedEx", cb.gemm_sbex(
            h, int(transa), int(transb), int(m), int(n), int(k), ctypes.byref(al),
            a, int(a_type), int(lda), int(stride_a),
            b, int(b_type), int(ldb), int(stride_b),
            ctypes.byref(be), c, int(c_type), int(ldc), int(stride_c),
            int(batch), int(compute_type), _GEMM_DEFAULT))

    # --- cuFFT ---------------------------------------------------------------
    def fft(self, device, stream, kind, shape, batch, idata, odata, direction=-1, stride=1):
        self._check_device(device)
        checked = self._fft_checked
        key = (kind, shape, batch, direction, stride) if type(shape) is tuple else None
        if key is None or key not in checked:
            shape = _host_fft.check(kind, shape, batch, direction, stride)
            if key is not None and len(checked) < 4096:
                checked.add(key)            # (arguments cuFFT accepts: checked once)
        if self._cufft is None:
            with self._lock:
                if self._cufft is None:
                    self._cufft = Cufft()
        self._make_current(device)
        self._cufft.execute(device, stream, kind, shape, int(batch), idata, odata, int(direction),
                            int(stride))

    # --- cuSOLVER (and cuBLAS trsm) ------------------------------------------
    def solver(self, device, stream, routine, dtype, batch=1, strides=None, **args):
        self._check_device(device)
        _host_solver.check(routine, dtype, args, batch, strides)
        if not batch:
            return
        blas = self._blas_handle(device)
        if getattr(self, "_cusolver", None) is None:
            with self._lock:
                if getattr(self, "_cusolver", None) is None:
                    self._cusolver = Cusolver(blas_lib=ctypes.CDLL(self._cublas.path))
        cs = self._cusolver
        handles = getattr(self._cublas_tls, "solver_handles", None)
        if handles is None:
            handles = self._cublas_tls.solver_handles = {}
        self._make_current(device)
        h = handles.get(device)
        if h is None:
            h = handles[device] = cs.new_handle()
        self._blas_stream(blas, stream, device)

        def workspace(nbytes):
            alloc = _device_allocator(device)
            block = alloc.malloc(nbytes, stream)
            return block.ptr, lambda: alloc.free(block)

        def upload(data):
            ptr, release = workspace(len(data))
            buf = ctypes.create_string_buffer(data, len(data))
            self.memcpy_htod(ptr, ctypes.addressof(buf), len(data), stream)
            return ptr, release
        cs.execute(h, blas, stream, routine, dtype, args, batch, strides, workspace, upload)
