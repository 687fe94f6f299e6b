"""F.rms_norm / nn.RMSNorm on contiguous float32/float64 CPU input: the one-pass
row kernels of ptcore._ops.kernels._norm (ptc_rms_rows.h) against torch's
composite, the gradients (and the double backward, through the composite),
the thread count and the other CPU paths (ATEN_CPU_CAPABILITY in a child)
giving the same bits, and the inputs that keep the composite."""
import numpy as np
import pytest

import ptcore
from cpu_capability import run_child, skip_unless_runnable

torch = pytest.importorskip("torch")
F = ptcore.nn.functional

CASES = [((4, 6), (6,), True), ((3, 5, 8), (5, 8), False), ((2, 3, 1000), (1000,), True),
         ((7, 1), (1,), True), ((2, 3, 600), (600,), True), ((5, 40), (40,), False),
         ((33, 77), (77,), True)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,ns,affine", CASES)
def test_values_and_gradients_match_torch(shape, ns, affine, dtype):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(ns).astype(dtype) if affine else None
    g = rng.standard_normal(shape).astype(dtype)
    x = ptcore.from_numpy(a).requires_grad_(True)
    pw = ptcore.from_numpy(w).requires_grad_(True) if affine else None
    tx = torch.from_numpy(a).requires_grad_(True)
    tw = torch.from_numpy(w).requires_grad_(True) if affine else None
    for eps in (1e-5, None):
        y = F.rms_norm(x, ns, pw, eps)
        ty = torch.nn.functional.rms_norm(tx, ns, tw, eps)
        assert y.dtype == x.dtype and y.shape == x.shape and y.is_contiguous()
        assert y.grad_fn is not None and y.grad_fn.name() == ty.grad_fn.name()
        y.backward(ptcore.from_numpy(g))
        ty.backward(torch.from_numpy(g))
        tol = 2e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=10 * tol, atol=10 * tol)
        if affine:
            np.testing.assert_allclose(pw.grad.numpy(), tw.grad.numpy(), rtol=10 * tol,
                                       atol=10 * tol)


def test_double_backward_and_gradcheck():
    rng = np.random.default_rng(1)
    x = ptcore.from_numpy(rng.standard_normal((3, 5))).requires_grad_(True)
    w = ptcore.from_numpy(rng.standard_normal(5)).requires_grad_(True)
    fn = lambda x, w: F.rms_norm(x, (5,), w)      # noqa: E731
    assert ptcore.autograd.gradcheck(fn, (x, w))
    assert ptcore.autograd.gradgradcheck(fn, (x, w))
    # only the weight, only the input
    y = F.rms_norm(x.detach(), (5,), w)
    (gw,) = ptcore.autograd.grad(y.sum(), w)
    tx = torch.from_numpy(x.detach().numpy())
    tw = torch.from_numpy(w.detach().numpy()).requires_grad_(True)
    (tgw,) = torch.autograd.grad(torch.nn.functional.rms_norm(tx, (5,), tw).sum(), tw)
    np.testing.assert_allclose(gw.numpy(), tgw.numpy(), rtol=1e-12)


@pytest.mark.parametrize("threads", [2, 3])
def test_thread_count_does_not_change_bits(threads):
    rng = np.random.default_rng(2)
    x = ptcore.from_numpy(rng.standard_normal((300, 1100)).astype("float32")).requires_grad_(True)
    w = ptcore.from_numpy(rng.standard_normal(1100).astype("float32")).requires_grad_(True)
    g = ptcore.from_numpy(rng.standard_normal((300, 1100)).astype("float32"))
    old = ptcore.get_num_threads()
    out = []
    try:
        for nt in (1, threads):
            ptcore.set_num_threads(nt)
            x.grad = w.grad = None
            y = F.rms_norm(x, (1100,), w)
            y.backward(g)
            out.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    finally:
        ptcore.set_num_threads(old)
    for a, b in zip(*out):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


_CHILD = """
import sys, numpy as np, ptcore
d = np.load(sys.argv[1])
out = {}
for k in ("f32", "f64"):
    x = ptcore.from_numpy(d["x" + k]).requires_grad_(True)
    w = ptcore.from_numpy(d["w" + k]).requires_grad_(True)
    y = ptcore.nn.functional.rms_norm(x, (x.shape[-1],), w)
    y.backward(ptcore.from_numpy(d["g" + k]))
    out["y" + k], out["gx" + k], out["gw" + k] = y.detach().numpy(), x.grad.numpy(), w.grad.numpy()
np.savez(sys.argv[2], **out)
"""


@pytest.mark.parametrize("cap", ["avx2", "default"])
def test_other_cpu_paths_give_the_same_bits(cap, tmp_path):
    skip_unless_runnable(cap)
    rng = np.random.default_rng(3)
    arrs = {}
    for k, dt in (("f32", "float32"), ("f64", "float64")):
        # (row lengths around the 32 lanes and the vector widths)
        arrs["x" + k] = rng.standard_normal((37, 71)).astype(dt) * 3
        arrs["w" + k] = rng.standard_normal(71).astype(dt)
        arrs["g" + k] = rng.standard_normal((37, 71)).astype(dt)
    np.savez(tmp_path / "in.npz", **arrs)
    run_child(cap, _CHILD, tmp_path / "in.npz", tmp_path / "o.npz")
    child = np.load(tmp_path / "o.npz")
    for k, u in (("f32", np.uint32), ("f64", np.uint64)):
        x = ptcore.from_numpy(arrs["x" + k]).requires_grad_(True)
        w = ptcore.from_numpy(arrs["w" + k]).requires_grad_(True)
        y = F.rms_norm(x, (71,), w)
        y.backward(ptcore.from_numpy(arrs["g" + k]))
        for name, here in (("y", y.detach()), ("gx", x.grad), ("gw", w.grad)):
            np.testing.assert_array_equal(child[name + k].view(u), here.numpy().view(u))


def test_inputs_that_keep_the_composite():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 6)).astype("float32")
    ta = torch.from_numpy(a)
    # a transposed input, a float64 weight on float32 input, half, complex, an empty row set
    np.testing.assert_allclose(F.rms_norm(ptcore.from_numpy(a).t(), (4,)).numpy(),
                               torch.nn.functional.rms_norm(ta.t(), (4,)).numpy(), rtol=2e-6)
    w64 = rng.standard_normal(6)
    got = F.rms_norm(ptcore.from_numpy(a), (6,), ptcore.from_numpy(w64))
    want = torch.nn.functional.rms_norm(ta, (6,), torch.from_numpy(w64))
    assert got.dtype == ptcore.float32 and want.dtype == torch.float32     # (the input's)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)
    h = F.rms_norm(ptcore.from_numpy(a).half(), (6,))
    assert h.dtype == ptcore.float16
    np.testing.assert_allclose(h.float().numpy(),
                               torch.nn.functional.rms_norm(ta.half(), (6,)).float().numpy(),
                               rtol=1e-3, atol=1e-3)
    z = F.rms_norm(ptcore.empty(0, 6), (6,))
    assert tuple(z.shape) == (0, 6)
    c = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype("complex64")
    np.testing.assert_allclose(F.rms_norm(ptcore.from_numpy(c), (4,)).numpy(),
                               torch.nn.functional.rms_norm(torch.from_numpy(c), (4,)).numpy(),
                               rtol=1e-5, atol=1e-6)
    # the module
    m = ptcore.nn.RMSNorm(6)
    tm = torch.nn.RMSNorm(6)
    np.testing.assert_allclose(m(ptcore.from_numpy(a)).detach().numpy(),
                               tm(ta).detach().numpy(), rtol=2e-6, atol=1e-7)


def test_kernel_entries_refuse_mismatched_sizes():
    # (the row count times the row length is checked without overflow against the input)
    from ptcore._ops.kernels import _norm as K
    x, y, r = ptcore.randn(4, 6), ptcore.empty(4, 6), ptcore.empty(4)
    for R, n in ((2 ** 62, 4), (4, 7), (0, 6), (-1, 6)):
        with pytest.raises(ValueError, match="rows of"):
            K.rms_norm_forward(x, R, n, None, y, r, 1e-5)
        with pytest.raises(ValueError, match="rows of"):
            K.rms_norm_backward(x, x, R, n, None, r, y, None)
    with pytest.raises(ValueError, match="weight"):
        K.rms_norm_forward(x, 4, 6, ptcore.randn(5), y, r, 1e-5)
    with pytest.raises(TypeError, match="dtype"):
        K.rms_norm_forward(x.double(), 4, 6, None, y, r, 1e-5)
