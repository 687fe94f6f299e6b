/* Separable resampling of F.interpolate (nearest, nearest-exact, linear,
 * bilinear, bicubic, trilinear) and its adjoint, for ptcore._ops.kernels._resample:
 * tap tables from the sizes and scales as ATen computes them, and one pass
 * per spatial dim over a plane (see ptc_upsample_body.h). */
#ifndef PTC_UPSAMPLE_H
#define PTC_UPSAMPLE_H
#include <stddef.h>
#include <string.h>
#include <math.h>

enum { PTC_US_NEAREST = 0, PTC_US_NEAREST_EXACT = 1, PTC_US_LINEAR = 2, PTC_US_CUBIC = 3 };

/* the geometry of one plane: k spatial dims of sizes isz[] -> osz[], `inner`
   elements per spatial position, nt taps per output (1, 2 or 4) with the
   tables idx[d] / wt[d] (US_T, NULL for the nearest modes) of each dim;
   skip[d]: the pass of dim d is the identity (nearest, same size) */
typedef struct {
    int k, nt;
    ptrdiff_t isz[3], osz[3], inner, plane_in, plane_out;
    int skip[3];
    ptrdiff_t* idx[3];
    int* idx32[3];          /* idx as int32 for the gathers (or NULL) */
    void* wt[3];
} ptc_us_geo;

static inline int ptc_us_ntaps(int mode) {
    return mode == PTC_US_LINEAR ? 2 : (mode == PTC_US_CUBIC ? 4 : 1);
}

/* elements of each scratch buffer: the largest intermediate of the passes
   in either direction */
static ptrdiff_t ptc_us_scratch(const ptc_us_geo* g) {
    ptrdiff_t best = 1;
    int a, i;
    for (a = 0; a < g->k; a++) {
        ptrdiff_t f = g->inner, b = g->inner;
        for (i = 0; i < g->k; i++) {
            f *= i < a ? g->isz[i] : g->osz[i];
            b *= i <= a ? g->isz[i] : g->osz[i];
        }
        if (f > best) best = f;
        if (b > best) best = b;
    }
    return best;
}

#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_fma_level */
#if PTC_X86_DISPATCH
#include <immintrin.h>
static int ptc_us_fma_on = 1;     /* a testing knob: 0 keeps the unfused passes */
static int ptc_us_fma(void) { return ptc_fma_level() > 0 && ptc_us_fma_on; }
#endif

/* per type: the element, the name suffix, and the 256-bit vector of the FMA
   passes (US_VSFX: the intrinsics' suffix; 8 floats or 4 doubles) */
#define US_T float
#define US_SFX _f32
#define US_V8 __m256
#define US_VW8 8
#define US_VSFX _ps
#define US_GATHER(base, ix) _mm256_i32gather_ps((base), _mm256_loadu_si256((const __m256i*)(ix)), 4)
#define US_SFMA __builtin_fmaf
#include "ptc_upsample_body.h"

#define US_T double
#define US_SFX _f64
#define US_V8 __m256d
#define US_VW8 4
#define US_VSFX _pd
#define US_GATHER(base, ix) _mm256_i32gather_pd((base), _mm_loadu_si128((const __m128i*)(ix)), 8)
#define US_SFMA __builtin_fma
#include "ptc_upsample_body.h"

#endif
