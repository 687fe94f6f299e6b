"""cuBLAS GEMM of the emulated device (ptcore.cuda.emulated.blas) through the
EmulatedDriver: cublasGemmStridedBatchedEx semantics (column-major, leading
dimensions, batch strides, N/T, alpha/beta, beta == 0 ignoring C) for every
supported type combination, compared with NumPy in float64."""
import ctypes

import numpy as np
import pytest

from ptcore.cuda.emulated import blas as B
from ptcore.cuda.emulated.driver import EmulatedDriver

R_32F, R_64F, R_16F, R_16BF = 0, 1, 2, 14


@pytest.fixture(scope="module")
def drv():
    return EmulatedDriver(1)


def _bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _bf16_val(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


STORE = {R_32F: np.float32, R_64F: np.float64, R_16F: np.float16, R_16BF: np.uint16}


def _host(x, t):
    """values (float64) -> storage array of type t, and the values it really holds (float64)."""
    if t == R_16BF:
        bits = _bf16_bits(x.astype(np.float32))
        return bits, _bf16_val(bits).astype(np.float64)
    a = x.astype(STORE[t])
    return a, a.astype(np.float64)


def _put(drv, arr):
    p = drv.mem_alloc(0, max(arr.nbytes, 8))
    drv.memcpy_htod(p, arr.ctypes.data, arr.nbytes, 0)
    return p


def _get(drv, p, n, t):
    out = np.empty(n, STORE[t])
    drv.memcpy_dtoh(out.ctypes.data, p, out.nbytes, 0)
    return _bf16_val(out).astype(np.float64) if t == R_16BF else out.astype(np.float64)


def _colmajor(flat, batch, rows, cols, ld, stride):
    """(batch, rows, cols) from a column-major strided batch."""
    return np.stack([flat[b * stride: b * stride + ld * cols].reshape(cols, ld)[:, :rows].T for b in range(batch)])


def _run(drv, ta, tb, m, n, k, alpha, beta, at, ct, compute, batch=1, pad=(0, 0, 0), extra_stride=(0, 0, 0),
         c_nan=False, seed=0):
    rng = np.random.default_rng(seed)
    a_rows, a_cols = (k, m) if ta else (m, k)
    b_rows, b_cols = (n, k) if tb else (k, n)
    lda, ldb, ldc = a_rows + pad[0], b_rows + pad[1], m + pad[2]
    sa, sb, sc = lda * a_cols + extra_stride[0], ldb * b_cols + extra_stride[1], ldc * n + extra_stride[2]
    a_host, a_val = _host(rng.standard_normal(sa * batch), at)
    b_host, b_val = _host(rng.standard_normal(sb * batch), at)
    c0 = rng.standard_normal(sc * batch)
    if c_nan:
        c0[:] = np.nan
    c_host, c_val = _host(c0, ct)
    pa, pb, pc = _put(drv, a_host), _put(drv, b_host), _put(drv, c_host)
    drv.gemm(0, 0, ta, tb, m, n, k, alpha, pa, at, lda, pb, at, ldb, beta, pc, ct, ldc, compute, batch, sa, sb, sc)
    got = _get(drv, pc, sc * batch, ct)
    A = _colmajor(a_val, batch, a_rows, a_cols, lda, sa)
    Bm = _colmajor(b_val, batch, b_rows, b_cols, ldb, sb)
    opA = A.transpose(0, 2, 1) if ta else A
    opB = Bm.transpose(0, 2, 1) if tb else Bm
    C = _colmajor(c_val, batch, m, n, ldc, sc)
    ref = alpha * (opA @ opB) + (beta * C if beta != 0 else 0.0)
    G = _colmajor(got, batch, m, n, ldc, sc)
    # the padding rows and the gaps between batches are untouched
    mask = np.ones(sc * batch, bool)
    for b in range(batch):
        for j in range(n):
            mask[b * sc + j * ldc: b * sc + j * ldc + m] = False
    assert np.array_equal(got[mask], c_val[mask], equal_nan=True)
    return G, ref


TOL = {R_64F: 1e-12, R_32F: 1e-5, R_16F: 2e-3, R_16BF: 1.6e-2}


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("types", [(R_64F, R_64F, 70), (R_32F, R_32F, 68), (R_32F, R_32F, 77), (R_16F, R_16F, 68),
                                   (R_16F, R_32F, 68), (R_16BF, R_16BF, 68), (R_16BF, R_32F, 68)])
def test_gemm_types_and_transposes(drv, ta, tb, types):
    at, ct, compute = types
    G, ref = _run(drv, ta, tb, 7, 5, 9, 1.5, 0.0, at, ct, compute, pad=(2, 1, 3), seed=ta * 2 + tb)
    tol = max(TOL[at], TOL[ct])
    np.testing.assert_allclose(G, ref, rtol=tol, atol=tol * np.abs(ref).max() * 3)


@pytest.mark.parametrize("types", [(R_64F, R_64F, 70), (R_32F, R_32F, 68), (R_16BF, R_16BF, 68)])
def test_strided_batched_with_beta(drv, types):
    at, ct, compute = types
    G, ref = _run(drv, 1, 0, 6, 4, 3, -0.5, 0.75, at, ct, compute, batch=4, pad=(1, 0, 2), extra_stride=(5, 3, 7))
    tol = max(TOL[at], TOL[ct])
    np.testing.assert_allclose(G, ref, rtol=tol, atol=tol * np.abs(ref).max() * 3)


def test_beta_zero_ignores_nan_in_c(drv):
    G, ref = _run(drv, 0, 1, 4, 3, 5, 1.0, 0.0, R_32F, R_32F, 68, batch=2, c_nan=True)
    assert np.isfinite(G).all()
    np.testing.assert_allclose(G, ref, rtol=1e-5, atol=1e-5)


def test_alpha_zero_and_k_zero_scale_c(drv):
    G, ref = _run(drv, 0, 0, 3, 3, 0, 2.0, 0.5, R_64F, R_64F, 70, pad=(0, 1, 0))
    np.testing.assert_allclose(G, ref)
    G, ref = _run(drv, 0, 0, 3, 4, 2, 0.0, -1.0, R_64F, R_64F, 70)
    np.testing.assert_allclose(G, ref)


def test_stride_zero_broadcasts_a(drv):
    """stride_a == 0: every batch multiplies the same A (as torch's expanded bmm)."""
    rng = np.random.default_rng(5)
    m, n, k, batch = 3, 2, 4, 3
    A = rng.standard_normal((m, k))
    Bs = rng.standard_normal((batch, k, n))
    pa = _put(drv, np.asfortranarray(A).ravel(order="K").copy())
    pb = _put(drv, np.concatenate([np.asfortranarray(b).ravel(order="K") for b in Bs]))
    pc = _put(drv, np.zeros(batch * m * n))
    drv.gemm(0, 0, 0, 0, m, n, k, 1.0, pa, R_64F, m, pb, R_64F, k, 0.0, pc, R_64F, m, 70, batch, 0, k * n, m * n)
    got = _get(drv, pc, batch * m * n, R_64F).reshape(batch, n, m).transpose(0, 2, 1)
    np.testing.assert_allclose(got, A[None] @ Bs, rtol=1e-12)


def test_half_results_round_to_nearest_even(drv):
    """float16 output: alpha * (A @ B) accumulated in float32, rounded once on store."""
    rng = np.random.default_rng(9)
    A = rng.standard_normal((8, 8)).astype(np.float16)
    Bm = rng.standard_normal((8, 8)).astype(np.float16)
    pa, pb = _put(drv, np.asfortranarray(A).ravel(order="K").copy()), _put(drv, np.asfortranarray(Bm).ravel(order="K").copy())
    pc = _put(drv, np.zeros(64, np.float16))
    drv.gemm(0, 0, 0, 0, 8, 8, 8, 1.0, pa, R_16F, 8, pb, R_16F, 8, 0.0, pc, R_16F, 8, 68)
    out = np.empty(64, np.float16)
    drv.memcpy_dtoh(out.ctypes.data, pc, 128, 0)
    ref = (A.astype(np.float32) @ Bm.astype(np.float32)).astype(np.float16)
    # float32 sums in another order may differ in the last float32 bits: at most one half ulp apart
    got = out.reshape(8, 8).T
    assert (np.abs(got.astype(np.float32) - ref.astype(np.float32)) <= np.spacing(np.abs(ref)).astype(np.float32)).all()


def test_bfloat16_nan_is_canonical():
    res = B._narrow(np.array([np.nan, -np.nan, 1.0, 3.4e38], np.float32), R_16BF)
    assert res.tolist() == [0x7FFF, 0x7FFF, 0x3F80, 0x7F80]


@pytest.mark.parametrize("args,match", [
    (dict(a_type=R_16F, b_type=R_16F, c_type=R_64F, compute_type=68), "unsupported combination.*CUDA_R_16F.*CUDA_R_64F"),
    (dict(a_type=R_32F, b_type=R_32F, c_type=R_32F, compute_type=70), "unsupported combination"),
    (dict(a_type=R_64F, b_type=R_64F, c_type=R_64F, compute_type=68), "unsupported combination"),
    (dict(a_type=R_32F, b_type=R_16F, c_type=R_32F, compute_type=68), "unsupported combination"),
])
def test_unsupported_type_combinations(args, match):
    with pytest.raises(ValueError, match=match):
        B.gemm(0, 0, 2, 2, 2, 1.0, 0, args["a_type"], 2, 0, args["b_type"], 2, 0.0, 0, args["c_type"], 2,
               args["compute_type"])


@pytest.mark.parametrize("kw,match", [
    (dict(lda=1), "lda = 1 is smaller than the 3 rows"),
    (dict(ldb=2), "ldb = 2 is smaller"),
    (dict(ldc=2), "ldc = 2 is smaller"),
    (dict(m=-1), "m = -1 is negative"),
    (dict(batch=0), "batch count 0"),
    (dict(transa=5), "transa/transb"),
])
def test_invalid_arguments(kw, match):
    a = dict(transa=0, transb=0, m=3, n=4, k=5, alpha=1.0, a=0, a_type=R_32F, lda=3, b=0, b_type=R_32F, ldb=5,
             beta=0.0, c=0, c_type=R_32F, ldc=3, compute_type=68, batch=1)
    a.update(kw)
    with pytest.raises(ValueError, match=match):
        B.gemm(**a)


def test_driver_validates_before_queueing(drv):
    """A bad gemm raises at the call, not later at a synchronisation."""
    with pytest.raises(ValueError, match="lda = 1"):
        drv.gemm(0, 0, 0, 0, 3, 3, 3, 1.0, 0, R_32F, 1, 0, R_32F, 3, 0.0, 0, R_32F, 3, 68)
    drv.device_synchronize(0)


def test_empty_output_touches_nothing(drv):
    B.gemm(0, 0, 0, 4, 3, 1.0, 0, R_32F, 1, 0, R_32F, 3, 0.0, 0, R_32F, 1, 68)   # m == 0: no access at all
