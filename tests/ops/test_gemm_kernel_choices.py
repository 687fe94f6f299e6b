"""The GEMM-dependent operations under every float32 GEMM kernel this CPU can run.

ptcore's float32 products above 64**3 multiply-adds run its own GEMM (ptc_sgemm.h) with
the AVX-512F or AVX2+FMA micro-kernels, whichever the CPU has, or the BLAS's sgemm
(PTCORE_SGEMM).  Each test here runs once per choice (the ``sgemm_kernel`` fixture of
tests/conftest.py switches it in-process; a choice the CPU cannot run is skipped), so the
kernels another machine would pick are tested here too: the matmul family, linear,
einsum, convolutions and the linear algebra whose gradients are products (inv, det —
also at a singular matrix, through the SVD — slogdet, solve), forward and backward, in
float32 against torch in float64.
"""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("sgemm_kernel")


def _pair(*arrays):
    ps = [ptcore.from_numpy(a.astype(np.float32)).requires_grad_() for a in arrays]
    ts = [torch.from_numpy(a.astype(np.float64)).requires_grad_() for a in arrays]
    return ps, ts


def _close(got, want, k, scale=None):
    """float32 sums of ``k`` products against float64: error ~ sqrt(k) float32 ulps of the
    result's scale."""
    got = got.detach().to(ptcore.float64).numpy()
    want = want.detach().numpy()
    scale = scale or max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * max(1.0, np.sqrt(k)) * scale)


def _check(f, arrays, k, seed=0):
    """f(M, *tensors) forward and its gradients (a random cotangent) against torch."""
    ps, ts = _pair(*arrays)
    yp, yt = f(ptcore, *ps), f(torch, *ts)
    _close(yp, yt, k)
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    gp = ptcore.autograd.grad(yp, ps, ptcore.from_numpy(g.astype(np.float32)))
    gt = torch.autograd.grad(yt, ts, torch.from_numpy(g))
    for a, b in zip(gp, gt):
        _close(a, b, k * 4)


_R = np.random.default_rng(5)


def _r(*shape):
    return _R.standard_normal(shape)


@pytest.mark.parametrize("name, f, arrays, k", [
    ("mm", lambda M, a, b: a @ b, (_r(128, 96), _r(96, 80)), 96),
    ("mm_transposed", lambda M, a, b: a.mT @ b.mT, (_r(96, 128), _r(80, 96)), 96),
    ("bmm", lambda M, a, b: M.bmm(a, b), (_r(4, 64, 96), _r(4, 96, 72)), 96),
    ("matmul_broadcast", lambda M, a, b: M.matmul(a, b), (_r(2, 3, 64, 96), _r(96, 80)), 96),
    ("addmm", lambda M, c, a, b: M.addmm(c, a, b, beta=0.5, alpha=2.0),
     (_r(128, 80), _r(128, 96), _r(96, 80)), 96),
    ("baddbmm", lambda M, c, a, b: M.baddbmm(c, a, b, beta=-1.0, alpha=0.5),
     (_r(3, 64, 72), _r(3, 64, 96), _r(3, 96, 72)), 96),
    ("linear", lambda M, x, w, b: M.nn.functional.linear(x, w, b),
     (_r(64, 128), _r(96, 128), _r(96)), 128),
    ("einsum", lambda M, a, b: M.einsum("bij,bjk->bik", a, b),
     (_r(3, 64, 96), _r(3, 96, 64)), 96),
    ("tensordot", lambda M, a, b: M.tensordot(a, b, dims=([1, 2], [0, 1])),
     (_r(64, 12, 8), _r(12, 8, 96)), 96),
])
def test_matmul_family(name, f, arrays, k):
    _check(f, arrays, k)


@pytest.mark.parametrize("name, f, arrays, k", [
    ("conv1d", lambda M, x, w: M.nn.functional.conv1d(x, w, padding=1),
     (_r(4, 32, 100), _r(48, 32, 3)), 96),
    ("conv2d", lambda M, x, w, b: M.nn.functional.conv2d(x, w, b, stride=1, padding=1),
     (_r(2, 16, 24, 24), _r(32, 16, 3, 3), _r(32)), 144),
    ("conv2d_strided_dilated", lambda M, x, w: M.nn.functional.conv2d(
        x, w, stride=2, padding=2, dilation=2), (_r(2, 24, 30, 30), _r(40, 24, 3, 3)), 216),
    ("conv2d_groups", lambda M, x, w: M.nn.functional.conv2d(x, w, padding=1, groups=2),
     (_r(2, 32, 20, 20), _r(64, 16, 3, 3)), 144),
    ("conv3d", lambda M, x, w: M.nn.functional.conv3d(x, w, padding=1),
     (_r(2, 8, 10, 10, 10), _r(16, 8, 3, 3, 3)), 216),
    ("conv_transpose2d", lambda M, x, w: M.nn.functional.conv_transpose2d(
        x, w, stride=2, padding=1), (_r(2, 32, 16, 16), _r(32, 24, 4, 4)), 512),
])
def test_convolutions(name, f, arrays, k):
    _check(f, arrays, k)


def _well_conditioned(n, batch=()):
    return _R.standard_normal(batch + (n, n)) + 3 * np.sqrt(n) * np.eye(n)


@pytest.mark.parametrize("name, f", [
    ("inv", lambda M, a: M.linalg.inv(a)),
    ("solve", lambda M, a: M.linalg.solve(a, M.ones(a.shape[-1], 8, dtype=a.dtype))),
    ("slogdet", lambda M, a: M.linalg.slogdet(a).logabsdet),
    ("det_scaled", lambda M, a: M.linalg.det(a / 30)),
])
def test_linalg_gradients(name, f):
    _check(f, (_well_conditioned(96),), 96 * 8)


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    # rank 95 of 96: |det| < 100 eps, so the recorded gradient (create_graph, as torch's)
    # goes through the SVD and its 96 x 96 product (U * D) @ Vh: the cofactor matrix
    U, _ = np.linalg.qr(_R.standard_normal((96, 96)))
    Vh, _ = np.linalg.qr(_R.standard_normal((96, 96)))
    S = np.r_[np.linspace(1.2, 0.8, 95), 0.0]       # the other singular values: product ~1
    a = (U * S) @ Vh
    others = np.array([np.prod(np.delete(S, i)) for i in range(96)])
    cof = np.linalg.det(U) * np.linalg.det(Vh) * (U * others) @ Vh
    x = ptcore.from_numpy(a.astype(np.float32)).requires_grad_()
    d = ptcore.linalg.det(x)
    assert abs(float(d.detach())) < 100 * ptcore.finfo(ptcore.float32).eps
    g, = ptcore.autograd.grad(d, x, create_graph=True)
    np.testing.assert_allclose(g.detach().to(ptcore.float64).numpy(), cof, rtol=0,
                               atol=1e-4 * np.abs(cof).max())
