/* Fused elementwise evaluator of ptcore.jit (used by _fused.pyx).
 *
 * ptc_fused_eval_f32 / _f64 run a straight-line program of pointwise
 * instructions over one block of registers (block buffers of m elements, in
 * cache): each instruction is one vectorisable loop.  The body
 * (ptc_fused_body.h, ptc_fused_ops.h) is compiled three times -- for
 * AVX-512F, for AVX2+FMA and for the baseline -- and the copy for the
 * running CPU is chosen at the call (the same run-time choice as
 * ptc_math.h's maps).  float32 exp/tanh/sigmoid/GELU/SiLU use the branch-free
 * approximations of ptc_fused_body.h (a few ulp; fused multiply-adds where the
 * CPU has them), float64 uses libm. */
#ifndef PTC_FUSED_H
#define PTC_FUSED_H
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* opcodes: keep in sync with ptcore/jit/_fusion.py (OPCODES) */
enum {
    PF_ADD = 0, PF_SUB, PF_MUL, PF_DIV, PF_MAX, PF_MIN, PF_POW,
    PF_EQ, PF_NE, PF_LT, PF_LE, PF_GT, PF_GE,
    PF_NEG, PF_EXP_, PF_LOG_, PF_TANH_, PF_SIGMOID, PF_RELU, PF_SQRT_, PF_RSQRT, PF_ABS,
    PF_SIN_, PF_COS_, PF_SQUARE, PF_RECIP, PF_ERF_, PF_LOG1P_, PF_EXPM1_, PF_GELU_,
    PF_GELU_TANH, PF_SILU, PF_WHERE,
    PF_NUM
};

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define PF_SFX _avx512
#define PF_MADDF(a, b, c) __builtin_fmaf((a), (b), (c))
#define PF_MADD(a, b, c) __builtin_fma((a), (b), (c))
#include "ptc_fused_body.h"
#undef PF_SFX
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define PF_SFX _avx2
#include "ptc_fused_body.h"
#undef PF_SFX
#undef PF_MADDF
#undef PF_MADD
#pragma GCC pop_options
#define PF_HAVE_CLONES 1
#else
#define PF_HAVE_CLONES 0
#endif

#define PF_SFX _base
#define PF_MADDF(a, b, c) ((a) * (b) + (c))
#define PF_MADD(a, b, c) ((a) * (b) + (c))
#include "ptc_fused_body.h"
#undef PF_SFX
#undef PF_MADDF
#undef PF_MADD

static int pf_level(void)
{
#if PF_HAVE_CLONES
    static int level = -1;
    if (level < 0) {
        __builtin_cpu_init();
        level = (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
                 __builtin_cpu_supports("fma")) ? 2 :
                (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1 : 0;
    }
    return level;
#else
    return 0;
#endif
}

static void ptc_fused_eval_f32(const int32_t *prog, int ninstr, float **reg, const float *sval,
                               const unsigned char *is_s, Py_ssize_t m)
{
#if PF_HAVE_CLONES
    int l = pf_level();
    if (l == 2) { ptc_fused_eval_f32_avx512(prog, ninstr, reg, sval, is_s, m); return; }
    if (l == 1) { ptc_fused_eval_f32_avx2(prog, ninstr, reg, sval, is_s, m); return; }
#endif
    ptc_fused_eval_f32_base(prog, ninstr, reg, sval, is_s, m);
}

static void ptc_fused_eval_f64(const int32_t *prog, int ninstr, double **reg, const double *sval,
                               const unsigned char *is_s, Py_ssize_t m)
{
#if PF_HAVE_CLONES
    int l = pf_level();
    if (l == 2) { ptc_fused_eval_f64_avx512(prog, ninstr, reg, sval, is_s, m); return; }
    if (l == 1) { ptc_fused_eval_f64_avx2(prog, ninstr, reg, sval, is_s, m); return; }
#endif
    ptc_fused_eval_f64_base(prog, ninstr, reg, sval, is_s, m);
}

/* pf_level() is only called through the two functions above */
#endif
