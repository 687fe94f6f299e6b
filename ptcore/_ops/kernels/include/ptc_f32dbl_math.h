/* float32 sinh, cosh, sin, cos, tan and lgamma of contiguous arrays (and pow,
 * hypot, xlogy: see below), computed in double precision and rounded once.
 *
 * glibc's scalar float functions cost 3-17 ns an element here (sinhf/coshf,
 * tanf); torch's vectorised loops 0.2-2 ns.  Widening each float to double
 * makes short, branch-free algorithms exact enough for a float result: e^x =
 * 2^(k/16) e^r with a 16-entry table and a degree-6 polynomial, sin/cos/tan
 * after a three-part pi/2 reduction with Taylor polynomials.  sin, cos and
 * tan run in float lanes (ptc_trigf_vec.h) and use these only for |x| > 2^16,
 * inf and NaN; exp2, expm1, atan, asin and acos moved to float lanes too
 * (ptc_fmath_vec.h).  The body (ptc_f32dbl_body.h) is compiled for 8 double
 * lanes (AVX-512), 4 (AVX2) and 1 (the scalar copy the strided loops, the
 * tails and other CPUs use); the same operations in the same order, so the
 * bits do not depend on the CPU. */
#ifndef PTC_F32DBL_MATH_H
#define PTC_F32DBL_MATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_vec_level */

#define PTC_DF_ABS_MASK ((int64_t)0x7fffffffffffffffLL)
#define PTC_DF_SHIFT 0x1.8p52                  /* x + SHIFT rounds x to an integer */
#define PTC_DF_16_LN2 0x1.71547652b82fep+4
#define PTC_DF_LN2_16_HI 0x1.62e42fefa2000p-5  /* 40 bits: k HI exact for |k| < 2^13 */
#define PTC_DF_LN2_16_LO 0x1.9ef35793c7673p-45
#define PTC_DF_LN2 0x1.62e42fefa39efp-1
#define PTC_DF_2_PI 0x1.45f306dc9c883p-1
#define PTC_DF_PIO2_1 0x1.921fb54440000p+0     /* 36 bits: k PIO2_1 exact for |k| < 2^17 */
#define PTC_DF_PIO2_2 0x1.68c234c4c0000p-39    /* the next 36 bits */
#define PTC_DF_PIO2_3 0x1.98a2e03707345p-77
/* 1/n! */
#define PTC_DF_F3 0x1.5555555555555p-3
#define PTC_DF_F4 0x1.5555555555555p-5
#define PTC_DF_F5 0x1.1111111111111p-7
#define PTC_DF_F6 0x1.6c16c16c16c17p-10
#define PTC_DF_F7 0x1.a01a01a01a01ap-13
#define PTC_DF_F8 0x1.a01a01a01a01ap-16
#define PTC_DF_F9 0x1.71de3a556c734p-19
#define PTC_DF_F10 0x1.27e4fb7789f5cp-22
#define PTC_DF_F11 0x1.ae64567f544e4p-26
#define PTC_DF_F12 0x1.1eed8eff8d898p-29
#define PTC_DF_F13 0x1.6124613a86d09p-33
#define PTC_DF_F14 0x1.93974a8c07c9dp-37
#define PTC_DF_FLT_MAX 0x1.fffffep+127
#define PTC_DF_LN2_HI 0x1.62e42fefa3800p-1     /* 42 bits: k HI exact for |k| < 2^11 */
#define PTC_DF_LN2_LO 0x1.ef35793c76730p-45
/* 2 / (2j + 1): 2 atanh(s) = 2 s + s^3 (L3 + s^2 (L5 + ...)) */
#define PTC_DF_L3 (2.0 / 3)
#define PTC_DF_L5 (2.0 / 5)
#define PTC_DF_L7 (2.0 / 7)
#define PTC_DF_L9 (2.0 / 9)
#define PTC_DF_L11 (2.0 / 11)
#define PTC_DF_L13 (2.0 / 13)

/* lgamma: Stirling's B_2k / (2k (2k - 1)), 1/2 log(2 pi); lgamma(2 + z) ~ z
 * (G1 + z (G2 + ... z G15)) on |z| <= 1/2 (least squares at 200 Chebyshev
 * points of the Taylor series (-1)^k (zeta(k) - 1) / k summed to z^80: within
 * 1.1e-14 relative); sin(pi r) / r = SN0 + r^2 (SN1 + ...), (-1)^k pi^(2k+1) /
 * (2k+1)! (truncation < 6e-16 for |r| <= 1/2) */
#define PTC_DF_ST1 (1.0 / 12)
#define PTC_DF_ST2 (-1.0 / 360)
#define PTC_DF_ST3 (1.0 / 1260)
#define PTC_DF_ST4 (-1.0 / 1680)
#define PTC_DF_ST5 (1.0 / 1188)
#define PTC_DF_ST6 (-691.0 / 360360)
#define PTC_DF_HALF_LOG_2PI 0x1.d67f1c864beb5p-1
#define PTC_DF_PI 0x1.921fb54442d18p+1
#define PTC_DF_G1 0x1.b0ee6072093d5p-2
#define PTC_DF_G2 0x1.4a34cc4a61466p-2
#define PTC_DF_G3 -0x1.13e001a559b10p-4
#define PTC_DF_G4 0x1.51322ac51a576p-6
#define PTC_DF_G5 -0x1.e404fc15702c8p-8
#define PTC_DF_G6 0x1.7add725b05954p-9
#define PTC_DF_G7 -0x1.38ac623b14b38p-10
#define PTC_DF_G8 0x1.0b3599e37fb0ap-11
#define PTC_DF_G9 -0x1.d3fa55538d940p-13
#define PTC_DF_G10 0x1.a17b699886e14p-14
#define PTC_DF_G11 -0x1.7942bd8190258p-15
#define PTC_DF_G12 0x1.51599fc80d50bp-16
#define PTC_DF_G13 -0x1.357344cfd09c0p-17
#define PTC_DF_G14 0x1.6a1db2250173ep-18
#define PTC_DF_G15 -0x1.56a3397841870p-19
#define PTC_DF_SN0 0x1.921fb54442d18p+1
#define PTC_DF_SN1 -0x1.4abbce625be53p+2
#define PTC_DF_SN2 0x1.466bc6775aae2p+1
#define PTC_DF_SN3 -0x1.32d2cce62bd86p-1
#define PTC_DF_SN4 0x1.50783487ee782p-4
#define PTC_DF_SN5 -0x1.e3074fde8871fp-8
#define PTC_DF_SN6 0x1.e8f434d018d63p-12
#define PTC_DF_SN7 -0x1.6fadb9f155744p-16
#define PTC_DF_SN8 0x1.aaec32af93359p-21
#define PTC_DF_SN9 -0x1.8a404211f9547p-26

/* 2^(j/16), correctly rounded */
static const double ptc_df_exp2_16[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};

/* ---- width 1: the scalar copy ---- */
typedef double ptc_v1df __attribute__((vector_size(8)));
typedef int64_t ptc_v1di __attribute__((vector_size(8)));
#define DF_SFX _d1
#define DF_VD ptc_v1df
#define DF_VL ptc_v1di
#define DF_ATTR static inline __attribute__((always_inline))
#define DF_LUT16(t, i) ((ptc_v1df){(t)[(i)[0]]})
#define DF_ANY(m) ((m)[0] != 0)
#define DF_SQRT(v) ((ptc_v1df){sqrt((v)[0])})
#include "ptc_f32dbl_body.h"

/* the scalar functions: float -> float, and their loop (kept out of line and
 * compiled for the baseline CPU, so the vector loops' tails call it after a
 * vzeroupper instead of inlining AVX-512 code that dirties the upper state) */
#define PTC_DF_SCALAR(fn, expr)                                                  \
static inline float ptc_##fn##f_d(float x)                                       \
{                                                                                \
    const ptc_v1df v = {(double)x};                                              \
    return (float)(expr)[0];                                                     \
}                                                                                \
static __attribute__((noinline)) void ptc_##fn##_s_loop(float* o, const float* a, Py_ssize_t n) \
{                                                                                \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_##fn##f_d(a[i]);               \
}
PTC_DF_SCALAR(sinh, ptc_df_sinhf_d1(v))
PTC_DF_SCALAR(cosh, ptc_df_coshf_d1(v))
PTC_DF_SCALAR(sin, ptc_df_trigf_d1(v, 0))
PTC_DF_SCALAR(cos, ptc_df_trigf_d1(v, 1))
PTC_DF_SCALAR(tan, ptc_df_trigf_d1(v, 2))
PTC_DF_SCALAR(lgamma, ptc_df_lgammaf_d1(v))
/* the binary ones: x and y with steps xs and ys (0: one value) */
#define PTC_DF_SCALAR2(fn, expr)                                                 \
static inline float ptc_##fn##f_d(float a, float b)                              \
{                                                                                \
    const ptc_v1df x = {(double)a}, y = {(double)b};                             \
    return (float)(expr)[0];                                                     \
}                                                                                \
static __attribute__((noinline)) void ptc_##fn##_s2_loop(float* o, const float* a, int as, \
                                                         const float* b, int bs, Py_ssize_t n) \
{                                                                                \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_##fn##f_d(a[i * as], b[i * bs]); \
}
PTC_DF_SCALAR2(pow, ptc_df_powf_d1(x, y))
PTC_DF_SCALAR2(hypot, ptc_df_hypotf_d1(x, y))
PTC_DF_SCALAR2(xlogy, ptc_df_xlogyf_d1(x, y))

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>
/* ---- width 8: AVX-512 ---- */
typedef double ptc_v8df __attribute__((vector_size(64)));
typedef int64_t ptc_v8di __attribute__((vector_size(64)));
#define PTC_DF_T512 __attribute__((target("avx512f")))
#define DF_SFX _d8
#define DF_VD ptc_v8df
#define DF_VL ptc_v8di
#define DF_ATTR static inline __attribute__((always_inline, target("avx512f")))
#define DF_LUT16(t, i) ((ptc_v8df)_mm512_permutex2var_pd(_mm512_loadu_pd(t), (__m512i)(i), \
                                                         _mm512_loadu_pd((t) + 8)))
#define DF_ANY(m) (_mm512_test_epi64_mask((__m512i)(m), (__m512i)(m)) != 0)
#define DF_SQRT(v) ((ptc_v8df)_mm512_sqrt_pd((__m512d)(v)))
#include "ptc_f32dbl_body.h"

/* ---- width 4: AVX2 ---- */
typedef double ptc_v4df __attribute__((vector_size(32)));
typedef int64_t ptc_v4di __attribute__((vector_size(32)));
typedef float ptc_v4sf __attribute__((vector_size(16)));
#define PTC_DF_T256 __attribute__((target("avx2")))
#define DF_SFX _d4
#define DF_VD ptc_v4df
#define DF_VL ptc_v4di
#define DF_ATTR static inline __attribute__((always_inline, target("avx2")))
#define DF_LUT16(t, i) ((ptc_v4df)ptc_lut16_4d((t), (__m256i)(i)))
#define DF_ANY(m) (_mm256_movemask_pd((__m256d)(m)) != 0)
#define DF_SQRT(v) ((ptc_v4df)_mm256_sqrt_pd((__m256d)(v)))
#include "ptc_f32dbl_body.h"

/* the contiguous loops: 2 HW floats an iteration as two HW-double vectors VD
 * (HW 8: AVX-512, 4: AVX2), the rest by the scalar copy */
#define PTC_DF_LOOP(fn, EXPR, TGT, ISA, HW, VH, VD, S)                           \
TGT static void ptc_##fn##_v_f32_##ISA(float* o, const float* a, Py_ssize_t n)   \
{                                                                                \
    Py_ssize_t i = 0;                                                            \
    for (; i + 2 * (HW) <= n; i += 2 * (HW)) {                                   \
        VH h0, h1;                                                               \
        memcpy(&h0, a + i, sizeof h0);                                           \
        memcpy(&h1, a + i + (HW), sizeof h1);                                    \
        VD v = __builtin_convertvector(h0, VD);                                  \
        h0 = __builtin_convertvector(EXPR(S), VH);                               \
        v = __builtin_convertvector(h1, VD);                                     \
        h1 = __builtin_convertvector(EXPR(S), VH);                               \
        memcpy(o + i, &h0, sizeof h0);                                           \
        memcpy(o + i + (HW), &h1, sizeof h1);                                    \
    }                                                                            \
    if (i < n) ptc_##fn##_s_loop(o + i, a + i, n - i);                           \
}
#define PTC_DF_LOOPS(fn, EXPR)                                                   \
PTC_DF_LOOP(fn, EXPR, PTC_DF_T512, avx512, 8, ptc_v8sf, ptc_v8df, _d8)           \
PTC_DF_LOOP(fn, EXPR, PTC_DF_T256, avx2, 4, ptc_v4sf, ptc_v4df, _d4)             \
static void ptc_##fn##_v_f32(float* o, const float* a, Py_ssize_t n)            \
{                                                                                \
    const int l_ = ptc_vec_level();                                              \
    if (l_ == 2) ptc_##fn##_v_f32_avx512(o, a, n);                               \
    else if (l_ == 1) ptc_##fn##_v_f32_avx2(o, a, n);                            \
    else ptc_##fn##_s_loop(o, a, n);                                              \
}
/* the binary loops (the signature of ptc_ew_vec.h's: o, x, x step, y, y step
 * (a step 0: one value), n, the unused streaming flag; 0 where the CPU has
 * no vector copy, and the caller's loop runs the scalar copy): HW floats an
 * iteration as one HW-double vector, the tail by the scalar copy */
#define PTC_DF_LOOP2(fn, EXPR, TGT, ISA, HW, VH, VD, S)                          \
TGT static void ptc_##fn##_v2_f32_##ISA(float* o, const float* a, int as, const float* b, \
                                        int bs, Py_ssize_t n)                    \
{                                                                                \
    Py_ssize_t i = 0;                                                            \
    VH ha = (VH){0} + a[0], hb = (VH){0} + b[0];                                 \
    for (; i + (HW) <= n; i += (HW)) {                                           \
        if (as) memcpy(&ha, a + i, sizeof ha);                                   \
        if (bs) memcpy(&hb, b + i, sizeof hb);                                   \
        const VD x = __builtin_convertvector(ha, VD), y = __builtin_convertvector(hb, VD); \
        const VH r = __builtin_convertvector(EXPR(S), VH);                       \
        memcpy(o + i, &r, sizeof r);                                             \
    }                                                                            \
    if (i < n) ptc_##fn##_s2_loop(o + i, a + i * as, as, b + i * bs, bs, n - i); \
}
#define PTC_DF_LOOPS2(fn, EXPR)                                                  \
PTC_DF_LOOP2(fn, EXPR, PTC_DF_T512, avx512, 8, ptc_v8sf, ptc_v8df, _d8)          \
PTC_DF_LOOP2(fn, EXPR, PTC_DF_T256, avx2, 4, ptc_v4sf, ptc_v4df, _d4)            \
static int ptc_##fn##_f32(float* o, const float* a, int as, const float* b, int bs, \
                          Py_ssize_t n, int st)                                  \
{                                                                                \
    (void)st;                                                                    \
    const int l_ = ptc_vec_level();                                              \
    if (l_ == 2) ptc_##fn##_v2_f32_avx512(o, a, as, b, bs, n);                   \
    else if (l_ == 1) ptc_##fn##_v2_f32_avx2(o, a, as, b, bs, n);                \
    return l_ != 0;                                                              \
}
#else
#define PTC_DF_LOOPS2(fn, EXPR)                                                  \
static int ptc_##fn##_f32(float* o, const float* a, int as, const float* b, int bs, \
                          Py_ssize_t n, int st)                                  \
{ (void)o; (void)a; (void)as; (void)b; (void)bs; (void)n; (void)st; return 0; }
#define PTC_DF_LOOPS(fn, EXPR)                                                   \
static void ptc_##fn##_v_f32(float* o, const float* a, Py_ssize_t n)            \
{                                                                                \
    ptc_##fn##_s_loop(o, a, n);                                                  \
}
#endif

#define PTC_DF_SINH(S) ptc_df_sinhf##S(v)
#define PTC_DF_COSH(S) ptc_df_coshf##S(v)
#define PTC_DF_SIN(S) ptc_df_trigf##S(v, 0)
#define PTC_DF_COS(S) ptc_df_trigf##S(v, 1)
#define PTC_DF_TAN(S) ptc_df_trigf##S(v, 2)
PTC_DF_LOOPS(sinh, PTC_DF_SINH)
PTC_DF_LOOPS(cosh, PTC_DF_COSH)
PTC_DF_LOOPS(sin, PTC_DF_SIN)
PTC_DF_LOOPS(cos, PTC_DF_COS)
PTC_DF_LOOPS(tan, PTC_DF_TAN)
#define PTC_DF_LGAMMA(S) ptc_df_lgammaf##S(v)
PTC_DF_LOOPS(lgamma, PTC_DF_LGAMMA)
#define PTC_DF_POW(S) ptc_df_powf##S(x, y)
#define PTC_DF_HYPOT(S) ptc_df_hypotf##S(x, y)
#define PTC_DF_XLOGY(S) ptc_df_xlogyf##S(x, y)
PTC_DF_LOOPS2(pow, PTC_DF_POW)
PTC_DF_LOOPS2(hypot, PTC_DF_HYPOT)
PTC_DF_LOOPS2(xlogy, PTC_DF_XLOGY)
#endif
