"""Convolutions (im2col/col2im kernels + the driver's GEMM) and pooling on the
emulated CUDA device against the CPU run, gradients included."""
import pytest

import ptcore
import ptcore.nn.functional as F
from nn_device_compare import check, rand


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("kw", [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=2, dilation=2, groups=2),
    dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
    dict(padding="same"),
])
def test_conv2d(kw, dtype):
    check(F.conv2d, rand((2, 4, 7, 6), dtype), rand((6, 4 // kw.get("groups", 1), 3, 2), dtype, 1),
          rand((6,), dtype, 2), grad=(0, 1, 2), **kw)


def test_conv2d_without_bias_and_unbatched():
    check(F.conv2d, rand((3, 5, 5)), rand((2, 3, 3, 3), seed=1), grad=(0, 1))
    check(F.conv2d, rand((1, 3, 5, 5)), rand((2, 3, 1, 1), seed=1), grad=(0, 1))


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, dilation=2, groups=2)])
def test_conv1d_and_conv3d(kw):
    check(F.conv1d, rand((2, 4, 9)), rand((6, 4 // kw.get("groups", 1), 3), seed=1),
          rand((6,), seed=2), grad=(0, 1, 2), **kw)
    check(F.conv3d, rand((1, 2, 4, 5, 4)), rand((4, 2 // kw.get("groups", 1), 2, 3, 2), seed=1),
          rand((4,), seed=2), grad=(0, 1, 2), **kw)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1, groups=2),
                                dict(stride=(1, 2), dilation=2)])
def test_conv_transpose2d(kw):
    check(F.conv_transpose2d, rand((2, 4, 5, 4)), rand((4, 3, 3, 3), seed=1), rand((3 * kw.get("groups", 1),), seed=2),
          grad=(0, 1, 2), **kw)


def test_conv_transpose1d_and_unfold_fold():
    check(F.conv_transpose1d, rand((2, 3, 6)), rand((3, 2, 3), seed=1), grad=(0, 1), stride=2)
    check(F.unfold, rand((2, 3, 5, 6)), (2, 3), padding=1, stride=(1, 2))
    check(F.fold, rand((2, 12, 12)), (4, 5), (2, 2), stride=1)


def test_conv_modules_and_errors():
    ptcore.manual_seed(0)
    m = ptcore.nn.Conv2d(3, 4, 3, padding=1)
    x = rand((2, 3, 5, 5))
    ref = m(x)
    out = m.to("cuda")(x.cuda())
    assert out.device.type == "cuda"
    assert ptcore.allclose(out.cpu(), ref, atol=1e-5)
    with pytest.raises(RuntimeError, match="same device"):
        F.conv2d(x, m.weight)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(rand((1, 2, 5, 5)).cuda(), m.weight)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_max_pool(dtype):
    x = rand((2, 3, 7, 7), dtype)
    check(F.max_pool2d, x, 3, 2, 1)
    out, _ = check(F.max_pool2d, x, 2, return_indices=True)
    check(F.max_pool2d, x, (3, 2), (2, 1), 1, (2, 1), True)          # dilation, ceil_mode
    check(F.max_pool1d, rand((2, 3, 9), dtype), 3, 2)
    check(F.max_pool3d, rand((1, 2, 4, 5, 4), dtype), 2)
    check(F.adaptive_max_pool2d, x, (3, 2))


def test_max_pool_nan_and_ties_give_cpu_indices():
    x = ptcore.tensor([[[[1.0, 1.0, 0.0], [float("nan"), 2.0, 2.0], [0.0, 5.0, 5.0]]]])
    out, _ = check(lambda t: F.max_pool2d(t, 2, 1, return_indices=True)[1].float(), x, grad=())
    y, i = F.max_pool2d(x.cuda(), 2, 1, return_indices=True)
    assert i.dtype == ptcore.int64 and i.cpu().tolist() == [[[[3, 4], [3, 7]]]]


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("fn, shape, kw", [
    (F.max_pool1d, (1, 2, 2), dict(kernel_size=2, stride=1, padding=1, dilation=3)),
    (F.max_pool1d, (2, 2, 2), dict(kernel_size=2, stride=1, padding=3, dilation=5)),
    (F.max_pool2d, (1, 2, 3, 2), dict(kernel_size=(1, 2), stride=1, padding=(0, 1), dilation=(1, 3))),
    (F.max_pool2d, (1, 1, 2, 3), dict(kernel_size=2, stride=1, padding=1, dilation=3)),
    (F.max_pool3d, (1, 1, 2, 2, 2), dict(kernel_size=2, stride=1, padding=1, dilation=3)),
])
def test_max_pool_window_wholly_in_padding_as_cpu(fn, shape, kw, dtype):
    # dilation steps a window over the whole row: -inf at the window's first position
    # (past the row: the next row's first element, or past the plane), as the CPU kernel
    # and torch; the kernel raised "empty window".  The gradient goes where the CPU's
    # scatter puts it (the gathering backward skips such windows' indices)
    x = rand(shape, dtype)
    y, i = fn(x.cuda(), return_indices=True, **kw)
    cy, ci = fn(x, return_indices=True, **kw)
    assert ptcore.equal(y.cpu(), cy) and ptcore.equal(i.cpu(), ci)
    assert (cy == float("-inf")).any()
    check(fn, x, **kw)


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_avg_pool(dtype):
    x = rand((2, 3, 7, 6), dtype)
    check(F.avg_pool2d, x, 3, 2, 1)
    check(F.avg_pool2d, x, 3, 2, 1, count_include_pad=False, ceil_mode=True)
    check(F.avg_pool2d, x, 2, divisor_override=3)
    check(F.avg_pool1d, rand((2, 3, 9), dtype), 3, 2, 1)
    check(F.adaptive_avg_pool2d, x, (3, 4))
    check(F.adaptive_avg_pool2d, x, 1)
    check(F.adaptive_avg_pool1d, rand((2, 3, 9), dtype), 4)


def test_pool_low_precision_runs_in_float32():
    x = rand((1, 2, 6, 6), ptcore.float16)
    check(F.max_pool2d, x, 2, grad=())
    check(F.avg_pool2d, x, 2, grad=())


def test_float16_convolution_runs_in_float32():
    x, w, b = rand((2, 3, 5, 5), ptcore.float16), rand((4, 3, 3, 3), ptcore.float16, 1), \
        rand((4,), ptcore.float16, 2)
    out, _ = check(F.conv2d, x, w, b, grad=(0, 1, 2), padding=1)
    assert out[0].dtype == ptcore.float16


def test_convolution_in_batch_chunks(monkeypatch):
    from ptcore.cuda.ops import nn as _launch_nn
    monkeypatch.setattr(_launch_nn, "COL_BUDGET", 700)     # two samples' columns at a time
    check(F.conv2d, rand((5, 4, 5, 5)), rand((4, 2, 3, 3), seed=1), rand((4,), seed=2),
          grad=(0, 1, 2), padding=1, groups=2)
    check(F.conv_transpose2d, rand((5, 4, 3, 3)), rand((4, 2, 3, 3), seed=1), grad=(0, 1), stride=2)
