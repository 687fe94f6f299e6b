from libc.math cimport sqrt, fma, fmaf
from libc.float cimport FLT_MIN, DBL_MIN
# LAPACK drivers on batches of matrices (included by _blas.pyx).
#
# Every routine takes 3-D tensors (batch, rows, cols) with any strides,
# copies one batch element at a time into a column-major work buffer, calls
# LAPACK and writes results through the output tensors' strides.  Output
# tensors are allocated by ptcore._linalg_ops / ptcore.linalg (real-valued
# outputs such as singular values and the int32 pivots/info are contiguous).
# ``info`` receives LAPACK's info per batch element; the Python layer turns
# it into PyTorch's error messages.

cdef struct _M3:
    char* p
    Py_ssize_t nb, r, c, sb, sr, sc


cdef int _m3(_TensorBase t, _M3* m) except -1:
    if t._ndim != 3:
        raise RuntimeError(f"lapack: expected a 3-D tensor, got {t._ndim}-D")
    m.p = t._ptr()
    m.nb = t._shape[0]
    m.r = t._shape[1]
    m.c = t._shape[2]
    m.sb = t._strides[0]
    m.sr = t._strides[1]
    m.sc = t._strides[2]
    return 0


cdef inline void _load(blas_t* dst, Py_ssize_t ld, _M3* m, Py_ssize_t bi) noexcept nogil:
    cdef const blas_t* src = (<blas_t*>m.p) + bi * m.sb
    cdef Py_ssize_t i, j
    for j in range(m.c):
        for i in range(m.r):
            dst[i + j * ld] = src[i * m.sr + j * m.sc]


cdef inline void _store(_M3* m, Py_ssize_t bi, const blas_t* src, Py_ssize_t ld,
                        Py_ssize_t rows, Py_ssize_t cols) noexcept nogil:
    """out[bi, :rows, :cols] = the column-major ``src`` (leading dim ``ld``)."""
    cdef blas_t* dst = (<blas_t*>m.p) + bi * m.sb
    cdef Py_ssize_t i, j
    for j in range(cols):
        for i in range(rows):
            dst[i * m.sr + j * m.sc] = src[i + j * ld]


cdef inline blas_t _conj(blas_t v) noexcept nogil:
    if blas_t is cfloat or blas_t is cdouble:
        return v.conjugate()
    return v


cdef inline Py_ssize_t _wsize(blas_t* w) noexcept nogil:
    """A workspace query's answer (the real part of work[0])."""
    if blas_t is float or blas_t is cfloat:
        return <Py_ssize_t>((<float*>w)[0]) + 1
    return <Py_ssize_t>((<double*>w)[0]) + 1


cdef inline size_t _rsz(blas_t* tag) noexcept nogil:
    """Size of the real type that goes with blas_t."""
    if blas_t is float or blas_t is cfloat:
        return sizeof(float)
    return sizeof(double)


cdef inline Py_ssize_t _mx(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a > b else b


cdef inline Py_ssize_t _mn(Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return a if a < b else b


cdef inline void* _alloc(Py_ssize_t n, size_t size) noexcept nogil:
    return ptc_scratch_malloc(<size_t>_mx(n, 1) * size)


cdef int _check_dims(_M3* m) except -1:
    if m.r > INT_LIMIT or m.c > INT_LIMIT or m.r * m.c > (<Py_ssize_t>1 << 62):
        raise RuntimeError(f"lapack: matrix of size {m.r}x{m.c} is too large")
    return 0


cdef inline int _num(_TensorBase t) except -1:
    cdef int n = t._dtype.num
    if n < PT_FLOAT32 or n > PT_COMPLEX128:
        raise RuntimeError(f"lapack: unsupported dtype {t._dtype}")
    return n


# -- typed LAPACK calls -------------------------------------------------------

ctypedef fused _real_t:
    float
    double


# Below this order (both dims) real LU runs _getrf_small: MKL's getrf — what
# torch's CPU build calls — factors such matrices with this arithmetic bit for
# bit (checked against torch 2.13 on random real matrices up to 16 x 16).  The
# OpenBLAS getrf from scipy rounds differently (it gave exact zero pivots where
# torch has e.g. 2.2e-16, so det/slogdet/inv disagreed on near-singular
# matrices) and mishandled subnormal pivots.  Larger matrices keep getrf.
cdef enum:
    _LU_SMALL = 16


cdef blas_int _getrf_small(blas_int m, blas_int n, _real_t* a, blas_int lda,
                           blas_int* ipiv) noexcept nogil:
    """Right-looking unblocked LU with partial pivoting, column-major ``a``:
    reference idamax pivot (first largest |a|; a NaN wins only in first place),
    rows below the pivot scaled by its reciprocal (divided when the reciprocal
    would overflow, and — as MKL's small square kernels do — in the
    second-to-last column of a square matrix of order <= 4), trailing update
    by fused multiply-add in column order, never skipping zero multipliers
    (0 * inf is NaN, as in torch).  Returns LAPACK's info."""
    cdef Py_ssize_t k, i, j, p, kmax = _mn(m, n)
    cdef blas_int info = 0
    cdef _real_t amax, v, piv, r, t
    cdef _real_t sfmin
    cdef bint divide
    if _real_t is float:
        sfmin = FLT_MIN
    else:
        sfmin = DBL_MIN
    for k in range(kmax):
        p = k
        amax = a[k + k * lda]
        if amax < 0:
            amax = -amax
        for i in range(k + 1, m):
            v = a[i + k * lda]
            if v < 0:
                v = -v
            if v > amax:
                amax = v
                p = i
        ipiv[k] = <blas_int>(p + 1)
        piv = a[p + k * lda]
        if piv != 0:
            if p != k:
                for j in range(n):
                    t = a[k + j * lda]
                    a[k + j * lda] = a[p + j * lda]
                    a[p + j * lda] = t
            divide = (m == n and n <= 4 and k == n - 2) or not (amax >= sfmin)
            if divide:
                for i in range(k + 1, m):
                    a[i + k * lda] = a[i + k * lda] / piv
            else:
                r = (<_real_t>1) / piv
                for i in range(k + 1, m):
                    a[i + k * lda] = a[i + k * lda] * r
        elif info == 0:
            info = <blas_int>(k + 1)
        for j in range(k + 1, n):
            t = a[k + j * lda]
            for i in range(k + 1, m):
                if _real_t is float:
                    a[i + j * lda] = fmaf(-a[i + k * lda], t, a[i + j * lda])
                else:
                    a[i + j * lda] = fma(-a[i + k * lda], t, a[i + j * lda])
    return info


cdef inline void _getrf(blas_int m, blas_int n, blas_t* a, blas_int lda, blas_int* ipiv,
                        blas_int* info) noexcept nogil:
    if blas_t is float:
        if m <= _LU_SMALL and n <= _LU_SMALL:
            info[0] = _getrf_small(m, n, a, lda, ipiv)
        else:
            lp.sgetrf(&m, &n, a, &lda, ipiv, info)
    elif blas_t is double:
        if m <= _LU_SMALL and n <= _LU_SMALL:
            info[0] = _getrf_small(m, n, a, lda, ipiv)
        else:
            lp.dgetrf(&m, &n, a, &lda, ipiv, info)
    elif blas_t is cfloat:
        lp.cgetrf(&m, &n, a, &lda, ipiv, info)
    else:
        lp.zgetrf(&m, &n, a, &lda, ipiv, info)


cdef inline void _getrs(blas_int n, blas_int nrhs, blas_t* a, blas_int lda, blas_int* ipiv,
                        blas_t* b, blas_int ldb, blas_int* info) noexcept nogil:
    cdef char trans = CH_N
    if blas_t is float:
        lp.sgetrs(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info)
    elif blas_t is double:
        lp.dgetrs(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info)
    elif blas_t is cfloat:
        lp.cgetrs(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info)
    else:
        lp.zgetrs(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info)


cdef inline void _potrf(char uplo, blas_int n, blas_t* a, blas_int lda,
                        blas_int* info) noexcept nogil:
    if blas_t is float:
        lp.spotrf(&uplo, &n, a, &lda, info)
    elif blas_t is double:
        lp.dpotrf(&uplo, &n, a, &lda, info)
    elif blas_t is cfloat:
        lp.cpotrf(&uplo, &n, a, &lda, info)
    else:
        lp.zpotrf(&uplo, &n, a, &lda, info)


cdef inline void _geqrf(blas_int m, blas_int n, blas_t* a, blas_int lda, blas_t* tau,
                        blas_t* work, blas_int lwork, blas_int* info) noexcept nogil:
    if blas_t is float:
        lp.sgeqrf(&m, &n, a, &lda, tau, work, &lwork, info)
    elif blas_t is double:
        lp.dgeqrf(&m, &n, a, &lda, tau, work, &lwork, info)
    elif blas_t is cfloat:
        lp.cgeqrf(&m, &n, a, &lda, tau, work, &lwork, info)
    else:
        lp.zgeqrf(&m, &n, a, &lda, tau, work, &lwork, info)


cdef inline void _orgqr(blas_int m, blas_int n, blas_int k, blas_t* a, blas_int lda,
                        blas_t* tau, blas_t* work, blas_int lwork,
                        blas_int* info) noexcept nogil:
    if blas_t is float:
        lp.sorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, info)
    elif blas_t is double:
        lp.dorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, info)
    elif blas_t is cfloat:
        lp.cungqr(&m, &n, &k, a, &lda, tau, work, &lwork, info)
    else:
        lp.zungqr(&m, &n, &k, a, &lda, tau, work, &lwork, info)


cdef inline void _gesdd(char jobz, blas_int m, blas_int n, blas_t* a, blas_int lda, void* s,
                        blas_t* u, blas_int ldu, blas_t* vt, blas_int ldvt, blas_t* work,
                        blas_int lwork, void* rwork, blas_int* iwork,
                        blas_int* info) noexcept nogil:
    if blas_t is float:
        lp.sgesdd(&jobz, &m, &n, a, &lda, <float*>s, u, &ldu, vt, &ldvt, work, &lwork, iwork,
                  info)
    elif blas_t is double:
        lp.dgesdd(&jobz, &m, &n, a, &lda, <double*>s, u, &ldu, vt, &ldvt, work, &lwork, iwork,
                  info)
    elif blas_t is cfloat:
        lp.cgesdd(&jobz, &m, &n, a, &lda, <float*>s, u, &ldu, vt, &ldvt, work, &lwork,
                  <float*>rwork, iwork, info)
    else:
        lp.zgesdd(&jobz, &m, &n, a, &lda, <double*>s, u, &ldu, vt, &ldvt, work, &lwork,
                  <double*>rwork, iwork, info)


cdef inline void _syevd(char jobz, char uplo, blas_int n, blas_t* a, blas_int lda, void* w,
                        blas_t* work, blas_int lwork, void* rwork, blas_int lrwork,
                        blas_int* iwork, blas_int liwork, blas_int* info) noexcept nogil:
    if blas_t is float:
        lp.ssyevd(&jobz, &uplo, &n, a, &lda, <float*>w, work, &lwork, iwork, &liwork, info)
    elif blas_t is double:
        lp.dsyevd(&jobz, &uplo, &n, a, &lda, <double*>w, work, &lwork, iwork, &liwork, info)
    elif blas_t is cfloat:
        lp.cheevd(&jobz, &uplo, &n, a, &lda, <float*>w, work, &lwork, <float*>rwork, &lrwork,
                  iwork, &liwork, info)
    else:
        lp.zheevd(&jobz, &uplo, &n, a, &lda, <double*>w, work, &lwork, <double*>rwork,
                  &lrwork, iwork, &liwork, info)


# -- LU: determinants ---------------------------------------------------------

cdef int _lu_k(blas_t* tag, _M3* A, _M3* LU, int32_t* piv, int32_t* info) noexcept nogil:
    cdef Py_ssize_t m = A.r, n = A.c, k = _mn(A.r, A.c), bi, i
    cdef blas_int inf = 0
    cdef blas_t* buf = <blas_t*>_alloc(m * n, sizeof(blas_t))
    cdef blas_int* ipiv = <blas_int*>_alloc(k, sizeof(blas_int))
    if buf == NULL or ipiv == NULL:
        free(buf); free(ipiv)
        return -1
    for bi in range(A.nb):
        _load(buf, _mx(m, 1), A, bi)
        _getrf(<blas_int>m, <blas_int>n, buf, <blas_int>_mx(m, 1), ipiv, &inf)
        _store(LU, bi, buf, _mx(m, 1), m, n)
        for i in range(k):
            piv[bi * k + i] = ipiv[i]
        info[bi] = inf
    free(buf); free(ipiv)
    return 0


def lu_into(_TensorBase A, _TensorBase LU, _TensorBase piv, _TensorBase info):
    """LU factors (``getrf``) of each matrix of ``A`` into ``LU``; 1-based
    pivots into the contiguous int32 ``piv`` (batch, min(m, n)), LAPACK's info
    into the contiguous int32 ``info`` (batch,)."""
    cdef _M3 a, lu
    _m3(A, &a); _m3(LU, &lu); _check_dims(&a)
    cdef int num = _num(A)
    cdef int32_t* pp = <int32_t*>piv._ptr()
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _lu_k(<float*>NULL, &a, &lu, pp, pi)
            elif num == PT_FLOAT64:
                r = _lu_k(<double*>NULL, &a, &lu, pp, pi)
            elif num == PT_COMPLEX64:
                r = _lu_k(<cfloat*>NULL, &a, &lu, pp, pi)
            else:
                r = _lu_k(<cdouble*>NULL, &a, &lu, pp, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("lu: out of memory for the LAPACK work arrays")


cdef blas_t _det_of_lu(blas_t* buf, Py_ssize_t n, const blas_int* ipiv) noexcept nogil:
    """The product, in order, of the diagonal of the column-major LU factors
    ``buf`` (n x n), an entry negated where row ``i`` was interchanged."""
    cdef blas_t acc = 1, v
    cdef Py_ssize_t i
    for i in range(n):
        v = buf[i + i * n]
        if ipiv[i] != i + 1:
            v = -v
        acc = acc * v
    return acc


def det_fast(A):
    """``linalg.det`` of a contiguous float32/float64 CPU square matrix of at
    least one row into a new 0-d tensor: ``getrf`` of the matrix's memory read
    column-major (A^T, as torch and the general path factor a contiguous A),
    then the product of U's diagonal with the row interchanges' signs, in the
    order of the general path's ``prod`` (sequential below 16 rows); None for
    anything else."""
    if not isinstance(A, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>A
    cdef int num = t._dtype.num
    if t._ndim != 2 or (num != PT_FLOAT32 and num != PT_FLOAT64) \
            or t._storage.device._type_code != 0 or t._shape[0] != t._shape[1] \
            or t._shape[0] < 1 or t._shape[0] >= 16 or not t._is_contig():
        # (from 16 rows prod takes its vectorised order, torch's: the general path)
        return None
    cdef Py_ssize_t n = t._shape[0]
    cdef _TensorBase out = _empty_contig(t._dtype, 0, NULL, t._storage.device, False)
    cdef size_t isz = t._dtype.itemsize
    cdef void* buf = _alloc(n * n, isz)
    cdef blas_int* ipiv = <blas_int*>_alloc(n, sizeof(blas_int))
    cdef blas_int inf = 0
    if buf == NULL or ipiv == NULL:
        free(buf); free(ipiv)
        raise MemoryError("det: out of memory for the LAPACK work arrays")
    cdef char* src = t._ptr()
    cdef char* po = out._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            memcpy(buf, src, n * n * isz)
            if num == PT_FLOAT32:
                _getrf(<blas_int>n, <blas_int>n, <float*>buf, <blas_int>n, ipiv, &inf)
                (<float*>po)[0] = _det_of_lu(<float*>buf, n, ipiv)
            else:
                _getrf(<blas_int>n, <blas_int>n, <double*>buf, <blas_int>n, ipiv, &inf)
                (<double*>po)[0] = _det_of_lu(<double*>buf, n, ipiv)
        finally:
            ptc_kernel_exit()
            free(buf); free(ipiv)
    return out


# -- inverse --------------------------------------------------------------------

cdef int _inv_k(blas_t* tag, _M3* A, _M3* out, int32_t* info) noexcept nogil:
    # torch's inv_ex is solve_ex(A, I): getrf, then getrs even on a singular
    # factor (the inverse is then inf/NaN), info from getrf
    cdef Py_ssize_t n = A.r, bi, i
    cdef blas_int inf = 0, inf2 = 0, ld = <blas_int>_mx(n, 1)
    cdef blas_t* buf = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* w = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_int* ipiv = <blas_int*>_alloc(n, sizeof(blas_int))
    if buf == NULL or w == NULL or ipiv == NULL:
        free(buf); free(w); free(ipiv)
        return -1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        _getrf(<blas_int>n, <blas_int>n, buf, ld, ipiv, &inf)
        memset(w, 0, n * n * sizeof(blas_t))
        for i in range(n):
            w[i + i * n] = 1
        if n > 0:
            _getrs(<blas_int>n, <blas_int>n, buf, ld, ipiv, w, ld, &inf2)
        _store(out, bi, w, ld, n, n)
        info[bi] = inf
    free(buf); free(w); free(ipiv)
    return 0


def inv_into(_TensorBase A, _TensorBase out, _TensorBase info):
    """Inverse of each square matrix of ``A`` (``getrf`` + ``getrs`` on the
    identity, as torch's ``solve_ex(A, I)``)."""
    cdef _M3 a, o
    _m3(A, &a); _m3(out, &o); _check_dims(&a)
    cdef int num = _num(A)
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _inv_k(<float*>NULL, &a, &o, pi)
            elif num == PT_FLOAT64:
                r = _inv_k(<double*>NULL, &a, &o, pi)
            elif num == PT_COMPLEX64:
                r = _inv_k(<cfloat*>NULL, &a, &o, pi)
            else:
                r = _inv_k(<cdouble*>NULL, &a, &o, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("inv: out of memory for the LAPACK work arrays")


# -- solve -----------------------------------------------------------------------

cdef int _solve_k(blas_t* tag, _M3* A, _M3* B, _M3* X, int32_t* info) noexcept nogil:
    cdef Py_ssize_t n = A.r, k = B.c, bi
    cdef blas_int inf = 0, inf2 = 0, ld = <blas_int>_mx(n, 1)
    cdef blas_t* a = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* b = <blas_t*>_alloc(n * k, sizeof(blas_t))
    cdef blas_int* ipiv = <blas_int*>_alloc(n, sizeof(blas_int))
    if a == NULL or b == NULL or ipiv == NULL:
        free(a); free(b); free(ipiv)
        return -1
    for bi in range(A.nb):
        _load(a, ld, A, bi)
        _load(b, ld, B, bi)
        inf = 0
        if n > 0:
            # getrf + getrs as torch's solve_ex (which solves even with a
            # singular factor); info from getrf
            _getrf(<blas_int>n, <blas_int>n, a, ld, ipiv, &inf)
            if k > 0:
                _getrs(<blas_int>n, <blas_int>k, a, ld, ipiv, b, ld, &inf2)
        _store(X, bi, b, ld, n, k)
        info[bi] = inf
    free(a); free(b); free(ipiv)
    return 0


def solve_into(_TensorBase A, _TensorBase B, _TensorBase X, _TensorBase info):
    """``X = A^-1 B`` for each batch element (``getrf`` + ``getrs``); ``A`` (b, n, n),
    ``B`` and ``X`` (b, n, k)."""
    cdef _M3 a, bb, x
    _m3(A, &a); _m3(B, &bb); _m3(X, &x); _check_dims(&a); _check_dims(&bb)
    cdef int num = _num(A)
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _solve_k(<float*>NULL, &a, &bb, &x, pi)
            elif num == PT_FLOAT64:
                r = _solve_k(<double*>NULL, &a, &bb, &x, pi)
            elif num == PT_COMPLEX64:
                r = _solve_k(<cfloat*>NULL, &a, &bb, &x, pi)
            else:
                r = _solve_k(<cdouble*>NULL, &a, &bb, &x, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("solve: out of memory for the LAPACK work arrays")


# -- Cholesky ----------------------------------------------------------------------

cdef inline double _sq_abs(blas_t v) noexcept nogil:
    if blas_t is cfloat or blas_t is cdouble:
        return <double>v.real * v.real + <double>v.imag * v.imag
    return <double>v * v


cdef inline bint _finite_entry(blas_t v) noexcept nogil:
    if blas_t is cfloat or blas_t is cdouble:
        return v.real - v.real == 0 and v.imag - v.imag == 0
    return v - v == 0


cdef blas_int _chol_reference(blas_t* a, Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    """Reference LAPACK's unblocked potf2 (lower) in place: the factor and info
    torch reports for a matrix with inf/NaN entries, where an optimised potrf
    may finish with info 0 (an inf pivot scales its column by 1/inf = 0, so
    -inf * 0 = NaN below it, and the next pivot is NaN)."""
    cdef Py_ssize_t i, j, k
    cdef double ajj
    cdef blas_t s, r
    for j in range(n):
        if blas_t is cfloat or blas_t is cdouble:
            ajj = a[j + j * ld].real
        else:
            ajj = a[j + j * ld]
        for k in range(j):
            ajj -= _sq_abs(a[j + k * ld])
        if not ajj > 0:                 # <= 0 or NaN
            a[j + j * ld] = <blas_t>ajj
            return <blas_int>(j + 1)
        ajj = sqrt(ajj)
        a[j + j * ld] = <blas_t>ajj
        r = <blas_t>(1.0 / ajj)
        for i in range(j + 1, n):
            s = a[i + j * ld]
            for k in range(j):
                s = s - a[i + k * ld] * _conj(a[j + k * ld])
            a[i + j * ld] = s * r
    return 0


cdef int _chol_k(blas_t* tag, _M3* A, _M3* L, bint upper, int32_t* info) noexcept nogil:
    cdef Py_ssize_t n = A.r, bi, i, j
    cdef blas_int inf = 0, ld = <blas_int>_mx(n, 1)
    cdef blas_t* buf = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* dst
    cdef bint finite
    if buf == NULL:
        return -1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        inf = 0
        finite = True
        for j in range(n):
            for i in range(j, n):
                if not _finite_entry(buf[i + j * ld]):
                    finite = False
        if not finite:
            inf = _chol_reference(buf, n, ld)
        elif n > 0:
            _potrf(CH_L, <blas_int>n, buf, ld, &inf)
        if inf == 0:
            # reference LAPACK (torch's) stops at a NaN pivot too (an optimised
            # potrf may not): the first NaN diagonal entry of the factor
            for j in range(n):
                if buf[j + j * ld] != buf[j + j * ld]:
                    inf = <blas_int>(j + 1)
                    break
        dst = (<blas_t*>L.p) + bi * L.sb
        for i in range(n):
            for j in range(n):
                if upper:
                    # U = L^H: U[i, j] = conj(L[j, i]) for j >= i
                    dst[i * L.sr + j * L.sc] = _conj(buf[j + i * ld]) if j >= i else 0
                else:
                    dst[i * L.sr + j * L.sc] = buf[i + j * ld] if i >= j else 0
        info[bi] = inf
    free(buf)
    return 0


def cholesky_into(_TensorBase A, _TensorBase L, bint upper, _TensorBase info):
    """Cholesky factor of each matrix (lower triangle of ``A`` is read)."""
    cdef _M3 a, l
    _m3(A, &a); _m3(L, &l); _check_dims(&a)
    cdef int num = _num(A)
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _chol_k(<float*>NULL, &a, &l, upper, pi)
            elif num == PT_FLOAT64:
                r = _chol_k(<double*>NULL, &a, &l, upper, pi)
            elif num == PT_COMPLEX64:
                r = _chol_k(<cfloat*>NULL, &a, &l, upper, pi)
            else:
                r = _chol_k(<cdouble*>NULL, &a, &l, upper, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("cholesky: out of memory for the LAPACK work arrays")


# -- QR ------------------------------------------------------------------------------

cdef int _qr_k(blas_t* tag, _M3* A, _M3* Q, _M3* R, bint want_q, Py_ssize_t qc,
               int32_t* info) noexcept nogil:
    """R (rr x n) = triu of geqrf's result; Q (m x qc) from orgqr/ungqr."""
    cdef Py_ssize_t m = A.r, n = A.c, k = _mn(A.r, A.c), bi, i, j
    cdef Py_ssize_t wc = _mx(n, qc)       # work matrix columns
    cdef blas_int inf = 0, ld = <blas_int>_mx(m, 1), lwork
    cdef blas_t wq = 0
    cdef Py_ssize_t lw = 1
    cdef blas_t* buf = <blas_t*>_alloc(m * wc, sizeof(blas_t))
    cdef blas_t* tau = <blas_t*>_alloc(k, sizeof(blas_t))
    cdef blas_t* work = NULL
    cdef blas_t* dst
    if buf == NULL or tau == NULL:
        free(buf); free(tau)
        return -1
    if m > 0 and n > 0:
        _geqrf(<blas_int>m, <blas_int>n, buf, ld, tau, &wq, -1, &inf)
        lw = _wsize(&wq)
        if want_q and qc > 0:
            _orgqr(<blas_int>m, <blas_int>qc, <blas_int>k, buf, ld, tau, &wq, -1, &inf)
            lw = _mx(lw, _wsize(&wq))
    lw = _mx(lw, wc)
    work = <blas_t*>_alloc(lw, sizeof(blas_t))
    if work == NULL:
        free(buf); free(tau)
        return -1
    lwork = <blas_int>lw
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        inf = 0
        if m > 0 and n > 0:
            _geqrf(<blas_int>m, <blas_int>n, buf, ld, tau, work, lwork, &inf)
        dst = (<blas_t*>R.p) + bi * R.sb
        for i in range(R.r):
            for j in range(n):
                dst[i * R.sr + j * R.sc] = buf[i + j * ld] if j >= i else 0
        if want_q and qc > 0 and m > 0:
            if k > 0:
                _orgqr(<blas_int>m, <blas_int>qc, <blas_int>k, buf, ld, tau, work, lwork, &inf)
            else:
                # no reflectors: Q is the identity
                for j in range(qc):
                    for i in range(m):
                        buf[i + j * ld] = 1 if i == j else 0
            _store(Q, bi, buf, ld, m, qc)
        info[bi] = inf
    free(buf); free(tau); free(work)
    return 0


def qr_into(_TensorBase A, _TensorBase Q, _TensorBase R, _TensorBase info):
    """QR of each matrix of ``A`` (m x n).  ``R`` is (rr x n) with rr = min(m, n)
    (reduced, 'r') or m (complete); ``Q`` (m x qc) or None when not wanted."""
    cdef _M3 a, q, rr
    _m3(A, &a); _m3(R, &rr); _check_dims(&a)
    cdef bint want_q = Q is not None
    cdef Py_ssize_t qc = 0
    if want_q:
        _m3(Q, &q)
        qc = q.c
    cdef int num = _num(A)
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _qr_k(<float*>NULL, &a, &q, &rr, want_q, qc, pi)
            elif num == PT_FLOAT64:
                r = _qr_k(<double*>NULL, &a, &q, &rr, want_q, qc, pi)
            elif num == PT_COMPLEX64:
                r = _qr_k(<cfloat*>NULL, &a, &q, &rr, want_q, qc, pi)
            else:
                r = _qr_k(<cdouble*>NULL, &a, &q, &rr, want_q, qc, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("qr: out of memory for the LAPACK work arrays")


# -- SVD ----------------------------------------------------------------------------

cdef int _svd_k(blas_t* tag, _M3* A, _M3* U, char* S, _M3* Vh, char jobz,
                int32_t* info) noexcept nogil:
    cdef Py_ssize_t m = A.r, n = A.c, k = _mn(A.r, A.c), mx = _mx(A.r, A.c), bi
    cdef Py_ssize_t ucols = k if jobz == CH_S else m
    cdef Py_ssize_t vrows = k if jobz == CH_S else n
    cdef blas_int inf = 0, ld = <blas_int>_mx(m, 1), lwork
    cdef blas_int ldu = <blas_int>(_mx(m, 1) if jobz != CH_N else 1)
    cdef blas_int ldvt = <blas_int>(_mx(vrows, 1) if jobz != CH_N else 1)
    cdef blas_t wq = 0
    cdef size_t rs = _rsz(tag)
    cdef Py_ssize_t lrwork = 0
    if blas_t is cfloat or blas_t is cdouble:
        if jobz == CH_N:
            lrwork = 7 * k
        else:
            lrwork = _mx(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k)
    cdef blas_t* buf = <blas_t*>_alloc(m * n, sizeof(blas_t))
    cdef blas_t* u = <blas_t*>_alloc(m * ucols if jobz != CH_N else 1, sizeof(blas_t))
    cdef blas_t* vt = <blas_t*>_alloc(vrows * n if jobz != CH_N else 1, sizeof(blas_t))
    cdef blas_int* iwork = <blas_int*>_alloc(8 * k, sizeof(blas_int))
    cdef void* rwork = _alloc(lrwork, rs)
    cdef blas_t* work = NULL
    if buf == NULL or u == NULL or vt == NULL or iwork == NULL or rwork == NULL:
        free(buf); free(u); free(vt); free(iwork); free(rwork)
        return -1
    _gesdd(jobz, <blas_int>m, <blas_int>n, buf, ld, S, u, ldu, vt, ldvt, &wq, -1, rwork,
           iwork, &inf)
    lwork = <blas_int>_mx(_wsize(&wq), 1)
    work = <blas_t*>_alloc(lwork, sizeof(blas_t))
    if work == NULL:
        free(buf); free(u); free(vt); free(iwork); free(rwork)
        return -1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        _gesdd(jobz, <blas_int>m, <blas_int>n, buf, ld, S + bi * k * rs, u, ldu, vt, ldvt,
               work, lwork, rwork, iwork, &inf)
        if jobz != CH_N:
            _store(U, bi, u, ldu, m, ucols)
            _store(Vh, bi, vt, ldvt, vrows, n)
        info[bi] = inf
    free(buf); free(u); free(vt); free(iwork); free(rwork); free(work)
    return 0


def svd_into(_TensorBase A, _TensorBase U, _TensorBase S, _TensorBase Vh, str mode,
             _TensorBase info):
    """``gesdd`` on each (non-empty) matrix of ``A``.  ``mode``: 'N' (values
    only; U/Vh None), 'S' (reduced) or 'A' (full).  ``S`` is a contiguous real
    (batch, min(m, n)) tensor."""
    cdef _M3 a, u, vh
    _m3(A, &a); _check_dims(&a)
    if a.r == 0 or a.c == 0:
        raise RuntimeError("svd_into: empty matrices are handled by the caller")
    cdef char jobz = ord(mode)
    if jobz != CH_N:
        _m3(U, &u); _m3(Vh, &vh)
    cdef int num = _num(A)
    cdef char* ps = S._ptr()
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _svd_k(<float*>NULL, &a, &u, ps, &vh, jobz, pi)
            elif num == PT_FLOAT64:
                r = _svd_k(<double*>NULL, &a, &u, ps, &vh, jobz, pi)
            elif num == PT_COMPLEX64:
                r = _svd_k(<cfloat*>NULL, &a, &u, ps, &vh, jobz, pi)
            else:
                r = _svd_k(<cdouble*>NULL, &a, &u, ps, &vh, jobz, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("svd: out of memory for the LAPACK work arrays")


cdef bint _all_finite(const blas_t* x, Py_ssize_t r, Py_ssize_t c, Py_ssize_t sr,
                      Py_ssize_t sc) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef blas_t v
    for i in range(r):
        for j in range(c):
            v = x[i * sr + j * sc]
            if v - v != 0:          # (inf - inf and NaN - NaN are NaN)
                return False
    return True


cdef int _m2(_TensorBase t, _M3* m) except -1:
    """A 2-D tensor as a batch of one matrix."""
    m.p = t._ptr()
    m.nb = 1
    m.r = t._shape[0]
    m.c = t._shape[1]
    m.sb = 0
    m.sr = t._strides[0]
    m.sc = t._strides[1]


def svd_fast(A, bint full):
    """``linalg.svd(A, full_matrices=full)`` of a finite float32/float64 CPU
    matrix with at least one row and column: ``(U, S, Vh)``, new contiguous
    tensors from ``gesdd`` (:func:`svd_into`'s kernel); None for anything
    else, a non-finite entry or a failed factorisation (the caller's general
    path checks and raises)."""
    if not isinstance(A, _TensorBase):
        return None
    cdef _TensorBase t = <_TensorBase>A
    cdef int num = t._dtype.num
    if t._ndim != 2 or (num != PT_FLOAT32 and num != PT_FLOAT64) \
            or t._storage.device._type_code != 0:
        return None
    cdef Py_ssize_t m = t._shape[0], n = t._shape[1]
    if m < 1 or n < 1 or m > 4096 or n > 4096:
        return None
    cdef Py_ssize_t k = m if m < n else n
    cdef Py_ssize_t ushape[2]
    cdef Py_ssize_t vshape[2]
    ushape[0] = m
    ushape[1] = m if full else k
    vshape[0] = n if full else k
    vshape[1] = n
    cdef _TensorBase U = _empty_contig(t._dtype, 2, ushape, t._storage.device, False)
    cdef _TensorBase S = _empty_contig(t._dtype, 1, &k, t._storage.device, False)
    cdef _TensorBase Vh = _empty_contig(t._dtype, 2, vshape, t._storage.device, False)
    cdef _M3 a, u, vh
    cdef char jobz = CH_A if full else CH_S
    cdef int32_t info = 0
    cdef int r = 0
    cdef bint finite
    _m2(t, &a)
    _m2(U, &u)
    _m2(Vh, &vh)
    cdef char* ps = S._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                finite = _all_finite(<float*>a.p, m, n, a.sr, a.sc)
                if finite:
                    r = _svd_k(<float*>NULL, &a, &u, ps, &vh, jobz, &info)
            else:
                finite = _all_finite(<double*>a.p, m, n, a.sr, a.sc)
                if finite:
                    r = _svd_k(<double*>NULL, &a, &u, ps, &vh, jobz, &info)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("svd: out of memory for the LAPACK work arrays")
    if not finite or info != 0:
        return None
    return U, S, Vh


# -- symmetric / Hermitian eigenproblem ---------------------------------------------

cdef int _eigh_k(blas_t* tag, _M3* A, char* W, _M3* V, bint want_v, char uplo,
                 int32_t* info) noexcept nogil:
    cdef Py_ssize_t n = A.r, bi
    cdef char jobz = CH_V if want_v else CH_N
    cdef blas_int inf = 0, ld = <blas_int>_mx(n, 1), lwork, lrwork = 1, liwork
    cdef blas_t wq = 0
    cdef double rq[2]
    cdef blas_int iq = 0
    cdef size_t rs = _rsz(tag)
    cdef blas_t* buf = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    rq[0] = 0
    rq[1] = 0
    if buf == NULL:
        return -1
    _syevd(jobz, uplo, <blas_int>n, buf, ld, W, &wq, -1, rq, -1, &iq, -1, &inf)
    lwork = <blas_int>_mx(_wsize(&wq), 1)
    liwork = <blas_int>_mx(iq, 1)
    if blas_t is cfloat:
        lrwork = <blas_int>_mx(<Py_ssize_t>((<float*>rq)[0]) + 1, 1)
    elif blas_t is cdouble:
        lrwork = <blas_int>_mx(<Py_ssize_t>(rq[0]) + 1, 1)
    work = <blas_t*>_alloc(lwork, sizeof(blas_t))
    rwork = _alloc(lrwork, rs)
    iwork = <blas_int*>_alloc(liwork, sizeof(blas_int))
    if work == NULL or rwork == NULL or iwork == NULL:
        free(buf); free(work); free(rwork); free(iwork)
        return -1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        inf = 0
        if n > 0:
            _syevd(jobz, uplo, <blas_int>n, buf, ld, W + bi * n * rs, work, lwork, rwork,
                   lrwork, iwork, liwork, &inf)
        if want_v:
            _store(V, bi, buf, ld, n, n)
        info[bi] = inf
    free(buf); free(work); free(rwork); free(iwork)
    return 0


def eigh_into(_TensorBase A, _TensorBase W, _TensorBase V, str uplo, _TensorBase info):
    """``syevd``/``heevd``: ascending eigenvalues into the contiguous real
    (batch, n) ``W``, eigenvectors (columns) into ``V`` unless it is None."""
    cdef _M3 a, v
    _m3(A, &a); _check_dims(&a)
    cdef bint want_v = V is not None
    if want_v:
        _m3(V, &v)
    cdef char ul = ord(uplo)
    cdef int num = _num(A)
    cdef char* pw = W._ptr()
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _eigh_k(<float*>NULL, &a, pw, &v, want_v, ul, pi)
            elif num == PT_FLOAT64:
                r = _eigh_k(<double*>NULL, &a, pw, &v, want_v, ul, pi)
            elif num == PT_COMPLEX64:
                r = _eigh_k(<cfloat*>NULL, &a, pw, &v, want_v, ul, pi)
            else:
                r = _eigh_k(<cdouble*>NULL, &a, pw, &v, want_v, ul, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("eigh: out of memory for the LAPACK work arrays")


# -- general eigenproblem -------------------------------------------------------------

cdef int _eig_real(blas_t* tag, _M3* A, char* W, char* V, bint want_v,
                   int32_t* info) noexcept nogil:
    """Real ``geev``: complex eigenvalues/eigenvectors written as (re, im) pairs
    into the contiguous complex outputs W (batch, n) and V (batch, n, n)."""
    cdef Py_ssize_t n = A.r, bi, i, j
    cdef char jobvl = CH_N
    cdef char jobvr = CH_V if want_v else CH_N
    cdef blas_int inf = 0, ld = <blas_int>_mx(n, 1), lwork = -1, ldv
    cdef blas_t wq = 0
    cdef blas_t* buf = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* wr = <blas_t*>_alloc(n, sizeof(blas_t))
    cdef blas_t* wi = <blas_t*>_alloc(n, sizeof(blas_t))
    cdef blas_t* vr = <blas_t*>_alloc(n * n if want_v else 1, sizeof(blas_t))
    cdef blas_t* work = NULL
    cdef blas_t* wout
    cdef blas_t* vout
    cdef blas_t dummy = 0
    ldv = ld if want_v else 1
    if buf == NULL or wr == NULL or wi == NULL or vr == NULL:
        free(buf); free(wr); free(wi); free(vr)
        return -1
    if blas_t is float:
        lp.sgeev(&jobvl, &jobvr, &ld, buf, &ld, wr, wi, &dummy, &ld, vr, &ldv, &wq, &lwork, &inf)
    elif blas_t is double:
        lp.dgeev(&jobvl, &jobvr, &ld, buf, &ld, wr, wi, &dummy, &ld, vr, &ldv, &wq, &lwork, &inf)
    lwork = <blas_int>_mx(_wsize(&wq), 4 * n + 1)
    work = <blas_t*>_alloc(lwork, sizeof(blas_t))
    if work == NULL:
        free(buf); free(wr); free(wi); free(vr)
        return -1
    cdef blas_int nn = <blas_int>n
    cdef blas_int one = 1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        inf = 0
        if n > 0:
            if blas_t is float:
                lp.sgeev(&jobvl, &jobvr, &nn, buf, &ld, wr, wi, &dummy, &one, vr, &ldv, work,
                         &lwork, &inf)
            elif blas_t is double:
                lp.dgeev(&jobvl, &jobvr, &nn, buf, &ld, wr, wi, &dummy, &one, vr, &ldv, work,
                         &lwork, &inf)
        wout = (<blas_t*>W) + 2 * bi * n
        for i in range(n):
            wout[2 * i] = wr[i]
            wout[2 * i + 1] = wi[i]
        if want_v:
            vout = (<blas_t*>V) + 2 * bi * n * n
            j = 0
            while j < n:
                if wi[j] != 0 and j + 1 < n:
                    for i in range(n):
                        # v_j = vr[:, j] + i vr[:, j+1];  v_{j+1} = conj(v_j)
                        vout[2 * (i * n + j)] = vr[i + j * ld]
                        vout[2 * (i * n + j) + 1] = vr[i + (j + 1) * ld]
                        vout[2 * (i * n + j + 1)] = vr[i + j * ld]
                        vout[2 * (i * n + j + 1) + 1] = -vr[i + (j + 1) * ld]
                    j += 2
                else:
                    for i in range(n):
                        vout[2 * (i * n + j)] = vr[i + j * ld]
                        vout[2 * (i * n + j) + 1] = 0
                    j += 1
        info[bi] = inf
    free(buf); free(wr); free(wi); free(vr); free(work)
    return 0


cdef int _eig_cplx(blas_t* tag, _M3* A, char* W, _M3* V, bint want_v,
                   int32_t* info) noexcept nogil:
    cdef Py_ssize_t n = A.r, bi
    cdef char jobvl = CH_N
    cdef char jobvr = CH_V if want_v else CH_N
    cdef blas_int inf = 0, ld = <blas_int>_mx(n, 1), lwork = -1, ldv, nn = <blas_int>n
    cdef blas_int one = 1
    cdef blas_t wq = 0
    cdef blas_t dummy = 0
    cdef blas_t* buf = <blas_t*>_alloc(n * n, sizeof(blas_t))
    cdef blas_t* vr = <blas_t*>_alloc(n * n if want_v else 1, sizeof(blas_t))
    cdef void* rwork = _alloc(2 * n, _rsz(tag))
    cdef blas_t* work = NULL
    ldv = ld if want_v else 1
    if buf == NULL or vr == NULL or rwork == NULL:
        free(buf); free(vr); free(rwork)
        return -1
    if blas_t is cfloat:
        lp.cgeev(&jobvl, &jobvr, &ld, buf, &ld, <cfloat*>W, &dummy, &one, vr, &ldv, &wq, &lwork,
                 <float*>rwork, &inf)
    elif blas_t is cdouble:
        lp.zgeev(&jobvl, &jobvr, &ld, buf, &ld, <cdouble*>W, &dummy, &one, vr, &ldv, &wq,
                 &lwork, <double*>rwork, &inf)
    lwork = <blas_int>_mx(_wsize(&wq), 2 * n + 1)
    work = <blas_t*>_alloc(lwork, sizeof(blas_t))
    if work == NULL:
        free(buf); free(vr); free(rwork)
        return -1
    for bi in range(A.nb):
        _load(buf, ld, A, bi)
        inf = 0
        if n > 0:
            if blas_t is cfloat:
                lp.cgeev(&jobvl, &jobvr, &nn, buf, &ld, (<cfloat*>W) + bi * n, &dummy, &one, vr,
                         &ldv, work, &lwork, <float*>rwork, &inf)
            elif blas_t is cdouble:
                lp.zgeev(&jobvl, &jobvr, &nn, buf, &ld, (<cdouble*>W) + bi * n, &dummy, &one,
                         vr, &ldv, work, &lwork, <double*>rwork, &inf)
        if want_v:
            _store(V, bi, vr, ld, n, n)
        info[bi] = inf
    free(buf); free(vr); free(rwork); free(work)
    return 0


def eig_into(_TensorBase A, _TensorBase W, _TensorBase V, _TensorBase info):
    """``geev`` (right eigenvectors).  ``W`` (batch, n) and ``V`` (batch, n, n)
    are contiguous complex tensors (``V`` None for values only)."""
    cdef _M3 a, v
    _m3(A, &a); _check_dims(&a)
    cdef bint want_v = V is not None
    cdef char* pv = NULL
    if want_v:
        _m3(V, &v)
        pv = V._ptr()
    cdef int num = _num(A)
    cdef char* pw = W._ptr()
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _eig_real(<float*>NULL, &a, pw, pv, want_v, pi)
            elif num == PT_FLOAT64:
                r = _eig_real(<double*>NULL, &a, pw, pv, want_v, pi)
            elif num == PT_COMPLEX64:
                r = _eig_cplx(<cfloat*>NULL, &a, pw, &v, want_v, pi)
            else:
                r = _eig_cplx(<cdouble*>NULL, &a, pw, &v, want_v, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("eig: out of memory for the LAPACK work arrays")


# -- least squares ------------------------------------------------------------------

cdef int _lstsq_k(blas_t* tag, _M3* A, _M3* B, _M3* X, char* resid, int64_t* rank, char* S,
                  char driver, double rcond, bint want_resid, int32_t* info) noexcept nogil:
    """driver: CH_y gelsy, CH_d gelsd, CH_s gelss, CH_g gels.  X (batch, n, k)
    gets the solution; ``resid`` (batch, k) the squared residual norms when
    ``want_resid``; ``rank`` (batch,) and ``S`` (batch, min(m, n)) for the
    drivers that compute them."""
    cdef Py_ssize_t m = A.r, n = A.c, k = B.c, mn = _mn(A.r, A.c), mx = _mx(A.r, A.c)
    cdef Py_ssize_t bi, i, j
    cdef blas_int inf = 0, lda = <blas_int>_mx(m, 1), ldb = <blas_int>_mx(mx, 1)
    cdef blas_int lwork = -1, rk = 0, iq = 0
    cdef blas_int bm = <blas_int>m, bn = <blas_int>n, bk = <blas_int>k
    cdef char trans = CH_N
    cdef blas_t wq = 0
    cdef size_t rs = _rsz(tag)
    cdef float rcf = <float>rcond
    cdef double rcd = rcond
    cdef double rq[2]
    cdef Py_ssize_t lrwork = 1, liwork = 1
    cdef blas_t* a = <blas_t*>_alloc(m * n, sizeof(blas_t))
    cdef blas_t* b = <blas_t*>_alloc(mx * k, sizeof(blas_t))
    cdef blas_int* jpvt = <blas_int*>_alloc(n, sizeof(blas_int))
    cdef void* s = _alloc(mn, rs)
    cdef blas_t* work = NULL
    cdef void* rwork = NULL
    cdef blas_int* iwork = NULL
    cdef double acc
    cdef blas_t v
    rq[0] = 0
    rq[1] = 0
    if a == NULL or b == NULL or jpvt == NULL or s == NULL:
        free(a); free(b); free(jpvt); free(s)
        return -1
    # workspace query (same sizes for every batch element)
    if driver == CH_y:
        if blas_t is float:
            lp.sgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcf, &rk, &wq, &lwork, &inf)
        elif blas_t is double:
            lp.dgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcd, &rk, &wq, &lwork, &inf)
        elif blas_t is cfloat:
            lp.cgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcf, &rk, &wq, &lwork, <float*>rq,
                      &inf)
        else:
            lp.zgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcd, &rk, &wq, &lwork, rq, &inf)
        lrwork = 2 * n
    elif driver == CH_d:
        if blas_t is float:
            lp.sgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, &wq, &lwork, &iq,
                      &inf)
        elif blas_t is double:
            lp.dgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, &wq, &lwork, &iq,
                      &inf)
        elif blas_t is cfloat:
            lp.cgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, &wq, &lwork,
                      <float*>rq, &iq, &inf)
            lrwork = <Py_ssize_t>((<float*>rq)[0]) + 1
        else:
            lp.zgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, &wq, &lwork, rq,
                      &iq, &inf)
            lrwork = <Py_ssize_t>(rq[0]) + 1
        liwork = _mx(iq, 1)
    elif driver == CH_s:
        if blas_t is float:
            lp.sgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, &wq, &lwork, &inf)
        elif blas_t is double:
            lp.dgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, &wq, &lwork, &inf)
        elif blas_t is cfloat:
            lp.cgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, &wq, &lwork,
                      <float*>rq, &inf)
        else:
            lp.zgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, &wq, &lwork, rq,
                      &inf)
        lrwork = 5 * mn
    else:
        if blas_t is float:
            lp.sgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, &wq, &lwork, &inf)
        elif blas_t is double:
            lp.dgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, &wq, &lwork, &inf)
        elif blas_t is cfloat:
            lp.cgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, &wq, &lwork, &inf)
        else:
            lp.zgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, &wq, &lwork, &inf)
    lwork = <blas_int>_mx(_wsize(&wq), 1)
    work = <blas_t*>_alloc(lwork, sizeof(blas_t))
    rwork = _alloc(lrwork, rs)
    iwork = <blas_int*>_alloc(liwork, sizeof(blas_int))
    if work == NULL or rwork == NULL or iwork == NULL:
        free(a); free(b); free(jpvt); free(s); free(work); free(rwork); free(iwork)
        return -1
    for bi in range(A.nb):
        _load(a, lda, A, bi)
        for j in range(k):
            for i in range(mx):
                b[i + j * ldb] = 0
        _load(b, ldb, B, bi)
        for j in range(n):
            jpvt[j] = 0
        inf = 0
        rk = <blas_int>mn
        if m > 0 and n > 0 and k > 0:
            if driver == CH_y:
                if blas_t is float:
                    lp.sgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcf, &rk, work, &lwork,
                              &inf)
                elif blas_t is double:
                    lp.dgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcd, &rk, work, &lwork,
                              &inf)
                elif blas_t is cfloat:
                    lp.cgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcf, &rk, work, &lwork,
                              <float*>rwork, &inf)
                else:
                    lp.zgelsy(&bm, &bn, &bk, a, &lda, b, &ldb, jpvt, &rcd, &rk, work, &lwork,
                              <double*>rwork, &inf)
            elif driver == CH_d:
                if blas_t is float:
                    lp.sgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, work,
                              &lwork, iwork, &inf)
                elif blas_t is double:
                    lp.dgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, work,
                              &lwork, iwork, &inf)
                elif blas_t is cfloat:
                    lp.cgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, work,
                              &lwork, <float*>rwork, iwork, &inf)
                else:
                    lp.zgelsd(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, work,
                              &lwork, <double*>rwork, iwork, &inf)
            elif driver == CH_s:
                if blas_t is float:
                    lp.sgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, work,
                              &lwork, &inf)
                elif blas_t is double:
                    lp.dgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, work,
                              &lwork, &inf)
                elif blas_t is cfloat:
                    lp.cgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <float*>s, &rcf, &rk, work,
                              &lwork, <float*>rwork, &inf)
                else:
                    lp.zgelss(&bm, &bn, &bk, a, &lda, b, &ldb, <double*>s, &rcd, &rk, work,
                              &lwork, <double*>rwork, &inf)
            else:
                if blas_t is float:
                    lp.sgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, work, &lwork, &inf)
                elif blas_t is double:
                    lp.dgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, work, &lwork, &inf)
                elif blas_t is cfloat:
                    lp.cgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, work, &lwork, &inf)
                else:
                    lp.zgels(&trans, &bm, &bn, &bk, a, &lda, b, &ldb, work, &lwork, &inf)
        elif driver == CH_d or driver == CH_s:
            memset(s, 0, mn * rs)
            rk = 0
        elif m == 0 or n == 0:
            rk = 0
        _store(X, bi, b, ldb, n, k)
        if want_resid:
            for j in range(k):
                acc = 0
                for i in range(n, m):
                    v = b[i + j * ldb]
                    if blas_t is float or blas_t is double:
                        acc += <double>v * <double>v
                    else:
                        acc += <double>(v.real) * <double>(v.real) + \
                            <double>(v.imag) * <double>(v.imag)
                if blas_t is float or blas_t is cfloat:
                    (<float*>resid)[bi * k + j] = <float>acc
                else:
                    (<double*>resid)[bi * k + j] = acc
        if rank != NULL:
            rank[bi] = rk
        if S != NULL:
            memcpy(S + bi * mn * rs, s, mn * rs)
        info[bi] = inf
    free(a); free(b); free(jpvt); free(s); free(work); free(rwork); free(iwork)
    return 0


def lstsq_into(_TensorBase A, _TensorBase B, _TensorBase X, _TensorBase resid,
               _TensorBase rank, _TensorBase S, str driver, double rcond, _TensorBase info):
    """Least squares ``min ||A X - B||`` per batch element.  ``driver`` is
    'gelsy', 'gelsd', 'gelss' or 'gels'.  ``resid`` (real, batch x k), ``rank``
    (int64, batch) and ``S`` (real, batch x min(m, n)) are contiguous or None."""
    cdef _M3 a, bb, x
    _m3(A, &a); _m3(B, &bb); _m3(X, &x); _check_dims(&a); _check_dims(&bb)
    cdef char drv = {"gelsy": CH_y, "gelsd": CH_d, "gelss": CH_s, "gels": CH_g}[driver]
    cdef int num = _num(A)
    cdef char* pr = resid._ptr() if resid is not None else NULL
    cdef int64_t* pk = <int64_t*>rank._ptr() if rank is not None else NULL
    cdef char* ps = S._ptr() if S is not None else NULL
    cdef bint want_resid = resid is not None
    cdef int32_t* pi = <int32_t*>info._ptr()
    cdef int r
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                r = _lstsq_k(<float*>NULL, &a, &bb, &x, pr, pk, ps, drv, rcond, want_resid, pi)
            elif num == PT_FLOAT64:
                r = _lstsq_k(<double*>NULL, &a, &bb, &x, pr, pk, ps, drv, rcond, want_resid, pi)
            elif num == PT_COMPLEX64:
                r = _lstsq_k(<cfloat*>NULL, &a, &bb, &x, pr, pk, ps, drv, rcond, want_resid, pi)
            else:
                r = _lstsq_k(<cdouble*>NULL, &a, &bb, &x, pr, pk, ps, drv, rcond, want_resid, pi)
        finally:
            ptc_kernel_exit()
    if r != 0:
        raise MemoryError("lstsq: out of memory for the LAPACK work arrays")
