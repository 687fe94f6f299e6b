/* Vector kernels of the CPU reductions (ptcore/_ops/kernels/_reduce.pyx): contiguous
   float32/float64 sums, sums of squares/absolute values/deviations, row
   accumulation, max/min and argmax/argmin, column max/min, and the softmax
   passes with a vectorised expf.  Included by _reduce.pyx only. */
#ifndef PTC_REDUCE_VEC_H
#define PTC_REDUCE_VEC_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include "ptc_fmath_vec.h"       /* PTC_FEXP_CORE, PTC_FEXP_SCALE2: ptcore.exp's float exp */
#include "ptc_half.h"            /* ptc_half_to_float, ptc_bf16_to_float: the half sums' tails */

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

/* (PTCR_ROWS_PLAIN: the per-row form of PTCR_ROWS_PACKED below, for the
   build without vector extensions) */
#define PTCR_ROWS_PLAIN(S) \
static void S##_smrows_f32(const float* x, ptrdiff_t ldx, float* y, ptrdiff_t ldy, \
                           ptrdiff_t rows, ptrdiff_t n, int lg) { \
    int nanf; \
    for (ptrdiff_t r = 0; r < rows; r++) { \
        float m = S##_max_f32(x + r * ldx, n, &nanf); \
        float c = S##_expsum_f32(x + r * ldx, lg ? NULL : y + r * ldy, n, m); \
        c = lg ? logf(c) : (float)(1.0 / c); \
        if (lg) S##_subsub_f32(x + r * ldx, y + r * ldy, n, m, c); \
        else S##_scale_f32(y + r * ldy, n, c); } } \
static void S##_lserows_f32(const float* x, ptrdiff_t ldx, float* res, ptrdiff_t rows, ptrdiff_t n) { \
    int nanf; \
    for (ptrdiff_t r = 0; r < rows; r++) { \
        float v = S##_max_f32(x + r * ldx, n, &nanf); \
        float m = nanf ? NAN : (isinf(v) ? 0.0f : v); \
        double dd = 0; dd += S##_sumexp_f32(x + r * ldx, n, m); \
        res[r] = (float)(log(dd) + (double)m); } }

#if PTCR_VEC
/* binary-counter cascade of vector partial sums (pairwise per lane) */
#define PTCR_CASC_PUSH(VT, stack, top, count, val) do { VT s_ = (val); \
    int64_t k_ = (count)++; while (k_ & 1) { s_ = stack[--(top)] + s_; k_ >>= 1; } \
    stack[(top)++] = s_; } while (0)
#define PTCR_CASC_FOLD(VT, stack, top, out) do { VT s_ = {0}; if ((top) > 0) { \
    s_ = stack[(top) - 1]; for (int i_ = (top) - 2; i_ >= 0; i_--) s_ = stack[i_] + s_; } \
    (out) = s_; } while (0)
/* NAME(x, n[, mean]) -> RT: pairwise sum of F(x) in lanes VT (NL wide) */
#define PTCR_VSUM(NAME, T, RT, VT, NL, LD, F, FS, EXTRA, EXTRA_INIT) \
    PTCR_VSUMC(NAME, T, RT, VT, NL, LD, F, FS, (RT), EXTRA_INIT, EXTRA)
/* (CV: an element's value in RT, for the scalar tail; the extra parameters
   last, as they begin with a comma) */
#define PTCR_VSUMC(NAME, T, RT, VT, NL, LD, F, FS, CV, EXTRA_INIT, ...) \
static RT NAME(const T* x, ptrdiff_t n __VA_ARGS__) { \
    VT stack[64]; int top = 0; int64_t count = 0; ptrdiff_t i = 0; VT tot; RT r = 0; \
    EXTRA_INIT \
    for (; i + PTCR_BLOCK <= n; i += PTCR_BLOCK) { \
        const T* p = x + i; VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}; \
        for (int j = 0; j < PTCR_BLOCK; j += 4 * (NL)) { \
            a0 += F(LD(p + j)); a1 += F(LD(p + j + (NL))); \
            a2 += F(LD(p + j + 2 * (NL))); a3 += F(LD(p + j + 3 * (NL))); } \
        PTCR_CASC_PUSH(VT, stack, top, count, (a0 + a1) + (a2 + a3)); } \
    if (i < n) { \
        ptrdiff_t m = n - i, j = 0; const T* p = x + i; VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}; \
        for (; j + 4 * (NL) <= m; j += 4 * (NL)) { \
            a0 += F(LD(p + j)); a1 += F(LD(p + j + (NL))); \
            a2 += F(LD(p + j + 2 * (NL))); a3 += F(LD(p + j + 3 * (NL))); } \
        for (; j + (NL) <= m; j += (NL)) a0 += F(LD(p + j)); \
        for (int k = 0; j < m; j++, k++) a1[k] += FS(CV(p[j])); \
        PTCR_CASC_PUSH(VT, stack, top, count, (a0 + a1) + (a2 + a3)); } \
    PTCR_CASC_FOLD(VT, stack, top, tot); \
    for (int w = (NL) / 2; w >= 1; w /= 2) for (int k = 0; k < w; k++) tot[k] += tot[k + w]; \
    r = tot[0]; return r; }
#define PTCR_ID(v) (v)
#define PTCR_NZS(v) ((v) != (v) ? 0 : (v))      /* nansum: a NaN counts as zero */
#define PTCR_SQ(v) ((v) * (v))
#define PTCR_DEV(v) (((v) - vmean) * ((v) - vmean))
#define PTCR_DEVS(v) (((v) - mean) * ((v) - mean))
#define PTCR_NOEXTRA
#define PTCR_MEANARG , double mean

/* acc[j] = ext(acc[j], x[j]) over nrows rows, NaN propagating */
#define PTCR_COLEXT(NAME, T, VT, IT, NL, LD, ST, SEL, CMP) \
static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) { \
        const T* xr = x + r * rs; ptrdiff_t j = 0; \
        for (; j + (NL) <= n; j += (NL)) { VT a = LD(acc + j), v = LD(xr + j); \
            VT m = SEL((IT)(v CMP a), v, a); ST(acc + j, SEL((IT)(v != v), v, m)); } \
        for (; j < n; j++) { T v = xr[j]; if (v CMP acc[j] || v != v) acc[j] = v; } } }

/* max/min value (*nan: a NaN was seen) and first index of the extreme
   (first NaN wins) */
/* the lanes of a running extreme m (and its NaN flags nn) folded into
   best / hasnan.  With __builtin_shufflevector: rotations by half the lanes,
   a quarter, ..., one, each a compare-select in registers, lane 0 the result
   (a lane loop over the vector went through memory: ~20 ns a row, three
   times torch's amax over 64-float rows); otherwise that lane loop.  The
   extreme is exact either way; which of +0 and -0 wins a tie depends on the
   lanes' order, as the lanes' own order already did; a NaN lane only sets
   hasnan (the callers return NaN then). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define PTCR_XSTEP(m, nn, SEL, IT, CMP, ...) do { \
    __typeof__(m) r_ = __builtin_shufflevector(m, m, __VA_ARGS__); \
    m = SEL((IT)(r_ CMP m), r_, m); nn |= __builtin_shufflevector(nn, nn, __VA_ARGS__); } while (0)
#define PTCR_XFOLD_2(m, nn, SEL, IT, CMP, best, hasnan) do { \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 1, 0); \
    best = m[0]; hasnan = nn[0] != 0; } while (0)
#define PTCR_XFOLD_4(m, nn, SEL, IT, CMP, best, hasnan) do { \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 2, 3, 0, 1); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 1, 0, 3, 2); \
    best = m[0]; hasnan = nn[0] != 0; } while (0)
#define PTCR_XFOLD_8(m, nn, SEL, IT, CMP, best, hasnan) do { \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 4, 5, 6, 7, 0, 1, 2, 3); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 2, 3, 0, 1, 6, 7, 4, 5); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 1, 0, 3, 2, 5, 4, 7, 6); \
    best = m[0]; hasnan = nn[0] != 0; } while (0)
#define PTCR_XFOLD_16(m, nn, SEL, IT, CMP, best, hasnan) do { \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13); \
    PTCR_XSTEP(m, nn, SEL, IT, CMP, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14); \
    best = m[0]; hasnan = nn[0] != 0; } while (0)
#else
#define PTCR_XLOOP(NL, m, nn, CMP, best, hasnan) do { \
    best = m[0]; \
    for (int k = 0; k < (NL); k++) { if (m[k] CMP best) best = m[k]; hasnan |= (nn[k] != 0); } } while (0)
#define PTCR_XFOLD_2(m, nn, SEL, IT, CMP, best, hasnan) PTCR_XLOOP(2, m, nn, CMP, best, hasnan)
#define PTCR_XFOLD_4(m, nn, SEL, IT, CMP, best, hasnan) PTCR_XLOOP(4, m, nn, CMP, best, hasnan)
#define PTCR_XFOLD_8(m, nn, SEL, IT, CMP, best, hasnan) PTCR_XLOOP(8, m, nn, CMP, best, hasnan)
#define PTCR_XFOLD_16(m, nn, SEL, IT, CMP, best, hasnan) PTCR_XLOOP(16, m, nn, CMP, best, hasnan)
#endif
/* double lanes: half the float lanes W */
#define PTCR_XFOLDD_16 PTCR_XFOLD_8
#define PTCR_XFOLDD_8 PTCR_XFOLD_4
#define PTCR_XFOLDD_4 PTCR_XFOLD_2
#define PTCR_EXT(NAME, ANAME, T, VT, IT, NL, LD, SEL, CMP, FOLD) \
static T NAME(const T* x, ptrdiff_t n, int* nan) { \
    ptrdiff_t i = 0; T best = x[0]; int hasnan = 0; \
    if (n >= (NL)) { \
        /* four independent running extremes: the compare-select chain of \
           one vector held the loop to a lane per cycle (the NaNs apart) */ \
        VT m = LD(x); IT nn = (IT)(m != m); i = (NL); \
        if (n >= 5 * (NL)) { /* (a short row skips the four extremes' set-up and merge) */ \
            VT m1 = m, m2 = m, m3 = m; \
            for (; i + 4 * (NL) <= n; i += 4 * (NL)) { \
                VT v0 = LD(x + i), v1 = LD(x + i + (NL)), v2 = LD(x + i + 2 * (NL)), \
                   v3 = LD(x + i + 3 * (NL)); \
                m = SEL((IT)(v0 CMP m), v0, m); m1 = SEL((IT)(v1 CMP m1), v1, m1); \
                m2 = SEL((IT)(v2 CMP m2), v2, m2); m3 = SEL((IT)(v3 CMP m3), v3, m3); \
                nn |= (IT)(v0 != v0) | (IT)(v1 != v1) | (IT)(v2 != v2) | (IT)(v3 != v3); } \
            m = SEL((IT)(m1 CMP m), m1, m); m2 = SEL((IT)(m3 CMP m2), m3, m2); \
            m = SEL((IT)(m2 CMP m), m2, m); } \
        for (; i + (NL) <= n; i += (NL)) { VT v = LD(x + i); \
            m = SEL((IT)(v CMP m), v, m); nn |= (IT)(v != v); } \
        FOLD(m, nn, SEL, IT, CMP, best, hasnan); \
    } \
    for (; i < n; i++) { T v = x[i]; if (v CMP best) best = v; hasnan |= (v != v); } \
    *nan = hasnan; return best; } \
static ptrdiff_t ANAME(const T* x, ptrdiff_t n, T* val) { \
    ptrdiff_t i = 0, bi = 0; T best = x[0]; int hasnan = 0; \
    if (n >= (NL)) { \
        IT idx, cur, step; for (int k = 0; k < (NL); k++) { idx[k] = k; step[k] = (NL); } cur = idx; \
        VT m = LD(x); IT nn = (IT)(m != m); \
        for (i = (NL); i + (NL) <= n; i += (NL)) { VT v = LD(x + i); cur += step; \
            IT c = (IT)(v CMP m); m = SEL(c, v, m); idx = (idx & ~c) | (cur & c); nn |= (IT)(v != v); } \
        best = m[0]; bi = idx[0]; \
        for (int k = 0; k < (NL); k++) { hasnan |= (nn[k] != 0); \
            if (m[k] CMP best || (m[k] == best && idx[k] < bi)) { best = m[k]; bi = idx[k]; } } \
    } else { i = 1; hasnan = x[0] != x[0]; } \
    for (; i < n; i++) { T v = x[i]; if (v CMP best) { best = v; bi = i; } hasnan |= (v != v); } \
    if (hasnan) { for (i = 0; i < n; i++) if (x[i] != x[i]) { *val = x[i]; return i; } } \
    *val = best; return bi; }

/* expf of the softmax passes: ptcore.exp's float-lane exp (ptc_fmath_vec.h's
   PTC_FEXP_CORE: a degree-4 polynomial with FMA after an exact reduction,
   within 1 ulp; two exact power-of-two factors, so subnormal results are
   right), inf above 89, NaN kept, and exact 0 below -104 (selected: see
   ptc_fexp8_softmax).  The same operations at every level -- the AVX2 and
   AVX-512 copies are ptc_fmath_vec.h's ptc_fexp8_softmax/ptc_fexp16_softmax,
   the baseline takes fmaf per lane -- so the same bits (tests/ops/
   test_reductions.py). */
#define PTCR_EXP_GENERIC(S) \
PTCR_AI S##_vf S##_fma(S##_vf a, S##_vf b, S##_vf c) { \
    S##_vf r; for (unsigned k = 0; k < sizeof(S##_vf) / sizeof(float); k++) \
        r[k] = fmaf(a[k], b[k], c[k]); \
    return r; } \
PTCR_AI S##_vf S##_exp(S##_vf x) { \
    x = S##_self((S##_vi)(x > 89.0f), 89.0f + (S##_vf){0}, x); \
    S##_vi lo_ = (S##_vi)(x < -104.0f); \
    x = S##_self(lo_, (S##_vf){0}, x); \
    PTC_FEXP_SOFTMAX_BODY(S##_vf, S##_vi, S##_fma, x) \
    return S##_self(lo_, zero, y); }
#define PTCR_EXP_AVX2(S) \
PTCR_AI S##_vf S##_exp(S##_vf x) { return (S##_vf)ptc_fexp8_softmax((__m256)x); }
#define PTCR_EXP_AVX512(S) \
PTCR_AI S##_vf S##_exp(S##_vf x) { return (S##_vf)ptc_fexp16_softmax((__m512)x); }
#define PTCR_EXPDEF_ptcr512 PTCR_EXP_AVX512
#define PTCR_EXPDEF_ptcr256 PTCR_EXP_AVX2
#define PTCR_EXPDEF_ptcrbase PTCR_EXP_GENERIC
typedef float ptcr_v8f __attribute__((vector_size(32)));
typedef float ptcr_v4f __attribute__((vector_size(16)));
/* the template: S = suffix, W = float lanes of compute vectors, WS =
   float lanes of streaming vectors */
/* a vector of W floats folded to 4 lanes: lanes k and k + W/2 added, then k
   and k + W/4 (the order of the sums above).  With __builtin_shufflevector
   (GCC 12, clang) the halves stay in registers; the memcpy form made GCC
   keep the vector in memory -- the accumulator of a loop that ends in such
   a fold too (a store-forwarding chain per iteration: the softmax's
   exp-sum of 64-float rows ran at half speed) */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define PTCR_HALVES_16(a) ({ ptcr_v8f lo_ = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7) + \
        __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15); \
    __builtin_shufflevector(lo_, lo_, 0, 1, 2, 3) + __builtin_shufflevector(lo_, lo_, 4, 5, 6, 7); })
#define PTCR_HALVES_8(a) (__builtin_shufflevector(a, a, 0, 1, 2, 3) + \
                          __builtin_shufflevector(a, a, 4, 5, 6, 7))
#else
#define PTCR_HALVES_16(a) ({ ptcr_v8f lo_, hi_; memcpy(&lo_, &(a), 32); \
    memcpy(&hi_, (const char*)&(a) + 32, 32); lo_ = lo_ + hi_; ptcr_v4f l4_, h4_; \
    memcpy(&l4_, &lo_, 16); memcpy(&h4_, (const char*)&lo_ + 16, 16); l4_ + h4_; })
#define PTCR_HALVES_8(a) ({ ptcr_v4f l4_, h4_; memcpy(&l4_, &(a), 16); \
    memcpy(&h4_, (const char*)&(a) + 16, 16); l4_ + h4_; })
#endif
#define PTCR_HALVES_4(a) (a)
#define PTCR_TEMPLATE(S, W, WS) \
typedef float S##_vf __attribute__((vector_size(4 * (W)))); \
typedef int32_t S##_vi __attribute__((vector_size(4 * (W)))); \
typedef double S##_vd __attribute__((vector_size(4 * (W)))); \
typedef int64_t S##_vl __attribute__((vector_size(4 * (W)))); \
typedef float S##_hvf __attribute__((vector_size(2 * (W)))); \
typedef float S##_sf __attribute__((vector_size(4 * (WS)))); \
typedef double S##_sd __attribute__((vector_size(4 * (WS)))); \
typedef int64_t S##_sl __attribute__((vector_size(4 * (WS)))); \
typedef int32_t S##_si __attribute__((vector_size(4 * (WS)))); \
typedef float S##_hf __attribute__((vector_size(2 * (WS)))); \
PTCR_AI S##_vf S##_ldf(const float* p) { S##_vf v; memcpy(&v, p, sizeof v); return v; } \
PTCR_AI void S##_stf(float* p, S##_vf v) { memcpy(p, &v, sizeof v); } \
PTCR_AI S##_vd S##_ldd(const double* p) { S##_vd v; memcpy(&v, p, sizeof v); return v; } \
PTCR_AI void S##_std(double* p, S##_vd v) { memcpy(p, &v, sizeof v); } \
PTCR_AI S##_sf S##_ldsf(const float* p) { S##_sf v; memcpy(&v, p, sizeof v); return v; } \
PTCR_AI void S##_stsf(float* p, S##_sf v) { memcpy(p, &v, sizeof v); } \
PTCR_AI S##_sd S##_ldsd(const double* p) { S##_sd v; memcpy(&v, p, sizeof v); return v; } \
PTCR_AI void S##_stsd(double* p, S##_sd v) { memcpy(p, &v, sizeof v); } \
PTCR_AI S##_sd S##_ldhf_sd(const float* p) \
{ S##_hf v; memcpy(&v, p, sizeof v); return __builtin_convertvector(v, S##_sd); } \
PTCR_AI S##_vf S##_self(S##_vi m, S##_vf a, S##_vf b) { return (S##_vf)(((S##_vi)a & m) | ((S##_vi)b & ~m)); } \
PTCR_AI S##_vd S##_seld(S##_vl m, S##_vd a, S##_vd b) { return (S##_vd)(((S##_vl)a & m) | ((S##_vl)b & ~m)); } \
PTCR_AI S##_sd S##_absd(S##_sd v) { return (S##_sd)((S##_sl)v & (0x7fffffffffffffffLL + (S##_sl){0})); } \
PTCR_AI S##_sf S##_abssf(S##_sf v) { return (S##_sf)((S##_si)v & (0x7fffffff + (S##_si){0})); } \
PTCR_AI S##_sf S##_nzsf(S##_sf v) { return (S##_sf)((S##_si)v & (S##_si)(v == v)); } \
PTCR_AI S##_sd S##_nzsd(S##_sd v) { return (S##_sd)((S##_sl)v & (S##_sl)(v == v)); } \
PTCR_VSUM(S##_sum_f32, float, float, S##_sf, (WS), S##_ldsf, PTCR_ID, PTCR_ID, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sum_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_ID, PTCR_ID, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sumsq_f32, float, float, S##_sf, (WS), S##_ldsf, PTCR_SQ, PTCR_SQ, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sumsq_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_SQ, PTCR_SQ, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sumabs_f32, float, float, S##_sf, (WS), S##_ldsf, S##_abssf, fabsf, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sumabs_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, S##_absd, fabs, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_nansum_f32, float, float, S##_sf, (WS), S##_ldsf, S##_nzsf, PTCR_NZS, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_nansum_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, S##_nzsd, PTCR_NZS, PTCR_NOEXTRA, ) \
PTCR_VSUM(S##_sumdev_f32, float, double, S##_sd, (WS) / 2, S##_ldhf_sd, PTCR_DEV, PTCR_DEVS, PTCR_MEANARG, \
          S##_sd vmean = mean + (S##_sd){0};) \
PTCR_VSUM(S##_sumdev_f64, double, double, S##_sd, (WS) / 2, S##_ldsd, PTCR_DEV, PTCR_DEVS, PTCR_MEANARG, \
          S##_sd vmean = mean + (S##_sd){0};) \
static void S##_addrows_f32(float* acc, const float* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    ptrdiff_t r = 0; \
    for (; r + 4 <= nrows; r += 4) { \
        const float *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs; ptrdiff_t j = 0; \
        for (; j + (WS) <= n; j += (WS)) S##_stsf(acc + j, S##_ldsf(acc + j) + \
            ((S##_ldsf(x0 + j) + S##_ldsf(x1 + j)) + (S##_ldsf(x2 + j) + S##_ldsf(x3 + j)))); \
        for (; j < n; j++) acc[j] += (x0[j] + x1[j]) + (x2[j] + x3[j]); } \
    for (; r < nrows; r++) { const float* x0 = x + r * rs; ptrdiff_t j = 0; \
        for (; j + (WS) <= n; j += (WS)) S##_stsf(acc + j, S##_ldsf(acc + j) + S##_ldsf(x0 + j)); \
        for (; j < n; j++) acc[j] += x0[j]; } } \
static void S##_addrows_f64(double* acc, const double* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    ptrdiff_t r = 0; \
    for (; r + 4 <= nrows; r += 4) { \
        const double *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs; ptrdiff_t j = 0; \
        for (; j + (WS) / 2 <= n; j += (WS) / 2) S##_stsd(acc + j, S##_ldsd(acc + j) + \
            ((S##_ldsd(x0 + j) + S##_ldsd(x1 + j)) + (S##_ldsd(x2 + j) + S##_ldsd(x3 + j)))); \
        for (; j < n; j++) acc[j] += (x0[j] + x1[j]) + (x2[j] + x3[j]); } \
    for (; r < nrows; r++) { const double* x0 = x + r * rs; ptrdiff_t j = 0; \
        for (; j + (WS) / 2 <= n; j += (WS) / 2) S##_stsd(acc + j, S##_ldsd(acc + j) + S##_ldsd(x0 + j)); \
        for (; j < n; j++) acc[j] += x0[j]; } } \
PTCR_EXT(S##_max_f32, S##_argmax_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_self, >, PTCR_XFOLD_##W) \
PTCR_EXT(S##_min_f32, S##_argmin_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_self, <, PTCR_XFOLD_##W) \
PTCR_EXT(S##_max_f64, S##_argmax_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_seld, >, PTCR_XFOLDD_##W) \
PTCR_EXT(S##_min_f64, S##_argmin_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_seld, <, PTCR_XFOLDD_##W) \
PTCR_COLEXT(S##_colmaxn_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_stf, S##_self, >) \
PTCR_COLEXT(S##_colminn_f32, float, S##_vf, S##_vi, (W), S##_ldf, S##_stf, S##_self, <) \
PTCR_COLEXT(S##_colmaxn_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_std, S##_seld, >) \
PTCR_COLEXT(S##_colminn_f64, double, S##_vd, S##_vl, (W) / 2, S##_ldd, S##_std, S##_seld, <) \
PTCR_EXPDEF_##S(S) \
/* lanes k and k + W/2 added, then k and k + W/4, ..., down to lanes 0 and 1 \
   (a lane loop over the vector in memory stalled on store forwarding: \
   ~150 cycles a row of a softmax); halves moved through registers */ \
PTCR_AI float S##_hsumf(S##_vf a) { \
    ptcr_v4f q = PTCR_HALVES_##W(a); \
    return (q[0] + q[2]) + (q[1] + q[3]); } \
static float S##_exp1(float x) { S##_vf v = {0}; v[0] = x; return S##_exp(v)[0]; } \
static float S##_expsum_f32(const float* x, float* y, ptrdiff_t n, float m) { \
    ptrdiff_t j = 0; S##_vf acc = {0}; \
    for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - m); \
        if (y) S##_stf(y + j, e); acc += e; } \
    float s = S##_hsumf(acc); \
    if (j < n && n >= (W)) { /* the tail as the row's last full vector (one exp, not \
                    one per element; the lanes before j are rewritten with the same values), \
                    its new lanes added in order as before */ \
        S##_vf e = S##_exp(S##_ldf(x + n - (W)) - m); \
        if (y) S##_stf(y + n - (W), e); \
        for (ptrdiff_t k = (W) - (n - j); k < (W); k++) s += e[k]; \
        j = n; } \
    if (j < n) { /* a row shorter than a vector: one exp over its lanes, in order \
                    (the zero padding is neither stored nor summed) */ \
        S##_vf v = {0}; memcpy(&v, x + j, (size_t)(n - j) * sizeof(float)); \
        S##_vf e = S##_exp(v - m); \
        for (ptrdiff_t k = 0; k < n - j; k++) { if (y) y[j + k] = e[k]; s += e[k]; } \
        j = n; } \
    return s; } \
static double S##_sumexp_f32(const float* x, ptrdiff_t n, float m) { \
    ptrdiff_t j = 0; S##_vd a0 = {0}, a1 = {0}; double s = 0; \
    for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - m); \
        S##_hvf lo, hi; memcpy(&lo, &e, sizeof lo); memcpy(&hi, (char*)&e + sizeof lo, sizeof hi); \
        a0 += __builtin_convertvector(lo, S##_vd); a1 += __builtin_convertvector(hi, S##_vd); } \
    a0 += a1; for (int k = 0; k < (W) / 2; k++) s += a0[k]; \
    if (j < n && n >= (W)) { S##_vf e = S##_exp(S##_ldf(x + n - (W)) - m); \
        for (ptrdiff_t k = (W) - (n - j); k < (W); k++) s += (double)e[k]; \
        j = n; } \
    if (j < n) { S##_vf v = {0}; memcpy(&v, x + j, (size_t)(n - j) * sizeof(float)); \
        S##_vf e = S##_exp(v - m); \
        for (ptrdiff_t k = 0; k < n - j; k++) s += (double)e[k]; \
        j = n; } \
    return s; } \
static void S##_scale_f32(float* y, ptrdiff_t n, float r) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) S##_stf(y + j, S##_ldf(y + j) * r); \
    for (; j < n; j++) y[j] *= r; } \
static void S##_subsub_f32(const float* x, float* y, ptrdiff_t n, float m, float c) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) S##_stf(y + j, (S##_ldf(x + j) - m) - c); \
    for (; j < n; j++) y[j] = (x[j] - m) - c; } \
static void S##_colmax_f32(float* acc, const float* x, ptrdiff_t n) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) { S##_vf a = S##_ldf(acc + j), v = S##_ldf(x + j); \
        S##_stf(acc + j, S##_self((S##_vi)(v > a), v, a)); } \
    for (; j < n; j++) if (x[j] > acc[j]) acc[j] = x[j]; } \
static void S##_colexpsum_f32(float* s, const float* m, const float* x, float* y, ptrdiff_t n) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) { S##_vf e = S##_exp(S##_ldf(x + j) - S##_ldf(m + j)); \
        if (y) S##_stf(y + j, e); S##_stf(s + j, S##_ldf(s + j) + e); } \
    for (; j < n; j++) { float e = S##_exp1(x[j] - m[j]); if (y) y[j] = e; s[j] += e; } } \
static void S##_colscale_f32(float* y, const float* r, ptrdiff_t n) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) S##_stf(y + j, S##_ldf(y + j) * S##_ldf(r + j)); \
    for (; j < n; j++) y[j] *= r[j]; } \
static void S##_colsubsub_f32(const float* x, float* y, const float* m, const float* c, ptrdiff_t n) { \
    ptrdiff_t j = 0; \
    for (; j + (W) <= n; j += (W)) \
        S##_stf(y + j, (S##_ldf(x + j) - S##_ldf(m + j)) - S##_ldf(c + j)); \
    for (; j < n; j++) y[j] = (x[j] - m[j]) - c[j]; }


/* Products and integer reductions (the second template, same instantiations).
   Float products follow ATen's vectorized_reduction for Vectorized<T> of V
   lanes -- four running vector products over blocks of 4V elements (started
   from the first block), merged (a0 * a1) * (a2 * a3), the lanes folded left
   to right, the tail multiplied in order -- so a row's product has torch's
   bits; V is the width of torch's kernel (8 floats / 4 doubles: ATen registers
   its reductions' AVX2 copy for AVX-512 CPUs too, and DEFAULT's vectors are 32
   bytes), not the ISA copy's: the baseline splits the V-lane vectors, with
   the same values.
   Shorter rows (n < 4V) multiply in order, as torch. */
#define PTCR_PRODV(NAME, T, V) \
static T NAME(const T* x, ptrdiff_t n) { \
    typedef T vt_ __attribute__((vector_size(sizeof(T) * (V)))); \
    ptrdiff_t i = 0; T r = 1; \
    if (n >= 4 * (V)) { \
        vt_ a0, a1, a2, a3, v0, v1, v2, v3; \
        memcpy(&a0, x, sizeof a0); memcpy(&a1, x + (V), sizeof a1); \
        memcpy(&a2, x + 2 * (V), sizeof a2); memcpy(&a3, x + 3 * (V), sizeof a3); \
        for (i = 4 * (V); i + 4 * (V) <= n; i += 4 * (V)) { \
            memcpy(&v0, x + i, sizeof v0); memcpy(&v1, x + i + (V), sizeof v1); \
            memcpy(&v2, x + i + 2 * (V), sizeof v2); memcpy(&v3, x + i + 3 * (V), sizeof v3); \
            a0 = a0 * v0; a1 = a1 * v1; a2 = a2 * v2; a3 = a3 * v3; } \
        a0 = (a0 * a1) * (a2 * a3); r = a0[0]; \
        for (int k = 1; k < (V); k++) r = r * a0[k]; } \
    for (; i < n; i++) r = r * x[i]; \
    return r; }
/* acc[j] *= x[r * rs + j] for r = 0, 1, ... in order (torch's outer
   reduction: each column's product in row order) */
#define PTCR_MULROWS(NAME, T, VT, NL) \
static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    ptrdiff_t r = 0; \
    for (; r + 4 <= nrows; r += 4) { \
        const T *x0 = x + r * rs, *x1 = x0 + rs, *x2 = x1 + rs, *x3 = x2 + rs; ptrdiff_t j = 0; \
        for (; j + (NL) <= n; j += (NL)) { VT a, b0, b1, b2, b3; memcpy(&a, acc + j, sizeof a); \
            memcpy(&b0, x0 + j, sizeof a); memcpy(&b1, x1 + j, sizeof a); \
            memcpy(&b2, x2 + j, sizeof a); memcpy(&b3, x3 + j, sizeof a); \
            a = (((a * b0) * b1) * b2) * b3; memcpy(acc + j, &a, sizeof a); } \
        for (; j < n; j++) acc[j] = (((acc[j] * x0[j]) * x1[j]) * x2[j]) * x3[j]; } \
    for (; r < nrows; r++) { const T* x0 = x + r * rs; ptrdiff_t j = 0; \
        for (; j + (NL) <= n; j += (NL)) { VT a, b0; memcpy(&a, acc + j, sizeof a); \
            memcpy(&b0, x0 + j, sizeof a); a = a * b0; memcpy(acc + j, &a, sizeof a); } \
        for (; j < n; j++) acc[j] = acc[j] * x0[j]; } }
/* integer sums / products into int64 (wrapping: any order gives the same
   bits), the input widened lane by lane; OP is + or * */
#define PTCR_IRED(NAME, T, S, NL, OP, ID) \
static int64_t NAME(const T* x, ptrdiff_t n) { \
    typedef T in_ __attribute__((vector_size(sizeof(T) * (NL)))); \
    ptrdiff_t i = 0; S##_il a0 = ID + (S##_il){0}, a1 = a0, a2 = a0, a3 = a0; uint64_t r = ID; \
    for (; i + 4 * (NL) <= n; i += 4 * (NL)) { in_ v0, v1, v2, v3; \
        memcpy(&v0, x + i, sizeof v0); memcpy(&v1, x + i + (NL), sizeof v1); \
        memcpy(&v2, x + i + 2 * (NL), sizeof v2); memcpy(&v3, x + i + 3 * (NL), sizeof v3); \
        a0 = a0 OP __builtin_convertvector(v0, S##_il); a1 = a1 OP __builtin_convertvector(v1, S##_il); \
        a2 = a2 OP __builtin_convertvector(v2, S##_il); a3 = a3 OP __builtin_convertvector(v3, S##_il); } \
    a0 = (a0 OP a1) OP (a2 OP a3); \
    for (int k = 0; k < (NL); k++) r = r OP (uint64_t)a0[k]; \
    for (; i < n; i++) r = r OP (uint64_t)(int64_t)x[i]; \
    return (int64_t)r; }
/* acc[j] OP= x[r * rs + j] over nrows rows (int64) */
#define PTCR_IROWS(NAME, S, NL, OP) \
static void NAME(int64_t* acc, const int64_t* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) { const int64_t* xr = x + r * rs; ptrdiff_t j = 0; \
        for (; j + (NL) <= n; j += (NL)) { S##_ul a, b; memcpy(&a, acc + j, sizeof a); \
            memcpy(&b, xr + j, sizeof b); a = a OP b; memcpy(acc + j, &a, sizeof a); } \
        for (; j < n; j++) acc[j] = (int64_t)((uint64_t)acc[j] OP (uint64_t)xr[j]); } }
/* elements of x whose bits under MASK are not all zero (count_nonzero:
   MASK drops a float's sign, so -0.0 counts as zero and NaN as nonzero) */
#define PTCR_CNZ(NAME, T, NL) \
static int64_t NAME(const T* x, ptrdiff_t n, T mask) { \
    typedef T vt_ __attribute__((vector_size(sizeof(T) * (NL)))); \
    /* lane counts of at most lim_ per block (no wrap of a narrow lane) */ \
    const ptrdiff_t lim_ = (ptrdiff_t)((T)-1 < 65535 ? (T)-1 : 65535); \
    ptrdiff_t i = 0; int64_t r = 0; vt_ m = mask + (vt_){0}; \
    while (i + (NL) <= n) { \
        ptrdiff_t e = (n - i) / (NL) > lim_ ? i + (NL) * lim_ : n; vt_ c = {0}; \
        for (; i + (NL) <= e; i += (NL)) { vt_ v; memcpy(&v, x + i, sizeof v); \
            c -= (vt_)((v & m) != 0); } \
        for (int k = 0; k < (NL); k++) r += (int64_t)c[k]; } \
    for (; i < n; i++) r += (x[i] & mask) != 0; \
    return r; }
#define PTCR_TABLE2(S) S##_prod_f32, S##_prod_f64, \
    S##_mulrows_f32, S##_mulrows_f64, S##_sum_i64, S##_sum_i32, S##_sum_i16, S##_sum_i8, \
    S##_sum_u8, S##_prod_i64, S##_addrows_i64, S##_mulrows_i64, \
    S##_cnz_u8, S##_cnz_u16, S##_cnz_u32, S##_cnz_u64, S##_nansum_f32, S##_nansum_f64
#define PTCR_TEMPLATE2(S, W) \
typedef int64_t S##_il __attribute__((vector_size(4 * (W)))); \
typedef uint64_t S##_ul __attribute__((vector_size(4 * (W)))); \
PTCR_PRODV(S##_prod_f32, float, 8) \
PTCR_PRODV(S##_prod_f64, double, 4) \
PTCR_MULROWS(S##_mulrows_f32, float, S##_vf, (W)) \
PTCR_MULROWS(S##_mulrows_f64, double, S##_vd, (W) / 2) \
PTCR_IRED(S##_sum_i64, int64_t, S, (W) / 2, +, 0) \
PTCR_IRED(S##_sum_i32, int32_t, S, (W) / 2, +, 0) \
PTCR_IRED(S##_sum_i16, int16_t, S, (W) / 2, +, 0) \
PTCR_IRED(S##_sum_i8, int8_t, S, (W) / 2, +, 0) \
PTCR_IRED(S##_sum_u8, uint8_t, S, (W) / 2, +, 0) \
PTCR_IRED(S##_prod_i64, int64_t, S, (W) / 2, *, 1) \
PTCR_IROWS(S##_addrows_i64, S, (W) / 2, +) \
PTCR_IROWS(S##_mulrows_i64, S, (W) / 2, *) \
PTCR_CNZ(S##_cnz_u8, uint8_t, (W) * 4) \
PTCR_CNZ(S##_cnz_u16, uint16_t, (W) * 2) \
PTCR_CNZ(S##_cnz_u32, uint32_t, (W)) \
PTCR_CNZ(S##_cnz_u64, uint64_t, (W) / 2)

#define PTCR_TABLE(S) { S##_sum_f32, S##_sum_f64, S##_sumsq_f32, S##_sumsq_f64, \
    S##_sumabs_f32, S##_sumabs_f64, S##_sumdev_f32, S##_sumdev_f64, \
    S##_addrows_f32, S##_addrows_f64, S##_max_f32, S##_min_f32, S##_max_f64, S##_min_f64, \
    S##_argmax_f32, S##_argmin_f32, S##_argmax_f64, S##_argmin_f64, \
    S##_colmaxn_f32, S##_colminn_f32, S##_colmaxn_f64, S##_colminn_f64, \
    S##_exp1, S##_expsum_f32, S##_sumexp_f32, S##_scale_f32, S##_subsub_f32, \
    S##_colmax_f32, S##_colexpsum_f32, S##_colscale_f32, S##_colsubsub_f32, \
    PTCR_TABLE2(S), S##_sum_h16, S##_sum_bf16, S##_smrows_f32, S##_lserows_f32 }

/* float16 / bfloat16 rows summed as their float32 values with the
   conversions in registers: the float32 sum's template (streaming lanes WS)
   with a converting load, so the operations and their order are those of
   sum_f32 on the converted row -- the same bits as the conversion buffer's
   path, without its write and read.  bfloat16 widens by a shift; float16 by
   F16C's vcvtph2ps in the AVX2 / AVX-512 copies (WS = 8; both loads as
   intrinsics there) and element by element (ptc_half_to_float) in the
   baseline one. */
#define PTCR_LDH_F16C(S) \
PTCR_AI S##_sf S##_ldh(const uint16_t* p) \
{ return (S##_sf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(const void*)p)); } \
PTCR_AI S##_sf S##_ldbf(const uint16_t* p) \
{ return (S##_sf)_mm256_slli_epi32(_mm256_cvtepu16_epi32( \
      _mm_loadu_si128((const __m128i*)(const void*)p)), 16); }
/* (the generic widening: GCC made two 4-lane vpmovzxwd of it per vector) */
#define PTCR_LDH_LANES(S) \
PTCR_AI S##_sf S##_ldh(const uint16_t* p) \
{ S##_sf v; \
  for (unsigned k = 0; k < sizeof(S##_sf) / sizeof(float); k++) v[k] = ptc_half_to_float(p[k]); \
  return v; } \
PTCR_AI S##_sf S##_ldbf(const uint16_t* p) \
{ S##_su16 h; memcpy(&h, p, sizeof h); return (S##_sf)(__builtin_convertvector(h, S##_su32) << 16); }
#define PTCR_LDHDEF_ptcr512 PTCR_LDH_F16C
#define PTCR_LDHDEF_ptcr256 PTCR_LDH_F16C
#define PTCR_LDHDEF_ptcrbase PTCR_LDH_LANES
#define PTCR_TEMPLATE3(S, WS, LDHDEF) \
typedef uint16_t S##_su16 __attribute__((vector_size(2 * (WS)))); \
typedef uint32_t S##_su32 __attribute__((vector_size(4 * (WS)))); \
LDHDEF(S) \
PTCR_VSUMC(S##_sum_h16, uint16_t, float, S##_sf, (WS), S##_ldh, PTCR_ID, PTCR_ID, ptc_half_to_float, , ) \
PTCR_VSUMC(S##_sum_bf16, uint16_t, float, S##_sf, (WS), S##_ldbf, PTCR_ID, PTCR_ID, ptc_bf16_to_float, , )

/* softmax / log_softmax (lg) of `rows` float32 rows of n (row r at x + r * ldx,
   its output at y + r * ldy; y may be x) and the float32 logsumexp of rows
   of n (into res[r]), 16 rows a pass: the per-row kernels' operations in
   their order (max_f32; expsum_f32 then logf(s) or 1 / s in double, subsub_f32
   or scale_f32; sumexp_f32 in double, log(0 + s) + max), so the same bits as
   one row at a time, but each phase over the 16 rows before the next (the
   rows' dependent chains overlap), and rows shorter than a vector share
   vectors: their x - max packed, one exp per W of them (a row of 8 took one
   16-lane exp of its own, half of it padding).  PTCR_ROWS_PACKED: the
   packing, for templates with vectors (W lanes); PTCR_ROWS_PLAIN: per row. */
#define PTCR_ROWS_PACKED(S, W) \
/* t[r * n + k] = exp(x[r][k] - m[r]) for nr rows of n < W, packed (the \
   last vector's lanes past the rows exponentiate zeros; t holds 16 W + W) */ \
PTCR_AI void S##_packexp(float* t, const float* xb, ptrdiff_t ldx, const float* m, \
                         ptrdiff_t nr, ptrdiff_t n) { \
    ptrdiff_t tot = nr * n, r, k; \
    for (r = 0; r < nr; r++) for (k = 0; k < n; k++) t[r * n + k] = xb[r * ldx + k] - m[r]; \
    for (k = tot; k < tot + (W); k++) t[k] = 0; \
    for (k = 0; k < tot; k += (W)) S##_stf(t + k, S##_exp(S##_ldf(t + k))); } \
static void S##_smrows_f32(const float* x, ptrdiff_t ldx, float* y, ptrdiff_t ldy, \
                           ptrdiff_t rows, ptrdiff_t n, int lg) { \
    float m[16], c[16], t[16 * (W) + (W)]; int nanf; \
    for (ptrdiff_t r0 = 0; r0 < rows; r0 += 16) { \
        ptrdiff_t nr = rows - r0 < 16 ? rows - r0 : 16, r, k; \
        const float* xb = x + r0 * ldx; float* yb = y + r0 * ldy; \
        for (r = 0; r < nr; r++) m[r] = S##_max_f32(xb + r * ldx, n, &nanf); \
        if (n < (W)) { \
            S##_packexp(t, xb, ldx, m, nr, n); \
            for (r = 0; r < nr; r++) { float s = 0; \
                for (k = 0; k < n; k++) s += t[r * n + k]; \
                c[r] = lg ? logf(s) : (float)(1.0 / s); } \
            if (lg) { for (r = 0; r < nr; r++) for (k = 0; k < n; k++) \
                yb[r * ldy + k] = (xb[r * ldx + k] - m[r]) - c[r]; } \
            else { for (r = 0; r < nr; r++) for (k = 0; k < n; k++) \
                yb[r * ldy + k] = t[r * n + k] * c[r]; } \
            continue; } \
        for (r = 0; r < nr; r++) \
            c[r] = S##_expsum_f32(xb + r * ldx, lg ? NULL : yb + r * ldy, n, m[r]); \
        for (r = 0; r < nr; r++) c[r] = lg ? logf(c[r]) : (float)(1.0 / c[r]); \
        for (r = 0; r < nr; r++) { \
            if (lg) S##_subsub_f32(xb + r * ldx, yb + r * ldy, n, m[r], c[r]); \
            else S##_scale_f32(yb + r * ldy, n, c[r]); } } } \
static void S##_lserows_f32(const float* x, ptrdiff_t ldx, float* res, ptrdiff_t rows, ptrdiff_t n) { \
    float m[16], t[16 * (W) + (W)]; double s[16]; int nanf; \
    for (ptrdiff_t r0 = 0; r0 < rows; r0 += 16) { \
        ptrdiff_t nr = rows - r0 < 16 ? rows - r0 : 16, r, k; \
        const float* xb = x + r0 * ldx; \
        for (r = 0; r < nr; r++) { float v = S##_max_f32(xb + r * ldx, n, &nanf); \
            m[r] = nanf ? NAN : (isinf(v) ? 0.0f : v); } \
        if (n < (W)) { \
            S##_packexp(t, xb, ldx, m, nr, n); \
            for (r = 0; r < nr; r++) { double a = 0; \
                for (k = 0; k < n; k++) a += (double)t[r * n + k]; \
                s[r] = a; } \
        } else { \
            for (r = 0; r < nr; r++) s[r] = S##_sumexp_f32(xb + r * ldx, n, m[r]); } \
        for (r = 0; r < nr; r++) { double dd = 0; dd += s[r]; \
            res[r0 + r] = (float)(log(dd) + (double)m[r]); } } }

#if PTCR_MULTI
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,f16c")
PTCR_TEMPLATE(ptcr512, 16, 8)
PTCR_TEMPLATE2(ptcr512, 16)
PTCR_TEMPLATE3(ptcr512, 8, PTCR_LDHDEF_ptcr512)
PTCR_ROWS_PACKED(ptcr512, 16)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
PTCR_TEMPLATE(ptcr256, 8, 8)
PTCR_TEMPLATE2(ptcr256, 8)
PTCR_TEMPLATE3(ptcr256, 8, PTCR_LDHDEF_ptcr256)
PTCR_ROWS_PACKED(ptcr256, 8)
#pragma GCC pop_options
#endif
PTCR_TEMPLATE(ptcrbase, 4, 4)
PTCR_TEMPLATE2(ptcrbase, 4)
PTCR_TEMPLATE3(ptcrbase, 4, PTCR_LDHDEF_ptcrbase)
PTCR_ROWS_PACKED(ptcrbase, 4)

#else   /* no vector extensions (e.g. MSVC): plain loops */
#define PTCR_SSUM(NAME, T, RT, FS, EXTRA) PTCR_SSUMC(NAME, T, RT, FS, (RT), EXTRA)
#define PTCR_SSUMC(NAME, T, RT, FS, CV, ...) \
static RT NAME(const T* x, ptrdiff_t n __VA_ARGS__) { \
    RT stack[64]; int top = 0; int64_t count = 0; ptrdiff_t i = 0; RT res = 0; \
    while (i < n) { \
        ptrdiff_t m = n - i < PTCR_BLOCK ? n - i : PTCR_BLOCK, j = 0; RT a[8] = {0}; \
        for (; j + 8 <= m; j += 8) for (int k = 0; k < 8; k++) a[k] += FS(CV(x[i + j + k])); \
        RT s = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7])); \
        for (; j < m; j++) s += FS(CV(x[i + j])); \
        int64_t k_ = count++; while (k_ & 1) { s = stack[--top] + s; k_ >>= 1; } stack[top++] = s; \
        i += m; } \
    if (top) { res = stack[top - 1]; for (int t = top - 2; t >= 0; t--) res = stack[t] + res; } \
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
#define PTCR_NZS(v) ((v) != (v) ? 0 : (v))
PTCR_SSUM(ptcrbase_nansum_f32, float, float, PTCR_NZS, PTCR_NOEXTRA)
PTCR_SSUM(ptcrbase_nansum_f64, double, double, PTCR_NZS, PTCR_NOEXTRA)
PTCR_SSUMC(ptcrbase_sum_h16, uint16_t, float, PTCR_ID, ptc_half_to_float, )
PTCR_SSUMC(ptcrbase_sum_bf16, uint16_t, float, PTCR_ID, ptc_bf16_to_float, )
PTCR_SSUM(ptcrbase_sumdev_f32, float, double, PTCR_DEVS, PTCR_MEANARG)
PTCR_SSUM(ptcrbase_sumdev_f64, double, double, PTCR_DEVS, PTCR_MEANARG)
#define PTCR_SADD(NAME, T) static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) acc[j] += x[r * rs + j]; }
PTCR_SADD(ptcrbase_addrows_f32, float)
PTCR_SADD(ptcrbase_addrows_f64, double)
#define PTCR_SEXT(NAME, ANAME, T, CMP) \
static T NAME(const T* x, ptrdiff_t n, int* nan) { \
    T best = x[0]; int hasnan = 0; \
    for (ptrdiff_t i = 0; i < n; i++) { T v = x[i]; if (v CMP best) best = v; hasnan |= (v != v); } \
    *nan = hasnan; return best; } \
static ptrdiff_t ANAME(const T* x, ptrdiff_t n, T* val) { \
    ptrdiff_t bi = 0; T best = x[0]; \
    for (ptrdiff_t i = 0; i < n; i++) { T v = x[i]; \
        if (v != v) { *val = v; return i; } if (v CMP best) { best = v; bi = i; } } \
    *val = best; return bi; }
PTCR_SEXT(ptcrbase_max_f32, ptcrbase_argmax_f32, float, >)
PTCR_SEXT(ptcrbase_min_f32, ptcrbase_argmin_f32, float, <)
PTCR_SEXT(ptcrbase_max_f64, ptcrbase_argmax_f64, double, >)
PTCR_SEXT(ptcrbase_min_f64, ptcrbase_argmin_f64, double, <)
#define PTCR_SCOLEXT(NAME, T, CMP) \
static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) { \
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
PTCR_ROWS_PLAIN(ptcrbase)
/* the second template's kernels as plain loops (the same values) */
#define PTCR_SPRODV(NAME, T, V) \
static T NAME(const T* x, ptrdiff_t n) { \
    ptrdiff_t i = 0; T r = 1, a[4 * (V)]; \
    if (n >= 4 * (V)) { \
        for (int k = 0; k < 4 * (V); k++) a[k] = x[k]; \
        for (i = 4 * (V); i + 4 * (V) <= n; i += 4 * (V)) \
            for (int k = 0; k < 4 * (V); k++) a[k] = a[k] * x[i + k]; \
        for (int k = 0; k < (V); k++) a[k] = (a[k] * a[k + (V)]) * (a[k + 2 * (V)] * a[k + 3 * (V)]); \
        r = a[0]; for (int k = 1; k < (V); k++) r = r * a[k]; } \
    for (; i < n; i++) r = r * x[i]; \
    return r; }
PTCR_SPRODV(ptcrbase_prod_f32, float, 8)
PTCR_SPRODV(ptcrbase_prod_f64, double, 4)
#define PTCR_SMULROWS(NAME, T) static void NAME(T* acc, const T* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) acc[j] = acc[j] * x[r * rs + j]; }
PTCR_SMULROWS(ptcrbase_mulrows_f32, float)
PTCR_SMULROWS(ptcrbase_mulrows_f64, double)
#define PTCR_SIRED(NAME, T, OP, ID) static int64_t NAME(const T* x, ptrdiff_t n) { \
    uint64_t r = ID; for (ptrdiff_t i = 0; i < n; i++) r = r OP (uint64_t)(int64_t)x[i]; return (int64_t)r; }
PTCR_SIRED(ptcrbase_sum_i64, int64_t, +, 0)
PTCR_SIRED(ptcrbase_sum_i32, int32_t, +, 0)
PTCR_SIRED(ptcrbase_sum_i16, int16_t, +, 0)
PTCR_SIRED(ptcrbase_sum_i8, int8_t, +, 0)
PTCR_SIRED(ptcrbase_sum_u8, uint8_t, +, 0)
PTCR_SIRED(ptcrbase_prod_i64, int64_t, *, 1)
#define PTCR_SIROWS(NAME, OP) static void NAME(int64_t* acc, const int64_t* x, ptrdiff_t rs, ptrdiff_t nrows, ptrdiff_t n) { \
    for (ptrdiff_t r = 0; r < nrows; r++) for (ptrdiff_t j = 0; j < n; j++) \
        acc[j] = (int64_t)((uint64_t)acc[j] OP (uint64_t)x[r * rs + j]); }
PTCR_SIROWS(ptcrbase_addrows_i64, +)
PTCR_SIROWS(ptcrbase_mulrows_i64, *)
#define PTCR_SCNZ(NAME, T) static int64_t NAME(const T* x, ptrdiff_t n, T mask) { \
    int64_t r = 0; for (ptrdiff_t i = 0; i < n; i++) r += (x[i] & mask) != 0; return r; }
PTCR_SCNZ(ptcrbase_cnz_u8, uint8_t)
PTCR_SCNZ(ptcrbase_cnz_u16, uint16_t)
PTCR_SCNZ(ptcrbase_cnz_u32, uint32_t)
PTCR_SCNZ(ptcrbase_cnz_u64, uint64_t)
#define PTCR_TABLE2(S) S##_prod_f32, S##_prod_f64, \
    S##_mulrows_f32, S##_mulrows_f64, S##_sum_i64, S##_sum_i32, S##_sum_i16, S##_sum_i8, \
    S##_sum_u8, S##_prod_i64, S##_addrows_i64, S##_mulrows_i64, \
    S##_cnz_u8, S##_cnz_u16, S##_cnz_u32, S##_cnz_u64, S##_nansum_f32, S##_nansum_f64
#define PTCR_TABLE(S) { S##_sum_f32, S##_sum_f64, S##_sumsq_f32, S##_sumsq_f64, \
    S##_sumabs_f32, S##_sumabs_f64, S##_sumdev_f32, S##_sumdev_f64, \
    S##_addrows_f32, S##_addrows_f64, S##_max_f32, S##_min_f32, S##_max_f64, S##_min_f64, \
    S##_argmax_f32, S##_argmin_f32, S##_argmax_f64, S##_argmin_f64, \
    S##_colmaxn_f32, S##_colminn_f32, S##_colmaxn_f64, S##_colminn_f64, \
    S##_exp1, S##_expsum_f32, S##_sumexp_f32, S##_scale_f32, S##_subsub_f32, \
    S##_colmax_f32, S##_colexpsum_f32, S##_colscale_f32, S##_colsubsub_f32, \
    PTCR_TABLE2(S), S##_sum_h16, S##_sum_bf16, S##_smrows_f32, S##_lserows_f32 }
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
    float (*prod_f32)(const float*, ptrdiff_t);
    double (*prod_f64)(const double*, ptrdiff_t);
    void (*mulrows_f32)(float*, const float*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
    void (*mulrows_f64)(double*, const double*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
    int64_t (*sum_i64)(const int64_t*, ptrdiff_t);
    int64_t (*sum_i32)(const int32_t*, ptrdiff_t);
    int64_t (*sum_i16)(const int16_t*, ptrdiff_t);
    int64_t (*sum_i8)(const int8_t*, ptrdiff_t);
    int64_t (*sum_u8)(const uint8_t*, ptrdiff_t);
    int64_t (*prod_i64)(const int64_t*, ptrdiff_t);
    void (*addrows_i64)(int64_t*, const int64_t*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
    void (*mulrows_i64)(int64_t*, const int64_t*, ptrdiff_t, ptrdiff_t, ptrdiff_t);
    int64_t (*cnz_u8)(const uint8_t*, ptrdiff_t, uint8_t);
    int64_t (*cnz_u16)(const uint16_t*, ptrdiff_t, uint16_t);
    int64_t (*cnz_u32)(const uint32_t*, ptrdiff_t, uint32_t);
    int64_t (*cnz_u64)(const uint64_t*, ptrdiff_t, uint64_t);
    float (*nansum_f32)(const float*, ptrdiff_t);
    double (*nansum_f64)(const double*, ptrdiff_t);
    float (*sum_h16)(const uint16_t*, ptrdiff_t);
    float (*sum_bf16)(const uint16_t*, ptrdiff_t);
    void (*smrows_f32)(const float*, ptrdiff_t, float*, ptrdiff_t, ptrdiff_t, ptrdiff_t, int);
    void (*lserows_f32)(const float*, ptrdiff_t, float*, ptrdiff_t, ptrdiff_t);
} ptcr_table_t;

static ptcr_table_t ptcr_tab = PTCR_TABLE(ptcrbase);
static const char* ptcr_isa = "baseline";

static void ptcr_select(int max_level) {
    /* max_level: 2 = AVX-512 allowed, 1 = AVX2, 0 = baseline */
    ptcr_table_t base = PTCR_TABLE(ptcrbase);
    ptcr_tab = base; ptcr_isa = "baseline";
#if PTCR_MULTI
    __builtin_cpu_init();
    /* (the float16 sum of these copies converts with F16C: without it, none,
       and the caller converts through its buffer) */
    if (max_level >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
        ptcr_table_t t = PTCR_TABLE(ptcr512);
        if (!__builtin_cpu_supports("f16c")) t.sum_h16 = 0;
        ptcr_tab = t; ptcr_isa = "avx512f"; return; }
    if (max_level >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        ptcr_table_t t = PTCR_TABLE(ptcr256);
        if (!__builtin_cpu_supports("f16c")) t.sum_h16 = 0;
        ptcr_tab = t; ptcr_isa = "avx2"; return; }
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
#define ptcr_prod_f32(x, n) ptcr_tab.prod_f32(x, n)
#define ptcr_prod_f64(x, n) ptcr_tab.prod_f64(x, n)
#define ptcr_mulrows_f32(a, x, rs, nr, n) ptcr_tab.mulrows_f32(a, x, rs, nr, n)
#define ptcr_mulrows_f64(a, x, rs, nr, n) ptcr_tab.mulrows_f64(a, x, rs, nr, n)
#define ptcr_sum_i64(x, n) ptcr_tab.sum_i64(x, n)
#define ptcr_sum_i32(x, n) ptcr_tab.sum_i32(x, n)
#define ptcr_sum_i16(x, n) ptcr_tab.sum_i16(x, n)
#define ptcr_sum_i8(x, n) ptcr_tab.sum_i8(x, n)
#define ptcr_sum_u8(x, n) ptcr_tab.sum_u8(x, n)
#define ptcr_prod_i64(x, n) ptcr_tab.prod_i64(x, n)
#define ptcr_addrows_i64(a, x, rs, nr, n) ptcr_tab.addrows_i64(a, x, rs, nr, n)
#define ptcr_mulrows_i64(a, x, rs, nr, n) ptcr_tab.mulrows_i64(a, x, rs, nr, n)
#define ptcr_cnz_u8(x, n, m) ptcr_tab.cnz_u8(x, n, m)
#define ptcr_cnz_u16(x, n, m) ptcr_tab.cnz_u16(x, n, m)
#define ptcr_cnz_u32(x, n, m) ptcr_tab.cnz_u32(x, n, m)
#define ptcr_cnz_u64(x, n, m) ptcr_tab.cnz_u64(x, n, m)
#define ptcr_nansum_f32(x, n) ptcr_tab.nansum_f32(x, n)
#define ptcr_nansum_f64(x, n) ptcr_tab.nansum_f64(x, n)
#define ptcr_sum_h16(x, n) ptcr_tab.sum_h16(x, n)
#define ptcr_sum_bf16(x, n) ptcr_tab.sum_bf16(x, n)
#define ptcr_smrows_f32(x, lx, y, ly, r, n, lg) ptcr_tab.smrows_f32(x, lx, y, ly, r, n, lg)
#define ptcr_lserows_f32(x, lx, res, r, n) ptcr_tab.lserows_f32(x, lx, res, r, n)
#define ptcr_has_sum_h16() (ptcr_tab.sum_h16 != 0)

/* d[i] = sqrt(d[i]), two at a time where SSE2 is there (every x86-64): the
   2-norms of an outer reduction's outputs (libm's sqrt per element, with its
   errno test, was a third of a 2-norm over rows of 8).  sqrtpd is correctly
   rounded, as sqrt. */
#if defined(__SSE2__)
#include <emmintrin.h>
static void ptcr_sqrt_f64(double* d, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(d + i, _mm_sqrt_pd(_mm_loadu_pd(d + i)));
    for (; i < n; i++) _mm_store_sd(d + i, _mm_sqrt_sd(_mm_setzero_pd(), _mm_load_sd(d + i)));
}
#else
static void ptcr_sqrt_f64(double* d, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) d[i] = sqrt(d[i]);
}
#endif

#endif  /* PTC_REDUCE_VEC_H */
