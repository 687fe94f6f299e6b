"""Single small float32 products (below 64**3 multiply-adds: a Linear's call on
a few rows, a decoder step) by the small-GEMM kernels of ptc_sgemm_small.h
instead of the BLAS: values against float64 for every operand layout, the
same bits on every instruction-set level and thread count, ``addmm`` of a
row bias with the bits of ``addmm`` of the expanded matrix and of ``mm`` +
``add``, a row's result independent of the row count, and the BLAS taking
over when the scratch copy cannot be allocated."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _blas, _fault

F = ptcore.nn.functional

# (M, K, N): tile edges on both ISAs (6 / 8 rows, 16 / 32 columns), the
# padded copy's row strides (N % 128 == 0), k tails, and 64**3 exactly
SHAPES = [(2, 8, 16), (5, 64, 192), (5, 64, 256), (3, 33, 47), (7, 100, 130),
          (9, 16, 128), (16, 64, 64), (4, 512, 128), (64, 64, 64), (6, 9, 17)]


def _ref(a, b):
    return a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)


def _close(got, want, k):
    got = got.numpy() if hasattr(got, "numpy") else got
    scale = np.abs(want).max() + 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-7 * k * scale)


def _matrix(rng, rows, cols, layout):
    """A float32 (rows, cols) matrix laid out as ``layout``."""
    if layout == "c":
        return ptcore.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    if layout == "t":       # a transpose (a Linear's weight.t())
        return ptcore.from_numpy(rng.standard_normal((cols, rows)).astype(np.float32)).t()
    if layout == "s":       # columns of a wider matrix
        return ptcore.from_numpy(rng.standard_normal((rows, cols + 6)).astype(np.float32))[:, 3:cols + 3]
    raise AssertionError(layout)


def _levels():
    best = _blas._set_small_level(0)
    return list(range(1, best + 1))


@pytest.fixture(autouse=True)
def _restore():
    threads = ptcore.get_num_threads()
    yield
    _blas._set_small_level(0)
    _blas._set_small_single(True)
    _fault._fail_scratch_allocs(0)
    ptcore.set_num_threads(threads)


@pytest.mark.parametrize("M,K,N", SHAPES)
@pytest.mark.parametrize("la,lb", [("c", "c"), ("c", "t"), ("t", "t"), ("s", "c"), ("c", "s")])
def test_values_every_layout(M, K, N, la, lb):
    rng = np.random.default_rng(M * 7 + K * 3 + N)
    a = _matrix(rng, M, K, la)
    b = _matrix(rng, K, N, lb)
    want = _ref(a, b)
    _close(a @ b, want, K)
    _close(ptcore.mm(a, b), want, K)
    # the transposed copy (b = w.t()) gives the bits of the product of a copy
    np.testing.assert_array_equal((a @ b).numpy(), (a @ b.contiguous()).numpy())


@pytest.mark.parametrize("M,K,N", SHAPES)
def test_same_bits_every_level_and_thread_count(M, K, N):
    """One FMA chain over k per element whatever the tile: the AVX2 and
    AVX-512 kernels and any thread count give the same bits (the bits of
    the own GEMM's too, where a product reaches it)."""
    rng = np.random.default_rng(M + K + N)
    a = _matrix(rng, M, K, "c")
    w = _matrix(rng, N, K, "c")
    bias = ptcore.from_numpy(rng.standard_normal(N).astype(np.float32))
    got = []
    for lv in _levels() or [0]:
        _blas._set_small_level(lv)
        for threads in (1, 2):
            ptcore.set_num_threads(threads)
            got.append((F.linear(a, w).numpy(), F.linear(a, w, bias).numpy()))
    for g in got[1:]:
        np.testing.assert_array_equal(g[0], got[0][0])
        np.testing.assert_array_equal(g[1], got[0][1])
    _close(got[0][0], _ref(a, w.t()), K)
    _close(got[0][1], _ref(a, w.t()) + bias.numpy(), K)


def test_a_row_does_not_depend_on_the_row_count():
    """A decoder's last position computed alone or with the rest of the
    sequence: the same bits (each element is the same chain)."""
    rng = np.random.default_rng(3)
    x = ptcore.from_numpy(rng.standard_normal((9, 64)).astype(np.float32))
    lin = ptcore.nn.Linear(64, 192)
    with ptcore.no_grad():
        full = lin(x)
        for rows in (2, 3, 5, 8):
            np.testing.assert_array_equal(lin(x[-rows:]).numpy(), full[-rows:].numpy())


@pytest.mark.parametrize("M,K,N", [(5, 64, 192), (7, 100, 130), (64, 64, 64), (2, 512, 256)])
@pytest.mark.parametrize("alpha,beta", [(1, 1), (0.5, -2.0), (0.0, 3.0), (1.5, 0.25), (2.0, 0)])
def test_addmm_row_bias_bits(M, K, N, alpha, beta):
    """addmm of a row vector (a Linear's bias, read in place) has the bits of
    addmm of the vector expanded into a full matrix, for each alpha/beta;
    with alpha = beta = 1 the bits of mm + add; beta = 0 ignores the input
    (NaN included)."""
    rng = np.random.default_rng(M + N)
    a = _matrix(rng, M, K, "c")
    b = _matrix(rng, K, N, "t")
    v = ptcore.from_numpy(rng.standard_normal(N).astype(np.float32))
    full = v.expand(M, N).contiguous()
    got = ptcore.addmm(v, a, b, alpha=alpha, beta=beta)
    np.testing.assert_array_equal(got.numpy(),
                                  ptcore.addmm(full, a, b, alpha=alpha, beta=beta).numpy())
    _close(got, beta * v.numpy().astype(np.float64) + alpha * _ref(a, b), K)
    if alpha == 1 and beta == 1:
        np.testing.assert_array_equal(got.numpy(), (ptcore.mm(a, b) + v).numpy())
    if beta == 0:
        nan = ptcore.full((N,), float("nan"))
        _close(ptcore.addmm(nan, a, b, alpha=alpha, beta=0), alpha * _ref(a, b), K)


def test_addmm_into_out_and_in_place():
    rng = np.random.default_rng(5)
    a = _matrix(rng, 6, 40, "c")
    b = _matrix(rng, 40, 70, "t")
    c = _matrix(rng, 6, 70, "c")
    want = 0.5 * c.numpy().astype(np.float64) + 2.0 * _ref(a, b)
    out = ptcore.empty(6, 70)
    ptcore.addmm(c, a, b, beta=0.5, alpha=2.0, out=out)
    _close(out, want, 40)
    c2 = c.clone()
    c2.addmm_(a, b, beta=0.5, alpha=2.0)
    np.testing.assert_array_equal(c2.numpy(), out.numpy())
    # a strided output (a column slice): written in place
    big = ptcore.zeros(6, 80)
    view = big[:, 5:75]
    view.copy_(c)
    view.addmm_(a, b, beta=0.5, alpha=2.0)
    np.testing.assert_array_equal(view.numpy(), out.numpy())
    assert big[:, :5].abs().sum().item() == 0 and big[:, 75:].abs().sum().item() == 0


def test_close_to_the_blas_path():
    rng = np.random.default_rng(6)
    for M, K, N in SHAPES:
        a = _matrix(rng, M, K, "c")
        b = _matrix(rng, K, N, "t")
        small = (a @ b).numpy()
        _blas._set_small_single(False)
        blas = (a @ b).numpy()
        _blas._set_small_single(True)
        np.testing.assert_allclose(small, blas, rtol=1e-5, atol=1e-5 * (np.abs(blas).max() + 1))


@pytest.mark.parametrize("beta", [0, 1])
def test_scratch_failure_falls_back_to_the_blas(beta):
    """Where the transposed copy (or addmm's product) cannot be allocated the
    BLAS computes the product: right values, no error."""
    rng = np.random.default_rng(7)
    a = _matrix(rng, 5, 64, "c")
    b = _matrix(rng, 64, 192, "t")
    c = _matrix(rng, 5, 192, "c")
    _fault._fail_scratch_allocs(-1)
    try:
        got = ptcore.addmm(c, a, b, beta=beta) if beta else a @ b
        n_failed = _fault._scratch_failures()
    finally:
        _fault._fail_scratch_allocs(0)
    want = _ref(a, b) + (c.numpy().astype(np.float64) if beta else 0)
    _close(got, want, 64)
    if _levels():
        assert n_failed >= 1


def test_special_values_propagate():
    a = ptcore.ones(4, 16)
    b = ptcore.ones(16, 32)
    a[1, 3] = float("inf")
    b[0, 5] = float("nan")
    got = (a @ b).numpy()
    want = a.numpy() @ b.numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isfinite(want)], want[np.isfinite(want)])


def test_linear_layers_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for M, K, N in [(5, 64, 192), (3, 256, 64), (8, 128, 128)]:
        x = rng.standard_normal((1, M, K)).astype(np.float32)
        w = rng.standard_normal((N, K)).astype(np.float32)
        bias = rng.standard_normal(N).astype(np.float32)
        px, pw, pb = (ptcore.from_numpy(t).requires_grad_() for t in (x, w, bias))
        tx, tw, tb = (torch.from_numpy(t).requires_grad_() for t in (x, w, bias))
        for args_p, args_t in [((px, pw), (tx, tw)), ((px, pw, pb), (tx, tw, tb))]:
            yp, yt = F.linear(*args_p), torch.nn.functional.linear(*args_t)
            np.testing.assert_allclose(yp.detach().numpy(), yt.detach().numpy(),
                                       rtol=1e-5, atol=1e-4)
            assert type(yp.grad_fn).__name__ == type(yt.grad_fn).__name__
            g = rng.standard_normal(yp.shape).astype(np.float32)
            gp = ptcore.autograd.grad(yp, args_p, ptcore.from_numpy(g))
            gt = torch.autograd.grad(yt, args_t, torch.from_numpy(g))
            for u, v in zip(gp, gt):
                np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-4, atol=1e-3)
