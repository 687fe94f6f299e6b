"""pad, interpolate, pixel_shuffle and their modules against PyTorch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore.nn.functional import _conv as _C

from conv_grad_util import grads, to_pt
from threads_util import kernel_threads

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

TOL = {np.float32: dict(rtol=1e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _check(pt_fn, th_fn, x, dt):
    rng = np.random.default_rng(1)
    tx = torch.tensor(x, requires_grad=True)
    ty = th_fn(tx)
    gy = rng.standard_normal(tuple(ty.shape)).astype(dt)
    (tgx,) = torch.autograd.grad(ty, [tx], torch.tensor(gy))
    y, (gx,) = grads(pt_fn, [to_pt(x)], to_pt(gy))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **TOL[dt])
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), **TOL[dt])


@needs_torch
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (2, 1, 0, 3), (1, 1, 2, 0, 1, 2), (-1, 2), (2, -1, 1, 0)])
def test_pad_matches_torch(mode, pad):
    k = len(pad) // 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + (4, 5, 6)[3 - k:])
    _check(lambda a: F.pad(a, pad, mode), lambda a: torch.nn.functional.pad(a, pad, mode), x,
           np.float64)
    if mode == "constant":
        ref = torch.nn.functional.pad(torch.tensor(x), pad, value=2.5)
        np.testing.assert_array_equal(F.pad(to_pt(x), pad, value=2.5).numpy(), ref.numpy())


INTERP = [
    dict(size=(9, 4), mode="nearest"),
    dict(scale_factor=2),
    dict(scale_factor=1.7, mode="nearest"),
    dict(scale_factor=(0.5, 3), mode="nearest-exact"),
    dict(scale_factor=(1.5, 0.6), mode="bilinear"),
    dict(size=(9, 13), mode="bilinear", align_corners=True),
    dict(size=(3, 3), mode="bilinear"),
    dict(size=(1, 1), mode="bilinear", align_corners=True),
    dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
    dict(size=(8, 11), mode="bicubic"),
    dict(size=(4, 9), mode="bicubic", align_corners=True),
    dict(size=(4, 3), mode="area"),
]


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", INTERP)
def test_interpolate_2d_matches_torch(kw, dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 7)).astype(dt)
    _check(lambda a: F.interpolate(a, **kw), lambda a: torch.nn.functional.interpolate(a, **kw),
           x, dt)


@needs_torch
@pytest.mark.parametrize("kw", [dict(scale_factor=2.5, mode="linear"),
                                dict(size=4, mode="linear", align_corners=True),
                                dict(size=11, mode="nearest")])
def test_interpolate_1d_matches_torch(kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 6))
    _check(lambda a: F.interpolate(a, **kw), lambda a: torch.nn.functional.interpolate(a, **kw),
           x, np.float64)


@needs_torch
def test_interpolate_3d_matches_torch():
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4, 5))
    for kw in (dict(size=(5, 3, 7), mode="trilinear"), dict(scale_factor=2, mode="nearest"),
               dict(size=(2, 6, 4), mode="trilinear", align_corners=True)):
        _check(lambda a: F.interpolate(a, **kw),
               lambda a: torch.nn.functional.interpolate(a, **kw), x, np.float64)


def _err(fn):
    with pytest.raises(Exception) as ei:
        fn()
    return type(ei.value), str(ei.value).splitlines()[0]


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), scale_factor=2, mode="linear"),
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), mode="nearest"),
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), size=3, scale_factor=2),
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), size=3, mode="nearest", align_corners=True),
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), size=3, mode="foo"),
    lambda F, t: F.pixel_shuffle(t.randn(2, 2), 2),
    lambda F, t: F.pixel_shuffle(t.randn(5, 2, 2), 2),
    lambda F, t: F.pixel_unshuffle(t.randn(4, 3, 2), 2),
    lambda F, t: F.pixel_unshuffle(t.randn(4, 2, 3), 2),
    lambda F, t: F.pad(t.randn(2, 3), (1, 2, 3), "constant"),
    lambda F, t: F.pad(t.randn(2, 3, 3), (3, 3), "reflect"),
    lambda F, t: F.interpolate(t.randn(2, 3, 4), size=3, mode="linear", antialias=True),
    lambda F, t: F.interpolate(t.randn(2, 3, 4, 4), size=3, mode="nearest", antialias=True),
    lambda F, t: F.channel_shuffle(t.randn(2, 5, 3), 2),
    lambda F, t: F.channel_shuffle(t.randn(2, 4, 3), 0),
    lambda F, t: F.channel_shuffle(t.randn(4, 3), 2),
])
def test_vision_errors_match_torch(call):
    assert _err(lambda: call(F, ptcore)) == _err(lambda: call(torch.nn.functional, torch))


@needs_torch
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 5), 2), ((9, 2, 3), 3), ((2, 1, 4, 3, 2), 1)])
def test_pixel_shuffle_roundtrip(shape, r):
    x = np.random.default_rng(0).standard_normal(shape)
    ref = torch.nn.functional.pixel_shuffle(torch.tensor(x), r)
    out = F.pixel_shuffle(to_pt(x), r)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    back = F.pixel_unshuffle(out, r)
    np.testing.assert_array_equal(back.numpy(), x)
    np.testing.assert_array_equal(
        back.numpy(), torch.nn.functional.pixel_unshuffle(ref, r).numpy())
    assert repr(nn.PixelShuffle(r)) == repr(torch.nn.PixelShuffle(r))
    assert repr(nn.PixelUnshuffle(r)) == repr(torch.nn.PixelUnshuffle(r))


@needs_torch
@pytest.mark.parametrize("cls,args", [
    ("ZeroPad1d", (2,)), ("ZeroPad2d", ((1, 2, 0, 3),)), ("ZeroPad3d", (1,)),
    ("ConstantPad1d", ((1, 2), 3.5)), ("ConstantPad2d", (1, -1.0)), ("ConstantPad3d", (1, 2.0)),
    ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 2, 0, 3),)), ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", ((3, 1),)), ("ReplicationPad2d", (2,)), ("ReplicationPad3d", (1,)),
    ("CircularPad1d", (2,)), ("CircularPad2d", ((1, 0, 2, 1),)), ("CircularPad3d", (1,)),
])
def test_padding_modules_match_torch(cls, args):
    tm = getattr(torch.nn, cls)(*args)
    pm = getattr(nn, cls)(*args)
    assert repr(pm) == repr(tm)
    nd = int(cls[-2])
    x = np.random.default_rng(0).standard_normal((2, 3) + (4,) * nd)
    np.testing.assert_array_equal(pm(to_pt(x)).numpy(), tm(torch.tensor(x)).numpy())


@needs_torch
@pytest.mark.parametrize("cls,kw", [
    ("Upsample", dict(scale_factor=2)),
    ("Upsample", dict(size=(7, 5), mode="bilinear")),
    ("Upsample", dict(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True)),
    ("UpsamplingNearest2d", dict(scale_factor=3)),
    ("UpsamplingBilinear2d", dict(size=6)),
])
def test_upsample_modules_match_torch(cls, kw):
    tm = getattr(torch.nn, cls)(**kw)
    pm = getattr(nn, cls)(**kw)
    assert repr(pm) == repr(tm)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(pm(to_pt(x)).numpy(), tm(torch.tensor(x)).numpy(), rtol=1e-10,
                               atol=1e-12)


@needs_torch
@pytest.mark.parametrize("groups,shape", [(2, (2, 4, 3)), (3, (1, 6, 2, 2)), (1, (2, 3, 2, 1, 2))])
def test_channel_shuffle_matches_torch(groups, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    ref = torch.nn.functional.channel_shuffle(torch.tensor(x), groups)
    np.testing.assert_array_equal(F.channel_shuffle(to_pt(x), groups).numpy(), ref.numpy())
    m, tm = nn.ChannelShuffle(groups), torch.nn.ChannelShuffle(groups)
    assert repr(m) == repr(tm)
    np.testing.assert_array_equal(m(to_pt(x)).numpy(), ref.numpy())


# ---------------------------------------------------------------------------
# the CPU kernels of interpolate (ptcore._ops.kernels._resample)
# ---------------------------------------------------------------------------
def _interp_pair(x, kw, memory_format=None):
    """(ptcore output, input grad), (torch output, input grad) for the same gradient."""
    rng = np.random.default_rng(5)
    out = []
    for lib in (ptcore, torch):
        t = lib.from_numpy(x)
        if memory_format is not None:
            t = t.contiguous(memory_format=getattr(lib, memory_format))
        t = t.detach().requires_grad_()
        y = lib.nn.functional.interpolate(t, **kw)
        g = rng.standard_normal(tuple(y.shape)).astype(x.dtype)
        rng = np.random.default_rng(5)
        y.backward(lib.from_numpy(g))
        out.append((y, t.grad))
    return out


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("k,mode", [(1, "nearest"), (1, "nearest-exact"), (1, "linear"),
                                    (2, "nearest"), (2, "nearest-exact"), (2, "bilinear"),
                                    (2, "bicubic"), (3, "nearest"), (3, "trilinear")])
@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(scale_factor=1.7),
                                dict(scale_factor=0.6), dict(scale_factor=1.05),
                                dict(scale_factor=2.3, recompute_scale_factor=True), "same",
                                "plus1"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("channels_last", [False, True])
def test_interpolate_kernels_match_torch(dt, k, mode, kw, align_corners, channels_last):
    """Values, layouts and grad_fn names of the kernels, forward and backward,
    against torch (within about an ulp of the largest value); torch's nearest honours a scale factor that keeps or doubles a size in
    1-d and 3-d only, its nearest backward never, and its bicubic backward
    copies when no size changes."""
    if "nearest" in mode and align_corners:
        pytest.skip("align_corners is for the interpolating modes")
    if channels_last and k == 1:
        pytest.skip("no channels-last 3-d layout")
    shape = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (2, 3, 4, 5, 6)}[k]
    if kw == "same":
        kw = dict(size=shape[2:])
    elif kw == "plus1":
        kw = dict(size=tuple(s + 1 for s in shape[2:]))
    kw = dict(kw, mode=mode)
    if "nearest" not in mode:
        kw["align_corners"] = align_corners
    x = np.random.default_rng(0).standard_normal(shape).astype(dt)
    fmt = None if not channels_last else ("channels_last" if k == 2 else "channels_last_3d")
    (py, pg), (ty, tg) = _interp_pair(x, kw, fmt)
    assert py.stride() == ty.stride() and pg.stride() == tg.stride()
    assert py.grad_fn.name() == ty.grad_fn.name()
    if "nearest" in mode:
        np.testing.assert_array_equal(py.detach().numpy(), ty.detach().numpy())
    scale = np.abs(ty.detach().numpy()).max()
    tol = 1e-6 if dt == np.float32 else 1e-14
    np.testing.assert_allclose(py.detach().numpy(), ty.detach().numpy(), rtol=0, atol=tol * scale)
    np.testing.assert_allclose(pg.numpy(), tg.numpy(), rtol=0,
                               atol=tol * np.abs(tg.numpy()).max())


@needs_torch
@pytest.mark.parametrize("size,mode", [((2, 3), "bilinear"), ((4, 3), "bilinear"),
                                       ((4, 6), "bilinear"), ((4, 6), "bicubic"),
                                       ((4, 6), "nearest"), ((3, 5), "bicubic")])
def test_interpolate_kernels_nonfinite_like_torch(size, mode):
    """inf and NaN inputs spread as in torch (inf * 0 taps give NaN, also for
    a kept size)."""
    x = np.array([[[[1., np.inf, 3.], [4., 5., np.nan]]]], dtype=np.float32)
    t = torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode=mode)
    p = F.interpolate(ptcore.from_numpy(x), size=size, mode=mode)
    np.testing.assert_array_equal(p.numpy(), t.numpy())


@needs_torch
def test_interpolate_channels_last_requires_grad():
    """A channels-last input that requires grad gets a gradient (the output
    lost its grad_fn) in the input's layout."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    (py, pg), (ty, tg) = _interp_pair(x, dict(scale_factor=2, mode="bilinear"), "channels_last")
    assert py.grad_fn is not None and pg.is_contiguous(memory_format=ptcore.channels_last)
    np.testing.assert_allclose(pg.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_interpolate_kernels_double_backward(mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 5, 6))
    res = []
    for lib in (ptcore, torch):
        t = lib.from_numpy(x).requires_grad_()
        y = lib.nn.functional.interpolate(t, scale_factor=2, mode=mode)
        (g,) = lib.autograd.grad((y ** 3).sum(), (t,), create_graph=True)
        (g * g).sum().backward()
        res.append(t.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest", "trilinear"])
def test_interpolate_kernels_thread_count_invariant(mode):
    """Planes are split among threads whole: the same bits at 1 and 3 threads;
    the unfused passes (CPUs without FMA) stay within rounding of the fused."""
    from ptcore._ops.kernels import _resample
    shape = (2, 6, 8, 8, 8) if mode == "trilinear" else (4, 6, 16, 16)
    x = ptcore.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    res = []
    for n in (1, 3):
        with kernel_threads(n):
            t = x.detach().requires_grad_()
            y = F.interpolate(t, scale_factor=2, mode=mode)
            y.backward(y.detach())
            res.append((y.detach().numpy(), t.grad.numpy()))
    old = _resample._set_fma(False)
    try:
        unfused = F.interpolate(x, scale_factor=2, mode=mode).numpy()
    finally:
        _resample._set_fma(old)
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_allclose(unfused, res[0][0], rtol=0, atol=1e-6 * np.abs(res[0][0]).max())


@needs_torch
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_empty_input_plane_raises_like_torch(mode):
    """An input with an empty spatial dim raises torch's RuntimeError (the
    kernels' own check said ValueError); empty batches resample to empty."""
    with pytest.raises(RuntimeError, match="greater than 0"):
        F.interpolate(ptcore.ones(1, 1, 0, 4), size=(2, 2), mode=mode)
    with pytest.raises(RuntimeError, match="greater than 0"):
        torch.nn.functional.interpolate(torch.ones(1, 1, 0, 4), size=(2, 2), mode=mode)
    assert tuple(F.interpolate(ptcore.ones(0, 2, 3, 4), scale_factor=2, mode=mode).shape) == \
        (0, 2, 6, 8)
