# cython: language_level=3
"""Matrix products and dense factorisations on CPU tensors.

BLAS and LAPACK come from ``scipy.linalg.cython_blas`` / ``cython_lapack``
(SciPy's bundled OpenBLAS), so ptcore needs no BLAS at build time.  Importing
this module loads SciPy's linear algebra (tens of MiB), which is why
``ptcore._ops.linalg`` imports it on the first matmul, never at
``import ptcore``.

Layout convention.  ptcore tensors are row-major-with-strides; BLAS is
column-major.  A row-major ``C = A @ B`` is the column-major
``C^T = B^T @ A^T``, so operands are swapped and every operand is passed in
place whenever one of its two last dims has unit stride and the other one is
a valid leading dimension (scikit-learn's ``_cython_blas.pyx`` pattern).  The
Python layer (``ptcore._ops.linalg``) copies an operand contiguous only when
:func:`usable` says BLAS cannot read it as it is.

LAPACK needs column-major work matrices: each routine copies one batch
element at a time into a Fortran-ordered buffer, calls LAPACK, and writes the
results through the output tensor's strides.

The SciPy integer type: SciPy < 1.18 declares BLAS/LAPACK integers as ``int``;
SciPy >= 1.18 as ``blas_int`` (a ``ctypedef int`` in its LP64 build, which is
what ``cython_blas`` exports).  Both are C ``int``, so ``blas_int`` below is a
local ``ctypedef int`` that matches either declaration.
"""
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free
from libc.math cimport fmaf
from cpython.pycapsule cimport PyCapsule_CheckExact, PyCapsule_GetPointer
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, scratch_bind
from libc.string cimport memset, memcpy
from libc.stdint cimport uint8_t, int8_t, int16_t, uint16_t, int32_t, int64_t, uint64_t

from scipy.linalg.cython_blas cimport (
    sgemm, dgemm, cgemm, zgemm, sgemv, dgemv, cgemv, zgemv,
    sdot, ddot, cdotu, zdotu, cdotc, zdotc,
)
from scipy.linalg cimport cython_lapack as lp

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig
from ptcore._ops.kernels._types cimport (
    PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64,
    PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128, PT_BFLOAT16,
)
from ptcore._ops.kernels._parallel cimport get_num_threads
scratch_bind()      # this module's scratch requests obey _fault's test switch

ctypedef int blas_int
ctypedef float complex cfloat
ctypedef double complex cdouble

ctypedef fused blas_t:
    float
    double
    cfloat
    cdouble

ctypedef fused int_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t

cdef enum:
    # LAPACK/BLAS option characters
    CH_N = 78
    CH_T = 84
    CH_V = 86
    CH_L = 76
    CH_U = 85
    CH_A = 65
    CH_S = 83
    CH_y = 121
    CH_g = 103
    CH_d = 100
    CH_s = 115

cdef enum:
    INT_LIMIT = 2147483647
    # OpenBLAS runs a gemm on one thread below about 64**3 multiply-adds; a
    # batch of such products is spread over ptcore's threads instead.
    SMALL_GEMM = 262144
    # a batch of products shared by the threads only from this many multiply-adds
    # in all: below it waking the team costs more than the products (attention's
    # (1, 4, 5, 16) @ (1, 4, 16, 5) of a decoder step took 4.0 us at 2 threads,
    # 2.0 us at one); each product is one thread's either way (the same bits)
    PAR_BATCH_WORK = 65536
    # torch's bmm runs products of fewer multiply-adds than this in its own loop
    SMALL_DOT = 400


# ---------------------------------------------------------------------------
# typed BLAS wrappers
# ---------------------------------------------------------------------------
include "_own_sgemm.pxi"


cdef inline void _gemm_one(char ta, char tb, blas_int m, blas_int n, blas_int k, blas_t alpha,
                       blas_t* a, blas_int lda, blas_t* b, blas_int ldb, blas_t beta,
                       blas_t* c, blas_int ldc) noexcept nogil:
    if blas_t is float:
        if not _own_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            sgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    elif blas_t is double:
        dgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    elif blas_t is cfloat:
        cgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
    else:
        zgemm(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)


include "_gemm_tiles.pxi"
include "_bgemm.pxi"


cdef inline void _gemv(char tr, blas_int m, blas_int n, blas_t alpha, blas_t* a, blas_int lda,
                       blas_t* x, blas_int incx, blas_t beta, blas_t* y,
                       blas_int incy) noexcept nogil:
    if blas_t is float:
        sgemv(&tr, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy)
    elif blas_t is double:
        dgemv(&tr, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy)
    elif blas_t is cfloat:
        cgemv(&tr, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy)
    else:
        zgemv(&tr, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy)


cdef inline blas_t _dot(blas_int n, blas_t* x, blas_int incx, blas_t* y, blas_int incy,
                        bint conj) noexcept nogil:
    if blas_t is float:
        return sdot(&n, x, &incx, y, &incy)
    elif blas_t is double:
        return ddot(&n, x, &incx, y, &incy)
    elif blas_t is cfloat:
        if conj:
            return cdotc(&n, x, &incx, y, &incy)
        return cdotu(&n, x, &incx, y, &incy)
    else:
        if conj:
            return zdotc(&n, x, &incx, y, &incy)
        return zdotu(&n, x, &incx, y, &incy)


# ---------------------------------------------------------------------------
# operand layouts
# ---------------------------------------------------------------------------

cdef inline int _layout(Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t rs, Py_ssize_t cs,
                        char* tr, blas_int* ld) noexcept nogil:
    """How BLAS reads the row-major ``rows x cols`` operand with element
    strides ``(rs, cs)``: as the column-major ``cols x rows`` matrix
    ``op(X)``.  Sets ``tr``/``ld``; returns -1 when it cannot be read in place."""
    if cols <= 1:
        cs = 1
    if rows <= 1:
        rs = (cols if cols > 1 else 1) if cs == 1 else 1
    if cs == 1 and rs >= (cols if cols > 1 else 1) and rs <= INT_LIMIT:
        tr[0] = CH_N
        ld[0] = <blas_int>rs
        return 0
    if rs == 1 and cs >= (rows if rows > 1 else 1) and cs <= INT_LIMIT:
        tr[0] = CH_T
        ld[0] = <blas_int>cs
        return 0
    return -1


def usable(_TensorBase t not None):
    """Whether BLAS can read the matrices (last two dims) of ``t`` in place."""
    cdef char tr
    cdef blas_int ld
    cdef int nd = t._ndim
    if nd < 2:
        return False
    if t._shape[nd - 2] > INT_LIMIT or t._shape[nd - 1] > INT_LIMIT:
        return True      # mm_into raises the size error
    return _layout(t._shape[nd - 2], t._shape[nd - 1], t._strides[nd - 2], t._strides[nd - 1],
                   &tr, &ld) == 0


def vector_usable(_TensorBase t):
    """Whether a 1-D ``t`` can be passed to BLAS as a vector (positive stride)."""
    return t._ndim == 1 and (t._shape[0] <= 1 or t._strides[0] > 0)


cdef inline Py_ssize_t _boff(Py_ssize_t idx, int nd, const Py_ssize_t* shape,
                             const Py_ssize_t* strides) noexcept nogil:
    """Element offset of flat batch index ``idx`` over the leading ``nd`` dims."""
    cdef Py_ssize_t off = 0, q
    cdef int d
    for d in range(nd - 1, -1, -1):
        q = idx % shape[d]
        idx = idx // shape[d]
        off += q * strides[d]
    return off


# ---------------------------------------------------------------------------
# floating products
# ---------------------------------------------------------------------------

cdef struct _MM:
    # one product C = alpha A B + beta C, row-major view of the operands
    Py_ssize_t M, N, K
    Py_ssize_t ars, acs, brs, bcs, crs, ccs
    char ta, tb
    blas_int lda, ldb, ldc


cdef void _mm_one(_MM* p, blas_t* a, blas_t* b, blas_t* c, blas_t alpha,
                  blas_t beta) noexcept nogil:
    cdef Py_ssize_t i, j
    if p.M == 0 or p.N == 0:
        return
    if p.K == 0:
        for i in range(p.M):
            for j in range(p.N):
                if beta == 0:
                    c[i * p.crs + j * p.ccs] = 0
                else:
                    c[i * p.crs + j * p.ccs] = beta * c[i * p.crs + j * p.ccs]
        return
    cdef Py_ssize_t inc = p.brs if p.K > 1 else 1
    if p.N == 1 and inc > 0 and inc <= INT_LIMIT:
        # matrix @ vector: y(M) = A x
        if p.ta == CH_N:
            _gemv(CH_T, <blas_int>p.K, <blas_int>p.M, alpha, a, p.lda, b, <blas_int>inc,
                  beta, c, <blas_int>p.crs)
        else:
            _gemv(CH_N, <blas_int>p.M, <blas_int>p.K, alpha, a, p.lda, b, <blas_int>inc,
                  beta, c, <blas_int>p.crs)
        return
    inc = p.acs if p.K > 1 else 1
    if p.M == 1 and inc > 0 and inc <= INT_LIMIT:
        # vector @ matrix: y(N) = B^T x  (C's row has unit stride)
        if p.tb == CH_N:
            _gemv(CH_N, <blas_int>p.N, <blas_int>p.K, alpha, b, p.ldb, a, <blas_int>inc,
                  beta, c, 1)
        else:
            _gemv(CH_T, <blas_int>p.K, <blas_int>p.N, alpha, b, p.ldb, a, <blas_int>inc,
                  beta, c, 1)
        return
    _gemm(p.tb, p.ta, <blas_int>p.N, <blas_int>p.M, <blas_int>p.K, alpha, b, p.ldb, a, p.lda,
          beta, c, p.ldc)


# Batches of small float32 products (attention's (B*H, T, d) @ (B*H, d, T)
# and its gradients): OpenBLAS packs both operands on every call, which costs
# about as much as the multiply-adds at T = 64, d = 32.  The register-tiled
# kernels of ptc_sgemm_small.h (conv's; one fixed summation order per output
# element, so the same bits at any thread count) read the operands in place:
# ptc_sgemm_small where B's rows are contiguous (A with any strides); any
# other B (B = X^T of a contiguous X: q @ k^T) is first copied row-major
# into a K x N scratch (ptc_sgemm_small_nt, 8 k-lanes per output element,
# measured 3-4x slower than that copy + ptc_sgemm_small at K = 32).
# Only AVX2+FMA CPUs (chosen at run time); other CPUs keep BLAS.
cdef extern from "ptc_sgemm_small.h":
    void ptc_sgemm_small(Py_ssize_t M, Py_ssize_t N, Py_ssize_t K, const float* A, Py_ssize_t lda,
                         Py_ssize_t sak, const float* B, Py_ssize_t ldb, float* C, Py_ssize_t ldc,
                         int acc) nogil
    int ptc_sgemm_small_ok() nogil
    int ptc_sgemm_small_set_level(int level) nogil
    void ptc_sgemm_small_tcopy(Py_ssize_t N, Py_ssize_t K, const float* X, Py_ssize_t ldx,
                               float* D, Py_ssize_t ldd) nogil

cdef enum:
    SMALL_BMM = 262144      # multiply-adds per product, at most (64**3)

cdef bint _small_bmm = True
cdef bint _small_single = True


def _set_small_single(bint on):
    """Tuning/testing knob: single float32 products below 64**3 multiply-adds
    (mm, addmm, a Linear's call on a few rows) by the small-GEMM kernels
    (the default) or by the BLAS; returns the previous setting."""
    global _small_single
    old = _small_single
    _small_single = on
    return old


def _set_small_bmm(bint on):
    """Tuning/testing knob: batched float32 products by the small-GEMM
    kernels where they apply.  Returns the previous value."""
    global _small_bmm
    old = _small_bmm
    _small_bmm = on
    return old


def _set_small_level(int level):
    """Testing knob: the small-GEMM kernels of at most this instruction-set
    level (1 AVX2+FMA, 2 AVX-512F; 0 the CPU's best).  Returns the level in
    force (0 where the CPU has neither)."""
    return ptc_sgemm_small_set_level(level)


cdef inline int _small_mode(_MM* p, Py_ssize_t nbatch, float alpha, float beta) noexcept nogil:
    """1: ptc_sgemm_small, 2: the same on a row-major copy of B, 0: BLAS.
    C = A B + C (beta 1) or C = alpha (A B) (beta 0: attention's scaled
    scores, scaled as the product leaves the kernel, as BLAS's alpha)."""
    if not _small_bmm or (nbatch >= 2 and beta != 0 and (beta != 1 or alpha != 1)):
        return 0
    if p.M < (4 if nbatch >= 2 else 2) or p.N < 16 or p.K < 8 or p.M * p.N * p.K > SMALL_BMM:
        return 0
    if not ptc_sgemm_small_ok():
        return 0
    return 1 if p.bcs == 1 else 2


cdef inline void _scale_rows(_MM* p, float* c, float alpha) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef float* row
    if alpha == 1:
        return
    for i in range(p.M):
        row = c + i * p.crs
        for j in range(p.N):
            row[j] = alpha * row[j]


cdef inline void _mm_small(_MM* p, int mode, float* a, float* b, float* c,
                           int acc, float alpha) noexcept nogil:
    cdef Py_ssize_t j, k, j0, j1
    cdef float* buf
    # the copy's row stride: N, padded by a cache line where rows a multiple of
    # 512 bytes apart would share L1 sets (ptc_sgemm_small_tcopy)
    cdef Py_ssize_t ld = p.N + 16 if p.N % 128 == 0 else p.N
    if mode == 1:
        ptc_sgemm_small(p.M, p.N, p.K, a, p.ars, p.acs, b, p.brs, c, p.crs, acc)
        _scale_rows(p, c, alpha)
        return
    buf = <float*>ptc_scratch_malloc(<size_t>(p.K * ld) * sizeof(float))
    if buf == NULL:         # no scratch: BLAS
        _mm_one(p, a, b, c, alpha, <float>acc)
        return
    if p.brs == 1:          # B = X^T of rows X along k: 8 x 8 vector transposes
        ptc_sgemm_small_tcopy(p.N, p.K, b, p.bcs, buf, ld)
    else:
        j0 = 0
        while j0 < p.N:     # 8-column panels: both sides stream through cache lines
            j1 = j0 + 8 if j0 + 8 <= p.N else p.N
            for k in range(p.K):
                for j in range(j0, j1):
                    buf[k * ld + j] = b[j * p.bcs + k * p.brs]
            j0 = j1
    ptc_sgemm_small(p.M, p.N, p.K, a, p.ars, p.acs, buf, ld, c, p.crs, acc)
    free(buf)
    _scale_rows(p, c, alpha)


cdef void _mm_small_one(_MM* p, int mode, float* a, float* b, float* c, float alpha,
                       float beta) noexcept nogil:
    """One small product (not one of a batch): ``c = alpha (a b)`` (beta 0),
    else ``c = fmaf(alpha, a b, beta c)`` -- the product's FMA chain from 0,
    then C taken in as the own GEMM's edge tiles take it (ptc_sg_edge), so
    that ``addmm`` of a full input has the bits of ``addmm`` of its row
    (:func:`addmm_rows_into`) and of ``mm`` + ``add``."""
    cdef _MM q
    cdef float* t
    cdef Py_ssize_t i, j
    if beta == 0:
        _mm_small(p, mode, a, b, c, 0, alpha)
        return
    t = <float*>ptc_scratch_malloc(<size_t>(p.M * p.N) * sizeof(float))
    if t == NULL:           # no scratch: BLAS
        _mm_one(p, a, b, c, alpha, beta)
        return
    q = p[0]
    q.crs = q.N
    _mm_small(&q, mode, a, b, t, 0, 1)
    for i in range(p.M):
        for j in range(p.N):
            c[i * p.crs + j] = fmaf(alpha, t[i * p.N + j], beta * c[i * p.crs + j])
    free(t)


cdef inline void _dot1(_MM* p, const blas_t* a, const blas_t* b, blas_t* c, blas_t alpha,
                       blas_t beta) noexcept nogil:
    """One 1 x K @ K x 1 product as torch's small-product kernel computes it:
    one sequential sum in the operands' type, then alpha and beta."""
    cdef Py_ssize_t k
    cdef blas_t acc = 0
    for k in range(p.K):
        acc = acc + a[k * p.acs] * b[k * p.brs]
    _put1(c, acc, alpha, beta)


cdef inline void _put1(blas_t* c, blas_t acc, blas_t alpha, blas_t beta) noexcept nogil:
    if beta == 0:
        c[0] = alpha * acc if alpha != 1 else acc
    else:
        c[0] = c[0] * beta + alpha * acc


cdef void _dots4(_MM* p, const blas_t* a, const blas_t* b, blas_t* c, Py_ssize_t nbatch,
                  Py_ssize_t sa, Py_ssize_t sb, Py_ssize_t sc, blas_t alpha,
                  blas_t beta) noexcept nogil:
    """:func:`_dot1` over ``nbatch`` products ``sa``/``sb``/``sc`` elements
    apart, four at a time: four independent sums (each still one sequential
    sum, so the same bits) keep the adder busy where one sum waits on the
    previous addition."""
    cdef Py_ssize_t i = 0, k
    cdef blas_t s0, s1, s2, s3
    cdef const blas_t* x
    cdef const blas_t* y
    while i + 4 <= nbatch:
        x = a + i * sa
        y = b + i * sb
        s0 = 0
        s1 = 0
        s2 = 0
        s3 = 0
        for k in range(p.K):
            s0 = s0 + x[k * p.acs] * y[k * p.brs]
            s1 = s1 + x[sa + k * p.acs] * y[sb + k * p.brs]
            s2 = s2 + x[2 * sa + k * p.acs] * y[2 * sb + k * p.brs]
            s3 = s3 + x[3 * sa + k * p.acs] * y[3 * sb + k * p.brs]
        _put1(c + i * sc, s0, alpha, beta)
        _put1(c + (i + 1) * sc, s1, alpha, beta)
        _put1(c + (i + 2) * sc, s2, alpha, beta)
        _put1(c + (i + 3) * sc, s3, alpha, beta)
        i += 4
    while i < nbatch:
        _dot1(p, a + i * sa, b + i * sb, c + i * sc, alpha, beta)
        i += 1


cdef inline void _mm_or_dot(_MM* p, bint dot, blas_t* a, blas_t* b, blas_t* c, blas_t alpha,
                            blas_t beta) noexcept nogil:
    if dot:
        _dot1(p, a, b, c, alpha, beta)
    else:
        _mm_one(p, a, b, c, alpha, beta)


cdef void _mm_batched(_MM* p, int nb, const Py_ssize_t* bshape, const Py_ssize_t* sa,
                      const Py_ssize_t* sb, const Py_ssize_t* sc, Py_ssize_t nbatch,
                      blas_t* a, blas_t* b, blas_t* c, blas_t alpha, blas_t beta,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t i
    cdef int mode = 0, acc
    # batched dot products (bmm of (B, 1, K) and (B, K, 1)): torch's bmm computes
    # products of fewer than 400 multiply-adds with its own loop; one BLAS call
    # per batch element cost more than the sums
    cdef bint dot = (blas_t is float or blas_t is double) and nb > 0 and p.M == 1 \
        and p.N == 1 and 0 < p.K < SMALL_DOT
    if dot and nb == 1 and not (nthreads > 1 and nbatch * p.K >= 65536):
        _dots4(p, a, b, c, nbatch, sa[0], sb[0], sc[0], alpha, beta)
        return
    if blas_t is float and not dot:
        mode = _small_mode(p, nbatch, alpha, beta) if _small_single or nbatch >= 2 else 0
        if mode:
            acc = beta != 0
            if nthreads > 1 and nbatch > 1 and nbatch * p.M * p.N * p.K >= PAR_BATCH_WORK:
                for i in prange(nbatch, num_threads=nthreads, schedule='static'):
                    _mm_small(p, mode, a + _boff(i, nb, bshape, sa), b + _boff(i, nb, bshape, sb),
                              c + _boff(i, nb, bshape, sc), acc, alpha)
            elif nbatch == 1:
                _mm_small_one(p, mode, a, b, c, alpha, beta)
            else:
                for i in range(nbatch):
                    _mm_small(p, mode, a + _boff(i, nb, bshape, sa), b + _boff(i, nb, bshape, sb),
                              c + _boff(i, nb, bshape, sc), acc, alpha)
            return
    if nthreads > 1 and nbatch > 1 and p.M * p.N * p.K <= SMALL_GEMM \
            and nbatch * p.M * p.N * p.K >= PAR_BATCH_WORK \
            and not (dot and nbatch * p.K < 65536):
        for i in prange(nbatch, num_threads=nthreads, schedule='static'):
            _mm_or_dot(p, dot, a + _boff(i, nb, bshape, sa), b + _boff(i, nb, bshape, sb),
                       c + _boff(i, nb, bshape, sc), alpha, beta)
    else:
        for i in range(nbatch):
            _mm_or_dot(p, dot, a + _boff(i, nb, bshape, sa), b + _boff(i, nb, bshape, sb),
                       c + _boff(i, nb, bshape, sc), alpha, beta)


cdef int _check_int(Py_ssize_t v, str what) except -1:
    if v > INT_LIMIT:
        raise RuntimeError(f"matmul: {what} = {v} is larger than the BLAS limit {INT_LIMIT}")
    return 0


def mm_into(_TensorBase c, _TensorBase a, _TensorBase b, alpha=1, beta=0):
    """``c = beta * c + alpha * (a @ b)`` over matching batch dims.

    ``a`` (..., M, K), ``b`` (..., K, N) and ``c`` (..., M, N) have the same
    number of dims and the same batch sizes (``a``/``b`` may be expanded
    views).  The caller checked shapes and dtypes and made the operands
    usable (:func:`usable`); ``c`` must have a unit stride in one of its two
    last dims and must not overlap ``a``/``b``.  Float32/64 and complex64/128
    go to BLAS, the integer types to a blocked int64 kernel (wrapping as
    PyTorch); ``beta == 0`` ignores ``c``'s values (NaN included).
    """
    cdef int nd = c._ndim
    if nd < 2 or a._ndim != nd or b._ndim != nd:
        raise RuntimeError("mm_into: operands must have the same number (>= 2) of dims")
    cdef int nb = nd - 2
    cdef Py_ssize_t nbatch = 1
    cdef int i
    for i in range(nb):
        if a._shape[i] != c._shape[i] or b._shape[i] != c._shape[i]:
            raise RuntimeError("mm_into: batch sizes differ")
        nbatch *= c._shape[i]
    cdef _MM p
    p.M = a._shape[nd - 2]
    p.K = a._shape[nd - 1]
    p.N = b._shape[nd - 1]
    if b._shape[nd - 2] != p.K or c._shape[nd - 2] != p.M or c._shape[nd - 1] != p.N:
        raise RuntimeError("mm_into: matrix sizes do not match")
    if a._dtype is not c._dtype or b._dtype is not c._dtype:
        raise RuntimeError("mm_into: dtypes differ")
    cdef int num = c._dtype.num
    if nbatch == 0 or p.M == 0 or p.N == 0:
        return c
    p.ars = a._strides[nd - 2]
    p.acs = a._strides[nd - 1]
    p.brs = b._strides[nd - 2]
    p.bcs = b._strides[nd - 1]
    p.crs = c._strides[nd - 2]
    p.ccs = c._strides[nd - 1]
    if num >= PT_UINT8 and num <= PT_INT64:
        return _int_mm(c, a, b, &p, nb, nbatch, alpha, beta)
    if num < PT_FLOAT32 or num > PT_COMPLEX128:
        if c._dtype._category == 1:     # uint16/32/64: PyTorch's limited types
            raise NotImplementedError(f"\"addmm_impl_cpu_\" not implemented for '{c._dtype._legacy}'")
        raise RuntimeError(f"mm_into: unsupported dtype {c._dtype}")
    _check_int(p.M, "rows")
    _check_int(p.N, "columns")
    _check_int(p.K, "inner size")
    cdef Py_ssize_t sa[64]
    cdef Py_ssize_t sb[64]
    cdef Py_ssize_t sc[64]
    cdef char* pa = a._ptr()
    cdef char* pb = b._ptr()
    cdef char* pc = c._ptr()
    cdef Py_ssize_t t
    for i in range(nb):
        sa[i] = a._strides[i]
        sb[i] = b._strides[i]
        sc[i] = c._strides[i]
    # C must be written with unit column stride: a column-major C is the
    # row-major C^T = B^T A^T, so swap the operands.
    if p.N <= 1:
        p.ccs = 1
    if p.M <= 1:
        p.crs = p.N if p.ccs == 1 else 1
    if not (p.ccs == 1 and p.crs >= p.N):
        if p.crs == 1 and p.ccs >= p.M:
            p.M, p.N = p.N, p.M
            p.crs, p.ccs = p.ccs, p.crs
            t = p.ars; p.ars = p.bcs; p.bcs = t
            t = p.acs; p.acs = p.brs; p.brs = t
            pa, pb = pb, pa
            for i in range(nb):
                sa[i], sb[i] = sb[i], sa[i]
        else:
            raise RuntimeError("mm_into: output has no unit-stride matrix dim")
    _check_int(p.crs, "output leading dimension")
    p.ldc = <blas_int>p.crs
    if p.K > 0:
        if _layout(p.M, p.K, p.ars, p.acs, &p.ta, &p.lda) != 0 or \
                _layout(p.K, p.N, p.brs, p.bcs, &p.tb, &p.ldb) != 0:
            raise RuntimeError("mm_into: operand not usable by BLAS (copy it first)")
    cdef int nthreads = get_num_threads()
    cdef float fa, fb
    cdef double da, db
    cdef cfloat ca, cb
    cdef cdouble za, zb
    if num == PT_FLOAT32:
        fa = alpha; fb = beta
        ptc_kernel_enter()
        with nogil:
            try:
                _mm_batched(&p, nb, c._shape, sa, sb, sc, nbatch, <float*>pa, <float*>pb,
                            <float*>pc, fa, fb, nthreads)
            finally:
                ptc_kernel_exit()
    elif num == PT_FLOAT64:
        da = alpha; db = beta
        ptc_kernel_enter()
        with nogil:
            try:
                _mm_batched(&p, nb, c._shape, sa, sb, sc, nbatch, <double*>pa, <double*>pb,
                            <double*>pc, da, db, nthreads)
            finally:
                ptc_kernel_exit()
    elif num == PT_COMPLEX64:
        ca = alpha; cb = beta
        ptc_kernel_enter()
        with nogil:
            try:
                _mm_batched(&p, nb, c._shape, sa, sb, sc, nbatch, <cfloat*>pa, <cfloat*>pb,
                            <cfloat*>pc, ca, cb, nthreads)
            finally:
                ptc_kernel_exit()
    else:
        za = alpha; zb = beta
        ptc_kernel_enter()
        with nogil:
            try:
                _mm_batched(&p, nb, c._shape, sa, sb, sc, nbatch, <cdouble*>pa, <cdouble*>pb,
                            <cdouble*>pc, za, zb, nthreads)
            finally:
                ptc_kernel_exit()
    return c


def addmm_rows_into(_TensorBase c, _TensorBase a, _TensorBase b, _TensorBase v, alpha, beta):
    """``c = beta * v + alpha * (a @ b)`` with the float32 vector ``v`` (N,)
    added to every row (addmm's and Linear's bias), read in place by the
    product instead of copied into ``c`` first: the first k block of ptcore's
    GEMM takes ``beta * v`` where it would take ``beta * c`` (the bits of the
    copy-then-product path, one pass over ``c`` fewer).  ``c`` (M, N) is
    contiguous, ``a`` (M, K) and ``b`` (K, N) BLAS-usable; returns False
    (``c`` untouched) where this path does not apply: the caller then copies
    ``v`` into ``c`` and calls :func:`mm_into`."""
    cdef _MM p
    cdef float fa, fb
    cdef float* pv
    if c._dtype.num != PT_FLOAT32 or a._dtype is not c._dtype or b._dtype is not c._dtype \
            or v._dtype is not c._dtype:
        return False
    if c._ndim != 2 or a._ndim != 2 or b._ndim != 2 or v._ndim != 1:
        return False
    p.M = a._shape[0]
    p.K = a._shape[1]
    p.N = b._shape[1]
    if b._shape[0] != p.K or c._shape[0] != p.M or c._shape[1] != p.N or v._shape[0] != p.N:
        return False
    # matrix products only (the vector products take gemv in mm_into)
    if p.M < 2 or p.N < 2 or p.K < 1 or p.M > INT_LIMIT or p.N > INT_LIMIT or p.K > INT_LIMIT:
        return False
    if c._strides[1] != 1 or c._strides[0] != p.N or v._strides[0] != 1:
        return False
    if _layout(p.M, p.K, a._strides[0], a._strides[1], &p.ta, &p.lda) != 0 or \
            _layout(p.K, p.N, b._strides[0], b._strides[1], &p.tb, &p.ldb) != 0:
        return False
    fa = alpha
    fb = beta
    pv = <float*>v._ptr()
    cdef float* pa = <float*>a._ptr()
    cdef float* pb = <float*>b._ptr()
    cdef float* pc = <float*>c._ptr()
    cdef int mode = 0
    cdef Py_ssize_t i, j
    if _small_single and p.M * p.N * p.K <= SMALL_BMM:
        # a small product (a Linear's call on a few rows): the small kernels'
        # product, then beta v taken in -- the bits of _mm_small_one with v
        # expanded into C, and (alpha 1) of mm + add
        p.ars = a._strides[0]
        p.acs = a._strides[1]
        p.brs = b._strides[0]
        p.bcs = b._strides[1]
        p.crs = p.N
        p.ccs = 1
        p.ldc = <blas_int>p.N
        mode = _small_mode(&p, 1, 1, 0)
    if mode:
        ptc_kernel_enter()
        with nogil:
            try:
                if fb == 0:     # (the vector is not read, NaN included)
                    _mm_small(&p, mode, pa, pb, pc, 0, fa)
                else:
                    _mm_small(&p, mode, pa, pb, pc, 0, 1)
                    for i in range(p.M):
                        for j in range(p.N):
                            pc[i * p.N + j] = fmaf(fa, pc[i * p.N + j], fb * pv[j])
            finally:
                ptc_kernel_exit()
        return True
    ptc_kernel_enter()
    with nogil:
        try:
            # column-major C^T (N x M) = op(B) op(A); Ci(i, j) = v[i]: ldci 0
            _sgemm_ci(p.tb, p.ta, <blas_int>p.N, <blas_int>p.M, <blas_int>p.K, fa,
                      pb, p.ldb, pa, p.lda, fb, pc, <blas_int>p.N, pv, 0)
        finally:
            ptc_kernel_exit()
    return True


cdef inline bint _plain_f32_matrix(object t) noexcept:
    """A float32 CPU matrix whose layout BLAS reads in place (2-D, both sizes
    at least 2): the common case the fast entries below take."""
    cdef _TensorBase x
    cdef char tr
    cdef blas_int ld
    if not isinstance(t, _TensorBase):
        return False
    x = <_TensorBase>t
    if x._ndim != 2 or x._dtype.num != PT_FLOAT32 or x._storage.device._type_code != 0:
        return False
    if x._shape[0] < 2 or x._shape[1] < 2 or x._shape[0] > INT_LIMIT or x._shape[1] > INT_LIMIT:
        return False
    return _layout(x._shape[0], x._shape[1], x._strides[0], x._strides[1], &tr, &ld) == 0


cdef inline bint _f32_row(object t) noexcept:
    """A float32 CPU (1, K) matrix whose row is contiguous (K >= 2): a decoder
    step's one token, the matrix-vector product's vector."""
    cdef _TensorBase x
    if not isinstance(t, _TensorBase):
        return False
    x = <_TensorBase>t
    return x._ndim == 2 and x._dtype.num == PT_FLOAT32 and x._storage.device._type_code == 0 \
        and x._shape[0] == 1 and 2 <= x._shape[1] <= INT_LIMIT and x._strides[1] == 1


def mm_fast(a, b):
    """``a @ b`` for two plain float32 CPU matrices (:func:`_plain_f32_matrix`;
    ``a`` may be one contiguous row, :func:`_f32_row`) with matching inner
    sizes, into a new contiguous tensor; None for anything else (the caller's
    full path checks, converts and raises).  ``torch.mm``'s Python front-end
    checks cost as much as a small product."""
    if not ((_plain_f32_matrix(a) or _f32_row(a)) and _plain_f32_matrix(b)):
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    if x._shape[1] != y._shape[0] or x._shape[1] < 2:
        return None
    cdef Py_ssize_t shape[2]
    shape[0] = x._shape[0]
    shape[1] = y._shape[1]
    cdef _TensorBase c = _empty_contig(x._dtype, 2, shape, x._storage.device, False)
    return mm_into(c, x, y, 1, 0)


def fold_fast(a, b, bint grad_enabled):
    """``matmul(a, b)`` of a contiguous CPU batch of rows ``a`` (3-D or more)
    and a matrix ``b`` of one float32/float64/complex dtype that BLAS reads
    in place (a Linear's weight.t(), a projection on a sequence), where no
    autograd node is recorded (grad mode off, or neither requires grad): the
    batch folded into the rows of one product, into a new contiguous
    ``(*a.shape[:-1], N)`` tensor; None for anything else (the caller's
    general path checks, records and raises)."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    cdef int num = x._dtype.num, nd = x._ndim, i
    if nd < 3 or nd > 64 or y._ndim != 2 or y._dtype.num != num or num < PT_FLOAT32 \
            or num > PT_COMPLEX128 or x._storage.device._type_code != 0 \
            or y._storage.device._type_code != 0:
        return None
    if grad_enabled and (x._requires_grad or y._requires_grad):
        return None
    cdef Py_ssize_t K = x._shape[nd - 1], N = y._shape[1]
    if K == 0 or y._shape[0] != K or not x._is_contig() or N > INT_LIMIT or K > INT_LIMIT:
        return None
    cdef Py_ssize_t rows = x._numel // K
    cdef char tr
    cdef blas_int ld
    if rows > INT_LIMIT or _layout(K, N, y._strides[0], y._strides[1], &tr, &ld) != 0:
        return None
    cdef Py_ssize_t shape[64]
    for i in range(nd - 1):
        shape[i] = x._shape[i]
    shape[nd - 1] = N
    cdef _TensorBase out = _empty_contig(x._dtype, nd, shape, x._storage.device, False)
    if rows == 0 or N == 0:
        return out
    cdef Py_ssize_t s2[2]
    cdef Py_ssize_t st[2]
    s2[0] = rows
    s2[1] = K
    st[0] = K
    st[1] = 1
    cdef _TensorBase a2 = x._view(2, s2, st, x._offset, -1)
    s2[1] = N
    st[0] = N
    mm_into(out._view(2, s2, st, 0, -1), a2, y, 1, 0)
    return out


def batched_fast(a, b, bint grad_enabled):
    """``matmul(a, b)`` of two CPU tensors of one float32/float64/complex dtype
    with the same number (3 or more) of dims and the same batch sizes, whose
    matrices BLAS reads in place (attention's ``q @ k.transpose(-2, -1)`` on
    (B, H, T, d) heads), where no autograd node is recorded (grad mode off,
    or neither requires grad): into a new contiguous tensor; None for
    anything else (broadcast batches, other layouts: the general path)."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    cdef int nd = x._ndim, i
    if nd < 3 or nd > 64 or _blas_pair(a, b, nd, nd) < 0:
        return None
    if grad_enabled and (x._requires_grad or y._requires_grad):
        return None
    for i in range(nd - 2):
        if x._shape[i] != y._shape[i]:
            return None
    cdef Py_ssize_t M = x._shape[nd - 2], K = x._shape[nd - 1], N = y._shape[nd - 1]
    if y._shape[nd - 2] != K or M > INT_LIMIT or K > INT_LIMIT or N > INT_LIMIT:
        return None
    cdef char tr
    cdef blas_int ld
    if K > 0 and (_layout(M, K, x._strides[nd - 2], x._strides[nd - 1], &tr, &ld) != 0
                  or _layout(K, N, y._strides[nd - 2], y._strides[nd - 1], &tr, &ld) != 0):
        return None
    cdef Py_ssize_t shape[64]
    for i in range(nd - 2):
        shape[i] = x._shape[i]
    shape[nd - 2] = M
    shape[nd - 1] = N
    cdef _TensorBase out = _empty_contig(x._dtype, nd, shape, x._storage.device, K == 0)
    if K == 0:
        return out
    return mm_into(out, x, y, 1, 0)


cdef int _blas_pair(object a, object b, int nda, int ndb) noexcept:
    """The dtype number of ``a`` and ``b`` when they are CPU tensors of
    ``nda`` and ``ndb`` dims and one float32/float64/complex64/complex128
    dtype; -1 otherwise."""
    if not isinstance(a, _TensorBase) or not isinstance(b, _TensorBase):
        return -1
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    cdef int num = x._dtype.num
    if x._ndim != nda or y._ndim != ndb or y._dtype.num != num or num < PT_FLOAT32 \
            or num > PT_COMPLEX128 or x._storage.device._type_code != 0 \
            or y._storage.device._type_code != 0:
        return -1
    return num


def bmm_fast(a, b):
    """``bmm(a, b)`` for two 3-D CPU tensors of one float32/float64/complex
    dtype whose matrices BLAS reads in place, with matching batch and inner
    sizes, into a new contiguous tensor; None for anything else (the
    caller's full path checks, copies and raises)."""
    if _blas_pair(a, b, 3, 3) < 0:
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    cdef char tr
    cdef blas_int ld
    if x._shape[0] != y._shape[0] or x._shape[2] != y._shape[1] or x._shape[1] > INT_LIMIT \
            or x._shape[2] > INT_LIMIT or y._shape[2] > INT_LIMIT:
        return None
    if _layout(x._shape[1], x._shape[2], x._strides[1], x._strides[2], &tr, &ld) != 0 \
            or _layout(y._shape[1], y._shape[2], y._strides[1], y._strides[2], &tr, &ld) != 0:
        return None
    cdef Py_ssize_t shape[3]
    shape[0] = x._shape[0]
    shape[1] = x._shape[1]
    shape[2] = y._shape[2]
    cdef _TensorBase c = _empty_contig(x._dtype, 3, shape, x._storage.device, False)
    return mm_into(c, x, y, 1, 0)


def mv_fast(m, v):
    """``mv(m, v)`` (also ``matmul`` of a matrix and a vector) for a CPU
    matrix and vector of one float32/float64/complex dtype whose layouts BLAS
    reads in place, with matching sizes: the product of ``m`` and ``v`` as a
    (K, 1) matrix (the general path's ``mm_into`` call) into a new vector;
    None for anything else."""
    if _blas_pair(m, v, 2, 1) < 0:
        return None
    cdef _TensorBase x = <_TensorBase>m, y = <_TensorBase>v
    cdef char tr
    cdef blas_int ld
    if x._shape[1] != y._shape[0] or x._shape[0] > INT_LIMIT or x._shape[1] > INT_LIMIT:
        return None
    cdef Py_ssize_t shape[2]
    cdef Py_ssize_t strides[2]
    shape[0] = y._shape[0]
    shape[1] = 1
    strides[0] = y._strides[0]
    strides[1] = 1
    if _layout(x._shape[0], x._shape[1], x._strides[0], x._strides[1], &tr, &ld) != 0 \
            or _layout(shape[0], 1, strides[0], 1, &tr, &ld) != 0:
        return None
    cdef _TensorBase col = y._view(2, shape, strides, y._offset, -1)
    shape[0] = x._shape[0]
    strides[0] = 1
    cdef _TensorBase out = _empty_contig(x._dtype, 1, shape, x._storage.device, False)
    mm_into(out._view(2, shape, strides, 0, -1), x, col, 1, 0)
    return out


def addmm_fast(v, a, b):
    """``v + a @ b`` (beta = alpha = 1) for a contiguous float32 CPU vector
    ``v`` of ``b``'s column count and plain float32 matrices ``a``, ``b``
    (a Linear's forward), the vector read by the product
    (:func:`addmm_rows_into`); None for anything else."""
    if not ((_plain_f32_matrix(a) or _f32_row(a)) and _plain_f32_matrix(b)) \
            or not isinstance(v, _TensorBase):
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b, w = <_TensorBase>v
    if w._ndim != 1 or w._dtype.num != PT_FLOAT32 or w._storage.device._type_code != 0 \
            or w._shape[0] != y._shape[1] or w._strides[0] != 1 or x._shape[1] != y._shape[0]:
        return None
    cdef Py_ssize_t shape[2]
    shape[0] = x._shape[0]
    shape[1] = y._shape[1]
    cdef _TensorBase c = _empty_contig(x._dtype, 2, shape, x._storage.device, False)
    if shape[0] == 1:
        # one row (a decoder step's token): the bias copied, then the general
        # path's matrix-vector product with beta 1 (its bits)
        memcpy(c._ptr(), w._ptr(), <size_t>shape[1] * sizeof(float))
        return mm_into(c, x, y, 1, 1)
    if not addmm_rows_into(c, x, y, w, 1, 1):
        return None
    return c


# GEMM epilogues (ptcore.compile, ptcore._inductor.epilogues): a product whose
# result one elementwise op reads and nothing else, run as one call.  At one
# thread the own GEMM applies the op to each tile of C as it leaves the last k
# block (ptc_sgemm.h's ptc_sg_epi: no separate pass over C); elsewhere the
# product runs as eager's and the op follows in one pass.  The same bits as the
# product and the op in sequence (each an elementwise function of the
# product's element).
cdef extern from "ptc_sgemm.h":
    ctypedef struct ptc_sg_epi:
        int kind
        const float* aux
        Py_ssize_t ldaux
    int ptc_sgemm_epi(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, float alpha,
                      const float* a, Py_ssize_t lda, const float* b, Py_ssize_t ldb,
                      float beta, float* c, Py_ssize_t ldc, const float* ci, Py_ssize_t ldci,
                      const ptc_sg_epi* epi) nogil

cdef enum:
    EPI_RELU = 1        # relu(C): C < 0 ? 0 : C (NaN and -0 kept, as relu)
    EPI_MASK = 2        # threshold_backward(C, aux, 0): aux <= 0 ? 0 : C
    EPI_ADD = 3         # C + aux
    EPI_ACT = 4         # map(C): an activation by eager's own map (exact GELU's)
    EPI_ACT_GRAD = 5    # map(aux, C): its gradient at the input aux (GELU's backward map)

# eager's float32 maps (ptc_math.h's PTC_MAP_F32_FMA loops): o[i] = f(a[i]), o[i] = f(x[i], g[i])
ctypedef void (*_map1_t)(float* o, const float* a, Py_ssize_t n) noexcept nogil
ctypedef void (*_map2_t)(float* o, const float* x, const float* g, Py_ssize_t n) noexcept nogil


cdef void _epi_pass(int kind, float* c, Py_ssize_t M, Py_ssize_t N, const float* aux,
                    Py_ssize_t ars) noexcept nogil:
    """The epilogue over the contiguous (M, N) ``c`` (aux[i * ars + j])."""
    cdef Py_ssize_t i, j
    cdef float* row
    cdef const float* ax
    for i in range(M):
        row = c + i * N
        if kind == EPI_RELU:
            for j in range(N):
                row[j] = 0.0 if row[j] < 0.0 else row[j]
        elif kind == EPI_MASK:
            ax = aux + i * ars
            for j in range(N):
                row[j] = 0.0 if ax[j] <= 0.0 else row[j]
        else:
            ax = aux + i * ars
            for j in range(N):
                row[j] = row[j] + ax[j]


def bias_in_product_exact(Py_ssize_t m, Py_ssize_t n, Py_ssize_t k):
    """Whether a float32 (m, k) @ (k, n) product is ptcore's GEMM's, also as one
    of a batch, with the bias of :func:`addmm_fast` added with the bits of a
    separate add: ptcore's GEMM runs it (more than 64**3 multiply-adds: the
    batched products' small kernel takes up to that; m >= 2: no gemv), and k
    fits in one of its k blocks (256 on every ISA; a longer k adds the bias
    to the first block's sum).  The same row's product then has the same bits
    in any row count (one FMA chain per element); the BLAS's kernels sum
    with and without a C input, and per row count, in different orders."""
    return m >= 2 and m * n * k > OWN_SGEMM_MIN and ptc_sgemm_isa() != 0 and 1 <= k <= 256


def gemm_epilogue(int kind, a, b, v, aux, act=None):
    """``op(v + a @ b)`` (``v`` None: ``op(a @ b)``) for plain float32 CPU
    matrices (:func:`_plain_f32_matrix`), ``v`` a contiguous float32 vector
    of ``b``'s column count (a Linear's bias), op by ``kind``: 1 relu, 2
    ``threshold_backward(., aux, 0)``, 3 ``. + aux`` with ``aux`` a float32
    CPU (M, N) matrix of unit column stride; 4 and 5 one of eager's float32
    maps, ``act`` its capsule (``_ew.gelu_map()``,
    ``_nn_kernels.gelu_backward_map()``): 4 ``map(.)``, 5 ``map(aux, .)``
    with ``aux`` a contiguous (M, N) float32 matrix (the activation's input;
    ``.`` the incoming gradient).  A new contiguous tensor with the bits of
    :func:`mm_fast` / :func:`addmm_fast` followed by that op; None where
    those fast entries do not take the operands (the caller runs the ops
    themselves).

    Kinds 1-3 run on each output tile as the GEMM leaves it (one thread,
    ptcore's GEMM; elsewhere one pass after the product).  Kinds 4 and 5
    run the map once over the whole result, in place: the very function
    eager's pass calls (from the module that calls it), on the same
    contiguous elements, so each element takes the map's vector or scalar
    expression as in eager (they differ in the gradient's bits) -- what the
    op's own output costs (a tensor, a pass writing it) is saved.  Per tile
    the map measured no faster (GELU is its erf and exp, not memory), and
    would have to place every tile's elements in eager's vectors.  None for
    4 and 5 at more than one thread (eager's pass is parallel there) and
    where ``act`` is None (the map getters' answer on the baseline copy,
    where eager's F.gelu does not run the map)."""
    if kind < EPI_RELU or kind > EPI_ACT_GRAD:
        raise ValueError(f"gemm_epilogue: unknown kind {kind}")
    cdef void* amap = NULL
    if kind >= EPI_ACT:
        if act is None:         # (eager does not run the map on this CPU)
            return None
        if not PyCapsule_CheckExact(act):
            raise TypeError(f"gemm_epilogue: kinds 4 and 5 take the map's capsule as act, "
                            f"not {type(act).__name__}")
        amap = PyCapsule_GetPointer(act, b"ptcore.map1_f32" if kind == EPI_ACT
                                    else b"ptcore.map2_f32")
    if not (_plain_f32_matrix(a) and _plain_f32_matrix(b)):
        return None
    if kind >= EPI_ACT and get_num_threads() != 1:
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b, w = None, r = None
    cdef Py_ssize_t M = x._shape[0], K = x._shape[1], N = y._shape[1], ars = 0
    if y._shape[0] != K:
        return None
    if v is not None:
        if not isinstance(v, _TensorBase):
            return None
        w = <_TensorBase>v
        if w._ndim != 1 or w._dtype.num != PT_FLOAT32 or w._storage.device._type_code != 0 \
                or w._shape[0] != N or w._strides[0] != 1:
            return None
    cdef const float* paux = NULL
    if kind != EPI_RELU and kind != EPI_ACT:
        if not isinstance(aux, _TensorBase):
            return None
        r = <_TensorBase>aux
        if r._ndim != 2 or r._dtype.num != PT_FLOAT32 or r._storage.device._type_code != 0 \
                or r._shape[0] != M or r._shape[1] != N or r._strides[1] != 1 \
                or r._strides[0] < N or (kind == EPI_ACT_GRAD and r._strides[0] != N):
            return None
        paux = <const float*>r._ptr()
        ars = r._strides[0]
    cdef Py_ssize_t shape[2]
    shape[0] = M
    shape[1] = N
    cdef _TensorBase c = _empty_contig(x._dtype, 2, shape, x._storage.device, False)
    cdef char ta, tb
    cdef blas_int lda, ldb
    cdef ptc_sg_epi epi
    cdef int rc = -1
    cdef float* pc = <float*>c._ptr()
    cdef const float* pv = NULL if w is None else <const float*>w._ptr()
    cdef const float* pa = <const float*>x._ptr()
    cdef const float* pb = <const float*>y._ptr()
    if kind < EPI_ACT and get_num_threads() == 1 and M * N * K >= OWN_SGEMM_MIN and \
            ptc_sgemm_isa() != 0 and \
            _layout(M, K, x._strides[0], x._strides[1], &ta, &lda) == 0 and \
            _layout(K, N, y._strides[0], y._strides[1], &tb, &ldb) == 0:
        # column-major C^T (N x M) = op(B) op(A), as mm_into / addmm_rows_into call it
        epi.kind = kind
        epi.aux = paux
        epi.ldaux = ars
        ptc_kernel_enter()
        with nogil:
            try:
                rc = ptc_sgemm_epi(tb, ta, N, M, K, 1.0, pb, ldb, pa, lda,
                                   0.0 if pv == NULL else 1.0, pc, N, pv, 0, &epi)
            finally:
                ptc_kernel_exit()
        if rc == 0:
            return c
    if w is None:
        mm_into(c, x, y, 1, 0)
    elif not addmm_rows_into(c, x, y, w, 1, 1):
        return None
    ptc_kernel_enter()
    with nogil:
        try:
            if kind == EPI_ACT:
                (<_map1_t>amap)(pc, pc, M * N)
            elif kind == EPI_ACT_GRAD:
                (<_map2_t>amap)(pc, paux, pc, M * N)
            else:
                _epi_pass(kind, pc, M, N, paux, ars)
        finally:
            ptc_kernel_exit()
    return c


def product(_TensorBase a, _TensorBase b):
    """``a @ b`` into a new contiguous tensor: ``a`` (..., M, K), ``b``
    (..., K, N) with the same batch sizes (expanded views allowed) and the
    same float/complex/integer dtype (checked by the caller).  Operands BLAS
    cannot read in place are copied contiguous first."""
    cdef int nd = a._ndim
    cdef int i
    cdef Py_ssize_t shape[64]
    if nd < 2 or b._ndim != nd or nd > 64:
        raise RuntimeError("product: operands must have the same number (>= 2) of dims")
    for i in range(nd - 1):
        shape[i] = a._shape[i]
    shape[nd - 1] = b._shape[nd - 1]
    cdef int num = a._dtype.num
    if num >= PT_FLOAT32 and num <= PT_COMPLEX128:
        if not usable(a):
            a = a.contiguous()
        if not usable(b):
            b = b.contiguous()
    cdef _TensorBase c = _empty_contig(a._dtype, nd, shape, a._storage.device, False)
    return mm_into(c, a, b, 1, 0)


# ---------------------------------------------------------------------------
# integer products (int64 accumulation; wraps modulo 2**bits like PyTorch)
# ---------------------------------------------------------------------------

cdef inline uint64_t _u(int_t v) noexcept nogil:
    return <uint64_t>(<int64_t>v)


cdef void _imm_rows(_MM* p, const int_t* a, const int_t* b, int_t* c, uint64_t alpha,
                    uint64_t beta, Py_ssize_t i0, Py_ssize_t i1, uint64_t* acc) noexcept nogil:
    cdef Py_ssize_t i, j, k
    cdef uint64_t av
    cdef const int_t* brow
    cdef int_t* cij
    for i in range(i0, i1):
        memset(acc, 0, p.N * sizeof(uint64_t))
        for k in range(p.K):
            av = _u(a[i * p.ars + k * p.acs])
            if av == 0:
                continue
            brow = b + k * p.brs
            if p.bcs == 1:
                for j in range(p.N):
                    acc[j] += av * _u(brow[j])
            else:
                for j in range(p.N):
                    acc[j] += av * _u(brow[j * p.bcs])
        for j in range(p.N):
            cij = c + i * p.crs + j * p.ccs
            if beta == 0:
                cij[0] = <int_t>(alpha * acc[j])
            else:
                cij[0] = <int_t>(beta * _u(cij[0]) + alpha * acc[j])


cdef int _imm_batched(_MM* p, int nb, const Py_ssize_t* bshape, const Py_ssize_t* sa,
                      const Py_ssize_t* sb, const Py_ssize_t* sc, Py_ssize_t nbatch,
                      const int_t* a, const int_t* b, int_t* c, uint64_t alpha, uint64_t beta,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t nrows = nbatch * p.M, r, bi, i
    cdef int nt = nthreads
    if nrows * p.N * (p.K + 1) < 65536 or nt < 1 or nrows < 2:
        nt = 1
    cdef uint64_t* acc = <uint64_t*>ptc_scratch_malloc(nt * (p.N + 1) * sizeof(uint64_t))
    if acc == NULL:
        return -1
    for r in prange(nrows, num_threads=nt, schedule='static'):
        bi = r // p.M
        i = r - bi * p.M
        _imm_rows(p, a + _boff(bi, nb, bshape, sa), b + _boff(bi, nb, bshape, sb),
                  c + _boff(bi, nb, bshape, sc), alpha, beta, i, i + 1,
                  acc + threadid() * (p.N + 1))
    free(acc)
    return 0


cdef object _int_mm(_TensorBase c, _TensorBase a, _TensorBase b, _MM* p, int nb,
                    Py_ssize_t nbatch, alpha, beta):
    cdef Py_ssize_t sa[64]
    cdef Py_ssize_t sb[64]
    cdef Py_ssize_t sc[64]
    cdef int i
    for i in range(nb):
        sa[i] = a._strides[i]
        sb[i] = b._strides[i]
        sc[i] = c._strides[i]
    cdef uint64_t ua = <uint64_t>(int(alpha) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t ub = <uint64_t>(int(beta) & 0xFFFFFFFFFFFFFFFF)
    cdef int nt = get_num_threads()
    cdef int num = c._dtype.num
    cdef char* pa = a._ptr()
    cdef char* pb = b._ptr()
    cdef char* pc = c._ptr()
    cdef int r = 0
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_UINT8:
                r = _imm_batched(p, nb, c._shape, sa, sb, sc, nbatch, <uint8_t*>pa, <uint8_t*>pb,
                             <uint8_t*>pc, ua, ub, nt)
            elif num == PT_INT8:
                r = _imm_batched(p, nb, c._shape, sa, sb, sc, nbatch, <int8_t*>pa, <int8_t*>pb,
                             <int8_t*>pc, ua, ub, nt)
            elif num == PT_INT16:
                r = _imm_batched(p, nb, c._shape, sa, sb, sc, nbatch, <int16_t*>pa, <int16_t*>pb,
                             <int16_t*>pc, ua, ub, nt)
            elif num == PT_INT32:
                r = _imm_batched(p, nb, c._shape, sa, sb, sc, nbatch, <int32_t*>pa, <int32_t*>pb,
                             <int32_t*>pc, ua, ub, nt)
            else:
                r = _imm_batched(p, nb, c._shape, sa, sb, sc, nbatch, <int64_t*>pa, <int64_t*>pb,
                             <int64_t*>pc, ua, ub, nt)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("matmul: out of memory for the integer product's accumulators")
    return c


# ---------------------------------------------------------------------------
# dot / vdot
# ---------------------------------------------------------------------------

cdef blas_t _dot_chunked(Py_ssize_t n, blas_t* x, Py_ssize_t incx, blas_t* y, Py_ssize_t incy,
                         bint conj) noexcept nogil:
    cdef blas_t s = 0
    cdef Py_ssize_t step, done = 0
    while done < n:
        step = n - done
        if step > (1 << 30):
            step = 1 << 30
        s = s + _dot(<blas_int>step, x + done * incx, <blas_int>incx, y + done * incy,
                     <blas_int>incy, conj)
        done += step
    return s


cdef uint64_t _idot(Py_ssize_t n, const int_t* x, Py_ssize_t incx, const int_t* y,
                    Py_ssize_t incy) noexcept nogil:
    cdef uint64_t s = 0
    cdef Py_ssize_t i
    for i in range(n):
        s += _u(x[i * incx]) * _u(y[i * incy])
    return s


def dot_into(_TensorBase out not None, _TensorBase x not None, _TensorBase y not None, bint conj=False):
    """``out[()] = sum(conj(x) * y if conj else x * y)`` for 1-D ``x``, ``y``.

    Float/complex types go to BLAS ``?dot``/``?dotu``/``?dotc`` (strides must
    be positive: :func:`vector_usable`); integer types wrap like PyTorch.
    """
    _dot_into(out, x, y, conj)
    return out


cdef int _dot_into(_TensorBase out, _TensorBase x, _TensorBase y, bint conj) except -1:
    """:func:`dot_into`'s work (also :func:`dot_fast`'s)."""
    cdef Py_ssize_t n = x._shape[0]
    cdef Py_ssize_t ix = x._strides[0] if n > 1 else 1
    cdef Py_ssize_t iy = y._strides[0] if n > 1 else 1
    cdef int num = out._dtype.num
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    cdef char* po = out._ptr()
    if x._dtype is not out._dtype or y._dtype is not out._dtype or y._shape[0] != n:
        raise RuntimeError("dot_into: dtype or size mismatch")
    if num >= PT_FLOAT32 and (ix <= 0 or iy <= 0 or ix > INT_LIMIT or iy > INT_LIMIT):
        raise RuntimeError("dot_into: vector not usable by BLAS (copy it first)")
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                (<float*>po)[0] = _dot_chunked(n, <float*>px, ix, <float*>py, iy, conj)
            elif num == PT_FLOAT64:
                (<double*>po)[0] = _dot_chunked(n, <double*>px, ix, <double*>py, iy, conj)
            elif num == PT_COMPLEX64:
                (<cfloat*>po)[0] = _dot_chunked(n, <cfloat*>px, ix, <cfloat*>py, iy, conj)
            elif num == PT_COMPLEX128:
                (<cdouble*>po)[0] = _dot_chunked(n, <cdouble*>px, ix, <cdouble*>py, iy, conj)
            elif num == PT_UINT8:
                (<uint8_t*>po)[0] = <uint8_t>_idot(n, <uint8_t*>px, ix, <uint8_t*>py, iy)
            elif num == PT_INT8:
                (<int8_t*>po)[0] = <int8_t>_idot(n, <int8_t*>px, ix, <int8_t*>py, iy)
            elif num == PT_INT16:
                (<int16_t*>po)[0] = <int16_t>_idot(n, <int16_t*>px, ix, <int16_t*>py, iy)
            elif num == PT_INT32:
                (<int32_t*>po)[0] = <int32_t>_idot(n, <int32_t*>px, ix, <int32_t*>py, iy)
            elif num == PT_INT64:
                (<int64_t*>po)[0] = <int64_t>_idot(n, <int64_t*>px, ix, <int64_t*>py, iy)
            else:
                with gil:
                    if out._dtype._category == 1:   # uint16/32/64: PyTorch's limited types
                        raise NotImplementedError(f"\"dot\" not implemented for '{out._dtype._legacy}'")
                    raise RuntimeError(f"dot_into: unsupported dtype {out._dtype}")
        finally:
            ptc_kernel_exit()
    return 0


def dot_fast(a, b, bint conj):
    """``dot(a, b)`` (``vdot`` when ``conj``) of two CPU vectors of one length
    and one float32/float64/complex64/complex128 dtype whose strides BLAS
    reads (positive), into a new 0-d tensor; None for anything else (the
    caller's full path checks, copies and raises)."""
    cdef int num = _blas_pair(a, b, 1, 1)
    if num < 0:
        return None
    cdef _TensorBase x = <_TensorBase>a, y = <_TensorBase>b
    cdef Py_ssize_t n = x._shape[0]
    cdef Py_ssize_t ix = x._strides[0] if n > 1 else 1
    cdef Py_ssize_t iy = y._strides[0] if n > 1 else 1
    if y._shape[0] != n or ix <= 0 or iy <= 0 or ix > INT_LIMIT or iy > INT_LIMIT:
        return None
    cdef _TensorBase out = _empty_contig(x._dtype, 0, NULL, x._storage.device, False)
    _dot_into(out, x, y, conj and num >= PT_COMPLEX64)
    return out


include "_lapack.pxi"
