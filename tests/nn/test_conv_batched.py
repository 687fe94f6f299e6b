"""Convolution kernels over sample units shared by threads (ptcore._ops.kernels._conv
``_batched``), the whole-input kernel as one GEMM (``_whole``) and the
per-primitive GEMM widths: values and gradients against PyTorch (float32 and
float64, groups/stride/padding/dilation, bias, non-contiguous inputs,
conv_transpose), and bit-identical results at 1 and 2 threads."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F

torch = pytest.importorskip("torch")

TOL = {np.float32: dict(rtol=2e-4, atol=2e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def _kernels():
    from ptcore.nn.functional import _conv as mod
    return mod._kernels("cpu")


def _run(lib, fn, arrays, gy, transpose_x=False):
    ts = [None if a is None else lib.tensor(a, requires_grad=True) for a in arrays]
    x = ts[0]
    if transpose_x:        # same values through a non-contiguous view
        x = lib.tensor(np.ascontiguousarray(np.swapaxes(arrays[0], 2, 3)),
                       requires_grad=True)
        ts[0] = x
        x = x.transpose(2, 3)
    y = fn(lib, x, *ts[1:])
    y.backward(lib.tensor(gy))
    return [y.detach().numpy()] + [t.grad.numpy() for t in ts if t is not None]


def _compare(fn, arrays, out_shape, dt, transpose_x=False):
    rng = np.random.default_rng(7)
    arrays = [None if a is None else a.astype(dt) for a in arrays]
    gy = rng.standard_normal(out_shape).astype(dt)
    got = _run(ptcore, fn, arrays, gy, transpose_x)
    want = _run(torch, fn, arrays, gy, transpose_x)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, **TOL[dt])
    return got


def _conv(kw):
    return lambda lib, x, w, b=None: lib.nn.functional.conv2d(x, w, b, **kw)


def _convT(kw):
    return lambda lib, x, w, b=None: lib.nn.functional.conv_transpose2d(x, w, b, **kw)


# (N, C, H, W, OC, k, kwargs): many samples per unit, one sample per unit
# (row chunks), pointwise, groups, dilation, DCGAN/LeNet-like shapes
CONV_CASES = [
    (9, 6, 14, 14, 16, 5, {}),
    (5, 3, 32, 32, 8, 4, dict(stride=2, padding=1)),
    (7, 8, 8, 8, 12, 4, dict(stride=2, padding=1)),
    (6, 4, 6, 7, 6, 3, dict(padding=1, groups=2)),
    (5, 6, 9, 8, 6, 3, dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2), groups=3)),
    (8, 4, 5, 5, 6, 1, {}),
    (8, 4, 6, 6, 6, 1, dict(stride=2, groups=2)),
    (3, 2, 40, 40, 3, 3, dict(padding=1)),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_batched_matches_torch(case, dt, bias):
    N, C, H, W, OC, k, kw = case
    rng = np.random.default_rng(0)
    g = kw.get("groups", 1)
    x = rng.standard_normal((N, C, H, W))
    w = rng.standard_normal((OC, C // g, k, k)) * 0.3
    b = rng.standard_normal(OC) if bias else None
    y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, **kw)
    _compare(_conv(kw), [x, w, b], tuple(y.shape), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_conv2d_batched_non_contiguous_input(dt):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4, 10, 9))
    w = rng.standard_normal((5, 4, 3, 3)) * 0.3
    kw = dict(stride=2, padding=1)
    _compare(_conv(kw), [x, w, None], (6, 5, 5, 5), dt, transpose_x=True)


# (N, C_in, H, OC, k, kwargs) of conv_transpose2d
CONVT_CASES = [
    (6, 16, 4, 8, 4, dict(stride=2, padding=1)),
    (5, 8, 8, 3, 4, dict(stride=2, padding=1)),
    (4, 6, 5, 4, 3, dict(stride=2, padding=1, output_padding=1, groups=2)),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONVT_CASES, ids=str)
def test_conv_transpose2d_batched_matches_torch(case, dt):
    N, C, H, OC, k, kw = case
    rng = np.random.default_rng(2)
    g = kw.get("groups", 1)
    x = rng.standard_normal((N, C, H, H))
    w = rng.standard_normal((C, OC // g, k, k)) * 0.3
    b = rng.standard_normal(OC)
    y = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), None, **kw)
    _compare(_convT(kw), [x, w, b], tuple(y.shape), dt)


# the kernel covers the whole input: one GEMM (a DCGAN discriminator's last
# layer; the backward of a generator's first layer)
WHOLE_CASES = [
    (6, 16, 4, 4, 1, dict()),
    (5, 8, 4, 4, 3, dict(stride=3)),
    (4, 6, 3, 5, 4, dict(groups=2)),
    (3, 4, 1, 1, 5, dict()),
    (4, 3, 5, 1, 2, dict(dilation=(1, 3))),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", WHOLE_CASES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_whole_input_kernel_matches_torch(case, dt, bias):
    N, C, H, W, OC, kw = case
    rng = np.random.default_rng(3)
    g = kw.get("groups", 1)
    x = rng.standard_normal((N, C, H, W))
    w = rng.standard_normal((OC, C // g, H, W)) * 0.3
    b = rng.standard_normal(OC) if bias else None
    _compare(_conv(kw), [x, w, b], (N, OC, 1, 1), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_conv_transpose_of_point_backward_matches_torch(dt):
    # conv_transpose2d of a 1x1 input: its gradients run the whole-input kernel
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 10, 1, 1))
    w = rng.standard_normal((10, 6, 4, 4)) * 0.3
    b = rng.standard_normal(6)
    _compare(_convT({}), [x, w, b], (5, 6, 4, 4), dt)


def _all_outputs(fn, arrays, gy):
    ts = [ptcore.tensor(a, requires_grad=True) for a in arrays]
    y = fn(ptcore, *ts)
    y.backward(ptcore.tensor(gy))
    return [y.detach().numpy()] + [t.grad.numpy() for t in ts]


THREAD_CASES = [
    ("conv", (16, 8, 16, 16), (12, 8, 4, 4), dict(stride=2, padding=1)),    # units of samples
    ("conv", (9, 3, 30, 30), (5, 3, 5, 5), dict(padding=2)),                 # row-chunked units
    ("conv", (10, 6, 14, 14), (16, 6, 5, 5), {}),
    ("conv", (12, 4, 6, 6), (6, 2, 1, 1), dict(groups=2)),                    # pointwise
    ("conv", (33, 64, 4, 4), (3, 64, 4, 4), {}),                              # whole input
    ("convT", (16, 16, 4, 4), (16, 8, 4, 4), dict(stride=2, padding=1)),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", THREAD_CASES, ids=str)
def test_conv_results_independent_of_thread_count(case, dt):
    kind, xs, ws, kw = case
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xs).astype(dt)
    w = (rng.standard_normal(ws) * 0.3).astype(dt)
    fn = _conv(kw) if kind == "conv" else _convT(kw)
    yshape = tuple(fn(torch, torch.tensor(x), torch.tensor(w)).shape)
    gy = rng.standard_normal(yshape).astype(dt)
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = _all_outputs(fn, [x, w], gy)
        ptcore.set_num_threads(2)
        two = _all_outputs(fn, [x, w], gy)
        ptcore.set_num_threads(3)
        three = _all_outputs(fn, [x, w], gy)
    finally:
        ptcore.set_num_threads(old)
    for a, b, c in zip(one, two, three):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("cols", [1, 64, 100000])
def test_conv_per_primitive_gemm_width(mode, cols):
    K = _kernels()
    old = K._set_gemm_cols(cols, mode)
    try:
        rng = np.random.default_rng(6)
        x = rng.standard_normal((7, 4, 8, 8))
        w = rng.standard_normal((6, 2, 3, 3)) * 0.3
        b = rng.standard_normal(6)
        _compare(_conv(dict(padding=1, groups=2)), [x, w, b], (7, 6, 8, 8), np.float64)
    finally:
        K._set_gemm_cols(old, mode)


def test_conv_gemm_width_knob_validates():
    K = _kernels()
    with pytest.raises(ValueError):
        K._set_gemm_cols(0)
    with pytest.raises(ValueError):
        K._set_gemm_cols(64, 3)


# input gradients whose column matrix spans several channel blocks of the
# blocked path (C*k*k*m*L above its 65536-float block): DCGAN's 64 -> 128 and
# 128 -> 256 stride-2 layers at small batch, a transposed convolution (its
# forward is that input gradient) and odd channel counts
BLOCK_CASES = [
    ("conv", (6, 64, 16, 16), (32, 64, 4, 4), dict(stride=2, padding=1)),
    ("conv", (20, 40, 8, 8), (24, 40, 4, 4), dict(stride=2, padding=1)),
    ("conv", (3, 37, 9, 9), (5, 37, 3, 3), dict(padding=1)),
    ("convT", (6, 32, 8, 8), (32, 64, 4, 4), dict(stride=2, padding=1)),
]


@pytest.mark.parametrize("case", BLOCK_CASES, ids=str)
def test_input_gradient_channel_blocks_match_one_sample(case):
    """The input gradient of a unit of samples goes through the GEMM and
    col2im in blocks of input channels: the values of one sample at a time
    (GEMM width 1: the row-chunk path) to float32 rounding, and values as torch's."""
    kind, xs, ws, kw = case
    rng = np.random.default_rng(8)
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * 0.3).astype(np.float32)
    b = rng.standard_normal(ws[1] if kind == "convT" else ws[0]).astype(np.float32)
    fn = _conv(kw) if kind == "conv" else _convT(kw)
    yshape = tuple(fn(torch, torch.tensor(x), torch.tensor(w)).shape)
    got = _compare(fn, [x, w, b], yshape, np.float32)
    K = _kernels()
    gy = np.random.default_rng(7).standard_normal(yshape).astype(np.float32)
    old = K._set_gemm_cols(1, 1)
    try:
        one = _run(ptcore, fn, [x, w, b], gy)
    finally:
        K._set_gemm_cols(old, 1)
    i = 1 if kind == "conv" else 0      # the input gradient primitive's result
    # same values to float32 rounding, not the same bits: a BLAS may run a GEMM of width 1 as a
    # GEMV with another summation order (OpenBLAS >= 0.3.27 does on AVX-512 machines)
    np.testing.assert_allclose(got[i], one[i], rtol=1e-5, atol=1e-5)
