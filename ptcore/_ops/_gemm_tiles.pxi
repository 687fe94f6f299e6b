# Thread-count independent GEMM (issue 15), shared by _blas.pyx and _conv.pyx
# (``include``d after the including module's fused type ``blas_t`` and its
# ``_gemm_one``, one single-threaded BLAS call, are defined).
#
# BLAS itself runs single-threaded
# (ptcore._ops.linalg pins its pool to 1 thread) and a large product is split
# into fixed blocks of GEMM_TILE_N output columns (column-major view), which
# ptcore's threads share.  The blocks do not depend on the thread count, so
# every output element is summed in the same order at 1 or N threads.
cdef enum:
    GEMM_TILE_N = 128
    GEMM_TILE_MIN = 262144          # m * n * k below this: one call


cdef void _gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_t alpha,
                blas_t* a, blas_int lda, blas_t* b, blas_int ldb, blas_t beta,
                blas_t* c, blas_int ldc) noexcept nogil:
    cdef Py_ssize_t ntiles, t, j0
    cdef blas_int nn
    cdef int nth
    if n <= GEMM_TILE_N or <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k < GEMM_TILE_MIN:
        _gemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    ntiles = (n + GEMM_TILE_N - 1) // GEMM_TILE_N
    nth = get_num_threads()
    if nth > ntiles:
        nth = <int>ntiles
    for t in prange(ntiles, num_threads=nth, schedule='static'):
        j0 = t * GEMM_TILE_N
        nn = <blas_int>(n - j0 if n - j0 < GEMM_TILE_N else GEMM_TILE_N)
        _gemm_one(ta, tb, m, nn, k, alpha, a, lda,
                  b + (j0 * ldb if (tb == 78 or tb == 110) else j0), ldb, beta,
                  c + j0 * ldc, ldc)
