# cython: language_level=3
"""cuBLAS's ``cublasGemmStridedBatchedEx`` called through a C function pointer.

Every CUDA matrix product of ptcore goes through the real driver's ``gemm``
(:class:`ptcore.cuda.driver.real.RealDriver`).  Called through ctypes, its
23 arguments cost tens of microseconds of conversions per product, more
than cuBLAS itself for the small products of a training step; here they go
from typed Cython arguments straight to the C call, the alpha and beta
scalars built on the C stack.  The C signature is the one the driver's
ctypes declaration states (cuBLAS 11+)::

    cublasStatus_t cublasGemmStridedBatchedEx(
        cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
        int m, int n, int k, const void* alpha,
        const void* A, cudaDataType Atype, int lda, long long strideA,
        const void* B, cudaDataType Btype, int ldb, long long strideB,
        const void* beta, void* C, cudaDataType Ctype, int ldc, long long strideC,
        int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
"""
cimport cython
from libc.stdint cimport uintptr_t

__all__ = ["GemmEx", "SCALAR_FLOAT", "SCALAR_DOUBLE", "SCALAR_COMPLEX64", "SCALAR_COMPLEX128"]

ctypedef int (*gemm_fn)(void* handle, int transa, int transb, int m, int n, int k,
                        const void* alpha, const void* a, int a_type, int lda, long long stride_a,
                        const void* b, int b_type, int ldb, long long stride_b,
                        const void* beta, void* c, int c_type, int ldc, long long stride_c,
                        int batch, int compute_type, int algo) noexcept

cdef enum:
    _FLOAT = 0
    _DOUBLE = 1
    _COMPLEX64 = 2
    _COMPLEX128 = 3

# how alpha and beta are passed: what the compute type reads behind the pointer
SCALAR_FLOAT, SCALAR_DOUBLE, SCALAR_COMPLEX64, SCALAR_COMPLEX128 = _FLOAT, _DOUBLE, _COMPLEX64, _COMPLEX128


cdef int _scalar(object v, int kind, double* buf) except -1:
    """``v`` into ``buf`` as the compute type reads it (buf: 2 doubles)."""
    cdef float* f = <float*>buf
    cdef complex z
    if kind == _FLOAT:
        f[0] = <float>float(v)
    elif kind == _DOUBLE:
        buf[0] = float(v)
    elif kind == _COMPLEX64:
        z = complex(v)
        f[0] = <float>z.real
        f[1] = <float>z.imag
    elif kind == _COMPLEX128:
        z = complex(v)
        buf[0] = z.real
        buf[1] = z.imag
    else:
        raise ValueError(f"unknown scalar kind {kind}")
    return 0


@cython.binding(False)   # method descriptors: an unbound call type-checks self
cdef class GemmEx:
    """``gemm(handle, transa, transb, m, n, k, alpha, a, a_type, lda, stride_a,
    b, b_type, ldb, stride_b, beta, c, c_type, ldc, stride_c, batch,
    compute_type, algo, scalar_kind)`` -> the cublasStatus_t, through the C
    function at ``address`` (``owner`` keeps what provides it alive: the
    loaded library, or a ctypes callback in tests).  ``scalar_kind`` is
    one of the ``SCALAR_*`` constants."""
    cdef gemm_fn fn
    cdef readonly object owner

    def __cinit__(self, uintptr_t address, owner=None):
        if address == 0:
            raise ValueError("GemmEx needs the address of cublasGemmStridedBatchedEx, not NULL")
        self.fn = <gemm_fn>address
        self.owner = owner

    def __call__(self, uintptr_t handle, int transa, int transb, int m, int n, int k, alpha,
                 uintptr_t a, int a_type, int lda, long long stride_a,
                 uintptr_t b, int b_type, int ldb, long long stride_b, beta,
                 uintptr_t c, int c_type, int ldc, long long stride_c,
                 int batch, int compute_type, int algo, int scalar_kind):
        cdef double al[2]
        cdef double be[2]
        _scalar(alpha, scalar_kind, al)
        _scalar(beta, scalar_kind, be)
        return self.fn(<void*>handle, transa, transb, m, n, k, al, <const void*>a, a_type, lda,
                       stride_a, <const void*>b, b_type, ldb, stride_b, be, <void*>c, c_type,
                       ldc, stride_c, batch, compute_type, algo)
