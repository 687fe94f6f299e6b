/* Contiguous rows of float16/bfloat16 <-> float32 conversions, and the
 * vector conversions the fused float16/bfloat16 loops (ptc_low_ew.h) use.
 *
 * The same bits as PyTorch's vectorised CPU conversions (round to nearest
 * even; a float16 NaN kept quiet with its payload truncated, a bfloat16 NaN
 * 0xffff), n elements at a time:
 * on x86-64 the F16C instructions (vcvtph2ps / vcvtps2ph, what PyTorch's CPU
 * kernels use, or their AVX-512 forms: sixteen lanes) convert float16 and
 * integer lanes do the bfloat16 rounding; other CPUs and the row tails take
 * the scalar code.  The instruction set is picked once at run time
 * (ptc_vec_level: ATEN_CPU_CAPABILITY lowers it, so the tests run each copy). */
#ifndef PTC_HALF_ROWS_H
#define PTC_HALF_ROWS_H
#include <stddef.h>
#include <stdint.h>
#include "ptc_half.h"
#include "ptc_math.h"          /* ptc_vec_level */

static inline void ptc_half_to_float_rows_c(const uint16_t* s, float* d, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) d[i] = ptc_half_to_float(s[i]);
}

static inline void ptc_float_to_half_rows_c(const float* s, uint16_t* d, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) d[i] = ptc_float_to_half(s[i]);
}

static inline void ptc_bf16_to_float_rows_c(const uint16_t* s, float* d, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) d[i] = ptc_bf16_to_float(s[i]);
}

/* a NaN becomes 0xffff here, as in PyTorch's vectorised conversion (its
 * scalar one, and ptc_float_to_bf16, keep the NaN's top half, quiet) */
static inline void ptc_float_to_bf16_rows_c(const float* s, uint16_t* d, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++) d[i] = s[i] != s[i] ? (uint16_t)0xffffu : ptc_float_to_bf16(s[i]);
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>

#define PTC_HR_TGT __attribute__((target("avx2,f16c")))
#define PTC_HR_TGT512 __attribute__((target("avx512f,avx512vl,avx2,f16c")))

/* eight (AVX2+F16C) or sixteen (AVX-512) lanes: load and widen, round and store */
PTC_HR_TGT static inline __m256 ptc_h8_load(const uint16_t* s)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)s));
}
PTC_HR_TGT static inline __m256 ptc_b8_load(const uint16_t* s)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)s)), 16));
}
PTC_HR_TGT static inline void ptc_h8_store(uint16_t* d, __m256 v)
{
    _mm_storeu_si128((__m128i*)d, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
/* u + 0x7fff + ((u >> 16) & 1), then the top half; a NaN gives 0xffff */
PTC_HR_TGT static inline void ptc_b8_store(uint16_t* d, __m256 v)
{
    const __m256i u = _mm256_castps_si256(v);
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff);
    const __m256i inf = _mm256_set1_epi32(0x7f800000);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    r = _mm256_srli_epi32(r, 16);
    __m256i isnan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absmask), inf);
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0xffff), isnan);
    /* 8 x 32-bit values below 2^16 -> 8 x 16-bit, in order */
    __m256i packed = _mm256_packus_epi32(r, r);          /* lanes: r0..3 r0..3 | r4..7 r4..7 */
    packed = _mm256_permute4x64_epi64(packed, 0x08);     /* r0..3 r4..7 in the low 128 bits */
    _mm_storeu_si128((__m128i*)d, _mm256_castsi256_si128(packed));
}
PTC_HR_TGT512 static inline __m512 ptc_h16_load(const uint16_t* s)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)s));
}
PTC_HR_TGT512 static inline __m512 ptc_b16_load(const uint16_t* s)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)s)), 16));
}
PTC_HR_TGT512 static inline void ptc_h16_store(uint16_t* d, __m512 v)
{
    _mm256_storeu_si256((__m256i*)d,
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
/* sixteen floats rounded to bfloat16 bits (as ptc_b8_store's) */
PTC_HR_TGT512 static inline __m256i ptc_b16_round(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
    r = _mm512_srli_epi32(r, 16);
    __mmask16 isnan = _mm512_cmpgt_epi32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(r, isnan, _mm512_set1_epi32(0xffff));
    return _mm512_cvtepi32_epi16(r);        /* vpmovdw: exact, every value < 2^16 */
}
PTC_HR_TGT512 static inline void ptc_b16_store(uint16_t* d, __m512 v)
{
    _mm256_storeu_si256((__m256i*)d, ptc_b16_round(v));
}

#define PTC__HR_ROWS(NAME, TGT, W, LOAD, STORE, TAIL)                             \
TGT static void NAME##_to_float(const uint16_t* s, float* d, ptrdiff_t n)          \
{                                                                                 \
    ptrdiff_t i = 0;                                                              \
    for (; i + W <= n; i += W) STORE##_f(d + i, LOAD(s + i));                     \
    TAIL##_to_float_rows_c(s + i, d + i, n - i);                                  \
}
#define ptc__f8_store_f(p, v) _mm256_storeu_ps(p, v)
#define ptc__f16_store_f(p, v) _mm512_storeu_ps(p, v)
PTC__HR_ROWS(ptc__h8, PTC_HR_TGT, 8, ptc_h8_load, ptc__f8_store, ptc_half)
PTC__HR_ROWS(ptc__b8, PTC_HR_TGT, 8, ptc_b8_load, ptc__f8_store, ptc_bf16)
PTC__HR_ROWS(ptc__h16, PTC_HR_TGT512, 16, ptc_h16_load, ptc__f16_store, ptc_half)
PTC__HR_ROWS(ptc__b16, PTC_HR_TGT512, 16, ptc_b16_load, ptc__f16_store, ptc_bf16)
#undef PTC__HR_ROWS

#define PTC__HR_ROWS_BACK(NAME, TGT, W, LOADF, STORE, TAIL)                       \
TGT static void NAME##_from_float(const float* s, uint16_t* d, ptrdiff_t n)        \
{                                                                                 \
    ptrdiff_t i = 0;                                                              \
    for (; i + W <= n; i += W) STORE(d + i, LOADF(s + i));                        \
    TAIL(s + i, d + i, n - i);                                                    \
}
PTC__HR_ROWS_BACK(ptc__h8, PTC_HR_TGT, 8, _mm256_loadu_ps, ptc_h8_store, ptc_float_to_half_rows_c)
PTC__HR_ROWS_BACK(ptc__b8, PTC_HR_TGT, 8, _mm256_loadu_ps, ptc_b8_store, ptc_float_to_bf16_rows_c)
PTC__HR_ROWS_BACK(ptc__h16, PTC_HR_TGT512, 16, _mm512_loadu_ps, ptc_h16_store, ptc_float_to_half_rows_c)
PTC__HR_ROWS_BACK(ptc__b16, PTC_HR_TGT512, 16, _mm512_loadu_ps, ptc_b16_store, ptc_float_to_bf16_rows_c)
#undef PTC__HR_ROWS_BACK

/* 2 the AVX-512 copies, 1 AVX2+F16C, 0 the scalar code */
static inline int ptc_half_rows_level(void)
{
    static int level = -1;
    if (level < 0) {
        int l = ptc_vec_level();
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("f16c")) l = 0;
        level = l;
    }
    return level;
}

#define PTC__HR_PICK(name, v8, v16)                                               \
    static inline void name(const void* s, void* d, ptrdiff_t n)                  \
    {                                                                             \
        int l_ = n >= 8 ? ptc_half_rows_level() : 0;                              \
        if (l_ == 2) v16(s, d, n);                                                \
        else if (l_ == 1) v8(s, d, n);                                            \
        else name##_c(s, d, n);                                                   \
    }
#else
#define PTC__HR_PICK(name, v8, v16)                                               \
    static inline void name(const void* s, void* d, ptrdiff_t n) { name##_c(s, d, n); }
static inline int ptc_half_rows_level(void) { return 0; }
#endif

PTC__HR_PICK(ptc_half_to_float_rows, ptc__h8_to_float, ptc__h16_to_float)
PTC__HR_PICK(ptc_float_to_half_rows, ptc__h8_from_float, ptc__h16_from_float)
PTC__HR_PICK(ptc_bf16_to_float_rows, ptc__b8_to_float, ptc__b16_to_float)
PTC__HR_PICK(ptc_float_to_bf16_rows, ptc__b8_from_float, ptc__b16_from_float)
#undef PTC__HR_PICK

#endif
