"""Graph, Node and GraphModule: construction, surgery, code generation,
copying and pickling, against torch.fx where it is installed."""
import copy
import operator
import pickle

import numpy as np
import pytest

import ptcore
import ptcore.fx as pfx
from ptcore.fx.node import map_arg

try:
    import torch
    import torch.fx as tfx
except ImportError:
    torch = tfx = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _hand_graph(fx, lib):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2.0)
    a = g.call_function(operator.add, (x, y))
    b = g.call_method("relu", (a,))
    c = g.call_function(lib.mul, (b, b), {})
    d = g.call_function(operator.getitem, (c, 0))
    g.output((c, d))
    return g


@needs_torch
def test_hand_built_graph_prints_and_generates_like_torch():
    pg, tg = _hand_graph(pfx, ptcore), _hand_graph(tfx, torch)
    assert str(pg).replace("ptcore", "torch") == str(tg)
    pgm = pfx.GraphModule(ptcore.nn.Module(), pg)
    tgm = tfx.GraphModule(torch.nn.Module(), tg)
    assert pgm.code.replace("ptcore", "torch") == tgm.code
    out = pgm(ptcore.tensor([[1.0, -5.0]]))
    np.testing.assert_allclose(out[0].numpy(), [[9.0, 0.0]])
    np.testing.assert_allclose(out[1].numpy(), [9.0, 0.0])
    for pn, tn in zip(pg.nodes, tg.nodes):
        assert pn.format_node().replace("ptcore", "torch") == tn.format_node()
        assert [u.name for u in pn.users] == [u.name for u in tn.users]
        assert [i.name for i in pn.all_input_nodes] == [i.name for i in tn.all_input_nodes]


@needs_torch
@pytest.mark.parametrize("fx,lib", [("p", "p"), ("t", "t")])
def test_replace_add_with_mul_tutorial(fx, lib):
    fx, lib = (pfx, ptcore) if fx == "p" else (tfx, torch)

    class M(lib.nn.Module):
        def forward(self, x, y):
            return lib.add(x, y) + lib.add(y, 1)

    gm = fx.symbolic_trace(M())
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is lib.add:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(lib.mul, node.args, node.kwargs)
                node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    out = gm(lib.tensor([2.0, 3.0]), lib.tensor([4.0, 5.0]))
    np.testing.assert_allclose(out.numpy(), [8.0 + 4.0, 15.0 + 5.0])
    assert [n.name for n in gm.graph.nodes] == ["x", "y", "mul", "mul_1", "add_2", "output"]
    assert "mul(x, y)" in gm.code and "add_2 = mul + mul_1" in gm.code


@needs_torch
def test_surgery_helpers_match_torch():
    results = []
    for fx, lib in ((pfx, ptcore), (tfx, torch)):
        g = _hand_graph(fx, lib)
        nodes = {n.name: n for n in g.nodes}
        with g.inserting_before(nodes["relu"]):
            n1 = g.call_function(operator.neg, (nodes["add"],))
            n2 = g.call_function(operator.abs, (n1,))
        with g.inserting_after(nodes["x"]):
            g.call_function(operator.pos, (nodes["x"],))
            g.call_function(operator.invert, (nodes["x"],))
        nodes["relu"].replace_input_with(nodes["add"], n2)
        nodes["mul"].update_arg(1, nodes["add"])
        nodes["mul"].update_kwarg("out", None)
        nodes["getitem"].prepend(g.call_function(operator.neg, (nodes["mul"],)))
        order = [n.name for n in g.nodes]
        links = (nodes["relu"].prev.name, nodes["relu"].next.name)
        changed = g.eliminate_dead_code()
        results.append((order, links, changed, [n.name for n in g.nodes],
                        nodes["mul"].args[1].name, dict(nodes["mul"].kwargs)))
    assert results[0] == results[1]


def test_erase_node_with_users_and_lint_errors():
    g = _hand_graph(pfx, ptcore)
    add = [n for n in g.nodes if n.name == "add"][0]
    with pytest.raises(RuntimeError, match="users"):
        g.erase_node(add)
    # a use before the definition is reported by lint
    relu = [n for n in g.nodes if n.name == "relu"][0]
    x = [n for n in g.nodes if n.name == "x"][0]
    x.prepend(relu)
    with pytest.raises(RuntimeError, match="before it has been defined"):
        g.lint()
    g2 = pfx.Graph()
    g2.output(g2.call_module("missing", (g2.placeholder("x"),)))
    with pytest.raises(AttributeError):
        pfx.GraphModule(ptcore.nn.Module(), g2)
    with pytest.raises(RuntimeError, match="missing"):
        pfx.GraphModule({}, g2)
    gm = pfx.GraphModule({"missing": ptcore.nn.ReLU()}, g2)
    del gm.missing
    with pytest.raises(RuntimeError, match="missing"):
        gm.graph.lint()
    with pytest.raises(ValueError):
        pfx.Graph().create_node("call_function", "not callable")


def test_node_copy_graph_copy_and_deepcopy():
    g = _hand_graph(pfx, ptcore)
    for n in g.nodes:
        n.meta["tag"] = n.name
    g2 = pfx.Graph()
    val_map = {}
    out = g2.graph_copy(g, val_map)
    g2.output(out)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert all(val_map[n].meta["tag"] == n.name for n in val_map)
    assert all(n.graph is g2 for n in g2.nodes)
    g3 = copy.deepcopy(g)
    assert str(g3) == str(g)
    gm = pfx.GraphModule(ptcore.nn.Module(), g3)
    x = ptcore.tensor([[1.0, 2.0]])
    ref = pfx.GraphModule(ptcore.nn.Module(), g)(x)
    np.testing.assert_array_equal(gm(x)[0].numpy(), ref[0].numpy())
    assert map_arg((val_map[next(iter(g.nodes))], [3]), lambda n: n.name) == ("x", [3])


def test_find_nodes_and_print_tabular(capsys):
    g = _hand_graph(pfx, ptcore)
    assert [n.name for n in g.find_nodes(op="placeholder")] == ["x", "y"]
    assert [n.name for n in g.find_nodes(op="call_function", target=operator.add)] == ["add"]
    assert g.find_nodes(op="call_module") == []
    g.print_tabular()
    out = capsys.readouterr().out
    assert "opcode" in out and "call_method" in out and "relu" in out


def _mk_net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU())
            self.dec = lib.nn.Linear(8, 2)
            self.unused = lib.nn.Linear(2, 2)
            self.register_buffer("shift", lib.ones(2))

        def forward(self, x):
            return self.dec(self.enc(x)) + self.shift
    return Net()


@needs_torch
def test_graph_module_state_dict_copy_pickle():
    torch.manual_seed(0)
    tm, pm = _mk_net(torch), _mk_net(ptcore)
    pm.load_state_dict({k: ptcore.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    pgm, tgm = pfx.symbolic_trace(pm), tfx.symbolic_trace(tm)
    assert list(pgm.state_dict()) == list(tgm.state_dict())
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    ref = pgm(ptcore.tensor(x)).detach().numpy()
    np.testing.assert_allclose(ref, tgm(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)

    dc = copy.deepcopy(pgm)
    assert dc.code == pgm.code and dc.graph is not pgm.graph
    assert dc.dec.weight is not pgm.dec.weight
    np.testing.assert_allclose(dc(ptcore.tensor(x)).detach().numpy(), ref)
    # the copy's graph is its own: editing it leaves pgm alone
    for n in dc.graph.nodes:
        if n.op == "call_function":
            n.target = operator.sub
    dc.recompile()
    assert "dec + shift" in pgm.code and "dec - shift" in dc.code

    pk = pickle.loads(pickle.dumps(pgm))
    assert pk.code == pgm.code
    # as torch's: a pickled GraphModule comes back named GraphModule
    assert type(pk).__name__ == type(pickle.loads(pickle.dumps(tgm))).__name__ == "GraphModule"
    np.testing.assert_allclose(pk(ptcore.tensor(x)).detach().numpy(), ref)
    assert list(pk.state_dict()) == list(pgm.state_dict())

    loaded = pfx.symbolic_trace(_mk_net(ptcore))
    loaded.load_state_dict(pgm.state_dict())
    np.testing.assert_allclose(loaded(ptcore.tensor(x)).detach().numpy(), ref)


def test_submodule_management():
    gm = pfx.symbolic_trace(_mk_net(ptcore))
    names = [n for n, _ in gm.named_modules()]
    assert "unused" not in names            # only what the graph uses is copied
    assert gm.add_submodule("extra.inner", ptcore.nn.Tanh())
    assert isinstance(gm.extra.inner, ptcore.nn.Tanh)
    assert not gm.add_submodule("shift.sub", ptcore.nn.Tanh())   # shift is a tensor
    with gm.graph.inserting_before(list(gm.graph.nodes)[-1]):
        out = list(gm.graph.nodes)[-1]
        t = gm.graph.call_module("extra.inner", (out.args[0],))
        out.args = (t,)
    gm.recompile()
    assert "self.extra.inner(add)" in gm.code
    x = ptcore.randn(2, 4)
    assert float(gm(x).detach().abs().max()) <= 1.0
    assert not gm.delete_submodule("nothing.here")
    gm.add_submodule("spare", ptcore.nn.ReLU())
    gm.delete_all_unused_submodules()
    names = [n for n, _ in gm.named_modules()]
    assert "spare" not in names and "extra.inner" in names and "enc.0" in names
    assert gm.delete_submodule("extra.inner")
    assert not hasattr(gm.extra, "inner")


def test_graph_module_from_dict_and_print_readable(capsys):
    g = pfx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("layer.weight")
    h = g.call_module("act", (g.call_function(ptcore.matmul, (x, w)),))
    g.output(h)
    gm = pfx.GraphModule({"layer.weight": ptcore.eye(2) * -1, "act": ptcore.nn.ReLU()}, g,
                         class_name="Hand")
    assert type(gm).__name__ == "Hand"
    np.testing.assert_array_equal(gm(ptcore.tensor([[1.0, -2.0]])).numpy(), [[0.0, 2.0]])
    text = gm.print_readable()
    assert "class Hand(ptcore.nn.Module):" in text and "def forward(self, x):" in text
    assert text in capsys.readouterr().out
    assert "layer.weight" in dict(gm.named_buffers())
    with pytest.raises(RuntimeError, match="act"):
        pfx.GraphModule({"layer.weight": ptcore.eye(2)}, g)


def test_generated_code_is_inspectable_and_errors_point_to_it():
    import inspect
    gm = pfx.symbolic_trace(lambda x: ptcore.relu(x).sum())
    assert "ptcore.relu(x)" in inspect.getsource(type(gm).forward)
    with pytest.raises(TypeError):
        gm(ptcore.ones(2), ptcore.ones(2))


@needs_torch
def test_node_arguments_are_immutable_like_torch():
    for fx, lib in ((pfx, ptcore), (tfx, torch)):
        g = fx.Graph()
        x = g.placeholder("x")
        c = g.call_function(lib.cat, ([x, x],), {"dim": 0})
        g.output(c)
        with pytest.raises(TypeError, match="does not support mutation"):
            c.args[0].append(x)
        with pytest.raises(TypeError, match="does not support mutation"):
            c.kwargs["dim"] = 1
        c.args = ([x, x, x],)           # assigning a new value is the way
        assert len(c.args[0]) == 3 and type(c.args[0]).__name__ == "immutable_list"
        assert list(x.users) == [c]
        gm = fx.GraphModule(lib.nn.Module(), g)
        assert gm(lib.ones(1)).shape == (3,)
    from ptcore.fx.immutable_collections import immutable_dict, immutable_list
    back = pickle.loads(pickle.dumps((immutable_list([1, 2]), immutable_dict(a=1))))
    assert back == ([1, 2], {"a": 1})
    assert type(back[0]) is immutable_list and type(back[1]) is immutable_dict


class _PairP(metaclass=pfx.ProxyableClassMeta):
    def __init__(self, a, b):
        self.a, self.b = a, b


if tfx is not None:
    class _PairT(metaclass=tfx.ProxyableClassMeta):
        def __init__(self, a, b):
            self.a, self.b = a, b


@needs_torch
def test_proxyable_class_meta():
    def f_p(x):
        p = _PairP(x, 2)
        return p.a * p.b

    def f_t(x):
        p = _PairT(x, 2)
        return p.a * p.b

    pgm, tgm = pfx.symbolic_trace(f_p), tfx.symbolic_trace(f_t)
    assert [(n.op, n.name.replace("_pair_p", "_pair")) for n in pgm.graph.nodes] == \
        [(n.op, n.name.replace("_pair_t", "_pair")) for n in tgm.graph.nodes]
    assert [n.target for n in pgm.graph.nodes][1] is _PairP
    np.testing.assert_array_equal(pgm(ptcore.ones(2)).numpy(), [2.0, 2.0])
    assert _PairP(1, 2).b == 2          # outside tracing: a normal class


def test_to_folder_round_trip(tmp_path):
    import importlib.util
    import sys
    import warnings

    model = ptcore.nn.Sequential(ptcore.nn.Linear(3, 4), ptcore.nn.Tanh(),
                                      ptcore.nn.Linear(4, 2))
    gm = pfx.symbolic_trace(model)
    folder = tmp_path / "fx_pkg_for_test"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        gm.to_folder(folder, "Saved")
    assert [str(x.message) for x in w if "pickled" in str(x.message)]   # Tanh is pickled
    text = (folder / "module.py").read_text()
    assert "class Saved(ptcore.nn.Module):" in text
    assert "Linear(in_features=3, out_features=4, bias=True)" in text
    spec = importlib.util.spec_from_file_location(
        "fx_pkg_for_test", folder / "__init__.py", submodule_search_locations=[str(folder)])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["fx_pkg_for_test"] = pkg
    try:
        spec.loader.exec_module(pkg)
        restored = pkg.Saved()
    finally:
        sys.modules.pop("fx_pkg_for_test", None)
        sys.modules.pop("fx_pkg_for_test.module", None)
    x = ptcore.randn(5, 3)
    np.testing.assert_array_equal(restored(x).detach().numpy(), gm(x).detach().numpy())


@needs_torch
def test_custom_codegen_like_torch():
    srcs = []
    for fx, lib in ((pfx, ptcore), (tfx, torch)):
        class ListCodeGen(fx.CodeGen):
            def gen_fn_def(self, free_vars, maybe_return_annotation):
                lst = ", ".join(free_vars)
                return f"def forward(self, args_list):\n    {lst} = args_list"

            def generate_output(self, output_args, **kwargs):
                return f"return [{', '.join(repr(a) for a in output_args)}]"

        def f(a, b):
            return a + b, a * b
        gm = fx.symbolic_trace(f)
        gm.graph.set_codegen(ListCodeGen())
        gm.recompile()
        out = gm([lib.tensor([2.0]), lib.tensor([3.0])])
        assert isinstance(out, list) and [float(v) for v in out] == [5.0, 6.0]
        srcs.append(gm.code.replace("ptcore", "torch"))
        assert "args_list" in copy.deepcopy(gm).code
    assert srcs[0] == srcs[1]
