"""F.affine_grid, F.grid_sample (values and gradients), F.gumbel_softmax and fractional max
pooling against torch 2.13."""
import itertools

import numpy as np
import pytest

import ptcore
import ptcore.nn as pnn
import ptcore.nn.functional as F

from threads_util import kernel_threads

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


# ---------------------------------------------------------------------------
# the CPU kernel of 2-d grid_sample (ptcore._ops.kernels._resample)
# ---------------------------------------------------------------------------
def _kernel_like_torch():
    """Whether both run their fused-multiply-add kernels (x86 with AVX2/FMA):
    bilinear and nearest are then torch's bits."""
    from ptcore._ops.kernels import _resample
    old = _resample._set_fma(True)
    _resample._set_fma(old)
    return old and torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def _gs_both(x, g, mode, pad, ac, go=None):
    """[(out, input grad, grid grad)] for ptcore and torch (grads when ``go``)."""
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x).requires_grad_(go is not None)
        gt = lib.from_numpy(g).requires_grad_(go is not None)
        y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=pad, align_corners=ac)
        if go is not None:
            y.backward(lib.from_numpy(go))
        res.append((y.detach().numpy(), None if go is None else xt.grad.numpy(),
                    None if go is None else gt.grad.numpy()))
    return res


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("hw", [(5, 7), (1, 6), (4, 1)])
def test_grid_sample_kernel_matches_torch(dt, mode, pad, ac, hw):
    """Output, input and grid gradients of the 2-d kernel against torch: bit for
    bit for bilinear and nearest where both fuse multiply-adds, else within
    rounding (grids through the borders, exactly on them and far outside)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + hw).astype(dt)
    g = (rng.standard_normal((2, 5, 6, 2)) * 1.3).astype(dt)
    g[0, 0, :4] = [[-1, -1], [1, 1], [0, 0], [3.5, -2.25]]
    go = rng.standard_normal((2, 3, 5, 6)).astype(dt)
    (py, pgx, pgg), (ty, tgx, tgg) = _gs_both(x, g, mode, pad, ac, go)
    if mode != "bicubic" and _kernel_like_torch():
        for a, b in ((py, ty), (pgx, tgx), (pgg, tgg)):
            np.testing.assert_array_equal(a, b)
    # (bicubic sums 16 terms of either sign)
    tol = (1e-6 if mode != "bicubic" else 5e-6) if dt == np.float32 else 1e-14
    for a, b in ((py, ty), (pgx, tgx), (pgg, tgg)):
        np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(np.abs(b).max(), 1))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_kernel_nonfinite_grid_like_torch(mode, pad, ac):
    """NaN and +-inf grid values (and huge finite ones) in every mode and padding:
    torch's outputs (NaN for bilinear/bicubic zeros padding, the clipped border
    otherwise) and, where torch's backward is defined (zeros padding, nearest),
    its gradients; the positions fill whole vector blocks and a tail."""
    x = (np.arange(12.).reshape(1, 1, 3, 4) * 0.37 - 1).astype(np.float32)
    vals = [np.nan, np.inf, -np.inf, 1e10, -1e10, 0.3, 0.7, -0.2]
    g = np.array([[[[v, 0.2] for v in vals] + [[0.1, v] for v in vals] + [[0.5, 0.5]]]],
                 dtype=np.float32)
    go = np.ones((1, 1, 1, g.shape[2]), dtype=np.float32)
    grads = pad == "zeros" or mode == "nearest"
    (py, pgx, pgg), (ty, tgx, tgg) = _gs_both(x, g, mode, pad, ac, go if grads else None)
    tol = 1e-6 if mode != "bicubic" else 5e-6
    assert np.array_equal(np.isnan(py), np.isnan(ty))
    np.testing.assert_allclose(py, ty, rtol=tol, atol=tol)
    if grads:
        np.testing.assert_allclose(pgx, tgx, rtol=tol, atol=tol)
        assert np.array_equal(np.isnan(pgg), np.isnan(tgg))
        np.testing.assert_allclose(pgg, tgg, rtol=1e-5, atol=1e-5)


def test_grid_sample_kernel_nan_border_backward_stays_inside():
    """Where torch's border/reflection backward indexes memory with a NaN
    coordinate (undefined behaviour there), the corner counts as outside: no
    input gradient, a NaN grid gradient, nothing read or written out of bounds."""
    x = ptcore.ones(1, 2, 3, 4, requires_grad=True)
    g = ptcore.tensor([[[[float("nan"), 0.2], [0.1, float("inf")], [0.3, 0.4]]]],
                      requires_grad=True)
    for pad in ("border", "reflection"):
        x.grad = g.grad = None
        F.grid_sample(x, g, padding_mode=pad, align_corners=False).sum().backward()
        # each inside position gives its channel's weights (sum 1) to the input
        # gradient: (0.3, 0.4), and y = inf clipped to the border (reflecting
        # inf gives NaN)
        inside = 2 if pad == "border" else 1
        np.testing.assert_allclose(x.grad.sum().item(), 2 * inside, rtol=1e-6)
        assert np.isnan(g.grad.numpy()[0, 0, 0]).any()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_grid_sample_kernel_double_backward(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5, 6))
    g = rng.random((2, 3, 4, 2)) * 2.2 - 1.1
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x).requires_grad_()
        gt = lib.from_numpy(g).requires_grad_()
        y = lib.nn.functional.grid_sample(xt, gt, mode=mode, align_corners=False)
        gx, gg = lib.autograd.grad((y ** 2).sum(), (xt, gt), create_graph=True)
        (gx.sum() + (gg * gg).sum()).backward()
        res.append((xt.grad.numpy(), gt.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9, atol=1e-9)


def test_grid_sample_kernel_thread_count_and_layouts():
    """Samples are split among threads whole (the same bits at 1 and 3 threads);
    strided input and grid give the contiguous result; float16 keeps the
    composite path."""
    rng = np.random.default_rng(0)
    x = ptcore.from_numpy(rng.standard_normal((4, 3, 9, 8)).astype(np.float32))
    g = ptcore.from_numpy((rng.random((4, 8, 7, 2)) * 2.4 - 1.2).astype(np.float32))
    res = []
    for n in (1, 3):
        with kernel_threads(n):
            xt, gt = x.detach().requires_grad_(), g.detach().requires_grad_()
            y = F.grid_sample(xt, gt, align_corners=False)
            y.backward(y.detach())
            res.append((y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)
    xs = x.transpose(2, 3).contiguous().transpose(2, 3)
    gs = g.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)
    np.testing.assert_array_equal(F.grid_sample(xs, gs, align_corners=False).numpy(), res[0][0])
    h = F.grid_sample(x.half(), g.half(), align_corners=False)
    assert h.dtype == ptcore.float16
    np.testing.assert_allclose(h.float().numpy(), res[0][0], rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
def test_grid_sample_kernel_unfused_within_rounding(mode, pad):
    """The baseline kernels (CPUs without AVX2/FMA) agree with torch within
    rounding, NaN and inf grids included."""
    from ptcore._ops.kernels import _resample
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    g = (rng.standard_normal((2, 4, 5, 2)) * 1.3).astype(np.float32)
    g[0, 0, :3] = [[np.nan, 0.2], [np.inf, -0.3], [0.1, -np.inf]]
    old = _resample._set_fma(False)
    try:
        (py, _, _), (ty, _, _) = _gs_both(x, g, mode, pad, False)
    finally:
        _resample._set_fma(old)
    assert np.array_equal(np.isnan(py), np.isnan(ty))
    np.testing.assert_allclose(py, ty, rtol=5e-6, atol=5e-6)
