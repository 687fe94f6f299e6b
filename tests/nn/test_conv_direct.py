"""The direct float32 convolution forward (ptcore/_ops/kernels/include/ptc_conv_direct.h:
output channels as vector lanes, input pixels broadcast): values against
float64 and PyTorch over 1, 2 and 4 vectors of channels (few-channel
kernels) and over blocks of channel vectors with tiles of one or two output
rows (many-channel kernels), padding, stride, dilation, bias; both ISA
builds; the thread count; and the column-matrix path they replace."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _conv
from ptcore._ops import linalg as _linalg_ops

F = ptcore.nn.functional

# (N, C, H, W), (OC, C, kh, kw), stride, padding, dilation
CASES = [
    ((64, 6, 14, 14), (16, 6, 5, 5), 1, 0, 1),      # LeNet conv2
    ((9, 1, 28, 28), (6, 1, 5, 5), 1, 2, 1),         # LeNet conv1
    ((7, 3, 32, 32), (64, 3, 4, 4), 2, 1, 1),        # DCGAN D1
    ((3, 5, 9, 11), (20, 5, 3, 2), (2, 1), (1, 0), 1),
    ((2, 4, 13, 17), (33, 4, 3, 3), 1, 2, (2, 3)),   # 3 vectors of channels -> 4
    ((4, 2, 6, 30), (1, 2, 2, 7), (1, 3), 0, 1),     # one channel, wide rows
    ((2, 3, 8, 9), (2, 3, 4, 3), 1, "same", 1),      # uneven padding: windows past H + 2 ph
    ((2, 3, 7, 10), (5, 3, 2, 4), 1, "same", (3, 1)),
    # many output channels: blocks of channel vectors, tiles of 1-2 rows
    ((3, 64, 16, 16), (128, 64, 4, 4), 2, 1, 1),     # DCGAN D2
    ((2, 128, 8, 8), (256, 128, 4, 4), 2, 1, 1),     # DCGAN D3: 2-row tiles
    ((2, 16, 12, 13), (100, 16, 3, 3), 1, 1, 1),     # uneven blocks, a partial tile per row
    ((2, 32, 7, 4), (64, 32, 3, 3), 1, 1, 1),        # odd rows under 2-row tiles
    ((2, 8, 20, 21), (48, 8, 5, 5), 3, 2, 2),        # stride 3: three phases per row
    ((2, 12, 11, 15), (40, 12, 3, 4), (2, 1), (1, 0), (1, 2)),
    ((2, 24, 9, 9), (36, 24, 2, 2), 1, "same", 1),   # windows past H + 2 ph
]


def _inputs(xs, ws):
    rng = np.random.default_rng(sum(xs) * 3 + sum(ws))
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    return x, w, b


def _conv2d(x, w, b, stride, padding, dilation):
    return F.conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w),
                    None if b is None else ptcore.from_numpy(b),
                    stride=stride, padding=padding, dilation=dilation).numpy()


@pytest.fixture(params=[1, 2], ids=["avx2", "avx512"])
def isa(request):
    """Both ISA builds of the kernels (skipped where the CPU lacks one)."""
    if _linalg_ops._set_sgemm_isa(request.param) != request.param:
        _linalg_ops._set_sgemm_isa(-1)
        pytest.skip("the CPU lacks this ISA")
    yield request.param
    _linalg_ops._set_sgemm_isa(-1)


def _at_one_and_two_threads(fn, *args):
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = fn(*args)
        ptcore.set_num_threads(2)
        two = fn(*args)
    finally:
        ptcore.set_num_threads(old)
    return one, two


@pytest.mark.parametrize("case", CASES, ids=[str(c[1]) for c in CASES])
def test_against_float64(case, isa):
    xs, ws, stride, padding, dilation = case
    x, w, b = _inputs(xs, ws)
    for bias in (b, None):
        got = _conv2d(x, w, bias, stride, padding, dilation)
        want = _conv2d(x.astype(np.float64), w.astype(np.float64),
                       None if bias is None else bias.astype(np.float64),
                       stride, padding, dilation)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.sqrt(np.prod(ws[1:])))


def test_against_torch():
    torch = pytest.importorskip("torch")
    for xs, ws, stride, padding, dilation in CASES:
        x, w, b = _inputs(xs, ws)
        got = _conv2d(x, w, b, stride, padding, dilation)
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                          torch.from_numpy(b), stride=stride, padding=padding,
                                          dilation=dilation).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [CASES[0], CASES[8], CASES[10]], ids=["few", "wide", "wide-uneven"])
def test_same_as_column_matrix_path(case):
    xs, ws, stride, padding, dilation = case
    x, w, b = _inputs(xs, ws)
    got = _conv2d(x, w, b, stride, padding, dilation)
    old = _conv._set_direct(False)
    try:
        want = _conv2d(x, w, b, stride, padding, dilation)
    finally:
        _conv._set_direct(old)
    assert not np.array_equal(got, np.zeros_like(got))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * np.sqrt(np.prod(ws[1:]) / 150))


@pytest.mark.parametrize("case", [CASES[0], CASES[8], (
    (1, 64, 16, 16), (128, 64, 4, 4), 2, 1, 1)], ids=["few", "wide", "wide-one-sample"])
def test_thread_count_independent(case):
    """Samples shared by the threads, or (one sample) its output rows: every
    output element is the same FMA chain whatever the split."""
    xs, ws, stride, padding, dilation = case
    x, w, b = _inputs(xs, ws)
    one, two = _at_one_and_two_threads(_conv2d, x, w, b, stride, padding, dilation)
    assert np.array_equal(one, two)


def test_gradients_unchanged():
    """The backward still runs the column-matrix kernels: gradients through
    a direct forward agree with float64."""
    xs, ws, stride, padding, dilation = CASES[0]
    x, w, b = _inputs(xs, ws)
    px = ptcore.from_numpy(x).requires_grad_()
    pw = ptcore.from_numpy(w).requires_grad_()
    y = F.conv2d(px, pw, stride=stride, padding=padding, dilation=dilation)
    gx, gw = ptcore.autograd.grad(y.sum(), [px, pw])
    px64 = ptcore.from_numpy(x.astype(np.float64)).requires_grad_()
    pw64 = ptcore.from_numpy(w.astype(np.float64)).requires_grad_()
    y64 = F.conv2d(px64, pw64, stride=stride, padding=padding, dilation=dilation)
    gx64, gw64 = ptcore.autograd.grad(y64.sum(), [px64, pw64])
    np.testing.assert_allclose(gx.numpy(), gx64.numpy(), rtol=0, atol=1e-4)
    np.testing.assert_allclose(gw.numpy(), gw64.numpy(), rtol=1e-5, atol=2e-3)


# The input gradient by phases (ptc_cdw_pack_w_phase: one stride-1 tile
# convolution of the output gradient per (row, column) stride phase), also a
# transposed convolution's forward.  (N, C, H, W), (OC, C, kh, kw), stride, padding
BWD_CASES = [
    ((4, 64, 16, 16), (128, 64, 4, 4), 2, 1),        # DCGAN D2 / G convT3
    ((2, 32, 9, 11), (48, 32, 3, 3), 1, 1),          # stride 1: one phase
    ((2, 32, 9, 11), (48, 32, 3, 3), 2, 0),          # pixels past the last window
    ((2, 40, 13, 10), (36, 40, 5, 3), (3, 2), (2, 1)),
    ((2, 48, 20, 20), (40, 48, 1, 3), 2, (0, 1)),    # phases no tap reaches: zero / bias
    ((2, 32, 12, 12), (64, 32, 2, 2), 2, 0),         # kernel = stride: one tap per phase
    ((2, 32, 17, 15), (32, 32, 4, 4), 2, 3),         # padding wider than half the kernel
    ((2, 40, 7, 7), (20, 40, 3, 3), 1, 2),
]


def _input_grad(x, w, gy, stride, padding):
    px = ptcore.from_numpy(x).requires_grad_()
    y = F.conv2d(px, ptcore.from_numpy(w), stride=stride, padding=padding)
    assert tuple(y.shape) == gy.shape
    (gx,) = ptcore.autograd.grad(y, px, ptcore.from_numpy(gy))
    return gx.numpy()


def _bwd_inputs(case):
    xs, ws, stride, padding = case
    x, w, b = _inputs(xs, ws)
    s = (stride, stride) if isinstance(stride, int) else stride
    p = (padding, padding) if isinstance(padding, int) else padding
    oh = [(xs[2 + i] + 2 * p[i] - ws[2 + i]) // s[i] + 1 for i in range(2)]
    gy = np.random.default_rng(7).standard_normal((xs[0], ws[0], *oh)).astype(np.float32)
    return x, w, gy


@pytest.mark.parametrize("case", BWD_CASES, ids=[str(c[1]) + str(c[2]) for c in BWD_CASES])
def test_input_gradient_against_float64(case, isa):
    xs, ws, stride, padding = case
    x, w, gy = _bwd_inputs(case)
    got = _input_grad(x, w, gy, stride, padding)
    want = _input_grad(x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64),
                       stride, padding)
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.sqrt(ws[0] * 16))
    old = _conv._set_direct(False)
    try:
        other = _input_grad(x, w, gy, stride, padding)
    finally:
        _conv._set_direct(old)
    np.testing.assert_allclose(got, other, rtol=0, atol=1e-5 * np.sqrt(ws[0] * 16))


@pytest.mark.parametrize("case", BWD_CASES, ids=[str(c[1]) + str(c[2]) for c in BWD_CASES])
def test_transposed_forward_against_torch(case):
    """conv_transpose2d (bias, output_padding) runs the same phases."""
    torch = pytest.importorskip("torch")
    xs, ws, stride, padding = case
    x, w, gy = _bwd_inputs(case)
    b = np.random.default_rng(3).standard_normal(ws[1]).astype(np.float32)
    s = (stride, stride) if isinstance(stride, int) else stride
    for op in ((0, 0), tuple(min(1, si - 1) for si in s)):
        got = F.conv_transpose2d(ptcore.from_numpy(gy), ptcore.from_numpy(w), ptcore.from_numpy(b),
                                 stride=stride, padding=padding, output_padding=op).numpy()
        want = torch.nn.functional.conv_transpose2d(
            torch.from_numpy(gy), torch.from_numpy(w), torch.from_numpy(b), stride=stride,
            padding=padding, output_padding=op).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(ws[0] * 16))


def test_input_gradient_thread_count_independent():
    case = BWD_CASES[0]
    x, w, gy = _bwd_inputs(case)
    one, two = _at_one_and_two_threads(_input_grad, x, w, gy, case[2], case[3])
    assert np.array_equal(one, two)


# The weight gradient by tiles of (channel vectors x taps) over chunks of
# samples (ptc_conv_direct_bww.h).  (N, C, H, W), (OC, C, kh, kw), stride, padding, dilation
BWW_CASES = [
    ((8, 64, 16, 16), (128, 64, 4, 4), 2, 1, 1),     # DCGAN D2 / G convT3
    ((20, 64, 16, 16), (64, 64, 4, 4), 2, 1, 1),     # three chunks of samples
    ((2, 30, 9, 9), (40, 30, 3, 3), 1, 1, 1),        # a partial group of taps
    ((2, 16, 20, 21), (48, 16, 5, 5), 3, 2, 2),      # stride 3, dilation 2
    ((2, 64, 9, 9), (36, 64, 2, 2), 1, "same", 1),   # windows past H + 2 ph
    ((3, 32, 11, 15), (100, 32, 3, 4), (2, 1), (1, 0), (1, 2)),
    ((4, 3, 32, 32), (64, 3, 4, 4), 2, 1, 1),        # DCGAN D1: 48 taps
]


def _weight_grad(x, w, gy, stride, padding, dilation):
    pw = ptcore.from_numpy(w).requires_grad_()
    y = F.conv2d(ptcore.from_numpy(x), pw, stride=stride, padding=padding, dilation=dilation)
    assert tuple(y.shape) == gy.shape
    (gw,) = ptcore.autograd.grad(y, pw, ptcore.from_numpy(gy))
    return gw.numpy()


def _bww_inputs(case):
    xs, ws, stride, padding, dilation = case
    x, w, b = _inputs(xs, ws)
    y = _conv2d(x, w, None, stride, padding, dilation)
    gy = np.random.default_rng(11).standard_normal(y.shape).astype(np.float32)
    return x, w, gy


@pytest.mark.parametrize("case", BWW_CASES, ids=[str(c[1]) + str(c[2]) for c in BWW_CASES])
def test_weight_gradient_against_float64(case, isa):
    xs, ws, stride, padding, dilation = case
    x, w, gy = _bww_inputs(case)
    n = xs[0] * gy.shape[2] * gy.shape[3]
    got = _weight_grad(x, w, gy, stride, padding, dilation)
    want = _weight_grad(x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64),
                        stride, padding, dilation)
    assert got.dtype == np.float32 and got.shape == w.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * n)
    old = _conv._set_direct(False)
    try:
        other = _weight_grad(x, w, gy, stride, padding, dilation)
    finally:
        _conv._set_direct(old)
    np.testing.assert_allclose(got, other, rtol=0, atol=2e-6 * n)


def test_weight_gradient_against_torch():
    torch = pytest.importorskip("torch")
    for case in BWW_CASES:
        xs, ws, stride, padding, dilation = case
        x, w, gy = _bww_inputs(case)
        tw = torch.from_numpy(w).requires_grad_()
        ty = torch.nn.functional.conv2d(torch.from_numpy(x), tw, stride=stride, padding=padding,
                                        dilation=dilation)
        (want,) = torch.autograd.grad(ty, tw, torch.from_numpy(gy))
        got = _weight_grad(x, w, gy, stride, padding, dilation)
        n = xs[0] * gy.shape[2] * gy.shape[3]
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=2e-6 * n)


@pytest.mark.parametrize("case", BWW_CASES, ids=[str(c[1]) + str(c[2]) for c in BWW_CASES])
def test_weight_gradient_thread_count_independent(case, isa):
    """The threads split the taps (a thread's run of tap groups may start or
    end inside an input channel's taps, and there may be more threads than
    tap groups); each gW element is one FMA chain: the same bits at any
    thread count."""
    x, w, gy = _bww_inputs(case)
    old = ptcore.get_num_threads()
    try:
        got = []
        for n in (1, 2, 3, 8):
            ptcore.set_num_threads(n)
            got.append(_weight_grad(x, w, gy, *case[2:]))
    finally:
        ptcore.set_num_threads(old)
    for other in got[1:]:
        assert np.array_equal(got[0], other)


def test_weight_gradient_of_an_empty_batch_is_zero():
    """No sample: gW is zeros (the tiles never run), as torch gives."""
    w = ptcore.randn(64, 64, 4, 4, requires_grad=True)
    y = F.conv2d(ptcore.randn(0, 64, 16, 16), w, stride=2, padding=1)
    assert tuple(y.shape) == (0, 64, 8, 8)
    (gw,) = ptcore.autograd.grad(y, w, ptcore.zeros(0, 64, 8, 8))
    assert np.array_equal(gw.numpy(), np.zeros((64, 64, 4, 4), np.float32))
