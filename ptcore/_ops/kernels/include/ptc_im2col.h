/* Column-matrix rows of 2-d float32 convolutions with unit column stride,
 * vectorised: im2col (copy one input channel's shifted rows, zero outside
 * the image) and col2im (accumulate them back).
 *
 * The Cython loops of _conv.pyx copy the 4-28 float rows of LeNet and DCGAN
 * one element at a time (about 0.4 ns per element, a fifth of LeNet's
 * convolution backward); here an output row is one masked load and one masked
 * store per 16 floats on AVX-512 (masked-off lanes touch no memory, so a row
 * that starts left of the image or ends right of it reads nothing outside
 * it), 8-float moves and scalar edges on AVX2.  col2im adds in the order of
 * the Cython loop (kernel row, kernel column, output row): the same bits.
 * The callers take the Cython loops where ptc_im2col_level() is 0. */
#ifndef PTC_IM2COL_H
#define PTC_IM2COL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    ptrdiff_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
} ptc_ic_geo;

/* output columns [lo, hi) read input columns ow + off inside [0, W) */
static inline void ptc_ic_range(ptrdiff_t off, ptrdiff_t W, ptrdiff_t OW, ptrdiff_t* lo,
                                ptrdiff_t* hi) {
    ptrdiff_t a = off < 0 ? -off : 0, b = W - off;
    if (b > OW) b = OW;
    if (a > OW) a = OW;
    if (b < a) b = a;
    *lo = a;
    *hi = b;
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define PTC_IC_X86 1

/* the lanes [a, b) of a 16-lane chunk as a mask (a, b clamped to [0, 16]) */
__attribute__((target("avx512f,avx512vl"))) static inline __mmask16 ptc_ic_mask(ptrdiff_t a, ptrdiff_t b) {
    if (a < 0) a = 0;
    if (b > 16) b = 16;
    if (b <= a) return 0;
    return (__mmask16)(((1u << (b - a)) - 1u) << a);
}

/* im2col of channel c: every (kernel row b, kernel column e) column row
   holds the shifted input rows of output rows [r0, r1), zero outside the
   image; ROW copies one of them (dst[0:OW] from src[lo:hi], zero elsewhere) */
#define PTC_IC_IM2COL(NAME, TARGET, ROW)                                        \
__attribute__((target(TARGET))) static void                                    \
NAME(const float* xc, float* col, ptrdiff_t ld, const ptc_ic_geo* g, ptrdiff_t c, \
     ptrdiff_t r0, ptrdiff_t r1) {                                             \
    const ptrdiff_t H = g->H, W = g->W, OW = g->OW, kh = g->kh, kw = g->kw;    \
    ptrdiff_t b, e, oh, j, lo, hi;                                             \
    for (b = 0; b < kh; b++)                                                   \
        for (e = 0; e < kw; e++) {                                             \
            float* dst = col + ((c * kh + b) * kw + e) * ld;                   \
            const ptrdiff_t off = e * g->dw - g->pw;                           \
            ptc_ic_range(off, W, OW, &lo, &hi);                                \
            for (oh = r0; oh < r1; oh++, dst += OW) {                          \
                const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;           \
                if (ih < 0 || ih >= H || hi <= lo) {                           \
                    memset(dst, 0, (size_t)OW * sizeof(float));                \
                    continue;                                                  \
                }                                                              \
                const float* src = xc + ih * W + off;                          \
                ROW                                                            \
            }                                                                  \
        }                                                                      \
}

PTC_IC_IM2COL(ptc_im2col_ch_f32_avx512, "avx512f,avx512vl",
    for (j = 0; j < OW; j += 16) {
        __m512 v = _mm512_maskz_loadu_ps(ptc_ic_mask(lo - j, hi - j), src + j);
        _mm512_mask_storeu_ps(dst + j, ptc_ic_mask(0, OW - j), v);
    })

PTC_IC_IM2COL(ptc_im2col_ch_f32_avx2, "avx2",
    for (j = 0; j < lo; j++) dst[j] = 0.0f;
    for (; j + 8 <= hi; j += 8) _mm256_storeu_ps(dst + j, _mm256_loadu_ps(src + j));
    for (; j < hi; j++) dst[j] = src[j];
    for (; j < OW; j++) dst[j] = 0.0f;)

/* col2im one input row at a time: for kernel row b and output row oh, the
   input row ih is loaded into registers (16 columns at a time), the kw shifted
   column rows are added to it, and it is stored once (adding each shifted row
   to memory in turn, as the element loop does, reloads what the previous
   shift just stored at another offset: the masked store cannot forward to
   that load, which stalled the first version of this loop).  Each element
   still gets its (b, e) contributions in the element loop's order. */
__attribute__((target("avx512f,avx512vl"))) static void
ptc_col2im_ch_f32_avx512(float* xc, const float* col, ptrdiff_t ld, const ptc_ic_geo* g,
                         ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    const ptrdiff_t H = g->H, W = g->W, OW = g->OW, kh = g->kh, kw = g->kw;
    ptrdiff_t b, e, oh, j;
    ptrdiff_t lo[64], hi[64];
    if (kw > 64) {                          /* (no such kernel in practice) */
        ptc_ic_geo g1 = *g;
        for (e = 0; e < kw; e++) {          /* one kernel column at a time */
            g1.kw = 1;
            g1.pw = g->pw - e * g->dw;
            for (b = 0; b < kh; b++) {
                ptc_ic_geo g2 = g1;
                g2.kh = 1;
                g2.ph = g->ph - b * g->dh;
                ptc_col2im_ch_f32_avx512(xc, col + ((c * kh + b) * kw + e) * ld, ld, &g2, 0,
                                         r0, r1);
            }
        }
        return;
    }
    for (e = 0; e < kw; e++) {              /* input columns [lo, hi) each shift writes */
        ptrdiff_t a, z, off = e * g->dw - g->pw;
        ptc_ic_range(off, W, OW, &a, &z);
        lo[e] = a + off;
        hi[e] = z + off;
    }
    for (b = 0; b < kh; b++) {
        const float* rows = col + (c * kh + b) * kw * ld;
        for (oh = r0; oh < r1; oh++) {
            const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;
            if (ih < 0 || ih >= H) continue;
            float* dst = xc + ih * W;
            const float* s = rows + (oh - r0) * OW;
            for (j = 0; j < W; j += 16) {
                const __mmask16 ms = ptc_ic_mask(0, W - j);
                __m512 acc = _mm512_maskz_loadu_ps(ms, dst + j);
                for (e = 0; e < kw; e++) {
                    const __mmask16 m = ptc_ic_mask(lo[e] - j, hi[e] - j);
                    if (!m) continue;
                    const ptrdiff_t off = e * g->dw - g->pw;
                    const __m512 v = _mm512_maskz_loadu_ps(m, s + e * ld + (j - off));
                    acc = _mm512_mask_add_ps(acc, m, acc, v);
                }
                _mm512_mask_storeu_ps(dst + j, ms, acc);
            }
        }
    }
}

/* col2im with column stride 2 (DCGAN's transposed convolutions and the
   input gradient of its strided ones): the same row-at-a-time scheme on 32
   input columns at a time (two vectors).  For kernel column e the 16 column
   elements that land in the chunk are loaded (masked to the valid output
   columns), spread to every other lane (a permute, the lane parity of the
   shift selected by the mask: _pdep_u32 places the valid bits), and added
   with masked adds, so each element still gets its (b, e) contributions in
   the element loop's order. */
static inline ptrdiff_t ptc_ic_cdiv2(ptrdiff_t a) { return a >= 0 ? (a + 1) / 2 : -((-a) / 2); }

__attribute__((target("avx512f,avx512vl,bmi2"))) static void
ptc_col2im2_ch_f32_avx512(float* xc, const float* col, ptrdiff_t ld, const ptc_ic_geo* g,
                          ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    const ptrdiff_t H = g->H, W = g->W, OW = g->OW, kh = g->kh, kw = g->kw;
    ptrdiff_t b, e, oh, j;
    const __m512i lo_idx = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512i hi_idx = _mm512_set_epi32(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9,
                                            8, 8);
    for (b = 0; b < kh; b++) {
        const float* rows = col + (c * kh + b) * kw * ld;
        for (oh = r0; oh < r1; oh++) {
            const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;
            if (ih < 0 || ih >= H) continue;
            float* dst = xc + ih * W;
            const float* s = rows + (oh - r0) * OW;
            for (j = 0; j < W; j += 32) {
                const __mmask16 m0 = ptc_ic_mask(0, W - j), m1 = ptc_ic_mask(0, W - j - 16);
                __m512 a0 = _mm512_maskz_loadu_ps(m0, dst + j);
                __m512 a1 = _mm512_maskz_loadu_ps(m1, dst + j + 16);
                for (e = 0; e < kw; e++) {
                    const ptrdiff_t off = e * g->dw - g->pw;
                    /* output columns ow with 0 <= 2 ow + off < W, and in this chunk */
                    ptrdiff_t olo = ptc_ic_cdiv2(-off), ohi = ptc_ic_cdiv2(W - off);
                    const ptrdiff_t ow0 = ptc_ic_cdiv2(j - off);
                    if (olo < 0) olo = 0;
                    if (ohi > OW) ohi = OW;
                    const __mmask16 mk = ptc_ic_mask(olo - ow0, ohi - ow0);
                    if (!mk) continue;
                    const unsigned par = (unsigned)(2 * ow0 + off - j);    /* 0 or 1 */
                    const unsigned lanes = par ? 0xAAAAAAAAu : 0x55555555u;
                    const unsigned spread = _pdep_u32((unsigned)mk, lanes);
                    const __m512 v = _mm512_maskz_loadu_ps(mk, s + e * ld + ow0);
                    a0 = _mm512_mask_add_ps(a0, (__mmask16)spread, a0,
                                            _mm512_permutexvar_ps(lo_idx, v));
                    a1 = _mm512_mask_add_ps(a1, (__mmask16)(spread >> 16), a1,
                                            _mm512_permutexvar_ps(hi_idx, v));
                }
                _mm512_mask_storeu_ps(dst + j, m0, a0);
                _mm512_mask_storeu_ps(dst + j + 16, m1, a1);
            }
        }
    }
}

/* the same on AVX2, 16 input columns (two vectors) at a time: the 8 column
   elements that land in the chunk are loaded, duplicated pairwise into the
   two halves (a cross-lane permute each) and added to the lanes of the
   shift's parity that are in range by a blend (the other lanes keep their
   bits: no adding of +0 to a -0).  The chunk is the outer loop, so each
   kernel column's lane masks are compares made once per chunk (no BMI2).
   The rows of the column matrix are tiny here (DCGAN: 4-16 floats), so
   they are first staged in zero-padded stack rows and every load is a
   plain 8-float load (what lies outside a row is never selected):
   vmaskmovps loads took 40% of the first version's time on AMD Zen 1.
   Wider rows or kernels than the stage holds take masked loads. */
#define PTC_IC_STAGE_PAD 16
#define PTC_IC_STAGE_OW 64
#define PTC_IC_STAGE_KW 8
__attribute__((target("avx2"))) static void
ptc_col2im2_ch_f32_avx2(float* xc, const float* col, ptrdiff_t ld, const ptc_ic_geo* g,
                        ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    const ptrdiff_t H = g->H, W = g->W, OW = g->OW, kh = g->kh, kw = g->kw;
    ptrdiff_t b, e, oh, j, t;
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lo_idx = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    const __m256i hi_idx = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
    const __m256i odd = _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1);
    const __m256i even = _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
    const ptrdiff_t SW = OW + 2 * PTC_IC_STAGE_PAD;
    const int staged = OW <= PTC_IC_STAGE_OW && kw <= PTC_IC_STAGE_KW;
    float stage[PTC_IC_STAGE_KW * (PTC_IC_STAGE_OW + 2 * PTC_IC_STAGE_PAD)];
    __m256i mk[PTC_IC_STAGE_KW], s0[PTC_IC_STAGE_KW], s1[PTC_IC_STAGE_KW];
    ptrdiff_t ow0[PTC_IC_STAGE_KW], eon[PTC_IC_STAGE_KW];
    int ne;
    if (kw > PTC_IC_STAGE_KW) {             /* (no such kernel in practice) */
        for (b = 0; b < kh; b++) {          /* one (b, e) at a time: the same order */
            ptc_ic_geo g2 = *g;
            g2.kh = 1;
            g2.ph = g->ph - b * g->dh;
            for (e = 0; e < kw; e++) {
                g2.kw = 1;
                g2.pw = g->pw - e * g->dw;
                ptc_col2im2_ch_f32_avx2(xc, col + ((c * kh + b) * kw + e) * ld, ld, &g2, 0,
                                        r0, r1);
            }
        }
        return;
    }
    if (staged) memset(stage, 0, sizeof(float) * (size_t)(kw * SW));
    for (j = 0; j < W; j += 16) {
        const int n0 = W - j >= 8 ? 8 : (int)(W - j);
        const int n1 = W - j >= 16 ? 8 : W - j > 8 ? (int)(W - j - 8) : 0;
        const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(n0), lane);
        const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(n1), lane);
        ne = 0;
        for (e = 0; e < kw; e++) {
            const ptrdiff_t off = e * g->dw - g->pw;
            /* output columns ow with 0 <= 2 ow + off < W, and in this chunk */
            ptrdiff_t olo = ptc_ic_cdiv2(-off), ohi = ptc_ic_cdiv2(W - off);
            const ptrdiff_t o0 = ptc_ic_cdiv2(j - off);
            if (olo < 0) olo = 0;
            if (ohi > OW) ohi = OW;
            ptrdiff_t ka = olo - o0, kb = ohi - o0;        /* lanes [ka, kb) of v */
            if (ka < 0) ka = 0;
            if (kb > 8) kb = 8;
            if (kb <= ka) continue;
            const __m256i ia = _mm256_set1_epi32((int)ka), ib = _mm256_set1_epi32((int)kb);
            /* lane 2t + par of the chunk gets v[t]; par = 2 o0 + off - j */
            const __m256i par = (2 * o0 + off - j) ? odd : even;
            mk[ne] = _mm256_andnot_si256(_mm256_cmpgt_epi32(ia, lane),
                                         _mm256_cmpgt_epi32(ib, lane));
            s0[ne] = _mm256_and_si256(par, _mm256_andnot_si256(_mm256_cmpgt_epi32(ia, lo_idx),
                                                               _mm256_cmpgt_epi32(ib, lo_idx)));
            s1[ne] = _mm256_and_si256(par, _mm256_andnot_si256(_mm256_cmpgt_epi32(ia, hi_idx),
                                                               _mm256_cmpgt_epi32(ib, hi_idx)));
            ow0[ne] = o0;
            eon[ne] = e;
            if (staged && !(o0 >= -PTC_IC_STAGE_PAD && o0 + 8 <= OW + PTC_IC_STAGE_PAD))
                ow0[ne] = PTRDIFF_MIN;      /* outside the stage: masked load */
            ne++;
        }
        if (!ne) continue;
        for (b = 0; b < kh; b++) {
            const float* rows = col + (c * kh + b) * kw * ld;
            for (oh = r0; oh < r1; oh++) {
                const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;
                if (ih < 0 || ih >= H) continue;
                float* dst = xc + ih * W + j;
                const float* s = rows + (oh - r0) * OW;
                int q;
                if (staged)
                    for (q = 0; q < ne; q++) {
                        const float* sr = s + eon[q] * ld;
                        float* st = stage + eon[q] * SW + PTC_IC_STAGE_PAD;
                        for (t = 0; t + 8 <= OW; t += 8)
                            _mm256_storeu_ps(st + t, _mm256_loadu_ps(sr + t));
                        for (; t < OW; t++) st[t] = sr[t];
                    }
                __m256 a0 = n0 == 8 ? _mm256_loadu_ps(dst) : _mm256_maskload_ps(dst, m0);
#define PTC_IC_V(q) (staged && ow0[q] != PTRDIFF_MIN                                    \
        ? _mm256_loadu_ps(stage + eon[q] * SW + PTC_IC_STAGE_PAD + ow0[q])                  \
        : _mm256_maskload_ps(s + eon[q] * ld + ptc_ic_cdiv2(j - (eon[q] * g->dw - g->pw)), \
                             mk[q]))
                if (n1 == 0) {
                    for (q = 0; q < ne; q++) {
                        const __m256 v = PTC_IC_V(q);
                        a0 = _mm256_blendv_ps(a0, _mm256_add_ps(a0,
                                              _mm256_permutevar8x32_ps(v, lo_idx)),
                                              _mm256_castsi256_ps(s0[q]));
                    }
                    if (n0 == 8) _mm256_storeu_ps(dst, a0);
                    else _mm256_maskstore_ps(dst, m0, a0);
                    continue;
                }
                __m256 a1 = n1 == 8 ? _mm256_loadu_ps(dst + 8) : _mm256_maskload_ps(dst + 8, m1);
                for (q = 0; q < ne; q++) {
                    const __m256 v = PTC_IC_V(q);
                    a0 = _mm256_blendv_ps(a0, _mm256_add_ps(a0,
                                          _mm256_permutevar8x32_ps(v, lo_idx)),
                                          _mm256_castsi256_ps(s0[q]));
                    a1 = _mm256_blendv_ps(a1, _mm256_add_ps(a1,
                                          _mm256_permutevar8x32_ps(v, hi_idx)),
                                          _mm256_castsi256_ps(s1[q]));
                }
                if (n0 == 8) _mm256_storeu_ps(dst, a0);
                else _mm256_maskstore_ps(dst, m0, a0);
                if (n1 == 8) _mm256_storeu_ps(dst + 8, a1);
                else _mm256_maskstore_ps(dst + 8, m1, a1);
#undef PTC_IC_V
            }
        }
    }
}

__attribute__((target("avx2"))) static void
ptc_col2im_ch_f32_avx2(float* xc, const float* col, ptrdiff_t ld, const ptc_ic_geo* g,
                       ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    const ptrdiff_t H = g->H, W = g->W, OW = g->OW, kh = g->kh, kw = g->kw;
    ptrdiff_t b, e, oh, j, lo, hi;
    for (b = 0; b < kh; b++)
        for (e = 0; e < kw; e++) {
            const float* s = col + ((c * kh + b) * kw + e) * ld;
            const ptrdiff_t off = e * g->dw - g->pw;
            ptc_ic_range(off, W, OW, &lo, &hi);
            if (hi <= lo) continue;
            for (oh = r0; oh < r1; oh++, s += OW) {
                const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;
                if (ih < 0 || ih >= H) continue;
                float* dst = xc + ih * W + off;
                for (j = lo; j + 8 <= hi; j += 8)
                    _mm256_storeu_ps(dst + j, _mm256_add_ps(_mm256_loadu_ps(dst + j),
                                                            _mm256_loadu_ps(s + j)));
                for (; j < hi; j++) dst[j] += s[j];
            }
        }
}

static int ptc_im2col_max = 2;     /* a testing knob: the highest level used (0: the Cython loops) */

/* 2 (AVX-512F), 1 (AVX2) or 0 (none: the caller's loops), at most ptc_im2col_max */
static int ptc_im2col_level(void) {
    static int level = -1;
    if (level < 0) {
        __builtin_cpu_init();
        level = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return level < ptc_im2col_max ? level : ptc_im2col_max;
}

/* the rows of channel c for output rows [r0, r1) of a 2-d convolution with
 * column stride 1 (the caller checks both); level from ptc_im2col_level() */
static void ptc_im2col_ch_f32(int level, const float* xc, float* col, ptrdiff_t ld,
                              const ptc_ic_geo* g, ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    if (level == 2) ptc_im2col_ch_f32_avx512(xc, col, ld, g, c, r0, r1);
    else ptc_im2col_ch_f32_avx2(xc, col, ld, g, c, r0, r1);
}

static void ptc_col2im_ch_f32(int level, float* xc, const float* col, ptrdiff_t ld,
                              const ptc_ic_geo* g, ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    if (g->sw == 2 && level == 2) ptc_col2im2_ch_f32_avx512(xc, col, ld, g, c, r0, r1);
    else if (g->sw == 2) ptc_col2im2_ch_f32_avx2(xc, col, ld, g, c, r0, r1);
    else if (level == 2) ptc_col2im_ch_f32_avx512(xc, col, ld, g, c, r0, r1);
    else ptc_col2im_ch_f32_avx2(xc, col, ld, g, c, r0, r1);
}

/* ---- col2im of small images held whole: moves of position vectors ------
   DCGAN's input gradients and transposed convolutions add 4x4..16x16
   position rows into 8x8..32x32 images (in ptc_col2im2's row scheme each
   kernel column of each row is a few floats' masked add: 26% of a 128 ->
   256 input gradient on Intel AVX-512).  When the image of one channel
   fits PTC_IC_PLANE floats, it is accumulated instead in vectors of VL
   floats: for kernel position (b, e), the column row's positions are read
   VL at a time (source block s) and each block's elements land, permuted,
   in some image vectors d -- one "move" (b e, s, d, lane index, lane mask)
   each, built once per geometry.  A (b, e) sends each image element at
   most one position (the map is injective), and the moves run in (b, e)
   order, so every element gets its contributions in the row scheme's
   order, from the same zeroed image: the same bits. */
#define PTC_IC_PLANE 256
#define PTC_IC_PLANE_NPOS 256

typedef struct {
    int be, s, d;          /* column row b * kw + e, source block, image vector */
    unsigned mask;         /* image lanes that receive */
    unsigned lmask;        /* valid positions of the source block */
    int idx[16];           /* image lane l takes source lane idx[l] */
} ptc_ic_move;

/* the moves of geometry g with VL-float vectors (16 or 8) into mv[0..cap);
   their count, or -1 when g does not fit (image or rows too large, too many
   moves) */
static int ptc_ic_plane_moves(const ptc_ic_geo* g, int VL, ptc_ic_move* mv, int cap) {
    const ptrdiff_t H = g->H, W = g->W, OH = g->OH, OW = g->OW, npos = OH * OW;
    const int nd = (int)((H * W + VL - 1) / VL), ns = (int)((npos + VL - 1) / VL);
    int be, s, d, n = 0, lane;
    int slot[PTC_IC_PLANE / 8];    /* move of image vector d for this (b e, s), or -1 */
    if (H * W > PTC_IC_PLANE || npos > PTC_IC_PLANE_NPOS || H * W <= 0 || npos <= 0) return -1;
    for (be = 0; be < (int)(g->kh * g->kw); be++) {
        const ptrdiff_t b = be / g->kw, e = be % g->kw;
        for (s = 0; s < ns; s++) {
            for (d = 0; d < nd; d++) slot[d] = -1;
            for (lane = 0; lane < VL && s * VL + lane < npos; lane++) {
                const ptrdiff_t p = (ptrdiff_t)s * VL + lane, oh = p / OW, ow = p % OW;
                const ptrdiff_t ih = oh * g->sh - g->ph + b * g->dh;
                const ptrdiff_t iw = ow * g->sw - g->pw + e * g->dw;
                ptrdiff_t dst;
                ptc_ic_move* m;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                dst = ih * W + iw;
                d = (int)(dst / VL);
                if (slot[d] < 0) {
                    if (n >= cap) return -1;
                    slot[d] = n;
                    m = mv + n++;
                    memset(m, 0, sizeof(*m));
                    m->be = be; m->s = s; m->d = d;
                    m->lmask = npos - (ptrdiff_t)s * VL >= VL ? (1u << VL) - 1u
                                                            : (1u << (npos - s * VL)) - 1u;
                }
                m = mv + slot[d];
                m->mask |= 1u << (dst % VL);
                m->idx[dst % VL] = lane;
            }
        }
    }
    return n;
}

/* channel c's image (H * W floats at xc, already zeroed or holding earlier
   sums) += its column rows, by the moves */
__attribute__((target("avx512f,avx512vl"))) static void
ptc_col2im_plane_f32_avx512(float* xc, const float* col, ptrdiff_t ld, ptrdiff_t c,
                            ptrdiff_t kk, ptrdiff_t plane, const ptc_ic_move* mv, int nmv) {
    __m512 acc[PTC_IC_PLANE / 16];
    const int nd = (int)((plane + 15) / 16);
    const float* rows = col + c * kk * ld;
    int d, i;
    for (d = 0; d < nd; d++) acc[d] = _mm512_maskz_loadu_ps(ptc_ic_mask(0, plane - 16 * d), xc + 16 * d);
    for (i = 0; i < nmv; i++) {
        const ptc_ic_move* m = mv + i;
        const __m512 v = _mm512_maskz_loadu_ps((__mmask16)m->lmask, rows + m->be * ld + 16 * m->s);
        const __m512 t = _mm512_permutexvar_ps(_mm512_loadu_si512(m->idx), v);
        acc[m->d] = _mm512_mask_add_ps(acc[m->d], (__mmask16)m->mask, acc[m->d], t);
    }
    for (d = 0; d < nd; d++) _mm512_mask_storeu_ps(xc + 16 * d, ptc_ic_mask(0, plane - 16 * d), acc[d]);
}

/* the same with 8-float vectors: the receiving lanes take acc + t by a blend
   (the others keep their bits), partial blocks by masked loads and stores */
__attribute__((target("avx2"))) static inline __m256i ptc_ic_bits8(unsigned bits) {
    const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), lane), lane);
}

__attribute__((target("avx2"))) static void
ptc_col2im_plane_f32_avx2(float* xc, const float* col, ptrdiff_t ld, ptrdiff_t c,
                          ptrdiff_t kk, ptrdiff_t plane, const ptc_ic_move* mv, int nmv) {
    __m256 acc[PTC_IC_PLANE / 8];
    const int nd = (int)((plane + 7) / 8);
    const float* rows = col + c * kk * ld;
    int d, i;
    for (d = 0; d < nd; d++) {
        const ptrdiff_t left = plane - 8 * d;
        acc[d] = _mm256_maskload_ps(xc + 8 * d, ptc_ic_bits8(left >= 8 ? 0xFFu : (1u << left) - 1u));
    }
    for (i = 0; i < nmv; i++) {
        const ptc_ic_move* m = mv + i;
        const __m256 v = m->lmask == 0xFFu ? _mm256_loadu_ps(rows + m->be * ld + 8 * m->s)
                         : _mm256_maskload_ps(rows + m->be * ld + 8 * m->s, ptc_ic_bits8(m->lmask));
        const __m256 t = _mm256_permutevar8x32_ps(v, _mm256_loadu_si256((const __m256i*)m->idx));
        acc[m->d] = _mm256_blendv_ps(acc[m->d], _mm256_add_ps(acc[m->d], t),
                                     _mm256_castsi256_ps(ptc_ic_bits8(m->mask)));
    }
    for (d = 0; d < nd; d++) {
        const ptrdiff_t left = plane - 8 * d;
        _mm256_maskstore_ps(xc + 8 * d, ptc_ic_bits8(left >= 8 ? 0xFFu : (1u << left) - 1u), acc[d]);
    }
}

/* the vector width of the plane col2im at ``level`` (2: 16, 1: 8) */
static int ptc_col2im_plane_vl(int level) { return level == 2 ? 16 : 8; }

static void ptc_col2im_plane_f32(int level, float* xc, const float* col, ptrdiff_t ld,
                                 ptrdiff_t c, ptrdiff_t kk, ptrdiff_t plane,
                                 const ptc_ic_move* mv, int nmv) {
    if (level == 2) ptc_col2im_plane_f32_avx512(xc, col, ld, c, kk, plane, mv, nmv);
    else ptc_col2im_plane_f32_avx2(xc, col, ld, c, kk, plane, mv, nmv);
}

/* the level ptc_im2col_ch_f32 (im2col) or ptc_col2im_ch_f32 (col2im) runs
   for column stride sw at CPU level ``level``: column stride 1 on both ISAs,
   col2im with column stride 2 on both (AVX-512 needs BMI2 too, else AVX2);
   0: the caller's loops */
static int ptc_im2col_level_for(int level, ptrdiff_t sw, int col2im) {
    static int bmi2 = -1;
    if (sw == 1) return level;
    if (sw != 2 || !col2im || level == 0) return 0;
    if (level == 1) return 1;
    if (bmi2 < 0) { __builtin_cpu_init(); bmi2 = __builtin_cpu_supports("bmi2") != 0; }
    return bmi2 ? 2 : 1;
}

#else
static int ptc_im2col_max = 0;
static int ptc_im2col_level(void) { return 0; }
static void ptc_im2col_ch_f32(int level, const float* xc, float* col, ptrdiff_t ld,
                              const ptc_ic_geo* g, ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    (void)level; (void)xc; (void)col; (void)ld; (void)g; (void)c; (void)r0; (void)r1;
}
static void ptc_col2im_ch_f32(int level, float* xc, const float* col, ptrdiff_t ld,
                              const ptc_ic_geo* g, ptrdiff_t c, ptrdiff_t r0, ptrdiff_t r1) {
    (void)level; (void)xc; (void)col; (void)ld; (void)g; (void)c; (void)r0; (void)r1;
}
static int ptc_im2col_level_for(int level, ptrdiff_t sw, int col2im) {
    (void)level; (void)sw; (void)col2im; return 0;
}
typedef struct { int be, s, d; unsigned mask, lmask; int idx[16]; } ptc_ic_move;
static int ptc_ic_plane_moves(const ptc_ic_geo* g, int VL, ptc_ic_move* mv, int cap) {
    (void)g; (void)VL; (void)mv; (void)cap; return -1;
}
static int ptc_col2im_plane_vl(int level) { (void)level; return 8; }
static void ptc_col2im_plane_f32(int level, float* xc, const float* col, ptrdiff_t ld,
                                 ptrdiff_t c, ptrdiff_t kk, ptrdiff_t plane,
                                 const ptc_ic_move* mv, int nmv) {
    (void)level; (void)xc; (void)col; (void)ld; (void)c; (void)kk; (void)plane; (void)mv;
    (void)nmv;
}
#endif

#endif
