/* torch's CPU arange of a floating dtype, value for value (the rule is
 * ptcore._ops.creation._arange_values's, which this replaces for speed: its
 * NumPy emulation took 66 ms for a million values).
 *
 * The range is cut in chunks as torch's parallel_for cuts it (the caller
 * passes the chunk length); in each chunk the first (len / (2 W)) * 2 W
 * elements are torch's vectorised loop -- a vector of W lanes starts at the
 * scalar value of its first element rounded to the output type, and lane j
 * is base + j * step -- and the rest its scalar loop, start + step * i.  Each
 * of those is one fused multiply-add in the accumulate type (double; for
 * float16/bfloat16 float, here a double FMA rounded to float, as the
 * emulation does).  kind: 0 float64, 1 float32 (accumulate double), 2
 * float16, 3 bfloat16 (accumulate float; the float values are written, the
 * caller converts them).  Compiled with and without FMA (fma() is exact
 * either way: the same bits). */
#ifndef PTC_ARANGE_H
#define PTC_ARANGE_H
#include <math.h>
#include <stddef.h>
#include "ptc_half.h"
#include "ptc_math.h"

static inline double ptc_arange_round(double v, int kind)
{
    if (kind == 1) return (double)(float)v;
    if (kind == 2) return (double)ptc_half_to_float(ptc_float_to_half((float)v));
    if (kind == 3) return (double)ptc_bf16_to_float(ptc_float_to_bf16((float)v));
    return v;
}

#define PTC_ARANGE_STORE(i, v) { if (kind == 0) o64[i] = (v); else o32[i] = (float)(v); }
#define PTC_ARANGE_BODY(FMA)                                                     \
{                                                                                \
    const ptrdiff_t W = kind == 0 ? 4 : (kind == 1 ? 8 : 16);                    \
    const int accf = kind >= 2;                                                  \
    double* o64 = (double*)out; float* o32 = (float*)out;                        \
    for (ptrdiff_t c0 = 0; c0 < n; c0 += chunk) {                                \
        const ptrdiff_t len = n - c0 < chunk ? n - c0 : chunk;                   \
        const ptrdiff_t nv = len / (2 * W) * (2 * W);                            \
        for (ptrdiff_t off = 0; off < nv; off += W) {      /* the vectors */     \
            double s = FMA(step, (double)(c0 + off), start);                     \
            if (accf) s = (double)(float)s;                                      \
            const double b = ptc_arange_round(s, kind);                          \
            for (ptrdiff_t j = 0; j < W; j++) {                                  \
                double v = isfinite(b) ? FMA(step, (double)j, b) : b;            \
                if (accf) v = (double)(float)v;                                  \
                PTC_ARANGE_STORE(c0 + off + j, v)                                \
            }                                                                    \
        }                                                                        \
        for (ptrdiff_t off = nv; off < len; off++) {       /* the scalar rest */ \
            double v = FMA(step, (double)(c0 + off), start);                     \
            if (accf) v = (double)(float)v;                                      \
            PTC_ARANGE_STORE(c0 + off, v)                                        \
        }                                                                        \
    }                                                                            \
}
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
__attribute__((target("fma")))
static void ptc_arange_fill_fma(void* out, int kind, double start, double step, ptrdiff_t n,
                                ptrdiff_t chunk) PTC_ARANGE_BODY(__builtin_fma)
#endif
static void ptc_arange_fill_plain(void* out, int kind, double start, double step, ptrdiff_t n,
                                  ptrdiff_t chunk) PTC_ARANGE_BODY(fma)
static void ptc_arange_fill(void* out, int kind, double start, double step, ptrdiff_t n,
                            ptrdiff_t chunk)
{
#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
    if (ptc_fma_level()) { ptc_arange_fill_fma(out, kind, start, step, n, chunk); return; }
#endif
    ptc_arange_fill_plain(out, kind, start, step, n, chunk);
}
#endif
