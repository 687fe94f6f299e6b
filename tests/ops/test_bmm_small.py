"""Batched float32 products by the small-GEMM kernels (ptc_sgemm_small.h) in
``ptcore._ops._blas``: values against NumPy (float64 reference), every
operand layout (transposed, sliced, expanded), ``baddbmm`` accumulation,
odd sizes around the kernel's 4 x 16 tiles, the same bits with the knob off
(BLAS) up to float32 rounding and the same bits at 1 and 2 threads."""
import numpy as np
import pytest

import ptcore
from ptcore._ops import _blas


def _ref(a, b):
    return np.matmul(a.numpy().astype(np.float64), b.numpy().astype(np.float64))


def _operand(rng, shape, layout):
    """A (B, R, C) float32 operand laid out as ``layout``."""
    B, R, C = shape
    if layout == "contig":
        return ptcore.from_numpy(rng.standard_normal((B, R, C)).astype(np.float32))
    if layout == "t":            # a transpose of a contiguous (B, C, R)
        return ptcore.from_numpy(rng.standard_normal((B, C, R)).astype(np.float32)).transpose(1, 2)
    if layout == "slice":        # rows of a wider matrix (the head split of attention)
        return ptcore.from_numpy(rng.standard_normal((B, R, C + 5)).astype(np.float32))[:, :, 2:C + 2]
    if layout == "expand":       # one matrix for every batch element
        return ptcore.from_numpy(rng.standard_normal((1, R, C)).astype(np.float32)).expand(B, R, C)
    raise AssertionError(layout)


def _close(got, want):
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(want).max()))


LAYOUTS = ["contig", "t", "slice", "expand"]


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("B,M,K,N", [(48, 64, 32, 64), (3, 64, 64, 32), (5, 7, 9, 17),
                                     (2, 4, 8, 16), (4, 33, 13, 47)])
def test_small_bmm_layouts(la, lb, B, M, K, N):
    rng = np.random.default_rng(B * 1000 + M + K + N)
    a = _operand(rng, (B, M, K), la)
    b = _operand(rng, (B, K, N), lb)
    _close(ptcore.bmm(a, b), _ref(a, b))
    _close(a @ b, _ref(a, b))


def test_small_bmm_matches_blas_and_threads():
    rng = np.random.default_rng(1)
    a = _operand(rng, (12, 64, 32), "slice")
    b = _operand(rng, (12, 32, 64), "t")
    old_threads = ptcore.get_num_threads()
    old = _blas._set_small_bmm(False)
    try:
        want = (a @ b).numpy()
        _blas._set_small_bmm(True)
        ptcore.set_num_threads(1)
        one = (a @ b).numpy()
        ptcore.set_num_threads(2)
        two = (a @ b).numpy()
    finally:
        _blas._set_small_bmm(old)
        ptcore.set_num_threads(old_threads)
    np.testing.assert_array_equal(one, two)          # thread-count independent
    np.testing.assert_allclose(one, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    _close(ptcore.from_numpy(one), _ref(a, b))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 1), (0.5, 1), (1, 2.0)])
def test_small_baddbmm(beta, alpha):
    rng = np.random.default_rng(2)
    a = _operand(rng, (6, 20, 24), "t")
    b = _operand(rng, (6, 24, 40), "contig")
    c = ptcore.from_numpy(rng.standard_normal((6, 20, 40)).astype(np.float32))
    want = beta * c.numpy().astype(np.float64) + alpha * _ref(a, b)
    _close(ptcore.baddbmm(c, a, b, beta=beta, alpha=alpha), want)


def test_small_bmm_beta0_ignores_nan_and_out():
    rng = np.random.default_rng(3)
    a = _operand(rng, (4, 16, 16), "contig")
    b = _operand(rng, (4, 16, 32), "t")
    c = ptcore.full((4, 16, 32), float("nan"))
    got = ptcore.baddbmm(c, a, b, beta=0)
    _close(got, _ref(a, b))
    out = ptcore.empty(4, 16, 32)
    ptcore.bmm(a, b, out=out)
    _close(out, _ref(a, b))


def test_small_bmm_against_torch_and_grads():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 3, 64, 32)).astype(np.float32)
    k = rng.standard_normal((2, 3, 64, 32)).astype(np.float32)
    pq = ptcore.from_numpy(q).requires_grad_()
    pk = ptcore.from_numpy(k).requires_grad_()
    tq = torch.from_numpy(q).requires_grad_()
    tk = torch.from_numpy(k).requires_grad_()
    ps = pq @ pk.transpose(-2, -1)
    ts = tq @ tk.transpose(-2, -1)
    np.testing.assert_allclose(ps.detach().numpy(), ts.detach().numpy(), rtol=1e-5, atol=1e-5)
    (ps * ps).sum().backward()
    (ts * ts).sum().backward()
    np.testing.assert_allclose(pq.grad.numpy(), tq.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(pk.grad.numpy(), tk.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_small_bmm_special_values():
    a = ptcore.ones(3, 8, 8)
    b = ptcore.ones(3, 8, 16)
    a[1, 2, 3] = float("inf")
    b[2, 0, 5] = float("nan")
    got = ptcore.bmm(a, b).numpy()
    want = np.matmul(a.numpy(), b.numpy())
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)])
    assert np.isinf(got[1, 2]).all()
