"""ptcore.jit: tracing into graphs, running them with autograd, save/load
without the model's class, freezing and folding, the annotations, and the
refusal of bad files — against eager ptcore and torch.jit 2.13."""
import io
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore import jit

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy()


def _to_torch(pm, tm):
    """Copy ptcore module ``pm``'s weights into the same-shaped torch module ``tm``."""
    sd = {k: torch.from_numpy(_np(v).copy()) for k, v in pm.state_dict().items()}
    tm.load_state_dict(sd)
    return tm


class LeNet:
    @staticmethod
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = lib.nn.Conv2d(1, 4, 5, padding=2)
                self.c2 = lib.nn.Conv2d(4, 8, 5)
                self.f1 = lib.nn.Linear(8 * 5 * 5, 32)
                self.f2 = lib.nn.Linear(32, 10)

            def forward(self, x):
                F_ = lib.nn.functional
                x = F_.max_pool2d(F_.relu(self.c1(x)), 2)
                x = F_.max_pool2d(F_.relu(self.c2(x)), 2)
                x = x.view(x.size(0), -1)
                return self.f2(F_.relu(self.f1(x)))
        return Net()


def _models(lib):
    lib.manual_seed(0)
    return {
        "mlp": (lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.Tanh(), lib.nn.Linear(16, 3)),
                (4, 6)),
        "lenet": (LeNet.make(lib), (2, 1, 28, 28)),
        "gru": (lib.nn.GRU(5, 7, batch_first=True), (3, 4, 5)),
        "lstm": (lib.nn.LSTM(5, 7, num_layers=2), (4, 3, 5)),
        "encoder": (lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                    (2, 5, 8)),
    }


def _first(o):
    return o[0] if isinstance(o, tuple) else o


@pytest.mark.parametrize("name", ["mlp", "lenet", "gru", "lstm", "encoder"])
def test_trace_matches_eager_and_torch(name):
    pm, shape = _models(ptcore)[name]
    tm = _to_torch(pm, _models(torch)[name][0])
    pm.eval()
    tm.eval()
    xn = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    px, tx = ptcore.tensor(xn), torch.tensor(xn)
    sm = jit.trace(pm, px)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = torch.jit.trace(tm, tx, check_trace=False)
    assert isinstance(sm, jit.ScriptModule) and isinstance(sm, nn.Module)
    x2n = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    for x in (xn, x2n):
        got = _first(sm(ptcore.tensor(x)))
        np.testing.assert_allclose(_np(got), _np(_first(pm(ptcore.tensor(x)))), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_allclose(_np(got), _first(ts(torch.tensor(x))).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    assert list(sm.state_dict()) == list(pm.state_dict())
    assert sm.graph.nodes and "graph(" in str(sm.graph) and "def forward(self" in sm.code


@pytest.mark.parametrize("name", ["mlp", "lenet", "encoder"])
def test_gradients_through_traced_module_equal_eager(name):
    pm, shape = _models(ptcore)[name]
    x = ptcore.randn(*shape)
    sm = jit.trace(pm, x)
    for p in pm.parameters():
        p.grad = None
    _first(pm(x)).square().sum().backward()
    eager = [p.grad.clone() for p in pm.parameters()]
    for p in pm.parameters():
        p.grad = None
    _first(sm(x)).square().sum().backward()
    # the traced module shares the parameters
    for g, p in zip(eager, pm.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(g), rtol=1e-5, atol=1e-6)


def test_training_a_traced_model_follows_eager():
    ptcore.manual_seed(3)
    a = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    b = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    b.load_state_dict(a.state_dict())
    x, y = ptcore.randn(16, 4), ptcore.randn(16, 1)
    sb = jit.trace(b, x)
    oa = ptcore.optim.SGD(a.parameters(), lr=0.1)
    ob = ptcore.optim.SGD(sb.parameters(), lr=0.1)
    for _ in range(5):
        for m, o in ((a, oa), (sb, ob)):
            o.zero_grad()
            F.mse_loss(m(x), y).backward()
            o.step()
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(_np(p), _np(q), rtol=1e-6, atol=1e-7)


def test_trace_function_graph_and_code():
    def f(a, b):
        return ptcore.relu(a @ b + 1).sum(dim=0), a.t()
    a, b = ptcore.randn(3, 4), ptcore.randn(4, 2)
    sf = jit.trace(f, (a, b))
    assert isinstance(sf, jit.ScriptFunction)
    ops = [n.op[1] for n in sf.graph.nodes]
    assert ops == ["matmul", "add", "relu", "sum", "t"], ops
    a2, b2 = ptcore.randn(3, 4), ptcore.randn(4, 2)
    for got, exp in zip(sf(a2, b2), f(a2, b2)):
        np.testing.assert_allclose(_np(got), _np(exp), rtol=1e-6)
    assert "def f(input_0, input_1):" in sf.code and "ptcore.relu(" in sf.code


def test_tracer_warnings_as_torch():
    def f(lib):
        def g(x):
            return x * float(x.sum())
        return g
    with warnings.catch_warnings(record=True) as pw:
        warnings.simplefilter("always")
        jit.trace(f(ptcore), ptcore.ones(3))
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        torch.jit.trace(f(torch), torch.ones(3))
    pcat = {w.category.__name__ for w in pw}
    tcat = {w.category.__name__ for w in tw}
    assert "TracerWarning" in pcat and "TracerWarning" in tcat
    msg = [str(w.message) for w in pw if w.category is jit.TracerWarning][0]
    assert "Converting a tensor to a Python" in msg and "constant" in msg


def test_check_trace_catches_python_value_dependence():
    # the float is a constant of the trace; another input exposes it
    def g(x):
        return x * float(x.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(jit.TracingCheckError):
            jit.trace(g, ptcore.ones(3), check_inputs=[(ptcore.full((3,), 2.0),)])


def test_is_tracing_and_annotations():
    seen = []

    def g(x):
        seen.append((jit.is_tracing(), jit.is_scripting()))
        return x + jit.annotate(int, 1)
    jit.trace(g, ptcore.ones(2), check_trace=False)
    assert seen == [(True, False)]
    assert not jit.is_tracing()

    class M(nn.Module):
        c: jit.Final[int] = 2

        @jit.export
        def other(self, x):
            return x

        @jit.ignore
        def py(self, x):
            return x

        @jit.unused
        def never(self, x):
            return x

        def forward(self, x):
            return x * self.c
    m = jit.trace(M(), ptcore.ones(2))
    np.testing.assert_array_equal(_np(m(ptcore.ones(2))), [2.0, 2.0])
    fut = jit.fork(lambda a: a + 1, ptcore.ones(1))
    assert jit.wait(fut).item() == 2.0


def test_trace_module_several_methods():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

        def twice(self, x):
            return self.lin(x) * 2
    m = M()
    x = ptcore.randn(2, 3)
    sm = jit.trace_module(m, {"forward": x, "twice": x})
    np.testing.assert_allclose(_np(sm.twice(x)), _np(m.twice(x)), rtol=1e-6)
    np.testing.assert_allclose(_np(sm(x)), _np(m(x)), rtol=1e-6)


def test_save_load_in_a_fresh_process_without_the_class(tmp_path):
    pm = LeNet.make(ptcore)
    x = ptcore.randn(1, 1, 28, 28)
    sm = jit.trace(pm.eval(), x)
    path = tmp_path / "lenet.pt"
    jit.save(sm, str(path))
    np.save(tmp_path / "x.npy", _np(x))
    np.save(tmp_path / "y.npy", _np(pm(x)))
    code = (f"import numpy as np, ptcore\n"
            f"m = ptcore.jit.load({str(path)!r})\n"
            f"x = ptcore.tensor(np.load({str(tmp_path / 'x.npy')!r}))\n"
            f"y = np.load({str(tmp_path / 'y.npy')!r})\n"
            f"np.testing.assert_allclose(m(x).detach().numpy(), y, rtol=1e-6, atol=1e-6)\n"
            f"assert not m.training and m.original_name == 'Net'\n"
            f"print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_save_load_function_and_extra_files():
    sf = jit.trace(lambda a: ptcore.sin(a) * 2, ptcore.ones(3))
    buf = io.BytesIO()
    jit.save(sf, buf, _extra_files={"note.txt": "hello"})
    buf.seek(0)
    extra = {"note.txt": ""}
    lf = jit.load(buf, _extra_files=extra)
    assert extra["note.txt"] == b"hello"
    x = ptcore.randn(3)
    np.testing.assert_allclose(_np(lf(x)), _np(ptcore.sin(x) * 2), rtol=1e-6)


def _saved(sm):
    buf = io.BytesIO()
    jit.save(sm, buf)
    return buf.getvalue()


def _rewrite(data, name, new):
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, new if item.filename == name else zin.read(item.filename))
    return out.getvalue()


def test_load_refuses_bad_files():
    sm = jit.trace(nn.Linear(3, 2), ptcore.ones(1, 3))
    data = _saved(sm)
    with pytest.raises(jit.JitError, match="truncated or corrupt"):
        jit.load(io.BytesIO(data[: len(data) // 2]))
    with pytest.raises(jit.JitError, match="not a zip"):
        jit.load(io.BytesIO(b"\x80\x02cos\nsystem\n."))
    import json
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = json.loads(z.read("model/meta.json"))
    # an op that is not in the operator table: refused, nothing is called
    meta["graphs"]["forward"]["nodes"][0][0] = ["os", "system"]
    with pytest.raises(jit.JitError, match="unknown op"):
        jit.load(io.BytesIO(_rewrite(data, "model/meta.json", json.dumps(meta))))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = json.loads(z.read("model/meta.json"))
    meta["graphs"]["forward"]["outputs"] = {"v": 999}
    with pytest.raises(jit.JitError, match="never defined"):
        jit.load(io.BytesIO(_rewrite(data, "model/meta.json", json.dumps(meta))))
    # tensor bytes that do not fit the recorded shape
    with pytest.raises(jit.JitError, match="bytes"):
        jit.load(io.BytesIO(_rewrite(data, "model/tensors/0", b"\x00" * 5)))


def test_load_reads_a_torchscript_archive(tmp_path):
    torch.manual_seed(0)
    tl = torch.nn.Linear(2, 2)
    tm = torch.jit.trace(tl, torch.ones(1, 2))
    path = tmp_path / "ts.pt"
    torch.jit.save(tm, str(path))
    m = jit.load(str(path))
    x = np.array([[1.0, -2.0]], dtype=np.float32)
    np.testing.assert_allclose(m(ptcore.from_numpy(x)).detach().numpy(),
                               tl(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_freeze_and_optimize_for_inference_fold_batch_norm():
    ptcore.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                      nn.Linear(8 * 6 * 6, 4), nn.BatchNorm1d(4))
    m(ptcore.randn(8, 3, 8, 8))         # running statistics that are not the defaults
    m.eval()
    x = ptcore.randn(2, 3, 8, 8)
    sm = jit.trace(m, x)
    with pytest.raises(RuntimeError, match="eval mode"):
        jit.freeze(jit.trace(nn.Linear(2, 2).train(), ptcore.ones(1, 2)))
    fr = jit.freeze(sm)
    assert not any(v.kind == "param" for v in fr.graph.values.values())
    np.testing.assert_allclose(_np(fr(x)), _np(m(x)), rtol=1e-5, atol=1e-5)
    opt = jit.optimize_for_inference(sm)
    ops = [n.op[1] for n in opt.graph.nodes]
    assert "batch_norm" not in ops, ops
    np.testing.assert_allclose(_np(opt(x)), _np(m(x)), rtol=1e-5, atol=1e-5)


def test_cse_and_dce():
    def f(a):
        b = ptcore.exp(a)
        c = ptcore.exp(a)          # the same as b
        ptcore.sin(a)              # unused
        return b + c
    sf = jit.trace(f, ptcore.ones(3))
    assert [n.op[1] for n in sf.graph.nodes] == ["exp", "exp", "sin", "add"]
    from ptcore.jit import _passes
    _passes.eliminate_common_subexpressions(sf.graph)
    _passes.eliminate_dead_code(sf.graph)
    assert [n.op[1] for n in sf.graph.nodes] == ["exp", "add"]
    x = ptcore.randn(3)
    np.testing.assert_allclose(_np(sf(x)), _np(2 * ptcore.exp(x)), rtol=1e-6)


def test_trace_rejects_non_tensor_inputs_and_outputs():
    # torch: RuntimeError "Type 'Tuple[str]' cannot be traced. ..."
    with pytest.raises(RuntimeError, match=r"Type 'Tuple\[str\]' cannot be traced"):
        jit.trace(lambda a: a, ("x",))
    msg = "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output"
    with pytest.raises(RuntimeError, match=msg):
        jit.trace(lambda a: 3, ptcore.ones(1))
    # numbers, None and tolist() inside a returned container too (torch 2.13)
    for f in (lambda a: a.tolist(), lambda a: (a, 3), lambda a: [a, None],
              lambda a: (a, (a * 2, [a, 1.5]))):
        with pytest.raises(RuntimeError, match=msg):
            jit.trace(f, ptcore.ones(2), check_trace=False)
    assert jit.trace(lambda a: (a, (a * 2, [a])), ptcore.ones(2))(ptcore.ones(2))[1][0][0] == 2



def test_interpreter_frees_dead_intermediates():
    """A traced graph drops each intermediate after its last use (as eager
    code does), never a value that a later step or an output reads, and
    gives the eager result."""
    from ptcore.jit._ir import _collect

    w1, w2, b1 = ptcore.randn(6, 6), ptcore.randn(6, 6), ptcore.randn(6)

    def f(x):
        a = F.linear(x, w1, b1)     # dead after b
        b = ptcore.relu(a)          # read by c and by the outputs
        c = F.linear(b, w2)
        return c + b, b

    x = ptcore.randn(4, 6)
    with ptcore.no_grad():
        tf = ptcore.jit.trace(f, x)
        want = f(x)
        got = tf(x)
    for w, g in zip(want, got):
        assert np.array_equal(w.numpy(), g.numpy())
    g = tf.graph
    outs = []
    _collect(g.outputs, outs)
    freed = [v for f_ in g._frees for v in f_]
    assert freed and not set(outs) & set(freed) and len(freed) == len(set(freed))

    def reads(step):
        return {v for m in getattr(step, "nodes", (step,)) for v in m.input_ids()}

    for i, f_ in enumerate(g._frees):
        for vid in f_:
            assert vid in reads(g._plan[i])
            assert not any(vid in reads(later) for later in g._plan[i + 1:])


def test_trace_function_capturing_tensors():
    """A traced function that closes over tensors records them as graph
    constants, as torch.jit.trace does (it used to recurse without end:
    making the constant called ``detach`` inside the tracing layer); one that
    requires grad is refused with torch's RuntimeError, under no_grad too."""
    w, b = ptcore.randn(5, 3), ptcore.randn(3)

    def f(x):
        return ptcore.tanh(x @ w + b)

    x, y = ptcore.randn(4, 5), ptcore.randn(4, 5)
    tf = jit.trace(f, x)
    np.testing.assert_allclose(tf(y).numpy(), f(y).numpy(), rtol=1e-6, atol=1e-6)
    assert sum(v.kind == "const" for v in tf.graph.values.values()) == 2
    tw, tb = torch.from_numpy(w.numpy()), torch.from_numpy(b.numpy())
    tt = torch.jit.trace(lambda x: torch.tanh(x @ tw + tb), torch.from_numpy(x.numpy()))
    np.testing.assert_allclose(tt(torch.from_numpy(y.numpy())).numpy(), tf(y).numpy(),
                               rtol=1e-6, atol=1e-6)

    lin, tlin = ptcore.nn.Linear(5, 2), torch.nn.Linear(5, 2)
    for lib, m, inp in ((ptcore, lin, x), (torch, tlin, torch.from_numpy(x.numpy()))):
        with lib.no_grad():
            with pytest.raises(RuntimeError, match="requires grad as a constant"):
                lib.jit.trace(lambda t: m(t) * 2, inp)
