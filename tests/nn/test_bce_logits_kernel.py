"""The one-pass binary_cross_entropy_with_logits kernels
(ptcore/_ops/kernels/_nn_kernels.pyx ``bce_logits_forward``/``bce_logits_backward``,
used without weights for same-dtype float input and target, the target
without grad): values and gradients against float64 NumPy and torch for
every reduction, extreme logits, NaN; the composite where the kernel stands
aside (weights, pos_weight, target with grad, create_graph, dtypes)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

try:
    import torch
except ImportError:          # the torch comparisons are optional
    torch = None


def _ref(x, t, reduction, g):
    x = x.astype(np.float64)
    t = t.astype(np.float64)
    ls = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    loss = (1 - t) * x - ls
    d = 1 / (1 + np.exp(-x)) - t
    if reduction == "none":
        return loss, d * g
    if reduction == "sum":
        return loss.sum(), d * g
    return loss.mean(), d * g / x.size


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(37,), (8, 33), (2, 3, 5)])
def test_values_and_grads(dt, reduction, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dt)
    x.flat[0] = 60.0
    x.flat[1] = -60.0
    t = rng.random(shape).astype(dt)
    g = rng.standard_normal(shape) if reduction == "none" else np.array(0.7)
    xp = ptcore.tensor(x, requires_grad=True)
    out = F.binary_cross_entropy_with_logits(xp, ptcore.tensor(t), reduction=reduction)
    assert out.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    assert len(out.grad_fn.next_functions) == 2 and out.grad_fn.next_functions[1][0] is None
    out.backward(ptcore.tensor(g.astype(dt)))
    want, wgrad = _ref(x, t, reduction, g.astype(dt).astype(np.float64))
    tol = 2e-6 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(xp.grad.numpy(), wgrad, rtol=tol, atol=tol)
    if torch is not None:
        xt = torch.tensor(x, requires_grad=True)
        ot = torch.nn.functional.binary_cross_entropy_with_logits(xt, torch.tensor(t),
                                                                  reduction=reduction)
        ot.backward(torch.tensor(g.astype(dt)))
        np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def test_none_reduction_matches_the_composite_bits():
    # reduction='none' does the composite's float32 operations element by element
    rng = np.random.default_rng(1)
    x = ptcore.tensor((rng.standard_normal(1000) * 10).astype(np.float32))
    t = ptcore.tensor(rng.random(1000).astype(np.float32))
    got = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    ls = ptcore.clamp_max(x, 0.0) - ptcore.log1p(ptcore.exp(-ptcore.abs(x)))
    np.testing.assert_array_equal(got.numpy(), ((1 - t) * x - ls).numpy())


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_special_values_match_the_composite_bits(dt):
    # the branch-free min(x, 0) (signed zeros, NaN, infinities, underflowing exp),
    # random signs over several vector widths and tails
    rng = np.random.default_rng(2)
    sp = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 100, -100, 88.8, -104,
                   1e-40, -1e-40, 3.0, -3.0], dtype=dt)
    x = np.concatenate([sp, (rng.standard_normal(1000) * 8).astype(dt)])
    t = rng.random(x.size).astype(dt)
    t[::7] = 0
    t[1::7] = 1
    for n in (1, 7, 15, 33, x.size):
        xp, tp = ptcore.tensor(x[:n]), ptcore.tensor(t[:n])
        got = F.binary_cross_entropy_with_logits(xp, tp, reduction="none")
        ls = ptcore.clamp_max(xp, 0.0) - ptcore.log1p(ptcore.exp(-ptcore.abs(xp)))
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got.numpy(), ((1 - tp) * xp - ls).numpy())
        tot = F.binary_cross_entropy_with_logits(xp, tp, reduction="sum").item()
        ref = float(((1 - tp) * xp - ls).to(ptcore.float64).sum())
        assert (np.isnan(tot) and np.isnan(ref)) or tot == pytest.approx(ref, rel=1e-6, abs=1e-6)


def test_nan_and_non_contiguous_and_composite_paths():
    x = ptcore.tensor([[0.5, float("nan")], [1.0, -2.0]], requires_grad=True)
    t = ptcore.tensor([[1.0, 0.0], [0.0, 1.0]])
    out = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    assert ptcore.isnan(out[0, 1]) and not ptcore.isnan(out[0, 0])
    xn = ptcore.randn(6, 4).t().requires_grad_()          # non-contiguous: the composite
    tn = ptcore.rand(4, 6)
    a = F.binary_cross_entropy_with_logits(xn, tn)
    b = F.binary_cross_entropy_with_logits(xn.contiguous(), tn)
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)
    # weights, pos_weight, a target with grad, create_graph
    w = ptcore.rand(6)
    tt = tn.clone().requires_grad_()
    F.binary_cross_entropy_with_logits(xn, tn, weight=w).backward()
    F.binary_cross_entropy_with_logits(xn, tn, pos_weight=w).backward()
    F.binary_cross_entropy_with_logits(xn, tt).backward()
    assert tt.grad is not None
    xg = ptcore.randn(5, 3, dtype=ptcore.float64, requires_grad=True)
    tg = ptcore.rand(5, 3, dtype=ptcore.float64)
    (gx,) = ptcore.autograd.grad(F.binary_cross_entropy_with_logits(xg, tg), xg, create_graph=True)
    (gg,) = ptcore.autograd.grad(gx.sum(), xg)
    s = ptcore.sigmoid(xg.detach())
    np.testing.assert_allclose(gg.numpy(), (s * (1 - s) / 15).numpy(), rtol=1e-12)
