"""Interpreter, Transformer, ShapeProp and replace_pattern, following the
examples of torch.fx's documentation, against torch.fx."""
import copy

import numpy as np
import pytest

import ptcore
import ptcore.fx as pfx
from ptcore.fx.passes.shape_prop import ShapeProp, TensorMetadata
from ptcore.fx.subgraph_rewriter import replace_pattern_with_filters

try:
    import torch
    import torch.fx as tfx
    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp
except ImportError:
    torch = tfx = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _libs():
    return [(pfx, ptcore), (tfx, torch)]


# --------------------------------------------------------------- Interpreter
def _neg_sigmoid_swap(base, lib):
    """The docs' example: swap ``sigmoid`` and ``neg`` (an Interpreter or a
    Transformer subclass)."""
    class NegSigmoidSwap(base):
        def call_function(self, target, args, kwargs):
            if target is lib.sigmoid:
                return lib.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)
    return NegSigmoidSwap


@needs_torch
def test_interpreter_neg_sigmoid_swap_example():
    outs = []
    for fx, lib in _libs():
        NegSigmoidSwap = _neg_sigmoid_swap(fx.Interpreter, lib)

        def fn(x):
            return lib.sigmoid(x).neg()

        gm = fx.symbolic_trace(fn)
        x = lib.tensor([-1.0, 0.0, 2.0])
        outs.append(NegSigmoidSwap(gm).run(x).numpy())
        np.testing.assert_allclose(outs[-1], lib.neg(x).sigmoid().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_interpreter_defaults_env_and_errors():
    class M(ptcore.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ptcore.nn.Linear(2, 2)

        def forward(self, x, y=3.0):
            return self.lin(x).relu() * y

    m = M()
    gm = pfx.symbolic_trace(m)
    x = ptcore.randn(4, 2)
    interp = pfx.Interpreter(gm)
    np.testing.assert_allclose(interp.run(x).detach().numpy(), m(x).detach().numpy())
    np.testing.assert_allclose(interp.run(x, 2.0).detach().numpy(),
                               m(x, 2.0).detach().numpy())
    # values are released after their last use; only the output is left
    assert [n.op for n in interp.env] == ["output"]
    keep = pfx.Interpreter(gm, garbage_collect_values=False)
    keep.run(x)
    assert set(n.name for n in keep.env) == set(n.name for n in gm.graph.nodes)
    # an initial env short-circuits nodes
    lin = [n for n in gm.graph.nodes if n.op == "call_module"][0]
    out = pfx.Interpreter(gm).run(x, initial_env={lin: -ptcore.ones(4, 2)})
    np.testing.assert_array_equal(out.numpy(), np.zeros((4, 2)))
    args = [x]
    np.testing.assert_allclose(pfx.Interpreter(gm).boxed_run(args).detach().numpy(),
                               m(x).detach().numpy())
    assert args == []
    assert pfx.Interpreter(gm).fetch_attr("lin.weight") is m.lin.weight
    with pytest.raises(RuntimeError, match="nonexistent"):
        pfx.Interpreter(gm).fetch_attr("lin.nothing")
    g = pfx.Graph()
    g.output(g.placeholder("x"))
    with pytest.raises(RuntimeError, match="positional argument"):
        pfx.Interpreter(pfx.GraphModule(ptcore.nn.Module(), g)).run()


# --------------------------------------------------------------- Transformer
@needs_torch
def test_transformer_example_matches_torch():
    results = []
    for fx, lib in _libs():
        NegSigmoidSwapXformer = _neg_sigmoid_swap(fx.Transformer, lib)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x):
                return lib.sigmoid(self.lin(x)).neg() + self.lin.bias

        lib.manual_seed(0)
        m = M()
        gm = fx.symbolic_trace(m)
        new = NegSigmoidSwapXformer(gm).transform()
        x = lib.tensor([[1.0, -2.0, 0.5]])
        expected = lib.neg(m.lin(x)).sigmoid() + m.lin.bias
        np.testing.assert_allclose(new(x).detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-6)
        results.append([(n.op, n.name, n.target if isinstance(n.target, str)
                         else n.target.__name__) for n in new.graph.nodes])
        results.append(new.code.replace("ptcore", "torch"))
    assert results[0] == results[2]
    assert results[1] == results[3]


# ------------------------------------------------------------------ ShapeProp
def _meta_tuple(tm):
    return (tuple(tm.shape), str(tm.dtype).split(".")[-1], tm.requires_grad, tuple(tm.stride),
            str(tm.memory_format).split(".")[-1], tm.is_quantized, tm.qparams)


@needs_torch
def test_shape_prop_matches_torch():
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Conv2d(3, 4, 3)
                self.lin = lib.nn.Linear(4 * 4 * 4, 6)

            def forward(self, x, idx):
                h = self.conv(x).relu()
                flat = h.flatten(1)
                out = self.lin(flat)
                return out.max(dim=1), h.permute(0, 2, 3, 1), idx.to(lib.float64) * 2
        return Net()

    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    idx = np.arange(2, dtype=np.int64)
    tgm, pgm = tfx.symbolic_trace(build(torch)), pfx.symbolic_trace(build(ptcore))
    TShapeProp(tgm).propagate(torch.tensor(x), torch.tensor(idx))
    ShapeProp(pgm).propagate(ptcore.tensor(x), ptcore.tensor(idx))
    for tn, pn in zip(tgm.graph.nodes, pgm.graph.nodes):
        assert tn.name == pn.name
        tmeta, pmeta = tn.meta.get("tensor_meta"), pn.meta.get("tensor_meta")
        assert (tmeta is None) == (pmeta is None), pn.name
        assert _flat(pmeta) == _flat(tmeta), pn.name
        if pn.op == "call_module":
            assert isinstance(pmeta, TensorMetadata)
        assert pn.meta["type"].__name__ == tn.meta["type"].__name__ or pn.op == "output"


def _flat(meta):
    if meta is None:
        return None
    if hasattr(meta, "dtype"):
        return [_meta_tuple(meta)]
    out = []
    for m in meta:
        out.extend(_flat(m))
    return out


# ------------------------------------------------------------ replace_pattern
@needs_torch
def test_replace_pattern_docs_example():
    codes = []
    for fx, lib in _libs():
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([w1, w2]).sum()
                m2 = lib.cat([w1, w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        def pattern(w1, w2):
            return lib.cat([w1, w2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])

        gm = fx.symbolic_trace(M())
        matches = fx.replace_pattern(gm, pattern, replacement)
        assert len(matches) == 2
        assert all(m.anchor.name == "sum_1" for m in matches)
        x, w1, w2 = lib.tensor([1.0]), lib.tensor([2.0, 5.0]), lib.tensor([3.0, -1.0])
        np.testing.assert_allclose(gm(x, w1, w2).numpy(), [11.0])
        codes.append(gm.code.replace("ptcore", "torch"))
    assert codes[0] == codes[1]


@needs_torch
def test_replace_pattern_multiple_outputs_and_no_match():
    codes = []
    for fx, lib in _libs():
        def f(x, y):
            a = lib.relu(x) * 2
            b = lib.relu(y) * 2
            return a + b, lib.tanh(x)

        def pattern(z):
            return lib.relu(z) * 2

        def replacement(z):
            return lib.sigmoid(z) + z

        gm = fx.symbolic_trace(f)
        assert fx.replace_pattern(gm, lambda z: lib.exp(z), lambda z: z) == []
        assert len(fx.replace_pattern(gm, pattern, replacement)) == 2
        x, y = lib.tensor([0.0, 1.0]), lib.tensor([-1.0, 2.0])
        out = gm(x, y)
        exp = lib.sigmoid(x) + x + lib.sigmoid(y) + y
        np.testing.assert_allclose(out[0].numpy(), exp.numpy(), rtol=1e-6)
        codes.append(gm.code.replace("ptcore", "torch"))
    assert codes[0] == codes[1]


@needs_torch
def test_replace_pattern_placeholders_match_distinct_values_and_literals():
    codes = []
    for fx, lib in _libs():
        def f(x, y):
            return lib.add(x, x) + lib.add(x, y) + lib.mul(y, 3) + lib.mul(y, 4)

        gm = fx.symbolic_trace(f)
        # two pattern inputs never match the same graph value
        assert len(fx.replace_pattern(gm, lambda a, b: lib.add(a, b),
                                      lambda a, b: lib.sub(a, b))) == 1
        # a pattern input matches a literal; a literal matches only itself
        assert len(fx.replace_pattern(gm, lambda a, k: lib.mul(a, k),
                                      lambda a, k: lib.div(a, k))) == 2
        assert fx.replace_pattern(gm, lambda a: lib.div(a, 5), lambda a: a) == []
        x, y = lib.tensor([1.0, 2.0]), lib.tensor([4.0, 8.0])
        np.testing.assert_allclose(gm(x, y).numpy(), (x + x + x - y + y / 3 + y / 4).numpy(),
                                   rtol=1e-6)
        codes.append(gm.code.replace("ptcore", "torch"))
    assert codes[0] == codes[1]


def test_replace_pattern_respects_escaping_values_and_filters():
    def f(x):
        r = ptcore.relu(x)
        return r * 2, r          # r escapes: relu(x) * 2 must not be rewritten

    gm = pfx.symbolic_trace(f)
    assert pfx.replace_pattern(gm, lambda z: ptcore.relu(z) * 2, lambda z: z * 3) == []

    def g(x):
        return ptcore.neg(x) + ptcore.neg(x + 1)

    gm = pfx.symbolic_trace(g)
    only_first = replace_pattern_with_filters(
        gm, lambda z: ptcore.neg(z), lambda z: ptcore.abs(z),
        match_filters=[lambda m, graph, pattern: m.placeholder_nodes[0].op == "placeholder"])
    assert len(only_first) == 1
    x = ptcore.tensor([-2.0])
    np.testing.assert_allclose(gm(x).numpy(), [2.0 + 1.0])


# -------------------------------------------------------------- conv-bn fusion
def _fuse_conv_bn(lib, fx, model):
    """The conv-bn fusion pass from the FX tutorial, written with the fx API."""
    model = copy.deepcopy(model)
    gm = fx.symbolic_trace(model)
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not isinstance(modules[node.target], lib.nn.BatchNorm2d):
            continue
        prev = node.args[0]
        if not (isinstance(prev, fx.Node) and prev.op == "call_module"
                and isinstance(modules[prev.target], lib.nn.Conv2d) and len(prev.users) == 1):
            continue
        conv, bn = modules[prev.target], modules[node.target]
        with lib.no_grad():
            scale = bn.weight / lib.sqrt(bn.running_var + bn.eps)
            fused = copy.deepcopy(conv)
            fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
            bias = conv.bias if conv.bias is not None else lib.zeros_like(bn.running_mean)
            fused.bias = lib.nn.Parameter((bias - bn.running_mean) * scale + bn.bias)
        parent, _, name = prev.target.rpartition(".")
        setattr(modules[parent] if parent else gm, name, fused)
        node.replace_all_uses_with(prev)
        gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


@needs_torch
def test_conv_bn_fusion_pass_matches_torch():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 5, 3), nn.BatchNorm2d(5), nn.ReLU(),
                             nn.Conv2d(5, 4, 3, bias=False), nn.BatchNorm2d(4))

    torch.manual_seed(0)
    tm, pm = build(torch), build(ptcore)
    with torch.no_grad():
        for mod in tm.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-1, 1)
                mod.running_var.uniform_(0.5, 2)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-1, 1)
    tm.eval()
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    pm.eval()
    tf, pf = _fuse_conv_bn(torch, tfx, tm), _fuse_conv_bn(ptcore, pfx, pm)
    assert [n.op for n in pf.graph.nodes] == [n.op for n in tf.graph.nodes]
    assert pf.code.replace("ptcore", "torch") == tf.code
    assert sorted(n for n, _ in pf.named_modules()) == sorted(n for n, _ in tf.named_modules())
    x = np.random.default_rng(3).standard_normal((2, 3, 9, 9)).astype(np.float32)
    ref = tm(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(tf(torch.tensor(x)).detach().numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pf(ptcore.tensor(x)).detach().numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pm(ptcore.tensor(x)).detach().numpy(), ref, rtol=1e-4, atol=1e-5)


@needs_torch
def test_replace_pattern_with_filters_options_match_torch():
    from torch.fx.subgraph_rewriter import replace_pattern_with_filters as t_replace
    results = []
    for fx, lib, rewrite in ((pfx, ptcore, replace_pattern_with_filters),
                             (tfx, torch, t_replace)):
        def f(x):
            return lib.mul(x, 2) + lib.mul(x, 3) + lib.add(x, 1)

        gm = fx.symbolic_trace(f)
        done = rewrite(gm, lambda a: lib.mul(a, 5), lambda a: lib.sub(a, 1),
                       ignore_literals=True)
        names = [len(r.replacements) for r in done]

        def callback(match, original_graph, pattern_graph):
            g = fx.Graph()
            a = g.placeholder("a")
            g.output(g.call_function(lib.neg, (a,)))
            return g
        done2 = rewrite(gm, lambda a: lib.add(a, 1), None, replacement_callback=callback)
        x = lib.tensor([1.0, 2.0])
        results.append((names, len(done2), gm(x).tolist(), gm.code.replace("ptcore", "torch")))
    assert results[0] == results[1]
