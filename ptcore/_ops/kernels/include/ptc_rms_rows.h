/* Row loops of RMS normalisation (_norm.pyx), in the manner of ptc_gn_rows.h
 * (whose lanes, fold and three-target versions they use): sums in double over
 * 32 explicit lanes combined in a fixed tree, the maps in the element type,
 * nothing contracted into FMAs, so AVX-512, AVX2 and the baseline give the same
 * bits.  w == NULL: no weight (the loops without it). */
#ifndef PTC_RMS_ROWS_H
#define PTC_RMS_ROWS_H
#include "ptc_gn_rows.h"

/* sum((g * w) * x): the product g * w rounded in T (the gradient it stands for) */
#define PTC_RMS_DOT_BODY(T)                                                    \
    { double a[PTC_GN_L] = {0}; ptrdiff_t i = 0;                             \
      if (w) { for (; i + PTC_GN_L <= n; i += PTC_GN_L)                      \
                   for (int k = 0; k < PTC_GN_L; k++)                        \
                       a[k] = a[k] + (double)(T)(g[i + k] * w[i + k]) * (double)x[i + k]; \
               for (int k = 0; i + k < n; k++)                               \
                   a[k] = a[k] + (double)(T)(g[i + k] * w[i + k]) * (double)x[i + k]; } \
      else { for (; i + PTC_GN_L <= n; i += PTC_GN_L)                        \
                 for (int k = 0; k < PTC_GN_L; k++)                          \
                     a[k] = a[k] + (double)g[i + k] * (double)x[i + k];      \
             for (int k = 0; i + k < n; k++)                                 \
                 a[k] = a[k] + (double)g[i + k] * (double)x[i + k]; }        \
      return ptc_gn_fold(a); }
/* y = (x * r) * w (the composite's order) */
#define PTC_RMS_OUT_BODY(T)                                                    \
    { if (w) { for (ptrdiff_t i = 0; i < n; i++) y[i] = (T)(x[i] * r) * w[i]; } \
      else { for (ptrdiff_t i = 0; i < n; i++) y[i] = x[i] * r; } }
/* gx = f1 * (g * w) - x * f2 */
#define PTC_RMS_DX_BODY(T)                                                     \
    { if (w) { for (ptrdiff_t i = 0; i < n; i++)                             \
                   gx[i] = (T)(f1 * (T)(g[i] * w[i])) - (T)(x[i] * f2); }     \
      else { for (ptrdiff_t i = 0; i < n; i++)                               \
                 gx[i] = (T)(f1 * g[i]) - (T)(x[i] * f2); } }
/* acc += (g * x) * r, the product g * x rounded in T */
#define PTC_RMS_GW_BODY(T)                                                     \
    { for (ptrdiff_t i = 0; i < n; i++)                                      \
          acc[i] = acc[i] + (double)(T)(g[i] * x[i]) * r; }

#define PTC_RMS_DEFS(S, T)                                                     \
PTC_GN_VERSIONS(ptc_rms_dot_##S, double, (const T* g, const T* w, const T* x, ptrdiff_t n), \
                (g, w, x, n), PTC_RMS_DOT_BODY(T))                            \
PTC_GN_VERSIONS(ptc_rms_out_##S, void, (T* restrict y, const T* restrict x,      \
                const T* restrict w, ptrdiff_t n, T r), (y, x, w, n, r),      \
                PTC_RMS_OUT_BODY(T))                                          \
PTC_GN_VERSIONS(ptc_rms_dx_##S, void, (T* restrict gx, const T* restrict g,      \
                const T* restrict w, const T* restrict x, ptrdiff_t n, T f1, T f2), \
                (gx, g, w, x, n, f1, f2), PTC_RMS_DX_BODY(T))                 \
PTC_GN_VERSIONS(ptc_rms_gw_##S, void, (double* restrict acc, const T* restrict g, \
                const T* restrict x, ptrdiff_t n, double r), (acc, g, x, n, r), \
                PTC_RMS_GW_BODY(T))

PTC_RMS_DEFS(f32, float)
PTC_RMS_DEFS(f64, double)

#endif
