/* Row loops of group normalisation (_norm.pyx): the sums in double over 32
 * explicit lanes (element i in lane i % 32, the lanes combined in a fixed
 * tree), the affine maps in the element type.  Each loop is one source
 * compiled three times on x86-64 -- AVX-512, AVX2 (each with FMA) and the
 * baseline -- and run by ptc_fma_level() (ATEN_CPU_CAPABILITY respected);
 * products and sums are never contracted into FMAs and the affine map's FMA
 * is written out (fmaf, exact, in the baseline), so the three give the same
 * bits.  (The
 * compiler vectorises the explicit lanes: 4 zmm / 8 ymm accumulators, where
 * the baseline's 2-double vectors left the group norm at twice torch's time.) */
#ifndef PTC_GN_ROWS_H
#define PTC_GN_ROWS_H
#include <stddef.h>
#include "ptc_math.h"          /* PTC_TGT, ptc_vec_level */

#define PTC_GN_L 32
static inline double ptc_gn_fold(const double* a)
{
    double b[16];
    for (int k = 0; k < 16; k++) b[k] = a[k] + a[k + 16];
    for (int k = 0; k < 8; k++) b[k] = b[k] + b[k + 8];
    for (int k = 0; k < 4; k++) b[k] = b[k] + b[k + 4];
    return (b[0] + b[2]) + (b[1] + b[3]);
}

/* s1 = sum(x), or with m: s1 = sum((x - m)^2) (the difference and square in double) */
#define PTC_GN_SUM_BODY(T)                                                     \
    { double a[PTC_GN_L] = {0}; ptrdiff_t i = 0;                             \
      if (!dev) { for (; i + PTC_GN_L <= n; i += PTC_GN_L)                   \
                      for (int k = 0; k < PTC_GN_L; k++) a[k] = a[k] + (double)x[i + k]; \
                  for (int k = 0; i + k < n; k++) a[k] = a[k] + (double)x[i + k]; } \
      else { for (; i + PTC_GN_L <= n; i += PTC_GN_L)                        \
                 for (int k = 0; k < PTC_GN_L; k++) {                        \
                     const double d = (double)x[i + k] - m; a[k] = a[k] + d * d; } \
             for (int k = 0; i + k < n; k++) {                               \
                 const double d = (double)x[i + k] - m; a[k] = a[k] + d * d; } } \
      return ptc_gn_fold(a); }
/* *sg = sum(g), *sgx = sum(g * (x - m)) (the difference and product in T) */
#define PTC_GN_GSUM_BODY(T)                                                    \
    { double a[PTC_GN_L] = {0}, b[PTC_GN_L] = {0}; ptrdiff_t i = 0;          \
      for (; i + PTC_GN_L <= n; i += PTC_GN_L)                               \
          for (int k = 0; k < PTC_GN_L; k++) {                               \
              a[k] = a[k] + (double)g[i + k];                                \
              b[k] = b[k] + (double)(T)(g[i + k] * (T)(x[i + k] - m)); }     \
      for (int k = 0; i + k < n; k++) {                                      \
          a[k] = a[k] + (double)g[i + k];                                    \
          b[k] = b[k] + (double)(T)(g[i + k] * (T)(x[i + k] - m)); }         \
      *sg = ptc_gn_fold(a); *sgx = ptc_gn_fold(b); }
/* y = s x + t, one FMA (torch's loop, contracted where it is built with FMA) */
#define PTC_GN_FMA(T, a, b, c) (sizeof(T) == 4 ? (T)__builtin_fmaf((float)(a), (float)(b), (float)(c)) \
                                               : (T)__builtin_fma((a), (b), (c)))
#define PTC_GN_AFFINE_BODY(T)                                                  \
    { for (ptrdiff_t i = 0; i < n; i++) y[i] = PTC_GN_FMA(T, s, x[i], t); }
/* gx = f1 * g + f2 * x + f3 */
#define PTC_GN_DX_BODY(T)                                                      \
    { for (ptrdiff_t i = 0; i < n; i++)                                      \
          gx[i] = ((T)(f1 * g[i]) + (T)(f2 * x[i])) + f3; }

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#define PTC_GN_VERSIONS(NAME, RET, PARAMS, ARGS, BODY)                         \
PTC_TGT("avx512f,avx512vl,fma") __attribute__((optimize("fp-contract=off")))  \
static RET NAME##_avx512 PARAMS BODY                                          \
PTC_TGT("avx2,fma") __attribute__((optimize("fp-contract=off")))              \
static RET NAME##_avx2 PARAMS BODY                                            \
__attribute__((optimize("fp-contract=off")))                                  \
static RET NAME##_base PARAMS BODY                                            \
static RET NAME PARAMS                                                        \
{ int l_ = ptc_fma_level();                                                   \
  if (l_ == 2) return NAME##_avx512 ARGS;                                     \
  if (l_ == 1) return NAME##_avx2 ARGS;                                       \
  return NAME##_base ARGS; }
#else
/* (elsewhere: the one copy, for the compiler's default target) */
#define PTC_GN_VERSIONS(NAME, RET, PARAMS, ARGS, BODY) static RET NAME PARAMS BODY
#endif

#define PTC_GN_DEFS(S, T)                                                      \
PTC_GN_VERSIONS(ptc_gn_sum_##S, double, (const T* x, ptrdiff_t n, int dev, double m), \
                (x, n, dev, m), PTC_GN_SUM_BODY(T))                           \
PTC_GN_VERSIONS(ptc_gn_gsum_##S, void, (const T* g, const T* x, ptrdiff_t n, T m, \
                double* sg, double* sgx), (g, x, n, m, sg, sgx), PTC_GN_GSUM_BODY(T)) \
PTC_GN_VERSIONS(ptc_gn_affine_##S, void, (T* y, const T* x, ptrdiff_t n, T s, T t), \
                (y, x, n, s, t), PTC_GN_AFFINE_BODY(T))                       \
PTC_GN_VERSIONS(ptc_gn_dx_##S, void, (T* gx, const T* g, const T* x, ptrdiff_t n, \
                T f1, T f2, T f3), (gx, g, x, n, f1, f2, f3), PTC_GN_DX_BODY(T))

PTC_GN_DEFS(f32, float)
PTC_GN_DEFS(f64, double)

#endif
