/* complex64/complex128 add, sub and mul, and complex64 abs, of contiguous
 * arrays in vector lanes (the elementwise driver's loops ran them a value at
 * a time: 3.8x torch's time for an add, 1.8x for abs).
 *
 * The operations are the scalar expressions' of _ew.pyx.tp, lane for lane,
 * so the bits are theirs: add/sub are x + y (ar + ai i) with (ar, ai) = (1, 0)
 * / (-1, 0), i.e. (a + (c ar - d ai), b + (c ai + d ar)) -- torch's a + alpha b
 * -- and mul is (a c - b d, a d + b c): each product rounded, then one sum
 * (torch's bits; compiled with fp-contract off, no FMA).  A vector holds W/2
 * complex values as (re, im) pairs, shuffled so that both parts come out of
 * one add.  An operand with step 0 is one value (a number).  The AVX-512 and
 * AVX2 copies run by ptc_vec_level() (0 returned where the CPU has neither:
 * the scalar loop runs, with the same bits). */
#ifndef PTC_CPLX_VEC_H
#define PTC_CPLX_VEC_H
#include <complex.h>
#include <string.h>
#include "ptc_math.h"

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
typedef float ptc_cv16f __attribute__((vector_size(64)));
typedef int ptc_cv16i __attribute__((vector_size(64)));
typedef double ptc_cv8d __attribute__((vector_size(64)));
typedef long long ptc_cv8l __attribute__((vector_size(64)));
typedef float ptc_cv8f __attribute__((vector_size(32)));
typedef int ptc_cv8i __attribute__((vector_size(32)));
typedef double ptc_cv4d __attribute__((vector_size(32)));
typedef long long ptc_cv4l __attribute__((vector_size(32)));

/* one loop: o = x op y over n complex values of T (W lanes: W / 2 values a
 * step), OP(xv, yv, r) computing r; the tail through one vector padded with
 * zeros.  (No scalar formula here: GCC's vectoriser turns a scalar complex
 * product into vfmaddsub even under fp-contract=off, which changes bits.) */
#define PTC_CPLX_LOOP(T, VF, W, OP)                                            \
    {                                                                        \
        const T* xf = (const T*)x; const T* yf = (const T*)y; T* of = (T*)o; \
        VF xb, yb;                                                           \
        for (int k = 0; k < (W); k += 2) {                                   \
            memcpy((T*)&xb + k, xf, 2 * sizeof(T));                          \
            memcpy((T*)&yb + k, yf, 2 * sizeof(T)); }                        \
        Py_ssize_t i = 0;                                                    \
        for (; i + (W) / 2 <= n; i += (W) / 2) {                             \
            VF xv = xb, yv = yb, r;                                          \
            if (xs) memcpy(&xv, xf + 2 * i, sizeof xv);                      \
            if (ys) memcpy(&yv, yf + 2 * i, sizeof yv);                      \
            OP(xv, yv, r)                                                    \
            memcpy(of + 2 * i, &r, sizeof r);                                \
        }                                                                    \
        if (i < n) {                  /* the tail through one padded vector */ \
            T xt[W] = {0}, yt[W] = {0}, rt[W];                               \
            VF xv = xb, yv = yb, r;                                          \
            if (xs) { memcpy(xt, xf + 2 * i, (size_t)(n - i) * 2 * sizeof(T)); \
                      memcpy(&xv, xt, sizeof xv); }                          \
            if (ys) { memcpy(yt, yf + 2 * i, (size_t)(n - i) * 2 * sizeof(T)); \
                      memcpy(&yv, yt, sizeof yv); }                          \
            OP(xv, yv, r)                                                    \
            memcpy(rt, &r, sizeof r);                                        \
            memcpy(of + 2 * i, rt, (size_t)(n - i) * 2 * sizeof(T));         \
        }                                                                    \
    }
/* x + (y (ar + ai i)) per pair: y times AR, the swapped y times (-ai, ai) */
#define PTC_CPLX_AXPY_OP(VF, VI, SWAP, ar, ai, xv, yv, r)                       \
    { const VF ysw = __builtin_shuffle(yv, SWAP);                \
                  VF arv, aiv; for (int k = 0; k < (int)(sizeof(VF) / sizeof(arv[0])); k += 2) { \
                      arv[k] = ar; arv[k + 1] = ar; aiv[k] = -(ai); aiv[k + 1] = ai; } \
                  r = xv + (yv * arv + ysw * aiv); }
/* (a c - b d, a d + b c): x times y's real parts, plus the swapped x times
 * y's imaginary parts with the even lanes negated (b c + a d: the same sum) */
#define PTC_CPLX_MUL_OP(VF, VI, SWAP, EVEN, ODD, NEG, xv, yv, r)                \
    { const VF yre = __builtin_shuffle(yv, EVEN);                            \
      const VF yim = __builtin_shuffle(yv, ODD);                             \
      const VF xsw = __builtin_shuffle(xv, SWAP);                            \
      r = xv * yre + (VF)((VI)(xsw * yim) ^ NEG); }

#define PTC_SW16 ((ptc_cv16i){1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14})
#define PTC_EV16 ((ptc_cv16i){0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14})
#define PTC_OD16 ((ptc_cv16i){1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15})
#define PTC_NG16 ((ptc_cv16i){(int)0x80000000, 0, (int)0x80000000, 0, (int)0x80000000, 0, \
    (int)0x80000000, 0, (int)0x80000000, 0, (int)0x80000000, 0, (int)0x80000000, 0, \
    (int)0x80000000, 0})
#define PTC_EV16C ((ptc_cv16i){0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14})
#define PTC_OD16C ((ptc_cv16i){1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15})
#define PTC_EV8C ((ptc_cv8i){0, 2, 4, 6, 0, 2, 4, 6})
#define PTC_OD8C ((ptc_cv8i){1, 3, 5, 7, 1, 3, 5, 7})
#define PTC_SW8 ((ptc_cv8i){1, 0, 3, 2, 5, 4, 7, 6})
#define PTC_EV8 ((ptc_cv8i){0, 0, 2, 2, 4, 4, 6, 6})
#define PTC_OD8 ((ptc_cv8i){1, 1, 3, 3, 5, 5, 7, 7})
#define PTC_NG8 ((ptc_cv8i){(int)0x80000000, 0, (int)0x80000000, 0, (int)0x80000000, 0, \
    (int)0x80000000, 0})
#define PTC_SWD8 ((ptc_cv8l){1, 0, 3, 2, 5, 4, 7, 6})
#define PTC_EVD8 ((ptc_cv8l){0, 0, 2, 2, 4, 4, 6, 6})
#define PTC_ODD8 ((ptc_cv8l){1, 1, 3, 3, 5, 5, 7, 7})
#define PTC_NGD8 ((ptc_cv8l){(long long)0x8000000000000000ULL, 0, (long long)0x8000000000000000ULL, 0, \
    (long long)0x8000000000000000ULL, 0, (long long)0x8000000000000000ULL, 0})
#define PTC_SWD4 ((ptc_cv4l){1, 0, 3, 2})
#define PTC_EVD4 ((ptc_cv4l){0, 0, 2, 2})
#define PTC_ODD4 ((ptc_cv4l){1, 1, 3, 3})
#define PTC_NGD4 ((ptc_cv4l){(long long)0x8000000000000000ULL, 0, (long long)0x8000000000000000ULL, 0})

/* NAME_avx512 / NAME_avx2 / NAME for one element type and operation */
#define PTC_CPLX_FN(NAME, CT, T, OP512, OP256, W512, W256, VF512, VF256)     \
__attribute__((target("avx512f,avx512vl,avx512dq"), optimize("fp-contract=off"))) \
static void NAME##_avx512(CT* o, const CT* x, int xs, const CT* y, int ys, Py_ssize_t n) \
PTC_CPLX_LOOP(T, VF512, W512, OP512)                                    \
__attribute__((target("avx2"), optimize("fp-contract=off")))                    \
static void NAME##_avx2(CT* o, const CT* x, int xs, const CT* y, int ys, Py_ssize_t n) \
PTC_CPLX_LOOP(T, VF256, W256, OP256)                                    \
static int NAME(CT* o, const CT* x, int xs, const CT* y, int ys, Py_ssize_t n, int st) \
{ (void)st; const int l = ptc_vec_level();                                      \
  if (l == 2) { NAME##_avx512(o, x, xs, y, ys, n); return 1; }                  \
  if (l == 1) { NAME##_avx2(o, x, xs, y, ys, n); return 1; }                    \
  return 0; }

#define PTC_CADD_OP16(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv16f, ptc_cv16i, PTC_SW16, 1.0f, 0.0f, xv, yv, r)
#define PTC_CADD_OP8(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv8f, ptc_cv8i, PTC_SW8, 1.0f, 0.0f, xv, yv, r)
#define PTC_CSUB_OP16(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv16f, ptc_cv16i, PTC_SW16, -1.0f, 0.0f, xv, yv, r)
#define PTC_CSUB_OP8(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv8f, ptc_cv8i, PTC_SW8, -1.0f, 0.0f, xv, yv, r)
#define PTC_CMUL_OP16(xv, yv, r) PTC_CPLX_MUL_OP(ptc_cv16f, ptc_cv16i, PTC_SW16, PTC_EV16, PTC_OD16, PTC_NG16, xv, yv, r)
#define PTC_CMUL_OP8(xv, yv, r) PTC_CPLX_MUL_OP(ptc_cv8f, ptc_cv8i, PTC_SW8, PTC_EV8, PTC_OD8, PTC_NG8, xv, yv, r)
#define PTC_ZADD_OP8(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv8d, ptc_cv8l, PTC_SWD8, 1.0, 0.0, xv, yv, r)
#define PTC_ZADD_OP4(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv4d, ptc_cv4l, PTC_SWD4, 1.0, 0.0, xv, yv, r)
#define PTC_ZSUB_OP8(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv8d, ptc_cv8l, PTC_SWD8, -1.0, 0.0, xv, yv, r)
#define PTC_ZSUB_OP4(xv, yv, r) PTC_CPLX_AXPY_OP(ptc_cv4d, ptc_cv4l, PTC_SWD4, -1.0, 0.0, xv, yv, r)
#define PTC_ZMUL_OP8(xv, yv, r) PTC_CPLX_MUL_OP(ptc_cv8d, ptc_cv8l, PTC_SWD8, PTC_EVD8, PTC_ODD8, PTC_NGD8, xv, yv, r)
#define PTC_ZMUL_OP4(xv, yv, r) PTC_CPLX_MUL_OP(ptc_cv4d, ptc_cv4l, PTC_SWD4, PTC_EVD4, PTC_ODD4, PTC_NGD4, xv, yv, r)

PTC_CPLX_FN(ptc_cadd_c64, float _Complex, float, PTC_CADD_OP16, PTC_CADD_OP8, 16, 8, ptc_cv16f, ptc_cv8f)
PTC_CPLX_FN(ptc_csub_c64, float _Complex, float, PTC_CSUB_OP16, PTC_CSUB_OP8, 16, 8, ptc_cv16f, ptc_cv8f)
PTC_CPLX_FN(ptc_cmul_c64v, float _Complex, float, PTC_CMUL_OP16, PTC_CMUL_OP8, 16, 8, ptc_cv16f, ptc_cv8f)
PTC_CPLX_FN(ptc_cadd_c128, double _Complex, double, PTC_ZADD_OP8, PTC_ZADD_OP4, 8, 4, ptc_cv8d, ptc_cv4d)
PTC_CPLX_FN(ptc_csub_c128, double _Complex, double, PTC_ZSUB_OP8, PTC_ZSUB_OP4, 8, 4, ptc_cv8d, ptc_cv4d)
PTC_CPLX_FN(ptc_cmul_c128v, double _Complex, double, PTC_ZMUL_OP8, PTC_ZMUL_OP4, 8, 4, ptc_cv8d, ptc_cv4d)
/* |z| of complex64 values: glibc's cabsf/hypotf, sqrt((double) re^2 +
 * (double) im^2) rounded to float (exact squares, one rounded sum, a
 * correctly rounded square root), in double lanes; an infinite part gives
 * +inf even beside a NaN (hypot's rule).  W complex values a step (W double
 * lanes), the tail through one zero-padded vector */
#define PTC_CABS_BODY(W, VF, VD, VI, SQRT, EV, OD)                              \
    {                                                                        \
        const float* af = (const float*)a;                                   \
        for (Py_ssize_t i = 0; i < n; i += (W)) {                            \
            const Py_ssize_t m = n - i < (W) ? n - i : (W);                  \
            float buf[2 * (W)] = {0};                                        \
            VF v, re, im;                                                    \
            memcpy(buf, af + 2 * i, (size_t)m * 2 * sizeof(float));          \
            memcpy(&v, buf, sizeof v);                                       \
            re = __builtin_shuffle(v, EV);                                   \
            im = __builtin_shuffle(v, OD);                                   \
            const VD dr = __builtin_convertvector(*(ptc_cabs_half_##W*)&re, VD); \
            const VD di = __builtin_convertvector(*(ptc_cabs_half_##W*)&im, VD); \
            VD r = SQRT(dr * dr + di * di);                                  \
            const VI inf = (VI)((dr == 1.0 / 0.0) | (dr == -1.0 / 0.0)       \
                                | (di == 1.0 / 0.0) | (di == -1.0 / 0.0));   \
            r = (VD)(((VI)r & ~inf) | ((VI)((VD){0} + 1.0 / 0.0) & inf));    \
            const ptc_cabs_half_##W rf = __builtin_convertvector(r, ptc_cabs_half_##W); \
            memcpy(o + i, &rf, (size_t)m * sizeof(float));                   \
        }                                                                    \
    }
typedef float ptc_cabs_half_8 __attribute__((vector_size(32)));
typedef float ptc_cabs_half_4 __attribute__((vector_size(16)));
#define PTC_CABS_SQRT8(v) ((ptc_cv8d)_mm512_sqrt_pd((__m512d)(v)))
#define PTC_CABS_SQRT4(v) ((ptc_cv4d)_mm256_sqrt_pd((__m256d)(v)))
__attribute__((target("avx512f,avx512vl,avx512dq"), optimize("fp-contract=off")))
static void ptc_cabs_c64v_avx512(float* o, const float _Complex* a, Py_ssize_t n)
PTC_CABS_BODY(8, ptc_cv16f, ptc_cv8d, ptc_cv8l, PTC_CABS_SQRT8, PTC_EV16C, PTC_OD16C)
__attribute__((target("avx2"), optimize("fp-contract=off")))
static void ptc_cabs_c64v_avx2(float* o, const float _Complex* a, Py_ssize_t n)
PTC_CABS_BODY(4, ptc_cv8f, ptc_cv4d, ptc_cv4l, PTC_CABS_SQRT4, PTC_EV8C, PTC_OD8C)
static int ptc_cabs_c64v(float* o, const float _Complex* a, Py_ssize_t n, int st)
{
    (void)st;
    const int l = ptc_vec_level();
    if (l == 2) { ptc_cabs_c64v_avx512(o, a, n); return 1; }
    if (l == 1) { ptc_cabs_c64v_avx2(o, a, n); return 1; }
    return 0;
}
#else
#define PTC_CPLX_NONE(NAME, CT) \
static int NAME(CT* o, const CT* x, int xs, const CT* y, int ys, Py_ssize_t n, int st) \
{ (void)o; (void)x; (void)xs; (void)y; (void)ys; (void)n; (void)st; return 0; }
PTC_CPLX_NONE(ptc_cadd_c64, float _Complex)
PTC_CPLX_NONE(ptc_csub_c64, float _Complex)
PTC_CPLX_NONE(ptc_cmul_c64v, float _Complex)
PTC_CPLX_NONE(ptc_cadd_c128, double _Complex)
PTC_CPLX_NONE(ptc_csub_c128, double _Complex)
PTC_CPLX_NONE(ptc_cmul_c128v, double _Complex)
static int ptc_cabs_c64v(float* o, const float _Complex* a, Py_ssize_t n, int st)
{ (void)o; (void)a; (void)n; (void)st; return 0; }
#endif
#endif
