/* IEEE binary16 and bfloat16 <-> binary32 conversions (round to nearest even).
 * Portable C: no _Float16, no F16C requirement, so the same source builds with
 * any C99 compiler and NVRTC-generated code can mirror it bit for bit. */
#ifndef PTC_HALF_H
#define PTC_HALF_H
#include <stdint.h>
#include <string.h>

typedef uint16_t ptc_half;
typedef uint16_t ptc_bf16;

static inline uint32_t ptc__f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ptc__u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float ptc_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: renormalise */
            int e = -1;
            do { e++; man <<= 1; } while ((man & 0x400u) == 0);
            man &= 0x3ffu;
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u);
    } else {
        u = sign | ((exp + (127 - 15)) << 23) | (man << 13);
    }
    return ptc__u2f(u);
}

static inline uint16_t ptc_float_to_half(float f)
{
    uint32_t u = ptc__f2u(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) { /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u | ((absu >> 13) & 0x3ffu) : 0u));
    }
    if (absu >= 0x477ff000u) { /* rounds to >= 65520 -> inf */
        return (uint16_t)(sign | 0x7c00u);
    }
    if (absu < 0x38800000u) { /* result is subnormal or zero */
        /* value = absf; half subnormal unit = 2^-24 */
        uint32_t exp = absu >> 23;
        if (exp < 102) return sign; /* < 2^-25: rounds to zero */
        uint32_t man = (absu & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp; /* 14..24 */
        uint32_t half_man = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_man & 1u))) half_man++;
        return (uint16_t)(sign | half_man);
    }
    /* normal */
    uint32_t r = absu + 0xfffu + ((absu >> 13) & 1u); /* round to nearest even */
    r -= (uint32_t)(112u << 23);
    return (uint16_t)(sign | (r >> 13));
}

static inline float ptc_bf16_to_float(uint16_t b)
{
    return ptc__u2f((uint32_t)b << 16);
}

static inline uint16_t ptc_float_to_bf16(float f)
{
    uint32_t u = ptc__f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { /* nan: keep quiet nan */
        return (uint16_t)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#endif
