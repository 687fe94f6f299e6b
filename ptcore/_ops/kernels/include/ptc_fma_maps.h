/* Whether ptc_math.h's float32 FMA maps (PTC_MAP_F32_FMA: exact GELU and its
 * gradient) run one of their vector clones on this CPU -- AVX-512 or AVX2 with
 * FMA -- rather than the baseline copy, where eager's F.gelu takes its scalar
 * loop instead of the map (ATEN_CPU_CAPABILITY=default, a CPU without FMA, other
 * architectures).  The GEMM's GELU epilogues (_blas.gemm_epilogue kinds 4 and 5)
 * run the map itself only where eager does. */
#ifndef PTC_FMA_MAPS_H
#define PTC_FMA_MAPS_H
#include "ptc_math.h"

static int ptc_fma_maps_f32(void)
{
#if PTC_X86_DISPATCH
    return ptc_fma_level() != 0;
#else
    return 0;
#endif
}
#endif
