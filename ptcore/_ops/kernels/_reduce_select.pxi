# Included by _reduce.pyx: median, nanmedian and quantile of contiguous rows.

# ==========================================================================
# selection: median / nanmedian / quantile on contiguous rows (mode: _sort.mode_rows)
# ==========================================================================
cdef int _cmp_val_d(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    cdef bint xn = x != x, yn = y != y
    if xn or yn:
        return (1 if xn else 0) - (1 if yn else 0)
    return (x > y) - (x < y)


ctypedef fused kv_t:
    float
    double
    int64_t


cdef void _qselect(kv_t* a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Partial sort of NaN-free values: a[k] becomes the k-th smallest."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j, mid
    cdef kv_t piv, t
    while hi > lo:
        mid = lo + (hi - lo) // 2
        if a[mid] < a[lo]:
            t = a[mid]; a[mid] = a[lo]; a[lo] = t
        if a[hi] < a[lo]:
            t = a[hi]; a[hi] = a[lo]; a[lo] = t
        if a[hi] < a[mid]:
            t = a[hi]; a[hi] = a[mid]; a[mid] = t
        piv = a[mid]
        i = lo
        j = hi
        while i <= j:
            while a[i] < piv:
                i += 1
            while piv < a[j]:
                j -= 1
            if i <= j:
                t = a[i]; a[i] = a[j]; a[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


cdef Py_ssize_t _median_flat(kv_t* a, Py_ssize_t n, bint ignore_nan) noexcept nogil:
    """Lower median of all n values into a[0] (in-place partial order);
    returns -1 when the result is NaN (a[0] then holds that NaN)."""
    cdef Py_ssize_t i, cnt = n, k
    cdef kv_t t
    if kv_t is not int64_t:
        if ignore_nan:
            cnt = 0
            for i in range(n):
                if a[i] == a[i]:
                    t = a[cnt]; a[cnt] = a[i]; a[i] = t
                    cnt += 1
            if cnt == 0:
                a[0] = NAN
                return -1
        else:
            for i in range(n):
                if a[i] != a[i]:
                    a[0] = a[i]
                    return -1
    k = (cnt - 1) // 2
    _qselect(a, cnt, k)
    a[0] = a[k]
    return k


def median_flat(_TensorBase x, bint ignore_nan):
    """Lower median of the contiguous 1-D ``x`` (float32 / float64 / int64,
    a private buffer: reordered in place), left in ``x[0]`` (NaN when a NaN
    is present, or with ``ignore_nan`` when all are NaN)."""
    cdef Py_ssize_t n = x._shape[0]
    cdef char* p = x._ptr()
    if n == 0:
        return
    ptc_kernel_enter()
    with nogil:
        try:
            if x._dtype.num == PT_FLOAT32:
                _median_flat(<float*>p, n, ignore_nan)
            elif x._dtype.num == PT_FLOAT64:
                _median_flat(<double*>p, n, ignore_nan)
            elif x._dtype.num == PT_INT64:
                _median_flat(<int64_t*>p, n, ignore_nan)
            else:
                with gil:
                    raise TypeError("median_flat: float32, float64 or int64 expected")
        finally:
            ptc_kernel_exit()


cdef void _median_rows_item(const kv_t* x, Py_ssize_t n, kv_t* vals, int64_t* idx,
                            bint ignore_nan, Py_ssize_t nan_row_index, Py_ssize_t r0,
                            Py_ssize_t r1, size_t* fail) noexcept nogil:
    """Rows r0..r1 of the lower median along rows of length n, by a
    value-only selection on a copy (4 or 8 bytes per element instead of
    (value, index) pairs).  The index is the one the (value, index) total
    order would give: the (k - #smaller)-th occurrence of the median value;
    the value returned is that element (so -0.0 / 0.0 follow the index)."""
    cdef kv_t* a = <kv_t*>ptc_scratch_malloc((n if n > 0 else 1) * sizeof(kv_t))
    cdef const kv_t* row
    cdef Py_ssize_t r, i, cnt, k, less, occ
    cdef kv_t v
    cdef bint nan_found
    if a == NULL:
        ptc_scratch_note(fail, (n if n > 0 else 1) * sizeof(kv_t))
        return
    for r in range(r0, r1):
        row = x + r * n
        nan_found = False
        cnt = 0
        if kv_t is int64_t:
            memcpy(a, row, n * sizeof(kv_t))
            cnt = n
        else:
            for i in range(n):
                v = row[i]
                if v == v:
                    a[cnt] = v
                    cnt += 1
                elif not ignore_nan:
                    vals[r] = v
                    idx[r] = i
                    nan_found = True
                    break
            if nan_found:
                continue
            if cnt == 0:             # nanmedian of an all-NaN row: torch's nth_element pick
                vals[r] = row[nan_row_index]
                idx[r] = nan_row_index
                continue
        k = (cnt - 1) // 2
        _qselect(a, cnt, k)
        v = a[k]
        less = 0
        for i in range(n):
            less += row[i] < v
        occ = k - less
        for i in range(n):
            if row[i] == v:
                if occ == 0:
                    vals[r] = row[i]
                    idx[r] = i
                    break
                occ -= 1
    free(a)


def median_rows(_TensorBase x, _TensorBase vals, _TensorBase idx, bint ignore_nan,
                Py_ssize_t nan_row_index=0):
    """Lower median along the rows of the contiguous 2-D ``x`` (float32,
    float64 or int64) into ``vals`` (x's dtype) and ``idx`` (int64);
    ``nan_row_index`` (in [0, n)) is the index nanmedian gives an all-NaN row."""
    cdef Py_ssize_t M = x._shape[0], n = x._shape[1], nitems, it, chunk
    cdef int nth = get_num_threads()
    cdef bint big = nth > 1 and M * n >= parallel_grain() and M > 1
    cdef char* xp = x._ptr()
    cdef char* vp = vals._ptr()
    cdef int64_t* ip = <int64_t*>idx._ptr()
    cdef int num = x._dtype.num
    cdef size_t fail = 0
    if num != PT_FLOAT32 and num != PT_FLOAT64 and num != PT_INT64:
        raise TypeError("median_rows: float32, float64 or int64 rows expected")
    if vals._dtype.num != num or not (x._is_contig() and vals._is_contig() and idx._is_contig()):
        raise TypeError("median_rows: contiguous operands, values in the input dtype")
    if n == 0 or M == 0:
        return
    if not 0 <= nan_row_index < n:
        raise ValueError(f"median_rows: nan_row_index {nan_row_index} not in [0, {n})")
    chunk = (M + 4 * nth - 1) // (4 * nth) if big else M
    nitems = (M + chunk - 1) // chunk
    ptc_kernel_enter()
    with nogil:
        try:
            for it in prange(nitems, num_threads=nth if big else 1, schedule='dynamic'):
                if num == PT_FLOAT32:
                    _median_rows_item(<const float*>xp, n, <float*>vp, ip, ignore_nan,
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk),
                                      &fail)
                elif num == PT_FLOAT64:
                    _median_rows_item(<const double*>xp, n, <double*>vp, ip, ignore_nan,
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk),
                                      &fail)
                else:
                    _median_rows_item(<const int64_t*>xp, n, <int64_t*>vp, ip, ignore_nan,
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk),
                                      &fail)
        finally:
            ptc_kernel_exit()
    if fail:
        scratch_error("median", fail)


cdef inline double _rnd(double v, bint single) noexcept nogil:
    return <double>(<float>v) if single else v


cdef extern from "math.h" nogil:
    double nearbyint(double x)
    double floor(double x)
    double ceil(double x)


cdef void _quantile_rows(double* x, Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t n, const double* q,
                         Py_ssize_t nq, double* out, Py_ssize_t M, int interp, bint ignore_nan,
                         bint single) noexcept nogil:
    """x rows sorted in place (NaN last); out[k * M + r] for q[k].  PyTorch's
    algorithm: rank = q * (count - 1) in the input precision, adjusted by the
    interpolation, then lerp between the neighbours."""
    cdef Py_ssize_t r, k, cnt, below, above
    cdef double rank, wgt, lo, hi, d
    cdef double* row
    for r in range(r0, r1):
        row = x + r * n
        qsort(row, n, sizeof(double), _cmp_val_d)
        cnt = n
        if ignore_nan:
            cnt = 0
            while cnt < n and row[cnt] == row[cnt]:
                cnt += 1
        for k in range(nq):
            if ignore_nan:
                rank = _rnd(q[k] * _rnd(<double>(cnt - 1), single), single)
                if rank < 0:
                    rank = 0
            else:
                if row[n - 1] != row[n - 1]:
                    rank = <double>(n - 1)
                else:
                    rank = _rnd(q[k] * _rnd(<double>(n - 1), single), single)
            if interp == 1:
                rank = floor(rank)
            elif interp == 2:
                rank = ceil(rank)
            elif interp == 4:
                rank = nearbyint(rank)
            below = <Py_ssize_t>rank
            lo = row[below]
            if interp == 0 or interp == 3:
                above = <Py_ssize_t>ceil(rank)
                hi = row[above]
                wgt = 0.5 if interp == 3 else _rnd(rank - below, single)
                d = _rnd(hi - lo, single)
                # PyTorch's lerp: weight < 0.5 ? lo + w * d : hi - d * (1 - w)
                if wgt < 0.5:
                    lo = _rnd(lo + _rnd(wgt * d, single), single)
                else:
                    lo = _rnd(hi - _rnd(d * _rnd(1 - wgt, single), single), single)
            out[k * M + r] = lo


def quantile_rows(_TensorBase x, _TensorBase q, _TensorBase out, int interp, bint ignore_nan,
                  bint single):
    """Quantiles of each row of the contiguous float64 (M, n) ``x`` (sorted in
    place); ``q`` contiguous float64 (nq,); ``out`` contiguous float64 (nq, M).
    interp: 0 linear, 1 lower, 2 higher, 3 midpoint, 4 nearest."""
    cdef Py_ssize_t M = x._shape[0], n = x._shape[1], nq = q._numel, it, nitems, chunk
    cdef int nth = get_num_threads()
    cdef bint big = nth > 1 and M * n >= parallel_grain() and M > 1
    cdef double* xp = <double*>x._ptr()
    cdef double* qp = <double*>q._ptr()
    cdef double* op = <double*>out._ptr()
    if M == 0 or n == 0:
        return
    chunk = (M + 4 * nth - 1) // (4 * nth) if big else M
    nitems = (M + chunk - 1) // chunk
    ptc_kernel_enter()
    with nogil:
        try:
            if big:
                for it in prange(nitems, num_threads=nth, schedule='dynamic'):
                    _quantile_rows(xp, it * chunk, min(M, it * chunk + chunk), n, qp, nq, op, M, interp,
                                   ignore_nan, single)
            else:
                _quantile_rows(xp, 0, M, n, qp, nq, op, M, interp, ignore_nan, single)
        finally:
            ptc_kernel_exit()
