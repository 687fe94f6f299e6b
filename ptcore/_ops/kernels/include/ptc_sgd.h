/* The SGD update with momentum in one pass (ptcore._ops.kernels._optim.sgd_step):
   the arithmetic of PyTorch's single-tensor CPU SGD, operation by operation,
   in the parameter's precision:

       g = -grad if maximize else grad
       g = fma(p, wd, g)                       grad.add(param, alpha=wd)
       b = b * momentum                        buf.mul_(momentum)
       b = fma(g, 1 - dampening, b)            buf.add_(g, alpha=1 - dampening)
       g = fma(b, momentum, g) if nesterov else b
       p = fma(g, -lr, p)                      param.add_(g, alpha=-lr)

   add with alpha is a fused multiply-add on float tensors (PyTorch's
   vec::fmadd, ptcore's ptc_add_alpha loops), so each of those is one
   rounding here too; the scalars are rounded to the parameter's type first.
   An FMA clone is picked at load time where the CPU has FMA (the default
   clone calls fma() and gives the same bits). */
#ifndef PTC_SGD_H
#define PTC_SGD_H
#include <stddef.h>
#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define PTC_SGD_CLONES __attribute__((target_clones("fma", "default")))
#else
#define PTC_SGD_CLONES
#endif

#define PTC_SGD_RANGE(NAME, T, FMA)                                                        \
PTC_SGD_CLONES static void NAME(T* p, const T* g, T* b, ptrdiff_t i0, ptrdiff_t i1,        \
                                double lr, double momentum, double one_m_damp, double wd,  \
                                int nesterov, int maximize) {                              \
    const T nlr = (T)(-lr), m = (T)momentum, a = (T)one_m_damp, w = (T)wd;                 \
    const int decay = wd != 0;                                                             \
    ptrdiff_t i;                                                                           \
    for (i = i0; i < i1; i++) {                                                            \
        T gi = maximize ? -g[i] : g[i];                                                    \
        T bi;                                                                              \
        if (decay) gi = FMA(p[i], w, gi);                                                  \
        bi = b[i] * m;                                                                     \
        bi = FMA(gi, a, bi);                                                               \
        b[i] = bi;                                                                         \
        gi = nesterov ? FMA(bi, m, gi) : bi;                                               \
        p[i] = FMA(gi, nlr, p[i]);                                                         \
    }                                                                                      \
}

PTC_SGD_RANGE(ptc_sgd_range_f32, float, __builtin_fmaf)
PTC_SGD_RANGE(ptc_sgd_range_f64, double, __builtin_fma)

#endif
