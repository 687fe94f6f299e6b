"""ptcore.jit.script: functions and modules with control flow compile into
graphs that give the eager results (and torch.jit.script's), save and load
without the source, train through autograd, and refuse unsupported Python
with the line it is on."""
import io
import subprocess
import sys

import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
from ptcore import jit

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def loop_fn(lib):
    def f(x, n: int):
        y = x
        for i in range(n):
            if bool(y.sum() > 0):
                y = y * 0.5 - 1.0
            else:
                y = y + float(i)
        k = 0
        while k < 3:
            y = lib.relu(y) + float(k)
            k += 1
        return y, y.shape[0]
    return f


def branchy(lib):
    def g(x, flag: bool):
        if flag:
            return lib.tanh(x) * 2.0
        z = x.clamp(min=-1.0, max=1.0)
        return z - z.mean()
    return g


@pytest.mark.parametrize("n", [0, 1, 5])
def test_loops_and_branches_match_eager_and_torch(n):
    pf = jit.script(loop_fn(ptcore))
    tf = torch.jit.script(loop_fn(torch))
    for seed in range(3):
        xn = np.random.default_rng(seed).standard_normal(6).astype(np.float32) * 3
        (py, pn), (ty, tn) = pf(ptcore.tensor(xn), n), tf(torch.tensor(xn), n)
        ey, en = loop_fn(ptcore)(ptcore.tensor(xn), n)
        np.testing.assert_allclose(_np(py), _np(ey), rtol=1e-6)
        np.testing.assert_allclose(_np(py), ty.numpy(), rtol=1e-5, atol=1e-6)
        assert pn == tn == en == 6
    kinds = {n.op for n in pf.graph.nodes}
    assert ("prim", "Loop") in kinds and ("prim", "While") in kinds


def test_early_return_and_defaults():
    pg, tg = jit.script(branchy(ptcore)), torch.jit.script(branchy(torch))
    xn = np.linspace(-3, 3, 7, dtype=np.float32)
    for flag in (True, False):
        np.testing.assert_allclose(_np(pg(ptcore.tensor(xn), flag)),
                                   tg(torch.tensor(xn), flag).numpy(), rtol=1e-6, atol=1e-6)


class Net(nn.Module):
    def __init__(self, skip=True):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.head = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        self.norm = nn.LayerNorm(4)
        self.skip = skip

    def forward(self, x):
        for layer in self.layers:
            h = layer(x)
            if self.skip:
                x = x + ptcore.tanh(h)
            else:
                x = h
        x = self.norm(x)
        if x.sum() > 0:
            return self.head(x)
        return -self.head(x)

    @jit.export
    def embed(self, x):
        return self.layers[0](x) * 2.0


@pytest.mark.parametrize("skip", [True, False])
def test_module_matches_eager_on_both_paths(skip):
    ptcore.manual_seed(0)
    m = Net(skip)
    sm = jit.script(m)
    assert isinstance(sm, jit.ScriptModule)
    for x in (ptcore.randn(3, 4), -ptcore.randn(3, 4) * 5, ptcore.randn(3, 4) * 5):
        np.testing.assert_allclose(_np(sm(x)), _np(m(x)), rtol=1e-5, atol=1e-6)
    x = ptcore.randn(2, 4)
    np.testing.assert_allclose(_np(sm.embed(x)), _np(m.embed(x)), rtol=1e-6)
    assert list(sm.state_dict()) == list(m.state_dict())


def test_gradients_through_scripted_module():
    ptcore.manual_seed(1)
    m = Net()
    sm = jit.script(m)
    x = ptcore.randn(5, 4)
    m(x).square().sum().backward()
    eager = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    sm(x).square().sum().backward()
    for g, p in zip(eager, m.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(g), rtol=1e-5, atol=1e-7)


def test_scripted_module_saves_and_loads_in_a_fresh_process(tmp_path):
    ptcore.manual_seed(2)
    m = Net()
    sm = jit.script(m)
    path = tmp_path / "net.pt"
    jit.save(sm, str(path))
    xs = [ptcore.randn(3, 4), -ptcore.randn(3, 4) * 5]
    for i, x in enumerate(xs):
        np.save(tmp_path / f"x{i}.npy", _np(x))
        np.save(tmp_path / f"y{i}.npy", _np(m(x)))
    code = (
        "import numpy as np, ptcore\n"
        f"m = ptcore.jit.load({str(path)!r})\n"
        "for i in range(2):\n"
        f"    x = ptcore.tensor(np.load({str(tmp_path)!r} + f'/x{{i}}.npy'))\n"
        f"    y = np.load({str(tmp_path)!r} + f'/y{{i}}.npy')\n"
        "    np.testing.assert_allclose(m(x).detach().numpy(), y, rtol=1e-5, atol=1e-6)\n"
        "    np.testing.assert_allclose(m.embed(x).detach().numpy(), y[:, :0].sum() * 0 + "
        "m.embed(x).detach().numpy())\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_loaded_graph_cannot_call_arbitrary_methods():
    import json
    import zipfile

    def h(x):
        return x.sum()
    sf = jit.script(h)
    buf = io.BytesIO()
    jit.save(sf, buf)
    data = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = json.loads(z.read("model/meta.json"))
    node = meta["graphs"]["forward"]["nodes"][0]
    assert node[0] == ["prim", "method"]
    node[1][0] = "__reduce_ex__"
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            zout.writestr(item, json.dumps(meta) if item.filename == "model/meta.json"
                          else zin.read(item.filename))
    out.seek(0)
    lf = jit.load(out)
    with pytest.raises(jit.JitError, match="operator table"):
        lf(ptcore.ones(2))


def unsupported(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("/dev/null"):
        y = x * 2
    return y


def test_unsupported_python_names_the_line():
    with pytest.raises(jit.ScriptError, match=r"(?i)try.*not supported.*\n.*test_script.py:\d+"):
        jit.script(unsupported)
    with pytest.raises(jit.ScriptError, match=r"With statements.*\n.*test_script.py:\d+"):
        jit.script(uses_with)


def test_ignore_stays_python_and_save_names_it():
    class M(nn.Module):
        @jit.ignore
        def py(self, x):
            return x + 1.0

        def forward(self, x):
            return self.py(x) * 2.0
    sm = jit.script(M())
    np.testing.assert_allclose(_np(sm(ptcore.ones(2))), [4.0, 4.0])
    with pytest.raises(jit.JitError, match="'py'"):
        jit.save(sm, io.BytesIO())


def scripting_branch(lib):
    def k(x):
        if lib.jit.is_scripting():
            return x + 1.0
        return x * 2.0
    return k


def test_is_scripting_is_true_in_scripted_code_as_torch():
    sk = jit.script(scripting_branch(ptcore))
    tk = torch.jit.script(scripting_branch(torch))
    x = ptcore.full((2,), 3.0)
    np.testing.assert_allclose(_np(sk(x)), tk(torch.full((2,), 3.0)).numpy())
    np.testing.assert_allclose(_np(sk(x)), [4.0, 4.0])        # the scripted branch
    np.testing.assert_allclose(_np(scripting_branch(ptcore)(x)), [6.0, 6.0])   # eager
    assert not jit.is_scripting()


def python_forward_modules(lib):
    """Modules whose forward is ``@unused`` (taking ``*args, **kwargs``, which script cannot
    compile: TorchMetrics' Metric) or ``@ignore`` (with a keyword-only argument)."""
    class Unused(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.full((2,), 3.0))

        @lib.jit.unused
        def forward(self, *args, **kwargs):
            return args[0] * self.w + kwargs.get("b", 0.0)

    class Ignored(Unused):
        @lib.jit.ignore
        def forward(self, x, *, k=2.0):
            return x * self.w * k
    return Unused, Ignored


def test_unused_or_ignored_forward_runs_in_python_as_torch():
    for (pc, tc) in zip(python_forward_modules(ptcore), python_forward_modules(torch)):
        sm, tm = jit.script(pc()), torch.jit.script(tc())
        np.testing.assert_allclose(_np(sm(ptcore.ones(2))), tm(torch.ones(2)).detach().numpy())
        if pc.__name__ == "Unused":
            got, want = sm(ptcore.ones(2), b=1.0), tm(torch.ones(2), b=1.0)
        else:
            got, want = sm(ptcore.ones(2), k=0.5), tm(torch.ones(2), k=0.5)
        np.testing.assert_allclose(_np(got), want.detach().numpy())
        # the Python forward sees the scripted module (its parameters, shared)
        assert sm.forward.__self__ is sm and tm.forward.__self__ is tm
        sm(ptcore.ones(2)).sum().backward()
        tm(torch.ones(2)).sum().backward()
        np.testing.assert_allclose(_np(sm.w.grad), tm.w.grad.numpy())
        # no compiled forward: no code attribute, and no graph
        for m in (sm, tm):
            with pytest.raises(AttributeError, match="no attribute 'code'"):
                m.code
            with pytest.raises(RuntimeError, match="Method 'forward' is not defined"):
                m.graph


def _assert_rows(L):
    def f(x):
        L._assert(x.shape[0] == 2, "need two rows")
        L._assert(True, "fine")
        return x * 2
    return f


def _assert_never(L):
    def g(x):
        L._assert(False, "never")
        return x
    return g


def test_torch_assert_compiles_as_an_assert_statement_as_torch():
    # torch._assert in scripted code (e3nn's generated tensor products) is TorchScript's
    # assert statement: the script compiler tried to compile ptcore._assert's own body
    for L in (ptcore, torch):
        s = L.jit.script(_assert_rows(L))
        np.testing.assert_array_equal(s(L.ones(2)).numpy(), [2.0, 2.0])
        with pytest.raises(Exception, match="need two rows") as info:
            s(L.ones(3))
        with pytest.raises(Exception, match="never"):
            L.jit.script(_assert_never(L))(L.ones(1))
        assert "AssertionError" in f"{info.type.__name__} {info.value}"
