/* One-pass float32 loops of nn activations and their gradients (hardswish, silu's gradient),
 * on ptc_math.h's vector maps: an AVX-512 copy, an AVX2 copy and the
 * baseline, chosen by ptc_vec_level(). Each copy does torch's operations in
 * torch's order (no FMA, no reassociation), so every copy gives the same
 * bits, and the same bits as ATen's vectorised kernels. */
#ifndef PTC_ACT_VEC_H
#define PTC_ACT_VEC_H
#include "ptc_math.h"

/* hardswish: x * min(max(x + 3, 0), 6) / 6; t < 0 and t > 6 are false for NaN,
 * which stays NaN */
static inline float ptc_hardswish_fwd_s(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    t = t > 6.0f ? 6.0f : t;
    return x * t / 6.0f;
}
/* hardswish_backward as ATen's scalar kernel: 0 where x <= -3, g * (x / 3 +
 * 0.5) where x < 3, else g -- so g where x is NaN (ATen's vector loop, which
 * tests x >= 3 instead, gives NaN there: torch's value for a NaN depends on its
 * position; here it does not, and is what ptcore's composite gave) */
static inline float ptc_hardswish_bwd_s(float g, float x)
{
    float mid = g * (x / 3.0f + 0.5f);
    mid = x < 3.0f ? mid : g;
    return x <= -3.0f ? 0.0f : mid;
}

static inline float ptc_silu_bwd_s(float g, float x)
{
    float s = 1.0f / (1.0f + ptc_expf(-x));
    return g * s * (1.0f + x * (1.0f - s));
}

/* sigmoid_backward as ATen's float kernel: (g * (1 - y)) * y, y the result */
static inline float ptc_sigmoid_bwd_s(float g, float x)
{
    return g * (1.0f - x) * x;
}

#if PTC_HAVE_VEC_F32
/* the vector forms on VF (integer lanes VI, select SEL(mask, a, b): a where set) */
#define PTC_HARDSWISH_FWD_V(VF, VI, SEL, x) ({                                 \
    const VF z_ = {0};                                                        \
    VF t_ = (x) + 3.0f;                                                       \
    t_ = SEL((VI)(t_ < 0.0f), z_, t_);                                        \
    t_ = SEL((VI)(t_ > 6.0f), z_ + 6.0f, t_);                                 \
    (x) * t_ / 6.0f; })
#define PTC_HARDSWISH_BWD_V(VF, VI, SEL, g, x) ({                              \
    const VF z_ = {0};                                                        \
    VF m_ = (g) * ((x) / 3.0f + 0.5f);                                        \
    m_ = SEL((VI)((x) < 3.0f), m_, (g));                                     \
    SEL((VI)((x) <= -3.0f), z_, m_); })

PTC_MAP_F32(ptc_hardswish_fwdv_f32,
            PTC_HARDSWISH_FWD_V(ptc_v8sf, ptc_v8si, ptc_sel8, x),
            PTC_HARDSWISH_FWD_V(ptc_v16sf, ptc_v16si, ptc_sel16, x),
            ptc_hardswish_fwd_s(x))
/* o = hardswish'(a) * b: a the input x, b the incoming gradient */
PTC_MAP2_F32(ptc_hardswish_bwdv_f32,
             PTC_HARDSWISH_BWD_V(ptc_v8sf, ptc_v8si, ptc_sel8, g, x),
             PTC_HARDSWISH_BWD_V(ptc_v16sf, ptc_v16si, ptc_sel16, g, x),
             ptc_hardswish_bwd_s(g, x))
/* silu_backward: g * s * (1 + x * (1 - s)), s = 1 / (1 + exp(-x)) with
 * ptc_exp_f32's exp (so the values of the former exp pass and product loop) */
PTC_MAP2_F32(ptc_silu_bwdv_f32,
             ({ ptc_v8sf s_ = 1.0f / (1.0f + ptc_expf8(-x)); g * s_ * (1.0f + x * (1.0f - s_)); }),
             ({ ptc_v16sf s_ = 1.0f / (1.0f + ptc_expf16(-x)); g * s_ * (1.0f + x * (1.0f - s_)); }),
             ptc_silu_bwd_s(g, x))
/* o = (b * (1 - a)) * a: a the sigmoid's result, b the incoming gradient */
PTC_MAP2_F32(ptc_sigmoid_bwdv_f32, g * (1.0f - x) * x, g * (1.0f - x) * x,
             ptc_sigmoid_bwd_s(g, x))
#else
static void ptc_sigmoid_bwdv_f32(float *o, const float *a, const float *b, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_sigmoid_bwd_s(b[i], a[i]); }
static void ptc_silu_bwdv_f32(float *o, const float *a, const float *b, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_silu_bwd_s(b[i], a[i]); }
static void ptc_hardswish_fwdv_f32(float *o, const float *a, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_hardswish_fwd_s(a[i]); }
static void ptc_hardswish_bwdv_f32(float *o, const float *a, const float *b, Py_ssize_t n)
{ for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_hardswish_bwd_s(b[i], a[i]); }
#endif

/* float64: the same operations, 4 lanes (GCC splits them to the baseline's
 * SSE2 pairs); a scalar tail */
typedef double ptc_act_v4d __attribute__((vector_size(32)));
typedef int64_t ptc_act_v4l __attribute__((vector_size(32)));
#define PTC_ACT_SEL4D(m, a, b) ((ptc_act_v4d)(((ptc_act_v4l)(a) & (m)) | ((ptc_act_v4l)(b) & ~(m))))
static void ptc_hardswish_fwdv_f64(double *o, const double *a, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) {
        ptc_act_v4d x, y, z = {0}, t;
        memcpy(&x, a + i, sizeof x);
        t = x + 3.0;
        t = PTC_ACT_SEL4D((ptc_act_v4l)(t < 0.0), z, t);
        t = PTC_ACT_SEL4D((ptc_act_v4l)(t > 6.0), z + 6.0, t);
        y = x * t / 6.0;
        memcpy(o + i, &y, sizeof y);
    }
    for (; i < n; i++) {
        double x = a[i], t = x + 3.0;
        t = t < 0.0 ? 0.0 : t;
        t = t > 6.0 ? 6.0 : t;
        o[i] = x * t / 6.0;
    }
}
static void ptc_hardswish_bwdv_f64(double *o, const double *a, const double *b, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) {
        ptc_act_v4d x, g, m, z = {0};
        memcpy(&x, a + i, sizeof x);
        memcpy(&g, b + i, sizeof g);
        m = g * (x / 3.0 + 0.5);
        m = PTC_ACT_SEL4D((ptc_act_v4l)(x < 3.0), m, g);
        m = PTC_ACT_SEL4D((ptc_act_v4l)(x <= -3.0), z, m);
        memcpy(o + i, &m, sizeof m);
    }
    for (; i < n; i++) {
        double x = a[i], g = b[i], m = g * (x / 3.0 + 0.5);
        m = x < 3.0 ? m : g;
        o[i] = x <= -3.0 ? 0.0 : m;
    }
}
#endif
