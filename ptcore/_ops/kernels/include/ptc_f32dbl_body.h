/* Body of ptc_f32dbl_math.h: float32 functions computed in double, on
 * vectors of double lanes holding float values.  Included once per width
 * with
 *   DF_SFX          the suffix of the function names (_d8, _d4, _d1)
 *   DF_VD, DF_VL    the vector of doubles and of int64 of that width
 *   DF_ATTR         the functions' attributes (static inline, target)
 *   DF_LUT16(t, i)  the doubles t[i] for lanes i in [0, 16)
 *   DF_ANY(m)       whether any lane of the mask m is set
 * No include guard: meant to be included several times; it undefines its
 * parameters at the end.
 *
 * Every width does the same double operations in the same order (the module
 * is compiled in ISO C mode: no multiply-add contraction), so the rounded
 * float is the same on every CPU and for the scalar (width 1) copy that the
 * strided loops and the tails use.  The double results are within ~1e-15
 * relative of the true value, so the float is the correctly rounded one
 * except within ~1e-8 ulp of a rounding midpoint. */

#define DF_CAT2(a, b) a##b
#define DF_CAT(a, b) DF_CAT2(a, b)
#define DF_N(name) DF_CAT(name, DF_SFX)
#define DF_SPLAT(c) ((DF_VD){0} + (c))

DF_ATTR DF_VD DF_N(ptc_df_sel)(DF_VL m, DF_VD a, DF_VD b)
{
    return (DF_VD)(((DF_VL)a & m) | ((DF_VL)b & ~m));
}
DF_ATTR DF_VD DF_N(ptc_df_abs)(DF_VD x)
{
    return (DF_VD)((DF_VL)x & PTC_DF_ABS_MASK);
}
/* x with the sign bit of s or-ed in (x >= +0) */
DF_ATTR DF_VD DF_N(ptc_df_signed)(DF_VD x, DF_VD s)
{
    return (DF_VD)((DF_VL)x | ((DF_VL)s & ~PTC_DF_ABS_MASK));
}
/* x clamped to [-m, m] (NaN stays NaN) */
DF_ATTR DF_VD DF_N(ptc_df_clamp)(DF_VD x, double m)
{
    x = DF_N(ptc_df_sel)(x > m, DF_SPLAT(m), x);
    return DF_N(ptc_df_sel)(x < -m, DF_SPLAT(-m), x);
}

/* 2^(k/16) e^r, k the integer in the low bits of kb = k + PTC_DF_SHIFT,
 * |r| <= ln2/32, |k| < 2^13: e^r by its Taylor polynomial to r^6
 * (truncation < 5e-16), 2^(k mod 16 / 16) from the table, 2^(k div 16) built
 * in the exponent bits ((k + 16368) div 16 = k div 16 + 1023, no signed
 * shift needed) */
DF_ATTR DF_VD DF_N(ptc_df_exp_tail)(DF_VD kb, DF_VD r)
{
    const DF_VL ki = (DF_VL)kb;
    DF_VD p = r * PTC_DF_F6 + PTC_DF_F5;
    p = p * r + PTC_DF_F4;
    p = p * r + PTC_DF_F3;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const DF_VD t = DF_LUT16(ptc_df_exp2_16, ki & 15);
    const DF_VD sc = (DF_VD)(((ki + 16368) & ~(int64_t)15) << 48);
    return (p * t) * sc;
}
/* e^x for |x| <= 104 */
DF_ATTR DF_VD DF_N(ptc_df_exp)(DF_VD x)
{
    const DF_VD kb = x * PTC_DF_16_LN2 + PTC_DF_SHIFT;
    const DF_VD k = kb - PTC_DF_SHIFT;
    DF_VD r = x - k * PTC_DF_LN2_16_HI;
    r = r - k * PTC_DF_LN2_16_LO;
    return DF_N(ptc_df_exp_tail)(kb, r);
}

/* ---- float functions of the widened float values v ---- */
DF_ATTR DF_VD DF_N(ptc_df_sinhf)(DF_VD v)
{
    const DF_VD a = DF_N(ptc_df_abs)(v);
    const DF_VD e = DF_N(ptc_df_exp)(DF_N(ptc_df_clamp)(a, 104.0));
    DF_VD y = (e - 1.0 / e) * 0.5;
    const DF_VL small = (DF_VL)(a < 0.03125);
    if (DF_ANY(small)) {
        const DF_VD a2 = a * a;
        DF_VD p = a2 * PTC_DF_F7 + PTC_DF_F5;
        p = p * a2 + PTC_DF_F3;
        p = (p * a2) * a + a;
        y = DF_N(ptc_df_sel)(small, p, y);
    }
    return DF_N(ptc_df_signed)(y, v);
}
DF_ATTR DF_VD DF_N(ptc_df_coshf)(DF_VD v)
{
    const DF_VD e = DF_N(ptc_df_exp)(DF_N(ptc_df_clamp)(DF_N(ptc_df_abs)(v), 104.0));
    return (e + 1.0 / e) * 0.5;
}

/* sin (which 0), cos (1) or tan (2) of |v| <= 2^16: v = k pi/2 + r with pi/2
 * in three parts (k v's nearest integer of v 2/pi, |k| < 2^16, so k C1 and
 * k C2 are exact and r is within 2e-16 of its value relative to itself),
 * |r| <= pi/4, sin r and cos r by their Taylor polynomials (to r^13 and
 * r^14: truncation < 4e-14 and 2e-15).  Larger |v|, inf and NaN: the lanes
 * are recomputed by libm's double functions. */
DF_ATTR DF_VD DF_N(ptc_df_trigf)(DF_VD v, int which)
{
    const DF_VD kb = v * PTC_DF_2_PI + PTC_DF_SHIFT;
    const DF_VD k = kb - PTC_DF_SHIFT;
    DF_VD r = v - k * PTC_DF_PIO2_1;
    r = r - k * PTC_DF_PIO2_2;
    r = r - k * PTC_DF_PIO2_3;
    const DF_VL q = (DF_VL)kb;
    const DF_VD r2 = r * r;
    DF_VD ps = r2 * PTC_DF_F13 - PTC_DF_F11;
    ps = ps * r2 + PTC_DF_F9;
    ps = ps * r2 - PTC_DF_F7;
    ps = ps * r2 + PTC_DF_F5;
    ps = ps * r2 - PTC_DF_F3;
    const DF_VD s = r + (r * r2) * ps;
    DF_VD pc = r2 * -PTC_DF_F14 + PTC_DF_F12;
    pc = pc * r2 - PTC_DF_F10;
    pc = pc * r2 + PTC_DF_F8;
    pc = pc * r2 - PTC_DF_F6;
    pc = pc * r2 + PTC_DF_F4;
    const DF_VD c = (1.0 - r2 * 0.5) + (r2 * r2) * pc;
    const DF_VL odd = (DF_VL){0} - (q & 1);
    DF_VD y;
    if (which == 0)
        y = (DF_VD)((DF_VL)DF_N(ptc_df_sel)(odd, c, s) ^ ((q & 2) << 62));
    else if (which == 1)
        y = (DF_VD)((DF_VL)DF_N(ptc_df_sel)(odd, s, c) ^ (((q + 1) & 2) << 62));
    else
        y = (DF_VD)((DF_VL)(DF_N(ptc_df_sel)(odd, c, s) / DF_N(ptc_df_sel)(odd, s, c))
                    ^ ((q & 1) << 63));
    if (which != 1) y = DF_N(ptc_df_sel)(v == 0.0, v, y);   /* sin(-0) = tan(-0) = -0 */
    const DF_VL big = ~(DF_VL)(DF_N(ptc_df_abs)(v) <= 65536.0);
    if (DF_ANY(big)) {
        for (int j = 0; j < (int)(sizeof(DF_VD) / sizeof(double)); j++)
            if (big[j]) y[j] = which == 0 ? sin(v[j]) : which == 1 ? cos(v[j]) : tan(v[j]);
    }
    return y;
}

/* log x for positive normal x: x = 2^k m with m in [sqrt(1/2), sqrt(2)) (the
 * bits of x less those of sqrt(1/2) give k in their exponent field; k as a
 * double by the SHIFT trick), log m = 2 atanh(s) with s = (m - 1) / (m + 1)
 * (m - 1 exact), |s| <= 0.1716, by its Taylor series to s^13 (truncation
 * below 2.5e-12 relative: e^(y log x) within 3e-10 relative for the float
 * range, 0.005 ulp of a float) */
DF_ATTR DF_VD DF_N(ptc_df_log)(DF_VD x)
{
    const DF_VL xi = (DF_VL)x;
    const DF_VL k = (xi - 0x3fe6a09e667f3bcdLL) >> 52;
    const DF_VD m = (DF_VD)(xi - (k << 52));
    const DF_VD kd = (DF_VD)(k + (DF_VL)DF_SPLAT(PTC_DF_SHIFT)) - PTC_DF_SHIFT;
    const DF_VD s = (m - 1.0) / (m + 1.0);
    const DF_VD s2 = s * s;
    DF_VD p = s2 * PTC_DF_L13 + PTC_DF_L11;
    p = p * s2 + PTC_DF_L9;
    p = p * s2 + PTC_DF_L7;
    p = p * s2 + PTC_DF_L5;
    p = p * s2 + PTC_DF_L3;
    const DF_VD lm = (s + s) + (s * s2) * p;
    return (kd * PTC_DF_LN2_HI + lm) + kd * PTC_DF_LN2_LO;
}

/* x^y of widened floats: e^(y log x) for 0 < x < inf and finite y (y log x
 * clamped to [-110, 100], where the float result has overflowed to inf or
 * underflowed to 0; within ~1e-14 relative before the float rounding).  The
 * other lanes (x <= 0, inf or NaN, y inf or NaN: C99's special cases, the
 * sign of a negative base; and x a power of two other than 1, whose results
 * 2^(k y) may be exact midpoints, 2^-150 -> 0) are recomputed by libm's powf. */
DF_ATTR DF_VD DF_N(ptc_df_powf)(DF_VD x, DF_VD y)
{
    const DF_VL pow2 = (DF_VL)(((DF_VL)x & 0x000fffffffffffffLL) == 0) & (DF_VL)(x != 1.0);
    const DF_VL sp = ~(DF_VL)((x > 0.0) & (x <= PTC_DF_FLT_MAX)
                              & (DF_N(ptc_df_abs)(y) <= PTC_DF_FLT_MAX)) | pow2;
    const DF_VD xs = DF_N(ptc_df_sel)(sp, DF_SPLAT(1.0), x);
    const DF_VD t = DF_N(ptc_df_log)(xs) * DF_N(ptc_df_sel)(sp, DF_SPLAT(0.0), y);
    DF_VD r = DF_N(ptc_df_exp)(DF_N(ptc_df_sel)(t > 100.0, DF_SPLAT(100.0),
                               DF_N(ptc_df_sel)(t < -110.0, DF_SPLAT(-110.0), t)));
    if (DF_ANY(sp)) {
        for (int j = 0; j < (int)(sizeof(DF_VD) / sizeof(double)); j++)
            if (sp[j]) r[j] = (double)powf((float)x[j], (float)y[j]);
    }
    return r;
}

/* hypot of widened floats: sqrt(x^2 + y^2) in double (the squares exact, no
 * overflow or underflow for floats; the sum and the root rounded), an
 * infinity in either operand gives +inf even beside a NaN */
DF_ATTR DF_VD DF_N(ptc_df_hypotf)(DF_VD x, DF_VD y)
{
    const DF_VD h = DF_SQRT(x * x + y * y);
    const DF_VL inf = (DF_VL)((DF_N(ptc_df_abs)(x) == INFINITY) | (DF_N(ptc_df_abs)(y) == INFINITY));
    return DF_N(ptc_df_sel)(inf, DF_SPLAT(INFINITY), h);
}

/* xlogy of widened floats (torch's rules: y NaN gives NaN, else x == 0 gives
 * 0, else x log y): x log y in double rounded once; lanes with y <= 0, inf or
 * NaN take libm's log */
DF_ATTR DF_VD DF_N(ptc_df_xlogyf)(DF_VD x, DF_VD y)
{
    const DF_VL sp = ~(DF_VL)((y > 0.0) & (y <= PTC_DF_FLT_MAX));
    DF_VD l = DF_N(ptc_df_log)(DF_N(ptc_df_sel)(sp, DF_SPLAT(1.0), y));
    if (DF_ANY(sp)) {
        for (int j = 0; j < (int)(sizeof(DF_VD) / sizeof(double)); j++)
            if (sp[j]) l[j] = log(y[j]);
    }
    const DF_VD r = DF_N(ptc_df_sel)((DF_VL)(x == 0.0), DF_SPLAT(0.0), x * l);
    return DF_N(ptc_df_sel)((DF_VL)(y != y), y, r);
}

/* lgamma of widened floats.  w = v for v > 0, 1 - v for v < 0 (reflection:
 * lgamma(v) = log(pi / |sin(pi v)|) - lgamma(1 - v), sin(pi r) of the exact
 * remainder r = v - round(v), |r| <= 1/2, by its Taylor series to r^19).  w < 8: w = u + n with n the
 * nearest integer of w - 2 (-2 <= n <= 6, u in [1.5, 2.5], exact), lgamma(w)
 * = lgamma(u) + log(N / D), N = u (u + 1) ... (u + n - 1) for n > 0, D = w
 * (w + 1) ... (w - n - 1) for n < 0; lgamma(2 + z), |z| <= 1/2, by a
 * polynomial z (G1 + ... z^14 G15) (within 1.1e-14 relative; no constant
 * term: the zeros at 1 and 2 come out with an absolute error ~1e-17).  w >= 8: Stirling's series
 * to w^-11 (truncation < 3e-13 absolute).  One division and one log for the
 * product ratio and the reflection's pi / |sin| together.  Poles (v = 0,
 * -0, negative integers, all v <= -2^23), +-inf: +inf; NaN: NaN (torch's). */
DF_ATTR DF_VD DF_N(ptc_df_lgammaf)(DF_VD v)
{
    const DF_VD a = DF_N(ptc_df_abs)(v);
    const DF_VL neg = (DF_VL)(v < 0.0);
    const DF_VD vr = DF_N(ptc_df_sel)((DF_VL)(a < 8388608.0), v, DF_SPLAT(0.0));
    const DF_VD r = vr - ((vr + PTC_DF_SHIFT) - PTC_DF_SHIFT);
    const DF_VL sp = ~(DF_VL)((a <= PTC_DF_FLT_MAX) & (v != 0.0)) | (neg & (DF_VL)(r == 0.0));
    const DF_VD w = DF_N(ptc_df_sel)(sp, DF_SPLAT(2.0), DF_N(ptc_df_sel)(neg, 1.0 - v, v));
    const DF_VL big = (DF_VL)(w >= 8.0);
    const DF_VD ws = DF_N(ptc_df_sel)(big, DF_SPLAT(2.0), w);
    const DF_VD n = ((ws - 2.0) + PTC_DF_SHIFT) - PTC_DF_SHIFT;
    const DF_VD u = ws - n;
    const DF_VD z = u - 2.0;
    DF_VD c = z * PTC_DF_G15 + PTC_DF_G14;
    c = c * z + PTC_DF_G13;
    c = c * z + PTC_DF_G12;
    c = c * z + PTC_DF_G11;
    c = c * z + PTC_DF_G10;
    c = c * z + PTC_DF_G9;
    c = c * z + PTC_DF_G8;
    c = c * z + PTC_DF_G7;
    c = c * z + PTC_DF_G6;
    c = c * z + PTC_DF_G5;
    c = c * z + PTC_DF_G4;
    c = c * z + PTC_DF_G3;
    c = c * z + PTC_DF_G2;
    c = c * z + PTC_DF_G1;
    DF_VD core = c * z;
    DF_VD num = DF_SPLAT(1.0), den = DF_SPLAT(1.0), t = u;
    for (int i = 1; i <= 6; i++) {
        num = num * DF_N(ptc_df_sel)((DF_VL)(n >= (double)i), t, DF_SPLAT(1.0));
        t = t + 1.0;
    }
    den = DF_N(ptc_df_sel)((DF_VL)(n <= -1.0), ws, den);
    den = DF_N(ptc_df_sel)((DF_VL)(n <= -2.0), den * (ws + 1.0), den);
    if (DF_ANY(big)) {
        const DF_VD y = DF_N(ptc_df_sel)(big, w, DF_SPLAT(8.0));
        const DF_VD iy = 1.0 / y;
        const DF_VD iy2 = iy * iy;
        DF_VD q = iy2 * PTC_DF_ST6 + PTC_DF_ST5;
        q = q * iy2 + PTC_DF_ST4;
        q = q * iy2 + PTC_DF_ST3;
        q = q * iy2 + PTC_DF_ST2;
        q = q * iy2 + PTC_DF_ST1;
        const DF_VD st = ((y - 0.5) * DF_N(ptc_df_log)(y) - y) + (PTC_DF_HALF_LOG_2PI + q * iy);
        core = DF_N(ptc_df_sel)(big, st, core);
    }
    const DF_VL rf = neg & ~sp;
    if (DF_ANY(rf)) {
        /* pi / |sin(pi r)| = 1 / (|r| (sin(pi r) / r)) */
        const DF_VD rr = DF_N(ptc_df_sel)(rf, r, DF_SPLAT(0.5));
        const DF_VD r2 = rr * rr;
        DF_VD sr = r2 * PTC_DF_SN9 + PTC_DF_SN8;
        sr = sr * r2 + PTC_DF_SN7;
        sr = sr * r2 + PTC_DF_SN6;
        sr = sr * r2 + PTC_DF_SN5;
        sr = sr * r2 + PTC_DF_SN4;
        sr = sr * r2 + PTC_DF_SN3;
        sr = sr * r2 + PTC_DF_SN2;
        sr = sr * r2 + PTC_DF_SN1;
        sr = sr * r2 + PTC_DF_SN0;
        const DF_VD n2 = DF_N(ptc_df_sel)(rf, den * PTC_DF_PI, num);
        den = DF_N(ptc_df_sel)(rf, num * (DF_N(ptc_df_abs)(rr) * sr), den);
        num = n2;
    }
    const DF_VD l = DF_N(ptc_df_log)(num / den);
    const DF_VD res = DF_N(ptc_df_sel)(neg, l - core, core + l);
    return DF_N(ptc_df_sel)(sp, DF_N(ptc_df_sel)((DF_VL)(v != v), v, DF_SPLAT(INFINITY)), res);
}

#undef DF_N
#undef DF_SPLAT
#undef DF_CAT
#undef DF_CAT2
#undef DF_SFX
#undef DF_VD
#undef DF_VL
#undef DF_ATTR
#undef DF_LUT16
#undef DF_ANY
#undef DF_SQRT
