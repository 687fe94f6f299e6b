"""Pooling (functional and modules) against PyTorch: values, indices, gradients, errors."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

from conv_grad_util import grads, to_pt

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _check(pt_fn, th_fn, x, dt, with_indices=False):
    rng = np.random.default_rng(1)
    tx = torch.tensor(x, requires_grad=True)
    tout = th_fn(tx)
    ty = tout[0] if with_indices else tout
    gy = rng.standard_normal(tuple(ty.shape)).astype(dt)
    (tgx,) = torch.autograd.grad(ty, [tx], torch.tensor(gy))

    def f(a):
        out = pt_fn(a)
        if with_indices:
            f.ind = out[1]
            return out[0]
        return out

    y, (gx,) = grads(f, [to_pt(x)], to_pt(gy))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), equal_nan=True, **TOL[dt])
    np.testing.assert_allclose(gx.numpy(), tgx.numpy(), **TOL[dt])
    if with_indices:
        assert f.ind.dtype == ptcore.int64
        np.testing.assert_array_equal(f.ind.numpy(), tout[1].numpy())


MAX2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(1, 2), ceil_mode=True),
    dict(kernel_size=(3, 2), stride=2, padding=(1, 0), dilation=(1, 3)),
    dict(kernel_size=4, stride=3, ceil_mode=True),
]


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", MAX2D)
def test_max_pool2d_matches_torch(kw, dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 10, 11)).astype(dt)
    _check(lambda a: F.max_pool2d(a, return_indices=True, **kw),
           lambda a: torch.nn.functional.max_pool2d(a, return_indices=True, **kw), x, dt, True)
    _check(lambda a: F.max_pool2d(a, **kw), lambda a: torch.nn.functional.max_pool2d(a, **kw),
           x[0], dt)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, stride=2, dilation=2, ceil_mode=True),
                                dict(kernel_size=4, stride=3, padding=2)])
def test_max_pool1d_nan_inf_ties_match_torch(kw, dt):
    # the 1-d windows' row loop (branch-free selects): NaN wins and the last NaN of a
    # window is kept, -inf windows keep their first index, ties the first
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 23)).astype(dt)
    x[0, 0, [1, 2, 7]] = np.nan
    x[0, 1, :6] = -np.inf
    x[1, 2, 4:12] = 0.5
    x[1, 0, ::3] = np.nan
    y, i = F.max_pool1d(ptcore.from_numpy(x), return_indices=True, **kw)
    ty, ti = torch.nn.functional.max_pool1d(torch.from_numpy(x), return_indices=True, **kw)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    # a (1, k) 2-d kernel takes the same row loop
    y2, i2 = F.max_pool2d(ptcore.from_numpy(x[None]), (1, 3), (1, 2), return_indices=True)
    ty2, ti2 = torch.nn.functional.max_pool2d(torch.from_numpy(x[None]), (1, 3), (1, 2),
                                              return_indices=True)
    np.testing.assert_array_equal(i2.numpy(), ti2.numpy())
    np.testing.assert_array_equal(y2.numpy(), ty2.numpy())


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, stride=2, dilation=2, ceil_mode=True),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
                                dict(kernel_size=5, stride=1, padding=2, dilation=1),
                                dict(kernel_size=2, stride=1, dilation=3, padding=1),
                                dict(kernel_size=1, stride=4)])
@pytest.mark.parametrize("length", [1, 2, 5, 23, 64])
def test_max_pool1d_values_only_match_torch(kw, dt, length):
    # no grad, no indices: the values-only kernel (all window positions at a time, the
    # clipped edge windows one by one), against torch, NaN/-inf included; also the same
    # values as the indexed path
    rng = np.random.default_rng(length)
    x = rng.standard_normal((2, 3, length)).astype(dt)
    x[0, 0, ::4] = np.nan
    x[1, 1, :] = -np.inf
    x[1, 2, 1::2] = 0.25
    k, d, p = kw["kernel_size"], kw.get("dilation", 1), kw.get("padding", 0)
    if (k - 1) * d + 1 - 2 * p > length:
        with pytest.raises(RuntimeError):
            torch.nn.functional.max_pool1d(torch.from_numpy(x), **kw)
        with pytest.raises(RuntimeError):
            F.max_pool1d(ptcore.from_numpy(x), **kw)
        return
    want = torch.nn.functional.max_pool1d(torch.from_numpy(x), **kw).numpy()
    got = F.max_pool1d(ptcore.from_numpy(x), **kw)
    assert got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(F.max_pool1d(ptcore.from_numpy(x[0]), **kw).numpy(), want[0])
    np.testing.assert_array_equal(
        F.max_pool1d(ptcore.from_numpy(x), return_indices=True, **kw)[0].numpy(), want)
    # an input that requires grad, under no_grad, takes the same kernel
    xr = ptcore.from_numpy(x).requires_grad_()
    with ptcore.no_grad():
        np.testing.assert_array_equal(F.max_pool1d(xr, **kw).numpy(), want)


@needs_torch
@pytest.mark.parametrize("nd", [1, 2])
def test_max_pool_window_wholly_in_padding_as_torch(nd):
    # dilation steps a window over the whole row: torch gives -inf and the window's
    # first position (past the row) as its index; ptcore raised "empty window"
    x = np.random.default_rng(0).standard_normal((1, 2, 2) if nd == 1 else (1, 2, 3, 2))
    x = x.astype(np.float32)
    fn = "max_pool1d" if nd == 1 else "max_pool2d"
    kw = dict(kernel_size=2, stride=1, padding=1, dilation=3) if nd == 1 else \
        dict(kernel_size=(1, 2), stride=1, padding=(0, 1), dilation=(1, 3))
    ty, ti = getattr(torch.nn.functional, fn)(torch.from_numpy(x), return_indices=True, **kw)
    y, i = getattr(F, fn)(ptcore.from_numpy(x), return_indices=True, **kw)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(getattr(F, fn)(ptcore.from_numpy(x), **kw).numpy(), ty.numpy())
    # the gradient goes to the index while it falls inside the plane (2-d: the next row's
    # first element), as torch's; past the plane's end torch adds it to the next plane's
    # memory, ptcore drops it
    xr = ptcore.from_numpy(x).requires_grad_()
    getattr(F, fn)(xr, **kw).sum().backward()
    planes = ti.numpy().reshape(2, -1)
    pin = x[0, 0].size
    want = np.zeros((2, pin), np.float32)
    for c in range(2):
        for idx in planes[c]:
            if idx < pin:
                want[c, idx] += 1
    np.testing.assert_array_equal(xr.grad.numpy().reshape(2, -1), want)


def test_max_pool1d_values_kernel_refuses_bad_operands():
    from ptcore._ops.kernels import _conv
    x = ptcore.zeros(2, 5)
    # windows past the row are -inf (nothing read outside it)
    y = _conv.max_pool1d_values(x, ptcore.zeros(2, 9), 2, 1, 0, 1)
    assert (y[:, 5:] == float("-inf")).all() and (y[:, :4] == 0).all()
    with pytest.raises(RuntimeError):
        _conv.max_pool1d_values(x, ptcore.zeros(3, 2), 2, 2, 0, 1)     # plane count differs
    with pytest.raises(RuntimeError):
        _conv.max_pool1d_values(x, ptcore.zeros(2, 2, dtype=ptcore.float64), 2, 2, 0, 1)
    with pytest.raises(RuntimeError):
        _conv.max_pool1d_values(x, ptcore.zeros(2, 3), 2, 2, 2, 1)     # padding > half


@needs_torch
def test_max_pool2d_nan_and_ties():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 0, 1] = np.nan
    x[0, 0, 1, 0] = np.nan
    x[0, 0, 2:, 2:] = 1.0        # ties: the first index wins
    y, i = F.max_pool2d(to_pt(x), 2, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(np.isnan(y.numpy()), np.isnan(ty.numpy()))
    y, i = F.max_pool2d(to_pt(x), 3, 1, 1, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1,
                                                          dilation=2, ceil_mode=True)])
def test_max_pool1d_3d_match_torch(kw, dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11)).astype(dt)
    _check(lambda a: F.max_pool1d(a, return_indices=True, **kw),
           lambda a: torch.nn.functional.max_pool1d(a, return_indices=True, **kw), x, dt, True)
    x = rng.standard_normal((2, 2, 6, 7, 5)).astype(dt)
    _check(lambda a: F.max_pool3d(a, return_indices=True, **kw),
           lambda a: torch.nn.functional.max_pool3d(a, return_indices=True, **kw), x, dt, True)


AVG2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), ceil_mode=True, divisor_override=5),
    dict(kernel_size=(4, 2), stride=3, padding=(2, 1), divisor_override=3),
]


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", AVG2D)
def test_avg_pool2d_matches_torch(kw, dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 10, 11)).astype(dt)
    _check(lambda a: F.avg_pool2d(a, **kw), lambda a: torch.nn.functional.avg_pool2d(a, **kw),
           x, dt)
    _check(lambda a: F.avg_pool2d(a, **kw), lambda a: torch.nn.functional.avg_pool2d(a, **kw),
           x[1], dt)


@needs_torch
@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1,
                                                          ceil_mode=True,
                                                          count_include_pad=False)])
def test_avg_pool1d_3d_match_torch(kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11))
    _check(lambda a: F.avg_pool1d(a, **kw), lambda a: torch.nn.functional.avg_pool1d(a, **kw),
           x, np.float64)
    x = rng.standard_normal((2, 2, 6, 7, 5))
    _check(lambda a: F.avg_pool3d(a, **kw), lambda a: torch.nn.functional.avg_pool3d(a, **kw),
           x, np.float64)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("osz", [(3, 4), 1, (5, 7), (None, 3), (13, 4)])
def test_adaptive_pool2d_matches_torch(osz, dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 10)).astype(dt)
    _check(lambda a: F.adaptive_avg_pool2d(a, osz),
           lambda a: torch.nn.functional.adaptive_avg_pool2d(a, osz), x, dt)
    _check(lambda a: F.adaptive_max_pool2d(a, osz, True),
           lambda a: torch.nn.functional.adaptive_max_pool2d(a, osz, True), x, dt, True)


@needs_torch
def test_adaptive_pool1d_3d_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11))
    for o in (1, 4, 11, 15):
        _check(lambda a: F.adaptive_avg_pool1d(a, o),
               lambda a: torch.nn.functional.adaptive_avg_pool1d(a, o), x, np.float64)
        _check(lambda a: F.adaptive_max_pool1d(a, o, True),
               lambda a: torch.nn.functional.adaptive_max_pool1d(a, o, True), x, np.float64, True)
    x = rng.standard_normal((2, 5, 6, 7))
    _check(lambda a: F.adaptive_avg_pool3d(a, (2, 3, 4)),
           lambda a: torch.nn.functional.adaptive_avg_pool3d(a, (2, 3, 4)), x, np.float64)


@needs_torch
def test_pool_noncontiguous_and_lowprec():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
    px = to_pt(x).permute(0, 3, 1, 2)
    tx = torch.tensor(x).permute(0, 3, 1, 2)
    np.testing.assert_allclose(F.max_pool2d(px, 2).numpy(),
                               torch.nn.functional.max_pool2d(tx, 2).numpy())
    np.testing.assert_allclose(F.avg_pool2d(px, 3, 1, 1).numpy(),
                               torch.nn.functional.avg_pool2d(tx, 3, 1, 1).numpy(), rtol=1e-6)
    out = F.max_pool2d(px.to(ptcore.float16), 2)
    assert out.dtype == ptcore.float16
    np.testing.assert_array_equal(out.float().numpy(),
                                  torch.nn.functional.max_pool2d(tx.half(), 2).float().numpy())
    xi = rng.integers(-50, 50, (2, 3, 6, 6))
    out = F.max_pool2d(to_pt(xi), 2)
    assert out.dtype == ptcore.int64
    np.testing.assert_array_equal(out.numpy(),
                                  torch.nn.functional.max_pool2d(torch.tensor(xi), 2).numpy())


def _err(fn):
    with pytest.raises(Exception) as ei:
        fn()
    return type(ei.value), str(ei.value).splitlines()[0]


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F, t: F.max_pool2d(t.randn(2, 3, 6, 6), 2, stride=0),
    lambda F, t: F.max_pool2d(t.randn(2, 3, 6, 6), 2, dilation=0),
    lambda F, t: F.max_pool2d(t.randn(2, 3, 6, 6), 2, padding=2),
    lambda F, t: F.max_pool2d(t.randn(2, 3, 1, 1), 3),
    lambda F, t: F.avg_pool2d(t.randn(2, 3, 6, 6), 2, padding=2),
    lambda F, t: F.avg_pool2d(t.randn(2, 3, 1, 1), 3),
    lambda F, t: F.avg_pool1d(t.randn(6), 2),
    lambda F, t: F.max_pool1d(t.randn(6), 2),
    lambda F, t: F.max_pool1d(t.randn(1, 2, 3, 6), 2),
    lambda F, t: F.adaptive_avg_pool2d(t.randn(6), 2),
    lambda F, t: F.adaptive_max_pool2d(t.randn(6), 2),
    lambda F, t: F.avg_pool2d(t.randn(2, 3, 6, 6), 2, divisor_override=0),
    lambda F, t: F.max_pool2d(t.randn(2, 3, 6, 6), (2, 2, 2)),
    lambda F, t: F.adaptive_avg_pool2d(t.randn(2, 3, 6, 6), (2, 2, 2)),
    lambda F, t: F.max_pool2d(t.randn(2, 0, 6, 6), 2),
])
def test_pool_errors_match_torch(call):
    assert _err(lambda: call(F, ptcore)) == _err(lambda: call(torch.nn.functional, torch))


@needs_torch
def test_pool_empty_batch():
    out = F.max_pool2d(ptcore.randn(0, 3, 6, 6), 2)
    assert out.shape == (0, 3, 3, 3)
    out = F.adaptive_avg_pool2d(ptcore.randn(2, 3, 6, 6), (0, 2))
    assert out.shape == (2, 3, 0, 2)


@needs_torch
@pytest.mark.parametrize("cls,args,kw", [
    ("MaxPool1d", (3,), dict(stride=2, padding=1, return_indices=True)),
    ("MaxPool2d", (2,), dict()),
    ("MaxPool2d", ((3, 2),), dict(stride=1, dilation=(1, 2), ceil_mode=True)),
    ("MaxPool3d", (2,), dict(stride=1)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, divisor_override=4)),
    ("AvgPool3d", (2,), dict(ceil_mode=True)),
    ("AdaptiveAvgPool1d", (4,), dict()),
    ("AdaptiveAvgPool2d", ((3, None),), dict()),
    ("AdaptiveAvgPool3d", (2,), dict()),
    ("AdaptiveMaxPool1d", (4,), dict()),
    ("AdaptiveMaxPool2d", (3,), dict(return_indices=True)),
    ("AdaptiveMaxPool3d", ((2, 3, 1),), dict()),
    ("LPPool1d", (2, 3), dict(stride=2)),
    ("LPPool2d", (3, 2), dict()),
    ("LPPool3d", (2, 2), dict(stride=(1, 2, 2))),
])
def test_pool_modules_match_torch(cls, args, kw):
    tm = getattr(torch.nn, cls)(*args, **kw)
    pm = getattr(nn, cls)(*args, **kw)
    assert repr(pm) == repr(tm)
    nd = 3 if cls.endswith("3d") else (2 if cls.endswith("2d") else 1)
    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal((2, 3) + (8,) * nd))
    ref = tm(torch.tensor(x))
    out = pm(to_pt(x))
    if isinstance(ref, tuple):
        np.testing.assert_array_equal(out[1].numpy(), ref[1].numpy())
        out, ref = out[0], ref[0]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)



@needs_torch
@pytest.mark.parametrize("nd,kw,out", [
    (1, dict(kernel_size=2), None), (2, dict(kernel_size=2, stride=1), None),
    (2, dict(kernel_size=(2, 3), stride=(2, 2), padding=(0, 1)), (1, 3, 9, 8)),
    (3, dict(kernel_size=2), (9, 9, 9)), (2, dict(kernel_size=3, stride=2), (8, 8))])
def test_max_unpool_matches_torch(nd, kw, out):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3) + (8,) * nd)
    tpool = getattr(torch.nn, f"MaxPool{nd}d")(return_indices=True, **kw)
    y, i = tpool(torch.tensor(x))
    tm = getattr(torch.nn, f"MaxUnpool{nd}d")(**kw)
    pm = getattr(nn, f"MaxUnpool{nd}d")(**kw)
    assert repr(pm) == repr(tm)
    ref = tm(y, i, output_size=out)
    got = pm(to_pt(y.numpy()), to_pt(i.numpy()), output_size=out)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    # unbatched
    ref = tm(y[0], i[0], output_size=out)
    got = pm(to_pt(y[0].numpy()), to_pt(i[0].numpy()), output_size=out)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F, t: F.max_unpool2d(t.ones(1, 1, 2, 2), t.tensor([[[[0, 1], [2, 99]]]]), 2),
    lambda F, t: F.max_unpool2d(t.ones(1, 1, 2, 2), t.tensor([[[[0, 1], [2, -1]]]]), 2),
    lambda F, t: F.max_unpool2d(t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2), 2),
    lambda F, t: F.max_unpool2d(t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.int64), 2,
                                output_size=(9, 9)),
    lambda F, t: F.max_unpool2d(t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.int64), 2,
                                output_size=(9,)),
    lambda F, t: F.max_unpool2d(t.ones(2, 2), t.zeros(2, 2, dtype=t.int64), 2),
    lambda F, t: F.max_unpool1d(t.ones(1, 2, 2), t.zeros(1, 2, 3, dtype=t.int64), 2),
])
def test_max_unpool_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch.nn.functional, torch)
    with pytest.raises(Exception) as pe:
        call(F, ptcore)
    assert type(pe.value) is type(te.value)
    assert str(pe.value).splitlines()[0] == str(te.value).splitlines()[0]


@needs_torch
@pytest.mark.parametrize("nd,shape,kw", [
    (1, (2, 3, 9), dict(kernel_size=3)),
    (1, (2, 3, 10), dict(kernel_size=3, stride=2, ceil_mode=True)),
    (2, (2, 3, 7, 8), dict(kernel_size=(2, 3))),
    (2, (1, 2, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),
    (3, (1, 2, 4, 5, 6), dict(kernel_size=2)),
])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_lp_pool_matches_torch(nd, shape, kw, p):
    a = np.random.default_rng(11).random(shape) + 0.1
    name = f"lp_pool{nd}d"
    x = ptcore.from_numpy(a.copy()).requires_grad_()
    tx = torch.from_numpy(a.copy()).requires_grad_()
    y = getattr(F, name)(x, p, **kw)
    ty = getattr(torch.nn.functional, name)(tx, p, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_global_adaptive_avg_pool_is_the_mean_with_and_without_grad(nd, dt):
    # output size all ones: torch's kernel is a mean over the pooled dims; ptcore gives the
    # same bits with and without grad (and under no_grad), torch's values and graph
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + (5, 7, 37)[3 - nd:]).astype(dt)
    fn = f"adaptive_avg_pool{nd}d"
    want = getattr(torch.nn.functional, fn)(torch.from_numpy(x), 1).numpy()
    plain = getattr(F, fn)(ptcore.from_numpy(x), 1)
    xr = ptcore.from_numpy(x).requires_grad_()
    rec = getattr(F, fn)(xr, 1)
    with ptcore.no_grad():
        nog = getattr(F, fn)(xr, 1)
    np.testing.assert_array_equal(plain.numpy(), rec.detach().numpy())
    np.testing.assert_array_equal(plain.numpy(), nog.numpy())
    # (a mean of up to 1295 standard normals, near 0: float32 summation orders differ)
    np.testing.assert_allclose(plain.numpy(), want, rtol=1e-5,
                               atol=1e-6 if dt == np.float32 else 1e-13)
    tx = torch.from_numpy(x).requires_grad_()
    tg = getattr(torch.nn.functional, fn)(tx, 1).grad_fn

    def names(g):
        return [type(g).__name__] + [names(n) for n, _ in g.next_functions if n is not None] \
            if g is not None else []
    assert names(rec.grad_fn) == names(tg)
    rec.sum().backward()
    getattr(torch.nn.functional, fn)(tx, 1).sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("args, kw", [
    ((0,), {}), ((2, 0), {}), ((2, -1), {}), ((2, 1, -1), {}), ((3, 1, 2), {}),
    ((2, 1, 0, 0), {}), ((9,), {}), ((4, 1, 2, 3), {}), ((2,), dict(ceil_mode=1)),
    ((2,), dict(ceil_mode=None)), ((2.0,), {}), ((2, 1.5), {}), (("2",), {}),
    ((2, 2**62), {}), ((2, 1, 2**61), {}),
])
@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 8)])
def test_max_pool1d_plain_path_errors_as_torch(args, kw, shape):
    # the plain path (int arguments, nothing recorded) leaves every refused call to the
    # general path: torch's exception type for each
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    try:
        want = torch.nn.functional.max_pool1d(torch.from_numpy(x), *args, **kw).numpy()
    except Exception as e:              # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e)):
            F.max_pool1d(ptcore.from_numpy(x), *args, **kw)
        return
    np.testing.assert_array_equal(F.max_pool1d(ptcore.from_numpy(x), *args, **kw).numpy(), want)


@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 8)])
def test_max_pool1d_huge_kernel_raises(shape):
    # a kernel of 2**62 over 8 elements: no output (torch 2.13's CPU kernel loops for
    # minutes on it, so it is not the oracle here)
    with pytest.raises(RuntimeError):
        F.max_pool1d(ptcore.from_numpy(np.zeros(shape, np.float32)), 2**62)


@needs_torch
@pytest.mark.parametrize("shape", [(0, 3, 8), (2, 0, 8), (2, 3, 0), (0, 8), (3, 0), (8,),
                                   (1, 2, 3, 8)])
@pytest.mark.parametrize("fn, args", [("max_pool1d", (2,)), ("avg_pool1d", (2,)),
                                      ("adaptive_avg_pool1d", (1,))])
def test_pool1d_plain_paths_sizes_as_torch(shape, fn, args):
    # empty batches pool; empty non-batch dims and other ranks raise torch's type
    x = np.zeros(shape, np.float64)
    try:
        want = getattr(torch.nn.functional, fn)(torch.from_numpy(x), *args)
    except Exception as e:              # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e)):
            getattr(F, fn)(ptcore.from_numpy(x), *args)
        return
    got = getattr(F, fn)(ptcore.from_numpy(x), *args)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == ptcore.float64


def test_max_pool1d_plain_kernel_declines_what_it_does_not_serve():
    # None (the front-end's general path) for strided, non-float, other-rank inputs and
    # non-int arguments; a new contiguous result otherwise
    from ptcore._ops.kernels import _conv
    x = ptcore.randn(2, 3, 10)
    assert _conv.max_pool1d_plain(x[:, :, ::2], 2, None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x.to(ptcore.float16), 2, None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x.to(ptcore.int64), 2, None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x[0, 0], 2, None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x, (2,), None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x, True, None, 0, 1, False) is None
    assert _conv.max_pool1d_plain(x, 2, None, 2, 1, False) is None      # pad > half window
    y = _conv.max_pool1d_plain(x, 3, 2, 1, 1, True)
    assert y.is_contiguous() and tuple(y.shape) == (2, 3, 6)
    np.testing.assert_array_equal(y.numpy(), F.max_pool1d(x, 3, 2, 1, 1, True,
                                                          return_indices=True)[0].numpy())


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True,
                                     count_include_pad=False),
                                dict(kernel_size=5, stride=2, padding=2, count_include_pad=False),
                                dict(kernel_size=1, stride=4)])
@pytest.mark.parametrize("length", [1, 5, 23, 64])
def test_avg_pool1d_plain_path_matches_torch_and_the_recorded_path(kw, dt, length):
    # no grad: the row kernel; the same bits as the recorded (autograd) path, torch's values
    x = np.random.default_rng(length).standard_normal((2, 3, length)).astype(dt)
    try:
        want = torch.nn.functional.avg_pool1d(torch.from_numpy(x), **kw).numpy()
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.avg_pool1d(ptcore.from_numpy(x), **kw)
        return
    got = F.avg_pool1d(ptcore.from_numpy(x), **kw)
    assert got.is_contiguous() and got.dtype == ptcore.from_numpy(x).dtype
    np.testing.assert_allclose(got.numpy(), want, **TOL[dt])
    rec = F.avg_pool1d(ptcore.from_numpy(x).requires_grad_(), **kw)
    assert rec.grad_fn is not None
    np.testing.assert_array_equal(got.numpy(), rec.detach().numpy())
    np.testing.assert_array_equal(F.avg_pool1d(ptcore.from_numpy(x[0]), **kw).numpy(),
                                  got.numpy()[0])


@needs_torch
@pytest.mark.parametrize("args, kw", [
    ((0,), {}), ((2, 0), {}), ((2, -1), {}), ((2, 1, -1), {}), ((3, 1, 2), {}), ((9,), {}),
    ((2,), dict(ceil_mode=1)), ((2,), dict(count_include_pad=0)), ((2.0,), {}),
    ((2, 1.5), {}), ((2**31,), {}), ((2, 2**31), {}), ((2**62,), {}),
])
def test_avg_pool1d_plain_path_errors_as_torch(args, kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    try:
        want = torch.nn.functional.avg_pool1d(torch.from_numpy(x), *args, **kw).numpy()
    except Exception as e:              # noqa: BLE001 - the type is what is compared
        with pytest.raises(type(e)):
            F.avg_pool1d(ptcore.from_numpy(x), *args, **kw)
        return
    np.testing.assert_allclose(F.avg_pool1d(ptcore.from_numpy(x), *args, **kw).numpy(), want,
                               **TOL[np.float32])


@needs_torch
@pytest.mark.parametrize("fn, shape", [
    ("adaptive_avg_pool1d", (2, 0, 8)), ("adaptive_avg_pool1d", (3, 0)),
    ("adaptive_avg_pool2d", (2, 0, 4, 4)), ("adaptive_avg_pool2d", (2, 3, 0, 4)),
    ("adaptive_avg_pool2d", (3, 0, 4)), ("adaptive_avg_pool3d", (0, 2, 2, 2, 2)),
])
@pytest.mark.parametrize("grad", [False, True])
def test_global_adaptive_avg_pool_of_empty_dims_as_torch(fn, shape, grad):
    # torch's global average pool is a mean: empty dims its windowed kernel refuses pool
    # (an empty pooled dim gives NaN)
    got = getattr(F, fn)(ptcore.zeros(shape, dtype=ptcore.float64, requires_grad=grad), 1)
    want = getattr(torch.nn.functional, fn)(torch.zeros(shape, dtype=torch.float64,
                                                        requires_grad=grad), 1)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
