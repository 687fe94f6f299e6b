/* Body of the fused elementwise evaluator (see ptc_fused.h), included once
 * per instruction set with these macros defined:
 *   PF_SFX        suffix of the function names (_avx512, _avx2, _base)
 *   PF_TGT        the target attribute of every function (empty: the baseline)
 *   PF_VW         float32 lanes of the vector kernels
 *   PF_VMIN(c, x) / PF_VMAX(c, x)   lane-wise min / max, x when x is NaN
 *   PF_VFMA(a, b, c)                 lane-wise a * b + c on float32 vectors
 * No include guard: this file is meant to be included several times.
 *
 * An instruction is five int32 (opcode, dst, a, b, c); registers are block
 * buffers of m elements.  Binary ops read a scalar register (is_s[r]) as its
 * value sval[r] instead of a buffer, so a scalar costs no loads.  dst never
 * aliases a source (the planner allocates it so), hence ``restrict``. */

#define PF_CAT2(a, b) a##b
#define PF_CAT(a, b) PF_CAT2(a, b)
#define PF_N(name) PF_CAT(name, PF_SFX)

/* float32 exp, log, sigmoid, tanh and the activations built on them are computed
 * on vectors of PF_VW lanes (PF_VF, with the lane-wise PF_VMIN/PF_VMAX/
 * PF_VFMA given by ptc_fused.h for each instruction set) by the same
 * operations in the same order at every width, so the bits do not depend on
 * the CPU.  The clamps are min/max with the constant first (x86's MINPS
 * returns its second operand when either is NaN), so a NaN goes through them
 * and no NaN select is needed; 2^k is built from the bits of the rounding sum
 * k + 1.5 * 2^23 (whose low mantissa bits hold k): no float -> int
 * conversion. */
typedef float PF_N(pf_vf) __attribute__((vector_size(4 * PF_VW)));
typedef int32_t PF_N(pf_vi) __attribute__((vector_size(4 * PF_VW)));
#define PF_VF PF_N(pf_vf)
#define PF_VI PF_N(pf_vi)
#define PF_VC(c) (((PF_VF){0}) + (float)(c))          /* a constant in every lane */
#define PF_MAGIC 12582912.0f                          /* 1.5 * 2^23: round to nearest */

/* lane-wise fmaf: the baseline copy's PF_VFMA */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vfma_lanes)(PF_VF a, PF_VF b, PF_VF c)
{
    PF_VF r;
    for (int j = 0; j < PF_VW; j++) r[j] = __builtin_fmaf(a[j], b[j], c[j]);
    return r;
}

/* e^r on the reduced range |r| <= ln(2) / 2: 1 + r + r^2 P(r) with Cephes'
 * degree-5 P (<= 1 ulp), evaluated in Estrin's scheme */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vexp_poly)(PF_VF r)
{
    PF_VF r2 = r * r;
    PF_VF a = PF_VFMA(PF_VC(1.6666665459E-1f), r, PF_VC(5.0000001201E-1f));
    PF_VF b = PF_VFMA(PF_VC(8.3334519073E-3f), r, PF_VC(4.1665795894E-2f));
    PF_VF c = PF_VFMA(PF_VC(1.9875691500E-4f), r, PF_VC(1.3981999507E-3f));
    PF_VF p = PF_VFMA(PF_VFMA(c, r2, b), r2, a);
    return PF_VFMA(p, r2, r) + 1.0f;
}

/* exp: Cody-Waite reduction x = k ln 2 + r, 2^k applied in two steps so
 * subnormal results are right.  The clamp to [-104, 89] makes overflow and
 * underflow come out of the arithmetic: at 89, k = 128 and y 2^128 = inf; at
 * -104, y 2^-150 rounds to 0 */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vexp)(PF_VF x)
{
    PF_VF xc = PF_VMAX(PF_VC(-104.0f), PF_VMIN(PF_VC(89.0f), x));
    PF_VF kf = PF_VFMA(xc, PF_VC(1.44269504088896341f), PF_VC(PF_MAGIC));
    PF_VF k = kf - PF_MAGIC;
    PF_VF r = PF_VFMA(k, PF_VC(-0.693359375f), xc);
    r = PF_VFMA(k, PF_VC(2.12194440e-4f), r);
    PF_VF y = PF_N(pf_vexp_poly)(r);
    PF_VI ki = (PF_VI)kf - 0x4B400000;
    PF_VI k1 = ki >> 1;
    PF_VI k2 = ki - k1;
    y = y * (PF_VF)((k1 + 127) << 23);
    return y * (PF_VF)((k2 + 127) << 23);
}

/* sigmoid 1 / (1 + e^t), t = -x clamped to [-88, 89], 2^k scaled in one
 * step: below t = -88 the result is 1 whatever e^t is (k = -127 gives the
 * bits of +0); above t = 88.38 k is 128, whose bits give 2^k = inf and the
 * result 0 (exactly 0 from x = -88.72 down, as the eager kernel; between
 * x = -88.72 and -88.38 the exact value is a subnormal below 5e-39) */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vsigmoid)(PF_VF x)
{
    PF_VF t = PF_VMAX(PF_VC(-88.0f), PF_VMIN(PF_VC(89.0f), -x));
    PF_VF kf = PF_VFMA(t, PF_VC(1.44269504088896341f), PF_VC(PF_MAGIC));
    PF_VF k = kf - PF_MAGIC;
    PF_VF r = PF_VFMA(k, PF_VC(-0.693359375f), t);
    r = PF_VFMA(k, PF_VC(2.12194440e-4f), r);
    PF_VF y = PF_N(pf_vexp_poly)(r);
    /* (bits(kf) - bits(1.5 * 2^23) + 127) << 23, and bits(1.5 * 2^23) << 23 is 0 */
    PF_VF s = (PF_VF)(((PF_VI)kf + 127) << 23);
    return 1.0f / PF_VFMA(y, s, PF_VC(1.0f));
}

/* tanh: |x| R(x^2), R a [12/6] even rational function (Eigen's [13/6]
 * coefficients with the numerator's constant term set to the denominator's,
 * so that R(0) = 1 exactly: tiny and subnormal x come out as x; a few ulp),
 * on |x| clamped to 9 (where it gives 1), capped at 1 (it overshoots by up
 * to 2 ulp near 8.9), the sign of x put back (tanh(-0) = -0).  NaN passes
 * the clamps. */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vtanh)(PF_VF x)
{
    PF_VI sign = (PF_VI)x & (int32_t)0x80000000;
    PF_VF xc = PF_VMIN(PF_VC(9.0f), (PF_VF)((PF_VI)x & 0x7fffffff));
    PF_VF x2 = xc * xc;
    PF_VF x4 = x2 * x2;
    PF_VF p01 = PF_VFMA(x2, PF_VC(6.37261928875436e-04f), PF_VC(4.89352518554385e-03f));
    PF_VF p23 = PF_VFMA(x2, PF_VC(5.12229709037114e-08f), PF_VC(1.48572235717979e-05f));
    PF_VF p45 = PF_VFMA(x2, PF_VC(2.00018790482477e-13f), PF_VC(-8.60467152213735e-11f));
    PF_VF p = PF_VFMA(PF_VFMA(x4, PF_VC(-2.76076847742355e-16f), p45), x4, p23);
    p = PF_VFMA(p, x4, p01);
    PF_VF q01 = PF_VFMA(x2, PF_VC(2.26843463243900e-03f), PF_VC(4.89352518554385e-03f));
    PF_VF q23 = PF_VFMA(x2, PF_VC(1.19825839466702e-06f), PF_VC(1.18534705686654e-04f));
    PF_VF q = PF_VFMA(q23, x4, q01);
    PF_VF y = PF_VMIN(PF_VC(1.0f), xc * (p / q));
    return (PF_VF)((PF_VI)y | sign);
}

/* natural log: Cephes' logf (x = 2^e m, m in [sqrt(1/2), sqrt(2)), degree-8
 * polynomial in m - 1, ln 2 split in two; about 1 ulp).  Subnormal x are
 * scaled by 2^23 first; 0 -> -inf, x < 0 -> NaN, inf -> inf, NaN -> NaN by
 * selects. */
#define PF_VSEL(msk, a, b) ((PF_VF)(((PF_VI)(a) & (msk)) | ((PF_VI)(b) & ~(msk))))
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vlog)(PF_VF x)
{
    PF_VI sub = (PF_VI)(x < 1.17549435e-38f);
    PF_VF xs = PF_VSEL(sub, x * 8388608.0f, x);
    PF_VI bits = (PF_VI)xs;
    PF_VI e = ((bits >> 23) & 0xff) - 126 - (sub & 23);
    PF_VF m = (PF_VF)((bits & 0x007fffff) | 0x3f000000);          /* [0.5, 1) */
    PF_VI small = (PF_VI)(m < 0.707106781186547524f);
    e = e + small;                                                /* e - 1 where small */
    m = (m + (PF_VF)(small & (PF_VI)m)) - 1.0f;                   /* 2m - 1 or m - 1 */
    PF_VF fe = __builtin_convertvector(e, PF_VF);
    PF_VF z = m * m;
    PF_VF c01 = PF_VFMA(PF_VC(-2.4999993993E-1f), m, PF_VC(3.3333331174E-1f));
    PF_VF c23 = PF_VFMA(PF_VC(-1.6668057665E-1f), m, PF_VC(2.0000714765E-1f));
    PF_VF c45 = PF_VFMA(PF_VC(-1.2420140846E-1f), m, PF_VC(1.4249322787E-1f));
    PF_VF c67 = PF_VFMA(PF_VC(-1.1514610310E-1f), m, PF_VC(1.1676998740E-1f));
    PF_VF p = PF_VFMA(PF_VFMA(PF_VC(7.0376836292E-2f), z, c67), z, c45);
    p = PF_VFMA(PF_VFMA(p, z, c23), z, c01);
    PF_VF y = m * z * p;
    y = PF_VFMA(fe, PF_VC(-2.12194440e-4f), y);
    y = PF_VFMA(z, PF_VC(-0.5f), y);
    PF_VF r = PF_VFMA(fe, PF_VC(0.693359375f), m + y);
    r = PF_VSEL((PF_VI)(x == INFINITY), PF_VC(INFINITY), r);
    r = PF_VSEL((PF_VI)(x == 0.0f), PF_VC(-INFINITY), r);
    return PF_VSEL((PF_VI)(x < 0.0f) | (PF_VI)(x != x), PF_VC(NAN), r);
}
#undef PF_VSEL

/* exact GELU as ptc_gelu_f32 / PyTorch's float kernel: erf from Abramowitz &
 * Stegun 7.1.26 (|error| < 1.5e-7) */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vgelu)(PF_VF x)
{
    PF_VF u = x * 0.70710678118654752440f;
    PF_VI sign = (PF_VI)u & (int32_t)0x80000000;
    PF_VF a = (PF_VF)((PF_VI)u & 0x7fffffff);
    PF_VF t = 1.0f / PF_VFMA(a, PF_VC(0.3275911f), PF_VC(1.0f));
    PF_VF r = PF_VFMA(t, PF_VC(1.061405429f), PF_VC(-1.453152027f));
    r = PF_VFMA(r, t, PF_VC(1.421413741f));
    r = PF_VFMA(r, t, PF_VC(-0.284496736f));
    r = PF_VFMA(r, t, PF_VC(0.254829592f));
    PF_VF e = 1.0f - r * t * PF_N(pf_vexp)(-(u * u));
    e = (PF_VF)((PF_VI)e ^ sign);
    return x * 0.5f * (1.0f + e);
}

/* tanh-approximated GELU 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3),
 * as x sigmoid(2 u): no cancellation in 1 + tanh(u) where u is very negative */
PF_TGT static inline __attribute__((always_inline)) PF_VF PF_N(pf_vgelu_tanh)(PF_VF x)
{
    return x * PF_N(pf_vsigmoid)(1.5957691216057307118f * (x + 0.044715f * x * x * x));
}

/* o[i] = F(a[i]) for i < m on whole vectors (the last one padded), so every
 * element goes through the same vector code */
#define PF_VMAP_F32(NAME, F)                                                   \
PF_TGT static void PF_N(NAME)(float *restrict o, const float *restrict a, Py_ssize_t m) \
{                                                                             \
    Py_ssize_t i = 0;                                                         \
    PF_VF x, y;                                                               \
    for (; i + PF_VW <= m; i += PF_VW) {                                      \
        memcpy(&x, a + i, sizeof x);                                          \
        y = F;                                                                \
        memcpy(o + i, &y, sizeof y);                                          \
    }                                                                         \
    if (i < m) {                                                              \
        x = (PF_VF){0};                                                       \
        memcpy(&x, a + i, (size_t)(m - i) * sizeof(float));                  \
        y = F;                                                                \
        memcpy(o + i, &y, (size_t)(m - i) * sizeof(float));                   \
    }                                                                         \
}
PF_VMAP_F32(pf_map_exp, PF_N(pf_vexp)(x))
PF_VMAP_F32(pf_map_log, PF_N(pf_vlog)(x))
PF_VMAP_F32(pf_map_sigmoid, PF_N(pf_vsigmoid)(x))
PF_VMAP_F32(pf_map_silu, x * PF_N(pf_vsigmoid)(x))
PF_VMAP_F32(pf_map_tanh, PF_N(pf_vtanh)(x))
PF_VMAP_F32(pf_map_gelu, PF_N(pf_vgelu)(x))
PF_VMAP_F32(pf_map_gelu_tanh, PF_N(pf_vgelu_tanh)(x))
#undef PF_VMAP_F32
#undef PF_VF
#undef PF_VI
#undef PF_VC
#undef PF_MAGIC

/* float32 */
#define PF_T float
#define PF_VEC_MAPS 1               /* exp, log, tanh, sigmoid, GELU, SiLU: the maps above */
#define PF_SQRT(x) sqrtf(x)
#define PF_FABS(x) fabsf(x)
#define PF_SIN(x) sinf(x)
#define PF_COS(x) cosf(x)
#define PF_ERF(x) erff(x)
#define PF_LOG1P(x) log1pf(x)
#define PF_EXPM1(x) expm1f(x)
#define PF_POW(x, y) powf(x, y)
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
#undef PF_VEC_MAPS

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
