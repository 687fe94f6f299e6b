/* The causal softmax rows of attention scores on AVX-512F and on AVX2 (after
 * ptc_math.h, whose vector exp it uses).
 *
 * _nn_kernels.pyx's _causal_rows handles a row of up to S scores in six
 * passes (max, shift, zero fill, exp, sum, scale), most of them Cython loops
 * four floats wide: ~80 ns per 64-score row of a small GPT, above the
 * arithmetic.  Here one row is (its scores times the attention's scale, as
 * the row loop multiplies them first): a masked max, the shifted exp of whole
 * vectors (ptc_fexp16_softmax / ptc_fexp8_softmax: the softmax passes' exp,
 * the bits of ptcore.exp's ptc_exp_fv_f32, which the row loop calls), the
 * sum in the row loop's eight double lanes and order, and the scaling with
 * zeros above the diagonal -- the same bits as _causal_rows.  The
 * cross-entropy row log-sum-exp below uses the same exp. */
#ifndef PTC_SOFTMAX_ROWS_H
#define PTC_SOFTMAX_ROWS_H

#include <stddef.h>
#include <string.h>
#include <math.h>
#include "ptc_fmath_vec.h"       /* ptc_fexp8_softmax, ptc_fexp16_softmax, ptc_fma_level */

#if PTC_X86_DISPATCH
#include <immintrin.h>

/* a testing knob: the widest fused copy allowed (2 AVX-512, 1 AVX2, 0 none:
   the row loops) */
static int ptc_smrows_on = 2;

/* the fused copy to run: 2 AVX-512, 1 AVX2 (with FMA), 0 the row loops */
static int ptc_smrows_isa(void) {
    int l = ptc_fma_level();
    if (ptc_smrows_on <= 0) return 0;
    return l < ptc_smrows_on ? l : ptc_smrows_on;
}

__attribute__((target("avx512f,avx512vl"))) static inline __mmask16 ptc_smr_mask(ptrdiff_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* rows [r0, r1) of the (L, S) score blocks at s: row r is query i = r % L,
   which keeps keys j <= i */
__attribute__((target("avx512f,avx512vl"))) static void
ptc_causal_rows_f32_avx512(float* s, ptrdiff_t r0, ptrdiff_t r1, ptrdiff_t L, ptrdiff_t S,
                           float scale) {
    ptrdiff_t r, j;
    const __m512 sc = _mm512_set1_ps(scale);
    for (r = r0; r < r1; r++) {
        float* row = s + r * S;
        ptrdiff_t keep = r % L + 1, jd;
        if (keep > S) keep = S;
        /* the max of the scaled scores (order does not matter for it; a NaN
           row ends NaN either way) */
        __m512 mx = _mm512_set1_ps(row[0] * scale);
        for (j = 0; j < keep; j += 16) {
            const __mmask16 mk = ptc_smr_mask(keep - j);   /* (no load past the row) */
            mx = _mm512_mask_max_ps(mx, mk, mx, _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, row + j), sc));
        }
        float m = _mm512_reduce_max_ps(mx);
        /* exp(x - m) for j < keep, exp(0) in the rest of the last vector (as
           the row loop's whole-vector exp), written back */
        for (j = 0; j < keep; j += 16) {
            __mmask16 mk = ptc_smr_mask(keep - j), ms = ptc_smr_mask(S - j);
            __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, row + j), sc);
            x = _mm512_maskz_sub_ps(mk, x, _mm512_set1_ps(m));
            x = ptc_fexp16_softmax(x);
            _mm512_mask_storeu_ps(row + j, ms, x);
        }
        /* the sum of the kept exps: lanes j % 8 in double, combined, then the tail */
        __m512d z = _mm512_setzero_pd();
        for (jd = 0; jd + 8 <= keep; jd += 8)
            z = _mm512_add_pd(z, _mm512_cvtps_pd(_mm256_loadu_ps(row + jd)));
        double zl[8];
        _mm512_storeu_pd(zl, z);
        double sum = ((zl[0] + zl[4]) + (zl[1] + zl[5])) + ((zl[2] + zl[6]) + (zl[3] + zl[7]));
        for (; jd < keep; jd++) sum += row[jd];
        const float c = (float)(1.0 / sum);
        for (j = 0; j < S; j += 16) {
            __mmask16 mk = ptc_smr_mask(keep - j), ms = ptc_smr_mask(S - j);
            __m512 x = _mm512_maskz_loadu_ps(mk, row + j);
            _mm512_mask_storeu_ps(row + j, ms, _mm512_maskz_mul_ps(mk, x, _mm512_set1_ps(c)));
        }
    }
}

/* the same rows on AVX2: eight lanes, the sum's lanes j % 8 in two
   4-double vectors.  No masked stores (vmaskmovps stores are microcoded on
   AMD: slower than the row loops): a vector inside the row is loaded and
   stored whole (exp(0) in its lanes past the diagonal, as the row loop's
   whole-vector exp; the scaling zeroes them), the row's last partial
   vector goes through a buffer */
__attribute__((target("avx2,fma"))) static inline __m256 ptc_smr_mask8(ptrdiff_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int k = n >= 8 ? 8 : n <= 0 ? 0 : (int)n;
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(k), idx));
}

__attribute__((target("avx2,fma"))) static void
ptc_causal_rows_f32_avx2(float* s, ptrdiff_t r0, ptrdiff_t r1, ptrdiff_t L, ptrdiff_t S,
                         float scale) {
    ptrdiff_t r, j;
    float buf[8];
    const __m256 sc = _mm256_set1_ps(scale);
    for (r = r0; r < r1; r++) {
        float* row = s + r * S;
        ptrdiff_t keep = r % L + 1;
        if (keep > S) keep = S;
        /* the max of the scaled scores (a NaN row ends NaN either way) */
        __m256 mx = _mm256_set1_ps(row[0] * scale);
        for (j = 0; j + 8 <= keep; j += 8)
            mx = _mm256_max_ps(mx, _mm256_mul_ps(_mm256_loadu_ps(row + j), sc));
        float ml[8];
        _mm256_storeu_ps(ml, mx);
        float m = ml[0];
        for (int q = 1; q < 8; q++) m = ml[q] > m ? ml[q] : m;
        for (; j < keep; j++) { float v = row[j] * scale; m = v > m ? v : m; }
        /* exp(x - m) for j < keep, and the sum of the whole vectors' lanes */
        const __m256 mv = _mm256_set1_ps(m);
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
        for (j = 0; j + 8 <= keep; j += 8) {
            __m256 x = ptc_fexp8_softmax(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(row + j), sc), mv));
            _mm256_storeu_ps(row + j, x);
            a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
            a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
        }
        if (j < keep) {
            const __m256 mk = ptc_smr_mask8(keep - j);
            if (j + 8 <= S) {
                __m256 x = _mm256_and_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(row + j), sc),
                                                       mv), mk);
                _mm256_storeu_ps(row + j, ptc_fexp8_softmax(x));
            } else {
                memset(buf, 0, sizeof buf);
                memcpy(buf, row + j, (size_t)(keep - j) * sizeof(float));
                __m256 x = _mm256_and_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(buf), sc), mv),
                                         mk);
                _mm256_storeu_ps(buf, ptc_fexp8_softmax(x));
                memcpy(row + j, buf, (size_t)(keep - j) * sizeof(float));
            }
        }
        double z0[4], z1[4];
        _mm256_storeu_pd(z0, a0);
        _mm256_storeu_pd(z1, a1);
        double sum = ((z0[0] + z1[0]) + (z0[1] + z1[1])) + ((z0[2] + z1[2]) + (z0[3] + z1[3]));
        for (j = keep & ~(ptrdiff_t)7; j < keep; j++) sum += row[j];
        /* the scaling, 0 past the diagonal */
        const float cf = (float)(1.0 / sum);
        const __m256 c = _mm256_set1_ps(cf);
        for (j = 0; j + 8 <= S; j += 8) {
            __m256 x = _mm256_mul_ps(_mm256_loadu_ps(row + j), c);
            _mm256_storeu_ps(row + j, _mm256_and_ps(x, ptc_smr_mask8(keep - j)));
        }
        for (; j < S; j++) row[j] = j < keep ? row[j] * cf : 0.0f;
    }
}

/* log(sum(exp(x[0:C]))) of one float32 row (cross_entropy's _ce_lse), fused:
 * the max over vector accumulators (the same value as _pmax's lanes; a row
 * with a NaN ends NaN either way), then per piece of 256 logits the shifted
 * exp of whole vectors (ptc_fexp16_softmax / ptc_fexp8_softmax; the piece's
 * last partial vector padded: the bits of ptc_exp_fv_f32 on the piece)
 * summed as _pdot sums it -- lanes j % 8 in double, combined pairwise, then
 * the tail in order -- and the pieces' sums added in order: the same bits as
 * _ce_lse's loop, without its buffer and its three passes. */
__attribute__((target("avx512f,avx512vl"))) static double
ptc_lse_row_f32_avx512(const float* x, ptrdiff_t C) {
    ptrdiff_t j = 0, p0, k, q, qs, L, rem;
    __m512 m0 = _mm512_set1_ps(x[0]), m1 = m0, m2 = m0, m3 = m0;
    for (; j + 64 <= C; j += 64) {
        m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + j));
        m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + j + 16));
        m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + j + 32));
        m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + j + 48));
    }
    for (; j + 16 <= C; j += 16)
        m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + j));
    float m = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
    for (; j < C; j++)
        m = x[j] > m ? x[j] : m;
    const __m512 mv = _mm512_set1_ps(m);
    double s = 0;
    for (p0 = 0; p0 < C; p0 += 256) {
        L = C - p0 < 256 ? C - p0 : 256;
        __m512d a = _mm512_setzero_pd();
        for (k = 0; k + 16 <= L; k += 16) {
            __m512 e = ptc_fexp16_softmax(_mm512_sub_ps(_mm512_loadu_ps(x + p0 + k), mv));
            a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
            a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm256_castpd_ps(
                    _mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
        }
        double al[8];
        float et[16];
        _mm512_storeu_pd(al, a);
        rem = L - k;
        if (rem > 0) {
            const __mmask16 mk = ptc_smr_mask(rem);
            _mm512_storeu_ps(et, ptc_fexp16_softmax(
                _mm512_maskz_sub_ps(mk, _mm512_maskz_loadu_ps(mk, x + p0 + k), mv)));
        }
        qs = 0;
        if (rem >= 8) {
            for (q = 0; q < 8; q++)
                al[q] = al[q] + (double)et[q];
            qs = 8;
        }
        double ps = ((al[0] + al[4]) + (al[1] + al[5])) + ((al[2] + al[6]) + (al[3] + al[7]));
        for (q = qs; q < rem; q++)
            ps = ps + (double)et[q];
        s = s + ps;
    }
    return (double)m + log(s);
}

/* the same on AVX2: eight lanes, the sum's lanes in two 4-double vectors,
   the piece's last partial vector through a zero-padded buffer */
__attribute__((target("avx2,fma"))) static double
ptc_lse_row_f32_avx2(const float* x, ptrdiff_t C) {
    ptrdiff_t j = 0, p0, k, q, L, rem;
    __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0, m2 = m0, m3 = m0;
    for (; j + 32 <= C; j += 32) {
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
        m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + j + 8));
        m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + j + 16));
        m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + j + 24));
    }
    for (; j + 8 <= C; j += 8)
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
    float ml[8];
    _mm256_storeu_ps(ml, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    float m = ml[0];
    for (q = 1; q < 8; q++)
        m = ml[q] > m ? ml[q] : m;
    for (; j < C; j++)
        m = x[j] > m ? x[j] : m;
    const __m256 mv = _mm256_set1_ps(m);
    double s = 0;
    for (p0 = 0; p0 < C; p0 += 256) {
        L = C - p0 < 256 ? C - p0 : 256;
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
        for (k = 0; k + 8 <= L; k += 8) {
            __m256 e = ptc_fexp8_softmax(_mm256_sub_ps(_mm256_loadu_ps(x + p0 + k), mv));
            a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
            a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
        }
        double z0[4], z1[4];
        _mm256_storeu_pd(z0, a0);
        _mm256_storeu_pd(z1, a1);
        double ps = ((z0[0] + z1[0]) + (z0[1] + z1[1])) + ((z0[2] + z1[2]) + (z0[3] + z1[3]));
        rem = L - k;
        if (rem > 0) {
            float et[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            memcpy(et, x + p0 + k, (size_t)rem * sizeof(float));
            _mm256_storeu_ps(et, ptc_fexp8_softmax(_mm256_and_ps(
                _mm256_sub_ps(_mm256_loadu_ps(et), mv), ptc_smr_mask8(rem))));
            for (q = 0; q < rem; q++)
                ps = ps + (double)et[q];
        }
        s = s + ps;
    }
    return (double)m + log(s);
}
#else
static int ptc_smrows_on = 0;
static int ptc_smrows_isa(void) { return 0; }
static void ptc_causal_rows_f32_avx512(float* s, ptrdiff_t r0, ptrdiff_t r1, ptrdiff_t L,
                                       ptrdiff_t S, float scale) {
    (void)s; (void)r0; (void)r1; (void)L; (void)S; (void)scale;
}
static void ptc_causal_rows_f32_avx2(float* s, ptrdiff_t r0, ptrdiff_t r1, ptrdiff_t L,
                                     ptrdiff_t S, float scale) {
    (void)s; (void)r0; (void)r1; (void)L; (void)S; (void)scale;
}
static double ptc_lse_row_f32_avx512(const float* x, ptrdiff_t C) {
    (void)x; (void)C;
    return 0;
}
static double ptc_lse_row_f32_avx2(const float* x, ptrdiff_t C) {
    (void)x; (void)C;
    return 0;
}
#endif

#endif
