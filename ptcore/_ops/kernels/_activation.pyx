# cython: language_level=3, cdivision=True, boundscheck=False, wraparound=False, initializedcheck=False
"""LeakyReLU forward and backward in one vectorisable pass over contiguous
float32/float64 tensors.

The generic elementwise template writes ``x if x > 0 else x * slope`` as a
branch, which costs a misprediction per element on signed data; here the
loops compute both sides and pick one with a bit mask, which GCC
vectorises.  PyTorch's rules: ``x > 0`` strictly; NaN takes the
slope branch (NaN * slope is NaN).  Large tensors are split in fixed blocks
over OpenMP threads (elementwise: the same result at any thread count).
"""
from cython.parallel cimport prange

from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase
from ptcore._ops.kernels._host cimport require_host
from ptcore._ops.kernels._types cimport PT_FLOAT32, PT_FLOAT64
from ptcore._ops.kernels._parallel cimport get_num_threads

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* o = c ? a : b as a bit select (GCC vectorises it; a ternary on floats is
       left as a branch because the multiply of the other side might trap) */
    #define PTC_SEL(T, U, o, c, a, b) do { T a_ = (a), b_ = (b); U ua_, ub_, k_ = -(U)(c); \
        memcpy(&ua_, &a_, sizeof ua_); memcpy(&ub_, &b_, sizeof ub_);                   \
        ua_ = (ua_ & k_) | (ub_ & ~k_); memcpy(&(o), &ua_, sizeof ua_); } while (0)
    #include "ptc_math.h"
    /* float32 forward: whole vectors (v > 0 ? v : v * s as a lane select, one
       multiply: the same bits at every width), then the scalar tail */
    #define PTC_LEAKY_F32_BODY(W, VF, VI, SEL)                                      \
        Py_ssize_t i = 0;                                                           \
        for (; i + (W) <= n; i += (W)) {                                            \
            VF v, y;                                                                \
            memcpy(&v, x + i, sizeof v);                                            \
            y = SEL((VI)(v > 0.0f), v, v * s);                                      \
            memcpy(o + i, &y, sizeof y);                                            \
        }                                                                           \
        for (; i < n; i++) { float v = x[i]; PTC_SEL(float, uint32_t, o[i], v > 0.0f, v, v * s); }
    #if PTC_HAVE_VEC_F32 && PTC_X86_DISPATCH
    PTC_TGT("avx512f,avx512vl") static void ptc_leaky_fwd_f32_avx512(const float *x, float *o, Py_ssize_t n, float s)
    { PTC_LEAKY_F32_BODY(16, ptc_v16sf, ptc_v16si, ptc_sel16) }
    PTC_TGT("avx2") static void ptc_leaky_fwd_f32_avx2(const float *x, float *o, Py_ssize_t n, float s)
    { PTC_LEAKY_F32_BODY(8, ptc_v8sf, ptc_v8si, ptc_sel8) }
    static void ptc_leaky_fwd_f32(const float *x, float *o, Py_ssize_t n, float s)
    {
        int l = ptc_vec_level();
        if (l == 2) ptc_leaky_fwd_f32_avx512(x, o, n, s);
        else if (l == 1) ptc_leaky_fwd_f32_avx2(x, o, n, s);
        else { PTC_LEAKY_F32_BODY(8, ptc_v8sf, ptc_v8si, ptc_sel8) }
    }
    #else
    static void ptc_leaky_fwd_f32(const float *x, float *o, Py_ssize_t n, float s)
    { for (Py_ssize_t i = 0; i < n; i++) { float v = x[i]; PTC_SEL(float, uint32_t, o[i], v > 0.0f, v, v * s); } }
    #endif
    static void ptc_leaky_fwd_f64(const double *x, double *o, Py_ssize_t n, double s)
    { for (Py_ssize_t i = 0; i < n; i++) { double v = x[i]; PTC_SEL(double, uint64_t, o[i], v > 0.0, v, v * s); } }
    static void ptc_leaky_bwd_f32(const float *g, const float *x, float *o, Py_ssize_t n, float s)
    { for (Py_ssize_t i = 0; i < n; i++) { float v = g[i]; PTC_SEL(float, uint32_t, o[i], x[i] > 0.0f, v, v * s); } }
    static void ptc_leaky_bwd_f64(const double *g, const double *x, double *o, Py_ssize_t n,
                                  double s)
    { for (Py_ssize_t i = 0; i < n; i++) { double v = g[i]; PTC_SEL(double, uint64_t, o[i], x[i] > 0.0, v, v * s); } }
    """
    void ptc_leaky_fwd_f32(const float* x, float* o, Py_ssize_t n, float s) nogil
    void ptc_leaky_fwd_f64(const double* x, double* o, Py_ssize_t n, double s) nogil
    void ptc_leaky_bwd_f32(const float* g, const float* x, float* o, Py_ssize_t n, float s) nogil
    void ptc_leaky_bwd_f64(const double* g, const double* x, double* o, Py_ssize_t n,
                           double s) nogil

cdef enum:
    BLOCK = 65536


cdef int _check(tuple ts) except -1:
    cdef _TensorBase t0 = ts[0]
    cdef _TensorBase t
    cdef int num = t0._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        raise TypeError(f"leaky_relu kernel: expected float32 or float64, got {t0._dtype}")
    for t in ts:
        if t._dtype.num != num:
            raise TypeError("leaky_relu kernel: dtypes differ")
        if t._numel != t0._numel:
            raise ValueError("leaky_relu kernel: sizes differ")
        if not t._is_contig():
            raise ValueError("leaky_relu kernel: tensors must be contiguous")
        require_host(t, "leaky_relu kernel: tensors")
    return num


def leaky_relu_forward(_TensorBase x, _TensorBase out, double slope):
    """``out = x if x > 0 else x * slope`` (contiguous, same dtype and size)."""
    cdef int num = _check((x, out))
    cdef Py_ssize_t n = x._numel, nb = (n + BLOCK - 1) // BLOCK, b, i0, m
    cdef int nth = get_num_threads() if n >= 4 * BLOCK else 1
    if n == 0:
        return out
    cdef char* px = x._ptr()
    cdef char* po = out._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for b in prange(nb, num_threads=nth, schedule='static'):
                i0 = b * BLOCK
                m = BLOCK if i0 + BLOCK <= n else n - i0
                if num == PT_FLOAT32:
                    ptc_leaky_fwd_f32(<float*>px + i0, <float*>po + i0, m, <float>slope)
                else:
                    ptc_leaky_fwd_f64(<double*>px + i0, <double*>po + i0, m, slope)
        finally:
            ptc_kernel_exit()
    return out


def leaky_relu_backward(_TensorBase g, _TensorBase x, _TensorBase out, double slope):
    """``out = g if x > 0 else g * slope`` (contiguous, same dtype and size)."""
    cdef int num = _check((g, x, out))
    cdef Py_ssize_t n = x._numel, nb = (n + BLOCK - 1) // BLOCK, b, i0, m
    cdef int nth = get_num_threads() if n >= 4 * BLOCK else 1
    if n == 0:
        return out
    cdef char* pg = g._ptr()
    cdef char* px = x._ptr()
    cdef char* po = out._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for b in prange(nb, num_threads=nth, schedule='static'):
                i0 = b * BLOCK
                m = BLOCK if i0 + BLOCK <= n else n - i0
                if num == PT_FLOAT32:
                    ptc_leaky_bwd_f32(<float*>pg + i0, <float*>px + i0, <float*>po + i0, m,
                                      <float>slope)
                else:
                    ptc_leaky_bwd_f64(<double*>pg + i0, <double*>px + i0, <double*>po + i0, m, slope)
        finally:
            ptc_kernel_exit()
    return out
