/* Contiguous rows of float16/bfloat16 <-> float32 conversions.
 *
 * The same bits as PyTorch's vectorised CPU conversions (round to nearest
 * even; a float16 NaN kept quiet with its payload truncated, a bfloat16 NaN
 * 0xffff), n elements at a time:
 * on x86-64 the F16C instructions (vcvtph2ps / vcvtps2ph, what PyTorch's CPU
 * kernels use) convert float16 eight lanes at once and AVX2 integer lanes do
 * the bfloat16 rounding; other CPUs and the row tails take the scalar code.
 * The instruction set is picked once at run time. */
#ifndef PTC_HALF_ROWS_H
#define PTC_HALF_ROWS_H
#include <stddef.h>
#include <stdint.h>
#include "ptc_half.h"

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

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define PTC_HR_TGT __attribute__((target("avx2,f16c")))

PTC_HR_TGT static void ptc_half_to_float_rows_f16c(const uint16_t* s, float* d, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(s + i))));
    ptc_half_to_float_rows_c(s + i, d + i, n - i);
}

PTC_HR_TGT static void ptc_float_to_half_rows_f16c(const float* s, uint16_t* d, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    ptc_float_to_half_rows_c(s + i, d + i, n - i);
}

PTC_HR_TGT static void ptc_bf16_to_float_rows_avx2(const uint16_t* s, float* d, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(s + i)));
        _mm256_storeu_si256((__m256i*)(d + i), _mm256_slli_epi32(w, 16));
    }
    ptc_bf16_to_float_rows_c(s + i, d + i, n - i);
}

/* u + 0x7fff + ((u >> 16) & 1), then the top half; a NaN gives 0xffff */
PTC_HR_TGT static inline __m128i ptc__bf16_round8(__m256i u)
{
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
    return _mm256_castsi256_si128(packed);
}

PTC_HR_TGT static void ptc_float_to_bf16_rows_avx2(const float* s, uint16_t* d, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(d + i),
                         ptc__bf16_round8(_mm256_loadu_si256((const __m256i*)(s + i))));
    ptc_float_to_bf16_rows_c(s + i, d + i, n - i);
}

static inline int ptc__half_rows_level(void)
{
    static int level = -1;
    if (level < 0) {
        __builtin_cpu_init();
        level = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) ? 1 : 0;
    }
    return level;
}

#define PTC__HR_PICK(name, vec)                                                   \
    static inline void name(const void* s, void* d, ptrdiff_t n)                  \
    {                                                                             \
        if (n >= 8 && ptc__half_rows_level()) vec(s, d, n);                       \
        else name##_c(s, d, n);                                                   \
    }
#else
#define PTC__HR_PICK(name, vec)                                                   \
    static inline void name(const void* s, void* d, ptrdiff_t n) { name##_c(s, d, n); }
#endif

PTC__HR_PICK(ptc_half_to_float_rows, ptc_half_to_float_rows_f16c)
PTC__HR_PICK(ptc_float_to_half_rows, ptc_float_to_half_rows_f16c)
PTC__HR_PICK(ptc_bf16_to_float_rows, ptc_bf16_to_float_rows_avx2)
PTC__HR_PICK(ptc_float_to_bf16_rows, ptc_float_to_bf16_rows_avx2)
#undef PTC__HR_PICK

#endif
