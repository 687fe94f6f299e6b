"""``ptcore.utils._python_dispatch.TorchDispatchMode`` against torch 2.13's:
a logging mode sees every op that runs (below autograd: backward's ops too),
with its kwargs; a mode can change results; modes nest (innermost first, its
``func`` calls reach the outer one); leaving a mode (also on error) stops the
interception."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import dispatcher as _D
from ptcore.utils import _python_dispatch as pd

torch = pytest.importorskip("torch")
from torch.utils import _python_dispatch as td  # noqa: E402

PAIRS = [pytest.param(torch, td.TorchDispatchMode, id="torch"),
         pytest.param(ptcore, pd.TorchDispatchMode, id="ptcore")]


def _logger(base):
    class Log(base):
        def __init__(self, tag="", log=None):
            super().__init__()
            self.tag = tag
            self.log = [] if log is None else log

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.log.append((self.tag, func.overloadpacket.__name__, dict(kwargs)))
            return func(*args, **kwargs)
    return Log


def _program(T):
    x = T.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    w = T.full((3, 4), 0.5)
    y = T.mm(x, w).relu()
    z = T.nn.functional.softmax(y, dim=1).sum()
    z.backward()
    return x.grad


@pytest.mark.parametrize("T,Base", PAIRS)
def test_logging_mode_sees_every_op(T, Base):
    with _logger(Base)() as mode:
        g = _program(T)
    names = [n for _, n, _ in mode.log]
    assert names.count("mm") == 2           # forward and backward
    assert {"full", "mm", "relu", "sum", "ones_like", "expand"} <= set(names)
    assert any("softmax" in n for n in names)
    assert g.shape == (2, 3)


def test_logged_ops_match_torch():
    with _logger(td.TorchDispatchMode)() as mt:
        gt = _program(torch)
    with _logger(pd.TorchDispatchMode)() as mp:
        gp = _program(ptcore)
    nt = [n for _, n, _ in mt.log]
    np_ = [n for _, n, _ in mp.log]
    # the forward ops the program names, in order
    fwd = ["full", "mm", "relu"]
    assert [n for n in nt if n in fwd][:3] == [n for n in np_ if n in fwd][:3] == fwd
    assert np_.count("mm") == nt.count("mm")
    np.testing.assert_allclose(gp.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("T,Base", PAIRS)
def test_kwargs_reach_the_mode(T, Base):
    with _logger(Base)() as mode:
        t = T.full((2, 2), 3.0, dtype=T.float64)
    (_, name, kw), = [e for e in mode.log if e[1] == "full"]
    assert kw["dtype"] == T.float64
    assert t.dtype == T.float64 and t.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("T,Base", PAIRS)
def test_arguments_reach_the_mode_in_torchs_form(T, Base):
    """Positional up to the schema's ``*`` (dim as a list), keywords after it,
    arguments equal to their defaults left out, as torch's dispatcher gives them."""
    seen = []

    class Log(Base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), args[1:], kwargs))
            return func(*args, **(kwargs or {}))
    x = T.arange(6.0).reshape(2, 3)
    with Log():
        s = T.sum(x, dim=1, keepdim=True)
        T.sum(x, dim=0, keepdim=False, dtype=T.float64)
        x.view(3, 2)
        x.mean((0, 1))
    assert seen == [("aten.sum.dim_IntList", ([1], True), {}),
                    ("aten.sum.dim_IntList", ([0],), {"dtype": T.float64}),
                    ("aten.view.default", ([3, 2],), {}), ("aten.mean.dim", ([0, 1],), {})]
    assert s.tolist() == [[3.0], [12.0]]


@pytest.mark.parametrize("T,Base", PAIRS)
def test_mode_can_change_results(T, Base):
    class AddOneToMM(Base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.overloadpacket.__name__ == "mm":
                out = out + 1       # the mode is off here: a plain add
            return out
    a = T.ones(2, 2)
    with AddOneToMM():
        r = T.mm(a, a)
        s = a + a
    assert r.tolist() == [[3.0, 3.0], [3.0, 3.0]] and s.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert T.mm(a, a).tolist() == [[2.0, 2.0], [2.0, 2.0]]     # off after the block


def test_changed_results_through_autograd_match_torch():
    def go(T, Base):
        class Double(Base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                if func.overloadpacket.__name__ == "mm":
                    out = out * 2
                return out
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = T.tensor([[0.5, -1.0], [2.0, 1.0]])
        with Double():
            y = T.mm(x, w)
            y.sum().backward()
        return y.detach().numpy(), x.grad.numpy()
    yt, gt = go(torch, td.TorchDispatchMode)
    yp, gp = go(ptcore, pd.TorchDispatchMode)
    np.testing.assert_allclose(yp, yt)
    np.testing.assert_allclose(gp, gt)


@pytest.mark.parametrize("T,Base,mod", [
    pytest.param(torch, td.TorchDispatchMode, td, id="torch"),
    pytest.param(ptcore, pd.TorchDispatchMode, pd, id="ptcore")])
def test_nesting_order_and_stack(T, Base, mod):
    Log = _logger(Base)
    log = []
    a = T.ones(2)
    outer, inner = Log("outer", log), Log("inner", log)
    with outer:
        assert mod._get_current_dispatch_mode() is outer
        with inner:
            assert mod._get_current_dispatch_mode() is inner
            assert mod._get_current_dispatch_mode_stack() == [outer, inner]
            T.neg(a)
        T.abs(a)
        assert mod._get_current_dispatch_mode_stack() == [outer]
    assert mod._get_current_dispatch_mode() is None
    assert [(t, n) for t, n, _ in log] == [("inner", "neg"), ("outer", "neg"), ("outer", "abs")]


@pytest.mark.parametrize("T,Base", PAIRS)
def test_mode_is_off_inside_its_handler(T, Base):
    class Recurse(Base):
        seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(func.overloadpacket.__name__)
            out = func(*args, **(kwargs or {}))
            return out * 1.0 if func.overloadpacket.__name__ == "neg" else out
    with Recurse():
        r = T.neg(T.ones(2))
    assert Recurse.seen.count("neg") == 1 and "mul" not in Recurse.seen
    assert r.tolist() == [-1.0, -1.0]


@pytest.mark.parametrize("T,Base", PAIRS)
def test_exit_on_error_and_types(T, Base):
    class Boom(Base):
        types_seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.types_seen.append(types)
            if func.overloadpacket.__name__ == "neg":
                raise ValueError("boom")
            return func(*args, **(kwargs or {}))
    a = T.ones(2)
    with pytest.raises(ValueError, match="boom"):
        with Boom():
            T.abs(a)
            T.neg(a)
    assert T.neg(a).tolist() == [-1.0, -1.0]
    assert Boom.types_seen == [(), ()]      # plain tensors: no subclass to list


def test_func_handle():
    seen = []

    class Grab(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))
    a = ptcore.ones(2, 2)
    with Grab():
        ptcore.mm(a, a)
        ptcore.mm(a, a)
    f = seen[0]
    assert str(f) == "aten.mm.default" and f.name() == "aten::mm"
    assert str(f.overloadpacket) == "aten.mm" and f.__name__ == "mm.default"
    assert seen[1] == f and hash(seen[1]) == hash(f)
    assert f(a, a).tolist() == [[2.0, 2.0], [2.0, 2.0]]     # callable outside the mode


def test_dispatch_point_off_after_exit():
    assert not _D.on[0]
    with _logger(pd.TorchDispatchMode)():
        assert _D.on[0]
    assert not _D.on[0]
    with pytest.raises(RuntimeError):
        with _logger(pd.TorchDispatchMode)():
            raise RuntimeError("x")
    assert not _D.on[0] and pd._get_current_dispatch_mode() is None


def test_mode_with_autocast_and_profiler():
    """The kernel level sees the autocast-cast arguments; the profiler still counts."""
    Log = _logger(pd.TorchDispatchMode)
    a = ptcore.ones(2, 3)
    b = ptcore.ones(3, 2)
    with ptcore.profiler.profile() as prof, Log() as mode, ptcore.autocast("cpu"):
        r = ptcore.mm(a, b)
    assert r.dtype == ptcore.bfloat16
    assert "mm" in [n for _, n, _ in mode.log]
    assert {e.key: e.count for e in prof.key_averages()}["aten::mm"] == 1


def test_binary_arithmetic_reaches_the_mode_as_torch():
    # the Cython fast path of + - * / (with and without grad) must not skip the mode
    def run(lib, base):
        Log = _logger(base)
        x = lib.ones(3, requires_grad=True)
        a = lib.ones(3)
        with Log() as m:
            y = x * a
            z = a * a + a
            w = lib.mul(x, a) - 1.0
            v = a / 2
            u = lib.add(a, a)
        return [n for _, n, _ in m.log], (y + z + w + v + u).detach().numpy()
    (names_p, vp), (names_t, vt) = run(ptcore, pd.TorchDispatchMode), \
        run(torch, td.TorchDispatchMode)
    assert names_p == names_t
    np.testing.assert_array_equal(vp, vt)
