"""CUDA kernel sources for complex64 / complex128 (generated, header-free).

The kernels keep the families, names and parameter ABI of
:mod:`ptcore.cuda.kernels.library` (``ptc_unary_exp_c64_c``,
``ptc_cast_f32_c128_s``, ``ptc_reduce_sum_c64_c64_c`` ...), so the
launchers of ``_launch`` drive them unchanged; their only addition is
:data:`PRELUDE`, the complex type and math below, which
:func:`ptcore.cuda.kernels.library.program_source` puts in front of any program
holding one of these kernels.

=========  ====  =========================  =========
dtype      tag   storage                    real part
=========  ====  =========================  =========
complex64  c64   ``ptc_c64`` (2 floats, 8)  float
complex128 c128  ``ptc_c128`` (2 doubles)   double
=========  ====  =========================  =========

Semantics follow PyTorch (and ptcore's CPU loops, ``_ops/kernels/_ew.pyx.tp``):
``x + y`` / ``x - y`` / ``add_alpha`` are ``x + y * alpha`` with a complex
``alpha`` (``p.d0`` real, ``p.d1`` imaginary part; 1+0i for add), products
use the plain formula (no C99 Annex G NaN recovery), division is c10's
scaled algorithm (a zero divisor gives ``re/|c|, im/|d|``); ``abs``/``angle``
write the real dtype, ``isnan``/``isinf``/``isfinite``/``logical_not``/
``eq``/``ne``/logical ops write bool; casts to a real dtype take the real
part (to bool: either part non-zero), real -> complex has imaginary part 0.
The transcendental functions of complex64 are evaluated in double precision
and rounded (Kahan's branch-cut-correct formulas for the inverse functions);
``sgn`` is the CPU's ``z / |z|`` (0 at 0).  Fill values are ``(p.d0, p.d1)``;
``masked_fill`` likewise.  Reductions (sum, mean, prod) and scans (cumsum,
cumprod) accumulate in the complex dtype itself, as PyTorch's CUDA kernels.
"""
from ptcore.cuda.kernels.source import DTYPES, TAGS, kernel_name, _storage, _load, _store, _cast_expr

__all__ = ["PRELUDE", "CDTYPES", "UNARY", "BINARY", "TERNARY", "generate"]

# dtype -> (tag, storage type, real C type)
CDTYPES = {"complex64": ("c64", "ptc_c64", "float"), "complex128": ("c128", "ptc_c128", "double")}

PRELUDE = r"""
/* ---- complex64 / complex128 ---- */
template <class R> struct alignas(2 * sizeof(R)) ptc_cx { R re, im; };
typedef ptc_cx<float> ptc_c64;
typedef ptc_cx<double> ptc_c128;
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_cmk(R re, R im) { ptc_cx<R> z; z.re = re; z.im = im; return z; }
template <class R> __device__ __forceinline__ ptc_cx<R> operator+(ptc_cx<R> a, ptc_cx<R> b) { return ptc_cmk<R>(a.re + b.re, a.im + b.im); }
template <class R> __device__ __forceinline__ ptc_cx<R> operator-(ptc_cx<R> a, ptc_cx<R> b) { return ptc_cmk<R>(a.re - b.re, a.im - b.im); }
template <class R> __device__ __forceinline__ ptc_cx<R> operator-(ptc_cx<R> a) { return ptc_cmk<R>(-a.re, -a.im); }
template <class R> __device__ __forceinline__ ptc_cx<R> operator*(ptc_cx<R> a, ptc_cx<R> b) {
    return ptc_cmk<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* c10::complex division (scaled; a zero divisor gives re/|c|, im/|d|) */
template <class R> __device__ __forceinline__ ptc_cx<R> operator/(ptc_cx<R> x, ptc_cx<R> y) {
    R a = x.re, b = x.im, c = y.re, d = y.im;
    R ac = fabs(c), ad = fabs(d), rat, scl;
    if (ac >= ad) {
        if (ac == (R)0 && ad == (R)0) return ptc_cmk<R>(a / ac, b / ad);
        rat = d / c; scl = (R)1 / (c + d * rat);
        return ptc_cmk<R>((a + b * rat) * scl, (b - a * rat) * scl);
    }
    rat = c / d; scl = (R)1 / (d + c * rat);
    return ptc_cmk<R>((a * rat + b) * scl, (b * rat - a) * scl);
}
template <class R> __device__ __forceinline__ bool operator==(ptc_cx<R> a, ptc_cx<R> b) { return a.re == b.re && a.im == b.im; }
template <class R> __device__ __forceinline__ bool operator!=(ptc_cx<R> a, ptc_cx<R> b) { return !(a == b); }
template <class R> __device__ __forceinline__ bool ptc_cnz(ptc_cx<R> a) { return a.re != (R)0 || a.im != (R)0; }
/* x + y * (ar + ai i): PyTorch's complex add / sub / add(alpha) */
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_caxpy(ptc_cx<R> x, ptc_cx<R> y, R ar, R ai) {
    return ptc_cmk<R>(x.re + (y.re * ar - y.im * ai), x.im + (y.re * ai + y.im * ar));
}
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_cconj(ptc_cx<R> a) { return ptc_cmk<R>(a.re, -a.im); }
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_creal(R x) { return ptc_cmk<R>(x, (R)0); }
__device__ __forceinline__ ptc_c128 ptc_cw(ptc_c64 z) { return ptc_cmk<double>((double)z.re, (double)z.im); }
__device__ __forceinline__ ptc_c128 ptc_cw(ptc_c128 z) { return z; }
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_cn(ptc_c128 z) { return ptc_cmk<R>((R)z.re, (R)z.im); }
__device__ __forceinline__ double ptc_cnan() { return __longlong_as_double(0x7ff8000000000000LL); }

/* ---- complex math in double precision (complex64 rounds the result) ---- */
__device__ __forceinline__ ptc_c128 ptc_cmul_i(ptc_c128 z) { return ptc_cmk<double>(-z.im, z.re); }      /* i z */
__device__ __forceinline__ ptc_c128 ptc_cmul_mi(ptc_c128 z) { return ptc_cmk<double>(z.im, -z.re); }     /* -i z */
__device__ ptc_c128 ptc_cexp(ptc_c128 z) {
    if (z.im == 0.0) return ptc_cmk<double>(exp(z.re), z.im);
    if (isinf(z.re) && !isfinite(z.im)) {
        if (z.re < 0.0) return ptc_cmk<double>(0.0, 0.0);
        return ptc_cmk<double>(z.re, ptc_cnan());
    }
    double e = exp(z.re);
    return ptc_cmk<double>(e * cos(z.im), e * sin(z.im));
}
__device__ ptc_c128 ptc_clog(ptc_c128 z) {
    double ax = fabs(z.re), ay = fabs(z.im);
    double a = hypot(z.re, z.im);
    double re;
    if (a > 0.5 && a < 2.0 && !isinf(ax) && !isinf(ay)) {
        double mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
        re = 0.5 * log1p((mx - 1.0) * (mx + 1.0) + mn * mn);
    } else {
        re = log(a);
    }
    return ptc_cmk<double>(re, atan2(z.im, z.re));
}
__device__ ptc_c128 ptc_csqrt(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (x == 0.0 && y == 0.0) return ptc_cmk<double>(0.0, y);
    if (isinf(y)) return ptc_cmk<double>(PTC_INF, y);
    if (x != x) return ptc_cmk<double>(x, y == y ? x : y);
    if (isinf(x)) {
        if (x > 0.0) return ptc_cmk<double>(x, y != y ? y : copysign(0.0, y));
        return ptc_cmk<double>(y != y ? y : 0.0, copysign(PTC_INF, y));
    }
    double t = sqrt((fabs(x) + hypot(x, y)) * 0.5);
    if (x >= 0.0) return ptc_cmk<double>(t, y / (2.0 * t));
    return ptc_cmk<double>(fabs(y) / (2.0 * t), copysign(t, y));
}
__device__ ptc_c128 ptc_csinh(ptc_c128 z) {
    if (z.im == 0.0) return ptc_cmk<double>(sinh(z.re), z.im);
    return ptc_cmk<double>(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im));
}
__device__ ptc_c128 ptc_ccosh(ptc_c128 z) {
    if (z.im == 0.0) return ptc_cmk<double>(cosh(z.re), z.re == 0.0 ? 0.0 : copysign(0.0, z.re) * z.im);
    return ptc_cmk<double>(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im));
}
__device__ ptc_c128 ptc_ctanh(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (y == 0.0) return ptc_cmk<double>(tanh(x), y);
    if (!isfinite(y) && !isinf(x)) return ptc_cmk<double>(ptc_cnan(), ptc_cnan());
    if (fabs(x) > 22.0) {       /* (also x infinite: +-1 +- 0i) */
        double e = exp(-2.0 * fabs(x));
        return ptc_cmk<double>(copysign(1.0, x), isfinite(y) ? 4.0 * sin(y) * cos(y) * e : copysign(0.0, y));
    }
    double t = tan(y), beta = 1.0 + t * t, s = sinh(x), rho = sqrt(1.0 + s * s);
    double den = 1.0 + beta * s * s;
    return ptc_cmk<double>(beta * rho * s / den, t / den);
}
__device__ ptc_c128 ptc_csin(ptc_c128 z) { return ptc_cmul_mi(ptc_csinh(ptc_cmul_i(z))); }
__device__ ptc_c128 ptc_ccos(ptc_c128 z) { return ptc_ccosh(ptc_cmul_i(z)); }
__device__ ptc_c128 ptc_ctan(ptc_c128 z) { return ptc_cmul_mi(ptc_ctanh(ptc_cmul_i(z))); }
/* Kahan, "Branch cuts for complex elementary functions"; infinite parts as C99 Annex G */
#define PTC_PI 3.14159265358979323846
__device__ ptc_c128 ptc_casin_k(ptc_c128 z) {
    ptc_c128 s1 = ptc_csqrt(ptc_cmk<double>(1.0 - z.re, -z.im)), s2 = ptc_csqrt(ptc_cmk<double>(1.0 + z.re, z.im));
    return ptc_cmk<double>(atan2(z.re, s1.re * s2.re - s1.im * s2.im), asinh(s1.re * s2.im - s1.im * s2.re));
}
__device__ ptc_c128 ptc_casinh(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (isinf(x) || isinf(y)) {
        if (x != x) return ptc_cmk<double>(PTC_INF, x);
        if (y != y) return ptc_cmk<double>(copysign(PTC_INF, x), y);
        double im = isinf(y) ? copysign(isinf(x) ? PTC_PI / 4 : PTC_PI / 2, y) : copysign(0.0, y);
        return ptc_cmk<double>(copysign(PTC_INF, x), im);
    }
    return ptc_cmul_mi(ptc_casin_k(ptc_cmul_i(z)));
}
__device__ ptc_c128 ptc_casin(ptc_c128 z) { return ptc_cmul_mi(ptc_casinh(ptc_cmul_i(z))); }
__device__ ptc_c128 ptc_cacos(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (isinf(x) || isinf(y)) {
        double im = -copysign(PTC_INF, y);
        if (x != x || y != y) return ptc_cmk<double>(ptc_cnan(), isinf(x) ? (y != y ? PTC_INF : im) : -PTC_INF);
        if (isinf(y)) return ptc_cmk<double>(isinf(x) ? (x > 0 ? PTC_PI / 4 : 3 * PTC_PI / 4) : PTC_PI / 2, im);
        return ptc_cmk<double>(x > 0 ? 0.0 : PTC_PI, im);
    }
    ptc_c128 s1 = ptc_csqrt(ptc_cmk<double>(1.0 - x, -y)), s2 = ptc_csqrt(ptc_cmk<double>(1.0 + x, y));
    return ptc_cmk<double>(2.0 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}
__device__ ptc_c128 ptc_cacosh(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (isinf(x) || isinf(y)) {
        if (x != x || y != y) return ptc_cmk<double>(PTC_INF, ptc_cnan());
        double im = isinf(y) ? copysign(isinf(x) ? (x > 0 ? PTC_PI / 4 : 3 * PTC_PI / 4) : PTC_PI / 2, y)
                             : copysign(x > 0 ? 0.0 : PTC_PI, y);
        return ptc_cmk<double>(PTC_INF, im);
    }
    ptc_c128 s1 = ptc_csqrt(ptc_cmk<double>(x - 1.0, y)), s2 = ptc_csqrt(ptc_cmk<double>(x + 1.0, y));
    return ptc_cmk<double>(asinh(s1.re * s2.re + s1.im * s2.im), 2.0 * atan2(s1.im, s2.re));
}
__device__ ptc_c128 ptc_catanh(ptc_c128 z) {
    double x = z.re, y = z.im;
    if (isinf(x) || isinf(y)) return ptc_cmk<double>(copysign(0.0, x), y != y ? y : copysign(PTC_PI / 2, y));
    double d = (1.0 - x) * (1.0 - x) + y * y, q = 4.0 * x / d;
    /* log1p where the ratio is small; near x = -1 (q -> -1) the direct quotient */
    double re = fabs(q) < 0.5 ? 0.25 * log1p(q) : 0.25 * log(((1.0 + x) * (1.0 + x) + y * y) / d);
    double im = 0.5 * atan2(2.0 * y, (1.0 - x) * (1.0 + x) - y * y);
    return ptc_cmk<double>(re, im);
}
__device__ ptc_c128 ptc_catan(ptc_c128 z) { return ptc_cmul_mi(ptc_catanh(ptc_cmul_i(z))); }
__device__ ptc_c128 ptc_cpow(ptc_c128 x, ptc_c128 y) {
    if (y.re == 0.0 && y.im == 0.0) return ptc_cmk<double>(1.0, 0.0);
    if (x.re == 0.0 && x.im == 0.0 && y.im == 0.0 && y.re > 0.0) return ptc_cmk<double>(0.0, 0.0);
    return ptc_cexp(y * ptc_clog(x));
}
__device__ ptc_c128 ptc_csigmoid(ptc_c128 x) {
    return ptc_cmk<double>(1.0, 0.0) / (ptc_cmk<double>(1.0, 0.0) + ptc_cexp(-x));
}
/* the CPU's sgn: z / |z| in double, 0 at 0 */
__device__ ptc_c128 ptc_csgn(ptc_c128 z) {
    double a = hypot(z.re, z.im);
    if (a == 0.0) return ptc_cmk<double>(0.0, 0.0);
    return ptc_cmk<double>(z.re / a, z.im / a);
}
/* lerp as the CPU: |w| < 0.5 ? x + w (y - x) : y - (y - x)(1 - w) */
template <class R> __device__ __forceinline__ ptc_cx<R> ptc_clerp(ptc_cx<R> x, ptc_cx<R> y, ptc_cx<R> w) {
    ptc_cx<R> d = y - x;
    if (hypot(w.re, w.im) < (R)0.5) return x + w * d;
    return y - d * (ptc_cmk<R>((R)1, (R)0) - w);
}

/* ---- reductions / scans over ptc_cx<R> (the ptc_r_* protocol) ---- */
template <class C> struct ptc_rc_sum {
    typedef C S;
    __device__ static S init() { S s; s.re = 0; s.im = 0; return s; }
    __device__ static S map(C x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static C finish(S s, long long, const ptc_params&) { return s; }
};
template <class C> struct ptc_rc_mean {
    typedef C S;
    __device__ static S init() { S s; s.re = 0; s.im = 0; return s; }
    __device__ static S map(C x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static C finish(S s, long long L, const ptc_params&) {
        s.re = s.re / L; s.im = s.im / L; return s;
    }
};
template <class C> struct ptc_rc_prod {
    typedef C S;
    __device__ static S init() { S s; s.re = 1; s.im = 0; return s; }
    __device__ static S map(C x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a * b; }
    __device__ static C finish(S s, long long, const ptc_params&) { return s; }
};
/* ---- end of complex prelude ---- */
"""

# unary ops: (name, out, expr); x is the input (ptc_cx<R>), R the real type,
# C = ptc_cx<R>; WIDE(f) -> f evaluated in double and rounded to C
UNARY = [
    ("neg", "same", "-x"),
    ("conj", "same", "ptc_cconj(x)"),
    ("abs", "real", "hypot(x.re, x.im)"),
    ("angle", "real", "atan2(x.im, x.re)"),
    ("sgn", "same", "WIDE(ptc_csgn)"),
    ("square", "same", "x * x"),
    ("reciprocal", "same", "ptc_cn<R>(ptc_cmk<double>(1.0, 0.0) / ptc_cw(x))"),
    ("exp", "same", "WIDE(ptc_cexp)"),
    ("log", "same", "WIDE(ptc_clog)"),
    ("sqrt", "same", "WIDE(ptc_csqrt)"),
    ("rsqrt", "same", "ptc_cn<R>(ptc_cmk<double>(1.0, 0.0) / ptc_csqrt(ptc_cw(x)))"),
    ("sin", "same", "WIDE(ptc_csin)"),
    ("cos", "same", "WIDE(ptc_ccos)"),
    ("tan", "same", "WIDE(ptc_ctan)"),
    ("asin", "same", "WIDE(ptc_casin)"),
    ("acos", "same", "WIDE(ptc_cacos)"),
    ("atan", "same", "WIDE(ptc_catan)"),
    ("sinh", "same", "WIDE(ptc_csinh)"),
    ("cosh", "same", "WIDE(ptc_ccosh)"),
    ("tanh", "same", "WIDE(ptc_ctanh)"),
    ("asinh", "same", "WIDE(ptc_casinh)"),
    ("acosh", "same", "WIDE(ptc_cacosh)"),
    ("atanh", "same", "WIDE(ptc_catanh)"),
    ("sigmoid", "same", "WIDE(ptc_csigmoid)"),
    ("isnan", "bool", "(x.re != x.re || x.im != x.im)"),
    ("isinf", "bool", "(isinf(x.re) || isinf(x.im))"),
    ("isfinite", "bool", "(isfinite(x.re) && isfinite(x.im))"),
    ("logical_not", "bool", "!ptc_cnz(x)"),
]

# binary ops: (name, out, expr, second operand dtype or None)
BINARY = [
    ("add", "same", "ptc_caxpy<R>(x, y, (R)1, (R)0)", None),
    ("add_alpha", "same", "ptc_caxpy<R>(x, y, (R)p.d0, (R)p.d1)", None),
    ("sub", "same", "ptc_caxpy<R>(x, y, (R)-1, (R)0)", None),
    ("mul", "same", "x * y", None),
    ("div", "same", "x / y", None),
    ("pow", "same", "ptc_cn<R>(ptc_cpow(ptc_cw(x), ptc_cw(y)))", None),
    ("eq", "bool", "(x == y)", None),
    ("ne", "bool", "(x != y)", None),
    ("logical_and", "bool", "(ptc_cnz(x) && ptc_cnz(y))", None),
    ("logical_or", "bool", "(ptc_cnz(x) || ptc_cnz(y))", None),
    ("logical_xor", "bool", "(ptc_cnz(x) != ptc_cnz(y))", None),
    ("masked_fill", "same", "(y ? ptc_cmk<R>((R)p.d0, (R)p.d1) : x)", "bool"),
]

# ternary ops: (name, expr, first operand dtype or None); a, b, c.  (Kept: it is
# the kernels' source, keyed by the kernel each row generates.)
TERNARY = [
    ("where", "(a ? b : c)", "bool"),
    ("lerp", "ptc_clerp<R>(a, b, c)", None),
    ("addcmul", "a + ptc_cmk<R>((R)p.d0, (R)p.d1) * b * c", None),
    ("addcdiv", "a + ptc_cmk<R>((R)p.d0, (R)p.d1) * b / c", None),
]


def _ctype(dt):
    """(storage, value type, load(expr)) of a real or complex dtype."""
    if dt in CDTYPES:
        s = CDTYPES[dt][1]
        return s, s, lambda e: f"({e})"
    return _storage(dt), DTYPES[dt][2], lambda e: _load(dt, e)


def _wide(expr, dt):
    import re
    return re.sub(r"WIDE\((\w+)\)", lambda m: f"ptc_cn<R>({m.group(1)}(ptc_cw(x)))", expr)


def _store_out(out_kind, dt, expr):
    if out_kind == "bool":
        return f"(unsigned char)((bool)({expr}))"
    return f"({expr})"


def _ew(name, real_dt, out_storage, ins, var_names, expr, variant):
    """One elementwise kernel in _kernels' ABI; ``ins`` the input dtypes,
    ``real_dt`` the C type R of the computation."""
    K = 1 + len(ins)
    params = ["long long n", f"{out_storage}* out"]
    params += [f"const {_ctype(d)[0]}* in{k}" for k, d in enumerate(ins)]
    params.append("ptc_params p")
    if variant == "s":
        params.append(f"ptc_strided<{K}> ix")
        offs = f"        long long o[{K}];\n        ptc_offsets<{K}>(ix, i, o);\n"
        idx = [f"o[{k}]" for k in range(K)]
    else:
        offs = ""
        idx = ["i"] * K
    loads = ""
    for k, (d, v) in enumerate(zip(ins, var_names)):
        _, vt, ld = _ctype(d)
        loads += f"        const {vt} {v} = {ld(f'in{k}[{idx[k + 1]}]')};\n"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {real_dt} R;\n"
            f"    typedef ptc_cx<R> C;\n"
            f"    PTC_FOR(i, n) {{\n{offs}{loads}"
            f"        out[{idx[0]}] = {expr};\n"
            f"    }}\n}}\n")


def _out_storage(out_kind, cdt):
    tag, s, r = CDTYPES[cdt]
    if out_kind == "bool":
        return "unsigned char"
    if out_kind == "real":
        return r
    return s


def _gen_unary():
    for name, out, expr in UNARY:
        for cdt, (tag, s, r) in CDTYPES.items():
            e = _store_out(out, cdt, _wide(expr, cdt))
            for v in ("c", "s"):
                kn = kernel_name("unary", name, tag, v)
                yield kn, "unary", _ew(kn, r, _out_storage(out, cdt), [cdt], ["x"], e, v)


def _gen_binary():
    for name, out, expr, ytype in BINARY:
        for cdt, (tag, s, r) in CDTYPES.items():
            e = _store_out(out, cdt, expr)
            for v in ("c", "s"):
                kn = kernel_name("binary", name, tag, v)
                yield kn, "binary", _ew(kn, r, _out_storage(out, cdt), [cdt, ytype or cdt], ["x", "y"], e, v)


def _gen_ternary():
    for name, expr, atype in TERNARY:
        for cdt, (tag, s, r) in CDTYPES.items():
            for v in ("c", "s"):
                kn = kernel_name("ternary", name, tag, v)
                yield kn, "ternary", _ew(kn, r, s, [atype or cdt, cdt, cdt], ["a", "b", "c"], f"({expr})", v)


def _cast_to_complex(src):
    if src in CDTYPES:
        return "ptc_cmk<R>((R)x.re, (R)x.im)"
    return "ptc_cmk<R>((R)x, (R)0)"


def _gen_cast():
    tags = dict(TAGS)
    for cdt, (ctag, cs, cr) in CDTYPES.items():
        real_of = "float32" if cr == "float" else "float64"
        for other in list(DTYPES) + list(CDTYPES):
            otag = CDTYPES[other][0] if other in CDTYPES else tags[other]
            # other -> complex
            for v in ("c", "s"):
                kn = kernel_name("cast", None, (otag, ctag), v)
                yield kn, "cast", _ew(kn, cr, cs, [other], ["x"], _cast_to_complex(other), v)
            if other in CDTYPES:
                continue
            # complex -> real dtype: the real part through the float rule (bool: either part non-zero)
            if other == "bool":
                e = "(unsigned char)ptc_cnz(x)"
            else:
                conv = _cast_expr(real_of, other).replace("x", "x.re") if "x" in _cast_expr(real_of, other) \
                    else _cast_expr(real_of, other)
                e = _store(other, conv)
            for v in ("c", "s"):
                kn = kernel_name("cast", None, (ctag, otag), v)
                yield kn, "cast", _ew(kn, cr, _storage(other), [cdt], ["x"], e, v)


def _gen_fill():
    for cdt, (tag, s, r) in CDTYPES.items():
        for v in ("c", "s"):
            kn = kernel_name("fill", None, tag, v)
            params = ["long long n", f"{s}* out", "ptc_params p"]
            idx = "i"
            offs = ""
            if v == "s":
                params.append("ptc_strided<1> ix")
                offs = "        long long o[1];\n        ptc_offsets<1>(ix, i, o);\n"
                idx = "o[0]"
            yield kn, "fill", (f'extern "C" __global__ void {kn}({", ".join(params)}) {{\n'
                               f"    PTC_FOR(i, n) {{\n{offs}"
                               f"        out[{idx}] = ptc_cmk<{r}>(({r})p.d0, ({r})p.d1);\n"
                               f"    }}\n}}\n")


def _reduce_kernel(name, op, s, r, variant):
    params = ["long long M", "long long L", f"{s}* out", f"const {s}* in", "ptc_params p"]
    if variant == "s":
        params += ["ptc_strided<2> ix", "long long in_red_stride"]
        base = ("        long long o[2];\n        ptc_offsets<2>(ix, r, o);\n"
                "        const long long obase = o[0], ibase = o[1], step = in_red_stride;\n")
    else:
        base = "        const long long obase = r, ibase = r * L, step = 1;\n"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef ptc_cx<{r}> A;\n"
            f"    typedef ptc_rc_{op}<A> Op;\n"
            f"    typedef Op::S S;\n"
            f"    __shared__ S sm[32];\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n{base}"
            f"        S s = Op::init();\n"
            f"        for (long long j = threadIdx.x; j < L; j += blockDim.x)\n"
            f"            s = Op::combine(s, Op::map(in[ibase + j * step], j));\n"
            f"        s = ptc_block_reduce<Op>(s, sm);\n"
            f"        if (threadIdx.x == 0) out[obase] = Op::finish(s, L, p);\n"
            f"    }}\n}}\n")


def _scan_kernel(name, op, s, r, variant):
    params = ["long long M", "long long L", f"{s}* out", f"const {s}* in", "ptc_params p"]
    if variant == "s":
        params += ["ptc_strided<2> ix", "long long out_red_stride", "long long in_red_stride"]
        base = ("        long long o[2];\n        ptc_offsets<2>(ix, r, o);\n"
                "        const long long obase = o[0], ibase = o[1], ostep = out_red_stride, "
                "istep = in_red_stride;\n")
    else:
        base = "        const long long obase = r * L, ibase = r * L, ostep = 1, istep = 1;\n"
    red = "sum" if op == "cumsum" else "prod"
    return (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef ptc_cx<{r}> A;\n"
            f"    typedef ptc_rc_{red}<A> Op;\n"
            f"    __shared__ A sm[32];\n"
            f"    for (long long r = blockIdx.x; r < M; r += gridDim.x) {{\n{base}"
            f"        A carry = Op::init();\n"
            f"        for (long long b0 = 0; b0 < L; b0 += blockDim.x) {{\n"
            f"            const long long j = b0 + threadIdx.x;\n"
            f"            A v = j < L ? in[ibase + j * istep] : Op::init();\n"
            f"            A total;\n"
            f"            v = ptc_block_scan<Op>(v, sm, &total);\n"
            f"            if (j < L) out[obase + j * ostep] = Op::combine(carry, v);\n"
            f"            carry = Op::combine(carry, total);\n"
            f"        }}\n"
            f"    }}\n}}\n")


def _gen_rows():
    for cdt, (tag, s, r) in CDTYPES.items():
        for op in ("sum", "mean", "prod"):
            for v in ("c", "s"):
                kn = kernel_name("reduce", op, (tag, tag), v)
                yield kn, "reduce", _reduce_kernel(kn, op, s, r, v)
        for op in ("cumsum", "cumprod"):
            for v in ("c", "s"):
                kn = kernel_name("scan", op, (tag, tag), v)
                yield kn, "scan", _scan_kernel(kn, op, s, r, v)


def generate():
    """``(name, family, source)`` of every complex kernel (families as _kernels')."""
    for gen in (_gen_cast, _gen_fill, _gen_unary, _gen_binary, _gen_ternary, _gen_rows):
        yield from gen()
