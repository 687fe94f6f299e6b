# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Batch normalisation in training mode and group normalisation, forward and
backward, on contiguous float32/float64 tensors viewed as ``(N, C, L)`` (``L``
the product of the spatial sizes); RMS normalisation over rows (at the end).

Each channel is one task (channels are split over OpenMP threads, so the
result does not depend on the thread count): the forward takes the mean,
then the biased variance of the centred values (two passes, accumulated in
double), then writes ``y = (x - mean) * invstd * w + b`` in a third; the
backward sums ``g`` and ``g * (x - mean)`` in one pass, then writes
``gx = (g - mean(g) - xhat * mean(g * xhat)) * invstd * w`` and gives
``gw = sum(g * xhat)``, ``gb = sum(g)``.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt, fma, fmaf
from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from cpython.pyport cimport PY_SSIZE_T_MAX

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase
from ptcore._ops.kernels._host cimport require_host
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads

ctypedef fused flt:
    float
    double


cdef extern from "ptc_gn_rows.h" nogil:
    double ptc_gn_sum_f32(const float* x, Py_ssize_t n, int dev, double m)
    double ptc_gn_sum_f64(const double* x, Py_ssize_t n, int dev, double m)
    void ptc_gn_gsum_f32(const float* g, const float* x, Py_ssize_t n, float m, double* sg,
                         double* sgx)
    void ptc_gn_gsum_f64(const double* g, const double* x, Py_ssize_t n, double m, double* sg,
                         double* sgx)
    void ptc_gn_affine_f32(float* y, const float* x, Py_ssize_t n, float s, float t)
    void ptc_gn_affine_f64(double* y, const double* x, Py_ssize_t n, double s, double t)
    void ptc_gn_dx_f32(float* gx, const float* g, const float* x, Py_ssize_t n, float f1,
                       float f2, float f3)
    void ptc_gn_dx_f64(double* gx, const double* g, const double* x, Py_ssize_t n, double f1,
                       double f2, double f3)


cdef inline double _gn_sum(const flt* x, Py_ssize_t n, int dev, double m) noexcept nogil:
    if flt is float:
        return ptc_gn_sum_f32(x, n, dev, m)
    else:
        return ptc_gn_sum_f64(x, n, dev, m)


cdef inline double _lanes8(const double* a) noexcept nogil:
    return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]))


# The channel sums run in eight double lanes (element l of each row in lane
# l % 8, the rows continuing the same lanes, the lanes combined as
# _lanes8): eight independent addition chains the compiler vectorises,
# where one chain per channel waited ~4 cycles per element (DCGAN's batch
# norm backward at 1.5-2x PyTorch's time).  The order depends only on the
# shape, so the result still does not depend on the thread count.

cdef inline void _acc_sum(const flt* x, Py_ssize_t L, double* a) noexcept nogil:
    cdef Py_ssize_t l = 0, k
    while l + 8 <= L:
        for k in range(8):
            a[k] = a[k] + x[l + k]
        l += 8
    for k in range(L - l):
        a[k] = a[k] + x[l + k]


cdef inline void _acc_ssd(const flt* x, Py_ssize_t L, double m, double* a) noexcept nogil:
    cdef Py_ssize_t l = 0, k
    cdef double d
    while l + 8 <= L:
        for k in range(8):
            d = x[l + k] - m
            a[k] = a[k] + d * d
        l += 8
    for k in range(L - l):
        d = x[l + k] - m
        a[k] = a[k] + d * d


cdef inline void _acc_g(const flt* g, const flt* x, Py_ssize_t L, flt m, double* a,
                        double* b) noexcept nogil:
    # a += g, b += g * (x - m) (the product in flt, as the one-lane loop had it)
    cdef Py_ssize_t l = 0, k
    while l + 8 <= L:
        for k in range(8):
            a[k] = a[k] + g[l + k]
            b[k] = b[k] + g[l + k] * (x[l + k] - m)
        l += 8
    for k in range(L - l):
        a[k] = a[k] + g[l + k]
        b[k] = b[k] + g[l + k] * (x[l + k] - m)


cdef void _fwd_channel(const flt* x, const flt* w, const flt* b, flt* y, flt* mean_o,
                       flt* invstd_o, flt* var_o, Py_ssize_t N, Py_ssize_t C, Py_ssize_t L,
                       Py_ssize_t c, double eps) noexcept nogil:
    cdef Py_ssize_t n, l, k
    cdef const flt* xp
    cdef flt* yp
    cdef double a[8]
    cdef double m, v, inv
    cdef flt mf, scale, shift
    for k in range(8):
        a[k] = 0
    for n in range(N):
        _acc_sum(x + (n * C + c) * L, L, a)
    m = _lanes8(a) / (N * L)
    for k in range(8):
        a[k] = 0
    for n in range(N):
        _acc_ssd(x + (n * C + c) * L, L, m, a)
    v = _lanes8(a) / (N * L)
    inv = 1.0 / sqrt(v + eps)
    mean_o[c] = <flt>m
    var_o[c] = <flt>v
    invstd_o[c] = <flt>inv
    mf = <flt>m
    scale = <flt>inv * (w[c] if w != NULL else <flt>1)
    shift = b[c] if b != NULL else <flt>0
    for n in range(N):
        xp = x + (n * C + c) * L
        yp = y + (n * C + c) * L
        for l in range(L):
            yp[l] = (xp[l] - mf) * scale + shift


cdef void _bwd_channel(const flt* g, const flt* x, const flt* w, const flt* mean,
                       const flt* invstd, flt* gx, flt* gw, flt* gb, Py_ssize_t N,
                       Py_ssize_t C, Py_ssize_t L, Py_ssize_t c) noexcept nogil:
    cdef Py_ssize_t n, l, k
    cdef const flt* xp
    cdef const flt* gp
    cdef flt* gxp
    cdef double a[8]
    cdef double bb[8]
    cdef double sg, sgx
    cdef flt m = mean[c], inv = invstd[c], k1, k2, k3
    for k in range(8):
        a[k] = 0
        bb[k] = 0
    for n in range(N):
        _acc_g(g + (n * C + c) * L, x + (n * C + c) * L, L, m, a, bb)
    sg = _lanes8(a)
    sgx = _lanes8(bb)
    # sgx is sum(g * (x - mean)); sum(g * xhat) = sgx * invstd
    if gw != NULL:
        gw[c] = <flt>(sgx * inv)
    if gb != NULL:
        gb[c] = <flt>sg
    if gx == NULL:
        return
    # gx = (g - mean(g) - (x - mean) * invstd^2 * mean(g (x - mean))) * invstd * w
    k1 = inv * (w[c] if w != NULL else <flt>1)
    k2 = <flt>(sg / (N * L))
    k3 = <flt>(sgx / (N * L)) * inv * inv
    for n in range(N):
        xp = x + (n * C + c) * L
        gp = g + (n * C + c) * L
        gxp = gx + (n * C + c) * L
        for l in range(L):
            gxp[l] = (gp[l] - k2 - (xp[l] - m) * k3) * k1


cdef int _num(_TensorBase t) except -1:
    cdef int num = t._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise TypeError(f"batch_norm kernel: expected float32 or float64, got {t._dtype}")
    return num


cdef char* _arg(_TensorBase t, Py_ssize_t numel, int num, str name) except? NULL:
    if t is None:
        return NULL
    if t._dtype.num != num:
        raise TypeError(f"batch_norm kernel: {name} has dtype {t._dtype}, expected the input's")
    if t._numel != numel or not t._is_contig():
        raise ValueError(f"batch_norm kernel: {name} must be contiguous with {numel} elements, "
                         f"got {t._numel}")
    require_host(t, f"batch_norm kernel: {name}")
    return t._ptr() if numel else NULL


cdef int _nth(Py_ssize_t C, Py_ssize_t per_channel) noexcept:
    cdef int nth = get_num_threads()
    if C * per_channel < 32768:
        return 1
    return nth if nth < C else <int>C


def batch_norm_forward(_TensorBase x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t L,
                       _TensorBase w, _TensorBase b, _TensorBase y, _TensorBase mean,
                       _TensorBase invstd, _TensorBase var, double eps):
    """``y``, per-channel ``mean``, ``invstd`` and biased ``var`` of ``x`` viewed as (N, C, L)."""
    cdef int num = _num(x)
    if N <= 0 or C <= 0 or L <= 0:
        raise ValueError("batch_norm kernel: empty input")
    cdef Py_ssize_t n = N * C * L
    cdef char* px = _arg(x, n, num, "input")
    cdef char* pw = _arg(w, C, num, "weight")
    cdef char* pb = _arg(b, C, num, "bias")
    cdef char* py = _arg(y, n, num, "output")
    cdef char* pm = _arg(mean, C, num, "mean")
    cdef char* pi = _arg(invstd, C, num, "invstd")
    cdef char* pv = _arg(var, C, num, "var")
    if py == NULL or pm == NULL or pi == NULL or pv == NULL:
        raise ValueError("batch_norm kernel: output buffers are required")
    cdef int nth = _nth(C, N * L)
    cdef Py_ssize_t c
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                for c in prange(C, num_threads=nth, schedule='static'):
                    _fwd_channel(<float*>px, <float*>pw, <float*>pb, <float*>py, <float*>pm,
                                 <float*>pi, <float*>pv, N, C, L, c, eps)
            else:
                for c in prange(C, num_threads=nth, schedule='static'):
                    _fwd_channel(<double*>px, <double*>pw, <double*>pb, <double*>py, <double*>pm,
                                 <double*>pi, <double*>pv, N, C, L, c, eps)
        finally:
            ptc_kernel_exit()


def batch_norm_backward(_TensorBase g, _TensorBase x, Py_ssize_t N, Py_ssize_t C,
                        Py_ssize_t L, _TensorBase w, _TensorBase mean, _TensorBase invstd,
                        _TensorBase gx, _TensorBase gw, _TensorBase gb):
    """``gx`` (or None), ``gw`` (or None), ``gb`` (or None) from the output gradient ``g``."""
    cdef int num = _num(x)
    if N <= 0 or C <= 0 or L <= 0:
        raise ValueError("batch_norm kernel: empty input")
    cdef Py_ssize_t n = N * C * L
    cdef char* pg = _arg(g, n, num, "grad_output")
    cdef char* px = _arg(x, n, num, "input")
    cdef char* pw = _arg(w, C, num, "weight")
    cdef char* pm = _arg(mean, C, num, "mean")
    cdef char* pi = _arg(invstd, C, num, "invstd")
    cdef char* pgx = _arg(gx, n, num, "grad_input")
    cdef char* pgw = _arg(gw, C, num, "grad_weight")
    cdef char* pgb = _arg(gb, C, num, "grad_bias")
    if pg == NULL or px == NULL or pm == NULL or pi == NULL:
        raise ValueError("batch_norm kernel: grad_output, input, mean and invstd are required")
    cdef int nth = _nth(C, N * L)
    cdef Py_ssize_t c
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                for c in prange(C, num_threads=nth, schedule='static'):
                    _bwd_channel(<float*>pg, <float*>px, <float*>pw, <float*>pm, <float*>pi,
                                 <float*>pgx, <float*>pgw, <float*>pgb, N, C, L, c)
            else:
                for c in prange(C, num_threads=nth, schedule='static'):
                    _bwd_channel(<double*>pg, <double*>px, <double*>pw, <double*>pm, <double*>pi,
                                 <double*>pgx, <double*>pgw, <double*>pgb, N, C, L, c)
        finally:
            ptc_kernel_exit()


# --------------------------------------------------------------------------
# group normalisation: x viewed as (N, C, L), C = G * D; one task per (n, g)
# (its D * L contiguous elements), so the thread count does not change a bit
# --------------------------------------------------------------------------
cdef void _gn_fwd_row(const flt* x, const flt* w, const flt* b, flt* y, flt* mean_o,
                      flt* rstd_o, Py_ssize_t C, Py_ssize_t G, Py_ssize_t D, Py_ssize_t L,
                      Py_ssize_t t, double eps) noexcept nogil:
    """Task t = n * G + g: the mean and rstd of its D * L elements (two passes
    in double lanes, ptc_gn_rows.h), then per channel y = scale * x + shift with
    scale = rstd * w[c], shift = -scale * mean + b[c] (torch's form of the affine)."""
    cdef Py_ssize_t g = t % G, n = t // G, j, c
    cdef Py_ssize_t off = (n * C + g * D) * L
    cdef const flt* xp = x + off
    cdef flt* yp = y + off
    cdef double m, r
    cdef flt scale, shift, mf, rf
    m = _gn_sum(xp, D * L, 0, 0.0) / (D * L)
    r = 1.0 / sqrt(_gn_sum(xp, D * L, 1, m) / (D * L) + eps)
    mean_o[t] = <flt>m
    rstd_o[t] = <flt>r
    mf = <flt>m
    rf = <flt>r
    for j in range(D):
        c = g * D + j
        # (torch's: scale = rstd * w, shift = -scale * mean + b, y = scale * x + shift,
        # in the element type, the multiply-adds fused)
        scale = rf * (w[c] if w != NULL else <flt>1)
        if flt is float:
            shift = fmaf(-scale, mf, b[c] if b != NULL else <flt>0)
        else:
            shift = fma(-scale, mf, b[c] if b != NULL else <flt>0)
        if flt is float:
            ptc_gn_affine_f32(yp + j * L, xp + j * L, L, scale, shift)
        else:
            ptc_gn_affine_f64(yp + j * L, xp + j * L, L, scale, shift)


cdef void _gn_bwd_row(const flt* g, const flt* x, const flt* w, const flt* mean,
                      const flt* rstd, flt* gx, double* ds, double* db, Py_ssize_t C,
                      Py_ssize_t G, Py_ssize_t D, Py_ssize_t L, Py_ssize_t t) noexcept nogil:
    """Task t = n * G + g of the backward: per channel ds = sum(g * (x - mean)),
    db = sum(g) (into ds/db[n * C + c]; centred, where torch sums g * x and
    subtracts db * mean later), then gx = c1 * g + c2 * x + c3 with c1 =
    rstd * w[c] and the group's c2, c3 (torch's GroupNormBackward)."""
    cdef Py_ssize_t gr = t % G, n = t // G, j, c
    cdef Py_ssize_t off = (n * C + gr * D) * L
    cdef const flt* xp = x + off
    cdef const flt* gp = g + off
    cdef double dsv = 0, dbv = 0, m = mean[t], r = rstd[t], wc, s, c2, c3
    cdef flt f1, f2, f3
    for j in range(D):
        c = gr * D + j
        if flt is float:
            ptc_gn_gsum_f32(gp + j * L, xp + j * L, L, mean[t], &db[n * C + c], &ds[n * C + c])
        else:
            ptc_gn_gsum_f64(gp + j * L, xp + j * L, L, mean[t], &db[n * C + c], &ds[n * C + c])
        wc = <double>w[c] if w != NULL else 1.0
        dsv = dsv + ds[n * C + c] * wc
        dbv = dbv + db[n * C + c] * wc
    if gx == NULL:
        return
    s = 1.0 / (D * L)
    c2 = -dsv * r * r * r * s
    c3 = -c2 * m - dbv * r * s
    f2 = <flt>c2
    f3 = <flt>c3
    for j in range(D):
        c = gr * D + j
        f1 = <flt>(r * (<double>w[c] if w != NULL else 1.0))
        if flt is float:
            ptc_gn_dx_f32(gx + off + j * L, gp + j * L, xp + j * L, L, f1, f2, f3)
        else:
            ptc_gn_dx_f64(gx + off + j * L, gp + j * L, xp + j * L, L, f1, f2, f3)


cdef int _gn_shape(Py_ssize_t N, Py_ssize_t C, Py_ssize_t G, Py_ssize_t L) except -1:
    if N <= 0 or C <= 0 or G <= 0 or L <= 0 or C % G != 0:
        raise ValueError(f"group_norm kernel: bad shape N={N} C={C} G={G} L={L}")
    return 0


def group_norm_forward(_TensorBase x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t G, Py_ssize_t L,
                       _TensorBase w, _TensorBase b, _TensorBase y, _TensorBase mean,
                       _TensorBase rstd, double eps):
    """``y`` and the (N * G) ``mean``/``rstd`` of ``x`` viewed as (N, C, L) in G groups."""
    cdef int num = _num(x)
    _gn_shape(N, C, G, L)
    cdef Py_ssize_t n = N * C * L
    cdef char* px = _arg(x, n, num, "input")
    cdef char* pw = _arg(w, C, num, "weight")
    cdef char* pb = _arg(b, C, num, "bias")
    cdef char* py = _arg(y, n, num, "output")
    cdef char* pm = _arg(mean, N * G, num, "mean")
    cdef char* pr = _arg(rstd, N * G, num, "rstd")
    if px == NULL or py == NULL or pm == NULL or pr == NULL:
        raise ValueError("group_norm kernel: input and output buffers are required")
    cdef Py_ssize_t T = N * G, t
    cdef int nth = _nth(T, n // T)
    cdef Py_ssize_t D = C // G
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                for t in prange(T, num_threads=nth, schedule='static'):
                    _gn_fwd_row(<float*>px, <float*>pw, <float*>pb, <float*>py, <float*>pm,
                                <float*>pr, C, G, D, L, t, eps)
            else:
                for t in prange(T, num_threads=nth, schedule='static'):
                    _gn_fwd_row(<double*>px, <double*>pw, <double*>pb, <double*>py, <double*>pm,
                                <double*>pr, C, G, D, L, t, eps)
        finally:
            ptc_kernel_exit()


def group_norm_backward(_TensorBase g, _TensorBase x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t G,
                        Py_ssize_t L, _TensorBase w, _TensorBase mean, _TensorBase rstd,
                        _TensorBase gx, _TensorBase gw, _TensorBase gb):
    """``gx``, ``gw``, ``gb`` (each or None) of group norm from the output gradient
    ``g`` (the forward's ``mean``/``rstd``)."""
    cdef int num = _num(x)
    _gn_shape(N, C, G, L)
    cdef Py_ssize_t n = N * C * L
    cdef char* pg = _arg(g, n, num, "grad_output")
    cdef char* px = _arg(x, n, num, "input")
    cdef char* pw = _arg(w, C, num, "weight")
    cdef char* pm = _arg(mean, N * G, num, "mean")
    cdef char* pr = _arg(rstd, N * G, num, "rstd")
    cdef char* pgx = _arg(gx, n, num, "grad_input")
    cdef char* pgw = _arg(gw, C, num, "grad_weight")
    cdef char* pgb = _arg(gb, C, num, "grad_bias")
    if pg == NULL or px == NULL or pm == NULL or pr == NULL:
        raise ValueError("group_norm kernel: grad_output, input, mean and rstd are required")
    cdef Py_ssize_t T = N * G, t, c, i
    cdef int nth = _nth(T, n // T)
    cdef Py_ssize_t D = C // G
    cdef double* ds = <double*>PyMem_RawMalloc(<size_t>(2 * N * C) * sizeof(double))
    if ds == NULL:
        raise MemoryError("group_norm kernel: out of memory")
    cdef double* db = ds + N * C
    cdef double sw, sb, rv
    ptc_kernel_enter()
    try:
        with nogil:
            if num == PT_FLOAT32:
                for t in prange(T, num_threads=nth, schedule='static'):
                    _gn_bwd_row(<float*>pg, <float*>px, <float*>pw, <float*>pm, <float*>pr,
                                <float*>pgx, ds, db, C, G, D, L, t)
            else:
                for t in prange(T, num_threads=nth, schedule='static'):
                    _gn_bwd_row(<double*>pg, <double*>px, <double*>pw, <double*>pm, <double*>pr,
                                <double*>pgx, ds, db, C, G, D, L, t)
            # gw[c] = sum_n ds * rstd (ds centred), gb[c] = sum_n db
            for c in range(C):
                sw = 0
                sb = 0
                for i in range(N):
                    if num == PT_FLOAT32:
                        rv = (<float*>pr)[i * G + c // D]
                    else:
                        rv = (<double*>pr)[i * G + c // D]
                    sw = sw + ds[i * C + c] * rv
                    sb = sb + db[i * C + c]
                if pgw != NULL:
                    if num == PT_FLOAT32:
                        (<float*>pgw)[c] = <float>sw
                    else:
                        (<double*>pgw)[c] = sw
                if pgb != NULL:
                    if num == PT_FLOAT32:
                        (<float*>pgb)[c] = <float>sb
                    else:
                        (<double*>pgb)[c] = sb
    finally:
        ptc_kernel_exit()
        PyMem_RawFree(ds)


# ---------------------------------------------------------------------------
# RMS normalisation over the last n elements of each row
# ---------------------------------------------------------------------------

cdef extern from "ptc_rms_rows.h" nogil:
    double ptc_rms_dot_f32(const float* g, const float* w, const float* x, Py_ssize_t n)
    double ptc_rms_dot_f64(const double* g, const double* w, const double* x, Py_ssize_t n)
    void ptc_rms_out_f32(float* y, const float* x, const float* w, Py_ssize_t n, float r)
    void ptc_rms_out_f64(double* y, const double* x, const double* w, Py_ssize_t n, double r)
    void ptc_rms_dx_f32(float* gx, const float* g, const float* w, const float* x, Py_ssize_t n,
                        float f1, float f2)
    void ptc_rms_dx_f64(double* gx, const double* g, const double* w, const double* x,
                        Py_ssize_t n, double f1, double f2)
    void ptc_rms_gw_f32(double* acc, const float* g, const float* x, Py_ssize_t n, double r)
    void ptc_rms_gw_f64(double* acc, const double* g, const double* x, Py_ssize_t n, double r)


cdef void _rms_fwd_row(const flt* x, const flt* w, flt* y, flt* rstd, Py_ssize_t n,
                       Py_ssize_t t, double eps) noexcept nogil:
    """Row t: r = 1 / sqrt(mean(x * x) + eps) (the squares and their sum in
    double, ptc_gn_rows.h's lanes), y = (x * r) * w in flt (the composite's
    order: ``x * rsqrt(...)`` then ``* weight``)."""
    cdef const flt* xp = x + t * n
    cdef double r = 1.0 / sqrt(_gn_sum(xp, n, 1, 0.0) / n + eps)
    cdef flt rf = <flt>r
    rstd[t] = rf
    if flt is float:
        ptc_rms_out_f32(y + t * n, xp, w, n, rf)
    else:
        ptc_rms_out_f64(y + t * n, xp, w, n, rf)


cdef void _rms_bwd_row(const flt* g, const flt* x, const flt* w, const flt* rstd, flt* gx,
                       Py_ssize_t n, Py_ssize_t t) noexcept nogil:
    """Row t of the input gradient: with gw = g * w, d = sum(gw * x) (double),
    gx = r * gw - x * (r^3 * d / n)."""
    cdef double d, r = rstd[t]
    if flt is float:
        d = ptc_rms_dot_f32(g + t * n, w, x + t * n, n)
        ptc_rms_dx_f32(gx + t * n, g + t * n, w, x + t * n, n, <float>r,
                       <float>(r * r * r * d / n))
    else:
        d = ptc_rms_dot_f64(g + t * n, w, x + t * n, n)
        ptc_rms_dx_f64(gx + t * n, g + t * n, w, x + t * n, n, r, r * r * r * d / n)


cdef enum:
    RMS_COLS = 512      # weight-gradient columns a task (rows summed in order in each)


cdef void _rms_gw_cols(const flt* g, const flt* x, const flt* rstd, flt* gw, double* acc,
                       Py_ssize_t R, Py_ssize_t n, Py_ssize_t c0) noexcept nogil:
    """gw[c0:c0 + RMS_COLS] = sum over rows of (g * x) * r (in double, rows in order)."""
    cdef Py_ssize_t c1 = c0 + RMS_COLS if c0 + RMS_COLS < n else n, t, j
    for j in range(c0, c1):
        acc[j] = 0
    for t in range(R):
        if flt is float:
            ptc_rms_gw_f32(acc + c0, g + t * n + c0, x + t * n + c0, c1 - c0, rstd[t])
        else:
            ptc_rms_gw_f64(acc + c0, g + t * n + c0, x + t * n + c0, c1 - c0, rstd[t])
    for j in range(c0, c1):
        gw[j] = <flt>acc[j]


cdef int _rms_shape(Py_ssize_t R, Py_ssize_t n, _TensorBase x) except -1:
    # (R * n checked without overflow: it must be x's element count)
    if R <= 0 or n <= 0 or R > PY_SSIZE_T_MAX // n or R * n != x._numel:
        raise ValueError(f"rms_norm kernel: {R} rows of {n} do not match the input's "
                         f"{x._numel} elements (shape {tuple(x.shape)})")
    return 0


def rms_norm_forward(_TensorBase x, Py_ssize_t R, Py_ssize_t n, _TensorBase w, _TensorBase y,
                     _TensorBase rstd, double eps):
    """``y`` and the per-row ``rstd`` of ``x`` viewed as (R, n) rows."""
    cdef int num = _num(x)
    _rms_shape(R, n, x)
    cdef char* px = _arg(x, R * n, num, "input")
    cdef char* pw = _arg(w, n, num, "weight")
    cdef char* py = _arg(y, R * n, num, "output")
    cdef char* pr = _arg(rstd, R, num, "rstd")
    cdef Py_ssize_t t
    cdef int nth = _nth(R, n)
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                for t in prange(R, num_threads=nth, schedule='static'):
                    _rms_fwd_row(<float*>px, <float*>pw, <float*>py, <float*>pr, n, t, eps)
            else:
                for t in prange(R, num_threads=nth, schedule='static'):
                    _rms_fwd_row(<double*>px, <double*>pw, <double*>py, <double*>pr, n, t, eps)
        finally:
            ptc_kernel_exit()


def rms_norm_backward(_TensorBase g, _TensorBase x, Py_ssize_t R, Py_ssize_t n, _TensorBase w,
                      _TensorBase rstd, _TensorBase gx, _TensorBase gw):
    """``gx`` and ``gw`` (each or None) of RMS norm from the output gradient ``g``
    (the forward's per-row ``rstd``)."""
    cdef int num = _num(x)
    _rms_shape(R, n, x)
    cdef char* pg = _arg(g, R * n, num, "grad_output")
    cdef char* px = _arg(x, R * n, num, "input")
    cdef char* pw = _arg(w, n, num, "weight")
    cdef char* pr = _arg(rstd, R, num, "rstd")
    cdef char* pgx = _arg(gx, R * n, num, "grad_input")
    cdef char* pgw = _arg(gw, n, num, "grad_weight")
    cdef Py_ssize_t t, c, nc = (n + RMS_COLS - 1) // RMS_COLS
    cdef int nth = _nth(R, n), nthc = _nth(nc, R * RMS_COLS)
    cdef double* acc = NULL
    if pgw != NULL:
        acc = <double*>PyMem_RawMalloc(<size_t>n * sizeof(double))
        if acc == NULL:
            raise MemoryError("rms_norm kernel: out of memory")
    ptc_kernel_enter()
    try:
        with nogil:
            if pgx != NULL:
                if num == PT_FLOAT32:
                    for t in prange(R, num_threads=nth, schedule='static'):
                        _rms_bwd_row(<float*>pg, <float*>px, <float*>pw, <float*>pr, <float*>pgx,
                                     n, t)
                else:
                    for t in prange(R, num_threads=nth, schedule='static'):
                        _rms_bwd_row(<double*>pg, <double*>px, <double*>pw, <double*>pr,
                                     <double*>pgx, n, t)
            if pgw != NULL:
                if num == PT_FLOAT32:
                    for c in prange(nc, num_threads=nthc, schedule='static'):
                        _rms_gw_cols(<float*>pg, <float*>px, <float*>pr, <float*>pgw, acc, R, n,
                                     c * RMS_COLS)
                else:
                    for c in prange(nc, num_threads=nthc, schedule='static'):
                        _rms_gw_cols(<double*>pg, <double*>px, <double*>pr, <double*>pgw, acc, R,
                                     n, c * RMS_COLS)
    finally:
        ptc_kernel_exit()
        PyMem_RawFree(acc)
