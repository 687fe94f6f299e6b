"""cuBLAS GEMM for the emulated device, on the host BLAS (through NumPy).

:func:`gemm` has ``cublasGemmStridedBatchedEx`` semantics: column-major
matrices at device (here: host) addresses, leading dimensions and batch
strides in elements, ``C = alpha * op(A) @ op(B) + beta * C`` per batch, and
``beta == 0`` ignores C's old contents (NaN included); ``alpha == 0`` does not
read A or B, as BLAS.  Supported type combinations (those of cublasGemmEx):

==================  ====================  ==============
compute type        A, B                  C
==================  ====================  ==============
COMPUTE_64F (70)    R_64F                 R_64F
COMPUTE_32F (68),   R_32F                 R_32F
COMPUTE_32F_FAST_*  R_16F                 R_16F or R_32F
(74, 75, 77)        R_16BF                R_16BF or R_32F
COMPUTE_32F (68)    C_32F                 C_32F
COMPUTE_64F (70)    C_64F                 C_64F
==================  ====================  ==============

For the complex types ``transa``/``transb`` 2 (C) is the conjugate
transpose and ``alpha``/``beta`` are complex numbers.

float16/bfloat16 operands are widened to float32, multiplied with float32
accumulation and rounded to nearest even on store (bfloat16 NaN becomes the
canonical 0x7fff, as the device's conversion).  TF32 and the other "fast"
compute types run in full float32 here.
"""
import ctypes

import numpy as np

__all__ = ["gemm", "check", "R_32F", "R_64F", "R_16F", "R_16BF", "C_32F", "C_64F", "COMPUTE_32F",
           "COMPUTE_64F"]

R_32F, R_64F, R_16F, R_16BF = 0, 1, 2, 14
C_32F, C_64F = 4, 5
COMPUTE_32F, COMPUTE_64F = 68, 70
_FAST_32F = (74, 75, 77)   # COMPUTE_32F_FAST_16F, _FAST_16BF, _FAST_TF32
_TYPE_NAMES = {R_32F: "CUDA_R_32F", R_64F: "CUDA_R_64F", R_16F: "CUDA_R_16F", R_16BF: "CUDA_R_16BF",
               C_32F: "CUDA_C_32F", C_64F: "CUDA_C_64F"}
_STORAGE = {R_32F: np.float32, R_64F: np.float64, R_16F: np.float16, R_16BF: np.uint16,
            C_32F: np.complex64, C_64F: np.complex128}


def _tname(t):
    return _TYPE_NAMES.get(t, f"cudaDataType {t}")


def _check_types(a_type, b_type, c_type, compute_type):
    if compute_type == COMPUTE_64F:
        if a_type == b_type == c_type == R_64F:
            return np.float64
        if a_type == b_type == c_type == C_64F:
            return np.complex128
    if compute_type == COMPUTE_32F and a_type == b_type == c_type == C_32F:
        return np.complex64
    elif compute_type == COMPUTE_32F or compute_type in _FAST_32F:
        if a_type == b_type and (c_type == a_type or (c_type == R_32F and a_type in (R_16F, R_16BF))) \
                and a_type in (R_32F, R_16F, R_16BF):
            return np.float32
    raise ValueError(f"cublasGemmEx: unsupported combination A {_tname(a_type)}, B {_tname(b_type)}, "
                     f"C {_tname(c_type)} with compute type {compute_type} (the emulated device supports "
                     f"64F x 64F -> 64F with COMPUTE_64F, and 32F/16F/16BF inputs with COMPUTE_32F; C_32F with "
                     f"COMPUTE_32F and C_64F with COMPUTE_64F)")


def _view(ptr, typ, batch, rows, cols, ld, stride):
    """(batch, rows, cols) view of a column-major strided batch at ``ptr``."""
    st = _STORAGE[typ]
    isz = np.dtype(st).itemsize
    extent = (batch - 1) * stride + (cols - 1) * ld + rows
    buf = (ctypes.c_char * (extent * isz)).from_address(ptr)
    flat = np.frombuffer(buf, dtype=st, count=extent)
    return np.lib.stride_tricks.as_strided(flat, shape=(batch, rows, cols),
                                           strides=(stride * isz, isz, ld * isz), writeable=True)


def _widen(v, typ):
    if typ == R_16BF:
        return (v.astype(np.uint32) << 16).view(np.float32)
    return v.astype(np.float32) if typ == R_16F else v


def _narrow(v, typ):
    """float32 (or float64) -> storage of ``typ`` with round to nearest even."""
    if typ == R_16BF:
        u = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32)
        nan = (u & 0x7FFFFFFF) > 0x7F800000
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        r[nan] = 0x7FFF
        return r
    return v.astype(_STORAGE[typ])


def check(transa, transb, m, n, k, a_type, lda, b_type, ldb, c_type, ldc, compute_type, batch=1):
    """Validate a gemm's arguments as cuBLAS does (ValueError naming the bad one);
    returns the accumulation dtype.  The driver calls it before queueing."""
    for name, v in (("m", m), ("n", n), ("k", k)):
        if int(v) < 0:
            raise ValueError(f"cublasGemmEx: {name} = {v} is negative")
    if batch < 1:
        raise ValueError(f"cublasGemmStridedBatchedEx: batch count {batch} must be at least 1")
    if transa not in (0, 1, 2) or transb not in (0, 1, 2):
        raise ValueError(f"cublasGemmEx: transa/transb must be 0 (N), 1 (T) or 2 (C), got {transa}, {transb}")
    acc = _check_types(a_type, b_type, c_type, compute_type)
    ta, tb = transa != 0, transb != 0
    a_rows, a_cols = (k, m) if ta else (m, k)
    b_rows, b_cols = (n, k) if tb else (k, n)
    for name, ld, rows in (("lda", lda, a_rows), ("ldb", ldb, b_rows), ("ldc", ldc, m)):
        if ld < max(1, rows):
            raise ValueError(f"cublasGemmEx: {name} = {ld} is smaller than the {rows} rows of its matrix "
                             f"(m={m}, n={n}, k={k}, transa={transa}, transb={transb})")
    return acc


def gemm(transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
         compute_type, batch=1, stride_a=0, stride_b=0, stride_c=0):
    """``cublasGemmStridedBatchedEx`` on the host; see the module docstring.

    ``transa``/``transb``: 0 (N), 1 (T) or 2 (C: T for real types, the
    conjugate transpose for complex ones); ``a``/``b``/``c`` host addresses
    (ints); ``alpha``/``beta`` numbers (complex for the complex types)."""
    acc = check(transa, transb, m, n, k, a_type, lda, b_type, ldb, c_type, ldc, compute_type, batch)
    ta, tb = transa != 0, transb != 0
    a_rows, a_cols = (k, m) if ta else (m, k)
    b_rows, b_cols = (n, k) if tb else (k, n)
    if m == 0 or n == 0:
        return
    cv = _view(c, c_type, batch, m, n, ldc, stride_c)
    cplx = np.issubdtype(acc, np.complexfloating)
    alpha = complex(alpha) if cplx else float(alpha)
    beta = complex(beta) if cplx else float(beta)
    if alpha != 0.0 and k > 0:
        av = _widen(_view(a, a_type, batch, a_rows, a_cols, lda, stride_a), a_type)
        bv = _widen(_view(b, b_type, batch, b_rows, b_cols, ldb, stride_b), b_type)
        opa = av.transpose(0, 2, 1) if ta else av
        opb = bv.transpose(0, 2, 1) if tb else bv
        if cplx and transa == 2:
            opa = opa.conj()
        if cplx and transb == 2:
            opb = opb.conj()
        prod = np.matmul(opa.astype(acc, copy=False), opb.astype(acc, copy=False))
        res = acc(alpha) * prod
    else:
        res = np.zeros((batch, m, n), acc)
    if beta != 0.0:
        res = res + acc(beta) * _widen(cv, c_type).astype(acc, copy=False)
    cv[...] = _narrow(res, c_type) if c_type in (R_16F, R_16BF) else res.astype(_STORAGE[c_type], copy=False)
