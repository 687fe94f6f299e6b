"""The CUDA convolution's GEMM paths (ptcore.cuda.ops.nn) against torch on the
CPU: forward and the input, weight and bias gradients of conv1d/2d/3d,
float32/float64, groups 1/2/depthwise, stride/padding/dilation, a batch of 1
and batches split into chunks (COL_BUDGET lowered); the weight gradient's
two paths (per-sample products summed by a GEMM; the batch folded into K);
max pooling's gathered backward equal to the CPU's bit for bit; and the
number of kernel launches and GEMMs per call, so the structure cannot
regress silently (counts, never times)."""
import collections

import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from device_target import REAL
from ptcore.cuda.ops import nn as cuda_nn
from ptcore.cuda.runtime import state as _runtime

torch = pytest.importorskip("torch")

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def _data(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run_ptcore(fn, x, w, b, kw):
    xs = [ptcore.from_numpy(a).cuda().requires_grad_() for a in (x, w, b)]
    y = fn(*xs, **kw)
    g = ptcore.from_numpy(np.random.default_rng(9).standard_normal(tuple(y.shape)).astype(x.dtype)).cuda()
    y.backward(g)
    return [y.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in xs]


def _run_torch(fn, x, w, b, kw):
    xs = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
    y = fn(*xs, **kw)
    g = torch.from_numpy(np.random.default_rng(9).standard_normal(tuple(y.shape)).astype(x.dtype))
    y.backward(g)
    return [y.detach().numpy()] + [t.grad.numpy() for t in xs]


def _compare(nd, xshape, oc, ks, dtype, chunk=None, **kw):
    """ptcore's conv on the emulated device against torch's on the CPU; with
    ``chunk`` (a monkeypatch), COL_BUDGET holds about two samples' columns."""
    g = kw.get("groups", 1)
    x = _data(xshape, dtype, 0)
    w = _data((oc, xshape[1] // g) + ks, dtype, 1)
    b = _data((oc,), dtype, 2)
    name = f"conv{nd}d"
    want = _run_torch(getattr(torch.nn.functional, name), x, w, b, kw)
    if chunk is not None:
        per = xshape[1] * np.prod(ks) * np.prod(want[0].shape[2:]) * np.dtype(dtype).itemsize
        chunk.setattr(cuda_nn, "COL_BUDGET", int(2.5 * per))
    got = _run_ptcore(getattr(F, name), x, w, b, kw)
    for what, a, e in zip(("output", "grad input", "grad weight", "grad bias"), got, want):
        np.testing.assert_allclose(a, e, err_msg=f"{name} {kw} {dtype}: {what}", **TOL[dtype])


GEOMETRIES = [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=2, dilation=2, groups=2),
    dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups="depthwise"),
]


def _geo(nd, kw):
    kw = dict(kw)
    for k in ("stride", "padding", "dilation"):
        if isinstance(kw.get(k), tuple):
            v = kw[k]
            kw[k] = (v * 2)[:nd] if nd != 2 else v
    return kw


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [1, 5])
@pytest.mark.parametrize("kw", GEOMETRIES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "plain")
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_forward_and_gradients_against_torch(nd, kw, batch, dtype, monkeypatch):
    kw = _geo(nd, kw)
    C = 4
    if kw.get("groups") == "depthwise":
        kw["groups"] = C
    oc = 8 if kw.get("groups", 1) == C else 6
    spatial = {1: (11,), 2: (7, 6), 3: (4, 5, 4)}[nd]
    ks = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}[nd]
    # batch 5: at most two samples' columns per chunk (three chunks or more)
    _compare(nd, (batch, C) + spatial, oc, ks, dtype, chunk=monkeypatch if batch > 1 else None,
             **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weight_gradient_with_few_positions_folds_the_batch_into_k(dtype, monkeypatch):
    # 1x1 output positions and many channels: the per-sample products would be
    # larger than the columns, so the weight gradient takes the K = nb*L path
    monkeypatch.setattr(cuda_nn, "COL_BUDGET", 3 * 8 * 9 * 8)
    _compare(2, (5, 8, 3, 3), 12, (3, 3), dtype)
    _compare(2, (5, 8, 3, 3), 12, (3, 3), dtype, groups=2)


def test_max_pool_backward_gathers_the_cpu_sums_exactly():
    # overlapping windows with ties: several outputs pick the same input, and
    # the gathered sums must round as the CPU's scatter (same order)
    rng = np.random.default_rng(3)
    for dtype in (ptcore.float32, ptcore.float64):
        x = ptcore.from_numpy(rng.integers(0, 3, (2, 3, 9, 8)).astype(np.float64)).to(dtype)
        g = ptcore.from_numpy(rng.standard_normal((2, 3, 9, 8))).to(dtype)
        for args in ((3, 1, 1), ((3, 2), (1, 2), (1, 0), (2, 1), True), (2,)):
            def grad(dev):
                t = x.to(dev).detach().clone().requires_grad_()
                y = F.max_pool2d(t, *args)
                y.backward(g.to(dev)[..., :y.shape[-2], :y.shape[-1]].contiguous())
                return t.grad.cpu()
            assert ptcore.equal(grad("cuda"), grad("cpu")), (dtype, args)
        tx = torch.from_numpy(x.numpy()).requires_grad_()
        ty = torch.nn.functional.adaptive_max_pool2d(tx, (4, 3))
        ty.backward(torch.ones_like(ty))
        px = x.cuda().requires_grad_()
        py = F.adaptive_max_pool2d(px, (4, 3))
        py.backward(ptcore.ones_like(py))
        np.testing.assert_array_equal(px.grad.cpu().numpy(), tx.grad.numpy())


# --- structure: kernel launches and GEMMs per call --------------------------------

class _Log:
    """Kernel names and GEMM shapes the emulated driver receives."""

    def __init__(self, monkeypatch):
        self.drv = _runtime.lazy_init("test")
        self.kernels = collections.Counter()
        self.gemms = []
        launch, gemm = self.drv.launch, self.drv.gemm

        def logged_launch(function, *a, **k):
            self.kernels[self.drv.kernel_name(function).rsplit("_", 1)[0]] += 1
            return launch(function, *a, **k)

        def logged_gemm(*a, **k):
            self.gemms.append((a[4], a[5], a[6], k.get("batch", 1)))   # m, n, k (column-major), batch
            return gemm(*a, **k)
        monkeypatch.setattr(self.drv, "launch", logged_launch)
        monkeypatch.setattr(self.drv, "gemm", logged_gemm)

    def take(self):
        ptcore.cuda.synchronize()
        out = dict(self.kernels), list(self.gemms)
        self.kernels.clear()
        self.gemms.clear()
        return out


@pytest.mark.skipif(REAL, reason="counts the emulated driver's calls")
def test_launches_and_gemms_per_conv_call(monkeypatch):
    x = ptcore.randn(4, 6, 12, 12).cuda().requires_grad_()
    w = ptcore.randn(16, 6, 5, 5).cuda().requires_grad_()
    b = ptcore.randn(16).cuda().requires_grad_()
    y = F.conv2d(x, w, b)
    g = ptcore.randn(*y.shape).cuda()
    y.backward(g)                           # compile everything first
    x.grad = w.grad = b.grad = None         # (no accumulation kernels below)
    log = _Log(monkeypatch)
    y = F.conv2d(x, w, b)
    k, gm = log.take()
    # the bias broadcast into y, one im2col, one GEMM batched over the samples
    assert k == {"ptc_cast_f32_f32": 1, "ptc_nnconv_im2col": 1}, k
    assert gm == [(64, 16, 150, 4)], gm
    y.backward(g)
    k, gm = log.take()
    # input gradient: one GEMM + col2im; weight gradient: im2col, the ones
    # vector, one GEMM over (sample, group) and one summing the samples; no
    # copies of the columns or of gy; the bias gradient a reduction
    assert k.pop("ptc_nnconv_im2col") == 1 and k.pop("ptc_nnconv_col2im") == 1, k
    assert k.pop("ptc_fill_f32") == 1, k
    assert all(name.startswith("ptc_reduce_sum") for name in k), k
    assert not any("cast" in name for name in k), k
    assert sorted(gm) == sorted([(64, 150, 16, 4), (150, 16, 64, 4), (2400, 1, 4, 1)]), gm
    # a grouped conv: the weight gradient is still ONE batched GEMM (batch N*G)
    xg = ptcore.randn(4, 6, 12, 12).cuda()
    wg = ptcore.randn(6, 2, 3, 3).cuda().requires_grad_()
    yg = F.conv2d(xg, wg, groups=3)
    yg.backward(ptcore.ones_like(yg))
    wg.grad = None
    log.take()
    yg = F.conv2d(xg, wg, groups=3)
    k, gm = log.take()
    assert k == {"ptc_nnconv_im2col": 1} and len(gm) == 3, (k, gm)
    gg = ptcore.ones_like(yg)
    log.take()
    yg.backward(gg)
    k, gm = log.take()
    # the input needs no gradient: no col2im, no input-gradient GEMM
    assert k == {"ptc_nnconv_im2col": 1, "ptc_fill_f32": 1}, k
    assert sorted(gm) == sorted([(18, 2, 100, 12), (108, 1, 4, 1)]), gm


@pytest.mark.skipif(REAL, reason="counts the emulated driver's calls")
def test_max_pool_backward_is_one_gather_launch(monkeypatch):
    x = ptcore.randn(3, 4, 10, 10).cuda().requires_grad_()
    F.max_pool2d(x, 2).sum().backward()
    log = _Log(monkeypatch)
    y = F.max_pool2d(x, 2)
    gy = ptcore.ones_like(y)
    log.take()
    y.backward(gy)
    k, gm = log.take()
    assert k.get("ptc_nnpool_maxgather") == 1 and "ptc_nnpool_maxbwd" not in k, k
    assert not gm
