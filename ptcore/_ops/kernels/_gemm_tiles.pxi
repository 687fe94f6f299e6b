# Thread-count independent GEMM (issue 15), shared by _blas.pyx, _conv.pyx and
# _rnn.pyx (``include``d after the including module's fused type ``blas_t``
# and its ``_gemm_one``, one single-threaded BLAS call, are defined).
#
# BLAS itself runs single-threaded (ptcore._ops.linalg pins its pool to 1
# thread): a multi-threaded OpenBLAS sums in an order that depends on its
# thread count.  ptcore's threads share a large product instead, in tiles of
# the output, so that every output element is summed the same way at 1 or N
# threads.  Two ways, chosen per element type on first use:
#
# * Column tiles that change nothing.  OpenBLAS's kernels sum each output
#   element in an order that depends only on its column's position within
#   the kernel's column unroll (12 for AVX2 sgemm, 4 for dgemm), so splitting
#   the columns of a product (column-major view) at multiples of that unroll
#   gives the one-call result bit for bit.  A probe checks this on the BLAS
#   and CPU at hand (``_split_width``); where it holds, a product runs as one
#   call on one thread and as one tile per thread on N threads, at no cost.
# * Fixed tiles otherwise (another BLAS, another kernel): the tiles depend on
#   the product's sizes only, never on the thread count.  Each tile re-packs
#   the operand shared by all tiles (about 5/width of its work on AVX2, more
#   with short inner dimensions), so tiles are at least GEMM_TILE_MIN wide and
#   GEMM_TILE_WORK multiply-adds, their count even and capped.
#
# Every tile holds at least GEMM_TILE_WORK multiply-adds, above the sizes at
# which some OpenBLAS kernels (AVX-512) switch to a small-matrix path.
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp

cdef enum:
    GEMM_TILE_MIN = 192             # narrowest fixed tile in the split dimension
    GEMM_TILE_WORK = 2097152        # multiply-adds per tile, at least (~60 us)
    GEMM_TILE_MAX = 64              # fixed tiles per product, at most

# per element type (float, double, complex float, complex double): the column
# unroll at which splitting keeps OpenBLAS's results (0: it does not hold, use
# fixed tiles; -1: not probed yet)
cdef int _split_w[4]
_split_w[0] = -1
_split_w[1] = -1
_split_w[2] = 0                     # complex: fixed tiles (not probed)
_split_w[3] = 0


cdef inline int _tcode(blas_t* dummy) noexcept nogil:
    if blas_t is float:
        return 0
    elif blas_t is double:
        return 1
    elif sizeof(blas_t) == 8:
        return 2
    return 3


cdef void _probe_fill(blas_t* p, Py_ssize_t count, unsigned int seed) noexcept nogil:
    # full-mantissa values (an irrational scale): with 16-bit fractions every
    # double product and partial sum was exact, so any summation order gave
    # the same bits and the double probe accepted column splits that change
    # real dgemm results (AMD Zen 4, OpenBLAS SkylakeX kernels)
    cdef Py_ssize_t i
    for i in range(count):
        seed = seed * 1103515245u + 12345u
        p[i] = (<double>(seed >> 1) / 2147483648.0 - 0.5) * 1.7320508075688772


cdef int _probe(blas_t* dummy, int w) noexcept nogil:
    """1 when one-call products equal products computed in column tiles whose
    widths are multiples of ``w`` (and a ragged last tile), bit for bit, for
    every transposition; 0 otherwise (or when memory is short)."""
    cdef blas_int m = 173, k = 419, n, lda, ldb, j0, nn
    cdef int ok = 1, t, ta_i, tb_i, widths[3]
    cdef char ta, tb
    cdef blas_t* a
    cdef blas_t* b
    cdef blas_t* c1
    cdef blas_t* c2
    cdef blas_t one = 1
    cdef blas_t zero = 0
    widths[0] = w * ((GEMM_TILE_WORK // (m * k)) // w + 1)   # the smallest tile the real calls use
    widths[1] = widths[0] + w
    widths[2] = 3 * widths[0]
    n = 4 * widths[0] + w // 2 + 1
    a = <blas_t*>malloc(<size_t>m * k * sizeof(blas_t))
    b = <blas_t*>malloc(<size_t>k * n * sizeof(blas_t))
    c1 = <blas_t*>malloc(<size_t>m * n * sizeof(blas_t))
    c2 = <blas_t*>malloc(<size_t>m * n * sizeof(blas_t))
    if a == NULL or b == NULL or c1 == NULL or c2 == NULL:
        ok = 0
    else:
        _probe_fill(a, <Py_ssize_t>m * k, 1u)
        _probe_fill(b, <Py_ssize_t>k * n, 2u)
        for ta_i in range(2):
            for tb_i in range(2):
                ta = 84 if ta_i else 78
                tb = 84 if tb_i else 78
                lda = k if ta_i else m
                ldb = n if tb_i else k
                _gemm_one(ta, tb, m, n, k, one, a, lda, b, ldb, zero, c1, m)
                for t in range(3):
                    j0 = 0
                    while j0 < n:
                        nn = n - j0 if n - j0 < widths[t] else widths[t]
                        _gemm_one(ta, tb, m, nn, k, one, a, lda,
                                  b + (j0 if tb_i else <Py_ssize_t>j0 * ldb), ldb, zero,
                                  c2 + <Py_ssize_t>j0 * m, m)
                        j0 += nn
                    if memcmp(c1, c2, <size_t>m * n * sizeof(blas_t)) != 0:
                        ok = 0
    free(a)
    free(b)
    free(c1)
    free(c2)
    return ok


cdef int _split_width(blas_t* dummy) noexcept nogil:
    """The column unroll of the BLAS kernel for blas_t, probed on first use
    (0: column splits change results here)."""
    cdef int code = _tcode(dummy)
    cdef int w = _split_w[code]
    if w < 0:
        w = 0
        if _probe(dummy, 12):
            w = 12
            if blas_t is not float and _probe(dummy, 4):
                w = 4
        _split_w[code] = w
    return w


cdef inline Py_ssize_t _gemm_ntiles(Py_ssize_t work, Py_ssize_t dim) noexcept nogil:
    cdef Py_ssize_t t = work // GEMM_TILE_WORK
    if t > dim // GEMM_TILE_MIN:
        t = dim // GEMM_TILE_MIN
    if t > GEMM_TILE_MAX:
        t = GEMM_TILE_MAX
    if t > 2:
        t -= t & 1
    return t


cdef enum:
    OWN_TILE_WORK = 327680          # multiply-adds per own-GEMM tile, at least (1.25 * 64**3)
    OWN_ROWS_PER_TILE = 256         # output rows per thread from which the rows are split


cdef void _sgemm_ci_one(char ta, char tb, blas_int m, blas_int n, blas_int k, float alpha,
                       float* a, blas_int lda, float* b, blas_int ldb, float beta,
                       float* c, blas_int ldc, const float* ci, Py_ssize_t ldci) noexcept nogil:
    """One single-threaded C = alpha op(A) op(B) + beta Ci (column-major,
    Ci(i, j) = ci[i + j ldci], ``ldci`` 0 for one column repeated): the own
    GEMM reads Ci in place; where it does not run the product, Ci is copied
    into C for the BLAS (the same bits either way as copying Ci into C and
    a product with beta C)."""
    cdef Py_ssize_t i, j
    if <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k >= OWN_SGEMM_MIN and ptc_sgemm_isa() != 0:
        if ptc_sgemm_ci(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ci, ldci) == 0:
            return
    if beta != 0:
        for j in range(n):
            for i in range(m):
                c[i + j * ldc] = ci[i + j * ldci]
    sgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)


cdef void _sgemm_ci(char ta, char tb, blas_int m, blas_int n, blas_int k, float alpha,
                    float* a, blas_int lda, float* b, blas_int ldb, float beta,
                    float* c, blas_int ldc, const float* ci, Py_ssize_t ldci) noexcept nogil:
    """_sgemm_ci_one on the threads: the own GEMM's tiles (_own_split), each
    reading its part of Ci; the result is the one-call result at any thread
    count.  Products the own GEMM does not take: Ci copied into C, then
    ``_gemm``."""
    cdef Py_ssize_t i, j, work = <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k
    if work >= OWN_SGEMM_MIN and ptc_sgemm_isa() != 0:
        if not _own_split(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, work, ci, ldci):
            _sgemm_ci_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ci, ldci)
        return
    if beta != 0:
        for j in range(n):
            for i in range(m):
                c[i + j * ldc] = ci[i + j * ldci]
    _gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef bint _own_split(char ta, char tb, blas_int m, blas_int n, blas_int k, float alpha,
                     float* a, blas_int lda, float* b, blas_int ldb, float beta,
                     float* c, blas_int ldc, Py_ssize_t work,
                     const float* ci=NULL, Py_ssize_t ldci=0) noexcept nogil:
    """Float32 products on ptcore's own GEMM, shared by the threads in tiles
    of one dimension, each of at least OWN_TILE_WORK multiply-adds (so above
    OWN_SGEMM_MIN: every tile takes the own GEMM too).  Its elements are FMA
    chains over k blocks that depend on k alone, whatever the tile, so the
    result is the one-call result at any thread count.

    The split dimension is the one whose operand the kernels pack, so that
    each thread packs only its share of it: A's rows when op(A) = A^T, B's
    columns when op(B) = B^T (ptc_sgemm.h reads B = op(B) in place, and A =
    op(A) where it fits the L2), else the longer side.  Splitting the other
    way made every thread pack all of a Linear's weight (a 128 x 784 x 512
    forward ran 1.25x torch's time at 2 threads; a 20 x 256 x 1024 one ran
    on one thread: 20 columns are too few for the BLAS tiles).  But with
    OWN_ROWS_PER_TILE or more output rows (ptcore's row-major view: n) per
    thread, the rows are split even then: every thread packs all of A, a
    small part of its work at that many rows, and writes whole rows of the
    result, as the next elementwise op (GELU, a residual add), split by
    rows too, reads them.  Column tiles left half of every row that op read
    in the other core's cache: a GPT's 768 x 128 x 512 Linear layers made
    the whole training step 7% slower at 2 threads (Zen 4, 2 cores).  With
    ``ci``
    the tiles compute alpha op(A) op(B) + beta Ci (_sgemm_ci_one).  False:
    not split (one thread, the BLAS, or too small)."""
    cdef int nth = get_num_threads()
    cdef Py_ssize_t ntiles, width, dim, t, i0, last, unit
    cdef blas_int nn
    cdef bint a_packed, b_packed, split_m
    if nth < 2 or work < 2 * OWN_TILE_WORK or ptc_sgemm_isa() == 0:
        return False
    a_packed = not (ta == 78 or ta == 110)
    b_packed = not (tb == 78 or tb == 110)
    split_m = a_packed if a_packed != b_packed else m >= n
    if split_m and n >= OWN_ROWS_PER_TILE * (nth if nth < work // OWN_TILE_WORK
                                             else work // OWN_TILE_WORK):
        split_m = False
    dim = m if split_m else n
    unit = 32 if split_m else 12        # whole micro-panels (AVX2's 16 x 6 too)
    ntiles = work // OWN_TILE_WORK
    if ntiles > nth:
        ntiles = nth
    width = (dim + ntiles - 1) // ntiles
    width = (width + unit - 1) // unit * unit
    ntiles = (dim + width - 1) // width
    last = dim - (ntiles - 1) * width
    if ntiles < 2 or last * (work // dim) < OWN_SGEMM_MIN:
        return False
    if split_m:
        for t in prange(ntiles, num_threads=ntiles, schedule='static'):
            i0 = t * width
            nn = <blas_int>(m - i0 if m - i0 < width else width)
            if ci == NULL:
                _gemm_one(ta, tb, nn, n, k, alpha,
                          a + (i0 if (ta == 78 or ta == 110) else i0 * lda), lda, b, ldb, beta,
                          c + i0, ldc)
            else:
                _sgemm_ci_one(ta, tb, nn, n, k, alpha,
                              a + (i0 if (ta == 78 or ta == 110) else i0 * lda), lda, b, ldb,
                              beta, c + i0, ldc, ci + i0, ldci)
    else:
        for t in prange(ntiles, num_threads=ntiles, schedule='static'):
            i0 = t * width
            nn = <blas_int>(n - i0 if n - i0 < width else width)
            if ci == NULL:
                _gemm_one(ta, tb, m, nn, k, alpha, a, lda,
                          b + (i0 * ldb if (tb == 78 or tb == 110) else i0), ldb, beta,
                          c + i0 * ldc, ldc)
            else:
                _sgemm_ci_one(ta, tb, m, nn, k, alpha, a, lda,
                              b + (i0 * ldb if (tb == 78 or tb == 110) else i0), ldb, beta,
                              c + i0 * ldc, ldc, ci + i0 * ldci, ldci)
    return True


cdef void _gemm(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_t alpha,
                blas_t* a, blas_int lda, blas_t* b, blas_int ldb, blas_t beta,
                blas_t* c, blas_int ldc) noexcept nogil:
    # column-major C(m, n) = op(A)(m, k) op(B)(k, n); ptcore's row-major
    # products arrive transposed, so n is the row count of ptcore's output
    cdef Py_ssize_t ntiles, t, i0, width
    cdef Py_ssize_t work = <Py_ssize_t>m * <Py_ssize_t>n * <Py_ssize_t>k
    cdef blas_int nn
    cdef int nth, split_n, w
    if blas_t is float:
        if _own_split(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, work):
            return
    if work < 2 * GEMM_TILE_WORK:
        _gemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        return
    nth = get_num_threads()
    w = _split_width(a)
    if w > 0:
        # column tiles that keep the one-call result: one per thread
        ntiles = nth
        if ntiles > n // w:
            ntiles = n // w
        if ntiles > work // GEMM_TILE_WORK:
            ntiles = work // GEMM_TILE_WORK
        if ntiles < 2:
            _gemm_one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
            return
        width = (n + ntiles - 1) // ntiles
        width = (width + w - 1) // w * w
        ntiles = (n + width - 1) // width
        split_n = 1
    else:
        # fixed tiles, by the product's sizes only
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


def _gemm_split_widths():
    """The probed column unroll per element type (float, double, complex64,
    complex128): > 0 where column tiles keep results bit for bit (tiles per
    thread), 0 where fixed tiles are used, -1 before the first product."""
    return [_split_w[0], _split_w[1], _split_w[2], _split_w[3]]
