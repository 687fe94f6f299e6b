/* float32 atan2 of contiguous arrays in float lanes with FMA (torch's
 * accuracy class, SLEEF's u10: within 1 ulp; glibc's atan2f ran a value at a
 * time, 7-8x torch's time).
 *
 * atan2(a, b) from A = |a|, B = |b|: with swap = A > B, n = min(A, B) and
 * d = max(A, B) (both scaled by a power of two where d is near overflow or
 * tiny), atan(n / d) is t + atan(v) for the exact v = n / d (t = 0) or,
 * where n / d > 1/2, v = (n - d) / (n + d) in [-1/3, 0] (t = pi/4; n - d
 * exact, n + d a Fast2Sum pair).  v is rounded and its residual over atan's
 * slope added, vl = (n' - v d' - v dl) / (d' + v n') (FMAs), and atan(v + vl)
 * = v + C by ptc_fmath_vec.h's atan polynomial (C = FMA(v^3, P(v^2), vl)).
 * The quadrant and the reduction then make atan2(A, b) = K +- (v + C), K one
 * of 0, pi/4, pi/2, 3pi/4, pi as float pairs (a table by b < 0, swap and
 * n / d > 1/2; Fast2Sum: |v| <= K where K > 0), and the sign of a is put
 * back.  With |C| small against the result everywhere the error is the last
 * rounding's half ulp and a little (measured within 0.6 ulp of the float64
 * atan2).  The special arguments -- an infinity or NaN in a or b, or both
 * zero -- go to glibc's atan2f (its results there are the exact constants:
 * +-0, +-pi/4, +-pi/2, +-3pi/4, +-pi rounded, or NaN).
 *
 * The scalar copy ptc_fatan2_k (the strided loops, the tails, the vectors
 * holding a special argument: same operations, same bits) and lane copies at
 * 16 (AVX-512) and 8 (AVX2) lanes where the CPU has FMA, fp-contract off
 * (multiply-adds fused only where written as FMA). */
#ifndef PTC_FATAN2_VEC_H
#define PTC_FATAN2_VEC_H
#include <float.h>
#include <math.h>
#include "ptc_fmath_vec.h"   /* PTC_FATAN_POLY, the lane macros */

/* the constants K = KH + KL and the signs of atan2(|a|, b) = K +- atan v by
 * (b < 0) * 4 + (|a| > |b|) * 2 + (the ratio > 1/2) (see above) */
static const float ptc_fatan2_kh[8] __attribute__((aligned(32))) = {
    0.0f, 0x1.921fb6p-1f, 0x1.921fb6p+0f, 0x1.921fb6p-1f,
    0x1.921fb6p+1f, 0x1.2d97c8p+1f, 0x1.921fb6p+0f, 0x1.2d97c8p+1f};
static const float ptc_fatan2_kl[8] __attribute__((aligned(32))) = {
    0.0f, -0x1.777a5cp-26f, -0x1.777a5cp-25f, -0x1.777a5cp-26f,
    -0x1.777a5cp-24f, -0x1.99bc5cp-28f, -0x1.777a5cp-25f, -0x1.99bc5cp-28f};
/* sign bit applied to atan v: 0 (+) or 0x80000000 (-) */
static const int32_t ptc_fatan2_sg[8] __attribute__((aligned(32))) = {
    0, 0, (int32_t)0x80000000, (int32_t)0x80000000,
    (int32_t)0x80000000, (int32_t)0x80000000, 0, 0};

static inline float ptc_fatan2_flip(float v, int32_t sg)
{ int32_t i; memcpy(&i, &v, 4); i ^= sg; memcpy(&v, &i, 4); return v; }

static inline float ptc_fatan2_scale(float d)
{ return d >= 0x1p126f ? 0.25f : (d < 0x1p-100f ? 0x1p50f : 1.0f); }

static inline __attribute__((always_inline)) float ptc_fatan2_k(float a, float b)
{
    const float zero = 0.0f;
    const float aa = fabsf(a), ab = fabsf(b);
    if (!(aa <= FLT_MAX && ab <= FLT_MAX) || (aa == 0.0f && ab == 0.0f))
        return atan2f(a, b);
    const int swap = aa > ab;
    /* (n, d scaled by a power of two: n + d finite, residuals exact) */
    const float sc = ptc_fatan2_scale(swap ? aa : ab);
    const float n = (swap ? ab : aa) * sc, d = (swap ? aa : ab) * sc;
    const int big = n + n > d;
    /* the ratio n/d, or (n - d)/(n + d) with n + d = dh + dl (Fast2Sum) */
    const float dh = big ? n + d : d;
    const float dl = big ? n - (dh - d) : zero;
    const float nn = big ? n - d : n;                       /* exact */
    const float v = nn / dh;
    const float vl = fmaf(-v, dl, fmaf(-v, dh, nn)) / fmaf(v, nn, dh);
    PTC_FATAN_POLY(float, v, vl, c, zero, fmaf)
    const int k = (signbit(b) ? 4 : 0) + swap * 2 + big;
    const float vs = ptc_fatan2_flip(v, ptc_fatan2_sg[k]), cs = ptc_fatan2_flip(c, ptc_fatan2_sg[k]);
    const float kh = ptc_fatan2_kh[k], kl = ptc_fatan2_kl[k];
    const float s1 = kh + vs;
    const float e1 = (kh - s1) + vs;                        /* exact */
    return copysignf(s1 + ((kl + cs) + e1), a);
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
__attribute__((target("fma"), optimize("fp-contract=off")))
static float ptc_fatan2_k_fma(float a, float b) { return ptc_fatan2_k(a, b); }

/* y = atan2(va, vb) of W lanes (VI their int32 lanes); the vectors with a
 * special lane through the scalar copy, lane by lane */
#define PTC_FATAN2_STEP(W, VF, VI, FMA, ANY, PERMF, PERMI, va, vb, y)                        \
    {                                                                        \
        const VF zero = {0};                                                 \
        const VF aa = (VF)((VI)va & 0x7fffffff), ab = (VF)((VI)vb & 0x7fffffff); \
        const VI special = ~((aa <= FLT_MAX) & (ab <= FLT_MAX))             \
                           | ((aa == 0.0f) & (ab == 0.0f));                  \
        if (ANY(special)) {                                                  \
            float a_[W], b_[W], y_[W];                                       \
            memcpy(a_, &va, sizeof va); memcpy(b_, &vb, sizeof vb);          \
            for (int l_ = 0; l_ < (W); l_++) y_[l_] = ptc_fatan2_k_fma(a_[l_], b_[l_]); \
            memcpy(&y, y_, sizeof y);                                        \
        } else {                                                             \
            const VI swap = aa > ab;                                         \
            const VF d0 = PTC_LANE_SEL(VF, VI, swap, aa, ab);                \
            const VF sc = PTC_LANE_SEL(VF, VI, d0 >= 0x1p126f, zero + 0.25f,  \
                PTC_LANE_SEL(VF, VI, d0 < 0x1p-100f, zero + 0x1p50f, zero + 1.0f)); \
            const VF n = PTC_LANE_SEL(VF, VI, swap, ab, aa) * sc;            \
            const VF d = d0 * sc;                                            \
            const VI big = n + n > d;                                        \
            const VF dh = PTC_LANE_SEL(VF, VI, big, n + d, d);               \
            const VF dl = (VF)((VI)(n - (dh - d)) & big);                    \
            const VF nn = PTC_LANE_SEL(VF, VI, big, n - d, n);               \
            const VF v = nn / dh;                                            \
            const VF vl = FMA(-v, dl, FMA(-v, dh, nn)) / FMA(v, nn, dh);     \
            PTC_FATAN_POLY(VF, v, vl, c, zero, FMA)                          \
            const VI k = ((VI)vb < 0 & 4) + (swap & 2) + (big & 1);          \
            const VI sg = PERMI(ptc_fatan2_sg, k);                           \
            const VF vs = (VF)((VI)v ^ sg), cs = (VF)((VI)c ^ sg);           \
            const VF kh = PERMF(ptc_fatan2_kh, k), kl = PERMF(ptc_fatan2_kl, k); \
            const VF s1 = kh + vs;                                           \
            const VF e1 = (kh - s1) + vs;                                    \
            const VF rs_ = s1 + ((kl + cs) + e1);                            \
            y = (VF)((VI)rs_ | ((VI)va & (int32_t)0x80000000));              \
        }                                                                    \
    }

/* table[k] in each lane (tables of 8; the AVX-512 permute reads 16, so
 * the index keeps to 0-7) */
#define PTC_FATAN2_PF16(t, k) ((ptc_v16sf)_mm512_permutexvar_ps((__m512i)(k), \
    _mm512_castps256_ps512(_mm256_load_ps(t))))
#define PTC_FATAN2_PI16(t, k) ((ptc_v16si)_mm512_permutexvar_epi32((__m512i)(k), \
    _mm512_castsi256_si512(_mm256_load_si256((const __m256i*)(t)))))
#define PTC_FATAN2_PF8(t, k) ((ptc_v8sf)_mm256_permutevar8x32_ps(_mm256_load_ps(t), (__m256i)(k)))
#define PTC_FATAN2_PI8(t, k) ((ptc_v8si)_mm256_permutevar8x32_epi32( \
    _mm256_load_si256((const __m256i*)(t)), (__m256i)(k)))

/* o[i] = atan2(x[i * xs], y[i * ys]) (a step 0: one value), W lanes a step;
 * the tail through one vector padded with ones */
#define PTC_FATAN2_MAP(W, VF, VI, FMA, ANY, PERMF, PERMI)                                    \
    for (Py_ssize_t i = 0; i < n; i += (W)) {                                 \
        const Py_ssize_t m = n - i < (W) ? n - i : (W);                       \
        float xa_[W], yb_[W];                                                 \
        VF va, vb, vr;                                                         \
        if (m == (W) && xs) memcpy(&va, x + i, sizeof va);                    \
        else { for (int j = 0; j < (W); j++) xa_[j] = j < m ? x[(i + j) * xs] : 1.0f; \
               memcpy(&va, xa_, sizeof va); }                                 \
        if (m == (W) && ys) memcpy(&vb, y + i, sizeof vb);                    \
        else { for (int j = 0; j < (W); j++) yb_[j] = j < m ? y[(i + j) * ys] : 1.0f; \
               memcpy(&vb, yb_, sizeof vb); }                                 \
        PTC_FATAN2_STEP(W, VF, VI, FMA, ANY, PERMF, PERMI, va, vb, vr)                       \
        if (m == (W)) memcpy(o + i, &vr, sizeof vr);                            \
        else { memcpy(xa_, &vr, sizeof vr); for (Py_ssize_t j = 0; j < m; j++) o[i + j] = xa_[j]; } \
    }

__attribute__((target("avx512f,avx512vl,fma"), optimize("fp-contract=off")))
static void ptc_fatan2_avx512(float* o, const float* x, int xs, const float* y, int ys,
                              Py_ssize_t n)
{ PTC_FATAN2_MAP(16, ptc_v16sf, ptc_v16si, PTC_LANE_FMA16, PTC_LANE_ANY16, PTC_FATAN2_PF16, PTC_FATAN2_PI16) }
__attribute__((target("avx2,fma"), optimize("fp-contract=off")))
static void ptc_fatan2_avx2(float* o, const float* x, int xs, const float* y, int ys,
                            Py_ssize_t n)
{ PTC_FATAN2_MAP(8, ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, PTC_LANE_ANY8, PTC_FATAN2_PF8, PTC_FATAN2_PI8) }

/* the contiguous loop (the signature of ptc_ew_vec.h's binary loops; st, the
 * streaming flag, unused): 0 where the CPU has no FMA (the scalar loop runs) */
static int ptc_atan2_f32(float* o, const float* x, int xs, const float* y, int ys,
                         Py_ssize_t n, int st)
{
    (void)st;
    const int l = ptc_fma_level();
    if (l == 2) { ptc_fatan2_avx512(o, x, xs, y, ys, n); return 1; }
    if (l == 1) { ptc_fatan2_avx2(o, x, xs, y, ys, n); return 1; }
    return 0;
}
/* one value (the strided loops, the expressions) */
static inline float ptc_atan2f_f(float a, float b)
{ return ptc_fma_level() ? ptc_fatan2_k_fma(a, b) : ptc_fatan2_k(a, b); }
#else
static int ptc_atan2_f32(float* o, const float* x, int xs, const float* y, int ys,
                         Py_ssize_t n, int st)
{ (void)o; (void)x; (void)xs; (void)y; (void)ys; (void)n; (void)st; return 0; }
static inline float ptc_atan2f_f(float a, float b) { return ptc_fatan2_k(a, b); }
#endif
#endif
