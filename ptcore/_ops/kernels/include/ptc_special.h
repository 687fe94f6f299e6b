/* float32 special-function kernels written for auto-vectorisation: every
 * function is branch-free (both sides of a range split are computed and one
 * is selected), calls no libm function, and inlines; the contiguous loops at
 * the bottom are compiled for AVX-512F, AVX2 and the SSE2 baseline (chosen at
 * load time), with no FMA contraction (-std=c11), so the bits do not depend on
 * the CPU and the strided loops (which call the same scalar functions) give
 * the same results.  _ew is compiled with -fno-trapping-math and
 * -fno-math-errno, without which GCC neither if-converts the selects nor
 * inlines sqrtf.
 *
 * Algorithms: erfc/erfcx/ndtr/log_ndtr from erfc(z) = t exp(-z^2 + P(t)),
 * t = 1 / (1 + z / 2) (the form of Numerical Recipes' erfcc, P refitted: a
 * degree-11 Chebyshev fit of log(erfcx(z) / t), |error| < 1.5e-8), with z^2
 * split into an exact head and a tail so that the tails keep their relative
 * accuracy (erf itself is in float lanes with FMA: ptc_fmath_vec.h); erfinv
 * by Giles' single-precision approximation; ndtri by
 * Acklam's rational approximations (evaluated in double); i0/i0e/i1/i1e by
 * Chebyshev fits on [0, 8] and in 16 / x above; trigamma by PyTorch's
 * recurrence and asymptotic series with an exact sin(pi x) for the
 * reflection; entr as -x log x; log as Cephes' logf.  Coefficients were fitted against
 * scipy.special in float64. */
#ifndef PTC_SPECIAL_H
#define PTC_SPECIAL_H
#include "ptc_math.h"

#define PTC_SF static inline __attribute__((always_inline)) float

static inline __attribute__((always_inline)) uint32_t ptc_f2u(float x)
{ uint32_t u; memcpy(&u, &x, 4); return u; }
static inline __attribute__((always_inline)) float ptc_u2f(uint32_t u)
{ float x; memcpy(&x, &u, 4); return x; }

/* x with the low 12 mantissa bits cleared: its square is exact */
PTC_SF ptc_head12(float x) { return ptc_u2f(ptc_f2u(x) & 0xfffff000u); }

/* natural log (Cephes logf, as Pommier's vectorised log_ps), subnormals
 * scaled first; log(0) = -inf, log(x < 0) = nan, log(inf) = inf */
PTC_SF ptc_logf_s(float x)
{
    int sub = x < 1.17549435e-38f;
    float xs = sub ? x * 8388608.0f : x;
    uint32_t u = ptc_f2u(xs);
    int32_t e = (int32_t)((u >> 23) & 0xffu) - 126;
    float m = ptc_u2f((u & 0x007fffffu) | 0x3f000000u);      /* [0.5, 1) */
    e = sub ? e - 23 : e;
    int lo = m < 0.707106781186547524f;
    float fe = (float)(lo ? e - 1 : e);
    float m2 = m + m;
    m = (lo ? m2 : m) - 1.0f;
    float z = m * m;
    float p = 7.0376836292E-2f;
    p = p * m - 1.1514610310E-1f;
    p = p * m + 1.1676998740E-1f;
    p = p * m - 1.2420140846E-1f;
    p = p * m + 1.4249322787E-1f;
    p = p * m - 1.6668057665E-1f;
    p = p * m + 2.0000714765E-1f;
    p = p * m - 2.4999993993E-1f;
    p = p * m + 3.3333331174E-1f;
    float y = p * m * z;
    y = y + fe * -2.12194440e-4f;
    y = y - 0.5f * z;
    float r = m + y;
    r = r + fe * 0.693359375f;
    r = x == INFINITY ? x : r;
    r = x == 0.0f ? -INFINITY : r;
    r = x < 0.0f ? NAN : r;
    return x != x ? x : r;
}

/* log1p(v) for v > -1 from log(1 + v) and the rounding of 1 + v */
PTC_SF ptc_log1pf_s(float v)
{
    float w = 1.0f + v;
    float d = w - 1.0f;
    float c = (d - v) / w;
    float r = ptc_logf_s(w) - c;
    return w == 1.0f ? v : r;
}

/* exp(hi + lo) for an exact hi and a small lo (|lo| << 1 + |hi|): the range
 * reduction subtracts k ln2 from hi before adding lo, so no rounding of the
 * sum hi + lo reaches the result (ptc_expf otherwise) */
PTC_SF ptc_expf_hl(float hi, float lo)
{
    float x = hi + lo;
    float xc = x > 88.7228394f ? 88.7228394f : x;
    xc = xc < -103.972084f ? -103.972084f : xc;
    xc = x != x ? 0.0f : xc;
    float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = hi - k * 0.693359375f;
    r = r + lo;
    r = r - k * -2.12194440e-4f;
    float p = 1.9875691500E-4f;
    p = p * r + 1.3981999507E-3f;
    p = p * r + 8.3334519073E-3f;
    p = p * r + 4.1665795894E-2f;
    p = p * r + 1.6666665459E-1f;
    p = p * r + 5.0000001201E-1f;
    float y = p * r * r + r + 1.0f;
    int32_t ki = (int32_t)k;
    int32_t k1 = ki >> 1, k2 = ki - k1;
    y = y * ptc_u2f((uint32_t)(k1 + 127) << 23) * ptc_u2f((uint32_t)(k2 + 127) << 23);
    y = x > 88.7228394f ? INFINITY : y;
    y = x < -103.972084f ? 0.0f : y;
    return x != x ? x : y;
}

static inline float ptc_poly_erfc_p(float u)
{
    float p = -9.246457830e-05f;
    p = p * u + 8.508317023e-06f;
    p = p * u + 5.880716896e-04f;
    p = p * u + -2.291922610e-04f;
    p = p * u + -2.303143466e-03f;
    p = p * u + 1.795201494e-03f;
    p = p * u + 8.815156956e-03f;
    p = p * u + -9.880431638e-03f;
    p = p * u + -4.689478102e-02f;
    p = p * u + 4.734394039e-02f;
    p = p * u + 6.726432125e-01f;
    p = p * u + -6.717940928e-01f;
    return p;
}
static inline float ptc_poly_erf_s(float u)
{
    float p = 1.058914226e-06f;
    p = p * u + -1.390924364e-05f;
    p = p * u + 1.195654666e-04f;
    p = p * u + -8.542636620e-04f;
    p = p * u + 5.223783410e-03f;
    p = p * u + -2.686613322e-02f;
    p = p * u + 1.128379131e-01f;
    p = p * u + -3.761263889e-01f;
    p = p * u + 1.128379167e+00f;
    return p;
}
static inline float ptc_poly_i0e_a(float u)
{
    float p = 3.359461728e-04f;
    p = p * u + -8.508527163e-04f;
    p = p * u + 4.696247329e-04f;
    p = p * u + -7.596966537e-04f;
    p = p * u + 4.062653886e-03f;
    p = p * u + -8.009849730e-03f;
    p = p * u + 1.166163385e-02f;
    p = p * u + -1.886512588e-02f;
    p = p * u + 3.029740865e-02f;
    p = p * u + -4.331379373e-02f;
    p = p * u + 5.674911081e-02f;
    p = p * u + -6.946451492e-02f;
    p = p * u + 7.927874419e-02f;
    p = p * u + -8.497304959e-02f;
    p = p * u + 8.734321533e-02f;
    p = p * u + -8.904288919e-02f;
    p = p * u + 9.451563189e-02f;
    p = p * u + -1.130043361e-01f;
    p = p * u + 2.070019212e-01f;
    return p;
}
static inline float ptc_poly_i1e_a(float u)
{
    float p = 4.598306589e-05f;
    p = p * u + -1.235527862e-04f;
    p = p * u + 1.004798610e-04f;
    p = p * u + -2.031783228e-04f;
    p = p * u + 7.994664894e-04f;
    p = p * u + -1.697630423e-03f;
    p = p * u + 2.969058919e-03f;
    p = p * u + -5.428314611e-03f;
    p = p * u + 9.598630819e-03f;
    p = p * u + -1.561382966e-02f;
    p = p * u + 2.368259370e-02f;
    p = p * u + -3.366142389e-02f;
    p = p * u + 4.467500364e-02f;
    p = p * u + -5.528129040e-02f;
    p = p * u + 6.376737912e-02f;
    p = p * u + -6.848253479e-02f;
    p = p * u + 6.805760032e-02f;
    p = p * u + -6.112433922e-02f;
    p = p * u + 4.468770988e-02f;
    return p;
}
static inline float ptc_poly_i0e_b(float u)
{
    float p = -7.134223717e-09f;
    p = p * u + -8.162407477e-09f;
    p = p * u + 1.935538017e-08f;
    p = p * u + 4.998793008e-08f;
    p = p * u + 9.003396929e-08f;
    p = p * u + 2.935535160e-07f;
    p = p * u + 1.483588658e-06f;
    p = p * u + 1.114364419e-05f;
    p = p * u + 1.362160878e-04f;
    p = p * u + 3.360551954e-03f;
    p = p * u + 4.021765094e-01f;
    return p;
}
static inline float ptc_poly_i1e_b(float u)
{
    float p = 7.600856510e-09f;
    p = p * u + 8.431201918e-09f;
    p = p * u + -2.142826878e-08f;
    p = p * u + -5.474729664e-08f;
    p = p * u + -1.012533811e-07f;
    p = p * u + -3.441973890e-07f;
    p = p * u + -1.834661039e-06f;
    p = p * u + -1.503922263e-05f;
    p = p * u + -2.192357768e-04f;
    p = p * u + -9.749577161e-03f;
    p = p * u + 3.893984590e-01f;
    return p;
}

/* erfc(z) for z >= 0 given -z^2 = nhi + nlo (nhi exact) */
PTC_SF ptc_erfc_pos(float z, float nhi, float nlo)
{
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = ptc_poly_erfc_p(t + t - 1.0f);
    return t * ptc_expf_hl(nhi, nlo + p);
}

/* erfc(|x|) with |x| clamped where erfc underflows (keeps inf out of the split) */
PTC_SF ptc_erfc_abs(float x)
{
    float a = fabsf(x);
    a = a > 11.0f ? 11.0f : a;
    float h = ptc_head12(a), l = a - h;
    return ptc_erfc_pos(a, -(h * h), -((h + h) * l + l * l));
}

PTC_SF ptc_erfc_s(float x)
{
    float e = ptc_erfc_abs(x);
    float small = 1.0f - x * ptc_poly_erf_s(x * x);
    float r = x < 0.0f ? 2.0f - e : e;
    r = fabsf(x) < 0.5f ? small : r;
    return x != x ? x : r;
}

/* erfcx(x) = exp(x^2) erfc(x): t exp(P(t)) for x >= 0; 2 exp(x^2) - erfcx(-x) below */
PTC_SF ptc_erfcx_s(float x)
{
    float a = fabsf(x);
    float t = 1.0f / (1.0f + 0.5f * a);
    float pos = t * ptc_expf(ptc_poly_erfc_p(t + t - 1.0f));
    float ac = a > 10.0f ? 10.0f : a;
    float h = ptc_head12(ac), l = ac - h;
    float neg = 2.0f * ptc_expf_hl(h * h, (h + h) * l + l * l) - pos;
    float r = x < 0.0f ? neg : pos;
    return x != x ? x : r;
}

/* ndtr(x) = erfc(-x / sqrt 2) / 2 with x^2 / 2 split exactly */
PTC_SF ptc_ndtr_s(float x)
{
    float a = fabsf(x);
    a = a > 15.0f ? 15.0f : a;
    float h = ptc_head12(a), l = a - h;
    float e = ptc_erfc_pos(a * 0.70710678118654752f, -0.5f * (h * h), -0.5f * ((h + h) * l + l * l));
    float r = x < 0.0f ? 0.5f * e : 1.0f - 0.5f * e;
    return x != x ? x : r;
}

/* log(ndtr(x)): log(t / 2) + P(t) - x^2 / 2 below -1 (no exp), log1p(-erfc(x / sqrt 2) / 2) above */
PTC_SF ptc_log_ndtr_s(float x)
{
    float z = -x * 0.70710678118654752f;
    float zc = z < 0.0f ? 0.0f : z;
    float t = 1.0f / (1.0f + 0.5f * zc);
    float left = (ptc_logf_s(0.5f * t) + ptc_poly_erfc_p(t + t - 1.0f)) - (0.5f * x) * x;
    float a = fabsf(x);
    a = a > 15.0f ? 15.0f : a;
    float h = ptc_head12(a), l = a - h;
    float e = ptc_erfc_pos(a * 0.70710678118654752f, -0.5f * (h * h), -0.5f * ((h + h) * l + l * l));
    float half_erfc = x > 0.0f ? 0.5f * e : 1.0f - 0.5f * e;   /* erfc(x / sqrt 2) / 2 */
    float right = ptc_log1pf_s(-half_erfc);
    float r = x < -1.0f ? left : right;
    return x != x ? x : r;
}

/* inverse error function: Giles' single-precision approximation (a Newton
 * step in float arithmetic does not improve it: 2.6e-7 relative without,
 * 3.5e-7 with, against scipy) */
PTC_SF ptc_erfinv_s(float y)
{
    float ay = fabsf(y);
    float w = -ptc_logf_s((1.0f - ay) * (1.0f + ay));
    float w1 = w - 2.5f;
    float p1 = 2.81022636e-08f;
    p1 = 3.43273939e-07f + p1 * w1;
    p1 = -3.5233877e-06f + p1 * w1;
    p1 = -4.39150654e-06f + p1 * w1;
    p1 = 0.00021858087f + p1 * w1;
    p1 = -0.00125372503f + p1 * w1;
    p1 = -0.00417768164f + p1 * w1;
    p1 = 0.246640727f + p1 * w1;
    p1 = 1.50140941f + p1 * w1;
    float wc = w > 36.0f ? 36.0f : w;
    float w2 = __builtin_sqrtf(wc) - 3.0f;
    float p2 = -0.000200214257f;
    p2 = 0.000100950558f + p2 * w2;
    p2 = 0.00134934322f + p2 * w2;
    p2 = -0.00367342844f + p2 * w2;
    p2 = 0.00573950773f + p2 * w2;
    p2 = -0.0076224613f + p2 * w2;
    p2 = 0.00943887047f + p2 * w2;
    p2 = 1.00167406f + p2 * w2;
    p2 = 2.83297682f + p2 * w2;
    float x = (w < 5.0f ? p1 : p2) * ay;
    float r = copysignf(x, y);
    r = ay == 1.0f ? copysignf(INFINITY, y) : r;
    r = ay > 1.0f ? NAN : r;
    return y != y ? y : r;
}

/* inverse of ndtr: Acklam's approximations (relative error 1.2e-9), the
 * rational functions evaluated in double (their coefficients cancel) */
PTC_SF ptc_ndtri_s(float p)
{
    double q = (double)p - 0.5, r = q * q;
    double num = -3.969683028665376e+01;
    num = num * r + 2.209460984245205e+02;
    num = num * r - 2.759285104469687e+02;
    num = num * r + 1.383577518672690e+02;
    num = num * r - 3.066479806614716e+01;
    num = num * r + 2.506628277459239e+00;
    double den = -5.447609879822406e+01;
    den = den * r + 1.615858368580409e+02;
    den = den * r - 1.556989798598866e+02;
    den = den * r + 6.680131188771972e+01;
    den = den * r - 1.328068155288572e+01;
    den = den * r + 1.0;
    float central = (float)(num * q / den);
    float pt = p < 0.5f ? p : 1.0f - p;          /* the tail's probability, exact */
    double s = (double)__builtin_sqrtf(-2.0f * ptc_logf_s(pt > 0.0f ? pt : 1.0f));
    double cn = -7.784894002430293e-03;
    cn = cn * s - 3.223964580411365e-01;
    cn = cn * s - 2.400758277161838e+00;
    cn = cn * s - 2.549732539343734e+00;
    cn = cn * s + 4.374664141464968e+00;
    cn = cn * s + 2.938163982698783e+00;
    double cd = 7.784695709041462e-03;
    cd = cd * s + 3.224671290700398e-01;
    cd = cd * s + 2.445134137142996e+00;
    cd = cd * s + 3.754408661907416e+00;
    cd = cd * s + 1.0;
    float tail = (float)(cn / cd);                 /* ndtri(pt) < 0 */
    tail = p < 0.5f ? tail : -tail;
    float x = (p > 0.02425f && p < 0.97575f) ? central : tail;
    x = p == 0.0f ? -INFINITY : x;
    x = p == 1.0f ? INFINITY : x;
    x = (p < 0.0f || p > 1.0f) ? NAN : x;
    return p != p ? p : x;
}

/* logit with PyTorch's optional clamp of the input to [lo, hi]: x < lo ? lo : (x > hi ? hi : x),
   so lo wins when eps > 0.5 makes lo > hi */
PTC_SF ptc_logit_s(float x, int use_eps, float lo, float hi)
{
    float z = x > hi ? hi : x;
    z = x < lo ? lo : z;
    z = use_eps ? z : x;
    return ptc_logf_s(z / (1.0f - z));
}

/* sin(pi x)^2, exact reduction to [-1/2, 1/2] */
PTC_SF ptc_sinpi2_s(float x)
{
    float ax = fabsf(x);
    float n = (ax + 8388608.0f) - 8388608.0f;      /* round to nearest for ax < 2^23 */
    n = ax >= 8388608.0f ? ax : n;
    float r = ax - n, r2 = r * r;
    float s = 4.66302805767612e-04f;               /* sin(pi r) / r, Taylor to r^12 */
    s = s * r2 - 7.37043094571435e-03f;
    s = s * r2 + 8.21458866111282e-02f;
    s = s * r2 - 5.99264529320792e-01f;
    s = s * r2 + 2.55016403987735e+00f;
    s = s * r2 - 5.16771278004997e+00f;
    s = s * r2 + 3.14159265358979e+00f;
    s = s * r;
    return s * s;
}

/* trigamma = polygamma(1, x), PyTorch's algorithm (reflection below 1/2,
 * six recurrence steps, asymptotic series) */
PTC_SF ptc_trigamma_s(float x)
{
    int refl = x < 0.5f;
    float s2 = ptc_sinpi2_s(x);
    float y = refl ? 1.0f - x : x;
    float res = 0.0f;
    for (int i = 0; i < 6; i++) {
        res += 1.0f / (y * y);
        y += 1.0f;
    }
    float ixx = 1.0f / (y * y);
    res += (1.0f + 1.0f / (2.0f * y) + ixx * (1.0f / 6.0f - ixx * (1.0f / 30.0f - ixx * (1.0f / 42.0f)))) / y;
    float r = refl ? 9.86960440108935862f / s2 - res : res;
    return x != x ? x : r;
}

/* exp(-|x|) I0(x) */
PTC_SF ptc_i0e_s(float x)
{
    float a = fabsf(x);
    float ac = a > 8.0f ? 8.0f : a;
    float small = ptc_poly_i0e_a(ac * 0.25f - 1.0f);
    float ab = a < 8.0f ? 8.0f : a;
    float big = ptc_poly_i0e_b(16.0f / ab - 1.0f) / __builtin_sqrtf(ab);
    float r = a <= 8.0f ? small : big;
    return x != x ? x : r;
}

PTC_SF ptc_i1e_s(float x)
{
    float a = fabsf(x);
    float ac = a > 8.0f ? 8.0f : a;
    float small = ptc_poly_i1e_a(ac * 0.25f - 1.0f) * a;
    float ab = a < 8.0f ? 8.0f : a;
    float big = ptc_poly_i1e_b(16.0f / ab - 1.0f) / __builtin_sqrtf(ab);
    float r = a <= 8.0f ? small : big;
    r = x < 0.0f ? -r : r;          /* I1(-0) = +0, as PyTorch */
    return x != x ? x : r;
}

/* I0 and I1 from the scaled ones: exp(|x|) applied in two halves, so the
 * result overflows only where I0/I1 do */
PTC_SF ptc_i0_s(float x)
{
    float e = ptc_expf(0.5f * fabsf(x));
    return (ptc_i0e_s(x) * e) * e;
}

PTC_SF ptc_i1_s(float x)
{
    float e = ptc_expf(0.5f * fabsf(x));
    return (ptc_i1e_s(x) * e) * e;
}

/* entr(x) = -x log x, 0 at 0, -inf below 0 (scipy's and PyTorch's values) */
PTC_SF ptc_entr_s(float x)
{
    float r = -x * ptc_logf_s(x);
    r = x == 0.0f ? 0.0f : r;
    r = x < 0.0f ? -INFINITY : r;
    return x != x ? x : r;
}

/* contiguous loops, one clone per instruction set; o[i] depends on a[i]
 * only, so the loop has no carried dependence even in place (o == a) */
#define PTC_SPECIAL_BODY(EXPR)                                                            \
    _Pragma("GCC ivdep")                                                                  \
    for (Py_ssize_t i = 0; i < n; i++) { float x = a[i]; o[i] = (EXPR); }
#if defined(__GNUC__) && defined(__x86_64__)
#define PTC_SPECIAL_LOOP(NAME, EXPR)                                                      \
__attribute__((target("avx512f,avx512vl"))) static void NAME##_avx512(float *o, const float *a,     \
        Py_ssize_t n) { PTC_SPECIAL_BODY(EXPR) }                                          \
__attribute__((target("avx2"))) static void NAME##_avx2(float *o, const float *a,          \
        Py_ssize_t n) { PTC_SPECIAL_BODY(EXPR) }                                          \
static void NAME##_base(float *o, const float *a, Py_ssize_t n) { PTC_SPECIAL_BODY(EXPR) }  \
static void NAME(float *o, const float *a, Py_ssize_t n)                                  \
{                                                                                         \
    int l_ = ptc_vec_level();                                                             \
    if (l_ == 2) NAME##_avx512(o, a, n); else if (l_ == 1) NAME##_avx2(o, a, n);          \
    else NAME##_base(o, a, n); }
#else
#define PTC_SPECIAL_LOOP(NAME, EXPR)                                                      \
static void NAME(float *o, const float *a, Py_ssize_t n)                                  \
{ PTC_SPECIAL_BODY(EXPR) }
#endif

PTC_SPECIAL_LOOP(ptc_erfc_vf32, ptc_erfc_s(x))
PTC_SPECIAL_LOOP(ptc_erfcx_vf32, ptc_erfcx_s(x))
PTC_SPECIAL_LOOP(ptc_erfinv_vf32, ptc_erfinv_s(x))
PTC_SPECIAL_LOOP(ptc_ndtr_vf32, ptc_ndtr_s(x))
PTC_SPECIAL_LOOP(ptc_log_ndtr_vf32, ptc_log_ndtr_s(x))
PTC_SPECIAL_LOOP(ptc_ndtri_vf32, ptc_ndtri_s(x))
PTC_SPECIAL_LOOP(ptc_trigamma_vf32, ptc_trigamma_s(x))
PTC_SPECIAL_LOOP(ptc_i0_vf32, ptc_i0_s(x))
PTC_SPECIAL_LOOP(ptc_i0e_vf32, ptc_i0e_s(x))
PTC_SPECIAL_LOOP(ptc_i1_vf32, ptc_i1_s(x))
PTC_SPECIAL_LOOP(ptc_i1e_vf32, ptc_i1e_s(x))
PTC_SPECIAL_LOOP(ptc_entr_vf32, ptc_entr_s(x))

/* logit with its clamp parameters (ew_extra d0 = eps, i0 = whether given) */
#define PTC_LOGIT_BODY                                                                    \
    const float lo = (float)eps, hi = (float)(1.0 - eps);                                 \
    const int ue = use_eps != 0;                                                          \
    _Pragma("GCC ivdep")                                                                  \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_logit_s(a[i], ue, lo, hi);
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx512f,avx512vl"))) static void ptc_logit_vf32_avx512(
        float *o, const float *a, Py_ssize_t n, double eps, int64_t use_eps) { PTC_LOGIT_BODY }
__attribute__((target("avx2"))) static void ptc_logit_vf32_avx2(
        float *o, const float *a, Py_ssize_t n, double eps, int64_t use_eps) { PTC_LOGIT_BODY }
static void ptc_logit_vf32_base(float *o, const float *a, Py_ssize_t n, double eps, int64_t use_eps)
{ PTC_LOGIT_BODY }
static void ptc_logit_vf32(float *o, const float *a, Py_ssize_t n, double eps, int64_t use_eps)
{
    int l_ = ptc_vec_level();
    if (l_ == 2) ptc_logit_vf32_avx512(o, a, n, eps, use_eps);
    else if (l_ == 1) ptc_logit_vf32_avx2(o, a, n, eps, use_eps);
    else ptc_logit_vf32_base(o, a, n, eps, use_eps);
}
#else
static void ptc_logit_vf32(float *o, const float *a, Py_ssize_t n, double eps, int64_t use_eps)
{ PTC_LOGIT_BODY }
#endif
#endif
