"""``ptcore.compile(fn, backend=callable)``: each captured graph reaches the
callable as an ``fx.GraphModule`` with example inputs, and the callable it
returns runs the graph (``ptcore._inductor.custom``); the counting backends
of ``ptcore._dynamo.testing``.  Checked against torch 2.13 where torch is
installed: the same graph count, op count, placeholders and results."""
import operator

import numpy as np
import pytest

import ptcore
import ptcore._dynamo.testing as pt_testing
from ptcore._dynamo.utils import same


def _libs():
    out = [ptcore]
    try:
        import torch
        import torch._dynamo.testing  # noqa: F401
        out.append(torch)
    except ImportError:
        pass
    return out


def _x(lib):
    return lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 4)


def test_graph_module_and_example_inputs():
    seen = {}

    def be(gm, example_inputs):
        seen["gm"] = gm
        seen["examples"] = example_inputs
        return gm.forward

    def f(a, w):
        return ptcore.sin(a) * 2 + a.cos() + ptcore.nn.functional.linear(a, w)

    x, w = _x(ptcore), ptcore.ones(3, 3)
    c = ptcore.compile(f, backend=be)
    out = c(x, w)
    assert ptcore.allclose(out, f(x, w))
    gm = seen["gm"]
    assert isinstance(gm, ptcore.fx.GraphModule) and type(gm).__name__ == "GraphModule"
    ops = [n.op for n in gm.graph.nodes]
    assert ops.count("placeholder") == 2 and ops[-1] == "output"
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert ptcore.sin in targets and ptcore.nn.functional.linear in targets
    assert [tuple(e.shape) for e in seen["examples"]] == [(2, 3), (3, 3)]
    # the graph module runs by itself
    assert ptcore.allclose(gm(x, w)[0], f(x, w))


def test_returned_callable_runs_the_graph_first_call_too():
    def be(gm, example_inputs):
        def run(*args):
            return [t * 0 - 1 for t in gm(*args)]
        return run

    c = ptcore.compile(lambda a: a.exp() + 1, backend=be)
    x = _x(ptcore)
    assert ptcore.equal(c(x), ptcore.full((2, 3), -1.0))       # first call (no effects)
    assert ptcore.equal(c(x), ptcore.full((2, 3), -1.0))


def test_parameters_are_graph_attributes_and_autograd_records():
    m = ptcore.nn.Sequential(ptcore.nn.Linear(3, 4), ptcore.nn.Tanh(), ptcore.nn.Linear(4, 1))
    graphs = []

    def be(gm, ex):
        graphs.append(gm)
        return gm.forward
    c = ptcore.compile(m, backend=be)
    x = _x(ptcore)
    for _ in range(2):
        m.zero_grad()
        c(x).sum().backward()
        g_compiled = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).sum().backward()
    for a, p in zip(g_compiled, m.parameters()):
        assert ptcore.allclose(a, p.grad)
    assert len(graphs) == 1
    gets = [n for n in graphs[0].graph.nodes if n.op == "get_attr"]
    assert len(gets) == 4                       # two weights, two biases
    assert all(isinstance(getattr(graphs[0], n.target), ptcore.Tensor) for n in gets)


def test_graph_break_gives_two_graphs_like_torch():
    results = []
    for lib in _libs():
        lib._dynamo.reset()
        cnt = lib._dynamo.testing.CompileCounter()

        def f(a):
            b = a.sin() * 2
            if b.sum() > 0:                 # data-dependent: a graph break
                return b.cos()
            return b

        c = lib.compile(f, backend=cnt)
        x = _x(lib)
        out = c(x)
        c(x)
        results.append((cnt.frame_count, cnt.op_count, out.numpy().round(5).tolist()))
    assert len(set(map(repr, results))) == 1, results
    assert results[0][0] == 2


@pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)
def test_compile_counter_recompiles_on_shape(lib):
    lib._dynamo.reset()
    cnt = lib._dynamo.testing.CompileCounter()
    c = lib.compile(lambda a: (a + 1).relu(), backend=cnt, dynamic=False)
    c(lib.ones(3))
    c(lib.ones(3))
    assert cnt.frame_count == 1 and cnt.op_count == 2
    c(lib.ones(4))
    assert cnt.frame_count == 2


def test_counter_with_backend_and_eager_and_record():
    ptcore._dynamo.reset()
    cnt = pt_testing.CompileCounterWithBackend("eager")
    c = ptcore.compile(lambda a: a * 3, backend=cnt)
    assert ptcore.equal(c(ptcore.ones(2)), ptcore.full((2,), 3.0))
    assert cnt.frame_count == 1 and len(cnt.graphs) == 1
    rec = pt_testing.EagerAndRecordGraphs()
    c = ptcore.compile(lambda a: a - 1, backend=rec)
    c(ptcore.ones(2))
    assert len(rec.graphs) == 1 and isinstance(rec.graphs[0], ptcore.fx.GraphModule)


def test_registered_backend_by_name():
    calls = []

    @ptcore._dynamo.register_backend(name="ptcore_test_recording_backend")
    def recording(gm, ex):
        calls.append(len(ex))
        return gm.forward

    try:
        assert "ptcore_test_recording_backend" in ptcore._dynamo.list_backends()
        c = ptcore.compile(lambda a, b: a @ b, backend="ptcore_test_recording_backend")
        x = _x(ptcore)
        assert ptcore.allclose(c(x, x.t()), x @ x.t())
        assert calls == [2]
    finally:
        # (the registry is the process's: later tests compare list_backends() with torch's)
        from ptcore._dynamo import backends
        backends._REGISTERED.pop("ptcore_test_recording_backend", None)


def test_backend_errors():
    def bad(gm, ex):
        return 3                            # not a callable

    with pytest.raises(ptcore._dynamo.exc.BackendCompilerFailed):
        ptcore.compile(lambda a: a + 1, backend=bad)(ptcore.ones(1))

    def raising(gm, ex):
        raise ValueError("no")

    with pytest.raises(ptcore._dynamo.exc.BackendCompilerFailed):
        ptcore.compile(lambda a: a + 1, backend=raising)(ptcore.ones(1))
    with pytest.raises(ptcore._dynamo.exc.BackendCompilerFailed):
        ptcore.compile(lambda a: a + 1, backend=123)(ptcore.ones(1))


def test_same():
    a = ptcore.tensor([1.0, 2.0])
    assert same([a, {"k": 1.0}], [a + 1e-6, {"k": 1.0 + 1e-7}])
    assert not same(a, a + 1)
    assert not same(a, a.double())
    assert same(a, a.double(), exact_dtype=False)
    assert same(float("nan"), float("nan"), equal_nan=True)
    assert not same(ptcore.tensor([1, 2]), ptcore.tensor([1, 3]))


def test_custom_backend_sees_operator_targets_for_indexing():
    seen = []

    def be(gm, ex):
        seen.extend(n.target for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward
    c = ptcore.compile(lambda a: a[0] + a[1], backend=be)
    x = _x(ptcore)
    assert ptcore.equal(c(x), x[0] + x[1])
    assert operator.getitem in seen
