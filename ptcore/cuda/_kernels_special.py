"""CUDA kernel sources of the ``ptcore.special`` functions (generated,
header-free; part of the library of :mod:`ptcore.cuda._kernels`, which lists
them through :func:`generate`).

Family **special** (family prelude :data:`POLY_PRELUDE`), float32 and float64:

* ``ptc_special_zeta_<tag>_<c|s>``: the binary ABI, Hurwitz ``zeta(x, q)``
  (Cephes' summation, in double).
* ``ptc_special_<op>_f32_<c|s>`` (``op`` in :data:`UNARY_F32`): the unary
  elementwise ABI in float32, the scalar functions of
  ``ptcore/_ops/ptc_special.h`` (the CPU's float32 kernels), from the
  device translation of that header made by :func:`_f32_device_source`.
* ``ptc_special_<op>_<tag>_<c|s>`` for the orthogonal polynomials
  (``op`` = ``chebyshev_polynomial_t/u/v/w``, ``shifted_chebyshev_polynomial_t/u/v/w``,
  ``hermite_polynomial_h/he``, ``laguerre_polynomial_l``, ``legendre_polynomial_p``):
  the binary elementwise ABI, ``(n, T* out, const T* x, const T* deg,
  ptc_params p[, ptc_strided<3> ix])``.  The degree is truncated to an
  integer as a C cast; nan, +-inf and out-of-range degrees count as negative
  (result 0), as ``ptcore.special._functions._poly``.

The values follow the CPU kernels (:mod:`ptcore.special._polynomials`, which
follow PyTorch's ``Math.h``): the three-term recurrence in the input's
precision, the closed forms at ``|x| == 1``, and (Chebyshev, large degree,
``|x| < 1``) the trigonometric forms, whose products ``n * acos(x)`` are
formed in double as NumPy's promotion does on the CPU.  Once the recurrence
reaches NaN it stays NaN, so the loop stops there (same value, bounded work
after an overflow).
"""
import os
import re

from ptcore.cuda._kernels import kernel_name, _ew_kernel

__all__ = ["generate", "FAMILY_PRELUDE", "POLYNOMIALS"]

POLY_PRELUDE = r"""
__device__ __forceinline__ float ptc_sp_acos(float x) { return acosf(x); }
__device__ __forceinline__ double ptc_sp_acos(double x) { return acos(x); }
__device__ __forceinline__ float ptc_sp_sin(float x) { return sinf(x); }
__device__ __forceinline__ double ptc_sp_sin(double x) { return sin(x); }
__device__ __forceinline__ float ptc_sp_cos(float x) { return cosf(x); }
__device__ __forceinline__ double ptc_sp_cos(double x) { return cos(x); }
template <class T> __device__ __forceinline__ T ptc_sp_abs(T x) { return x < (T)0 ? -x : x; }
/* the degree as torch's C cast would have it; nan/inf/out of range -> -1 */
template <class T> __device__ __forceinline__ long long ptc_poly_deg(T n) {
    const double d = (double)n;
    return (d == d && d < 9223372036854775808.0 && d > -9223372036854775808.0) ? (long long)d : -1LL;
}
/* P_n from P_0 = 1, P_1 = q and the step; stops once NaN (it stays NaN) */
#define PTC_POLY_LOOP(STEP) \
    T p = (T)1; \
    for (long long k = 2; k <= n && q == q; ++k) { const T r = (STEP); p = q; q = r; } \
    return q;

template <class T> __device__ T ptc_poly_cheb_t(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    if (ax == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)1 : (T)-1;
    if (n > 6 && ax < (T)1) return (T)cos((double)n * (double)ptc_sp_acos(x));
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_u(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    if (ax == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)(n + 1) : (T)(-(n + 1));
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T s = ptc_sp_sin(t);
        const double m = (double)(n + 1);
        if (s != (T)0) return (T)(sin(m * (double)t) / (double)s);
        return (T)(m * cos(m * (double)t) / (double)x);
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_v(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    const T odd = (n % 2 == 0) ? (T)(n + n + 1) : (T)(-(n + n + 1));
    if (ax == (T)1) return x > (T)0 ? (T)1 : odd;
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T h = t / (T)2;
        if (ptc_sp_sin(h) != (T)1)
            return (T)(cos(((double)n + 0.5) * (double)t) / (double)ptc_sp_cos(h));
        return odd;
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x - (T)1;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_cheb_w(T x, long long n) {
    if (n < 0) return (T)0;
    const T ax = ptc_sp_abs(x);
    const T edge = x > (T)0 ? (T)(n + n + 1) : ((n % 2 == 0) ? (T)1 : (T)-1);
    if (ax == (T)1) return edge;
    if (n > 8 && ax < (T)1) {
        const T t = ptc_sp_acos(x);
        const T h = t / (T)2;
        if (ptc_sp_cos(h) != (T)1)
            return (T)(sin(((double)n + 0.5) * (double)t) / (double)ptc_sp_sin(h));
        return edge;
    }
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x + x + (T)1;
    PTC_POLY_LOOP(x2 * q - p)
}
template <class T> __device__ T ptc_poly_hermite_h(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0) return (T)1;
    const T x2 = x + x;
    T q = x2;
    PTC_POLY_LOOP(x2 * q - (T)(2 * (k - 1)) * p)
}
template <class T> __device__ T ptc_poly_hermite_he(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0) return (T)1;
    T q = x;
    PTC_POLY_LOOP(x * q - (T)(k - 1) * p)
}
template <class T> __device__ T ptc_poly_laguerre_l(T x, long long n) {
    if (n < 0) return (T)0;
    if (n == 0 || x == (T)0) return (T)1;
    const T omx = (T)1 - x;
    T q = omx;
    PTC_POLY_LOOP((((T)(2 * (k - 1)) + omx) * q - (T)(k - 1) * p) / (T)k)
}
template <class T> __device__ T ptc_poly_legendre_p(T x, long long n) {
    if (n < 0) return (T)0;
    if (ptc_sp_abs(x) == (T)1) return (x > (T)0 || n % 2 == 0) ? (T)1 : (T)-1;
    if (n == 0) return (T)1;
    T q = x;
    PTC_POLY_LOOP(((T)(2 * (k - 1) + 1) * x * q - (T)(k - 1) * p) / (T)k)
}
"""

ZETA_PRELUDE = r"""
/* Hurwitz zeta(x, q) = sum_k (k + q)^-x: Cephes' Euler-Maclaurin summation
 * (as PyTorch's and SciPy's kernels), in double for both float dtypes; nan at
 * q = +inf after the x == 1 test (PyTorch's value; no SciPy asymptotic branch
 * for q > 1e8, so zeta(inf, 1e9) is nan as PyTorch's, where SciPy has 0) */
__device__ double ptc_zeta_d(double x, double q) {
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                          7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                          -4.5979787224074726105e15, 1.8152105401943546773e17,
                          -7.1661652561756670113e18};
    const double MACHEP = 1.11022302462515654042e-16;
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    if (x == 1.0) return inf;
    if (x < 1.0) return nan;
    if (q == inf) return nan;
    if (q <= 0.0) {
        if (q == floor(q)) return inf;
        if (x != floor(x)) return nan;
    }
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < MACHEP) return s;
    }
    const double w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    double k = 0.0;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        double t = a * b / A[i];
        s = s + t;
        t = fabs(t / s);
        if (t < MACHEP) return s;
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}
"""

NDTRI_PRELUDE = r"""
/* ndtri in double: Cephes' rational approximations (as PyTorch's and SciPy's) */
__device__ double ptc_polevl_d(double x, const double* c, int n) {
    double a = c[0];
    for (int i = 1; i <= n; ++i) a = a * x + c[i];
    return a;
}
__device__ double ptc_p1evl_d(double x, const double* c, int n) {
    double a = x + c[0];
    for (int i = 1; i < n; ++i) a = a * x + c[i];
    return a;
}
__device__ double ptc_ndtri_d(double y0) {
    const double P0[5] = {-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
                          1.39312609387279679503E1, -1.23916583867381258016E0};
    const double Q0[8] = {1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
                          -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
                          1.59056225126211695515E1, -1.18331621121330003142E0};
    const double P1[9] = {4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
                          4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
                          -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4};
    const double Q1[8] = {1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
                          1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
                          -3.80806407691578277194E-2, -9.33259480895457427372E-4};
    const double P2[9] = {3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
                          1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
                          3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9};
    const double Q2[8] = {6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
                          2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
                          2.89247864745380683936E-6, 6.79019408009981274425E-9};
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    const double expm2 = 0.13533528323661269189;
    if (y0 != y0) return y0;
    if (y0 <= 0.0) return y0 == 0.0 ? -inf : nan;
    if (y0 >= 1.0) return y0 == 1.0 ? inf : nan;
    int code = 1;
    double y = y0;
    if (y > 1.0 - expm2) { y = 1.0 - y; code = 0; }
    if (y > expm2) {
        y = y - 0.5;
        const double y2 = y * y;
        const double x = y + y * (y2 * ptc_polevl_d(y2, P0, 4) / ptc_p1evl_d(y2, Q0, 8));
        return x * 2.50662827463100050242E0;
    }
    const double x = sqrt(-2.0 * log(y));
    const double x0 = x - log(x) / x;
    const double z = 1.0 / x;
    const double x1 = x < 8.0 ? z * ptc_polevl_d(z, P1, 8) / ptc_p1evl_d(z, Q1, 8)
                              : z * ptc_polevl_d(z, P2, 8) / ptc_p1evl_d(z, Q2, 8);
    const double r = x0 - x1;
    return code != 0 ? -r : r;
}
"""

# op -> (device function, shifted: evaluated at 2x - 1)
POLYNOMIALS = {
    "chebyshev_polynomial_t": ("ptc_poly_cheb_t", False),
    "chebyshev_polynomial_u": ("ptc_poly_cheb_u", False),
    "chebyshev_polynomial_v": ("ptc_poly_cheb_v", False),
    "chebyshev_polynomial_w": ("ptc_poly_cheb_w", False),
    "shifted_chebyshev_polynomial_t": ("ptc_poly_cheb_t", True),
    "shifted_chebyshev_polynomial_u": ("ptc_poly_cheb_u", True),
    "shifted_chebyshev_polynomial_v": ("ptc_poly_cheb_v", True),
    "shifted_chebyshev_polynomial_w": ("ptc_poly_cheb_w", True),
    "hermite_polynomial_h": ("ptc_poly_hermite_h", False),
    "hermite_polynomial_he": ("ptc_poly_hermite_he", False),
    "laguerre_polynomial_l": ("ptc_poly_laguerre_l", False),
    "legendre_polynomial_p": ("ptc_poly_legendre_p", False),
}

# unary float32 functions: op -> the device function of ptc_special.h (translated copy)
UNARY_F32 = {
    "erfcx": "ptc_erfcx_s",
    "log_ndtr": "ptc_log_ndtr_s",
    "ndtri": "ptc_ndtri_s",
    "i0e": "ptc_i0e_s",
    "i1": "ptc_i1_s",
    "i1e": "ptc_i1e_s",
    "modified_bessel_i0": "ptc_i0_s",
    "modified_bessel_i1": "ptc_i1_s",
}
# nan at +-inf (PyTorch's kernels), where the float32 functions give the limit
_INF_NAN = ("modified_bessel_i0", "modified_bessel_i1")

# unary float64 functions: op -> device function (Cephes ports)
UNARY_F64 = {"ndtri": "ptc_ndtri_d"}


def _unary_exprs():
    """op -> {dtype tag: the kernel's expression of ``x``}."""
    out = {}
    for op, fn in UNARY_F32.items():
        e = f"{fn}(x)"
        if op in _INF_NAN:
            e = f"(isinf(x) ? __int_as_float(0x7fc00000) : {e})"
        out.setdefault(op, {})["f32"] = e
    for op, fn in UNARY_F64.items():
        out.setdefault(op, {})["f64"] = f"{fn}(x)"
    return out


UNARY = _unary_exprs()
# binary functions, float32 and float64: op -> the expression of ``x``, ``y``
BINARY = {op: f"{fn}<T>({'x + x - (T)1' if shifted else 'x'}, ptc_poly_deg<T>(y))"
          for op, (fn, shifted) in POLYNOMIALS.items()}
BINARY["zeta"] = "(T)ptc_zeta_d((double)x, (double)y)"
# the ops with a kernel here (each op's element loop on CUDA)
KERNEL_OPS = tuple(UNARY) + tuple(BINARY)


def has_kernel(op, tag):
    """Whether op ``op`` has a kernel for dtype tag ``tag``."""
    if op in BINARY:
        return tag in ("f32", "f64")
    return tag in UNARY.get(op, ())


def _function(text, head):
    i = text.index(head)
    j = text.index("\n}\n", i)
    return text[i:j + 3]


def _f32_device_source():
    """The float32 scalar special functions of ptcore/_ops/ptc_special.h (and
    ptc_expf of ptc_math.h), installed with the package, as CUDA device
    functions: the same operations as the CPU kernels, translated when the
    kernel library is built (no second copy to keep in sync)."""
    ops = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_ops")
    with open(os.path.join(ops, "ptc_math.h")) as f:
        math_h = f.read()
    with open(os.path.join(ops, "ptc_special.h")) as f:
        special = f.read()
    start = special.index("static inline __attribute__((always_inline)) uint32_t ptc_f2u")
    stop = special.index("/* contiguous loops")
    body = special[start:stop]
    body = re.sub(r"static inline __attribute__\(\(always_inline\)\) uint32_t ptc_f2u\(float x\)\n"
                  r"\{[^}]*\}",
                  "__device__ __forceinline__ unsigned int ptc_f2u(float x) { return __float_as_uint(x); }",
                  body)
    body = re.sub(r"static inline __attribute__\(\(always_inline\)\) float ptc_u2f\(uint32_t u\)\n"
                  r"\{[^}]*\}",
                  "__device__ __forceinline__ float ptc_u2f(unsigned int u) { return __uint_as_float(u); }",
                  body)
    src = (_function(math_h, "static inline float ptc_expf(float x)")
           + "#define PTC_SF __device__ __forceinline__ float\n" + body + "#undef PTC_SF\n")
    src = src.replace("static inline float", "__device__ __forceinline__ float")
    src = src.replace("static inline __attribute__((always_inline)) float", "__device__ __forceinline__ float")
    src = src.replace("__builtin_sqrtf", "sqrtf")
    src = re.sub(r"\buint32_t\b", "unsigned int", src)
    src = re.sub(r"\bint32_t\b", "int", src)
    src = re.sub(r"\bINFINITY\b", "__int_as_float(0x7f800000)", src)
    src = re.sub(r"\bNAN\b", "__int_as_float(0x7fc00000)", src)
    if "static " in src or "memcpy" in src:
        raise RuntimeError("ptc_special.h changed shape: update ptcore/cuda/_kernels_special._f32_device_source")
    return src


def _family_prelude():
    return POLY_PRELUDE + ZETA_PRELUDE + NDTRI_PRELUDE + _f32_device_source()


FAMILY_PRELUDE = {"special": _family_prelude()}
_FLOAT_TAGS = (("float32", "f32"), ("float64", "f64"))


def generate():
    """``(name, family, source)`` of every kernel of this module."""
    for op, expr in BINARY.items():
        for dt, tag in _FLOAT_TAGS:
            for v in ("c", "s"):
                kn = kernel_name("special", op, tag, v)
                yield kn, "special", _ew_kernel(kn, dt, [dt, dt], ["x", "y"], dt, expr, v)
    for op, exprs in UNARY.items():
        for dt, tag in _FLOAT_TAGS:
            if tag in exprs:
                for v in ("c", "s"):
                    kn = kernel_name("special", op, tag, v)
                    yield kn, "special", _ew_kernel(kn, dt, [dt], ["x"], dt, exprs[tag], v)
