# Included by _reduce.pyx: scans (cumsum, cumprod, cummax/cummin,
# logcumsumexp) and softmax / log_softmax along one dim.

# ==========================================================================
# lines along one dim: scans and softmax
# ==========================================================================
cdef enum:
    S_CUMSUM = 0
    S_CUMPROD = 1
    S_CUMMAX = 2
    S_CUMMIN = 3
    S_LCSE = 4
    S_SOFTMAX = 5
    S_LOGSOFTMAX = 6


ctypedef struct lplan:
    int op
    Py_ssize_t n                     # line length
    Py_ssize_t lx, l0, l1            # line strides (bytes)
    int nb                           # batch dims; the last is the innermost of the traversal
    Py_ssize_t bsh[PT_MAX_DIMS]
    Py_ssize_t bx[PT_MAX_DIMS]
    Py_ssize_t b0[PT_MAX_DIMS]
    Py_ssize_t b1[PT_MAX_DIMS]
    bint cols                        # sweep rows of the innermost batch dim
    Py_ssize_t B                     # number of lines
    const char* x
    char* o0
    char* o1
    size_t* fail                     # a failed scratch request's size (ptc_scratch_note), else 0


ctypedef fused sc_t:
    int64_t
    float
    double
    cf_t
    cd_t


cdef inline sc_t _lae(sc_t x, sc_t y) noexcept nogil:
    """log(exp(x) + exp(y)) as PyTorch's _log_add_exp_helper (real types)."""
    cdef sc_t mn, mx
    if sc_t is float or sc_t is double:
        if y != y:
            mn = y
            mx = y
        else:
            mn = x if x < y else y
            mx = y if x < y else x
        if mn != mx or isfinite(mn):
            return mx + <sc_t>log1p(exp(<double>(mn - mx)))
        return x
    else:
        return x


cdef inline void _cumext_dense(const sc_t* x, sc_t* o, int64_t* ix, Py_ssize_t n, bint mx) noexcept nogil:
    """cummax (``mx``) / cummin of a contiguous line, 16 elements at a time:
    a block whose every element is strictly below (above) the running value
    -- a NaN never is -- repeats the running value and position (a compare
    and two fills, vectorised); any other block goes element by element with
    the general loop's test (a NaN always takes the place, a number when it
    is >= (<=) the running value, which is never true of a NaN running
    value).  The running value rarely changes late in a line, so most
    blocks take the first way."""
    cdef sc_t acc = x[0], cur
    cdef int64_t idx = 0
    cdef Py_ssize_t i = 0, k, end
    cdef int ok
    if sc_t is int64_t or sc_t is float or sc_t is double:
        while i < n:
            end = i + 16
            if end <= n and i > 0:
                ok = 0                  # a count, which vectorises (an and-chain does not)
                if mx:
                    for k in range(i, end):
                        ok += x[k] < acc
                else:
                    for k in range(i, end):
                        ok += x[k] > acc
                if ok == 16:
                    for k in range(i, end):
                        o[k] = acc
                    for k in range(i, end):
                        ix[k] = idx
                    i = end
                    continue
            if end > n:
                end = n
            for k in range(i, end):
                cur = x[k]
                if cur != cur or (cur >= acc if mx else cur <= acc):
                    acc = cur
                    idx = k
                o[k] = acc
                ix[k] = idx
            i = end


cdef void _scan_line(sc_t* tag, const lplan* p, const char* x, char* o0, char* o1) noexcept nogil:
    cdef Py_ssize_t i, n = p.n, lx = p.lx, l0 = p.l0, l1 = p.l1
    cdef sc_t acc, cur
    cdef int64_t idx = 0
    cdef int op = p.op
    if n <= 0:
        return
    if op == S_CUMSUM:
        _set_zero(&acc)
        for i in range(n):
            _addto(&acc, (<const sc_t*>(x + i * lx))[0])
            (<sc_t*>(o0 + i * l0))[0] = acc
    elif op == S_CUMPROD:
        _set_one(&acc)
        for i in range(n):
            _multo(&acc, (<const sc_t*>(x + i * lx))[0])
            (<sc_t*>(o0 + i * l0))[0] = acc
    elif op == S_CUMMAX or op == S_CUMMIN:
        if sc_t is int64_t or sc_t is float or sc_t is double:
            if lx == sizeof(sc_t) and l0 == sizeof(sc_t) and l1 == sizeof(int64_t):
                _cumext_dense(<const sc_t*>x, <sc_t*>o0, <int64_t*>o1, n, op == S_CUMMAX)
                return
            acc = (<const sc_t*>x)[0]
            for i in range(n):
                cur = (<const sc_t*>(x + i * lx))[0]
                if cur != cur or (acc == acc and ((op == S_CUMMAX and cur >= acc) or
                                                  (op == S_CUMMIN and cur <= acc))):
                    acc = cur
                    idx = i
                (<sc_t*>(o0 + i * l0))[0] = acc
                (<int64_t*>(o1 + i * l1))[0] = idx
    elif op == S_LCSE:
        if sc_t is float or sc_t is double:
            acc = -INFINITY
            for i in range(n):
                acc = _lae((<const sc_t*>(x + i * lx))[0], acc)
                (<sc_t*>(o0 + i * l0))[0] = acc


cdef void _scan_cols(sc_t* acc, const lplan* p, const char* x, char* o0, char* o1, Py_ssize_t w,
                     Py_ssize_t cx, Py_ssize_t c0, Py_ssize_t c1, int64_t* idx) noexcept nogil:
    """Scan w lines at once (columns cx/c0/c1 bytes apart), row by row."""
    cdef Py_ssize_t i, j, n = p.n
    cdef int op = p.op
    cdef const char* xr
    cdef char* yr
    cdef sc_t cur
    for j in range(w):
        if op == S_CUMSUM:
            _set_zero(&acc[j])
        elif op == S_CUMPROD:
            _set_one(&acc[j])
        elif op == S_LCSE:
            if sc_t is float or sc_t is double:
                acc[j] = -INFINITY
        else:
            acc[j] = (<const sc_t*>(x + j * cx))[0]
            idx[j] = 0
    for i in range(n):
        xr = x + i * p.lx
        yr = o0 + i * p.l0
        if op == S_CUMSUM:
            for j in range(w):
                _addto(&acc[j], (<const sc_t*>(xr + j * cx))[0])
                (<sc_t*>(yr + j * c0))[0] = acc[j]
        elif op == S_CUMPROD:
            for j in range(w):
                _multo(&acc[j], (<const sc_t*>(xr + j * cx))[0])
                (<sc_t*>(yr + j * c0))[0] = acc[j]
        elif op == S_LCSE:
            if sc_t is float or sc_t is double:
                for j in range(w):
                    acc[j] = _lae((<const sc_t*>(xr + j * cx))[0], acc[j])
                    (<sc_t*>(yr + j * c0))[0] = acc[j]
        else:
            if sc_t is int64_t or sc_t is float or sc_t is double:
                for j in range(w):
                    cur = (<const sc_t*>(xr + j * cx))[0]
                    if cur != cur or (acc[j] == acc[j] and ((op == S_CUMMAX and cur >= acc[j]) or
                                                            (op == S_CUMMIN and cur <= acc[j]))):
                        acc[j] = cur
                        idx[j] = i
                    (<sc_t*>(yr + j * c0))[0] = acc[j]
                    (<int64_t*>(o1 + i * p.l1 + j * c1))[0] = idx[j]


ctypedef fused sm_t:
    float
    double


cdef inline double _lanes8_f64(const double* x, Py_ssize_t n, bint mx) noexcept nogil:
    """max (mx; -inf for none, a NaN never wins) or sum of x[0:n] over 8
    independent lanes, combined in lane order."""
    cdef double a[8]
    cdef double v
    cdef Py_ssize_t i = 0, k
    for k in range(8):
        a[k] = -INFINITY if mx else 0.0
    while i + 8 <= n:
        for k in range(8):
            v = x[i + k]
            if mx:
                a[k] = v if v > a[k] else a[k]
            else:
                a[k] = a[k] + v
        i += 8
    for i in range(i, n):
        if mx:
            a[0] = x[i] if x[i] > a[0] else a[0]
        else:
            a[0] = a[0] + x[i]
    for k in range(1, 8):
        if mx:
            a[0] = a[k] if a[k] > a[0] else a[0]
        else:
            a[0] = a[0] + a[k]
    return a[0]


cdef inline sm_t _expv(sm_t v) noexcept nogil:
    if sm_t is float:
        return ptcr_exp_sf(v)
    else:
        return exp(v)


cdef void _softmax_line(sm_t* tag, const lplan* p, const char* x, char* o0, char* o1) noexcept nogil:
    cdef Py_ssize_t i, n = p.n, lx = p.lx, l0 = p.l0
    cdef sm_t m = -INFINITY, v, e, s = 0, c
    cdef bint lg = p.op == S_LOGSOFTMAX
    cdef int nanf = 0
    if n <= 0:
        return
    if sm_t is float:
        if lx == sizeof(float) and l0 == sizeof(float):
            m = ptcr_max_f32(<const float*>x, n, &nanf)
            s = ptcr_expsum_f32(<const float*>x, NULL if lg else <float*>o0, n, m)
            if lg:
                ptcr_subsub_f32(<const float*>x, <float*>o0, n, m, logf(s))
            else:
                ptcr_scale_f32(<float*>o0, n, 1.0 / s)
            return
    if sm_t is double:
        if lx == sizeof(double) and l0 == sizeof(double) and <const char*>o0 != x:
            # the max and the sum over 8 independent lanes (NaN never wins a
            # max, as below), the exps by ptcore.exp's double-lane loop in the
            # output (not the input: an in-place call takes the loops below,
            # which read each input before writing its place)
            m = _lanes8_f64(<const double*>x, n, True)
            for i in range(n):
                (<double*>o0)[i] = (<const double*>x)[i] - m
            ptc_exp_dv_f64(<double*>o0, <const double*>o0, n)
            s = _lanes8_f64(<const double*>o0, n, False)
            if lg:
                c = log(s)
                for i in range(n):
                    (<double*>o0)[i] = ((<const double*>x)[i] - m) - c
            else:
                c = 1 / s
                for i in range(n):
                    (<double*>o0)[i] = (<double*>o0)[i] * c
            return
    for i in range(n):
        v = (<const sm_t*>(x + i * lx))[0]
        if v > m:
            m = v
    for i in range(n):
        e = _expv((<const sm_t*>(x + i * lx))[0] - m)
        if not lg:
            (<sm_t*>(o0 + i * l0))[0] = e
        s += e
    if lg:
        c = <sm_t>log(s)
        for i in range(n):
            (<sm_t*>(o0 + i * l0))[0] = ((<const sm_t*>(x + i * lx))[0] - m) - c
    else:
        c = 1 / s
        for i in range(n):
            (<sm_t*>(o0 + i * l0))[0] = (<sm_t*>(o0 + i * l0))[0] * c


cdef extern from "math.h" nogil:
    float logf(float x)


cdef void _smrows_f64(const double* x, Py_ssize_t ldx, double* y, Py_ssize_t ldy,
                      Py_ssize_t rows, Py_ssize_t n, bint lg) noexcept nogil:
    """float64 softmax / log_softmax of rows of n <= 16 (not in place), 16
    rows a pass: _softmax_line's contiguous float64 operations per row (the
    max and the sum over 8 lanes, exp(x - max) by ptcore.exp's double-lane
    loop, log or 1 / sum), so the same bits, with the exps of the 16 rows
    in one call of the lane loop (a row of 3 took a call and a padded
    4-lane step of its own)."""
    cdef double m[16]
    cdef double c[16]
    cdef double t[256]
    cdef Py_ssize_t r0 = 0, nr, r, k
    while r0 < rows:
        nr = rows - r0
        if nr > 16:
            nr = 16
        for r in range(nr):
            m[r] = _lanes8_f64(x + (r0 + r) * ldx, n, True)
            for k in range(n):
                t[r * n + k] = x[(r0 + r) * ldx + k] - m[r]
        ptc_exp_dv_f64(t, t, nr * n)
        for r in range(nr):
            c[r] = _lanes8_f64(t + r * n, n, False)
            c[r] = log(c[r]) if lg else 1 / c[r]
        for r in range(nr):
            if lg:
                for k in range(n):
                    y[(r0 + r) * ldy + k] = (x[(r0 + r) * ldx + k] - m[r]) - c[r]
            else:
                for k in range(n):
                    y[(r0 + r) * ldy + k] = t[r * n + k] * c[r]
        r0 += nr


cdef void _softmax_cols(sm_t* buf, const lplan* p, const char* x, char* o0, Py_ssize_t w,
                        Py_ssize_t cx, Py_ssize_t c0) noexcept nogil:
    """Softmax of w lines at once; buf holds 3 * w values."""
    cdef Py_ssize_t i, j, n = p.n
    cdef sm_t* m = buf
    cdef sm_t* s = buf + w
    cdef sm_t* c = buf + 2 * w
    cdef const char* xr
    cdef char* yr
    cdef sm_t v, e
    cdef bint lg = p.op == S_LOGSOFTMAX
    cdef bint fast = cx == sizeof(sm_t) and c0 == sizeof(sm_t)
    cdef double t[256]
    cdef Py_ssize_t jb, k, mw
    cdef const double* xd
    for j in range(w):
        m[j] = -INFINITY
        s[j] = 0
    for i in range(n):
        xr = x + i * p.lx
        if sm_t is float:
            if fast:
                ptcr_colmax_f32(m, <const float*>xr, w)
                continue
        if sm_t is double:
            if fast:
                xd = <const double*>xr
                for j in range(w):      # (a select of loaded values: vectorised)
                    v = xd[j]
                    m[j] = v if v > m[j] else m[j]
                continue
        for j in range(w):
            v = (<const sm_t*>(xr + j * cx))[0]
            if v > m[j]:
                m[j] = v
    for i in range(n):
        xr = x + i * p.lx
        yr = o0 + i * p.l0
        if sm_t is float:
            if fast:
                ptcr_colexpsum_f32(s, m, <const float*>xr, NULL if lg else <float*>yr, w)
                continue
        if sm_t is double:
            if fast:
                # 256 columns at a time: x - max into t, ptcore.exp's
                # double-lane loop over t, the sums (in row order, as below)
                # and softmax's exps out (t, not the output: in place, the
                # row is read before it is written; log_softmax reads x again)
                xd = <const double*>xr
                for jb in range(0, w, 256):
                    mw = w - jb if w - jb < 256 else 256
                    for k in range(mw):
                        t[k] = xd[jb + k] - m[jb + k]
                    ptc_exp_dv_f64(t, t, mw)
                    for k in range(mw):
                        s[jb + k] += t[k]
                    if not lg:
                        for k in range(mw):
                            (<double*>yr)[jb + k] = t[k]
                continue
        for j in range(w):
            e = _expv((<const sm_t*>(xr + j * cx))[0] - m[j])
            if not lg:
                (<sm_t*>(yr + j * c0))[0] = e
            s[j] += e
    for j in range(w):
        c[j] = <sm_t>log(s[j]) if lg else 1 / s[j]
    for i in range(n):
        xr = x + i * p.lx
        yr = o0 + i * p.l0
        if sm_t is float:
            if fast:
                if lg:
                    ptcr_colsubsub_f32(<const float*>xr, <float*>yr, m, c, w)
                else:
                    ptcr_colscale_f32(<float*>yr, c, w)
                continue
        for j in range(w):
            if lg:
                (<sm_t*>(yr + j * c0))[0] = ((<const sm_t*>(xr + j * cx))[0] - m[j]) - c[j]
            else:
                (<sm_t*>(yr + j * c0))[0] = (<sm_t*>(yr + j * c0))[0] * c[j]


ctypedef void (*line_fn)(char* tag, const lplan* p, const char* x, char* o0, char* o1) noexcept nogil
ctypedef void (*scols_fn)(char* acc, const lplan* p, const char* x, char* o0, char* o1, Py_ssize_t w,
                          Py_ssize_t cx, Py_ssize_t c0, Py_ssize_t c1, int64_t* idx) noexcept nogil
ctypedef void (*smcols_fn)(char* buf, const lplan* p, const char* x, char* o0, Py_ssize_t w,
                           Py_ssize_t cx, Py_ssize_t c0) noexcept nogil

cdef line_fn _SCAN_LINE[PT_NUM_TYPES]
cdef scols_fn _SCAN_COLS[PT_NUM_TYPES]
cdef line_fn _SM_LINE[PT_NUM_TYPES]
cdef smcols_fn _SM_COLS[PT_NUM_TYPES]
_SCAN_LINE[<int>PT_INT64] = <line_fn>_scan_line[int64_t]
_SCAN_LINE[<int>PT_FLOAT32] = <line_fn>_scan_line[float]
_SCAN_LINE[<int>PT_FLOAT64] = <line_fn>_scan_line[double]
_SCAN_LINE[<int>PT_COMPLEX64] = <line_fn>_scan_line[cf_t]
_SCAN_LINE[<int>PT_COMPLEX128] = <line_fn>_scan_line[cd_t]
_SCAN_COLS[<int>PT_INT64] = <scols_fn>_scan_cols[int64_t]
_SCAN_COLS[<int>PT_FLOAT32] = <scols_fn>_scan_cols[float]
_SCAN_COLS[<int>PT_FLOAT64] = <scols_fn>_scan_cols[double]
_SCAN_COLS[<int>PT_COMPLEX64] = <scols_fn>_scan_cols[cf_t]
_SCAN_COLS[<int>PT_COMPLEX128] = <scols_fn>_scan_cols[cd_t]
_SM_LINE[<int>PT_FLOAT32] = <line_fn>_softmax_line[float]
_SM_LINE[<int>PT_FLOAT64] = <line_fn>_softmax_line[double]
_SM_COLS[<int>PT_FLOAT32] = <smcols_fn>_softmax_cols[float]
_SM_COLS[<int>PT_FLOAT64] = <smcols_fn>_softmax_cols[double]


cdef void _line_item(const lplan* p, int num, Py_ssize_t item, Py_ssize_t nblk, Py_ssize_t w) noexcept nogil:
    """Row traversal: lines [item * w, item * w + w).  Column traversal: an
    index of the outer batch dims times a block of w columns."""
    cdef int nb = p.nb, d
    cdef Py_ssize_t rem, q, xo, y0, y1, b, b1, outer, j0, wb
    cdef char* buf
    cdef int64_t* idx
    if p.cols:
        outer = item // nblk
        j0 = (item - outer * nblk) * w
        wb = p.bsh[nb - 1] - j0
        if wb > w:
            wb = w
        xo = j0 * p.bx[nb - 1]
        y0 = j0 * p.b0[nb - 1]
        y1 = j0 * p.b1[nb - 1]
        rem = outer
        d = nb - 2
        while d >= 0:
            q = rem % p.bsh[d]
            rem = rem // p.bsh[d]
            xo += q * p.bx[d]
            y0 += q * p.b0[d]
            y1 += q * p.b1[d]
            d -= 1
        buf = <char*>ptc_scratch_malloc(wb * (3 * 16 + 8))
        if buf == NULL:
            ptc_scratch_note(p.fail, wb * (3 * 16 + 8))
            return
        idx = <int64_t*>(buf + wb * 48)
        if p.op >= S_SOFTMAX:
            _SM_COLS[num](buf, p, p.x + xo, p.o0 + y0, wb, p.bx[nb - 1], p.b0[nb - 1])
        else:
            _SCAN_COLS[num](buf, p, p.x + xo, p.o0 + y0, p.o1 + y1, wb, p.bx[nb - 1], p.b0[nb - 1],
                            p.b1[nb - 1], idx)
        free(buf)
        return
    b = item * w
    b1 = b + w
    if b1 > p.B:
        b1 = p.B
    if (p.op >= S_SOFTMAX and num == <int>PT_FLOAT32 and nb == 1 and p.lx == sizeof(float)
            and p.l0 == sizeof(float) and p.bx[0] % sizeof(float) == 0
            and p.b0[0] % sizeof(float) == 0):
        # float32 rows one stride apart: 16 rows a pass (ptcr_smrows_f32, the
        # per-row line's operations and bits)
        ptcr_smrows_f32(<const float*>(p.x + b * p.bx[0]), p.bx[0] // <Py_ssize_t>sizeof(float),
                        <float*>(p.o0 + b * p.b0[0]), p.b0[0] // <Py_ssize_t>sizeof(float),
                        b1 - b, p.n, p.op == S_LOGSOFTMAX)
        return
    if (p.op >= S_SOFTMAX and num == <int>PT_FLOAT64 and nb == 1 and p.n <= 16
            and p.lx == sizeof(double) and p.l0 == sizeof(double) and p.x != <const char*>p.o0
            and p.bx[0] % sizeof(double) == 0 and p.b0[0] % sizeof(double) == 0):
        _smrows_f64(<const double*>(p.x + b * p.bx[0]), p.bx[0] // <Py_ssize_t>sizeof(double),
                    <double*>(p.o0 + b * p.b0[0]), p.b0[0] // <Py_ssize_t>sizeof(double),
                    b1 - b, p.n, p.op == S_LOGSOFTMAX)
        return
    while b < b1:
        xo = 0
        y0 = 0
        y1 = 0
        rem = b
        d = nb - 1
        while d >= 0:
            q = rem % p.bsh[d]
            rem = rem // p.bsh[d]
            xo += q * p.bx[d]
            y0 += q * p.b0[d]
            y1 += q * p.b1[d]
            d -= 1
        if p.op >= S_SOFTMAX:
            _SM_LINE[num](NULL, p, p.x + xo, p.o0 + y0, NULL)
        else:
            _SCAN_LINE[num](NULL, p, p.x + xo, p.o0 + y0, p.o1 + y1 if p.o1 != NULL else NULL)
        b += 1


cdef dict _LINE_OPS = {"cumsum": S_CUMSUM, "cumprod": S_CUMPROD, "cummax": S_CUMMAX,
                       "cummin": S_CUMMIN, "logcumsumexp": S_LCSE, "softmax": S_SOFTMAX,
                       "log_softmax": S_LOGSOFTMAX}


def lines(_TensorBase x, int dim, str opname, _TensorBase out0, _TensorBase out1=None):
    """Scan or softmax of ``x`` along ``dim`` into ``out0`` (and the int64
    indices ``out1`` for cummax/cummin).  ``x`` and ``out0`` share the
    computation dtype (int64, float32, float64, complex) and the shape; ``out0``
    may be ``x`` itself (in-place scans)."""
    _lines(x, dim, opname, out0, out1)


def softmax_fast(x, dim, str opname):
    """``softmax``/``log_softmax`` (``opname``) of a non-empty float32/float64
    CPU tensor of at least one dim along the int ``dim`` (in range), in its
    own dtype, into a new contiguous tensor; None for anything else (the
    front-end's general path checks, converts and raises)."""
    if not isinstance(x, _TensorBase) or type(dim) is not int:
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef int num = t._dtype.num, nd = t._ndim
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or t._storage.device._type_code != 0 \
            or nd == 0 or not -nd <= dim < nd or t._numel == 0:
        return None
    cdef _TensorBase out = _empty_contig(t._dtype, nd, t._shape, t._storage.device, False)
    if t._shape[dim % nd] == 1 and t._is_contig():
        _softmax_single(t, out, opname == "log_softmax")
        return out
    _lines(t, dim % nd, opname, out, None)
    return out


cdef int _softmax_single(_TensorBase t, _TensorBase out, bint log) except -1:
    """softmax / log_softmax over lines of one element (contiguous ``t``): the
    line's max is the element, so torch's exp(x - max) / sum is (x - x) + 1
    and (x - max) - log(sum) is x - x: 1 (0) for finite x, NaN for inf and
    NaN -- one pass instead of a line set-up per element."""
    cdef Py_ssize_t i, n = t._numel
    cdef float* xf
    cdef float* of
    cdef double* xd
    cdef double* od
    if t._dtype.num == PT_FLOAT32:
        xf = <float*>t._ptr()
        of = <float*>out._ptr()
        with nogil:
            if log:
                for i in range(n):
                    of[i] = xf[i] - xf[i]
            else:
                for i in range(n):
                    of[i] = (xf[i] - xf[i]) + 1.0
    else:
        xd = <double*>t._ptr()
        od = <double*>out._ptr()
        with nogil:
            if log:
                for i in range(n):
                    od[i] = xd[i] - xd[i]
            else:
                for i in range(n):
                    od[i] = (xd[i] - xd[i]) + 1.0
    return 0


cdef int _lines(_TensorBase x, int dim, str opname, _TensorBase out0, _TensorBase out1) except -1:
    cdef lplan* p = <lplan*>ptc_scratch_malloc(sizeof(lplan))
    cdef int nd = x._ndim, i, j, n, num = x._dtype.num
    cdef Py_ssize_t isz = x._dtype.itemsize, sz, xs, s0, s1, total, nitems, w, nblk, it, t
    cdef int nth = get_num_threads()
    cdef bint big
    cdef dict ops = _LINE_OPS
    cdef size_t fail = 0
    if p == NULL:
        scratch_error(opname, sizeof(lplan))
    try:
        memset(p, 0, sizeof(lplan))
        p.fail = &fail
        p.op = ops[opname]
        if out0._dtype.num != num or (p.op >= S_SOFTMAX and num != PT_FLOAT32 and num != PT_FLOAT64):
            raise TypeError(f"lines: unsupported dtypes for {opname}")
        if p.op < S_SOFTMAX and _SCAN_LINE[num] == NULL:
            raise TypeError(f"lines: unsupported dtype for {opname}")
        p.x = x._ptr()
        p.o0 = out0._ptr()
        p.o1 = out1._ptr() if out1 is not None else NULL
        if nd == 0:
            p.n = 1
        else:
            p.n = x._shape[dim]
            p.lx = x._strides[dim] * isz
            p.l0 = out0._strides[dim] * isz
            p.l1 = out1._strides[dim] * 8 if out1 is not None else 0
        n = 0
        for i in range(nd):
            sz = x._shape[i]
            if i == dim or sz == 1:
                continue
            xs = x._strides[i] * isz
            s0 = out0._strides[i] * isz
            s1 = out1._strides[i] * 8 if out1 is not None else 0
            j = n
            while j > 0 and _absz(p.b0[j - 1]) < _absz(s0):
                p.bsh[j] = p.bsh[j - 1]
                p.bx[j] = p.bx[j - 1]
                p.b0[j] = p.b0[j - 1]
                p.b1[j] = p.b1[j - 1]
                j -= 1
            p.bsh[j] = sz
            p.bx[j] = xs
            p.b0[j] = s0
            p.b1[j] = s1
            n += 1
        j = 0
        for i in range(n):
            if (j > 0 and p.bx[j - 1] == p.bx[i] * p.bsh[i] and p.b0[j - 1] == p.b0[i] * p.bsh[i]
                    and p.b1[j - 1] == p.b1[i] * p.bsh[i]):
                p.bsh[j - 1] *= p.bsh[i]
                p.bx[j - 1] = p.bx[i]
                p.b0[j - 1] = p.b0[i]
                p.b1[j - 1] = p.b1[i]
            else:
                p.bsh[j] = p.bsh[i]
                p.bx[j] = p.bx[i]
                p.b0[j] = p.b0[i]
                p.b1[j] = p.b1[i]
                j += 1
        p.nb = j
        p.B = 1
        for i in range(p.nb):
            p.B *= p.bsh[i]
        if p.B == 0 or p.n == 0:
            return 0
        # column traversal when a batch dim is more contiguous than the line
        if p.nb > 0:
            j = 0
            for i in range(1, p.nb):
                if _absz(p.bx[i]) < _absz(p.bx[j]):
                    j = i
            if _absz(p.bx[j]) < _absz(p.lx) and p.bsh[j] >= 8 and p.n > 1:
                p.cols = True
                if j != p.nb - 1:
                    t = p.bsh[j]; p.bsh[j] = p.bsh[p.nb - 1]; p.bsh[p.nb - 1] = t
                    t = p.bx[j]; p.bx[j] = p.bx[p.nb - 1]; p.bx[p.nb - 1] = t
                    t = p.b0[j]; p.b0[j] = p.b0[p.nb - 1]; p.b0[p.nb - 1] = t
                    t = p.b1[j]; p.b1[j] = p.b1[p.nb - 1]; p.b1[p.nb - 1] = t
        total = p.B * p.n
        big = nth > 1 and total >= parallel_grain()
        if p.cols:
            w = 1024
            nblk = (p.bsh[p.nb - 1] + w - 1) // w
            nitems = (p.B // p.bsh[p.nb - 1]) * nblk
            if big and nitems < 2 * nth and p.bsh[p.nb - 1] >= 128:
                w = (p.bsh[p.nb - 1] + 2 * nth - 1) // (2 * nth)
                w = (w + 15) // 16 * 16
                nblk = (p.bsh[p.nb - 1] + w - 1) // w
                nitems = (p.B // p.bsh[p.nb - 1]) * nblk
        else:
            nblk = 1
            w = (p.B + 4 * nth - 1) // (4 * nth) if big else p.B
            if w < 1:
                w = 1
            nitems = (p.B + w - 1) // w
        ptc_kernel_enter()
        with nogil:
            try:
                if big and nitems > 1:
                    for it in prange(nitems, num_threads=nth, schedule='dynamic'):
                        _line_item(p, num, it, nblk, w)
                else:
                    for it in range(nitems):
                        _line_item(p, num, it, nblk, w)
            finally:
                ptc_kernel_exit()
    finally:
        free(p)
    if fail:
        scratch_error(opname, fail)
    return 0


# ==========================================================================
# cumsum/cumprod of a contiguous float32 tensor, accumulated in double
# ==========================================================================
cdef enum:
    _F32_SCAN_ROWS = 4        # lines of one work item along the innermost dim (interleaved)
    _F32_SCAN_COLS = 256      # columns of one work item along an outer dim


cdef void _scan_f32_rows(const float* x, float* o, Py_ssize_t nrows, Py_ssize_t n,
                         bint prod) noexcept nogil:
    """nrows contiguous lines of n elements, four at a time: the running value
    of each line is a chain of dependent operations, four chains overlap."""
    cdef Py_ssize_t r = 0, k
    cdef double a0, a1, a2, a3, init = 1.0 if prod else 0.0
    cdef const float* x0
    cdef float* o0
    while r + 4 <= nrows:
        x0 = x + r * n
        o0 = o + r * n
        a0 = init
        a1 = init
        a2 = init
        a3 = init
        if prod:
            for k in range(n):
                a0 = a0 * <double>x0[k]
                a1 = a1 * <double>x0[n + k]
                a2 = a2 * <double>x0[2 * n + k]
                a3 = a3 * <double>x0[3 * n + k]
                o0[k] = <float>a0
                o0[n + k] = <float>a1
                o0[2 * n + k] = <float>a2
                o0[3 * n + k] = <float>a3
        else:
            for k in range(n):
                a0 = a0 + <double>x0[k]
                a1 = a1 + <double>x0[n + k]
                a2 = a2 + <double>x0[2 * n + k]
                a3 = a3 + <double>x0[3 * n + k]
                o0[k] = <float>a0
                o0[n + k] = <float>a1
                o0[2 * n + k] = <float>a2
                o0[3 * n + k] = <float>a3
        r += 4
    while r < nrows:
        x0 = x + r * n
        o0 = o + r * n
        a0 = init
        for k in range(n):
            if prod:
                a0 = a0 * <double>x0[k]
            else:
                a0 = a0 + <double>x0[k]
            o0[k] = <float>a0
        r += 1


cdef void _scan_f32_cols(const float* x, float* o, Py_ssize_t n, Py_ssize_t inner,
                         Py_ssize_t m, bint prod) noexcept nogil:
    """m (<= _F32_SCAN_COLS) adjacent columns of lines along an outer dim (n rows
    ``inner`` elements apart): a running double per column, rows swept in order."""
    cdef double acc[_F32_SCAN_COLS]
    cdef Py_ssize_t k, j
    cdef const float* xr
    cdef float* yr
    for j in range(m):
        acc[j] = 1.0 if prod else 0.0
    for k in range(n):
        xr = x + k * inner
        yr = o + k * inner
        if prod:
            for j in range(m):
                acc[j] = acc[j] * <double>xr[j]
                yr[j] = <float>acc[j]
        else:
            for j in range(m):
                acc[j] = acc[j] + <double>xr[j]
                yr[j] = <float>acc[j]


cdef void _scan_f32_item(const float* x, float* o, Py_ssize_t outer, Py_ssize_t n,
                         Py_ssize_t inner, Py_ssize_t it, bint prod) noexcept nogil:
    """Work item ``it``: _F32_SCAN_ROWS lines (inner == 1) or one outer index's
    block of _F32_SCAN_COLS columns."""
    cdef Py_ssize_t nb, a, c0, m
    if inner == 1:
        a = it * _F32_SCAN_ROWS
        m = outer - a
        if m > _F32_SCAN_ROWS:
            m = _F32_SCAN_ROWS
        _scan_f32_rows(x + a * n, o + a * n, m, n, prod)
        return
    nb = (inner + _F32_SCAN_COLS - 1) // _F32_SCAN_COLS
    a = it // nb
    c0 = (it - a * nb) * _F32_SCAN_COLS
    m = inner - c0
    if m > _F32_SCAN_COLS:
        m = _F32_SCAN_COLS
    _scan_f32_cols(x + a * n * inner + c0, o + a * n * inner + c0, n, inner, m, prod)


def scan_f32(_TensorBase x, int dim, str opname):
    """``cumsum``/``cumprod`` (``opname``) of the contiguous float32 CPU
    tensor ``x`` (at least 1-D, ``dim`` in range) into a new float32 tensor,
    accumulated in double and rounded once per element: the values of the
    general path (``lines`` on the float64 copy, then float32), without its
    two conversions.  Lines are independent work items (four interleaved
    lines, or blocks of columns), split over threads when large."""
    cdef bint prod = opname == "cumprod"
    cdef int i, nd = x._ndim
    cdef int nth = get_num_threads()
    cdef Py_ssize_t outer = 1, inner = 1, n, nitems, it
    if x._dtype.num != PT_FLOAT32 or not x._is_contig() or not 0 <= dim < nd \
            or (not prod and opname != "cumsum"):
        raise TypeError("scan_f32: a contiguous float32 tensor, cumsum or cumprod")
    n = x._shape[dim]
    for i in range(nd):
        if i < dim:
            outer *= x._shape[i]
        elif i > dim:
            inner *= x._shape[i]
    cdef _TensorBase out = _empty_contig(x._dtype, nd, x._shape, x._storage.device, False)
    cdef const float* px = <const float*>x._ptr()
    cdef float* po = <float*>out._ptr()
    if inner == 1:
        nitems = (outer + _F32_SCAN_ROWS - 1) // _F32_SCAN_ROWS
    else:
        nitems = outer * ((inner + _F32_SCAN_COLS - 1) // _F32_SCAN_COLS)
    if x._numel:
        ptc_kernel_enter()
        with nogil:
            try:
                if nth > 1 and nitems > 1 and x._numel >= parallel_grain():
                    for it in prange(nitems, num_threads=nth, schedule='dynamic'):
                        _scan_f32_item(px, po, outer, n, inner, it, prod)
                else:
                    for it in range(nitems):
                        _scan_f32_item(px, po, outer, n, inner, it, prod)
            finally:
                ptc_kernel_exit()
    return out
