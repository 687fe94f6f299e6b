/* float32 exp, exp2, expm1, tanh, sigmoid, erf, atan, asin and acos of
 * contiguous arrays in float lanes with FMA.
 *
 * torch's accuracy class (SLEEF's u10 functions: within 1.0 ulp of the
 * float64 function rounded to float32; measured over every 61st float, all
 * exponents and signs: max 1 ulp for each), at 8 (AVX2) or 16 (AVX-512)
 * float lanes where the earlier loops computed in double lanes (exp2,
 * expm1, atan, asin, acos), without FMA (exp, tanh, sigmoid: Cephes'
 * polynomials, tanh up to 2 ulp) or auto-vectorised (erf).  The polynomials
 * are minimax fits (Lawson's weighted least squares, relative error) rounded
 * to float.
 *
 * exp:   x = k ln2 + r, k = x / ln2 rounded, |r| <= ln2/2 (+ a rounding):
 *        x - k LN2H exact (one FMA: LN2H is ln2 in float, k < 2^8, the
 *        difference below 1/2 needs no more than 24 bits), - k LN2L rounded;
 *        e^r = 1 + (r + r^2 P(r)), P a degree-4 fit of (e^r - 1 - r) / r^2
 *        (relative error < 4e-9 of e^r), times 2^k as two exact power-of-two
 *        factors (the first product exact, the second rounds once, so
 *        subnormal results are right; one factor where 2^k is a normal float
 *        -- the same exact product rounded once, so the same bits).  The
 *        argument is clamped to [-104, 89] (0 and inf come out of the
 *        scaling; NaN passes through the clamp, whose min/max return the
 *        argument when it is NaN).
 * exp2:  x = k + r, k = x rounded (r exact), 2^r = 1 + r Q(r), Q a degree-5
 *        fit on [-1/2, 1/2]; the same scaling, the argument clamped to
 *        [-152, 129].
 * expm1: the reduction of exp with r = rh + rl kept apart (rh = x - k LN2H
 *        exact, rl = -k LN2L), u = e^r - 1 = rh + (rl + r^2 P(r)), then
 *        2^k u + (2^k - 1) in one FMA (k = 0: u itself); k = 128 (x in
 *        (88.38, 88.73)) as 2 (2^127 u + 2^127); the argument clamped to
 *        [-25, 89] (below -25 the result rounds to -1); expm1(-0) = -0.
 * tanh:  |x| < 1: |x| + |x|^3 T(x^2), T a degree-6 fit (relative error
 *        < 5e-9); above, 1 - 2 / (e^(2|x|) + 1) with the exp above (|x|
 *        clamped to 9.1, past which tanh rounds to 1); the sign of x put
 *        back (tanh(-0) = -0).
 * sigmoid: e = e^-|x| = eh + el (the exp's 1 + u kept as a pair, |x|
 *        clamped to 104), 1 / (1 + e) for x >= 0 and e / (1 + e) below as
 *        one division 1 / (1 + eh) and a Newton step on the pairs.
 * erf:   |x| < 1: |x| + |x| E(x^2), E a degree-6 fit of (erf x - x) / x;
 *        above, 1 - e^(-x^2) R(|x| - 2.5), R a degree-8 fit of erfc(x) e^(x^2)
 *        on [1, 4] (|x| clamped to 4, past which erf rounds to 1), x^2 = h + l
 *        exactly and e^-(h + l) = e^-h (1 - l); the sign put back.
 * atan:  |x| <= 1: t + t^3 A(t^2), A a degree-8 fit on [0, 1]; above,
 *        pi/2 - atan(1/|x|) with 1/|x| = th + tl (tl from the division's
 *        residual) and pi/2 a float pair (Fast2Sum on pi/2 - th).
 * asin, acos: |x| <= 1/2: x + x^3 S(x^2) (acos: pi/2 minus it, as atan's);
 *        above, s = sqrt((1 - |x|) / 2) (1 - |x| exact) with the square
 *        root's residual, asin = pi/2 - 2 asin(s), acos = 2 asin(s) (x > 0)
 *        or pi - 2 asin(s); |x| > 1 gives NaN through the square root.
 * silu:  x / (1 + e^-x) with the exp above: torch's formula, within 2 ulp
 *        (measured), -0 below -88.72 where e^-x overflows, as torch's.
 *
 * The AVX-512 and AVX2 copies run where the CPU has FMA (ptc_fma_level),
 * the scalar copy (fmaf; compiled with FMA where the CPU has it) everywhere
 * else, for the single values of expressions: the same operations in the
 * same order, so the bits do not depend on the CPU, and the vector tails run
 * through one padded vector.  (A NaN argument gives a NaN on every copy;
 * its sign and payload are whatever the operand order the compiler picks
 * carries through, and may differ between copies.)  The AVX-512 copy is the
 * same source as the AVX2 one (the macros below at 16 lanes instead of 8),
 * compiled once per function (PTC_LANE_SPECIAL). */
#ifndef PTC_FMATH_VEC_H
#define PTC_FMATH_VEC_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level, PTC_PADDED_MAP */

#define PTC_FEXP_LOG2E 0x1.715476p+0f
#define PTC_FEXP_SHIFT 0x1.8p23f                /* x + SHIFT rounds x to an integer */
#define PTC_FEXP_SHIFT_BITS 0x4b400000          /* SHIFT's bits: k + SHIFT_BITS = (k + SHIFT)'s */
#define PTC_FEXP_LN2H 0x1.62e430p-1f
#define PTC_FEXP_LN2L (-0x1.05c610p-29f)
/* (e^r - 1 - r) / r^2 on [-0.35, 0.35] */
#define PTC_FEXP_P0 0x1.fffffcp-2f
#define PTC_FEXP_P1 0x1.55548ap-3f
#define PTC_FEXP_P2 0x1.555916p-5f
#define PTC_FEXP_P3 0x1.123fb6p-7f
#define PTC_FEXP_P4 0x1.6a1a8ap-10f
/* (2^r - 1) / r on [-0.5, 0.5] */
#define PTC_FEXP2_Q0 0x1.62e430p-1f
#define PTC_FEXP2_Q1 0x1.ebfbdcp-3f
#define PTC_FEXP2_Q2 0x1.c6aee8p-5f
#define PTC_FEXP2_Q3 0x1.3b2d4cp-7f
#define PTC_FEXP2_Q4 0x1.5f3e54p-10f
#define PTC_FEXP2_Q5 0x1.41fbbap-13f
/* (tanh x - x) / x^3 as a polynomial in x^2 on [0, 1] */
#define PTC_FTANH_T0 (-0x1.55553cp-2f)
#define PTC_FTANH_T1 0x1.110be2p-3f
#define PTC_FTANH_T2 (-0x1.b96222p-5f)
#define PTC_FTANH_T3 0x1.60098ap-6f
#define PTC_FTANH_T4 (-0x1.0460acp-7f)
#define PTC_FTANH_T5 0x1.2da4b0p-9f
#define PTC_FTANH_T6 (-0x1.77dc8cp-12f)
/* (erf x - x) / x as a polynomial in x^2 on [0, 1] */
#define PTC_FERF_Q0 0x1.06eba8p-3f
#define PTC_FERF_Q1 (-0x1.81273ep-2f)
#define PTC_FERF_Q2 0x1.ce2cf8p-4f
#define PTC_FERF_Q3 (-0x1.b7f90cp-6f)
#define PTC_FERF_Q4 0x1.5405b0p-8f
#define PTC_FERF_Q5 (-0x1.a3f6f2p-11f)
#define PTC_FERF_Q6 0x1.496a0cp-14f
/* erfc(x) e^(x^2) as a polynomial in x - 2.5 on [1, 4] */
#define PTC_FERF_R0 0x1.afbbe6p-3f
#define PTC_FERF_R1 (-0x1.30816ep-4f)
#define PTC_FERF_R2 0x1.983384p-6f
#define PTC_FERF_R3 (-0x1.0a7a46p-7f)
#define PTC_FERF_R4 0x1.2dcb32p-9f
#define PTC_FERF_R5 (-0x1.5a9dfcp-11f)
#define PTC_FERF_R6 0x1.1cdb58p-11f
#define PTC_FERF_R7 0x1.d7fe14p-13f
#define PTC_FERF_R8 0x1.c02232p-14f

/* (atan t - t) / t^3 as a polynomial in t^2 on [0, 1] */
#define PTC_FATAN_A0 (-0x1.55553ep-2f)
#define PTC_FATAN_A1 0x1.9991fep-3f
#define PTC_FATAN_A2 (-0x1.2421b4p-3f)
#define PTC_FATAN_A3 0x1.c099f0p-4f
#define PTC_FATAN_A4 (-0x1.583466p-4f)
#define PTC_FATAN_A5 0x1.dac952p-5f
#define PTC_FATAN_A6 (-0x1.fed03ep-6f)
#define PTC_FATAN_A7 0x1.65a522p-7f
#define PTC_FATAN_A8 (-0x1.d62dbap-10f)
/* (asin t - t) / t^3 as a polynomial in t^2 on [0, 1/4] */
#define PTC_FASIN_S0 0x1.5555c8p-3f
#define PTC_FASIN_S1 0x1.3301e4p-4f
#define PTC_FASIN_S2 0x1.747e4cp-5f
#define PTC_FASIN_S3 0x1.8c282cp-6f
#define PTC_FASIN_S4 0x1.596d38p-5f
/* pi/2 and pi as float pairs */
#define PTC_FPIO2H 0x1.921fb6p+0f
#define PTC_FPIO2L (-0x1.777a5cp-25f)
#define PTC_FPIH 0x1.921fb6p+1f
#define PTC_FPIL (-0x1.777a5cp-24f)

/* The macros below are written once over VF float lanes (VI their int32
 * lanes; a plain float and int32_t for the scalar copy): FMA the fused
 * multiply-add, ASF / ASI an integer / float lanes' bits as the other, MIN(c,
 * v) / MAX(c, v) c < v ? c : v / c > v ? c : v (v when v is NaN: the x86
 * min/max instructions with v second), ZERO VF zeros. */

/* u = e^x - 1 before the scaling by 2^k (k in the integer lanes KI): e^x =
 * 2^k (1 + u) */
#define PTC_FEXP_POLY(VF, VI, x, U, KI, ZERO, FMA, ASI)                        \
    VF U; VI KI;                                                             \
    { const VF kb_ = FMA(x, ZERO + PTC_FEXP_LOG2E, ZERO + PTC_FEXP_SHIFT);   \
      const VF k_ = kb_ - PTC_FEXP_SHIFT;                                    \
      VF r_ = FMA(k_, ZERO - PTC_FEXP_LN2H, x);            /* exact */       \
      r_ = FMA(k_, ZERO - PTC_FEXP_LN2L, r_);                                \
      VF p_ = FMA(r_, ZERO + PTC_FEXP_P4, ZERO + PTC_FEXP_P3);               \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P2);                                  \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P1);                                  \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P0);                                  \
      U = FMA(r_ * r_, p_, r_);                                              \
      KI = ASI(kb_) - PTC_FEXP_SHIFT_BITS; }
/* y = e^x before the scaling */
#define PTC_FEXP_CORE(VF, VI, x, Y, KI, ZERO, FMA, ASI)                        \
    PTC_FEXP_POLY(VF, VI, x, Y, KI, ZERO, FMA, ASI)                          \
    Y = Y + 1.0f;
/* y = 2^x before the scaling */
#define PTC_FEXP2_CORE(VF, VI, x, Y, KI, ZERO, FMA, ASI)                       \
    VF Y; VI KI;                                                             \
    { const VF kb_ = x + PTC_FEXP_SHIFT;                                     \
      const VF r_ = x - (kb_ - PTC_FEXP_SHIFT);            /* exact */       \
      VF q_ = FMA(r_, ZERO + PTC_FEXP2_Q5, ZERO + PTC_FEXP2_Q4);             \
      q_ = FMA(q_, r_, ZERO + PTC_FEXP2_Q3);                                 \
      q_ = FMA(q_, r_, ZERO + PTC_FEXP2_Q2);                                 \
      q_ = FMA(q_, r_, ZERO + PTC_FEXP2_Q1);                                 \
      q_ = FMA(q_, r_, ZERO + PTC_FEXP2_Q0);                                 \
      Y = FMA(q_, r_, ZERO + 1.0f);                                          \
      KI = ASI(kb_) - PTC_FEXP_SHIFT_BITS; }
/* y * 2^k for -150 <= k <= 129 as two exact factors, or (ONE) one where
 * -126 <= k <= 127 (the same bits) */
#define PTC_FEXP_SCALE2(y, ki, ASF)                                            \
    { const __typeof__(ki) k1_ = ki >> 1;                                    \
      y = (y * ASF((k1_ + 127) << 23)) * ASF((ki - k1_ + 127) << 23); }
#define PTC_FEXP_SCALE1(y, ki, ASF) y = y * ASF((ki + 127) << 23);
/* the same for a pair y, z */
#define PTC_FEXP_SCALE2P(y, z, ki, ASF) PTC_FEXP_SCALE2(y, ki, ASF) PTC_FEXP_SCALE2(z, ki, ASF)
#define PTC_FEXP_SCALE1P(y, z, ki, ASF)                                        \
    { const __typeof__(y) f_ = ASF((ki + 127) << 23); y = y * f_; z = z * f_; }

/* e^x of one vector for the softmax passes (ptc_reduce_vec.h's rows and
 * columns, ptc_softmax_rows.h's causal rows; ptc_fexp8_softmax and
 * ptc_fexp16_softmax below): ptc_exp_fv_f32's operations and bits, except
 * that the lanes below -104 are 0 by selection -- ptc_exp_fv_f32 computes
 * e^-104, which rounds to 0 too, but as an underflowing product (a
 * microcode assist per lane on some CPUs, and a masked softmax's -inf
 * scores are half its lanes) */
#define PTC_FEXP_SOFTMAX_BODY(VF, VI, FMA, xc)                                \
    const VF zero = {0};                                                      \
    PTC_FEXP_CORE(VF, VI, xc, y, ki, zero, FMA, (VI))                         \
    PTC_FEXP_SCALE2(y, ki, (VF))

/* expm1 of x clamped to [-25, 89] (NaN passes) */
#define PTC_FEXPM1_CORE(VF, VI, x, Y, ZERO, FMA, ASF, ASI)                     \
    VF Y;                                                                    \
    { const VF kb_ = FMA(x, ZERO + PTC_FEXP_LOG2E, ZERO + PTC_FEXP_SHIFT);   \
      const VF k_ = kb_ - PTC_FEXP_SHIFT;                                    \
      const VF rh_ = FMA(k_, ZERO - PTC_FEXP_LN2H, x);     /* exact */       \
      const VF rl_ = k_ * -PTC_FEXP_LN2L;                                    \
      const VF r_ = rh_ + rl_;                                               \
      VF p_ = FMA(r_, ZERO + PTC_FEXP_P4, ZERO + PTC_FEXP_P3);               \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P2);                                  \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P1);                                  \
      p_ = FMA(p_, r_, ZERO + PTC_FEXP_P0);                                  \
      const VF u_ = rh_ + FMA(r_ * r_, p_, rl_);                             \
      const VI ki_ = ASI(kb_) - PTC_FEXP_SHIFT_BITS;                         \
      const VI big_ = (127 - ki_) >> 31;                   /* -1: k = 128 */ \
      const VF s_ = ASF((ki_ + big_ + 127) << 23);                           \
      Y = FMA(s_, u_, s_ - 1.0f) * ASF(0x3f800000 + (big_ & 0x00800000)); }

/* tanh |x| from the absolute value a (< 1: the odd polynomial, SMALL; else
 * from e^(2a), LARGE) */
#define PTC_FTANH_SMALL(VF, a, Y, ZERO, FMA)                                   \
    { const VF a2_ = a * a;                                                  \
      VF t_ = FMA(a2_, ZERO + PTC_FTANH_T6, ZERO + PTC_FTANH_T5);            \
      t_ = FMA(t_, a2_, ZERO + PTC_FTANH_T4);                                \
      t_ = FMA(t_, a2_, ZERO + PTC_FTANH_T3);                                \
      t_ = FMA(t_, a2_, ZERO + PTC_FTANH_T2);                                \
      t_ = FMA(t_, a2_, ZERO + PTC_FTANH_T1);                                \
      t_ = FMA(t_, a2_, ZERO + PTC_FTANH_T0);                                \
      Y = FMA(a2_ * a, t_, a); }
#define PTC_FTANH_LARGE(VF, VI, a, Y, ZERO, MIN, FMA, ASF, ASI)                \
    { const VF ac_ = MIN(ZERO + 9.1f, a);                                    \
      const VF a2x_ = ac_ + ac_;                                             \
      PTC_FEXP_CORE(VF, VI, a2x_, e_, ke_, ZERO, FMA, ASI)                   \
      PTC_FEXP_SCALE1(e_, ke_, ASF)                                          \
      Y = 1.0f - 2.0f / (e_ + 1.0f); }

/* erf |x| from the absolute value a: < 1 a + a Q(a^2) (SMALL); else
 * 1 - e^(-a^2) R(a - 2.5) (a clamped to 4, past which erf rounds to 1), a^2
 * = h + l exactly and e^-(h + l) = e^-h (1 - l) */
#define PTC_FERF_SMALL(VF, a, Y, ZERO, FMA)                                    \
    { const VF s_ = a * a;                                                   \
      VF q_ = FMA(s_, ZERO + PTC_FERF_Q6, ZERO + PTC_FERF_Q5);               \
      q_ = FMA(q_, s_, ZERO + PTC_FERF_Q4);                                  \
      q_ = FMA(q_, s_, ZERO + PTC_FERF_Q3);                                  \
      q_ = FMA(q_, s_, ZERO + PTC_FERF_Q2);                                  \
      q_ = FMA(q_, s_, ZERO + PTC_FERF_Q1);                                  \
      q_ = FMA(q_, s_, ZERO + PTC_FERF_Q0);                                  \
      Y = FMA(a, q_, a); }
#define PTC_FERF_LARGE(VF, VI, a, Y, ZERO, MIN, FMA, ASF, ASI)                 \
    { const VF ac_ = MIN(ZERO + 4.0f, a);                                    \
      const VF h_ = ac_ * ac_;                                               \
      const VF l_ = FMA(ac_, ac_, -h_);                                      \
      const VF t_ = ac_ - 2.5f;                            /* exact */       \
      VF r_ = FMA(t_, ZERO + PTC_FERF_R8, ZERO + PTC_FERF_R7);               \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R6);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R5);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R4);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R3);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R2);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R1);                                  \
      r_ = FMA(r_, t_, ZERO + PTC_FERF_R0);                                  \
      r_ = FMA(-l_, r_, r_);                                                 \
      const VF nh_ = -h_;                                                    \
      PTC_FEXP_CORE(VF, VI, nh_, e_, ke_, ZERO, FMA, ASI)                    \
      PTC_FEXP_SCALE1(e_, ke_, ASF)                                          \
      Y = FMA(-e_, r_, ZERO + 1.0f); }

/* C = atan(th + tl) - th for 0 <= th + tl <= 1 (tl << th) */
#define PTC_FATAN_POLY(VF, th, tl, C, ZERO, FMA)                               \
    VF C;                                                                    \
    { const VF s_ = th * th;                                                 \
      VF p_ = FMA(s_, ZERO + PTC_FATAN_A8, ZERO + PTC_FATAN_A7);             \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A6);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A5);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A4);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A3);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A2);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A1);                                 \
      p_ = FMA(p_, s_, ZERO + PTC_FATAN_A0);                                 \
      C = FMA(th * s_, p_, tl); }
/* C = asin(t + tl) - t for 0 <= t + tl <= 1/2 given z = t^2 (rounded; tl << t) */
#define PTC_FASIN_POLY(VF, t, tl, z, C, ZERO, FMA)                             \
    VF C;                                                                    \
    { VF p_ = FMA(z, ZERO + PTC_FASIN_S4, ZERO + PTC_FASIN_S3);              \
      p_ = FMA(p_, z, ZERO + PTC_FASIN_S2);                                  \
      p_ = FMA(p_, z, ZERO + PTC_FASIN_S1);                                  \
      p_ = FMA(p_, z, ZERO + PTC_FASIN_S0);                                  \
      C = FMA(t * z, p_, tl); }
/* Y = H - (t + c) for |t| <= H / 2 (a float pair H + L; Fast2Sum on H - t) */
#define PTC_FPAIR_SUB(VF, HI, LO, t, c, Y)                                     \
    { const VF t_ = (t);                                                     \
      const VF s1_ = HI - t_;                                                \
      const VF e1_ = (HI - s1_) - t_;                      /* exact */       \
      Y = s1_ + ((LO - (c)) + e1_); }
/* asin and acos for |x| > 1/2 from a = |x|: s + sl = sqrt((1 - a) / 2) (the
 * square root's residual, NaN where a > 1), C = asin(s + sl) - s */
#define PTC_FASIN_BIG(VF, a, S, C, ZERO, FMA, MAX, SQRT)                       \
    VF S;                                                                    \
    const VF z_ = (1.0f - a) * 0.5f;                       /* exact */       \
    S = SQRT(z_);                                                            \
    const VF sl_ = FMA(-S, S, z_) / MAX(ZERO + 0x1p-100f, S + S);           \
    PTC_FASIN_POLY(VF, S, sl_, z_, C, ZERO, FMA)

/* sigmoid of x from a = |x|: e = e^-a = eh + el (the exp's 1 + u as a
 * pair, then scaled), N / (1 + e) with N = 1 (x >= 0) or e (x < 0; SIGNSEL(s,
 * a, b): a where s's sign bit is set), 1 + e = d + dl: r = 1 / d, y0 = N r
 * and one Newton step on the pairs, y0 + (N - y0 (d + dl)) r */
#define PTC_FSIGMOID_CORE(VF, VI, a, x, Y, ZERO, MIN, FMA, ASF, ASI, SCALEP, SIGNSEL) \
    VF Y;                                                                    \
    { const VF na_ = ZERO - MIN(ZERO + 104.0f, a);                           \
      PTC_FEXP_POLY(VF, VI, na_, u_, ke_, ZERO, FMA, ASI)                    \
      VF eh_ = 1.0f + u_;                                                    \
      VF el_ = (1.0f - eh_) + u_;                          /* exact */       \
      SCALEP(eh_, el_, ke_, ASF)                                             \
      const VF d_ = 1.0f + eh_;                                              \
      const VF dl_ = ((1.0f - d_) + eh_) + el_;                              \
      const VF nh_ = SIGNSEL(x, eh_, ZERO + 1.0f);                           \
      const VF nl_ = SIGNSEL(x, el_, ZERO);                                  \
      const VF r_ = 1.0f / d_;                                               \
      const VF y0_ = nh_ * r_;                                               \
      const VF res_ = FMA(-y0_, d_, nh_) + FMA(-y0_, dl_, nl_);              \
      Y = FMA(res_, r_, y0_); }

static inline float ptc_fexp_asf(int32_t i) { float f; memcpy(&f, &i, 4); return f; }
static inline int32_t ptc_fexp_asi(float f) { int32_t i; memcpy(&i, &f, 4); return i; }
#define PTC_FEXP_MIN_S(c, v) ((c) < (v) ? (c) : (v))
#define PTC_FEXP_MAX_S(c, v) ((c) > (v) ? (c) : (v))
#define PTC_FEXP_SIGNSEL_S(s, a, b) (signbit(s) ? (a) : (b))

/* atan (which 6) of |x| = a */
static inline __attribute__((always_inline)) float ptc_fatan_abs(float a)
{
    const float zero = 0.0f;
    float y;
    if (!(a > 1.0f)) {
        PTC_FATAN_POLY(float, a, zero, c, zero, fmaf)
        return a + c;
    }
    const float ac = PTC_FEXP_MIN_S(0x1p30f, a);
    const float th = 1.0f / ac;
    const float tl = fmaf(-th, ac, 1.0f) * th;
    PTC_FATAN_POLY(float, th, tl, c, zero, fmaf)
    PTC_FPAIR_SUB(float, PTC_FPIO2H, PTC_FPIO2L, th, c, y)
    return y;
}
/* asin (which 7) of |x| = a, acos (8) of x */
static inline __attribute__((always_inline)) float ptc_fasin_k(float x, float a, int which)
{
    const float zero = 0.0f;
    float y;
    if (a <= 0.5f) {
        const float z = x * x;
        PTC_FASIN_POLY(float, x, -zero, z, c, zero, fmaf)   /* asin(-0) = -0 */
        if (which == 7) return x + c;
        PTC_FPAIR_SUB(float, PTC_FPIO2H, PTC_FPIO2L, x, c, y)
        return y;
    }
    PTC_FASIN_BIG(float, a, s, c, zero, fmaf, PTC_FEXP_MAX_S, sqrtf)
    if (which == 7) {
        PTC_FPAIR_SUB(float, PTC_FPIO2H, PTC_FPIO2L, s + s, c + c, y)
        return copysignf(y, x);
    }
    if (x > 0.0f) return (s + c) * 2.0f;
    PTC_FPAIR_SUB(float, PTC_FPIH, PTC_FPIL, s + s, c + c, y)
    return y;
}

/* the scalar copies: which 0 exp, 1 exp2, 2 expm1, 3 tanh, 4 sigmoid, 5 erf,
 * 6 atan, 7 asin, 8 acos, 9 silu */
static inline __attribute__((always_inline)) float ptc_fexp_k(float x, int which)
{
    const float zero = 0.0f;
    if (which == 0 || which == 9) {
        const float xe = which == 9 ? -x : x;
        const float xc = PTC_FEXP_MAX_S(-104.0f, PTC_FEXP_MIN_S(89.0f, xe));
        PTC_FEXP_CORE(float, int32_t, xc, y, ki, zero, fmaf, ptc_fexp_asi)
        PTC_FEXP_SCALE2(y, ki, ptc_fexp_asf)
        return which == 9 ? x / (1.0f + y) : y;
    }
    if (which == 1) {
        const float xc = PTC_FEXP_MAX_S(-152.0f, PTC_FEXP_MIN_S(129.0f, x));
        PTC_FEXP2_CORE(float, int32_t, xc, y, ki, zero, fmaf, ptc_fexp_asi)
        PTC_FEXP_SCALE2(y, ki, ptc_fexp_asf)
        return y;
    }
    if (which == 2) {
        const float xc = PTC_FEXP_MAX_S(-25.0f, PTC_FEXP_MIN_S(89.0f, x));
        PTC_FEXPM1_CORE(float, int32_t, xc, y, zero, fmaf, ptc_fexp_asf, ptc_fexp_asi)
        return x == 0.0f ? x : y;                 /* expm1(-0) = -0 */
    }
    const float a = fabsf(x);
    float y;
    if (which == 3) {
        if (a < 1.0f) PTC_FTANH_SMALL(float, a, y, zero, fmaf)
        else PTC_FTANH_LARGE(float, int32_t, a, y, zero, PTC_FEXP_MIN_S, fmaf, ptc_fexp_asf,
                             ptc_fexp_asi)
        return copysignf(y, x);
    }
    if (which == 6) return copysignf(ptc_fatan_abs(a), x);
    if (which == 7 || which == 8) return ptc_fasin_k(x, a, which);
    if (which == 5) {
        if (a < 1.0f) PTC_FERF_SMALL(float, a, y, zero, fmaf)
        else PTC_FERF_LARGE(float, int32_t, a, y, zero, PTC_FEXP_MIN_S, fmaf, ptc_fexp_asf,
                            ptc_fexp_asi)
        return copysignf(y, x);
    }
    PTC_FSIGMOID_CORE(float, int32_t, a, x, ys, zero, PTC_FEXP_MIN_S, fmaf, ptc_fexp_asf,
                      ptc_fexp_asi, PTC_FEXP_SCALE2P, PTC_FEXP_SIGNSEL_S)
    return ys;
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
/* MIN(c, v) where v <= c already */
#define PTC_FEXP_NOMIN(c, v) (v)
/* y = CORE's exp (PTC_FEXP_CORE or PTC_FEXP2_CORE) of the lanes xe: one
 * scaling factor where every |xe| < LIM (2^k normal), else the argument
 * clamped to [LO, HI] and two factors (the same bits where both apply) */
#define PTC_FEXP_PICK(VF, VI, CORE, xe, LIM, LO, HI, FMA, MIN, MAX, ALL, y)    \
    if (ALL((VF)((VI)xe & 0x7fffffff) < LIM)) {                              \
        CORE(VF, VI, xe, e, ki, zero, FMA, (VI))                             \
        PTC_FEXP_SCALE1(e, ki, (VF))                                         \
        y = e;                                                               \
    } else {                                                                 \
        const VF xc = MAX(zero + LO, MIN(zero + HI, xe));                    \
        CORE(VF, VI, xc, e, ki, zero, FMA, (VI))                             \
        PTC_FEXP_SCALE2(e, ki, (VF))                                         \
        y = e;                                                               \
    }
/* y = the function `which` of the lanes x (ALL(m): every lane of m set,
 * ANY(m): some lane) */
#define PTC_FEXP_STEP(VF, VI, FMA, MIN, MAX, SQRT, ALL, ANY, SIGNSEL, x, y)  \
    if (which == 0 || which == 9) {                                          \
        VF xe = x;                                                           \
        if (which == 9) xe = -x;                                             \
        PTC_FEXP_PICK(VF, VI, PTC_FEXP_CORE, xe, 87.0f, -104.0f, 89.0f, FMA, MIN, MAX, ALL, y) \
        if (which == 9) y = x / (1.0f + y);                                  \
    } else if (which == 1) {                                                 \
        PTC_FEXP_PICK(VF, VI, PTC_FEXP2_CORE, x, 126.0f, -152.0f, 129.0f, FMA, MIN, MAX, ALL, y) \
    } else if (which == 2) {                                                 \
        const VF xc = MAX(zero - 25.0f, MIN(zero + 89.0f, x));               \
        PTC_FEXPM1_CORE(VF, VI, xc, e, zero, FMA, (VF), (VI))                \
        y = PTC_LANE_SEL(VF, VI, x == 0.0f, x, e);                           \
    } else {                                                                 \
        const VI sign = (VI)x & (int32_t)0x80000000;                         \
        const VF a = (VF)((VI)x & 0x7fffffff);                               \
        if (which == 3 || which == 5) {                                      \
            const VI small = a < 1.0f;                                       \
            VF ys = zero, yl = zero;                                         \
            if (which == 3) {                                                \
                if (ANY(small)) PTC_FTANH_SMALL(VF, a, ys, zero, FMA)        \
                if (!ALL(small))                                             \
                    PTC_FTANH_LARGE(VF, VI, a, yl, zero, MIN, FMA, (VF), (VI)) \
            } else {                                                         \
                if (ANY(small)) PTC_FERF_SMALL(VF, a, ys, zero, FMA)         \
                if (!ALL(small))                                             \
                    PTC_FERF_LARGE(VF, VI, a, yl, zero, MIN, FMA, (VF), (VI)) \
            }                                                                \
            y = (VF)((VI)PTC_LANE_SEL(VF, VI, small, ys, yl) | sign);        \
        } else if (which == 6) {                                             \
            const VI inv = a > 1.0f;                                         \
            const VF ac = MIN(zero + 0x1p30f, a);                            \
            const VF ti = 1.0f / ac;                                         \
            const VF th = PTC_LANE_SEL(VF, VI, inv, ti, a);                  \
            const VF tl = (VF)((VI)(FMA(-ti, ac, zero + 1.0f) * ti) & inv);  \
            PTC_FATAN_POLY(VF, th, tl, c, zero, FMA)                         \
            VF yi;                                                           \
            PTC_FPAIR_SUB(VF, PTC_FPIO2H, PTC_FPIO2L, th, c, yi)             \
            y = (VF)((VI)PTC_LANE_SEL(VF, VI, inv, yi, th + c) | sign);      \
        } else if (which == 7 || which == 8) {                               \
            const VI small = a <= 0.5f;                                      \
            VF ys = zero, yl = zero;                                         \
            if (ANY(small)) {                                                \
                const VF z = x * x;                                          \
                PTC_FASIN_POLY(VF, x, -zero, z, c, zero, FMA)  /* -0: asin(-0) */ \
                if (which == 7) ys = x + c;                                  \
                else PTC_FPAIR_SUB(VF, PTC_FPIO2H, PTC_FPIO2L, x, c, ys)     \
            }                                                                \
            if (!ALL(small)) {                                               \
                PTC_FASIN_BIG(VF, a, s, c, zero, FMA, MAX, SQRT)             \
                if (which == 7) {                                            \
                    PTC_FPAIR_SUB(VF, PTC_FPIO2H, PTC_FPIO2L, s + s, c + c, yl) \
                    yl = (VF)((VI)yl | sign);                                \
                } else {                                                     \
                    VF yn;                                                   \
                    PTC_FPAIR_SUB(VF, PTC_FPIH, PTC_FPIL, s + s, c + c, yn)  \
                    yl = PTC_LANE_SEL(VF, VI, (VI)x < 0, yn, (s + c) * 2.0f); \
                }                                                            \
            }                                                                \
            y = PTC_LANE_SEL(VF, VI, small, ys, yl);                         \
        } else {                                                             \
            if (ALL(a < 87.0f)) {          /* 2^k normal, no clamp needed */ \
                PTC_FSIGMOID_CORE(VF, VI, a, x, y1, zero, PTC_FEXP_NOMIN, FMA, \
                                  (VF), (VI), PTC_FEXP_SCALE1P, SIGNSEL)     \
                y = y1;                                                      \
            } else {                                                         \
                PTC_FSIGMOID_CORE(VF, VI, a, x, y2, zero, MIN, FMA, (VF), (VI), \
                                  PTC_FEXP_SCALE2P, SIGNSEL)                 \
                y = y2;                                                      \
            }                                                                \
        }                                                                    \
    }
#define PTC_FEXP_STEP16(x, y) PTC_FEXP_STEP(ptc_v16sf, ptc_v16si, PTC_LANE_FMA16, PTC_LANE_MIN16, \
    PTC_LANE_MAX16, PTC_LANE_SQRT16, PTC_LANE_ALL16, PTC_LANE_ANY16, PTC_LANE_SIGNSEL16, x, y)
#define PTC_FEXP_STEP8(x, y) PTC_FEXP_STEP(ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, PTC_LANE_MIN8, \
    PTC_LANE_MAX8, PTC_LANE_SQRT8, PTC_LANE_ALL8, PTC_LANE_ANY8, PTC_LANE_SIGNSEL8, x, y)
PTC_LANE_MAPS(ptc_fexp_f32, which, 0.0f, PTC_FEXP_STEP16, PTC_FEXP_STEP8)
PTC_LANE_SPECIAL(ptc_fexp_f32, 0)
PTC_LANE_SPECIAL(ptc_fexp_f32, 1)
PTC_LANE_SPECIAL(ptc_fexp_f32, 2)
PTC_LANE_SPECIAL(ptc_fexp_f32, 3)
PTC_LANE_SPECIAL(ptc_fexp_f32, 4)
PTC_LANE_SPECIAL(ptc_fexp_f32, 5)
PTC_LANE_SPECIAL(ptc_fexp_f32, 6)
PTC_LANE_SPECIAL(ptc_fexp_f32, 7)
PTC_LANE_SPECIAL(ptc_fexp_f32, 8)
PTC_LANE_SPECIAL(ptc_fexp_f32, 9)
/* ptc_fexp8_softmax, ptc_fexp16_softmax: see PTC_FEXP_SOFTMAX_BODY */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 ptc_fexp8_softmax(__m256 x)
{
    const __m256 xm = _mm256_min_ps(_mm256_set1_ps(89.0f), x);     /* NaN passes */
    const __m256 lo = _mm256_cmp_ps(xm, _mm256_set1_ps(-104.0f), _CMP_LT_OQ);
    const ptc_v8sf xc = (ptc_v8sf)_mm256_andnot_ps(lo, xm);
    PTC_FEXP_SOFTMAX_BODY(ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, xc)
    return _mm256_andnot_ps(lo, (__m256)y);
}
__attribute__((target("avx512f,avx512vl"), always_inline)) static inline __m512 ptc_fexp16_softmax(__m512 x)
{
    const __m512 xm = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    const __mmask16 keep = _mm512_cmp_ps_mask(xm, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ);
    const ptc_v16sf xc = (ptc_v16sf)_mm512_maskz_mov_ps(keep, xm);
    PTC_FEXP_SOFTMAX_BODY(ptc_v16sf, ptc_v16si, PTC_LANE_FMA16, xc)
    return _mm512_maskz_mov_ps(keep, (__m512)y);
}
#endif
/* one value (the strided loops, the expressions) */
PTC_LANE_SCALAR_FMA(ptc_fexp_k)
#define PTC_FEXP_ENTRY(NAME, WHICH)                                              \
static void ptc_##NAME##_fv_f32(float* o, const float* a, Py_ssize_t n)          \
{                                                                                \
    PTC_LANE_DISPATCH(ptc_fexp_f32, o, a, n, WHICH);                             \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_fexp_k(a[i], WHICH);           \
}                                                                                \
static inline float ptc_##NAME##f_f(float x) { return PTC_LANE_ONE(ptc_fexp_k, x, WHICH); }
PTC_FEXP_ENTRY(exp, 0)
PTC_FEXP_ENTRY(exp2, 1)
PTC_FEXP_ENTRY(expm1, 2)
PTC_FEXP_ENTRY(tanh, 3)
PTC_FEXP_ENTRY(sigmoid, 4)
PTC_FEXP_ENTRY(erf, 5)
PTC_FEXP_ENTRY(atan, 6)
PTC_FEXP_ENTRY(asin, 7)
PTC_FEXP_ENTRY(acos, 8)
PTC_FEXP_ENTRY(silu, 9)
#endif
