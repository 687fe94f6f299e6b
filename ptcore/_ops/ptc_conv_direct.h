/* Direct float32 convolution forward for few output channels (issue 22:
   LeNet's 1->6 and 6->16 layers, DCGAN's 3->64 discriminator input), used
   by ptcore._ops._conv.  The output channels of one position are the vector
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

#else
#include <stddef.h>
typedef void (*ptc_cd_row_fn)(const float*, const float*, const float*, float*, ptrdiff_t,
                              const ptc_cd_geo*);
static int ptc_conv_direct_lanes(void) { return 0; }
static ptc_cd_row_fn ptc_conv_direct_kernel(ptc_cd_geo* g) { (void)g; return NULL; }
#endif
#endif
