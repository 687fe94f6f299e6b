"""ptcore's float32 GEMM (ptcore/_ops/kernels/include/ptc_sgemm.h) against NumPy in float64.

Every micro-kernel the CPU has (AVX-512F 32x12, AVX2+FMA 16x6) and the BLAS
fallback run the same products: all four transpositions (through transposed
views), alpha/beta (addmm, baddbmm), edge tiles in every dimension, inner
dimensions across the cache blocks, NaN in an output that beta = 0 must
ignore, and the thread-count independence of the results."""
import sys

import numpy as np
import pytest

import ptcore
from guard_pages import Guarded
from ptcore._ops import linalg as _linalg_ops


def _available_isas():
    got = []
    for isa in (0, 1, 2):
        if _linalg_ops._set_sgemm_isa(isa) == isa:
            got.append(isa)
    _linalg_ops._set_sgemm_isa(-1)
    return got


ISAS = _available_isas()


@pytest.fixture(params=ISAS, ids=lambda i: {0: "blas", 1: "avx2", 2: "avx512"}[i])
def isa(request):
    assert _linalg_ops._set_sgemm_isa(request.param) == request.param
    yield request.param
    _linalg_ops._set_sgemm_isa(-1)


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def _check(got, want, k):
    # float32 FMA chains over k terms of size ~1: error grows like sqrt(k) ulp
    tol = 4e-6 * max(1.0, np.sqrt(k)) * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=0, atol=tol)


# (m, k, n): row-major A (m, k) @ B (k, n); sizes straddle the 32/16-row,
# 12/6-column tiles and the 256/384 inner blocks, all above the 64**3
# multiply-adds at which the own kernels take over
SHAPES = [(64, 64, 64), (65, 128, 768), (33, 385, 37), (100, 769, 50), (255, 300, 17),
          (17, 1000, 300), (128, 784, 512), (700, 64, 13)]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_mm_layouts(isa, m, k, n, ta, tb):
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    pa = ptcore.from_numpy(np.ascontiguousarray(a.T)).t() if ta else ptcore.from_numpy(a)
    pb = ptcore.from_numpy(np.ascontiguousarray(b.T)).t() if tb else ptcore.from_numpy(b)
    assert pa.is_contiguous() != ta and pb.is_contiguous() != tb
    _check(ptcore.mm(pa, pb).numpy(), _ref(a, b), k)


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, -2.0), (2.0, 0.0), (0.0, 3.0)])
def test_addmm_alpha_beta(isa, alpha, beta):
    rng = np.random.default_rng(5)
    m, k, n = 97, 300, 61
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    if beta == 0.0:
        c[3, 4] = np.nan          # beta == 0 ignores the input, NaN included
        c[10, :] = np.inf
    got = ptcore.addmm(ptcore.from_numpy(c), ptcore.from_numpy(a), ptcore.from_numpy(b),
                       beta=beta, alpha=alpha).numpy()
    want = alpha * _ref(a, b) + (0.0 if beta == 0.0 else beta * c.astype(np.float64))
    assert np.isfinite(got).all()
    _check(got, want, k)


def test_baddbmm_and_linear(isa):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 70, 200)).astype(np.float32)
    y = rng.standard_normal((3, 200, 45)).astype(np.float32)
    c = rng.standard_normal((3, 70, 45)).astype(np.float32)
    got = ptcore.baddbmm(ptcore.from_numpy(c), ptcore.from_numpy(x), ptcore.from_numpy(y),
                         beta=0.25, alpha=1.5).numpy()
    _check(got, 1.5 * np.einsum("bij,bjk->bik", x.astype(np.float64), y) + 0.25 * c, 200)
    w = rng.standard_normal((130, 200)).astype(np.float32)
    bias = rng.standard_normal(130).astype(np.float32)
    got = ptcore.nn.functional.linear(ptcore.from_numpy(x[0]), ptcore.from_numpy(w),
                                      ptcore.from_numpy(bias)).numpy()
    _check(got, _ref(x[0], w.T) + bias, 200)


def test_conv_and_rnn_use_it(isa):
    """A convolution and an LSTM whose GEMMs are above the threshold agree
    with float64 references (NumPy im2col; the BLAS path in float64)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 64, 12, 12)).astype(np.float32)
    w = rng.standard_normal((96, 64, 3, 3)).astype(np.float32)
    got = ptcore.nn.functional.conv2d(ptcore.from_numpy(x), ptcore.from_numpy(w),
                                      padding=1).numpy()
    want = ptcore.nn.functional.conv2d(ptcore.from_numpy(x.astype(np.float64)),
                                       ptcore.from_numpy(w.astype(np.float64)), padding=1).numpy()
    _check(got, want, 64 * 9)
    lstm = ptcore.nn.LSTM(128, 256)
    lstm64 = ptcore.nn.LSTM(128, 256).double()
    lstm64.load_state_dict({k: v.double() for k, v in lstm.state_dict().items()})
    seq = rng.standard_normal((5, 24, 128)).astype(np.float32)
    out = lstm(ptcore.from_numpy(seq))[0].detach().numpy()
    out64 = lstm64(ptcore.from_numpy(seq.astype(np.float64)))[0].detach().numpy()
    np.testing.assert_allclose(out, out64, rtol=0, atol=2e-5)


def test_thread_count_independent(isa):
    """Products split into thread tiles give the one-thread bits."""
    rng = np.random.default_rng(11)
    a = ptcore.from_numpy(rng.standard_normal((300, 700)).astype(np.float32))
    b = ptcore.from_numpy(rng.standard_normal((700, 500)).astype(np.float32))
    bt = ptcore.from_numpy(np.ascontiguousarray(rng.standard_normal((500, 700)).astype(np.float32)))
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = [ptcore.mm(a, b).numpy(), ptcore.mm(a, bt.t()).numpy()]
        ptcore.set_num_threads(2)
        two = [ptcore.mm(a, b).numpy(), ptcore.mm(a, bt.t()).numpy()]
    finally:
        ptcore.set_num_threads(old)
    for x, y in zip(one, two):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("m,k,n", [(20, 128, 512), (20, 64, 512), (512, 96, 21), (33, 200, 250),
                                   (600, 40, 40), (128, 784, 512), (768, 128, 384),
                                   (20, 256, 1024)])
def test_products_split_thread_independent(isa, m, k, n):
    """Float32 products from 2 * 1.25 * 64**3 multiply-adds up (a recurrent
    cell's Linear, an MLP's, a transformer's) are shared by the threads in
    tiles of the packed operand's dimension (or the longer side): the
    one-thread bits, with bias (addmm), transposed operands and 3 threads
    too; values against float64."""
    rng = np.random.default_rng(m + k + n)
    x = ptcore.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    w = ptcore.from_numpy(rng.standard_normal((n, k)).astype(np.float32))
    bias = ptcore.from_numpy(rng.standard_normal(n).astype(np.float32))
    xt = ptcore.from_numpy(np.ascontiguousarray(x.numpy().T)).t()
    F = ptcore.nn.functional

    def run():
        return [F.linear(x, w, bias).numpy(), ptcore.mm(x, w.t()).numpy(),
                ptcore.mm(xt, w.t()).numpy()]

    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(1)
        one = run()
        got = []
        for nt in (2, 3):
            ptcore.set_num_threads(nt)
            got.append(run())
    finally:
        ptcore.set_num_threads(old)
    for res in got:
        for a, b in zip(one, res):
            assert np.array_equal(a, b)
    ref = _ref(x.numpy(), w.numpy().T)
    _check(one[1], ref, k)
    _check(one[0], ref + bias.numpy().astype(np.float64), k)


# (m, k, n) of products whose operands the kernels may read in place: full
# and partial 32/16-row panels and 12/6-column tiles, one and two k blocks,
# and an A panel too large for the default's in-place rule
DIRECT_SHAPES = [(64, 64, 64), (77, 130, 29), (384, 128, 768), (129, 500, 13), (33, 769, 50),
                 (17, 1000, 300), (600, 300, 7)]


@pytest.mark.parametrize("m,k,n", DIRECT_SHAPES)
@pytest.mark.parametrize("offset", [0, 3])
def test_in_place_operands_same_bits(isa, m, k, n, offset):
    """Operands read in place (no packing: A with contiguous columns, B
    either way) give the packed path's bits in every mode, for all four
    transpositions, alpha/beta, and columns that start off a 64-byte line
    (views at an offset, leading dimensions not a multiple of 16); values
    against float64."""
    if isa == 0:
        pytest.skip("the BLAS path has no packing")
    rng = np.random.default_rng(m * 3 + k + n)

    def view(rows, cols, trans):
        # a (rows, cols) operand, transposed storage when ``trans``, inside a
        # larger buffer at an offset (so lda = cols + 5 or rows + 5)
        if trans:
            buf = rng.standard_normal((cols, rows + 5)).astype(np.float32)
            return ptcore.from_numpy(buf)[:, offset:offset + rows].t()
        buf = rng.standard_normal((rows, cols + 5)).astype(np.float32)
        return ptcore.from_numpy(buf)[:, offset:offset + cols]

    c0 = rng.standard_normal((m, n)).astype(np.float32)
    try:
        for ta in (False, True):
            for tb in (False, True):
                a, b = view(m, k, ta), view(k, n, tb)
                got = []
                for mode in (0, 1, 2, 3, 4):
                    assert _linalg_ops._set_sgemm_direct(mode) == mode
                    got.append([ptcore.mm(a, b).numpy(),
                                ptcore.addmm(ptcore.from_numpy(c0), a, b, beta=0.5,
                                             alpha=-1.5).numpy()])
                for res in got[1:]:
                    for x, y in zip(got[0], res):
                        assert np.array_equal(x, y), (ta, tb)
                want = _ref(a.numpy(), b.numpy())
                _check(got[0][0], want, k)
                _check(got[0][1], -1.5 * want + 0.5 * c0, k)
    finally:
        _linalg_ops._set_sgemm_direct(1)


@pytest.mark.parametrize("k", [512, 1024, 1536, 2048])
def test_aliasing_leading_dimension_packs_same_bits(isa, k):
    """A B operand whose leading dimension puts more than 4 of a tile's
    columns at one offset within 4 KiB (a multiple of 1024 floats: a
    convolution weight with C*kh*kw = 1024; with AVX-512's 12-column tiles
    also 512 modulo 1024) is packed by default rather than read in place
    (its columns alias in L1); at 512 modulo 1024 the AVX2 kernel's 6
    columns take two offsets and are read in place: the same bits as both
    forced modes either way, values against float64."""
    if isa == 0:
        pytest.skip("the BLAS path has no packing")
    rng = np.random.default_rng(k)
    a = ptcore.from_numpy(rng.standard_normal((40, k)).astype(np.float32))
    b = ptcore.from_numpy(rng.standard_normal((k, 100)).astype(np.float32))
    try:
        got = []
        for mode in (1, 0, 4):
            assert _linalg_ops._set_sgemm_direct(mode) == mode
            got.append(ptcore.mm(a, b).numpy())
    finally:
        _linalg_ops._set_sgemm_direct(1)
    assert np.array_equal(got[0], got[1]) and np.array_equal(got[0], got[2])
    _check(got[0], _ref(a.numpy(), b.numpy()), k)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through ctypes")
def test_in_place_operands_stay_inside(isa):
    """Operands read in place never read past their ends: each ends right
    before (or starts right after) an inaccessible page, for every
    transposition and partial panels and tiles in both dimensions."""
    if isa == 0:
        pytest.skip("the BLAS path has no packing")
    g = Guarded()
    rng = np.random.default_rng(17)
    try:
        assert _linalg_ops._set_sgemm_direct(2) == 2
        for m, k, n in [(77, 130, 29), (64, 64, 64), (129, 500, 13), (40, 9, 1000)]:
            for at_end in (True, False):
                for ta in (False, True):
                    for tb in (False, True):
                        a = g.place(rng.standard_normal((k, m) if ta else (m, k))
                                    .astype(np.float32), at_end)
                        b = g.place(rng.standard_normal((n, k) if tb else (k, n))
                                    .astype(np.float32), at_end)
                        pa = ptcore.from_numpy(a).t() if ta else ptcore.from_numpy(a)
                        pb = ptcore.from_numpy(b).t() if tb else ptcore.from_numpy(b)
                        na, nb = (a.T if ta else a), (b.T if tb else b)
                        _check(ptcore.mm(pa, pb).numpy(), _ref(na, nb), k)
    finally:
        _linalg_ops._set_sgemm_direct(1)


def test_forcing_an_isa_never_exceeds_the_cpu():
    best = _linalg_ops._set_sgemm_isa(-1)
    assert best in (0, 1, 2)
    assert _linalg_ops._set_sgemm_isa(2) <= best
    assert _linalg_ops._set_sgemm_isa(1) <= max(best, 0)
    assert _linalg_ops._set_sgemm_isa(0) == 0
    _linalg_ops._set_sgemm_isa(-1)


def test_env_choice_is_validated(monkeypatch):
    import importlib
    import ptcore._config as cfg
    monkeypatch.setenv("PTCORE_SGEMM", "fast")
    with pytest.raises(ValueError, match="PTCORE_SGEMM"):
        importlib.reload(cfg)
    monkeypatch.setenv("PTCORE_SGEMM", "BLAS")
    importlib.reload(cfg)
    assert cfg.SGEMM_ISA == 0
    monkeypatch.delenv("PTCORE_SGEMM")
    importlib.reload(cfg)
    assert cfg.SGEMM_ISA == -1


def test_packing_buffers_freed_with_their_thread():
    """Each thread's packing buffers (~1.8 MB here) go when the thread ends:
    150 short-lived threads doing one product each leave no trace in RSS."""
    import threading

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    import os
    if ISAS[-1] == 0:
        pytest.skip("no own GEMM kernels on this CPU")
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc/self/statm (Linux) to read the resident set size")
    rng = np.random.default_rng(2)
    a = ptcore.from_numpy(rng.standard_normal((1000, 384)).astype(np.float32))
    b = ptcore.from_numpy(rng.standard_normal((384, 1000)).astype(np.float32))
    old = ptcore.get_num_threads()
    ptcore.set_num_threads(1)       # the product runs on the calling thread
    try:
        want = ptcore.mm(a, b).numpy()

        def work(out, i):
            out[i] = bool(np.array_equal(ptcore.mm(a, b).numpy(), want))

        for _ in range(10):                     # allocator warm-up
            t = threading.Thread(target=work, args=({}, 0))
            t.start()
            t.join()
        before = rss()
        res = {}
        for i in range(150):
            t = threading.Thread(target=work, args=(res, i))
            t.start()
            t.join()
        grown = rss() - before
    finally:
        ptcore.set_num_threads(old)
    assert all(res[i] for i in range(150))
    assert grown < 100 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB over 150 threads"


def _row_bias_cases(rng):
    # (m, k, n): the GEMM's column-major m is n here (the bias index); edge
    # tiles in both dimensions, one k block and several, a product below the
    # own GEMM's threshold (BLAS, the bias copied first)
    for m, k, n in [(97, 300, 61), (768, 128, 384), (64, 64, 64), (33, 800, 45),
                    (130, 70, 13), (5, 8, 7)]:
        yield m, k, n, rng.standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_addmm_row_bias_read_in_place(isa, threads):
    """addmm with a row-vector input (a Linear's bias) reads the vector in
    the product's first k block instead of copying it into the output: the
    bits of addmm with the same input expanded into a full matrix, for all
    transpositions, alpha/beta, the in-place/packed operand modes, thread
    counts, a (1, N) input and a strided one (the copy path); values against
    float64."""
    rng = np.random.default_rng(23 + threads)
    old = ptcore.get_num_threads()
    ptcore.set_num_threads(threads)
    try:
        for m, k, n, bias in _row_bias_cases(rng):
            a0 = rng.standard_normal((m, k)).astype(np.float32)
            b0 = rng.standard_normal((k, n)).astype(np.float32)
            full = ptcore.from_numpy(np.ascontiguousarray(np.broadcast_to(bias, (m, n))))
            pbias = ptcore.from_numpy(bias)
            for ta in (False, True):
                for tb in (False, True):
                    a = ptcore.from_numpy(np.ascontiguousarray(a0.T)).t() if ta \
                        else ptcore.from_numpy(a0)
                    b = ptcore.from_numpy(np.ascontiguousarray(b0.T)).t() if tb \
                        else ptcore.from_numpy(b0)
                    for alpha, beta in [(1, 1), (0.5, -2.0), (0.0, 3.0)]:
                        want = ptcore.addmm(full, a, b, alpha=alpha, beta=beta).numpy()
                        for mode in (1, 0, 2) if isa else (1,):
                            _linalg_ops._set_sgemm_direct(mode)
                            got = ptcore.addmm(pbias, a, b, alpha=alpha, beta=beta).numpy()
                            assert np.array_equal(got, want), (m, k, n, ta, tb, alpha, mode)
                        _linalg_ops._set_sgemm_direct(1)
                        _check(want, alpha * _ref(a0, b0) + beta * bias.astype(np.float64), k)
            got = ptcore.addmm(pbias.view(1, n), ptcore.from_numpy(a0), ptcore.from_numpy(b0))
            assert np.array_equal(got.numpy(), ptcore.addmm(full, ptcore.from_numpy(a0),
                                                            ptcore.from_numpy(b0)).numpy())
            strided = ptcore.from_numpy(np.repeat(bias, 2))[::2]
            got = ptcore.addmm(strided, ptcore.from_numpy(a0), ptcore.from_numpy(b0))
            _check(got.numpy(), _ref(a0, b0) + bias, k)
        # NaN/inf in the bias with beta = 0: ignored, as torch
        m, k, n = 70, 200, 40
        bias = np.full(n, np.nan, dtype=np.float32)
        a0 = rng.standard_normal((m, k)).astype(np.float32)
        b0 = rng.standard_normal((k, n)).astype(np.float32)
        got = ptcore.addmm(ptcore.from_numpy(bias), ptcore.from_numpy(a0), ptcore.from_numpy(b0),
                           beta=0).numpy()
        _check(got, _ref(a0, b0), k)
    finally:
        ptcore.set_num_threads(old)
        _linalg_ops._set_sgemm_direct(1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through ctypes")
def test_addmm_row_bias_stays_inside(isa):
    """The bias vector read by the product never reads past either end
    (edge tiles of every size in its dimension)."""
    g = Guarded()
    rng = np.random.default_rng(29)
    for m, k, n in [(77, 130, 29), (64, 64, 64), (129, 500, 13), (40, 90, 1000), (50, 70, 33)]:
        for at_end in (True, False):
            bias = g.place(rng.standard_normal(n).astype(np.float32), at_end)
            a0 = rng.standard_normal((m, k)).astype(np.float32)
            b0 = rng.standard_normal((k, n)).astype(np.float32)
            got = ptcore.addmm(ptcore.from_numpy(bias), ptcore.from_numpy(a0),
                               ptcore.from_numpy(b0)).numpy()
            _check(got, _ref(a0, b0) + bias, k)


# row-major (m, k, n) with m <= 64 rows and B = W^T a transposed view: the
# GEMM's column-major product has few columns and op(A) = A^T, computed as
# its transpose (ptc_sgemm_swapped); 8-column blocks and remainders, one k
# block and several, more than 2048 output columns (chunks)
SWAP_SHAPES = [(20, 256, 1024), (20, 64, 1024), (1, 300, 200), (7, 33, 95), (64, 700, 130),
               (63, 129, 2500), (33, 1000, 300), (8, 64, 16)]


@pytest.mark.parametrize("m,k,n", SWAP_SHAPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_few_rows_times_transposed_weight(isa, m, k, n, threads):
    """x @ W.t() over a small batch (a Linear's forward, mm, addmm with a
    full input or a row-vector bias, alpha/beta, x contiguous or a
    transposed view) computed as the transposed product: the bits of the
    packed path (mode 0) at 1 and 2 threads; values against float64."""
    if isa == 0:
        pytest.skip("the BLAS path has no packing")
    rng = np.random.default_rng(m * 5 + k + n)
    x0 = rng.standard_normal((m, k)).astype(np.float32)
    w0 = rng.standard_normal((n, k)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    b0 = rng.standard_normal(n).astype(np.float32)
    w = ptcore.from_numpy(w0)
    old = ptcore.get_num_threads()
    F = ptcore.nn.functional

    def run(x):
        return [ptcore.mm(x, w.t()).numpy(), F.linear(x, w, ptcore.from_numpy(b0)).numpy(),
                ptcore.addmm(ptcore.from_numpy(c0), x, w.t(), beta=0.5, alpha=-1.5).numpy(),
                ptcore.addmm(ptcore.from_numpy(b0), x, w.t(), beta=2.0, alpha=0.25).numpy()]

    try:
        ptcore.set_num_threads(threads)
        for x in (ptcore.from_numpy(x0), ptcore.from_numpy(np.ascontiguousarray(x0.T)).t()):
            got = []
            for mode in (0, 1):
                assert _linalg_ops._set_sgemm_direct(mode) == mode
                got.append(run(x))
            for a, b in zip(*got):
                assert np.array_equal(a, b)
            want = _ref(x0, w0.T)
            _check(got[1][0], want, k)
            _check(got[1][1], want + b0, k)
            _check(got[1][2], -1.5 * want + 0.5 * c0, k)
            _check(got[1][3], 0.25 * want + 2.0 * b0, k)
    finally:
        ptcore.set_num_threads(old)
        _linalg_ops._set_sgemm_direct(1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through ctypes")
def test_few_rows_times_transposed_weight_stays_inside(isa):
    """The transposed product reads W and x only inside their buffers."""
    if isa == 0:
        pytest.skip("the BLAS path has no packing")
    g = Guarded()
    rng = np.random.default_rng(31)
    for m, k, n in [(20, 64, 1024), (7, 33, 95), (3, 129, 2100)]:
        for at_end in (True, False):
            x0 = g.place(rng.standard_normal((m, k)).astype(np.float32), at_end)
            w0 = g.place(rng.standard_normal((n, k)).astype(np.float32), at_end)
            got = ptcore.mm(ptcore.from_numpy(x0), ptcore.from_numpy(w0).t()).numpy()
            _check(got, _ref(x0, w0.T), k)
