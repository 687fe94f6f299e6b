/* Fused elementwise evaluator of ptcore.jit (used by _fused.pyx).
 *
 * ptc_fused_eval_f32 / _f64 run a straight-line program of pointwise
 * instructions over one block of registers (block buffers of m elements, in
 * cache): each instruction is one vectorisable loop.  The body
 * (ptc_fused_body.h, ptc_fused_ops.h) is compiled three times -- for
 * AVX-512F, for AVX2+FMA and for the baseline -- and the copy for the
 * running CPU is chosen at the call (the same run-time choice as
 * ptc_math.h's maps).  float32 exp/tanh/sigmoid/GELU/SiLU are the explicitly
 * vectorised kernels of ptc_fused_body.h (a few ulp, the same bits from every
 * copy), float64 uses libm. */
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
    /* pairs d = (a OP1 b) OP2 c of OP1 in add, sub, mul, div and OP2 in add,
     * sub, mul, div (c a scalar or buffer) or square (c unused): one pass for
     * two instructions, rounded as the two (the planner emits them where the
     * first result is read by the second only) */
    PF_PAIR0,
    PF_NUM = PF_PAIR0 + 20
};

#include <string.h>

/* The float32 vector kernels use fused multiply-adds (PF_VFMA) in every copy,
 * so the copies give the same bits: the FMA instructions in the AVX2 and
 * AVX-512 copies, lane-wise fmaf() in the baseline copy -- a hardware fused
 * multiply-add where the target has one (aarch64, POWER, s390x), libm's
 * correctly rounded software fmaf on x86-64 CPUs without FMA (pre-2013
 * CPUs: correct, but the float32 exp/tanh/sigmoid/GELU/SiLU instructions run
 * several times slower there than ptcore's eager kernels). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

/* target attributes, not "#pragma GCC target" (which clang ignores) */
#define PF_TGT __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define PF_SFX _avx512
#define PF_VW 16
#define PF_VMIN(c, x) ((PF_VF)_mm512_min_ps((__m512)(c), (__m512)(x)))
#define PF_VMAX(c, x) ((PF_VF)_mm512_max_ps((__m512)(c), (__m512)(x)))
#define PF_VFMA(a, b, c) ((PF_VF)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#include "ptc_fused_body.h"
#undef PF_SFX
#undef PF_VW
#undef PF_VMIN
#undef PF_VMAX
#undef PF_VFMA
#undef PF_TGT

#define PF_TGT __attribute__((target("avx2,fma")))
#define PF_SFX _avx2
#define PF_VW 8
#define PF_VMIN(c, x) ((PF_VF)_mm256_min_ps((__m256)(c), (__m256)(x)))
#define PF_VMAX(c, x) ((PF_VF)_mm256_max_ps((__m256)(c), (__m256)(x)))
#define PF_VFMA(a, b, c) ((PF_VF)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "ptc_fused_body.h"
#undef PF_SFX
#undef PF_VW
#undef PF_VMIN
#undef PF_VMAX
#undef PF_VFMA
#undef PF_TGT
#define PF_HAVE_CLONES 1

/* the baseline (SSE2) copy */
#define PF_VW 4
#define PF_VMIN(c, x) ((PF_VF)_mm_min_ps((__m128)(c), (__m128)(x)))
#define PF_VMAX(c, x) ((PF_VF)_mm_max_ps((__m128)(c), (__m128)(x)))
#else
#define PF_HAVE_CLONES 0
/* elsewhere: MINPS's lane rule (c < x ? c : x, so x when either is NaN) by selects */
#define PF_VW 4
#define PF_VSEL_(m, a, b) ((PF_VF)(((PF_VI)(a) & (m)) | ((PF_VI)(b) & ~(m))))
#define PF_VMIN(c, x) PF_VSEL_((PF_VI)((c) < (x)), c, x)
#define PF_VMAX(c, x) PF_VSEL_((PF_VI)((c) > (x)), c, x)
#endif
#define PF_VFMA(a, b, c) PF_N(pf_vfma_lanes)((a), (b), (c))

#define PF_TGT
#define PF_SFX _base
#include "ptc_fused_body.h"
#undef PF_TGT
#undef PF_SFX
#undef PF_VW
#undef PF_VMIN
#undef PF_VMAX
#undef PF_VFMA

static int pf_cpu_level(void)
{
#if PF_HAVE_CLONES
    static int level = -1;
    if (level < 0) {
        __builtin_cpu_init();
        level = ((__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) && __builtin_cpu_supports("avx2") &&
                 __builtin_cpu_supports("fma")) ? 2 :
                (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1 : 0;
    }
    return level;
#else
    return 0;
#endif
}

static int pf_forced_level = -1;      /* a lower copy chosen by a test, or -1 */

static int ptc_fused_level(void)
{
    int l = pf_cpu_level();
    return (pf_forced_level >= 0 && pf_forced_level < l) ? pf_forced_level : l;
}

static int ptc_fused_set_level(int level)
{
    pf_forced_level = level;
    return ptc_fused_level();
}


static void ptc_fused_eval_f32(const int32_t *prog, int ninstr, float **reg, const float *sval,
                               const unsigned char *is_s, Py_ssize_t m)
{
#if PF_HAVE_CLONES
    int l = ptc_fused_level();
    if (l == 2) { ptc_fused_eval_f32_avx512(prog, ninstr, reg, sval, is_s, m); return; }
    if (l == 1) { ptc_fused_eval_f32_avx2(prog, ninstr, reg, sval, is_s, m); return; }
#endif
    ptc_fused_eval_f32_base(prog, ninstr, reg, sval, is_s, m);
}

static void ptc_fused_eval_f64(const int32_t *prog, int ninstr, double **reg, const double *sval,
                               const unsigned char *is_s, Py_ssize_t m)
{
#if PF_HAVE_CLONES
    int l = ptc_fused_level();
    if (l == 2) { ptc_fused_eval_f64_avx512(prog, ninstr, reg, sval, is_s, m); return; }
    if (l == 1) { ptc_fused_eval_f64_avx2(prog, ninstr, reg, sval, is_s, m); return; }
#endif
    ptc_fused_eval_f64_base(prog, ninstr, reg, sval, is_s, m);
}


#endif
