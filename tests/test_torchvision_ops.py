"""torchvision's compiled ops, built into ptcore (``ptcore._torchvision_ops``).

Each kernel is compared with a NumPy reference written from torchvision's
definitions (float64 where the kernel runs float32: tolerances of float32
rounding), and each backward with finite differences (``gradcheck`` in float64)
and with the NumPy reference's own derivative where it is linear.
``deform_conv2d`` with zero offsets and a unit mask is a convolution: compared
with PyTorch's ``conv2d`` (ptcore's where torch is absent).  Hostile indices
(RoI batch indices, argmax and channel-mapping values) raise instead of
reading out of bounds.
"""
import math
import os

import numpy as np
import pytest

import ptcore
from ptcore import _torchvision_ops

_torchvision_ops.register(ptcore.library)
tv = ptcore.ops.torchvision


# ---------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------

def _nms_ref(boxes, scores, thr):
    boxes = np.asarray(boxes)
    order = np.argsort(-np.asarray(scores), kind="stable")
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(boxes), bool)
    keep = []
    for a, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(int(i))
        for j in order[a + 1:]:
            if suppressed[j]:
                continue
            w = max(boxes.dtype.type(0), min(x2[i], x2[j]) - max(x1[i], x1[j]))
            h = max(boxes.dtype.type(0), min(y2[i], y2[j]) - max(y1[i], y1[j]))
            inter = w * h
            if float(inter / (areas[i] + areas[j] - inter)) > thr:
                suppressed[j] = True
    return keep


def _bilinear(img, y, x):
    """torchvision's RoIAlign sample of img (C, H, W) at (y, x): zeros outside."""
    _, h, w = img.shape
    if not (-1.0 <= y <= h and -1.0 <= x <= w):
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yl = yh = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xl = xh = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return ((1 - ly) * (1 - lx) * img[:, yl, xl] + (1 - ly) * lx * img[:, yl, xh]
            + ly * (1 - lx) * img[:, yh, xl] + ly * lx * img[:, yh, xh])


def _roi_geometry(roi, scale, ph, pw, sr, offset, clamp1):
    sw, sh, ew, eh = (np.asarray(roi[1:], np.float64) * scale - offset)
    rw, rh = ew - sw, eh - sh
    if clamp1:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    gh = sr if sr > 0 else math.ceil(rh / ph)
    gw = sr if sr > 0 else math.ceil(rw / pw)
    return sh, sw, rh / ph, rw / pw, gh, gw


def _roi_align_ref(x, rois, scale, ph, pw, sr, aligned):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    for k, roi in enumerate(rois):
        sh, sw, bh, bw, gh, gw = _roi_geometry(roi, scale, ph, pw, sr, 0.5 if aligned else 0.0,
                                               not aligned)
        img = x[int(roi[0])]
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(x.shape[1])
                for iy in range(gh):
                    for ix in range(gw):
                        acc += _bilinear(img, sh + i * bh + (iy + .5) * bh / gh,
                                         sw + j * bw + (ix + .5) * bw / gw)
                out[k, :, i, j] = acc / max(gh * gw, 1)
    return out


def _ps_roi_align_ref(x, rois, scale, ph, pw, sr):
    c_out = x.shape[1] // (ph * pw)
    out = np.zeros((len(rois), c_out, ph, pw))
    for k, roi in enumerate(rois):
        sh, sw, bh, bw, gh, gw = _roi_geometry(roi, scale, ph, pw, sr, 0.5, False)
        for c in range(c_out):
            for i in range(ph):
                for j in range(pw):
                    img = x[int(roi[0]), [(c * ph + i) * pw + j]]
                    acc = 0.0
                    for iy in range(gh):
                        for ix in range(gw):
                            acc += _bilinear(img, sh + i * bh + (iy + .5) * bh / gh,
                                             sw + j * bw + (ix + .5) * bw / gw)[0]
                    out[k, c, i, j] = acc / (gh * gw)
    return out


def _pool_bins(roi, scale, ph, pw, h, w, plus1, hi_h, hi_w):
    b = [int(round_half_away(v * scale)) for v in roi[1:]]
    rw = max(b[2] - b[0] + plus1, 1)
    rh = max(b[3] - b[1] + plus1, 1)
    bh, bw = rh / ph, rw / pw
    for i in range(ph):
        for j in range(pw):
            hs = min(max(math.floor(i * bh) + b[1], 0), hi_h)
            he = min(max(math.ceil((i + 1) * bh) + b[1], 0), hi_h)
            ws = min(max(math.floor(j * bw) + b[0], 0), hi_w)
            we = min(max(math.ceil((j + 1) * bw) + b[0], 0), hi_w)
            yield i, j, hs, he, ws, we


def round_half_away(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def _roi_pool_ref(x, rois, scale, ph, pw):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph, pw))
    arg = np.full((len(rois), c, ph, pw), -1)
    for k, roi in enumerate(rois):
        for i, j, hs, he, ws, we in _pool_bins(roi, scale, ph, pw, h, w, 1, h, w):
            if he <= hs or we <= ws:
                continue
            patch = x[int(roi[0]), :, hs:he, ws:we].reshape(c, -1)
            out[k, :, i, j] = patch.max(1)
            a = patch.argmax(1)
            arg[k, :, i, j] = (hs + a // (we - ws)) * w + ws + a % (we - ws)
    return out, arg


def _ps_roi_pool_ref(x, rois, scale, ph, pw):
    n, c, h, w = x.shape
    c_out = c // (ph * pw)
    out = np.zeros((len(rois), c_out, ph, pw))
    for k, roi in enumerate(rois):
        for i, j, hs, he, ws, we in _pool_bins(roi, scale, ph, pw, h, w, 0, h - 1, w - 1):
            for co in range(c_out):
                if he > hs and we > ws:
                    ci = (co * ph + i) * pw + j
                    out[k, co, i, j] = x[int(roi[0]), ci, hs:he, ws:we].mean()
    return out


def _boxes(rng, n, size=40.0):
    xy = rng.uniform(0, size, (n, 2))
    wh = rng.uniform(1, size / 2, (n, 2))
    return np.concatenate([xy, xy + wh], 1)


def _rois(rng, k, n_batch, size):
    b = _boxes(rng, k, size)
    b[0] = [-3.0, -2.0, size + 2.0, size + 1.5]        # partly outside the map
    idx = rng.integers(0, n_batch, (k, 1)).astype(np.float64)
    return np.concatenate([idx, b], 1)


# ---------------------------------------------------------------------------
# nms
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("thr", [0.0, 0.3, 0.5, 0.7, 1.0])
def test_nms_matches_reference(dtype, thr):
    rng = np.random.default_rng(0)
    boxes = _boxes(rng, 200).astype(dtype)
    scores = rng.integers(0, 40, 200).astype(dtype) / 40   # many equal scores: order ties
    keep = tv.nms(ptcore.from_numpy(boxes), ptcore.from_numpy(scores), thr)
    assert keep.dtype == ptcore.int64
    assert keep.tolist() == _nms_ref(boxes, scores, thr)


def test_nms_edge_cases():
    empty = tv.nms(ptcore.zeros(0, 4), ptcore.zeros(0), 0.5)
    assert empty.shape == (0,) and empty.dtype == ptcore.int64
    b = ptcore.tensor([[0., 0, 10, 10], [0, 0, 10, 10], [0, 0, 0, 0], [float("nan"), 0, 1, 1]])
    s = ptcore.tensor([0.5, 0.5, 0.9, 0.1])
    assert tv.nms(b, s, 0.5).tolist() == _nms_ref(b.numpy(), s.numpy(), 0.5)
    with pytest.raises(RuntimeError, match="2d tensor"):
        tv.nms(ptcore.zeros(4), ptcore.zeros(1), 0.5)
    with pytest.raises(RuntimeError, match="4 elements in dimension 1"):
        tv.nms(ptcore.zeros(3, 5), ptcore.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="same number of elements"):
        tv.nms(ptcore.zeros(3, 4), ptcore.zeros(2), 0.5)
    with pytest.raises(RuntimeError, match="same type as scores"):
        tv.nms(ptcore.zeros(3, 4), ptcore.zeros(3, dtype=ptcore.float64), 0.5)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tv.nms(ptcore.zeros(3, 4, dtype=ptcore.int64), ptcore.zeros(3, dtype=ptcore.int64), 0.5)


# ---------------------------------------------------------------------------
# RoIAlign
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sr", [0, 2])
def test_roi_align_matches_reference(aligned, sr):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 12, 10))
    rois = _rois(rng, 6, 2, 20.0)
    out = tv.roi_align(ptcore.from_numpy(x.astype(np.float32)),
                       ptcore.from_numpy(rois.astype(np.float32)), 0.5, 3, 4, sr, aligned)
    assert out.dtype == ptcore.float32 and out.shape == (6, 3, 3, 4)
    np.testing.assert_allclose(out.numpy(), _roi_align_ref(x, rois, 0.5, 3, 4, sr, aligned),
                               rtol=1e-5, atol=1e-5)
    out64 = tv.roi_align(ptcore.from_numpy(x), ptcore.from_numpy(rois), 0.5, 3, 4, sr, aligned)
    np.testing.assert_allclose(out64.numpy(), _roi_align_ref(x, rois, 0.5, 3, 4, sr, aligned),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align_gradient(aligned):
    rng = np.random.default_rng(2)
    x = ptcore.from_numpy(rng.standard_normal((2, 2, 7, 6))).requires_grad_()
    rois = ptcore.from_numpy(_rois(rng, 4, 2, 12.0))
    assert ptcore.autograd.gradcheck(
        lambda t: tv.roi_align(t, rois, 0.7, 2, 3, 2, aligned), (x,), eps=1e-6, atol=1e-7)
    # the linear map's transpose: <roi_align(x), g> = <x, backward(g)>
    g = rng.standard_normal((4, 2, 2, 3))
    gx = tv._roi_align_backward(ptcore.from_numpy(g), rois, 0.7, 2, 3, 2, 2, 7, 6, 2, aligned)
    lhs = (_roi_align_ref(x.detach().numpy(), rois.numpy(), 0.7, 2, 3, 2, aligned) * g).sum()
    assert np.isclose(lhs, (x.detach().numpy() * gx.numpy()).sum(), rtol=1e-10)


def test_roi_align_half_and_empty():
    x = ptcore.randn(1, 2, 5, 5)
    rois = ptcore.tensor([[0., 0, 0, 4, 4]])
    h = tv.roi_align(x.half(), rois.half(), 1.0, 2, 2, 2, False)
    assert h.dtype == ptcore.float16
    ref = tv.roi_align(x.half().float(), rois, 1.0, 2, 2, 2, False)
    np.testing.assert_allclose(h.float().numpy(), ref.numpy(), rtol=2e-3, atol=2e-3)
    assert tv.roi_align(x, ptcore.zeros(0, 5), 1.0, 2, 2, 2, False).shape == (0, 2, 2, 2)
    with pytest.raises(RuntimeError, match=r"Tensor\[K, 5\]"):
        tv.roi_align(x, ptcore.zeros(2, 4), 1.0, 2, 2, 2, False)
    with pytest.raises(RuntimeError, match="same type as rois"):
        tv.roi_align(x, rois.double(), 1.0, 2, 2, 2, False)


# ---------------------------------------------------------------------------
# RoIPool, position-sensitive RoIAlign / RoIPool
# ---------------------------------------------------------------------------

def test_roi_pool_matches_reference():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 11, 9))
    rois = _rois(rng, 7, 2, 18.0)
    out, arg = tv.roi_pool(ptcore.from_numpy(x), ptcore.from_numpy(rois), 0.5, 3, 2)
    ref, ref_arg = _roi_pool_ref(x, rois, 0.5, 3, 2)
    assert arg.dtype == ptcore.int32
    np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_array_equal(arg.numpy(), ref_arg)
    xt = ptcore.from_numpy(x).requires_grad_()
    assert ptcore.autograd.gradcheck(
        lambda t: tv.roi_pool(t, ptcore.from_numpy(rois), 0.5, 3, 2)[0], (xt,), eps=1e-6)


@pytest.mark.parametrize("sr", [0, 2])
def test_ps_roi_align_matches_reference(sr):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 12, 9, 8))
    rois = _rois(rng, 5, 2, 16.0)
    out, cmap = tv.ps_roi_align(ptcore.from_numpy(x), ptcore.from_numpy(rois), 0.5, 2, 3, sr)
    assert out.shape == (5, 2, 2, 3) and cmap.dtype == ptcore.int32
    np.testing.assert_allclose(out.numpy(), _ps_roi_align_ref(x, rois, 0.5, 2, 3, sr),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(cmap.numpy()[0].ravel(), np.arange(12))
    xt = ptcore.from_numpy(x).requires_grad_()
    assert ptcore.autograd.gradcheck(
        lambda t: tv.ps_roi_align(t, ptcore.from_numpy(rois), 0.5, 2, 3, sr)[0], (xt,),
        eps=1e-6, atol=1e-7)


def test_ps_roi_pool_matches_reference():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 12, 12))
    rois = np.array([[0, 2., 2, 14, 16], [1, 0, 4, 20, 10], [1, 4, 4, 8, 9]])
    out, cmap = tv.ps_roi_pool(ptcore.from_numpy(x), ptcore.from_numpy(rois), 0.5, 2, 2)
    np.testing.assert_allclose(out.numpy(), _ps_roi_pool_ref(x, rois, 0.5, 2, 2),
                               rtol=1e-12, atol=1e-12)
    # interior RoIs: forward and backward clip alike, the gradient is the forward's
    xt = ptcore.from_numpy(x).requires_grad_()
    inner = ptcore.from_numpy(np.array([[0, 4., 4, 12, 14], [1, 6, 2, 16, 12]]))
    assert ptcore.autograd.gradcheck(lambda t: tv.ps_roi_pool(t, inner, 0.5, 2, 2)[0], (xt,),
                                     eps=1e-6)
    with pytest.raises(RuntimeError, match="multiple of pooling height"):
        tv.ps_roi_pool(ptcore.from_numpy(x), ptcore.from_numpy(rois), 0.5, 3, 2)


# ---------------------------------------------------------------------------
# deform_conv2d
# ---------------------------------------------------------------------------

def _conv2d_oracle():
    try:
        import torch
        return torch, torch.nn.functional.conv2d
    except ImportError:
        return ptcore, ptcore.nn.functional.conv2d


@pytest.mark.parametrize("groups,offset_groups,stride,pad,dil", [
    (1, 1, (1, 1), (1, 1), (1, 1)), (2, 2, (2, 1), (0, 2), (1, 2)), (1, 2, (1, 2), (2, 1), (2, 1))])
def test_deform_conv2d_zero_offset_is_conv2d(groups, offset_groups, stride, pad, dil):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    lib, conv = _conv2d_oracle()
    ref = conv(lib.from_numpy(x), lib.from_numpy(w), lib.from_numpy(b), stride, pad, dil,
               groups).numpy()
    ho, wo = ref.shape[2:]
    off = ptcore.zeros(2, 2 * offset_groups * 6, ho, wo)
    mask = ptcore.ones(2, offset_groups * 6, ho, wo)
    out = tv.deform_conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), off, mask,
                           ptcore.from_numpy(b), *stride, *pad, *dil, groups, offset_groups, True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)
    # a mask of 0.5 halves the product; use_mask=False ignores it
    half = tv.deform_conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), off, mask * 0.5,
                            ptcore.zeros(6), *stride, *pad, *dil, groups, offset_groups, True)
    np.testing.assert_allclose(half.numpy(), (ref - b[:, None, None]) / 2, rtol=1e-4, atol=1e-4)
    nomask = tv.deform_conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), off, mask * 0.5,
                              ptcore.from_numpy(b), *stride, *pad, *dil, groups, offset_groups,
                              False)
    np.testing.assert_allclose(nomask.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_deform_conv2d_integer_offset_shifts():
    # an offset of +1 row everywhere samples the row below: conv of the shifted input
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 8, 8))
    w = rng.standard_normal((3, 2, 3, 3))
    off = np.zeros((1, 18, 6, 6))
    off[:, 0::2] = 1.0
    out = tv.deform_conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w), ptcore.from_numpy(off),
                           ptcore.ones(1, 9, 6, 6, dtype=ptcore.float64),
                           ptcore.zeros(3, dtype=ptcore.float64), 1, 1, 0, 0, 1, 1, 1, 1, False)
    shifted = np.concatenate([x[:, :, 1:], np.zeros((1, 2, 1, 8))], 2)
    ref = ptcore.nn.functional.conv2d(ptcore.from_numpy(shifted), ptcore.from_numpy(w)).numpy()
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_deform_conv2d_gradients():
    rng = np.random.default_rng(8)
    x = ptcore.from_numpy(rng.standard_normal((1, 2, 5, 5))).requires_grad_()
    w = ptcore.from_numpy(rng.standard_normal((2, 2, 2, 2))).requires_grad_()
    # offsets away from integers (the sampling weights are smooth there)
    off = ptcore.from_numpy(rng.uniform(0.1, 0.4, (1, 8, 4, 4)) *
                            rng.choice([-1, 1], (1, 8, 4, 4))).requires_grad_()
    mask = ptcore.from_numpy(rng.uniform(0.2, 1, (1, 4, 4, 4))).requires_grad_()
    b = ptcore.from_numpy(rng.standard_normal(2)).requires_grad_()

    def f(x, w, off, mask, b):
        return tv.deform_conv2d(x, w, off, mask, b, 1, 1, 0, 0, 1, 1, 1, 1, True)
    assert ptcore.autograd.gradcheck(f, (x, w, off, mask, b), eps=1e-6, atol=1e-6)
    gs = tv._deform_conv2d_backward(ptcore.ones(1, 2, 4, 4, dtype=ptcore.float64), x, w, off,
                                    mask, b, 1, 1, 0, 0, 1, 1, 1, 1, True)
    assert len(gs) == 5 and np.allclose(gs[4].detach().numpy(), 16.0)


# ---------------------------------------------------------------------------
# hostile indices, loading, autocast
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [2.0, -1.0, float("nan"), float("inf"), 1e30])
def test_bad_batch_index_raises(bad):
    x = ptcore.randn(2, 4, 6, 6)
    rois = ptcore.tensor([[0., 0, 0, 3, 3], [bad, 1, 1, 4, 4]])
    for call in (lambda: tv.roi_align(x, rois, 1.0, 2, 2, 2, False),
                 lambda: tv.roi_pool(x, rois, 1.0, 2, 2),
                 lambda: tv.ps_roi_align(x, rois, 1.0, 2, 2, 2),
                 lambda: tv.ps_roi_pool(x, rois, 1.0, 2, 2),
                 lambda: tv._roi_align_backward(ptcore.ones(2, 4, 2, 2), rois, 1.0, 2, 2, 2, 4, 6,
                                                6, 2, False)):
        with pytest.raises(IndexError, match="batch index"):
            call()


def test_bad_argmax_and_channel_mapping_raise():
    rois = ptcore.tensor([[0., 0, 0, 3, 3]])
    g = ptcore.ones(1, 4, 2, 2)
    for bad in (36, -2, 2 ** 30):
        arg = ptcore.zeros(1, 4, 2, 2, dtype=ptcore.int32)
        arg[0, 1, 1, 0] = bad
        with pytest.raises(IndexError, match="argmax"):
            tv._roi_pool_backward(g, rois, arg, 1.0, 2, 2, 1, 4, 6, 6)
        cmap = ptcore.zeros(1, 1, 2, 2, dtype=ptcore.int32)
        cmap[0, 0, 1, 1] = bad
        for op in (lambda: tv._ps_roi_align_backward(ptcore.ones(1, 1, 2, 2), rois, cmap, 1.0, 2,
                                                     2, 2, 1, 4, 6, 6),
                   lambda: tv._ps_roi_pool_backward(ptcore.ones(1, 1, 2, 2), rois, cmap, 1.0, 2,
                                                    2, 1, 4, 6, 6)):
            with pytest.raises(IndexError, match="channel_mapping"):
                op()
    with pytest.raises(RuntimeError, match="grad must have shape"):
        tv._roi_align_backward(ptcore.ones(3, 4, 2, 2), rois, 1.0, 2, 2, 1, 4, 6, 6, 2, False)


def test_huge_or_nan_adaptive_grid_raises():
    x = ptcore.randn(1, 1, 4, 4)
    rois = ptcore.tensor([[0., 0, 0, 1e30, 1e30]])
    with pytest.raises(RuntimeError, match="too large"):
        tv.roi_align(x, rois, 1.0, 2, 2, 0, False)
    nan = ptcore.tensor([[0., float("nan"), 0, 3, 3]])
    with pytest.raises(RuntimeError, match="not a number"):
        tv.roi_align(x, nan, 1.0, 2, 2, 0, False)
    # a fixed grid samples nothing at NaN coordinates: zeros, as torchvision's kernel
    assert tv.roi_align(x, nan, 1.0, 2, 2, 2, False).abs().sum().item() == 0
    with pytest.raises(RuntimeError, match="does not fit in an int"):
        tv.roi_pool(x, nan, 1.0, 2, 2)


def test_load_library_of_torchvision_defines_ops(tmp_path):
    d = tmp_path / "torchvision"
    d.mkdir()
    lib = d / "_C.so"
    lib.write_bytes(b"\x7fELF not really; needs libtorch_cpu.so")
    ptcore.ops.load_library(str(lib))
    assert str(lib) in ptcore.ops.loaded_libraries
    assert _torchvision_ops.registered() and tv._cuda_version() == -1
    other = tmp_path / "other_C.so"
    other.write_bytes(b"needs libtorch_cpu.so")
    with pytest.raises(OSError, match="libtorch"):
        ptcore.ops.load_library(str(other))
    assert not _torchvision_ops.is_torchvision_library(os.path.join("site", "mylib", "_C.so"))


def test_autocast_runs_float32_kernels():
    x = ptcore.randn(1, 2, 6, 6)
    rois = ptcore.tensor([[0., 1, 1, 5, 5]])
    with ptcore.autocast("cpu", dtype=ptcore.bfloat16):
        y = tv.roi_align(x.bfloat16(), rois, 1.0, 2, 2, 2, False)
        keep = tv.nms(ptcore.tensor([[0., 0, 4, 4], [0, 0, 4, 4.2]]).bfloat16(),
                      ptcore.tensor([0.3, 0.9]).bfloat16(), 0.5)
    assert y.dtype == ptcore.bfloat16 and keep.tolist() == [1]
    ref = tv.roi_align(x.bfloat16().float(), rois, 1.0, 2, 2, 2, False)
    np.testing.assert_allclose(y.float().numpy(), ref.numpy(), rtol=1e-2, atol=1e-2)


def test_double_backward_refused():
    x = ptcore.randn(1, 2, 6, 6, dtype=ptcore.float64, requires_grad=True)
    rois = ptcore.tensor([[0., 1, 1, 5, 5]], dtype=ptcore.float64)
    y = tv.roi_align(x, rois, 1.0, 2, 2, 2, False)
    (g,) = ptcore.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="double backwards on roi_align"):
        g.sum().backward()


def test_deform_conv2d_nonfinite_offsets_sample_nothing():
    # NaN/inf offsets sample no pixel (torchvision casts them to int: undefined behaviour)
    x = ptcore.randn(1, 2, 5, 5)
    off = ptcore.full((1, 18, 3, 3), float("nan"))
    off[0, 0, 0, 0], off[0, 1, 0, 1], off[0, 2, 1, 1] = float("inf"), -1e30, 1e30
    out = tv.deform_conv2d(x, ptcore.randn(2, 2, 3, 3), off, ptcore.ones(1, 9, 3, 3),
                           ptcore.zeros(2), 1, 1, 0, 0, 1, 1, 1, 1, True)
    assert out.abs().sum().item() == 0


def test_kernels_refuse_inputs_that_are_not_4d():
    # the kernel module checks the (N, C, H, W) operand's rank before reading its sizes
    from ptcore._ops.kernels import _vision
    rois = ptcore.tensor([[0., 0, 0, 2, 2]])
    flat = ptcore.zeros(4)
    with pytest.raises(RuntimeError, match="must be 4-D"):
        _vision.roi_align_forward(flat, rois, 1.0, 2, 2, 2, False, ptcore.zeros(1, 1, 2, 2))
    with pytest.raises(RuntimeError, match="must be 4-D"):
        _vision.roi_pool_backward(ptcore.ones(1, 1, 2, 2), rois,
                                  ptcore.zeros(1, 1, 2, 2, dtype=ptcore.int32), 2, 2, flat)
