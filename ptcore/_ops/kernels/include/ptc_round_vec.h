/* Contiguous float32/float64 loops of floor, ceil, trunc, round (to nearest,
 * ties to even: nearbyint in the default rounding mode) and frac (x -
 * trunc(x)) with the x86 rounding instructions.
 *
 * The baseline x86-64 target has no rounding instruction (SSE4.1), so the
 * generic loop calls libm once per element (~1 ns each, torch's vectorised
 * loops ~0.06 ns).  Each loop here has an AVX-512 and an AVX2 copy chosen at
 * run time (ptc_vec_level) and the generic libm loop elsewhere.  The
 * instructions round exactly as libm (IEEE roundToIntegral: NaN stays NaN,
 * infinities and signed zeros are kept), so the results do not depend on
 * the CPU. */
#ifndef PTC_ROUND_VEC_H
#define PTC_ROUND_VEC_H
#include <math.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_vec_level */

#define PTC_RND_FLOOR (_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define PTC_RND_CEIL (_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define PTC_RND_TRUNC (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define PTC_RND_NEAR (_MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC)

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>

/* o[i] = round(a[i]) (FRAC: a[i] - round(a[i])) in vectors of W lanes, the
 * tail through a masked AVX-512 load or the scalar function */
#define PTC_RND_LOOP512(NAME, T, W, SFX, MODE, FRAC, SFN)                        \
__attribute__((target("avx512f"))) static void NAME##_avx512(T* o, const T* a, Py_ssize_t n) \
{                                                                                \
    Py_ssize_t i = 0;                                                            \
    for (; i + W <= n; i += W) {                                                 \
        PTC_V512_T_##SFX x = PTC_V512_LOADU_##SFX(a + i);                        \
        PTC_V512_T_##SFX r = PTC_V512_ROUNDSCALE_##SFX(x, MODE);                 \
        if (FRAC) r = PTC_V512_SUB_##SFX(x, r);                             \
        PTC_V512_STOREU_##SFX(o + i, r);                                    \
    }                                                                            \
    for (; i < n; i++) o[i] = (FRAC) ? a[i] - SFN(a[i]) : SFN(a[i]);             \
}
#define PTC_RND_LOOP256(NAME, T, W, VT, LD, ST, RND, SUB, MODE, FRAC, SFN)       \
__attribute__((target("avx2"))) static void NAME##_avx2(T* o, const T* a, Py_ssize_t n) \
{                                                                                \
    Py_ssize_t i = 0;                                                            \
    for (; i + W <= n; i += W) {                                                 \
        VT x = LD(a + i);                                                        \
        VT r = RND(x, MODE);                                                     \
        if (FRAC) r = SUB(x, r);                                                 \
        ST(o + i, r);                                                            \
    }                                                                            \
    for (; i < n; i++) o[i] = (FRAC) ? a[i] - SFN(a[i]) : SFN(a[i]);             \
}
/* the intrinsics of one element type (s: float32, d: float64) */
#define PTC_V512_T_s __m512
#define PTC_V512_T_d __m512d
#define PTC_V512_LOADU_s(p) _mm512_loadu_ps(p)
#define PTC_V512_LOADU_d(p) _mm512_loadu_pd(p)
#define PTC_V512_ROUNDSCALE_s(x, m) _mm512_roundscale_ps(x, m)
#define PTC_V512_ROUNDSCALE_d(x, m) _mm512_roundscale_pd(x, m)
#define PTC_V512_SUB_s(a, b) _mm512_sub_ps(a, b)
#define PTC_V512_SUB_d(a, b) _mm512_sub_pd(a, b)
#define PTC_V512_STOREU_s(p, v) _mm512_storeu_ps(p, v)
#define PTC_V512_STOREU_d(p, v) _mm512_storeu_pd(p, v)

#define PTC_RND_FAMILY(NAME, MODE, FRAC, SF32, SF64)                             \
PTC_RND_LOOP512(NAME##_f32, float, 16, s, MODE, FRAC, SF32)                       \
PTC_RND_LOOP512(NAME##_f64, double, 8, d, MODE, FRAC, SF64)                      \
PTC_RND_LOOP256(NAME##_f32, float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, \
                _mm256_round_ps, _mm256_sub_ps, MODE, FRAC, SF32)                \
PTC_RND_LOOP256(NAME##_f64, double, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd, \
                _mm256_round_pd, _mm256_sub_pd, MODE, FRAC, SF64)                \
static void NAME##_f32(float* o, const float* a, Py_ssize_t n)                   \
{                                                                                \
    int l_ = ptc_vec_level();                                                    \
    if (l_ == 2) { NAME##_f32_avx512(o, a, n); return; }                         \
    if (l_ == 1) { NAME##_f32_avx2(o, a, n); return; }                           \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = (FRAC) ? a[i] - SF32(a[i]) : SF32(a[i]); \
}                                                                                \
static void NAME##_f64(double* o, const double* a, Py_ssize_t n)                 \
{                                                                                \
    int l_ = ptc_vec_level();                                                    \
    if (l_ == 2) { NAME##_f64_avx512(o, a, n); return; }                         \
    if (l_ == 1) { NAME##_f64_avx2(o, a, n); return; }                           \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = (FRAC) ? a[i] - SF64(a[i]) : SF64(a[i]); \
}
#else
#define PTC_RND_FAMILY(NAME, MODE, FRAC, SF32, SF64)                             \
static void NAME##_f32(float* o, const float* a, Py_ssize_t n)                   \
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = (FRAC) ? a[i] - SF32(a[i]) : SF32(a[i]); } \
static void NAME##_f64(double* o, const double* a, Py_ssize_t n)                 \
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = (FRAC) ? a[i] - SF64(a[i]) : SF64(a[i]); }
#endif

PTC_RND_FAMILY(ptc_floor_v, PTC_RND_FLOOR, 0, floorf, floor)
PTC_RND_FAMILY(ptc_ceil_v, PTC_RND_CEIL, 0, ceilf, ceil)
PTC_RND_FAMILY(ptc_trunc_v, PTC_RND_TRUNC, 0, truncf, trunc)
PTC_RND_FAMILY(ptc_round_v, PTC_RND_NEAR, 0, nearbyintf, nearbyint)
PTC_RND_FAMILY(ptc_frac_v, PTC_RND_TRUNC, 1, truncf, trunc)
#endif
