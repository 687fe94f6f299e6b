/* Direct float32 convolution forward for few output channels (issue 22:
   LeNet's 1->6 and 6->16 layers, DCGAN's 3->64 discriminator input), used
   by ptcore._ops.kernels._conv.  The output channels of one position are the vector
   lanes (1, 2 or 4 vectors: up to 16/32/64 channels with AVX-512F, 8/16/32
   with AVX2+FMA), a tile of TW output positions along a row holds NV * TW
   accumulators, and every (input channel, kernel row, kernel column) step
   loads the packed weight vectors once and broadcasts one input pixel per
   position: no column matrix (im2col wrote C*kh*kw floats per output
   position, with rows of 10-28 floats, and dominated these layers).

   The input of a sample is first copied into a zero-padded plane per
   channel, so the inner loop has no bounds checks.  Every output element
   is one FMA chain over (c, a, e) in increasing order, whatever tile or
   thread computes it.

   The ISA is ptc_sgemm's choice (ptc_sgemm_isa(): the CPU's best, or the one
   PTCORE_SGEMM / _set_sgemm_isa forces); ptc_conv_direct_lanes() is 0 where
   there is none (the caller keeps the column-matrix path). */
#ifndef PTC_CONV_DIRECT_H
#define PTC_CONV_DIRECT_H
#include <stddef.h>
#include <string.h>
#include "ptc_sgemm.h"
#if defined(__SSE2__)
#include <xmmintrin.h>
#include <emmintrin.h>
#endif

typedef struct {
    ptrdiff_t C, Hp, Wp;             /* padded input plane: C x Hp x Wp, covering every
                                        pixel (oh*sh + a*dh, ow*sw + e*dw) read */
    ptrdiff_t OC, OH, OW;            /* output: OC x OH x OW */
    ptrdiff_t kh, kw, sh, sw, dh, dw;
    ptrdiff_t OCp;                   /* channels per packed weight row (lanes * vectors) */
} ptc_cd_geo;

/* Wp[((c*kh + a)*kw + e)*OCp + o] = W[o, c, a, e] (zero for o >= OC) */
static void ptc_cd_pack_w(const float* W, const ptc_cd_geo* g, float* Wp) {
    ptrdiff_t K = g->C * g->kh * g->kw, p, o;
    for (p = 0; p < K; p++)
        for (o = 0; o < g->OCp; o++)
            Wp[p * g->OCp + o] = o < g->OC ? W[o * K + p] : 0.0f;
}

/* xp (C, Hp, Wp) = x (C, H, W) placed at (ph, pw), zeros around it */
static void ptc_cd_pad(const float* x, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t ph,
                       ptrdiff_t pw, const ptc_cd_geo* g, float* xp) {
    ptrdiff_t c, h;
    memset(xp, 0, (size_t)(C * g->Hp * g->Wp) * sizeof(float));
    for (c = 0; c < C; c++)
        for (h = 0; h < H; h++)
            memcpy(xp + (c * g->Hp + h + ph) * g->Wp + pw, x + (c * H + h) * W,
                   (size_t)W * sizeof(float));
}

/* geometry, padded copy and weight packing of the many-channel kernels
   below (plain C) */
typedef struct {
    ptrdiff_t C, Hp, Wq, sw;         /* padded input: C x Hp rows of sw phases x Wq floats */
    ptrdiff_t OC, OH, OW, kh, kw, sh, dh;
    const ptrdiff_t* koff;           /* kh*kw: tap (a, e) of a window at koff[a*kw + e] from
                                        its first pixel: a*dh*sw*Wq + ((e*dw) % sw)*Wq + (e*dw)/sw */
    ptrdiff_t ys_c, ys_h, ys_w;      /* output element (o, oh, ow) at y[o*ys_c + oh*ys_h + ow*ys_w]
                                        (a convolution's output: OH*OW, OW, 1) */
} ptc_cdw_geo;

/* xp (C, Hp, sw, Wq): the padded plane of x (C, H, W) at (ph, pw), rows split
   into sw phases; zeros elsewhere (written only when ``borders``: a plane
   that held another sample of this geometry has them already) */
/* ev[m] = x[2m] (m < ceil(W/2)), od[m] = x[2m+1] (m < W/2) */
static void ptc_cdw_deinterleave2(const float* x, ptrdiff_t W, float* ev, float* od) {
    ptrdiff_t m = 0;
#if defined(__SSE2__)
    for (; 2 * m + 8 <= W; m += 4) {
        __m128 a = _mm_loadu_ps(x + 2 * m), b = _mm_loadu_ps(x + 2 * m + 4);
        _mm_storeu_ps(ev + m, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm_storeu_ps(od + m, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
#endif
    for (; 2 * m < W; m++) {
        ev[m] = x[2 * m];
        if (2 * m + 1 < W) od[m] = x[2 * m + 1];
    }
}

static void ptc_cdw_pad(const float* x, ptrdiff_t H, ptrdiff_t W, ptrdiff_t ph, ptrdiff_t pw,
                        const ptc_cdw_geo* g, float* xp, int borders) {
    ptrdiff_t c, h, p, i, R = g->sw * g->Wq;
    /* phase p holds the padded columns p, p + sw, ...: d[i] = src[i*sw + p]
       for i in [i0[p], i0[p] + n[p]), the columns in [pw, pw + W) */
    ptrdiff_t i0[16], n[16], np = g->sw < 16 ? g->sw : 16;
    for (p = 0; p < np; p++) {
        ptrdiff_t q = p;
        if (q < pw) q += (pw - q + g->sw - 1) / g->sw * g->sw;
        i0[p] = q / g->sw;
        n[p] = q < pw + W ? (pw + W - q + g->sw - 1) / g->sw : 0;
    }
    /* the zeros around the image: written when asked (a plane's first
       sample), kept by the later samples of the same geometry, which write
       only the image pixels */
    if (borders) memset(xp, 0, (size_t)(g->C * g->Hp * R) * sizeof(float));
    for (c = 0; c < g->C; c++) {
        for (h = 0; h < H; h++) {
            const float* src = x + (c * H + h) * W - pw;   /* src[q]: padded column q */
            float* dst = xp + (c * g->Hp + h + ph) * R;
            if (g->sw == 1) {
                memcpy(dst + pw, src + pw, (size_t)W * sizeof(float));
            } else if (g->sw == 2) {
                /* x[2m] is padded column 2m + pw: phase pw % 2, index m + pw/2;
                   x[2m+1]: phase (pw+1) % 2, index m + (pw+1)/2 */
                ptc_cdw_deinterleave2(src + pw, W, dst + (pw % 2) * g->Wq + pw / 2,
                                      dst + ((pw + 1) % 2) * g->Wq + (pw + 1) / 2);
            } else {
                for (p = 0; p < g->sw; p++) {
                    float* d = dst + p * g->Wq;
                    ptrdiff_t a = p < 16 ? i0[p] : 0, e = p < 16 ? i0[p] + n[p] : g->Wq;
                    for (i = a; i < e; i++) {
                        ptrdiff_t q = i * g->sw + p;
                        if (q >= pw && q < pw + W) d[i] = src[q];
                    }
                }
            }
        }
    }
}

/* dst[c*ldd + r] = src[r*lds + c] for rows r0 <= r < r1, columns c0 <= c < c1
   of src: 4x4 blocks (four 16-byte reads, four 16-byte writes), scalar edges */
static void ptc_transpose_block(const float* src, ptrdiff_t lds, ptrdiff_t r0, ptrdiff_t r1,
                                ptrdiff_t c0, ptrdiff_t c1, float* dst, ptrdiff_t ldd) {
    ptrdiff_t r = r0, c;
#if defined(__SSE2__)
    for (; r + 4 <= r1; r += 4) {
        const float* s = src + r * lds;
        for (c = c0; c + 4 <= c1; c += 4) {
            __m128 x0 = _mm_loadu_ps(s + c), x1 = _mm_loadu_ps(s + lds + c);
            __m128 x2 = _mm_loadu_ps(s + 2 * lds + c), x3 = _mm_loadu_ps(s + 3 * lds + c);
            _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
            _mm_storeu_ps(dst + c * ldd + r, x0);
            _mm_storeu_ps(dst + (c + 1) * ldd + r, x1);
            _mm_storeu_ps(dst + (c + 2) * ldd + r, x2);
            _mm_storeu_ps(dst + (c + 3) * ldd + r, x3);
        }
        for (; c < c1; c++) {
            dst[c * ldd + r] = s[c];
            dst[c * ldd + r + 1] = s[lds + c];
            dst[c * ldd + r + 2] = s[2 * lds + c];
            dst[c * ldd + r + 3] = s[3 * lds + c];
        }
    }
#endif
    for (; r < r1; r++)
        for (c = c0; c < c1; c++) dst[c * ldd + r] = src[r * lds + c];
}

/* the weights of channels [o0, o0 + nb) as (C*kh*kw, nb), zero columns
   past OC */
static void ptc_cdw_pack_w(const float* W, ptrdiff_t OC, ptrdiff_t K, ptrdiff_t o0,
                           ptrdiff_t nb, float* Wp) {
    ptrdiff_t p0, p, o, pe, nr = OC - o0 < nb ? OC - o0 : nb;   /* nr real channels */
    for (p0 = 0; p0 < K; p0 += 64) {       /* 64 rows of Wp (64*nb floats) stay in L1 */
        pe = p0 + 64 < K ? p0 + 64 : K;
        ptc_transpose_block(W + o0 * K, K, 0, nr, p0, pe, Wp, nb);
        for (o = nr; o < nb; o++)
            for (p = p0; p < pe; p++) Wp[p * nb + o] = 0.0f;
    }
}

typedef void (*ptc_cdw_tile_fn)(const float*, const float*, const float*, float*, ptrdiff_t,
                                ptrdiff_t, ptrdiff_t, const ptc_cdw_geo*);

/* The input gradient (and a transposed convolution's forward) of a
   convolution with stride (sh, sw) splits into sh*sw phases: the input
   pixels (h, w) with (h + ph) % sh == r and (w + pw) % sw == q receive only
   the kernel taps a = r + sh*j, e = q + sw*k, from the output-gradient
   pixel (i - j, l - k) where h = i*sh + r - ph, w = l*sw + q - pw.  Each
   phase is a stride-1 convolution of the output gradient (OC channels) with
   the flipped Jh x Jw sub-kernel, computed by the same tile kernels.  Its
   weights for the input channels [c0, c0 + nb) as (OC*Jh*Jw, nb), zero
   columns past C: Wp[((o*Jh + j')*Jw + k')*nb + cc] =
   W[o, c0 + cc, r + sh*(Jh-1-j'), q + sw*(Jw-1-k')] (W is (OC, C, kh, kw)). */
static void ptc_cdw_pack_w_phase(const float* W, ptrdiff_t OC, ptrdiff_t C, ptrdiff_t kh,
                                 ptrdiff_t kw, ptrdiff_t r, ptrdiff_t q, ptrdiff_t sh,
                                 ptrdiff_t sw, ptrdiff_t Jh, ptrdiff_t Jw, ptrdiff_t c0,
                                 ptrdiff_t nb, float* Wp) {
    ptrdiff_t o, j, k, cc, nr = C - c0 < nb ? C - c0 : nb;
    for (o = 0; o < OC; o++)
        for (j = 0; j < Jh; j++)
            for (k = 0; k < Jw; k++) {
                const float* src = W + ((o * C + c0) * kh + r + sh * (Jh - 1 - j)) * kw
                                   + q + sw * (Jw - 1 - k);
                float* dst = Wp + ((o * Jh + j) * Jw + k) * nb;
                for (cc = 0; cc < nr; cc++) dst[cc] = src[cc * kh * kw];
                for (; cc < nb; cc++) dst[cc] = 0.0f;
            }
}

#if defined(__GNUC__) && defined(__x86_64__)

#include <immintrin.h>

/* One output row oh of one sample: y (OC, OH*OW) row oh (+ bias), from the
   padded input xp and the packed weights.  NV vectors of VL lanes per
   position, TW positions per tile (NV * TW accumulators in registers). */
#define PTC_CD_ROW(NAME, TARGET, VT, VL, NV, TW, SETZERO, LOADU, STOREU, SET1, FMADD)      \
__attribute__((target(TARGET))) static void                                             \
NAME(const float* xp, const float* Wp, const float* bias, float* y, ptrdiff_t oh,         \
     const ptc_cd_geo* g) {                                                              \
    ptrdiff_t L = g->OH * g->OW, ow0, c, a, e, o;                                        \
    int t, v;                                                                            \
    for (ow0 = 0; ow0 < g->OW; ow0 += TW) {                                              \
        int tw = g->OW - ow0 < TW ? (int)(g->OW - ow0) : TW;                             \
        VT acc[NV][TW];                                                                  \
        float out[TW][NV * VL];                                                          \
        const float* wq = Wp;                                                            \
        _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                                \
            _Pragma("GCC unroll 16") for (t = 0; t < TW; t++) acc[v][t] = SETZERO();     \
        for (c = 0; c < g->C; c++)                                                       \
            for (a = 0; a < g->kh; a++) {                                                \
                const float* row = xp + (c * g->Hp + oh * g->sh + a * g->dh) * g->Wp     \
                                   + ow0 * g->sw;                                        \
                for (e = 0; e < g->kw; e++, wq += g->OCp) {                              \
                    const float* px = row + e * g->dw;                                   \
                    VT w[NV];                                                            \
                    _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                    \
                        w[v] = LOADU(wq + v * VL);                                       \
                    _Pragma("GCC unroll 16") for (t = 0; t < TW; t++) {                  \
                        if (t < tw) {                                                    \
                            VT xv = SET1(px[t * g->sw]);                                 \
                            _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)            \
                                acc[v][t] = FMADD(w[v], xv, acc[v][t]);                  \
                        }                                                                \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
        _Pragma("GCC unroll 16") for (t = 0; t < TW; t++)                                \
            _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                            \
                STOREU(&out[t][v * VL], acc[v][t]);                                      \
        for (o = 0; o < g->OC; o++) {                                                    \
            float b = bias ? bias[o] : 0.0f;                                             \
            float* dst = y + o * L + oh * g->OW + ow0;                                   \
            for (t = 0; t < tw; t++) dst[t] = out[t][o] + b;                             \
        }                                                                                \
    }                                                                                    \
}

#define PTC_CD_512(NAME, NV, TW)                                                         \
    PTC_CD_ROW(NAME, "avx512f,avx512vl", __m512, 16, NV, TW, _mm512_setzero_ps, _mm512_loadu_ps,  \
               _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps)
#define PTC_CD_256(NAME, NV, TW)                                                         \
    PTC_CD_ROW(NAME, "avx2,fma", __m256, 8, NV, TW, _mm256_setzero_ps, _mm256_loadu_ps,  \
               _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps)

PTC_CD_512(ptc_cd512_v1, 1, 12)
PTC_CD_512(ptc_cd512_v2, 2, 12)
PTC_CD_512(ptc_cd512_v4, 4, 6)
PTC_CD_256(ptc_cd256_v1, 1, 12)
PTC_CD_256(ptc_cd256_v2, 2, 6)
PTC_CD_256(ptc_cd256_v4, 4, 3)

typedef void (*ptc_cd_row_fn)(const float*, const float*, const float*, float*, ptrdiff_t,
                              const ptc_cd_geo*);

/* lanes per vector on this CPU (0: no direct kernels) */
static int ptc_conv_direct_lanes(void) {
    int isa = ptc_sgemm_isa();
    return isa == 2 ? 16 : (isa == 1 ? 8 : 0);
}

/* the row kernel for OC output channels (NULL: more than 4 vectors); sets
   g->OCp */
static ptc_cd_row_fn ptc_conv_direct_kernel(ptc_cd_geo* g) {
    int VL = ptc_conv_direct_lanes();
    ptrdiff_t nv;
    if (VL == 0) return NULL;
    nv = (g->OC + VL - 1) / VL;
    if (nv == 3) nv = 4;
    if (nv > 4) return NULL;
    g->OCp = nv * VL;
    if (VL == 16) return nv == 1 ? ptc_cd512_v1 : (nv == 2 ? ptc_cd512_v2 : ptc_cd512_v4);
    return nv == 1 ? ptc_cd256_v1 : (nv == 2 ? ptc_cd256_v2 : ptc_cd256_v4);
}

/* ---- Many output channels (DCGAN's 64->128 and 128->256 discriminator
   layers, VGG/ResNet-style widths): the channels in blocks of NV vectors,
   a tile of TR output rows x TW output columns per call, NV * TR * TW
   accumulators.  Per (c, a, e) step the tile loads NV packed weight vectors
   (the block's weights, C*kh*kw*NV*VL floats, stay in L2 while the tiles of
   a sample sweep them) and broadcasts TR * TW input pixels.

   The padded input stores each row as sw phases (columns p, p + sw, ... for
   p < sw), so the TW pixels a kernel column e reads for consecutive output
   columns are consecutive floats whatever the stride: the kernel addresses
   them with constant displacements from one pointer per tile row. ---- */

/* y (noc channels of the block) at output rows oh0.. oh0+TR-1, columns
   ow0.. ow0+TW-1 (+ bias) from the padded plane and the block's weights */
#define PTC_CDW_TILE(NAME, TARGET, VT, VL, NV, TR, TW, SETZERO, LOADU, STOREU, SET1, FMADD) \
__attribute__((target(TARGET))) static void                                             \
NAME(const float* xp, const float* wb, const float* bias, float* y, ptrdiff_t noc,        \
     ptrdiff_t oh0, ptrdiff_t ow0, const ptc_cdw_geo* g) {                               \
    ptrdiff_t R = g->sw * g->Wq, rs = g->sh * R, KK = g->kh * g->kw, c, k, o;             \
    int t, v;                                                                            \
    VT acc[NV][TR * TW];                                                                 \
    float out[TR * TW][NV * VL];                                                         \
    const float* wq = wb;                                                                \
    _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                                    \
        _Pragma("GCC unroll 16") for (t = 0; t < TR * TW; t++) acc[v][t] = SETZERO();    \
    for (c = 0; c < g->C; c++) {                                                         \
        const float* base = xp + (c * g->Hp + oh0 * g->sh) * R + ow0;                    \
        for (k = 0; k < KK; k++, wq += NV * VL) {                                        \
            const float* px = base + g->koff[k];                                         \
            VT w[NV];                                                                    \
            _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                            \
                w[v] = LOADU(wq + v * VL);                                               \
            _Pragma("GCC unroll 16") for (t = 0; t < TR * TW; t++) {                     \
                VT xv = SET1(px[(t / TW) * rs + t % TW]);                                \
                _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                        \
                    acc[v][t] = FMADD(w[v], xv, acc[v][t]);                              \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    _Pragma("GCC unroll 16") for (t = 0; t < TR * TW; t++)                               \
        _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                                \
            STOREU(&out[t][v * VL], acc[v][t]);                                          \
    for (o = 0; o < noc; o++) {                                                          \
        float b = bias ? bias[o] : 0.0f;                                                 \
        float* yo = y + o * g->ys_c + oh0 * g->ys_h + ow0 * g->ys_w;                     \
        for (t = 0; t < TR * TW; t++)                                                    \
            yo[(t / TW) * g->ys_h + (t % TW) * g->ys_w] = out[t][o] + b;                 \
    }                                                                                    \
}

#define PTC_CDW_512(NAME, NV, TR, TW)                                                    \
    PTC_CDW_TILE(NAME, "avx512f,avx512vl", __m512, 16, NV, TR, TW, _mm512_setzero_ps,    \
                 _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps)
#define PTC_CDW_256(NAME, NV, TR, TW)                                                    \
    PTC_CDW_TILE(NAME, "avx2,fma", __m256, 8, NV, TR, TW, _mm256_setzero_ps,             \
                 _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps)

/* AVX-512: up to 3 vectors (48 channels) x 8 positions (24 accumulators);
   AVX2: up to 2 vectors (16 channels) x 6 positions (12 of 16 registers) */
#define PTC_CDW_512_NV(NV)                                                               \
    PTC_CDW_512(ptc_cdw512_##NV##_1_1, NV, 1, 1) PTC_CDW_512(ptc_cdw512_##NV##_1_2, NV, 1, 2) \
    PTC_CDW_512(ptc_cdw512_##NV##_1_3, NV, 1, 3) PTC_CDW_512(ptc_cdw512_##NV##_1_4, NV, 1, 4) \
    PTC_CDW_512(ptc_cdw512_##NV##_1_5, NV, 1, 5) PTC_CDW_512(ptc_cdw512_##NV##_1_6, NV, 1, 6) \
    PTC_CDW_512(ptc_cdw512_##NV##_1_7, NV, 1, 7) PTC_CDW_512(ptc_cdw512_##NV##_1_8, NV, 1, 8) \
    PTC_CDW_512(ptc_cdw512_##NV##_2_1, NV, 2, 1) PTC_CDW_512(ptc_cdw512_##NV##_2_2, NV, 2, 2) \
    PTC_CDW_512(ptc_cdw512_##NV##_2_3, NV, 2, 3) PTC_CDW_512(ptc_cdw512_##NV##_2_4, NV, 2, 4)
#define PTC_CDW_256_NV(NV)                                                               \
    PTC_CDW_256(ptc_cdw256_##NV##_1_1, NV, 1, 1) PTC_CDW_256(ptc_cdw256_##NV##_1_2, NV, 1, 2) \
    PTC_CDW_256(ptc_cdw256_##NV##_1_3, NV, 1, 3) PTC_CDW_256(ptc_cdw256_##NV##_1_4, NV, 1, 4) \
    PTC_CDW_256(ptc_cdw256_##NV##_1_5, NV, 1, 5) PTC_CDW_256(ptc_cdw256_##NV##_1_6, NV, 1, 6) \
    PTC_CDW_256(ptc_cdw256_##NV##_2_1, NV, 2, 1) PTC_CDW_256(ptc_cdw256_##NV##_2_2, NV, 2, 2) \
    PTC_CDW_256(ptc_cdw256_##NV##_2_3, NV, 2, 3)

PTC_CDW_512_NV(1)
PTC_CDW_512_NV(2)
PTC_CDW_512_NV(3)
PTC_CDW_256_NV(1)
PTC_CDW_256_NV(2)

#define PTC_CDW_ROW512(NV)                                                               \
    {ptc_cdw512_##NV##_1_1, ptc_cdw512_##NV##_1_2, ptc_cdw512_##NV##_1_3,                \
     ptc_cdw512_##NV##_1_4, ptc_cdw512_##NV##_1_5, ptc_cdw512_##NV##_1_6,                \
     ptc_cdw512_##NV##_1_7, ptc_cdw512_##NV##_1_8},                                      \
    {ptc_cdw512_##NV##_2_1, ptc_cdw512_##NV##_2_2, ptc_cdw512_##NV##_2_3,                \
     ptc_cdw512_##NV##_2_4, NULL, NULL, NULL, NULL}
#define PTC_CDW_ROW256(NV)                                                               \
    {ptc_cdw256_##NV##_1_1, ptc_cdw256_##NV##_1_2, ptc_cdw256_##NV##_1_3,                \
     ptc_cdw256_##NV##_1_4, ptc_cdw256_##NV##_1_5, ptc_cdw256_##NV##_1_6, NULL, NULL},   \
    {ptc_cdw256_##NV##_2_1, ptc_cdw256_##NV##_2_2, ptc_cdw256_##NV##_2_3, NULL, NULL,    \
     NULL, NULL, NULL}

static const ptc_cdw_tile_fn ptc_cdw512_tab[3][2][8] = {
    {PTC_CDW_ROW512(1)}, {PTC_CDW_ROW512(2)}, {PTC_CDW_ROW512(3)}};
static const ptc_cdw_tile_fn ptc_cdw256_tab[2][2][8] = {
    {PTC_CDW_ROW256(1)}, {PTC_CDW_ROW256(2)}};

/* vectors per full channel block (0: no kernels on this CPU) */
static int ptc_cdw_max_nv(void) {
    int isa = ptc_sgemm_isa();
    return isa == 2 ? 3 : (isa == 1 ? 2 : 0);
}

/* widest tile row on this CPU for one row (tr 1) and two rows (tr 2) */
static int ptc_cdw_max_tw(int tr) {
    int isa = ptc_sgemm_isa();
    if (isa == 2) return tr == 1 ? 8 : 4;
    return tr == 1 ? 6 : 3;
}

/* the tile kernel for nv vectors, tr rows (1, 2), tw columns (1.. max) */
static ptc_cdw_tile_fn ptc_cdw_kernel(int nv, int tr, int tw) {
    int isa = ptc_sgemm_isa();
    if (nv < 1 || tr < 1 || tr > 2 || tw < 1 || tw > ptc_cdw_max_tw(tr)) return NULL;
    if (isa == 2 && nv <= 3) return ptc_cdw512_tab[nv - 1][tr - 1][tw - 1];
    if (isa == 1 && nv <= 2) return ptc_cdw256_tab[nv - 1][tr - 1][tw - 1];
    return NULL;
}

#else
#include <stddef.h>
static int ptc_cdw_max_nv(void) { return 0; }
static int ptc_cdw_max_tw(int tr) { (void)tr; return 0; }
static ptc_cdw_tile_fn ptc_cdw_kernel(int nv, int tr, int tw) {
    (void)nv; (void)tr; (void)tw; return NULL;
}
typedef void (*ptc_cd_row_fn)(const float*, const float*, const float*, float*, ptrdiff_t,
                              const ptc_cd_geo*);
static int ptc_conv_direct_lanes(void) { return 0; }
static ptc_cd_row_fn ptc_conv_direct_kernel(ptc_cd_geo* g) { (void)g; return NULL; }
#endif
#endif
