/* Scalar helpers for the elementwise kernels that libm lacks. */
#ifndef PTC_MATH_H
#define PTC_MATH_H
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Inverse error function: Giles' double-precision approximation ("Approximating
 * the erfinv function", GPU Computing Gems, 2011: three polynomials in w =
 * -log(1 - y^2)), within 5 ulp of the true value over (-1, 1) (torch's within 3);
 * no Newton steps (each costs an erf and an exp: 10x the time for ~2 ulp). */
static inline double ptc_erfinv(double y)
{
    if (isnan(y) || y < -1.0 || y > 1.0) return NAN;
    if (y == 1.0) return INFINITY;
    if (y == -1.0) return -INFINITY;
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 6.25) {
        w -= 3.125;
        x = -3.6444120640178196996e-21;
        x = -1.685059138182016589e-19 + x * w;
        x = 1.2858480715256400167e-18 + x * w;
        x = 1.115787767802518096e-17 + x * w;
        x = -1.333171662854620906e-16 + x * w;
        x = 2.0972767875968561637e-17 + x * w;
        x = 6.6376381343583238325e-15 + x * w;
        x = -4.0545662729752068639e-14 + x * w;
        x = -8.1519341976054721522e-14 + x * w;
        x = 2.6335093153082322977e-12 + x * w;
        x = -1.2975133253453532498e-11 + x * w;
        x = -5.4154120542946279317e-11 + x * w;
        x = 1.051212273321532285e-09 + x * w;
        x = -4.1126339803469836976e-09 + x * w;
        x = -2.9070369957882005086e-08 + x * w;
        x = 4.2347877827932403518e-07 + x * w;
        x = -1.3654692000834678645e-06 + x * w;
        x = -1.3882523362786468719e-05 + x * w;
        x = 0.0001867342080340571352 + x * w;
        x = -0.00074070253416626697512 + x * w;
        x = -0.0060336708714301490533 + x * w;
        x = 0.24015818242558961693 + x * w;
        x = 1.6536545626831027356 + x * w;
    } else if (w < 16.0) {
        w = sqrt(w) - 3.25;
        x = 2.2137376921775787049e-09;
        x = 9.0756561938885390979e-08 + x * w;
        x = -2.7517406297064545428e-07 + x * w;
        x = 1.8239629214389227755e-08 + x * w;
        x = 1.5027403968909827627e-06 + x * w;
        x = -4.013867526981545969e-06 + x * w;
        x = 2.9234449089955446044e-06 + x * w;
        x = 1.2475304481671778723e-05 + x * w;
        x = -4.7318229009055733981e-05 + x * w;
        x = 6.8284851459573175448e-05 + x * w;
        x = 2.4031110387097893999e-05 + x * w;
        x = -0.0003550375203628474796 + x * w;
        x = 0.00095328937973738049703 + x * w;
        x = -0.0016882755560235047313 + x * w;
        x = 0.0024914420961078508066 + x * w;
        x = -0.0037512085075692412107 + x * w;
        x = 0.005370914553590063617 + x * w;
        x = 1.0052589676941592334 + x * w;
        x = 3.0838856104922207635 + x * w;
    } else {
        w = sqrt(w) - 5.0;
        x = -2.7109920616438573243e-11;
        x = -2.5556418169965252055e-10 + x * w;
        x = 1.5076572693500548083e-09 + x * w;
        x = -3.7894654401267369937e-09 + x * w;
        x = 7.6157012080783393804e-09 + x * w;
        x = -1.4960026627149240478e-08 + x * w;
        x = 2.9147953450901080826e-08 + x * w;
        x = -6.7711997758452339498e-08 + x * w;
        x = 2.2900482228026654717e-07 + x * w;
        x = -9.9298272942317002539e-07 + x * w;
        x = 4.5260625972231537039e-06 + x * w;
        x = -1.9681778105531670567e-05 + x * w;
        x = 7.5995277030017761139e-05 + x * w;
        x = -0.00021503011930044477347 + x * w;
        x = -0.00013871931833623122026 + x * w;
        x = 1.0103004648645343977 + x * w;
        x = 4.8499064014085844221 + x * w;
    }
    return x * y;
}

/* Digamma: reflection for x < 0, recurrence up to x >= 6, asymptotic series.
 * Poles (non-positive integers) give NaN except x == 0 -> -inf sign-aware,
 * as PyTorch. */
static inline double ptc_digamma(double x)
{
    if (x == 0.0) return signbit(x) ? INFINITY : -INFINITY;
    if (isnan(x)) return NAN;
    if (x < 0.0) {
        if (x == floor(x)) return NAN;
        /* psi(1 - x) - pi / tan(pi x), the tangent of x's fractional part (as
         * torch's calc_digamma: pi * x loses the fraction for large |x|) */
        double r = ptc_digamma(1.0 - x);
        return r - 3.14159265358979323846 / tan(3.14159265358979323846 * (x - trunc(x)));
    }
    double result = 0.0;
    while (x < 6.0) { result -= 1.0 / x; x += 1.0; }
    double f = 1.0 / (x * x);
    double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132
               + f * (691.0 / 32760 + f * (-1.0 / 12 + f * 3617.0 / 8160)))))));
    return result + log(x) - 0.5 / x + t;
}

/* sgn(z) = z / |z| (0 at 0) without branches, so the loops vectorise; the
 * division is c10::complex's (numpy's) by |z| + 0i: rat = 0 / |z|, scale
 * 1 / |z|, so an infinite or nan |z| gives nan + nan i as in PyTorch.
 * complex64 in double arithmetic (|z| neither overflows nor underflows),
 * complex128 with hypot */
#define PTC_CSGN_BODY(T, A)                                                    \
    T d = (A) == 0.0 ? 1.0 : (A);                                              \
    T rat = 0.0 / d, scl = 1.0 / d;                                            \
    T qr = (re + im * rat) * scl, qi = (im - re * rat) * scl;                  \
    qr = (A) == 0.0 ? 0.0 : qr;                                                \
    qi = (A) == 0.0 ? 0.0 : qi;
static inline float _Complex ptc_csgn_c64(float _Complex z)
{
    double re = (double)__real__ z, im = (double)__imag__ z;
    double a = sqrt(re * re + im * im);
    PTC_CSGN_BODY(double, a)
    float _Complex r;
    __real__ r = (float)qr;
    __imag__ r = (float)qi;
    return r;
}
static inline double _Complex ptc_csgn_c128(double _Complex z)
{
    double re = __real__ z, im = __imag__ z;
    double a = hypot(re, im);
    PTC_CSGN_BODY(double, a)
    double _Complex r;
    __real__ r = qr;
    __imag__ r = qi;
    return r;
}

/* Python/NumPy floor division for floats (as PyTorch's div_floor). */
static inline double ptc_floordiv(double a, double b)
{
    if (b == 0.0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div -= 1.0;
    double fl;
    if (div != 0.0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}
static inline float ptc_floordivf(float a, float b)
{
    if (b == 0.0f) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
    float fl;
    if (div != 0.0f) {
        fl = floorf(div);
        if (div - fl > 0.5f) fl += 1.0f;
    } else {
        fl = copysignf(0.0f, a / b);
    }
    return fl;
}

/* float32 exp written so that loops calling it auto-vectorise with plain
 * SSE2: no calls, no branches (selects only).  Cody-Waite range reduction,
 * Cephes' degree-5 polynomial (<= 1 ulp over the normal range), scaling by
 * 2^k in two steps so subnormal results are right.  NaN in -> NaN out. */
static inline float ptc_expf(float x)
{
    const float log2e = 1.44269504088896341f;
    const float c1 = 0.693359375f, c2 = -2.12194440e-4f;
    const float magic = 12582912.0f;               /* 1.5 * 2^23: round to nearest */
    float xc = x > 88.7228394f ? 88.7228394f : x;
    xc = xc < -103.972084f ? -103.972084f : xc;
    float k = (xc * log2e + magic) - magic;
    float r = xc - k * c1;
    r = r - k * c2;
    float p = 1.9875691500E-4f;
    p = p * r + 1.3981999507E-3f;
    p = p * r + 8.3334519073E-3f;
    p = p * r + 4.1665795894E-2f;
    p = p * r + 1.6666665459E-1f;
    p = p * r + 5.0000001201E-1f;
    float y = p * r * r + r + 1.0f;
    int32_t ki = (int32_t)k;
    int32_t k1 = ki / 2, k2 = ki - k1;
    union { uint32_t u; float f; } s1, s2;
    s1.u = (uint32_t)(k1 + 127) << 23;
    s2.u = (uint32_t)(k2 + 127) << 23;
    y = y * s1.f * s2.f;
    y = x > 88.7228394f ? INFINITY : y;
    y = x < -103.972084f ? 0.0f : y;
    return x != x ? x : y;
}

/* tanh in float32 from ptc_expf: Cephes' odd polynomial below |x| = 0.625,
 * 1 - 2 / (exp(2|x|) + 1) above (about 2 ulp); the vector forms below compute
 * the same operations lane by lane */
static inline float ptc_tanhf(float x)
{
    float ax = fabsf(x);
    if (ax < 0.625f) {
        float z = x * x;
        return copysignf(((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z
                            - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z
                          - 3.33332819422e-1f) * z * x + x, x);     /* tanh(-0) = -0 */
    }
    return copysignf(1.0f - 2.0f / (ptc_expf(ax + ax) + 1.0f), x);
}

/* exact GELU as PyTorch's CPU kernels compute it: x * 0.5 * (1 + erf(x / sqrt 2))
 * with erf from Abramowitz & Stegun 7.1.26 for float32 (|error| < 1.5e-7, what
 * ATen's Vectorized<float>::erf uses); float64's: _ew.pyx.tp's STAGED_EXPR
 * with ptc_derf_vec.h's erf */
static inline float ptc_erf_as_f(float x)
{
    float a = fabsf(x);
    float t = 1.0f / (0.3275911f * a + 1.0f);
    float r = (((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t
              + 0.254829592f;
    return copysignf(1.0f - r * t * ptc_expf(-(x * x)), x);
}
static inline float ptc_gelu_f32(float x)
{
    return x * 0.5f * (1.0f + ptc_erf_as_f(x * 0.70710678118654752440f));
}
static inline float ptc_gelu_tanh_f32(float x)
{
    return x * 0.5f * (1.0f + ptc_tanhf((x + x * x * x * 0.044715f) * 0.79788456080286535588f));
}
static inline double ptc_gelu_tanh_f64(double x)
{
    return x * 0.5 * (1.0 + tanh((x + x * x * x * 0.044715) * 0.79788456080286535588));
}

/* exact GELU's gradient as ATen's GeluBackward kernel computes it:
 * dy * (0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(2 pi)), with the
 * erf of ptc_gelu_f32 (float64's: _nn_kernels.pyx's _gelu_bwd) */
static inline float ptc_gelu_bwd_f32(float dy, float x)
{
    float cdf = 0.5f * (1.0f + ptc_erf_as_f(x * 0.70710678118654752440f));
    float pdf = 0.39894228040143267794f * ptc_expf(x * x * -0.5f);
    return dy * (cdf + x * pdf);
}

/* Explicitly vectorised contiguous float32 loops for the hot transcendental
 * ops (GCC/Clang vector extensions: SSE2 code by default, an AVX2 clone
 * chosen at load time where the CPU has it).  Same algorithm as ptc_expf. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
typedef float ptc_v8sf __attribute__((vector_size(32)));
typedef int32_t ptc_v8si __attribute__((vector_size(32)));
#if defined(__x86_64__) && defined(__GNUC__)
#define PTC_X86_DISPATCH 1
#else
#define PTC_X86_DISPATCH 0
#endif

static inline __attribute__((always_inline)) ptc_v8sf ptc_sel8(ptc_v8si m, ptc_v8sf a, ptc_v8sf b)
{
    return (ptc_v8sf)(((ptc_v8si)a & m) | ((ptc_v8si)b & ~m));
}

/* the exp of ptc_expf on vectors of VF (integer lanes VI, select SEL); no
 * FMA contraction (ISO C mode), so every width gives the same bits */
/* exp of the clamped argument xc (|xc| <= 103.97) into y, the operations of ptc_expf */
#define PTC_EXPF_CORE(VF, VI)                                                 \
    PTC_EXPF_REDUCED(VF)                                                      \
    PTC_EXPF_SCALE_##VF(y, k, VF, VI)
/* its first part: k = round(xc / ln 2) and y = exp(xc - k ln 2) */
#define PTC_EXPF_REDUCED(VF)                                                  \
    VF k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;           \
    VF r = xc - k * 0.693359375f;                                             \
    r = r - k * -2.12194440e-4f;                                              \
    VF p = zero + 1.9875691500E-4f;                                           \
    p = p * r + 1.3981999507E-3f;                                             \
    p = p * r + 8.3334519073E-3f;                                             \
    p = p * r + 4.1665795894E-2f;                                             \
    p = p * r + 1.6666665459E-1f;                                             \
    p = p * r + 5.0000001201E-1f;                                             \
    VF y = p * r * r + r + 1.0f;

/* y * 2^k (k integral, |k| <= 150) as two exact power-of-two factors: the
 * first product is exact (normal), the second rounds once */
#define PTC_EXPF_SCALE_INT(y, k, VF, VI)                                      \
    VI ki = __builtin_convertvector(k, VI);                                   \
    VI k1 = ki >> 1;                                                          \
    VI k2 = ki - k1;                                                          \
    VF s1 = (VF)((k1 + 127) << 23);                                           \
    VF s2 = (VF)((k2 + 127) << 23);                                           \
    y = y * s1 * s2;
#define PTC_EXPF_SCALE_ptc_v8sf PTC_EXPF_SCALE_INT

#define PTC_EXPF_BODY(VF, VI, SEL)                                            \
    const VF zero = {0};                                                      \
    VI over = x > 88.7228394f;                                                \
    VI under = x < -103.972084f;                                              \
    VI isnan_ = x != x;                                                       \
    VF xc = SEL(over, zero + 88.7228394f, x);                                 \
    xc = SEL(under, zero - 103.972084f, xc);                                  \
    xc = SEL(isnan_, zero, xc);                                               \
    PTC_EXPF_CORE(VF, VI)                                                     \
    y = SEL(over, zero + INFINITY, y);                                        \
    y = SEL(under, zero, y);                                                  \
    return SEL(isnan_, x, y);

static inline __attribute__((always_inline)) ptc_v8sf ptc_expf8(ptc_v8sf x)
{
    PTC_EXPF_BODY(ptc_v8sf, ptc_v8si, ptc_sel8)
}

/* the same exp for arguments <= 0 or NaN (GELU's exp(-x^2 / 2)): no overflow
 * lanes, NaN propagates through the arithmetic, and the lanes below -103.97
 * (exactly 0) are computed from 0 and replaced, not computed as an
 * underflowing product (a microcode assist per lane on some CPUs) */
#define PTC_EXPF_NEG_BODY(VF, VI, SEL)                                        \
    const VF zero = {0};                                                      \
    VI under = x < -103.972084f;                                              \
    VF xc = SEL(under, zero, x);                                              \
    PTC_EXPF_CORE(VF, VI)                                                     \
    return SEL(under, zero, y);

static inline __attribute__((always_inline)) ptc_v8sf ptc_expf8_neg(ptc_v8sf x)
{
    PTC_EXPF_NEG_BODY(ptc_v8sf, ptc_v8si, ptc_sel8)
}

/* GELU forward's exp(-u^2): PTC_EXPF_CORE on the argument clamped to -87 or
 * above (NaN passes), so k >= -126 and 2^k is one normal factor (one scale,
 * no replacement of underflowing lanes).  The clamp and the single scale
 * only change values below 2^-125, and there 1 - r t e rounds to 1 either
 * way (r t < 0.6): GELU's bits equal those of PTC_EXPF_NEG_BODY's exp for
 * every float32 input (checked over all 2^32 of them) in ~0.85x its time */
#define PTC_EXPF_GELU_BODY(VF, VI, SEL)                                       \
    const VF zero = {0};                                                      \
    VF xc = SEL((VI)(x < -87.0f), zero - 87.0f, x);                           \
    PTC_EXPF_REDUCED(VF)                                                      \
    VI ki = __builtin_convertvector(k, VI);                                   \
    return y * (VF)((ki + 127) << 23);

static inline __attribute__((always_inline)) ptc_v8sf ptc_expf8_gelu(ptc_v8sf x)
{
    PTC_EXPF_GELU_BODY(ptc_v8sf, ptc_v8si, ptc_sel8)
}

/* tanh on vectors (see ptc_tanhf) */
#define PTC_TANHF_BODY(VF, VI, SEL, EXPV)                                      \
    const VF zero = {0};                                                      \
    VI sign = (VI)x & (int32_t)0x80000000;                                    \
    VF ax = (VF)((VI)x & 0x7fffffff);                                         \
    VF large = 1.0f - 2.0f / (EXPV(ax + ax) + 1.0f);                          \
    large = (VF)((VI)large | sign);                                           \
    VI small_ = ax < 0.625f;                                                  \
    VF xc = SEL(small_, x, zero);                                             \
    VF z = xc * xc;                                                           \
    VF p = zero - 5.70498872745e-3f;                                          \
    p = p * z + 2.06390887954e-2f;                                            \
    p = p * z - 5.37397155531e-2f;                                            \
    p = p * z + 1.33314422036e-1f;                                            \
    p = p * z - 3.33332819422e-1f;                                            \
    VF small = p * z * xc + xc;                                               \
    small = (VF)((VI)small | sign);          /* tanh(-0) = -0 */              \
    return SEL(small_, small, large);

static inline __attribute__((always_inline)) ptc_v8sf ptc_tanhf8(ptc_v8sf x)
{
    PTC_TANHF_BODY(ptc_v8sf, ptc_v8si, ptc_sel8, ptc_expf8)
}

/* exact GELU on vectors (see ptc_gelu_f32) */
#define PTC_GELU_BODY(VF, VI, EXPV)                                            \
    VF u = x * 0.70710678118654752440f;                                       \
    VI sign = (VI)u & (int32_t)0x80000000;                                    \
    VF a = (VF)((VI)u & 0x7fffffff);                                          \
    VF t = 1.0f / (a * 0.3275911f + 1.0f);                                    \
    VF r = t * 1.061405429f - 1.453152027f;                                   \
    r = r * t + 1.421413741f;                                                 \
    r = r * t - 0.284496736f;                                                 \
    r = r * t + 0.254829592f;                                                 \
    VF erf_ = 1.0f - r * t * EXPV(-(u * u));                                  \
    erf_ = (VF)((VI)erf_ | sign);                                             \
    return x * 0.5f * (1.0f + erf_);

static inline __attribute__((always_inline)) ptc_v8sf ptc_gelu8(ptc_v8sf x)
{
    PTC_GELU_BODY(ptc_v8sf, ptc_v8si, ptc_expf8_gelu)
}

/* exact GELU's gradient on vectors (see ptc_gelu_bwd_f32): one exp,
 * e = exp(-x^2 / 2), serves both the normal density and the erf's
 * exp(-u^2) (u = x / sqrt(2), the same value up to the rounding of the
 * argument: far below the erf approximation's 1.5e-7 error), where
 * ptc_gelu_bwd_f32 takes two; the exp was half of this kernel's time */
#define PTC_GELU_BWD_BODY(VF, VI, EXPV)                                        \
    VF u = x * 0.70710678118654752440f;                                       \
    VI sign = (VI)u & (int32_t)0x80000000;                                    \
    VF a = (VF)((VI)u & 0x7fffffff);                                          \
    VF t = 1.0f / (a * 0.3275911f + 1.0f);                                    \
    VF r = t * 1.061405429f - 1.453152027f;                                   \
    r = r * t + 1.421413741f;                                                 \
    r = r * t - 0.284496736f;                                                 \
    r = r * t + 0.254829592f;                                                 \
    VF e = EXPV(x * x * -0.5f);                                               \
    VF erf_ = 1.0f - r * t * e;                                               \
    erf_ = (VF)((VI)erf_ | sign);                                             \
    VF cdf = 0.5f * (1.0f + erf_);                                            \
    VF pdf = 0.39894228040143267794f * e;                                     \
    return g * (cdf + x * pdf);

static inline __attribute__((always_inline)) ptc_v8sf ptc_gelu_bwd8(ptc_v8sf g, ptc_v8sf x)
{
    PTC_GELU_BWD_BODY(ptc_v8sf, ptc_v8si, ptc_expf8_neg)
}

#define PTC_MAP_BODY(W, VF, vexpr, sexpr)                                      \
    Py_ssize_t i = 0;                                                         \
    for (; i + (W) <= n; i += (W)) {                                          \
        VF x, y;                                                              \
        memcpy(&x, a + i, sizeof x);                                          \
        y = (vexpr);                                                          \
        memcpy(o + i, &y, sizeof y);                                          \
    }                                                                         \
    for (; i < n; i++) { float x = a[i]; o[i] = (sexpr); }

/* o[i] = f(a[i]) W lanes VF a step, the tail through one vector padded with
 * PAD (so a tail's bits are the full vector's); STEP(x, y) the statements
 * computing y from x */
#define PTC_PADDED_MAP(W, VF, PAD, STEP)                                       \
    float pbuf_[W];                                                           \
    for (Py_ssize_t i = 0; i < n; i += (W)) {                                 \
        const Py_ssize_t m = n - i;                                           \
        VF x, y;                                                              \
        if (m >= (W)) memcpy(&x, a + i, sizeof x);                            \
        else {                                                                \
            for (int j = 0; j < (W); j++) pbuf_[j] = j < m ? a[i + j] : (PAD); \
            memcpy(&x, pbuf_, sizeof x);                                      \
        }                                                                     \
        STEP(x, y)                                                            \
        if (m >= (W)) memcpy(o + i, &y, sizeof y);                            \
        else {                                                                \
            memcpy(pbuf_, &y, sizeof y);                                      \
            for (Py_ssize_t j = 0; j < m; j++) o[i + j] = pbuf_[j];           \
        }                                                                     \
    }

/* two-input maps o[i] = f(g[i], x[i]) */
#define PTC_MAP2_BODY(W, VF, vexpr, sexpr)                                     \
    Py_ssize_t i = 0;                                                         \
    for (; i + (W) <= n; i += (W)) {                                          \
        VF g, x, y;                                                           \
        memcpy(&g, b + i, sizeof g);                                          \
        memcpy(&x, a + i, sizeof x);                                          \
        y = (vexpr);                                                          \
        memcpy(o + i, &y, sizeof y);                                          \
    }                                                                         \
    for (; i < n; i++) { float g = b[i], x = a[i]; o[i] = (sexpr); }

#if PTC_X86_DISPATCH
/* 16-float vectors for the AVX-512 clone: the same operations in the same
 * order, so the result bits do not depend on the CPU (measured 1.24x over
 * the AVX2 clone for exp on AMD Zen 4) */
typedef float ptc_v16sf __attribute__((vector_size(64)));
typedef int32_t ptc_v16si __attribute__((vector_size(64)));
/* AVX-512's y * 2^k in one instruction: the exact y * 2^k rounded once, as
 * PTC_EXPF_SCALE_INT's two factors (their first product is exact), so the
 * same bits, in 1 operation instead of 8 (exp ~15% faster) */
#include <immintrin.h>
/* the doubles tab[i] of a 16-entry table at 4 int64 lanes i in [0, 16):
 * four in-register permutes (each 64-bit index as the pair of 32-bit
 * indices 2i, 2i + 1) and blends on bits 2 and 3 -- the values a gather
 * reads, at a fraction of its cost (vgatherqpd is microcoded on AMD Zen;
 * log1p's two gathers a vector were 2x torch's time there) */
static inline __attribute__((always_inline, target("avx2"))) __m256d
ptc_lut16_4d(const double* tab, __m256i i)
{
    const __m256i i2 = _mm256_slli_epi64(i, 1);
    const __m256i pr = _mm256_or_si256(i2, _mm256_slli_epi64(_mm256_add_epi64(i2, _mm256_set1_epi64x(1)), 32));
    const __m256d t0 = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_loadu_ps((const float*)tab), pr));
    const __m256d t1 = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_loadu_ps((const float*)(tab + 4)), pr));
    const __m256d t2 = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_loadu_ps((const float*)(tab + 8)), pr));
    const __m256d t3 = _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_loadu_ps((const float*)(tab + 12)), pr));
    const __m256d b2 = _mm256_castsi256_pd(_mm256_slli_epi64(i, 61));
    const __m256d b3 = _mm256_castsi256_pd(_mm256_slli_epi64(i, 60));
    return _mm256_blendv_pd(_mm256_blendv_pd(t0, t1, b2), _mm256_blendv_pd(t2, t3, b2), b3);
}
#define PTC_EXPF_SCALE_ptc_v16sf(y, k, VF, VI)                                \
    y = (VF)_mm512_scalef_ps((__m512)(y), (__m512)(k));

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_sel16(ptc_v16si m, ptc_v16sf a, ptc_v16sf b)
{
    return (ptc_v16sf)(((ptc_v16si)a & m) | ((ptc_v16si)b & ~m));
}

/* PTC_EXPF_BODY with AVX-512's mask registers: each of its six selects one
 * masked move (the generic select is three vector operations on a vector
 * mask), the same clamps, core and replacements -- so the same bits, in
 * about 2/3 of the operations (cross_entropy's row log-sum-exp ~1.5x) */
static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_expf16(ptc_v16sf x)
{
    const ptc_v16sf zero = {0};
    const __m512 xm = (__m512)x;
    const __mmask16 over = _mm512_cmp_ps_mask(xm, _mm512_set1_ps(88.7228394f), _CMP_GT_OQ);
    const __mmask16 under = _mm512_cmp_ps_mask(xm, _mm512_set1_ps(-103.972084f), _CMP_LT_OQ);
    const __mmask16 isnan_ = _mm512_cmp_ps_mask(xm, xm, _CMP_UNORD_Q);
    __m512 c = _mm512_mask_mov_ps(xm, over, _mm512_set1_ps(88.7228394f));
    c = _mm512_mask_mov_ps(c, under, _mm512_set1_ps(-103.972084f));
    c = _mm512_mask_mov_ps(c, isnan_, _mm512_setzero_ps());
    const ptc_v16sf xc = (ptc_v16sf)c;
    PTC_EXPF_CORE(ptc_v16sf, ptc_v16si)
    __m512 ym = (__m512)y;
    ym = _mm512_mask_mov_ps(ym, over, _mm512_set1_ps(INFINITY));
    ym = _mm512_mask_mov_ps(ym, under, _mm512_setzero_ps());
    return (ptc_v16sf)_mm512_mask_mov_ps(ym, isnan_, xm);
}

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_tanhf16(ptc_v16sf x)
{
    PTC_TANHF_BODY(ptc_v16sf, ptc_v16si, ptc_sel16, ptc_expf16)
}

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_expf16_neg(ptc_v16sf x)
{
    /* PTC_EXPF_NEG_BODY with masked moves (the same bits) */
    const ptc_v16sf zero = {0};
    const __mmask16 under = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-103.972084f), _CMP_LT_OQ);
    const ptc_v16sf xc = (ptc_v16sf)_mm512_mask_mov_ps((__m512)x, under, _mm512_setzero_ps());
    PTC_EXPF_CORE(ptc_v16sf, ptc_v16si)
    return (ptc_v16sf)_mm512_mask_mov_ps((__m512)y, under, _mm512_setzero_ps());
}

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_expf16_gelu(ptc_v16sf x)
{
    PTC_EXPF_GELU_BODY(ptc_v16sf, ptc_v16si, ptc_sel16)
}

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_gelu16(ptc_v16sf x)
{
    PTC_GELU_BODY(ptc_v16sf, ptc_v16si, ptc_expf16_gelu)
}

static inline __attribute__((always_inline, target("avx512f,avx512vl"))) ptc_v16sf ptc_gelu_bwd16(ptc_v16sf g, ptc_v16sf x)
{
    PTC_GELU_BWD_BODY(ptc_v16sf, ptc_v16si, ptc_expf16_neg)
}

/* the vector copies this CPU runs: 2 AVX-512, 1 AVX2, 0 the baseline;
 * ATEN_CPU_CAPABILITY (torch's switch, which ptcore.backends.cpu reports
 * too) lowers it for the process: "default" the baseline, "avx2" at most
 * AVX2 -- so every copy can be run (and its bits compared) on one machine */
static int ptc_vec_level(void)
{
    static int level = -1;
    if (level < 0) {
        const char* cap = getenv("ATEN_CPU_CAPABILITY");
        int l;
        __builtin_cpu_init();
        l = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
        if (cap != NULL && strcmp(cap, "default") == 0) l = 0;
        else if (cap != NULL && strcmp(cap, "avx2") == 0 && l > 1) l = 1;
        level = l;
    }
    return level;
}
/* ptc_vec_level, counting a vector level only where the CPU also has FMA */
static int ptc_fma_level(void)
{
    static int level = -1;
    if (level < 0) {
        __builtin_cpu_init();
        level = __builtin_cpu_supports("fma") ? ptc_vec_level() : 0;
    }
    return level;
}
/* one copy compiled for AVX-512F (attributes T512), one for AVX2 (T2), one for
 * the baseline; chosen per call by LEVEL() */
#define PTC_MAP_F32_X(name, vexpr8, vexpr16, sexpr, T512, T2, LEVEL)          \
T512 static void name##_avx512(float *o, const float *a, Py_ssize_t n)        \
{ PTC_MAP_BODY(16, ptc_v16sf, vexpr16, sexpr) }                               \
T2 static void name##_avx2(float *o, const float *a, Py_ssize_t n)            \
{ PTC_MAP_BODY(8, ptc_v8sf, vexpr8, sexpr) }                                  \
static void name##_base(float *o, const float *a, Py_ssize_t n)               \
{ PTC_MAP_BODY(8, ptc_v8sf, vexpr8, sexpr) }                                  \
static void name(float *o, const float *a, Py_ssize_t n)                      \
{ int l_ = LEVEL();                                                           \
  if (l_ == 2) name##_avx512(o, a, n); else if (l_ == 1) name##_avx2(o, a, n); \
  else name##_base(o, a, n); }
#define PTC_MAP2_F32_X(name, vexpr8, vexpr16, sexpr, T512, T2, LEVEL)         \
T512 static void name##_avx512(float *o, const float *a, const float *b, Py_ssize_t n) \
{ PTC_MAP2_BODY(16, ptc_v16sf, vexpr16, sexpr) }                              \
T2 static void name##_avx2(float *o, const float *a, const float *b, Py_ssize_t n) \
{ PTC_MAP2_BODY(8, ptc_v8sf, vexpr8, sexpr) }                                 \
static void name##_base(float *o, const float *a, const float *b, Py_ssize_t n)            \
{ PTC_MAP2_BODY(8, ptc_v8sf, vexpr8, sexpr) }                                 \
static void name(float *o, const float *a, const float *b, Py_ssize_t n)     \
{ int l_ = LEVEL();                                                           \
  if (l_ == 2) name##_avx512(o, a, b, n); else if (l_ == 1) name##_avx2(o, a, b, n); \
  else name##_base(o, a, b, n); }
#define PTC_TGT(isa) __attribute__((target(isa)))
#define PTC_MAP_F32(name, vexpr8, vexpr16, sexpr)                              \
    PTC_MAP_F32_X(name, vexpr8, vexpr16, sexpr, PTC_TGT("avx512f,avx512vl"), PTC_TGT("avx2"), ptc_vec_level)
#define PTC_MAP2_F32(name, vexpr8, vexpr16, sexpr)                             \
    PTC_MAP2_F32_X(name, vexpr8, vexpr16, sexpr, PTC_TGT("avx512f,avx512vl"), PTC_TGT("avx2"), ptc_vec_level)
/* the same maps with multiply-adds contracted to FMA in the AVX2 and AVX-512
 * clones (where the CPU has FMA; the baseline keeps them apart): for GELU,
 * whose erf and exp are long multiply-add chains, about 1.3x faster, values
 * within float32 rounding of the separate operations (and the same on AVX2
 * and AVX-512, the FMA contraction being per operation) */
#define PTC_FMA_TGT(isa) __attribute__((target(isa ",fma"), optimize("fp-contract=fast")))
#define PTC_MAP_F32_FMA(name, vexpr8, vexpr16, sexpr)                          \
    PTC_MAP_F32_X(name, vexpr8, vexpr16, sexpr, PTC_FMA_TGT("avx512f,avx512vl"), PTC_FMA_TGT("avx2"), \
                  ptc_fma_level)
#define PTC_MAP2_F32_FMA(name, vexpr8, vexpr16, sexpr)                         \
    PTC_MAP2_F32_X(name, vexpr8, vexpr16, sexpr, PTC_FMA_TGT("avx512f,avx512vl"), PTC_FMA_TGT("avx2"), \
                   ptc_fma_level)
/* a map with non-temporal stores, NAME_st (an output larger than the cache,
 * ptc_stream.h): a scalar head to the vector's alignment, then whole vectors
 * streamed; the caller fences.  Only for maps whose scalar and vector
 * expressions give the same bits (the head's elements take the scalar one). */
#define PTC_MAP_BODY_ST(W, VF, STREAM, vexpr, sexpr)                           \
    Py_ssize_t i = 0;                                                         \
    for (; i < n && ((uintptr_t)(o + i) & (sizeof(VF) - 1)); i++)             \
        { float x = a[i]; o[i] = (sexpr); }                                   \
    for (; i + (W) <= n; i += (W)) {                                          \
        VF x, y;                                                              \
        memcpy(&x, a + i, sizeof x);                                          \
        y = (vexpr);                                                          \
        STREAM(o + i, y);                                                     \
    }                                                                         \
    for (; i < n; i++) { float x = a[i]; o[i] = (sexpr); }
#define PTC_STREAM16(p, y) _mm512_stream_ps((p), (__m512)(y))
#define PTC_STREAM8(p, y) _mm256_stream_ps((p), (__m256)(y))
#define PTC_MAP_F32_STREAMED(name, vexpr8, vexpr16, sexpr)                     \
PTC_MAP_F32(name, vexpr8, vexpr16, sexpr)                                     \
PTC_TGT("avx512f,avx512vl") static void name##_st_avx512(float *o, const float *a, Py_ssize_t n) \
{ PTC_MAP_BODY_ST(16, ptc_v16sf, PTC_STREAM16, vexpr16, sexpr) }             \
PTC_TGT("avx2") static void name##_st_avx2(float *o, const float *a, Py_ssize_t n) \
{ PTC_MAP_BODY_ST(8, ptc_v8sf, PTC_STREAM8, vexpr8, sexpr) }                 \
static void name##_st(float *o, const float *a, Py_ssize_t n)                 \
{ int l_ = ptc_vec_level();                                                   \
  if (l_ == 2) name##_st_avx512(o, a, n); else if (l_ == 1) name##_st_avx2(o, a, n); \
  else name(o, a, n); }
/* The float-lane maps of ptc_fmath_vec.h, ptc_log_vec.h and ptc_trigf_vec.h
 * (o[i] = f(a[i], k), their own polynomials, the same bits at both widths):
 * lane operations at 16 lanes (AVX-512) and 8 (AVX2) */
#define PTC_LANE_FMA16(a, b, c) ((ptc_v16sf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define PTC_LANE_FMA8(a, b, c) ((ptc_v8sf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define PTC_LANE_MIN16(c, v) ((ptc_v16sf)_mm512_min_ps((__m512)(c), (__m512)(v)))
#define PTC_LANE_MAX16(c, v) ((ptc_v16sf)_mm512_max_ps((__m512)(c), (__m512)(v)))
#define PTC_LANE_MIN8(c, v) ((ptc_v8sf)_mm256_min_ps((__m256)(c), (__m256)(v)))
#define PTC_LANE_MAX8(c, v) ((ptc_v8sf)_mm256_max_ps((__m256)(c), (__m256)(v)))
/* every lane of the integer mask m set / some lane set */
#define PTC_LANE_ALL16(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) == 0xffff)
#define PTC_LANE_ANY16(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) != 0)
#define PTC_LANE_ALL8(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define PTC_LANE_ANY8(m) (_mm256_movemask_ps((__m256)(m)) != 0)
#define PTC_LANE_SQRT16(v) ((ptc_v16sf)_mm512_sqrt_ps((__m512)(v)))
#define PTC_LANE_SQRT8(v) ((ptc_v8sf)_mm256_sqrt_ps((__m256)(v)))
/* SIGNSEL(s, a, b): a where the sign bit of s is set, else b */
#define PTC_LANE_SIGNSEL16(s, a, b) ((ptc_v16sf)_mm512_mask_blend_ps(                      \
    _mm512_cmplt_epi32_mask((__m512i)(s), _mm512_setzero_si512()), (__m512)(b), (__m512)(a)))
#define PTC_LANE_SIGNSEL8(s, a, b) ((ptc_v8sf)_mm256_blendv_ps((__m256)(b), (__m256)(a), (__m256)(s)))
/* select b where the integer lanes m are all ones, else a */
#define PTC_LANE_SEL(VF, VI, m, b, a) ((VF)(((VI)(b) & (m)) | ((VI)(a) & ~(m))))
/* NAME_avx512 and NAME_avx2 (o[i] = f(a[i]) with the int argument ARG): the
 * padded map (tail lanes PAD) with STEP16 / STEP8 (`zero` in scope), FMA
 * only where a step writes it (no contraction: the same bits on both) */
#define PTC_LANE_TGT512 __attribute__((target("avx512f,avx512vl,fma"), optimize("fp-contract=off")))
#define PTC_LANE_TGT256 __attribute__((target("avx2,fma"), optimize("fp-contract=off")))
#define PTC_LANE_MAPS(NAME, ARG, PAD, STEP16, STEP8)                           \
PTC_LANE_TGT512 static inline __attribute__((always_inline))                 \
void NAME##_avx512(float* o, const float* a, Py_ssize_t n, int ARG)          \
{                                                                             \
    const ptc_v16sf zero = {0};                                               \
    PTC_PADDED_MAP(16, ptc_v16sf, PAD, STEP16)                                \
}                                                                             \
PTC_LANE_TGT256 static inline __attribute__((always_inline))                 \
void NAME##_avx2(float* o, const float* a, Py_ssize_t n, int ARG)            \
{                                                                             \
    const ptc_v8sf zero = {0};                                                \
    PTC_PADDED_MAP(8, ptc_v8sf, PAD, STEP8)                                   \
}
/* the maps' copies for the constant argument K (NAME_avx512_K, NAME_avx2_K):
 * the function's choice made at compile time.  (One copy taking K at run time
 * tested it in every vector's step, and the compiler could keep no constant
 * of any branch in a register: sigmoid ran at ~1.5x the time of these.) */
#define PTC_LANE_SPECIAL(NAME, K)                                              \
PTC_LANE_TGT512 static void NAME##_avx512_##K(float* o, const float* a, Py_ssize_t n) \
{ NAME##_avx512(o, a, n, K); }                                                \
PTC_LANE_TGT256 static void NAME##_avx2_##K(float* o, const float* a, Py_ssize_t n) \
{ NAME##_avx2(o, a, n, K); }
/* NAME's copy for this CPU and the literal argument arg (a PTC_LANE_SPECIAL),
 * and return from the caller, where it has one */
#define PTC_LANE_DISPATCH(NAME, o, a, n, arg)                                  \
    do { int l_ = ptc_fma_level();                                            \
         if (l_ == 2) { NAME##_avx512_##arg(o, a, n); return; }               \
         if (l_ == 1) { NAME##_avx2_##arg(o, a, n); return; } } while (0)
/* FN_fma: the scalar FN(x, k) compiled with FMA (fmaf one instruction, not a
 * libm call; exact either way, so the same bits); PTC_LANE_ONE picks it
 * where the CPU has FMA */
#define PTC_LANE_SCALAR_FMA(FN)                                                \
__attribute__((target("fma"))) static float FN##_fma(float x, int k) { return FN(x, k); }
#define PTC_LANE_ONE(FN, x, k) (ptc_fma_level() ? FN##_fma((x), (k)) : FN((x), (k)))
/* The double-lane maps of ptc_dexp_vec.h and ptc_dlog_vec.h, o[i] = FN(a[i],
 * k) with a scalar copy FN(x, k) and a 4-lane AVX2+FMA step STEP4(v, k) of
 * the same operations: FN_fma, the scalar copy compiled with FMA and, as the
 * map, without contracting products and sums the copies keep apart (before
 * the step, whose out-of-range vectors it computes); NAME_avx2, the map (the tail
 * through one vector padded with PAD); ptc_<NAME>_dv_f64, the map this CPU
 * runs, and ptc_<NAME>_d, one value (the strided loops, the expressions) */
#define PTC_DLANE_SCALAR_FMA(FN)                                               \
__attribute__((target("fma"), optimize("fp-contract=off")))                  \
static double FN##_fma(double x, int k) { return FN(x, k); }
/* in a four-lane step: where a lane of X is outside the vector range (INR
 * its lanes' mask), the four values by the scalar copy FN##_fma instead */
#define PTC_DLANE_SPECIALS(X, INR, FN, WHICH)                                  \
    if (_mm256_movemask_pd(INR) != 0xf) {                                     \
        double xs_[4], ys_[4];                                                \
        _mm256_storeu_pd(xs_, X);                                             \
        for (int l_ = 0; l_ < 4; l_++) ys_[l_] = FN##_fma(xs_[l_], WHICH);    \
        return _mm256_loadu_pd(ys_);                                          \
    }
#define PTC_DLANE_MAP(NAME, STEP4, PAD)                                        \
__attribute__((target("avx2,fma"), optimize("fp-contract=off")))             \
static void NAME##_avx2(double* o, const double* a, Py_ssize_t n, int k)     \
{                                                                             \
    Py_ssize_t i = 0;                                                         \
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(o + i, STEP4(_mm256_loadu_pd(a + i), k)); \
    if (i < n) {                                                              \
        double buf_[4] = {PAD, PAD, PAD, PAD};                                \
        for (Py_ssize_t j = 0; j < n - i; j++) buf_[j] = a[i + j];            \
        _mm256_storeu_pd(buf_, STEP4(_mm256_loadu_pd(buf_), k));              \
        for (Py_ssize_t j = 0; j < n - i; j++) o[i + j] = buf_[j];            \
    }                                                                         \
}
#define PTC_DLANE_ENTRY(NAME, MAP, FN, WHICH)                                  \
static void ptc_##NAME##_dv_f64(double* o, const double* a, Py_ssize_t n)     \
{                                                                             \
    if (ptc_fma_level()) { MAP##_avx2(o, a, n, WHICH); return; }              \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = FN(a[i], WHICH);                \
}                                                                             \
static inline double ptc_##NAME##_d(double x)                                 \
{ return ptc_fma_level() ? FN##_fma(x, WHICH) : FN(x, WHICH); }
#else
#define PTC_MAP_F32(name, vexpr8, vexpr16, sexpr)                              \
static void name(float *o, const float *a, Py_ssize_t n) { PTC_MAP_BODY(8, ptc_v8sf, vexpr8, sexpr) }
#define PTC_MAP2_F32(name, vexpr8, vexpr16, sexpr)                             \
static void name(float *o, const float *a, const float *b, Py_ssize_t n)     \
{ PTC_MAP2_BODY(8, ptc_v8sf, vexpr8, sexpr) }
#define PTC_MAP_F32_FMA PTC_MAP_F32
#define PTC_MAP2_F32_FMA PTC_MAP2_F32
/* (no streaming copies without the x86 intrinsics: NAME_st is NAME) */
#define PTC_MAP_F32_STREAMED(name, vexpr8, vexpr16, sexpr)                     \
PTC_MAP_F32(name, vexpr8, vexpr16, sexpr)                                     \
static void name##_st(float *o, const float *a, Py_ssize_t n) { name(o, a, n); }
#define PTC_LANE_DISPATCH(NAME, o, a, n, arg) do { } while (0)
#define PTC_LANE_SCALAR_FMA(FN)
#define PTC_LANE_ONE(FN, x, k) FN((x), (k))
#define PTC_DLANE_SCALAR_FMA(FN)
#define PTC_DLANE_MAP(NAME, STEP4, PAD)
#define PTC_DLANE_ENTRY(NAME, MAP, FN, WHICH)                                  \
static void ptc_##NAME##_dv_f64(double* o, const double* a, Py_ssize_t n)     \
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = FN(a[i], WHICH); }                \
static inline double ptc_##NAME##_d(double x) { return FN(x, WHICH); }
#endif
#include <string.h>
PTC_MAP_F32(ptc_exp_f32, ptc_expf8(x), ptc_expf16(x), ptc_expf(x))
PTC_MAP_F32(ptc_tanh_f32, ptc_tanhf8(x), ptc_tanhf16(x), ptc_tanhf(x))
PTC_MAP_F32_FMA(ptc_geluv_f32, ptc_gelu8(x), ptc_gelu16(x), ptc_gelu_f32(x))
/* o = gelu'(a) * b: a the input x, b the incoming gradient */
PTC_MAP2_F32_FMA(ptc_gelu_bwdv_f32, ptc_gelu_bwd8(g, x), ptc_gelu_bwd16(g, x), ptc_gelu_bwd_f32(g, x))
PTC_MAP_F32(ptc_gelu_tanhv_f32,
            x * 0.5f * (1.0f + ptc_tanhf8((x + x * x * x * 0.044715f) * 0.79788456080286535588f)),
            x * 0.5f * (1.0f + ptc_tanhf16((x + x * x * x * 0.044715f) * 0.79788456080286535588f)),
            ptc_gelu_tanh_f32(x))
PTC_MAP_F32(ptc_sigmoid_f32, 1.0f / (1.0f + ptc_expf8(-x)), 1.0f / (1.0f + ptc_expf16(-x)),
            1.0f / (1.0f + ptc_expf(-x)))
/* the one-instruction maps (the baseline build's loops are SSE2), memory-bound:
 * with a streaming copy each */
PTC_MAP_F32_STREAMED(ptc_neg_f32, -x, -x, -x)
PTC_MAP_F32_STREAMED(ptc_abs_f32, (ptc_v8sf)((ptc_v8si)x & 0x7fffffff),
                     (ptc_v16sf)((ptc_v16si)x & 0x7fffffff), fabsf(x))
PTC_MAP_F32_STREAMED(ptc_reciprocal_f32, 1.0f / x, 1.0f / x, 1.0f / x)
PTC_MAP_F32_STREAMED(ptc_square_f32, x * x, x * x, x * x)
/* relu keeps NaN (x < 0 is false for NaN), as torch: clear the lanes where x < 0 */
PTC_MAP_F32_STREAMED(ptc_relu_f32, (ptc_v8sf)((ptc_v8si)x & ~(ptc_v8si)(x < 0.0f)),
                     (ptc_v16sf)((ptc_v16si)x & ~(ptc_v16si)(x < 0.0f)), (x < 0.0f ? 0.0f : x))
#define PTC_HAVE_VEC_F32 1
#else
#define PTC_HAVE_VEC_F32 0
static void ptc_exp_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_expf(a[i]); }
static void ptc_neg_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = -a[i]; }
static void ptc_abs_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = fabsf(a[i]); }
static void ptc_reciprocal_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = 1.0f / a[i]; }
static void ptc_square_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = a[i] * a[i]; }
static void ptc_tanh_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_tanhf(a[i]); }
static void ptc_geluv_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_gelu_f32(a[i]); }
static void ptc_gelu_tanhv_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_gelu_tanh_f32(a[i]); }
static void ptc_gelu_bwdv_f32(float *o, const float *a, const float *b, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_gelu_bwd_f32(b[i], a[i]); }
static void ptc_sigmoid_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = 1.0f / (1.0f + ptc_expf(-a[i])); }
static void ptc_relu_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = a[i] < 0.0f ? 0.0f : a[i]; }
/* (no streaming copies here: NAME_st is NAME) */
#define ptc_neg_f32_st ptc_neg_f32
#define ptc_abs_f32_st ptc_abs_f32
#define ptc_reciprocal_f32_st ptc_reciprocal_f32
#define ptc_square_f32_st ptc_square_f32
#define ptc_relu_f32_st ptc_relu_f32
#endif
#endif
