# The float/double GEMM of the kernels that need only real types (_conv,
# _rnn): one single-threaded BLAS call (``_gemm_one``) and the thread-count
# independent tiles over it (``_gemm``, _gemm_tiles.pxi).  ``include``d after
# the including module's fused type ``flt`` (float, double), ``blas_int`` and
# the cimports of sgemm/dgemm, prange and get_num_threads.  float32 products
# run through ptcore's own GEMM where the CPU allows (_own_sgemm.pxi).

include "_own_sgemm.pxi"

cdef inline void _gemm_one(char ta, char tb, blas_int m, blas_int n, blas_int k, flt alpha,
                           flt* a, blas_int lda, flt* b, blas_int ldb, flt beta,
                           flt* c, blas_int ldc) noexcept nogil:
    if flt is float:
        if not _own_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            sgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    else:
        dgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)


ctypedef fused blas_t:
    float
    double


include "_gemm_tiles.pxi"
