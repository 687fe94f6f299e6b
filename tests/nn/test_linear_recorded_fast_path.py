"""F.linear's recorded fast path (a Linear's training call in grad mode with no
dispatch layer on: the t() view, the addmm kernel and addmm's formula without
the op entries' Python): the same values, graph, gradients, hooks and errors
as the entries' path and as torch."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd.forward_ad as fwAD
import ptcore.nn.functional as F
from ptcore.nn.functional import _linear

torch = pytest.importorskip("torch")


def _pair(shape_x, grads, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    xa = rng.standard_normal(shape_x).astype(dtype)
    wa = rng.standard_normal((5, shape_x[-1])).astype(dtype)
    ba = rng.standard_normal(5).astype(dtype)
    out = []
    for lib in (ptcore, torch):
        x, w, b = (lib.from_numpy(a.copy()).requires_grad_(g) for a, g in zip((xa, wa, ba), grads))
        out.append((x, w, b))
    return out


def _names(fn):
    """The graph below ``fn`` as nested (name, children) tuples."""
    if fn is None:
        return None
    return (type(fn).__name__ if not hasattr(fn, "name") else fn.name(),
            tuple(_names(n) for n, _ in fn.next_functions))


@pytest.mark.parametrize("grads", [(False, True, True), (True, True, True),
                                   (True, False, False), (False, False, True),
                                   (False, True, False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_graph_and_gradients_match_torch(grads, dtype):
    (x, w, b), (xt, wt, bt) = _pair((4, 3), grads, dtype)
    calls = []
    real = _linear._recorded_addmm
    _linear._recorded_addmm = lambda *a: calls.append(1) or real(*a)
    try:
        y = F.linear(x, w, b)
    finally:
        _linear._recorded_addmm = real
    assert calls                                    # (the fast path was asked)
    yt = torch.nn.functional.linear(xt, wt, bt)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert _names(y.grad_fn) == _names(yt.grad_fn)
    g = np.linspace(-1, 1, 20).reshape(4, 5).astype(dtype)
    y.backward(ptcore.from_numpy(g))
    yt.backward(torch.from_numpy(g))
    for a, at in zip((x, w, b), (xt, wt, bt)):
        if at.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=1e-6, atol=1e-6)
        else:
            assert a.grad is None


def test_same_bits_as_the_entries_path():
    (x, w, b), _ = _pair((7, 3), (True, True, True), seed=1)
    y1 = F.linear(x, w, b)
    g = ptcore.ones(7, 5)
    y1.backward(g)
    grads1 = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    y2 = ptcore.addmm(b, x, w.t())
    y2.backward(g)
    assert ptcore.equal(y1, y2)
    for a, t in zip(grads1, (x, w, b)):
        assert ptcore.equal(a, t.grad)


def test_hooks_retain_grad_and_inplace_errors():
    (x, w, b), (xt, wt, bt) = _pair((4, 3), (True, True, True), seed=2)
    seen = []
    w.register_hook(lambda g: seen.append(tuple(g.shape)))
    y = F.linear(x, w, b)
    y.retain_grad()
    y.sum().backward()
    assert seen == [(5, 3)] and y.grad is not None
    # a weight modified in place after the forward: the saved-tensor check of both
    y = F.linear(x, w, b)
    yt = torch.nn.functional.linear(xt, wt, bt)
    with ptcore.no_grad():
        w.add_(1.0)
    with torch.no_grad():
        wt.add_(1.0)
    with pytest.raises(RuntimeError) as et:
        yt.sum().backward()
    with pytest.raises(type(et.value), match="modified by an inplace operation"):
        y.sum().backward()


def test_not_taken_under_layers_or_without_grad_mode():
    (x, w, b), _ = _pair((4, 3), (False, True, True), seed=3)
    calls = []
    real = _linear._recorded_addmm
    _linear._recorded_addmm = lambda *a: calls.append(1) or real(*a)
    try:
        with ptcore.no_grad():
            F.linear(x, w, b)
        with ptcore.autograd.profiler.profile() as prof:
            y = F.linear(x, w, b)
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, ptcore.ones(4, 3))
            yd = F.linear(xd, w, b)
            tangent = fwAD.unpack_dual(yd).tangent
    finally:
        _linear._recorded_addmm = real
    assert calls == []
    assert y.grad_fn.name() == "AddmmBackward0"
    assert any("addmm" in e.name for e in prof.function_events)
    np.testing.assert_allclose(tangent.detach().numpy(),
                               (ptcore.ones(4, 3) @ w.detach().t()).numpy(), rtol=1e-6)


def test_module_training_step_matches_torch():
    rng = np.random.default_rng(4)
    m = ptcore.nn.Sequential(ptcore.nn.Linear(6, 8), ptcore.nn.Tanh(), ptcore.nn.Linear(8, 2))
    mt = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        for a, at in zip(m.parameters(), mt.parameters()):
            at.copy_(torch.from_numpy(a.detach().numpy().copy()))
    opt = ptcore.optim.SGD(m.parameters(), 0.1)
    optt = torch.optim.SGD(mt.parameters(), 0.1)
    for _ in range(5):
        xa = rng.standard_normal((9, 6)).astype("float32")
        for mod, o, lib in ((m, opt, ptcore), (mt, optt, torch)):
            o.zero_grad()
            mod(lib.from_numpy(xa)).square().mean().backward()
            o.step()
    for a, at in zip(m.parameters(), mt.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), at.detach().numpy(), rtol=1e-5, atol=1e-6)
