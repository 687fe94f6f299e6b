"""The one-pass nll_loss kernels (ptcore/_ops/kernels/_nn_kernels.pyx ``nll_forward``
/ ``nll_backward``, used by ``F.nll_loss`` for (N, C) float input, int64
class targets and no class weights): values and gradients against float64
NumPy and torch for every reduction and ignore_index, and the composite's
behaviour where the kernel stands aside (weights, out-of-range targets,
create_graph, other shapes)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._ops.kernels import _nn_kernels

try:
    import torch
except ImportError:          # the torch comparisons are optional
    torch = None


def _ref(x, t, reduction, ignore_index, g):
    """(loss, grad) in float64 NumPy."""
    x = x.astype(np.float64)
    kept = t != ignore_index
    tt = np.where(kept, t, 0)
    rows = np.where(kept, -x[np.arange(len(t)), tt], 0.0)
    d = np.zeros_like(x)
    d[np.arange(len(t)), tt] = np.where(kept, -1.0, 0.0)
    if reduction == "none":
        return rows, d * g[:, None]
    if reduction == "sum":
        return rows.sum(), d * g
    n = kept.sum()
    return rows.sum() / n, d * g / n


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_values_and_grads(dt, reduction, ignore_index):
    rng = np.random.default_rng(0)
    N, C = 37, 5
    x = rng.standard_normal((N, C)).astype(dt)
    t = rng.integers(0, C, N)
    if ignore_index == -100:
        t[3] = -100
    g = rng.standard_normal(N) if reduction == "none" else np.array(1.7)
    xp = ptcore.tensor(x, requires_grad=True)
    out = F.nll_loss(xp, ptcore.tensor(t), ignore_index=ignore_index, reduction=reduction)
    assert out.grad_fn.name() == "NllLossBackward0"
    assert out.dtype == xp.dtype and tuple(out.shape) == ((N,) if reduction == "none" else ())
    out.backward(ptcore.tensor(g.astype(dt)))
    want, wgrad = _ref(x, t, reduction, ignore_index, g.astype(dt).astype(np.float64))
    tol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(xp.grad.numpy(), wgrad, rtol=tol, atol=tol)
    if torch is not None:
        xt = torch.tensor(x, requires_grad=True)
        ot = torch.nn.functional.nll_loss(xt, torch.tensor(t), ignore_index=ignore_index,
                                          reduction=reduction)
        ot.backward(torch.tensor(g.astype(dt)))
        np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def test_kernel_is_used_and_stands_aside():
    x = ptcore.randn(4, 3)
    t = ptcore.tensor([0, 2, 1, 1])
    assert _nn_kernels.nll_forward(x, t, -100, 1) is not None
    # out of range, wrong dtype, non-contiguous, 3-D: the composite's business
    assert _nn_kernels.nll_forward(x, ptcore.tensor([0, 3, 1, 1]), -100, 1) is None
    assert _nn_kernels.nll_forward(x, t.to(ptcore.int32), -100, 1) is None
    assert _nn_kernels.nll_forward(x.t().contiguous().t(), t, -100, 1) is None
    assert _nn_kernels.nll_forward(x.half(), t, -100, 1) is None
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(x, ptcore.tensor([0, 3, 1, 1]))
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(x, ptcore.tensor([0, -1, 1, 1]))


def test_all_ignored_mean_is_nan_with_zero_grad():
    x = ptcore.randn(3, 4, requires_grad=True)
    out = F.nll_loss(x, ptcore.tensor([-100, -100, -100]))
    assert ptcore.isnan(out)
    out.backward()
    assert (x.grad == 0).all()
    if torch is not None:
        xt = torch.tensor(x.detach().numpy(), requires_grad=True)
        ot = torch.nn.functional.nll_loss(xt, torch.tensor([-100, -100, -100]))
        assert torch.isnan(ot)
        ot.backward()
        assert (xt.grad == 0).all()


def test_double_backward_and_weights_use_the_composite():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4))
    t = rng.integers(0, 4, 6)
    w = rng.random(4) + 0.5
    xp = ptcore.tensor(x, requires_grad=True)
    out = F.nll_loss(F.log_softmax(xp, 1), ptcore.tensor(t))
    (gx,) = ptcore.autograd.grad(out, xp, create_graph=True)
    gx.pow(2).sum().backward()
    outw = F.nll_loss(ptcore.tensor(x), ptcore.tensor(t), weight=ptcore.tensor(w))
    want = -(x[np.arange(6), t] * w[t]).sum() / w[t].sum()
    np.testing.assert_allclose(outw.item(), want, rtol=1e-12)
    if torch is not None:
        xt = torch.tensor(x, requires_grad=True)
        ot = torch.nn.functional.nll_loss(torch.log_softmax(xt, 1), torch.tensor(t))
        (gt,) = torch.autograd.grad(ot, xt, create_graph=True)
        gt.pow(2).sum().backward()
        np.testing.assert_allclose(gx.detach().numpy(), gt.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
