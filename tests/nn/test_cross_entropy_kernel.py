"""The one-pass cross-entropy kernel (ptcore/_ops/kernels/_nn_kernels.pyx, used by
``F.cross_entropy`` for (N, C) float logits, int64 class targets and no class
weights): values and gradients against a float64 NumPy reference and torch,
every reduction, ignore_index, extreme logits, wide rows (several exp
pieces), threads, and the composite's behaviour where the kernel stands aside
(out-of-range targets, create_graph)."""
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
    m = x.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(1))
    kept = t != ignore_index
    tt = np.where(kept, t, 0)
    rows = np.where(kept, lse - x[np.arange(len(t)), tt], 0.0)
    p = np.exp(x - lse[:, None])
    onehot = np.zeros_like(x)
    onehot[np.arange(len(t)), tt] = 1.0
    d = (p - onehot) * kept[:, None]
    if reduction == "none":
        return rows, d * g[:, None]
    if reduction == "sum":
        return rows.sum(), d * g
    n = kept.sum()
    return rows.sum() / n, d * g / n


def _case(rng, N, C, dt, scale=3.0):
    x = (rng.standard_normal((N, C)) * scale).astype(dt)
    t = rng.integers(0, C, N)
    return x, t


@pytest.mark.parametrize("dt,tol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("N,C", [(1, 1), (37, 11), (64, 257), (9, 700)])
def test_values_and_grad_against_float64(dt, tol, reduction, ignore_index, N, C):
    rng = np.random.default_rng(N * 1000 + C)
    x, t = _case(rng, N, C, dt)
    if N > 3:
        t[::4] = min(2, C - 1)          # some rows hit ignore_index=2
    g = rng.standard_normal(N if reduction == "none" else ()).astype(dt)
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    loss = F.cross_entropy(px, ptcore.from_numpy(t), reduction=reduction,
                           ignore_index=ignore_index)
    assert loss.grad_fn.name() == "NllLossBackward0"      # the kernel's node
    assert loss.dtype == px.dtype and tuple(loss.shape) == ((N,) if reduction == "none" else ())
    loss.backward(ptcore.from_numpy(np.asarray(g).copy()))
    rl, rg = _ref(x, t, reduction, ignore_index, np.asarray(g, np.float64))
    scale = max(1.0, float(np.abs(rl).max())) if np.size(rl) else 1.0
    np.testing.assert_allclose(loss.detach().numpy(), rl, rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(px.grad.numpy(), rg, rtol=tol, atol=tol)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_matches_torch(reduction):
    rng = np.random.default_rng(5)
    x, t = _case(rng, 768, 65, np.float32)
    t[3] = -100
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    lp = F.cross_entropy(px, ptcore.from_numpy(t), reduction=reduction)
    lt = torch.nn.functional.cross_entropy(tx, torch.from_numpy(t), reduction=reduction)
    g = rng.standard_normal(tuple(lt.shape)).astype(np.float32)
    lp.backward(ptcore.from_numpy(g.copy()))
    lt.backward(torch.from_numpy(g.copy()))
    np.testing.assert_allclose(lp.detach().numpy(), lt.detach().numpy(), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=2e-7)


def test_extreme_logits():
    # huge, tiny and -inf logits: the max shift keeps every row finite where
    # the target's logit is finite; a -inf target logit gives +inf, as torch
    x = np.array([[1e30, 0.0, -1e30], [-1e4, -1e4 + 1.0, -1e4 + 2.0],
                  [0.0, -np.inf, 1.0], [-np.inf, 0.0, 0.0]], np.float32)
    t = np.array([0, 2, 0, 0])
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    loss = F.cross_entropy(px, ptcore.from_numpy(t), reduction="none")
    got = loss.detach().numpy()
    np.testing.assert_allclose(got[:3], [0.0, 0.40760596, 1.3132616], rtol=1e-6, atol=1e-6)
    assert got[3] == np.inf
    loss[:3].sum().backward()
    assert np.isfinite(px.grad.numpy()[:3]).all()


def test_all_targets_ignored_mean_is_nan_with_zero_grad():
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    px = ptcore.from_numpy(x).requires_grad_()
    loss = F.cross_entropy(px, ptcore.full((4,), -100, dtype=ptcore.int64))
    assert np.isnan(loss.item())
    loss.backward()
    assert (px.grad.numpy() == 0).all()


def test_out_of_range_target_raises_like_torch():
    x = ptcore.randn(3, 4, requires_grad=True)
    for bad in (4, -1, 100):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            F.cross_entropy(x, ptcore.tensor([0, bad, 1]))
    # the kernel itself stands aside (None) so the composite can raise
    assert _nn_kernels.cross_entropy_forward(
        x.detach(), ptcore.tensor([0, 4, 1]), -100, 1) is None


def test_double_backward_uses_the_composite():
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal((6, 5))
    t = ptcore.from_numpy(rng.integers(0, 5, 6))
    for reduction in ("mean", "sum", "none"):
        def f(x):
            out = F.cross_entropy(x, t, reduction=reduction, ignore_index=3)
            return out if reduction != "none" else out.sum()
        x = ptcore.from_numpy(x64.copy()).requires_grad_()
        assert ptcore.autograd.gradcheck(f, (x,))
        assert ptcore.autograd.gradgradcheck(f, (x,))


def test_kernel_independent_of_threads():
    rng = np.random.default_rng(2)
    x, t = _case(rng, 4096, 97, np.float32)
    res = []
    old = ptcore.get_num_threads()
    try:
        for n in (1, 2):
            ptcore.set_num_threads(n)
            px = ptcore.from_numpy(x.copy()).requires_grad_()
            loss = F.cross_entropy(px, ptcore.from_numpy(t))
            loss.backward()
            res.append((loss.item(), px.grad.numpy().copy()))
    finally:
        ptcore.set_num_threads(old)
    assert res[0][0] == res[1][0]
    assert np.array_equal(res[0][1], res[1][1])


def test_non_contiguous_and_other_layouts_fall_back():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    t = rng.integers(0, 5, 7)
    # transposed (non-contiguous) logits: the kernel stands aside, the composite runs
    px = ptcore.from_numpy(x.copy()).requires_grad_()
    assert _nn_kernels.cross_entropy_forward(px.detach().t(), ptcore.from_numpy(t), -100, 1) is None
    loss = F.cross_entropy(px.t(), ptcore.from_numpy(t))
    loss.backward()
    rl, rg = _ref(np.ascontiguousarray(x.T), t, "mean", -100, 1.0)
    np.testing.assert_allclose(loss.item(), rl, rtol=1e-6)
    np.testing.assert_allclose(px.grad.numpy(), rg.T, rtol=1e-5, atol=1e-7)


def test_no_grad_and_detached_inputs_record_nothing():
    x = ptcore.randn(4, 3)
    t = ptcore.tensor([0, 1, 2, 0])
    assert F.cross_entropy(x, t).grad_fn is None
    xr = ptcore.randn(4, 3, requires_grad=True)
    with ptcore.no_grad():
        assert F.cross_entropy(xr, t).grad_fn is None


def test_kernels_decline_hostile_operands():
    # the kernels are reachable from Python: mismatched or out-of-range
    # operands make them decline (None) without reading or writing by them
    x = ptcore.randn(4, 5)
    t = ptcore.tensor([0, 1, 2, 3])
    out, lse, count = _nn_kernels.cross_entropy_forward(x, t, -100, 1)
    g = ptcore.tensor(1.0)
    bw = _nn_kernels.cross_entropy_backward
    assert bw(g, x, t, lse, -100, 1, count) is not None
    assert bw(g, x, ptcore.tensor([0, 1, 9, 3]), lse, -100, 1, count) is None     # target 9
    assert bw(g, x, ptcore.tensor([0, 1, -5, 3]), lse, -100, 1, count) is None
    assert bw(g, x, t, lse[:2], -100, 1, count) is None                         # short lse
    assert bw(g, x, t, lse.double(), -100, 1, count) is None
    assert bw(g, x, t[:3], lse, -100, 1, count) is None
    assert bw(g, ptcore.tensor(1.0), t, lse, -100, 1, count) is None            # 0-d logits
    assert bw(g, x.t(), t, lse, -100, 1, count) is None
    assert bw(ptcore.ones(3, dtype=ptcore.float64), x, t, lse, -100, 0, count) is None
    assert bw(g, x, t, lse, -100, 7, count) is None
    assert _nn_kernels.cross_entropy_forward(ptcore.tensor(1.0), t, -100, 1) is None
    assert _nn_kernels.cross_entropy_forward(x, t[:2], -100, 1) is None
