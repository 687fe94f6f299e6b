"""ptcore.compile of functions and modules (inference): results against eager ptcore and
torch eager, fusion of pointwise chains, guards and recompiles, graph breaks with the
eager result, fullgraph=True, the decorator form, Module.compile, reset and explain."""
import gc
import time

import numpy as np
import pytest

import ptcore
from ptcore._dynamo import compiled as _compiled
from ptcore._dynamo.exc import Unsupported

torch = pytest.importorskip("torch")


def _t(a):
    return torch.from_numpy(a.detach().numpy().copy())


def _entries(cf):
    return cf.dynamo_ctx.entries if hasattr(cf, "dynamo_ctx") else cf.entries


def chain(lib, x, y):
    z = (x * 2.0 - y).relu() + (x / 3.0).exp() * y.sigmoid()
    return z.tanh().sum(dim=-1), z.mean()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pointwise_chain_matches_eager_and_torch(dtype):
    rng = np.random.default_rng(0)
    xa, ya = rng.standard_normal((2, 3, 40)).astype(dtype), rng.standard_normal((3, 40)).astype(dtype)
    x, y = ptcore.from_numpy(xa), ptcore.from_numpy(ya)
    cf = ptcore.compile(lambda a, b: chain(ptcore, a, b))
    want = chain(ptcore, x, y)
    ref = chain(torch, torch.from_numpy(xa), torch.from_numpy(ya))
    for _ in range(3):                 # capture run, then the compiled graph twice
        got = cf(x, y)
        for g, w, r in zip(got, want, ref):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13)
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=2e-5 if dtype == "float32" else 1e-12)
    prog = cf.entries[0].program
    assert prog is not None and prog.mode == "inference", cf.entries[0].reason
    # the chain runs as fused kernels, not op by op
    assert sum(s.n_fused for s in prog.segments) >= 1


class _Litter:
    """An object an earlier program left in a reference cycle, whose finalizer
    has effects (as a progress bar's ``__del__`` reading the clock) and even
    calls ops: the collector may run it in the middle of any later capture."""
    ran = []

    def __init__(self):
        self.me = self

    def __del__(self):
        _Litter.ran.append(time.time())
        ptcore.ones(3).mul_(2.0)


def _collect_then(x):
    gc.collect()                        # (here the program starts the collection itself)
    return chain(ptcore, x, x)


def _gc_timer(phase, info):
    """A library's GC timer (Hypothesis keeps one): reads the clock at both phases."""
    _gc_timer.seen.append((phase, time.perf_counter()))


_gc_timer.seen = []


@pytest.fixture
def gc_timer():
    gc.callbacks.append(_gc_timer)
    _gc_timer.seen.clear()
    yield _gc_timer.seen
    gc.callbacks.remove(_gc_timer)


def test_a_collection_during_capture_is_not_part_of_the_program(gc_timer):
    x = ptcore.from_numpy(np.random.default_rng(1).standard_normal((3, 40)).astype("float32"))
    clean = ptcore.compile(_collect_then)
    clean(x)
    assert clean.entries[0].program is not None, clean.entries[0].reason
    n_clean = sum(s.n_ops for s in clean.entries[0].program.segments)
    ptcore.compiler.reset()

    _Litter.ran.clear()
    _Litter()                           # garbage now, collected by the program's gc.collect()
    cf = ptcore.compile(_collect_then)
    got = cf(x)
    assert len(_Litter.ran) == 1        # the finalizer ran during the capture
    assert {p for p, _ in gc_timer} == {"start", "stop"}      # and so did the GC timer
    e = cf.entries[0]
    # its clock read is not a problem of the program, its ops are not nodes of the graph
    assert e.program is not None, e.reason
    assert sum(s.n_ops for s in e.program.segments) == n_clean
    want = chain(ptcore, x, x)
    for _ in range(2):
        for g, w in zip(cf(x), want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_jit_trace_records_no_op_of_a_finalizer_run_during_the_trace():
    def f(x):
        gc.collect()
        return x * 2 + 1
    ref = ptcore.jit.trace(f, ptcore.ones(2))
    _Litter.ran.clear()
    _Litter()
    traced = ptcore.jit.trace(f, ptcore.ones(2))
    assert len(_Litter.ran) == 1
    assert str(traced.graph) == str(ref.graph)


def test_guards_recompile_on_shape_dtype_requires_grad():
    # (dynamic=False: every shape specialised; the default's shape-dynamic
    # entries: tests/compile/test_compile_dynamic_shapes.py)
    cf = ptcore.compile(lambda a: (a * 2 + 1).relu(), dynamic=False)
    x = ptcore.randn(4, 5)
    cf(x)
    cf(ptcore.randn(4, 5))
    assert len(cf.entries) == 1
    r = cf(ptcore.randn(6, 5))                       # shape
    assert len(cf.entries) == 2 and r.shape == (6, 5)
    r = cf(ptcore.randn(4, 5, dtype=ptcore.float64))  # dtype
    assert len(cf.entries) == 3 and r.dtype == ptcore.float64
    xg = ptcore.randn(4, 5, requires_grad=True)      # requires_grad
    r = cf(xg)
    assert len(cf.entries) == 4 and r.requires_grad
    r.sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), (xg.detach().numpy() * 2 + 1 > 0) * 2.0)
    r = cf(x.t())                                    # strides
    assert len(cf.entries) == 5
    np.testing.assert_array_equal(r.numpy(), (x.t() * 2 + 1).relu().numpy())


class Scaled(ptcore.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ptcore.nn.Linear(6, 4)
        self.scale = 2.0
        self.act = True

    def forward(self, x):
        y = self.lin(x) * self.scale
        return y.relu() if self.act else y


def test_module_attribute_guards():
    ptcore.manual_seed(0)
    m = Scaled()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 6)
    with ptcore.no_grad():
        a = cm(x)
        np.testing.assert_array_equal(a.numpy(), m(x).numpy())
        m.scale = 3.0                                    # an attribute forward reads
        b = cm(x)
        np.testing.assert_allclose(b.numpy(), m(x).numpy(), rtol=1e-6)
        assert not np.allclose(a.numpy(), b.numpy())
        m.act = False                                    # a flag choosing a branch
        c = cm(x)
        np.testing.assert_array_equal(c.numpy(), m(x).numpy())
        assert (c.numpy() < 0).any()
        m.lin.weight.mul_(0.5)                          # in-place: the same parameter, new values
        np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
        m.eval()                                         # training flag
        np.testing.assert_array_equal(cm(x).numpy(), m(x).numpy())
    assert len(cm.dynamo_ctx.entries) == 4


def branchy(x):
    if x.sum() > 0:                      # data-dependent control flow: a graph break
        return (x * 2).exp()
    return (x - 1).tanh()


def test_graph_break_data_dependent_branch_is_exact():
    cf = ptcore.compile(branchy)
    pos = ptcore.rand(5) + 0.1
    neg = -ptcore.rand(5) - 0.1
    for x in (pos, neg, pos, neg, pos * 3):
        got = cf(x)
        # (a fused segment's tanh may differ from the op's in the last bit)
        np.testing.assert_allclose(got.numpy(), branchy(x).numpy(), rtol=3e-7, atol=0)
        np.testing.assert_allclose(got.numpy(), branchy(_t(x)).numpy(), rtol=1e-6)
    e = cf.entries[0]
    assert e.program is not None and e.breaks            # one entry holding both paths
    assert len(e.program.root.children) == 2


def test_graph_break_on_a_buffer_as_it_is():
    # (``if self.initted:`` -- a flag buffer converted to bool, no op made it:
    # vector_quantize_pytorch's codebook; the replay crashed with a KeyError)
    class Lazy(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ptcore.nn.Linear(4, 4)
            self.register_buffer("initted", ptcore.tensor(False))
            self.register_buffer("flags", ptcore.tensor([True, False]))

        def forward(self, x):
            if not self.initted:
                self.initted.fill_(True)
                return self.lin(x) * 0
            if self.flags[1]:
                return self.lin(x).tanh()
            return self.lin(x).relu()
    m = Lazy()
    cm = ptcore.compile(m)
    x = ptcore.randn(3, 4)
    with ptcore.no_grad():
        want = m.lin(x).relu().numpy()
        np.testing.assert_array_equal(cm(x).numpy(), np.zeros((3, 4), np.float32))
        for _ in range(3):
            np.testing.assert_allclose(cm(x).numpy(), want, rtol=1e-6)
        m.initted.fill_(False)                  # the other path of the first break
        np.testing.assert_array_equal(cm(x).numpy(), np.zeros((3, 4), np.float32))
        m.flags[1] = True                       # the other path of the second
        np.testing.assert_allclose(cm(x).numpy(), m.lin(x).tanh().numpy(), rtol=1e-6)
        np.testing.assert_allclose(cm(x).numpy(), m.lin(x).tanh().numpy(), rtol=1e-6)
    assert any(e.program is not None and e.breaks for e in cm.dynamo_ctx.entries)


def test_graph_break_unsupported_call_runs_eagerly(capsys):
    def f(x):
        y = x * 2
        print("y computed")                 # an effect: the whole call runs eagerly
        return y + 1
    cf = ptcore.compile(f)
    x = ptcore.randn(3)
    for _ in range(2):
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    assert capsys.readouterr().out.count("y computed") == 4
    assert cf.entries[0].program is None and "print" in cf.entries[0].reason


def test_fullgraph_raises_on_break_as_torch():
    x = ptcore.randn(4)
    with pytest.raises(Unsupported):
        ptcore.compile(branchy, fullgraph=True)(x)
    with pytest.raises(Exception) as err:
        torch.compile(branchy, fullgraph=True, backend="eager")(_t(x))
    assert isinstance(err.value, torch._dynamo.exc.TorchDynamoException)
    # no break: fullgraph=True compiles
    f = ptcore.compile(lambda a: a.exp() + 1, fullgraph=True)
    np.testing.assert_allclose(f(x).numpy(), (x.exp() + 1).numpy())


def test_decorator_forms_and_arguments():
    @ptcore.compile
    def f(x):
        return x.sin() * 2

    @ptcore.compile(mode="max-autotune", dynamic=False, fullgraph=True)
    def g(x):
        return x.cos() + 1
    x = ptcore.randn(7)
    np.testing.assert_allclose(f(x).numpy(), torch.sin(_t(x)).numpy() * 2, rtol=1e-6)
    np.testing.assert_allclose(g(x).numpy(), torch.cos(_t(x)).numpy() + 1, rtol=1e-6)
    assert f.__name__ == "f"
    with pytest.raises(RuntimeError):
        ptcore.compile(lambda a: a, mode="fastest")
    with pytest.raises(RuntimeError):
        torch.compile(lambda a: a, mode="fastest")
    with pytest.raises(RuntimeError):
        ptcore.compile(lambda a: a, mode="default", options={"x": 1})
    with pytest.raises(ptcore._dynamo.exc.InvalidBackend):
        ptcore.compile(lambda a: a, backend="no-such-backend")
    assert ptcore.compile(f, disable=True) is f


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_backends_same_result(backend):
    x = ptcore.randn(3, 8)
    f = ptcore.compile(lambda a: (a * a + 1).log().softmax(-1), backend=backend)
    want = (x * x + 1).log().softmax(-1)
    for _ in range(2):
        np.testing.assert_allclose(f(x).numpy(), want.numpy(), rtol=1e-6)


def test_module_compile_in_place():
    ptcore.manual_seed(1)
    m = ptcore.nn.Sequential(ptcore.nn.Linear(5, 8), ptcore.nn.GELU(), ptcore.nn.Linear(8, 2))
    keys = list(m.state_dict())
    x = ptcore.randn(4, 5)
    with ptcore.no_grad():
        want = m(x)
        m.compile()
        assert type(m) is ptcore.nn.Sequential and list(m.state_dict()) == keys
        for _ in range(2):
            np.testing.assert_array_equal(m(x).numpy(), want.numpy())
    assert m._compiled_call_impl.entries[0].program is not None


def test_optimized_module_layout():
    m = ptcore.nn.Linear(3, 2)
    cm = ptcore.compile(m)
    assert cm._orig_mod is m
    assert list(cm.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    tm = torch.compile(torch.nn.Linear(3, 2))
    assert list(tm.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]


def test_reset_forgets_graphs():
    cf = ptcore.compile(lambda a: a + 1)
    x = ptcore.randn(2)
    cf(x)
    cf(x)
    n = _compiled.counters["captures"]
    assert len(cf.entries) == 1
    ptcore.compiler.reset()
    assert cf.entries == []
    np.testing.assert_array_equal(cf(x).numpy(), (x + 1).numpy())
    assert _compiled.counters["captures"] == n + 1 and len(cf.entries) == 1


def test_explain_reports_breaks():
    def f(x):
        y = x.exp()
        if y.sum() > 1:
            y = y * 2
        ptcore._dynamo.graph_break()
        return y + 1
    out = ptcore._dynamo.explain(f)(ptcore.ones(3))
    assert out.graph_break_count == 2 and out.graph_count == 3
    assert "Tensor.__bool__" in out.break_reasons[0].reason or "bool" in out.break_reasons[0].reason
    assert "graph_break" in out.break_reasons[1].reason
    assert out.break_reasons[0].user_stack[-1].name == "f"
    assert out.op_count >= 4 and "Graph Break Count: 2" in str(out)


def test_recompile_limit_falls_back_to_eager():
    # (dynamic=False: each shape is a recompile; with the default the shapes
    # make the function shape-dynamic, tests/compile/test_compile_dynamic_shapes.py)
    cf = ptcore.compile(lambda a: a * 2, dynamic=False)
    old = ptcore._dynamo.config.recompile_limit
    ptcore._dynamo.config.recompile_limit = 2
    try:
        with pytest.warns(UserWarning, match="recompile_limit"):
            for n in range(1, 5):
                x = ptcore.randn(n)
                np.testing.assert_array_equal(cf(x).numpy(), (x * 2).numpy())
        assert len(cf.entries) == 2
    finally:
        ptcore._dynamo.config.recompile_limit = old


def test_runs_eagerly_under_a_profiler():
    import cProfile
    cf = ptcore.compile(lambda a: (a * 3).sin())
    x = ptcore.randn(4)
    prof = cProfile.Profile()
    prof.enable()
    try:
        got = cf(x)
    finally:
        prof.disable()
    np.testing.assert_array_equal(got.numpy(), (x * 3).sin().numpy())
    assert cf.entries == []             # captured later, when no profiler holds the hook
    cf(x)
    assert len(cf.entries) == 1


def test_module_compile_keeps_hooks():
    m = ptcore.nn.Linear(4, 3)
    x = ptcore.randn(2, 4)
    seen = []
    m.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
    m.register_forward_hook(lambda mod, args, out: out * 2)
    with ptcore.no_grad():
        want = m(x)
        m.compile()
        for _ in range(2):
            np.testing.assert_array_equal(m(x).numpy(), want.numpy())
    assert seen == ["pre"] * 3


def test_jit_is_tracing_is_false_while_compile_captures():
    """As torch's: ``jit.is_tracing()`` is True under ``jit.trace`` only (Hugging
    Face models take a tensor-shape path when it is True: MobileViT's
    ``torch.ceil(height / patch)`` on Python ints failed under ptcore.compile)."""
    seen = []

    def f(a):
        seen.append(ptcore.jit.is_tracing())
        return a * 2

    ptcore.compile(f)(ptcore.ones(2))
    ptcore.export.export(type("M", (ptcore.nn.Module,), {"forward": lambda self, a: f(a)})(),
                         (ptcore.ones(2),))
    ptcore.jit.trace(f, (ptcore.ones(2),))
    assert seen[0] is False and seen[-1] is True and not any(seen[1:-1])
    assert ptcore.jit.is_tracing() is False
