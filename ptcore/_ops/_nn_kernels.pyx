# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One-pass backward kernels of nn functions (GELU, softmax, log-softmax).

Each function takes contiguous operands of one floating dtype and returns a
new contiguous tensor, or ``None`` when it does not apply (other dtypes,
layouts or shapes): the caller then uses its composite formula.  The
autograd formulas use them only when the backward is not itself recorded
(no ``create_graph``), so higher-order gradients keep the differentiable
composites.
"""
from cython.parallel cimport prange
from libc.math cimport exp, expf

from ptcore._ops._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops._parallel cimport get_num_threads, parallel_grain
from ptcore._tensor cimport _TensorBase, _empty_contig

cdef extern from "ptc_math.h" nogil:
    void ptc_gelu_bwdv_f32(float* o, const float* x, const float* g, Py_ssize_t n)
    double ptc_gelu_bwd_f64(double dy, double x)

cdef enum:
    CHUNK = 16384          # elements per parallel task of the elementwise kernels


cdef inline bint _same(_TensorBase a, _TensorBase b) noexcept:
    cdef int d
    if a._ndim != b._ndim or a._dtype is not b._dtype:
        return False
    for d in range(a._ndim):
        if a._shape[d] != b._shape[d]:
            return False
    return a._is_contig() and b._is_contig()


cdef inline int _threads(Py_ssize_t work) noexcept nogil:
    cdef int nt = get_num_threads()
    if nt <= 1 or work < 4 * parallel_grain():
        return 1
    return nt


def gelu_backward(_TensorBase g, _TensorBase x):
    """``g * gelu'(x)`` for exact GELU, as ATen's GeluBackward computes it
    (float32: the vectorised Abramowitz-Stegun erf of the forward kernel)."""
    if not _same(g, x):
        return None
    cdef int num = x._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef Py_ssize_t n = x._numel, nchunks = (n + CHUNK - 1) // CHUNK, c, i, lo, m
    cdef int nt = _threads(n)
    cdef float* of
    cdef const float* xf
    cdef const float* gf
    cdef double* od
    cdef const double* xd
    cdef const double* gd
    if num == PT_FLOAT32:
        of = <float*>out._ptr()
        xf = <const float*>x._ptr()
        gf = <const float*>g._ptr()
        with nogil:
            if nt == 1:
                ptc_gelu_bwdv_f32(of, xf, gf, n)
            else:
                for c in prange(nchunks, num_threads=nt, schedule="static"):
                    lo = c * CHUNK
                    m = CHUNK if lo + CHUNK <= n else n - lo
                    ptc_gelu_bwdv_f32(of + lo, xf + lo, gf + lo, m)
    else:
        od = <double*>out._ptr()
        xd = <const double*>x._ptr()
        gd = <const double*>g._ptr()
        with nogil:
            for i in prange(n, num_threads=nt, schedule="static"):
                od[i] = ptc_gelu_bwd_f64(gd[i], xd[i])
    return out


ctypedef fused real:
    float
    double


cdef void _softmax_rows(real* o, const real* g, const real* y, Py_ssize_t rows,
                        Py_ssize_t n, bint log, int nt) noexcept nogil:
    """softmax: o = y * (g - sum(g * y)); log_softmax: o = g - exp(y) * sum(g),
    one row of ``n`` elements at a time (sums accumulated in double)."""
    cdef Py_ssize_t r, j
    cdef double s
    cdef real sr
    cdef const real* gr
    cdef const real* yr
    cdef real* orow
    for r in prange(rows, num_threads=nt, schedule="static"):
        gr = g + r * n
        yr = y + r * n
        orow = o + r * n
        s = 0
        if log:
            for j in range(n):
                s = s + gr[j]
            sr = <real>s
            for j in range(n):
                if real is float:
                    orow[j] = gr[j] - expf(yr[j]) * sr
                else:
                    orow[j] = gr[j] - exp(yr[j]) * sr
        else:
            for j in range(n):
                s = s + gr[j] * yr[j]
            sr = <real>s
            for j in range(n):
                orow[j] = yr[j] * (gr[j] - sr)


def softmax_backward(_TensorBase g, _TensorBase y, int dim, bint log):
    """Gradient of softmax (``log=False``, ``y`` its output) or log_softmax
    (``log=True``) over the last dim ``dim`` of contiguous ``g``/``y``."""
    if not _same(g, y) or y._ndim == 0 or (dim != y._ndim - 1 and dim != -1):
        return None
    cdef int num = y._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    cdef Py_ssize_t n = y._shape[y._ndim - 1]
    if n == 0 or y._numel == 0:
        return None
    cdef Py_ssize_t rows = y._numel // n
    cdef _TensorBase out = _empty_contig(y._dtype, y._ndim, y._shape, y._storage.device, False)
    cdef int nt = _threads(y._numel)
    if nt > rows:
        nt = <int>rows
    cdef char* po = out._ptr()
    cdef char* pg = g._ptr()
    cdef char* py = y._ptr()
    if num == PT_FLOAT32:
        with nogil:
            _softmax_rows(<float*>po, <const float*>pg, <const float*>py, rows, n, log, nt)
    else:
        with nogil:
            _softmax_rows(<double*>po, <const double*>pg, <const double*>py, rows, n, log, nt)
    return out
