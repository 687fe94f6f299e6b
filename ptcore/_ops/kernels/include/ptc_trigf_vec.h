/* float32 sin and cos of contiguous arrays in float lanes.
 *
 * torch's accuracy class (SLEEF's u10 functions: within 1.0 ulp of the
 * float64 function rounded to float32; measured here over every float up to
 * PTC_TRIGF_BIG: max 1 ulp), at 16 float lanes an AVX-512 vector where
 * ptc_f32dbl_math.h's double-precision sin/cos (correctly rounded but 8
 * double lanes) runs 3x slower.  For |x| <= PTC_TRIGF_BIG:
 *     x = k pi/2 + r,  k = x 2/pi rounded,  |r| <= pi/4 (+ a rounding),
 * pi/2 = P1 + P2 + P3 in floats: x - k P1 is exact (one FMA: the difference
 * is a multiple of 2^-24 below 2^-0.3), k P2 an exact float pair (FMA), so
 * r = rh + rl by a 2Sum (rl also holds k P3); then
 *     sin r = rh + (rl + rh^3 (-1/6 + r^2/120 - ... + r^8/9!)),
 *     cos r = (1 - rh^2/2) + (rh^4 (1/24 - ... - r^6/10!) - rh rl),
 * rh^2/2 as an exact float pair and 1 - its high part by Fast2Sum, the
 * Taylor truncations < 0.04 ulp; sin or +-cos by the quadrant k mod 4.
 * The lanes beyond PTC_TRIGF_BIG, inf and NaN are computed by
 * ptc_f32dbl_math.h's double-precision code instead (libm's reduction past
 * 2^16; run only for the vectors that hold such a lane, so typical data
 * stays on the fast path; each lane's result depends on it alone).
 *
 * The AVX-512 and AVX2 copies run where the CPU has FMA (ptc_fma_level),
 * the scalar copy (fmaf) everywhere else and for the strided loops: the same
 * operations in the same order, so the bits do not depend on the CPU. */
#ifndef PTC_TRIGF_VEC_H
#define PTC_TRIGF_VEC_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level */
#include "ptc_f32dbl_math.h"   /* the double-precision fallback */

#define PTC_TRIGF_BIG 65536.0f
#define PTC_TRIGF_2_PI 0x1.45f306p-1f
#define PTC_TRIGF_SHIFT 0x1.8p23f               /* x + SHIFT rounds x to an integer */
#define PTC_TRIGF_P1 0x1.921fb6p+0f
#define PTC_TRIGF_P2 (-0x1.777a5cp-25f)
#define PTC_TRIGF_P3 (-0x1.ee59dap-50f)

/* S = sin x, C = cos x of the reduced argument, Q the integer lanes whose
 * low bits are k mod 4, for |x| <= PTC_TRIGF_BIG (VF float lanes, a plain
 * float for the scalar copy; ASI their integer bits; FMA the fused
 * multiply-add; ZERO VF zeros) */
/* the reduction: x = k pi/2 + RH + RL, KB = k + SHIFT */
#define PTC_TRIGF_REDUCE(VF, x, KB, RH, RL, ZERO, FMA)                         \
    const VF KB = FMA(x, ZERO + PTC_TRIGF_2_PI, ZERO + PTC_TRIGF_SHIFT);     \
    VF RH, RL;                                                               \
    { const VF mk_ = PTC_TRIGF_SHIFT - KB;           /* -k, exact */         \
      const VF a_ = FMA(mk_, ZERO + PTC_TRIGF_P1, x);                        \
      const VF bh_ = mk_ * PTC_TRIGF_P2;                                     \
      const VF bl_ = FMA(mk_, ZERO + PTC_TRIGF_P2, -bh_);                    \
      RH = a_ + bh_;                                /* 2Sum */               \
      const VF bb_ = RH - a_;                                                \
      const VF e_ = (a_ - (RH - bb_)) + (bh_ - bb_);                         \
      RL = FMA(mk_, ZERO + PTC_TRIGF_P3, e_ + bl_); }
#define PTC_TRIGF_CORE(VF, VI, x, S, C, Q, ZERO, FMA, ASI)                     \
    VF S, C;                                                                 \
    VI Q;                                                                    \
    { PTC_TRIGF_REDUCE(VF, x, kb_, rh_, rl_, ZERO, FMA)                      \
      const VF r2_ = rh_ * rh_;                                              \
      VF ps_ = FMA(r2_, ZERO + 0x1.71de3ap-19f, ZERO - 0x1.a01a02p-13f);     \
      ps_ = FMA(ps_, r2_, ZERO + 0x1.111112p-7f);                            \
      ps_ = FMA(ps_, r2_, ZERO - 0x1.555556p-3f);                            \
      S = rh_ + FMA(rh_ * r2_, ps_, rl_);                                    \
      const VF hr_ = rh_ * 0.5f;                                             \
      const VF th_ = hr_ * rh_;                                              \
      const VF tl_ = FMA(hr_, rh_, -th_);                                    \
      const VF w_ = 1.0f - th_;                                              \
      const VF ew_ = (1.0f - w_) - th_;                                      \
      VF pc_ = FMA(r2_, ZERO - 0x1.27e4fcp-22f, ZERO + 0x1.a01a02p-16f);     \
      pc_ = FMA(pc_, r2_, ZERO - 0x1.6c16c2p-10f);                           \
      pc_ = FMA(pc_, r2_, ZERO + 0x1.555556p-5f);                            \
      const VF ct_ = FMA(-rh_, rl_, ew_ - tl_);                              \
      C = w_ + FMA(r2_ * r2_, pc_, ct_);                                     \
      Q = ASI(kb_); }

/* tan: tan r = RH + C, C = RL + RH^3 P(RH^2) with P a degree-6 minimax fit
 * of (tan r - r) / r^3 on |r| <= pi/4 (relative error < 2e-9); k odd:
 * -1 / (RH + C) as q0 = -1 / (RH + C) rounded and one Newton step on the
 * pair, e = 1 + q0 (RH + C), q0 (1 + e) (within ~0.5 ulp either way).  The
 * result Y, Q the lanes' k + SHIFT bits (k odd: Q & 1) */
#define PTC_TANF_CORE(VF, VI, x, YE, YO, Q, ZERO, FMA, ASI)                    \
    VF YE, YO;                                                               \
    VI Q;                                                                    \
    { PTC_TRIGF_REDUCE(VF, x, kb_, rh_, rl_, ZERO, FMA)                      \
      const VF r2_ = rh_ * rh_;                                              \
      VF p_ = FMA(r2_, ZERO + 0x1.1f28cep-8f, ZERO + 0x1.4a9020p-14f);       \
      p_ = FMA(p_, r2_, ZERO + 0x1.63566ap-7f);                              \
      p_ = FMA(p_, r2_, ZERO + 0x1.5ca30ap-6f);                              \
      p_ = FMA(p_, r2_, ZERO + 0x1.badd14p-5f);                              \
      p_ = FMA(p_, r2_, ZERO + 0x1.110d88p-3f);                              \
      p_ = FMA(p_, r2_, ZERO + 0x1.555560p-2f);                              \
      const VF c_ = FMA(rh_ * r2_, p_, rl_);                                 \
      YE = rh_ + c_;                                                         \
      const VF q0_ = -1.0f / YE;                                             \
      const VF e_ = FMA(q0_, rh_, ZERO + 1.0f) + q0_ * c_;                   \
      YO = FMA(q0_, e_, q0_);                                                \
      Q = ASI(kb_); }

static inline uint32_t ptc_trigf_asi(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* the scalar copy: which 0 sin, 1 cos, 2 tan */
static inline float ptc_trigf_s(float x, int which)
{
    const float zero = 0.0f;
    uint32_t u;
    float y;
    if (!(fabsf(x) <= PTC_TRIGF_BIG))
        return which == 0 ? ptc_sinf_d(x) : which == 1 ? ptc_cosf_d(x) : ptc_tanf_d(x);
    if (which == 2) {
        PTC_TANF_CORE(float, uint32_t, x, ye, yo, q, zero, fmaf, ptc_trigf_asi)
        return x == 0.0f ? x : (q & 1) ? yo : ye;  /* tan(-0) = -0 */
    }
    PTC_TRIGF_CORE(float, uint32_t, x, s, c, q, zero, fmaf, ptc_trigf_asi)
    if (which == 0) {
        y = (q & 1) ? c : s;
        memcpy(&u, &y, 4);
        u ^= (q & 2) << 30;
    } else {
        y = (q & 1) ? s : c;
        memcpy(&u, &y, 4);
        u ^= ((q + 1) & 2) << 30;
    }
    memcpy(&y, &u, 4);
    return (which == 0 && x == 0.0f) ? x : y;      /* sin(-0) = -0 */
}
static inline float ptc_sinf_f(float x) { return ptc_trigf_s(x, 0); }
static inline float ptc_cosf_f(float x) { return ptc_trigf_s(x, 1); }
static inline float ptc_tanf_f(float x) { return ptc_trigf_s(x, 2); }

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
/* y = sin (which 0), cos (1) or tan (2) of the W lanes x; where BIG(x) (a lane
 * beyond PTC_TRIGF_BIG or NaN) those lanes from the double-precision loop
 * DBL (each lane's value depends on that lane alone) */
#define PTC_TRIGF_STEP(W, VF, VI, FMA, BIG, DBL, x, y)                         \
    { if (which == 2) {                                                      \
          PTC_TANF_CORE(VF, VI, x, ye, yo, q, zero, FMA, (VI))               \
          const VI odd = (VI){0} - (q & 1);                                  \
          y = (VF)(((VI)yo & odd) | ((VI)ye & ~odd));                        \
          const VI z = x == 0.0f;                         /* tan(-0) = -0 */ \
          y = (VF)(((VI)x & z) | ((VI)y & ~z));                              \
      } else {                                                               \
      PTC_TRIGF_CORE(VF, VI, x, s, c, q, zero, FMA, (VI))                    \
      const VI odd = (VI){0} - (q & 1);                                      \
      if (which == 0) {                                                      \
          y = (VF)((((VI)c & odd) | ((VI)s & ~odd)) ^ ((q & 2) << 30));       \
          const VI z = x == 0.0f;                         /* sin(-0) = -0 */ \
          y = (VF)(((VI)x & z) | ((VI)y & ~z));                              \
      } else                                                                 \
          y = (VF)((((VI)s & odd) | ((VI)c & ~odd)) ^ (((q + 1) & 2) << 30)); \
      }                                                                      \
      if (BIG(x)) {                                                          \
          float in_[W], out_[W];                                             \
          VF d;                                                              \
          memcpy(in_, &x, sizeof x);                                         \
          if (which == 0) ptc_sin_v_f32_##DBL(out_, in_, W);                 \
          else if (which == 1) ptc_cos_v_f32_##DBL(out_, in_, W);            \
          else ptc_tan_v_f32_##DBL(out_, in_, W);                            \
          memcpy(&d, out_, sizeof d);                                        \
          const VI ok = (VF)((VI)x & 0x7fffffff) <= PTC_TRIGF_BIG;           \
          y = (VF)(((VI)y & ok) | ((VI)d & ~ok));                            \
      } }
#define PTC_TRIGF_BIG16(x) (_mm512_cmp_ps_mask(_mm512_abs_ps((__m512)(x)),             \
                            _mm512_set1_ps(PTC_TRIGF_BIG), _CMP_NLE_UQ) != 0)
#define PTC_TRIGF_BIG8(x) (_mm256_movemask_ps(_mm256_cmp_ps(                             \
    _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (__m256)(x)), _mm256_set1_ps(PTC_TRIGF_BIG), \
    _CMP_NLE_UQ)) != 0)
#define PTC_TRIGF_STEP16(x, y) \
    PTC_TRIGF_STEP(16, ptc_v16sf, ptc_v16si, PTC_LANE_FMA16, PTC_TRIGF_BIG16, avx512, x, y)
#define PTC_TRIGF_STEP8(x, y) \
    PTC_TRIGF_STEP(8, ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, PTC_TRIGF_BIG8, avx2, x, y)
PTC_LANE_MAPS(ptc_trigf_f32, which, 0.0f, PTC_TRIGF_STEP16, PTC_TRIGF_STEP8)
PTC_LANE_SPECIAL(ptc_trigf_f32, 0)
PTC_LANE_SPECIAL(ptc_trigf_f32, 1)
PTC_LANE_SPECIAL(ptc_trigf_f32, 2)
#endif
static void ptc_sin_fv_f32(float* o, const float* a, Py_ssize_t n)
{
    PTC_LANE_DISPATCH(ptc_trigf_f32, o, a, n, 0);
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_trigf_s(a[i], 0);
}
static void ptc_cos_fv_f32(float* o, const float* a, Py_ssize_t n)
{
    PTC_LANE_DISPATCH(ptc_trigf_f32, o, a, n, 1);
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_trigf_s(a[i], 1);
}
static void ptc_tan_fv_f32(float* o, const float* a, Py_ssize_t n)
{
    PTC_LANE_DISPATCH(ptc_trigf_f32, o, a, n, 2);
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_trigf_s(a[i], 2);
}
#endif
