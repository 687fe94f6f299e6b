/* The 8-bit floating formats <-> binary32, bit for bit as PyTorch converts them.
 *
 *   format        exponent/mantissa bits, bias   inf   NaN codes       largest finite
 *   e4m3fn        4/3, 7                         no    S.1111.111      448
 *   e5m2          5/2, 15                        yes   S.11111.xx      57344
 *   e4m3fnuz      4/3, 8                         no    1.0000.000 only 240 (no -0)
 *   e5m2fnuz      5/2, 16                        no    1.00000.00 only 57344 (no -0)
 *
 * From binary32: round to nearest, ties to even, through the subnormals.  What does not
 * fit: e4m3fn saturates to +-448 (infinities too) and keeps NaN as NaN; e5m2 rounds to
 * +-inf; the fnuz formats give their one NaN code 0x80 (infinities and NaN too), and a
 * negative value that rounds to zero is +0.  (binary64 and the integers are converted to
 * binary32 first, as PyTorch's kernels do.)
 */
#ifndef PTC_FP8_H
#define PTC_FP8_H
#include <stdint.h>
#include <string.h>

static inline uint32_t ptc__fp8_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* round m / 2^s to the nearest integer, ties to even (s >= 1) */
static inline uint32_t ptc__fp8_rne(uint32_t m, uint32_t s)
{
    if (s >= 32) return 0;                       /* m < 2^24 <= half of 2^s: rounds to 0 */
    uint32_t q = m >> s, r = m & ((1u << s) - 1u), half = 1u << (s - 1u);
    return q + (r > half || (r == half && (q & 1u)));
}

/* The 7-bit magnitude code (exponent << m | mantissa) nearest to the finite binary32
 * magnitude with bits a, in a format of m mantissa bits and exponent bias `bias`; a value
 * past the largest finite one carries into the codes above it. */
static inline uint32_t ptc__fp8_magnitude(uint32_t a, uint32_t m, uint32_t bias)
{
    uint32_t e = a >> 23;
    if (e >= 128u - bias)                        /* normal in the 8-bit format */
        return ptc__fp8_rne(a - ((127u - bias) << 23), 23u - m);
    /* subnormal: a multiple of 2^(1 - bias - m) */
    uint32_t mant = (a & 0x7fffffu) | (e ? 0x800000u : 0u);
    if (e == 0) e = 1;
    return ptc__fp8_rne(mant, 151u - bias - m - e);
}

static inline uint8_t ptc_float_to_e4m3fn(float f)
{
    uint32_t u = ptc__fp8_bits(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu, c;
    if (a > 0x7f800000u) return (uint8_t)(0x7fu | sign);           /* NaN */
    c = a >= 0x43f00000u ? 0x7eu : ptc__fp8_magnitude(a, 3, 7);    /* >= 480: saturate */
    if (c > 0x7eu) c = 0x7eu;                                       /* rounds into NaN */
    return (uint8_t)(c | sign);
}

static inline uint8_t ptc_float_to_e5m2(float f)
{
    uint32_t u = ptc__fp8_bits(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint8_t)(0x7fu | sign);           /* NaN */
    if (a >= 0x47800000u) return (uint8_t)(0x7cu | sign);          /* >= 2^16: inf */
    return (uint8_t)(ptc__fp8_magnitude(a, 2, 15) | sign);         /* may round to inf */
}

static inline uint8_t ptc_float_to_e4m3fnuz(float f)
{
    uint32_t u = ptc__fp8_bits(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu, c;
    if (a >= 0x43800000u) return 0x80u;                  /* >= 256, inf, NaN: NaN */
    c = ptc__fp8_magnitude(a, 3, 8);                     /* 0x80 past 240: NaN */
    return (uint8_t)(c == 0 ? 0u : (c | sign));
}

static inline uint8_t ptc_float_to_e5m2fnuz(float f)
{
    uint32_t u = ptc__fp8_bits(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu, c;
    if (a >= 0x47800000u) return 0x80u;                  /* >= 2^16, inf, NaN: NaN */
    c = ptc__fp8_magnitude(a, 2, 16);
    return (uint8_t)(c == 0 ? 0u : (c | sign));
}

/* code -> value: (2^m + mantissa) * 2^(exponent - bias - m), subnormals mantissa *
 * 2^(1 - bias - m); the formats' NaN and infinity codes are handled by the callers */
static inline float ptc__fp8_value(uint32_t code, uint32_t m, int bias)
{
    uint32_t e = (code & 0x7fu) >> m, mant = code & ((1u << m) - 1u);
    /* 2^(k) as binary32 bits for the scale, exact for every code of these formats */
    int k = e ? (int)e - bias - (int)m : 1 - bias - (int)m;
    float scale, v;
    uint32_t sb = (uint32_t)(k + 127) << 23;
    memcpy(&scale, &sb, 4);
    v = (float)(e ? mant + (1u << m) : mant) * scale;
    return (code & 0x80u) ? -v : v;
}

static inline float ptc_e4m3fn_to_float(uint8_t c)
{
    if ((c & 0x7fu) == 0x7fu) {                          /* NaN, PyTorch's bits */
        uint32_t nan = 0x7ff00000u | ((uint32_t)(c & 0x80u) << 24);
        float f; memcpy(&f, &nan, 4); return f;
    }
    return ptc__fp8_value(c, 3, 7);
}

static inline float ptc_e5m2_to_float(uint8_t c)
{
    if ((c & 0x7cu) == 0x7cu) {                          /* exponent all ones: inf or NaN */
        uint32_t b = ((uint32_t)(c & 0x80u) << 24) | 0x7f800000u
                     | ((c & 0x3u) ? 0x400000u | ((uint32_t)(c & 0x3u) << 21) : 0u);
        float f; memcpy(&f, &b, 4); return f;
    }
    return ptc__fp8_value(c, 2, 15);
}

static inline float ptc_e4m3fnuz_to_float(uint8_t c)
{
    if (c == 0x80u) { uint32_t nan = 0x7f800001u; float f; memcpy(&f, &nan, 4); return f; }
    return ptc__fp8_value(c, 3, 8);
}

static inline float ptc_e5m2fnuz_to_float(uint8_t c)
{
    if (c == 0x80u) { uint32_t nan = 0x7f800001u; float f; memcpy(&f, &nan, 4); return f; }
    return ptc__fp8_value(c, 2, 16);
}

#endif
