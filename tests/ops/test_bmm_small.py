"""Batched float32 products by the small-GEMM kernels (ptc_sgemm_small.h) in
``ptcore._ops.kernels._blas``: values against NumPy (float64 reference), every
operand layout (transposed, sliced, expanded), ``baddbmm`` accumulation,
odd sizes around the kernel's 4 x 16 tiles, the same bits with the knob off
(BLAS) up to float32 rounding and the same bits at 1 and 2 threads."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _blas


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


@pytest.mark.parametrize("lb", ["contig", "t"])
def test_small_bmm_scaled(lb):
    """alpha with beta = 0 (attention's scaled scores q k^T * scale) runs on
    the small kernels, the scaling applied to each product as it leaves the
    kernel: alpha * (a b) rounded once, as BLAS's alpha; values against
    float64, and the BLAS path's bits where its sum order matches."""
    rng = np.random.default_rng(4)
    a = _operand(rng, (48, 64, 32), "slice")
    b = _operand(rng, (48, 32, 64), lb)
    c = ptcore.full((48, 64, 64), float("nan"))
    alpha = 1.0 / np.sqrt(32.0)
    got = ptcore.baddbmm(c, a, b, beta=0, alpha=alpha)
    _close(got, alpha * _ref(a, b))
    prod = ptcore.bmm(a, b)
    np.testing.assert_array_equal(got.numpy(), (prod * alpha).numpy())


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


def _levels():
    """The instruction-set levels of the small-GEMM kernels this CPU runs."""
    best = _blas._set_small_level(0)
    return list(range(1, best + 1))


@pytest.mark.parametrize("B,M,K,N", [(3, 64, 32, 64), (2, 13, 9, 47), (2, 7, 33, 17),
                                     (2, 17, 8, 31), (2, 6, 16, 16), (2, 9, 40, 80)])
@pytest.mark.parametrize("lb", ["contig", "t", "slice"])
def test_small_bmm_levels_same_bits(B, M, K, N, lb):
    """Every element is one fused multiply-add chain over k in order, whatever
    the tile: the AVX2 tiles (6 x 16, scalar fmaf for the last N % 16 columns)
    and the AVX-512 tiles (8 x 32, then masked 16-column tiles) give the same
    bits; with beta=1 the chains start from C's values."""
    levels = _levels()
    if len(levels) < 2:
        pytest.skip("one small-GEMM instruction-set level on this CPU")
    rng = np.random.default_rng(M * 100 + K + N)
    a = _operand(rng, (B, M, K), "t")
    b = _operand(rng, (B, K, N), lb)
    c = ptcore.from_numpy(rng.standard_normal((B, M, N)).astype(np.float32))
    got = {}
    try:
        for lv in levels:
            assert _blas._set_small_level(lv) == lv
            got[lv] = ((a @ b).numpy(), ptcore.baddbmm(c, a, b).numpy())
    finally:
        _blas._set_small_level(0)
    for lv in levels[1:]:
        np.testing.assert_array_equal(got[lv][0], got[levels[0]][0])
        np.testing.assert_array_equal(got[lv][1], got[levels[0]][1])
    _close(ptcore.from_numpy(got[levels[0]][0]), _ref(a, b))
    _close(ptcore.from_numpy(got[levels[0]][1]), c.numpy().astype(np.float64) + _ref(a, b))


def test_small_bmm_transposed_copy_edges():
    """B = X^T with X's rows along k (q @ k^T) goes through the 8 x 8 vector
    transpose; sizes that are not multiples of 8 take its element edges, and
    the result equals the same product from a contiguous copy of B bit for bit."""
    rng = np.random.default_rng(5)
    for M, K, N in [(8, 8, 16), (9, 13, 21), (16, 31, 40), (5, 64, 64)]:
        x = ptcore.from_numpy(rng.standard_normal((3, N, K)).astype(np.float32))
        a = ptcore.from_numpy(rng.standard_normal((3, M, K)).astype(np.float32))
        bt = x.transpose(1, 2)
        np.testing.assert_array_equal((a @ bt).numpy(), (a @ bt.contiguous()).numpy())
        _close(a @ bt, _ref(a, bt))
