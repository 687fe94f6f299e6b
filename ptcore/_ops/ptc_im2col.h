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
#include <string.h>

typedef struct {
    ptrdiff_t H, W, OH, OW, kh, kw, sh, ph, pw, dh, dw;
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
__attribute__((target("avx512f"))) static inline __mmask16 ptc_ic_mask(ptrdiff_t a, ptrdiff_t b) {
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

PTC_IC_IM2COL(ptc_im2col_ch_f32_avx512, "avx512f",
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
__attribute__((target("avx512f"))) static void
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
        level = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
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
    if (level == 2) ptc_col2im_ch_f32_avx512(xc, col, ld, g, c, r0, r1);
    else ptc_col2im_ch_f32_avx2(xc, col, ld, g, c, r0, r1);
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
#endif

#endif
