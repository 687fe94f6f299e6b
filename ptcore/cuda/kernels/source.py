"""The building blocks of ptcore's CUDA kernel sources, shared by every
family of :mod:`ptcore.cuda.kernels`: the dtype table (tag, storage and
compute C types, kind), the kernel naming scheme, the load/store/cast
expressions, the elementwise kernel template (dense and strided variants)
and the reduction functors.  Nothing here lists kernels; the library
(:mod:`ptcore.cuda.kernels.library`) and the families do.
"""
__all__ = ["DTYPES", "TAGS", "FLOATS", "INTS", "REDUCE_OPS", "kernel_name"]


# dtype -> (tag, storage C type, compute C type, kind)
# kind: b bool, u unsigned, i signed int, f float (f16/bf16 compute in float)
DTYPES = {
    "bool": ("b", "unsigned char", "bool", "b"),
    "uint8": ("u8", "unsigned char", "unsigned char", "u"),
    "int8": ("i8", "signed char", "signed char", "i"),
    "int16": ("i16", "short", "short", "i"),
    "int32": ("i32", "int", "int", "i"),
    "int64": ("i64", "long long", "long long", "i"),
    "float16": ("f16", "ptc_half", "float", "f"),
    "bfloat16": ("bf16", "ptc_bfloat16", "float", "f"),
    "float32": ("f32", "float", "float", "f"),
    "float64": ("f64", "double", "double", "f"),
}
TAGS = {d: v[0] for d, v in DTYPES.items()}
TAGS.update(complex64="c64", complex128="c128")     # their kernels: ptcore.cuda.kernels.complex
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")


def _storage(dt):
    return DTYPES[dt][1]


def _compute(dt):
    return DTYPES[dt][2]


def _kind(dt):
    return DTYPES[dt][3]


def _load(dt, expr):
    """Storage value -> compute value."""
    if dt == "float16":
        return f"ptc_h2f({expr})"
    if dt == "bfloat16":
        return f"ptc_bf2f({expr})"
    if dt == "bool":
        return f"(({expr}) != 0)"
    return f"({expr})"


def _store(dt, expr):
    """Compute value -> storage value."""
    if dt == "float16":
        return f"ptc_f2h((float)({expr}))"
    if dt == "bfloat16":
        return f"ptc_f2bf((float)({expr}))"
    if dt == "bool":
        return f"(unsigned char)((bool)({expr}))"
    return f"({_storage(dt)})({expr})"


def _fn(expr, dt):
    """FN(name) -> the float or double math function for dt's compute type."""
    import re
    double = _compute(dt) == "double"
    return re.sub(r"FN\((\w+)\)", lambda m: m.group(1) if double else m.group(1) + "f", expr)


def kernel_name(family, op, tags, variant):
    """``ptc_<family>_<op>_<tag>[_<tag>...]_<variant>``."""
    if isinstance(tags, str):
        tags = (tags,)
    parts = ["ptc", family] + ([op] if op else []) + list(tags) + [variant]
    return "_".join(parts)


def _kinds_ok(kinds, dt, exclude=()):
    return _kind(dt) in kinds and dt not in exclude


def _expr(spec, dt):
    """The spec's expression for ``dt``: its own (a dtype name key), else its kind's, else ``*``."""
    e = spec.get(dt, spec.get(_kind(dt), spec.get("*")))
    return None if e is None else _fn(e, dt)


# ---------------------------------------------------------------------------
# elementwise template
# ---------------------------------------------------------------------------

def _dense_body(out_dt, in_dts, var_names, expr):
    """The loop of a dense ("c") elementwise kernel: ``f`` maps the stored
    input values to the stored result.  When every pointer is aligned to
    four elements, each thread moves ``ptc_vec4`` groups (one 16-byte load
    per float32 operand), two groups per trip, both loaded before either is
    stored, so the memory system sees wide requests and several in flight
    (on an H100 a 2^28-element float32 add went from 0.86-0.90x torch's
    bandwidth to 0.93x; four scalar elements a trip had not helped, so an
    unaligned view keeps the one-element loop).  An in-place out is the same
    index; partial overlaps are refused upstream."""
    st = _storage(out_dt)
    ins = [_storage(d) for d in in_dts]
    K = len(in_dts)
    args = ", ".join(f"const {t} a{k}" for k, t in enumerate(ins))
    loads = "".join(f"        const {_compute(d)} {v} = {_load(d, f'a{k}')};\n"
                    for k, (d, v) in enumerate(zip(in_dts, var_names)))
    aligned = " && ".join(["PTC_ALIGNED4(out)"] + [f"PTC_ALIGNED4(in{k})" for k in range(K)])

    def call(i):
        return f"f({', '.join(f'in{k}[{i}]' for k in range(K))})"

    def vcall(b, u):
        return f"f({', '.join(f'b{k}_{b}.v[{u}]' for k in range(K))})"
    vec = ""
    for b in range(2):
        vec += "".join(f"            const ptc_vec4<{t}> b{k}_{b} = ((const ptc_vec4<{t}>*)in{k})[v + {b} * g];\n"
                       for k, t in enumerate(ins))
    for b in range(2):
        vec += f"            ptc_vec4<{st}> r{b};\n"
        vec += "".join(f"            r{b}.v[{u}] = {vcall(b, u)};\n" for u in range(4))
    vec += "".join(f"            ((ptc_vec4<{st}>*)out)[v + {b} * g] = r{b};\n" for b in range(2))
    return (f"    auto f = [&]({args}) -> {st} {{\n{loads}"
            f"        return {_store(out_dt, expr)};\n    }};\n"
            f"    const long long g = (long long)blockDim.x * gridDim.x;\n"
            f"    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if ({aligned}) {{\n"
            f"        const long long nv = n / 4;\n"
            f"        long long v = t;\n"
            f"        for (; v + g < nv; v += 2 * g) {{\n{vec}        }}\n"
            f"        for (; v < nv; v += g) {{\n"
            + "".join(f"            const ptc_vec4<{t}> b{k}_0 = ((const ptc_vec4<{t}>*)in{k})[v];\n"
                      for k, t in enumerate(ins))
            + f"            ptc_vec4<{st}> r0;\n"
            + "".join(f"            r0.v[{u}] = {vcall(0, u)};\n" for u in range(4))
            + f"            ((ptc_vec4<{st}>*)out)[v] = r0;\n        }}\n"
            f"        for (long long i = nv * 4 + t; i < n; i += g) out[i] = {call('i')};\n"
            f"    }} else {{\n"
            f"        for (long long i = t; i < n; i += g) out[i] = {call('i')};\n"
            f"    }}\n}}\n")


def _ew_kernel(name, out_dt, in_dts, var_names, compute_dt, expr, variant, setup=""):
    """One elementwise kernel.

    ``in_dts`` are the input dtypes (parameter order), ``var_names`` the
    compute-variable names they are loaded into; ``expr`` is evaluated in the
    compute type ``T`` of ``compute_dt`` and stored as ``out_dt``.
    ``setup`` (statements) runs once before the loop, after ``T``'s typedef.
    """
    K = 1 + len(in_dts)
    params = ["long long n", f"{_storage(out_dt)}* out"]
    params += [f"const {_storage(d)}* in{k}" for k, d in enumerate(in_dts)]
    params.append("ptc_params p")
    if variant == "s":
        params.append(f"ptc_strided<{K}> ix")
        offs = f"        long long o[{K}];\n        ptc_offsets<{K}>(ix, i, o);\n"
        idx = [f"o[{k}]" for k in range(K)]
    else:
        offs = ""
        idx = ["i"] * K
    loads = "".join(
        f"        const {_compute(d)} {v} = {_load(d, f'in{k}[{idx[k + 1]}]')};\n"
        for k, (d, v) in enumerate(zip(in_dts, var_names)))
    head = (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
            f"    typedef {_compute(compute_dt)} T;\n{setup}")
    if variant == "c":
        return head + _dense_body(out_dt, in_dts, var_names, expr)
    return (head +
            f"    PTC_FOR(i, n) {{\n{offs}{loads}"
            f"        out[{idx[0]}] = {_store(out_dt, expr)};\n"
            f"    }}\n}}\n")


def _cast_expr(src, dst):
    """Conversion of a src compute value ``x`` to dst's compute type (PyTorch's rules)."""
    if dst == "bool":
        return "(x != 0)"
    sk, dk = _kind(src), _kind(dst)
    if sk == "f" and dst in ("uint8", "int8", "int16"):
        # through int64 as c10's static_cast_with_inter_type (defined for negatives)
        return f"({_compute(dst)})ptc_f2i<long long>(x)"
    if sk == "f" and dk in "ui":
        return f"ptc_f2i<{_compute(dst)}>(x)"
    return f"({_compute(dst)})x"


# Each reduction is a functor struct ``Op`` with a POD state ``S`` (size a
# multiple of 4 bytes): init(), map(A x, long long j), combine(S, S), and
# ``finish(S, long long L, const ptc_params&)`` returning the output value in
# the accumulation type.  Templated on the accumulation type A.
REDUCE_OPS = r"""
template <class A> struct ptc_r_sum {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_nansum {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return ptc_isnan(x) ? (A)0 : x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_prod {
    typedef A S;
    __device__ static S init() { return (A)1; }
    __device__ static S map(A x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a * b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_mean {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long L, const ptc_params&) { return s / (A)L; }
};
template <class A> struct ptc_r_amax {   /* NaN propagates */
    typedef A S;
    __device__ static S init() { return ptc_lim<A>::lowest(); }
    __device__ static S map(A x, long long) { return x; }
    __device__ static S combine(S a, S b) { return (ptc_isnan(a) || a > b) ? a : b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_amin {
    typedef A S;
    __device__ static S init() { return ptc_lim<A>::highest(); }
    __device__ static S map(A x, long long) { return x; }
    __device__ static S combine(S a, S b) { return (ptc_isnan(a) || a < b) ? a : b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_argst { A v; long long i; };
/* argmax: NaN wins, then the larger value, ties -> the smaller index */
template <class A> struct ptc_r_argmax {
    typedef ptc_argst<A> S;
    __device__ static S init() { S s; s.v = ptc_lim<A>::lowest(); s.i = ptc_lim<long long>::highest(); return s; }
    __device__ static S map(A x, long long j) { S s; s.v = x; s.i = j; return s; }
    __device__ static S combine(S a, S b) {
        bool na = ptc_isnan(a.v), nb = ptc_isnan(b.v);
        if (na || nb) { if (na && nb) return a.i <= b.i ? a : b; return na ? a : b; }
        if (a.v > b.v) return a;
        if (b.v > a.v) return b;
        return a.i <= b.i ? a : b;
    }
    __device__ static long long finish(S s, long long, const ptc_params&) { return s.i; }
};
template <class A> struct ptc_r_argmin {
    typedef ptc_argst<A> S;
    __device__ static S init() { S s; s.v = ptc_lim<A>::highest(); s.i = ptc_lim<long long>::highest(); return s; }
    __device__ static S map(A x, long long j) { S s; s.v = x; s.i = j; return s; }
    __device__ static S combine(S a, S b) {
        bool na = ptc_isnan(a.v), nb = ptc_isnan(b.v);
        if (na || nb) { if (na && nb) return a.i <= b.i ? a : b; return na ? a : b; }
        if (a.v < b.v) return a;
        if (b.v < a.v) return b;
        return a.i <= b.i ? a : b;
    }
    __device__ static long long finish(S s, long long, const ptc_params&) { return s.i; }
};
/* the scans with an index (cummax/cummin): the running extreme and its
   position; once a NaN is seen the value stays NaN with the latest NaN's
   position, ties take the later position (PyTorch's >= / <=).  Written
   order-free -- a NaN over a number, the larger value, on ties and between
   NaNs the larger position -- so that partials combine in any grouping; an
   empty state has i < 0. */
template <class A, bool MAX> struct ptc_s_cumext {
    typedef ptc_argst<A> S;
    __device__ static S init() { S s; s.v = (A)0; s.i = -1; return s; }
    __device__ static S make(A x, long long j) { S s; s.v = x; s.i = j; return s; }
    __device__ static S combine(S a, S b) {
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        bool na = ptc_isnan(a.v), nb = ptc_isnan(b.v);
        if (na || nb) { if (na && nb) return a.i >= b.i ? a : b; return na ? a : b; }
        if (MAX ? a.v > b.v : a.v < b.v) return a;
        if (MAX ? b.v > a.v : b.v < a.v) return b;
        return a.i >= b.i ? a : b;
    }
};
/* logcumsumexp's step: log(exp(a) + exp(b)) as max + log1p(exp(min - max)),
   NaN propagating, equal infinities kept (not inf - inf); -inf is the identity */
template <class A> struct ptc_s_logaddexp {
    typedef A S;
    __device__ static S init() { return -(A)PTC_INF; }
    __device__ static S make(A x, long long) { return x; }
    __device__ static S combine(S a, S b) {
        if (a != a || b != b) return a + b;
        const A mn = a < b ? a : b, mx = a < b ? b : a;
        if (mn != mx || isfinite(mn)) return mx + log1p(exp(mn - mx));
        return a;
    }
};
/* aminmax: the smallest and the largest value in one pass, NaN propagating to both */
template <class A> struct ptc_minmax { A lo; A hi; };
template <class A> struct ptc_r_aminmax {
    typedef ptc_minmax<A> S;
    __device__ static S init() { S s; s.lo = ptc_lim<A>::highest(); s.hi = ptc_lim<A>::lowest(); return s; }
    __device__ static S map(A x, long long) { S s; s.lo = x; s.hi = x; return s; }
    __device__ static S combine(S a, S b) {
        S s;
        s.lo = (ptc_isnan(a.lo) || a.lo < b.lo) ? a.lo : b.lo;
        s.hi = (ptc_isnan(a.hi) || a.hi > b.hi) ? a.hi : b.hi;
        return s;
    }
};
template <class A> struct ptc_r_all {
    typedef int S;
    __device__ static S init() { return 1; }
    __device__ static S map(A x, long long) { return x != (A)0; }
    __device__ static S combine(S a, S b) { return a & b; }
    __device__ static int finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_any {
    typedef int S;
    __device__ static S init() { return 0; }
    __device__ static S map(A x, long long) { return x != (A)0; }
    __device__ static S combine(S a, S b) { return a | b; }
    __device__ static int finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_count_nonzero {
    typedef long long S;
    __device__ static S init() { return 0; }
    __device__ static S map(A x, long long) { return x != (A)0; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static long long finish(S s, long long, const ptc_params&) { return s; }
};
/* Welford / Chan: count, mean, M2; correction in p.d0 */
template <class A> struct ptc_welford { long long n; A mean; A m2; };
template <class A> struct ptc_r_var {
    typedef ptc_welford<A> S;
    __device__ static S init() { S s; s.n = 0; s.mean = (A)0; s.m2 = (A)0; return s; }
    __device__ static S map(A x, long long) { S s; s.n = 1; s.mean = x; s.m2 = (A)0; return s; }
    __device__ static S combine(S a, S b) {
        if (a.n == 0) return b;
        if (b.n == 0) return a;
        S r; r.n = a.n + b.n;
        A d = b.mean - a.mean, nb = (A)b.n / (A)r.n;
        r.mean = a.mean + d * nb;
        r.m2 = a.m2 + b.m2 + d * d * (A)a.n * nb;
        return r;
    }
    __device__ static A finish(S s, long long, const ptc_params& p) {
        A div = (A)s.n - (A)p.d0;
        return s.m2 / (div > (A)0 ? div : (A)0);
    }
};
template <class A> struct ptc_r_std {
    typedef ptc_welford<A> S;
    __device__ static S init() { return ptc_r_var<A>::init(); }
    __device__ static S map(A x, long long j) { return ptc_r_var<A>::map(x, j); }
    __device__ static S combine(S a, S b) { return ptc_r_var<A>::combine(a, b); }
    __device__ static A finish(S s, long long L, const ptc_params& p) { return sqrt(ptc_r_var<A>::finish(s, L, p)); }
};
template <class A> struct ptc_r_norm1 {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return fabs(x); }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_norm2 {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return x * x; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return sqrt(s); }
};
template <class A> struct ptc_r_norm0 {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return x != (A)0 ? (A)1 : (A)0; }
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_norminf {
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return fabs(x); }
    __device__ static S combine(S a, S b) { return (ptc_isnan(a) || a > b) ? a : b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_normneginf {
    typedef A S;
    __device__ static S init() { return ptc_lim<A>::highest(); }
    __device__ static S map(A x, long long) { return fabs(x); }
    __device__ static S combine(S a, S b) { return (ptc_isnan(a) || a < b) ? a : b; }
    __device__ static A finish(S s, long long, const ptc_params&) { return s; }
};
template <class A> struct ptc_r_normp {   /* order p in p.d0 (finite, not 0, 1, 2) */
    typedef A S;
    __device__ static S init() { return (A)0; }
    __device__ static S map(A x, long long) { return x; }   /* powered in the kernel (needs p) */
    __device__ static S combine(S a, S b) { return a + b; }
    __device__ static A finish(S s, long long, const ptc_params& p) { return pow(s, (A)(1.0 / p.d0)); }
};
/* logsumexp: running (max, sum of exp(x - max)) */
template <class A> struct ptc_lse { A m; A s; };
template <class A> struct ptc_r_logsumexp {
    typedef ptc_lse<A> S;
    __device__ static S init() { S r; r.m = ptc_lim<A>::lowest(); r.s = (A)0; return r; }
    __device__ static S map(A x, long long) { S r; r.m = x; r.s = (A)1; return r; }
    __device__ static S combine(S a, S b) {
        S r;
        if (ptc_isnan(a.m) || ptc_isnan(b.m)) { r.m = ptc_isnan(a.m) ? a.m : b.m; r.s = (A)1; return r; }
        r.m = a.m > b.m ? a.m : b.m;
        if (isinf(r.m)) { r.s = r.m > (A)0 ? (A)1 : (A)0; if (r.m > (A)0) return r; r.s = a.s + b.s; return r; }
        r.s = a.s * exp(a.m - r.m) + b.s * exp(b.m - r.m);
        return r;
    }
    __device__ static A finish(S s, long long, const ptc_params&) {
        if (ptc_isnan(s.m) || isinf(s.m)) return s.m;
        return s.m + log(s.s);
    }
};
"""
