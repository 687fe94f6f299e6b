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
  innermost one, otherwise by sweeping input rows into accumulator rows.

* **Selection** (median, nanmedian, quantile) works on contiguous rows
  of double or int64 values (the public layer prepares them); mode is
  ``_sort.mode_rows``, with the sort torch's mode runs.

The hottest float32/float64 loops (contiguous sums, max/argmax, column
max, the softmax passes with a vectorised ``expf``) are small C functions
written once as a template over GCC vector extensions and instantiated for
AVX-512F, AVX2 and the baseline ISA (GCC on x86-64; the baseline only
elsewhere, plain C loops without vector extensions); the widest one the
CPU supports is chosen at import (``_simd_level`` lets tests run each).
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint64_t, INT64_MIN, INT64_MAX
from libc.string cimport memcpy, memset
from libc.stdlib cimport malloc, free, qsort
from libc.math cimport sqrt, pow, fabs, exp, log, log1p, isnan, isinf, isfinite, INFINITY, NAN, HUGE_VAL
from cython.parallel cimport prange

from ptcore._ops._types cimport (
    PT_BOOL, PT_UINT8, PT_INT8, PT_INT16, PT_INT32, PT_INT64, PT_FLOAT16,
    PT_BFLOAT16, PT_FLOAT32, PT_FLOAT64, PT_COMPLEX64, PT_COMPLEX128,
    PT_COMPLEX32, PT_NUM_TYPES, PT_MAX_DIMS,
)
from ptcore._ops._parallel cimport get_num_threads, parallel_grain
from ptcore._ops._copy cimport copy_cast
from ptcore._tensor cimport ptc_kernel_enter, ptc_kernel_exit
from ptcore._tensor cimport _TensorBase, ptc_bump_version, _empty_contig, dtype as _Dtype, dtype_from_num


# ==========================================================================
# C micro-kernels (float32 / float64, contiguous)
# ==========================================================================
cdef extern from *:
    """
    #include <stdint.h>
    #include <stddef.h>
    #include <string.h>
    #include <math.h>

    /* One template of vector kernels, instantiated per instruction set with
       that set's native vector width (GCC vector extensions): AVX-512F (16
       floats), AVX2 (8) and the baseline (4: SSE2 / NEON ...).  ptcr_select()
       picks the widest the CPU supports into a table at import.  (Generic
       vectors wider than the target's registers are split or even
       scalarised by GCC, so one width cannot serve all; target_clones does
       not help because vector ops are lowered for the default target before
       cloning.)  Streaming sums use 8-float vectors even with AVX-512
       (measured ~10% faster on AMD Zen 4). */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC diagnostic ignored "-Wpsabi"
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    #  include <immintrin.h>
    #  define PTCR_MULTI 1
    #else
    #  define PTCR_MULTI 0
    #endif
    #if defined(__GNUC__)
    #  define PTCR_VEC 1
    #  define PTCR_AI static inline __attribute__((always_inline))
    #else
    #  define PTCR_VEC 0
    #  define PTCR_AI static inline
    #endif

    #define PTCR_BLOCK 1024          /* leaf of the pairwise sums */

    #if PTCR_VEC
    /* binary-counter cascade of vector partial sums (pairwise per lane) */
    #define PTCR_CASC_PUSH(VT, stack, top, count, val) do { VT s_ = (val); \\
        int64_t k_ = (count)++; while (k_ & 1) { s_ = stack[--(top)] + s_; k_ >>= 1; } \\
        stack[(top)++] = s_; } while (0)
    #define PTCR_CASC_FOLD(VT, stack, top, out) do { VT s_ = {0}; if ((top) > 0) { \\
        s_ = stack[(top) - 1]; for (int i_ = (top) - 2; i_ >= 0; i_--) s_ = stack[i_] + s_; } \\
        (out) = s_; } while (0)
    /* NAME(x, n[, mean]) -> RT: pairwise sum of F(x) in lanes VT (NL wide) */
    #define PTCR_VSUM(NAME, T, RT, VT, NL, LD, F, FS, EXTRA, EXTRA_INIT) \\
    static RT NAME(const T* x, ptrdiff_t n EXTRA) { \\
        VT stack[64]; int top = 0; int64_t count = 0; ptrdiff_t i = 0; VT tot; RT r = 0; \\
        EXTRA_INIT \\
        for (; i + PTCR_BLOCK <= n; i += PTCR_BLOCK) { \\
            const T* p = x + i; VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}; \\
            for (int j = 0; j < PTCR_BLOCK; j += 4 * (NL)) { \\
                a0 += F(LD(p + j)); a1 += F(LD(p + j + (NL))); \\
                a2 += F(LD(p + j + 2 * (NL))); a3 += F(LD(p + j + 3 * (NL))); } \\
            PTCR_CASC_PUSH(VT, stack, top, count, (a0 + a1) + (a2 + a3)); } \\
        if (i < n) { \\
            ptrdiff_t m = n - i, j = 0; const T* p = x + i; VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}; \\
            for (; j + 4 * (NL) <= m; j += 4 * (NL)) { \\
                a0 += F(LD(p + j)); a1 += F(LD(p + j + (NL))); \\
                a2 += F(LD(p + j + 2 * (NL))); a3 += F(LD(p + j + 3 * (NL))); } \\
            for (; j + (NL) <= m; j += (NL)) a0 += F(LD(p + j)); \\
            for (int k = 0; j < m; j++, k++) a1[k] += FS((RT)p[j]); \\
            PTCR_CASC_PUSH(VT, stack, top, count, (a0 + a1) + (a2 + a3)); } \\
        PTCR_CASC_FOLD(VT, stack, top, tot); \\
        for (int w = (NL) / 2; w >= 1; w /= 2) for (int k = 0; k < w; k++) tot[k] += tot[k + w]; \\
        r = tot[0]; return r; }
    #define PTCR_ID(v) (v)
    #define PTCR_SQ(v) ((v) * (v))
    #define PTCR_DEV(v) (((v) - vmean) * ((v) - vmean))
    #define PTCR_DEVS(v) (((v) - mean) * ((v) - mean))
    #define PTCR_NOEXTRA
    #define PTCR_MEANARG , double mean

    /* acc[j] = ext(acc[j], x[j]) over nrows rows, NaN propagating */
    #define PTCR_COLEXT(NAME, T, VT, IT, NL, LD, ST, SEL, CMP) \\
    static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \\
        for (ptrdiff_t r = 0; r < nrows; r++) { \\
            const T* xr = x + r * rs; ptrdiff_t j = 0; \\
            for (; j + (NL) <= n; j += (NL)) { VT a = LD(acc + j), v = LD(xr + j); \\
                VT m = SEL((IT)(v CMP a), v, a); ST(acc + j, SEL((IT)(v != v), v, m)); } \\
            for (; j < n; j++) { T v = xr[j]; if (v CMP acc[j] || v != v) acc[j] = v; } } }

    /* max/min value (*nan: a NaN was seen) and first index of the extreme
       (first NaN wins) */
    #define PTCR_EXT(NAME, ANAME, T, VT, IT, NL, LD, SEL, CMP) \\
    static T NAME(const T* x, ptrdiff_t n, int* nan) { \\
        ptrdiff_t i = 0; T best = x[0]; int hasnan = 0; \\
        if (n >= (NL)) { \\
            /* four independent running extremes: the compare-select chain of \\
               one vector held the loop to a lane per cycle (the NaNs apart) */ \\
            VT m = LD(x); IT nn = (IT)(m != m); VT m1 = m, m2 = m, m3 = m; \\
            for (i = (NL); i + 4 * (NL) <= n; i += 4 * (NL)) { \\
                VT v0 = LD(x + i), v1 = LD(x + i + (NL)), v2 = LD(x + i + 2 * (NL)), \\
                   v3 = LD(x + i + 3 * (NL)); \\
                m = SEL((IT)(v0 CMP m), v0, m); m1 = SEL((IT)(v1 CMP m1), v1, m1); \\
                m2 = SEL((IT)(v2 CMP m2), v2, m2); m3 = SEL((IT)(v3 CMP m3), v3, m3); \\
                nn |= (IT)(v0 != v0) | (IT)(v1 != v1) | (IT)(v2 != v2) | (IT)(v3 != v3); } \\
            for (; i + (NL) <= n; i += (NL)) { VT v = LD(x + i); \\
                m = SEL((IT)(v CMP m), v, m); nn |= (IT)(v != v); } \\
            m = SEL((IT)(m1 CMP m), m1, m); m2 = SEL((IT)(m3 CMP m2), m3, m2); \\
            m = SEL((IT)(m2 CMP m), m2, m); \\
            best = m[0]; for (int k = 0; k < (NL); k++) { if (m[k] CMP best) best = m[k]; hasnan |= (nn[k] != 0); } \\
        } \\
        for (; i < n; i++) { T v = x[i]; if (v CMP best) best = v; hasnan |= (v != v); } \\
        *nan = hasnan; return best; } \\
    static ptrdiff_t ANAME(const T* x, ptrdiff_t n, T* val) { \\
        ptrdiff_t i = 0, bi = 0; T best = x[0]; int hasnan = 0; \\
        if (n >= (NL)) { \\
            IT idx, cur, step; for (int k = 0; k < (NL); k++) { idx[k] = k; step[k] = (NL); } cur = idx; \\
            VT m = LD(x); IT nn = (IT)(m != m); \\
            for (i = (NL); i + (NL) <= n; i += (NL)) { VT v = LD(x + i); cur += step; \\
                IT c = (IT)(v CMP m); m = SEL(c, v, m); idx = (idx & ~c) | (cur & c); nn |= (IT)(v != v); } \\
            best = m[0]; bi = idx[0]; \\
            for (int k = 0; k < (NL); k++) { hasnan |= (nn[k] != 0); \\
                if (m[k] CMP best || (m[k] == best && idx[k] < bi)) { best = m[k]; bi = idx[k]; } } \\
        } else { i = 1; hasnan = x[0] != x[0]; } \\
        for (; i < n; i++) { T v = x[i]; if (v CMP best) { best = v; bi = i; } hasnan |= (v != v); } \\
        if (hasnan) { for (i = 0; i < n; i++) if (x[i] != x[i]) { *val = x[i]; return i; } } \\
        *val = best; return bi; }

    /* expf: Cephes polynomial after Cody-Waite reduction (<= 1 ulp for
       normal results), exact 0 below -104 (selected: computing it as an
       underflowing product costs a microcode assist per lane on some
       CPUs, doubling a causal softmax's time), inf above 88.8, NaN kept */
    #define PTCR_EXP_GENERIC(S) \\
    PTCR_AI S##_vf S##_exp(S##_vf x) { \\
        x = S##_self((S##_vi)(x > 88.8f), 88.8f + (S##_vf){0}, x); \\
        S##_vi lo_ = (S##_vi)(x < -104.0f); \\
        x = S##_self(lo_, (S##_vf){0}, x); \\
        S##_vf t = x * 1.44269504088896341f + 12582912.0f; \\
        S##_vf fn = t - 12582912.0f; \\
        S##_vf r = x - fn * 0.693359375f; \\
        r = r - fn * -2.12194440e-4f; \\
        S##_vf p = 1.9875691500e-4f + (S##_vf){0}; \\
        p = p * r + 1.3981999507e-3f; \\
        p = p * r + 8.3334519073e-3f; \\
        p = p * r + 4.1665795894e-2f; \\
        p = p * r + 1.6666665459e-1f; \\
        p = p * r + 5.0000001201e-1f; \\
        S##_vf y = p * (r * r) + r + 1.0f; \\
        S##_vi n = __builtin_convertvector(fn, S##_vi); \\
        S##_vi n1 = n >> 1, n2 = n - n1; \\
        S##_vf s1 = (S##_vf)((n1 + 127) << 23), s2 = (S##_vf)((n2 + 127) << 23); \\
        return S##_self(lo_, (S##_vf){0}, (y * s1) * s2); }

    /* the same expf with AVX-512's own operations: x clamped above by one
       min, the lanes below -104 zeroed by the mask of a masked scalef that
       applies the exponent (exact, one rounding in the subnormal range, as
       the two-step product), products and sums unfused as in the generic
       function -- so bitwise its values, as at the other instruction-set
       levels (tests/ops/test_reductions.py) -- in ~20 vector operations
       where its lowering took ~30 */
    #define PTCR_EXP_AVX512(S) \\
    PTCR_AI S##_vf S##_exp(S##_vf xv) { \\
        __m512 x = _mm512_min_ps(_mm512_set1_ps(88.8f), (__m512)xv); \\
        __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ); \\
        __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), \\
                                 _mm512_set1_ps(12582912.0f)); \\
        __m512 fn = _mm512_sub_ps(t, _mm512_set1_ps(12582912.0f)); \\
        __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(fn, _mm512_set1_ps(0.693359375f))); \\
        r = _mm512_sub_ps(r, _mm512_mul_ps(fn, _mm512_set1_ps(-2.12194440e-4f))); \\
        __m512 p = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(1.9875691500e-4f), r), \\
                                 _mm512_set1_ps(1.3981999507e-3f)); \\
        p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(8.3334519073e-3f)); \\
        p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(4.1665795894e-2f)); \\
        p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.6666665459e-1f)); \\
        p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(5.0000001201e-1f)); \\
        __m512 y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), \\
                                 _mm512_set1_ps(1.0f)); \\
        return (S##_vf)_mm512_maskz_scalef_ps(keep, y, fn); }
    #define PTCR_EXPDEF_ptcr512 PTCR_EXP_AVX512
    #define PTCR_EXPDEF_ptcr256 PTCR_EXP_GENERIC
    #define PTCR_EXPDEF_ptcrbase PTCR_EXP_GENERIC
    typedef float ptcr_v8f __attribute__((vector_size(32)));
    typedef float ptcr_v4f __attribute__((vector_size(16)));
    /* the template: S = suffix, W = float lanes of compute vectors, WS =
       float lanes of streaming vectors */
    #define PTCR_TEMPLATE(S, W, WS) \\
    typedef float S##_vf __attribute__((vector_size(4 * (W)))); \\
    typedef int32_t S##_vi __attribute__((vector_size(4 * (W)))); \\
    typedef double S##_vd __attribute__((vector_size(4 * (W)))); \\
    typedef int64_t S##_vl __attribute__((vector_size(4 * (W)))); \\
    typedef float S##_hvf __attribute__((vector_size(2 * (W)))); \\
    typedef float S##_sf __attribute__((vector_size(4 * (WS)))); \\
    typedef double S##_sd __attribute__((vector_size(4 * (WS)))); \\
    typedef int64_t S##_sl __attribute__((vector_size(4 * (WS)))); \\
    typedef int32_t S##_si __attribute__((vector_size(4 * (WS)))); \\
    typedef float S##_hf __attribute__((vector_size(2 * (WS)))); \\
    PTCR_AI S##_vf S##_ldf(const float* p) { S##_vf v; memcpy(&v, p, sizeof v); return v; } \\
    PTCR_AI void S##_stf(float* p, S##_vf v) { memcpy(p, &v, sizeof v); } \\
    PTCR_AI S##_vd S##_ldd(const double* p) { S##_vd v; memcpy(&v, p, sizeof v); return v; } \\
    PTCR_AI void S##_std(double* p, S##_vd v) { memcpy(p, &v, sizeof v); } \\
    PTCR_AI S##_sf S##_ldsf(const float* p) { S##_sf v; memcpy(&v, p, sizeof v); return v; } \\
    PTCR_AI void S##_stsf(float* p, S##_sf v) { memcpy(p, &v, sizeof v); } \\
    PTCR_AI S##_sd S##_ldsd(const double* p) { S##_sd v; memcpy(&v, p, sizeof v); return v; } \\
    PTCR_AI void S##_stsd(double* p, S##_sd v) { memcpy(p, &v, sizeof v); } \\
    PTCR_AI S##_sd S##_ldhf_sd(const float* p) \\
    { S##_hf v; memcpy(&v, p, sizeof v); return __builtin_convertvector(v, S##_sd); } \\
    PTCR_AI S##_vf S##_self(S##_vi m, S##_vf a, S##_vf b) { return (S##_vf)(((S##_vi)a & m) | ((S##_vi)b & ~m)); } \\
    PTCR_AI S##_vd S##_seld(S##_vl m, S##_vd a, S##_vd b) { return (S##_vd)(((S##_vl)a & m) | ((S##_vl)b & ~m)); } \\
    PTCR_AI S##_sd S##_absd(S##_sd v) { return (S##_sd)((S##_sl)v & (0x7fffffffffffffffLL + (S##_sl){0})); } \\
    PTCR_AI S##_sf S##_abssf(S##_sf v) { return (S##_sf)((S##_si)v & (0x7fffffff + (S##_si){0})); } \\
    PTCR_VSUM(S##_sum_f32, float, float, S##_sf, (WS), S##_ldsf, PTCR_ID, PTCR_ID, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sum_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_ID, PTCR_ID, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sumsq_f32, float, float, S##_sf, (WS), S##_ldsf, PTCR_SQ, PTCR_SQ, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sumsq_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_SQ, PTCR_SQ, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sumabs_f32, float, float, S##_sf, (WS), S##_ldsf, S##_abssf, fabsf, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sumabs_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, S##_absd, fabs, PTCR_NOEXTRA, ) \\
    PTCR_VSUM(S##_sumdev_f32, float, double, S##_sd, (WS) / 2, S##_ldhf_sd, PTCR_DEV, PTCR_DEVS, PTCR_MEANARG, \\
              S##_sd vmean = mean + (S##_sd){0};) \\
    PTCR_VSUM(S##_sumdev_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_DEV, PTCR_DEVS, PTCR_MEANARG, \\
              S##_sd vmean = mean + (S##_sd){0};) \\
    static void S##_addrows_f32(float* acc, const float* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \\
        ptrdiff_t r = 0; \\
        for (; r + 4 <= nrows; r += 4) { \\
            const float *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs; ptrdiff_t j = 0; \\
            for (; j + (WS) <= n; j += (WS)) S##_stsf(acc + j, S##_ldsf(acc + j) + \\
                ((S##_ldsf(x0 + j) + S##_ldsf(x1 + j)) + (S##_ldsf(x2 + j) + S##_ldsf(x3 + j)))); \\
            for (; j < n; j++) acc[j] += (x0[j] + x1[j]) + (x2[j] + x3[j]); } \\
        for (; r < nrows; r++) { const float* x0 = x + r * rs; ptrdiff_t j = 0; \\
            for (; j + (WS) <= n; j += (WS)) S##_stsf(acc + j, S##_ldsf(acc + j) + S##_ldsf(x0 + j)); \\
            for (; j < n; j++) acc[j] += x0[j]; } } \\
    static void S##_addrows_f64(double* acc, const double* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \\
        ptrdiff_t r = 0; \\
        for (; r + 4 <= nrows; r += 4) { \\
            const double *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs; ptrdiff_t j = 0; \\
            for (; j + (WS) / 2 <= n; j += (WS) / 2) S##_stsd(acc + j, S##_ldsd(acc + j) + \\
                ((S##_ldsd(x0 + j) + S##_ldsd(x1 + j)) + (S##_ldsd(x2 + j) + S##_ldsd(x3 + j)))); \\
            for (; j < n; j++) acc[j] += (x0[j] + x1[j]) + (x2[j] + x3[j]); } \\
        for (; r < nrows; r++) { const double* x0 = x + r * rs; ptrdiff_t j = 0; \\
            for (; j + (WS) / 2 <= n; j += (WS) / 2) S##_stsd(acc + j, S##_ldsd(acc + j) + S##_ldsd(x0 + j)); \\
            for (; j < n; j++) acc[j] += x0[j]; } } \\
    PTCR_EXT(S##_max_f32, S##_argmax_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_self, >) \\
    PTCR_EXT(S##_min_f32, S##_argmin_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_self, <) \\
    PTCR_EXT(S##_max_f64, S##_argmax_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_seld, >) \\
    PTCR_EXT(S##_min_f64, S##_argmin_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_seld, <) \\
    PTCR_COLEXT(S##_colmaxn_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_stf, S##_self, >) \\
    PTCR_COLEXT(S##_colminn_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_stf, S##_self, <) \\
    PTCR_COLEXT(S##_colmaxn_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_std, S##_seld, >) \\
    PTCR_COLEXT(S##_colminn_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_std, S##_seld, <) \\
    PTCR_EXPDEF_##S(S) \\
    /* lanes k and k + W/2 added, then k and k + W/4, ..., down to lanes 0 and 1 \\
       (a lane loop over the vector in memory stalled on store forwarding: \\
       ~150 cycles a row of a softmax); halves moved through registers */ \\
    PTCR_AI float S##_hsumf(S##_vf a) { \\
        ptcr_v4f q; \\
        if (sizeof(S##_vf) == 64) { ptcr_v8f lo, hi; memcpy(&lo, &a, 32); \\
            memcpy(&hi, (const char*)&a + 32, 32); lo = lo + hi; \\
            ptcr_v4f l4, h4; memcpy(&l4, &lo, 16); memcpy(&h4, (const char*)&lo + 16, 16); \\
            q = l4 + h4; } \\
        else if (sizeof(S##_vf) == 32) { ptcr_v4f l4, h4; memcpy(&l4, &a, 16); \\
            memcpy(&h4, (const char*)&a + 16, 16); q = l4 + h4; } \\
        else memcpy(&q, &a, 16); \\
        return (q[0] + q[2]) + (q[1] + q[3]); } \\
    static float S##_exp1(float x) { S##_vf v = {0}; v[0] = x; return S##_exp(v)[0]; } \\
    static float S##_expsum_f32(const float* x, float* y, ptrdiff_t n, float m) { \\
        ptrdiff_t j = 0; S##_vf acc = {0}; \\
        for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - m); \\
            if (y) S##_stf(y + j, e); acc += e; } \\
        float s = S##_hsumf(acc); \\
        if (j < n && n >= (W)) { /* the tail as the row's last full vector (one exp, not \\
                        one per element; the lanes before j are rewritten with the same values), \\
                        its new lanes added in order as before */ \\
            S##_vf e = S##_exp(S##_ldf(x + n - (W)) - m); \\
            if (y) S##_stf(y + n - (W), e); \\
            for (ptrdiff_t k = (W) - (n - j); k < (W); k++) s += e[k]; \\
            j = n; } \\
        if (j < n) { /* a row shorter than a vector: one exp over its lanes, in order \\
                        (the zero padding is neither stored nor summed) */ \\
            S##_vf v = {0}; memcpy(&v, x + j, (size_t)(n - j) * sizeof(float)); \\
            S##_vf e = S##_exp(v - m); \\
            for (ptrdiff_t k = 0; k < n - j; k++) { if (y) y[j + k] = e[k]; s += e[k]; } \\
            j = n; } \\
        return s; } \\
    static double S##_sumexp_f32(const float* x, ptrdiff_t n, float m) { \\
        ptrdiff_t j = 0; S##_vd a0 = {0}, a1 = {0}; double s = 0; \\
        for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - m); \\
            S##_hvf lo, hi; memcpy(&lo, &e, sizeof lo); memcpy(&hi, (char*)&e + sizeof lo, sizeof hi); \\
            a0 += __builtin_convertvector(lo, S##_vd); a1 += __builtin_convertvector(hi, S##_vd); } \\
        a0 += a1; for (int k = 0; k < (W) / 2; k++) s += a0[k]; \\
        if (j < n && n >= (W)) { S##_vf e = S##_exp(S##_ldf(x + n - (W)) - m); \\
            for (ptrdiff_t k = (W) - (n - j); k < (W); k++) s += (double)e[k]; \\
            j = n; } \\
        if (j < n) { S##_vf v = {0}; memcpy(&v, x + j, (size_t)(n - j) * sizeof(float)); \\
            S##_vf e = S##_exp(v - m); \\
            for (ptrdiff_t k = 0; k < n - j; k++) s += (double)e[k]; \\
            j = n; } \\
        return s; } \\
    static void S##_scale_f32(float* y, ptrdiff_t n, float r) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) S##_stf(y + j, S##_ldf(y + j) * r); \\
        for (; j < n; j++) y[j] *= r; } \\
    static void S##_subsub_f32(const float* x, float* y, ptrdiff_t n, float m, float c) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) S##_stf(y + j, (S##_ldf(x + j) - m) - c); \\
        for (; j < n; j++) y[j] = (x[j] - m) - c; } \\
    static void S##_colmax_f32(float* acc, const float* x, ptrdiff_t n) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) { S##_vf a = S##_ldf(acc + j), v = S##_ldf(x + j); \\
            S##_stf(acc + j, S##_self((S##_vi)(v > a), v, a)); } \\
        for (; j < n; j++) if (x[j] > acc[j]) acc[j] = x[j]; } \\
    static void S##_colexpsum_f32(float* s, const float* m, const float* x, float* y, ptrdiff_t n) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - S##_ldf(m + j)); \\
            if (y) S##_stf(y + j, e); S##_stf(s + j, S##_ldf(s + j) + e); } \\
        for (; j < n; j++) { float e = S##_exp1(x[j] - m[j]); if (y) y[j] = e; s[j] += e; } } \\
    static void S##_colscale_f32(float* y, const float* r, ptrdiff_t n) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) S##_stf(y + j, S##_ldf(y + j) * S##_ldf(r + j)); \\
        for (; j < n; j++) y[j] *= r[j]; } \\
    static void S##_colsubsub_f32(const float* x, float* y, const float* m, const float* c, ptrdiff_t n) { \\
        ptrdiff_t j = 0; \\
        for (; j + (W) <= n; j += (W)) \\
            S##_stf(y + j, (S##_ldf(x + j) - S##_ldf(m + j)) - S##_ldf(c + j)); \\
        for (; j < n; j++) y[j] = (x[j] - m[j]) - c[j]; }

    #define PTCR_TABLE(S) { S##_sum_f32, S##_sum_f64, S##_sumsq_f32, S##_sumsq_f64, \\
        S##_sumabs_f32, S##_sumabs_f64, S##_sumdev_f32, S##_sumdev_f64, \\
        S##_addrows_f32, S##_addrows_f64, S##_max_f32, S##_min_f32, S##_max_f64, S##_min_f64, \\
        S##_argmax_f32, S##_argmin_f32, S##_argmax_f64, S##_argmin_f64, \\
        S##_colmaxn_f32, S##_colminn_f32, S##_colmaxn_f64, S##_colminn_f64, \\
        S##_exp1, S##_expsum_f32, S##_sumexp_f32, S##_scale_f32, S##_subsub_f32, \\
        S##_colmax_f32, S##_colexpsum_f32, S##_colscale_f32, S##_colsubsub_f32 }

    #if PTCR_MULTI
    #pragma GCC push_options
    #pragma GCC target("avx512f,avx512vl")
    PTCR_TEMPLATE(ptcr512, 16, 8)
    #pragma GCC pop_options
    #pragma GCC push_options
    #pragma GCC target("avx2")
    PTCR_TEMPLATE(ptcr256, 8, 8)
    #pragma GCC pop_options
    #endif
    PTCR_TEMPLATE(ptcrbase, 4, 4)

    #else   /* no vector extensions (e.g. MSVC): plain loops */
    #define PTCR_SSUM(NAME, T, RT, FS, EXTRA) \\
    static RT NAME(const T* x, ptrdiff_t n EXTRA) { \\
        RT stack[64]; int top = 0; int64_t count = 0; ptrdiff_t i = 0; RT res = 0; \\
        while (i < n) { \\
            ptrdiff_t m = n - i < PTCR_BLOCK ? n - i : PTCR_BLOCK, j = 0; RT a[8] = {0}; \\
            for (; j + 8 <= m; j += 8) for (int k = 0; k < 8; k++) a[k] += FS((RT)x[i + j + k]); \\
            RT s = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])); \\
            for (; j < m; j++) s += FS((RT)x[i + j]); \\
            int64_t k_ = count++; while (k_ & 1) { s = stack[--top] + s; k_ >>= 1; } stack[top++] = s; \\
            i += m; } \\
        if (top) { res = stack[top - 1]; for (int t = top - 2; t >= 0; t--) res = stack[t] + res; } \\
        return res; }
    #define PTCR_ID(v) (v)
    #define PTCR_SQ(v) ((v) * (v))
    #define PTCR_DEVS(v) (((v) - mean) * ((v) - mean))
    #define PTCR_NOEXTRA
    #define PTCR_MEANARG , double mean
    PTCR_SSUM(ptcrbase_sum_f32, float, float, PTCR_ID, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sum_f64, double, double, PTCR_ID, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sumsq_f32, float, float, PTCR_SQ, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sumsq_f64, double, double, PTCR_SQ, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sumabs_f32, float, float, fabsf, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sumabs_f64, double, double, fabs, PTCR_NOEXTRA)
    PTCR_SSUM(ptcrbase_sumdev_f32, float, double, PTCR_DEVS, PTCR_MEANARG)
    PTCR_SSUM(ptcrbase_sumdev_f64, double, double, PTCR_DEVS, PTCR_MEANARG)
    #define PTCR_SADD(NAME, T) static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \\
        for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) acc[j] += x[r * rs + j]; }
    PTCR_SADD(ptcrbase_addrows_f32, float)
    PTCR_SADD(ptcrbase_addrows_f64, double)
    #define PTCR_SEXT(NAME, ANAME, T, CMP) \\
    static T NAME(const T* x, ptrdiff_t n, int* nan) { \\
        T best = x[0]; int hasnan = 0; \\
        for (ptrdiff_t i = 0; i < n; i++) { T v = x[i]; if (v CMP best) best = v; hasnan |= (v != v); } \\
        *nan = hasnan; return best; } \\
    static ptrdiff_t ANAME(const T* x, ptrdiff_t n, T* val) { \\
        ptrdiff_t bi = 0; T best = x[0]; \\
        for (ptrdiff_t i = 0; i < n; i++) { T v = x[i]; \\
            if (v != v) { *val = v; return i; } if (v CMP best) { best = v; bi = i; } } \\
        *val = best; return bi; }
    PTCR_SEXT(ptcrbase_max_f32, ptcrbase_argmax_f32, float, >)
    PTCR_SEXT(ptcrbase_min_f32, ptcrbase_argmin_f32, float, <)
    PTCR_SEXT(ptcrbase_max_f64, ptcrbase_argmax_f64, double, >)
    PTCR_SEXT(ptcrbase_min_f64, ptcrbase_argmin_f64, double, <)
    #define PTCR_SCOLEXT(NAME, T, CMP) \\
    static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \\
        for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) { \\
            T v = x[r * rs + j]; if (v CMP acc[j] || v != v) acc[j] = v; } }
    PTCR_SCOLEXT(ptcrbase_colmaxn_f32, float, >)
    PTCR_SCOLEXT(ptcrbase_colminn_f32, float, <)
    PTCR_SCOLEXT(ptcrbase_colmaxn_f64, double, >)
    PTCR_SCOLEXT(ptcrbase_colminn_f64, double, <)
    static float ptcrbase_exp1(float x) { return expf(x); }
    static float ptcrbase_expsum_f32(const float* x, float* y, ptrdiff_t n, float m) {
        float s = 0; for (ptrdiff_t j = 0; j < n; j++) { float e = expf(x[j] - m); if (y) y[j] = e; s += e; }
        return s; }
    static double ptcrbase_sumexp_f32(const float* x, ptrdiff_t n, float m) {
        double s = 0; for (ptrdiff_t j = 0; j < n; j++) s += expf(x[j] - m); return s; }
    static void ptcrbase_scale_f32(float* y, ptrdiff_t n, float r) { for (ptrdiff_t j = 0; j < n; j++) y[j] *= r; }
    static void ptcrbase_subsub_f32(const float* x, float* y, ptrdiff_t n, float m, float c)
    { for (ptrdiff_t j = 0; j < n; j++) y[j] = (x[j] - m) - c; }
    static void ptcrbase_colmax_f32(float* acc, const float* x, ptrdiff_t n)
    { for (ptrdiff_t j = 0; j < n; j++) if (x[j] > acc[j]) acc[j] = x[j]; }
    static void ptcrbase_colexpsum_f32(float* s, const float* m, const float* x, float* y, ptrdiff_t n) {
        for (ptrdiff_t j = 0; j < n; j++) { float e = expf(x[j] - m[j]); if (y) y[j] = e; s[j] += e; } }
    static void ptcrbase_colscale_f32(float* y, const float* r, ptrdiff_t n) { for (ptrdiff_t j = 0; j < n; j++) y[j] *= r[j]; }
    static void ptcrbase_colsubsub_f32(const float* x, float* y, const float* m, const float* c, ptrdiff_t n)
    { for (ptrdiff_t j = 0; j < n; j++) y[j] = (x[j] - m[j]) - c[j]; }
    #define PTCR_TABLE(S) { S##_sum_f32, S##_sum_f64, S##_sumsq_f32, S##_sumsq_f64, \\
        S##_sumabs_f32, S##_sumabs_f64, S##_sumdev_f32, S##_sumdev_f64, \\
        S##_addrows_f32, S##_addrows_f64, S##_max_f32, S##_min_f32, S##_max_f64, S##_min_f64, \\
        S##_argmax_f32, S##_argmin_f32, S##_argmax_f64, S##_argmin_f64, \\
        S##_colmaxn_f32, S##_colminn_f32, S##_colmaxn_f64, S##_colminn_f64, \\
        S##_exp1, S##_expsum_f32, S##_sumexp_f32, S##_scale_f32, S##_subsub_f32, \\
        S##_colmax_f32, S##_colexpsum_f32, S##_colscale_f32, S##_colsubsub_f32 }
    #endif

    typedef struct {
        float (*sum_f32)(const float*, ptrdiff_t);
        double (*sum_f64)(const double*, ptrdiff_t);
        float (*sumsq_f32)(const float*, ptrdiff_t);
        double (*sumsq_f64)(const double*, ptrdiff_t);
        float (*sumabs_f32)(const float*, ptrdiff_t);
        double (*sumabs_f64)(const double*, ptrdiff_t);
        double (*sumdev_f32)(const float*, ptrdiff_t, double);
        double (*sumdev_f64)(const double*, ptrdiff_t, double);
        void (*addrows_f32)(float*, const float*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        void (*addrows_f64)(double*, const double*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        float (*max_f32)(const float*, ptrdiff_t, int*);
        float (*min_f32)(const float*, ptrdiff_t, int*);
        double (*max_f64)(const double*, ptrdiff_t, int*);
        double (*min_f64)(const double*, ptrdiff_t, int*);
        ptrdiff_t (*argmax_f32)(const float*, ptrdiff_t, float*);
        ptrdiff_t (*argmin_f32)(const float*, ptrdiff_t, float*);
        ptrdiff_t (*argmax_f64)(const double*, ptrdiff_t, double*);
        ptrdiff_t (*argmin_f64)(const double*, ptrdiff_t, double*);
        void (*colmaxn_f32)(float*, const float*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        void (*colminn_f32)(float*, const float*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        void (*colmaxn_f64)(double*, const double*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        void (*colminn_f64)(double*, const double*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
        float (*exp1)(float);
        float (*expsum_f32)(const float*, float*, ptrdiff_t, float);
        double (*sumexp_f32)(const float*, ptrdiff_t, float);
        void (*scale_f32)(float*, ptrdiff_t, float);
        void (*subsub_f32)(const float*, float*, ptrdiff_t, float, float);
        void (*colmax_f32)(float*, const float*, ptrdiff_t);
        void (*colexpsum_f32)(float*, const float*, const float*, float*, ptrdiff_t);
        void (*colscale_f32)(float*, const float*, ptrdiff_t);
        void (*colsubsub_f32)(const float*, float*, const float*, const float*, ptrdiff_t);
    } ptcr_table_t;

    static ptcr_table_t ptcr_tab = PTCR_TABLE(ptcrbase);
    static const char* ptcr_isa = "baseline";

    static void ptcr_select(int max_level) {
        /* max_level: 2 = AVX-512 allowed, 1 = AVX2, 0 = baseline */
        ptcr_table_t base = PTCR_TABLE(ptcrbase);
        ptcr_tab = base; ptcr_isa = "baseline";
    #if PTCR_MULTI
        __builtin_cpu_init();
        if (max_level >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
            ptcr_table_t t = PTCR_TABLE(ptcr512); ptcr_tab = t; ptcr_isa = "avx512f"; return; }
        if (max_level >= 1 && __builtin_cpu_supports("avx2")) {
            ptcr_table_t t = PTCR_TABLE(ptcr256); ptcr_tab = t; ptcr_isa = "avx2"; return; }
    #endif
    }
    #define ptcr_sum_f32(x, n) ptcr_tab.sum_f32(x, n)
    #define ptcr_sum_f64(x, n) ptcr_tab.sum_f64(x, n)
    #define ptcr_sumsq_f32(x, n) ptcr_tab.sumsq_f32(x, n)
    #define ptcr_sumsq_f64(x, n) ptcr_tab.sumsq_f64(x, n)
    #define ptcr_sumabs_f32(x, n) ptcr_tab.sumabs_f32(x, n)
    #define ptcr_sumabs_f64(x, n) ptcr_tab.sumabs_f64(x, n)
    #define ptcr_sumdev_f32(x, n, m) ptcr_tab.sumdev_f32(x, n, m)
    #define ptcr_sumdev_f64(x, n, m) ptcr_tab.sumdev_f64(x, n, m)
    #define ptcr_addrows_f32(a, x, rs, nr, n) ptcr_tab.addrows_f32(a, x, rs, nr, n)
    #define ptcr_addrows_f64(a, x, rs, nr, n) ptcr_tab.addrows_f64(a, x, rs, nr, n)
    #define ptcr_max_f32(x, n, f) ptcr_tab.max_f32(x, n, f)
    #define ptcr_min_f32(x, n, f) ptcr_tab.min_f32(x, n, f)
    #define ptcr_max_f64(x, n, f) ptcr_tab.max_f64(x, n, f)
    #define ptcr_min_f64(x, n, f) ptcr_tab.min_f64(x, n, f)
    #define ptcr_argmax_f32(x, n, v) ptcr_tab.argmax_f32(x, n, v)
    #define ptcr_argmin_f32(x, n, v) ptcr_tab.argmin_f32(x, n, v)
    #define ptcr_argmax_f64(x, n, v) ptcr_tab.argmax_f64(x, n, v)
    #define ptcr_argmin_f64(x, n, v) ptcr_tab.argmin_f64(x, n, v)
    #define ptcr_colmaxn_f32(a, x, rs, nr, n) ptcr_tab.colmaxn_f32(a, x, rs, nr, n)
    #define ptcr_colminn_f32(a, x, rs, nr, n) ptcr_tab.colminn_f32(a, x, rs, nr, n)
    #define ptcr_colmaxn_f64(a, x, rs, nr, n) ptcr_tab.colmaxn_f64(a, x, rs, nr, n)
    #define ptcr_colminn_f64(a, x, rs, nr, n) ptcr_tab.colminn_f64(a, x, rs, nr, n)
    #define ptcr_exp_sf(x) ptcr_tab.exp1(x)
    #define ptcr_expsum_f32(x, y, n, m) ptcr_tab.expsum_f32(x, y, n, m)
    #define ptcr_sumexp_f32(x, n, m) ptcr_tab.sumexp_f32(x, n, m)
    #define ptcr_scale_f32(y, n, r) ptcr_tab.scale_f32(y, n, r)
    #define ptcr_subsub_f32(x, y, n, m, c) ptcr_tab.subsub_f32(x, y, n, m, c)
    #define ptcr_colmax_f32(a, x, n) ptcr_tab.colmax_f32(a, x, n)
    #define ptcr_colexpsum_f32(s, m, x, y, n) ptcr_tab.colexpsum_f32(s, m, x, y, n)
    #define ptcr_colscale_f32(y, r, n) ptcr_tab.colscale_f32(y, r, n)
    #define ptcr_colsubsub_f32(x, y, m, c, n) ptcr_tab.colsubsub_f32(x, y, m, c, n)
    """
    void ptcr_select(int max_level) noexcept nogil
    const char* ptcr_isa
    float ptcr_sum_f32(const float* x, Py_ssize_t n) noexcept nogil
    double ptcr_sum_f64(const double* x, Py_ssize_t n) noexcept nogil
    float ptcr_sumsq_f32(const float* x, Py_ssize_t n) noexcept nogil
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
        return 1.0 if _abs2(v) != 0 or _isnan_v(v) else 0.0
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
    """Pairwise (leaves of 256, binary cascade) double sum of _tf(x)."""
    cdef double stack[64]
    cdef double a0, a1, res
    cdef int top = 0, t
    cdef int64_t count = 0, k
    cdef Py_ssize_t i = 0, j, m
    while i < n:
        m = n - i
        if m > 256:
            m = 256
        a0 = 0
        a1 = 0
        j = 0
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
            for j in range(n):
                (<int64_t*>st)[0] += (<const uint8_t*>(x + j * s))[0] != 0
        elif acc_t is float:
            if contig and op != R_NANSUM:
                st[0] += ptcr_sum_f32(<const float*>x, n)
            else:
                st[0] += _gsum(st, x, n, s, op == R_NANSUM)
        elif acc_t is double:
            if contig and op != R_NANSUM:
                st[0] += ptcr_sum_f64(<const double*>x, n)
            else:
                st[0] += _gsum(st, x, n, s, op == R_NANSUM)
        else:
            _addto(st, _gsum(st, x, n, s, op == R_NANSUM))
    elif op == R_NANMEAN:
        _addto(st, _gsum(st, x, n, s, True))
        for j in range(n):
            if not _isnan_v((<const acc_t*>(x + j * s))[0]):
                d1[0] += 1
    elif op == R_PROD:
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
        for r in range(nrows):
            xr = x + r * rs
            if acc_t is uint8_t:
                for j in range(w):
                    c0[j] += (<const uint8_t*>(xr + j * cs))[0] != 0
            else:
                for j in range(w):
                    _addto(&a0[j], (<const acc_t*>(xr + j * cs))[0])
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
        for j in range(w):
            d0[j] = sqrt(d0[j])
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
    cap = _CBUF // asz
    while done < n:
        m = n - done
        if m > cap:
            m = cap
        copy_cast(cbuf, p.acc_num, &asz, x + done * s, p.src_num, &s, &m, 1)
        o.row(st, p, cbuf, m, asz, i0 + done * di, di, ps)
        done += m


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
            ustates = <char*>malloc(nu * _ST)
            if ustates != NULL:
                for u in prange(nu, num_threads=nth, schedule='static'):
                    _unit_state_alloc(p, o, xb, u, ustates + u * _ST, ps, tmpl)
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


cdef void _unit_state_alloc(const rplan* p, const rops* o, const char* xb, Py_ssize_t u, char* st,
                            int ps, const char* tmpl) noexcept nogil:
    cdef char* cbuf = NULL
    if p.conv:
        cbuf = <char*>malloc(_CBUF)
    _unit_state(p, o, xb, u, st, ps, tmpl, cbuf)
    free(cbuf)


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


cdef bint _inner_sums(const rplan* p, char* res, Py_ssize_t cnt, const char* x,
                      Py_ssize_t ks) noexcept nogil:
    """sum/mean of ``cnt`` contiguous float32/float64 rows (one row of at most
    _SEG elements per output, ``ks`` bytes apart) straight into ``res``,
    without the per-output state machinery: the same operations as
    ``_inner_one`` (zero, plus the row's pairwise sum, mean divided by N in
    double), about 60 ns less per output.  False when it does not apply."""
    cdef Py_ssize_t j
    cdef Py_ssize_t s = p.rxs[p.nr - 1] if p.nr > 0 else 0
    cdef float fs
    cdef double ds
    if (p.R != 1 or p.L > _SEG or p.conv or p.npass != 1 or p.r0_sec != 0 or p.out1 != NULL
            or (p.op != R_SUM and p.op != R_MEAN)):
        return False
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
    res0 = <char*>malloc(2 * _RBUF * _SEC + (_CBUF if p.conv else 0))
    if res0 == NULL:
        return
    res1 = res0 + _RBUF * _SEC
    if p.conv:
        cbuf = res1 + _RBUF * _SEC
    if not _inner_sums(p, res0, cnt, p.x + xoff, p.kxs[nk - 1] if nk > 0 else 0):
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
    lev[0] = <char*>malloc(bsz)
    if p.npass == 2:
        tmpl = <char*>malloc(bsz)
    if p.conv:
        cbuf = <char*>malloc(_CBUF if wb * asz <= _CBUF else wb * asz)
    if lev[0] == NULL or (p.npass == 2 and tmpl == NULL) or (p.conv and cbuf == NULL):
        free(lev[0])
        free(tmpl)
        free(cbuf)
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
                                lev[lv + 1] = <char*>malloc(bsz)
                                if lev[lv + 1] == NULL:
                                    break
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
    checks, refuses or handles the call."""
    cdef _TensorBase t
    cdef int num, cat, nd, i, acc
    cdef Py_ssize_t n
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
    memset(pl, 0, sizeof(rplan))
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
    return p.L < 16 and C >= 16


OPS = {
    "sum": R_SUM, "nansum": R_NANSUM, "mean": R_MEAN, "nanmean": R_NANMEAN, "prod": R_PROD,
    "max": R_MAX, "min": R_MIN, "argmax": R_ARGMAX, "argmin": R_ARGMIN, "aminmax": R_AMINMAX,
    "all": R_ALL, "any": R_ANY, "var": R_VAR, "norm2": R_NORM2, "norm1": R_NORM1, "normp": R_NORMP,
    "norminf": R_NORMINF, "normninf": R_NORMNINF, "norm0": R_NORM0, "logsumexp": R_LSE,
}


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
    cdef bint fast = False
    if sm_t is float:
        fast = cx == sizeof(float) and c0 == sizeof(float)
    for j in range(w):
        m[j] = -INFINITY
        s[j] = 0
    for i in range(n):
        xr = x + i * p.lx
        if sm_t is float:
            if fast:
                ptcr_colmax_f32(m, <const float*>xr, w)
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
        buf = <char*>malloc(wb * (3 * 16 + 8))
        if buf == NULL:
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
    cdef lplan* p = <lplan*>malloc(sizeof(lplan))
    cdef int nd = x._ndim, i, j, n, num = x._dtype.num
    cdef Py_ssize_t isz = x._dtype.itemsize, sz, xs, s0, s1, total, nitems, w, nblk, it, t
    cdef int nth = get_num_threads()
    cdef bint big
    cdef dict ops = _LINE_OPS
    if p == NULL:
        raise MemoryError()
    try:
        memset(p, 0, sizeof(lplan))
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
            return
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
                            Py_ssize_t r1) noexcept nogil:
    """Rows r0..r1 of the lower median along rows of length n, by a
    value-only selection on a copy (4 or 8 bytes per element instead of
    (value, index) pairs).  The index is the one the (value, index) total
    order would give: the (k - #smaller)-th occurrence of the median value;
    the value returned is that element (so -0.0 / 0.0 follow the index)."""
    cdef kv_t* a = <kv_t*>malloc((n if n > 0 else 1) * sizeof(kv_t))
    cdef const kv_t* row
    cdef Py_ssize_t r, i, cnt, k, less, occ
    cdef kv_t v
    cdef bint nan_found
    if a == NULL:
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
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk))
                elif num == PT_FLOAT64:
                    _median_rows_item(<const double*>xp, n, <double*>vp, ip, ignore_nan,
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk))
                else:
                    _median_rows_item(<const int64_t*>xp, n, <int64_t*>vp, ip, ignore_nan,
                                      nan_row_index, it * chunk, min(M, it * chunk + chunk))
        finally:
            ptc_kernel_exit()


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
