/* float32 log, log2, log10, log1p and atanh of contiguous arrays, vectorised.
 *
 * glibc's scalar logf/log1pf cost 2-7 ns an element (log1pf is the slow
 * one); torch's vectorised loops ~0.3-0.7 ns.
 *
 * log, log2, log10 (the second part below): float lanes with FMA, within
 * 1 ulp of the float64 function rounded to float32, torch's accuracy class
 * (SLEEF u10).
 *
 * log1p, atanh: each float is widened to double and its log computed in
 * double precision, as musl's logf: x = 2^k z with z in [0.699, 1.398), z
 * in one of 16 subintervals of centre c (c = 1 for the one holding 1, so
 * log(1) = 0 exactly), and
 *     log x = k ln2 + log c + log1p(r),  r = z / c - 1,  |r| < 0.03,
 * log1p(r) by its Taylor polynomial to r^7 (truncation < 1e-13 relative).
 * The double result is rounded once to float, so the float32 value is the
 * correctly rounded one except within ~1e-12 of a rounding midpoint.
 * log1p: x + ... by its Taylor polynomial for |x| < 1/128, else log(1 + x)
 * of the exact double 1 + x.  The AVX-512 and AVX2 copies (chosen at run
 * time by ptc_vec_level) and the scalar function (the generic CPU, the
 * strided loops) do the same double operations in the same order, no fused
 * multiply-add, and the vector tails run through one padded vector, so the
 * bits do not depend on the CPU.
 *
 * Special values as C99: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf,
 * NaN stays NaN; log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(-0) = -0. */
#ifndef PTC_LOG_VEC_H
#define PTC_LOG_VEC_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ptc_math.h"          /* PTC_X86_DISPATCH, ptc_vec_level */

#define PTC_LOG_OFF 0x3fe6600000000000ULL     /* 0.69921875 */
static const double ptc_log_invc[16] = {
    0x1.661ec6a5122f9p+0, 0x1.571ed3c506b3ap+0, 0x1.49539e3b2d067p+0, 0x1.3c995a47babe7p+0,
    0x1.30d190130d190p+0, 0x1.25e22708092f1p+0, 0x1.1bb4a4046ed29p+0, 0x1.12358e75d3033p+0,
    0x1.0953f39010954p+0, 0x1.0000000000000p+0, 0x1.e573ac901e574p-1, 0x1.ca4b3055ee191p-1,
    0x1.b2036406c80d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.886e5f0abb04ap-1, 0x1.767dce434a9b1p-1};
/* -log(invc), correctly rounded */
static const double ptc_log_logc[16] = {
    -0x1.57bf753c8d1fbp-2, -0x1.2bef07cdc9355p-2, -0x1.01eae5626c691p-2, -0x1.b31d8575bce3bp-3,
    -0x1.6574ebe8c1339p-3, -0x1.1aa2b7e23f729p-3, -0x1.a4e7640b1bc38p-4, -0x1.1973bd1465561p-4,
    -0x1.252f32f8d1840p-5, 0x0.0p+0, 0x1.b42dd711971b9p-5, 0x1.c5e548f5bc743p-4,
    0x1.526e5e3a1b438p-3, 0x1.bc286742d8cd4p-3, 0x1.1058bf9ae4ad4p-2, 0x1.404308686a7e4p-2};
#define PTC_LN2 0x1.62e42fefa39efp-1
#define PTC_L1P_SMALL 0.0078125
/* log1p(t) = t (1 + t (C2 + t (C3 + ... + t C7))) */
#define PTC_LC2 (-0.5)
#define PTC_LC3 0x1.5555555555555p-2
#define PTC_LC4 (-0.25)
#define PTC_LC5 0x1.999999999999ap-3
#define PTC_LC6 (-0x1.5555555555555p-3)
#define PTC_LC7 0x1.2492492492492p-3

/* log of a positive, normal, finite double */
static inline double ptc_logd_core(double v)
{
    uint64_t b, tmp, kb, izb;
    double z, kd, r, p, y;
    int i;
    memcpy(&b, &v, 8);
    tmp = b - PTC_LOG_OFF;
    i = (int)((tmp >> 48) & 15);
    kb = tmp >> 52;
    kd = (double)kb;
    if (kd >= 2048.0) kd = kd - 4096.0;
    izb = b - (tmp & 0xfff0000000000000ULL);
    memcpy(&z, &izb, 8);
    r = z * ptc_log_invc[i];
    r = r - 1.0;
    p = r * PTC_LC7;
    p = p + PTC_LC6; p = p * r;
    p = p + PTC_LC5; p = p * r;
    p = p + PTC_LC4; p = p * r;
    p = p + PTC_LC3; p = p * r;
    p = p + PTC_LC2; p = p * r;
    p = p + 1.0; p = p * r;
    y = kd * PTC_LN2;
    y = y + ptc_log_logc[i];
    return y + p;
}

static inline double ptc_log1p_small(double t)
{
    double p = t * PTC_LC7;
    p = p + PTC_LC6; p = p * t;
    p = p + PTC_LC5; p = p * t;
    p = p + PTC_LC4; p = p * t;
    p = p + PTC_LC3; p = p * t;
    p = p + PTC_LC2; p = p * t;
    p = p + 1.0;
    return p * t;
}

/* atanh t = t + t^3/3 + ... + t^9/9 for |t| < 1/32 (truncation < 1e-16
 * relative) */
#define PTC_ATANH_SMALL 0.03125
#define PTC_AC3 0x1.5555555555555p-2
#define PTC_AC5 0x1.999999999999ap-3
#define PTC_AC7 0x1.2492492492492p-3
#define PTC_AC9 0x1.c71c71c71c71cp-4
static inline double ptc_atanh_small(double t)
{
    const double t2 = t * t;
    double p = t2 * PTC_AC9;
    p = p + PTC_AC7; p = p * t2;
    p = p + PTC_AC5; p = p * t2;
    p = p + PTC_AC3; p = p * t2;
    p = p * t;
    return p + t;
}

/* the scalar functions (kind 3 log1p, 4 atanh; log, log2 and log10 are the
 * float-lane functions below) */
static inline float ptc_logk_s(float x, int kind)
{
    double v;
    if (kind == 4) {
        /* atanh x = log((1 + x) / (1 - x)) / 2: 1 +- x exact, the quotient
         * within 1.2e-16, its log > 0.06 in size here */
        if (!(fabsf(x) <= 1.0f)) return x != x ? x : NAN;
        if (fabsf(x) == 1.0f) return x * INFINITY;
        v = (double)x;
        if (fabs(v) < PTC_ATANH_SMALL) return (float)ptc_atanh_small(v);
        return (float)(ptc_logd_core((1.0 + v) / (1.0 - v)) * 0.5);
    }
    if (!(x >= -1.0f)) return x != x ? x : NAN;
    if (x == -1.0f) return -INFINITY;
    if (x == INFINITY) return x;
    v = (double)x;
    if (fabs(v) < PTC_L1P_SMALL) return (float)ptc_log1p_small(v);
    return (float)ptc_logd_core(1.0 + v);
}
static inline float ptc_atanhf_d(float x) { return ptc_logk_s(x, 4); }

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
#include <immintrin.h>

/* p = r (1 + r (C2 + ... + r C7)) in the vector operations MUL, ADD, SET (one
 * copy of the Horner steps for both vector widths; the scalar functions
 * above do the same operations in the same order) */
#define PTC_LOG_HORNER(p, r, MUL, ADD, SET)                                      \
    p = MUL(r, SET(PTC_LC7));                                                    \
    p = MUL(ADD(p, SET(PTC_LC6)), r);                                            \
    p = MUL(ADD(p, SET(PTC_LC5)), r);                                            \
    p = MUL(ADD(p, SET(PTC_LC4)), r);                                            \
    p = MUL(ADD(p, SET(PTC_LC3)), r);                                            \
    p = MUL(ADD(p, SET(PTC_LC2)), r);                                            \
    p = MUL(ADD(p, SET(1.0)), r);

/* ---- AVX-512: 8 doubles a vector, 16 floats an iteration ---- */
#define PTC_T_LOG512 __attribute__((target("avx512f"), optimize("fp-contract=off")))
PTC_T_LOG512 static inline __m512d ptc_logd8(__m512d v)
{
    const __m512i b = _mm512_castpd_si512(v);
    const __m512i tmp = _mm512_sub_epi64(b, _mm512_set1_epi64((long long)PTC_LOG_OFF));
    const __m512i idx = _mm512_and_si512(_mm512_srli_epi64(tmp, 48), _mm512_set1_epi64(15));
    const __m512i kb = _mm512_srli_epi64(tmp, 52);
    __m512d kd = _mm512_sub_pd(
        _mm512_castsi512_pd(_mm512_or_si512(kb, _mm512_set1_epi64(0x4330000000000000LL))),
        _mm512_set1_pd(4503599627370496.0));
    const __mmask8 hi = _mm512_cmp_pd_mask(kd, _mm512_set1_pd(2048.0), _CMP_GE_OQ);
    kd = _mm512_mask_sub_pd(kd, hi, kd, _mm512_set1_pd(4096.0));
    const __m512i izb = _mm512_sub_epi64(
        b, _mm512_and_si512(tmp, _mm512_set1_epi64((long long)0xfff0000000000000ULL)));
    const __m512d z = _mm512_castsi512_pd(izb);
    const __m512d invc = _mm512_permutex2var_pd(_mm512_loadu_pd(ptc_log_invc), idx,
                                                _mm512_loadu_pd(ptc_log_invc + 8));
    const __m512d logc = _mm512_permutex2var_pd(_mm512_loadu_pd(ptc_log_logc), idx,
                                                _mm512_loadu_pd(ptc_log_logc + 8));
    __m512d r = _mm512_sub_pd(_mm512_mul_pd(z, invc), _mm512_set1_pd(1.0));
    __m512d p;
    PTC_LOG_HORNER(p, r, _mm512_mul_pd, _mm512_add_pd, _mm512_set1_pd)
    __m512d y = _mm512_add_pd(_mm512_mul_pd(kd, _mm512_set1_pd(PTC_LN2)), logc);
    return _mm512_add_pd(y, p);
}
PTC_T_LOG512 static inline __m512d ptc_log1p_small8(__m512d t)
{
    __m512d p;
    PTC_LOG_HORNER(p, t, _mm512_mul_pd, _mm512_add_pd, _mm512_set1_pd)
    return p;
}
/* ptc_atanh_small's operations */
#define PTC_ATANH_HORNER(p, t, MUL, ADD, SET)                                    \
    { const __typeof__(t) t2_ = MUL(t, t);                                       \
      p = MUL(t2_, SET(PTC_AC9));                                                \
      p = MUL(ADD(p, SET(PTC_AC7)), t2_);                                        \
      p = MUL(ADD(p, SET(PTC_AC5)), t2_);                                        \
      p = MUL(ADD(p, SET(PTC_AC3)), t2_);                                        \
      p = ADD(MUL(p, t), t); }
/* 8 floats (widened) of kind 3 or 4, special lanes not yet fixed */
PTC_T_LOG512 static inline __m256 ptc_logk8_512(__m256 x, int kind)
{
    __m512d v = _mm512_cvtps_pd(x), y;
    if (kind == 4) {
        const __m512d av = _mm512_castsi512_pd(_mm512_and_si512(
            _mm512_castpd_si512(v), _mm512_set1_epi64(0x7fffffffffffffffLL)));
        const __mmask8 small = _mm512_cmp_pd_mask(av, _mm512_set1_pd(PTC_ATANH_SMALL), _CMP_LT_OQ);
        const __mmask8 ok = _mm512_cmp_pd_mask(av, _mm512_set1_pd(1.0), _CMP_LT_OQ);
        __m512d u = _mm512_div_pd(_mm512_add_pd(_mm512_set1_pd(1.0), v),
                                  _mm512_sub_pd(_mm512_set1_pd(1.0), v));
        u = _mm512_mask_blend_pd(ok, _mm512_set1_pd(1.0), u);
        __m512d p;
        if (small == 0) y = _mm512_mul_pd(ptc_logd8(u), _mm512_set1_pd(0.5));
        else {
            PTC_ATANH_HORNER(p, v, _mm512_mul_pd, _mm512_add_pd, _mm512_set1_pd)
            y = small == 0xff ? p : _mm512_mask_blend_pd(
                small, _mm512_mul_pd(ptc_logd8(u), _mm512_set1_pd(0.5)), p);
        }
    } else {
        const __m512d av = _mm512_castsi512_pd(_mm512_and_si512(
            _mm512_castpd_si512(v), _mm512_set1_epi64(0x7fffffffffffffffLL)));
        const __mmask8 small = _mm512_cmp_pd_mask(av, _mm512_set1_pd(PTC_L1P_SMALL), _CMP_LT_OQ);
        const __mmask8 ok = _mm512_cmp_pd_mask(v, _mm512_set1_pd(-1.0), _CMP_GT_OQ);
        __m512d u = _mm512_add_pd(_mm512_set1_pd(1.0), v);
        u = _mm512_mask_blend_pd(ok, _mm512_set1_pd(1.0), u);
        /* (each lane's value is one branch's: only the branches some lane takes run) */
        if (small == 0) y = ptc_logd8(u);
        else if (small == 0xff) y = ptc_log1p_small8(v);
        else y = _mm512_mask_blend_pd(small, ptc_logd8(u), ptc_log1p_small8(v));
    }
    return _mm512_cvtpd_ps(y);
}
/* the special lanes of 16 floats x in the result y */
PTC_T_LOG512 static inline __m512 ptc_logk_fix16(__m512 x, __m512 y, int kind)
{
    if (kind == 4) {
        const __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(
            _mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
        const __mmask16 out = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(1.0f), _CMP_GT_OQ);
        const __mmask16 one = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(1.0f), _CMP_EQ_OQ);
        const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        y = _mm512_mask_mov_ps(y, out, _mm512_set1_ps(NAN));
        y = _mm512_mask_mul_ps(y, one, x, _mm512_set1_ps(INFINITY));
        return _mm512_mask_mov_ps(y, nan, x);
    }
    const __m512 lo = _mm512_set1_ps(kind == 3 ? -1.0f : 0.0f);
    const __mmask16 below = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    const __mmask16 at = _mm512_cmp_ps_mask(x, lo, _CMP_EQ_OQ);
    const __mmask16 inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    y = _mm512_mask_mov_ps(y, below, _mm512_set1_ps(NAN));
    y = _mm512_mask_mov_ps(y, at, _mm512_set1_ps(-INFINITY));
    return _mm512_mask_mov_ps(y, inf | nan, x);
}
PTC_T_LOG512 static void ptc_logk_f32_avx512(float* o, const float* a, Py_ssize_t n, int kind)
{
    Py_ssize_t i = 0;
    float buf[16];
    for (;; i += 16) {
        __m512 x;
        const Py_ssize_t m = n - i;
        if (m <= 0) break;
        if (m >= 16) x = _mm512_loadu_ps(a + i);
        else {
            for (int j = 0; j < 16; j++) buf[j] = j < m ? a[i + j] : 1.0f;
            x = _mm512_loadu_ps(buf);
        }
        const __m256 l = ptc_logk8_512(_mm512_castps512_ps256(x), kind);
        const __m256 h = ptc_logk8_512(
            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)), kind);
        __m512 y = _mm512_castpd_ps(_mm512_insertf64x4(
            _mm512_castps_pd(_mm512_castps256_ps512(l)), _mm256_castps_pd(h), 1));
        y = ptc_logk_fix16(x, y, kind);
        if (m >= 16) _mm512_storeu_ps(o + i, y);
        else {
            _mm512_storeu_ps(buf, y);
            for (Py_ssize_t j = 0; j < m; j++) o[i + j] = buf[j];
            break;
        }
    }
}

/* ---- AVX2: 4 doubles a vector, 8 floats an iteration ---- */
#define PTC_T_LOG256 __attribute__((target("avx2"), optimize("fp-contract=off")))
PTC_T_LOG256 static inline __m256d ptc_logd4(__m256d v)
{
    const __m256i b = _mm256_castpd_si256(v);
    const __m256i tmp = _mm256_sub_epi64(b, _mm256_set1_epi64x((long long)PTC_LOG_OFF));
    const __m256i idx = _mm256_and_si256(_mm256_srli_epi64(tmp, 48), _mm256_set1_epi64x(15));
    const __m256i kb = _mm256_srli_epi64(tmp, 52);
    __m256d kd = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(kb, _mm256_set1_epi64x(0x4330000000000000LL))),
        _mm256_set1_pd(4503599627370496.0));
    const __m256d hi = _mm256_cmp_pd(kd, _mm256_set1_pd(2048.0), _CMP_GE_OQ);
    kd = _mm256_sub_pd(kd, _mm256_and_pd(hi, _mm256_set1_pd(4096.0)));
    const __m256i izb = _mm256_sub_epi64(
        b, _mm256_and_si256(tmp, _mm256_set1_epi64x((long long)0xfff0000000000000ULL)));
    const __m256d z = _mm256_castsi256_pd(izb);
    const __m256d invc = ptc_lut16_4d(ptc_log_invc, idx);
    const __m256d logc = ptc_lut16_4d(ptc_log_logc, idx);
    __m256d r = _mm256_sub_pd(_mm256_mul_pd(z, invc), _mm256_set1_pd(1.0));
    __m256d p;
    PTC_LOG_HORNER(p, r, _mm256_mul_pd, _mm256_add_pd, _mm256_set1_pd)
    __m256d y = _mm256_add_pd(_mm256_mul_pd(kd, _mm256_set1_pd(PTC_LN2)), logc);
    return _mm256_add_pd(y, p);
}
PTC_T_LOG256 static inline __m256d ptc_log1p_small4(__m256d t)
{
    __m256d p;
    PTC_LOG_HORNER(p, t, _mm256_mul_pd, _mm256_add_pd, _mm256_set1_pd)
    return p;
}
PTC_T_LOG256 static inline __m128 ptc_logk4_256(__m128 x, int kind)
{
    __m256d v = _mm256_cvtps_pd(x), y;
    if (kind == 4) {
        const __m256d av = _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
        const __m256d small = _mm256_cmp_pd(av, _mm256_set1_pd(PTC_ATANH_SMALL), _CMP_LT_OQ);
        const __m256d ok = _mm256_cmp_pd(av, _mm256_set1_pd(1.0), _CMP_LT_OQ);
        __m256d u = _mm256_div_pd(_mm256_add_pd(_mm256_set1_pd(1.0), v),
                                  _mm256_sub_pd(_mm256_set1_pd(1.0), v));
        u = _mm256_blendv_pd(_mm256_set1_pd(1.0), u, ok);
        const int sm = _mm256_movemask_pd(small);
        __m256d p;
        if (sm == 0) y = _mm256_mul_pd(ptc_logd4(u), _mm256_set1_pd(0.5));
        else {
            PTC_ATANH_HORNER(p, v, _mm256_mul_pd, _mm256_add_pd, _mm256_set1_pd)
            y = sm == 15 ? p : _mm256_blendv_pd(
                _mm256_mul_pd(ptc_logd4(u), _mm256_set1_pd(0.5)), p, small);
        }
    } else {
        const __m256d av = _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
        const __m256d small = _mm256_cmp_pd(av, _mm256_set1_pd(PTC_L1P_SMALL), _CMP_LT_OQ);
        const __m256d ok = _mm256_cmp_pd(v, _mm256_set1_pd(-1.0), _CMP_GT_OQ);
        __m256d u = _mm256_add_pd(_mm256_set1_pd(1.0), v);
        u = _mm256_blendv_pd(_mm256_set1_pd(1.0), u, ok);
        const int sm = _mm256_movemask_pd(small);
        if (sm == 0) y = ptc_logd4(u);
        else if (sm == 15) y = ptc_log1p_small4(v);
        else y = _mm256_blendv_pd(ptc_logd4(u), ptc_log1p_small4(v), small);
    }
    return _mm256_cvtpd_ps(y);
}
PTC_T_LOG256 static inline __m256 ptc_logk_fix8(__m256 x, __m256 y, int kind)
{
    if (kind == 4) {
        const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
        const __m256 out = _mm256_cmp_ps(ax, _mm256_set1_ps(1.0f), _CMP_GT_OQ);
        const __m256 one = _mm256_cmp_ps(ax, _mm256_set1_ps(1.0f), _CMP_EQ_OQ);
        y = _mm256_blendv_ps(y, _mm256_set1_ps(NAN), out);
        y = _mm256_blendv_ps(y, _mm256_mul_ps(x, _mm256_set1_ps(INFINITY)), one);
        return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
    const __m256 lo = _mm256_set1_ps(kind == 3 ? -1.0f : 0.0f);
    const __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const __m256 at = _mm256_cmp_ps(x, lo, _CMP_EQ_OQ);
    const __m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ),
                                     _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(NAN), below);
    y = _mm256_blendv_ps(y, _mm256_set1_ps(-INFINITY), at);
    return _mm256_blendv_ps(y, x, keep);
}
PTC_T_LOG256 static void ptc_logk_f32_avx2(float* o, const float* a, Py_ssize_t n, int kind)
{
    Py_ssize_t i = 0;
    float buf[8];
    for (;; i += 8) {
        __m256 x;
        const Py_ssize_t m = n - i;
        if (m <= 0) break;
        if (m >= 8) x = _mm256_loadu_ps(a + i);
        else {
            for (int j = 0; j < 8; j++) buf[j] = j < m ? a[i + j] : 1.0f;
            x = _mm256_loadu_ps(buf);
        }
        const __m128 l = ptc_logk4_256(_mm256_castps256_ps128(x), kind);
        const __m128 h = ptc_logk4_256(_mm256_extractf128_ps(x, 1), kind);
        __m256 y = _mm256_insertf128_ps(_mm256_castps128_ps256(l), h, 1);
        y = ptc_logk_fix8(x, y, kind);
        if (m >= 8) _mm256_storeu_ps(o + i, y);
        else {
            _mm256_storeu_ps(buf, y);
            for (Py_ssize_t j = 0; j < m; j++) o[i + j] = buf[j];
            break;
        }
    }
}
#define PTC_LOGK_DISPATCH(o, a, n, kind)                                         \
    do { int l_ = ptc_vec_level();                                               \
         if (l_ == 2) { ptc_logk_f32_avx512(o, a, n, kind); return; }            \
         if (l_ == 1) { ptc_logk_f32_avx2(o, a, n, kind); return; } } while (0)
#else
#define PTC_LOGK_DISPATCH(o, a, n, kind) do { } while (0)
#endif

/* ---- float32 log, log2, log10 in float lanes ----
 *
 * torch's accuracy class (SLEEF's u10 functions: within 1.0 ulp), at 16
 * float lanes an AVX-512 vector (8 doubles above): x = 2^k z, z in
 * [0.699, 1.398) in one of the 16 subintervals above, c its centre with
 * 1/c rounded to float (invc; 1 for the one holding 1), and
 *     log x = k ln2 + log c + log1p(r),   r = z invc - 1,  |r| < 0.031,
 * in float arithmetic carrying the low parts: z invc = ph + pl exactly (one
 * FMA), ph - 1 exact (Sterbenz), so r = rh + pl exactly; k ln2 =
 * k LN2H (exact: 15 bits) + k LN2L; log c = LCH + LCL (-log invc to 48
 * bits); the sums k LN2H + LCH and then + rh by 2Sum with their errors
 * kept; log1p(r) - r by rh^2 (-1/2 + rh/3 - ... + rh^5/7) (truncation
 * < 1e-9 relative).  The result H + L (|L| << ulp(H)) is rounded once:
 * within 1 ulp of the float64 log rounded to float32 (measured over every
 * positive float: max 1 ulp, ~99.7% the same bits); log2 and log10
 * multiply H + L by 1/ln2 or 1/ln10 as a float pair (one FMA for the
 * product's error).  Subnormal x are scaled by 2^23 first, so every copy
 * runs the same operations for every input.
 *
 * The AVX-512 and AVX2 copies run where the CPU has FMA (ptc_fma_level),
 * the scalar copy (ptc_logf_k; fmaf) everywhere else and for the strided
 * loops: the same operations in the same order, so the bits do not depend
 * on the CPU. */
static const float ptc_logf_invc[16] = {
    0x1.661ec6p+0f, 0x1.571ed4p+0f, 0x1.49539ep+0f, 0x1.3c995ap+0f,
    0x1.30d190p+0f, 0x1.25e228p+0f, 0x1.1bb4a4p+0f, 0x1.12358ep+0f,
    0x1.0953f4p+0f, 0x1.000000p+0f, 0x1.e573acp-1f, 0x1.ca4b30p-1f,
    0x1.b20364p-1f, 0x1.9c2d14p-1f, 0x1.886e60p-1f, 0x1.767dcep-1f};
/* -log(invc) = LCH + LCL */
static const float ptc_logf_lch[16] = {
    -0x1.57bf74p-2f, -0x1.2bef08p-2f, -0x1.01eae4p-2f, -0x1.b31d84p-3f,
    -0x1.6574ecp-3f, -0x1.1aa2bep-3f, -0x1.a4e764p-4f, -0x1.1973b6p-4f,
    -0x1.252f40p-5f, 0.0f, 0x1.b42de0p-5f, 0x1.c5e54cp-4f,
    0x1.526e5ep-3f, 0x1.bc286cp-3f, 0x1.1058bep-2f, 0x1.40430ap-2f};
static const float ptc_logf_lcl[16] = {
    0x1.36e5c2p-27f, -0x1.f724d4p-28f, -0x1.54d8d2p-27f, 0x1.690c72p-29f,
    0x1.2e7d98p-28f, -0x1.447ee0p-28f, 0x1.a721e4p-31f, -0x1.a32aa8p-31f,
    -0x1.e34604p-31f, 0.0f, 0x1.232e3ap-30f, -0x1.487170p-33f,
    0x1.686d0ep-29f, -0x1.d27314p-31f, -0x1.ca36a4p-27f, -0x1.bf2b04p-27f};
#define PTC_LOGF_OFF 0x3f330000                 /* 0.69921875 */
#define PTC_LOGF_LN2H 0x1.62e4p-1f
#define PTC_LOGF_LN2L 0x1.7f7d1cp-20f
/* 1/ln2 and 1/ln10 as float pairs */
#define PTC_LOGF_IL2H 0x1.715476p+0f
#define PTC_LOGF_IL2L 0x1.4ae0c0p-26f
#define PTC_LOGF_IL10H 0x1.bcb7b2p-2f
#define PTC_LOGF_IL10L (-0x1.5b235ep-27f)

/* H + L = log of the positive normal float with bits IX (the exponent plus
 * KADJ), in VF lanes (VI their integer lanes; a plain float and int32_t for
 * the scalar copy): FMA the fused multiply-add, ASF an integer lanes'
 * float bits, LUT a 16-entry table at integer lanes, CVT integer lanes to
 * float, ZERO VF zeros */
#define PTC_LOGF_CORE(VF, VI, IX, KADJ, H, L, ZERO, FMA, ASF, LUT, CVT)        \
    VF H, L;                                                                 \
    { const VI tmp_ = (IX) - PTC_LOGF_OFF;                                   \
      const VI i_ = (tmp_ >> 19) & 15;                                       \
      const VF k_ = CVT((tmp_ >> 23) + (KADJ));                              \
      const VF z_ = ASF((IX) - (tmp_ & (int32_t)0xff800000));                \
      const VF invc_ = LUT(ptc_logf_invc, i_);                               \
      const VF ph_ = z_ * invc_;                                             \
      const VF pl_ = FMA(z_, invc_, -ph_);                                   \
      const VF rh_ = ph_ - 1.0f;                                             \
      VF p_ = FMA(rh_, ZERO + 0x1.24924ap-3f, ZERO - 0x1.555556p-3f);        \
      p_ = FMA(p_, rh_, ZERO + 0x1.99999ap-3f);                              \
      p_ = FMA(p_, rh_, ZERO - 0.25f);                                       \
      p_ = FMA(p_, rh_, ZERO + 0x1.555556p-2f);                              \
      p_ = FMA(p_, rh_, ZERO - 0.5f);                                        \
      const VF q_ = (rh_ * rh_) * p_;                                        \
      const VF klh_ = k_ * PTC_LOGF_LN2H;                                    \
      const VF lch_ = LUT(ptc_logf_lch, i_);                                 \
      const VF s1_ = klh_ + lch_;             /* |klh| >= |lch| or klh = 0 */ \
      const VF e1_ = (klh_ - s1_) + lch_;                                    \
      const VF s2_ = s1_ + rh_;               /* 2Sum */                     \
      const VF bb_ = s2_ - s1_;                                              \
      const VF e2_ = (s1_ - (s2_ - bb_)) + (rh_ - bb_);                      \
      VF t_ = k_ * PTC_LOGF_LN2L + LUT(ptc_logf_lcl, i_);                    \
      t_ = t_ + pl_;                                                         \
      t_ = t_ + e1_;                                                         \
      t_ = t_ + e2_;                                                         \
      H = s2_;                                                               \
      L = t_ + q_; }

/* the result of kind 0 (log), 1 (log2), 2 (log10) from H + L */
#define PTC_LOGF_OUT(y, H, L, kind, ZERO, FMA)                                 \
    if (kind == 0) y = H + L;                                                \
    else {                                                                   \
        const float ch_ = kind == 1 ? PTC_LOGF_IL2H : PTC_LOGF_IL10H;        \
        const float cl_ = kind == 1 ? PTC_LOGF_IL2L : PTC_LOGF_IL10L;        \
        const __typeof__(H) pp_ = H * ch_;                                   \
        const __typeof__(H) pe_ = FMA(H, ZERO + ch_, -pp_);                  \
        y = pp_ + FMA(H, ZERO + cl_, FMA(L, ZERO + ch_, pe_));               \
    }

static inline float ptc_logf_asf(int32_t i) { float f; memcpy(&f, &i, 4); return f; }
#define PTC_LOGF_LUT_S(tab, i) (tab)[i]
#define PTC_LOGF_CVT_S(k) ((float)(k))

/* the scalar copy: kind 0 log, 1 log2, 2 log10 */
static inline __attribute__((always_inline)) float ptc_logf_k(float x, int kind)
{
    int32_t ix, kadj = 0;
    const float zero = 0.0f;
    float y, c = 0.0f;
    if (kind == 3) {
        /* log1p x = log(w) + e / w to first order in e / w < 2^-24, with
         * w + e = 1 + x exactly (2Sum; w >= 2^-24 or 0 for x >= -1) */
        if (x == 0.0f) return x;                    /* (log1p(-0) = -0) */
        const float w = x + 1.0f, bb = w - 1.0f;
        c = ((1.0f - (w - bb)) + (x - bb)) / w;
        if (!(w > 0.0f)) return w != w ? w : (w == 0.0f ? -INFINITY : NAN);
        if (w == INFINITY) return w;
        memcpy(&ix, &w, 4);
        PTC_LOGF_CORE(float, int32_t, ix, 0, h, l, zero, fmaf, ptc_logf_asf, PTC_LOGF_LUT_S,
                      PTC_LOGF_CVT_S)
        return h + (l + c);
    }
    if (!(x > 0.0f)) return x != x ? x : (x == 0.0f ? -INFINITY : NAN);
    if (x == INFINITY) return x;
    if (x < 0x1p-126f) { x = x * 0x1p23f; kadj = -23; }
    memcpy(&ix, &x, 4);
    PTC_LOGF_CORE(float, int32_t, ix, kadj, h, l, zero, fmaf, ptc_logf_asf, PTC_LOGF_LUT_S,
                  PTC_LOGF_CVT_S)
    PTC_LOGF_OUT(y, h, l, kind, zero, fmaf)
    return y;
}

#if defined(PTC_X86_DISPATCH) && PTC_X86_DISPATCH
/* y = the log of kind of the W lanes x; where ANY lane of x is not a
 * positive normal float (the integer lanes' test: 0 < x < 2^-126, x <= 0,
 * inf, NaN) subnormals scaled and the special lanes replaced after (the
 * same operations on the other lanes, so the same bits) */
#define PTC_LOGF_STEP(VF, VI, FMA, LUT, CVT, ANY, x, y)                        \
    if (!ANY(((VI)x < 0x00800000) | ((VI)x > 0x7f7fffff))) {                 \
        PTC_LOGF_CORE(VF, VI, (VI)x, 0, h, l, zero, FMA, (VF), LUT, CVT)     \
        PTC_LOGF_OUT(y, h, l, kind, zero, FMA)                               \
    } else                                                                   \
    { const VI sub = x < 0x1p-126f;                                          \
      const VF xs = PTC_LANE_SEL(VF, VI, sub, x * 0x1p23f, x);               \
      const VI ix = (VI)xs;                                                  \
      PTC_LOGF_CORE(VF, VI, ix, sub & -23, h, l, zero, FMA, (VF), LUT, CVT)  \
      PTC_LOGF_OUT(y, h, l, kind, zero, FMA)                                 \
      y = PTC_LANE_SEL(VF, VI, x < 0.0f, zero + NAN, y);                     \
      y = PTC_LANE_SEL(VF, VI, x == 0.0f, zero - INFINITY, y);               \
      y = PTC_LANE_SEL(VF, VI, (x == INFINITY) | (x != x), x, y); }
#define PTC_LOGF_LUT16(tab, i) ((ptc_v16sf)_mm512_permutexvar_ps((__m512i)(i), _mm512_loadu_ps(tab)))
/* a 16-entry table at 8 integer lanes (0..15): two in-register permutes and
 * a blend on bit 3, the same values as a gather at a fraction of its cost
 * (vgatherdps is microcoded on AMD Zen: the three gathers of a vector were
 * most of log's time there, 1.7-2.1x torch's; Intel's are also slower) */
__attribute__((target("avx2"), always_inline)) static inline ptc_v8sf
ptc_logf_lut8(const float* tab, ptc_v8si i)
{
    const __m256i iv = (__m256i)i;
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), iv);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8), iv);
    return (ptc_v8sf)_mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(iv, 28)));
}
#define PTC_LOGF_LUT8(tab, i) ptc_logf_lut8((tab), (i))
#define PTC_LOGF_CVT16(k) __builtin_convertvector((k), ptc_v16sf)
#define PTC_LOGF_CVT8(k) __builtin_convertvector((k), ptc_v8sf)
/* log1p: the core on w = 1 + x (rounded), e / w added to its low part (w + e
 * = 1 + x exactly); lanes whose w is not a positive normal float (x <= -1,
 * inf, NaN: w >= 2^-24 otherwise) replaced after, zeros kept (-0) */
#define PTC_LOG1PF_STEP(VF, VI, FMA, LUT, CVT, ANY, x, y)                      \
    { const VF w = x + 1.0f, bb = w - 1.0f;                                  \
      const VF c = ((1.0f - (w - bb)) + (x - bb)) / w;                       \
      PTC_LOGF_CORE(VF, VI, (VI)w, 0, h, l, zero, FMA, (VF), LUT, CVT)       \
      y = h + (l + c);                                                       \
      if (ANY(((VI)w < 0x00800000) | ((VI)w > 0x7f7fffff))) {                \
          y = PTC_LANE_SEL(VF, VI, w < 0.0f, zero + NAN, y);                 \
          y = PTC_LANE_SEL(VF, VI, w == 0.0f, zero - INFINITY, y);           \
          y = PTC_LANE_SEL(VF, VI, (w == INFINITY) | (w != w), w, y); }      \
      y = PTC_LANE_SEL(VF, VI, x == 0.0f, x, y); }
#define PTC_LOG1PF_STEP16(x, y) PTC_LOG1PF_STEP(ptc_v16sf, ptc_v16si, PTC_LANE_FMA16,       \
                                                PTC_LOGF_LUT16, PTC_LOGF_CVT16, PTC_LANE_ANY16, x, y)
#define PTC_LOG1PF_STEP8(x, y) PTC_LOG1PF_STEP(ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, PTC_LOGF_LUT8, \
                                               PTC_LOGF_CVT8, PTC_LANE_ANY8, x, y)
PTC_LANE_MAPS(ptc_log1pf_f32, kind, 0.0f, PTC_LOG1PF_STEP16, PTC_LOG1PF_STEP8)
#define PTC_LOGF_STEP16(x, y) PTC_LOGF_STEP(ptc_v16sf, ptc_v16si, PTC_LANE_FMA16, PTC_LOGF_LUT16, \
                                            PTC_LOGF_CVT16, PTC_LANE_ANY16, x, y)
#define PTC_LOGF_STEP8(x, y) PTC_LOGF_STEP(ptc_v8sf, ptc_v8si, PTC_LANE_FMA8, PTC_LOGF_LUT8, \
                                           PTC_LOGF_CVT8, PTC_LANE_ANY8, x, y)
PTC_LANE_MAPS(ptc_logf_f32, kind, 1.0f, PTC_LOGF_STEP16, PTC_LOGF_STEP8)
PTC_LANE_SPECIAL(ptc_log1pf_f32, 3)
PTC_LANE_SPECIAL(ptc_logf_f32, 0)
PTC_LANE_SPECIAL(ptc_logf_f32, 1)
PTC_LANE_SPECIAL(ptc_logf_f32, 2)
#endif
#define PTC_LOGF_ENTRY(NAME, KIND)                                               \
static void NAME(float* o, const float* a, Py_ssize_t n)                         \
{                                                                                \
    PTC_LANE_DISPATCH(ptc_logf_f32, o, a, n, KIND);                                            \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_logf_k(a[i], KIND);            \
}

#define PTC_LOGK_ENTRY(NAME, KIND)                                               \
static void NAME(float* o, const float* a, Py_ssize_t n)                         \
{                                                                                \
    PTC_LOGK_DISPATCH(o, a, n, KIND);                                            \
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_logk_s(a[i], KIND);            \
}
/* one value (an expression's log, xlogy's): the scalar copy compiled with FMA
 * where the CPU has it -- fmaf is then one instruction, not a libm call per
 * multiply-add (xlogy 1.6x slower without) */
PTC_LANE_SCALAR_FMA(ptc_logf_k)
static inline float ptc_logf_d(float x) { return PTC_LANE_ONE(ptc_logf_k, x, 0); }
static inline float ptc_log2f_d(float x) { return PTC_LANE_ONE(ptc_logf_k, x, 1); }
static inline float ptc_log10f_d(float x) { return PTC_LANE_ONE(ptc_logf_k, x, 2); }
static inline float ptc_log1pf_d(float x) { return PTC_LANE_ONE(ptc_logf_k, x, 3); }
PTC_LOGF_ENTRY(ptc_log_v_f32, 0)
PTC_LOGF_ENTRY(ptc_log2_v_f32, 1)
PTC_LOGF_ENTRY(ptc_log10_v_f32, 2)
static void ptc_log1p_v_f32(float* o, const float* a, Py_ssize_t n)
{
    PTC_LANE_DISPATCH(ptc_log1pf_f32, o, a, n, 3);
    for (Py_ssize_t i = 0; i < n; i++) o[i] = ptc_logf_k(a[i], 3);
}
PTC_LOGK_ENTRY(ptc_atanh_v_f32, 4)
#endif
