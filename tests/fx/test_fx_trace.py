"""Symbolic tracing (ptcore.fx.symbolic_trace, Tracer, Proxy, wrap) against
torch.fx: the same model traced by both gives the same nodes, the same
generated code (up to the library name) and the same outputs."""
import math
import typing

import numpy as np
import pytest

import ptcore
import ptcore.fx as pfx

try:
    import torch
    import torch.fx as tfx
except ImportError:
    torch = tfx = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def leaf_fn(x, k):
    """A function both tracers record as one leaf node."""
    return x * k + len(x.shape)


def scale_by_two(x):
    """Recorded as a leaf when listed in ``autowrap_functions``."""
    return x * 2


pfx.wrap("leaf_fn")
if tfx is not None:
    tfx.wrap("leaf_fn")


# ------------------------------------------------------------------ helpers
def _copy_weights(tm, pm):
    pm.load_state_dict({k: ptcore.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})


def _signature(gm):
    out = []
    for n in gm.graph.nodes:
        t = n.target if isinstance(n.target, str) else n.target.__name__
        out.append((n.op, n.name, t))
    return out


def _norm_code(code):
    return (code.replace("ptcore.fx._symbolic_trace._assert(", "torch._assert(")
            .replace("ptcore", "torch"))


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(),
                               rtol=tol, atol=tol)


def _build(lib, name):
    nn = lib.nn
    F = nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 16)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU())
            self.flatten = nn.Flatten()
            self.head = nn.Linear(6 * 2 * 2, 5)

        def forward(self, x):
            return self.head(self.flatten(self.features(x)))

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(5, 5)
            self.scale = nn.Parameter(lib.full((5,), 0.5))

        def forward(self, x, y):
            h = self.lin(x) * self.scale
            h = lib.relu(h) + lib.sigmoid(y)
            h = F.softmax(h, dim=-1) - 0.1
            h = h.transpose(0, 1).contiguous().transpose(0, 1)
            h = lib.cat([h, -y], dim=1)
            h = 2.0 * h / (1 + h.abs())
            h = h @ h.t()
            return h.sum(dim=0, keepdim=True), h[0, 1:3], h.mean()

    class Reshape(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3)
            self.fc = nn.Linear(3 * 4 * 4, 2)

        def forward(self, x):
            x = self.conv(x)
            x = x.view(x.size(0), -1)
            return self.fc(x)

    return {"MLP": MLP, "CNN": CNN, "Mixed": Mixed, "Reshape": Reshape}[name]()


def _pair(name, seed=0):
    torch.manual_seed(seed)
    tm = _build(torch, name).eval()
    pm = _build(ptcore, name).eval()
    _copy_weights(tm, pm)
    return tm, pm


# ---------------------------------------------------------------- parity
@needs_torch
@pytest.mark.parametrize("name,shape", [("MLP", (4, 6)), ("CNN", (2, 3, 8, 8)),
                                        ("Reshape", (3, 2, 6, 6))])
def test_module_models_match_torch(name, shape):
    tm, pm = _pair(name)
    tgm, pgm = tfx.symbolic_trace(tm), pfx.symbolic_trace(pm)
    assert _signature(pgm) == _signature(tgm)
    assert _norm_code(pgm.code) == tgm.code
    assert str(pgm.graph).replace("ptcore", "torch") == str(tgm.graph)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    _close(pgm(ptcore.tensor(x)), tgm(torch.tensor(x)))
    _close(pgm(ptcore.tensor(x)), pm(ptcore.tensor(x)))
    assert type(pgm).__name__ == type(tgm).__name__ == type(tm).__name__


@needs_torch
def test_functions_methods_operators_match_torch():
    tm, pm = _pair("Mixed")
    tgm, pgm = tfx.symbolic_trace(tm), pfx.symbolic_trace(pm)
    assert _signature(pgm) == _signature(tgm)
    # F.softmax: torch passes every default through __torch_function__, so
    # only the call sites of the other nodes are compared textually
    tlines = [ln for ln in tgm.code.splitlines() if "softmax" not in ln]
    plines = [ln for ln in _norm_code(pgm.code).splitlines() if "softmax" not in ln]
    assert plines == tlines
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 5)).astype(np.float32)
    y = rng.standard_normal((5, 5)).astype(np.float32)
    for a, b in zip(pgm(ptcore.tensor(x), ptcore.tensor(y)),
                    tgm(torch.tensor(x), torch.tensor(y))):
        _close(a, b)
    targets = {n.name: n.target for n in pgm.graph.nodes}
    assert targets["relu"] is ptcore.relu
    assert targets["softmax"] is ptcore.nn.functional.softmax
    assert targets["scale"] == "scale"          # a get_attr of the parameter
    assert [n.op for n in pgm.graph.nodes if n.name == "scale"] == ["get_attr"]


@needs_torch
def test_free_function_with_shape_unpacking_and_math():
    def f(x, y):
        a, b = x.shape
        return x.flatten(1) + math.sqrt(2) + y.size()[0] * a, b

    tgm, pgm = tfx.symbolic_trace(f), pfx.symbolic_trace(f)
    assert _signature(pgm) == _signature(tgm)
    assert _norm_code(pgm.code) == tgm.code
    x = np.ones((2, 3), np.float32)
    p_out, t_out = pgm(ptcore.tensor(x), ptcore.ones(4)), tgm(torch.tensor(x), torch.ones(4))
    _close(p_out[0], t_out[0])
    assert p_out[1] == t_out[1] == 3


@needs_torch
def test_concrete_args_match_torch():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x, flag=True, bias=None):
                if flag:
                    x = self.lin(x)
                if bias is not None:
                    x = x + bias
                return x
        return M()
    torch.manual_seed(0)
    tm, pm = build(torch), build(ptcore)
    _copy_weights(tm, pm)
    tgm = tfx.symbolic_trace(tm, concrete_args={"flag": False, "bias": None})
    pgm = pfx.symbolic_trace(pm, concrete_args={"flag": False, "bias": None})
    assert [(op, nm) for op, nm, _ in _signature(pgm)] == \
        [(op, nm) for op, nm, _ in _signature(tgm)]
    assert _norm_code(pgm.code) == tgm.code
    x = ptcore.ones(2, 3)
    np.testing.assert_array_equal(pgm(x, False, None).numpy(), np.ones((2, 3)))
    with pytest.raises(AssertionError, match="specialized"):
        pgm(x, True, None)
    with pytest.raises(NotImplementedError, match="containers"):
        pfx.symbolic_trace(pm, concrete_args={"flag": True, "bias": [pfx.PH]})
    # a placeholder kept with PH
    pgm2 = pfx.symbolic_trace(pm, concrete_args={"flag": True, "bias": pfx.PH})
    tgm2 = tfx.symbolic_trace(tm, concrete_args={"flag": True, "bias": tfx.PH})
    assert _norm_code(pgm2.code) == tgm2.code


@needs_torch
def test_custom_leaf_modules_and_tracer_subclass():
    def build(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 4)

            def forward(self, x):
                return lib.tanh(self.lin(x))

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.b1, self.b2 = Block(), Block()

            def forward(self, x):
                return self.b2(self.b1(x)) + x
        return Net(), Block

    torch.manual_seed(0)
    (tm, tblock), (pm, pblock) = build(torch), build(ptcore)
    _copy_weights(tm, pm)

    class TLeaf(tfx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, tblock) or super().is_leaf_module(m, qualname)

    class PLeaf(pfx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, pblock) or super().is_leaf_module(m, qualname)

    tg, pg = TLeaf().trace(tm), PLeaf().trace(pm)
    assert [n.op for n in pg.nodes] == [n.op for n in tg.nodes]
    assert [n.target for n in pg.nodes if n.op == "call_module"] == ["b1", "b2"]
    pgm, tgm = pfx.GraphModule(pm, pg), tfx.GraphModule(tm, tg)
    assert _norm_code(pgm.code) == tgm.code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    _close(pgm(ptcore.tensor(x)), tgm(torch.tensor(x)))
    # default tracer goes through user modules down to ptcore.nn leaves
    default = pfx.symbolic_trace(pm)
    assert [n.target for n in default.graph.nodes if n.op == "call_module"] == \
        ["b1.lin", "b2.lin"]
    assert _signature(default) == _signature(tfx.symbolic_trace(tm))


@needs_torch
def test_wrapped_function_is_a_leaf():
    def f(x):
        return leaf_fn(x, 3) + 1

    tgm, pgm = tfx.symbolic_trace(f), pfx.symbolic_trace(f)
    assert _signature(pgm) == _signature(tgm)
    assert [n.target for n in pgm.graph.nodes if n.op == "call_function"][0] is leaf_fn
    assert _norm_code(pgm.code) == tgm.code
    assert 'ptcore.fx._symbolic_trace.wrap("test_fx_trace_leaf_fn")' in pgm.code
    np.testing.assert_allclose(pgm(ptcore.ones(2, 2)).numpy(), np.full((2, 2), 6.0))
    # the wrap is undone after tracing
    assert leaf_fn(ptcore.ones(1), 2).item() == 3.0


@needs_torch
def test_autowrap_functions_and_math():
    def f(x):
        return scale_by_two(x) + math.floor(x.sum() if False else 1.5) + math.log(x.size(0))

    tgm = tfx.symbolic_trace(f)
    pgm = pfx.symbolic_trace(f)
    assert _signature(pgm) == _signature(tgm)          # math.log(proxy) is a leaf

    tt = tfx.Tracer(autowrap_functions=(scale_by_two,))
    pt = pfx.Tracer(autowrap_functions=(scale_by_two,))
    tg, pg = tt.trace(f), pt.trace(f)
    assert [n.target for n in pg.nodes if n.op == "call_function"][0] is scale_by_two
    assert [(n.op, n.name) for n in pg.nodes] == [(n.op, n.name) for n in tg.nodes]


@needs_torch
def test_control_flow_and_iteration_raise_trace_error():
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    def loop(x):
        return [v for v in x]

    for fx in (tfx, pfx):
        with pytest.raises(fx.proxy.TraceError):
            fx.symbolic_trace(branch)
        with pytest.raises(fx.proxy.TraceError):
            fx.symbolic_trace(loop)
        with pytest.raises(RuntimeError, match="len"):
            fx.symbolic_trace(lambda x: len(x))
    assert pfx.TraceError is pfx.proxy.TraceError
    assert issubclass(pfx.TraceError, ValueError) and issubclass(tfx.proxy.TraceError,
                                                                 ValueError)


@needs_torch
def test_tensor_constant_and_buffer_get_attr():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("offset", lib.arange(3.0))
                self.const = lib.tensor([2.0, 3.0, 4.0])

            def forward(self, x):
                return x * self.const + self.offset + lib.tensor([1.0, 1.0, 1.0])
        return M()
    tgm, pgm = tfx.symbolic_trace(build(torch)), pfx.symbolic_trace(build(ptcore))
    assert _signature(pgm) == _signature(tgm)
    assert _norm_code(pgm.code) == tgm.code
    assert sorted(pgm.state_dict()) == sorted(tgm.state_dict())
    np.testing.assert_allclose(pgm(ptcore.ones(3)).numpy(), tgm(torch.ones(3)).numpy())


@needs_torch
def test_param_shapes_constant():
    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = ptcore.nn.Parameter(ptcore.ones(3, 2))

        def forward(self, x):
            return x.reshape(-1, self.w.shape[0]) @ self.w

    g = pfx.Tracer(param_shapes_constant=True).trace(M())
    reshape = [n for n in g.nodes if n.op == "call_method"][0]
    assert reshape.args[1:] == (-1, 3)
    g2 = pfx.Tracer().trace(M())
    assert [n.op for n in g2.nodes].count("call_function") == 3   # getattr, getitem, matmul
    assert len(g2.nodes) > len(g.nodes)


def test_proxy_records_methods_and_torch_function():
    graph = pfx.Graph()
    x = pfx.Proxy(graph.placeholder("x"))
    y = ptcore.nn.functional.gelu(x.relu().unsqueeze(0)) + ptcore.exp(x)
    z = (1 - y) ** 2
    graph.output(z.node)
    ops = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
           for n in graph.nodes]
    assert ops == [("placeholder", "x"), ("call_method", "relu"), ("call_method", "unsqueeze"),
                   ("call_function", "gelu"), ("call_function", "exp"),
                   ("call_function", "add"), ("call_function", "sub"),
                   ("call_function", "pow"), ("output", "output")]
    gm = pfx.GraphModule(ptcore.nn.Module(), graph)
    v = ptcore.tensor([0.5, -1.0])
    expected = (1 - (ptcore.nn.functional.gelu(v.relu().unsqueeze(0)) + ptcore.exp(v))) ** 2
    np.testing.assert_allclose(gm(v).numpy(), expected.numpy(), rtol=1e-6)
    assert repr(x) == "Proxy(x)"
    with pytest.raises(pfx.TraceError):
        bool(x)


def test_symbolic_trace_of_function_and_annotations():
    def f(x: ptcore.Tensor, n: int = 2) -> ptcore.Tensor:
        return x * n
    gm = pfx.symbolic_trace(f)
    assert "def forward(self, x : ptcore.Tensor, n : int = 2) -> ptcore.Tensor:" in gm.code
    np.testing.assert_array_equal(gm(ptcore.ones(2)).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(gm(ptcore.ones(2), 3).numpy(), [3.0, 3.0])
    assert pfx._symbolic_trace.is_fx_tracing() is False


# (namespace, name, args): "x" is the traced input
_FUNCTION_CASES = [
    ("", "flatten", ("x", 1)), ("", "transpose", ("x", 0, 1)), ("", "reshape", ("x", (-1,))),
    ("", "unsqueeze", ("x", 0)), ("", "permute", ("x", (1, 0))), ("", "chunk", ("x", 2)),
    ("", "narrow", ("x", 0, 0, 1)), ("", "clone", ("x",)), ("", "matmul", ("x", "x")),
    ("", "abs", ("x",)), ("", "neg", ("x",)), ("", "atleast_2d", ("x",)),
    ("", "cdist", ("x", "x")), ("", "allclose", ("x", "x")), ("", "where", ("x", "x", "x")),
    ("", "cat", (["x", "x"],)), ("", "stack", (["x", "x"],)), ("", "einsum", ("ij->ji", "x")),
    ("F", "layer_norm", ("x", (2,))), ("F", "normalize", ("x",)),
    ("F", "group_norm", ("x", 1)), ("F", "pairwise_distance", ("x", "x")),
    ("F", "poisson_nll_loss", ("x", "x")), ("F", "gelu", ("x",)), ("F", "linear", ("x", "x")),
]


@needs_torch
@pytest.mark.parametrize("ns,name,args", _FUNCTION_CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in _FUNCTION_CASES])
def test_function_records_one_call_function_node(ns, name, args):
    def trace(lib, fx):
        fn = getattr(lib.nn.functional if ns else lib, name)

        def f(x):
            real = [x if a == "x" else ([x if b == "x" else b for b in a]
                                        if isinstance(a, list) else a) for a in args]
            return fn(*real)
        gm = fx.symbolic_trace(f)
        return [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
                for n in gm.graph.nodes], gm
    (t_nodes, _), (p_nodes, pgm) = trace(torch, tfx), trace(ptcore, pfx)
    assert p_nodes == t_nodes
    assert p_nodes[1] == ("call_function", name)


@needs_torch
def test_tensor_constant_with_proxy_argument_is_a_method_call():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", lib.ones(3))

            def forward(self, x):
                return self.b + x, self.b.mul(x), self.b[x.long()]
        return M()
    tgm, pgm = tfx.symbolic_trace(build(torch)), pfx.symbolic_trace(build(ptcore))
    assert _signature(pgm) == _signature(tgm)
    assert _norm_code(pgm.code) == tgm.code
    x = np.array([0.0, 2.0, 1.0], np.float32)
    for a, b in zip(pgm(ptcore.tensor(x)), tgm(torch.tensor(x))):
        _close(a, b)


@needs_torch
def test_nn_module_stack_meta_matches_torch():
    def build(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(x).relu()

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(self.block(x))
        return Net()

    def stacks(gm):
        return [{k: (v[0], v[1].__name__) for k, v in n.meta.get("nn_module_stack", {}).items()}
                for n in gm.graph.nodes]
    assert stacks(pfx.symbolic_trace(build(ptcore))) == stacks(tfx.symbolic_trace(build(torch)))


def test_tensor_method_recorded_whatever_the_dispatch_layer_state():
    # the overridable list is cached at its first use; the protocol wrappers the dispatch layer
    # installs over core methods while a __torch_function__ subclass lives must still count as
    # Tensor methods (a call_method node), as the core's own method descriptors do
    ptcore.overrides.get_overridable_functions()

    class Sub(ptcore.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    keep = ptcore.ones(2).as_subclass(Sub)

    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", ptcore.ones(3))

        def forward(self, x):
            return self.b[x.long()], self.b.view(3)
    ops = [(n.op, n.target) for n in pfx.symbolic_trace(M()).graph.nodes]
    assert ("call_method", "__getitem__") in ops
    assert ptcore.overrides.is_tensor_method_or_property(ptcore.Tensor.__getitem__)
    assert ptcore.overrides.is_tensor_method_or_property(ptcore.Tensor.view)
    del keep


@needs_torch
def test_graph_appending_tracer_and_einsums_list_form_as_torch():
    # proxies around the nodes of a hand-built graph record into it through the public
    # GraphAppendingTracer (e3nn builds its modules so); einsum's list form reaches the
    # tracer as torch's Python wrapper passes it, the operands one by one
    def build(L, fx):
        g = fx.Graph()
        tracer = fx.proxy.GraphAppendingTracer(g)
        a = fx.Proxy(g.placeholder("a"), tracer)
        b = fx.Proxy(g.placeholder("b"), tracer)
        out = L.einsum("ij,jk->ik", [a, b]) + L.einsum("ij,jk->ik", (a * 2, b))
        g.output(out.node)
        einsums = [n.args for n in g.nodes if n.op == "call_function" and n.target is L.einsum]
        gm = fx.GraphModule(L.nn.Module(), g)
        x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
        y = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        return ([[str(v) for v in args] for args in einsums],
                gm(L.from_numpy(x), L.from_numpy(y)).numpy())
    (pa, pv), (ta, tv) = build(ptcore, pfx), build(torch, tfx)
    assert pa == ta == [["ij,jk->ik", "a", "b"], ["ij,jk->ik", "mul", "b"]]
    np.testing.assert_allclose(pv, tv, rtol=1e-6)


def test_type_aliases_programs_annotate_with():
    # pytorch/examples fx/module_tracer.py annotates ``target: torch.fx.node.Target``;
    # passes test ``isinstance(arg, torch.fx.node.base_types)``
    torch = pytest.importorskip("torch")
    import ptcore.fx.graph
    import ptcore.fx.interpreter
    import ptcore.fx.node
    import ptcore.fx.proxy
    for mod in ("node", "graph", "proxy", "interpreter"):
        for name in ("Target", "Argument"):
            assert hasattr(getattr(ptcore.fx, mod), name), (mod, name)
    assert ptcore.fx.node.Target == typing.Union[typing.Callable[..., typing.Any], str]
    assert [t.__name__ for t in ptcore.fx.node.base_types] == \
        [t.__name__ for t in torch.fx.node.base_types if t.__name__ != "OpOverload"]
    assert isinstance(ptcore.ones(1), ptcore.fx.node.base_types)
    assert list(ptcore.fx.node._legal_ops) == list(torch.fx.node._legal_ops)
    assert ptcore.fx.node._get_qualified_name(ptcore.relu) == \
        torch.fx.node._get_qualified_name(torch.relu).replace("torch", "ptcore")

    def seen(lib):
        class PathTracer(lib.fx.Tracer):
            def create_proxy(self, kind: str, target: lib.fx.node.Target, args, kwargs,
                             name=None, type_expr=None):
                proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
                self.seen.append((kind, proxy.node.name))
                return proxy

        t = PathTracer()
        t.seen = []
        t.trace(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU()))
        return t.seen

    assert seen(ptcore) == seen(torch) == [("placeholder", "input_1"), ("call_module", "_0"),
                                           ("call_module", "_1")]
