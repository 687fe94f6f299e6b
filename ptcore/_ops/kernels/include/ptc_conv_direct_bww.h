/* Direct float32 convolution weight gradient on the padded, phase-split
   input planes of ptc_conv_direct.h (issue 22: DCGAN's 3->64 and 64->128
   discriminator layers, whose column-matrix products lost to oneDNN).

   gW[o, c, a, e] = sum over samples n and output positions p of
   gy[n, o, p] * x[n, c, tap (a, e) of window p].  A tile holds NV vectors
   of output channels (lanes) x TW consecutive taps (c, a, e) flattened:
   per position it loads the NV channel vectors of the transposed output
   gradient (position-major, channels padded to whole vectors) and
   broadcasts one input pixel per tap, each at its own offset in the plane
   (kept in registers).  The accumulators live in a (taps, padded channels)
   buffer between calls, so every gW element is one FMA chain over the
   samples and positions in increasing order, whatever the tiling or the
   thread that computes it. */
#ifndef PTC_CONV_DIRECT_BWW_H
#define PTC_CONV_DIRECT_BWW_H
#include <stddef.h>
#include <string.h>
#include "ptc_conv_direct.h"

/* gT (L, ldg) = gy (OC, L)^T, zero columns OC.. ldg-1 */
static void ptc_cdw_transpose_gy(const float* gy, ptrdiff_t OC, ptrdiff_t L, ptrdiff_t ldg,
                                 float* gT) {
    ptrdiff_t p, p0, pe;
    for (p0 = 0; p0 < L; p0 += 64) {
        pe = p0 + 64 < L ? p0 + 64 : L;
        for (p = p0; p < pe; p++) memset(gT + p * ldg + OC, 0, (size_t)(ldg - OC) * sizeof(float));
        ptc_transpose_block(gy, L, 0, OC, p0, pe, gT, ldg);
    }
}

/* columns k0.. k1-1 of gw (OC, K) = rows k0.. k1-1 of acc (K, lda)^T, in
   blocks of 64 taps x 8 channels: a block writes 8 rows of gw (whole cache
   lines); 64 taps x all channels per block, as before, wrote up to 256 gw
   rows K floats apart (the same L1 sets) and ran at 1.6 ns a float, these
   at 0.23 (Zen 4) */
static void ptc_cdw_store_gw(const float* acc, ptrdiff_t lda, ptrdiff_t k0, ptrdiff_t k1,
                             ptrdiff_t OC, float* gw, ptrdiff_t K) {
    ptrdiff_t k, ke, o;
    for (k = k0; k < k1; k += 64) {
        ke = k + 64 < k1 ? k + 64 : k1;
        for (o = 0; o < OC; o += 8)
            ptc_transpose_block(acc, lda, k, ke, o, o + 8 < OC ? o + 8 : OC, gw, K);
    }
}

/* acc (TW taps, NV vectors at lda) += (= when ``first``) the sum over ns
   samples (planes xp + s*xs, transposed gradients gT + s*gs) and their L
   positions (pos[p]: the position's first pixel in the plane) */
typedef void (*ptc_cdw_bww_fn)(const float*, ptrdiff_t, const float*, ptrdiff_t, ptrdiff_t,
                               ptrdiff_t, const ptrdiff_t*, ptrdiff_t, const ptrdiff_t*, float*,
                               ptrdiff_t, int);

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

#define PTC_CDW_BWW(NAME, TARGET, VT, VL, NV, TW, SETZERO, LOADU, STOREU, SET1, FMADD)     \
__attribute__((target(TARGET))) static void                                             \
NAME(const float* xp, ptrdiff_t xs, const float* gT, ptrdiff_t gs, ptrdiff_t ldg,         \
     ptrdiff_t ns, const ptrdiff_t* pos, ptrdiff_t L, const ptrdiff_t* kof, float* acc,   \
     ptrdiff_t lda, int first) {                                                         \
    ptrdiff_t k[TW], s, p;                                                               \
    int t, v;                                                                            \
    VT a[NV][TW];                                                                        \
    _Pragma("GCC unroll 16") for (t = 0; t < TW; t++) k[t] = kof[t];                     \
    _Pragma("GCC unroll 16") for (t = 0; t < TW; t++)                                    \
        _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                                \
            a[v][t] = first ? SETZERO() : LOADU(acc + t * lda + v * VL);                 \
    for (s = 0; s < ns; s++) {                                                           \
        const float* xb = xp + s * xs;                                                   \
        const float* gq = gT + s * gs;                                                   \
        for (p = 0; p < L; p++, gq += ldg) {                                             \
            const float* px = xb + pos[p];                                               \
            VT w[NV];                                                                    \
            _Pragma("GCC unroll 16") for (v = 0; v < NV; v++) w[v] = LOADU(gq + v * VL);  \
            _Pragma("GCC unroll 16") for (t = 0; t < TW; t++) {                          \
                VT xv = SET1(px[k[t]]);                                                  \
                _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                        \
                    a[v][t] = FMADD(w[v], xv, a[v][t]);                                  \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    _Pragma("GCC unroll 16") for (t = 0; t < TW; t++)                                    \
        _Pragma("GCC unroll 16") for (v = 0; v < NV; v++)                                \
            STOREU(acc + t * lda + v * VL, a[v][t]);                                     \
}

#define PTC_CDW_BWW_512(NAME, NV, TW)                                                    \
    PTC_CDW_BWW(NAME, "avx512f,avx512vl", __m512, 16, NV, TW, _mm512_setzero_ps,         \
                _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps)
#define PTC_CDW_BWW_256(NAME, NV, TW)                                                    \
    PTC_CDW_BWW(NAME, "avx2,fma", __m256, 8, NV, TW, _mm256_setzero_ps, _mm256_loadu_ps, \
                _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps)

/* AVX-512: up to 3 vectors x 8 taps; AVX2: up to 2 vectors x 6 taps */
#define PTC_CDW_BWW_512_NV(NV)                                                           \
    PTC_CDW_BWW_512(ptc_cdwb512_##NV##_1, NV, 1) PTC_CDW_BWW_512(ptc_cdwb512_##NV##_2, NV, 2) \
    PTC_CDW_BWW_512(ptc_cdwb512_##NV##_3, NV, 3) PTC_CDW_BWW_512(ptc_cdwb512_##NV##_4, NV, 4) \
    PTC_CDW_BWW_512(ptc_cdwb512_##NV##_5, NV, 5) PTC_CDW_BWW_512(ptc_cdwb512_##NV##_6, NV, 6) \
    PTC_CDW_BWW_512(ptc_cdwb512_##NV##_7, NV, 7) PTC_CDW_BWW_512(ptc_cdwb512_##NV##_8, NV, 8)
#define PTC_CDW_BWW_256_NV(NV)                                                           \
    PTC_CDW_BWW_256(ptc_cdwb256_##NV##_1, NV, 1) PTC_CDW_BWW_256(ptc_cdwb256_##NV##_2, NV, 2) \
    PTC_CDW_BWW_256(ptc_cdwb256_##NV##_3, NV, 3) PTC_CDW_BWW_256(ptc_cdwb256_##NV##_4, NV, 4) \
    PTC_CDW_BWW_256(ptc_cdwb256_##NV##_5, NV, 5) PTC_CDW_BWW_256(ptc_cdwb256_##NV##_6, NV, 6)

PTC_CDW_BWW_512_NV(1)
PTC_CDW_BWW_512_NV(2)
PTC_CDW_BWW_512_NV(3)
PTC_CDW_BWW_256_NV(1)
PTC_CDW_BWW_256_NV(2)

#define PTC_CDW_BWW_ROW512(NV)                                                           \
    {ptc_cdwb512_##NV##_1, ptc_cdwb512_##NV##_2, ptc_cdwb512_##NV##_3, ptc_cdwb512_##NV##_4, \
     ptc_cdwb512_##NV##_5, ptc_cdwb512_##NV##_6, ptc_cdwb512_##NV##_7, ptc_cdwb512_##NV##_8}
#define PTC_CDW_BWW_ROW256(NV)                                                           \
    {ptc_cdwb256_##NV##_1, ptc_cdwb256_##NV##_2, ptc_cdwb256_##NV##_3, ptc_cdwb256_##NV##_4, \
     ptc_cdwb256_##NV##_5, ptc_cdwb256_##NV##_6, NULL, NULL}

static const ptc_cdw_bww_fn ptc_cdwb512_tab[3][8] = {
    PTC_CDW_BWW_ROW512(1), PTC_CDW_BWW_ROW512(2), PTC_CDW_BWW_ROW512(3)};
static const ptc_cdw_bww_fn ptc_cdwb256_tab[2][8] = {
    PTC_CDW_BWW_ROW256(1), PTC_CDW_BWW_ROW256(2)};

/* the weight-gradient kernel for nv vectors x tw taps (tw up to
   ptc_cdw_max_tw(1)); NULL where there is none */
static ptc_cdw_bww_fn ptc_cdw_bww_kernel(int nv, int tw) {
    int isa = ptc_sgemm_isa();
    if (nv < 1 || tw < 1 || tw > ptc_cdw_max_tw(1)) return NULL;
    if (isa == 2 && nv <= 3) return ptc_cdwb512_tab[nv - 1][tw - 1];
    if (isa == 1 && nv <= 2) return ptc_cdwb256_tab[nv - 1][tw - 1];
    return NULL;
}

#else
static ptc_cdw_bww_fn ptc_cdw_bww_kernel(int nv, int tw) {
    (void)nv; (void)tw; return NULL;
}
#endif
#endif
