/* float64 sin and cos of contiguous arrays in double lanes.
 *
 * Reduction (Cody-Waite with FMA): n = x (2/pi) rounded, y = x - n pi/2 as
 * a pair y0 + y1 with pi/2 = C1 + C2 + C3 (53 bits each, 159 in all):
 * x - n C1 is exact (one FMA: for |x| <= 2^18 the difference is a multiple
 * of ulp(C1) below 1), n C2 an exact pair (the product's FMA remainder)
 * subtracted by 2Sum, n C3 and the errors in the low part; y0 + y1 within
 * ~2^-100 of y relative, past the worst cancellation of |x| <= 2^18.
 * Kernels on |y| <= pi/4: FreeBSD's __kernel_sin and __kernel_cos (msun
 * k_sin.c/k_cos.c: degree 13 and 14 polynomials with the tail y1), both for
 * every lane, the quadrant n mod 4 (cos: n + 1) choosing and signing one:
 * within 0.8 ulp (measured against the long double functions: 0.78; torch's,
 * SLEEF's u10: 1 ulp).  For 2^-27 <= |x| <= 2^18; elsewhere the scalar
 * copy's special cases: |x| < 2^-27 sin x = x, cos x = 1 (+-0 and the
 * subnormals exact), |x| > 2^18, inf and NaN libm's sin/cos (its
 * Payne-Hanek reduction; inf and NaN give NaN).
 *
 * As ptc_dexp_vec.h: an AVX2+FMA copy and a scalar copy of the same
 * operations (the same bits on every CPU and layout); any vector holding a
 * special argument runs through the scalar copy. */
#ifndef PTC_DSIN_VEC_H
#define PTC_DSIN_VEC_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level, PTC_DLANE_* */

#define PTC_DSIN_INVPIO2 0x1.45f306dc9c883p-1        /* 2/pi */
#define PTC_DSIN_C1 0x1.921fb54442d18p+0             /* pi/2 = C1 + C2 + C3 */
#define PTC_DSIN_C2 0x1.1a62633145c07p-54
#define PTC_DSIN_C3 (-0x1.f1976b7ed8fbcp-110)
#define PTC_DSIN_SHIFT 0x1.8p52
/* msun k_sin.c */
#define PTC_DSIN_S1 (-1.66666666666666324348e-01)
#define PTC_DSIN_S2 8.33333333332248946124e-03
#define PTC_DSIN_S3 (-1.98412698298579493134e-04)
#define PTC_DSIN_S4 2.75573137070700676789e-06
#define PTC_DSIN_S5 (-2.50507602534068634195e-08)
#define PTC_DSIN_S6 1.58969099521155010221e-10
/* msun k_cos.c */
#define PTC_DCOS_C1 4.16666666666666019037e-02
#define PTC_DCOS_C2 (-1.38888888888741095749e-03)
#define PTC_DCOS_C3 2.48015872894767294178e-05
#define PTC_DCOS_C4 (-2.75573143513906633035e-07)
#define PTC_DCOS_C5 2.08757232129817482790e-09
#define PTC_DCOS_C6 (-1.13596475577881948265e-11)

/* KB (n + SHIFT: its low bits are n mod 4), Y0, Y1 of x; then the two
 * kernels SN, CS of y0 + y1, with the operations FMA .. SET of one set
 * (scalar doubles or four lanes; double_t_ their type) */
#define PTC_DSIN_REDUCE(x, KB, Y0, Y1, FMA, ADD, SUB, MUL, SET)                \
    { KB = FMA(x, SET(PTC_DSIN_INVPIO2), SET(PTC_DSIN_SHIFT));                \
      const double_t_ n_ = SUB(KB, SET(PTC_DSIN_SHIFT));                      \
      const double_t_ mn_ = SUB(SET(0.0), n_);                                \
      const double_t_ t1_ = FMA(mn_, SET(PTC_DSIN_C1), x);      /* exact */   \
      const double_t_ p_ = MUL(n_, SET(PTC_DSIN_C2));                         \
      const double_t_ pe_ = FMA(n_, SET(PTC_DSIN_C2), SUB(SET(0.0), p_));     \
      const double_t_ hi_ = SUB(t1_, p_);                                     \
      const double_t_ bb_ = SUB(hi_, t1_);                                    \
      const double_t_ e_ = ADD(SUB(t1_, SUB(hi_, bb_)), SUB(SUB(SET(0.0), p_), bb_)); \
      const double_t_ lo_ = FMA(mn_, SET(PTC_DSIN_C3), SUB(e_, pe_));         \
      Y0 = ADD(hi_, lo_);                                                     \
      Y1 = ADD(SUB(hi_, Y0), lo_); }
#define PTC_DSIN_KERNELS(y, yy, SN, CS, FMA, ADD, SUB, MUL, SET)               \
    { const double_t_ z_ = MUL(y, y);                                         \
      const double_t_ w_ = MUL(z_, z_);                                       \
      /* __kernel_sin(y, yy, 1) */                                            \
      const double_t_ r_ = ADD(FMA(z_, FMA(z_, SET(PTC_DSIN_S4), SET(PTC_DSIN_S3)), SET(PTC_DSIN_S2)), \
                               MUL(MUL(z_, w_), FMA(z_, SET(PTC_DSIN_S6), SET(PTC_DSIN_S5)))); \
      const double_t_ v_ = MUL(z_, y);                                        \
      SN = SUB(y, SUB(SUB(MUL(z_, SUB(MUL(SET(0.5), yy), MUL(v_, r_))), yy),  \
                      MUL(v_, SET(PTC_DSIN_S1))));                            \
      /* __kernel_cos(y, yy) */                                               \
      const double_t_ rc_ = ADD(MUL(z_, FMA(z_, FMA(z_, SET(PTC_DCOS_C3), SET(PTC_DCOS_C2)),     \
                                            SET(PTC_DCOS_C1))),               \
                                MUL(MUL(w_, w_), FMA(z_, FMA(z_, SET(PTC_DCOS_C6), SET(PTC_DCOS_C5)), \
                                                     SET(PTC_DCOS_C4))));     \
      const double_t_ hz_ = MUL(SET(0.5), z_);                                \
      const double_t_ wc_ = SUB(SET(1.0), hz_);                               \
      CS = ADD(wc_, ADD(SUB(SUB(SET(1.0), wc_), hz_), SUB(MUL(z_, rc_), MUL(y, yy)))); }

#define PTC_DSIN_S_ADD(a, b) ((a) + (b))
#define PTC_DSIN_S_SUB(a, b) ((a) - (b))
#define PTC_DSIN_S_MUL(a, b) ((a) * (b))
#define PTC_DSIN_S_SET(c) (c)

static inline double ptc_dsin_asd(uint64_t i) { double d; memcpy(&d, &i, 8); return d; }
static inline uint64_t ptc_dsin_asu(double d) { uint64_t i; memcpy(&i, &d, 8); return i; }

/* which: 0 sin, 1 cos */
static inline __attribute__((always_inline)) double ptc_dsin_w(double x, int which)
{
    typedef double double_t_;
    const double ax = fabs(x);
    if (!(ax >= 0x1p-27 && ax <= 0x1p18)) {
        if (ax < 0x1p-27) return which == 0 ? x : 1.0;
        return which == 0 ? sin(x) : cos(x);        /* |x| > 2^18, inf, NaN */
    }
    double kb, y0, y1, sn, cs;
    PTC_DSIN_REDUCE(x, kb, y0, y1, fma, PTC_DSIN_S_ADD, PTC_DSIN_S_SUB, PTC_DSIN_S_MUL,
                    PTC_DSIN_S_SET)
    PTC_DSIN_KERNELS(y0, y1, sn, cs, fma, PTC_DSIN_S_ADD, PTC_DSIN_S_SUB, PTC_DSIN_S_MUL,
                     PTC_DSIN_S_SET)
    const unsigned q = (unsigned)(ptc_dsin_asu(kb) + (uint64_t)which) & 3u;
    const double r = (q & 1u) ? cs : sn;
    return (q & 2u) ? -r : r;
}

PTC_DLANE_SCALAR_FMA(ptc_dsin_w)
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>
/* four lanes of ptc_dsin_w; four with a special argument by the scalar copy */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256d
ptc_dsin_w4(__m256d x, int which)
{
    typedef __m256d double_t_;
    const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    const __m256d inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-27), _CMP_GE_OQ),
                                      _mm256_cmp_pd(ax, _mm256_set1_pd(0x1p18), _CMP_LE_OQ));
    PTC_DLANE_SPECIALS(x, inr, ptc_dsin_w, which)
    __m256d kb, y0, y1, sn, cs;
    PTC_DSIN_REDUCE(x, kb, y0, y1, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd,
                    _mm256_set1_pd)
    PTC_DSIN_KERNELS(y0, y1, sn, cs, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd,
                     _mm256_set1_pd)
    const __m256i q = _mm256_add_epi64(_mm256_castpd_si256(kb), _mm256_set1_epi64x(which));
    /* bit 0 of q: the cos kernel; bit 1: the sign (moved to bit 63) */
    const __m256d odd = _mm256_castsi256_pd(_mm256_slli_epi64(q, 63));
    const __m256d r = _mm256_blendv_pd(sn, cs, odd);
    const __m256d sign = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_srli_epi64(q, 1), 63));
    return _mm256_xor_pd(r, sign);
}
#endif
PTC_DLANE_MAP(ptc_dsin_map, ptc_dsin_w4, 1.0)
PTC_DLANE_ENTRY(sin, ptc_dsin_map, ptc_dsin_w, 0)
PTC_DLANE_ENTRY(cos, ptc_dsin_map, ptc_dsin_w, 1)
#endif
