# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""One-pass kernels of nn functions: GELU, softmax and log-softmax backward,
the causal softmax of attention, layer norm forward and backward, cross
entropy of logits with class-index targets forward and backward, binary
cross entropy (with and without logits), smooth L1 and Huber losses.

Each function takes contiguous operands of one floating dtype and returns a
new contiguous tensor, or ``None`` when it does not apply (other dtypes,
layouts or shapes): the caller then uses its composite formula.  The
autograd formulas use them only when the backward is not itself recorded
(no ``create_graph``), so higher-order gradients keep the differentiable
composites.
"""
from cython.parallel cimport prange
from libc.math cimport INFINITY, exp, expf, fabs, fabsf, log, sqrt
from libc.stdlib cimport free
from libc.string cimport memcpy
from cpython.pycapsule cimport PyCapsule_New
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, ptc_scratch_calloc, scratch_bind

from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t

from ptcore._ops.kernels._types cimport PT_BOOL, PT_FLOAT16, PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_INT64
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, _empty_contig
scratch_bind()      # this module's scratch requests obey _fault's test switch

cdef extern from "ptc_log_vec.h" nogil:
    void ptc_log1p_v_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_log_v_f32(float* o, const float* a, Py_ssize_t n)

cdef extern from "ptc_fmath_vec.h" nogil:
    # ptcore.exp's, ptcore.sigmoid's and ptcore.tanh's float32 loops (the kernels
    # do the composites' operations with them, bit for bit)
    void ptc_exp_fv_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_sigmoid_fv_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_tanh_fv_f32(float* o, const float* a, Py_ssize_t n)

cdef extern from "ptc_dexp_vec.h" nogil:
    # ptcore.exp's and ptcore.sigmoid's float64 loops (the same bits as the composite's)
    void ptc_exp_dv_f64(double* o, const double* a, Py_ssize_t n)
    void ptc_sigmoid_dv_f64(double* o, const double* a, Py_ssize_t n)

cdef extern from "ptc_dexpm1_vec.h" nogil:
    void ptc_tanh_dv_f64(double* o, const double* a, Py_ssize_t n)

cdef extern from "ptc_derf_vec.h" nogil:
    void ptc_erf_dv_f64(double* o, const double* a, Py_ssize_t n)

cdef extern from "ptc_dlog_vec.h" nogil:
    void ptc_log_dv_f64(double* o, const double* a, Py_ssize_t n)
    void ptc_log1p_dv_f64(double* o, const double* a, Py_ssize_t n)

cdef extern from "ptc_act_vec.h" nogil:
    void ptc_hardswish_fwdv_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_hardswish_fwdv_f64(double* o, const double* a, Py_ssize_t n)
    void ptc_hardswish_bwdv_f32(float* o, const float* x, const float* g, Py_ssize_t n)
    void ptc_hardswish_bwdv_f64(double* o, const double* x, const double* g, Py_ssize_t n)
    void ptc_silu_bwdv_f32(float* o, const float* x, const float* g, Py_ssize_t n)
    void ptc_sigmoid_bwdv_f32(float* o, const float* y, const float* g, Py_ssize_t n)

cdef extern from "ptc_math.h" nogil:
    void ptc_exp_f32(float* o, const float* a, Py_ssize_t n)
    void ptc_gelu_bwdv_f32(float* o, const float* x, const float* g, Py_ssize_t n)

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* x where !(x > 0) (negatives, zeros, NaN), else +0: logsigmoid's min(x, 0)
       as a bit mask, no branch (random signs mispredict one an element) */
    static inline float ptc_min0f(float x)
    { uint32_t u, m = -(uint32_t)(x > 0.0f); memcpy(&u, &x, 4); u &= ~m; memcpy(&x, &u, 4); return x; }
    static inline double ptc_min0d(double x)
    { uint64_t u, m = -(uint64_t)(x > 0.0); memcpy(&u, &x, 8); u &= ~m; memcpy(&x, &u, 8); return x; }
    """
    float ptc_min0f(float x) nogil
    double ptc_min0d(double x) nogil

cdef extern from *:
    """
    /* layer norm backward's float32 row loops on 2-double vectors (the
       compiler does not vectorise float products summed in double by itself):
       the operations of _ln_bwd_sums/_acc_gw/_acc_gb in the same order (the
       sums in 8 lanes j % 8 combined as _lanes) */
    #include <string.h>
    #include <stddef.h>
    typedef float ptln_v4f __attribute__((vector_size(16)));
    typedef float ptln_v2f __attribute__((vector_size(8)));
    typedef double ptln_v2d __attribute__((vector_size(16)));
    static inline ptln_v2d ptln_half(ptln_v4f v, int hi) {
        ptln_v2f h; memcpy(&h, (const char*)&v + 8 * hi, 8); return __builtin_convertvector(h, ptln_v2d); }
    static inline ptln_v4f ptln_ld(const float* p) { ptln_v4f v; memcpy(&v, p, 16); return v; }
    static inline double ptln_lanes(const ptln_v2d* A) {
        return ((A[0][0] + A[2][0]) + (A[0][1] + A[2][1])) + ((A[1][0] + A[3][0]) + (A[1][1] + A[3][1])); }
    static void ptln_bwd_sums_f32_sse(const float* g, const float* x, const float* w, float m,
                                      float r, ptrdiff_t n, double* sa, double* sc) {
        ptln_v2d A[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}}, C[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
        ptrdiff_t j = 0;
        for (; j + 8 <= n; j += 8)
            for (int h = 0; h < 2; h++) {
                ptln_v4f xh = (ptln_ld(x + j + 4 * h) - m) * r;
                ptln_v4f d = ptln_ld(g + j + 4 * h);
                if (w) d = d * ptln_ld(w + j + 4 * h);
                for (int q = 0; q < 2; q++) {
                    ptln_v2d dd = ptln_half(d, q);
                    A[2 * h + q] += dd;
                    C[2 * h + q] += dd * ptln_half(xh, q);
                }
            }
        double a = ptln_lanes(A), c = ptln_lanes(C);
        for (; j < n; j++) {
            float xh = (x[j] - m) * r;
            float d = w ? g[j] * w[j] : g[j];
            a += d;
            c += (double)d * (double)xh;
        }
        *sa = a;
        *sc = c;
    }
    static void ptln_acc_f32_sse(double* gw, double* gb, const float* g, const float* x, float m,
                                 float r, ptrdiff_t n) {
        ptrdiff_t j = 0;
        for (; j + 4 <= n; j += 4) {
            ptln_v4f gv = ptln_ld(g + j);
            ptln_v4f p = gv * ((ptln_ld(x + j) - m) * r);
            for (int q = 0; q < 2; q++) {
                ptln_v2d t;
                if (gw) { memcpy(&t, gw + j + 2 * q, 16); t += ptln_half(p, q); memcpy(gw + j + 2 * q, &t, 16); }
                if (gb) { memcpy(&t, gb + j + 2 * q, 16); t += ptln_half(gv, q); memcpy(gb + j + 2 * q, &t, 16); }
            }
        }
        for (; j < n; j++) {
            if (gw) gw[j] += g[j] * ((x[j] - m) * r);
            if (gb) gb[j] += g[j];
        }
    }
    /* The same two loops on 4-double (AVX) vectors where the CPU has them:
       the same operations per element and per lane j % 8, combined in the
       same order (no FMA), so the same bits as the 2-double loops above. */
    #if defined(__GNUC__) && defined(__x86_64__)
    typedef double ptln_v4d __attribute__((vector_size(32)));
    __attribute__((target("avx"))) static void ptln_bwd_sums_f32_avx(
            const float* g, const float* x, const float* w, float m, float r, ptrdiff_t n,
            double* sa, double* sc) {
        ptln_v4d A0 = {0, 0, 0, 0}, A1 = {0, 0, 0, 0}, C0 = {0, 0, 0, 0}, C1 = {0, 0, 0, 0};
        ptrdiff_t j = 0;
        for (; j + 8 <= n; j += 8) {
            ptln_v4f x0 = (ptln_ld(x + j) - m) * r, x1 = (ptln_ld(x + j + 4) - m) * r;
            ptln_v4f d0 = ptln_ld(g + j), d1 = ptln_ld(g + j + 4);
            if (w) { d0 = d0 * ptln_ld(w + j); d1 = d1 * ptln_ld(w + j + 4); }
            ptln_v4d e0 = __builtin_convertvector(d0, ptln_v4d);
            ptln_v4d e1 = __builtin_convertvector(d1, ptln_v4d);
            A0 += e0; A1 += e1;
            C0 += e0 * __builtin_convertvector(x0, ptln_v4d);
            C1 += e1 * __builtin_convertvector(x1, ptln_v4d);
        }
        double a = ((A0[0] + A1[0]) + (A0[1] + A1[1])) + ((A0[2] + A1[2]) + (A0[3] + A1[3]));
        double c = ((C0[0] + C1[0]) + (C0[1] + C1[1])) + ((C0[2] + C1[2]) + (C0[3] + C1[3]));
        for (; j < n; j++) {
            float xh = (x[j] - m) * r;
            float d = w ? g[j] * w[j] : g[j];
            a += d;
            c += (double)d * (double)xh;
        }
        *sa = a;
        *sc = c;
    }
    __attribute__((target("avx"))) static void ptln_acc_f32_avx(
            double* gw, double* gb, const float* g, const float* x, float m, float r,
            ptrdiff_t n) {
        ptrdiff_t j = 0;
        for (; j + 4 <= n; j += 4) {
            ptln_v4f gv = ptln_ld(g + j);
            ptln_v4f p = gv * ((ptln_ld(x + j) - m) * r);
            ptln_v4d t;
            if (gw) { memcpy(&t, gw + j, 32); t += __builtin_convertvector(p, ptln_v4d);
                      memcpy(gw + j, &t, 32); }
            if (gb) { memcpy(&t, gb + j, 32); t += __builtin_convertvector(gv, ptln_v4d);
                      memcpy(gb + j, &t, 32); }
        }
        for (; j < n; j++) {
            if (gw) gw[j] += g[j] * ((x[j] - m) * r);
            if (gb) gb[j] += g[j];
        }
    }
    /* _pdot/_pssd of float32 rows (softmax backward's and layer norm
       forward's row sums): lanes j % 8 in two 4-double vectors, combined as
       _lanes, then the tail -- the same bits as the Cython loops */
    __attribute__((target("avx"))) static double ptln_dot_f32_avx(
            const float* x, const float* y, ptrdiff_t n) {
        ptln_v4d A0 = {0, 0, 0, 0}, A1 = {0, 0, 0, 0};
        ptrdiff_t j = 0;
        for (; j + 8 <= n; j += 8) {
            ptln_v4f p0 = ptln_ld(x + j), p1 = ptln_ld(x + j + 4);
            if (y) { p0 = p0 * ptln_ld(y + j); p1 = p1 * ptln_ld(y + j + 4); }
            A0 += __builtin_convertvector(p0, ptln_v4d);
            A1 += __builtin_convertvector(p1, ptln_v4d);
        }
        double a = ((A0[0] + A1[0]) + (A0[1] + A1[1])) + ((A0[2] + A1[2]) + (A0[3] + A1[3]));
        for (; j < n; j++) a += y ? (float)(x[j] * y[j]) : x[j];
        return a;
    }
    __attribute__((target("avx"))) static double ptln_ssd_f32_avx(
            const float* x, double mu, ptrdiff_t n) {
        ptln_v4d A0 = {0, 0, 0, 0}, A1 = {0, 0, 0, 0};
        ptrdiff_t j = 0;
        for (; j + 8 <= n; j += 8) {
            ptln_v4d d0 = __builtin_convertvector(ptln_ld(x + j), ptln_v4d) - mu;
            ptln_v4d d1 = __builtin_convertvector(ptln_ld(x + j + 4), ptln_v4d) - mu;
            A0 += d0 * d0;
            A1 += d1 * d1;
        }
        double a = ((A0[0] + A1[0]) + (A0[1] + A1[1])) + ((A0[2] + A1[2]) + (A0[3] + A1[3]));
        for (; j < n; j++) { double d = x[j] - mu; a += d * d; }
        return a;
    }
    static int ptln_avx_on = 1;     /* a testing knob: 0 runs the 2-double loops */
    static int ptln_avx(void) {
        static int ok = -1;
        if (ok < 0) { __builtin_cpu_init(); ok = __builtin_cpu_supports("avx") != 0; }
        return ok && ptln_avx_on;
    }
    #else
    static int ptln_avx_on = 0;
    static int ptln_avx(void) { return 0; }
    #define ptln_bwd_sums_f32_avx ptln_bwd_sums_f32_sse
    static double ptln_dot_f32_avx(const float* x, const float* y, ptrdiff_t n) {
        (void)x; (void)y; (void)n; return 0; }
    static double ptln_ssd_f32_avx(const float* x, double mu, ptrdiff_t n) {
        (void)x; (void)mu; (void)n; return 0; }
    #define ptln_acc_f32_avx ptln_acc_f32_sse
    #endif
    static void ptln_bwd_sums_f32(const float* g, const float* x, const float* w, float m, float r,
                                  ptrdiff_t n, double* sa, double* sc) {
        if (ptln_avx()) ptln_bwd_sums_f32_avx(g, x, w, m, r, n, sa, sc);
        else ptln_bwd_sums_f32_sse(g, x, w, m, r, n, sa, sc);
    }
    static void ptln_acc_f32(double* gw, double* gb, const float* g, const float* x, float m,
                             float r, ptrdiff_t n) {
        if (ptln_avx()) ptln_acc_f32_avx(gw, gb, g, x, m, r, n);
        else ptln_acc_f32_sse(gw, gb, g, x, m, r, n);
    }
    """
    void ptln_bwd_sums_f32(const float* g, const float* x, const float* w, float m, float r,
                           Py_ssize_t n, double* sa, double* sc) nogil
    void ptln_acc_f32(double* gw, double* gb, const float* g, const float* x, float m, float r,
                      Py_ssize_t n) nogil
    int ptln_avx_on
    int ptln_avx() nogil
    double ptln_dot_f32_avx(const float* x, const float* y, Py_ssize_t n) nogil
    double ptln_ssd_f32_avx(const float* x, double mu, Py_ssize_t n) nogil


cdef extern from "ptc_softmax_rows.h" nogil:
    int ptc_smrows_on
    int ptc_smrows_isa()
    void ptc_causal_rows_f32_avx512(float* s, Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t L,
                                    Py_ssize_t S, float scale)
    void ptc_causal_rows_f32_avx2(float* s, Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t L,
                                  Py_ssize_t S, float scale)
    double ptc_lse_row_f32_avx512(const float* x, Py_ssize_t C)
    double ptc_lse_row_f32_avx2(const float* x, Py_ssize_t C)


def _set_softmax_rows(int level):
    """Testing knob: the widest fused copy of the causal softmax's float32
    rows and cross_entropy's row log-sum-exp (ptc_softmax_rows.h) that may
    run -- 2 AVX-512, 1 AVX2, 0 none (the row loops); the CPU's own level
    caps it.  Returns the knob's previous value."""
    global ptc_smrows_on
    if not 0 <= level <= 2:
        raise ValueError(f"_set_softmax_rows: level must be 0, 1 or 2, got {level}")
    old = ptc_smrows_on
    ptc_smrows_on = level
    return old


def _softmax_rows_isa():
    """The fused row copy that runs now: 2 AVX-512, 1 AVX2, 0 the row loops."""
    return ptc_smrows_isa()


cdef extern from "ptc_layernorm.h" nogil:
    int ptln_rows_level
    int ptln_rows_isa()
    void ptln_fwd_rows_f32(const float* x, const float* w, const float* b, float* y,
                           float* mean, float* rstd, Py_ssize_t rows, Py_ssize_t n, double eps)
    void ptln_bwd_rows_f32(const float* g, const float* x, const float* w, const float* mean,
                           const float* rstd, float* gx, double* gw, double* gb,
                           Py_ssize_t rows, Py_ssize_t n, const float* acc)


def _set_ln_rows(int level):
    """Testing knob: layer norm's float32 rows four at a time (ptc_layernorm.h)
    on at most this instruction set -- 2 AVX-512, 1 AVX2, 0 none (the row
    loops); returns the level in effect before (never above the CPU's)."""
    global ptln_rows_level
    old = ptln_rows_isa()
    ptln_rows_level = level
    return old


def _set_ln_avx(bint on):
    """Testing knob: the float32 row sums of layer norm (forward and
    backward) and softmax backward on 4-double (AVX) vectors where the CPU
    has them (True) or on 2-double ones.  Returns
    whether the AVX loops were in use before."""
    global ptln_avx_on
    old = ptln_avx() != 0
    ptln_avx_on = 1 if on else 0
    return old


cdef enum:
    CHUNK = 16384          # elements per parallel task of the elementwise kernels


cdef inline bint _same(_TensorBase a, _TensorBase b) noexcept:
    cdef int d
    if a._ndim != b._ndim or a._dtype is not b._dtype:
        return False
    if a._storage.device._type_code != 0 or b._storage.device._type_code != 0:
        return False            # host kernels: device tensors take the composite path
    for d in range(a._ndim):
        if a._shape[d] != b._shape[d]:
            return False
    return a._is_contig() and b._is_contig()


cdef inline bint _broadcast_scalar(_TensorBase g, _TensorBase x) noexcept:
    """Whether ``g`` is one value expanded to contiguous ``x``'s shape (every
    stride 0: sum's and mean's gradient), of x's dtype, on the host."""
    cdef int d
    if g._ndim != x._ndim or g._dtype is not x._dtype or g._numel == 0:
        return False
    if g._storage.device._type_code != 0 or x._storage.device._type_code != 0:
        return False
    for d in range(g._ndim):
        if g._shape[d] != x._shape[d] or (g._strides[d] != 0 and g._shape[d] != 1):
            return False
    return x._is_contig()


cdef void _fill_row(char* row, const char* v, Py_ssize_t isz, Py_ssize_t m) noexcept nogil:
    """``m`` copies of the ``isz``-byte value at ``v`` (2, 4 or 8 bytes) into ``row``."""
    cdef Py_ssize_t i
    cdef uint16_t h
    cdef uint32_t w
    cdef uint64_t d
    if isz == 2:
        memcpy(&h, v, 2)
        for i in range(m):
            (<uint16_t*>row)[i] = h
    elif isz == 4:
        memcpy(&w, v, 4)
        for i in range(m):
            (<uint32_t*>row)[i] = w
    else:
        memcpy(&d, v, 8)
        for i in range(m):
            (<uint64_t*>row)[i] = d


cdef inline int _threads(Py_ssize_t work) noexcept nogil:
    cdef int nt = get_num_threads()
    if nt <= 1 or work < 4 * parallel_grain():
        return 1
    return nt


ctypedef void (*_bwd_f32_t)(float*, const float*, const float*, Py_ssize_t, const double*) noexcept nogil
ctypedef void (*_bwd_f64_t)(double*, const double*, const double*, Py_ssize_t, const double*) noexcept nogil


cdef extern from "ptc_half_rows.h" nogil:
    void ptc_half_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_half_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_bf16_to_float_rows(const void* s, void* d, Py_ssize_t n)
    void ptc_float_to_bf16_rows(const void* s, void* d, Py_ssize_t n)


cdef int _low_chunk(_bwd_f32_t f32, char* o, const char* x, const char* g, Py_ssize_t m,
                    const double* prm, bint bf) noexcept nogil:
    """A chunk of float16/bfloat16 ``g``/``x``: widened to float32, the float32
    row function, the result rounded once (as ATen's reduced-float kernels:
    the float computation of the converted vectors); 1 when out of memory."""
    cdef float* buf = <float*>ptc_scratch_malloc(<size_t>m * 3 * sizeof(float))
    if buf == NULL:
        return 1
    if bf:
        ptc_bf16_to_float_rows(x, buf + m, m)
        ptc_bf16_to_float_rows(g, buf + 2 * m, m)
    else:
        ptc_half_to_float_rows(x, buf + m, m)
        ptc_half_to_float_rows(g, buf + 2 * m, m)
    f32(buf, buf + m, buf + 2 * m, m, prm)
    if bf:
        ptc_float_to_bf16_rows(buf, o, m)
    else:
        ptc_float_to_half_rows(buf, o, m)
    free(buf)
    return 0


cdef object _pointwise_backward(_TensorBase g, _TensorBase x, _bwd_f32_t f32, _bwd_f64_t f64,
                                double p0=0, double p1=0, double p2=0):
    """``g * f'(x)`` of contiguous float ``g``/``x`` of one layout (or ``g`` one
    value expanded to ``x``'s shape) by the row
    function ``f32``/``f64(o, x, g, n, params)`` (vector loops on chunks of
    CHUNK values, split over threads; float16/bfloat16 chunks computed in
    float32 and rounded once); None where the kernel does not apply."""
    cdef bint gone = not _same(g, x)     # g: one value expanded (read from a filled row)
    if gone and not _broadcast_scalar(g, x):
        return None
    cdef int num = x._dtype.num
    cdef bint low = num == PT_FLOAT16 or num == PT_BFLOAT16
    if num != PT_FLOAT32 and num != PT_FLOAT64 and not low:
        return None
    cdef double prm[3]
    prm[0] = p0
    prm[1] = p1
    prm[2] = p2
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef Py_ssize_t n = x._numel, nchunks = (n + CHUNK - 1) // CHUNK, c, lo, m
    cdef int nt = _threads(n)
    cdef bint f = num == PT_FLOAT32
    cdef char* o = <char*>out._ptr()
    cdef const char* xp = <const char*>x._ptr()
    cdef const char* gp = <const char*>g._ptr()
    cdef Py_ssize_t isz = x._dtype.itemsize
    cdef bint bf = num == PT_BFLOAT16
    cdef int err = 0
    cdef char* grow = NULL
    cdef Py_ssize_t gstep = isz
    if gone:
        # the value repeated over one chunk, read by every chunk
        grow = <char*>ptc_scratch_malloc(<size_t>(CHUNK if n > CHUNK else n) * isz)
        if grow == NULL:
            raise MemoryError("out of memory for a backward's gradient row")
        _fill_row(grow, gp, isz, CHUNK if n > CHUNK else n)
        gp = grow
        gstep = 0
    ptc_kernel_enter()
    with nogil:
        try:
            for c in prange(nchunks, num_threads=nt, schedule="static"):
                lo = c * CHUNK
                m = CHUNK if lo + CHUNK <= n else n - lo
                if low:
                    err += _low_chunk(f32, o + lo * isz, xp + lo * isz, gp + lo * gstep, m, prm, bf)
                elif f:
                    f32(<float*>(o + lo * isz), <const float*>(xp + lo * isz),
                        <const float*>(gp + lo * gstep), m, prm)
                else:
                    f64(<double*>(o + lo * isz), <const double*>(xp + lo * isz),
                        <const double*>(gp + lo * gstep), m, prm)
        finally:
            ptc_kernel_exit()
            free(grow)
    if err:
        raise MemoryError(f"out of memory for the float32 buffers of a {x.dtype} backward")
    return out


ctypedef fused real:
    float
    double


cdef void _gelu_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                    const double* prm) noexcept nogil:
    """o = g (cdf + x pdf), cdf = 0.5 (1 + erf(x / sqrt 2)), pdf = exp(-x^2 / 2)
    / sqrt(2 pi): ATen's GeluBackward formula (float32: its vectorised
    Abramowitz-Stegun erf; float64: ptcore.erf's and ptcore.exp's loops, 256
    values at a time)"""
    cdef Py_ssize_t i, j, m
    cdef double be[256]
    cdef double xi
    if real is float:
        ptc_gelu_bwdv_f32(o, x, g, n)
    else:
        j = 0
        while j < n:
            m = n - j if n - j < 256 else 256
            for i in range(m):
                xi = x[j + i]
                o[j + i] = xi * 0.70710678118654752440
                be[i] = xi * xi * -0.5
            ptc_erf_dv_f64(o + j, o + j, m)
            ptc_exp_dv_f64(be, be, m)
            for i in range(m):
                o[j + i] = g[j + i] * (0.5 * (1.0 + o[j + i]) + x[j + i] * (0.39894228040143267794 * be[i]))
            j += m


def gelu_backward(_TensorBase g, _TensorBase x):
    """``g * gelu'(x)`` for exact GELU, as ATen's GeluBackward computes it
    (float32: the vectorised Abramowitz-Stegun erf of the forward kernel)."""
    return _pointwise_backward(g, x, _gelu_bwd[float], _gelu_bwd[double])


cdef extern from "ptc_fma_maps.h":
    int ptc_fma_maps_f32() nogil


def gelu_backward_map():
    """A capsule of the float32 map :func:`gelu_backward` runs (ptc_math.h's
    ptc_gelu_bwdv_f32, this module's copy: ``o = gelu'(x) g``), for the GEMM's
    gradient epilogue (``_blas.gemm_epilogue`` kind 5: the same machine code as
    eager's pass); None on the baseline copy, as :func:`_ew.gelu_map`."""
    if not ptc_fma_maps_f32():
        return None
    return PyCapsule_New(<void*>ptc_gelu_bwdv_f32, b"ptcore.map2_f32", NULL)


cdef void _hardswish_fwd(real* o, const real* x, const real* g, Py_ssize_t n,
                         const double* prm) noexcept nogil:
    """o = x * min(max(x + 3, 0), 6) / 6 (g unused: a map of x), ATen's
    operations in its order (ptc_act_vec.h)"""
    if real is float:
        ptc_hardswish_fwdv_f32(o, x, n)
    else:
        ptc_hardswish_fwdv_f64(o, x, n)


def hardswish_forward(_TensorBase x):
    """``hardswish(x)`` of a contiguous float32/float64 ``x`` in one vector
    pass (ATen's bits); None where the kernel does not apply (other dtypes
    take the generic elementwise loop)."""
    if x._dtype.num != PT_FLOAT32 and x._dtype.num != PT_FLOAT64:
        return None
    return _pointwise_backward(x, x, _hardswish_fwd[float], _hardswish_fwd[double])


cdef void _hardswish_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                         const double* prm) noexcept nogil:
    """o = 0 where x <= -3, g * (x / 3 + 0.5) where x < 3, else g: ATen's
    hardswish_backward (g where x is NaN, as ATen's scalar loop)"""
    if real is float:
        ptc_hardswish_bwdv_f32(o, x, g, n)
    else:
        ptc_hardswish_bwdv_f64(o, x, g, n)


def hardswish_backward(_TensorBase g, _TensorBase x):
    """``g * hardswish'(x)`` in one pass (ATen's hardswish_backward, its bits;
    float16/bfloat16 in float32, rounded once); None where the kernel does
    not apply."""
    return _pointwise_backward(g, x, _hardswish_bwd[float], _hardswish_bwd[double])


# sqrt(2 / pi) as ptcore.autograd._formulas_nn's _GELU_K (math.sqrt(2.0 / math.pi))
cdef double _GELU_K = 0.7978845608028654


cdef void _gelu_tanh_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                         const double* prm) noexcept nogil:
    """o = g (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 0.044715 x^2)), t =
    tanh(k (x + 0.044715 x^2 x)), k = sqrt(2 / pi): the composite's operations
    in the type, the tanh by ptcore.tanh's loop into o"""
    cdef Py_ssize_t i
    cdef real k = <real>_GELU_K, c = <real>0.044715, c3 = <real>(3.0 * 0.044715)
    cdef real one = 1, half = 0.5, xi, x2, t, dinner
    for i in range(n):
        xi = x[i]
        o[i] = k * (xi + c * (xi * xi) * xi)
    if real is float:
        ptc_tanh_fv_f32(o, o, n)
    else:
        ptc_tanh_dv_f64(o, o, n)
    for i in range(n):
        xi = x[i]
        x2 = xi * xi
        t = o[i]
        dinner = k * (one + c3 * x2)
        o[i] = g[i] * (half * (one + t) + half * xi * (one - t * t) * dinner)


def gelu_tanh_backward(_TensorBase g, _TensorBase x):
    """``g * gelu'(x)`` of GELU's tanh approximation in one pass (the
    composite's operations: its bits); None where the kernel does not apply."""
    return _pointwise_backward(g, x, _gelu_tanh_bwd[float], _gelu_tanh_bwd[double])


cdef void _silu_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                    const double* prm) noexcept nogil:
    """o = g * s * (1 + x * (1 - s)), s = sigmoid(x): exp(-x) by a vector exp
    (float32: ptc_math.h's; float64: ptcore.exp's, so s is ptcore.sigmoid's),
    then one vectorised pass in the type (ATen's arithmetic; Cython's 1.0
    would make float32's double's, 4 lanes and the conversions)."""
    cdef Py_ssize_t i
    cdef real s, one = 1
    if real is float:
        ptc_silu_bwdv_f32(o, x, g, n)       # (the same operations in one vector pass)
        return
    for i in range(n):
        o[i] = -x[i]
    ptc_exp_dv_f64(o, o, n)
    for i in range(n):
        s = one / (one + o[i])
        o[i] = g[i] * s * (one + x[i] * (one - s))


def silu_backward(_TensorBase g, _TensorBase x):
    """``g * silu'(x)`` (ATen's silu_backward: ``g * s * (1 + x * (1 - s))``
    with ``s = sigmoid(x)``) in one pass; None where the kernel does not apply."""
    return _pointwise_backward(g, x, _silu_bwd[float], _silu_bwd[double])


cdef void _elu_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                   const double* prm) noexcept nogil:
    """o = g * (scale negcoef) * exp(x scale) where x <= 0, else g poscoef
    (prm: scale negcoef, scale, poscoef), the composite's operations in the
    type: exp by ptcore.exp's loop into o, then a branch-free select"""
    cdef Py_ssize_t i
    cdef real cn = <real>prm[0], cs = <real>prm[1], cp = <real>prm[2], zero = 0, gi, neg, pos
    for i in range(n):
        o[i] = x[i] * cs
    if real is float:
        ptc_exp_fv_f32(o, o, n)
    else:
        ptc_exp_dv_f64(o, o, n)
    for i in range(n):          # (both sides computed: the select vectorises)
        gi = g[i]
        neg = gi * cn * o[i]
        pos = gi * cp
        o[i] = neg if x[i] <= zero else pos


def elu_backward(_TensorBase g, _TensorBase x, double negcoef, double input_scale, double poscoef):
    """``g * elu'(x)`` of elu/selu/celu (the forward's input; torch's
    elu_backward with is_result=False) in one pass: ``g * (input_scale *
    negcoef) * exp(x * input_scale)`` where x <= 0, else ``g * poscoef``; None
    where the kernel does not apply."""
    return _pointwise_backward(g, x, _elu_bwd[float], _elu_bwd[double], input_scale * negcoef,
                               input_scale, poscoef)


cdef void _softplus_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                        const double* prm) noexcept nogil:
    """o = g where x beta > threshold, else g * sigmoid(x beta) (prm: beta,
    threshold), the composite's operations in the type: sigmoid by
    ptcore.sigmoid's loop into o, then a branch-free select"""
    cdef Py_ssize_t i
    cdef real b = <real>prm[0], th = <real>prm[1], gi, sg
    for i in range(n):
        o[i] = x[i] * b
    if real is float:
        ptc_sigmoid_fv_f32(o, o, n)
    else:
        ptc_sigmoid_dv_f64(o, o, n)
    for i in range(n):          # (both sides computed: the select vectorises)
        gi = g[i]
        sg = gi * o[i]
        o[i] = gi if x[i] * b > th else sg


def softplus_backward(_TensorBase g, _TensorBase x, double beta, double threshold):
    """``g * softplus'(x)``: ``g`` where ``x * beta > threshold``, else ``g *
    sigmoid(x * beta)`` (torch's softplus_backward) in one pass; None where the
    kernel does not apply."""
    return _pointwise_backward(g, x, _softplus_bwd[float], _softplus_bwd[double], beta, threshold)




cdef void _leaky_bwd(real* o, const real* x, const real* g, Py_ssize_t n,
                     const double* prm) noexcept nogil:
    """o = g where x > 0, else g * slope (prm: slope, in the type): ATen's
    leaky_relu_backward (NaN x takes the slope side); both sides computed
    and selected without a branch, which GCC vectorises"""
    cdef Py_ssize_t i
    cdef real s = <real>prm[0], zero = 0, gi, neg
    for i in range(n):
        gi = g[i]
        neg = gi * s
        o[i] = gi if x[i] > zero else neg


def leaky_relu_backward(_TensorBase g, _TensorBase x, double slope):
    """``g if x > 0 else g * slope`` (torch's leaky_relu_backward) in one pass,
    ``g`` contiguous like ``x`` or one value expanded (sum's gradient);
    float16/bfloat16 in float32, rounded once; None where the kernel does not
    apply."""
    return _pointwise_backward(g, x, _leaky_bwd[float], _leaky_bwd[double], slope)


cdef void _sigmoid_bwd(real* o, const real* y, const real* g, Py_ssize_t n,
                       const double* prm) noexcept nogil:
    """o = (g * (1 - y)) * y, y = sigmoid(x): ATen's sigmoid_backward, its
    operations in its order (float32: one ptc_act_vec.h vector map)"""
    cdef Py_ssize_t i
    cdef real one = 1
    if real is float:
        ptc_sigmoid_bwdv_f32(o, y, g, n)
        return
    for i in range(n):
        o[i] = g[i] * (one - y[i]) * y[i]


def sigmoid_backward(_TensorBase g, _TensorBase y):
    """``(g * (1 - y)) * y`` of sigmoid's result ``y`` (torch's sigmoid_backward:
    its bits in float32/float64; bfloat16 in float32, rounded once) in one
    pass, ``g`` contiguous like ``y`` or one value expanded; None where the
    kernel does not apply (float16, whose torch kernel rounds each operation,
    is the caller's)."""
    if y._dtype.num == PT_FLOAT16:
        return None
    return _pointwise_backward(g, y, _sigmoid_bwd[float], _sigmoid_bwd[double])


cdef inline Py_ssize_t _glu_task(Py_ssize_t t, Py_ssize_t per, Py_ssize_t L, Py_ssize_t* lo,
                                 Py_ssize_t* m) noexcept nogil:
    """Task t of glu's loops: its row (returned), the chunk's start lo and length m
    in the row's L values (per chunks a row)"""
    cdef Py_ssize_t r = t // per
    lo[0] = (t - r * per) * CHUNK
    m[0] = CHUNK if lo[0] + CHUNK <= L else L - lo[0]
    return r


cdef void _glu_bwd_row(real* o1, real* o2, const real* a, const real* b, const real* g,
                       Py_ssize_t n) noexcept nogil:
    """One row of glu_backward: s = sigmoid(b) (ptcore.sigmoid's loop, into o1),
    o2 = (1 - s) * s * a * g, o1 = s * g -- ATen's glu_backward operations in
    its order"""
    cdef Py_ssize_t i
    cdef real one = 1, si, gi
    if real is float:
        ptc_sigmoid_fv_f32(o1, b, n)
    else:
        ptc_sigmoid_dv_f64(o1, b, n)
    for i in range(n):
        si = o1[i]
        gi = g[i]
        o2[i] = (one - si) * si * a[i] * gi
        o1[i] = si * gi


def glu_backward(_TensorBase g, _TensorBase x, int dim):
    """The input gradient of ``glu(x, dim)`` in one pass over contiguous
    float32/float64 ``x`` (``g`` contiguous of the halves' shape, or one value
    expanded): ``[s g, (1 - s) s a g]`` with ``a, b`` the halves and ``s =
    sigmoid(b)``; None where the kernel does not apply."""
    cdef int num = x._dtype.num, d
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    if g._dtype is not x._dtype or g._ndim != x._ndim or not x._is_contig() or x._numel == 0:
        return None
    if g._storage.device._type_code != 0 or x._storage.device._type_code != 0:
        return None
    if dim < 0:
        dim += x._ndim
    if dim < 0 or dim >= x._ndim or x._shape[dim] % 2 != 0:
        return None
    cdef bint gone = False
    for d in range(x._ndim):
        if g._shape[d] != (x._shape[d] // 2 if d == dim else x._shape[d]):
            return None
    if not g._is_contig():
        for d in range(g._ndim):
            if g._strides[d] != 0 and g._shape[d] != 1:
                return None
        gone = True
    cdef Py_ssize_t outer = 1, L = x._shape[dim] // 2
    for d in range(dim):
        outer *= x._shape[d]
    for d in range(dim + 1, x._ndim):
        L *= x._shape[d]
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef Py_ssize_t per = (L + CHUNK - 1) // CHUNK, ntask = outer * per, t, r, lo, m
    cdef Py_ssize_t isz = x._dtype.itemsize
    cdef int nt = _threads(outer * L * 2)
    cdef char* op = <char*>out._ptr()
    cdef const char* xp = <const char*>x._ptr()
    cdef const char* gp = <const char*>g._ptr()
    cdef char* grow = NULL
    cdef bint gstep = 1
    if gone:
        grow = <char*>ptc_scratch_malloc(<size_t>(CHUNK if L > CHUNK else L) * isz)
        if grow == NULL:
            raise MemoryError("out of memory for a backward's gradient row")
        _fill_row(grow, gp, isz, CHUNK if L > CHUNK else L)
        gstep = 0
    ptc_kernel_enter()
    with nogil:
        try:
            for t in prange(ntask, num_threads=nt, schedule="static"):
                r = _glu_task(t, per, L, &lo, &m)
                if num == PT_FLOAT32:
                    _glu_bwd_row[float](
                        <float*>op + 2 * r * L + lo, <float*>op + 2 * r * L + L + lo,
                        <const float*>xp + 2 * r * L + lo, <const float*>xp + 2 * r * L + L + lo,
                        (<const float*>gp + r * L + lo) if gstep else <const float*>grow, m)
                else:
                    _glu_bwd_row[double](
                        <double*>op + 2 * r * L + lo, <double*>op + 2 * r * L + L + lo,
                        <const double*>xp + 2 * r * L + lo, <const double*>xp + 2 * r * L + L + lo,
                        (<const double*>gp + r * L + lo) if gstep else <const double*>grow, m)
        finally:
            ptc_kernel_exit()
            free(grow)
    return out


cdef void _glu_fwd_row(real* o, const real* a, const real* b, Py_ssize_t n) noexcept nogil:
    """One row of glu: o = a * sigmoid(b), sigmoid by ptcore.sigmoid's loop
    (the composite's values, bit for bit)"""
    cdef Py_ssize_t i
    if real is float:
        ptc_sigmoid_fv_f32(o, b, n)
    else:
        ptc_sigmoid_dv_f64(o, b, n)
    for i in range(n):
        o[i] = a[i] * o[i]


def glu_forward(_TensorBase x, int dim):
    """``glu(x, dim)`` of a contiguous float32/float64 host ``x`` in one pass
    (``a * sigmoid(b)``, the composite's values); None where it does not apply."""
    cdef int num = x._dtype.num, d
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    if not x._is_contig() or x._numel == 0 or x._storage.device._type_code != 0:
        return None
    if dim < 0:
        dim += x._ndim
    if dim < 0 or dim >= x._ndim or x._shape[dim] % 2 != 0:
        return None
    cdef Py_ssize_t outer = 1, L = x._shape[dim] // 2
    for d in range(dim):
        outer *= x._shape[d]
    for d in range(dim + 1, x._ndim):
        L *= x._shape[d]
    cdef Py_ssize_t shp[64]
    if x._ndim > 64:
        return None
    for d in range(x._ndim):
        shp[d] = x._shape[d] // 2 if d == dim else x._shape[d]
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, shp, x._storage.device, False)
    cdef Py_ssize_t per = (L + CHUNK - 1) // CHUNK, ntask = outer * per, t, r, lo, m
    cdef int nt = _threads(outer * L * 2)
    cdef char* op = <char*>out._ptr()
    cdef const char* xp = <const char*>x._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            for t in prange(ntask, num_threads=nt, schedule="static"):
                r = _glu_task(t, per, L, &lo, &m)
                if num == PT_FLOAT32:
                    _glu_fwd_row[float](<float*>op + r * L + lo, <const float*>xp + 2 * r * L + lo,
                                        <const float*>xp + 2 * r * L + L + lo, m)
                else:
                    _glu_fwd_row[double](<double*>op + r * L + lo, <const double*>xp + 2 * r * L + lo,
                                         <const double*>xp + 2 * r * L + L + lo, m)
        finally:
            ptc_kernel_exit()
    return out

# Row sums in double over 8 independent partial sums (lanes j % 8, then a
# fixed pairwise order, then the tail): a single running double sum is one
# serial chain of adds, several times slower than the data movement.
cdef inline double _lanes(double* a) noexcept nogil:
    return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]))


cdef inline double _pdot(const real* x, const real* y, Py_ssize_t n) noexcept nogil:
    """sum of x[j] * y[j] (each product rounded in ``real``), of x[j] when
    ``y`` is NULL."""
    cdef double a[8]
    cdef Py_ssize_t j = 0, k
    if real is float:
        if ptln_avx():
            return ptln_dot_f32_avx(x, y, n)
    for k in range(8):
        a[k] = 0
    while j + 8 <= n:
        for k in range(8):
            a[k] = a[k] + (<real>(x[j + k] * y[j + k]) if y != NULL else x[j + k])
        j += 8
    a[0] = _lanes(a)
    for j in range(j, n):
        a[0] = a[0] + (<real>(x[j] * y[j]) if y != NULL else x[j])
    return a[0]


cdef inline double _pssd(const real* x, double mu, Py_ssize_t n) noexcept nogil:
    """sum of (x[j] - mu)**2 in double."""
    cdef double a[8]
    cdef double d
    cdef Py_ssize_t j = 0, k
    if real is float:
        if ptln_avx():
            return ptln_ssd_f32_avx(x, mu, n)
    for k in range(8):
        a[k] = 0
    while j + 8 <= n:
        for k in range(8):
            d = x[j + k] - mu
            a[k] = a[k] + d * d
        j += 8
    a[0] = _lanes(a)
    for j in range(j, n):
        d = x[j] - mu
        a[0] = a[0] + d * d
    return a[0]


cdef void _softmax_rows(real* o, const real* g, const real* y, Py_ssize_t rows,
                        Py_ssize_t n, bint log, int nt, real scale) noexcept nogil:
    """softmax: o = y * (g - sum(g * y)) (then times ``scale`` unless it is 1);
    log_softmax: o = g - exp(y) * sum(g), one row of ``n`` elements at a time
    (sums accumulated in double)."""
    cdef Py_ssize_t r, j
    cdef real sr
    cdef const real* gr
    cdef const real* yr
    cdef real* orow
    for r in prange(rows, num_threads=nt, schedule="static"):
        gr = g + r * n
        yr = y + r * n
        orow = o + r * n
        if log:
            sr = <real>_pdot(gr, <const real*>NULL, n)
            # exp(y) of the row by the vector exp (ptc_fmath_vec.h: 8/16 float lanes,
            # ptc_dexp_vec.h: 4 double lanes), then the subtraction in one
            # vectorisable pass (scalar expf per element made this 10x the
            # forward's time)
            if real is float:
                ptc_exp_fv_f32(orow, yr, n)
            else:
                ptc_exp_dv_f64(orow, yr, n)
            for j in range(n):
                orow[j] = gr[j] - orow[j] * sr
        else:
            sr = <real>_pdot(gr, yr, n)
            if scale == 1:
                for j in range(n):
                    orow[j] = yr[j] * (gr[j] - sr)
            else:
                for j in range(n):
                    orow[j] = (yr[j] * (gr[j] - sr)) * scale


def softmax_backward(_TensorBase g, _TensorBase y, int dim, bint log, double scale=1.0,
                     _TensorBase mask=None):
    """Gradient of softmax (``log=False``, ``y`` its output) or log_softmax
    (``log=True``) over the last dim ``dim`` of contiguous ``g``/``y``; for
    softmax, times ``scale`` (each element rounded in the dtype, as a
    following ``mul_(scale)``: attention's scores gradient), and with a bool
    CPU ``mask`` broadcasting to ``y`` (its last dim of unit stride or size
    1) 0 where it is set before that (``masked_fill(mask, 0)``: the backward
    of attention's masked scores, ptcore._inductor.masked_softmax).  None
    for anything else."""
    if not _same(g, y) or y._ndim == 0 or (dim != y._ndim - 1 and dim != -1):
        return None
    cdef int num = y._dtype.num, nd = y._ndim, i, k, nb = 0
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    cdef Py_ssize_t n = y._shape[y._ndim - 1], mlast = 0
    if n == 0 or y._numel == 0 or (log and (scale != 1.0 or mask is not None)):
        return None
    cdef Py_ssize_t mst[64]
    cdef Py_ssize_t ysh[64]
    cdef const unsigned char* pm = NULL
    if mask is not None:
        if mask._storage.device._type_code != 0 or mask._dtype.num != PT_BOOL or \
                mask._ndim > nd or mask._numel == 0 or nd > 64:
            return None
        # the mask's strides aligned to y's dims (0 where it broadcasts)
        for i in range(nd):
            k = i - (nd - mask._ndim)
            if k < 0 or mask._shape[k] == 1:
                if i < nd - 1:
                    mst[i] = 0
                continue
            if mask._shape[k] != y._shape[i]:
                return None
            if i < nd - 1:
                mst[i] = mask._strides[k]
            elif mask._strides[k] != 1:
                return None
            else:
                mlast = 1
        nb = nd - 1
        for i in range(nb):
            ysh[i] = y._shape[i]
        pm = <const unsigned char*>mask._ptr()
    cdef Py_ssize_t rows = y._numel // n
    cdef _TensorBase out = _empty_contig(y._dtype, y._ndim, y._shape, y._storage.device, False)
    cdef int nt = _threads(y._numel)
    if nt > rows:
        nt = <int>rows
    cdef char* po = out._ptr()
    cdef char* pg = g._ptr()
    cdef char* py = y._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32 and pm == NULL:
                _softmax_rows(<float*>po, <const float*>pg, <const float*>py, rows, n, log, nt,
                              <float>scale)
            elif num == PT_FLOAT32:
                _softmax_rows_masked(<float*>po, <const float*>pg, <const float*>py, rows, n, nt,
                                     <float>scale, pm, mst, ysh, nb, mlast)
            elif pm == NULL:
                _softmax_rows(<double*>po, <const double*>pg, <const double*>py, rows, n, log, nt,
                              scale)
            else:
                _softmax_rows_masked(<double*>po, <const double*>pg, <const double*>py, rows, n,
                                     nt, scale, pm, mst, ysh, nb, mlast)
        finally:
            ptc_kernel_exit()
    return out


cdef void _softmax_rows_masked(real* o, const real* g, const real* y, Py_ssize_t rows,
                               Py_ssize_t n, int nt, real scale, const unsigned char* m,
                               const Py_ssize_t* mst, const Py_ssize_t* ysh, int nb,
                               Py_ssize_t mlast) noexcept nogil:
    """softmax's gradient y * (g - sum(g * y)) as _softmax_rows computes it,
    then 0 where the mask is set, then times ``scale`` (each step rounded in
    the dtype: masked_fill(mask, 0) and mul(scale) after it); the mask row of
    a row at its batch coordinates times ``mst``, elements ``mlast`` apart."""
    cdef Py_ssize_t r, j, rem, q, moff
    cdef int d
    cdef real sr, v
    cdef const real* gr
    cdef const real* yr
    cdef real* orow
    cdef const unsigned char* mr
    for r in prange(rows, num_threads=nt, schedule="static"):
        gr = g + r * n
        yr = y + r * n
        orow = o + r * n
        moff = 0
        rem = r
        d = nb - 1
        while d >= 0:
            q = rem // ysh[d]
            moff = moff + (rem - q * ysh[d]) * mst[d]
            rem = q
            d = d - 1
        mr = m + moff
        sr = <real>_pdot(gr, yr, n)
        for j in range(n):
            v = yr[j] * (gr[j] - sr)
            if mr[j * mlast]:
                v = 0
            orow[j] = v * scale


# ---------------------------------------------------------------------------
# causal softmax of attention scores, in place
# ---------------------------------------------------------------------------

cdef inline real _pmax(const real* x, Py_ssize_t n) noexcept nogil:
    """max of x[0:n] (n >= 1) over 8 branch-free lanes (a NaN need not win:
    the caller's sum of exp(x - max) turns NaN anyway)."""
    cdef real a[8]
    cdef Py_ssize_t j = 0, k
    for k in range(8):
        a[k] = x[0]
    while j + 8 <= n:
        for k in range(8):
            a[k] = x[j + k] if x[j + k] > a[k] else a[k]
        j += 8
    for j in range(j, n):
        a[0] = x[j] if x[j] > a[0] else a[0]
    for k in range(1, 8):
        a[0] = a[k] if a[k] > a[0] else a[0]
    return a[0]


cdef void _causal_rows(real* s, Py_ssize_t rows, Py_ssize_t L, Py_ssize_t S,
                       int nt, real scale) noexcept nogil:
    """Row r (query i = r % L) of the (L, S) score blocks: softmax over its
    keys j <= i, 0 at j > i -- what masking the scores above the diagonal
    with -inf and a softmax give, without computing the masked half."""
    cdef Py_ssize_t r, j, keep, kv, t, r0, r1
    cdef real m, c
    cdef real* row
    cdef int isa
    if real is float:
        isa = ptc_smrows_isa()
        if isa:
            # one fused pass per row on AVX-512 or AVX2 (ptc_softmax_rows.h: the same bits)
            for t in prange(nt, num_threads=nt, schedule="static"):
                r0 = t * rows // nt
                r1 = (t + 1) * rows // nt
                if isa == 2:
                    ptc_causal_rows_f32_avx512(s, r0, r1, L, S, scale)
                else:
                    ptc_causal_rows_f32_avx2(s, r0, r1, L, S, scale)
            return
    for r in prange(rows, num_threads=nt, schedule="static"):
        row = s + r * S
        keep = r % L + 1
        if keep > S:
            keep = S
        if scale != 1:
            for j in range(keep):
                row[j] = row[j] * scale
        m = _pmax(row, keep)
        for j in range(keep):
            row[j] = row[j] - m
        if real is float:
            # whole vectors (the vector exp's scalar tail is slow): the
            # masked lanes get exp(0), then 0 below
            kv = (keep + 7) & ~7
            if kv > S:
                kv = S
            for j in range(keep, kv):
                row[j] = 0
            ptc_exp_fv_f32(row, row, kv)
        else:
            ptc_exp_dv_f64(row, row, keep)
        c = <real>(1.0 / _pdot(row, <const real*>NULL, keep))
        for j in range(keep):
            row[j] = row[j] * c
        for j in range(keep, S):
            row[j] = 0


def causal_softmax_(_TensorBase s, double scale=1.0):
    """Softmax in place over the last dim of contiguous float ``s`` (..., L, S),
    its scores multiplied by ``scale`` first (each product rounded in ``s``'s
    dtype, as ``s.mul_(scale)``), with key j hidden from query i when j > i
    (``is_causal``'s top-left mask); returns ``s``, or None when it does not
    apply (a ``scale`` that is not positive and finite included: the max of
    the scaled scores is taken as the scaled max)."""
    cdef int num = s._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or s._ndim < 2 or not s._is_contig() \
            or s._numel == 0 or s._storage.device._type_code != 0 \
            or not (0.0 < scale < INFINITY):
        return None
    cdef Py_ssize_t L = s._shape[s._ndim - 2], S = s._shape[s._ndim - 1]
    cdef Py_ssize_t rows = s._numel // S
    cdef int nt = _threads(s._numel)
    if nt > rows:
        nt = <int>rows
    cdef char* ps = s._ptr()
    if num == PT_FLOAT32:
        ptc_kernel_enter()
        with nogil:
            try:
                _causal_rows(<float*>ps, rows, L, S, nt, <float>scale)
            finally:
                ptc_kernel_exit()
    else:
        ptc_kernel_enter()
        with nogil:
            try:
                _causal_rows(<double*>ps, rows, L, S, nt, scale)
            finally:
                ptc_kernel_exit()
    return s


def attention_causal_plain(q, k, v, bint grad_enabled, blas):
    """``scaled_dot_product_attention(q, k, v, is_causal=True)`` with no mask,
    dropout or scale, where nothing records (a decoder's inference step), in
    one call: ``q`` ``k`` ``v`` CPU float32/float64 tensors of one dtype and
    dims (2 or more) with the same batch sizes, one embedding size, equal
    key/value lengths and nonempty sequences, ``q`` contiguous or a head view
    ``x.view(B, T, H, d).transpose(1, 2)`` (its output laid out the same, as
    torch's flash kernel's).  The products and the causal softmax of the
    general path's fused form (the same bits) by ``blas``'s entries (the BLAS
    module, passed in: importing ptcore loads no BLAS); None for anything
    else (the general path decides)."""
    if not isinstance(q, _TensorBase) or not isinstance(k, _TensorBase) \
            or not isinstance(v, _TensorBase):
        return None
    cdef _TensorBase x = <_TensorBase>q, y = <_TensorBase>k, z = <_TensorBase>v
    cdef int nd = x._ndim, num = x._dtype.num, i
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or y._dtype is not x._dtype \
            or z._dtype is not x._dtype or nd < 2 or nd > 16 or y._ndim != nd \
            or z._ndim != nd or x._storage.device._type_code != 0 \
            or y._storage.device._type_code != 0 or z._storage.device._type_code != 0:
        return None
    if grad_enabled and (x._requires_grad or y._requires_grad or z._requires_grad):
        return None
    for i in range(nd - 2):
        if y._shape[i] != x._shape[i] or z._shape[i] != x._shape[i]:
            return None
    cdef Py_ssize_t L = x._shape[nd - 2], E = x._shape[nd - 1], S = y._shape[nd - 2]
    if L == 0 or S == 0 or E == 0 or y._shape[nd - 1] != E or z._shape[nd - 2] != S \
            or z._shape[nd - 1] != E:
        return None
    # the output's layout: q's (contiguous, or the head view of (B, T, H, d))
    cdef bint head_view = False
    cdef Py_ssize_t H, shape[4]
    if not x._is_contig():
        if nd != 4:
            return None
        H = x._shape[1]
        if H < 2 or L < 2 or x._strides[3] != 1 or x._strides[1] != E \
                or x._strides[2] != H * E or x._strides[0] != L * H * E:
            return None
        head_view = True
    s = blas.product(x, y.transpose(-2, -1))
    if causal_softmax_(<_TensorBase>s, 1.0 / sqrt(<double>E)) is None:
        return None
    if not head_view:
        return blas.product(s, z)
    shape[0] = x._shape[0]
    shape[1] = L
    shape[2] = H
    shape[3] = E
    out = _empty_contig(x._dtype, 4, shape, x._storage.device, False).transpose(1, 2)
    return blas.mm_into(out, s, z if blas.usable(z) else z.contiguous(), 1, 0)


# ---------------------------------------------------------------------------
# layer norm over the last ``n`` elements of each row
# ---------------------------------------------------------------------------

cdef void _ln_fwd(const real* x, const real* w, const real* b, real* y, real* mean,
                  real* rstd, Py_ssize_t rows, Py_ssize_t n, double eps,
                  int nt) noexcept nogil:
    cdef Py_ssize_t r, j, c, r0, r1
    cdef double mu, rs
    cdef real m_, r_
    cdef const real* xr
    cdef real* yr
    if real is float:
        if ptln_rows_isa():
            # four rows at a time on AVX-512 or AVX2 (ptc_layernorm.h: the same bits)
            for c in prange(nt, num_threads=nt, schedule="static"):
                r0 = c * rows // nt
                r1 = (c + 1) * rows // nt
                ptln_fwd_rows_f32(x + r0 * n, w, b, y + r0 * n, mean + r0, rstd + r0,
                                  r1 - r0, n, eps)
            return
    for r in prange(rows, num_threads=nt, schedule="static"):
        xr = x + r * n
        yr = y + r * n
        mu = _pdot(xr, <const real*>NULL, n) / n
        rs = 1.0 / sqrt(_pssd(xr, mu, n) / n + eps)
        m_ = <real>mu
        r_ = <real>rs
        mean[r] = m_
        rstd[r] = r_
        if w != NULL and b != NULL:
            for j in range(n):
                yr[j] = (xr[j] - m_) * r_ * w[j] + b[j]
        elif w != NULL:
            for j in range(n):
                yr[j] = (xr[j] - m_) * r_ * w[j]
        elif b != NULL:
            for j in range(n):
                yr[j] = (xr[j] - m_) * r_ + b[j]
        else:
            for j in range(n):
                yr[j] = (xr[j] - m_) * r_


cdef inline void _ln_bwd_sums(const real* gr, const real* xr, const real* w, real m_, real r_,
                              Py_ssize_t n, double* sa, double* sc) noexcept nogil:
    """sa = sum(dxh), sc = sum(dxh * xh) in double over 8 partial sums each
    (as _pdot), with xh = (x - mean) rstd and dxh = g w (both rounded in ``real``)."""
    cdef double a[8]
    cdef double c[8]
    cdef double xh, dxh
    cdef Py_ssize_t j = 0, k
    if real is float:
        ptln_bwd_sums_f32(gr, xr, w, m_, r_, n, sa, sc)
        return
    for k in range(8):
        a[k] = 0
        c[k] = 0
    while j + 8 <= n:
        for k in range(8):
            xh = <real>((xr[j + k] - m_) * r_)
            dxh = <real>(gr[j + k] * w[j + k]) if w != NULL else gr[j + k]
            a[k] = a[k] + dxh
            c[k] = c[k] + dxh * xh
        j += 8
    a[0] = _lanes(a)
    c[0] = _lanes(c)
    for j in range(j, n):
        xh = <real>((xr[j] - m_) * r_)
        dxh = <real>(gr[j] * w[j]) if w != NULL else gr[j]
        a[0] = a[0] + dxh
        c[0] = c[0] + dxh * xh
    sa[0] = a[0]
    sc[0] = c[0]


cdef inline void _acc_gw(double* gw, const real* gr,
                         const real* xr, real m_, real r_, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        gw[j] += gr[j] * ((xr[j] - m_) * r_)


cdef inline void _acc_gb(double* gb, const real* gr,
                         Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        gb[j] += gr[j]


cdef void _ln_bwd(const real* g, const real* x, const real* w, const real* mean,
                  const real* rstd, real* gx, double* gw, double* gb, Py_ssize_t rows,
                  Py_ssize_t n, int nt, const real* acc=NULL) noexcept nogil:
    """gx = rstd (dxh - mean(dxh) - xh mean(dxh xh)) with xh = (x - mean) rstd and
    dxh = g w (skipped when gx is NULL), plus ``acc`` (laid out as gx) where it is
    not NULL, added as each element leaves; gw += g xh and gb += g over the rows
    (serially, in double)."""
    cdef Py_ssize_t r, j, c, r0, r1
    cdef double sa, sc
    cdef real a_, c_, m_, r_
    cdef const real* gr
    cdef const real* xr
    cdef real* gxr
    if real is float:
        if gx != NULL and ptln_rows_isa():
            # four rows at a time on AVX-512 or AVX2 (ptc_layernorm.h: the same bits);
            # gw/gb in row order on one thread, as below
            if nt <= 1:
                ptln_bwd_rows_f32(g, x, w, mean, rstd, gx, gw, gb, rows, n, acc)
                return
            for c in prange(nt, num_threads=nt, schedule="static"):
                r0 = c * rows // nt
                r1 = (c + 1) * rows // nt
                ptln_bwd_rows_f32(g + r0 * n, x + r0 * n, w, mean + r0, rstd + r0,
                                  gx + r0 * n, NULL, NULL, r1 - r0, n,
                                  NULL if acc == NULL else acc + r0 * n)
            if gw != NULL or gb != NULL:
                for r in range(rows):
                    ptln_acc_f32(gw, gb, g + r * n, x + r * n, mean[r], rstd[r], n)
            return
    for r in prange(rows if gx != NULL else 0, num_threads=nt, schedule="static"):
        gr = g + r * n
        xr = x + r * n
        gxr = gx + r * n
        m_ = mean[r]
        r_ = rstd[r]
        # assigned here, sa and sc are private to each thread (only written
        # through their addresses they were shared: rows of one thread then
        # read another's sums -- wrong gradients at 2+ threads)
        sa = 0
        sc = 0
        _ln_bwd_sums(gr, xr, w, m_, r_, n, &sa, &sc)
        a_ = <real>(sa / n)
        c_ = <real>(sc / n)
        if w != NULL:
            for j in range(n):
                gxr[j] = r_ * (gr[j] * w[j] - a_ - (xr[j] - m_) * r_ * c_)
        else:
            for j in range(n):
                gxr[j] = r_ * (gr[j] - a_ - (xr[j] - m_) * r_ * c_)
        if acc != NULL:
            for j in range(n):
                gxr[j] = acc[r * n + j] + gxr[j]
    if gw != NULL or gb != NULL:
        for r in range(rows):
            gr = g + r * n
            xr = x + r * n
            m_ = mean[r]
            r_ = rstd[r]
            if real is float:
                ptln_acc_f32(gw, gb, gr, xr, m_, r_, n)
                continue
            if gw != NULL:
                _acc_gw(gw, gr, xr, m_, r_, n)
            if gb != NULL:
                _acc_gb(gb, gr, n)


cdef inline bint _param_ok(object p, _TensorBase x, Py_ssize_t n):
    if p is None:
        return True
    cdef _TensorBase t = <_TensorBase?>p
    return t._dtype is x._dtype and t._numel == n and t._is_contig()


def layer_norm_forward(_TensorBase x, Py_ssize_t n, weight, bias, double eps):
    """``(y, mean, rstd)`` of layer norm over the last ``n`` elements of
    contiguous float ``x`` (``weight``/``bias``: None or contiguous with ``n``
    elements); ``mean``/``rstd`` are 1-D, one per row.  None when it does not apply."""
    cdef int num = x._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or not x._is_contig() or n <= 0 \
            or x._numel == 0 or x._numel % n != 0 or x._storage.device._type_code != 0:
        return None
    if not (_param_ok(weight, x, n) and _param_ok(bias, x, n)):
        return None
    cdef Py_ssize_t rows = x._numel // n
    cdef _TensorBase y = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef _TensorBase mean = _empty_contig(x._dtype, 1, &rows, x._storage.device, False)
    cdef _TensorBase rstd = _empty_contig(x._dtype, 1, &rows, x._storage.device, False)
    cdef char* pw = NULL if weight is None else (<_TensorBase>weight)._ptr()
    cdef char* pb = NULL if bias is None else (<_TensorBase>bias)._ptr()
    cdef char* px = x._ptr()
    cdef char* py = y._ptr()
    cdef char* pm = mean._ptr()
    cdef char* pr = rstd._ptr()
    cdef int nt = _threads(x._numel)
    if nt > rows:
        nt = <int>rows
    if num == PT_FLOAT32:
        ptc_kernel_enter()
        with nogil:
            try:
                _ln_fwd(<const float*>px, <const float*>pw, <const float*>pb, <float*>py,
                        <float*>pm, <float*>pr, rows, n, eps, nt)
            finally:
                ptc_kernel_exit()
    else:
        ptc_kernel_enter()
        with nogil:
            try:
                _ln_fwd(<const double*>px, <const double*>pw, <const double*>pb, <double*>py,
                        <double*>pm, <double*>pr, rows, n, eps, nt)
            finally:
                ptc_kernel_exit()
    return y, mean, rstd


def layer_norm_backward(_TensorBase g, _TensorBase x, _TensorBase mean, _TensorBase rstd,
                        weight, bint need_w, bint need_b, bint need_x=True, acc=None):
    """``(gx, gw, gb)`` of layer norm (``gx`` None unless ``need_x``, ``gw``/``gb``
    None unless asked; 1-D of ``n`` elements), from the forward's ``mean``/``rstd``.
    ``acc`` (a tensor laid out as ``x``): ``gx`` is ``acc + gx`` instead, added
    as each element leaves (the bits of the separate addition).  None when it
    does not apply (``g`` or ``acc`` not contiguous like ``x``)."""
    if not _same(g, x) or mean._dtype is not x._dtype or rstd._dtype is not x._dtype \
            or not mean._is_contig() or not rstd._is_contig() or mean._numel == 0:
        return None
    if acc is not None and (not need_x or not isinstance(acc, _TensorBase) or
                            not _same(<_TensorBase>acc, x)):
        return None
    cdef Py_ssize_t rows = mean._numel
    if x._numel % rows != 0:
        return None
    cdef Py_ssize_t n = x._numel // rows, j
    if not _param_ok(weight, x, n):
        return None
    cdef int num = x._dtype.num
    if num != PT_FLOAT32 and num != PT_FLOAT64:
        return None
    cdef _TensorBase gx = None, gw = None, gb = None
    if need_x:
        gx = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef double* aw = NULL
    cdef double* ab = NULL
    if need_w:
        aw = <double*>ptc_scratch_calloc(n, sizeof(double))
    if need_b:
        ab = <double*>ptc_scratch_calloc(n, sizeof(double))
    if (need_w and aw == NULL) or (need_b and ab == NULL):
        free(aw)
        free(ab)
        raise MemoryError("layer_norm backward: no memory for the parameter gradients")
    cdef char* pw = NULL if weight is None else (<_TensorBase>weight)._ptr()
    cdef char* pg = g._ptr()
    cdef char* px = x._ptr()
    cdef char* pm = mean._ptr()
    cdef char* pr = rstd._ptr()
    cdef char* pgx = gx._ptr() if need_x else NULL
    cdef char* pac = NULL if acc is None else (<_TensorBase>acc)._ptr()
    cdef int nt = _threads(x._numel)
    if nt > rows:
        nt = <int>rows
    if num == PT_FLOAT32:
        ptc_kernel_enter()
        with nogil:
            try:
                _ln_bwd(<const float*>pg, <const float*>px, <const float*>pw, <const float*>pm,
                        <const float*>pr, <float*>pgx, aw, ab, rows, n, nt, <const float*>pac)
            finally:
                ptc_kernel_exit()
    else:
        ptc_kernel_enter()
        with nogil:
            try:
                _ln_bwd(<const double*>pg, <const double*>px, <const double*>pw, <const double*>pm,
                        <const double*>pr, <double*>pgx, aw, ab, rows, n, nt, <const double*>pac)
            finally:
                ptc_kernel_exit()
    if need_w:
        gw = _empty_contig(x._dtype, 1, &n, x._storage.device, False)
        _store(gw, aw, n)
        free(aw)
    if need_b:
        gb = _empty_contig(x._dtype, 1, &n, x._storage.device, False)
        _store(gb, ab, n)
        free(ab)
    return gx, gw, gb


cdef int _store(_TensorBase t, const double* src, Py_ssize_t n) except -1:
    cdef Py_ssize_t j
    cdef float* f
    cdef double* d
    if t._dtype.num == PT_FLOAT32:
        f = <float*>t._ptr()
        for j in range(n):
            f[j] = <float>src[j]
    else:
        d = <double*>t._ptr()
        for j in range(n):
            d[j] = src[j]
    return 0


# ---------------------------------------------------------------------------
# cross entropy of (N, C) logits with class-index targets, one pass per row
# ---------------------------------------------------------------------------

cdef enum:
    CE_BUF = 256           # logits per exp call of a float32 row


cdef inline double _ce_lse(const real* x, Py_ssize_t C) noexcept nogil:
    """log(sum(exp(x[0:C]))) of one row, through its max (the exp vectorised
    in CE_BUF pieces, the sum in double)."""
    cdef float buf[CE_BUF]
    cdef double dbuf[CE_BUF]
    cdef real m
    cdef double s = 0
    cdef Py_ssize_t j = 0, k, L
    cdef int isa
    if real is float:
        isa = ptc_smrows_isa()
        if isa == 2:
            return ptc_lse_row_f32_avx512(x, C)     # fused, the same bits
        if isa == 1:
            return ptc_lse_row_f32_avx2(x, C)
    m = _pmax(x, C)
    if real is float:
        while j < C:
            L = C - j if C - j < CE_BUF else CE_BUF
            for k in range(L):
                buf[k] = x[j + k] - m
            ptc_exp_fv_f32(buf, buf, L)
            s = s + _pdot(<const real*>buf, <const real*>NULL, L)
            j += L
    else:
        while j < C:
            L = C - j if C - j < CE_BUF else CE_BUF
            for k in range(L):
                dbuf[k] = x[j + k] - m
            ptc_exp_dv_f64(dbuf, dbuf, L)
            for k in range(L):
                s = s + dbuf[k]
            j += L
    return m + log(s)


cdef inline Py_ssize_t _ce_bad_target(const int64_t* t, Py_ssize_t N, Py_ssize_t C,
                                       int64_t ignore) noexcept nogil:
    """The first row whose target is neither ``ignore`` nor in [0, C), or -1."""
    cdef Py_ssize_t r
    cdef int64_t c
    for r in range(N):
        c = t[r]
        if c != ignore and (c < 0 or c >= C):
            return r
    return -1


cdef bint _ce_operands(_TensorBase x, _TensorBase t) noexcept:
    """x contiguous float32/float64 (N, C) on the CPU, t contiguous int64 (N)."""
    cdef int num = x._dtype.num
    return ((num == PT_FLOAT32 or num == PT_FLOAT64) and x._ndim == 2 and t._ndim == 1
            and t._dtype.num == PT_INT64 and x._is_contig() and t._is_contig()
            and x._storage.device._type_code == 0 and t._storage.device._type_code == 0
            and t._shape[0] == x._shape[0])


cdef Py_ssize_t _ce_fwd(const real* x, const int64_t* t, real* lse, double* loss, Py_ssize_t N,
                        Py_ssize_t C, int64_t ignore, int nt) noexcept nogil:
    """lse[r] and loss[r] = lse[r] - x[r, t[r]] (0 for ignored rows); returns
    -1, or the first row whose target is out of range."""
    cdef Py_ssize_t r, bad = _ce_bad_target(t, N, C, ignore)
    cdef int64_t c
    cdef double v
    if bad >= 0:                  # the targets are checked before reading by them
        return bad
    for r in prange(N, num_threads=nt, schedule="static"):
        v = _ce_lse(x + r * C, C)
        lse[r] = <real>v
        c = t[r]
        if c == ignore:
            loss[r] = 0
        else:
            loss[r] = v - x[r * C + c]
    return bad


cdef void _ce_bwd(const real* x, const int64_t* t, const real* lse, const double* scale,
                  double scale0, real* gx, Py_ssize_t N, Py_ssize_t C, int64_t ignore,
                  int nt) noexcept nogil:
    """gx[r] = (softmax(x[r]) - onehot(t[r])) * s_r with s_r = scale[r] (or
    scale0); rows of ignored targets are 0."""
    cdef Py_ssize_t r, j
    cdef int64_t c
    cdef real s, l
    cdef real* o
    cdef const real* xr
    for r in prange(N, num_threads=nt, schedule="static"):
        o = gx + r * C
        xr = x + r * C
        c = t[r]
        if c == ignore:
            for j in range(C):
                o[j] = 0
            continue
        s = <real>(scale[r] if scale != NULL else scale0)
        l = lse[r]
        for j in range(C):
            o[j] = xr[j] - l
        if real is float:
            ptc_exp_fv_f32(o, o, C)
        else:
            ptc_exp_dv_f64(o, o, C)
        for j in range(C):
            o[j] = o[j] * s
        o[c] = o[c] - s


def cross_entropy_forward(_TensorBase x, _TensorBase t, int64_t ignore_index, int reduction):
    """Cross entropy of contiguous float (N, C) logits ``x`` and contiguous
    int64 (N) targets ``t`` (no class weights): ``(out, lse, count)`` with
    ``out`` the per-row losses (``reduction`` 0, ignored rows 0), their sum
    (2) or their mean over the ``count`` rows not ignored (1, NaN when none
    is); ``lse`` the (N) row log-sum-exps for the backward.  None when it does
    not apply or a target is out of range (the caller's composite raises)."""
    cdef int num = x._dtype.num
    if not _ce_operands(x, t):
        return None
    cdef Py_ssize_t N = x._shape[0], C = x._shape[1], r, count = 0
    if N == 0 or C == 0 or reduction < 0 or reduction > 2:
        return None
    cdef _TensorBase lse = _empty_contig(x._dtype, 1, &N, x._storage.device, False)
    cdef double* loss = <double*>ptc_scratch_calloc(N, sizeof(double))
    if loss == NULL:
        raise MemoryError("cross_entropy: no memory for the row losses")
    cdef const int64_t* pt = <const int64_t*>t._ptr()
    cdef char* px = x._ptr()
    cdef char* pl = lse._ptr()
    cdef int nt = _threads(x._numel)
    cdef Py_ssize_t bad
    cdef double total = 0
    cdef Py_ssize_t zero = 0
    cdef _TensorBase out
    if nt > N:
        nt = <int>N
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                bad = _ce_fwd(<const float*>px, pt, <float*>pl, loss, N, C, ignore_index, nt)
            else:
                bad = _ce_fwd(<const double*>px, pt, <double*>pl, loss, N, C, ignore_index, nt)
            if bad < 0:
                for r in range(N):
                    if pt[r] != ignore_index:
                        count += 1
                    total += loss[r]
        finally:
            ptc_kernel_exit()
    if bad >= 0:
        free(loss)
        return None
    if reduction == 0:
        out = _empty_contig(x._dtype, 1, &N, x._storage.device, False)
        _store(out, loss, N)
    else:
        if reduction == 1:
            total = total / count if count else float("nan")
        out = _empty_contig(x._dtype, 0, &zero, x._storage.device, False)
        _store(out, &total, 1)
    free(loss)
    return out, lse, count


cdef bint _row_scales(_TensorBase g, Py_ssize_t N, int reduction, Py_ssize_t count,
                      const double** scale, double* scale0) except -1:
    """The per-row gradient scales of a class-index loss's backward from its
    output gradient ``g``: for reduction 0 (``g`` contiguous float64 (N) on the
    CPU) ``*scale`` points at g's values; for 1 and 2 (``g`` one element)
    ``*scale0`` is g, divided by ``count`` for 1 (NaN when 0).  False when g
    has another layout."""
    if reduction == 0:
        if g._ndim != 1 or g._shape[0] != N or g._dtype.num != PT_FLOAT64 or not g._is_contig() \
                or g._storage.device._type_code != 0:
            return False
        scale[0] = <const double*>g._ptr()
        return True
    if g._numel != 1:
        return False
    scale0[0] = float(g.item())
    if reduction == 1:
        scale0[0] = scale0[0] / count if count else float("nan")
    return True


def cross_entropy_backward(_TensorBase g, _TensorBase x, _TensorBase t, _TensorBase lse,
                           int64_t ignore_index, int reduction, Py_ssize_t count):
    """The gradient of :func:`cross_entropy_forward` for x, from the output
    gradient ``g`` (0-d for reductions 1 and 2; for 0 contiguous float64 (N)).
    None when it does not apply (operands of other layouts, a target out of
    range: nothing is read or written by them)."""
    if not _ce_operands(x, t) or lse._dtype is not x._dtype or lse._ndim != 1 \
            or not lse._is_contig() or lse._storage.device._type_code != 0 \
            or lse._shape[0] != x._shape[0] or x._numel == 0 or reduction < 0 or reduction > 2:
        return None
    cdef Py_ssize_t N = x._shape[0], C = x._shape[1], r
    cdef int num = x._dtype.num
    cdef double scale0 = 0
    cdef const double* scale = NULL
    cdef const int64_t* pt = <const int64_t*>t._ptr()
    if _ce_bad_target(pt, N, C, ignore_index) >= 0:
        return None
    if not _row_scales(g, N, reduction, count, &scale, &scale0):
        return None
    cdef _TensorBase gx = _empty_contig(x._dtype, 2, x._shape, x._storage.device, False)
    cdef char* px = x._ptr()
    cdef char* pl = lse._ptr()
    cdef char* po = gx._ptr()
    cdef int nt = _threads(x._numel)
    if nt > N:
        nt = <int>N
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _ce_bwd(<const float*>px, pt, <const float*>pl, scale, scale0, <float*>po, N, C,
                        ignore_index, nt)
            else:
                _ce_bwd(<const double*>px, pt, <const double*>pl, scale, scale0, <double*>po, N, C,
                        ignore_index, nt)
        finally:
            ptc_kernel_exit()
    return gx


# ---------------------------------------------------------------------------
# nll_loss of (N, C) log-probabilities with class-index targets, no class weights

def nll_forward(_TensorBase x, _TensorBase t, int64_t ignore_index, int reduction):
    """``nll_loss`` of contiguous float (N, C) ``x`` and contiguous int64 (N)
    targets ``t`` without class weights: ``(out, count)`` with ``out`` the
    per-row losses ``-x[r, t[r]]`` (``reduction`` 0, ignored rows 0), their
    sum (2) or their mean over the ``count`` rows not ignored (1, NaN when
    none is), summed in double.  None when it does not apply or a target is
    out of range (the caller's composite raises torch's error)."""
    if not _ce_operands(x, t):
        return None
    cdef Py_ssize_t N = x._shape[0], C = x._shape[1], r, count = 0, zero = 0
    if N == 0 or C == 0 or reduction < 0 or reduction > 2:
        return None
    cdef const int64_t* pt = <const int64_t*>t._ptr()
    if _ce_bad_target(pt, N, C, ignore_index) >= 0:
        return None
    cdef int num = x._dtype.num
    cdef const float* xf = <const float*>x._ptr()
    cdef const double* xd = <const double*>x._ptr()
    cdef double total = 0, v
    cdef int64_t c
    cdef _TensorBase out
    cdef float* of
    cdef double* od
    if reduction == 0:
        out = _empty_contig(x._dtype, 1, &N, x._storage.device, False)
        of = <float*>out._ptr()
        od = <double*>out._ptr()
        for r in range(N):
            c = pt[r]
            if num == PT_FLOAT32:
                of[r] = 0 if c == ignore_index else -xf[r * C + c]
            else:
                od[r] = 0 if c == ignore_index else -xd[r * C + c]
        return out, N
    for r in range(N):
        c = pt[r]
        if c == ignore_index:
            continue
        count += 1
        v = xf[r * C + c] if num == PT_FLOAT32 else xd[r * C + c]
        total -= v
    if reduction == 1:
        total = total / count if count else float("nan")
    out = _empty_contig(x._dtype, 0, &zero, x._storage.device, False)
    _store(out, &total, 1)
    return out, count


def nll_backward(_TensorBase g, _TensorBase x, _TensorBase t, int64_t ignore_index,
                 int reduction, Py_ssize_t count):
    """The gradient of :func:`nll_forward` for ``x`` (whose shape and dtype it
    takes; its values are not read): zero except ``-s_r`` at ``[r, t[r]]``
    for rows not ignored, ``s_r`` the output gradient ``g`` (0-d for
    reductions 1 and 2, divided by ``count`` for 1; for 0 a contiguous float64
    (N)).  None when it does not apply."""
    if not _ce_operands(x, t) or reduction < 0 or reduction > 2:
        return None
    cdef Py_ssize_t N = x._shape[0], C = x._shape[1], r
    cdef const int64_t* pt = <const int64_t*>t._ptr()
    if _ce_bad_target(pt, N, C, ignore_index) >= 0:
        return None
    cdef double scale0 = 0
    cdef const double* scale = NULL
    if not _row_scales(g, N, reduction, count, &scale, &scale0):
        return None
    cdef _TensorBase gx = _empty_contig(x._dtype, 2, x._shape, x._storage.device, True)
    cdef float* of = <float*>gx._ptr()
    cdef double* od = <double*>gx._ptr()
    cdef int num = x._dtype.num
    cdef int64_t c
    cdef double s
    for r in range(N):
        c = pt[r]
        if c == ignore_index:
            continue
        s = -(scale[r] if scale != NULL else scale0)
        if num == PT_FLOAT32:
            of[r * C + c] = <float>s
        else:
            od[r * C + c] = s
    return gx


# ---------------------------------------------------------------------------
# binary_cross_entropy_with_logits without weights, one pass each way

cdef bint _bce_operands(_TensorBase x, _TensorBase t) noexcept:
    """x and t contiguous float32/float64 CPU tensors of one dtype and shape."""
    cdef int num = x._dtype.num, d
    if not (num == PT_FLOAT32 or num == PT_FLOAT64) or t._dtype is not x._dtype \
            or x._ndim != t._ndim or not x._is_contig() or not t._is_contig() \
            or x._storage.device._type_code != 0 or t._storage.device._type_code != 0:
        return False
    for d in range(x._ndim):
        if x._shape[d] != t._shape[d]:
            return False
    return True


def bce_logits_forward(_TensorBase x, _TensorBase t, int reduction):
    """``binary_cross_entropy_with_logits(x, t)`` without weights:
    ``(1 - t) x - logsigmoid(x)`` with ``logsigmoid(x) = min(x, 0) -
    log1p(exp(-|x|))``, each element's operations those of the composite
    (the same vector exp and log1p), per element (``reduction`` 0) or summed
    in double (2; float32 in 8 lanes as :func:`_pdot`) / averaged (1).  None when the operands do not fit."""
    if not _bce_operands(x, t) or reduction < 0 or reduction > 2:
        return None
    cdef Py_ssize_t n = x._numel, i, zero = 0
    if n == 0:
        return None
    cdef int num = x._dtype.num
    cdef _TensorBase out
    cdef float* buf = NULL
    cdef float* po
    cdef double* pd
    cdef const float* xf = <const float*>x._ptr()
    cdef const float* tf = <const float*>t._ptr()
    cdef const double* xd = <const double*>x._ptr()
    cdef const double* td = <const double*>t._ptr()
    cdef double total = 0, v, ls
    cdef float fls
    if reduction == 0:
        out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    if num == PT_FLOAT32:
        if reduction == 0:
            po = <float*>out._ptr()
        else:
            buf = <float*>ptc_scratch_malloc(n * sizeof(float))
            if buf == NULL:
                raise MemoryError("binary_cross_entropy_with_logits: no memory")
            po = buf
        ptc_kernel_enter()
        with nogil:
            try:
                for i in range(n):
                    po[i] = -fabsf(xf[i])
                ptc_exp_fv_f32(po, po, n)
                ptc_log1p_v_f32(po, po, n)
                for i in range(n):
                    # (min(x, 0) without a branch: -0.0 for x = -0.0 where the
                    # branch gave +0, the same difference, po being ln 2 there)
                    fls = ptc_min0f(xf[i]) - po[i]
                    po[i] = (<float>1 - tf[i]) * xf[i] - fls
                if reduction != 0:
                    total = _pdot(<const float*>po, <const float*>NULL, n)
            finally:
                ptc_kernel_exit()
        free(buf)
    else:
        if reduction == 0:
            pd = <double*>out._ptr()
        else:
            pd = <double*>ptc_scratch_malloc(n * sizeof(double))
            if pd == NULL:
                raise MemoryError("binary_cross_entropy_with_logits: no memory")
        ptc_kernel_enter()
        with nogil:
            try:
                for i in range(n):
                    pd[i] = -fabs(xd[i])
                ptc_exp_dv_f64(pd, pd, n)
                ptc_log1p_dv_f64(pd, pd, n)
                for i in range(n):
                    ls = ptc_min0d(xd[i]) - pd[i]
                    v = (1.0 - td[i]) * xd[i] - ls
                    pd[i] = v
                    total += v
            finally:
                ptc_kernel_exit()
        if reduction != 0:
            free(pd)
    if reduction == 0:
        return out
    if reduction == 1:
        total = total / n
    out = _empty_contig(x._dtype, 0, &zero, x._storage.device, False)
    _store(out, &total, 1)
    return out


def bce_logits_backward(_TensorBase g, _TensorBase x, _TensorBase t, int reduction):
    """The input's gradient of :func:`bce_logits_forward`: ``(sigmoid(x) -
    t) * s`` with ``s`` the output gradient (``g / numel`` for 'mean', in
    x's dtype; for reduction 0 ``g`` contiguous of x's dtype and shape).
    None when the operands do not fit."""
    if not _bce_operands(x, t) or reduction < 0 or reduction > 2:
        return None
    cdef Py_ssize_t n = x._numel, i
    if reduction == 0:
        if not _bce_operands(x, g):
            return None
    elif g._numel != 1:
        return None
    cdef int num = x._dtype.num
    cdef double s0 = 0
    if reduction != 0:
        s0 = float(g.item())
    cdef float sf = <float>s0
    if reduction == 1:
        sf = sf / <float>n
        s0 = s0 / n
    cdef _TensorBase gx = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef float* of = <float*>gx._ptr()
    cdef double* od = <double*>gx._ptr()
    cdef const float* xf = <const float*>x._ptr()
    cdef const float* tf = <const float*>t._ptr()
    cdef const float* gf = <const float*>g._ptr()
    cdef const double* xd = <const double*>x._ptr()
    cdef const double* td = <const double*>t._ptr()
    cdef const double* gd = <const double*>g._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                ptc_sigmoid_fv_f32(of, xf, n)
                for i in range(n):
                    of[i] = (of[i] - tf[i]) * (gf[i] if reduction == 0 else sf)
            else:
                ptc_sigmoid_dv_f64(od, xd, n)
                for i in range(n):
                    od[i] = (od[i] - td[i]) * (gd[i] if reduction == 0 else s0)
        finally:
            ptc_kernel_exit()
    return gx


# ---------------------------------------------------------------------------
# binary_cross_entropy without weights: the range checks and the elementwise
# loss in one call, the input's gradient in one pass

cdef bint _bce_fits(_TensorBase x, _TensorBase t) noexcept:
    """:func:`_bce_operands`, and one thread's worth of elements (the
    composite's elementwise ops split larger ones over the threads)."""
    return _bce_operands(x, t) and x._numel > 0 and (
        x._numel < 4 * parallel_grain() or get_num_threads() <= 1)


def bce_forward(_TensorBase x, _TensorBase t):
    """The elementwise ``binary_cross_entropy(x, t)`` (no weight, no
    reduction): ``(t - 1) max(log1p(-x), -100) - t max(log(x), -100)``, each
    operation rounded as the composite's ops round it (the same vector log
    and log1p).  1 when an element of ``x``
    lies outside [0, 1] (NaN included), 2 when one of ``t`` does (``x``
    checked first); None when the operands do not fit."""
    if not _bce_fits(x, t):
        return None
    cdef Py_ssize_t n = x._numel, i
    cdef int num = x._dtype.num
    cdef const float* xf = <const float*>x._ptr()
    cdef const float* tf = <const float*>t._ptr()
    cdef const double* xd = <const double*>x._ptr()
    cdef const double* td = <const double*>t._ptr()
    cdef int bad = 0
    with nogil:
        for i in range(n):
            if not ((xf[i] >= 0 and xf[i] <= 1) if num == PT_FLOAT32 else (xd[i] >= 0 and xd[i] <= 1)):
                bad = 1
                break
        if not bad:
            for i in range(n):
                if not ((tf[i] >= 0 and tf[i] <= 1) if num == PT_FLOAT32
                        else (td[i] >= 0 and td[i] <= 1)):
                    bad = 2
                    break
    if bad:
        return bad
    cdef _TensorBase out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef float* of = <float*>out._ptr()
    cdef double* od = <double*>out._ptr()
    cdef float* lx = NULL
    cdef double* ld = NULL
    cdef float a, b
    cdef double ad, bd
    lx = <float*>ptc_scratch_malloc(n * (sizeof(float) if num == PT_FLOAT32 else sizeof(double)))
    if lx == NULL:
        raise MemoryError("binary_cross_entropy: no memory")
    ld = <double*>lx
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                for i in range(n):
                    of[i] = -xf[i]
                ptc_log1p_v_f32(of, of, n)
                ptc_log_v_f32(lx, xf, n)
                for i in range(n):
                    a = of[i] if of[i] > <float>-100 else <float>-100
                    b = lx[i] if lx[i] > <float>-100 else <float>-100
                    of[i] = (tf[i] - <float>1) * a - tf[i] * b
            else:
                for i in range(n):
                    od[i] = -xd[i]
                ptc_log1p_dv_f64(od, od, n)
                ptc_log_dv_f64(ld, xd, n)
                for i in range(n):
                    ad = od[i] if od[i] > -100.0 else -100.0
                    bd = ld[i] if ld[i] > -100.0 else -100.0
                    od[i] = (td[i] - 1.0) * ad - td[i] * bd
        finally:
            ptc_kernel_exit()
    free(lx)
    return out


cdef void _bce_bwd(real* o, const real* x, const real* t, const real* g, Py_ssize_t n,
                   real g0, int reduction) noexcept nogil:
    """torch's order: ``(g (x - t)) / max((1 - x) x, eps)``, then ``/ n`` for 'mean'."""
    cdef Py_ssize_t i
    cdef real m, v, eps = <real><float>1e-12, nr = <real>n
    for i in range(n):
        m = (<real>1 - x[i]) * x[i]
        m = m if m > eps else eps
        v = (g[i] if reduction == 0 else g0) * (x[i] - t[i])
        v = v / m
        o[i] = v / nr if reduction == 1 else v


def bce_backward(_TensorBase g, _TensorBase x, _TensorBase t, int reduction):
    """The input's gradient of ``binary_cross_entropy(x, t)`` (no weight), as
    torch's kernel computes it: ``g (x - t) / max((1 - x) x, eps)`` (eps the
    float32 nearest 1e-12, in float64 too, as torch's), divided by the
    element count for 'mean' (``reduction`` 1); ``g`` a one-element tensor
    of x's dtype for 'mean'/'sum', else contiguous of x's dtype and shape.
    None when the operands do not fit."""
    if not _bce_fits(x, t) or reduction < 0 or reduction > 2:
        return None
    if reduction == 0:
        if not _bce_operands(x, g):
            return None
    elif g._numel != 1 or g._dtype is not x._dtype or g._storage.device._type_code != 0:
        return None
    cdef double g0 = float(g.item()) if reduction != 0 else 0.0
    cdef _TensorBase gx = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef char* po = gx._ptr()
    cdef const char* px = x._ptr()
    cdef const char* pt = t._ptr()
    cdef const char* pg = g._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if x._dtype.num == PT_FLOAT32:
                _bce_bwd(<float*>po, <const float*>px, <const float*>pt, <const float*>pg,
                         x._numel, <float>g0, reduction)
            else:
                _bce_bwd(<double*>po, <const double*>px, <const double*>pt, <const double*>pg,
                         x._numel, g0, reduction)
        finally:
            ptc_kernel_exit()
    return gx


# ---------------------------------------------------------------------------
# smooth L1, Huber and squared-error losses: the terms (and their sum) in one
# pass, the input's gradient in one pass (ptc_smooth_l1.h: torch's vector
# operations)

cdef extern from "ptc_smooth_l1.h" nogil:
    double ptsl_fwd_f32(float* o, const float* x, const float* t, Py_ssize_t n, float p, int kind,
                        int sum)
    double ptsl_fwd_f64(double* o, const double* x, const double* t, Py_ssize_t n, double p,
                        int kind, int sum)
    void ptsl_bwd_f32(float* o, const float* x, const float* t, const float* g, float g0,
                      Py_ssize_t n, float p, float norm, int kind)
    void ptsl_bwd_f64(double* o, const double* x, const double* t, const double* g, double g0,
                      Py_ssize_t n, double p, double norm, int kind)
    int ptsl_avx2_on


def _set_smooth_l1_avx2(bint on):
    """Testing knob: False runs the baseline-vector copies of the smooth L1 /
    Huber loops where AVX2 is there (the same bits); returns the old setting."""
    global ptsl_avx2_on
    cdef bint old = ptsl_avx2_on
    ptsl_avx2_on = on
    return old


def smooth_l1_forward(_TensorBase x, _TensorBase t, double p, int kind, int reduction):
    """``smooth_l1_loss(x, t, beta=p)`` (``kind`` 0), ``huber_loss(x, t,
    delta=p)`` (1) or ``mse_loss(x, t)`` (2, ``p`` unused but > 0) of
    same-shape contiguous float32/float64 ``x``/``t`` of one dtype, ``p >
    0``: the terms (``reduction`` 0), or their sum in double (2) or its
    mean (1) as a 0-d tensor.  The terms are torch's bits; the
    sum is taken over fixed chunks in a fixed order, the same for any thread
    count.  None when the operands do not fit."""
    if not _bce_operands(x, t) or reduction < 0 or reduction > 2 or x._numel == 0 \
            or not p > 0 or kind < 0 or kind > 2:
        return None
    cdef Py_ssize_t n = x._numel, nchunks = (n + CHUNK - 1) // CHUNK, c, lo, m, zero = 0
    cdef int nt = _threads(n), f32 = x._dtype.num == PT_FLOAT32
    cdef _TensorBase out = None
    cdef char* po = NULL
    cdef const char* px = x._ptr()
    cdef const char* pt = t._ptr()
    cdef Py_ssize_t item = x._dtype.itemsize
    cdef double total = 0
    cdef float pf = <float>p
    cdef double* part = <double*>ptc_scratch_malloc(nchunks * sizeof(double))
    if part == NULL:
        raise MemoryError("smooth_l1_loss: no memory")
    try:
        if reduction == 0:
            out = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
            po = out._ptr()
        ptc_kernel_enter()
        with nogil:
            try:
                for c in prange(nchunks, num_threads=nt, schedule="static"):
                    lo = c * CHUNK
                    m = CHUNK if lo + CHUNK <= n else n - lo
                    if f32:
                        part[c] = ptsl_fwd_f32(<float*>(po + lo * item) if po != NULL else NULL,
                                               <const float*>(px + lo * item),
                                               <const float*>(pt + lo * item), m, pf, kind,
                                               reduction != 0)
                    else:
                        part[c] = ptsl_fwd_f64(<double*>(po + lo * item) if po != NULL else NULL,
                                               <const double*>(px + lo * item),
                                               <const double*>(pt + lo * item), m, p, kind,
                                               reduction != 0)
            finally:
                ptc_kernel_exit()
        for c in range(nchunks):
            total = total + part[c]
    finally:
        free(part)
    if reduction == 0:
        return out
    if reduction == 1:
        total = total / n
    out = _empty_contig(x._dtype, 0, &zero, x._storage.device, False)
    _store(out, &total, 1)
    return out


def smooth_l1_backward(_TensorBase g, _TensorBase x, _TensorBase t, double p, int kind,
                       int reduction):
    """The input's gradient of :func:`smooth_l1_forward` as torch's vector
    kernel computes it: ``norm * s * g`` with ``s`` the slope (``(x - t) /
    p`` inside the band, its sign outside; Huber: ``x - t`` and ``p`` times
    the sign; MSE: ``x - t``), ``norm`` ``1 / numel`` for 'mean'
    (``reduction`` 1), else 1 (MSE: ``2 / numel`` and 2);
    ``g`` contiguous of x's dtype and shape for reduction 0, else one
    element of x's dtype.  The target's gradient is its negation.  None
    when the operands do not fit."""
    if not _bce_operands(x, t) or reduction < 0 or reduction > 2 or x._numel == 0 \
            or not p > 0 or kind < 0 or kind > 2:
        return None
    if reduction == 0:
        if not _bce_operands(x, g):
            return None
    elif g._numel != 1 or g._dtype is not x._dtype or g._storage.device._type_code != 0:
        return None
    cdef double g0 = float(g.item()) if reduction != 0 else 0.0
    cdef double norm = (2.0 if kind == 2 else 1.0) / (x._numel if reduction == 1 else 1)
    cdef Py_ssize_t n = x._numel, nchunks = (n + CHUNK - 1) // CHUNK, c, lo, m
    cdef int nt = _threads(n), f32 = x._dtype.num == PT_FLOAT32
    cdef Py_ssize_t item = x._dtype.itemsize
    cdef _TensorBase gx = _empty_contig(x._dtype, x._ndim, x._shape, x._storage.device, False)
    cdef char* po = gx._ptr()
    cdef const char* px = x._ptr()
    cdef const char* pt = t._ptr()
    cdef const char* pg = g._ptr() if reduction == 0 else NULL
    ptc_kernel_enter()
    with nogil:
        try:
            for c in prange(nchunks, num_threads=nt, schedule="static"):
                lo = c * CHUNK
                m = CHUNK if lo + CHUNK <= n else n - lo
                if f32:
                    ptsl_bwd_f32(<float*>(po + lo * item), <const float*>(px + lo * item),
                                 <const float*>(pt + lo * item),
                                 <const float*>(pg + lo * item) if pg != NULL else NULL,
                                 <float>g0, m, <float>p, <float>norm, kind)
                else:
                    ptsl_bwd_f64(<double*>(po + lo * item), <const double*>(px + lo * item),
                                 <const double*>(pt + lo * item),
                                 <const double*>(pg + lo * item) if pg != NULL else NULL,
                                 g0, m, p, norm, kind)
        finally:
            ptc_kernel_exit()
    return gx
