/* float64 erf and erfc of contiguous arrays in double lanes.
 *
 * The method and the coefficients of fdlibm's s_erf.c (the erf and erfc of
 * glibc, musl and the BSDs), in four intervals of |x|, each a rational
 * function P(v) / Q(v) (Q(v) = 1 + v q1 + ...):
 *   1. |x| < 0.84375:        v = x^2,      erf = x + x y
 *   2. 0.84375 <= |x| < 1.25: v = |x| - 1, erf = erx + y (erx = erf(1) to 24 bits)
 *   3. 1.25 <= |x| < 1/0.35,
 *   4. 1/0.35 <= |x|:        v = 1/x^2,   erfc |x| = e^(-x^2 - 0.5625 + y) / |x|
 * with y = P(v) / Q(v) by Horner's rule.  In lanes: a vector whose four
 * values lie in one interval runs that interval's code (broadcast
 * coefficients; smooth data is mostly such vectors); vectors of mixed
 * intervals, two at a time with their steps interleaved (each is one long
 * dependency chain), pick each coefficient of P (degree 7) and Q (degree 8)
 * per lane by one permute of a four-entry vector (the shorter polynomials'
 * high coefficients are zeros: Horner's steps over them are exact, so both
 * ways give the same bits), and the result is c2 - (a b + c) with the
 * interval's a, b, c, c2.  e^(..) is computed only where a lane needs it.
 *
 * Intervals 3 and 4 differ from fdlibm's in how e^(-x^2 - 0.5625 + y) is
 * formed: fdlibm splits x into a 21-bit head z and computes
 * e^(-z^2 - 0.5625) e^((z - x)(z + x) + y) (two exps); here x^2 = xh + xl
 * exactly (the FMA remainder) and y - 0.5625 = c + ec exactly (2Sum), and
 * ptc_dexp_vec.h's exp reduces (c - xh) with the low parts added to its r:
 * one exp, with its 0.51 ulp.  The quotient by |x| is q0 = E (1/|x|)
 * corrected by its FMA residual (one division for 1/|x|; v = (1/|x|)^2).
 *
 * erf: for 2^-28 <= |x| < 6, odd by its sign bit; elsewhere the scalar
 * copy's special path: libm's erf below 2^-28 (x + x efx, the subnormals as
 * fdlibm: erf(+-0) = +-0), +-1 from 6 (1 - erf 6 < 2^-53) and at +-inf,
 * NaN in, NaN out.  erfc: for 2^-28 <= |x|, -6 < x < 26; elsewhere libm's
 * erfc (1 - x near 0, 2 at and below -6, the subnormal results from 26.55
 * and 0 past 27.3, 0 at inf, NaN in, NaN out).  Measured against mpmath
 * and the long double functions: erf within 0.86 ulp (glibc's 0.94),
 * erfc within 1.94 ulp (glibc's 3.5: fdlibm's structure, whose intervals 1
 * and 2 subtract from 1 or 1/2); torch's (SLEEF) measured 0.75 and 0.78.
 *
 * As ptc_dexp_vec.h: an AVX2+FMA copy and a scalar copy of the same
 * operations (the same bits on every CPU and layout); any vector holding a
 * special argument runs through the scalar copy. */
#ifndef PTC_DERF_VEC_H
#define PTC_DERF_VEC_H
#include "ptc_dexpm1_vec.h"    /* the exp's table and constants, the scalar table read */

#define PTC_DERF_ERX 0x1.b0ac160000000p-1           /* erf(1) to 24 bits */
#define PTC_DERF_1MERX 0x1.3d4fa80000000p-3         /* 1 - erx, exact */
#define PTC_DERF_B1 0.84375
#define PTC_DERF_B2 1.25
#define PTC_DERF_B3 0x1.6db6e00000000p+1            /* 1/0.35 as fdlibm tests it */

/* [coefficient][interval]: P's p0 .. p7, then Q's q1 .. q8 */
static const double ptc_derf_c[16][4] __attribute__((aligned(32))) = {
    {0x1.06eba8214db68p-3, -0x1.359b8bef77538p-9, -0x1.43412600d6435p-7, -0x1.4341239e86f4ap-7},
    {-0x1.4cd7d691cb913p-2, 0x1.a8d00ad92b34dp-2, -0x1.63416e4ba7360p-1, -0x1.993ba70c285dep-1},
    {-0x1.d2a51dbd7194fp-6, -0x1.7d240fbb8c3f1p-2, -0x1.51e0441b0e726p+3, -0x1.1c209555f995ap+4},
    {-0x1.7a291236668e4p-8, 0x1.45fca805120e4p-2, -0x1.f300ae4cba38dp+5, -0x1.4145d43c5ed98p+7},
    {-0x1.8ead6120016acp-16, -0x1.c63983d3e28ecp-4, -0x1.44cb184282266p+7, -0x1.3ec881375f228p+9},
    {0.0, 0x1.22a36599795ebp-5, -0x1.7135cebccabb2p+7, -0x1.004616a2e5992p+10},
    {0.0, -0x1.1bf380a96073fp-9, -0x1.4526557e4d2f2p+6, -0x1.e384e9bdc383fp+8},
    {0.0, 0.0, -0x1.3a0efc69ac25cp+3, 0.0},
    {0x1.97779cddadc09p-2, 0x1.b3e6618eee323p-4, 0x1.3a6b9bd707687p+4, 0x1.e568b261d5190p+4},
    {0x1.0a54c5536cebap-4, 0x1.14af092eb6f33p-1, 0x1.1350c526ae721p+7, 0x1.45cae221b9f0ap+8},
    {0x1.4d022c4d36b0fp-8, 0x1.2635cd99fe9a7p-4, 0x1.b290dd58a1a71p+8, 0x1.802eb189d5118p+10},
    {0x1.15dc9221c1a10p-13, 0x1.02660e763351fp-3, 0x1.42b1921ec2868p+9, 0x1.8ffb7688c246ap+11},
    {-0x1.09c4342a26120p-18, 0x1.bedc26b51dd1cp-7, 0x1.ad02157700314p+8, 0x1.3f219cedf3be6p+11},
    {0.0, 0x1.88b545735151dp-7, 0x1.b28a3ee48ae2cp+6, 0x1.da874e79fe763p+8},
    {0.0, 0.0, 0x1.a47ef8e484a93p+2, -0x1.670e242712d62p+4},
    {0.0, 0.0, -0x1.eeff2ee749a62p-5, 0.0},
};

/* the degrees of P and Q in each interval */
#define PTC_DERF_PDEG(iv) ((iv) == 0 ? 4 : (iv) == 2 ? 7 : 6)
#define PTC_DERF_QDEG(iv) ((iv) == 0 ? 5 : (iv) == 1 ? 6 : (iv) == 2 ? 8 : 7)

/* y = P(v) / Q(v) of interval IV by Horner's rule from each polynomial's
 * leading coefficient (fdlibm's order; the table's zeros above it would
 * change nothing: 0 v + 0 = 0 and 0 v + c = c exactly) */
#define PTC_DERF_RATIONAL(v, Y, IV, FMA, DIV, SET)                             \
    { double_t_ p_ = SET(ptc_derf_c[PTC_DERF_PDEG(IV)][IV]);                  \
      double_t_ q_ = SET(ptc_derf_c[7 + PTC_DERF_QDEG(IV)][IV]);              \
      _Pragma("GCC unroll 8")                                                 \
      for (int j_ = PTC_DERF_PDEG(IV) - 1; j_ >= 0; j_--)                     \
          p_ = FMA(p_, v, SET(ptc_derf_c[j_][IV]));                           \
      _Pragma("GCC unroll 8")                                                 \
      for (int j_ = PTC_DERF_QDEG(IV) - 1; j_ >= 1; j_--)                     \
          q_ = FMA(q_, v, SET(ptc_derf_c[7 + j_][IV]));                       \
      q_ = FMA(q_, v, SET(1.0));                                              \
      Y = DIV(p_, q_); }

/* erfc |x| = e^(-x^2 - 0.5625 + y) / |x| (intervals 3 and 4) from |x| = ax,
 * inv = 1 / ax (rounded) and y, in the operations FMA .. SET and the table
 * read TS (ptc_dexpm1_vec.h's).  x^2 = xh + xl and y - 0.5625 = c + ec
 * exactly; exp's k from (c - xh) rounded, and its r = (xh + k ln2_hi/N
 * (exact: an FMA whose result is representable, xh and k ln2/N within a
 * factor 2) + c) + (ec - xl - k ln2_lo/N) */
#define PTC_DERF_TAIL(ax, inv, y, Q, FMA, ADD, SUB, MUL, SET, TS)              \
    { const double_t_ xh_ = MUL(ax, ax);                                      \
      const double_t_ nxh_ = SUB(SET(0.0), xh_);                              \
      const double_t_ xl_ = FMA(ax, ax, nxh_);                                \
      const double_t_ c_ = SUB(y, SET(0.5625));                               \
      const double_t_ cb_ = SUB(c_, y);                                       \
      const double_t_ ec_ = ADD(SUB(y, SUB(c_, cb_)), SUB(SET(-0.5625), cb_)); \
      const double_t_ kb_ = FMA(SUB(c_, xh_), SET(PTC_DEXP_INVLN2N), SET(PTC_DEXP_SHIFT)); \
      const double_t_ k_ = SUB(kb_, SET(PTC_DEXP_SHIFT));                     \
      const double_t_ r_ = ADD(ADD(FMA(k_, SET(PTC_DEXP_NLN2HI), nxh_), c_),   \
                               FMA(k_, SET(PTC_DEXP_NLN2LO), SUB(ec_, xl_))); \
      double_t_ t_, s_;                                                       \
      TS(kb_, t_, s_);                                                        \
      const double_t_ r2_ = MUL(r_, r_);                                      \
      const double_t_ p23_ = FMA(r_, SET(PTC_DEXP_C3), SET(PTC_DEXP_C2));     \
      const double_t_ p45_ = FMA(r_, SET(PTC_DEXP_C5), SET(PTC_DEXP_C4));     \
      const double_t_ tmp_ = FMA(MUL(r2_, r2_), p45_, FMA(r2_, p23_, ADD(t_, r_))); \
      const double_t_ e_ = FMA(s_, tmp_, s_);                                 \
      const double_t_ q0_ = MUL(e_, inv);                                     \
      Q = FMA(FMA(SUB(SET(0.0), q0_), ax, e_), inv, q0_); }

/* the special arguments (the scalar copy alone) */
static double ptc_derf_special(double x, int which)
{
    if (isnan(x)) return x + x;
    if (which == 0) return fabs(x) < 1.0 ? erf(x) : copysign(1.0, x);
    return erfc(x);
}

/* the interval of |x| (0 .. 3), or 4 for a special argument */
static inline __attribute__((always_inline)) int ptc_derf_class(double x, int which)
{
    const double ax = fabs(x);
    const int ok = which == 0 ? ((ax >= 0x1p-28) & (ax < 6.0))
                              : ((ax >= 0x1p-28) & (x > -6.0) & (x < 26.0));
    const int iv = (ax >= PTC_DERF_B1) + (ax >= PTC_DERF_B2) + (ax >= PTC_DERF_B3);
    return ok ? iv : 4;
}

#define PTC_DERF_S_ADD(a, b) ((a) + (b))
#define PTC_DERF_S_SUB(a, b) ((a) - (b))
#define PTC_DERF_S_MUL(a, b) ((a) * (b))
#define PTC_DERF_S_DIV(a, b) ((a) / (b))
#define PTC_DERF_S_SET(c) (c)

/* erf (which 0) or erfc (1) of x in interval iv (not special) */
static inline __attribute__((always_inline)) double ptc_derf_iv(double x, int iv, int which)
{
    typedef double double_t_;
    const double ax = fabs(x);
    const double inv = 1.0 / ax;
    const double v = iv == 0 ? ax * ax : iv == 1 ? ax - 1.0 : inv * inv;
    double y;
    PTC_DERF_RATIONAL(v, y, iv, fma, PTC_DERF_S_DIV, PTC_DERF_S_SET)
    double a, b = y, c, c2;
    if (iv >= 2)
        PTC_DERF_TAIL(ax, inv, y, b, fma, PTC_DERF_S_ADD, PTC_DERF_S_SUB, PTC_DERF_S_MUL,
                      PTC_DERF_S_SET, PTC_DEXPM1_S_TS)
    if (which == 0) {                  /* erf |x| = c2 - (a b + c) */
        if (iv == 0) { a = -ax; c = -ax; c2 = 0.0; }
        else if (iv == 1) { a = -1.0; c = -PTC_DERF_ERX; c2 = 0.0; }
        else { a = 1.0; c = 0.0; c2 = 1.0; }
        return copysign(c2 - fma(a, b, c), x);
    }
    const int neg = x < 0;             /* erfc x = c2 - (a b + c) */
    if (iv == 0) { a = x; c = x >= 0.25 ? x - 0.5 : x; c2 = x >= 0.25 ? 0.5 : 1.0; }
    else if (iv == 1) { a = neg ? -1.0 : 1.0; c = neg ? -PTC_DERF_ERX : 0.0;
                        c2 = neg ? 1.0 : PTC_DERF_1MERX; }
    else { a = neg ? 1.0 : -1.0; c = 0.0; c2 = neg ? 2.0 : 0.0; }
    return c2 - fma(a, b, c);
}

/* which: 0 erf, 1 erfc */
static inline __attribute__((always_inline)) double ptc_derf_w(double x, int which)
{
    const int cls = ptc_derf_class(x, which);
    return cls == 4 ? ptc_derf_special(x, which) : ptc_derf_iv(x, cls, which);
}

PTC_DLANE_SCALAR_FMA(ptc_derf_w)
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#define PTC_DERF_V_TS(kb, T, S) ptc_dexp_ts4(_mm256_castpd_si256(kb), &T, &S);
#define PTC_DERF_BL(a, b, m) _mm256_blendv_pd(a, b, m)
/* ptc_derf_iv on four lanes of one interval IV (a constant) */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256d
ptc_derf_iv4(__m256d x, const int IV, int which)
{
    typedef __m256d double_t_;
    const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
    const __m256d ax = _mm256_andnot_pd(sign, x);
    const __m256d inv = _mm256_div_pd(one, ax);
    const __m256d v = IV == 0 ? _mm256_mul_pd(ax, ax)
                    : IV == 1 ? _mm256_sub_pd(ax, one) : _mm256_mul_pd(inv, inv);
    __m256d y, b;
    PTC_DERF_RATIONAL(v, y, IV, _mm256_fmadd_pd, _mm256_div_pd, _mm256_set1_pd)
    if (IV >= 2)
        PTC_DERF_TAIL(ax, inv, y, b, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd,
                      _mm256_mul_pd, _mm256_set1_pd, PTC_DERF_V_TS)
    else
        b = y;
    __m256d a, c, c2;
    if (which == 0) {
        const __m256d nax = _mm256_xor_pd(ax, sign);
        if (IV == 0) { a = nax; c = nax; c2 = _mm256_setzero_pd(); }
        else if (IV == 1) { a = _mm256_set1_pd(-1.0); c = _mm256_set1_pd(-PTC_DERF_ERX);
                            c2 = _mm256_setzero_pd(); }
        else { a = one; c = _mm256_setzero_pd(); c2 = one; }
        const __m256d r = _mm256_sub_pd(c2, _mm256_fmadd_pd(a, b, c));
        return _mm256_or_pd(_mm256_andnot_pd(sign, r), _mm256_and_pd(sign, x));
    }
    const __m256d neg = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ);
    if (IV == 0) {
        const __m256d quarter = _mm256_cmp_pd(x, _mm256_set1_pd(0.25), _CMP_GE_OQ);
        a = x;
        c = PTC_DERF_BL(x, _mm256_sub_pd(x, _mm256_set1_pd(0.5)), quarter);
        c2 = PTC_DERF_BL(one, _mm256_set1_pd(0.5), quarter);
    } else if (IV == 1) {
        a = PTC_DERF_BL(one, _mm256_set1_pd(-1.0), neg);
        c = _mm256_and_pd(neg, _mm256_set1_pd(-PTC_DERF_ERX));
        c2 = PTC_DERF_BL(_mm256_set1_pd(PTC_DERF_1MERX), one, neg);
    } else {
        a = PTC_DERF_BL(_mm256_set1_pd(-1.0), one, neg);
        c = _mm256_setzero_pd();
        c2 = _mm256_and_pd(neg, _mm256_set1_pd(2.0));
    }
    return _mm256_sub_pd(c2, _mm256_fmadd_pd(a, b, c));
}

/* lanes of mixed intervals, two vectors at a time (their steps interleaved:
 * each is one long dependency chain): each coefficient of P (degree 7) and
 * Q (degree 8) is the lane's interval's, picked by one permute of the four
 * intervals' values (the shorter polynomials' high coefficients are zeros:
 * the same bits as ptc_derf_iv4), and the result c2 - (a b + c) with the
 * lane's a, b, c, c2 */
#define PTC_DERF_V_CO(j, perm)                                                 \
    _mm256_castps_pd(_mm256_permutevar8x32_ps(                                \
        _mm256_castpd_ps(_mm256_load_pd(ptc_derf_c[j])), perm))
#define PTC_DERF_H2 _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)
static inline __attribute__((always_inline, target("avx2,fma"))) void
ptc_derf_mixed8(const __m256d* x, const __m256d* m1, const __m256d* m2, const __m256d* m3,
                int which, __m256d* out)
{
    typedef __m256d double_t_;
    const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0);
    const __m256d zero = _mm256_setzero_pd();
    __m256d ax[2], inv[2], v[2], p[2], q[2], y[2], b[2];
    __m256i perm[2];
    PTC_DERF_H2 {
        ax[h] = _mm256_andnot_pd(sign, x[h]);
        /* the interval iv (0 .. 3) of each lane as the float indices 2 iv, 2 iv + 1 */
        const __m256i iv = _mm256_sub_epi64(_mm256_sub_epi64(
            _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_castpd_si256(m1[h])),
            _mm256_castpd_si256(m2[h])), _mm256_castpd_si256(m3[h]));
        const __m256i i2 = _mm256_slli_epi64(iv, 1);
        perm[h] = _mm256_or_si256(_mm256_or_si256(i2, _mm256_slli_epi64(i2, 32)),
                                  _mm256_set1_epi64x(1LL << 32));
        inv[h] = _mm256_div_pd(one, ax[h]);
        v[h] = PTC_DERF_BL(_mm256_mul_pd(ax[h], ax[h]),
                           PTC_DERF_BL(_mm256_sub_pd(ax[h], one), _mm256_mul_pd(inv[h], inv[h]), m2[h]),
                           m1[h]);
        p[h] = PTC_DERF_V_CO(7, perm[h]);
        q[h] = PTC_DERF_V_CO(15, perm[h]);
    }
    _Pragma("GCC unroll 8")
    for (int j = 6; j >= 0; j--) {
        PTC_DERF_H2 {
            p[h] = _mm256_fmadd_pd(p[h], v[h], PTC_DERF_V_CO(j, perm[h]));
            q[h] = _mm256_fmadd_pd(q[h], v[h], PTC_DERF_V_CO(j + 8, perm[h]));
        }
    }
    PTC_DERF_H2 {
        q[h] = _mm256_fmadd_pd(q[h], v[h], one);
        y[h] = _mm256_div_pd(p[h], q[h]);
    }
    if (_mm256_movemask_pd(_mm256_or_pd(m2[0], m2[1]))) {
        PTC_DERF_H2 {
            __m256d t;
            PTC_DERF_TAIL(ax[h], inv[h], y[h], t, _mm256_fmadd_pd, _mm256_add_pd, _mm256_sub_pd,
                          _mm256_mul_pd, _mm256_set1_pd, PTC_DERF_V_TS)
            b[h] = PTC_DERF_BL(y[h], t, m2[h]);
        }
    } else {
        b[0] = y[0];
        b[1] = y[1];
    }
    PTC_DERF_H2 {
        __m256d a, c, c2;
        if (which == 0) {
            const __m256d nax = _mm256_xor_pd(ax[h], sign);
            a = PTC_DERF_BL(nax, PTC_DERF_BL(_mm256_set1_pd(-1.0), one, m2[h]), m1[h]);
            c = PTC_DERF_BL(nax, PTC_DERF_BL(_mm256_set1_pd(-PTC_DERF_ERX), zero, m2[h]), m1[h]);
            c2 = _mm256_and_pd(m2[h], one);
            const __m256d r = _mm256_sub_pd(c2, _mm256_fmadd_pd(a, b[h], c));
            out[h] = _mm256_or_pd(_mm256_andnot_pd(sign, r), _mm256_and_pd(sign, x[h]));
        } else {
            const __m256d neg = _mm256_cmp_pd(x[h], zero, _CMP_LT_OQ);
            const __m256d quarter = _mm256_cmp_pd(x[h], _mm256_set1_pd(0.25), _CMP_GE_OQ);
            const __m256d pm = PTC_DERF_BL(one, _mm256_set1_pd(-1.0), neg);        /* +-1 */
            a = PTC_DERF_BL(PTC_DERF_BL(x[h], pm, m1[h]), _mm256_xor_pd(pm, sign), m2[h]);
            const __m256d c1 = PTC_DERF_BL(x[h], _mm256_sub_pd(x[h], _mm256_set1_pd(0.5)), quarter);
            c = PTC_DERF_BL(c1, PTC_DERF_BL(_mm256_and_pd(neg, _mm256_set1_pd(-PTC_DERF_ERX)), zero,
                                            m2[h]), m1[h]);
            const __m256d c21 = PTC_DERF_BL(one, _mm256_set1_pd(0.5), quarter);
            const __m256d c22 = PTC_DERF_BL(_mm256_set1_pd(PTC_DERF_1MERX), one, neg);
            c2 = PTC_DERF_BL(c21, PTC_DERF_BL(c22, _mm256_and_pd(neg, _mm256_set1_pd(2.0)), m2[h]),
                             m1[h]);
            out[h] = _mm256_sub_pd(c2, _mm256_fmadd_pd(a, b[h], c));
        }
    }
}

/* the lanes' interval masks (|x| >= 0.84375, 1.25, 1/0.35) and whether all
 * are in range (not special) */
static inline __attribute__((always_inline, target("avx2,fma"))) int
ptc_derf_masks(__m256d x, int which, __m256d* m1, __m256d* m2, __m256d* m3)
{
    const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    const __m256d inr = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-28), _CMP_GE_OQ),
                                which == 0
                                ? _mm256_cmp_pd(ax, _mm256_set1_pd(6.0), _CMP_LT_OQ)
                                : _mm256_and_pd(_mm256_cmp_pd(x, _mm256_set1_pd(-6.0), _CMP_GT_OQ),
                                                _mm256_cmp_pd(x, _mm256_set1_pd(26.0), _CMP_LT_OQ)));
    *m1 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DERF_B1), _CMP_GE_OQ);
    *m2 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DERF_B2), _CMP_GE_OQ);
    *m3 = _mm256_cmp_pd(ax, _mm256_set1_pd(PTC_DERF_B3), _CMP_GE_OQ);
    return _mm256_movemask_pd(inr) == 0xf;
}

/* the interval of all four lanes, or -1 where they differ */
static inline __attribute__((always_inline, target("avx2,fma"))) int
ptc_derf_one_interval(__m256d m1, __m256d m2, __m256d m3)
{
    const int k1 = _mm256_movemask_pd(m1), k2 = _mm256_movemask_pd(m2), k3 = _mm256_movemask_pd(m3);
    if ((k1 == 0 || k1 == 0xf) && (k2 == 0 || k2 == 0xf) && (k3 == 0 || k3 == 0xf))
        return (k1 & 1) + (k2 & 1) + (k3 & 1);
    return -1;
}

/* four lanes of one interval (a vector with a special argument by the
 * scalar copy) */
static inline __attribute__((always_inline, target("avx2,fma"))) __m256d
ptc_derf_uniform4(__m256d x, int iv, int which)
{
    switch (iv) {
    case 0: return ptc_derf_iv4(x, 0, which);
    case 1: return ptc_derf_iv4(x, 1, which);
    case 2: return ptc_derf_iv4(x, 2, which);
    case 3: return ptc_derf_iv4(x, 3, which);
    }
    double xs[4], ys[4];
    _mm256_storeu_pd(xs, x);
    for (int l = 0; l < 4; l++) ys[l] = ptc_derf_w_fma(xs[l], which);
    return _mm256_loadu_pd(ys);
}

/* the contiguous loop: eight lanes a step; a vector within one interval by
 * that interval's code (smooth data: no selection), two of mixed intervals
 * by ptc_derf_mixed8 (one alone by it with its copy) */
__attribute__((target("avx2,fma"), optimize("fp-contract=off")))
static void ptc_derf_map_avx2(double* o, const double* a, Py_ssize_t n, int which)
{
    Py_ssize_t i = 0;
    double buf[8];
    while (i < n) {
        const Py_ssize_t m = n - i < 8 ? n - i : 8;
        const double* src = a + i;
        if (m < 8) {
            for (int l = 0; l < 8; l++) buf[l] = l < m ? a[i + l] : 1.0;
            src = buf;
        }
        __m256d x[2], m1[2], m2[2], m3[2], r[2];
        int kind[2];
        x[0] = _mm256_loadu_pd(src);
        x[1] = _mm256_loadu_pd(src + 4);
        for (int h = 0; h < 2; h++) {
            const int ok = ptc_derf_masks(x[h], which, &m1[h], &m2[h], &m3[h]);
            kind[h] = ok ? ptc_derf_one_interval(m1[h], m2[h], m3[h]) : 4;
        }
        if (kind[0] < 0 && kind[1] < 0) {
            ptc_derf_mixed8(x, m1, m2, m3, which, r);
        } else {
            for (int h = 0; h < 2; h++) {
                if (kind[h] >= 0) {
                    r[h] = ptc_derf_uniform4(x[h], kind[h], which);
                } else {
                    __m256d xx[2] = {x[h], x[h]}, mm1[2] = {m1[h], m1[h]}, mm2[2] = {m2[h], m2[h]};
                    __m256d mm3[2] = {m3[h], m3[h]}, rr[2];
                    ptc_derf_mixed8(xx, mm1, mm2, mm3, which, rr);
                    r[h] = rr[0];
                }
            }
        }
        if (m == 8) {
            _mm256_storeu_pd(o + i, r[0]);
            _mm256_storeu_pd(o + i + 4, r[1]);
        } else {
            _mm256_storeu_pd(buf, r[0]);
            _mm256_storeu_pd(buf + 4, r[1]);
            for (int l = 0; l < m; l++) o[i + l] = buf[l];
        }
        i += m;
    }
}
#endif
PTC_DLANE_ENTRY(erf, ptc_derf_map, ptc_derf_w, 0)
PTC_DLANE_ENTRY(erfc, ptc_derf_map, ptc_derf_w, 1)
#endif
