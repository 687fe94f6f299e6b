/* float64 expm1, tanh, sinh and cosh of contiguous arrays in double lanes.
 *
 * expm1: ptc_dexp_vec.h's reduction and table, x = k ln2/N + r with r kept
 * as a pair r_h + r_l (r_h = x - k ln2_hi/N is exact: one FMA of an exact
 * product whose difference fits in 53 bits; r_l = -k ln2_lo/N), and
 * 2^(k/N) = s (1 + t).  Then
 *     e^x - 1 = (s - 1) + s r_h + s (t (1 + r) + r_l + q(r))
 * (t r is kept: where s - 1 cancels against s r_h it is ~0.6 ulp),
 * q(r) = e^r - 1 - r by its Taylor series through r^6 (truncation below
 * 2^-71; ptc_dexp_vec.h's minimax coefficients, fitted for e^r's absolute
 * error, would cost up to ~0.4 ulp next to 0, where the result is r), with
 * s - 1 and s r_h as exact pairs (2Sum, the FMA remainder of the product)
 * and added by 2Sum; every error, with the last sum, goes to the low part,
 * and the parts are added once: within 0.5 ulp plus ~2^-60 relative.  For
 * 2^-54 <= |x| and -37.5 < x < 709 (k = 0 for |x| < ln2/2N, where the
 * result is r + q(r)); elsewhere the scalar copy's special cases: x for |x|
 * < 2^-54 (+-0 and the subnormals exact), -1 below -37.5 (e^x below half an
 * ulp of 1), exp(x) from 709 (ptc_dexp_vec.h's special path: 1 is far below
 * its ulp; inf past 709.78), NaN in, NaN out.
 *
 * tanh: E = expm1(2|x|) as its pair (h, l) from the same steps, tanh |x| =
 * E / (E + 2) with E + 2 as a pair (dh, dl) by 2Sum and the quotient q0 =
 * h (1/dh) corrected by its exact FMA residual, (h - q0 dh + l - q0 dl) /
 * dh: within 0.5 ulp plus ~2^-58 relative (torch's, SLEEF's tanh: 1 ulp),
 * and the sign of x put back (tanh(-x) = -tanh(x) exactly).  For 2^-28 <=
 * |x| <= 20; below, x (tanh x = x - x^3/3 rounds to x; +-0 exact), above
 * and inf, +-1 (1 - tanh 20 < 2^-55), NaN in, NaN out.
 *
 * sinh and cosh: E = expm1(|x|) as its pair, then PTC_DSINHCOSH's exact
 * sums (sinh = (E + E / (E + 1)) / 2, cosh = (P + 1 / P) / 2 with P = E + 1):
 * within 0.5 ulp plus ~2^-60 relative (torch's, SLEEF's u10: 1 ulp), sinh's
 * sign put back (odd exactly).  For 2^-28 <= |x| < 709; below, sinh x = x and
 * cosh x = 1 (+-0 exact), from 709 libm's (finite to 710.47, then inf),
 * NaN in, NaN out.
 *
 * As ptc_dexp_vec.h: an AVX2+FMA copy and a scalar copy of the same
 * operations (the same bits on every CPU and layout); any vector holding a
 * special argument runs through the scalar copy. */
#ifndef PTC_DEXPM1_VEC_H
#define PTC_DEXPM1_VEC_H
#include "ptc_dexp_vec.h"      /* the table, the reduction constants, ptc_dexp_special */

#define PTC_DEXPM1_Q3 0x1.5555555555555p-3         /* 1/6 */
#define PTC_DEXPM1_Q4 0x1.5555555555555p-5         /* 1/24 */
#define PTC_DEXPM1_Q5 0x1.1111111111111p-7         /* 1/120 */
#define PTC_DEXPM1_Q6 0x1.6c16c16c16c17p-10        /* 1/720 */

/* e^x - 1 as HI + LO for an argument of the vector range, with the
 * operations FMA .. SET and the table read TS of one operation set (scalar
 * doubles or four lanes; double_t_ their type) */
#define PTC_DEXPM1_PAIR(x, HI, LO, FMA, ADD, SUB, MUL, SET, TS)                \
    { const double_t_ kb_ = FMA(x, SET(PTC_DEXP_INVLN2N), SET(PTC_DEXP_SHIFT)); \
      const double_t_ k_ = SUB(kb_, SET(PTC_DEXP_SHIFT));                     \
      const double_t_ rh_ = FMA(k_, SET(PTC_DEXP_NLN2HI), x);                 \
      const double_t_ rl_ = MUL(k_, SET(PTC_DEXP_NLN2LO));                    \
      const double_t_ r_ = ADD(rh_, rl_);                                     \
      double_t_ t_, s_;                                                       \
      TS(kb_, t_, s_);                                                        \
      const double_t_ r2_ = MUL(r_, r_);                                      \
      const double_t_ p23_ = FMA(r_, SET(PTC_DEXPM1_Q3), SET(0.5));           \
      const double_t_ p456_ = FMA(r_, FMA(r_, SET(PTC_DEXPM1_Q6), SET(PTC_DEXPM1_Q5)), \
                                  SET(PTC_DEXPM1_Q4));                        \
      const double_t_ q_ = FMA(MUL(r2_, r2_), p456_, MUL(r2_, p23_));         \
      /* s r_h = ph + pl exactly */                                           \
      const double_t_ ph_ = MUL(s_, rh_);                                     \
      const double_t_ pl_ = FMA(s_, rh_, SUB(SET(0.0), ph_));                 \
      /* s - 1 = a + ea exactly (2Sum) */                                     \
      const double_t_ a_ = SUB(s_, SET(1.0));                                 \
      const double_t_ ab_ = SUB(a_, s_);                                      \
      const double_t_ ea_ = ADD(SUB(s_, SUB(a_, ab_)), SUB(SET(-1.0), ab_));  \
      /* a + ph = HI + e2 exactly (2Sum) */                                   \
      HI = ADD(a_, ph_);                                                      \
      const double_t_ hb_ = SUB(HI, a_);                                      \
      const double_t_ e2_ = ADD(SUB(a_, SUB(HI, hb_)), SUB(ph_, hb_));        \
      LO = FMA(s_, ADD(ADD(FMA(t_, r_, t_), rl_), q_), ADD(ADD(pl_, ea_), e2_)); }

/* the scalar operation set */
#define PTC_DEXPM1_S_ADD(a, b) ((a) + (b))
#define PTC_DEXPM1_S_SUB(a, b) ((a) - (b))
#define PTC_DEXPM1_S_MUL(a, b) ((a) * (b))
#define PTC_DEXPM1_S_DIV(a, b) ((a) / (b))
#define PTC_DEXPM1_S_SET(c) (c)
#define PTC_DEXPM1_S_TS(kb, T, S)                                              \
    { const uint64_t ki_ = ptc_dexp_asu(kb), j_ = ki_ & 127;                  \
      T = ptc_dexp_asd(ptc_dexp_tab[2 * j_]);                                 \
      S = ptc_dexp_asd(ptc_dexp_tab[2 * j_ + 1] + (ki_ << 45)); }

/* E / (E + K) from E = h0 + l0 (tanh |x| with K = 2, sinh's E / (E + 1);
 * both operation sets; the pair normalised first, h = h0 + l0 rounded: l0
 * may be 2^-18 of h0, and the quotient's first-order correction needs |l|
 * <= ulp(h)) */
#define PTC_DTANH_DIV(h0, l0, K, Q, FMA, ADD, SUB, MUL, DIV, SET)              \
    { const double_t_ h_ = ADD(h0, l0);                                        \
      const double_t_ l_ = SUB(l0, SUB(h_, h0));                               \
      const double_t_ dh_ = ADD(h_, SET(K));                                   \
      const double_t_ db_ = SUB(dh_, h_);                                      \
      const double_t_ dl_ = ADD(ADD(SUB(h_, SUB(dh_, db_)), SUB(SET(K), db_)), l_); \
      const double_t_ inv_ = DIV(SET(1.0), dh_);                               \
      const double_t_ q0_ = MUL(h_, inv_);                                     \
      const double_t_ res_ = FMA(SUB(SET(0.0), q0_), dh_, h_);                 \
      const double_t_ c_ = FMA(SUB(SET(0.0), q0_), dl_, ADD(res_, l_));        \
      Q = FMA(c_, inv_, q0_); }

/* sinh |x| and cosh |x| from E = e^|x| - 1 = h0 + l0 (both operation sets;
 * the pair normalised to (h, l) as PTC_DTANH_DIV does):
 *   sinh = (E + E / (E + 1)) / 2 with the quotient q0 + q1 (q0 = h / d, d + dl
 *          = E + 1 by 2Sum, q1 = (h - q0 d + l - q0 dl) / d its correction)
 *          added to h as a 2Sum and every low part after;
 *   cosh = (P + 1 / P) / 2 with P = E + 1 = ph + pl (2Sum) and 1 / P = r + r c
 *          (r = 1 / ph, c = 1 - r ph - r pl by FMAs), added the same way. */
#define PTC_DSINHCOSH(h0, l0, WHICH, Y, FMA, ADD, SUB, MUL, DIV, SET)           \
    { const double_t_ h_ = ADD(h0, l0);                                        \
      const double_t_ l_ = SUB(l0, SUB(h_, h0));                               \
      const double_t_ dh_ = ADD(h_, SET(1.0));                                 \
      const double_t_ db_ = SUB(dh_, h_);                                      \
      const double_t_ dl_ = ADD(ADD(SUB(h_, SUB(dh_, db_)), SUB(SET(1.0), db_)), l_); \
      const double_t_ inv_ = DIV(SET(1.0), dh_);                               \
      double_t_ a_, b_, lo_;                                                   \
      if (WHICH == 2) {                                                        \
          const double_t_ q0_ = MUL(h_, inv_);                                 \
          const double_t_ res_ = FMA(SUB(SET(0.0), q0_), dh_, h_);             \
          a_ = h_;                                                             \
          b_ = q0_;                                                            \
          lo_ = ADD(l_, MUL(FMA(SUB(SET(0.0), q0_), dl_, ADD(res_, l_)), inv_)); \
      } else {                                                                 \
          const double_t_ c_ = FMA(SUB(SET(0.0), inv_), dl_,                   \
                                   FMA(SUB(SET(0.0), inv_), dh_, SET(1.0)));   \
          a_ = dh_;                                                            \
          b_ = inv_;                                                           \
          lo_ = FMA(inv_, c_, dl_);                                            \
      }                                                                        \
      const double_t_ s_ = ADD(a_, b_);                                        \
      const double_t_ sb_ = SUB(s_, a_);                                       \
      const double_t_ se_ = ADD(SUB(a_, SUB(s_, sb_)), SUB(b_, sb_));          \
      Y = MUL(SET(0.5), ADD(s_, ADD(se_, lo_))); }

/* the special arguments (the scalar copy alone) */
static double ptc_dexpm1_special(double x, int which)
{
    if (isnan(x)) return x + x;
    if (which == 0) {
        if (fabs(x) < 0x1p-54) return x;
        return x < 0 ? -1.0 : ptc_dexp_special(x);
    }
    if (which == 2) return fabs(x) < 0x1p-28 ? x : sinh(x);
    if (which == 3) return fabs(x) < 0x1p-28 ? 1.0 : cosh(x);
    return fabs(x) < 0x1p-28 ? x : copysign(1.0, x);
}

/* which: 0 expm1, 1 tanh, 2 sinh, 3 cosh */
static inline __attribute__((always_inline)) double ptc_dexpm1_w(double x, int which)
{
    typedef double double_t_;
    const double ax = fabs(x);
    if (which == 0 ? !(ax >= 0x1p-54 && x > -37.5 && x < 709.0)
        : which == 1 ? !(ax >= 0x1p-28 && ax <= 20.0) : !(ax >= 0x1p-28 && ax < 709.0))
        return ptc_dexpm1_special(x, which);
    const double z = which == 0 ? x : which == 1 ? ax + ax : ax;
    double h, l;
    PTC_DEXPM1_PAIR(z, h, l, fma, PTC_DEXPM1_S_ADD, PTC_DEXPM1_S_SUB, PTC_DEXPM1_S_MUL,
                    PTC_DEXPM1_S_SET, PTC_DEXPM1_S_TS)
    if (which == 0) return h + l;
    if (which >= 2) {
        double y;
        PTC_DSINHCOSH(h, l, which, y, fma, PTC_DEXPM1_S_ADD, PTC_DEXPM1_S_SUB, PTC_DEXPM1_S_MUL,
                      PTC_DEXPM1_S_DIV, PTC_DEXPM1_S_SET)
        return which == 2 ? copysign(y, x) : y;
    }
    double q;
    PTC_DTANH_DIV(h, l, 2.0, q, fma, PTC_DEXPM1_S_ADD, PTC_DEXPM1_S_SUB, PTC_DEXPM1_S_MUL,
                  PTC_DEXPM1_S_DIV, PTC_DEXPM1_S_SET)
    return copysign(q, x);
}

PTC_DLANE_SCALAR_FMA(ptc_dexpm1_w)
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#define PTC_DEXPM1_V_TS(kb, T, S) ptc_dexp_ts4(_mm256_castpd_si256(kb), &T, &S);
/* four lanes of ptc_dexpm1_w; four with a special argument by the scalar copy */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256d
ptc_dexpm1_w4(__m256d x, int which)
{
    typedef __m256d double_t_;
    const __m256d sign = _mm256_set1_pd(-0.0);
    const __m256d ax = _mm256_andnot_pd(sign, x);
    __m256d inr;
    if (which == 0)
        inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-54), _CMP_GE_OQ),
                            _mm256_and_pd(_mm256_cmp_pd(x, _mm256_set1_pd(-37.5), _CMP_GT_OQ),
                                          _mm256_cmp_pd(x, _mm256_set1_pd(709.0), _CMP_LT_OQ)));
    else if (which == 1)
        inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-28), _CMP_GE_OQ),
                            _mm256_cmp_pd(ax, _mm256_set1_pd(20.0), _CMP_LE_OQ));
    else
        inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-28), _CMP_GE_OQ),
                            _mm256_cmp_pd(ax, _mm256_set1_pd(709.0), _CMP_LT_OQ));
    PTC_DLANE_SPECIALS(x, inr, ptc_dexpm1_w, which)
    const __m256d z = which == 0 ? x : which == 1 ? _mm256_add_pd(ax, ax) : ax;
    __m256d h, l;
    PTC_DEXPM1_PAIR(z, h, l, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd,
                    _mm256_set1_pd, PTC_DEXPM1_V_TS)
    if (which == 0) return _mm256_add_pd(h, l);
    if (which >= 2) {
        __m256d y;
        PTC_DSINHCOSH(h, l, which, y, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd,
                      _mm256_mul_pd, _mm256_div_pd, _mm256_set1_pd)
        return which == 2 ? _mm256_or_pd(y, _mm256_and_pd(sign, x)) : y;
    }
    __m256d q;
    PTC_DTANH_DIV(h, l, 2.0, q, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd,
                  _mm256_div_pd, _mm256_set1_pd)
    return _mm256_or_pd(q, _mm256_and_pd(sign, x));
}
#endif
PTC_DLANE_MAP(ptc_dexpm1_map, ptc_dexpm1_w4, 1.0)
PTC_DLANE_ENTRY(expm1, ptc_dexpm1_map, ptc_dexpm1_w, 0)
PTC_DLANE_ENTRY(tanh, ptc_dexpm1_map, ptc_dexpm1_w, 1)
PTC_DLANE_ENTRY(sinh, ptc_dexpm1_map, ptc_dexpm1_w, 2)
PTC_DLANE_ENTRY(cosh, ptc_dexpm1_map, ptc_dexpm1_w, 3)
#endif
