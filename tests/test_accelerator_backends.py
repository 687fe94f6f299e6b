"""ptcore.accelerator, ptcore.cuda without a GPU, ptcore.backends and
ptcore.random against torch 2.13 on the same (GPU-less) machine."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ptcore
from ptcore._cpu_features import detect_cpu_capability

torch = pytest.importorskip("torch")

# the directory holding the ptcore this test imported (the source tree with its
# compiled modules, or site-packages after `pip install .`): subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
needs_no_gpu = pytest.mark.skipif(ptcore.cuda.is_available() or torch.cuda.is_available(),
                                  reason="compares the GPU-less behaviour")


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared below
        return ("raise", type(e))


# -- accelerator ---------------------------------------------------------------------

@needs_no_gpu
def test_accelerator_without_device_matches_torch():
    for name in ("is_available", "current_accelerator", "device_count"):
        assert getattr(ptcore.accelerator, name)() == getattr(torch.accelerator, name)()
    for name in ("current_device_index", "synchronize"):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                               "available"):
            getattr(ptcore.accelerator, name)()
    with pytest.raises(RuntimeError, match="none is available"):
        ptcore.accelerator.set_device_index(0)
    for name in ("empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
                 "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
                 "reset_accumulated_memory_stats", "reset_peak_memory_stats",
                 "get_device_capability", "current_stream"):
        assert _outcome(getattr(torch.accelerator, name))[0] == "raise"
        with pytest.raises(RuntimeError, match="none is available"):
            getattr(ptcore.accelerator, name)()
    assert set(torch.accelerator.__all__) - set(ptcore.accelerator.__all__) == {"Graph"}
    for L in (torch, ptcore):
        with pytest.raises(ValueError, match="specified index or an integer"):
            L.accelerator.set_device_index(None)
        with L.accelerator.device_index(None):
            pass
        with pytest.raises(RuntimeError):
            with L.accelerator.device_index(0):
                pass


def test_accelerator_follows_cuda_is_available(monkeypatch):
    monkeypatch.setattr(ptcore.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ptcore.cuda, "device_count", lambda: 2)
    assert ptcore.accelerator.is_available()
    assert ptcore.accelerator.current_accelerator() == ptcore.device("cuda")
    assert ptcore.accelerator.device_count() == 2


def test_device_selection_idiom():
    dev = (ptcore.accelerator.current_accelerator() if ptcore.accelerator.is_available()
           else ptcore.device("cpu"))
    assert str(dev) == ("cuda" if ptcore.cuda.is_available() else "cpu")
    if ptcore.cuda.is_available() == torch.cuda.is_available():
        tdev = (torch.accelerator.current_accelerator() if torch.accelerator.is_available()
                else torch.device("cpu"))
        assert str(dev) == str(tdev)
    assert ptcore.ones(2, device=dev).device == dev


# -- cuda without a GPU ---------------------------------------------------------------

@needs_no_gpu
def test_cuda_queries_without_gpu_match_torch():
    C, T = ptcore.cuda, torch.cuda
    assert C.device_count() == T.device_count() == 0
    assert C.is_bf16_supported() is T.is_bf16_supported() is False
    assert C.is_initialized() is T.is_initialized() is False
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):
        assert getattr(C, name)() == getattr(T, name)() == 0
    assert C.empty_cache() is None and T.empty_cache() is None
    assert C.get_rng_state_all() == T.get_rng_state_all() == []
    # lazy seeding: never an error
    for name, args in (("manual_seed", (1,)), ("manual_seed_all", (2,)), ("seed", ()),
                       ("seed_all", ())):
        assert getattr(C, name)(*args) is None and getattr(T, name)(*args) is None
    C.set_rng_state(ptcore.zeros(16, dtype=ptcore.uint8))
    C.set_rng_state_all([])
    # reading a device generator or querying a device needs CUDA
    for name in ("initial_seed", "get_rng_state", "current_device", "synchronize",
                 "get_device_name"):
        assert _outcome(getattr(C, name))[0] == "raise" == _outcome(getattr(T, name))[0]
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            getattr(C, name)()
    assert ptcore.manual_seed(5).initial_seed() == 5      # seeds CUDA lazily too


@needs_no_gpu
@pytest.mark.parametrize("make", [lambda L: L.zeros(1, device="cuda"),
                                  lambda L: L.zeros(1).cuda(),
                                  lambda L: L.zeros(1).to("cuda"),
                                  lambda L: L.ones(2, device="cuda:0")],
                         ids=["factory", "cuda()", "to", "factory_index"])
def test_requesting_cuda_tensor_raises(make):
    assert _outcome(lambda: make(torch))[0] == "raise"
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        make(ptcore)


@needs_no_gpu
def test_set_default_device_cuda_without_gpu_raises():
    for dev in ("cuda", ptcore.device("cuda")):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            ptcore.set_default_device(dev)
    assert ptcore.get_default_device() == ptcore.device("cpu")
    # torch records it and fails at the first factory call; ptcore's factories do not
    # consult the default device, so it refuses at once instead of making CPU tensors
    try:
        torch.set_default_device("cuda")
        assert _outcome(lambda: torch.zeros(1))[0] == "raise"
    finally:
        torch.set_default_device(None)


# -- backends ----------------------------------------------------------------------

@needs_no_gpu
def test_backend_defaults_and_queries_match_torch():
    P, T = ptcore.backends, torch.backends
    for mod, names in (("cudnn", ("enabled", "benchmark", "deterministic", "allow_tf32")),
                       ("mkldnn", ("enabled",))):
        for n in names:
            assert getattr(getattr(P, mod), n) == getattr(getattr(T, mod), n), (mod, n)
    assert P.cudnn.is_available() is T.cudnn.is_available() is False
    assert P.cudnn.version() is None and T.cudnn.version() is None
    assert P.mps.is_available() is T.mps.is_available() is False
    assert P.mps.is_built() is T.mps.is_built() is False
    assert P.openmp.is_available() is T.openmp.is_available()
    assert P.opt_einsum.is_available() == T.opt_einsum.is_available()
    assert P.opt_einsum.enabled == T.opt_einsum.enabled
    assert P.opt_einsum.strategy == T.opt_einsum.strategy
    assert P.cpu.get_cpu_capability() == T.cpu.get_cpu_capability()
    for n in ("flash_sdp_enabled", "math_sdp_enabled", "mem_efficient_sdp_enabled",
              "cudnn_sdp_enabled"):
        assert getattr(P.cuda, n)() == getattr(T.cuda, n)()
    assert P.cuda.matmul.allow_fp16_reduced_precision_reduction == \
        T.cuda.matmul.allow_fp16_reduced_precision_reduction
    assert P.cuda.matmul.allow_bf16_reduced_precision_reduction == \
        T.cuda.matmul.allow_bf16_reduced_precision_reduction
    assert list(P.cuda.SDPBackend.__members__) == list(T.cuda.SDPBackend.__members__)
    assert [int(v) for v in P.cuda.SDPBackend.__members__.values()] == \
        [int(v) for v in T.cuda.SDPBackend.__members__.values()]


def test_cpu_capability_follows_aten_cpu_capability_as_torch():
    # ATEN_CPU_CAPABILITY picks the capability both report (torch's lowercase names,
    # unchecked against the CPU); another value is ignored with a warning, leaving
    # the CPU's.  The capability is fixed per process, so each value runs in a child
    code = ("import warnings; warnings.simplefilter('always'); import {0}\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    cap = {0}.backends.cpu.get_cpu_capability()\n"
            "print(cap, any('ignoring invalid value for ATEN_CPU_CAPABILITY' in str(x.message)"
            " for x in w))")
    for value in ("default", "avx512", "AVX2"):
        env = dict(os.environ, ATEN_CPU_CAPABILITY=value,
                   PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        out = {}
        for lib in ("torch", "ptcore"):
            r = subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True,
                               text=True, env=env, timeout=120)
            assert r.returncode == 0, r.stderr[-2000:]
            out[lib] = r.stdout.split()
        assert out["ptcore"] == out["torch"], (value, out)
    assert out["ptcore"] == [detect_cpu_capability(), "True"]


def test_cudnn_flags_are_stored_and_checked():
    import ptcore.backends.cudnn as cudnn
    old = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert ptcore.backends.cudnn.benchmark is True
        for L in (torch, ptcore):
            with pytest.raises(RuntimeError, match="expects a bool"):
                L.backends.cudnn.benchmark = 1
        with ptcore.backends.cudnn.flags(enabled=False, benchmark=False):
            assert cudnn.enabled is False and cudnn.benchmark is False
        assert cudnn.enabled is True and cudnn.benchmark is True
        cudnn.deterministic = True            # independent of use_deterministic_algorithms
        assert ptcore.are_deterministic_algorithms_enabled() is False
    finally:
        cudnn.benchmark = old
        cudnn.deterministic = False


def test_matmul_precision_and_allow_tf32_are_one_setting():
    try:
        for L in (torch, ptcore):
            L.set_float32_matmul_precision("high")
            assert L.backends.cuda.matmul.allow_tf32 is True
            L.set_float32_matmul_precision("medium")
            assert L.backends.cuda.matmul.allow_tf32 is True
            L.set_float32_matmul_precision("highest")
            assert L.backends.cuda.matmul.allow_tf32 is False
        ptcore.backends.cuda.matmul.allow_tf32 = True
        assert ptcore.get_float32_matmul_precision() == "high"
        ptcore.backends.cuda.matmul.allow_tf32 = False
        assert ptcore.get_float32_matmul_precision() == "highest"
        with pytest.raises(AttributeError):
            ptcore.backends.cuda.matmul.no_such_flag
    finally:
        torch.set_float32_matmul_precision("highest")
        ptcore.set_float32_matmul_precision("highest")


def test_mha_fastpath_switch_as_torch():
    for L in (torch, ptcore):
        assert L.backends.mha.get_fastpath_enabled() is True
        L.backends.mha.set_fastpath_enabled(False)
        assert L.backends.mha.get_fastpath_enabled() is False
        L.backends.mha.set_fastpath_enabled(True)
    with pytest.raises(RuntimeError, match="expects a bool"):
        ptcore.backends.mha.set_fastpath_enabled(1)
    with ptcore.backends.mkl.verbose(ptcore.backends.mkl.VERBOSE_ON):
        assert ptcore.backends.mkl.is_available() is False


def test_sdp_flags_and_deprecated_context():
    for L in (torch, ptcore):
        B = L.backends.cuda
        B.enable_flash_sdp(False)
        assert B.flash_sdp_enabled() is False
        B.enable_flash_sdp(True)
        with pytest.warns(FutureWarning, match="sdp_kernel"):
            with B.sdp_kernel(enable_flash=False, enable_math=True):
                assert B.flash_sdp_enabled() is False and B.math_sdp_enabled() is True
        assert B.flash_sdp_enabled() is True


def test_use_deterministic_algorithms_matches_torch():
    for L in (torch, ptcore):
        with pytest.raises(TypeError, match="must be bool"):
            L.use_deterministic_algorithms(1)
        L.use_deterministic_algorithms(True, warn_only=True)
        assert L.are_deterministic_algorithms_enabled()
        assert L.is_deterministic_algorithms_warn_only_enabled()
        assert L.get_deterministic_debug_mode() == 1
        L.use_deterministic_algorithms(False)
        assert not L.are_deterministic_algorithms_enabled()


# -- random ------------------------------------------------------------------------

def test_random_module_matches_torch():
    for L in (torch, ptcore):
        assert L.random.manual_seed(7).initial_seed() == 7
        assert L.random.initial_seed() == L.initial_seed() == 7
        st = L.random.get_rng_state()
        a = L.rand(3)
        L.random.set_rng_state(st)
        assert L.rand(3).tolist() == a.tolist()
        with L.random.fork_rng():
            L.rand(5)
        b = L.rand(3)
        L.random.set_rng_state(st)
        L.rand(3)
        assert L.rand(3).tolist() == b.tolist()
        with L.random.fork_rng(enabled=False):
            pass
        s = L.random.seed()
        assert s == L.initial_seed() and 0 <= s < 2 ** 64
        s = L.seed()
        assert s == L.initial_seed()


def test_default_generator_seed_per_process_as_torch():
    code = "import {0}; print({0}.initial_seed(), {0}.Generator().initial_seed())"
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {}
    for lib in ("torch", "ptcore"):
        runs = [subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True,
                               text=True, env=env, timeout=120) for _ in range(2)]
        assert all(r.returncode == 0 for r in runs), runs[0].stderr
        out[lib] = [tuple(int(v) for v in r.stdout.split()) for r in runs]
    for lib in ("torch", "ptcore"):
        (d1, g1), (d2, g2) = out[lib]
        assert d1 != d2                         # the default generator: fresh entropy
        assert g1 == g2 == 67280421310721       # a new Generator: the fixed default seed


# -- parallel, compile, dlpack ----------------------------------------------------

@needs_no_gpu
def test_data_parallel_on_cpu_wraps_as_torch():
    for L in (torch, ptcore):
        L.manual_seed(0)
        inner = L.nn.Linear(3, 2)
        dp = L.nn.DataParallel(inner)
        assert dp.module is inner and dp.device_ids == []
        assert list(dp.state_dict()) == ["module.weight", "module.bias"]
        x = L.ones(4, 3)
        assert (dp(x) == inner(x)).all()
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            L.nn.parallel.data_parallel(inner, x)
        out = dp(x)
        out.sum().backward()
        assert inner.weight.grad.shape == (2, 3)
        assert not hasattr(dp, "output_device")
    p = ptcore.nn.DataParallel(ptcore.nn.Linear(3, 2))
    t = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert repr(p).replace("ptcore", "torch") == repr(t)


def test_ddp_needs_process_group_as_torch():
    for L in (torch, ptcore):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2))
    from ptcore.nn.parallel.distributed import DistributedDataParallel
    assert DistributedDataParallel is ptcore.nn.parallel.DistributedDataParallel


def test_compile_returns_runnable_model():
    m = ptcore.nn.Linear(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (a real compiler: no warning)
        cm = ptcore.compile(m)
        x = ptcore.ones(1, 2)
        assert (cm(x) == m(x)).all()
        f = ptcore.compile(mode="max-autotune")(lambda t: t * 2)
    assert f(ptcore.ones(2)).tolist() == [2.0, 2.0]
    # torch 2.13's check (torch.compile(3) imports torch._dynamo, too slow to compare here)
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'>"):
        ptcore.compile(3)
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError, match="Unrecognized mode"):
            L.compile(m, mode="fastest")
    # an unknown backend name fails at once (torch's InvalidBackend, a RuntimeError)
    from ptcore._dynamo.exc import InvalidBackend
    with pytest.raises(InvalidBackend, match="Invalid backend: 'nonexistent'"):
        ptcore.compile(m, backend="nonexistent")
    with pytest.raises(RuntimeError):
        ptcore.compile(backend="nonexistent")
    assert ptcore.compile(m, backend="aot_eager", mode="lite")(x).shape == (1, 3)
    assert ptcore.compile(lambda t: t + 1, backend=lambda gm, ex: gm)(x).shape == (1, 2)



def test_utils_dlpack_roundtrip_with_torch_and_numpy():
    import ptcore.utils.dlpack as D
    x = ptcore.arange(6.0).reshape(2, 3)
    t = torch.utils.dlpack.from_dlpack(D.to_dlpack(x))
    assert t.tolist() == x.tolist()
    y = D.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4)))
    assert y.dtype == ptcore.int64 and y.tolist() == [0, 1, 2, 3]
    z = D.from_dlpack(np.ones(3, dtype=np.float32))
    z[0] = 5
    assert z.tolist() == [5.0, 1.0, 1.0]


def test_get_device_module():
    import ptcore.cpu
    import ptcore.cuda
    assert ptcore.get_device_module("cuda") is ptcore.cuda
    assert ptcore.get_device_module(ptcore.device("cpu")) is ptcore.cpu
    expect = ptcore.cuda if ptcore.cuda.is_available() else ptcore.cpu
    assert ptcore.get_device_module() is expect
    with pytest.raises(RuntimeError):
        ptcore.get_device_module("mps")


@pytest.fixture
def fp32_precision_restored():
    from ptcore.backends import _fp32_precision
    saved = dict(_fp32_precision._table)
    prec, tprec = ptcore.get_float32_matmul_precision(), torch.get_float32_matmul_precision()
    yield
    ptcore.set_float32_matmul_precision(prec)
    _fp32_precision._table.update(saved)
    torch.set_float32_matmul_precision(tprec)


def _fp32_precisions(L):
    B = L.backends
    return (B.fp32_precision, B.cuda.matmul.fp32_precision, B.cudnn.fp32_precision,
            B.cudnn.conv.fp32_precision, B.cudnn.rnn.fp32_precision, B.mkldnn.fp32_precision,
            B.mkldnn.matmul.fp32_precision, B.mkldnn.conv.fp32_precision, B.mkldnn.rnn.fp32_precision)


def test_fp32_precision_defaults_and_errors_match_torch(fp32_precision_restored):
    """torch 2.9's fp32_precision switches: defaults, inheritance from the generic
    setting inside ``backends.flags``, and RuntimeError for a bad value."""
    assert _fp32_precisions(ptcore) == _fp32_precisions(torch)
    for L in (torch, ptcore):
        with pytest.raises(RuntimeError, match="Unknown precision"):
            L.backends.cuda.matmul.fp32_precision = "x"
        with pytest.raises(RuntimeError, match="does not support precision 'bf16'"):
            L.backends.cuda.matmul.fp32_precision = "bf16"
        with pytest.raises(AttributeError):
            L.backends.cudnn.conv.other = 1
    got = {}
    for L in (torch, ptcore):
        with L.backends.flags(fp32_precision="tf32"):
            inside = _fp32_precisions(L)
        got[L] = (inside, _fp32_precisions(L))
    assert got[ptcore] == got[torch]


def test_fp32_precision_follows_the_legacy_switches(fp32_precision_restored):
    got = {}
    for L in (torch, ptcore):
        B, seen = L.backends, []
        for p in ("highest", "high", "medium"):
            L.set_float32_matmul_precision(p)
            seen.append((B.cuda.matmul.fp32_precision, B.mkldnn.matmul.fp32_precision))
        for v in (False, True):
            B.cuda.matmul.allow_tf32 = v
            seen.append(B.cuda.matmul.fp32_precision)
        L.set_float32_matmul_precision("highest")
        got[L] = seen
    assert got[ptcore] == got[torch]


def test_fp32_precision_tf32_drives_cuda_matmul(fp32_precision_restored):
    """The new switch and the legacy ones are one setting for ptcore's cuBLAS calls."""
    B = ptcore.backends
    B.cuda.matmul.fp32_precision = "tf32"
    assert B.cuda.matmul.allow_tf32 and ptcore.get_float32_matmul_precision() == "high"
    B.cuda.matmul.fp32_precision = "ieee"
    assert not B.cuda.matmul.allow_tf32 and ptcore.get_float32_matmul_precision() == "highest"
    B.mkldnn.matmul.fp32_precision = "bf16"
    assert B.mkldnn.matmul.fp32_precision == "bf16"
    B.cudnn.conv.fp32_precision = "ieee"
    assert B.cudnn.conv.fp32_precision == "ieee" and B.cudnn.rnn.fp32_precision == "tf32"


def test_config_reports():
    """``torch.__config__.show()`` / ``parallel_info()`` are text reports naming the build and threads."""
    s = ptcore.__config__.show()
    assert s.startswith("ptcore built with:") and "CPU capability usage" in s
    p = ptcore.__config__.parallel_info()
    assert f"at::get_num_threads() : {ptcore.get_num_threads()}" in p
    assert "OMP_NUM_THREADS" in p
    assert isinstance(ptcore.__config__._cxx_flags(), str)


def test_cudnn_allow_tf32_is_conv_and_rnn_fp32_precision(fp32_precision_restored):
    """``backends.cudnn.allow_tf32`` is the legacy face of ``cudnn.conv`` and
    ``cudnn.rnn.fp32_precision`` (what ptcore's CUDA convolutions read), as
    in torch: setting it sets both, reading it after they were set apart is a
    RuntimeError, ``flags(allow_tf32=)`` restores it, a non-bool is refused."""
    got = {}
    for L in (torch, ptcore):
        C, seen = L.backends.cudnn, []
        for v in (False, True):
            C.allow_tf32 = v
            seen.append((C.allow_tf32, C.conv.fp32_precision, C.rnn.fp32_precision))
        with C.flags(enabled=C.enabled, allow_tf32=False):
            seen.append((C.allow_tf32, C.conv.fp32_precision))
        seen.append(C.allow_tf32)
        C.conv.fp32_precision = "ieee"
        with pytest.raises(RuntimeError):
            C.allow_tf32
        seen.append(C.rnn.fp32_precision)
        with pytest.raises(RuntimeError, match="expects a bool"):
            C.allow_tf32 = 1
        C.allow_tf32 = True
        got[L] = seen
    assert got[ptcore] == got[torch]
