"""The one-pass smooth L1 / Huber / MSE kernels (ptcore/_ops/kernels/_nn_kernels.pyx
``smooth_l1_forward``/``smooth_l1_backward``, ptc_smooth_l1.h), used for
same-dtype, same-shape contiguous float32/float64 input and target: the
terms are torch's bits, the reductions and gradients match float64 NumPy and
torch; both compiled variants (AVX2 and the baseline vectors) give the same
bits; the composite where the kernels stand aside (broadcast, strided,
low precision, create_graph, forward AD)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from ptcore._ops.kernels import _nn_kernels as K

try:
    import torch
except ImportError:          # the torch comparisons are optional
    torch = None

LOSSES = [("smooth_l1", 1.0), ("smooth_l1", 0.37), ("smooth_l1", 3.0),
          ("huber", 1.0), ("huber", 0.37), ("huber", 2.5), ("mse", None)]
NODES = {"smooth_l1": "SmoothL1LossBackward0", "huber": "HuberLossBackward0",
         "mse": "MseLossBackward0"}


def _call(lib, kind, p, x, t, reduction):
    F_ = lib.nn.functional
    if kind == "mse":
        return F_.mse_loss(x, t, reduction=reduction)
    if kind == "huber":
        return F_.huber_loss(x, t, reduction=reduction, delta=p)
    return F_.smooth_l1_loss(x, t, reduction=reduction, beta=p)


def _ref(kind, p, x, t, reduction, g):
    """float64 terms and input gradient (the gradient of the mean: g / n)."""
    d = x.astype(np.float64) - t.astype(np.float64)
    z = np.abs(d)
    if kind == "mse":
        terms, slope = d * d, 2 * d
    elif kind == "huber":
        terms = np.where(z < p, 0.5 * z * z, p * (z - 0.5 * p))
        slope = np.clip(d, -p, p)
    else:
        terms = np.where(z < p, 0.5 * z * z / p, z - 0.5 * p)
        slope = np.clip(d / p, -1, 1)
    if reduction == "none":
        return terms, slope * g
    if reduction == "sum":
        return terms.sum(), slope * g
    return terms.mean(), slope * g / x.size


@pytest.fixture(params=[True, False], ids=["avx2", "baseline"])
def variant(request):
    old = K._set_smooth_l1_avx2(request.param)
    yield request.param
    K._set_smooth_l1_avx2(old)


def _data(dt, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dt)
    t = (rng.standard_normal(shape) * 3).astype(dt)
    if x.size > 3:
        t.flat[0] = x.flat[0]                 # d = 0
        t.flat[1] = x.flat[1] - dt(1.0)       # d on the band's edge for p = 1
        t.flat[2] = x.flat[2] + dt(1.0)
    return x, t


@pytest.mark.parametrize("kind,p", LOSSES)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(37,), (8, 33), (3, 5, 7), (40000,)])
def test_values_and_grads(variant, kind, p, dt, reduction, shape):
    x, t = _data(dt, shape)
    g = (np.random.default_rng(1).standard_normal(shape) if reduction == "none"
         else np.array(0.7)).astype(dt)
    xp = ptcore.tensor(x, requires_grad=True)
    tp = ptcore.tensor(t, requires_grad=True)
    out = _call(ptcore, kind, p, xp, tp, reduction)
    assert out.grad_fn.name() == NODES[kind]
    out.backward(ptcore.tensor(g))
    want, wgrad = _ref(kind, p, x, t, reduction, g.astype(np.float64))
    tol = 2e-6 if dt == np.float32 else 1e-13
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(xp.grad.numpy(), wgrad, rtol=tol, atol=tol)
    np.testing.assert_array_equal(tp.grad.numpy(), -xp.grad.numpy())
    assert out.dtype == xp.grad.dtype == (ptcore.float32 if dt == np.float32 else ptcore.float64)
    if torch is not None:
        xt = torch.tensor(x, requires_grad=True)
        ot = _call(torch, kind, p, xt, torch.tensor(t), reduction)
        ot.backward(torch.tensor(g))
        if reduction == "none":       # the terms: torch's vector kernel's operations
            np.testing.assert_array_equal(out.detach().numpy(), ot.detach().numpy())
        else:
            np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy(), rtol=tol)
        np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", [0, 1, 2])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_both_variants_give_the_same_bits(kind, dt):
    # every length up to two vectors past a chunk edge: vector body, tail
    rng = np.random.default_rng(2)
    for n in list(range(1, 40)) + [16383, 16384, 16385, 50001]:
        x = ptcore.tensor((rng.standard_normal(n) * 2).astype(dt))
        t = ptcore.tensor((rng.standard_normal(n) * 2).astype(dt))
        g = ptcore.tensor(rng.standard_normal(n).astype(dt))
        res = []
        for on in (True, False):
            old = K._set_smooth_l1_avx2(on)
            try:
                res.append([K.smooth_l1_forward(x, t, 0.8, kind, r).numpy() for r in (0, 1, 2)]
                           + [K.smooth_l1_backward(g, x, t, 0.8, kind, 0).numpy(),
                              K.smooth_l1_backward(g[:1].reshape(()), x, t, 0.8, kind, 1).numpy()])
            finally:
                K._set_smooth_l1_avx2(old)
        for a, b in zip(*res):
            np.testing.assert_array_equal(a, b, err_msg=f"n={n}")


def test_sum_is_the_same_for_any_thread_count():
    x = ptcore.randn(300_000, dtype=ptcore.float64)
    t = ptcore.randn(300_000, dtype=ptcore.float64)
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = F.smooth_l1_loss(x, t).item(), F.huber_loss(x, t, reduction="sum").item()
        ptcore.set_num_threads(2)
        two = F.smooth_l1_loss(x, t).item(), F.huber_loss(x, t, reduction="sum").item()
    finally:
        ptcore.set_num_threads(old)
    assert one == two
    d = np.abs(x.numpy() - t.numpy())
    np.testing.assert_allclose(one[0], np.where(d < 1, 0.5 * d * d, d - 0.5).mean(), rtol=1e-13)


def test_special_values():
    nan, inf = float("nan"), float("inf")
    x = ptcore.tensor([nan, inf, -inf, 1.0, 0.0, -0.0, 1e30, 1e-40], dtype=ptcore.float32)
    t = ptcore.tensor([0.0, 0.0, 0.0, nan, -0.0, 0.0, -1e30, 0.0], dtype=ptcore.float32)
    for kind in ("smooth_l1", "huber", "mse"):
        got = _call(ptcore, kind, 1.0, x, t, "none")
        assert got.numpy().tolist()[4:6] == [0.0, 0.0]
        assert np.isnan(got.numpy()[[0, 3]]).all() and np.isinf(got.numpy()[[1, 2]]).all()
        if torch is not None:
            want = _call(torch, kind, 1.0, torch.tensor(x.numpy()), torch.tensor(t.numpy()),
                         "none")
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert np.isnan(_call(ptcore, kind, 1.0, x, t, "mean").item())


def test_the_kernels_stand_aside():
    x = ptcore.randn(4, 6)
    t = ptcore.randn(4, 6)
    assert K.smooth_l1_forward(x, t.t().contiguous().t(), 1.0, False, 1) is None   # layouts
    assert K.smooth_l1_forward(x, t.double(), 1.0, False, 1) is None               # dtypes
    assert K.smooth_l1_forward(x.half(), t.half(), 1.0, False, 1) is None
    assert K.smooth_l1_forward(x[:0], t[:0], 1.0, False, 1) is None                # empty
    assert K.smooth_l1_forward(x, t, 0.0, False, 1) is None                        # p <= 0
    assert K.smooth_l1_forward(x, t, 1.0, False, 3) is None                        # reduction
    assert K.smooth_l1_forward(x, t, 1.0, 3, 1) is None                            # kind
    assert K.smooth_l1_backward(ptcore.ones(2), x, t, 1.0, True, 1) is None         # g shape
    # the composite gives the same values in those cases
    tt = t.t().contiguous().t()
    for kind, p in LOSSES:
        np.testing.assert_allclose(_call(ptcore, kind, p, x, tt, "mean").item(),
                                   _call(ptcore, kind, p, x, t, "mean").item(), rtol=1e-6)
        # broadcast target (warns, as torch)
        with pytest.warns(UserWarning):
            b = _call(ptcore, kind, p, x, t[:1], "sum")
        np.testing.assert_allclose(b.item(), _call(ptcore, kind, p, x, t[:1].expand(4, 6)
                                                   .contiguous(), "sum").item(), rtol=1e-6)


@pytest.mark.parametrize("kind,p", LOSSES[:4] + LOSSES[-1:])
def test_create_graph_and_forward_ad_use_the_composite(kind, p):
    x = ptcore.tensor([-2.0, -0.3, 0.2, 0.9, 1.7], dtype=ptcore.float64, requires_grad=True)
    t = ptcore.zeros(5, dtype=ptcore.float64)
    out = _call(ptcore, kind, p, x, t, "sum")
    (gx,) = ptcore.autograd.grad(out, x, create_graph=True)
    (ggx,) = ptcore.autograd.grad(gx.sum(), x)
    d = x.detach().numpy()
    if kind == "mse":
        want = np.full(5, 2.0)
    else:
        want = np.where(np.abs(d) < p, 1.0 if kind == "huber" else 1 / p, 0.0)
    np.testing.assert_allclose(ggx.numpy(), want)
    import ptcore.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), ptcore.ones(5, dtype=ptcore.float64))
        tangent = fwAD.unpack_dual(_call(ptcore, kind, p, dual, t, "sum")).tangent
    np.testing.assert_allclose(tangent.item(), gx.detach().sum().item(), rtol=1e-12)
