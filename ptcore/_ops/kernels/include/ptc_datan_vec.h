/* float64 atan of contiguous arrays in double lanes.
 *
 * fdlibm's s_atan.c (the atan of glibc, musl and the BSDs): |x| falls in
 * one of five intervals, each reduced to |t| <= 7/16 as
 *     t = (|x| n1 - n0) / (d1 |x| + d0)
 *   |x| < 7/16:   t = |x| / 1                      (h = l = 0)
 *   < 11/16:      t = (2|x| - 1) / (2 + |x|)       (h + l = atan(1/2))
 *   < 19/16:      t = (|x| - 1) / (|x| + 1)        (h + l = atan(1))
 *   < 39/16:      t = (|x| - 1.5) / (1.5|x| + 1)   (h + l = atan(3/2))
 *   else:         t = -1 / |x|                     (h + l = pi/2)
 * (the numerators exact: Sterbenz; each an FMA), then
 *     atan |x| = h - ((t S - l) - t),  S = s1 + s2 = t^2 (aT0 + ...) + t^4 (aT1 + ...)
 * fdlibm's odd and even polynomials in t^4 (two short chains), and the
 * sign of x put back (atan(-x) = -atan(x) exactly).  In lanes, each lane's
 * n1, n0, d1, d0, h and l are picked by one permute of the first four
 * intervals' values and a blend for the fifth: one division a vector, no
 * branch.
 *
 * For 2^-27 <= |x| < 2^66; below x (atan x = x - x^3/3 rounds to x; +-0 and
 * the subnormals exact), from 2^66 and at +-inf +-pi/2 rounded, NaN in, NaN
 * out.  Measured within 0.85 ulp of the long double atan (fdlibm's class;
 * glibc's atan is correctly rounded, torch's (SLEEF u10) measured 0.68, its
 * bound 1 ulp): a third of glibc's time.
 *
 * As ptc_dexp_vec.h: an AVX2+FMA copy and a scalar copy of the same
 * operations (the same bits on every CPU and layout); any vector holding a
 * special argument runs through the scalar copy. */
#ifndef PTC_DATAN_VEC_H
#define PTC_DATAN_VEC_H
#include <math.h>
#include <stdint.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level, the lane maps */

/* [constant][interval]: n1, n0, d1, d0, h, l of the first four intervals */
static const double ptc_datan_c[6][4] __attribute__((aligned(32))) = {
    {1.0, 2.0, 1.0, 1.0},
    {0.0, 1.0, 1.0, 1.5},
    {0.0, 1.0, 1.0, 1.5},
    {1.0, 2.0, 1.0, 1.0},
    {0.0, 0x1.dac670561bb4fp-2, 0x1.921fb54442d18p-1, 0x1.f730bd281f69bp-1},
    {0.0, 0x1.a2b7f222f65e2p-56, 0x1.1a62633145c07p-55, 0x1.007887af0cbbdp-56},
};
/* the fifth interval's: t = (0 |x| - 1) / (1 |x| + 0), pi/2 as h + l */
static const double ptc_datan_c4[6] = {0.0, 1.0, 1.0, 0.0, 0x1.921fb54442d18p+0,
                                        0x1.1a62633145c07p-54};
#define PTC_DATAN_B1 0.4375
#define PTC_DATAN_B2 0.6875
#define PTC_DATAN_B3 1.1875
#define PTC_DATAN_B4 2.4375
#define PTC_DATAN_T0 0x1.555555555550dp-2
#define PTC_DATAN_T1 (-0x1.999999998ebc4p-3)
#define PTC_DATAN_T2 0x1.24924920083ffp-3
#define PTC_DATAN_T3 (-0x1.c71c6fe231671p-4)
#define PTC_DATAN_T4 0x1.745cdc54c206ep-4
#define PTC_DATAN_T5 (-0x1.3b0f2af749a6dp-4)
#define PTC_DATAN_T6 0x1.10d66a0d03d51p-4
#define PTC_DATAN_T7 (-0x1.dde2d52defd9ap-5)
#define PTC_DATAN_T8 0x1.97b4b24760debp-5
#define PTC_DATAN_T9 (-0x1.2b4442c6a6c2fp-5)
#define PTC_DATAN_T10 0x1.0ad3ae322da11p-6

/* atan |x| from ax = |x| and the interval's constants N1 .. L (both
 * operation sets) */
#define PTC_DATAN_CORE(ax, N1, N0, D1, D0, H, L, Y, FMA, SUB, MUL, DIV, SET)   \
    { const double_t_ t_ = DIV(FMA(ax, N1, SUB(SET(0.0), N0)), FMA(D1, ax, D0)); \
      const double_t_ z_ = MUL(t_, t_);                                       \
      const double_t_ w_ = MUL(z_, z_);                                       \
      double_t_ e_ = FMA(w_, SET(PTC_DATAN_T10), SET(PTC_DATAN_T8));          \
      double_t_ o_ = FMA(w_, SET(PTC_DATAN_T9), SET(PTC_DATAN_T7));           \
      e_ = FMA(w_, e_, SET(PTC_DATAN_T6));                                    \
      o_ = FMA(w_, o_, SET(PTC_DATAN_T5));                                    \
      e_ = FMA(w_, e_, SET(PTC_DATAN_T4));                                    \
      o_ = FMA(w_, o_, SET(PTC_DATAN_T3));                                    \
      e_ = FMA(w_, e_, SET(PTC_DATAN_T2));                                    \
      o_ = FMA(w_, o_, SET(PTC_DATAN_T1));                                    \
      e_ = FMA(w_, e_, SET(PTC_DATAN_T0));                                    \
      const double_t_ s_ = FMA(z_, e_, MUL(w_, o_));                          \
      Y = SUB(H, SUB(FMA(t_, s_, SUB(SET(0.0), L)), t_)); }

static double ptc_datan_special(double x)
{
    if (isnan(x)) return x + x;
    return fabs(x) < 1.0 ? x : copysign(0x1.921fb54442d18p+0, x);
}

#define PTC_DATAN_S_SUB(a, b) ((a) - (b))
#define PTC_DATAN_S_MUL(a, b) ((a) * (b))
#define PTC_DATAN_S_DIV(a, b) ((a) / (b))
#define PTC_DATAN_S_SET(c) (c)

/* which: 0 atan (the lane maps' signature) */
static inline __attribute__((always_inline)) double ptc_datan_w(double x, int which)
{
    typedef double double_t_;
    (void)which;
    const double ax = fabs(x);
    if (!(ax >= 0x1p-27 && ax < 0x1p66)) return ptc_datan_special(x);
    const int iv = (ax >= PTC_DATAN_B1) + (ax >= PTC_DATAN_B2) + (ax >= PTC_DATAN_B3);
    const double* c4 = ptc_datan_c4;
    const int big = ax >= PTC_DATAN_B4;
#define PTC_DATAN_S_C(k) (big ? c4[k] : ptc_datan_c[k][iv])
    double y;
    PTC_DATAN_CORE(ax, PTC_DATAN_S_C(0), PTC_DATAN_S_C(1), PTC_DATAN_S_C(2), PTC_DATAN_S_C(3),
                   PTC_DATAN_S_C(4), PTC_DATAN_S_C(5), y, fma, PTC_DATAN_S_SUB, PTC_DATAN_S_MUL,
                   PTC_DATAN_S_DIV, PTC_DATAN_S_SET)
#undef PTC_DATAN_S_C
    return copysign(y, x);
}

PTC_DLANE_SCALAR_FMA(ptc_datan_w)
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>
/* four lanes of ptc_datan_w; four with a special argument by the scalar copy */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256d
ptc_datan_w4(__m256d x, int which)
{
    typedef __m256d double_t_;
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d ax = _mm256_andnot_pd(sign, x);
    const __m256d inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-27), _CMP_GE_OQ),
                                      _mm256_cmp_pd(ax, _mm256_set1_pd(0x1p66), _CMP_LT_OQ));
    PTC_DLANE_SPECIALS(x, inr, ptc_datan_w, which)
    const __m256d m1 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DATAN_B1), _CMP_GE_OQ);
    const __m256d m2 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DATAN_B2), _CMP_GE_OQ);
    const __m256d m3 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DATAN_B3), _CMP_GE_OQ);
    const __m256d m4 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DATAN_B4), _CMP_GE_OQ);
    /* the interval (0 .. 3) of each lane as the float indices 2 iv, 2 iv + 1 */
    const __m256i iv = _mm256_sub_epi64(_mm256_sub_epi64(
        _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_castpd_si256(m1)),
        _mm256_castpd_si256(m2)), _mm256_castpd_si256(m3));
    const __m256i i2 = _mm256_slli_epi64(iv, 1);
    const __m256i perm = _mm256_or_si256(_mm256_or_si256(i2, _mm256_slli_epi64(i2, 32)),
                                         _mm256_set1_epi64x(1LL << 32));
#define PTC_DATAN_V_C(k)                                                       \
    _mm256_blendv_pd(_mm256_castps_pd(_mm256_permutevar8x32_ps(               \
                         _mm256_castpd_ps(_mm256_load_pd(ptc_datan_c[k])), perm)), \
                     _mm256_set1_pd(ptc_datan_c4[k]), m4)
    __m256d y;
    PTC_DATAN_CORE(ax, PTC_DATAN_V_C(0), PTC_DATAN_V_C(1), PTC_DATAN_V_C(2), PTC_DATAN_V_C(3),
                   PTC_DATAN_V_C(4), PTC_DATAN_V_C(5), y, _mm256_fmadd_pd, _mm256_sub_pd,
                   _mm256_mul_pd, _mm256_div_pd, _mm256_set1_pd)
#undef PTC_DATAN_V_C
    return _mm256_or_pd(_mm256_andnot_pd(sign, y), _mm256_and_pd(sign, x));
}
#endif
PTC_DLANE_MAP(ptc_datan_map, ptc_datan_w4, 1.0)
PTC_DLANE_ENTRY(atan, ptc_datan_map, ptc_datan_w, 0)
#endif
