# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""Batch normalisation in training mode, forward and backward, on contiguous
float32/float64 tensors viewed as ``(N, C, L)`` (``L`` the product of the
spatial sizes).

Each channel is one task (channels are split over OpenMP threads, so the
result does not depend on the thread count): the forward takes the mean,
then the biased variance of the centred values (two passes, accumulated in
double), then writes ``y = (x - mean) * invstd * w + b`` in a third; the
backward sums ``g`` and ``g * (x - mean)`` in one pass, then writes
``gx = (g - mean(g) - xhat * mean(g * xhat)) * invstd * w`` and gives
``gw = sum(g * xhat)``, ``gb = sum(g)``.
"""
from cython.parallel cimport prange
from libc.math cimport sqrt

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase
from ptcore._ops.kernels._host cimport require_host
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads

ctypedef fused flt:
    float
    double


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
