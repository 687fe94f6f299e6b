"""The real CUDA driver's failure paths, which run without a GPU: missing
cuda-bindings, no driver library, error reporting; and ptcore.cuda's probe
never raising.  (On a GPU machine the emulated-device tests run against the
real driver with PTCORE_TEST_REAL_CUDA=1.)"""
import os
import subprocess
import sys

import pytest

import ptcore
from ptcore.cuda.driver import interface as _driver
from ptcore.cuda.runtime import state as _runtime
from ptcore.cuda.driver.real import RealDriver, _check


def test_missing_bindings_is_a_clear_runtime_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    with pytest.raises(RuntimeError, match="cuda"):
        RealDriver()


def test_no_driver_library():
    pytest.importorskip("cuda.bindings")
    if ptcore.cuda.is_available() and not _runtime.get() or os.environ.get("PTCORE_TEST_REAL_CUDA"):
        pytest.skip("a CUDA driver is present")
    try:
        RealDriver()
    except RuntimeError as e:
        assert "CUDA" in str(e) or "cuInit" in str(e) or "device" in str(e)
    else:
        pytest.skip("a CUDA driver is present")


def test_check_names_call_and_error():
    class Err:
        name = "CUDA_ERROR_INVALID_VALUE"

        def __int__(self):
            return 1
    with pytest.raises(_driver.CudaError, match="cuMemAlloc.*CUDA_ERROR_INVALID_VALUE") as ei:
        _check("cuMemAlloc", (Err(), 0))
    assert ei.value.call == "cuMemAlloc" and ei.value.code == "CUDA_ERROR_INVALID_VALUE"
    assert isinstance(ei.value, RuntimeError)

    class Ok:
        def __int__(self):
            return 0
    assert _check("cuDeviceGetCount", (Ok(), 3)) == 3
    assert _check("cuCtxSynchronize", (Ok(),)) is None


def test_capture_errors_say_what_went_wrong():
    # on an H200 a host sync inside cuda.graph() surfaced as 'cuStreamEndCapture failed:
    # CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901)' alone; the message now carries the
    # driver's description (or CUDA's text for the capture errors when it cannot be asked)
    class Err:
        name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"

        def __int__(self):
            return 901
    with pytest.raises(_driver.CudaError, match="previous error during capture") as ei:
        _check("cuStreamEndCapture", (Err(),))
    assert "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901)" in str(ei.value)

    class Other:
        name = "CUDA_ERROR_NOT_FOUND"

        def __int__(self):
            return 500
    with pytest.raises(_driver.CudaError) as ei:
        _check("cuModuleGetFunction", (Other(),))
    assert str(ei.value).startswith("cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (500)")


def test_probe_never_raises_on_a_bad_setting(monkeypatch):
    if os.environ.get("PTCORE_CUDA_EMULATE"):
        pytest.skip("emulation is on for the whole run")
    monkeypatch.setenv("PTCORE_CUDA_EMULATE", "lots")
    _runtime.reset()
    try:
        assert ptcore.cuda.is_available() is False
        assert "PTCORE_CUDA_EMULATE" in ptcore.cuda._unavailable_reason()
        assert ptcore.cuda.device_count() == 0
        with pytest.raises(RuntimeError, match="not available"):
            ptcore.zeros(1, device="cuda")
    finally:
        monkeypatch.delenv("PTCORE_CUDA_EMULATE")
        _runtime.reset()


def test_emulation_in_a_fresh_process():
    code = ("import sys, ptcore; c = ptcore.cuda; "
            "print(c.is_available(), c.device_count(), 'emulated' in c.get_device_name(), "
            "ptcore.ones(3, device='cuda').cpu().tolist(), "
            "any(m == 'cuda.bindings.driver' for m in sys.modules))")
    env = dict(os.environ, PTCORE_CUDA_EMULATE="3")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "3", "True", "[1.0,", "1.0,", "1.0]", "False"]
    # the first CUDA call of a process may be a factory
    code = ("import ptcore; print(ptcore.zeros(2, device='cuda').device, "
            "ptcore.empty_strided((2,), (1,), device='cuda:1').device)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd="/", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cuda:0", "cuda:1"]


# ---------------------------------------------------------------------------
# RealDriver's own logic on a fake driver-API module: the return conventions
# of cuda.bindings ((CUresult, *values) tuples, handles as objects with
# __int__), a context that must be current on the calling thread for every
# call that needs one, host memory standing in for device memory.
# ---------------------------------------------------------------------------
import ctypes  # noqa: E402
import threading  # noqa: E402
import types  # noqa: E402


class _Res(int):
    """A CUresult: an int with a name, as cuda.bindings' enum."""
    NAMES = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
             201: "CUDA_ERROR_INVALID_CONTEXT", 400: "CUDA_ERROR_INVALID_HANDLE",
             600: "CUDA_ERROR_NOT_READY"}

    @property
    def name(self):
        return self.NAMES.get(int(self), f"CUDA_ERROR_{int(self)}")


class _H:
    """An opaque handle (CUcontext, CUstream ...): int() gives the address."""

    def __init__(self, kind, value):
        self.kind, self.value = kind, value

    def __int__(self):
        return self.value


OK = _Res(0)


class FakeDriverAPI:
    def __init__(self, ndev=2, capacity=1 << 20):
        self.ndev = ndev
        self.capacity = capacity
        self.tls = threading.local()
        self.allocs = {}                 # ptr -> (device, ctypes buffer)
        self.streams = {}                # handle -> device
        self.events = {}
        self.calls = []
        self.launches = []
        self.modules = {}
        self.nparams = 0                 # parameters cuLaunchKernel reads (set by a test)
        self._next = 0x1000
        attrs = ["COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR", "MULTIPROCESSOR_COUNT",
                 "MAX_THREADS_PER_BLOCK", "MAX_SHARED_MEMORY_PER_BLOCK", "WARP_SIZE",
                 "L2_CACHE_SIZE", "PCI_BUS_ID"]
        self.CUdevice_attribute = types.SimpleNamespace(
            **{f"CU_DEVICE_ATTRIBUTE_{a}": a for a in attrs})
        self.attr_values = {"COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0,
                            "MULTIPROCESSOR_COUNT": 132, "MAX_THREADS_PER_BLOCK": 1024,
                            "MAX_SHARED_MEMORY_PER_BLOCK": 49152, "WARP_SIZE": 32,
                            "L2_CACHE_SIZE": 50 << 20, "PCI_BUS_ID": 7}

    # helpers
    def _handle(self, kind):
        self._next += 0x10
        return _H(kind, self._next)

    def _current(self, call):
        ctx = getattr(self.tls, "ctx", None)
        if ctx is None:
            raise AssertionError(f"{call} without a current context on {threading.current_thread().name}")
        return ctx.device

    @staticmethod
    def _int(v, what):
        if isinstance(v, _H):
            return int(v)
        assert isinstance(v, int) and not isinstance(v, bool), f"{what}: {type(v).__name__}"
        return v

    def _stream_ok(self, s, call):
        s = self._int(s, f"{call} stream")
        assert s in (0, 1, 2) or s in self.streams, f"{call}: unknown stream {s:#x}"
        return s

    # API
    def cuInit(self, flags):
        assert flags == 0
        return (OK,)

    def cuDeviceGetCount(self):
        return (OK, self.ndev)

    def cuDeviceGet(self, i):
        return (OK, _H("dev", i)) if 0 <= i < self.ndev else (_Res(101),)

    def cuDevicePrimaryCtxRetain(self, dev):
        h = self._handle("ctx")
        h.device = int(dev)
        return (OK, h)

    def cuCtxSetCurrent(self, ctx):
        assert isinstance(ctx, _H) and ctx.kind == "ctx"
        self.tls.ctx = ctx
        return (OK,)

    def cuCtxSynchronize(self):
        self._current("cuCtxSynchronize")
        return (OK,)

    def cuDeviceGetName(self, n, dev):
        return (OK, b"Fake H100\x00" + b"\x00" * (n - 10))

    def cuDeviceTotalMem(self, dev):
        return (OK, self.capacity)

    def cuDeviceGetUuid(self, dev):
        return (OK, types.SimpleNamespace(bytes=bytes(range(16))))

    def cuDeviceGetAttribute(self, attr, dev):
        return (OK, self.attr_values[attr])

    def cuMemAlloc(self, n):
        dev = self._current("cuMemAlloc")
        used = sum(len(b) for d, b in self.allocs.values() if d == dev)
        if used + n > self.capacity:
            return (_Res(2), None)
        buf = ctypes.create_string_buffer(n)
        self.allocs[ctypes.addressof(buf)] = (dev, buf)
        return (OK, _H("ptr", ctypes.addressof(buf)))

    def cuMemFree(self, ptr):
        self._current("cuMemFree")
        return (OK,) if self.allocs.pop(self._int(ptr, "cuMemFree"), None) else (_Res(1),)

    def cuMemGetInfo(self):
        dev = self._current("cuMemGetInfo")
        used = sum(len(b) for d, b in self.allocs.values() if d == dev)
        return (OK, self.capacity - used, self.capacity)

    def cuMemHostAlloc(self, n, flags):
        self._current("cuMemHostAlloc")
        buf = ctypes.create_string_buffer(n)
        self.allocs[ctypes.addressof(buf)] = ("host", buf)
        return (OK, ctypes.addressof(buf))

    def cuMemFreeHost(self, p):
        self.allocs.pop(p)
        return (OK,)

    def _copy(self, call, dst, src, n, stream):
        self._current(call)
        self._stream_ok(stream, call)
        ctypes.memmove(self._int(dst, call), self._int(src, call), n)
        self.calls.append((call, int(stream)))
        return (OK,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        return self._copy("cuMemcpyHtoDAsync", dst, src, n, stream)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        return self._copy("cuMemcpyDtoHAsync", dst, src, n, stream)

    def cuMemcpyAsync(self, dst, src, n, stream):
        return self._copy("cuMemcpyAsync", dst, src, n, stream)

    def cuMemsetD8Async(self, dst, v, n, stream):
        self._current("cuMemsetD8Async")
        assert 0 <= v <= 255
        ctypes.memset(self._int(dst, "memset"), v, n)
        return (OK,)

    def cuStreamCreateWithPriority(self, flags, prio):
        dev = self._current("cuStreamCreateWithPriority")
        assert flags == 1, "ptcore's streams are non-blocking"
        h = self._handle("stream")
        self.streams[int(h)] = dev
        return (OK, h)

    def cuStreamDestroy(self, s):
        self.streams.pop(self._int(s, "cuStreamDestroy"))
        return (OK,)

    def cuStreamSynchronize(self, s):
        self._stream_ok(s, "cuStreamSynchronize")
        self.calls.append(("cuStreamSynchronize", int(s)))
        return (OK,)

    def cuStreamQuery(self, s):
        self._stream_ok(s, "cuStreamQuery")
        return (OK,)

    def cuStreamWaitEvent(self, s, e, flags):
        self._stream_ok(s, "cuStreamWaitEvent")
        assert self._int(e, "event") in self.events
        return (OK,)

    def cuEventCreate(self, flags):
        dev = self._current("cuEventCreate")
        h = self._handle("event")
        self.events[int(h)] = [dev, flags, None]
        return (OK, h)

    def cuEventDestroy(self, e):
        self.events.pop(self._int(e, "cuEventDestroy"))
        return (OK,)

    def cuEventRecord(self, e, s):
        self._stream_ok(s, "cuEventRecord")
        self.events[self._int(e, "cuEventRecord")][2] = len(self.calls)
        return (OK,)

    def cuEventQuery(self, e):
        return (OK,) if self.events[self._int(e, "q")][2] is not None else (_Res(600),)

    def cuEventSynchronize(self, e):
        return (OK,)

    def cuEventElapsedTime(self, a, b):
        ea, eb = self.events[self._int(a, "a")], self.events[self._int(b, "b")]
        if ea[1] & 2 or eb[1] & 2:
            return (_Res(400), None)
        return (OK, 1.5)

    def cuModuleLoadData(self, image):
        self._current("cuModuleLoadData")
        assert bytes(image[:4]) == b"\x7fELF", "cubins only"
        h = self._handle("module")
        self.modules[int(h)] = bytes(image)
        return (OK, h)

    def cuModuleGetFunction(self, mod, name):
        assert isinstance(name, bytes)
        assert b"\x00" + name + b"\x00" in self.modules[int(mod)]
        h = self._handle("function")
        h.name = name.decode()
        return (OK, h)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shm, stream, params, extra):
        self._current("cuLaunchKernel")
        assert isinstance(f, _H) and f.kind == "function"
        self._stream_ok(stream, "cuLaunchKernel")
        assert isinstance(params, int) and params, "kernelParams must be the void** address"
        assert extra in (0, None)
        # the driver reads the parameters during the call: so does the fake
        ptrs = list((ctypes.c_void_p * self.nparams).from_address(params))
        values = [ctypes.string_at(p, 8) for p in ptrs]
        self.launches.append((f.name, (gx, gy, gz), (bx, by, bz), shm, int(stream), values))
        return (OK,)

    # stream capture and graphs
    def cuStreamBeginCapture(self, s, mode):
        self._current("cuStreamBeginCapture")
        s = self._stream_ok(s, "cuStreamBeginCapture")
        assert s not in (0, 1, 2), "the legacy stream cannot be captured"
        assert isinstance(mode, _CaptureMode), type(mode)
        self._next += 1
        self.capturing = getattr(self, "capturing", {})
        self.capturing[s] = (int(mode), self._next)
        return (OK,)

    def cuStreamEndCapture(self, s):
        s = self._stream_ok(s, "cuStreamEndCapture")
        if s not in getattr(self, "capturing", {}):
            return (_Res(1), None)
        del self.capturing[s]
        return (OK, self._handle("graph"))

    def cuStreamGetCaptureInfo(self, s):
        s = self._stream_ok(s, "cuStreamGetCaptureInfo")
        mode_id = getattr(self, "capturing", {}).get(s)
        if mode_id is None:
            return (OK, _CaptureStatus(0), 0, None, None, None, 0)
        return (OK, _CaptureStatus(1), mode_id[1], None, None, None, 0)

    def cuThreadExchangeStreamCaptureMode(self, mode):
        assert isinstance(mode, _CaptureMode)
        old = getattr(self.tls, "mode", 0)
        self.tls.mode = int(mode)
        return (OK, _CaptureMode(old))

    def cuGraphInstantiate(self, g, flags):
        self._current("cuGraphInstantiate")
        assert isinstance(g, _H) and g.kind == "graph" and flags == 0
        return (OK, self._handle("exec"))

    def cuGraphLaunch(self, e, s):
        self._current("cuGraphLaunch")
        assert isinstance(e, _H) and e.kind == "exec"
        self.calls.append(("cuGraphLaunch", self._stream_ok(s, "cuGraphLaunch")))
        return (OK,)

    def cuGraphExecDestroy(self, e):
        assert isinstance(e, _H) and e.kind == "exec"
        return (OK,)

    def cuGraphDestroy(self, g):
        assert isinstance(g, _H) and g.kind == "graph"
        return (OK,)

    def cuProfilerStart(self):
        self._current("cuProfilerStart")
        self.calls.append(("cuProfilerStart", 0))
        return (OK,)

    def cuProfilerStop(self):
        self._current("cuProfilerStop")
        self.calls.append(("cuProfilerStop", 0))
        return (OK,)

    def cuGraphDebugDotPrint(self, g, path, flags):
        assert isinstance(g, _H) and g.kind == "graph" and isinstance(path, bytes)
        with open(path, "w") as f:
            f.write("digraph fake {}\n")
        return (OK,)


import enum  # noqa: E402


class _CaptureMode(enum.IntEnum):
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
    CU_STREAM_CAPTURE_MODE_RELAXED = 2


class _CaptureStatus(enum.IntEnum):
    NONE = 0
    ACTIVE = 1
    INVALIDATED = 2


FakeDriverAPI.CUstreamCaptureMode = _CaptureMode


@pytest.fixture
def fake(monkeypatch):
    pytest.importorskip("cuda.bindings")
    import cuda.bindings as cb
    import cuda.bindings.driver  # noqa: F401 - the real modules first (nvrtc's import needs it)
    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except ImportError:
        pass
    api = FakeDriverAPI()
    monkeypatch.setattr(cb, "driver", api, raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", api)
    return api, RealDriver()


def test_fake_devices_contexts_and_properties(fake):
    api, d = fake
    assert d.device_count() == 2
    p = d.device_properties(1)
    assert p["name"] == "Fake H100" and (p["major"], p["minor"]) == (9, 0)
    assert p["multi_processor_count"] == 132 and p["uuid"] == "00010203-0405-0607-0809-0a0b0c0d0e0f"
    # every thread makes its own context current before the first call that needs one
    errors = []

    def worker(dev):
        try:
            ptr = d.mem_alloc(dev, 64)
            d.memset_d8(ptr, 0x1ff, 64, 0)
            buf = ctypes.create_string_buffer(64)
            d.memcpy_dtoh(ctypes.addressof(buf), ptr, 64, 0)
            assert buf.raw == b"\xff" * 64
            d.mem_free(dev, ptr)
        except Exception as e:           # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=worker, args=(i % 2,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    with pytest.raises(_driver.CudaError, match="invalid device ordinal 2"):
        d.set_current(2)


def test_fake_out_of_memory_and_copies(fake):
    from ptcore.cuda.allocator.device_allocators import BackendOutOfMemory
    api, d = fake
    with pytest.raises(BackendOutOfMemory, match=r"cuda:0: cannot allocate 2097152 bytes \(1048576 free"):
        d.mem_alloc(0, 2 << 20)
    with pytest.raises(_driver.CudaError, match="cuMemAlloc of 0 bytes"):
        d.mem_alloc(0, 0)
    s = d.stream_create(0, priority=-1)
    a, b = d.mem_alloc(0, 16), d.mem_alloc(0, 16)
    src = ctypes.create_string_buffer(b"0123456789abcdef", 16)
    api.calls.clear()
    d.memcpy_htod(a, ctypes.addressof(src), 16, s)
    # from pageable memory the driver stages the source: no stream sync needed
    assert api.calls == [("cuMemcpyHtoDAsync", s)]
    d.memcpy_dtod(b, a, 16, s)
    pinned = d.host_alloc_pinned(16)
    api.calls.clear()
    d.memcpy_dtoh(pinned, b, 16, s)
    assert api.calls == [("cuMemcpyDtoHAsync", s)]          # pinned: stays asynchronous
    page = ctypes.create_string_buffer(16)
    api.calls.clear()
    d.memcpy_dtoh(ctypes.addressof(page), b, 16, s)         # pageable: complete on return
    assert api.calls == [("cuMemcpyDtoHAsync", s), ("cuStreamSynchronize", s)]
    assert page.raw == b"0123456789abcdef"
    assert d.is_pinned(pinned + 15) and not d.is_pinned(pinned + 16)
    assert ctypes.string_at(pinned, 16) == b"0123456789abcdef"
    d.host_free_pinned(pinned)
    with pytest.raises(_driver.CudaError, match="unknown pointer"):
        d.host_free_pinned(pinned)
    d.stream_destroy(s)
    with pytest.raises(_driver.CudaError, match="default stream"):
        d.stream_destroy(0)


def test_fake_releases_after_exit_are_noops(fake):
    api, d = fake
    ptr = d.mem_alloc(0, 64)
    s = d.stream_create(0)
    e = d.event_create(0)
    d._at_exit()
    api.tls.ctx = None                  # teardown: nothing may call into the driver now
    d.mem_free(0, ptr)
    d.stream_destroy(s)
    d.event_destroy(e)
    assert ptr in api.allocs            # left to the driver's process teardown


def test_fake_events(fake):
    api, d = fake
    s = d.stream_create(1)
    e0, e1 = d.event_create(1, timing=True), d.event_create(1, timing=True)
    assert d.event_query(e0) is False                 # never recorded (fake: NOT_READY)
    d.event_record(e0, s)
    d.event_record(e1, s)
    d.stream_wait_event(s, e1)
    assert d.event_query(e1) is True
    assert d.event_elapsed_ms(e0, e1) == 1.5
    e2 = d.event_create(1)                            # timing disabled by default
    d.event_record(e2, s)
    with pytest.raises(_driver.CudaError, match="cuEventElapsedTime.*INVALID_HANDLE"):
        d.event_elapsed_ms(e0, e2)
    for e in (e0, e1, e2):
        d.event_destroy(e)


def test_fake_launch_packs_kernel_params(fake):
    from ptcore.cuda.driver import compiler as _compiler
    ok, why = _compiler.nvrtc_available()
    if not ok:
        pytest.skip(f"NVRTC is not usable here: {why}")
    api, d = fake
    src = 'extern "C" __global__ void ptc_fake(long long n, float* x, double a) { }\n'
    fns = d.module_load(0, src, ["ptc_fake"])
    assert d.module_load(0, src, ["ptc_fake"]) == fns          # memoised
    args = [ctypes.c_longlong(12345), ctypes.c_void_p(0xdead0000), ctypes.c_double(2.5)]
    s = d.stream_create(0)
    api.nparams = 3
    d.launch(fns["ptc_fake"], (3,), (128, 1), args, 256, s)
    name, grid, block, shm, stream, values = api.launches[-1]
    assert (name, grid, block, shm, stream) == ("ptc_fake", (3, 1, 1), (128, 1, 1), 256, s)
    # the void** pointed at the argument values, in order
    assert values == [bytes(a) for a in args]
    assert ctypes.c_double.from_buffer_copy(values[2]).value == 2.5
    with pytest.raises(_driver.CudaError, match="unknown kernel handle"):
        d.launch(12345, (1,), (1,), [], 0, 0)


def test_fake_module_compiles_for_the_devices_arch(fake, monkeypatch):
    from ptcore.cuda.driver import compiler as _compiler
    api, d = fake
    api.attr_values["COMPUTE_CAPABILITY_MAJOR"], api.attr_values["COMPUTE_CAPABILITY_MINOR"] = 8, 6
    seen = []
    monkeypatch.setattr(_compiler, "compile",
                        lambda src, names, arch: seen.append(arch) or b"\x7fELF\x00ptc_k\x00")
    fns = d.module_load(0, 'extern "C" __global__ void ptc_k() {}', ["ptc_k"])
    assert seen == [(8, 6)]
    # the handles name their kernels (the tests' launch records read them)
    assert d.kernel_name(fns["ptc_k"]) == "ptc_k"
    with pytest.raises(_driver.CudaError, match="unknown kernel handle"):
        d.kernel_name(fns["ptc_k"] + 1)


# ---------------------------------------------------------------------------
# cuBLAS and cuFFT: the libraries load, the ctypes signatures convert, and
# the calls fail cleanly without a GPU (skipped when the wheels are absent)
# ---------------------------------------------------------------------------

def _lib(name):
    pytest.importorskip("cuda.pathfinder")
    from cuda.pathfinder import load_nvidia_dynamic_lib
    try:
        load_nvidia_dynamic_lib(name)
    except Exception as e:      # noqa: BLE001
        pytest.skip(f"{name} is not installed: {e}")


def test_cublas_symbols_and_signatures():
    _lib("cublas")
    from ptcore.cuda.driver.real import _Cublas
    cb = _Cublas()
    assert cb.status_string(0) == b"success"
    assert len(cb.gemm_sbex.argtypes) == 23
    assert len(cb.set_workspace.argtypes) == 3
    if os.environ.get("PTCORE_TEST_REAL_CUDA"):
        return
    # a NULL handle: cuBLAS refuses it (CUBLAS_STATUS_NOT_INITIALIZED) after every
    # argument went through its ctypes conversion
    one = ctypes.c_float(1.0)
    st = cb.gemm_sbex(None, 0, 0, 4, 4, 4, ctypes.byref(one), 0, 0, 4, 16, 0, 0, 4, 16,
                      ctypes.byref(one), 0, 0, 4, 16, 1, 68, -1)
    assert st == 1
    with pytest.raises(_driver.CudaError, match="cublasGemmStridedBatchedEx.*initialized"):
        cb.check("cublasGemmStridedBatchedEx", st)
    assert cb.set_workspace(None, None, 0) == 1
    # the same call from C (ptcore.cuda.driver.fast_blas)
    assert cb.gemm_c is not None
    assert cb.gemm_c(0, 0, 0, 4, 4, 4, 1.0, 0, 0, 4, 16, 0, 0, 4, 16, 1.0, 0, 0, 4, 16, 1, 68, -1, 0) == 1


def test_cufft_symbols_plan_cache_and_errors():
    _lib("cufft")
    from ptcore.cuda.driver import cufft as _cufft
    c = _cufft.Cufft()
    assert c.version() >= 12000
    assert set(c.exec) == set(_cufft.TYPES)
    if os.environ.get("PTCORE_TEST_REAL_CUDA"):
        return
    with pytest.raises(RuntimeError, match=r"cufftPlanMany\(C2C, n=\[8\], batch=2, stride=1\) failed"):
        c.execute(0, 0, "C2C", (8,), 2, 0, 0, -1)
    assert not c._plans
    # an invalid plan handle is refused by cufftExec*, not a crash
    assert c.exec["Z2Z"](12345, None, None, -1) != 0
    with pytest.raises(ValueError, match="32-bit"):
        with c._lock:
            c._plan(0, "R2C", (1 << 16, 1 << 16), 1)


def test_cufft_plan_cache_and_call_order(monkeypatch):
    """Cufft over a fake library: plans cached per (device, kind, shape, batch, stride),
    the least recently used destroyed past the limit, cufftSetStream before
    every exec, C2C/Z2Z with the direction."""
    from ptcore.cuda.driver import cufft as _cufft
    log = []

    def fn(name, result=0):
        def f(*a):
            log.append((name,) + tuple(a))
            return result
        return f

    def plan_many(plan_p, rank, n, inembed, istride, idist, onembed, ostride, odist, typ, batch):
        plan_p._obj.value = 100 + len([x for x in log if x[0] == "plan"])
        log.append(("plan", rank, [n[i] for i in range(rank)], typ, batch, inembed, onembed))
        return 0
    lib = types.SimpleNamespace(cufftPlanMany=plan_many, cufftSetStream=fn("stream"),
                                cufftDestroy=fn("destroy"), cufftGetVersion=fn("version"),
                                **{"cufftExec" + k: fn("exec" + k) for k in _cufft.TYPES})
    # byref() objects expose the target as _obj
    monkeypatch.setattr(_cufft.ctypes, "byref", lambda obj: types.SimpleNamespace(_obj=obj))
    monkeypatch.setattr(_cufft, "PLAN_CACHE_SIZE", 2)
    c = _cufft.Cufft(lib=lib)
    c.execute(0, 7, "R2C", (4, 6), 3, 0x10, 0x20, -1)
    assert log[0] == ("plan", 2, [4, 6], 0x2a, 3, None, None)
    assert log[1] == ("stream", 100, 7) and log[2] == ("execR2C", 100, 0x10, 0x20)
    c.execute(0, 0, "R2C", (4, 6), 3, 0x10, 0x20, -1)          # cached plan, default stream
    assert [x[0] for x in log[3:]] == ["stream", "execR2C"] and log[3] == ("stream", 100, None)
    c.execute(0, 0, "R2C", (4, 6), 3, 0x10, 0x20, -1)          # the same stream: not set again
    assert [x[0] for x in log[5:]] == ["execR2C"]
    c.execute(0, 7, "R2C", (4, 6), 3, 0x10, 0x20, -1)
    assert log[6] == ("stream", 100, 7) and log[7][0] == "execR2C"
    c.execute(0, 7, "Z2Z", (8,), 1, 0x30, 0x30, 1)
    assert log[-1] == ("execZ2Z", 101, 0x30, 0x30, 1)
    c.execute(1, 7, "C2C", (8,), 1, 0x30, 0x30, -1)            # another device: its own plan
    assert ("destroy", 100) in log                              # LRU beyond 2 plans
    assert list(c._plans) == [(0, "Z2Z", (8,), 1, 1), (1, "C2C", (8,), 1, 1)]
    c.clear_plans()
    assert ("destroy", 101) in log and ("destroy", 102) in log and not c._plans
    # the interleaved layout: inembed = onembed = n, stride and distance 1, its own plan
    seen = []

    def plan_strided(plan_p, rank, n, inembed, istride, idist, onembed, ostride, odist, typ, batch):
        plan_p._obj.value = 200
        seen.append(([n[i] for i in range(rank)], [inembed[i] for i in range(rank)], istride, idist,
                     [onembed[i] for i in range(rank)], ostride, odist, typ, batch))
        return 0
    lib.cufftPlanMany = plan_strided
    c = _cufft.Cufft(lib=lib)
    c.execute(0, 7, "C2C", (16, 4), 5, 0x40, 0x80, 1, 5)
    assert seen == [([16, 4], [16, 4], 5, 1, [16, 4], 5, 1, 0x29, 5)]
    assert list(c._plans) == [(0, "C2C", (16, 4), 5, 5)] and log[-1] == ("execC2C", 200, 0x40, 0x80, 1)


_GEMM_ARGTYPES = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                  ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p,
                  ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_int,
                  ctypes.c_int, ctypes.c_int]


@pytest.mark.parametrize("path", ["ctypes", "C"])
def test_gemm_scalars_for_complex_types(path):
    """CUDA_C_32F / CUDA_C_64F GEMMs pass alpha and beta as cuComplex /
    cuDoubleComplex (two floats / doubles), the real types as one scalar,
    through ctypes and through the C caller (ptcore.cuda.driver.fast_blas) alike;
    the handle's stream is set only when it changes."""
    import struct
    import threading
    from ptcore.cuda.driver.fast_blas import GemmEx
    from ptcore.cuda.driver.real import RealDriver
    seen, streams = [], []

    def record(args, size):
        al, be = args[6], args[15]
        seen.append((ctypes.string_at(al, size), ctypes.string_at(be, size), args[8], args[21]))

    class FakeCublas:
        gemm_c = None

        def check(self, what, st):
            assert st == 0, what

        def set_stream(self, h, s):
            streams.append((h, s))
            return 0

        def gemm_sbex(self, *args):
            al, be = args[6], args[15]
            size = ctypes.sizeof(al._obj)
            record([ctypes.addressof(al._obj)] * 7 + list(args[7:15]) + [ctypes.addressof(be._obj)]
                   + list(args[16:]), size)
            return 0

    cb = FakeCublas()
    if path == "C":
        def c_gemm(*args):
            record(args, 16)            # (the checks below read each scalar's own size)
            return 0
        cfn = ctypes.CFUNCTYPE(ctypes.c_int, *_GEMM_ARGTYPES)(c_gemm)
        cb.gemm_c = GemmEx(ctypes.cast(cfn, ctypes.c_void_p).value, cfn)
    d = object.__new__(RealDriver)
    d.set_current = lambda dev: None
    d._blas_handle = lambda dev: 1
    d._cublas_tls = threading.local()
    d._cublas = cb
    d.gemm(0, 0, 2, 0, 2, 2, 2, 1 - 2j, 8, 4, 2, 16, 4, 2, 0.5j, 24, 4, 2, 68)
    d.gemm(0, 0, 0, 0, 2, 2, 2, 3 + 1j, 8, 5, 2, 16, 5, 2, 2, 24, 5, 2, 70)
    d.gemm(0, 7, 0, 0, 2, 2, 2, 1.5, 8, 1, 2, 16, 1, 2, 0.0, 24, 1, 2, 70)
    d.gemm(0, 0, 0, 0, 2, 2, 2, 1.5, 8, 0, 2, 16, 0, 2, 0.0, 24, 0, 2, 68)
    assert seen[0][0][:8] == struct.pack("<2f", 1, -2)
    assert seen[0][1][:8] == struct.pack("<2f", 0, 0.5) and seen[0][2:] == (4, 68)
    assert seen[1][0][:16] == struct.pack("<2d", 3, 1) and seen[1][1][:16] == struct.pack("<2d", 2, 0)
    assert seen[1][2:] == (5, 70)
    assert seen[2][0][:8] == struct.pack("<d", 1.5) and seen[2][1][:8] == struct.pack("<d", 0.0)
    assert seen[2][2:] == (1, 70)
    assert seen[3][0][:4] == struct.pack("<f", 1.5) and seen[3][2:] == (0, 68)
    # stream 0, then 7, then 0 again: three settings for four calls
    assert [s for _, s in streams] == [None, 7, None]


def test_gemm_c_caller_passes_every_argument():
    """Each of the 23 arguments reaches the C function with its value and type."""
    from ptcore.cuda.driver.fast_blas import GemmEx, SCALAR_DOUBLE
    got = []

    def c_gemm(*args):
        got.append(args[:6] + args[7:15] + args[16:]
                   + (ctypes.c_double.from_address(args[6]).value,
                      ctypes.c_double.from_address(args[15]).value))
        return 13
    cfn = ctypes.CFUNCTYPE(ctypes.c_int, *_GEMM_ARGTYPES)(c_gemm)
    g = GemmEx(ctypes.cast(cfn, ctypes.c_void_p).value, cfn)
    big = (1 << 40) + 3
    st = g(0xABCD00, 1, 2, 3, 4, 5, 0.25, big, 6, 7, -big, big + 8, 9, 10, 1 << 35, -4.5,
           big + 16, 11, 12, 13, 14, 70, -1, SCALAR_DOUBLE)
    assert st == 13
    assert got == [(0xABCD00, 1, 2, 3, 4, 5, big, 6, 7, -big, big + 8, 9, 10, 1 << 35,
                    big + 16, 11, 12, 13, 14, 70, -1, 0.25, -4.5)]
    with pytest.raises(ValueError, match="scalar kind"):
        g(0, 0, 0, 1, 1, 1, 1.0, 0, 0, 1, 0, 0, 0, 1, 0, 0.0, 0, 0, 1, 0, 1, 68, -1, 9)
    with pytest.raises(ValueError, match="NULL"):
        GemmEx(0)


def test_fake_stream_capture_and_graph_calls(fake, tmp_path):
    api, drv = fake
    s = drv.stream_create(1)
    with pytest.raises(_driver.CudaError, match="legacy"):
        drv.stream_begin_capture(0)
    with pytest.raises(ValueError, match="capture mode"):
        drv.stream_begin_capture(s, "loose")
    assert drv.stream_capture_info(s) == (0, 0)
    drv.stream_begin_capture(s, "thread_local")
    status, cid = drv.stream_capture_info(s)
    assert status == 1 and cid > 0
    assert drv.exchange_capture_mode("relaxed") == "global"
    assert drv.exchange_capture_mode("global") == "relaxed"
    g = drv.stream_end_capture(s)
    assert isinstance(g, int) and drv.stream_capture_info(s) == (0, 0)
    with pytest.raises(_driver.CudaError, match="cuStreamEndCapture"):
        drv.stream_end_capture(s)
    e = drv.graph_instantiate(g)
    drv.graph_launch(e, s)
    assert api.calls[-1] == ("cuGraphLaunch", s)
    drv.graph_debug_dot_print(g, tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    drv.graph_exec_destroy(e)
    drv.graph_destroy(g)
    with pytest.raises(_driver.CudaError, match="invalid handle"):
        drv.graph_launch(e, s)


def test_fake_profiler_start_stop(fake):
    api, drv = fake
    drv.profiler_start()
    drv.profiler_stop()
    assert [c for c, _ in api.calls[-2:]] == ["cuProfilerStart", "cuProfilerStop"]


@pytest.mark.parametrize("major,size", [(9, 32 << 20), (8, (8 << 20) + (128 << 10))])
def test_cublas_workspace_follows_every_stream_change(monkeypatch, major, size):
    """RealDriver gives each (cuBLAS handle, stream) a workspace from the caching
    allocator right after cublasSetStream (which resets it), as PyTorch, so cuBLAS
    never allocates itself during a CUDA graph capture."""
    from ptcore.cuda.driver import real as _real_driver
    calls = []

    class FakeCublas:
        def set_stream(self, h, s):
            calls.append(("stream", h, s))
            return 0

        def set_workspace(self, h, ptr, n):
            calls.append(("workspace", h, ptr, n))
            return 0

        def check(self, what, st):
            assert st == 0, what

    blocks = []

    class Alloc:
        def malloc(self, n, stream):
            blocks.append((n, stream))
            return types.SimpleNamespace(ptr=0xA000 + 0x100 * len(blocks), size=n)
    monkeypatch.setattr(_real_driver, "_device_allocator", lambda idx: Alloc())
    d = object.__new__(RealDriver)
    d._cublas_tls = threading.local()
    d._cublas = FakeCublas()
    d.device_properties = lambda dev: {"major": major}
    d._blas_stream(5, 7, 0)
    d._blas_stream(5, 7, 0)          # no change: nothing set
    d._blas_stream(5, 9, 0)
    d._blas_stream(5, 7, 0)          # back on 7: its own block again
    assert blocks == [(size, 7), (size, 9)]
    assert calls == [("stream", 5, 7), ("workspace", 5, 0xA100, size),
                     ("stream", 5, 9), ("workspace", 5, 0xA200, size),
                     ("stream", 5, 7), ("workspace", 5, 0xA100, size)]
