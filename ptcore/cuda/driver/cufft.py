"""cuFFT through ``ctypes`` on the library ``cuda.pathfinder`` finds
(``libcufft.so.12`` of the ``nvidia-cufft`` wheel for CUDA 13, or a copy
already loaded by PyTorch/CuPy), for :class:`ptcore.cuda.driver.real.RealDriver`.

Signatures are those of ``cufft.h`` (CUDA 13, cuFFT 12)::

    typedef int cufftHandle;
    cufftResult cufftPlanMany(cufftHandle *plan, int rank, int *n,
                              int *inembed, int istride, int idist,
                              int *onembed, int ostride, int odist,
                              cufftType type, int batch);
    cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream);
    cufftResult cufftExecC2C(cufftHandle, cufftComplex *in, cufftComplex *out, int direction);
    cufftResult cufftExecR2C(cufftHandle, cufftReal *in, cufftComplex *out);
    cufftResult cufftExecC2R(cufftHandle, cufftComplex *in, cufftReal *out);
    (Z2Z, D2Z, Z2D likewise in double precision)
    cufftResult cufftDestroy(cufftHandle plan);
    cufftResult cufftGetVersion(int *version);

``inembed``/``onembed`` NULL selects the basic layout (batches back to back,
``idist``/``odist`` ignored); a ``stride`` above 1 selects the interleaved
advanced layout (``inembed = onembed = n``, ``istride = ostride = stride``,
``idist = odist = 1``: element ``j`` of signal ``b`` at ``b + j * stride``).  A plan belongs to the device that was current
when it was made; plans are cached per (device, kind, shape, batch, stride) up to
:data:`PLAN_CACHE_SIZE` (least recently used go first), and a plan is used
under a lock (``cufftSetStream`` + ``cufftExec*``), since a plan is not
safe to share between threads.
"""
import collections
import ctypes
import threading

__all__ = ["Cufft", "TYPES", "PLAN_CACHE_SIZE", "RESULT_NAMES"]

#: cufftType values (cufft.h)
TYPES = {"R2C": 0x2a, "C2R": 0x2c, "C2C": 0x29, "D2Z": 0x6a, "Z2D": 0x6c, "Z2Z": 0x69}
#: plans kept per process (PyTorch's default cuFFT plan cache holds 4096)
PLAN_CACHE_SIZE = 1024
#: cufftResult names (cufft.h)
RESULT_NAMES = {
    0: "CUFFT_SUCCESS", 1: "CUFFT_INVALID_PLAN", 2: "CUFFT_ALLOC_FAILED", 3: "CUFFT_INVALID_TYPE",
    4: "CUFFT_INVALID_VALUE", 5: "CUFFT_INTERNAL_ERROR", 6: "CUFFT_EXEC_FAILED",
    7: "CUFFT_SETUP_FAILED", 8: "CUFFT_INVALID_SIZE", 9: "CUFFT_UNALIGNED_DATA",
    11: "CUFFT_INVALID_DEVICE", 13: "CUFFT_NO_WORKSPACE", 14: "CUFFT_NOT_IMPLEMENTED",
    16: "CUFFT_NOT_SUPPORTED", 17: "CUFFT_MISSING_DEPENDENCY", 18: "CUFFT_NVRTC_FAILURE",
    19: "CUFFT_NVJITLINK_FAILURE", 20: "CUFFT_NVSHMEM_FAILURE",
}
_INT_MAX = 2**31 - 1


class Cufft:
    """The cuFFT entry points ptcore uses, and its plan cache.

    Raises RuntimeError at construction when cuda-pathfinder is missing or
    no libcufft can be found.
    """

    def __init__(self, lib=None):
        if lib is None:
            try:
                from cuda.pathfinder import load_nvidia_dynamic_lib
            except ImportError as e:
                raise RuntimeError("cuFFT needs cuda-pathfinder (pip install ptcore[cuda])") from e
            try:
                loaded = load_nvidia_dynamic_lib("cufft")
            except Exception as e:
                raise RuntimeError(f"cuFFT is not installed (pip install nvidia-cufft): "
                                   f"{type(e).__name__}: {e}") from e
            self.path = loaded.abs_path
            lib = ctypes.CDLL(loaded.abs_path)
        else:
            self.path = getattr(lib, "_name", None)
        i, vp = ctypes.c_int, ctypes.c_void_p
        ip = ctypes.POINTER(ctypes.c_int)
        self.plan_many = lib.cufftPlanMany
        self.plan_many.argtypes = [ip, i, ip, ip, i, i, ip, i, i, i, i]
        self.plan_many.restype = i
        self.set_stream = lib.cufftSetStream
        self.set_stream.argtypes = [i, vp]
        self.set_stream.restype = i
        self.destroy = lib.cufftDestroy
        self.destroy.argtypes = [i]
        self.destroy.restype = i
        self.get_version = lib.cufftGetVersion
        self.get_version.argtypes = [ip]
        self.get_version.restype = i
        self.exec = {}
        for kind in TYPES:
            f = getattr(lib, "cufftExec" + kind)
            f.argtypes = [i, vp, vp, i] if kind in ("C2C", "Z2Z") else [i, vp, vp]
            f.restype = i
            self.exec[kind] = f
        self._lock = threading.Lock()
        self._plans = collections.OrderedDict()   # (device, kind, shape, batch) -> handle
        self._streams = {}                        # handle -> the stream it was last set to

    def check(self, call, result):
        if result != 0:
            name = RESULT_NAMES.get(result, f"cufftResult {result}")
            raise RuntimeError(f"{call} failed: {name} ({result})")

    def version(self):
        v = ctypes.c_int()
        self.check("cufftGetVersion", self.get_version(ctypes.byref(v)))
        return v.value

    def _plan(self, device, kind, shape, batch, stride=1):
        """A cached plan; the caller holds ``self._lock`` and has made
        ``device`` current."""
        key = (device, kind, shape, batch, stride)
        h = self._plans.get(key)
        if h is not None:
            self._plans.move_to_end(key)
            return h
        total = max(batch, stride)
        for n in shape:
            total *= n
        if total > _INT_MAX:
            raise ValueError(f"cuFFT: {batch} transforms of {shape} exceed the 32-bit plan "
                             "interface; split the batch")
        plan = ctypes.c_int(-1)
        n = (ctypes.c_int * len(shape))(*shape)
        if stride == 1:
            r = self.plan_many(ctypes.byref(plan), len(shape), n, None, 1, 0, None, 1, 0,
                               TYPES[kind], batch)
        else:                       # interleaved: inembed = onembed = n
            r = self.plan_many(ctypes.byref(plan), len(shape), n, n, stride, 1, n, stride, 1,
                               TYPES[kind], batch)
        self.check(f"cufftPlanMany({kind}, n={list(shape)}, batch={batch}, stride={stride})", r)
        self._plans[key] = plan.value
        while len(self._plans) > PLAN_CACHE_SIZE:
            _, old = self._plans.popitem(last=False)
            self._streams.pop(old, None)
            self.destroy(old)
        return plan.value

    def execute(self, device, stream, kind, shape, batch, idata, odata, direction, stride=1):
        """Plan (cached) and queue one transform on ``stream`` (0: legacy
        default stream).  The caller has made ``device`` current.  A plan
        keeps the stream it was last given, so it is set only when it
        changes (the plans are this cache's own)."""
        with self._lock:
            h = self._plan(device, kind, shape, batch, stride)
            if self._streams.get(h, -1) != stream:
                self.check("cufftSetStream", self.set_stream(h, stream or None))
                self._streams[h] = stream
            f = self.exec[kind]
            if kind in ("C2C", "Z2Z"):
                r = f(h, idata, odata, direction)
            else:
                r = f(h, idata, odata)
            self.check(f"cufftExec{kind}", r)

    def clear_plans(self):
        """Destroy every cached plan (the devices they belong to must still exist)."""
        with self._lock:
            for h in self._plans.values():
                self.destroy(h)
            self._plans.clear()
            self._streams.clear()
