# Thread-count independent GEMM (issue 15), shared by _blas.pyx and _conv.pyx
# (``include``d after the including module's fused type ``blas_t`` and its
# ``_gemm_one``, one single-threaded BLAS call, are defined).
#
# BLAS itself runs single-threaded (ptcore._ops.linalg pins its pool to 1
# thread): a multi-threaded OpenBLAS, and even OpenBLAS on a sub-block of the
# same product, sums in a different order, so results would change with the
# thread count.  Instead a large product is split into tiles of the output
# whose shape depends on the product's sizes only, never on the thread count,
# and ptcore's threads share the tiles: every output element is summed the
# same way at 1 or N threads.
#
# The split runs along the output dimension that re-packs the smaller share
# of work: each tile re-packs the operand shared by all tiles, which costs
# about 5/width of the tile's multiply-adds on AVX2 machines (a 192-wide tile
# ~3 %), so tiles are at least GEMM_TILE_MIN wide and hold at least
# GEMM_TILE_WORK multiply-adds; the tile count is even (balanced on 2 and 4
# threads) and capped, so a medium product is split in 2 or 4 and only large
# ones in many.
cdef enum:
    GEMM_TILE_MIN = 192             # narrowest tile in the split dimension
    GEMM_TILE_WORK = 2097152        # multiply-adds per tile, at least (~60 us)
    GEMM_TILE_MAX = 64              # tiles per product, at most


cdef inline Py_ssize_t _gemm_ntiles(Py_ssize_t work, Py_ssize_t dim) noexcept nogil:
    cdef Py_ssize_t t = work // GEMM_TILE_WORK
    if t > dim // GEMM_TILE_MIN:
        t = dim // GEMM_TILE_MIN
    if t > GEMM_TILE_MAX:
        t = GEMM_TILE_MAX
    if t > 2:
        t -= t & 1
    return t


cdef void _gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_t alpha,
                blas_t* a, blas_int lda, blas_t* b, blas_int ldb, blas_t beta,
                blas_t* c, blas_int ldc) noexcept nogil:
    # column-major C(m, n) = op(A)(m, k) op(B)(k, n); ptcore's row-major
    # products arrive transposed, so n is the row count of ptcore's output
    cdef Py_ssize_t ntiles, t, i0, width
    cdef Py_ssize_t work = <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k
    cdef blas_int nn
    cdef int nth, split_n
    ntiles = _gemm_ntiles(work, n)
    split_n = 1
    if ntiles < 2:
        # too few columns: split the rows instead (the other operand re-packs)
        ntiles = _gemm_ntiles(work, m)
        split_n = 0
    if ntiles < 2:
        _gemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    width = ((n if split_n else m) + ntiles - 1) // ntiles
    width = (width + 15) // 16 * 16
    ntiles = ((n if split_n else m) + width - 1) // width
    nth = get_num_threads()
    if nth > ntiles:
        nth = <int>ntiles
    if split_n:
        for t in prange(ntiles, num_threads=nth, schedule='static'):
            i0 = t * width
            nn = <blas_int>(n - i0 if n - i0 < width else width)
            _gemm_one(ta, tb, m, nn, k, alpha, a, lda,
                      b + (i0 * ldb if (tb == 78 or tb == 110) else i0), ldb, beta,
                      c + i0 * ldc, ldc)
    else:
        for t in prange(ntiles, num_threads=nth, schedule='static'):
            i0 = t * width
            nn = <blas_int>(m - i0 if m - i0 < width else width)
            _gemm_one(ta, tb, nn, n, k, alpha,
                      a + (i0 if (ta == 78 or ta == 110) else i0 * lda), lda, b, ldb, beta,
                      c + i0, ldc)
