"""The root names training scripts touch on their first lines (torch.compiler, torch._dynamo,
Stream/Event, the absent devices' modules, types, torch_version, sym_*, cond/while_loop,
futures, build flags), compared with torch."""
import math

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _raises_like(fn_pt, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)):
        fn_pt()


# -- compiler / _dynamo -------------------------------------------------------------------

def test_compiler_queries_and_decorators():
    for mod in (ptcore.compiler, ptcore._dynamo):
        assert mod.is_compiling() is torch.compiler.is_compiling() is False
        assert mod.reset() is None

        @mod.disable
        def f(x):
            return x + 1
        assert f(1) == 2
        assert mod.disable(recursive=False)(f) is f
    assert ptcore.compiler.is_dynamo_compiling() is False
    assert ptcore.compiler.is_exporting() is False
    assert "inductor" in ptcore.compiler.list_backends()
    assert set(ptcore.compiler.list_backends()) <= set(torch.compiler.list_backends(exclude_tags=()))
    assert ptcore.compiler.get_default_backend() == torch.compiler.get_default_backend()
    _raises_like(lambda: ptcore.compiler.disable(3), lambda: torch.compiler.disable(3))
    with ptcore.compiler.set_stance("force_eager"):
        pass


def test_dynamo_config_defaults_aliases_and_unknown_names():
    cfg, tcfg = ptcore._dynamo.config, torch._dynamo.config
    for name in ("suppress_errors", "recompile_limit", "cache_size_limit", "verbose",
                 "capture_scalar_outputs", "optimize_ddp", "automatic_dynamic_shapes",
                 "accumulated_cache_size_limit"):
        assert getattr(cfg, name) == getattr(tcfg, name), name
    old = cfg.suppress_errors
    cfg.suppress_errors = True
    assert cfg.suppress_errors is True
    cfg.suppress_errors = old
    cfg.cache_size_limit = 64
    assert cfg.recompile_limit == 64
    cfg.recompile_limit = 8
    with cfg.patch(verbose=True):
        assert cfg.verbose is True
    assert cfg.verbose is False
    with pytest.raises(AttributeError):
        cfg.no_such_setting = 1
    with pytest.raises(AttributeError):
        cfg.no_such_setting


def test_dynamo_marks_and_optimize():
    x = ptcore.ones(3, 4)
    ptcore._dynamo.mark_dynamic(x, 0)
    ptcore._dynamo.maybe_mark_dynamic(x, 1)
    ptcore._dynamo.mark_static(x)
    with pytest.raises(TypeError):
        ptcore._dynamo.mark_dynamic(3, 0)

    def f(a):
        return a * 2
    # a compiled function, as torch's (which is not f either)
    g = ptcore._dynamo.optimize("inductor")(f)
    assert g is not f and g(x).tolist() == f(x).tolist()
    assert ptcore._dynamo.optimize("inductor", disable=True)(f) is f
    with ptcore._dynamo.optimize("eager"):
        pass
    assert ptcore._dynamo.run(f) is f
    ptcore._dynamo.graph_break()


# -- Stream / Event -------------------------------------------------------------------------

def test_cpu_stream_as_torch():
    s, ts = ptcore.Stream(), torch.Stream()
    assert str(s.device) == str(ts.device) == "cpu"
    assert (s.device_type, s.device_index, s.stream_id) == \
        (ts.device_type, ts.device_index, ts.stream_id)
    assert s.query() is ts.query() is True
    assert s.synchronize() is None
    assert s == ptcore.Stream("cpu") and hash(s) == hash(ptcore.Stream("cpu"))
    with s:
        pass
    assert repr(s).replace("ptcore", "torch") == repr(ts)
    assert ptcore.Stream(priority=-1) == s


def test_cpu_event_as_torch():
    e, te = ptcore.Event(), torch.Event()
    assert str(e.device) == str(te.device)
    assert e.query() is te.query() is True
    assert e.synchronize() is None and e.wait() is None
    assert repr(e).replace("ptcore", "torch").startswith(repr(te).split(", event_flag")[0])
    s, ts = ptcore.Stream(), torch.Stream()
    _raises_like(lambda: e.record(s), lambda: te.record(ts))
    _raises_like(lambda: s.record_event(), lambda: ts.record_event())
    _raises_like(lambda: s.wait_stream(s), lambda: ts.wait_stream(ts))
    s.wait_event(e)
    _raises_like(lambda: e.elapsed_time(ptcore.Event()), lambda: te.elapsed_time(torch.Event()))


def test_stream_without_accelerator():
    if ptcore.accelerator.is_available():
        pytest.skip("an accelerator is present")
    _raises_like(lambda: ptcore.Stream(0), lambda: torch.Stream(0))
    with pytest.raises(RuntimeError):
        ptcore.Stream("meta")
    with pytest.raises(TypeError):
        ptcore.Stream(priority=0.5)


# -- mps / xpu / mtia -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mps", "xpu", "mtia"])
def test_absent_device_modules(name):
    mod, tmod = getattr(ptcore, name), getattr(torch, name)
    for fn in ("is_available", "device_count", "is_initialized", "seed", "seed_all",
               "memory_allocated", "empty_cache", "synchronize", "current_device", "init",
               "get_rng_state", "memory_stats", "is_bf16_supported", "current_allocated_memory"):
        if not hasattr(tmod, fn):
            continue
        assert hasattr(mod, fn), fn
        try:
            expect = getattr(tmod, fn)()
        except Exception as e:
            with pytest.raises(type(e)):
                getattr(mod, fn)()
        else:
            assert getattr(mod, fn)() == expect, fn
    assert mod.manual_seed(3) is None and tmod.manual_seed(3) is None
    assert ptcore.backends.mps.is_available() is torch.backends.mps.is_available()


# -- types / torch_version ------------------------------------------------------------------

def test_types_aliases():
    t = ptcore.types
    assert t.Number == torch.types.Number
    assert t.Size is ptcore.Size and t.Tensor is ptcore.Tensor
    assert t._size.__args__[0] is ptcore.Size
    assert ptcore.device in t.Device.__args__ and str in t.Device.__args__
    assert t.py_sym_types == (ptcore.SymInt, ptcore.SymFloat, ptcore.SymBool)


@pytest.mark.parametrize("a, b", [("2.13.0", "2.0"), ("2.13.0", "2.13"), ("2.13.0+cpu", "2.13.0"),
                                  ("2.13.0a0", "2.13.0"), ("2.13.0.dev20250101", "2.13.0a0"),
                                  ("1.10.0", "1.9.1"), ("0.1.0.dev0", "0.1"),
                                  ("2.1.0.post1", "2.1.0"), ("2.0.0rc1", "2.0.0b2"),
                                  ("parrot", "2.0")])
def test_torch_version_comparisons(a, b):
    from torch.torch_version import TorchVersion as T
    P = ptcore.torch_version.TorchVersion
    for x, y in ((a, b), (b, a), (a, a)):
        for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
            assert getattr(P(x), op)(y) == getattr(T(x), op)(y), (x, op, y)
    tup = (2, 0)
    if a[0].isdigit():
        assert (P(a) > tup) == (T(a) > tup)


def test_version_is_a_torch_version():
    v = ptcore.__version__
    assert isinstance(v, ptcore.torch_version.TorchVersion) and isinstance(v, str)
    assert v == ptcore.version.__version__ and hash(v) == hash(str(v))
    assert (v >= "0.0.1") and not (v >= "99.0") and v > (0, 0, 1)


# -- sym_* ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [
    ("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_float", (3,)), ("sym_max", (2, 5.0)),
    ("sym_max", (1, 2)), ("sym_max", (True, 0)), ("sym_min", (1.0, 2)), ("sym_min", (4, 3)),
    ("sym_not", (True,)), ("sym_sqrt", (4,)), ("sym_sqrt", (-1,)), ("sym_ite", (True, 1, 2)),
    ("sym_ite", (False, 1.0, 2.0)), ("sym_ite", (True, 1, 2.0)), ("sym_sum", ([1, 2, 3.0],)),
    ("sym_sum", (1, 2, 3)), ("sym_int", ("a",)), ("sym_max", (np.int64(2), 3.5)),
])
def test_sym_functions_on_numbers(fn, args):
    try:
        expect = getattr(torch, fn)(*args)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(ptcore, fn)(*args)
        return
    got = getattr(ptcore, fn)(*args)
    assert type(got) is type(expect) and got == expect


def test_sym_functions_on_tensors():
    assert ptcore.sym_int(ptcore.tensor(3.7)) == torch.sym_int(torch.tensor(3.7)) == 3
    assert ptcore.sym_float(ptcore.tensor(3)) == torch.sym_float(torch.tensor(3)) == 3.0
    assert ptcore.sym_not(ptcore.tensor(True)) is torch.sym_not(torch.tensor(True))
    assert ptcore.sym_sqrt(ptcore.tensor(4.0)) == torch.sym_sqrt(torch.tensor(4.0))
    s = ptcore.sym_sum([ptcore.tensor(1), 2])
    assert isinstance(s, ptcore.Tensor) and s.item() == torch.sym_sum([torch.tensor(1), 2]).item()
    _raises_like(lambda: ptcore.sym_max(ptcore.tensor(1), 2),
                 lambda: torch.sym_max(torch.tensor(1), 2))
    _raises_like(lambda: ptcore.sym_ite(ptcore.tensor(True), 1, 2),
                 lambda: torch.sym_ite(torch.tensor(True), 1, 2))
    assert not isinstance(ptcore.ones(3).shape[0], ptcore.SymInt)
    assert not isinstance(1.5, ptcore.SymFloat) and not isinstance(True, ptcore.SymBool)


# -- cond / while_loop --------------------------------------------------------------------------

def test_cond():
    x, tx = ptcore.arange(3.0), torch.arange(3.0)
    for pred in (True, False, 1, 0.0):
        got = ptcore.cond(pred, lambda a: a + 1, lambda a: a - 1, (x,))
        exp = torch.cond(pred, lambda a: a + 1, lambda a: a - 1, (tx,))
        np.testing.assert_array_equal(got.numpy(), exp.numpy())
    got = ptcore.cond(x.sum() > 0, lambda a: (a * 2, a), lambda a: (a, a), [x])
    assert isinstance(got, tuple) and got[0].tolist() == [0.0, 2.0, 4.0]
    assert ptcore.cond(x.sum() < 0, lambda: x + 1, lambda: x - 1).tolist() == [-1.0, 0.0, 1.0]
    _raises_like(lambda: ptcore.cond(ptcore.ones(2) > 0, lambda a: a, lambda a: a, (x,)),
                 lambda: torch.cond(torch.ones(2) > 0, lambda a: a, lambda a: a, (tx,)))


def test_while_loop():
    got = ptcore.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + 2.0),
                            (ptcore.tensor(0), ptcore.zeros(3)))
    exp = torch.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + 2.0),
                           (torch.tensor(0), torch.zeros(3)))
    assert isinstance(got, tuple) and got[0].item() == exp[0].item()
    np.testing.assert_array_equal(got[1].numpy(), exp[1].numpy())
    one = ptcore.while_loop(lambda i: i < 5, lambda i: i + 2, [ptcore.tensor(0)])
    assert isinstance(one, ptcore.Tensor) and one.item() == 6
    assert ptcore.while_loop(lambda i: i < 0, lambda i: (i,), (ptcore.tensor(1),))[0].item() == 1


# -- futures / fork / wait ----------------------------------------------------------------------

def test_fork_wait_and_futures():
    fut = ptcore.fork(lambda a, b: a + b, 2, b=3)
    assert isinstance(fut, ptcore.futures.Future) and fut.done()
    assert ptcore.wait(fut) == 5 and ptcore.jit.wait(fut) == 5
    bad = ptcore.fork(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()
    f1, f2 = ptcore.futures.Future(), ptcore.futures.Future()
    done = ptcore.futures.collect_all([f1, f2])
    chained = f1.then(lambda f: f.value() * 10)
    assert not done.done()
    f1.set_result(4)
    assert chained.wait() == 40 and not done.done()
    f2.set_result(5)
    assert done.done() and [f.value() for f in done.wait()] == [4, 5]
    assert ptcore.futures.wait_all([f1, f2]) == [4, 5]
    with pytest.raises(RuntimeError):
        f1.set_result(1)
    f3 = ptcore.futures.Future()
    f3.set_exception(ValueError("x"))
    with pytest.raises(ValueError):
        ptcore.futures.wait_all([f3])
    tf = torch.futures.Future()
    tf.set_result(1)
    assert torch.futures.wait_all([tf]) == [1]


# -- build flags and misc -----------------------------------------------------------------------

def test_build_flags_and_misc():
    assert ptcore.has_lapack is True and ptcore.has_spectral is True
    assert ptcore.has_openmp is ptcore.backends.openmp.is_available()
    assert ptcore.has_mkl is ptcore.backends.mkl.is_available()
    assert ptcore.is_vulkan_available() is torch.is_vulkan_available() is False
    assert ptcore.init_num_threads() is None
    assert ptcore.is_distributed(ptcore.ones(2)) is torch.is_distributed(torch.ones(2))
    _raises_like(lambda: ptcore.is_distributed(3), lambda: torch.is_distributed(3))
    assert issubclass(ptcore.AcceleratorError, RuntimeError)
    from ptcore.cuda.driver.interface import CudaError
    assert issubclass(CudaError, ptcore.AcceleratorError)
    assert math.isclose(ptcore.sym_sqrt(2), math.sqrt(2))


def test_inductor_config_defaults_groups_and_unknown_names():
    cfg, tcfg = ptcore._inductor.config, torch._inductor.config
    for name in ("coordinate_descent_tuning", "max_autotune", "freezing", "epilogue_fusion",
                 "fx_graph_cache", "compile_threads"):
        assert getattr(cfg, name) == getattr(tcfg, name), name
    assert cfg.triton.cudagraphs == tcfg.triton.cudagraphs
    assert cfg.cpp.threads == tcfg.cpp.threads
    cfg.coordinate_descent_tuning = True
    cfg.triton.unique_kernel_names = False
    assert cfg.coordinate_descent_tuning is True and cfg.triton.unique_kernel_names is False
    assert cfg.get_config_copy()["triton.unique_kernel_names"] is False
    cfg.coordinate_descent_tuning = False
    cfg.triton.unique_kernel_names = True
    with cfg.patch({"max_autotune": True, "triton.cudagraphs": True}):
        assert cfg.max_autotune and cfg.triton.cudagraphs
    assert not cfg.max_autotune and not cfg.triton.cudagraphs
    for bad in (lambda: cfg.no_such_setting, lambda: cfg.triton.no_such_setting,
                lambda: setattr(cfg, "no_such_setting", 1),
                lambda: setattr(cfg.triton, "no_such_setting", 1)):
        with pytest.raises(AttributeError):
            bad()
    with pytest.raises(AttributeError):
        tcfg.triton.no_such_setting = 1
    with pytest.raises(AttributeError):
        cfg.triton = 3


def _c_script_names(L):
    """torch._C names scripts call directly: grad mode, the tracing state, API
    usage logging, Generator and TensorBase."""
    C = L._C
    out = [C._set_grad_enabled(False), L.is_grad_enabled()]
    C._set_grad_enabled(True)
    out.append(L.is_grad_enabled())
    for bad in (lambda: C._set_grad_enabled(1), lambda: C._log_api_usage_once(1)):
        try:
            bad()
            out.append("no error")
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
    out.append(C._log_api_usage_once("python.script"))
    out += [C._get_tracing_state(), C._is_tracing()]
    seen = []

    def f(x):
        seen.append([C._get_tracing_state() is not None, C._is_tracing()])
        return x * 2
    L.jit.trace(f, L.ones(2), check_trace=False)
    out.append(seen)
    out += [C.Generator is L.Generator, isinstance(L.ones(1), C.TensorBase),
            C.TensorBase in L.Tensor.__mro__, L.Tensor is not C.TensorBase]
    return out


def test_c_script_names_as_torch():
    assert _c_script_names(ptcore) == _c_script_names(torch)


def test_tensor_type_at_the_root():
    """``from torch import TensorType`` (open_clip's hf_model annotates with it): the root
    names torch._C's JIT type class, as torch's does."""
    from ptcore import TensorType
    assert TensorType is ptcore._C.TensorType
    assert torch.TensorType is torch._C.TensorType
    assert TensorType.__name__ == torch.TensorType.__name__ == "TensorType"
    assert "TensorType" in dir(ptcore) and "TensorType" in dir(torch)
    # (pytorch-forecasting annotates ``device: str | torch.DeviceObjType``)
    for lib in (ptcore, torch):
        t = lib.DeviceObjType.get()
        assert lib.DeviceObjType is lib._C.DeviceObjType and t is lib.DeviceObjType.get()
        assert (str(t), t.kind()) == ("Device", "DeviceObjType")
        assert (str | lib.DeviceObjType).__args__ == (str, lib.DeviceObjType)
