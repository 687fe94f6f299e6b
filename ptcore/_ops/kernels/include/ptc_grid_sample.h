/* F.grid_sample on 4-d input (2-d sampling) for ptcore._ops.kernels._resample:
 * bilinear, nearest and bicubic interpolation with zeros, border and
 * reflection padding, forward and backward (see ptc_grid_sample_body.h).
 * Samples are independent; a caller may split [0, N) among threads. */
#ifndef PTC_GRID_SAMPLE_H
#define PTC_GRID_SAMPLE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

enum { PTC_GS_BILINEAR = 0, PTC_GS_NEAREST = 1, PTC_GS_BICUBIC = 2 };
enum { PTC_GS_ZEROS = 0, PTC_GS_BORDER = 1, PTC_GS_REFLECTION = 2 };

/* input (N, C, H, W), grid and output P = H_out * W_out positions;
   torch's mode codes (GRID_SAMPLE_INTERPOLATION_MODES / _PADDING_MODES) */
typedef struct {
    ptrdiff_t N, C, H, W, P;
    int interp, pad, ac;
    int vec;                /* plane offsets fit int32: the vector gathers may run */
} ptc_gs_geo;

#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level */
#if PTC_X86_DISPATCH
#include <immintrin.h>
static int ptc_gs_fma_on = 1;     /* a testing knob: 0 keeps the baseline kernels */
static int ptc_gs_fma(void) { return ptc_fma_level() > 0 && ptc_gs_fma_on; }
#endif

/* four instantiations: float and double, each for the baseline and for
   AVX2 + FMA (torch's fused multiply-adds, and the gathers of GS_VEC: the
   vector of GS_BLK lanes, GS_VSFX its intrinsics' suffix, GS_VI its int32
   offsets, GS_MASKT a lane of its masks) */
#define GS_T float
#define GS_BLK 8
#define GS_SFX _f32base
#define GS_TGT
#define GS_MA(a, b, c) ((a) * (b) + (c))
#define GS_FLOOR floorf
#define GS_RINT nearbyintf
#define GS_TRUNC truncf
#define GS_FABS fabsf
#include "ptc_grid_sample_body.h"

#define GS_T double
#define GS_BLK 4
#define GS_SFX _f64base
#define GS_TGT
#define GS_MA(a, b, c) ((a) * (b) + (c))
#define GS_FLOOR floor
#define GS_RINT nearbyint
#define GS_TRUNC trunc
#define GS_FABS fabs
#include "ptc_grid_sample_body.h"

#if PTC_X86_DISPATCH
#define GS_T float
#define GS_BLK 8
#define GS_SFX _f32fma
#define GS_TGT __attribute__((target("avx2,fma")))
#define GS_MA(a, b, c) __builtin_fmaf((a), (b), (c))
#define GS_FLOOR floorf
#define GS_RINT nearbyintf
#define GS_TRUNC truncf
#define GS_FABS fabsf
#define GS_VEC 1
#define GS_VT __m256
#define GS_VSFX _ps
#define GS_VI __m256i
#define GS_MASKT int32_t
#define GS_LDI(p) _mm256_loadu_si256((const __m256i*)(p))
#define GS_ISTORE(p, v) _mm256_storeu_si256((__m256i*)(p), (v))
#define GS_IMADD(a, k, b) _mm256_add_epi32(_mm256_mullo_epi32((a), _mm256_set1_epi32(k)), (b))
#define GS_IADD(a, k) _mm256_add_epi32((a), _mm256_set1_epi32(k))
#define GS_ICVT _mm256_cvttps_epi32
#define GS_MGATHER(a, ix, mk) _mm256_mask_i32gather_ps(_mm256_setzero_ps(), (a), (ix), (mk), 4)
#include "ptc_grid_sample_body.h"

#define GS_T double
#define GS_BLK 4
#define GS_SFX _f64fma
#define GS_TGT __attribute__((target("avx2,fma")))
#define GS_MA(a, b, c) __builtin_fma((a), (b), (c))
#define GS_FLOOR floor
#define GS_RINT nearbyint
#define GS_TRUNC trunc
#define GS_FABS fabs
#define GS_VEC 1
#define GS_VT __m256d
#define GS_VSFX _pd
#define GS_VI __m128i
#define GS_MASKT int64_t
#define GS_LDI(p) _mm_loadu_si128((const __m128i*)(p))
#define GS_ISTORE(p, v) _mm_storeu_si128((__m128i*)(p), (v))
#define GS_IMADD(a, k, b) _mm_add_epi32(_mm_mullo_epi32((a), _mm_set1_epi32(k)), (b))
#define GS_IADD(a, k) _mm_add_epi32((a), _mm_set1_epi32(k))
#define GS_ICVT _mm256_cvttpd_epi32
#define GS_MGATHER(a, ix, mk) _mm256_mask_i32gather_pd(_mm256_setzero_pd(), (a), (ix), (mk), 8)
#include "ptc_grid_sample_body.h"
#endif

/* the kernels of the CPU: torch's fused multiply-adds where it has FMA */
#if PTC_X86_DISPATCH
#define PTC_GS_PICK(name, sfx) (ptc_gs_fma() ? name##sfx##fma : name##sfx##base)
#else
#define PTC_GS_PICK(name, sfx) name##sfx##base
#endif
static void ptc_gs2d_forward_f32(const ptc_gs_geo* g, const float* inp, const float* grid,
                                 float* out, ptrdiff_t n0, ptrdiff_t n1) {
    PTC_GS_PICK(ptc_gs2d_forward, _f32)(g, inp, grid, out, n0, n1);
}
static void ptc_gs2d_forward_f64(const ptc_gs_geo* g, const double* inp, const double* grid,
                                 double* out, ptrdiff_t n0, ptrdiff_t n1) {
    PTC_GS_PICK(ptc_gs2d_forward, _f64)(g, inp, grid, out, n0, n1);
}
static void ptc_gs2d_backward_f32(const ptc_gs_geo* g, const float* inp, const float* grid,
                                  const float* gout, float* ginp, float* ggrid, ptrdiff_t n0,
                                  ptrdiff_t n1) {
    PTC_GS_PICK(ptc_gs2d_backward, _f32)(g, inp, grid, gout, ginp, ggrid, n0, n1);
}
static void ptc_gs2d_backward_f64(const ptc_gs_geo* g, const double* inp, const double* grid,
                                  const double* gout, double* ginp, double* ggrid, ptrdiff_t n0,
                                  ptrdiff_t n1) {
    PTC_GS_PICK(ptc_gs2d_backward, _f64)(g, inp, grid, gout, ginp, ggrid, n0, n1);
}

#endif
