/* Body of the fused elementwise evaluator (see ptc_fused.h), included once
 * per instruction set with these macros defined:
 *   PF_SFX        suffix of the function names (_avx512, _avx2, _base)
 *   PF_MADDF(a,b,c) / PF_MADD(a,b,c)   a*b+c in float / double (fused where FMA exists)
 * No include guard: this file is meant to be included several times.
 *
 * An instruction is five int32 (opcode, dst, a, b, c); registers are block
 * buffers of m elements.  Binary ops read a scalar register (is_s[r]) as its
 * value sval[r] instead of a buffer, so a scalar costs no loads.  dst never
 * aliases a source (the planner allocates it so), hence ``restrict``. */

#define PF_CAT2(a, b) a##b
#define PF_CAT(a, b) PF_CAT2(a, b)
#define PF_N(name) PF_CAT(name, PF_SFX)

/* float32 exp: Cody-Waite reduction, Cephes' degree-5 polynomial (ptc_expf's
 * algorithm with fused multiply-adds), scaling by 2^k in two steps so subnormal
 * results are right; branch-free so the loops calling it vectorise */
static inline __attribute__((always_inline)) float PF_N(pf_expf)(float x)
{
    float xc = x > 88.7228394f ? 88.7228394f : x;      /* NaN passes through */
    xc = xc < -103.972084f ? -103.972084f : xc;
    float k = PF_MADDF(xc, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    float r = PF_MADDF(k, -0.693359375f, xc);
    r = PF_MADDF(k, 2.12194440e-4f, r);
    float p = PF_MADDF(1.9875691500E-4f, r, 1.3981999507E-3f);
    p = PF_MADDF(p, r, 8.3334519073E-3f);
    p = PF_MADDF(p, r, 4.1665795894E-2f);
    p = PF_MADDF(p, r, 1.6666665459E-1f);
    p = PF_MADDF(p, r, 5.0000001201E-1f);
    float y = PF_MADDF(p, r * r, r) + 1.0f;
    int32_t ki = (int32_t)k;
    int32_t k1 = ki >> 1, k2 = ki - k1;
    union { uint32_t u; float f; } s1, s2;
    s1.u = (uint32_t)(k1 + 127) << 23;
    s2.u = (uint32_t)(k2 + 127) << 23;
    y = y * s1.f * s2.f;
    y = x > 88.7228394f ? INFINITY : y;
    return x < -103.972084f ? 0.0f : y;
}

/* 1 / (1 + exp(-x)): exp on the clamped argument t = -x in [-87.3, 88.3],
 * where 2^k is a normal number (one scaling step, no edge selects): below
 * t = -87.3 the result is 1 whatever exp gives, above 88.3 it is 1/(1 + 2e38)
 * ~ 4.5e-39 instead of a smaller subnormal (absolute error < 5e-39); NaN
 * passes through the clamps */
static inline __attribute__((always_inline)) float PF_N(pf_sigmoidf)(float x)
{
    float t = -x;
    t = t > 88.3762626647949f ? 88.3762626647949f : t;
    t = t < -87.3365478515625f ? -87.3365478515625f : t;
    float k = PF_MADDF(t, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    float r = PF_MADDF(k, -0.693359375f, t);
    r = PF_MADDF(k, 2.12194440e-4f, r);
    float p = PF_MADDF(1.9875691500E-4f, r, 1.3981999507E-3f);
    p = PF_MADDF(p, r, 8.3334519073E-3f);
    p = PF_MADDF(p, r, 4.1665795894E-2f);
    p = PF_MADDF(p, r, 1.6666665459E-1f);
    p = PF_MADDF(p, r, 5.0000001201E-1f);
    float y = PF_MADDF(p, r * r, r) + 1.0f;
    union { uint32_t u; float f; } s;
    s.u = (uint32_t)((int32_t)k + 127) << 23;
    return 1.0f / PF_MADDF(y, s.f, 1.0f);
}

/* float32 tanh: a [13/6] odd/even rational approximation (Eigen's
 * coefficients; |error| <= 4 ulp, relative < 3.3e-7 measured) up to |x| = 9,
 * +-1 beyond (where tanh rounds to 1 within 1 ulp), x itself below
 * |x| = 4e-4 (keeps -0 and tiny values exact) */
static inline __attribute__((always_inline)) float PF_N(pf_tanhf)(float x)
{
    float xc = x < 9.0f ? x : 9.0f;
    xc = xc > -9.0f ? xc : -9.0f;
    float x2 = xc * xc;
    float p = PF_MADDF(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
    p = PF_MADDF(x2, p, -8.60467152213735e-11f);
    p = PF_MADDF(x2, p, 5.12229709037114e-08f);
    p = PF_MADDF(x2, p, 1.48572235717979e-05f);
    p = PF_MADDF(x2, p, 6.37261928875436e-04f);
    p = PF_MADDF(x2, p, 4.89352455891786e-03f);
    p = p * xc;
    float q = PF_MADDF(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
    q = PF_MADDF(x2, q, 2.26843463243900e-03f);
    q = PF_MADDF(x2, q, 4.89352518554385e-03f);
    float y = p / q;
    y = (x < 4e-4f && x > -4e-4f) ? x : y;
    y = x >= 9.0f ? 1.0f : y;
    y = x <= -9.0f ? -1.0f : y;
    return x != x ? x : y;
}

/* exact GELU as ptc_gelu_f32 / PyTorch's float kernel: erf from Abramowitz &
 * Stegun 7.1.26 (|error| < 1.5e-7) */
static inline __attribute__((always_inline)) float PF_N(pf_geluf)(float x)
{
    float u = x * 0.70710678118654752440f;
    float a = u < 0 ? -u : u;
    float t = 1.0f / PF_MADDF(a, 0.3275911f, 1.0f);
    float r = PF_MADDF(t, 1.061405429f, -1.453152027f);
    r = PF_MADDF(r, t, 1.421413741f);
    r = PF_MADDF(r, t, -0.284496736f);
    r = PF_MADDF(r, t, 0.254829592f);
    float e = 1.0f - r * t * PF_N(pf_expf)(-(u * u));
    e = u < 0 ? -e : e;
    return x * 0.5f * (1.0f + e);
}

/* float32 */
#define PF_T float
#define PF_EXP(x) PF_N(pf_expf)(x)
#define PF_LOG(x) logf(x)
#define PF_TANH(x) PF_N(pf_tanhf)(x)
#define PF_SQRT(x) sqrtf(x)
#define PF_FABS(x) fabsf(x)
#define PF_SIN(x) sinf(x)
#define PF_COS(x) cosf(x)
#define PF_ERF(x) erff(x)
#define PF_LOG1P(x) log1pf(x)
#define PF_EXPM1(x) expm1f(x)
#define PF_POW(x, y) powf(x, y)
#define PF_GELU(x) PF_N(pf_geluf)(x)
#define PF_SIGMOID(x) PF_N(pf_sigmoidf)(x)
#define PF_EVAL PF_N(ptc_fused_eval_f32)
#include "ptc_fused_ops.h"
#undef PF_T
#undef PF_EXP
#undef PF_LOG
#undef PF_TANH
#undef PF_SQRT
#undef PF_FABS
#undef PF_SIN
#undef PF_COS
#undef PF_ERF
#undef PF_LOG1P
#undef PF_EXPM1
#undef PF_POW
#undef PF_GELU
#undef PF_SIGMOID
#undef PF_EVAL

/* float64: libm */
#define PF_T double
#define PF_EXP(x) exp(x)
#define PF_LOG(x) log(x)
#define PF_TANH(x) tanh(x)
#define PF_SQRT(x) sqrt(x)
#define PF_FABS(x) fabs(x)
#define PF_SIN(x) sin(x)
#define PF_COS(x) cos(x)
#define PF_ERF(x) erf(x)
#define PF_LOG1P(x) log1p(x)
#define PF_EXPM1(x) expm1(x)
#define PF_POW(x, y) pow(x, y)
#define PF_GELU(x) (0.5 * (x) * (1.0 + erf((x) * 0.70710678118654752440)))
#define PF_SIGMOID(x) (1.0 / (1.0 + exp(-(x))))
#define PF_EVAL PF_N(ptc_fused_eval_f64)
#include "ptc_fused_ops.h"
#undef PF_T
#undef PF_EXP
#undef PF_LOG
#undef PF_TANH
#undef PF_SQRT
#undef PF_FABS
#undef PF_SIN
#undef PF_COS
#undef PF_ERF
#undef PF_LOG1P
#undef PF_EXPM1
#undef PF_POW
#undef PF_GELU
#undef PF_SIGMOID
#undef PF_EVAL
