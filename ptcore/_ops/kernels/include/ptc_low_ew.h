/* float16/bfloat16 elementwise loops with the conversions in registers.
 *
 * The elementwise driver runs other float16/bfloat16 ops as the float32 loop
 * on blocks converted through L1 (_ewdrv._low_blocks): three passes over
 * each block.  For the ops a training step under autocast is made of (add,
 * sub, mul, div, add/sub with alpha, maximum, minimum, relu, exact gelu) these loops load
 * sixteen (AVX-512) or eight (AVX2+F16C) elements, widen them, compute in
 * float32 and round back in one pass, as PyTorch's vectorised kernels do:
 * float16/bfloat16 add of (512, 512) took 1.3-1.8x torch's time in blocks.
 *
 * The bits are those of the block path: the same float32 operations (add
 * with alpha a fused multiply-add fma(y, alpha, x), maximum/minimum as the
 * float32 vector loops of ptc_ew_vec.h, relu clearing lanes below zero, gelu
 * ptc_math.h's vector and scalar copies at the same elements) and
 * the same conversions (ptc_half_rows.h); the row tails take the scalar
 * forms.  An operand is a contiguous row (step 1) or one float32 number
 * (step 0).  The entry point returns 0 where the CPU has no vector copy (the
 * caller then runs the block path).  neg and abs are sign-bit operations
 * (ptc_low_sign). */
#ifndef PTC_LOW_EW_H
#define PTC_LOW_EW_H
#include "ptc_half_rows.h"

enum {
    PTC_LOW_ADD = 0, PTC_LOW_SUB, PTC_LOW_MUL, PTC_LOW_DIV, PTC_LOW_AXPY,
    PTC_LOW_MAX, PTC_LOW_MIN, PTC_LOW_RELU, PTC_LOW_GELU
};

/* the scalar forms (row tails) */
#define PTC_LOWS_ADD(a, b, al) ((a) + (b))
#define PTC_LOWS_SUB(a, b, al) ((a) - (b))
#define PTC_LOWS_MUL(a, b, al) ((a) * (b))
#define PTC_LOWS_DIV(a, b, al) ((a) / (b))
#define PTC_LOWS_AXPY(a, b, al) __builtin_fmaf((b), (al), (a))
#define PTC_LOWS_MAX(a, b, al) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define PTC_LOWS_MIN(a, b, al) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))
#define PTC_LOWS_RELU(a, b, al) ((a) < 0.0f ? 0.0f : (a))
#define PTC_LOWS_GELU(a, b, al) ptc_gelu_f32(a)

static inline uint16_t ptc__low_round_bf16(float v)
{
    return v != v ? (uint16_t)0xffffu : ptc_float_to_bf16(v);
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH

#define PTC_LOWV16_ADD(a, b, al) _mm512_add_ps(a, b)
#define PTC_LOWV16_SUB(a, b, al) _mm512_sub_ps(a, b)
#define PTC_LOWV16_MUL(a, b, al) _mm512_mul_ps(a, b)
#define PTC_LOWV16_DIV(a, b, al) _mm512_div_ps(a, b)
#define PTC_LOWV16_AXPY(a, b, al) _mm512_fmadd_ps(b, al, a)
#define PTC_LOWV16_MAX(a, b, al) _mm512_mask_blend_ps(                          \
    (__mmask16)(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_NEQ_UQ)), b, a)
#define PTC_LOWV16_MIN(a, b, al) _mm512_mask_blend_ps(                          \
    (__mmask16)(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ) | _mm512_cmp_ps_mask(a, a, _CMP_NEQ_UQ)), b, a)
#define PTC_LOWV16_RELU(a, b, al) _mm512_mask_blend_ps(                         \
    _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ), a, _mm512_setzero_ps())
/* the exact GELU of the float32 loop (ptc_math.h's vector copies) */
#define PTC_LOWV16_GELU(a, b, al) ((__m512)ptc_gelu16((ptc_v16sf)(a)))

#define PTC_LOWV8_ADD(a, b, al) _mm256_add_ps(a, b)
#define PTC_LOWV8_SUB(a, b, al) _mm256_sub_ps(a, b)
#define PTC_LOWV8_MUL(a, b, al) _mm256_mul_ps(a, b)
#define PTC_LOWV8_DIV(a, b, al) _mm256_div_ps(a, b)
#define PTC_LOWV8_AXPY(a, b, al) _mm256_fmadd_ps(b, al, a)
#define PTC_LOWV8_MAX(a, b, al) _mm256_blendv_ps(b, a, _mm256_or_ps(               \
    _mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_NEQ_UQ)))
#define PTC_LOWV8_MIN(a, b, al) _mm256_blendv_ps(b, a, _mm256_or_ps(               \
    _mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_NEQ_UQ)))
#define PTC_LOWV8_RELU(a, b, al) _mm256_blendv_ps(a, _mm256_setzero_ps(),          \
    _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_LT_OQ))
#define PTC_LOWV8_GELU(a, b, al) ((__m256)ptc_gelu8((ptc_v8sf)(a)))

#define PTC_LOW_TGT512 __attribute__((target("avx512f,avx512vl,avx2,f16c,fma")))
#define PTC_LOW_TGT256 __attribute__((target("avx2,f16c,fma")))

/* o[i] = OP(x[i * xs], y[i * ys]) in float32, rounded to the row type;
 * a step-0 operand is a float32 number */
#define PTC_LOW_LOOP(NAME, TGT, VT, W, SET, LOAD, STORE, TOF, FROMF, VOP, SOP)  \
TGT static void NAME(uint16_t* o, const void* x, int xs, const void* y, int ys, \
                     float al, Py_ssize_t n)                                    \
{                                                                               \
    const uint16_t* xp = (const uint16_t*)x;                                    \
    const uint16_t* yp = (const uint16_t*)y;                                    \
    const float xf = xs ? 0.0f : *(const float*)x;                              \
    const float yf = ys ? 0.0f : *(const float*)y;                              \
    const VT xb = SET(xf), yb = SET(yf), av = SET(al);                          \
    Py_ssize_t i = 0;                                                           \
    (void)av; (void)yb;                                                         \
    if (xs && ys) {                                                             \
        for (; i + W <= n; i += W)                                              \
            STORE(o + i, VOP(LOAD(xp + i), LOAD(yp + i), av));                  \
    } else if (xs) {                                                            \
        for (; i + W <= n; i += W)                                              \
            STORE(o + i, VOP(LOAD(xp + i), yb, av));                            \
    } else if (ys) {                                                            \
        for (; i + W <= n; i += W)                                              \
            STORE(o + i, VOP(xb, LOAD(yp + i), av));                            \
    }                                                                           \
    for (; i < n; i++) {                                                        \
        const float a = xs ? TOF(xp[i]) : xf, b = ys ? TOF(yp[i]) : yf;         \
        (void)b;                                                                \
        o[i] = FROMF(SOP(a, b, al));                                            \
    }                                                                           \
}

#define PTC_LOW_OP_T(OP, T512, T256)                                            \
PTC_LOW_LOOP(ptc_low_##OP##_h16, T512, __m512, 16, _mm512_set1_ps,              \
             ptc_h16_load, ptc_h16_store, ptc_half_to_float, ptc_float_to_half, \
             PTC_LOWV16_##OP, PTC_LOWS_##OP)                                    \
PTC_LOW_LOOP(ptc_low_##OP##_b16, T512, __m512, 16, _mm512_set1_ps,              \
             ptc_b16_load, ptc_b16_store, ptc_bf16_to_float, ptc__low_round_bf16, \
             PTC_LOWV16_##OP, PTC_LOWS_##OP)                                    \
PTC_LOW_LOOP(ptc_low_##OP##_h8, T256, __m256, 8, _mm256_set1_ps,                \
             ptc_h8_load, ptc_h8_store, ptc_half_to_float, ptc_float_to_half,   \
             PTC_LOWV8_##OP, PTC_LOWS_##OP)                                     \
PTC_LOW_LOOP(ptc_low_##OP##_b8, T256, __m256, 8, _mm256_set1_ps,                \
             ptc_b8_load, ptc_b8_store, ptc_bf16_to_float, ptc__low_round_bf16, \
             PTC_LOWV8_##OP, PTC_LOWS_##OP)
#define PTC_LOW_OP(OP) PTC_LOW_OP_T(OP, PTC_LOW_TGT512, PTC_LOW_TGT256)
PTC_LOW_OP(ADD)
PTC_LOW_OP(SUB)
PTC_LOW_OP(MUL)
PTC_LOW_OP(DIV)
PTC_LOW_OP(AXPY)
PTC_LOW_OP(MAX)
PTC_LOW_OP(MIN)
PTC_LOW_OP(RELU)
/* GELU's vectors with the multiply-adds contracted, as the float32 loop's
   vector copies (ptc_geluv_f32, PTC_MAP_F32_FMA): the same values at the
   same elements, about twice as fast as the separate operations */
PTC_LOW_OP_T(GELU, __attribute__((target("avx512f,avx512vl,avx2,f16c,fma"), optimize("fp-contract=fast"))),
             __attribute__((target("avx2,f16c,fma"), optimize("fp-contract=fast"))))
#undef PTC_LOW_OP
#undef PTC_LOW_OP_T

typedef void (*ptc_low_loop_t)(uint16_t*, const void*, int, const void*, int, float, Py_ssize_t);

#define PTC__LOW_ROW(OP) { ptc_low_##OP##_h8, ptc_low_##OP##_b8, ptc_low_##OP##_h16, ptc_low_##OP##_b16 }
static const ptc_low_loop_t ptc__low_loops[9][4] = {
    PTC__LOW_ROW(ADD), PTC__LOW_ROW(SUB), PTC__LOW_ROW(MUL), PTC__LOW_ROW(DIV),
    PTC__LOW_ROW(AXPY), PTC__LOW_ROW(MAX), PTC__LOW_ROW(MIN), PTC__LOW_ROW(RELU),
    PTC__LOW_ROW(GELU)
};
#undef PTC__LOW_ROW

/* whether ptc_low_ew runs here (a vector copy with FMA for the alpha form) */
static inline int ptc_low_ew_level(void)
{
    int l = ptc_half_rows_level();
    return l && ptc_fma_level() ? l : 0;
}

/* op: PTC_LOW_*; bf: 0 float16, 1 bfloat16; x, y: a row of n elements (step
 * 1) or one float32 (step 0), not both numbers (relu and gelu read x only); al: the
 * alpha of PTC_LOW_AXPY.  1 when the loop ran, 0 where it did not. */
static inline int ptc_low_ew(int op, int bf, uint16_t* o, const void* x, int xs,
                             const void* y, int ys, float al, Py_ssize_t n)
{
    int l = ptc_low_ew_level();
    if (!l || op < 0 || op > PTC_LOW_GELU) return 0;
    if (op >= PTC_LOW_RELU) { y = x; ys = xs; }        /* the unary ops read x only */
    if (!xs && !ys) return 0;
    ptc__low_loops[op][(l == 2 ? 2 : 0) + (bf ? 1 : 0)](o, x, xs, y, ys, al, n);
    return 1;
}

/* -x (flip) or |x| of float16/bfloat16 bits: the sign bit only (NaN payloads
 * kept), as torch's; 32 or 16 elements a vector */
#define PTC_LOW_SIGN(NAME, TGT, VI, W, LD, ST, SET, XOR, AND)                   \
TGT static void NAME(const uint16_t* s, uint16_t* d, Py_ssize_t n, int flip)    \
{                                                                               \
    Py_ssize_t i = 0;                                                           \
    if (flip) {                                                                 \
        const VI m = SET((short)0x8000);                                        \
        for (; i + W <= n; i += W) ST((VI*)(d + i), XOR(LD((const VI*)(s + i)), m)); \
        for (; i < n; i++) d[i] = s[i] ^ 0x8000u;                               \
    } else {                                                                    \
        const VI m = SET((short)0x7fff);                                        \
        for (; i + W <= n; i += W) ST((VI*)(d + i), AND(LD((const VI*)(s + i)), m)); \
        for (; i < n; i++) d[i] = s[i] & 0x7fffu;                               \
    }                                                                           \
}
PTC_LOW_SIGN(ptc_low_sign_512, PTC_LOW_TGT512, __m512i, 32, _mm512_loadu_si512, _mm512_storeu_si512,
             _mm512_set1_epi16, _mm512_xor_si512, _mm512_and_si512)
PTC_LOW_SIGN(ptc_low_sign_256, PTC_LOW_TGT256, __m256i, 16, _mm256_loadu_si256, _mm256_storeu_si256,
             _mm256_set1_epi16, _mm256_xor_si256, _mm256_and_si256)
#undef PTC_LOW_SIGN

static inline void ptc_low_sign(const uint16_t* s, uint16_t* d, Py_ssize_t n, int flip)
{
    int l = ptc_vec_level();
    if (l == 2) ptc_low_sign_512(s, d, n, flip);
    else if (l == 1) ptc_low_sign_256(s, d, n, flip);
    else if (flip) for (Py_ssize_t i = 0; i < n; i++) d[i] = s[i] ^ 0x8000u;
    else for (Py_ssize_t i = 0; i < n; i++) d[i] = s[i] & 0x7fffu;
}
#else
static inline void ptc_low_sign(const uint16_t* s, uint16_t* d, Py_ssize_t n, int flip)
{
    if (flip) for (Py_ssize_t i = 0; i < n; i++) d[i] = s[i] ^ 0x8000u;
    else for (Py_ssize_t i = 0; i < n; i++) d[i] = s[i] & 0x7fffu;
}
static inline int ptc_low_ew_level(void) { return 0; }
static inline int ptc_low_ew(int op, int bf, uint16_t* o, const void* x, int xs,
                             const void* y, int ys, float al, Py_ssize_t n)
{
    (void)op; (void)bf; (void)o; (void)x; (void)xs; (void)y; (void)ys; (void)al; (void)n;
    return 0;
}
#endif

#endif
