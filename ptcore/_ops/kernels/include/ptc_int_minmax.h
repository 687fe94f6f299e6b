/* Minimum and maximum of a contiguous run of int64 or int32 values (n >= 1),
 * exact.  The plain loop is a chain of compare-and-select per element (one
 * cycle each, serial); compiled for AVX-512 (vpminsq/vpmaxsq) or AVX2
 * (vpcmpgtq + blend; vpminsd for int32) the compiler keeps vector
 * accumulators and folds them at the end.  On x86-64 the copy runs by
 * ptc_vec_level() (ATEN_CPU_CAPABILITY respected); the baseline one, and the
 * only one elsewhere, is the same loop. */
#ifndef PTC_INT_MINMAX_H
#define PTC_INT_MINMAX_H
#include <stddef.h>
#include <stdint.h>
#include "ptc_math.h"

#define PTC_IMM_BODY(T)                                                        \
    { T lo = p[0], hi = p[0];                                                  \
      for (ptrdiff_t j = 1; j < n; j++) {                                      \
          T y = p[j]; lo = y < lo ? y : lo; hi = y > hi ? y : hi; }            \
      *plo = lo; *phi = hi; }

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#define PTC_IMM_DEF(NAME, T)                                                   \
PTC_TGT("avx512f,avx512vl") static void NAME##_avx512(const T* p, ptrdiff_t n, T* plo, T* phi) \
PTC_IMM_BODY(T)                                                                \
PTC_TGT("avx2") static void NAME##_avx2(const T* p, ptrdiff_t n, T* plo, T* phi) \
PTC_IMM_BODY(T)                                                                \
static void NAME##_base(const T* p, ptrdiff_t n, T* plo, T* phi)               \
PTC_IMM_BODY(T)                                                                \
static void NAME(const T* p, ptrdiff_t n, T* plo, T* phi)                      \
{ int l_ = ptc_vec_level();                                                    \
  if (l_ == 2) NAME##_avx512(p, n, plo, phi);                                  \
  else if (l_ == 1) NAME##_avx2(p, n, plo, phi);                               \
  else NAME##_base(p, n, plo, phi); }
#else
/* (elsewhere: the one copy, for the compiler's default target) */
#define PTC_IMM_DEF(NAME, T)                                                   \
static void NAME(const T* p, ptrdiff_t n, T* plo, T* phi) PTC_IMM_BODY(T)
#endif

PTC_IMM_DEF(ptc_minmax_i64, int64_t)
PTC_IMM_DEF(ptc_minmax_i32, int32_t)

#endif
