/* Contiguous elementwise loops written with x86 vector intrinsics: lerp
 * (float32/float64) and float32 add, subtract, multiply, fmod, remainder,
 * floor division, division, maximum and minimum.
 *
 * Each loop has an AVX-512 and an AVX2+FMA copy chosen at run time
 * (ptc_fma_level); the entry points return 0 on other CPUs, where the caller
 * runs its generic loop.  Every copy computes exactly the operations of the
 * generic scalar loop (the same roundings, fused where that loop fuses), so
 * the results do not depend on the CPU.  The operands are contiguous; an
 * input of step 0 is a number (its one element broadcast).  The binary
 * one-instruction ops (add ... minimum) have float64 copies too: the generic
 * loop, compiled for the baseline (SSE2), ran float64 (256, 256) division and
 * maximum in ~2x torch's time, + (256,) in 1.17x (Zen 4, one thread). */
#ifndef PTC_EW_VEC_H
#define PTC_EW_VEC_H
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level */

/* PyTorch's remainder of floats: fmod, moved into the divisor's sign (the
 * floor division's scalar function, ptc_floordivf, is in ptc_math.h) */
static inline float ptc_fremainderf(float x, float y)
{
    float r = fmodf(x, y);
    if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) r += y;
    return r;
}
static inline double ptc_fremainder(double x, double y)
{
    double r = fmod(x, y);
    if (r != 0.0 && ((r < 0.0) != (y < 0.0))) r += y;
    return r;
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>

/* the vector operations of one register kind, named PREFIX_OP so that a
 * kernel is written once over the prefix: V16 (AVX-512 float32), V8 (AVX2
 * float32), D8 (AVX-512 float64), D4 (AVX2 float64).  M is a lane mask
 * (AVX-512: a mask register; AVX2: a vector of all-ones lanes), BITS its
 * lanes as an int (bit j = lane j). */
#define V16_T __m512
#define V16_M __mmask16
#define V16_LD(p) _mm512_loadu_ps(p)
#define V16_ST(p, v) _mm512_storeu_ps(p, v)
#define V16_STREAM(p, v) _mm512_stream_ps(p, v)       /* p 64-byte aligned */
#define V16_SET(x) _mm512_set1_ps(x)
#define V16_ADD(a, b) _mm512_add_ps(a, b)
#define V16_SUB(a, b) _mm512_sub_ps(a, b)
#define V16_MUL(a, b) _mm512_mul_ps(a, b)
#define V16_DIV(a, b) _mm512_div_ps(a, b)
#define V16_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V16_FNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define V16_ABS(a) _mm512_abs_ps(a)
#define V16_TRUNC(a) _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define V16_FLOOR(a) _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define V16_SIGN(a) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), \
                                                         _mm512_set1_epi32(INT32_MIN)))
#define V16_OR(a, b) _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), \
                                                         _mm512_castps_si512(b)))
#define V16_LT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define V16_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define V16_EQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define V16_NE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ)
#define V16_NLT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ)
#define V16_MAND(m, k) ((__mmask16)((m) & (k)))
#define V16_MOR(m, k) ((__mmask16)((m) | (k)))
#define V16_MXOR(m, k) ((__mmask16)((m) ^ (k)))
#define V16_SEL(m, a, b) _mm512_mask_blend_ps(m, b, a)        /* m ? a : b */
#define V16_BITS(m) ((int)(m))
#define V16_MASKED(m, v) _mm512_maskz_mov_ps(m, v)

#define V8_T __m256
#define V8_M __m256
#define V8_LD(p) _mm256_loadu_ps(p)
#define V8_ST(p, v) _mm256_storeu_ps(p, v)
#define V8_STREAM(p, v) _mm256_stream_ps(p, v)         /* p 32-byte aligned */
#define V8_SET(x) _mm256_set1_ps(x)
#define V8_ADD(a, b) _mm256_add_ps(a, b)
#define V8_SUB(a, b) _mm256_sub_ps(a, b)
#define V8_MUL(a, b) _mm256_mul_ps(a, b)
#define V8_DIV(a, b) _mm256_div_ps(a, b)
#define V8_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V8_FNMA(a, b, c) _mm256_fnmadd_ps(a, b, c)
#define V8_ABS(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a)
#define V8_TRUNC(a) _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define V8_FLOOR(a) _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define V8_SIGN(a) _mm256_and_ps(a, _mm256_set1_ps(-0.0f))
#define V8_OR(a, b) _mm256_or_ps(a, b)
#define V8_LT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define V8_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define V8_EQ(a, b) _mm256_cmp_ps(a, b, _CMP_EQ_OQ)
#define V8_NE(a, b) _mm256_cmp_ps(a, b, _CMP_NEQ_UQ)
#define V8_NLT(a, b) _mm256_cmp_ps(a, b, _CMP_NLT_UQ)
#define V8_MAND(m, k) _mm256_and_ps(m, k)
#define V8_MOR(m, k) _mm256_or_ps(m, k)
#define V8_MXOR(m, k) _mm256_xor_ps(m, k)
#define V8_SEL(m, a, b) _mm256_blendv_ps(b, a, m)
#define V8_BITS(m) _mm256_movemask_ps(m)
#define V8_MASKED(m, v) _mm256_and_ps(m, v)

#define D8_T __m512d
#define D8_M __mmask8
#define D8_LD(p) _mm512_loadu_pd(p)
#define D8_ST(p, v) _mm512_storeu_pd(p, v)
#define D8_SET(x) _mm512_set1_pd(x)
#define D8_STREAM(p, v) _mm512_stream_pd(p, v)       /* p 64-byte aligned */
#define D8_ADD(a, b) _mm512_add_pd(a, b)
#define D8_SUB(a, b) _mm512_sub_pd(a, b)
#define D8_DIV(a, b) _mm512_div_pd(a, b)
#define D8_GT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define D8_NE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_NEQ_UQ)
#define D8_MOR(m, k) ((__mmask8)((m) | (k)))
#define D8_NEG(a) _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), \
                                                       _mm512_set1_epi64(INT64_MIN)))
#define D8_MASKED(m, v) _mm512_maskz_mov_pd(m, v)            /* m ? v : +0 */
#define D8_MUL(a, b) _mm512_mul_pd(a, b)
#define D8_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define D8_ABS(a) _mm512_abs_pd(a)
#define D8_TRUNC(a) _mm512_roundscale_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define D8_LT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ)
#define D8_SEL(m, a, b) _mm512_mask_blend_pd(m, b, a)

#define D4_T __m256d
#define D4_M __m256d
#define D4_LD(p) _mm256_loadu_pd(p)
#define D4_ST(p, v) _mm256_storeu_pd(p, v)
#define D4_SET(x) _mm256_set1_pd(x)
#define D4_STREAM(p, v) _mm256_stream_pd(p, v)         /* p 32-byte aligned */
#define D4_ADD(a, b) _mm256_add_pd(a, b)
#define D4_SUB(a, b) _mm256_sub_pd(a, b)
#define D4_DIV(a, b) _mm256_div_pd(a, b)
#define D4_GT(a, b) _mm256_cmp_pd(a, b, _CMP_GT_OQ)
#define D4_NE(a, b) _mm256_cmp_pd(a, b, _CMP_NEQ_UQ)
#define D4_MOR(m, k) _mm256_or_pd(m, k)
#define D4_NEG(a) _mm256_xor_pd(a, _mm256_set1_pd(-0.0))
#define D4_MASKED(m, v) _mm256_and_pd(m, v)
#define D4_MUL(a, b) _mm256_mul_pd(a, b)
#define D4_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define D4_ABS(a) _mm256_andnot_pd(_mm256_set1_pd(-0.0), a)
#define D4_TRUNC(a) _mm256_round_pd(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define D4_LT(a, b) _mm256_cmp_pd(a, b, _CMP_LT_OQ)
#define D4_SEL(m, a, b) _mm256_blendv_pd(b, a, m)

#define PTC_T512 __attribute__((target("avx512f,avx512vl,fma")))
#define PTC_T256 __attribute__((target("avx2,fma")))

/* ------------------------------------------------------------------------
 * lerp, as PyTorch's lerp_vec: |w| < 0.5 ? fma(w, y - x, x)
 * : fma(w - 1, y - x, y) (NaN weights take the second form)
 * ------------------------------------------------------------------------ */
#define PTC_LERP_VEC(NAME, T, P, W, TGT, FMA1)                                  \
TGT static void NAME(T* o, const T* x, const T* y, const T* w, int wstep,       \
                     Py_ssize_t n)                                              \
{                                                                               \
    Py_ssize_t i = 0;                                                           \
    if (!wstep) {                                                               \
        const T w0 = w[0];                                                      \
        const int small = (w0 < 0 ? -w0 : w0) < (T)0.5;                         \
        const T c = small ? w0 : w0 - (T)1;                                     \
        const P##_T cv = P##_SET(c);                                            \
        if (small) {                                                            \
            for (; i + W <= n; i += W) {                                        \
                P##_T xv = P##_LD(x + i);                                       \
                P##_ST(o + i, P##_FMA(cv, P##_SUB(P##_LD(y + i), xv), xv));     \
            }                                                                   \
        } else {                                                                \
            for (; i + W <= n; i += W) {                                        \
                P##_T yv = P##_LD(y + i);                                       \
                P##_ST(o + i, P##_FMA(cv, P##_SUB(yv, P##_LD(x + i)), yv));     \
            }                                                                   \
        }                                                                       \
        for (; i < n; i++) o[i] = FMA1(c, y[i] - x[i], small ? x[i] : y[i]);    \
        return;                                                                 \
    }                                                                           \
    const P##_T half = P##_SET((T)0.5), one = P##_SET((T)1);                    \
    for (; i + W <= n; i += W) {                                                \
        P##_T xv = P##_LD(x + i), yv = P##_LD(y + i), wv = P##_LD(w + i);       \
        P##_M m = P##_LT(P##_ABS(wv), half);                                    \
        P##_ST(o + i, P##_FMA(P##_SEL(m, wv, P##_SUB(wv, one)), P##_SUB(yv, xv),  \
                              P##_SEL(m, xv, yv)));                             \
    }                                                                           \
    for (; i < n; i++) {                                                        \
        T wi = w[i];                                                            \
        int s = (wi < 0 ? -wi : wi) < (T)0.5;                                   \
        o[i] = FMA1(s ? wi : wi - (T)1, y[i] - x[i], s ? x[i] : y[i]);          \
    }                                                                           \
}
PTC_LERP_VEC(ptc_lerp_contig_f32_avx512, float, V16, 16, PTC_T512, __builtin_fmaf)
PTC_LERP_VEC(ptc_lerp_contig_f32_avx2, float, V8, 8, PTC_T256, __builtin_fmaf)
PTC_LERP_VEC(ptc_lerp_contig_f64_avx512, double, D8, 8, PTC_T512, __builtin_fma)
PTC_LERP_VEC(ptc_lerp_contig_f64_avx2, double, D4, 4, PTC_T256, __builtin_fma)

/* ------------------------------------------------------------------------
 * addcmul, as PyTorch's compiled loop: fma(value * y, z, x)
 * ------------------------------------------------------------------------ */
#define PTC_ADDCMUL_VEC(NAME, T, P, W, TGT, FMA1)                               \
TGT static void NAME(T* o, const T* x, const T* y, const T* z, T v, Py_ssize_t n) \
{                                                                               \
    const P##_T vv = P##_SET(v);                                                \
    Py_ssize_t i = 0;                                                           \
    for (; i + W <= n; i += W)                                                  \
        P##_ST(o + i, P##_FMA(P##_MUL(vv, P##_LD(y + i)), P##_LD(z + i), P##_LD(x + i))); \
    for (; i < n; i++) o[i] = FMA1(v * y[i], z[i], x[i]);                       \
}
PTC_ADDCMUL_VEC(ptc_addcmul_contig_f32_avx512, float, V16, 16, PTC_T512, __builtin_fmaf)
PTC_ADDCMUL_VEC(ptc_addcmul_contig_f32_avx2, float, V8, 8, PTC_T256, __builtin_fmaf)
PTC_ADDCMUL_VEC(ptc_addcmul_contig_f64_avx512, double, D8, 8, PTC_T512, __builtin_fma)
PTC_ADDCMUL_VEC(ptc_addcmul_contig_f64_avx2, double, D4, 4, PTC_T256, __builtin_fma)

/* ------------------------------------------------------------------------
 * float32 fmod / remainder / floor division.
 *
 * fmod(x, y) exactly, without a loop: where |x| < 2^22 |y| (y finite and
 * nonzero) the truncated float quotient n = trunc(|x| / |y|) is the true
 * one or one more (the quotient is off by less than 1/4); r = |x| - n |y|
 * is then representable (a multiple of |y|'s ulp below |y| in size), so
 * one fused multiply-add gives it exactly, and where it came out negative
 * adding |y| back is exact too; the result takes x's sign.  The lanes
 * outside (x inf or NaN, y 0, inf or NaN, quotients from 2^22) are marked
 * in `bad` and computed by the scalar function.
 * ------------------------------------------------------------------------ */
#define PTC_FMODV(P, xv, yv, mod, bad)                                          \
    P##_T ax_ = P##_ABS(xv), ay_ = P##_ABS(yv);                                 \
    bad = P##_MOR(P##_NLT(ax_, P##_MUL(ay_, P##_SET(4194304.0f))), \
                  P##_NLT(ay_, P##_SET(INFINITY)));                             \
    P##_T r_ = P##_FNMA(P##_TRUNC(P##_DIV(ax_, ay_)), ay_, ax_);                \
    r_ = P##_SEL(P##_LT(r_, P##_SET(0.0f)), P##_ADD(r_, ay_), r_);              \
    P##_T mod = P##_OR(r_, P##_SIGN(xv));

/* the value of each op from fmod's `mod` (the scalar functions' steps) */
#define PTC_FMOD_TAIL(P, xv, yv, mod) mod
#define PTC_REMAINDER_TAIL(P, xv, yv, mod)                                      \
    P##_SEL(P##_MAND(P##_NE(mod, P##_SET(0.0f)),                                \
                     P##_MXOR(P##_LT(yv, P##_SET(0.0f)), P##_LT(mod, P##_SET(0.0f)))), \
            P##_ADD(mod, yv), mod)
#define PTC_FLOORDIV_TAIL(P, xv, yv, mod) ptc_floordiv_tail_##P(xv, yv, mod)

#define PTC_FLOORDIV_TAIL_FN(P, TGT)                                            \
TGT static inline __attribute__((always_inline)) P##_T                          \
ptc_floordiv_tail_##P(P##_T a, P##_T b, P##_T mod)                              \
{                                                                               \
    const P##_T zero = P##_SET(0.0f), one = P##_SET(1.0f);                      \
    P##_T div = P##_DIV(P##_SUB(a, mod), b);                                    \
    P##_M m = P##_MAND(P##_NE(mod, zero),                                       \
                       P##_MXOR(P##_LT(b, zero), P##_LT(mod, zero)));           \
    div = P##_SEL(m, P##_SUB(div, one), div);                                   \
    P##_T fl = P##_FLOOR(div);                                                  \
    fl = P##_SEL(P##_GT(P##_SUB(div, fl), P##_SET(0.5f)), P##_ADD(fl, one), fl); \
    return P##_SEL(P##_EQ(div, zero), P##_SIGN(P##_DIV(a, b)), fl);             \
}
PTC_FLOORDIV_TAIL_FN(V16, PTC_T512)
PTC_FLOORDIV_TAIL_FN(V8, PTC_T256)

/* o[i] = OP(x[i * xs], y[i * ys]) (xs, ys 0 or 1) */
#define PTC_FMOD_FAMILY(NAME, P, W, TGT, TAIL, SCALAR)                          \
TGT static void NAME(float* o, const float* x, int xs, const float* y, int ys,  \
                     Py_ssize_t n, int st)                                      \
{                                                                               \
    (void)st;                   /* compute-bound: plain stores */               \
    const P##_T xb = P##_SET(x[0]), yb = P##_SET(y[0]);                         \
    Py_ssize_t i = 0;                                                           \
    for (; i + W <= n; i += W) {                                                \
        P##_T xv = xs ? P##_LD(x + i) : xb, yv = ys ? P##_LD(y + i) : yb;       \
        P##_M bad;                                                              \
        PTC_FMODV(P, xv, yv, mod, bad)                                          \
        P##_ST(o + i, TAIL(P, xv, yv, mod));                                    \
        int b_ = P##_BITS(bad);                                                 \
        if (__builtin_expect(b_ != 0, 0)) {                                     \
            for (int j = 0; j < W; j++)                                         \
                if (b_ & (1 << j)) o[i + j] = SCALAR(x[(i + j) * xs], y[(i + j) * ys]); \
        }                                                                       \
    }                                                                           \
    for (; i < n; i++) o[i] = SCALAR(x[i * xs], y[i * ys]);                     \
}
PTC_FMOD_FAMILY(ptc_fmod_f32_avx512, V16, 16, PTC_T512, PTC_FMOD_TAIL, fmodf)
PTC_FMOD_FAMILY(ptc_fmod_f32_avx2, V8, 8, PTC_T256, PTC_FMOD_TAIL, fmodf)
PTC_FMOD_FAMILY(ptc_remainder_f32_avx512, V16, 16, PTC_T512, PTC_REMAINDER_TAIL, ptc_fremainderf)
PTC_FMOD_FAMILY(ptc_remainder_f32_avx2, V8, 8, PTC_T256, PTC_REMAINDER_TAIL, ptc_fremainderf)
PTC_FMOD_FAMILY(ptc_floordiv_f32_avx512, V16, 16, PTC_T512, PTC_FLOORDIV_TAIL, ptc_floordivf)
PTC_FMOD_FAMILY(ptc_floordiv_f32_avx2, V8, 8, PTC_T256, PTC_FLOORDIV_TAIL, ptc_floordivf)

/* o[i] = x[i * xs] OP y[i * ys] for the one-instruction float32 ops (the
 * baseline build's loops are SSE2: division and maximum ran ~1.7x torch's;
 * add over 1e6 floats, whose 12 MB stay in a 32 MB L3, 1.4x torch's).  With
 * st set (an output of at least ptc_stream_min_bytes, see ptc_stream.h) the
 * stores are non-temporal; the caller fences after them. */
#define PTC_ADDV(P, a, b) P##_ADD(a, b)
#define PTC_SUBV(P, a, b) P##_SUB(a, b)
#define PTC_MULV(P, a, b) P##_MUL(a, b)
#define PTC_DIVV(P, a, b) P##_DIV(a, b)
/* maximum: a if a > b or a is NaN, else b (so b for equal zeros of either
 * sign, as torch's vectorised loops; its scalar tails return a there) */
#define PTC_MAXV(P, a, b) P##_SEL(P##_MOR(P##_GT(a, b), P##_NE(a, a)), a, b)
#define PTC_MINV(P, a, b) P##_SEL(P##_MOR(P##_LT(a, b), P##_NE(a, a)), a, b)
#define PTC_ADDS(a, b) ((a) + (b))
#define PTC_SUBS(a, b) ((a) - (b))
#define PTC_MULS(a, b) ((a) * (b))
#define PTC_DIVS(a, b) ((a) / (b))
/* division rounded toward zero (div(..., rounding_mode='trunc'): the
 * generic loop called truncf, a libm call per value, 10x torch's time) */
#define PTC_TDIVV(P, a, b) P##_TRUNC(P##_DIV(a, b))
#define PTC_TDIVS(a, b) ptc_ew_trunc((a) / (b))
#define ptc_ew_trunc(v) _Generic((v), float: truncf, default: trunc)(v)
#define PTC_MAXS(a, b) (((a) > (b)) | ((a) != (a)) ? (a) : (b))
#define PTC_MINS(a, b) (((a) < (b)) | ((a) != (a)) ? (a) : (b))
#define PTC_SIMPLE2(NAME, T, P, W, TGT, VOP, SOP)                               \
TGT static void NAME(T* o, const T* x, int xs, const T* y, int ys,              \
                     Py_ssize_t n, int st)                                      \
{                                                                               \
    const P##_T xb = P##_SET(x[0]), yb = P##_SET(y[0]);                         \
    Py_ssize_t i = 0;                                                           \
    if (st) {                   /* streaming: scalar head to the alignment */   \
        for (; i < n && ((uintptr_t)(o + i) & (W * sizeof(T) - 1)); i++)       \
            o[i] = SOP(x[i * xs], y[i * ys]);                                   \
        for (; i + W <= n; i += W) {                                            \
            const P##_T xv = xs ? P##_LD(x + i) : xb, yv = ys ? P##_LD(y + i) : yb; \
            P##_STREAM(o + i, VOP(P, xv, yv));                                  \
        }                                                                       \
    }                                                                           \
    for (; i + W <= n; i += W) {                                                \
        const P##_T xv = xs ? P##_LD(x + i) : xb, yv = ys ? P##_LD(y + i) : yb; \
        P##_ST(o + i, VOP(P, xv, yv));                                          \
    }                                                                           \
    for (; i < n; i++) o[i] = SOP(x[i * xs], y[i * ys]);                        \
}
PTC_SIMPLE2(ptc_add_f32_avx512, float, V16, 16, PTC_T512, PTC_ADDV, PTC_ADDS)
PTC_SIMPLE2(ptc_add_f32_avx2, float, V8, 8, PTC_T256, PTC_ADDV, PTC_ADDS)
PTC_SIMPLE2(ptc_add_f64_avx512, double, D8, 8, PTC_T512, PTC_ADDV, PTC_ADDS)
PTC_SIMPLE2(ptc_add_f64_avx2, double, D4, 4, PTC_T256, PTC_ADDV, PTC_ADDS)
PTC_SIMPLE2(ptc_sub_f32_avx512, float, V16, 16, PTC_T512, PTC_SUBV, PTC_SUBS)
PTC_SIMPLE2(ptc_sub_f32_avx2, float, V8, 8, PTC_T256, PTC_SUBV, PTC_SUBS)
PTC_SIMPLE2(ptc_sub_f64_avx512, double, D8, 8, PTC_T512, PTC_SUBV, PTC_SUBS)
PTC_SIMPLE2(ptc_sub_f64_avx2, double, D4, 4, PTC_T256, PTC_SUBV, PTC_SUBS)
PTC_SIMPLE2(ptc_mul_f32_avx512, float, V16, 16, PTC_T512, PTC_MULV, PTC_MULS)
PTC_SIMPLE2(ptc_mul_f32_avx2, float, V8, 8, PTC_T256, PTC_MULV, PTC_MULS)
PTC_SIMPLE2(ptc_mul_f64_avx512, double, D8, 8, PTC_T512, PTC_MULV, PTC_MULS)
PTC_SIMPLE2(ptc_mul_f64_avx2, double, D4, 4, PTC_T256, PTC_MULV, PTC_MULS)
PTC_SIMPLE2(ptc_div_f32_avx512, float, V16, 16, PTC_T512, PTC_DIVV, PTC_DIVS)
PTC_SIMPLE2(ptc_div_f32_avx2, float, V8, 8, PTC_T256, PTC_DIVV, PTC_DIVS)
PTC_SIMPLE2(ptc_div_f64_avx512, double, D8, 8, PTC_T512, PTC_DIVV, PTC_DIVS)
PTC_SIMPLE2(ptc_div_f64_avx2, double, D4, 4, PTC_T256, PTC_DIVV, PTC_DIVS)
PTC_SIMPLE2(ptc_tdiv_f32_avx512, float, V16, 16, PTC_T512, PTC_TDIVV, PTC_TDIVS)
PTC_SIMPLE2(ptc_tdiv_f32_avx2, float, V8, 8, PTC_T256, PTC_TDIVV, PTC_TDIVS)
PTC_SIMPLE2(ptc_tdiv_f64_avx512, double, D8, 8, PTC_T512, PTC_TDIVV, PTC_TDIVS)
PTC_SIMPLE2(ptc_tdiv_f64_avx2, double, D4, 4, PTC_T256, PTC_TDIVV, PTC_TDIVS)
PTC_SIMPLE2(ptc_maximum_f32_avx512, float, V16, 16, PTC_T512, PTC_MAXV, PTC_MAXS)
PTC_SIMPLE2(ptc_maximum_f32_avx2, float, V8, 8, PTC_T256, PTC_MAXV, PTC_MAXS)
PTC_SIMPLE2(ptc_maximum_f64_avx512, double, D8, 8, PTC_T512, PTC_MAXV, PTC_MAXS)
PTC_SIMPLE2(ptc_maximum_f64_avx2, double, D4, 4, PTC_T256, PTC_MAXV, PTC_MAXS)
PTC_SIMPLE2(ptc_minimum_f32_avx512, float, V16, 16, PTC_T512, PTC_MINV, PTC_MINS)
PTC_SIMPLE2(ptc_minimum_f32_avx2, float, V8, 8, PTC_T256, PTC_MINV, PTC_MINS)
PTC_SIMPLE2(ptc_minimum_f64_avx512, double, D8, 8, PTC_T512, PTC_MINV, PTC_MINS)
PTC_SIMPLE2(ptc_minimum_f64_avx2, double, D4, 4, PTC_T256, PTC_MINV, PTC_MINS)

/* o[i] = OP(a[i]), contiguous, for the one-instruction unary maps of float64
 * (float32's are in ptc_math.h) and sign/cube of both types: the generic
 * loops, compiled for the baseline (SSE2), ran float64 (256, 256) square
 * 1.9-2.3x, reciprocal 1.8-2.0x, sign 3.5-4.4x torch's time.  st: non-temporal stores (a scalar
 * head to the alignment; the caller fences).  The scalar expressions are the
 * generic loops' (the same bits). */
#define PTC_UNARY_MAP(NAME, T, P, W, TGT, VOP, SOP)                             \
TGT static void NAME(T* o, const T* a, Py_ssize_t n, int st)                    \
{                                                                               \
    Py_ssize_t i = 0;                                                           \
    if (st) {                                                                   \
        for (; i < n && ((uintptr_t)(o + i) & (W * sizeof(T) - 1)); i++)        \
            o[i] = SOP(a[i]);                                                   \
        for (; i + W <= n; i += W) P##_STREAM(o + i, VOP(P, P##_LD(a + i)));    \
    }                                                                           \
    for (; i + W <= n; i += W) P##_ST(o + i, VOP(P, P##_LD(a + i)));            \
    for (; i < n; i++) o[i] = SOP(a[i]);                                        \
}
#define PTC_NEGV(P, a) P##_NEG(a)
#define PTC_ABSV(P, a) P##_ABS(a)
#define PTC_SQUAREV(P, a) P##_MUL(a, a)
#define PTC_CUBEV(P, a) P##_MUL(P##_MUL(a, a), a)
#define PTC_RECIPV(P, a) P##_DIV(P##_SET(1), a)
#define PTC_RELUV(P, a) P##_SEL(P##_LT(a, P##_SET(0)), P##_SET(0), a)
/* (x > 0) - (x < 0): +1, -1, +0 for zeros and NaN */
#define PTC_SIGNV(P, a) P##_ADD(P##_MASKED(P##_GT(a, P##_SET(0)), P##_SET(1)),     \
                                P##_MASKED(P##_LT(a, P##_SET(0)), P##_SET(-1)))
#define PTC_NEGS(x) (-(x))
#define PTC_ABSS(x) fabs(x)
#define PTC_SQUARES(x) ((x) * (x))
#define PTC_CUBES(x) ((x) * (x) * (x))
#define PTC_RECIPS(x) (1 / (x))
#define PTC_RELUS(x) ((x) < 0 ? 0 : (x))
#define PTC_SIGNS(x) ((double)(((x) > 0) - ((x) < 0)))
#define PTC_SIGNSF(x) ((float)(((x) > 0) - ((x) < 0)))
#define PTC_UNARY_D(OP, VOP, SOP)                                               \
PTC_UNARY_MAP(ptc_##OP##_f64_avx512, double, D8, 8, PTC_T512, VOP, SOP)          \
PTC_UNARY_MAP(ptc_##OP##_f64_avx2, double, D4, 4, PTC_T256, VOP, SOP)
PTC_UNARY_D(neg, PTC_NEGV, PTC_NEGS)
PTC_UNARY_D(abs, PTC_ABSV, PTC_ABSS)
PTC_UNARY_D(square, PTC_SQUAREV, PTC_SQUARES)
PTC_UNARY_D(cube, PTC_CUBEV, PTC_CUBES)
PTC_UNARY_D(reciprocal, PTC_RECIPV, PTC_RECIPS)
PTC_UNARY_D(relu, PTC_RELUV, PTC_RELUS)
PTC_UNARY_D(sign, PTC_SIGNV, PTC_SIGNS)
PTC_UNARY_MAP(ptc_sign_f32_avx512, float, V16, 16, PTC_T512, PTC_SIGNV, PTC_SIGNSF)
PTC_UNARY_MAP(ptc_sign_f32_avx2, float, V8, 8, PTC_T256, PTC_SIGNV, PTC_SIGNSF)
PTC_UNARY_MAP(ptc_cube_f32_avx512, float, V16, 16, PTC_T512, PTC_CUBEV, PTC_CUBES)
PTC_UNARY_MAP(ptc_cube_f32_avx2, float, V8, 8, PTC_T256, PTC_CUBEV, PTC_CUBES)

/* nan_to_num: NaN -> nanv, +inf -> posv, -inf -> negv (the generic loop's
 * nested selects stayed scalar: 5x torch's time); the loop is vectorised as
 * written (-fno-trapping-math) in the AVX-512 and AVX2 copies */
#define PTC_NAN_TO_NUM_BODY(T)                                                   \
    { for (Py_ssize_t i = 0; i < n; i++) { const T x = a[i];                     \
          o[i] = x != x ? nanv : (x == (T)INFINITY ? posv : (x == -(T)INFINITY ? negv : x)); } }
PTC_T512 static void ptc_nan_to_num_f32_avx512(float* o, const float* a, Py_ssize_t n, float nanv,
                                               float posv, float negv) PTC_NAN_TO_NUM_BODY(float)
PTC_T256 static void ptc_nan_to_num_f32_avx2(float* o, const float* a, Py_ssize_t n, float nanv,
                                             float posv, float negv) PTC_NAN_TO_NUM_BODY(float)
PTC_T512 static void ptc_nan_to_num_f64_avx512(double* o, const double* a, Py_ssize_t n, double nanv,
                                               double posv, double negv) PTC_NAN_TO_NUM_BODY(double)
PTC_T256 static void ptc_nan_to_num_f64_avx2(double* o, const double* a, Py_ssize_t n, double nanv,
                                             double posv, double negv) PTC_NAN_TO_NUM_BODY(double)

#define PTC_EW_VEC_ENTRY(NAME, PARAMS, ARGS)                                    \
static int NAME PARAMS                                                          \
{                                                                               \
    int l_ = ptc_fma_level();                                                   \
    if (l_ == 2) NAME##_avx512 ARGS; else if (l_ == 1) NAME##_avx2 ARGS;        \
    return l_ != 0;                                                             \
}
#else
#define PTC_EW_VEC_ENTRY(NAME, PARAMS, ARGS) static int NAME PARAMS { return 0; }
#endif

/* the entry points: 1 when the loop ran, 0 where the CPU has no vector copy */
PTC_EW_VEC_ENTRY(ptc_lerp_contig_f32, (float* o, const float* x, const float* y, const float* w,
                                int wstep, Py_ssize_t n), (o, x, y, w, wstep, n))
PTC_EW_VEC_ENTRY(ptc_lerp_contig_f64, (double* o, const double* x, const double* y, const double* w,
                                int wstep, Py_ssize_t n), (o, x, y, w, wstep, n))
PTC_EW_VEC_ENTRY(ptc_addcmul_contig_f32, (float* o, const float* x, const float* y, const float* z,
                                       float v, Py_ssize_t n), (o, x, y, z, v, n))
PTC_EW_VEC_ENTRY(ptc_addcmul_contig_f64, (double* o, const double* x, const double* y,
                                       const double* z, double v, Py_ssize_t n), (o, x, y, z, v, n))
PTC_EW_VEC_ENTRY(ptc_fmod_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_remainder_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                     Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_floordiv_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                    Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_nan_to_num_f32, (float* o, const float* a, Py_ssize_t n, float nanv,
                                      float posv, float negv), (o, a, n, nanv, posv, negv))
PTC_EW_VEC_ENTRY(ptc_nan_to_num_f64, (double* o, const double* a, Py_ssize_t n, double nanv,
                                      double posv, double negv), (o, a, n, nanv, posv, negv))
PTC_EW_VEC_ENTRY(ptc_tdiv_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_tdiv_f64, (double* o, const double* x, int xs, const double* y, int ys,
                                Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_add_f32, (float* o, const float* x, int xs, const float* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_sub_f32, (float* o, const float* x, int xs, const float* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_mul_f32, (float* o, const float* x, int xs, const float* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_div_f32, (float* o, const float* x, int xs, const float* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_maximum_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                   Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_minimum_f32, (float* o, const float* x, int xs, const float* y, int ys,
                                   Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_add_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_sub_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_mul_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_div_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_maximum_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_minimum_f64, (double* o, const double* x, int xs, const double* y, int ys,
                               Py_ssize_t n, int st), (o, x, xs, y, ys, n, st))
PTC_EW_VEC_ENTRY(ptc_neg_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_abs_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_square_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_cube_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_reciprocal_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_relu_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_sign_f64, (double* o, const double* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_sign_f32, (float* o, const float* a, Py_ssize_t n, int st), (o, a, n, st))
PTC_EW_VEC_ENTRY(ptc_cube_f32, (float* o, const float* a, Py_ssize_t n, int st), (o, a, n, st))
#endif
