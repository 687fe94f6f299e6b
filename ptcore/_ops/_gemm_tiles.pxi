# Thread-count independent GEMM (issue 15), shared by _blas.pyx and _conv.pyx
# (``include``d after the including module's fused type ``blas_t`` and its
# ``_gemm_one``, one single-threaded BLAS call, are defined).
#
# BLAS itself runs single-threaded
# (ptcore._ops.linalg pins its pool to 1 thread) and a large product is split
# into blocks of output columns (column-major view), which ptcore's threads
# share.  The blocks depend on the product's sizes only, never on the thread
# count, so every output element is summed in the same order at 1 or N
# threads (OpenBLAS's summation order depends on the column count of a call).
# Each block re-packs the other operand, which costs about 1/width of the
# product (13% at 128 columns, measured): a block holds at least
# GEMM_TILE_WORK multiply-adds (~0.5 ms), so a medium product is one call or
# a few wide blocks, and a large one is many blocks of GEMM_TILE_N columns.
cdef enum:
    GEMM_TILE_N = 128               # narrowest block
    GEMM_TILE_WORK = 16777216       # multiply-adds per block, at least


cdef void _gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_t alpha,
                blas_t* a, blas_int lda, blas_t* b, blas_int ldb, blas_t beta,
                blas_t* c, blas_int ldc) noexcept nogil:
    cdef Py_ssize_t ntiles, t, j0, width
    cdef Py_ssize_t work = <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k
    cdef blas_int nn
    cdef int nth
    ntiles = work // GEMM_TILE_WORK
    if ntiles > (n + GEMM_TILE_N - 1) // GEMM_TILE_N:
        ntiles = (n + GEMM_TILE_N - 1) // GEMM_TILE_N
    if ntiles <= 1:
        _gemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    width = (n + ntiles - 1) // ntiles
    width = (width + 15) // 16 * 16
    ntiles = (n + width - 1) // width
    nth = get_num_threads()
    if nth > ntiles:
        nth = <int>ntiles
    for t in prange(ntiles, num_threads=nth, schedule='static'):
        j0 = t * width
        nn = <blas_int>(n - j0 if n - j0 < width else width)
        _gemm_one(ta, tb, m, nn, k, alpha, a, lda,
                  b + (j0 * ldb if (tb == 78 or tb == 110) else j0), ldb, beta,
                  c + j0 * ldc, ldc)
