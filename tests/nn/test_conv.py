"""Convolutions (functional and modules) against PyTorch: values, gradients, errors."""
import itertools
import warnings

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

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-11)}


def _close(a, b, dt):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **TOL[dt])


def _check(pt_fn, th_fn, arrays, dt, grad=True):
    rng = np.random.default_rng(1)
    targs = [torch.tensor(a, requires_grad=grad) if a is not None else None for a in arrays]
    ty = th_fn(*targs)
    pins = [to_pt(a) for a in arrays if a is not None]
    if not grad:
        y = pt_fn(*pins)
        _close(y.numpy(), ty.detach().numpy(), dt)
        return
    gy = rng.standard_normal(tuple(ty.shape)).astype(dt)
    tgrads = torch.autograd.grad(ty, [t for t in targs if t is not None], torch.tensor(gy))
    y, pg = grads(pt_fn, pins, to_pt(gy))
    _close(y.numpy(), ty.detach().numpy(), dt)
    for a, b in zip(pg, tgrads):
        _close(a.numpy(), b.numpy(), dt)


CONV2D_CASES = [
    # (N, Cin, Cout, H, W, kernel, stride, padding, dilation, groups)
    (2, 3, 4, 7, 8, 3, 1, 0, 1, 1),
    (2, 4, 6, 9, 8, 3, 1, 1, 1, 2),
    (1, 4, 4, 9, 10, (3, 2), (2, 1), (1, 0), (2, 1), 4),
    (2, 6, 3, 11, 7, (2, 3), 3, (1, 1), (1, 2), 3),
    (3, 2, 5, 5, 5, 1, 1, 0, 1, 1),
    (2, 2, 4, 6, 6, 1, 2, 0, 1, 2),
    (1, 3, 2, 8, 9, 3, 1, "same", 2, 1),
    (2, 3, 2, 8, 9, (4, 3), 1, "same", 1, 1),
    (2, 3, 2, 8, 9, 3, 2, "valid", 1, 1),
]


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV2D_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(case, dt, bias):
    N, Ci, Co, H, W, k, s, p, d, g = case
    rng = np.random.default_rng(0)
    kk = k if isinstance(k, tuple) else (k, k)
    x = rng.standard_normal((N, Ci, H, W)).astype(dt)
    w = rng.standard_normal((Co, Ci // g) + kk).astype(dt)
    b = rng.standard_normal(Co).astype(dt) if bias else None
    _check(lambda *a: F.conv2d(a[0], a[1], a[2] if bias else None, s, p, d, g),
           lambda *a: torch.nn.functional.conv2d(a[0], a[1], a[2], s, p, d, g),
           [x, w, b], dt)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    (2, 3, 4, 10, 3, 1, 0, 1, 1), (2, 4, 6, 11, 3, 2, 1, 2, 2), (1, 2, 2, 9, 4, 3, 2, 1, 1),
    (2, 3, 3, 8, 3, 1, "same", 3, 3),
])
def test_conv1d_matches_torch(case, dt):
    N, Ci, Co, L, k, s, p, d, g = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, Ci, L)).astype(dt)
    w = rng.standard_normal((Co, Ci // g, k)).astype(dt)
    b = rng.standard_normal(Co).astype(dt)
    _check(lambda *a: F.conv1d(*a, s, p, d, g),
           lambda *a: torch.nn.functional.conv1d(*a, s, p, d, g), [x, w, b], dt)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    (2, 2, 3, (5, 6, 4), 3, 1, 1, 1, 1), (1, 4, 2, (6, 5, 7), (2, 3, 2), (2, 1, 2), (1, 0, 1),
                                          (1, 2, 1), 2),
])
def test_conv3d_matches_torch(case, dt):
    N, Ci, Co, sp, k, s, p, d, g = case
    rng = np.random.default_rng(0)
    kk = k if isinstance(k, tuple) else (k, k, k)
    x = rng.standard_normal((N, Ci) + sp).astype(dt)
    w = rng.standard_normal((Co, Ci // g) + kk).astype(dt)
    b = rng.standard_normal(Co).astype(dt)
    _check(lambda *a: F.conv3d(*a, s, p, d, g),
           lambda *a: torch.nn.functional.conv3d(*a, s, p, d, g), [x, w, b], dt)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    # (N, Cin, Cout, H, W, kernel, stride, padding, output_padding, groups, dilation)
    (2, 3, 4, 5, 6, 3, 1, 0, 0, 1, 1),
    (2, 4, 6, 5, 4, 3, 2, 1, 1, 2, 1),
    (1, 4, 2, 4, 5, (3, 2), (2, 3), (1, 0), (0, 2), 2, (1, 2)),
    (2, 2, 3, 3, 3, 2, 1, 0, 1, 1, 2),
])
def test_conv_transpose2d_matches_torch(case, dt):
    N, Ci, Co, H, W, k, s, p, op, g, d = case
    rng = np.random.default_rng(0)
    kk = k if isinstance(k, tuple) else (k, k)
    x = rng.standard_normal((N, Ci, H, W)).astype(dt)
    w = rng.standard_normal((Ci, Co // g) + kk).astype(dt)
    b = rng.standard_normal(Co).astype(dt)
    _check(lambda *a: F.conv_transpose2d(*a, s, p, op, g, d),
           lambda *a: torch.nn.functional.conv_transpose2d(*a, s, p, op, g, d), [x, w, b], dt)


@needs_torch
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_conv_transpose1d_3d_match_torch(dt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7)).astype(dt)
    w = rng.standard_normal((4, 3, 3)).astype(dt)
    b = rng.standard_normal(6).astype(dt)
    _check(lambda *a: F.conv_transpose1d(*a, 2, 1, 1, 2, 1),
           lambda *a: torch.nn.functional.conv_transpose1d(*a, 2, 1, 1, 2, 1), [x, w, b], dt)
    x = rng.standard_normal((1, 2, 3, 4, 3)).astype(dt)
    w = rng.standard_normal((2, 3, 2, 3, 2)).astype(dt)
    b = rng.standard_normal(3).astype(dt)
    _check(lambda *a: F.conv_transpose3d(*a, (1, 2, 2), (0, 1, 0)),
           lambda *a: torch.nn.functional.conv_transpose3d(*a, (1, 2, 2), (0, 1, 0)),
           [x, w, b], dt)


@needs_torch
def test_conv_unbatched_and_noncontiguous():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 9, 8))
    w = rng.standard_normal((5, 3, 3, 3))
    b = rng.standard_normal(5)
    _check(lambda *a: F.conv2d(*a, padding=1), lambda *a: torch.nn.functional.conv2d(
        *a, padding=1), [x, w, b], np.float64)
    xt = rng.standard_normal((2, 8, 3, 9))
    ref = torch.nn.functional.conv2d(torch.tensor(xt).permute(0, 2, 3, 1), torch.tensor(w))
    xp = to_pt(xt).permute(0, 2, 3, 1)
    assert not xp.is_contiguous()
    out = F.conv2d(xp, to_pt(w))
    _close(out.numpy(), ref.numpy(), np.float64)
    wt = torch.tensor(w).transpose(2, 3)
    ref = torch.nn.functional.conv2d(torch.tensor(xt).permute(0, 2, 3, 1), wt, stride=2)
    out = F.conv2d(to_pt(xt).permute(0, 2, 3, 1), to_pt(w).transpose(2, 3), stride=2)
    _close(out.numpy(), ref.numpy(), np.float64)


@needs_torch
def test_conv_low_precision_dtypes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    for pdt, tdt in [(ptcore.float16, torch.float16), (ptcore.bfloat16, torch.bfloat16)]:
        out = F.conv2d(to_pt(x).to(pdt), to_pt(w).to(pdt), padding=1)
        ref = torch.nn.functional.conv2d(torch.tensor(x).to(tdt), torch.tensor(w).to(tdt),
                                         padding=1)
        assert out.dtype == pdt
        np.testing.assert_allclose(out.float().numpy(), ref.float().numpy(), rtol=0.05,
                                   atol=0.1)


@needs_torch
@pytest.mark.parametrize("kw", [
    dict(ks=2), dict(ks=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
    dict(ks=3, stride=2, padding=(0, 2)),
])
def test_unfold_fold_match_torch(kw):
    kw = dict(kw)
    ks = kw.pop("ks")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 8))
    _check(lambda a: F.unfold(a, ks, **kw), lambda a: torch.nn.functional.unfold(a, ks, **kw),
           [x], np.float64)
    cols = torch.nn.functional.unfold(torch.tensor(x), ks, **kw)
    c = cols.detach().numpy()
    _check(lambda a: F.fold(a, (7, 8), ks, **kw),
           lambda a: torch.nn.functional.fold(a, (7, 8), ks, **kw), [c], np.float64)
    _check(lambda a: F.unfold(a, ks, **kw), lambda a: torch.nn.functional.unfold(a, ks, **kw),
           [x[0]], np.float64)


def _errmsg(fn):
    with pytest.raises(Exception) as ei:
        fn()
    return type(ei.value), str(ei.value)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F, t: F.conv2d(t.randn(2, 2), t.randn(6, 2, 3, 3)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 2, 3, 3)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 2, 3, 3), groups=3),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), stride=2, padding="same"),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), padding="foo"),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 9, 9)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), padding=-1),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), stride=0),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), dilation=0),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), groups=0),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), t.randn(3)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3, dtype=t.float64)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), t.randn(6, dtype=t.float64)),
    lambda F, t: F.conv2d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3, 3), stride=(1, 2, 3)),
    lambda F, t: F.conv1d(t.randn(2, 4, 8, 8), t.randn(6, 4, 3)),
    lambda F, t: F.conv_transpose2d(t.randn(2, 4, 8, 8), t.randn(4, 3, 3, 3), output_padding=2),
    lambda F, t: F.conv_transpose2d(t.randn(2, 4, 8, 8), t.randn(3, 3, 3, 3)),
    lambda F, t: F.conv_transpose2d(t.randn(2, 4, 8, 8), t.randn(4, 3, 3, 3), groups=3),
    lambda F, t: F.conv_transpose2d(t.randn(2, 2), t.randn(4, 3, 3, 3)),
])
def test_conv_errors_match_torch(call):
    tcls, tmsg = _errmsg(lambda: call(torch.nn.functional, torch))
    pcls, pmsg = _errmsg(lambda: call(F, ptcore))
    assert pcls is tcls
    assert pmsg.splitlines()[0] == tmsg.splitlines()[0]


def test_conv_bool_input_raises():
    # (integer inputs convolve as torch's: tests/nn/test_conv_integer.py)
    with pytest.raises(NotImplementedError):
        F.conv2d(ptcore.ones(1, 1, 3, 3, dtype=ptcore.bool),
                 ptcore.ones(1, 1, 2, 2, dtype=ptcore.bool))


def _copy_params(pm, tm):
    for name, p in tm.named_parameters():
        getattr(pm, name).data.copy_(to_pt(p.detach().numpy()))


@needs_torch
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_module_padding_modes(mode, padding):
    rng = np.random.default_rng(0)
    tm = torch.nn.Conv2d(3, 4, 3, padding=padding, padding_mode=mode).double()
    pm = nn.Conv2d(3, 4, 3, padding=padding, padding_mode=mode, dtype=ptcore.float64)
    _copy_params(pm, tm)
    assert repr(pm) == repr(tm)
    # the F.pad amounts a subclass's _conv_forward reads: a tuple, or a list for "same"
    assert pm._reversed_padding_repeated_twice == tm._reversed_padding_repeated_twice
    assert type(pm._reversed_padding_repeated_twice) is type(tm._reversed_padding_repeated_twice)
    x = rng.standard_normal((2, 3, 6, 7))
    gy_shape = tuple(tm(torch.tensor(x)).shape)
    gy = rng.standard_normal(gy_shape)
    tx = torch.tensor(x, requires_grad=True)
    ty = tm(tx)
    tgx, tgw, tgb = torch.autograd.grad(ty, (tx, tm.weight, tm.bias), torch.tensor(gy))
    y, (gx, gw, gb) = grads(lambda a, w, b: pm(a), [to_pt(x), pm.weight, pm.bias], to_pt(gy))
    _close(y.numpy(), ty.detach().numpy(), np.float64)
    _close(gx.numpy(), tgx.numpy(), np.float64)
    _close(gw.numpy(), tgw.numpy(), np.float64)
    _close(gb.numpy(), tgb.numpy(), np.float64)


@needs_torch
@pytest.mark.parametrize("cls,args,kw", [
    ("Conv1d", (4, 6, 3), dict(stride=2, groups=2, bias=False)),
    ("Conv2d", (3, 8, (3, 5)), dict(padding=(1, 2), dilation=2)),
    ("Conv3d", (2, 4, 2), dict(padding="valid")),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2, output_padding=1)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, groups=2)),
    ("ConvTranspose3d", (2, 2, 2), dict()),
])
def test_conv_modules_match_torch(cls, args, kw):
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw)
    pm = getattr(nn, cls)(*args, **kw)
    assert repr(pm) == repr(tm)
    assert pm.weight.shape == tuple(tm.weight.shape)
    assert (pm.bias is None) == (tm.bias is None)
    # torch's init bounds: kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    fan_in = tm.weight.shape[1] * int(np.prod(tm.weight.shape[2:]))
    assert float(pm.weight.abs().max()) <= 1 / np.sqrt(fan_in) + 1e-6
    _copy_params(pm, tm)
    nd = len(tm.weight.shape) - 2
    cin = args[0]
    x = rng.standard_normal((2, cin) + (7,) * nd).astype(np.float32)
    _close(pm(to_pt(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), np.float32)


@needs_torch
def test_conv_transpose_output_size():
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    pm = nn.ConvTranspose2d(2, 3, 3, stride=2)
    _copy_params(pm, tm)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype(np.float32)
    ref = tm(torch.tensor(x), output_size=[10, 12])
    out = pm(to_pt(x), output_size=[10, 12])
    assert out.shape == tuple(ref.shape)
    _close(out.detach().numpy(), ref.detach().numpy(), np.float32)
    with pytest.raises(ValueError):
        pm(to_pt(x), output_size=[20, 12])


def test_conv_module_argument_errors():
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        nn.Conv2d(4, 4, 3, padding="same", stride=2)
    with pytest.raises(ValueError):
        nn.Conv2d(4, 4, 3, padding_mode="bogus")
    with pytest.raises(ValueError):
        nn.ConvTranspose2d(4, 4, 3, padding_mode="reflect")


@needs_torch
@pytest.mark.parametrize("cols", [1, 100, 2048])
@pytest.mark.parametrize("k", [1, 3])
def test_conv_sample_chunking(cols, k):
    """Samples batched into one GEMM (full, partial and single-sample chunks)."""
    from ptcore.nn.functional import _conv as mod
    K = mod._kernels("cpu")
    old = K._set_gemm_cols(cols)
    try:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((5, 4, 6, 7))
        w = rng.standard_normal((6, 2, k, k))
        b = rng.standard_normal(6)
        _check(lambda *a: F.conv2d(*a, groups=2),
               lambda *a: torch.nn.functional.conv2d(*a, groups=2), [x, w, b], np.float64)
        wt = rng.standard_normal((4, 3, k, k))
        bt = rng.standard_normal(3)
        _check(lambda *a: F.conv_transpose2d(*a, 1, 0, 1, 1, 2),
               lambda *a: torch.nn.functional.conv_transpose2d(*a, 1, 0, 1, 1, 2),
               [x, wt, bt], np.float64)
    finally:
        K._set_gemm_cols(old)


# Wide-channel stride-1 convolutions run the shifted-GEMM kernels (one GEMM per
# kernel offset over a zero-padded sample, no column matrix); with the shift off
# they run im2col in output-row chunks.  Both are compared with torch, forward
# and all gradients, also with a column budget small enough to force many chunks.
SHIFT_CASES = [
    # (conv, x shape, w shape, kwargs)
    ("conv2d", (2, 32, 9, 11), (40, 32, 3, 3), dict(padding=1)),
    ("conv2d", (2, 64, 7, 8), (16, 32, 3, 2), dict(padding=(2, 1), dilation=(2, 1), groups=2)),
    ("conv2d", (1, 32, 10, 10), (8, 32, 4, 4), dict(padding="same")),
    ("conv2d", (3, 32, 6, 7), (5, 32, 2, 2), dict()),
    ("conv1d", (2, 32, 17), (7, 32, 3), dict(padding=2)),
    ("conv3d", (1, 32, 4, 5, 6), (3, 32, 3, 3, 3), dict(padding=1)),
    ("conv3d", (1, 32, 4, 5, 6), (3, 32, 2, 3, 1), dict(padding=(1, 0, 0), dilation=(1, 2, 1))),
]


@needs_torch
@pytest.mark.parametrize("shift,budget", [(True, 1 << 18), (False, 1 << 18), (False, 700)])
@pytest.mark.parametrize("case", SHIFT_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[2]}")
def test_conv_wide_channel_paths(case, shift, budget):
    from ptcore.nn.functional import _conv as mod
    K = mod._kernels("cpu")
    name, xs, ws, kw = case
    rng = np.random.default_rng(3)
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws) * 0.2
    b = rng.standard_normal(ws[0])
    old_shift = K._set_shift(shift)
    old_budget = K._set_col_budget(budget)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # torch: 'same' with an even kernel
            _check(lambda *a: getattr(F, name)(*a, **kw),
                   lambda *a: getattr(torch.nn.functional, name)(*a, **kw), [x, w, b], np.float64)
            _check(lambda *a: getattr(F, name)(*a, **kw),
                   lambda *a: getattr(torch.nn.functional, name)(*a, **kw),
                   [x.astype(np.float32), w.astype(np.float32), b.astype(np.float32)], np.float32)
    finally:
        K._set_shift(old_shift)
        K._set_col_budget(old_budget)


@needs_torch
@pytest.mark.parametrize("shift", [True, False])
def test_conv_transpose_wide_channel(shift):
    from ptcore.nn.functional import _conv as mod
    K = mod._kernels("cpu")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 48, 7, 9))
    w = rng.standard_normal((48, 40, 3, 3)) * 0.2
    b = rng.standard_normal(40)
    old_shift = K._set_shift(shift)
    try:
        _check(lambda *a: F.conv_transpose2d(*a, padding=1),
               lambda *a: torch.nn.functional.conv_transpose2d(*a, padding=1), [x, w, b], np.float64)
    finally:
        K._set_shift(old_shift)


COMPLEX_CONV_CASES = {
    "conv1d": lambda L, F, C: F.conv1d(C(2, 3, 9), C(4, 3, 3), C(4), padding=1, stride=2),
    "conv1d_same_dilated": lambda L, F, C: F.conv1d(C(2, 3, 9), C(4, 3, 3), padding="same",
                                                    dilation=2),
    "conv1d_unbatched": lambda L, F, C: F.conv1d(C(3, 9), C(4, 3, 3), C(4)),
    "conv1d_groups": lambda L, F, C: F.conv1d(C(1, 4, 7), C(4, 2, 3), groups=2),
    "conv2d": lambda L, F, C: F.conv2d(C(1, 2, 6, 5), C(3, 2, 3, 2), C(3), padding=(1, 0)),
    "conv3d": lambda L, F, C: F.conv3d(C(1, 1, 4, 4, 4), C(2, 1, 2, 2, 2)),
    "conv_transpose1d": lambda L, F, C: F.conv_transpose1d(C(2, 3, 9), C(3, 2, 3), C(2),
                                                           stride=2, output_padding=1),
    "conv_transpose2d": lambda L, F, C: F.conv_transpose2d(C(1, 2, 6, 5), C(2, 3, 2, 2), stride=2),
}


@pytest.mark.parametrize("key", sorted(COMPLEX_CONV_CASES))
def test_complex_convolution_matches_torch(key):
    """Complex convolutions (torch: three real ones, Gauss's trick), values
    and gradients of every complex operand."""
    torch = pytest.importorskip("torch")

    def run(L):
        rs = np.random.RandomState(0)
        leaves = []

        def C(*shape):
            t = L.tensor(rs.randn(*shape) + 1j * rs.randn(*shape), dtype=L.complex128,
                         requires_grad=True)
            leaves.append(t)
            return t
        out = COMPLEX_CONV_CASES[key](L, L.nn.functional, C)
        grads = L.autograd.grad(out.abs().pow(2).sum(), leaves)
        return [out.detach().numpy()] + [g.numpy() for g in grads]
    for a, b in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
