"""ptcore.export against torch.export: the exported programs of the same
models with the same weights give the same values; graph signatures, state,
input guards, dynamic sizes, errors, and save/load (which must never run
code from the file)."""
import doctest
import importlib
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import ptcore
from ptcore import export as pe

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------
# models, written once for either library
# ---------------------------------------------------------------------------

def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 5)).eval()


def conv1d(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv1d(3, 5, 3), nn.GELU(), nn.AdaptiveAvgPool1d(2), nn.Flatten(),
                         nn.Softmax(-1))


def lstm(lib):
    return lib.nn.LSTM(6, 5, batch_first=True, num_layers=2)


def encoder(lib):
    return lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True).eval()


def attention(lib):
    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = lib.nn.MultiheadAttention(8, 2, batch_first=True)
            self.norm = lib.nn.LayerNorm(8)

        def forward(self, x):
            out, weights = self.attn(x, x, x)
            return self.norm(x + out), weights
    return Attention().eval()


def with_buffers(lib):
    class WithBuffers(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(6, 6)
            self.register_buffer("mean", lib.arange(6.0))
            self.register_buffer("scale", lib.full((6,), 2.0), persistent=False)
            self.offset = lib.tensor([0.5] * 6)          # a constant tensor attribute

        def forward(self, x):
            return self.fc((x - self.mean) / self.scale) + self.offset
    return WithBuffers()


def with_kwargs(lib):
    class WithKwargs(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(6, 4)

        def forward(self, x, *, mask=None, bias=1.5):
            y = self.fc(x) + bias
            if mask is not None:
                y = y.masked_fill(mask, 0.0)
            return y
    return WithKwargs()


def multi_out(lib):
    class MultiOut(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(6, 4)

        def forward(self, x, y):
            h = self.fc(x)
            return {"h": h, "pair": (h.sum(-1), lib.cat([h, y], dim=1)), "first": h[:, 0]}
    return MultiOut()


def sizes(lib):
    class Sizes(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(10, 8)
            self.ln = lib.nn.LayerNorm(8)

        def forward(self, idx):
            b, t = idx.shape
            h = lib.nn.functional.gelu(self.ln(self.emb(idx)))
            h = h.reshape(b * t, 8).view(b, t, 2, 4).transpose(1, 2)
            return h.softmax(-1).flatten(1)[:, 1:-1]
    return Sizes()


def _pt(t):
    return ptcore.from_numpy(t.detach().numpy().copy())


def _map(x, f):
    if isinstance(x, (tuple, list)):
        return type(x)(_map(a, f) for a in x)
    if isinstance(x, dict):
        return {k: _map(v, f) for k, v in x.items()}
    return f(x) if isinstance(x, torch.Tensor) else x


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [z for a in x for z in _leaves(a)]
    if isinstance(x, dict):
        return [z for k in sorted(x) for z in _leaves(x[k])]
    return [x]


def _pair(make, double=True):
    """The torch model and the ptcore model with the same weights."""
    torch.manual_seed(0)
    tm = make(torch)
    pm = make(ptcore)
    pm.load_state_dict({k: _pt(v) for k, v in tm.state_dict().items()})
    if double:
        tm, pm = tm.double(), pm.double()
    pm.train(tm.training)
    return tm, pm


def _same(a, b):
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        assert tuple(u.shape) == tuple(v.shape)
        np.testing.assert_allclose(v.detach().numpy(), u.detach().numpy(), rtol=1e-9,
                                   atol=1e-10)


def _targets(ep):
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]


CASES = [
    # (model, args, kwargs, another batch size or None (static))
    (mlp, lambda: (torch.randn(4, 6),), {}, 9),
    (cnn, lambda: (torch.randn(2, 3, 8, 8),), {}, 5),
    (conv1d, lambda: (torch.randn(2, 3, 9),), {}, 4),
    (lstm, lambda: (torch.randn(2, 7, 6),), {}, 3),
    (encoder, lambda: (torch.randn(2, 5, 8),), {}, 3),
    (attention, lambda: (torch.randn(2, 5, 8),), {}, 4),
    (with_buffers, lambda: (torch.randn(4, 6),), {}, 6),
    (with_kwargs, lambda: (torch.randn(4, 6),), {"mask": torch.rand(4, 4) > 0.5}, None),
    (multi_out, lambda: (torch.randn(4, 6), torch.randn(4, 2)), {}, None),
    (sizes, lambda: (torch.randint(0, 10, (2, 3)),), {}, 5),
]


@pytest.mark.parametrize("make,args,kwargs,batch", CASES, ids=[c[0].__name__ for c in CASES])
def test_exported_module_matches_torch(make, args, kwargs, batch):
    tm, pm = _pair(make)
    torch.manual_seed(1)
    args = _map(args(), lambda t: t.double() if t.is_floating_point() else t)
    kwargs = dict(kwargs)
    tdyn = pdyn = None
    if batch is not None:
        tdyn = ({0: torch.export.Dim("batch", min=1, max=64)},) + (None,) * (len(args) - 1)
        pdyn = ({0: pe.Dim("batch", min=1, max=64)},) + (None,) * (len(args) - 1)
    tep = torch.export.export(tm, args, kwargs, dynamic_shapes=tdyn)
    pep = pe.export(pm, _map(args, _pt), _map(kwargs, _pt), dynamic_shapes=pdyn)
    _same(tep.module()(*args, **kwargs), pep.module()(*_map(args, _pt), **_map(kwargs, _pt)))
    assert pep.graph_signature.parameters == tep.graph_signature.parameters
    assert pep.graph_signature.buffers == tep.graph_signature.buffers
    assert set(pep.state_dict) == set(tep.state_dict)
    assert set(pep.constants) == set(tep.constants)
    assert list(pep.module().state_dict()) == list(pm.state_dict())
    if batch is not None:
        x = args[0]
        other = (torch.randint(0, 10, (batch,) + tuple(x.shape[1:])) if not x.is_floating_point()
                 else torch.randn(batch, *x.shape[1:], dtype=x.dtype))
        _same(tep.module()(other), pep.module()(_pt(other)))


@pytest.mark.parametrize("make", [mlp, cnn, conv1d])
def test_graph_ops_match_torch(make):
    tm, pm = _pair(make)
    x = torch.randn(2, 6) if make is mlp else torch.randn(2, 3, 8, 8) if make is cnn \
        else torch.randn(2, 3, 9)
    x = x.double()
    tep = torch.export.export(tm, (x,))
    pep = pe.export(pm, (_pt(x),))
    assert [t.replace("torch.", "") for t in _targets(tep)] == _targets(pep)
    assert [n.name for n in pep.graph.nodes] == [n.name for n in tep.graph.nodes]


def test_signature_and_state_match_torch():
    tm, pm = _pair(with_buffers)
    x = torch.randn(3, 6).double()
    tep = torch.export.export(tm, (x,))
    pep = pe.export(pm, (_pt(x),))
    ts, ps = tep.graph_signature, pep.graph_signature
    assert [(s.kind.name, s.arg.name, s.target, s.persistent) for s in ps.input_specs] == \
        [(s.kind.name, s.arg.name, s.target, s.persistent) for s in ts.input_specs]
    assert [s.kind.name for s in ps.output_specs] == [s.kind.name for s in ts.output_specs]
    assert ps.user_inputs == ts.user_inputs == ("x",)
    assert ps.inputs_to_parameters == ts.inputs_to_parameters
    assert ps.inputs_to_buffers == ts.inputs_to_buffers
    assert ps.non_persistent_buffers == ts.non_persistent_buffers
    assert dict(pep.named_parameters()).keys() == dict(tep.named_parameters()).keys()
    for k in tep.state_dict:
        np.testing.assert_array_equal(pep.state_dict[k].detach().numpy(),
                                      tep.state_dict[k].detach().numpy())
    pm2 = pep.module()
    tm2 = tep.module()
    assert list(pm2.state_dict()) == list(tm2.state_dict())
    assert dict(pm2.named_buffers()).keys() == dict(tm2.named_buffers()).keys()
    assert isinstance(pm2, ptcore.fx.GraphModule)
    assert isinstance(pm2.fc.weight, ptcore.nn.Parameter)
    assert pep.example_inputs[0][0] is not None and pep.example_inputs[1] == {}
    assert pep.module_call_graph[0].fqn == ""
    assert pep.range_constraints == {} == tep.range_constraints


def test_call_and_static_guards_raise_like_torch():
    tm, pm = _pair(mlp)
    x = torch.randn(2, 6).double()
    tep, pep = torch.export.export(tm, (x,)), pe.export(pm, (_pt(x),))
    for ep in (tep, pep):
        with pytest.raises(RuntimeError, match="module()"):
            ep(x if ep is tep else _pt(x))
    bad = torch.randn(3, 6).double()
    with pytest.raises(AssertionError):
        tep.module()(bad)
    with pytest.raises(AssertionError, match=r"input.size\(\)\[0\] == 2"):
        pep.module()(_pt(bad))
    with pytest.raises(ValueError):
        tep.module()(x, x)
    with pytest.raises(ValueError, match="tree spec"):
        pep.module()(_pt(x), _pt(x))


def test_dynamic_guards_raise_like_torch():
    tm, pm = _pair(mlp)
    x = torch.randn(2, 6).double()
    tep = torch.export.export(tm, (x,), dynamic_shapes={"input": {0: torch.export.Dim(
        "batch", min=1, max=16)}})
    pep = pe.export(pm, (_pt(x),), dynamic_shapes={"input": {0: pe.Dim("batch", min=1,
                                                                          max=16)}})
    assert [repr(v) for v in pep.range_constraints.values()] == \
        [repr(v) for v in tep.range_constraints.values()] == ["VR[1, 16]"]
    _same(tep.module()(torch.ones(16, 6).double()), pep.module()(ptcore.ones(16, 6).double()))
    for shape in [(17, 6), (4, 5), (4, 6, 1)]:
        bad = torch.randn(*shape).double()
        with pytest.raises((AssertionError, RuntimeError)):    # (torch: a guard or the op)
            tep.module()(bad)
        with pytest.raises(AssertionError, match="Guard failed"):
            pep.module()(_pt(bad))


def test_shared_dim_must_agree():
    class Add(ptcore.nn.Module):
        def forward(self, a, b):
            return a + b
    d = pe.Dim("n", max=10)
    ep = pe.export(Add(), (ptcore.ones(3), ptcore.ones(3)), dynamic_shapes=({0: d}, {0: d}))
    assert ep.module()(ptcore.ones(5), ptcore.ones(5)).tolist() == [2.0] * 5
    with pytest.raises(AssertionError, match="Guard failed"):
        ep.module()(ptcore.ones(5), ptcore.ones(4))
    with pytest.raises(pe.UserError):
        pe.export(Add(), (ptcore.ones(3), ptcore.ones(4)), dynamic_shapes=({0: d}, {0: d}))


def test_dim_hints_and_dims():
    m = ptcore.nn.ReLU()
    x = ptcore.randn(4, 3)
    for hint in (pe.Dim.AUTO, pe.Dim.DYNAMIC):
        ep = pe.export(m, (x,), dynamic_shapes=({0: hint},))
        assert [repr(v) for v in ep.range_constraints.values()] == ["VR[2, int_oo]"]
        assert ep.module()(ptcore.ones(7, 3)).shape == (7, 3)
    ep = pe.export(m, (x,), dynamic_shapes=({0: pe.Dim.STATIC},))
    assert ep.range_constraints == {}
    # (Dim.AUTO with an example size of 1 is specialised, as torch does)
    ep = pe.export(m, (ptcore.ones(1, 3),), dynamic_shapes=({0: pe.Dim.AUTO},))
    assert ep.range_constraints == {}
    a, b = pe.dims("a", "b", min=2)
    assert (a.__name__, b.__name__, a.min, b.min) == ("a", "b", 2, 2)
    assert repr(pe.Dim("batch", min=3, max=10)) == "Dim('batch', min=3, max=10)"
    assert repr(pe.Dim.AUTO) == repr(torch.export.Dim.AUTO)
    sc = pe.ShapesCollection()
    sc[x] = {0: pe.Dim("b")}
    assert sc.dynamic_shapes(m, (x,)) == ({0: sc[x][0]},)


def test_errors_match_torch_classes():
    m = ptcore.nn.ReLU()
    tm = torch.nn.ReLU()
    cases = [
        (lambda lib, E: E.export(tm if lib is torch else m, (lib.ones(1, 3),),
                                 dynamic_shapes=({0: E.Dim("b", max=8)},)), RuntimeError),
        (lambda lib, E: E.export(tm if lib is torch else m, (lib.ones(20, 3),),
                                 dynamic_shapes=({0: E.Dim("b", min=2, max=8)},)), RuntimeError),
        (lambda lib, E: E.export(tm if lib is torch else m, (lib.ones(2, 3),),
                                 dynamic_shapes={"x": None}), RuntimeError),
        (lambda lib, E: E.export(tm if lib is torch else m, lib.ones(2, 3)), RuntimeError),
        (lambda lib, E: E.export(lambda x: x, (lib.ones(2),)), ValueError),
    ]
    for make, cls in cases:
        with pytest.raises(cls) as t_err:
            make(torch, torch.export)
        with pytest.raises(cls) as p_err:
            make(ptcore, pe)
        assert isinstance(p_err.value, RuntimeError) == isinstance(t_err.value, RuntimeError)
    with pytest.raises(pe.ConstraintViolationError, match="not in range"):
        pe.export(m, (ptcore.ones(20, 3),), dynamic_shapes=({0: pe.Dim("b", min=2, max=8)},))


def test_data_dependent_control_flow_raises():
    def make(lib):
        class Branch(lib.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x + 1
                return x - 1
        return Branch()
    with pytest.raises(RuntimeError) as t_err:
        torch.export.export(make(torch), (torch.ones(3),))
    with pytest.raises(pe.GuardOnDataDependentSymNode, match="data-dependent"):
        pe.export(make(ptcore), (ptcore.ones(3),))
    assert type(t_err.value).__name__ == pe.GuardOnDataDependentSymNode.__name__
    assert issubclass(pe.GuardOnDataDependentSymNode, RuntimeError)


def test_view_on_dynamic_size_follows_input():
    class Flat(ptcore.nn.Module):
        def forward(self, x):
            n = x.size(0)
            return x.view(n, -1)[:, : x.shape[1] - 1] * 2
    ep = pe.export(Flat(), (ptcore.randn(3, 2, 4),), dynamic_shapes=({0: pe.Dim("b")},))
    assert "aten.sym_size.int" in _targets(ep)
    x = ptcore.randn(6, 2, 4)
    np.testing.assert_array_equal(ep.module()(x).numpy(), (x.view(6, -1)[:, :1] * 2).numpy())
    static = pe.export(Flat(), (ptcore.randn(3, 2, 4),))
    assert "aten.sym_size.int" not in _targets(static)


def test_run_decompositions_matches_torch():
    tm, pm = _pair(mlp)
    x = torch.randn(2, 6).double()
    tdec = torch.export.export(tm, (x,)).run_decompositions()
    pep = pe.export(pm, (_pt(x),))
    pdec = pep.run_decompositions()
    assert [t.replace("torch.", "") for t in _targets(tdec)] == _targets(pdec)
    assert _targets(pep) == ["aten.linear.default", "aten.relu.default", "aten.linear.default"]
    _same(tdec.module()(x), pdec.module()(_pt(x)))
    kept = pep.run_decompositions({})
    assert _targets(kept) == _targets(pep)


def test_str_shows_graph_and_signature():
    ep = pe.export(mlp(ptcore), (ptcore.randn(2, 6),))
    s = str(ep)
    assert s.startswith("ExportedProgram:")
    for part in ("ptcore.ops.aten.linear.default", "Graph signature", "p_0_weight: PARAMETER",
                 "input: USER_INPUT", "Range constraints: {}"):
        assert part in s


def _roundtrip(ep, path=None):
    if path is not None:
        pe.save(ep, path)
        return pe.load(path)
    f = io.BytesIO()
    pe.save(ep, f)
    f.seek(0)
    return pe.load(f)


def test_save_load_round_trip(tmp_path):
    pm = with_kwargs(ptcore)
    x, mask = ptcore.randn(3, 6), ptcore.rand(3, 4) > 0.5
    ep = pe.export(pm, (x,), {"mask": mask}, dynamic_shapes={"x": {0: pe.Dim("b", max=9)},
                                                             "mask": {0: pe.Dim("b", max=9)}})
    for loaded in (_roundtrip(ep), _roundtrip(ep, str(tmp_path / "m.pt2"))):
        assert str(loaded.graph_signature) == str(ep.graph_signature)
        assert _targets(loaded) == _targets(ep)
        assert loaded.range_constraints == ep.range_constraints
        y, m2 = ptcore.randn(7, 6), ptcore.rand(7, 4) > 0.5
        np.testing.assert_array_equal(loaded.module()(y, mask=m2).detach().numpy(),
                                      pm(y, mask=m2).detach().numpy())
        with pytest.raises(AssertionError):
            loaded.module()(ptcore.randn(10, 6), mask=ptcore.rand(10, 4) > 0.5)
        assert list(loaded.module().state_dict()) == list(pm.state_dict())
    nested = _roundtrip(pe.export(multi_out(ptcore), (ptcore.randn(2, 6), ptcore.randn(2, 2))))
    out = nested.module()(ptcore.randn(2, 6), ptcore.randn(2, 2))
    assert set(out) == {"h", "pair", "first"} and isinstance(out["pair"], tuple)
    bufs = _roundtrip(pe.export(with_buffers(ptcore), (ptcore.randn(2, 6),)))
    assert set(bufs.constants) == {"scale", "offset"} and set(bufs.state_dict) == \
        {"fc.weight", "fc.bias", "mean"}
    with pytest.raises(TypeError):
        pe.save(pm, io.BytesIO())


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch /tmp/ptcore_export_pwned",))


def _rewritten(data, program=None, tensors=None):
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in zin.namelist():
            d = zin.read(n)
            if n.endswith("program.json") and program is not None:
                d = program(d)
            if n.endswith("tensors.pt") and tensors is not None:
                d = tensors(d)
            z.writestr(n, d)
    out.seek(0)
    return out


def _edit(fn):
    def run(d):
        p = json.loads(d)
        fn(p)
        return json.dumps(p).encode()
    return run


def test_load_rejects_hostile_files():
    ep = pe.export(mlp(ptcore), (ptcore.randn(2, 6),))
    f = io.BytesIO()
    pe.save(ep, f)
    data = f.getvalue()
    flag = "/tmp/ptcore_export_pwned"
    if os.path.exists(flag):
        os.remove(flag)

    def set_target(p, t):
        for n in p["nodes"]:
            if n["op"] == "call_function":
                n["target"] = t

    bad = [io.BytesIO(b""), io.BytesIO(b"garbage" * 10), io.BytesIO(data[: len(data) // 2]),
           _rewritten(data, program=lambda d: b"{"),
           _rewritten(data, program=lambda d: d[:-7]),
           _rewritten(data, program=lambda d: b"[1, 2]"),
           _rewritten(data, program=lambda d: b"[" * 100000 + b"]" * 100000),
           _rewritten(data, program=_edit(lambda p: set_target(p, "ptcore:ptcore.save"))),
           _rewritten(data, program=_edit(lambda p: set_target(p, "ops:os.system.default"))),
           _rewritten(data, program=_edit(lambda p: set_target(p, "builtins.eval"))),
           _rewritten(data, program=_edit(lambda p: p["nodes"][0].update(
               name="__import__('os').system('touch /tmp/ptcore_export_pwned')"))),
           _rewritten(data, program=_edit(lambda p: p.update(
               arg_names=["x=__import__('os').system('touch /tmp/ptcore_export_pwned')"]))),
           _rewritten(data, program=_edit(lambda p: p["input_specs"][0].update(
               target="x;__import__('os')"))),
           _rewritten(data, program=_edit(lambda p: p["nodes"][-2].update(
               args={"tuple": [{"node": "nope"}]}))),
           _rewritten(data, program=_edit(lambda p: p.update(in_spec={"type": "set"}))),
           _rewritten(data, program=_edit(lambda p: p.update(version=99))),
           _rewritten(data, tensors=lambda d: pickle.dumps(_Boom())),
           _rewritten(data, tensors=lambda d: d[:40])]
    for f in bad:
        with pytest.raises(pe._serialize.SerializationError):
            m = pe.load(f)
            m.module()(ptcore.randn(2, 6))
    assert issubclass(pe._serialize.SerializationError, RuntimeError)
    assert not os.path.exists(flag)


def test_exported_module_exports_to_onnx():
    if not hasattr(ptcore, "onnx") or not hasattr(ptcore.onnx, "export"):
        pytest.skip("no ptcore.onnx")
    ep = pe.export(mlp(ptcore), (ptcore.randn(2, 6),))
    f = io.BytesIO()
    ptcore.onnx.export(ep.module(), (ptcore.randn(2, 6),), f)
    assert len(f.getvalue()) > 100


def test_buffer_mutation_leaves_module_and_runs_like_torch():
    def make(lib):
        class Counter(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", lib.zeros(1))

            def forward(self, x):
                self.count.add_(1)
                return x + self.count
        return Counter()
    tm, pm = make(torch), make(ptcore)
    tep, pep = torch.export.export(tm, (torch.zeros(2),)), pe.export(pm, (ptcore.zeros(2),))
    assert pm.count.tolist() == tm.count.tolist() == [0.0]     # the export changed nothing
    tg, pg = tep.module(), pep.module()
    for _ in range(2):
        assert pg(ptcore.zeros(2)).tolist() == tg(torch.zeros(2)).tolist()
    assert pg.count.tolist() == tg.count.tolist() == [2.0]


@pytest.mark.parametrize("modname", ["ptcore.export", "ptcore.export.dynamic_shapes",
                                     "ptcore.export.graph_signature"])
def test_docstring_examples(modname):
    mod = importlib.import_module(modname)
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(
        mod, globs={"ptcore": ptcore}) if t.examples and t.name.startswith(modname)]
    assert tests
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


def test_train_mode_batch_norm_and_dropout_record_aten_ops():
    m = ptcore.nn.Sequential(ptcore.nn.Linear(4, 4), ptcore.nn.BatchNorm1d(4),
                             ptcore.nn.Dropout(0.5))
    ep = pe.export(m, (ptcore.randn(3, 4),))
    assert _targets(ep) == ["aten.linear.default", "aten.add_.Tensor", "aten.batch_norm.default",
                            "aten.dropout.default"]
    assert m[1].num_batches_tracked.item() == 0         # (the export changed nothing)
    g = ep.module()
    g(ptcore.randn(3, 4))
    assert g.get_submodule("1").num_batches_tracked.item() == 1
