"""group_norm's kernels (_norm.group_norm_forward/backward, ptc_gn_rows.h):
forward and backward against a float64 NumPy reference of torch's formulas,
with and without the affine parameters, any layout (channels_last, strided),
1 and 2 threads (the same bits), every CPU path this machine has (the same
bits in a child process under ATEN_CPU_CAPABILITY), double backward through
the composite path, and torch's values where torch is installed."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from cpu_capability import run_child, skip_unless_runnable

SHAPES = [((4, 6, 5, 7), 3), ((2, 8), 4), ((3, 12, 4), 2), ((2, 4, 3, 3, 3), 4), ((1, 32, 10, 10), 32),
          ((2, 64, 33, 31), 8), ((3, 5, 1), 1), ((2, 6, 37), 2)]


def _reference(x, G, w, b, gy, eps=1e-5):
    """float64 group norm forward and backward (torch's formulas)."""
    N, C = x.shape[:2]
    xr = x.reshape(N, G, -1).astype(np.float64)
    mean = xr.mean(-1, keepdims=True)
    var = ((xr - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    xhat = ((xr - mean) * rstd).reshape(x.shape)
    shape = (1, C) + (1,) * (x.ndim - 2)
    wv = np.ones(C) if w is None else w.astype(np.float64)
    y = xhat * wv.reshape(shape) + (0 if b is None else b.astype(np.float64).reshape(shape))
    g = (gy.astype(np.float64) * wv.reshape(shape)).reshape(N, G, -1)
    xh = xhat.reshape(N, G, -1)
    gx = ((g - g.mean(-1, keepdims=True) - xh * (g * xh).mean(-1, keepdims=True)) * rstd)
    dims = (0,) + tuple(range(2, x.ndim))
    gw = (gy * xhat).sum(dims)
    gb = gy.sum(dims)
    return y, gx.reshape(x.shape), gw, gb


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,G", SHAPES)
def test_forward_backward_against_reference(shape, G, affine, dtype):
    rng = np.random.default_rng(hash((shape, G)) % 2 ** 32)
    x = (rng.standard_normal(shape) * 3 + 5).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype) if affine else None
    b = rng.standard_normal(shape[1]).astype(dtype) if affine else None
    y_ref, gx_ref, gw_ref, gb_ref = _reference(x, G, w, b, gy)
    xt = ptcore.tensor(x, requires_grad=True)
    wt = ptcore.tensor(w, requires_grad=True) if affine else None
    bt = ptcore.tensor(b, requires_grad=True) if affine else None
    y = F.group_norm(xt, G, wt, bt)
    y.backward(ptcore.tensor(gy))
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(y.detach().numpy(), y_ref, **tol)
    np.testing.assert_allclose(xt.grad.numpy(), gx_ref, **tol)
    if affine:
        scale = max(1.0, np.abs(gw_ref).max())
        np.testing.assert_allclose(wt.grad.numpy() / scale, gw_ref / scale, **tol)
        np.testing.assert_allclose(bt.grad.numpy(), gb_ref, **tol)
    assert y.grad_fn.name() == "NativeGroupNormBackward0"


def test_layouts_give_the_contiguous_result():
    rng = np.random.default_rng(1)
    x = ptcore.tensor(rng.standard_normal((2, 8, 6, 5)).astype(np.float32))
    w = ptcore.tensor(rng.standard_normal(8).astype(np.float32))
    b = ptcore.tensor(rng.standard_normal(8).astype(np.float32))
    ref = F.group_norm(x, 4, w, b)
    cl = x.contiguous(memory_format=ptcore.channels_last)
    out = F.group_norm(cl, 4, w, b)
    assert out.is_contiguous(memory_format=ptcore.channels_last)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    wide = ptcore.tensor(rng.standard_normal((2, 8, 6, 10)).astype(np.float32))[..., ::2]
    np.testing.assert_array_equal(F.group_norm(wide, 4, w, b).numpy(),
                                  F.group_norm(wide.contiguous(), 4, w, b).numpy())
    # strided parameters
    w2 = ptcore.tensor(np.repeat(w.numpy(), 2))[::2]
    np.testing.assert_array_equal(F.group_norm(x, 4, w2, b).numpy(), ref.numpy())


def test_thread_count_does_not_change_bits():
    rng = np.random.default_rng(2)
    x = ptcore.tensor(rng.standard_normal((4, 32, 24, 24)).astype(np.float32), requires_grad=True)
    w = ptcore.tensor(rng.standard_normal(32).astype(np.float32), requires_grad=True)
    gy = ptcore.tensor(rng.standard_normal((4, 32, 24, 24)).astype(np.float32))
    old = ptcore.get_num_threads()
    res = []
    try:
        for n in (1, 2):
            ptcore.set_num_threads(n)
            x.grad = w.grad = None
            y = F.group_norm(x, 8, w)
            y.backward(gy)
            res.append((y.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    finally:
        ptcore.set_num_threads(old)
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_double_backward_through_the_composite():
    x = ptcore.randn(2, 6, 4, dtype=ptcore.float64, requires_grad=True)
    w = ptcore.randn(6, dtype=ptcore.float64, requires_grad=True)
    b = ptcore.randn(6, dtype=ptcore.float64, requires_grad=True)
    assert ptcore.autograd.gradcheck(lambda *a: F.group_norm(a[0], 3, a[1], a[2]), (x, w, b))
    assert ptcore.autograd.gradgradcheck(lambda *a: F.group_norm(a[0], 3, a[1], a[2]), (x, w, b))


def test_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 64, 16, 16)) * 2 + 1).astype(np.float32)
    gy = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    out = []
    for lib in (ptcore, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        bt = lib.tensor(b, requires_grad=True)
        y = lib.nn.functional.group_norm(xt, 8, wt, bt)
        y.backward(lib.tensor(gy))
        out.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()])
    for a, b_ in zip(*out):
        np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-4)


_CHILD = """
import sys, numpy as np, ptcore, ptcore.nn.functional as F
d = np.load(sys.argv[1])
x = ptcore.tensor(d["x"], requires_grad=True)
w = ptcore.tensor(d["w"], requires_grad=True)
y = F.group_norm(x, 4, w, None)
y.backward(ptcore.tensor(d["g"]))
np.savez(sys.argv[2], y=y.detach().numpy(), gx=x.grad.numpy(), gw=w.grad.numpy())
"""


@pytest.mark.parametrize("cap", ["default", "avx2"])
def test_every_cpu_path_gives_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    rng = np.random.default_rng(4)
    d = {"x": rng.standard_normal((3, 16, 9, 11)).astype(np.float32),
         "w": rng.standard_normal(16).astype(np.float32),
         "g": rng.standard_normal((3, 16, 9, 11)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **d)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    x = ptcore.tensor(d["x"], requires_grad=True)
    w = ptcore.tensor(d["w"], requires_grad=True)
    y = F.group_norm(x, 4, w, None)
    y.backward(ptcore.tensor(d["g"]))
    np.testing.assert_array_equal(child["y"], y.detach().numpy())
    np.testing.assert_array_equal(child["gx"], x.grad.numpy())
    np.testing.assert_array_equal(child["gw"], w.grad.numpy())
