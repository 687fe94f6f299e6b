"""pad, interpolate, pixel_shuffle and their modules against PyTorch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F
from ptcore.nn.functional import _conv as _C

from conv_grad_util import grads, to_pt

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
