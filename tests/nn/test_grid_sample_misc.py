"""F.affine_grid, F.grid_sample (values and gradients), F.gumbel_softmax and fractional max
pooling against torch 2.13."""
import itertools

import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(a):
    a = np.asarray(a)
    return ptcore.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(size, align_corners):
    rng = np.random.default_rng(0)
    k = len(size) - 2
    theta = rng.standard_normal((size[0], k, k + 1))
    pt, tt = _pair(theta)
    np.testing.assert_allclose(F.affine_grid(pt, size, align_corners=align_corners).numpy(),
                               TF.affine_grid(tt, size, align_corners=align_corners).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_affine_grid_errors():
    with pytest.raises(ValueError):
        TF.affine_grid(torch.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False)
    with pytest.raises(ValueError, match="affine matrices"):
        F.affine_grid(ptcore.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False)
    with pytest.raises(NotImplementedError):
        TF.affine_grid(torch.zeros(2, 2, 3), (2, 3, 4), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(ptcore.zeros(2, 2, 3), (2, 3, 4), align_corners=False)


GS_CASES = list(itertools.product(["bilinear", "nearest", "bicubic"],
                                  ["zeros", "border", "reflection"], [False, True]))


@pytest.mark.parametrize("mode, padding, align", GS_CASES)
def test_grid_sample_2d_values_and_grads(mode, padding, align):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 6))
    g = rng.uniform(-1.4, 1.4, (2, 4, 7, 2))
    px, tx = _pair(x)
    pg, tg = _pair(g)
    for t in (px, tx, pg, tg):
        t.requires_grad_(True)
    py = F.grid_sample(px, pg, mode=mode, padding_mode=padding, align_corners=align)
    ty = TF.grid_sample(tx, tg, mode=mode, padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    w = rng.standard_normal(ty.shape)
    (py * ptcore.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)
    if mode != "nearest":
        np.testing.assert_allclose(pg.grad.numpy(), tg.grad.numpy(), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("mode, padding, align",
                         [c for c in GS_CASES if c[0] != "bicubic"])
def test_grid_sample_3d(mode, padding, align):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    g = rng.uniform(-1.2, 1.2, (1, 2, 3, 4, 3)).astype(np.float32)
    px, tx = _pair(x)
    pg, tg = _pair(g)
    px.requires_grad_(True)
    tx.requires_grad_(True)
    py = F.grid_sample(px, pg, mode=mode, padding_mode=padding, align_corners=align)
    ty = TF.grid_sample(tx, tg, mode=mode, padding_mode=padding, align_corners=align)
    assert py.dtype is ptcore.float32
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    py.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


_SPECIAL = [float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 0.3]


def _sample_with_grads(L, x, g, mode, padding, align):
    x = L.tensor(x).requires_grad_()
    g = L.tensor(g).requires_grad_()
    out = L.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                      align_corners=align)
    out.sum().backward()
    # (the sign of a zero gradient is not compared)
    return [np.asarray(t.detach().numpy(), dtype=np.float64) + 0.0 for t in (out, x.grad, g.grad)]


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_3d_nan_inf_grid(mode, padding, align):
    # torch's 5-d kernel: reflection maps NaN/inf to NaN, the clip maps NaN to the last
    # index, then a coordinate that is not finite or beyond the int range moves outside
    # (zeros); NaN points after padding get no gradient; the borders have none either
    x = np.arange(1., 28.).reshape(1, 1, 3, 3, 3)
    for combo in itertools.product(_SPECIAL, repeat=3):
        if all(v == 0.3 for v in combo):
            continue
        g = np.array(combo, dtype=np.float64).reshape(1, 1, 1, 1, 3)
        got = _sample_with_grads(ptcore, x, g, mode, padding, align)
        want = _sample_with_grads(torch, x, g, mode, padding, align)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=str(combo))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_nan_inf_grid_never_indexes_outside(mode, padding):
    # the composite path (bfloat16 here; other devices and dtypes alike) once turned a NaN
    # coordinate into index INT64_MIN; torch's scalar kernels' values instead
    x = ptcore.arange(1., 17.).reshape(1, 1, 4, 4).to(ptcore.bfloat16).requires_grad_()
    for combo in itertools.product(_SPECIAL, repeat=2):
        g = ptcore.tensor([[[list(combo)]]]).to(ptcore.bfloat16).requires_grad_()
        out = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False)
        out.sum().backward()
        v = out.float().item()
        finite = all(abs(c) < 1e29 for c in combo)
        if padding == "zeros" and not finite:
            # a coordinate outside the int range reads nothing (bicubic: its NaN weights stay)
            assert v == 0 or (mode == "bicubic" and v != v), (combo, v)
        elif padding != "zeros" and mode != "bicubic":
            assert 1 <= v <= 16, (combo, v)


def test_grid_sample_errors():
    x, g = ptcore.zeros(1, 1, 3, 3), ptcore.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError):
        TF.grid_sample(torch.zeros(1, 1, 3, 3), torch.zeros(1, 2, 2, 2), mode="area")
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError, match="padding"):
        F.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(RuntimeError):
        F.grid_sample(x, ptcore.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(ptcore.zeros(1, 1, 3, 3, 3), ptcore.zeros(1, 2, 2, 2, 3), mode="bicubic",
                      align_corners=False)


def test_spatial_transformer_roundtrip():
    # identity theta reproduces the input (align_corners=True)
    x = ptcore.randn(2, 3, 6, 7)
    theta = ptcore.tensor([[[1., 0., 0.], [0., 1., 0.]]]).expand(2, 2, 3)
    grid = F.affine_grid(theta, x.shape, align_corners=True)
    np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=True).numpy(), x.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_gumbel_softmax():
    ptcore.manual_seed(11)          # (independent of the tests run before)
    logits = ptcore.randn(5, 7, requires_grad=True)
    ptcore.manual_seed(0)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), np.ones(5), rtol=1e-6)
    assert (y.detach().numpy() > 0).all()
    h = F.gumbel_softmax(logits, tau=0.5, hard=True, dim=0)
    hn = h.detach().numpy()
    assert set(np.unique(hn)) <= {0.0, 1.0} and (hn.sum(0) == 1).all()
    # (weights that vary along the softmax dim: constant ones give a zero gradient)
    (h * ptcore.arange(35.).reshape(5, 7)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    # straight-through: the gradient is the soft sample's
    ptcore.manual_seed(3)
    l2 = logits.detach().clone().requires_grad_(True)
    hard = F.gumbel_softmax(l2, hard=True)
    ptcore.manual_seed(3)
    l3 = logits.detach().clone().requires_grad_(True)
    soft = F.gumbel_softmax(l3, hard=False)
    np.testing.assert_array_equal(hard.argmax(-1).numpy(), soft.argmax(-1).numpy())
    w = ptcore.randn(5, 7)
    (hard * w).sum().backward()
    (soft * w).sum().backward()
    np.testing.assert_allclose(l2.grad.numpy(), l3.grad.numpy(), rtol=1e-6)


def test_gumbel_softmax_distribution():
    # the argmax of a Gumbel-softmax sample is distributed as softmax(logits)
    logits = ptcore.tensor([[0.0, 1.0, 2.0]]).expand(20000, 3)
    ptcore.manual_seed(1)
    counts = np.bincount(F.gumbel_softmax(logits, hard=True).argmax(-1).numpy(), minlength=3)
    p = np.exp([0, 1, 2]) / np.exp([0, 1, 2]).sum()
    np.testing.assert_allclose(counts / 20000, p, atol=0.015)


@pytest.mark.parametrize("nd, shape, kernel, kw", [
    (2, (2, 3, 10, 9), 2, {"output_size": (5, 4)}),
    (2, (1, 2, 11, 12), (3, 2), {"output_ratio": (0.5, 0.6)}),
    (2, (3, 9, 9), 3, {"output_size": 4}),
    (3, (1, 2, 8, 9, 7), 2, {"output_size": (4, 3, 3)}),
    (3, (2, 6, 6, 6), (2, 3, 2), {"output_ratio": 0.5}),
])
def test_fractional_max_pool_given_samples(nd, shape, kernel, kw):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    batch = shape[0] if len(shape) == nd + 2 else 1
    chans = shape[-nd - 1]
    samples = rng.uniform(0, 1, (batch, chans, nd))
    px, tx = _pair(x)
    ps, ts = _pair(samples)
    px.requires_grad_(True)
    tx.requires_grad_(True)
    pf = getattr(F, f"fractional_max_pool{nd}d")
    tf = getattr(TF, f"fractional_max_pool{nd}d")
    py, pi = pf(px, kernel, return_indices=True, _random_samples=ps, **kw)
    ty, ti = tf(tx, kernel, return_indices=True, _random_samples=ts, **kw)
    np.testing.assert_array_equal(py.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(pi.numpy(), ti.numpy())
    assert pi.dtype is ptcore.int64
    w = rng.standard_normal(ty.shape)
    (py * ptcore.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy())
    # the module form
    mod = getattr(pnn, f"FractionalMaxPool{nd}d")(kernel, _random_samples=ps, **kw)
    np.testing.assert_array_equal(mod(px).detach().numpy(), ty.detach().numpy())


def test_fractional_max_pool_random_and_errors():
    y = F.fractional_max_pool2d(ptcore.randn(2, 3, 10, 10), 3, output_size=4)
    assert tuple(y.shape) == (2, 3, 4, 4)
    m = pnn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
    out, idx = m(ptcore.randn(1, 1, 8, 8))
    assert tuple(out.shape) == tuple(idx.shape) == (1, 1, 4, 4)
    with pytest.raises(ValueError):
        torch.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        pnn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        pnn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError):
        torch.nn.functional.fractional_max_pool2d(torch.randn(1, 1, 4, 4), 3, output_size=3)
    with pytest.raises(RuntimeError):
        F.fractional_max_pool2d(ptcore.randn(1, 1, 4, 4), 3, output_size=3)
