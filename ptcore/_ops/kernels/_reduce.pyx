# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Reduction, scan, softmax and selection kernels.

Structure
---------
* **Reductions** (sum, mean, prod, max/min with or without indices, aminmax,
  all/any, var, norms, logsumexp ...) run through one engine.  The public
  layer passes the input, the reduced dims and keepdim-shaped outputs; the
  engine drops size-1 dims, splits the rest into *kept* and *reduced* dims,
  orders and coalesces them, and picks one of two traversals:

  - *inner*: the reduced dims hold the smallest stride.  Every output element
    is reduced independently over ``R`` rows of ``L`` elements (stride ``s``):
    rows are cut into fixed units (<= ``_SEG`` elements), each unit reduces to
    a small state, and unit states are merged in a binary cascade (pairwise
    summation at unit granularity, exact first-index semantics for arg ops).
  - *outer*: a kept dim holds the smallest stride (e.g. ``sum(dim=0)`` of a
    C-contiguous matrix).  Blocks of ``w`` output columns keep an accumulator
    row; the reduced positions are swept in order, adding whole input rows
    into it (memory read contiguously).  Float sums cascade accumulator rows
    every ``_CASC_K`` input rows.

  Inputs whose dtype differs from the computation type (int32 -> int64,
  float16 -> float32 ...) are converted block by block into a cache-resident
  buffer with ``copy_cast``; results are stored with ``copy_cast`` too.
  Each op is a handful of small functions (init / row / cols / combine /
  between / finish) written once over the fused computation type ``acc_t``
  and collected in one table per type; the op code selects the loop inside.
  Parallel runs split the output elements (or, for few outputs, the fixed
  units of one output) over threads; every result is computed by the same
  sequence of operations whatever the thread count.

* **Scans** (cumsum, cumprod, cummax/cummin, logcumsumexp) and **softmax /
  log_softmax** work on lines along one dim: per line when the dim is the
  innermost one, otherwise by sweeping input rows into accumulator rows
  (``_reduce_scan.pxi``).

* **Selection** (median, nanmedian, quantile) works on contiguous rows
  of double or int64 values (the public layer prepares them;
  ``_reduce_select.pxi``); mode is ``_sort.mode_rows``, with the sort torch's
  mode runs.

The hottest float32/float64 loops (contiguous sums, max/argmax, column
max, the softmax passes with a vectorised ``expf``) are small C functions
(``ptc_reduce_vec.h``) written once as a template over GCC vector extensions and instantiated for
AVX-512F, AVX2 and the baseline ISA (GCC on x86-64; the baseline only
elsewhere, plain C loops without vector extensions); the widest one the
CPU supports is chosen at import (``_simd_level`` lets tests run each).
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t, INT64_MIN, INT64_MAX
from libc.string cimport memcpy, memset
from libc.stdlib cimport free, qsort
from ptcore._ops.kernels._fault cimport ptc_scratch_malloc, ptc_scratch_note, scratch_bind, scratch_error
from libc.math cimport sqrt, pow, fabs, exp, log, log1p, isnan, isinf, isfinite, INFINITY, NAN, HUGE_VAL
from cython.parallel cimport prange, threadid

from ptcore._ops.kernels._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128,
    PT_COMPLEX32, PT_NUM_TYPES, PT_MAX_DIMS,
)
from ptcore._ops.kernels._parallel cimport get_num_threads, parallel_grain
from ptcore._ops.kernels._copy cimport copy_cast
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, ptc_bump_version, _empty_contig, dtype as _Dtype, dtype_from_num
scratch_bind()      # this module's scratch requests obey _fault's test switch


# ==========================================================================
# C micro-kernels (float32 / float64, contiguous)
# ==========================================================================
cdef extern from "ptc_dexp_vec.h" nogil:
    # ptcore.exp's float64 loop (double lanes): float64 logsumexp's and the
    # softmax lines' exps (_reduce_scan.pxi)
    void ptc_exp_dv_f64(double* o, const double* a, Py_ssize_t n)


cdef extern from "ptc_reduce_vec.h":
    void ptcr_select(int max_level) noexcept nogil
    const char* ptcr_isa
    float ptcr_sum_f32(const float* x, Py_ssize_t n) noexcept nogil
    # float16 / bfloat16 rows: sum_f32's operations on the converted values
    float ptcr_sum_h16(const uint16_t* x, Py_ssize_t n) noexcept nogil
    float ptcr_sum_bf16(const uint16_t* x, Py_ssize_t n) noexcept nogil
    bint ptcr_has_sum_h16() noexcept nogil
    double ptcr_sum_f64(const double* x, Py_ssize_t n) noexcept nogil
    float ptcr_sumsq_f32(const float* x, Py_ssize_t n) noexcept nogil
    void ptcr_sqrt_f64(double* d, Py_ssize_t n) noexcept nogil
    double ptcr_sumsq_f64(const double* x, Py_ssize_t n) noexcept nogil
    float ptcr_sumabs_f32(const float* x, Py_ssize_t n) noexcept nogil
    double ptcr_sumabs_f64(const double* x, Py_ssize_t n) noexcept nogil
    double ptcr_sumdev_f32(const float* x, Py_ssize_t n, double mean) noexcept nogil
    double ptcr_sumdev_f64(const double* x, Py_ssize_t n, double mean) noexcept nogil
    void ptcr_addrows_f32(float* acc, const float* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_addrows_f64(double* acc, const double* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    float ptcr_max_f32(const float* x, Py_ssize_t n, int* nan) noexcept nogil
    float ptcr_min_f32(const float* x, Py_ssize_t n, int* nan) noexcept nogil
    double ptcr_max_f64(const double* x, Py_ssize_t n, int* nan) noexcept nogil
    double ptcr_min_f64(const double* x, Py_ssize_t n, int* nan) noexcept nogil
    Py_ssize_t ptcr_argmax_f32(const float* x, Py_ssize_t n, float* val) noexcept nogil
    Py_ssize_t ptcr_argmin_f32(const float* x, Py_ssize_t n, float* val) noexcept nogil
    Py_ssize_t ptcr_argmax_f64(const double* x, Py_ssize_t n, double* val) noexcept nogil
    Py_ssize_t ptcr_argmin_f64(const double* x, Py_ssize_t n, double* val) noexcept nogil
    void ptcr_colmaxn_f32(float* acc, const float* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_colminn_f32(float* acc, const float* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_colmaxn_f64(double* acc, const double* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_colminn_f64(double* acc, const double* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    float ptcr_exp_sf(float x) noexcept nogil
    float ptcr_expsum_f32(const float* x, float* y, Py_ssize_t n, float m) noexcept nogil
    double ptcr_sumexp_f32(const float* x, Py_ssize_t n, float m) noexcept nogil
    void ptcr_scale_f32(float* y, Py_ssize_t n, float r) noexcept nogil
    void ptcr_subsub_f32(const float* x, float* y, Py_ssize_t n, float m, float c) noexcept nogil
    void ptcr_colmax_f32(float* acc, const float* x, Py_ssize_t n) noexcept nogil
    void ptcr_colexpsum_f32(float* s, const float* m, const float* x, float* y, Py_ssize_t n) noexcept nogil
    void ptcr_colscale_f32(float* y, const float* r, Py_ssize_t n) noexcept nogil
    void ptcr_colsubsub_f32(const float* x, float* y, const float* m, const float* c, Py_ssize_t n) noexcept nogil
    void ptcr_smrows_f32(const float* x, Py_ssize_t ldx, float* y, Py_ssize_t ldy, Py_ssize_t rows,
                         Py_ssize_t n, int lg) noexcept nogil
    void ptcr_lserows_f32(const float* x, Py_ssize_t ldx, float* res, Py_ssize_t rows, Py_ssize_t n) noexcept nogil
    float ptcr_prod_f32(const float* x, Py_ssize_t n) noexcept nogil
    double ptcr_prod_f64(const double* x, Py_ssize_t n) noexcept nogil
    void ptcr_mulrows_f32(float* acc, const float* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_mulrows_f64(double* acc, const double* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    int64_t ptcr_sum_i64(const int64_t* x, Py_ssize_t n) noexcept nogil
    int64_t ptcr_sum_i32(const int32_t* x, Py_ssize_t n) noexcept nogil
    int64_t ptcr_sum_i16(const int16_t* x, Py_ssize_t n) noexcept nogil
    int64_t ptcr_sum_i8(const int8_t* x, Py_ssize_t n) noexcept nogil
    int64_t ptcr_sum_u8(const uint8_t* x, Py_ssize_t n) noexcept nogil
    int64_t ptcr_prod_i64(const int64_t* x, Py_ssize_t n) noexcept nogil
    void ptcr_addrows_i64(int64_t* acc, const int64_t* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    void ptcr_mulrows_i64(int64_t* acc, const int64_t* x, Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t n) noexcept nogil
    int64_t ptcr_cnz_u8(const uint8_t* x, Py_ssize_t n, uint8_t mask) noexcept nogil
    int64_t ptcr_cnz_u16(const uint16_t* x, Py_ssize_t n, uint16_t mask) noexcept nogil
    int64_t ptcr_cnz_u32(const uint32_t* x, Py_ssize_t n, uint32_t mask) noexcept nogil
    int64_t ptcr_cnz_u64(const uint64_t* x, Py_ssize_t n, uint64_t mask) noexcept nogil
    float ptcr_nansum_f32(const float* x, Py_ssize_t n) noexcept nogil
    double ptcr_nansum_f64(const double* x, Py_ssize_t n) noexcept nogil


ptcr_select(2)


def _simd_level(int max_level=2):
    """Select the vector kernels (2: AVX-512 if present, 1: AVX2, 0: the
    baseline) and return the instruction set in use (tests run every level)."""
    ptcr_select(max_level)
    return (<bytes>ptcr_isa).decode()


# ==========================================================================
# computation types
# ==========================================================================
ctypedef struct cf_t:
    float re
    float im

ctypedef struct cd_t:
    double re
    double im

# uint8_t is the bool computation type (all/any/count_nonzero: 0/1 values)
ctypedef fused acc_t:
    uint8_t
    int64_t
    float
    double
    cf_t
    cd_t

cdef enum:
    A_BOOL = 0
    A_I64 = 1
    A_F32 = 2
    A_F64 = 3
    A_C64 = 4
    A_C128 = 5
    A_NUM = 6

# reduction op codes (mirrored in the Python dict OPS below)
cdef enum:
    R_SUM = 0
    R_NANSUM = 1
    R_MEAN = 2
    R_NANMEAN = 3
    R_PROD = 4
    R_MAX = 5
    R_MIN = 6
    R_ARGMAX = 7
    R_ARGMIN = 8
    R_AMINMAX = 9
    R_ALL = 10
    R_ANY = 11
    R_VAR = 12
    R_NORM2 = 13
    R_NORM1 = 14
    R_NORMP = 15
    R_NORMINF = 16
    R_NORMNINF = 17
    R_NORM0 = 18
    R_LSE = 19

cdef enum:
    _SEG = 131072         # elements per unit of a long row (inner traversal)
    _W = 1024             # output columns per block (outer traversal)
    _CASC_K = 16          # rows per cascade level (outer traversal, float sums)
    _SEC = 16             # bytes per element of one state section
    _ST = 32              # bytes of one element's state (two sections)
    _RBUF = 256           # outputs buffered before a store (inner traversal)
    _CBUF = 65536         # bytes of the conversion buffer
    _MAXLEV = 24          # cascade levels (outer traversal)


ctypedef struct rplan:
    int op
    int acc               # A_* index
    int acc_num           # ScalarType of the computation type
    Py_ssize_t acc_size
    int src_num
    bint conv             # input dtype != computation type
    bint cascade          # outer traversal: cascade accumulator rows
    int npass
    Py_ssize_t N          # reduced elements per output
    double corr           # var: correction
    double p              # norms: p
    bint sqrt_            # var -> std
    int r0_num, r1_num    # result types (ScalarType) of sections r0_sec, r1_sec
    int r0_sec, r1_sec
    Py_ssize_t r0_size, r1_size
    char* out0            # NULL: not wanted
    char* out1
    int o0_num, o1_num
    const char* x
    int nk                # kept dims (outputs), last = innermost of the traversal
    Py_ssize_t ksh[PT_MAX_DIMS]
    Py_ssize_t kxs[PT_MAX_DIMS]
    Py_ssize_t ko0[PT_MAX_DIMS]
    Py_ssize_t ko1[PT_MAX_DIMS]
    int nr                # reduced dims, last = innermost
    Py_ssize_t rsh[PT_MAX_DIMS]
    Py_ssize_t rxs[PT_MAX_DIMS]
    Py_ssize_t rix[PT_MAX_DIMS]   # logical (flattened) index stride, for arg ops
    bint outer
    Py_ssize_t O          # number of outputs
    Py_ssize_t R          # reduced rows (all reduced dims but the last)
    Py_ssize_t L          # innermost reduced length
    size_t* fail          # a failed scratch request's size (ptc_scratch_note), else 0


ctypedef void (*init_fn)(char* buf, const rplan* p, Py_ssize_t w, int ps, const char* tmpl) noexcept nogil
ctypedef void (*row_fn)(char* st, const rplan* p, const char* x, Py_ssize_t n, Py_ssize_t s,
                        Py_ssize_t i0, Py_ssize_t di, int ps) noexcept nogil
ctypedef void (*cols_fn)(char* buf, const rplan* p, Py_ssize_t w, const char* x, Py_ssize_t cs,
                         Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t i0, Py_ssize_t di, int ps) noexcept nogil
ctypedef void (*comb_fn)(char* dst, const rplan* p, const char* src, Py_ssize_t w, int ps) noexcept nogil
ctypedef void (*fin_fn)(char* buf, const rplan* p, Py_ssize_t w) noexcept nogil

ctypedef struct rops:
    init_fn init
    row_fn row
    cols_fn cols
    comb_fn comb
    fin_fn between
    fin_fn finish

cdef rops _OPS[A_NUM]


# --------------------------------------------------------------------------
# scalar helpers over acc_t
# --------------------------------------------------------------------------
cdef inline bint _isnan_v(acc_t v) noexcept nogil:
    if acc_t is float or acc_t is double:
        return v != v
    elif acc_t is cf_t or acc_t is cd_t:
        return v.re != v.re or v.im != v.im
    else:
        return False


cdef inline double _re(acc_t v) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        return v.re
    else:
        return <double>v


cdef inline double _abs2(acc_t v) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        return <double>v.re * v.re + <double>v.im * v.im
    else:
        return <double>v * <double>v


cdef extern from "math.h" nogil:
    double hypot(double x, double y)


cdef inline double _absd(acc_t v) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        return hypot(v.re, v.im)
    else:
        return fabs(<double>v)


cdef inline void _set_zero(acc_t* a) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        a.re = 0
        a.im = 0
    else:
        a[0] = 0


cdef inline void _set_one(acc_t* a) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        a.re = 1
        a.im = 0
    else:
        a[0] = 1


cdef inline void _addto(acc_t* a, acc_t b) noexcept nogil:
    if acc_t is cf_t or acc_t is cd_t:
        a.re = a.re + b.re
        a.im = a.im + b.im
    elif acc_t is int64_t:
        a[0] = <int64_t>(<uint64_t>a[0] + <uint64_t>b)     # wraps like PyTorch
    else:
        a[0] = a[0] + b


cdef inline void _multo(acc_t* a, acc_t b) noexcept nogil:
    cdef double re, im
    if acc_t is cf_t:
        re = <double>a.re * b.re - <double>a.im * b.im
        im = <double>a.re * b.im + <double>a.im * b.re
        a.re = <float>re
        a.im = <float>im
    elif acc_t is cd_t:
        re = a.re * b.re - a.im * b.im
        im = a.re * b.im + a.im * b.re
        a.re = re
        a.im = im
    elif acc_t is int64_t:
        a[0] = <int64_t>(<uint64_t>a[0] * <uint64_t>b)
    else:
        a[0] = a[0] * b


cdef inline bint _better(acc_t v, acc_t cur, bint is_max) noexcept nogil:
    """v replaces cur (max/min with NaN propagation: a NaN is never replaced)."""
    if acc_t is float or acc_t is double:
        if cur != cur:
            return False
        if v != v:
            return True
        return v > cur if is_max else v < cur
    elif acc_t is int64_t or acc_t is uint8_t:
        return v > cur if is_max else v < cur
    else:
        return False


cdef inline void _lowest(acc_t* a, bint is_max) noexcept nogil:
    """Identity of max (is_max) or min."""
    if acc_t is float or acc_t is double:
        a[0] = -INFINITY if is_max else INFINITY
    elif acc_t is int64_t:
        a[0] = INT64_MIN if is_max else INT64_MAX
    elif acc_t is uint8_t:
        a[0] = 0 if is_max else 1
    else:
        pass


cdef inline char* _sec(void* buf, int k, Py_ssize_t w) noexcept nogil:
    return (<char*>buf) + k * w * _SEC


# --------------------------------------------------------------------------
# strided pairwise sums
# --------------------------------------------------------------------------
ctypedef fused _nflt_t:
    float
    double


cdef inline int64_t _count_numbers(const _nflt_t* x, Py_ssize_t n) noexcept nogil:
    """How many of the n contiguous values are not NaN (a branch-free count
    the compiler vectorises)."""
    cdef Py_ssize_t j
    cdef int64_t c = 0
    for j in range(n):
        c += x[j] == x[j]
    return c


cdef acc_t _gsum(const acc_t* tag, const char* x, Py_ssize_t n, Py_ssize_t s, bint skipnan) noexcept nogil:
    """Sum of n elements s bytes apart: 4 lanes per leaf of 256, leaves in a
    binary cascade.  Integers wrap; NaNs skipped when skipnan."""
    cdef acc_t stack[64]
    cdef acc_t a0, a1, a2, a3, v, res
    cdef int top = 0, t
    cdef int64_t count = 0, k
    cdef Py_ssize_t i = 0, j, m
    if acc_t is int64_t or acc_t is uint8_t:
        res = 0
        for j in range(n):
            _addto(&res, (<const acc_t*>(x + j * s))[0])
        return res
    else:
        while i < n:
            m = n - i
            if m > 256:
                m = 256
            _set_zero(&a0)
            _set_zero(&a1)
            _set_zero(&a2)
            _set_zero(&a3)
            j = 0
            if not skipnan:
                while j + 4 <= m:
                    _addto(&a0, (<const acc_t*>(x + (i + j) * s))[0])
                    _addto(&a1, (<const acc_t*>(x + (i + j + 1) * s))[0])
                    _addto(&a2, (<const acc_t*>(x + (i + j + 2) * s))[0])
                    _addto(&a3, (<const acc_t*>(x + (i + j + 3) * s))[0])
                    j += 4
            while j < m:
                v = (<const acc_t*>(x + (i + j) * s))[0]
                if not (skipnan and _isnan_v(v)):
                    _addto(&a0, v)
                j += 1
            _addto(&a0, a1)
            _addto(&a2, a3)
            _addto(&a0, a2)
            k = count
            count += 1
            while k & 1:
                top -= 1
                _addto(&stack[top], a0)
                a0 = stack[top]
                k >>= 1
            stack[top] = a0
            top += 1
            i += m
        _set_zero(&res)
        if top > 0:
            res = stack[top - 1]
            t = top - 2
            while t >= 0:
                v = stack[t]
                _addto(&v, res)
                res = v
                t -= 1
        return res


cdef inline double _tf(const acc_t* tag, acc_t v, int op, double p, const char* aux) noexcept nogil:
    """Per-element transform of the double-accumulated ops."""
    cdef double a
    cdef acc_t m
    if op == R_NORM2:
        return _abs2(v)
    elif op == R_NORM1:
        return _absd(v)
    elif op == R_NORMP:
        return pow(_absd(v), p)
    elif op == R_NORM0:
        # (not |v| ** 2 != 0: the square of a value under 1e-154 is 0)
        return 1.0 if _absd(v) != 0 or _isnan_v(v) else 0.0
    elif op == R_VAR:
        m = (<const acc_t*>aux)[0]
        if acc_t is cf_t or acc_t is cd_t:
            a = <double>v.re - m.re
            p = <double>v.im - m.im
            return a * a + p * p
        else:
            a = <double>v - <double>m
            return a * a
    elif op == R_LSE:
        m = (<const acc_t*>aux)[0]
        if acc_t is float:
            return <double>ptcr_exp_sf(v - m)
        else:
            return exp(_re(v) - _re(m))
    return 0


cdef double _tsum(const acc_t* tag, const char* x, Py_ssize_t n, Py_ssize_t s, int op, double p,
                  const char* aux) noexcept nogil:
    """Pairwise (leaves of 256, binary cascade) double sum of _tf(x)
    (contiguous float64 logsumexp: a leaf's exps by the double-lane loop)."""
    cdef double stack[64]
    cdef double leaf[256]
    cdef double a0, a1, res, mx = 0
    cdef int top = 0, t
    cdef int64_t count = 0, k
    cdef Py_ssize_t i = 0, j, m
    cdef bint lse_lanes = False
    if acc_t is double:
        lse_lanes = op == R_LSE and s == sizeof(double)
        if lse_lanes:
            mx = (<const double*>aux)[0]
    while i < n:
        m = n - i
        if m > 256:
            m = 256
        a0 = 0
        a1 = 0
        j = 0
        if lse_lanes:
            # the terms exp(x - max) of the leaf, then the same two running sums
            for j in range(m):
                leaf[j] = (<const double*>x)[i + j] - mx
            ptc_exp_dv_f64(leaf, leaf, m)
            j = 0
            while j + 2 <= m:
                a0 += leaf[j]
                a1 += leaf[j + 1]
                j += 2
            if j < m:
                a0 += leaf[j]
            j = m
        while j + 2 <= m:
            a0 += _tf(tag, (<const acc_t*>(x + (i + j) * s))[0], op, p, aux)
            a1 += _tf(tag, (<const acc_t*>(x + (i + j + 1) * s))[0], op, p, aux)
            j += 2
        if j < m:
            a0 += _tf(tag, (<const acc_t*>(x + (i + j) * s))[0], op, p, aux)
        a0 = a0 + a1
        k = count
        count += 1
        while k & 1:
            top -= 1
            a0 = stack[top] + a0
            k >>= 1
        stack[top] = a0
        top += 1
        i += m
    res = 0
    if top > 0:
        res = stack[top - 1]
        t = top - 2
        while t >= 0:
            res = stack[t] + res
            t -= 1
    return res


# --------------------------------------------------------------------------
# the op functions (one set per computation type)
# --------------------------------------------------------------------------
cdef void _r_init(acc_t* buf, const rplan* p, Py_ssize_t w, int ps, const char* tmpl) noexcept nogil:
    cdef Py_ssize_t j
    cdef int op = p.op
    cdef acc_t* a0 = <acc_t*>_sec(buf, 0, w)
    cdef char* s1 = _sec(buf, 1, w)
    cdef double* d0 = <double*>a0
    cdef double* d1 = <double*>s1
    cdef int64_t* i1 = <int64_t*>s1
    cdef acc_t* a1 = <acc_t*>s1
    if ps == 1:            # second pass: keep the first pass's sec0, zero sec1
        memcpy(a0, tmpl, w * sizeof(acc_t))
        memset(d1, 0, w * sizeof(double))
        return
    if op == R_SUM or op == R_NANSUM or op == R_MEAN or op == R_VAR or op == R_NANMEAN:
        if acc_t is uint8_t:
            memset(a0, 0, w * sizeof(int64_t))
        else:
            memset(a0, 0, w * sizeof(acc_t))      # all-zero bits: 0 of every type
        if op == R_NANMEAN:
            memset(d1, 0, w * sizeof(double))
    elif op == R_PROD:
        for j in range(w):
            _set_one(&a0[j])
    elif op == R_MAX or op == R_ANY or op == R_LSE:
        for j in range(w):
            _lowest(&a0[j], True)
    elif op == R_MIN or op == R_ALL:
        for j in range(w):
            _lowest(&a0[j], False)
    elif op == R_ARGMAX or op == R_ARGMIN:
        for j in range(w):
            _lowest(&a0[j], op == R_ARGMAX)
            i1[j] = -1
    elif op == R_AMINMAX:
        for j in range(w):
            _lowest(&a0[j], False)
            _lowest(&a1[j], True)
    elif op == R_NORMNINF:
        for j in range(w):
            d0[j] = INFINITY
    else:                # norms: double zero
        memset(d0, 0, w * sizeof(double))


cdef inline void _arg_merge(acc_t* val, int64_t* idx, acc_t v, int64_t i, bint is_max) noexcept nogil:
    """(v, i) comes after (val, idx) in index order."""
    if idx[0] < 0 or _better(v, val[0], is_max):
        val[0] = v
        idx[0] = i


cdef void _r_row(acc_t* st, const rplan* p, const char* x, Py_ssize_t n, Py_ssize_t s,
                 Py_ssize_t i0, Py_ssize_t di, int ps) noexcept nogil:
    """Fold n elements (s bytes apart; logical indices i0 + j * di) into st."""
    cdef int op = p.op
    cdef Py_ssize_t j, k
    cdef acc_t v, m
    cdef acc_t* a1 = <acc_t*>(<char*>st + _SEC)
    cdef double* d0 = <double*>st
    cdef double* d1 = <double*>(<char*>st + _SEC)
    cdef int64_t* i1 = <int64_t*>(<char*>st + _SEC)
    cdef bint is_max, contig = s == <Py_ssize_t>sizeof(acc_t)
    cdef int nanf = 0
    cdef double t
    if n <= 0:
        return
    if op == R_SUM or op == R_MEAN or op == R_NANSUM or (op == R_VAR and ps == 0):
        if acc_t is uint8_t:             # count_nonzero: bool values
            if contig:
                (<int64_t*>st)[0] += ptcr_cnz_u8(<const uint8_t*>x, n, 0xff)
                return
            for j in range(n):
                (<int64_t*>st)[0] += (<const uint8_t*>(x + j * s))[0] != 0
        elif acc_t is int64_t:
            if contig:
                _addto(st, ptcr_sum_i64(<const int64_t*>x, n))
            else:
                _addto(st, _gsum(st, x, n, s, False))
        elif acc_t is float:
            if contig and op != R_NANSUM:
                st[0] += ptcr_sum_f32(<const float*>x, n)
            elif contig:
                st[0] += ptcr_nansum_f32(<const float*>x, n)
            else:
                st[0] += _gsum(st, x, n, s, op == R_NANSUM)
        elif acc_t is double:
            if contig and op != R_NANSUM:
                st[0] += ptcr_sum_f64(<const double*>x, n)
            elif contig:
                st[0] += ptcr_nansum_f64(<const double*>x, n)
            else:
                st[0] += _gsum(st, x, n, s, op == R_NANSUM)
        else:
            _addto(st, _gsum(st, x, n, s, op == R_NANSUM))
    elif op == R_NANMEAN:
        if acc_t is float:
            if contig:
                st[0] += ptcr_nansum_f32(<const float*>x, n)
                d1[0] += _count_numbers(<const float*>x, n)
                return
        elif acc_t is double:
            if contig:
                st[0] += ptcr_nansum_f64(<const double*>x, n)
                d1[0] += _count_numbers(<const double*>x, n)
                return
        _addto(st, _gsum(st, x, n, s, True))
        for j in range(n):
            if not _isnan_v((<const acc_t*>(x + j * s))[0]):
                d1[0] += 1
    elif op == R_PROD:
        if contig:
            # (torch's order for floats: st is 1 unless the row is a later unit or
            # conversion block of a longer one)
            if acc_t is float:
                st[0] = st[0] * ptcr_prod_f32(<const float*>x, n)
                return
            if acc_t is double:
                st[0] = st[0] * ptcr_prod_f64(<const double*>x, n)
                return
            if acc_t is int64_t:
                _multo(st, ptcr_prod_i64(<const int64_t*>x, n))
                return
        for j in range(n):
            _multo(st, (<const acc_t*>(x + j * s))[0])
    elif op == R_MAX or op == R_MIN:
        is_max = op == R_MAX
        if acc_t is float:
            if contig:
                v = ptcr_max_f32(<const float*>x, n, &nanf) if is_max else ptcr_min_f32(<const float*>x, n, &nanf)
                if nanf:
                    v = NAN
                if _better(v, st[0], is_max):
                    st[0] = v
                return
        if acc_t is double:
            if contig:
                v = ptcr_max_f64(<const double*>x, n, &nanf) if is_max else ptcr_min_f64(<const double*>x, n, &nanf)
                if nanf:
                    v = NAN
                if _better(v, st[0], is_max):
                    st[0] = v
                return
        for j in range(n):
            v = (<const acc_t*>(x + j * s))[0]
            if _better(v, st[0], is_max):
                st[0] = v
    elif op == R_ALL:
        if acc_t is uint8_t:
            if st[0]:
                for j in range(n):
                    if (<const uint8_t*>(x + j * s))[0] == 0:
                        st[0] = 0
                        break
    elif op == R_ANY:
        if acc_t is uint8_t:
            if not st[0]:
                for j in range(n):
                    if (<const uint8_t*>(x + j * s))[0] != 0:
                        st[0] = 1
                        break
    elif op == R_ARGMAX or op == R_ARGMIN:
        is_max = op == R_ARGMAX
        if acc_t is float:
            if contig:
                k = ptcr_argmax_f32(<const float*>x, n, &v) if is_max else ptcr_argmin_f32(<const float*>x, n, &v)
                _arg_merge(st, i1, v, i0 + k * di, is_max)
                return
        if acc_t is double:
            if contig:
                k = ptcr_argmax_f64(<const double*>x, n, &v) if is_max else ptcr_argmin_f64(<const double*>x, n, &v)
                _arg_merge(st, i1, v, i0 + k * di, is_max)
                return
        for j in range(n):
            _arg_merge(st, i1, (<const acc_t*>(x + j * s))[0], i0 + j * di, is_max)
    elif op == R_AMINMAX:
        for j in range(n):
            v = (<const acc_t*>(x + j * s))[0]
            if _better(v, st[0], False):
                st[0] = v
            if _better(v, a1[0], True):
                a1[0] = v
    elif op == R_VAR or (op == R_LSE and ps == 1):
        if op == R_LSE and contig:
            if acc_t is float:
                d1[0] += ptcr_sumexp_f32(<const float*>x, n, st[0])
                return
        if op == R_VAR and contig:
            if acc_t is float:
                d1[0] += ptcr_sumdev_f32(<const float*>x, n, st[0])
                return
            if acc_t is double:
                d1[0] += ptcr_sumdev_f64(<const double*>x, n, st[0])
                return
        d1[0] += _tsum(st, x, n, s, op, 0, <const char*>st)
    elif op == R_LSE:
        if acc_t is float:
            if contig:
                v = ptcr_max_f32(<const float*>x, n, &nanf)
                if nanf:
                    v = NAN
                if _better(v, st[0], True):
                    st[0] = v
                return
        if acc_t is double:
            if contig:
                v = ptcr_max_f64(<const double*>x, n, &nanf)
                if nanf:
                    v = NAN
                if _better(v, st[0], True):
                    st[0] = v
                return
        for j in range(n):
            v = (<const acc_t*>(x + j * s))[0]
            if _better(v, st[0], True):
                st[0] = v
    elif op == R_NORMINF or op == R_NORMNINF:
        for j in range(n):
            t = _absd((<const acc_t*>(x + j * s))[0])
            if t != t:
                d0[0] = t
                break
            if (op == R_NORMINF and t > d0[0]) or (op == R_NORMNINF and t < d0[0]):
                d0[0] = t
    else:      # R_NORM2, R_NORM1, R_NORMP, R_NORM0
        if contig and (op == R_NORM2 or op == R_NORM1):
            if acc_t is float:
                d0[0] += ptcr_sumsq_f32(<const float*>x, n) if op == R_NORM2 else ptcr_sumabs_f32(<const float*>x, n)
                return
            if acc_t is double:
                d0[0] += ptcr_sumsq_f64(<const double*>x, n) if op == R_NORM2 else ptcr_sumabs_f64(<const double*>x, n)
                return
        d0[0] += _tsum(st, x, n, s, op, p.p, NULL)


cdef void _r_cols(acc_t* buf, const rplan* p, Py_ssize_t w, const char* x, Py_ssize_t cs,
                  Py_ssize_t rs, Py_ssize_t nrows, Py_ssize_t i0, Py_ssize_t di, int ps) noexcept nogil:
    """Fold nrows input rows (rs bytes apart; w columns cs bytes apart) into
    the w states of buf; row r has logical index i0 + r * di."""
    cdef int op = p.op
    cdef Py_ssize_t r, j
    cdef const char* xr
    cdef acc_t v
    cdef acc_t* a0 = <acc_t*>_sec(buf, 0, w)
    cdef acc_t* a1 = <acc_t*>_sec(buf, 1, w)
    cdef double* d0 = <double*>a0
    cdef double* d1 = <double*>a1
    cdef int64_t* c0 = <int64_t*>a0
    cdef int64_t* i1 = <int64_t*>a1
    cdef bint is_max
    cdef double t
    if op == R_SUM or op == R_MEAN or (op == R_VAR and ps == 0):
        if acc_t is float:
            if cs == sizeof(float) and rs % sizeof(float) == 0:
                ptcr_addrows_f32(a0, <const float*>x, rs // <Py_ssize_t>sizeof(float), nrows, w)
                return
        if acc_t is double:
            if cs == sizeof(double) and rs % sizeof(double) == 0:
                ptcr_addrows_f64(a0, <const double*>x, rs // <Py_ssize_t>sizeof(double), nrows, w)
                return
        if acc_t is int64_t:
            if cs == sizeof(int64_t) and rs % sizeof(int64_t) == 0:
                ptcr_addrows_i64(a0, <const int64_t*>x, rs // <Py_ssize_t>sizeof(int64_t), nrows, w)
                return
        for r in range(nrows):
            xr = x + r * rs
            if acc_t is uint8_t:
                for j in range(w):
                    c0[j] += (<const uint8_t*>(xr + j * cs))[0] != 0
            else:
                for j in range(w):
                    _addto(&a0[j], (<const acc_t*>(xr + j * cs))[0])
        return
    if op == R_PROD and cs == sizeof(acc_t) and rs % <Py_ssize_t>sizeof(acc_t) == 0:
        # each column's product in row order (torch's outer reduction)
        if acc_t is float:
            ptcr_mulrows_f32(a0, <const float*>x, rs // <Py_ssize_t>sizeof(float), nrows, w)
            return
        if acc_t is double:
            ptcr_mulrows_f64(a0, <const double*>x, rs // <Py_ssize_t>sizeof(double), nrows, w)
            return
        if acc_t is int64_t:
            ptcr_mulrows_i64(a0, <const int64_t*>x, rs // <Py_ssize_t>sizeof(int64_t), nrows, w)
            return
    if (op == R_MAX or op == R_MIN) and cs == sizeof(acc_t) and rs % <Py_ssize_t>sizeof(acc_t) == 0:
        if acc_t is float:
            if op == R_MAX:
                ptcr_colmaxn_f32(a0, <const float*>x, rs // <Py_ssize_t>sizeof(float), nrows, w)
            else:
                ptcr_colminn_f32(a0, <const float*>x, rs // <Py_ssize_t>sizeof(float), nrows, w)
            return
        if acc_t is double:
            if op == R_MAX:
                ptcr_colmaxn_f64(a0, <const double*>x, rs // <Py_ssize_t>sizeof(double), nrows, w)
            else:
                ptcr_colminn_f64(a0, <const double*>x, rs // <Py_ssize_t>sizeof(double), nrows, w)
            return
    if acc_t is float or acc_t is double:
        if op == R_MAX or op == R_MIN:
            # strided columns (an outer traversal of short rows: each output's
            # row is a column here): _better's choice without branches -- a
            # number that beats the running value or a NaN takes its place,
            # unless the running value is a NaN
            for r in range(nrows):
                xr = x + r * rs
                if op == R_MAX:
                    for j in range(w):
                        v = (<const acc_t*>(xr + j * cs))[0]
                        a0[j] = v if ((v != v) | (v > a0[j])) & (a0[j] == a0[j]) else a0[j]
                else:
                    for j in range(w):
                        v = (<const acc_t*>(xr + j * cs))[0]
                        a0[j] = v if ((v != v) | (v < a0[j])) & (a0[j] == a0[j]) else a0[j]
            return
        if op == R_AMINMAX:
            # both running extremes by the same branch-free select
            for r in range(nrows):
                xr = x + r * rs
                for j in range(w):
                    v = (<const acc_t*>(xr + j * cs))[0]
                    a0[j] = v if ((v != v) | (v < a0[j])) & (a0[j] == a0[j]) else a0[j]
                    a1[j] = v if ((v != v) | (v > a1[j])) & (a1[j] == a1[j]) else a1[j]
            return
        if op == R_NORM2 or op == R_NORM1:
            # the double sums of squares (magnitudes), _tf's terms in row order
            # without its per-element dispatch
            for r in range(nrows):
                xr = x + r * rs
                if op == R_NORM2:
                    for j in range(w):
                        d0[j] += _abs2((<const acc_t*>(xr + j * cs))[0])
                else:
                    for j in range(w):
                        d0[j] += _absd((<const acc_t*>(xr + j * cs))[0])
            return
    for r in range(nrows):
        xr = x + r * rs
        if op == R_NANSUM or op == R_NANMEAN:
            for j in range(w):
                v = (<const acc_t*>(xr + j * cs))[0]
                if not _isnan_v(v):
                    _addto(&a0[j], v)
                    if op == R_NANMEAN:
                        d1[j] += 1
        elif op == R_PROD:
            for j in range(w):
                _multo(&a0[j], (<const acc_t*>(xr + j * cs))[0])
        elif op == R_MAX or op == R_MIN or (op == R_LSE and ps == 0):
            is_max = op != R_MIN
            for j in range(w):
                v = (<const acc_t*>(xr + j * cs))[0]
                if _better(v, a0[j], is_max):
                    a0[j] = v
        elif op == R_ALL:
            if acc_t is uint8_t:
                for j in range(w):
                    a0[j] = a0[j] & ((<const uint8_t*>(xr + j * cs))[0] != 0)
        elif op == R_ANY:
            if acc_t is uint8_t:
                for j in range(w):
                    a0[j] = a0[j] | ((<const uint8_t*>(xr + j * cs))[0] != 0)
        elif op == R_ARGMAX or op == R_ARGMIN:
            is_max = op == R_ARGMAX
            for j in range(w):
                _arg_merge(&a0[j], &i1[j], (<const acc_t*>(xr + j * cs))[0], i0 + r * di, is_max)
        elif op == R_AMINMAX:
            for j in range(w):
                v = (<const acc_t*>(xr + j * cs))[0]
                if _better(v, a0[j], False):
                    a0[j] = v
                if _better(v, a1[j], True):
                    a1[j] = v
        elif op == R_VAR or op == R_LSE:       # second passes
            for j in range(w):
                d1[j] += _tf(buf, (<const acc_t*>(xr + j * cs))[0], op, 0, <const char*>&a0[j])
        elif op == R_NORMINF or op == R_NORMNINF:
            for j in range(w):
                t = _absd((<const acc_t*>(xr + j * cs))[0])
                if d0[j] != d0[j]:
                    continue
                if t != t or (op == R_NORMINF and t > d0[j]) or (op == R_NORMNINF and t < d0[j]):
                    d0[j] = t
        else:
            for j in range(w):
                d0[j] += _tf(buf, (<const acc_t*>(xr + j * cs))[0], op, p.p, NULL)


cdef void _r_comb(acc_t* dst, const rplan* p, const char* src, Py_ssize_t w, int ps) noexcept nogil:
    """dst = dst (earlier) combined with src (later), w states."""
    cdef int op = p.op
    cdef Py_ssize_t j
    cdef acc_t* a0 = <acc_t*>_sec(dst, 0, w)
    cdef acc_t* a1 = <acc_t*>_sec(dst, 1, w)
    cdef const acc_t* b0 = <const acc_t*>(src)
    cdef const acc_t* b1 = <const acc_t*>(src + w * _SEC)
    cdef double* d0 = <double*>a0
    cdef double* d1 = <double*>a1
    cdef const double* e0 = <const double*>b0
    cdef const double* e1 = <const double*>b1
    cdef int64_t* i1 = <int64_t*>a1
    cdef const int64_t* k1 = <const int64_t*>b1
    cdef bint is_max
    if ps == 1:
        ptcr_addrows_f64(d1, e1, 0, 1, w)
        return
    if op == R_SUM or op == R_MEAN or op == R_NANSUM or op == R_VAR or op == R_NANMEAN:
        if acc_t is uint8_t:
            for j in range(w):
                (<int64_t*>a0)[j] += (<const int64_t*>b0)[j]
        elif acc_t is float:
            ptcr_addrows_f32(a0, b0, 0, 1, w)
        elif acc_t is double:
            ptcr_addrows_f64(a0, b0, 0, 1, w)
        else:
            for j in range(w):
                _addto(&a0[j], b0[j])
        if op == R_NANMEAN:
            ptcr_addrows_f64(d1, e1, 0, 1, w)
    elif op == R_PROD:
        for j in range(w):
            _multo(&a0[j], b0[j])
    elif op == R_MAX or op == R_MIN or op == R_LSE:
        is_max = op != R_MIN
        for j in range(w):
            if _better(b0[j], a0[j], is_max):
                a0[j] = b0[j]
    elif op == R_ALL:
        if acc_t is uint8_t:
            for j in range(w):
                a0[j] = a0[j] & b0[j]
    elif op == R_ANY:
        if acc_t is uint8_t:
            for j in range(w):
                a0[j] = a0[j] | b0[j]
    elif op == R_ARGMAX or op == R_ARGMIN:
        is_max = op == R_ARGMAX
        for j in range(w):
            if k1[j] >= 0:
                _arg_merge(&a0[j], &i1[j], b0[j], k1[j], is_max)
    elif op == R_AMINMAX:
        for j in range(w):
            if _better(b0[j], a0[j], False):
                a0[j] = b0[j]
            if _better(b1[j], a1[j], True):
                a1[j] = b1[j]
    elif op == R_NORMINF or op == R_NORMNINF:
        for j in range(w):
            if d0[j] != d0[j]:
                continue
            if e0[j] != e0[j] or (op == R_NORMINF and e0[j] > d0[j]) or (op == R_NORMNINF and e0[j] < d0[j]):
                d0[j] = e0[j]
    else:
        ptcr_addrows_f64(d0, e0, 0, 1, w)


cdef void _r_between(acc_t* buf, const rplan* p, Py_ssize_t w) noexcept nogil:
    """End of the first pass of a two-pass op."""
    cdef Py_ssize_t j
    cdef acc_t* a0 = <acc_t*>_sec(buf, 0, w)
    cdef double n = <double>p.N
    for j in range(w):
        if p.op == R_VAR:
            if acc_t is cf_t or acc_t is cd_t:
                a0[j].re = a0[j].re / n
                a0[j].im = a0[j].im / n
            elif acc_t is float or acc_t is double:
                a0[j] = a0[j] / n
        elif p.op == R_LSE:
            if acc_t is float or acc_t is double:
                if isinf(a0[j]):
                    a0[j] = 0


cdef void _r_finish(acc_t* buf, const rplan* p, Py_ssize_t w) noexcept nogil:
    cdef int op = p.op
    cdef Py_ssize_t j
    cdef acc_t* a0 = <acc_t*>_sec(buf, 0, w)
    cdef double* d0 = <double*>a0
    cdef double* d1 = <double*>_sec(buf, 1, w)
    cdef double n = <double>p.N, dof, v
    if op == R_MEAN:
        for j in range(w):
            if acc_t is cf_t or acc_t is cd_t:
                a0[j].re = a0[j].re / n
                a0[j].im = a0[j].im / n
            elif acc_t is float or acc_t is double:
                a0[j] = a0[j] / n
    elif op == R_NANMEAN:
        for j in range(w):
            if acc_t is float or acc_t is double:
                a0[j] = a0[j] / d1[j]
    elif op == R_VAR:
        dof = n - p.corr
        if dof < 0 or n == 0:       # an empty reduction is nan for any correction
            dof = 0
        for j in range(w):
            v = d1[j] / dof
            d1[j] = sqrt(v) if p.sqrt_ else v
    elif op == R_LSE:
        # the max was zeroed when infinite: recompute it is unnecessary, the
        # sum of exp(x - 0) is then 0 or inf and log gives -inf / inf.
        for j in range(w):
            if acc_t is float or acc_t is double:
                a0[j] = <acc_t>(log(d1[j]) + <double>a0[j])
    elif op == R_NORM2:
        ptcr_sqrt_f64(d0, w)
    elif op == R_NORMP:
        if p.p != 1:
            for j in range(w):
                d0[j] = pow(d0[j], 1.0 / p.p)


cdef void _register_acc(acc_t* tag) noexcept nogil:
    cdef int a
    if acc_t is uint8_t:
        a = A_BOOL
    elif acc_t is int64_t:
        a = A_I64
    elif acc_t is float:
        a = A_F32
    elif acc_t is double:
        a = A_F64
    elif acc_t is cf_t:
        a = A_C64
    else:
        a = A_C128
    _OPS[a].init = <init_fn>_r_init[acc_t]
    _OPS[a].row = <row_fn>_r_row[acc_t]
    _OPS[a].cols = <cols_fn>_r_cols[acc_t]
    _OPS[a].comb = <comb_fn>_r_comb[acc_t]
    _OPS[a].between = <fin_fn>_r_between[acc_t]
    _OPS[a].finish = <fin_fn>_r_finish[acc_t]


_register_acc(<uint8_t*>NULL)
_register_acc(<int64_t*>NULL)
_register_acc(<float*>NULL)
_register_acc(<double*>NULL)
_register_acc(<cf_t*>NULL)
_register_acc(<cd_t*>NULL)


# ==========================================================================
# reduction engine
# ==========================================================================
ctypedef struct casc_t:           # binary cascade of single-element states
    int top
    int64_t count
    char st[64][_ST]


cdef inline void _casc_init(casc_t* c) noexcept nogil:
    c.top = 0
    c.count = 0


cdef inline void _casc_push(casc_t* c, const rops* o, const rplan* p, const char* st, int ps) noexcept nogil:
    cdef int64_t k = c.count
    c.count += 1
    memcpy(c.st[c.top], st, _ST)
    c.top += 1
    while k & 1:
        o.comb(c.st[c.top - 2], p, c.st[c.top - 1], 1, ps)
        c.top -= 1
        k >>= 1


cdef inline void _casc_fold(casc_t* c, const rops* o, const rplan* p, char* out, int ps) noexcept nogil:
    """out = fold of the cascade (out holds the init state when empty)."""
    cdef int t
    if c.top == 0:
        return
    t = c.top - 1
    while t > 0:
        o.comb(c.st[t - 1], p, c.st[t], 1, ps)
        t -= 1
    memcpy(out, c.st[0], _ST)


cdef inline void _row_any(const rplan* p, const rops* o, char* st, const char* x, Py_ssize_t n,
                          Py_ssize_t s, Py_ssize_t i0, Py_ssize_t di, int ps, char* cbuf) noexcept nogil:
    """row() on the input, through the conversion buffer when needed."""
    cdef Py_ssize_t cap, m, done = 0
    cdef Py_ssize_t asz = p.acc_size
    if not p.conv:
        o.row(st, p, x, n, s, i0, di, ps)
        return
    if p.op == R_SUM and s == _size_of(p.src_num) and _direct_sum(p, <int64_t*>st, x, n):
        return
    cap = _CBUF // asz
    # a contiguous float16/bfloat16 row summed in float32: each chunk the buffer
    # would hold summed with the conversions in registers (row() adds
    # ptcr_sum_f32 of the converted chunk: the same values in the same order)
    cdef int half = 0
    if (p.op == R_SUM or p.op == R_MEAN) and p.acc == A_F32 and s == 2:
        if p.src_num == PT_BFLOAT16:
            half = 2
        elif p.src_num == PT_FLOAT16 and ptcr_has_sum_h16():
            half = 1
    while done < n:
        m = n - done
        if m > cap:
            m = cap
        if half == 2:
            (<float*>st)[0] += ptcr_sum_bf16(<const uint16_t*>(x + done * s), m)
        elif half == 1:
            (<float*>st)[0] += ptcr_sum_h16(<const uint16_t*>(x + done * s), m)
        else:
            copy_cast(cbuf, p.acc_num, &asz, x + done * s, p.src_num, &s, &m, 1)
            o.row(st, p, cbuf, m, asz, i0 + done * di, di, ps)
        done += m


cdef bint _direct_sum(const rplan* p, int64_t* st, const char* x, Py_ssize_t n) noexcept nogil:
    """An int64 sum of a narrower integer/bool row, or count_nonzero of a
    numeric row (n contiguous elements), read without the conversion buffer;
    False when neither applies."""
    cdef int num = p.src_num
    if p.acc == A_I64:
        if num == PT_INT32:
            st[0] = <int64_t>(<uint64_t>st[0] + <uint64_t>ptcr_sum_i32(<const int32_t*>x, n))
        elif num == PT_INT16:
            st[0] = <int64_t>(<uint64_t>st[0] + <uint64_t>ptcr_sum_i16(<const int16_t*>x, n))
        elif num == PT_INT8:
            st[0] = <int64_t>(<uint64_t>st[0] + <uint64_t>ptcr_sum_i8(<const int8_t*>x, n))
        elif num == PT_UINT8 or num == PT_BOOL:
            st[0] = <int64_t>(<uint64_t>st[0] + <uint64_t>ptcr_sum_u8(<const uint8_t*>x, n))
        else:
            return False
        return True
    if p.acc != A_BOOL:
        return False
    # count_nonzero: a float is nonzero when a bit other than its sign is set
    if num == PT_FLOAT32:
        st[0] += ptcr_cnz_u32(<const uint32_t*>x, n, <uint32_t>0x7fffffff)
    elif num == PT_FLOAT64:
        st[0] += ptcr_cnz_u64(<const uint64_t*>x, n, <uint64_t>INT64_MAX)
    elif num == PT_FLOAT16 or num == PT_BFLOAT16:
        st[0] += ptcr_cnz_u16(<const uint16_t*>x, n, 0x7fff)
    elif num == PT_INT8 or num == PT_UINT8:
        st[0] += ptcr_cnz_u8(<const uint8_t*>x, n, 0xff)
    elif num == PT_INT16:
        st[0] += ptcr_cnz_u16(<const uint16_t*>x, n, 0xffff)
    elif num == PT_INT32:
        st[0] += ptcr_cnz_u32(<const uint32_t*>x, n, ~<uint32_t>0)
    elif num == PT_INT64:
        st[0] += ptcr_cnz_u64(<const uint64_t*>x, n, ~<uint64_t>0)
    else:
        return False
    return True


cdef void _unit_state(const rplan* p, const rops* o, const char* xb, Py_ssize_t u, char* st,
                      int ps, const char* tmpl, char* cbuf) noexcept nogil:
    """State of unit u of one output (xb: its input at reduced index 0).  A
    unit is one segment (<= _SEG elements) of a long row, or a group of
    consecutive short rows folded in a local cascade."""
    cdef Py_ssize_t L = p.L, R = p.R, G, nseg, r, r1, k, n, rem, q
    cdef Py_ssize_t s = p.rxs[p.nr - 1] if p.nr > 0 else 0
    cdef Py_ssize_t di = p.rix[p.nr - 1] if p.nr > 0 else 0
    cdef Py_ssize_t off = 0, ioff = 0
    cdef Py_ssize_t idx[PT_MAX_DIMS]
    cdef int d
    cdef casc_t loc
    cdef char rst[_ST]
    if L > _SEG:
        nseg = (L + _SEG - 1) // _SEG
        r = u // nseg
        k = u - r * nseg
        r1 = r + 1
    else:
        G = _SEG // L if L > 0 else 1
        r = u * G
        r1 = r + G
        if r1 > R:
            r1 = R
        k = 0
    # multi-index and offsets of row r over the reduced dims but the last
    rem = r
    d = p.nr - 2
    while d >= 0:
        q = rem % p.rsh[d]
        rem = rem // p.rsh[d]
        idx[d] = q
        off += q * p.rxs[d]
        ioff += q * p.rix[d]
        d -= 1
    o.init(st, p, 1, ps, tmpl)
    if L > _SEG:
        n = L - k * _SEG
        if n > _SEG:
            n = _SEG
        _row_any(p, o, st, xb + off + k * _SEG * s, n, s, ioff + k * _SEG * di, di, ps, cbuf)
        return
    _casc_init(&loc)
    while r < r1:
        o.init(rst, p, 1, ps, tmpl)
        _row_any(p, o, rst, xb + off, L, s, ioff, di, ps, cbuf)
        _casc_push(&loc, o, p, rst, ps)
        r += 1
        d = p.nr - 2
        while d >= 0:
            idx[d] += 1
            off += p.rxs[d]
            ioff += p.rix[d]
            if idx[d] < p.rsh[d]:
                break
            off -= p.rxs[d] * p.rsh[d]
            ioff -= p.rix[d] * p.rsh[d]
            idx[d] = 0
            d -= 1
    _casc_fold(&loc, o, p, st, ps)


cdef inline Py_ssize_t _nunits(const rplan* p) noexcept nogil:
    cdef Py_ssize_t G
    if p.R == 0 or p.L == 0:
        return 0
    if p.L > _SEG:
        return p.R * ((p.L + _SEG - 1) // _SEG)
    G = _SEG // p.L
    return (p.R + G - 1) // G


cdef void _inner_one(const rplan* p, const rops* o, const char* xb, char* st, char* cbuf,
                     bint par) noexcept nogil:
    """Final (finished) state of one output, units in a cascade; with par the
    units of each pass are computed by all threads (same result)."""
    cdef casc_t cas
    cdef Py_ssize_t nu = _nunits(p), u
    cdef int ps
    cdef char tmpl[_ST]
    cdef char ust[_ST]
    cdef char* ustates
    cdef int nth = get_num_threads()
    cdef Py_ssize_t s = p.rxs[p.nr - 1] if p.nr > 0 else 0
    cdef Py_ssize_t di = p.rix[p.nr - 1] if p.nr > 0 else 0
    if p.R == 1 and p.L <= _SEG:
        # one row per output: the same operations as the cascade of one unit
        for ps in range(p.npass):
            o.init(st, p, 1, ps, tmpl)
            _row_any(p, o, st, xb, p.L, s, 0, di, ps, cbuf)
            if ps == 0 and p.npass == 2:
                o.between(st, p, 1)
                memcpy(tmpl, st, _ST)
        o.finish(st, p, 1)
        return
    for ps in range(p.npass):
        o.init(st, p, 1, ps, tmpl)
        _casc_init(&cas)
        if par and nu > 1:
            # the units' states, then one conversion buffer per thread (the serial
            # path below when there is no memory for them)
            ustates = <char*>ptc_scratch_malloc(nu * _ST + (nth * _CBUF if p.conv else 0))
            if ustates != NULL:
                for u in prange(nu, num_threads=nth, schedule='static'):
                    _unit_state(p, o, xb, u, ustates + u * _ST, ps, tmpl,
                                ustates + nu * _ST + threadid() * _CBUF if p.conv else NULL)
                for u in range(nu):
                    _casc_push(&cas, o, p, ustates + u * _ST, ps)
                free(ustates)
                _casc_fold(&cas, o, p, st, ps)
                if ps == 0 and p.npass == 2:
                    o.between(st, p, 1)
                    memcpy(tmpl, st, _ST)
                continue
        for u in range(nu):
            _unit_state(p, o, xb, u, ust, ps, tmpl, cbuf)
            _casc_push(&cas, o, p, ust, ps)
        _casc_fold(&cas, o, p, st, ps)
        if ps == 0 and p.npass == 2:
            o.between(st, p, 1)
            memcpy(tmpl, st, _ST)
    o.finish(st, p, 1)


cdef inline void _store(const rplan* p, int which, const char* src, Py_ssize_t n, char* dst,
                        Py_ssize_t dstride) noexcept nogil:
    cdef Py_ssize_t ss
    if which == 0:
        if p.out0 == NULL:
            return
        ss = p.r0_size
        copy_cast(dst, p.o0_num, &dstride, src, p.r0_num, &ss, &n, 1)
    else:
        if p.out1 == NULL:
            return
        ss = p.r1_size
        copy_cast(dst, p.o1_num, &dstride, src, p.r1_num, &ss, &n, 1)


cdef void _lse_rows_f64(const double* x, Py_ssize_t ldx, double* res, Py_ssize_t rows,
                       Py_ssize_t n) noexcept nogil:
    """float64 logsumexp of ``rows`` rows of ``n`` <= 16 elements (row r at
    x + r * ldx) into res, 16 rows a pass: _tsum's operations for a row (the
    max, NaN when the row holds one and 0 when infinite; exp(x - max) by
    ptcore.exp's double-lane loop; even and odd terms in two running sums,
    added; log(0 + sum) + max), so the same bits, with the exps of the 16
    rows in one call of the lane loop."""
    cdef double m[16]
    cdef double t[256]
    cdef double a0, a1, dd
    cdef Py_ssize_t r0, nr, r, k
    cdef int nanf = 0
    r0 = 0
    while r0 < rows:
        nr = rows - r0
        if nr > 16:
            nr = 16
        for r in range(nr):
            m[r] = ptcr_max_f64(x + (r0 + r) * ldx, n, &nanf)
            if nanf:
                m[r] = NAN
            elif isinf(m[r]):
                m[r] = 0
            for k in range(n):
                t[r * n + k] = x[(r0 + r) * ldx + k] - m[r]
        ptc_exp_dv_f64(t, t, nr * n)
        for r in range(nr):
            a0 = 0
            a1 = 0
            k = 0
            while k + 2 <= n:
                a0 += t[r * n + k]
                a1 += t[r * n + k + 1]
                k += 2
            if k < n:
                a0 += t[r * n + k]
            dd = 0
            dd += a0 + a1
            res[r0 + r] = log(dd) + m[r]
        r0 += nr


cdef bint _inner_sums(const rplan* p, char* res, Py_ssize_t cnt, const char* x,
                      Py_ssize_t ks) noexcept nogil:
    """sum/mean of ``cnt`` contiguous float32/float64 rows, prod of float32/
    float64/int64 rows, sum of int64 rows, amax/amin, logsumexp, nansum and the 1- and 2-norms of
    float32/float64 rows (one row of at most
    _SEG elements per output, ``ks`` bytes apart) straight into ``res``,
    without the per-output state machinery: the same operations as
    ``_inner_one`` (zero, plus the row's pairwise sum, mean divided by N in
    double), about 60 ns less per output.  False when it does not apply."""
    cdef Py_ssize_t j
    cdef Py_ssize_t s = p.rxs[p.nr - 1] if p.nr > 0 else 0
    cdef float fs
    cdef double ds
    cdef int nanf = 0
    cdef double dd
    if (p.R != 1 or p.L > _SEG or p.conv or p.r0_sec != 0 or p.out1 != NULL
            or (p.op != R_SUM and p.op != R_MEAN and p.op != R_PROD and p.op != R_MAX
                and p.op != R_MIN and p.op != R_LSE and p.op != R_NANSUM and p.op != R_NORM2
                and p.op != R_NORM1)
            or p.npass != (2 if p.op == R_LSE else 1)):
        return False
    if p.op == R_NORM2 or p.op == R_NORM1:
        # the double state from zero plus the row's sum of squares (of
        # magnitudes), sqrt for the 2-norm: _inner_one's operations
        if p.r0_size != sizeof(double):
            return False
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float):
            for j in range(cnt):
                dd = 0
                dd += ptcr_sumsq_f32(<const float*>(x + j * ks), p.L) if p.op == R_NORM2 \
                    else ptcr_sumabs_f32(<const float*>(x + j * ks), p.L)
                (<double*>res)[j] = sqrt(dd) if p.op == R_NORM2 else dd
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double):
            for j in range(cnt):
                dd = 0
                dd += ptcr_sumsq_f64(<const double*>(x + j * ks), p.L) if p.op == R_NORM2 \
                    else ptcr_sumabs_f64(<const double*>(x + j * ks), p.L)
                (<double*>res)[j] = sqrt(dd) if p.op == R_NORM2 else dd
            return True
        return False
    if p.op == R_NANSUM:
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
            for j in range(cnt):
                fs = 0
                fs += ptcr_nansum_f32(<const float*>(x + j * ks), p.L)
                (<float*>res)[j] = fs
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
            for j in range(cnt):
                ds = 0
                ds += ptcr_nansum_f64(<const double*>(x + j * ks), p.L)
                (<double*>res)[j] = ds
            return True
        return False
    if p.op == R_LSE:
        # _inner_one's two passes: the row's max (NaN when it holds one; 0
        # when infinite), the double sum of exp(x - max) (float32: the exp
        # rows' kernel; float64: the pairwise lanes), log(sum) + max
        if p.L < 1:
            return False
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
            if p.L < 16 and ks % <Py_ssize_t>sizeof(float) == 0:
                # short rows, 16 a pass (the same operations and bits)
                ptcr_lserows_f32(<const float*>x, ks // <Py_ssize_t>sizeof(float), <float*>res,
                                 cnt, p.L)
                return True
            for j in range(cnt):
                fs = ptcr_max_f32(<const float*>(x + j * ks), p.L, &nanf)
                if nanf:
                    fs = NAN
                elif isinf(fs):
                    fs = 0
                dd = 0
                dd += ptcr_sumexp_f32(<const float*>(x + j * ks), p.L, fs)
                (<float*>res)[j] = <float>(log(dd) + <double>fs)
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
            if p.L <= 16 and ks % <Py_ssize_t>sizeof(double) == 0:
                _lse_rows_f64(<const double*>x, ks // <Py_ssize_t>sizeof(double), <double*>res,
                              cnt, p.L)
                return True
            for j in range(cnt):
                ds = ptcr_max_f64(<const double*>(x + j * ks), p.L, &nanf)
                if nanf:
                    ds = NAN
                elif isinf(ds):
                    ds = 0
                dd = 0
                dd += _tsum(&ds, x + j * ks, p.L, s, R_LSE, 0, <const char*>&ds)
                (<double*>res)[j] = log(dd) + ds
            return True
        return False
    if p.op == R_MAX or p.op == R_MIN:
        # the row's extreme, NaN when it holds one (_r_row's answer against
        # the identity -inf / inf, which a row's extreme never loses to)
        if p.L < 1:
            return False
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
            for j in range(cnt):
                fs = ptcr_max_f32(<const float*>(x + j * ks), p.L, &nanf) if p.op == R_MAX \
                    else ptcr_min_f32(<const float*>(x + j * ks), p.L, &nanf)
                (<float*>res)[j] = NAN if nanf else fs
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
            for j in range(cnt):
                ds = ptcr_max_f64(<const double*>(x + j * ks), p.L, &nanf) if p.op == R_MAX \
                    else ptcr_min_f64(<const double*>(x + j * ks), p.L, &nanf)
                (<double*>res)[j] = NAN if nanf else ds
            return True
        return False
    if p.op == R_PROD:
        # (the row's product times the initial 1, as _r_row)
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
            for j in range(cnt):
                fs = 1
                (<float*>res)[j] = fs * ptcr_prod_f32(<const float*>(x + j * ks), p.L)
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
            for j in range(cnt):
                ds = 1
                (<double*>res)[j] = ds * ptcr_prod_f64(<const double*>(x + j * ks), p.L)
            return True
        if p.acc == A_I64 and s == <Py_ssize_t>sizeof(int64_t) and p.r0_size == sizeof(int64_t):
            for j in range(cnt):
                (<int64_t*>res)[j] = ptcr_prod_i64(<const int64_t*>(x + j * ks), p.L)
            return True
        return False
    if p.acc == A_I64 and p.op == R_SUM and s == <Py_ssize_t>sizeof(int64_t) and p.r0_size == sizeof(int64_t):
        for j in range(cnt):
            (<int64_t*>res)[j] = ptcr_sum_i64(<const int64_t*>(x + j * ks), p.L)
        return True
    if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
        for j in range(cnt):
            fs = 0
            fs += ptcr_sum_f32(<const float*>(x + j * ks), p.L)
            if p.op == R_MEAN:
                fs = <float>(fs / <double>p.N)
            (<float*>res)[j] = fs
        return True
    if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
        for j in range(cnt):
            ds = 0
            ds += ptcr_sum_f64(<const double*>(x + j * ks), p.L)
            if p.op == R_MEAN:
                ds = ds / <double>p.N
            (<double*>res)[j] = ds
        return True
    return False


cdef bint _inner_args(const rplan* p, char* res0, char* res1, Py_ssize_t cnt, const char* x,
                      Py_ssize_t ks) noexcept nogil:
    """max/min with their indices (argmax/argmin), and aminmax, of ``cnt`` contiguous
    float32/float64 rows (one row of at most _SEG elements per output, ``ks``
    bytes apart) straight into ``res0`` (values) and ``res1`` (indices): the
    row kernel's (value, position), which ``_inner_one``'s merge into the
    empty state takes as they are.  False when it does not apply."""
    cdef Py_ssize_t j, k
    cdef Py_ssize_t s = p.rxs[p.nr - 1] if p.nr > 0 else 0
    cdef Py_ssize_t di = p.rix[p.nr - 1] if p.nr > 0 else 0
    cdef float fv, fw
    cdef double dv, dw
    cdef int nan0 = 0, nan1 = 0
    if (p.R != 1 or p.L > _SEG or p.L < 1 or p.conv or p.npass != 1 or p.r0_sec != 0
            or p.r1_sec != 1 or (p.op != R_ARGMAX and p.op != R_ARGMIN and p.op != R_AMINMAX)):
        return False
    if p.op == R_AMINMAX:
        # the row's min and max, both NaN when it holds one (_r_row's answer)
        if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float) \
                and p.r1_size == sizeof(float):
            for j in range(cnt):
                fv = ptcr_min_f32(<const float*>(x + j * ks), p.L, &nan0)
                fw = ptcr_max_f32(<const float*>(x + j * ks), p.L, &nan1)
                (<float*>res0)[j] = NAN if nan0 else fv
                (<float*>res1)[j] = NAN if nan1 else fw
            return True
        if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double) \
                and p.r1_size == sizeof(double):
            for j in range(cnt):
                dv = ptcr_min_f64(<const double*>(x + j * ks), p.L, &nan0)
                dw = ptcr_max_f64(<const double*>(x + j * ks), p.L, &nan1)
                (<double*>res0)[j] = NAN if nan0 else dv
                (<double*>res1)[j] = NAN if nan1 else dw
            return True
        return False
    if p.r1_size != sizeof(int64_t):
        return False
    if p.acc == A_F32 and s == <Py_ssize_t>sizeof(float) and p.r0_size == sizeof(float):
        for j in range(cnt):
            k = ptcr_argmax_f32(<const float*>(x + j * ks), p.L, &fv) if p.op == R_ARGMAX \
                else ptcr_argmin_f32(<const float*>(x + j * ks), p.L, &fv)
            (<float*>res0)[j] = fv
            (<int64_t*>res1)[j] = k * di
        return True
    if p.acc == A_F64 and s == <Py_ssize_t>sizeof(double) and p.r0_size == sizeof(double):
        for j in range(cnt):
            k = ptcr_argmax_f64(<const double*>(x + j * ks), p.L, &dv) if p.op == R_ARGMAX \
                else ptcr_argmin_f64(<const double*>(x + j * ks), p.L, &dv)
            (<double*>res0)[j] = dv
            (<int64_t*>res1)[j] = k * di
        return True
    return False


cdef void _inner_item(const rplan* p, Py_ssize_t item, Py_ssize_t nchunk, Py_ssize_t chunk,
                      bint par) noexcept nogil:
    """Outputs of chunk `item`: an index of the outer kept dims times a run of
    at most `chunk` (<= _RBUF) outputs along the innermost kept dim."""
    cdef const rops* o = &_OPS[p.acc]
    cdef int nk = p.nk, d
    cdef Py_ssize_t C = p.ksh[nk - 1] if nk > 0 else 1
    cdef Py_ssize_t outer = item // nchunk, c0 = (item - outer * nchunk) * chunk
    cdef Py_ssize_t cnt = C - c0, j, q, rem
    cdef Py_ssize_t xoff = 0, o0off = 0, o1off = 0
    cdef char st[_ST]
    cdef char* res0
    cdef char* res1
    cdef char* cbuf = NULL
    if cnt > chunk:
        cnt = chunk
    rem = outer
    d = nk - 2
    while d >= 0:
        q = rem % p.ksh[d]
        rem = rem // p.ksh[d]
        xoff += q * p.kxs[d]
        o0off += q * p.ko0[d]
        o1off += q * p.ko1[d]
        d -= 1
    if nk > 0:
        xoff += c0 * p.kxs[nk - 1]
        o0off += c0 * p.ko0[nk - 1]
        o1off += c0 * p.ko1[nk - 1]
    res0 = <char*>ptc_scratch_malloc(2 * _RBUF * _SEC + (_CBUF if p.conv else 0))
    if res0 == NULL:
        ptc_scratch_note(p.fail, 2 * _RBUF * _SEC + (_CBUF if p.conv else 0))
        return
    res1 = res0 + _RBUF * _SEC
    if p.conv:
        cbuf = res1 + _RBUF * _SEC
    if not _inner_sums(p, res0, cnt, p.x + xoff, p.kxs[nk - 1] if nk > 0 else 0) and \
            not _inner_args(p, res0, res1, cnt, p.x + xoff, p.kxs[nk - 1] if nk > 0 else 0):
        for j in range(cnt):
            _inner_one(p, o, p.x + xoff + j * (p.kxs[nk - 1] if nk > 0 else 0), st, cbuf, par)
            memcpy(res0 + j * p.r0_size, st + p.r0_sec * _SEC, p.r0_size)
            memcpy(res1 + j * p.r1_size, st + p.r1_sec * _SEC, p.r1_size)
    _store(p, 0, res0, cnt, p.out0 + o0off, p.ko0[nk - 1] if nk > 0 else 0)
    _store(p, 1, res1, cnt, p.out1 + o1off, p.ko1[nk - 1] if nk > 0 else 0)
    free(res0)


cdef void _outer_item(const rplan* p, Py_ssize_t item, Py_ssize_t nblk, Py_ssize_t w) noexcept nogil:
    """Outputs of block `item`: an index of the outer kept dims times w
    columns of the innermost kept dim; the reduced positions are swept."""
    cdef const rops* o = &_OPS[p.acc]
    cdef int nk = p.nk, nr = p.nr, d, ps, lv, nlev
    cdef Py_ssize_t C = p.ksh[nk - 1]
    cdef Py_ssize_t outer = item // nblk, j0 = (item - outer * nblk) * w
    cdef Py_ssize_t wb = C - j0, q, rem, xoff = 0, o0off = 0, o1off = 0
    cdef Py_ssize_t cs = p.kxs[nk - 1]
    cdef Py_ssize_t Lr = p.rsh[nr - 1] if nr > 0 else 1
    cdef Py_ssize_t rs = p.rxs[nr - 1] if nr > 0 else 0
    cdef Py_ssize_t di = p.rix[nr - 1] if nr > 0 else 0
    cdef Py_ssize_t R = p.R, r, k, run, lim, roff, ioff, asz = p.acc_size, shp[2], sst[2], dstst[2]
    cdef Py_ssize_t bsz
    cdef char* lev[_MAXLEV]
    cdef int64_t cnt[_MAXLEV]
    cdef char* tmpl = NULL
    cdef char* cbuf = NULL
    cdef Py_ssize_t idx[PT_MAX_DIMS]
    if wb > w:
        wb = w
    bsz = 2 * wb * _SEC
    rem = outer
    d = nk - 2
    while d >= 0:
        q = rem % p.ksh[d]
        rem = rem // p.ksh[d]
        xoff += q * p.kxs[d]
        o0off += q * p.ko0[d]
        o1off += q * p.ko1[d]
        d -= 1
    xoff += j0 * cs
    o0off += j0 * p.ko0[nk - 1]
    o1off += j0 * p.ko1[nk - 1]
    for lv in range(_MAXLEV):
        lev[lv] = NULL
    lev[0] = <char*>ptc_scratch_malloc(bsz)
    if p.npass == 2:
        tmpl = <char*>ptc_scratch_malloc(bsz)
    if p.conv:
        cbuf = <char*>ptc_scratch_malloc(_CBUF if wb * asz <= _CBUF else wb * asz)
    if lev[0] == NULL or (p.npass == 2 and tmpl == NULL) or (p.conv and cbuf == NULL):
        ptc_scratch_note(p.fail, bsz)
        _outer_free(lev, tmpl, cbuf)
        return
    for ps in range(p.npass):
        o.init(lev[0], p, wb, ps, tmpl)
        cnt[0] = 0
        nlev = 1
        for d in range(nr):
            idx[d] = 0
        for r in range(R):
            # offsets of reduced row r (all reduced dims but the last)
            roff = 0
            ioff = 0
            for d in range(nr - 1):
                roff += idx[d] * p.rxs[d]
                ioff += idx[d] * p.rix[d]
            k = 0
            while k < Lr:
                run = Lr - k
                if p.cascade and run > _CASC_K - cnt[0]:
                    run = _CASC_K - cnt[0]
                if p.conv:
                    lim = _CBUF // (wb * asz)
                    if lim < 1:
                        lim = 1
                    if run > lim:
                        run = lim
                    shp[0] = run
                    shp[1] = wb
                    sst[0] = rs
                    sst[1] = cs
                    dstst[0] = wb * asz
                    dstst[1] = asz
                    copy_cast(cbuf, p.acc_num, dstst, p.x + xoff + roff + k * rs, p.src_num, sst, shp, 2)
                    o.cols(lev[0], p, wb, cbuf, asz, wb * asz, run, ioff + k * di, di, ps)
                else:
                    o.cols(lev[0], p, wb, p.x + xoff + roff + k * rs, cs, rs, run, ioff + k * di, di, ps)
                k += run
                cnt[0] += run
                if p.cascade and cnt[0] == _CASC_K:
                    lv = 0
                    while cnt[lv] == _CASC_K:
                        if lv + 1 >= nlev:
                            if lv + 1 >= _MAXLEV:
                                break
                            if lev[lv + 1] == NULL:
                                lev[lv + 1] = <char*>ptc_scratch_malloc(bsz)
                                if lev[lv + 1] == NULL:
                                    # (the cascade cannot go on: this row never ends)
                                    ptc_scratch_note(p.fail, bsz)
                                    _outer_free(lev, tmpl, cbuf)
                                    return
                            o.init(lev[lv + 1], p, wb, ps, tmpl)
                            cnt[lv + 1] = 0
                            nlev = lv + 2
                        o.comb(lev[lv + 1], p, lev[lv], wb, ps)
                        o.init(lev[lv], p, wb, ps, tmpl)
                        cnt[lv] = 0
                        cnt[lv + 1] += 1
                        lv += 1
            # advance the reduced multi-index (dims 0..nr-2)
            d = nr - 2
            while d >= 0:
                idx[d] += 1
                if idx[d] < p.rsh[d]:
                    break
                idx[d] = 0
                d -= 1
        # fold the levels: highest level holds the earliest rows
        lv = nlev - 1
        while lv > 0:
            o.comb(lev[lv], p, lev[lv - 1], wb, ps)
            memcpy(lev[lv - 1], lev[lv], bsz)
            lv -= 1
        if ps == 0 and p.npass == 2:
            o.between(lev[0], p, wb)
            memcpy(tmpl, lev[0], bsz)
    o.finish(lev[0], p, wb)
    _store(p, 0, _sec(lev[0], p.r0_sec, wb), wb, p.out0 + o0off, p.ko0[nk - 1])
    _store(p, 1, _sec(lev[0], p.r1_sec, wb), wb, p.out1 + o1off, p.ko1[nk - 1])
    _outer_free(lev, tmpl, cbuf)


cdef void _outer_free(char** lev, char* tmpl, char* cbuf) noexcept nogil:
    cdef int lv
    for lv in range(_MAXLEV):
        free(lev[lv])
    free(tmpl)
    free(cbuf)


cdef void _run(rplan* p) noexcept nogil:
    cdef int nth = get_num_threads()
    cdef Py_ssize_t total = p.O * p.N, nitems, it, C, nchunk, chunk, w, nblk
    cdef bint big = nth > 1 and total >= parallel_grain()
    if p.O == 0:
        return
    if p.outer:
        C = p.ksh[p.nk - 1]
        w = _W
        nblk = (C + w - 1) // w
        nitems = (p.O // C) * nblk
        if big and nitems < 2 * nth and C >= 128:
            # narrower blocks so that every thread gets work (no effect on values)
            w = (C + 2 * nth - 1) // (2 * nth)
            w = (w + 15) // 16 * 16
            nblk = (C + w - 1) // w
            nitems = (p.O // C) * nblk
        if big and nitems > 1:
            for it in prange(nitems, num_threads=nth, schedule='dynamic'):
                _outer_item(p, it, nblk, w)
        else:
            for it in range(nitems):
                _outer_item(p, it, nblk, w)
        return
    C = p.ksh[p.nk - 1] if p.nk > 0 else 1
    chunk = _RBUF
    nchunk = (C + chunk - 1) // chunk
    nitems = (p.O // C) * nchunk
    if big and p.O >= 2 * nth:
        # smaller chunks until every thread has a few (no effect on values)
        while nitems < 4 * nth and chunk > 1:
            chunk = (chunk + 1) // 2
            nchunk = (C + chunk - 1) // chunk
            nitems = (p.O // C) * nchunk
        for it in prange(nitems, num_threads=nth, schedule='dynamic'):
            _inner_item(p, it, nchunk, chunk, False)
    else:
        for it in range(nitems):
            _inner_item(p, it, nchunk, chunk, big)


# --------------------------------------------------------------------------
# planning (Python-visible entry point)
# --------------------------------------------------------------------------
cdef int _acc_index(int num) except -1:
    if num == PT_BOOL:
        return A_BOOL
    if num == PT_INT64:
        return A_I64
    if num == PT_FLOAT32:
        return A_F32
    if num == PT_FLOAT64:
        return A_F64
    if num == PT_COMPLEX64:
        return A_C64
    if num == PT_COMPLEX128:
        return A_C128
    raise TypeError(f"reduce: unsupported computation type {num}")


cdef int _real_num(int num) noexcept nogil:
    if num == PT_COMPLEX64:
        return PT_FLOAT32
    if num == PT_COMPLEX128:
        return PT_FLOAT64
    return num


cdef Py_ssize_t _size_of(int num) noexcept nogil:
    if num == PT_BOOL or num == PT_UINT8 or num == PT_INT8:
        return 1
    if num == PT_INT16 or num == PT_FLOAT16 or num == PT_BFLOAT16:
        return 2
    if num == PT_INT32 or num == PT_FLOAT32 or num == PT_COMPLEX32:
        return 4
    if num == PT_COMPLEX128:
        return 16
    return 8


def alloc_reduced(_TensorBase x, tuple dims, bint keepdim, _Dtype dt):
    """A new contiguous CPU tensor of dtype ``dt`` shaped as ``x`` reduced
    over ``dims`` (sizes 1 there with ``keepdim``, dropped otherwise)."""
    cdef bint red[PT_MAX_DIMS]
    cdef int i
    for i in range(x._ndim):
        red[i] = False
    for d in dims:
        red[<int>d] = True
    return _alloc_red(x, red, keepdim, dt)


def reduce_fast(x, dim, bint keepdim, int op, int kind):
    """The common case of the sum/mean/max/min/amax/amin front-ends called
    without dtype= or out=: a CPU tensor of an ordinary dtype (not complex32
    nor uint16/32/64) reduced over all dims (``dim`` None or empty) or over
    one int ``dim`` in range.  ``kind`` 0: sum (integral inputs sum in
    int64), 1: mean (floating/complex inputs), 2: max/min (real, non-empty
    inputs).  Returns the result, or None: the front-end's general path then
    checks, refuses or handles the call.  A list or tuple of distinct int
    dims in range (autograd's sums of broadcast gradients, ``g.sum([0, 1])``)
    is reduced here too: every caller's op takes a list of dims there."""
    cdef _TensorBase t
    cdef int num, cat, nd, i, acc
    cdef Py_ssize_t n, w
    cdef bint red[PT_MAX_DIMS]
    if not isinstance(x, _TensorBase):
        return None
    t = <_TensorBase>x
    num = t._dtype.num
    cat = t._dtype._category
    if t._storage.device._type_code != 0 or not (
            num == PT_BOOL or num == PT_UINT8 or num == PT_INT8 or num == PT_INT16
            or num == PT_INT32 or num == PT_INT64 or num == PT_FLOAT16 or num == PT_BFLOAT16
            or num == PT_FLOAT32 or num == PT_FLOAT64 or num == PT_COMPLEX64
            or num == PT_COMPLEX128):
        return None
    if (kind == 1 and cat < 2) or (kind == 2 and (cat == 3 or t._numel == 0)):
        return None
    nd = t._ndim
    if (type(dim) is tuple or type(dim) is list) and len(dim) == 1 and type(dim[0]) is int:
        dim = dim[0]
    if dim is None or ((type(dim) is tuple or type(dim) is list) and len(dim) == 0):
        for i in range(nd):
            red[i] = True
        dims = tuple(range(nd))
    elif type(dim) is int:
        n = nd if nd else 1
        if not (-n <= dim < n):
            return None
        for i in range(nd):
            red[i] = False
        if nd:
            red[dim % n] = True
            dims = (dim % n,)
        else:
            dims = ()
    elif (type(dim) is tuple or type(dim) is list) and nd:
        # several int dims in range, each once (a broadcast gradient summed over its
        # leading dims): the sorted tuple the general path's _dims gives; anything
        # else (a repeated dim, one out of range, not an int) is its to refuse
        for i in range(nd):
            red[i] = False
        for e in dim:
            if type(e) is not int or not (-nd <= e < nd):
                return None
            w = e
            if w < 0:
                w += nd
            if red[w]:
                return None
            red[w] = True
        dims = tuple([i for i in range(nd) if red[i]])
    else:
        return None
    if cat <= 1:
        acc = PT_INT64
    elif num == PT_FLOAT16 or num == PT_BFLOAT16:
        acc = PT_FLOAT32
    else:
        acc = num
    out = _alloc_red(t, red, keepdim, dtype_from_num(PT_INT64 if kind == 0 and cat <= 1 else num))
    _reduce_c(t, dims, op, acc, out, None, 0.0, 2.0, False, keepdim)
    return out


def vector_norm2_fast(x, ord, dim, keepdim):
    """``linalg.vector_norm(x, ord, dim, keepdim)`` without dtype=/out= for
    its common case: a non-empty float32/float64 CPU tensor, ``ord`` the int
    or float 2, ``keepdim`` a bool, ``dim`` None, empty or one int in range
    (:func:`reduce_fast`'s 2-norm); None for anything else."""
    if not isinstance(x, _TensorBase) or (keepdim is not True and keepdim is not False):
        return None
    if not ((type(ord) is int or type(ord) is float) and ord == 2):
        return None
    cdef _TensorBase t = <_TensorBase>x
    cdef int num = t._dtype.num
    if (num != PT_FLOAT32 and num != PT_FLOAT64) or t._numel == 0:
        return None
    return reduce_fast(t, dim, keepdim, R_NORM2, 0)


cdef _TensorBase _alloc_red(_TensorBase x, const bint* red, bint keepdim, _Dtype dt):
    cdef Py_ssize_t shape[PT_MAX_DIMS]
    cdef int i, n = 0
    for i in range(x._ndim):
        if red[i]:
            if keepdim:
                shape[n] = 1
                n += 1
        else:
            shape[n] = x._shape[i]
            n += 1
    return _empty_contig(dt, n, shape, x._storage.device, False)


cdef int _out_strides(_TensorBase x, _TensorBase out, const bint* red, bint keepdim,
                      Py_ssize_t* st) except -1:
    """Byte strides of ``out`` per dim of ``x`` (0 on the reduced dims)."""
    cdef int i, k = 0
    cdef int nkept = 0
    for i in range(x._ndim):
        if not red[i]:
            nkept += 1
    if out._ndim != (x._ndim if keepdim else nkept):
        raise ValueError(f"reduce: output has {out._ndim} dims, expected "
                         f"{x._ndim if keepdim else nkept}")
    for i in range(x._ndim):
        if red[i]:
            st[i] = 0
            if keepdim:
                k += 1
        else:
            if out._shape[k] != x._shape[i]:
                raise ValueError("reduce: output shape does not match")
            st[i] = out._strides[k] * out._dtype.itemsize
            k += 1
    return 0


def reduce(_TensorBase x not None, dims, int op, int acc_num, _TensorBase out0=None, _TensorBase out1=None,
           double correction=0.0, double p=2.0, bint take_sqrt=False, bint keepdim=True):
    """Reduce ``x`` over ``dims`` (distinct non-negative ints) into the
    outputs (``out0``: values, ``out1``: second result -- indices, mean,
    max; either may be None), shaped as the result with or without
    ``keepdim``.  ``acc_num``: the computation type number."""
    _reduce_c(x, dims, op, acc_num, out0, out1, correction, p, take_sqrt, keepdim)


cdef int _reduce_c(_TensorBase x, dims, int op, int acc_num, _TensorBase out0, _TensorBase out1,
                   double correction, double p, bint take_sqrt, bint keepdim) except -1:
    cdef rplan plan                     # (on the stack: no allocation per call)
    cdef rplan* pl = &plan
    cdef Py_ssize_t os0[PT_MAX_DIMS]
    cdef Py_ssize_t os1[PT_MAX_DIMS]
    cdef int nd = x._ndim, i, j, k, n
    cdef Py_ssize_t sz, xs, t0, t1, t2, isz = x._dtype.itemsize, prod
    cdef bint red[PT_MAX_DIMS]
    cdef Py_ssize_t lidx[PT_MAX_DIMS]
    cdef bint argop, sorted_
    cdef size_t fail = 0
    memset(pl, 0, sizeof(rplan))
    pl.fail = &fail
    pl.op = op
    pl.acc = _acc_index(acc_num)
    pl.acc_num = acc_num
    pl.acc_size = _size_of(acc_num)
    pl.src_num = x._dtype.num
    pl.conv = pl.src_num != acc_num
    argop = op == R_ARGMAX or op == R_ARGMIN
    pl.npass = 2 if (op == R_VAR or op == R_LSE) else 1
    pl.cascade = (op == R_SUM or op == R_NANSUM or op == R_MEAN or op == R_NANMEAN or op == R_VAR
                  or op == R_NORM2 or op == R_NORM1 or op == R_NORMP or op == R_NORM0
                  or op == R_LSE) and pl.acc != A_I64 and pl.acc != A_BOOL
    pl.corr = correction
    pl.p = p
    pl.sqrt_ = take_sqrt
    # result types and sections
    pl.r0_sec = 0
    pl.r1_sec = 1
    if op == R_SUM and pl.acc == A_BOOL:
        pl.r0_num = PT_INT64
    elif op == R_VAR:
        pl.r0_num = _real_num(acc_num)
        pl.r0_sec = 1
        pl.r1_sec = 0
        pl.r1_num = acc_num
    elif op >= R_NORM2 and op <= R_NORM0:
        pl.r0_num = PT_FLOAT64
    else:
        pl.r0_num = acc_num
    if op == R_ARGMAX or op == R_ARGMIN:
        pl.r1_num = PT_INT64
    elif op == R_AMINMAX:
        pl.r1_num = acc_num
    elif op != R_VAR:
        pl.r1_num = PT_INT64        # unused
    pl.r0_size = _size_of(pl.r0_num)
    pl.r1_size = _size_of(pl.r1_num)
    if out0 is not None:
        pl.out0 = out0._ptr()
        pl.o0_num = out0._dtype.num
    if out1 is not None:
        pl.out1 = out1._ptr()
        pl.o1_num = out1._dtype.num
    for i in range(nd):
        red[i] = False
    for d in dims:
        red[<int>d] = True
    if out0 is not None:
        _out_strides(x, out0, red, keepdim, os0)
    if out1 is not None:
        _out_strides(x, out1, red, keepdim, os1)
    # logical index strides of the reduced dims
    prod = 1
    i = nd - 1
    while i >= 0:
        lidx[i] = prod
        if red[i]:
            prod *= x._shape[i]
        i -= 1
    pl.N = prod
    if prod == 1 and (op == R_NORM2 or op == R_NORM1 or op == R_NORMP):
        # a norm of one element per output is |x|, as torch answers it (its
        # trivial reduction), not sqrt(x ** 2): the infinity-norm's running
        # |x| (1e300 ** 2 overflows; (|x| ** 0.5) ** 2 rounds)
        pl.op = R_NORMINF
        pl.cascade = False
    pl.x = x._ptr()
    # kept dims: ordered by out0 stride (descending), coalesced
    n = 0
    for i in range(nd):
        sz = x._shape[i]
        if red[i] or sz == 1:
            continue
        xs = x._strides[i] * isz
        t0 = os0[i] if out0 is not None else 0
        t1 = os1[i] if out1 is not None else 0
        j = n
        # insertion by |out stride| descending (stable)
        t2 = t0 if out0 is not None else t1
        while j > 0 and _absz(pl.ko0[j - 1] if out0 is not None else pl.ko1[j - 1]) < _absz(t2):
            pl.ksh[j] = pl.ksh[j - 1]
            pl.kxs[j] = pl.kxs[j - 1]
            pl.ko0[j] = pl.ko0[j - 1]
            pl.ko1[j] = pl.ko1[j - 1]
            j -= 1
        pl.ksh[j] = sz
        pl.kxs[j] = xs
        pl.ko0[j] = t0
        pl.ko1[j] = t1
        n += 1
    j = 0
    for i in range(n):
        if (j > 0 and pl.kxs[j - 1] == pl.kxs[i] * pl.ksh[i] and pl.ko0[j - 1] == pl.ko0[i] * pl.ksh[i]
                and pl.ko1[j - 1] == pl.ko1[i] * pl.ksh[i]):
            pl.ksh[j - 1] *= pl.ksh[i]
            pl.kxs[j - 1] = pl.kxs[i]
            pl.ko0[j - 1] = pl.ko0[i]
            pl.ko1[j - 1] = pl.ko1[i]
        else:
            pl.ksh[j] = pl.ksh[i]
            pl.kxs[j] = pl.kxs[i]
            pl.ko0[j] = pl.ko0[i]
            pl.ko1[j] = pl.ko1[i]
            j += 1
    pl.nk = j
    pl.O = 1
    for i in range(pl.nk):
        pl.O *= pl.ksh[i]
    # reduced dims: arg ops keep logical order; others sorted by |stride|
    # descending with negative strides flipped
    n = 0
    for i in range(nd):
        sz = x._shape[i]
        if not red[i] or sz == 1:
            continue
        xs = x._strides[i] * isz
        if not argop and xs < 0:
            pl.x += xs * (sz - 1)
            xs = -xs
        j = n
        if not argop:
            while j > 0 and _absz(pl.rxs[j - 1]) < _absz(xs):
                pl.rsh[j] = pl.rsh[j - 1]
                pl.rxs[j] = pl.rxs[j - 1]
                pl.rix[j] = pl.rix[j - 1]
                j -= 1
        pl.rsh[j] = sz
        pl.rxs[j] = xs
        pl.rix[j] = lidx[i]
        n += 1
    j = 0
    for i in range(n):
        if j > 0 and pl.rxs[j - 1] == pl.rxs[i] * pl.rsh[i] and (
                not argop or pl.rix[j - 1] == pl.rix[i] * pl.rsh[i]):
            pl.rsh[j - 1] *= pl.rsh[i]
            pl.rxs[j - 1] = pl.rxs[i]
            pl.rix[j - 1] = pl.rix[i]
        else:
            pl.rsh[j] = pl.rsh[i]
            pl.rxs[j] = pl.rxs[i]
            pl.rix[j] = pl.rix[i]
            j += 1
    pl.nr = j
    if pl.N == 0:
        pl.nr = 0                 # nothing to read: every output is init -> finish
        pl.R = 0
        pl.L = 0
    else:
        pl.L = pl.rsh[pl.nr - 1] if pl.nr > 0 else 1
        pl.R = 1
        for i in range(pl.nr - 1):
            pl.R *= pl.rsh[i]
    # traversal
    pl.outer = _choose_outer(pl)
    if pl.outer:
        # innermost kept dim: the one with the smallest |x stride|
        k = 0
        for i in range(1, pl.nk):
            if _absz(pl.kxs[i]) < _absz(pl.kxs[k]):
                k = i
        if k != pl.nk - 1:
            t0 = pl.ksh[k]
            pl.ksh[k] = pl.ksh[pl.nk - 1]
            pl.ksh[pl.nk - 1] = t0
            t0 = pl.kxs[k]
            pl.kxs[k] = pl.kxs[pl.nk - 1]
            pl.kxs[pl.nk - 1] = t0
            t0 = pl.ko0[k]
            pl.ko0[k] = pl.ko0[pl.nk - 1]
            pl.ko0[pl.nk - 1] = t0
            t0 = pl.ko1[k]
            pl.ko1[k] = pl.ko1[pl.nk - 1]
            pl.ko1[pl.nk - 1] = t0
        if pl.N == 0:
            pl.R = 0
        else:
            pl.R = 1
            for i in range(pl.nr - 1):
                pl.R *= pl.rsh[i]
    ptc_kernel_enter()
    with nogil:
        try:
            _run(pl)
        finally:
            ptc_kernel_exit()
    if fail:
        scratch_error(_OP_NAMES.get(op, "reduction"), fail)
    return 0


cdef inline Py_ssize_t _absz(Py_ssize_t v) noexcept nogil:
    return -v if v < 0 else v


cdef bint _choose_outer(rplan* p) noexcept nogil:
    cdef int i, c = 0
    cdef Py_ssize_t C, cstr, rstr
    if p.nk == 0 or p.O == 0:
        return False
    for i in range(1, p.nk):
        if _absz(p.kxs[i]) < _absz(p.kxs[c]):
            c = i
    C = p.ksh[c]
    cstr = _absz(p.kxs[c])
    if p.nr == 0:
        return True
    rstr = _absz(p.rxs[p.nr - 1])
    if cstr < rstr:
        return C >= 16
    if (p.op == R_LSE and p.nr == 1 and p.rxs[0] == p.r0_size and not p.conv
            and cstr % p.r0_size == 0
            and ((p.acc == A_F32 and p.r0_size == sizeof(float))
                 or (p.acc == A_F64 and p.r0_size == sizeof(double)))):
        # logsumexp over short contiguous rows: along the rows, 16 of them a
        # pass (_inner_sums: one vector exp for several rows), not as strided
        # columns (a scalar exp per element)
        return False
    return p.L < 16 and C >= 16


OPS = {
    "sum": R_SUM, "nansum": R_NANSUM, "mean": R_MEAN, "nanmean": R_NANMEAN, "prod": R_PROD,
    "max": R_MAX, "min": R_MIN, "argmax": R_ARGMAX, "argmin": R_ARGMIN, "aminmax": R_AMINMAX,
    "all": R_ALL, "any": R_ANY, "var": R_VAR, "norm2": R_NORM2, "norm1": R_NORM1, "normp": R_NORMP,
    "norminf": R_NORMINF, "normninf": R_NORMNINF, "norm0": R_NORM0, "logsumexp": R_LSE,
}


cdef dict _OP_NAMES = {v: k for k, v in OPS.items()}


include "_reduce_scan.pxi"
include "_reduce_select.pxi"
include "_reduce_softmax_masked.pxi"


# ==========================================================================
# gradient clipping over many tensors (nn.utils.clip_grad_norm_)
# ==========================================================================
cdef bint _clip_ok(list ts, int* num) except -1:
    """All of ``ts`` contiguous CPU float32 (or all float64) tensors with
    their version counters free to bump; sets ``num``."""
    cdef _TensorBase t
    num[0] = -1
    for o in ts:
        if type(o) is not _TensorBase and not isinstance(o, _TensorBase):
            return False
        t = <_TensorBase>o
        if t._storage.device._type_code != 0 or not t._is_contig():
            return False
        if num[0] < 0:
            num[0] = t._dtype.num
        if t._dtype.num != num[0] or (num[0] != PT_FLOAT32 and num[0] != PT_FLOAT64):
            return False
    return num[0] >= 0


def norm2_total(list tensors):
    """The 2-norm of the 2-norms of ``tensors`` (as ``vector_norm(stack(
    [vector_norm(t) for t in tensors]))``: each tensor's norm rounded to its
    dtype, their squares summed in double), as a Python float; None unless
    every tensor is a contiguous CPU float32 tensor (or every one float64)."""
    cdef int num
    cdef _TensorBase t
    cdef double total = 0, s
    cdef float nf
    cdef char* p
    if not tensors or not _clip_ok(tensors, &num):
        return None
    for o in tensors:
        t = <_TensorBase>o
        p = t._ptr()
        if num == PT_FLOAT32:
            ptc_kernel_enter()
            with nogil:
                try:
                    s = ptcr_sumsq_f32(<const float*>p, t._numel)
                finally:
                    ptc_kernel_exit()
            nf = <float>sqrt(s)
            total += <double>nf * nf
        else:
            ptc_kernel_enter()
            with nogil:
                try:
                    s = sqrt(ptcr_sumsq_f64(<const double*>p, t._numel))
                finally:
                    ptc_kernel_exit()
            total += s * s
    return sqrt(total)


def norm2_each(list tensors, bint grad_on):
    """``vector_norm(t)`` (the 2-norm of all elements) of every tensor of
    ``tensors`` (``_foreach_norm``), each a 0-d tensor of its dtype, by the
    reduction's own sum of squares (the values vector_norm gives); None
    unless every tensor is a contiguous CPU float32/float64 tensor that
    autograd does not record (``grad_on``: grad mode is on) and that the
    reduction would sum in one piece (one thread, or below the parallel grain)."""
    cdef _TensorBase t, r
    cdef double s
    cdef char* x
    cdef Py_ssize_t n
    cdef bint one_piece = get_num_threads() <= 1
    cdef Py_ssize_t grain = parallel_grain()
    for o in tensors:
        if not isinstance(o, _TensorBase):
            return None
        t = <_TensorBase>o
        if t._storage.device._type_code != 0 or not t._is_contig() \
                or (t._dtype.num != PT_FLOAT32 and t._dtype.num != PT_FLOAT64) \
                or (grad_on and t._requires_grad) or not (one_piece or t._numel < grain):
            return None
    cdef list out = []
    for o in tensors:
        t = <_TensorBase>o
        r = _empty_contig(t._dtype, 0, NULL, t._storage.device, False)
        s = 0
        x = t._ptr()
        n = t._numel
        if t._dtype.num == PT_FLOAT32:
            if n:
                ptc_kernel_enter()
                with nogil:
                    try:
                        s = ptcr_sumsq_f32(<const float*>x, n)
                    finally:
                        ptc_kernel_exit()
            (<float*>r._ptr())[0] = <float>sqrt(s)
        else:
            if n:
                ptc_kernel_enter()
                with nogil:
                    try:
                        s = ptcr_sumsq_f64(<const double*>x, n)
                    finally:
                        ptc_kernel_exit()
            (<double*>r._ptr())[0] = sqrt(s)
        out.append(r)
    return out


def scale_all_(list tensors, double factor):
    """t *= factor (rounded to the dtype) in place for every tensor of
    ``tensors`` (as :func:`norm2_total` requires); False when they do not
    qualify (nothing written)."""
    cdef int num
    cdef _TensorBase t
    cdef Py_ssize_t j
    cdef double* d
    cdef char* p
    if not tensors or not _clip_ok(tensors, &num):
        return False
    for o in tensors:
        t = <_TensorBase>o
        p = t._ptr()
        if num == PT_FLOAT32:
            ptc_kernel_enter()
            with nogil:
                try:
                    ptcr_scale_f32(<float*>p, t._numel, <float>factor)
                finally:
                    ptc_kernel_exit()
        else:
            d = <double*>p
            ptc_kernel_enter()
            with nogil:
                try:
                    for j in range(t._numel):
                        d[j] = d[j] * factor
                finally:
                    ptc_kernel_exit()
        ptc_bump_version(t)
    return True


# ==========================================================================
# cdist of small matrices (p = 2, the direct form)
# ==========================================================================
ctypedef fused flt:
    float
    double


cdef void _pair_diffs(const flt* a, const flt* b, flt* d, Py_ssize_t P, Py_ssize_t R,
                      Py_ssize_t M) noexcept nogil:
    """``d[i, j, :] = a[i, :] - b[j, :]`` for contiguous ``a`` (P, M), ``b``
    (R, M), ``d`` (P, R, M)."""
    cdef Py_ssize_t i, j, k
    cdef const flt* ai
    cdef const flt* bj
    for i in range(P):
        ai = a + i * M
        for j in range(R):
            bj = b + j * M
            for k in range(M):
                d[k] = ai[k] - bj[k]
            d += M


def cdist2_small(x1, x2):
    """``cdist(x1, x2)`` with p = 2 in the direct form for two contiguous CPU
    float32/float64 matrices of one dtype (at most 25 rows each: the form
    torch's default mode takes), at least one row and column: the
    differences ``x1[i] - x2[j]`` written into a ``(P, R, M)`` buffer, then
    the 2-norm reduction of its last dim -- the values of the general path's
    ``vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), dim=-1)`` -- into a new
    ``(P, R)`` tensor; None for anything else."""
    if not isinstance(x1, _TensorBase) or not isinstance(x2, _TensorBase):
        return None
    cdef _TensorBase a = <_TensorBase>x1, b = <_TensorBase>x2
    cdef int num = a._dtype.num
    if a._ndim != 2 or b._ndim != 2 or b._dtype.num != num \
            or (num != PT_FLOAT32 and num != PT_FLOAT64) \
            or a._storage.device._type_code != 0 or b._storage.device._type_code != 0 \
            or not a._is_contig() or not b._is_contig():
        return None
    cdef Py_ssize_t shape[3]
    shape[0] = a._shape[0]
    shape[1] = b._shape[0]
    shape[2] = a._shape[1]
    if b._shape[1] != shape[2] or shape[2] < 1 or not (0 < shape[0] <= 25) \
            or not (0 < shape[1] <= 25):
        return None
    cdef _TensorBase d = _empty_contig(a._dtype, 3, shape, a._storage.device, False)
    cdef _TensorBase out = _empty_contig(a._dtype, 2, shape, a._storage.device, False)
    cdef char* pa = a._ptr()
    cdef char* pb = b._ptr()
    cdef char* pd = d._ptr()
    ptc_kernel_enter()
    with nogil:
        try:
            if num == PT_FLOAT32:
                _pair_diffs(<const float*>pa, <const float*>pb, <float*>pd, shape[0], shape[1],
                            shape[2])
            else:
                _pair_diffs(<const double*>pa, <const double*>pb, <double*>pd, shape[0],
                            shape[1], shape[2])
        finally:
            ptc_kernel_exit()
    _reduce_c(d, (2,), R_NORM2, num, out, None, 0.0, 2.0, False, False)
    return out
