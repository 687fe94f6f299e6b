"""A backward through a compiled training graph under ``create_graph``:
the gradients are differentiable again, exactly, also through the values
the compiled forward saved (a tanh's output, a softmax's): the segment runs
again eagerly, recorded.  A segment that cannot run twice (random numbers)
gives its first-order gradients and refuses a further backward with
torch's error (torch refuses every double backward through torch.compile).
Compared with torch's eager gradients."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _mlp(lib, act):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 5), act(lib), nn.Linear(5, 3)).double()


def _copy(m, mt):
    with ptcore.no_grad():
        for p, t in zip(m.parameters(), mt.parameters()):
            p.copy_(ptcore.from_numpy(t.detach().numpy().copy()))


ACTS = {"tanh": lambda lib: lib.nn.Tanh(), "gelu": lambda lib: lib.nn.GELU(),
        "softmax": lambda lib: lib.nn.Softmax(-1), "sigmoid": lambda lib: lib.nn.Sigmoid()}


@pytest.mark.parametrize("act", list(ACTS))
def test_second_derivatives_through_saved_values_match_torch(act):
    m, mt = _mlp(ptcore, ACTS[act]), _mlp(torch, ACTS[act])
    _copy(m, mt)
    cm = ptcore.compile(m)
    xa = np.random.default_rng(4).standard_normal((6, 4))
    xt = torch.from_numpy(xa.copy()).requires_grad_(True)
    (gxt,) = torch.autograd.grad(mt(xt).square().sum(), xt, create_graph=True)
    want = torch.autograd.grad(gxt.sin().sum(), [xt] + list(mt.parameters()))
    for _ in range(3):            # the first call captures, the later ones run the graphs
        x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        (gx,) = ptcore.autograd.grad(cm(x).square().sum(), x, create_graph=True)
        got = ptcore.autograd.grad(gx.sin().sum(), [x] + list(m.parameters()))
        np.testing.assert_allclose(gx.detach().numpy(), gxt.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)
    assert cm.dynamo_ctx.entries, "nothing was compiled"


def test_gradient_penalty_training_step_matches_torch():
    # WGAN-GP's penalty: || d critic / d x || through a compiled critic, then backward
    m, mt = _mlp(ptcore, ACTS["tanh"]), _mlp(torch, ACTS["tanh"])
    _copy(m, mt)
    cm = ptcore.compile(m)
    xa = np.random.default_rng(5).standard_normal((8, 4))

    def penalty(lib, f, x):
        (g,) = lib.autograd.grad(f(x).sum(), x, create_graph=True)
        return ((g.norm(2, dim=1) - 1) ** 2).mean()
    for _ in range(3):
        m.zero_grad()
        mt.zero_grad()
        penalty(ptcore, cm, ptcore.from_numpy(xa.copy()).requires_grad_(True)).backward()
        penalty(torch, mt, torch.from_numpy(xa.copy()).requires_grad_(True)).backward()
        for p, t in zip(m.parameters(), mt.parameters()):
            assert (p.grad is None) == (t.grad is None)     # (the last bias: no gradient)
            if t.grad is not None:
                np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-9,
                                           atol=1e-12)


def test_random_segment_refuses_a_double_backward_like_torch():
    m = ptcore.nn.Sequential(ptcore.nn.Linear(4, 5), ptcore.nn.Tanh(), ptcore.nn.Dropout(0.5),
                             ptcore.nn.Linear(5, 3)).double()
    cm = ptcore.compile(m)
    xa = np.random.default_rng(6).standard_normal((6, 4))
    for i in range(3):
        x = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        ptcore.manual_seed(i)
        (gx,) = ptcore.autograd.grad(cm(x).square().sum(), x, create_graph=True)
        xe = ptcore.from_numpy(xa.copy()).requires_grad_(True)
        ptcore.manual_seed(i)
        (gxe,) = ptcore.autograd.grad(m(xe).square().sum(), xe)
        # first order: as eager
        np.testing.assert_allclose(gx.detach().numpy(), gxe.numpy(), rtol=1e-10, atol=1e-12)
        if i == 0:
            continue              # (the capturing call runs eagerly: a true double backward)
        with pytest.raises(RuntimeError, match="does not currently support double backward"):
            ptcore.autograd.grad(gx.sum(), x)
