"""Forward-mode derivatives (JVP rules), one per op name of the operator table.

A rule is called as ``rule(tan, out, *args, **kwargs)`` right after the op
ran on the primals: ``tan(x)`` is ``x``'s tangent at the level being handled
(None when ``x`` has none, or is not a tensor) and ``out`` the primal result.
It returns the tangent of ``out`` (a tuple/list of them for several outputs,
None for an output without one).  Rules are written with ptcore ops and run
with their level hidden, so tangents of the lower levels and reverse mode
flow through them.

Ops with a backward formula but no rule here get their JVP from the
backward formula by the double-vjp trick: for ``g(u) = vjp(f)(x; u)``,
linear in ``u``, ``jvp(f)(x; t) = vjp(g)(u; t)`` (``_double_vjp``), which
also holds for complex ops (PyTorch's conjugate-Wirtinger convention).  Ops
with neither are composites: their inner ops carry the tangents, and an
output left without one gets it from the double-vjp trick too.
"""
import math
import threading

import ptcore as P
from ptcore._tensor import _TensorBase
from ptcore._tensor import Size as _Size
from ptcore._dispatch import forward_ad as _L
from ptcore._dispatch import batching as _batching
from ptcore._dispatch.declarations import DECLARED as _DECLARED, PROTOCOL_METHODS, form_jvp
from ptcore._dispatch.handlers import Handlers
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd import _formulas_linalg, _formulas_shape, _formulas_nn  # noqa: F401  (FORMULAS complete)
from ptcore.autograd._formulas import (FORMULAS, _dims, _unsqueeze_to, _var_args, _var_grad,
                                       _sinc_grad)
from ptcore.autograd.engine import grad
from ptcore.autograd.function import Function, FunctionCtx

__all__ = ["JVP", "F_JVP", "jvp_rule", "drive", "drive_function"]

# op name -> rule (namespaces ptcore, Tensor, linalg); nn.functional's own rules
JVP = {}
F_JVP = {}


def _T(x):
    return isinstance(x, _TensorBase)


def _fl(t):
    return _T(t) and (t.dtype.is_floating_point or t.dtype.is_complex)


def jvp_rule(*names, table=JVP):
    def deco(fn):
        for n in names:
            table[n] = fn
        return fn
    return deco


def _zeros(x):
    return P.zeros_like(x)


def _or0(tan, x):
    t = tan(x)
    return t if t is not None else (_zeros(x) if _T(x) else 0)


def _add(*terms):
    r = None
    for t in terms:
        if t is None:
            continue
        r = t if r is None else r + t
    return r


# ---------------------------------------------------------------------------
# linear ops: the tangent is the same op applied to the tangent
# ---------------------------------------------------------------------------

def _op(name):
    """The callable being differentiated (the op's own entry), else ``name``
    looked up in ptcore / on Tensor."""
    f = _ctx.entry
    if f is None:
        f = getattr(P, name, None) or getattr(P.Tensor, name)
    return f


def _same_op(name):
    def rule(tan, out, x, *args, **kwargs):
        t = tan(x)
        if t is None:
            return None
        return _op(name)(t, *args, **kwargs)
    return rule


# views and linear ops (declared jvp="same", indexing too): the same op on the
# tangent, so that in-place ops on a view reach its base's tangent (as in
# torch); the tensor's view properties are no declared ops
_PROPERTY_VIEWS = ("mT", "mH", "T", "H", "alias")


def _same_rules():
    for (group, name), d in _DECLARED.items():
        if d.jvp == "same" and group in ("ptcore", "linalg"):
            JVP[name] = _same_op(name)
    for name, protocol in PROTOCOL_METHODS.items():
        if protocol.jvp == "same":
            JVP[name] = _same_op(name)
    for name in _PROPERTY_VIEWS:
        JVP[name] = _same_op(name)


_same_rules()


@jvp_rule("sinc")
def _sinc_rule(tan, out, x, *args, **kwargs):
    # torch's auto_element_wise: sinc_backward applied to the tangent (0 where
    # pi x**2 is 0; the double-vjp trick would give 0 * nan there)
    t = tan(x)
    if t is None:
        return None
    if x.is_complex():
        return _sinc_grad(t.conj(), x).conj()
    return _sinc_grad(t, x)


@jvp_rule("as_strided")
def _as_strided_rule(tan, out, x, size, stride, storage_offset=None, **k):
    """The same window of the tangent laid out as ``x`` (torch's tangents
    share their primal's layout); the offset is taken relative to ``x``."""
    t = tan(x)
    if t is None:
        return None
    if _batching.is_batched(t):
        # a vmap over jvp's tangent: each sample laid out contiguously (see
        # forward_ad.get_tangent), as x must be for the window to map
        if not x.is_contiguous():
            raise NotImplementedError(
                f"forward AD under vmap: as_strided of a non-contiguous tensor (shape "
                f"{tuple(x.shape)}, strides {tuple(x.stride())}) with a batched tangent")
        t = t.contiguous()
    elif tuple(t.stride()) != tuple(x.stride()):
        t = _L.empty_like_layout(x, t.dtype).copy_(t)
    rel = 0 if storage_offset is None else storage_offset - x.storage_offset()
    off = t.storage_offset() + rel
    end = off + sum((n - 1) * st for n, st in zip(size, stride) if n > 0)
    if all(n > 0 for n in size) and not _batching.is_batched(t) and \
            (off < 0 or end >= t.untyped_storage().nbytes() // max(t.element_size(), 1)):
        # the window reaches storage outside the tangent's: torch's tangent of a
        # view lies in a zero-filled storage shaped as the primal's base
        n = x.untyped_storage().nbytes() // max(x.element_size(), 1)
        buf = P.zeros(n, dtype=t.dtype, device=t.device)
        P.as_strided(buf, tuple(x.shape), tuple(x.stride()), x.storage_offset()).copy_(t)
        return _op("as_strided")(buf, size, stride,
                                 x.storage_offset() if storage_offset is None else storage_offset)
    return _op("as_strided")(t, size, stride, off)


def _to_rule(name):
    base = _same_op(name)

    def rule(tan, out, x, *args, **kwargs):
        if not _fl(out):
            return None
        t = tan(x)
        if t is None:
            return None
        # the tangent follows the primal's dtype and device, whatever it was
        r = base(tan, out, x, *args, **kwargs)
        if _T(r) and (r.dtype is not out.dtype or r.device != out.device):
            r = r.to(dtype=out.dtype, device=out.device)
        return r
    return rule


for _n in ("to", "type_as", "float", "double", "half", "bfloat16", "cfloat", "cdouble",
           "chalf", "cpu", "cuda", "type"):
    JVP[_n] = _to_rule(_n)


@jvp_rule("nansum")
def _nansum(tan, out, x, *args, **kwargs):
    t = tan(x)
    return None if t is None else P.where(x.isnan(), 0, t).sum(*args, **kwargs)


@jvp_rule("nanmean")
def _nanmean(tan, out, x, dim=None, keepdim=False, **kwargs):
    t = tan(x)
    if t is None:
        return None
    m = ~x.isnan()
    return P.where(m, t, 0).sum(dim, keepdim=keepdim) / m.sum(dim, keepdim=keepdim)


# linear in several tensor arguments: the op on the tangents (zeros where an
# argument has none)
def _multi_linear(name, positions, kw=()):
    def rule(tan, out, *args, **kwargs):
        a = list(args)
        any_t = False
        for p in positions:
            if p < len(a):
                v = a[p]
                if isinstance(v, (list, tuple)) and not isinstance(v, _Size):
                    # (a named tuple or list subclass of tensors is passed on as a list)
                    ts = [tan(e) for e in v]
                    any_t |= any(t is not None for t in ts)
                    a[p] = (type(v) if type(v) in (list, tuple) else list)(
                        t if t is not None else _zeros(e) for t, e in zip(ts, v))
                elif _T(v):
                    t = tan(v)
                    any_t |= t is not None
                    a[p] = t if t is not None else _zeros(v)
                elif v is not None and not isinstance(v, bool):
                    a[p] = 0       # a Python scalar: constant
        k = dict(kwargs)
        for n in kw:
            if n in k and _T(k[n]):
                t = tan(k[n])
                any_t |= t is not None
                k[n] = t if t is not None else _zeros(k[n])
            elif n in k and k[n] is not None and not isinstance(k[n], (bool, str)):
                k[n] = 0
        if not any_t:
            return None
        return _op(name)(*a, **k)
    return rule


for _n in ("cat", "concat", "concatenate"):
    JVP[_n] = _multi_linear(_n, (0,), ("tensors",))
JVP["stack"] = _multi_linear("stack", (0,), ("tensors",))
JVP["hstack"] = _multi_linear("hstack", (0,))
JVP["vstack"] = _multi_linear("vstack", (0,))
_WHERE_FN = _multi_linear("where", (1, 2), ("input", "other"))
_WHERE_METHOD = _multi_linear("where", (0, 2), ("other",))


def _where_rule(tan, out, *args, **kwargs):
    # where(condition, input, other), or the method self.where(condition,
    # other) (a condition is bool, or the op raised)
    if args and _T(args[0]) and args[0].dtype is not P.bool:
        return _WHERE_METHOD(tan, out, *args, **kwargs)
    return _WHERE_FN(tan, out, *args, **kwargs)


JVP["where"] = _where_rule
JVP["complex"] = _multi_linear("complex", (0, 1))
JVP["index_add"] = _multi_linear("index_add", (0, 3), ("source",))
JVP["index_copy"] = _multi_linear("index_copy", (0, 3), ("source",))
JVP["index_fill"] = _multi_linear("index_fill", (0, 3), ("value",))
JVP["masked_fill"] = _multi_linear("masked_fill", (0, 2), ("value",))
JVP["masked_scatter"] = _multi_linear("masked_scatter", (0, 2), ("source",))
JVP["select_scatter"] = _multi_linear("select_scatter", (0, 1), ("src",))
JVP["slice_scatter"] = _multi_linear("slice_scatter", (0, 1), ("src",))
JVP["diagonal_scatter"] = _multi_linear("diagonal_scatter", (0, 1), ("src",))
JVP["scatter_add"] = _multi_linear("scatter_add", (0, 3), ("src",))
JVP["index_put"] = _multi_linear("index_put", (0, 2), ("values",))
JVP["block_diag"] = _multi_linear("block_diag", tuple(range(64)))


@jvp_rule("scatter")
def _scatter(tan, out, x, dim, index, src=None, value=None, reduce=None, **k):
    if reduce is not None:
        return _Fallback
    tx = _or0(tan, x)
    s = src if src is not None else value
    if _T(s):
        return P.scatter(tx, dim, index, _or0(tan, s))
    return P.scatter(tx, dim, index, 0.0)


@jvp_rule("add")
def _add_rule(tan, out, a, b, *dep, alpha=1, **k):
    if dep:                     # torch's deprecated order add(a, alpha, b)
        b, alpha = dep[0], b
    ta, tb = tan(a), tan(b)
    if tb is not None and alpha != 1:
        tb = tb * alpha
    return _add(ta, tb)


@jvp_rule("sub", "subtract")
def _sub_rule(tan, out, a, b, *dep, alpha=1, **k):
    if dep:                     # sub(a, alpha, b)
        b, alpha = dep[0], b
    ta, tb = tan(a), tan(b)
    if tb is not None:
        tb = -tb if alpha == 1 else tb * (-alpha)
    return _add(ta, tb)


@jvp_rule("rsub")
def _rsub_rule(tan, out, a, b, *, alpha=1, **k):
    return _sub_rule(tan, out, b, a, alpha=alpha)


@jvp_rule("mul", "multiply")
def _mul_rule(tan, out, a, b, **k):
    ta, tb = tan(a), tan(b)
    return _add(None if ta is None else ta * b, None if tb is None else a * tb)


@jvp_rule("div", "divide", "true_divide")
def _div_rule(tan, out, a, b, *, rounding_mode=None, **k):
    if rounding_mode is not None:
        return _zeros(out)
    ta, tb = tan(a), tan(b)
    r = None if ta is None else ta / b
    if tb is not None:
        r = _add(r, -(out * tb) / b)
    return r


@jvp_rule("pow")
def _pow_rule(tan, out, a, b, **k):
    ta, tb = tan(a), tan(b)
    r = None
    if ta is not None:
        if _T(b):
            r = P.where(b == 0, 0, b * a.pow(b - 1)) * ta
        else:
            r = ta * 0 if b == 0 else (b * a.pow(b - 1)) * ta
    if tb is not None:
        # (torch: the exponent counts as >= 0 when real and >= 0; for a complex
        # one, when its imaginary part is 0 and its real part >= 0)
        nonneg = ((b.imag == 0) & (b.real >= 0)) if b.is_complex() else b >= 0
        if _T(a):
            lg = P.where((a == 0) & nonneg, 0, out * a.log())
        elif a == 0:
            lg = P.where(nonneg, 0, out * -math.inf)
        elif not isinstance(a, complex) and a > 0:
            lg = out * math.log(a)
        else:
            lg = out * P.log(P.as_tensor(a, dtype=out.dtype))
        r = _add(r, lg * tb)
    return r


@jvp_rule("float_power")
def _float_power_rule(tan, out, a, b, **k):
    # pow's rule on the operands and tangents in the result's dtype (as torch: it
    # converts the operands to float64/complex128 before its pow)
    up = {}
    for x in (a, b):
        if _T(x):
            t = tan(x)
            up[id(x)] = (x.to(out.dtype), None if t is None else t.to(out.dtype))
    ta, tb = (up.get(id(x), (x, None)) for x in (a, b))
    tans = {id(ta[0]): ta[1], id(tb[0]): tb[1]}
    return _pow_rule(lambda x: tans.get(id(x)) if _T(x) else None, out, ta[0], tb[0])


@jvp_rule("floor_divide", "floor", "ceil", "round", "trunc", "fix", "sign", "sgn_real")
def _zero_rule(tan, out, *a, **k):
    return _zeros(out)


# ---------------------------------------------------------------------------
# elementwise unary: f'(x) * t
# ---------------------------------------------------------------------------

_SQRT_PI_2 = math.sqrt(math.pi) / 2
_2_SQRTPI = 2 / math.sqrt(math.pi)


def _unary(name, d, holomorphic=True):
    def rule(tan, out, x, *args, **kwargs):
        t = tan(x)
        if t is None or not _fl(out):
            return None
        if not holomorphic and x.dtype.is_complex:
            return _Fallback
        dx = d(x, out)
        return t if isinstance(dx, int) and dx == 1 else dx * t
    JVP[name] = rule


_unary("exp", lambda x, y: y)
_unary("exp2", lambda x, y: y * math.log(2.0))
_unary("expm1", lambda x, y: y + 1)
_unary("log", lambda x, y: 1 / x)
_unary("log2", lambda x, y: 1 / (x * math.log(2.0)))
_unary("log10", lambda x, y: 1 / (x * math.log(10.0)))
_unary("log1p", lambda x, y: 1 / (x + 1))
_unary("sqrt", lambda x, y: 0.5 / y)
_unary("rsqrt", lambda x, y: -0.5 * y ** 3)
_unary("reciprocal", lambda x, y: -(y * y))
_unary("square", lambda x, y: 2 * x)
_unary("sin", lambda x, y: x.cos())
_unary("cos", lambda x, y: -x.sin())
_unary("tan", lambda x, y: 1 + y * y)
_unary("sinh", lambda x, y: x.cosh())
_unary("cosh", lambda x, y: x.sinh())
_unary("tanh", lambda x, y: 1 - y * y)
_unary("asin", lambda x, y: (1 - x * x).rsqrt())
_unary("acos", lambda x, y: -(1 - x * x).rsqrt())
_unary("atan", lambda x, y: 1 / (1 + x * x))
_unary("asinh", lambda x, y: (x * x + 1).rsqrt())
_unary("acosh", lambda x, y: (x * x - 1).rsqrt())
_unary("atanh", lambda x, y: 1 / (1 - x * x))
_unary("sigmoid", lambda x, y: y * (1 - y))
_unary("erf", lambda x, y: _2_SQRTPI * (-(x * x)).exp(), False)
_unary("erfc", lambda x, y: -_2_SQRTPI * (-(x * x)).exp(), False)
_unary("erfinv", lambda x, y: _SQRT_PI_2 * (y * y).exp(), False)
_unary("lgamma", lambda x, y: x.digamma(), False)
_unary("digamma", lambda x, y: P.polygamma(1, x), False)
_unary("relu", lambda x, y: (x > 0).to(x.dtype), False)
_unary("silu", lambda x, y: x.sigmoid() * (1 + x * (1 - x.sigmoid())), False)
_unary("logsigmoid", lambda x, y: (-x).sigmoid(), False)
_unary("abs", lambda x, y: x.sign(), False)
_unary("frac", lambda x, y: 1)
_unary("absolute", lambda x, y: x.sign(), False)


@jvp_rule("clamp", "clip")
def _clamp_rule(tan, out, x, min=None, max=None, **k):
    if _T(min) or _T(max):
        return _Fallback
    t = tan(x)
    if t is None:
        return None
    m = P.ones_like(x, dtype=P.bool)
    if min is not None:
        m = m & (x >= min)
    if max is not None:
        m = m & (x <= max)
    return P.where(m, t, 0)


# ---------------------------------------------------------------------------
# matmul family: bilinear, op(ta, b) + op(a, tb)
# ---------------------------------------------------------------------------

def _bilinear(name):
    def rule(tan, out, a, b, *args, **kwargs):
        f = _op(name)
        ta, tb = tan(a), tan(b)
        return _add(None if ta is None else f(ta, b, *args, **kwargs),
                    None if tb is None else f(a, tb, *args, **kwargs))
    JVP[name] = rule


for _n in ("mm", "bmm", "matmul", "mv", "dot", "vdot", "outer", "ger", "inner", "kron",
           "cross", "linalg_cross", "tensordot"):
    _bilinear(_n)


def _addmm_like(name):
    def rule(tan, out, inp, m1, m2, *, beta=1, alpha=1, **kwargs):
        if name == "addbmm":
            def f(a, b):
                return P.bmm(a, b).sum(0)
        else:
            f = {"addmm": P.mm, "addmv": P.mv, "baddbmm": P.bmm, "addr": P.outer}[name]
        ti, t1, t2 = tan(inp), tan(m1), tan(m2)
        prod = _add(None if t1 is None else f(t1, m2), None if t2 is None else f(m1, t2))
        if prod is not None and alpha != 1:
            prod = prod * alpha
        if ti is not None:
            ti = None if beta == 0 else (ti * beta if beta != 1 else ti)   # beta=0: input ignored
        r = _add(ti, prod)
        if r is None:
            return None if tan(inp) is None else _zeros(out)
        return r.expand(out.shape)
    JVP[name] = rule


for _n in ("addmm", "addmv", "addbmm", "baddbmm", "addr"):
    _addmm_like(_n)


@jvp_rule("_product")
def _product_rule(tan, out, a, b, c=None, alpha=1, beta=0, kname=None):
    """The private GEMM ``beta * c + alpha * a @ b`` of ptcore._ops.linalg
    (equal batch dims), which the linalg composites are built on."""
    ta, tb, tc = tan(a), tan(b), tan(c)
    r = _add(None if ta is None else P.matmul(ta, b), None if tb is None else P.matmul(a, tb))
    if r is not None and alpha != 1:
        r = r * alpha
    if tc is not None and beta is not None and beta != 0:
        r = _add(r, tc * beta if beta != 1 else tc)
    if r is None:
        r = _zeros(out)
    if out is c:
        _write(c, r.expand(out.shape), _ctx.level)      # c updated in place
        return None
    return r


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

@jvp_rule("amax", "amin")
def _amax_rule(tan, out, x, dim=(), keepdim=False, **k):
    t = tan(x)
    if t is None:
        return None
    dims = _dims(x, dim if dim != () else None)
    y = _unsqueeze_to(out, x, dims, keepdim)
    m = (x == y).to(t.dtype)
    return (t * m).sum(dims, keepdim=keepdim) / m.sum(dims, keepdim=keepdim)


@jvp_rule("max", "min")
def _maxmin_rule(tan, out, x, dim=None, keepdim=False, **k):
    if _T(dim) or "other" in k:         # max(a, b): elementwise
        return _Fallback
    t = tan(x)
    if t is None:
        return None
    if dim is None:
        return _amax_rule(tan, out, x, (), False)
    idx = out[1] if keepdim else out[1].unsqueeze(dim)
    v = t.gather(dim, idx)
    return (v if keepdim else v.squeeze(dim), None)


@jvp_rule("logsumexp")
def _lse_rule(tan, out, x, dim, keepdim=False, **k):
    t = tan(x)
    if t is None:
        return None
    dims = _dims(x, dim)
    if not x.dtype.is_floating_point:
        y = _unsqueeze_to(out, x, dims, keepdim)
        return (t * (x - y).exp()).sum(dims, keepdim=keepdim)
    # torch's logsumexp_jvp: the exp-normalize trick with amax (NaN for a slice
    # that is all -inf or holds +inf, as torch)
    e = (x - x.amax(dims, keepdim=True)).exp() if x.numel() else x.exp()
    return (e * t).sum(dims, keepdim=keepdim) / e.sum(dims, keepdim=keepdim)


@jvp_rule("var")
def _var_rule(tan, out, x, dim=None, unbiased=None, keepdim=False, *, correction=None, **k):
    t = tan(x)
    if t is None:
        return None
    dims, c, n, full = _var_args(x, dim, unbiased, correction)
    xc = x - x.mean(dims, keepdim=True)
    # torch: var_backward of the tangent, summed (its dof rules past the sample size)
    if x.dtype.is_complex:
        return _var_grad(t.conj(), xc, n, c, full).real.sum(dims, keepdim=keepdim)
    return _var_grad(t, xc, n, c, full).sum(dims, keepdim=keepdim)


@jvp_rule("std")
def _std_rule(tan, out, x, dim=None, unbiased=None, keepdim=False, *, correction=None, **k):
    tv = _var_rule(tan, out, x, dim, unbiased, keepdim, correction=correction)
    return None if tv is None else _std_tangent(tv, out)


def _std_tangent(tv, std):
    """The std's tangent from the variance's, zero where the std is zero (as
    torch: its masked_fill; ``tv / 0`` was NaN)."""
    return P.where(std == 0, 0, tv / (2 * std))


@jvp_rule("var_mean", "std_mean")
def _var_mean_rule(tan, out, x, dim=None, unbiased=None, keepdim=False, *, correction=None,
                   **k):
    t = tan(x)
    if t is None:
        return None
    tv = _var_rule(tan, out[0], x, dim, unbiased, keepdim, correction=correction)
    dims = _var_args(x, dim, unbiased, correction)[0]
    tm = t.mean(dims, keepdim=keepdim)
    return tv, tm


def _std_mean_rule(tan, out, x, *a, **k):
    tv, tm = _var_mean_rule(tan, out, x, *a, **k) or (None, None)
    return None if tv is None else (_std_tangent(tv, out[0]), tm)


JVP["std_mean"] = _std_mean_rule


@jvp_rule("vector_norm", "_vector_norm")
def _vnorm_rule(tan, out, x, ord=2, dim=None, keepdim=False, **k):
    t = tan(x)
    if t is None:
        return None
    if k.get("dtype") is not None or not math.isfinite(ord):
        return _Fallback
    dims = _dims(x, dim)
    cx = x.dtype.is_complex

    def re(u):          # (torch's at::real of sgn(x) * conj(t) for complex x)
        return u.real if cx else u
    tc = t.conj() if cx else t
    if ord == 1:
        return re(x.sgn() * tc).sum(dims, keepdim=keepdim)
    if ord == 2:
        y = _unsqueeze_to(out, x, dims, keepdim)
        return P.where(y == 0, 0, re(x * tc) / y).sum(dims, keepdim=keepdim)
    # torch's norm_jvp: sum(|x|^(p-1) re(sgn(x) conj(t))) / |x|_p^(p-1), 0 where
    # the norm is (p > 1); |x|^(p-1) is 0 at x == 0 for p < 1, no mask on the norm
    if ord == 0:
        return P.zeros_like(out)
    ax = x.abs()
    if ord < 1:
        s = (P.where(x == 0, 0, ax.pow(ord - 1)) * re(x.sgn() * tc)).sum(dims, keepdim=keepdim)
        return s * out.pow(1 - ord)
    w = ax.pow(ord - 1) * re(x.sgn() * tc) if ord < 2 else ax.pow(ord - 2) * re(x * tc)
    s = w.sum(dims, keepdim=keepdim)
    return P.where(out == 0, 0, s / out.pow(ord - 1))


@jvp_rule("norm")
def _norm_rule(tan, out, x, p="fro", dim=None, keepdim=False, dtype=None, **k):
    if dtype is not None or (p not in ("fro", 1, 2, None)) or \
            (p == "fro" and dim is not None and not isinstance(dim, (list, tuple, int))):
        return _Fallback
    return _vnorm_rule(tan, out, x, 2 if p in ("fro", None) else p, dim, keepdim)


@jvp_rule("softmax")
def _softmax_rule(tan, out, x, dim=None, dtype=None, **k):
    t = tan(x)
    if t is None:
        return None
    t = t.to(out.dtype)
    return out * (t - (out * t).sum(dim, keepdim=True))


@jvp_rule("log_softmax")
def _log_softmax_rule(tan, out, x, dim=None, dtype=None, **k):
    t = tan(x)
    if t is None:
        return None
    t = t.to(out.dtype)
    return t - (out.exp() * t).sum(dim, keepdim=True)


JVP["special_softmax"] = _softmax_rule
F_JVP["softmax"] = lambda tan, out, x, dim=None, _stacklevel=3, dtype=None: \
    _softmax_rule(tan, out, x, dim)
F_JVP["log_softmax"] = lambda tan, out, x, dim=None, _stacklevel=3, dtype=None: \
    _log_softmax_rule(tan, out, x, dim)


@jvp_rule("sort")
def _sort_rule(tan, out, x, dim=-1, descending=False, stable=False, **k):
    t = tan(x)
    if t is None:
        return None
    return (t.gather(dim, out[1]) if x.dim() else t.clone(), None)


@jvp_rule("topk")
def _topk_rule(tan, out, x, k_, dim=-1, *a, **kw):
    t = tan(x)
    if t is None:
        return None
    return (t.gather(dim, out[1]) if x.dim() else t.clone(), None)


@jvp_rule("prod")
def _prod_rule(tan, out, x, dim=None, keepdim=False, *, dtype=None, **k):
    t = tan(x)
    if t is None:
        return None
    if dtype is not None or x.dtype.is_complex or x.dim() == 0 or bool((x == 0).any()):
        return _Fallback     # zeros: the backward formula's careful products
    if dim is None:
        return (t * (out / x)).sum()
    y = out if keepdim else out.unsqueeze(dim)
    return (t * (y / x)).sum(dim, keepdim=keepdim)


@jvp_rule("cumprod")
def _via_double_vjp(tan, out, *a, **k):
    return _Fallback


@jvp_rule("logcumsumexp")
def _lcse_rule(tan, out, x, dim, **k):
    """torch's logcumsumexp_jvp: cumsum(exp(x - max) t) / (cumsum(exp(x - max)) + 1e-13)
    (the max over the dim; complex: exp(x) itself); the 1e-13 keeps a run of
    -inf at zero."""
    t = tan(x)
    if t is None:
        return None
    if x.dim() == 0 or x.numel() == 0:
        return t
    d = dim % x.dim()
    e = x.exp() if x.is_complex() else (x - x.max(d, keepdim=True).values).exp()
    den = e.cumsum(d)
    return (e * t).cumsum(d) / (den + 1e-13)


# ---------------------------------------------------------------------------
# linear algebra: torch's JVP formulas (FunctionsManual.cpp), which use the full
# tangent of a structured input (a non-symmetric dA for cholesky/eigh, a
# non-triangular dA for triangular_solve) where the double-vjp of the
# backward formula would see its projection
# ---------------------------------------------------------------------------

def _cholesky_tangent(dA, L, upper):
    """torch's cholesky_jvp: dL = L pi(L^-1 dA L^-H), pi(X) = tril(X) - diag(X) / 2."""
    L_ = L.mH if upper else L
    dL = P.linalg.solve_triangular(L_, dA, upper=False, left=True)
    dL = P.linalg.solve_triangular(L_.mH, dL, upper=True, left=False)
    dL = dL.tril() - P.diag_embed(dL.diagonal(0, -2, -1) * 0.5)
    dL = P.matmul(L_, dL)
    return dL.mH if upper else dL


@jvp_rule("cholesky")
def _cholesky_rule(tan, out, x, upper=False, **k):
    t = tan(x)
    return None if t is None else _cholesky_tangent(t, out, upper)


@jvp_rule("linalg_cholesky")
def _linalg_cholesky_rule(tan, out, x, *, upper=False, **k):
    t = tan(x)
    return None if t is None else _cholesky_tangent(t, out, upper)


@jvp_rule("linalg_cholesky_ex")
def _linalg_cholesky_ex_rule(tan, out, x, *, upper=False, **k):
    t = tan(x)
    return None if t is None else (_cholesky_tangent(t, out[0], upper), None)


@jvp_rule("linalg_eigh")
def _eigh_rule(tan, out, x, UPLO="L", **k):
    """torch's linalg_eig_jvp (hermitian): dP = V^H dA V, dL = diag(dP),
    dV = V (dP / E) with E_ij = L_j - L_i off the diagonal, 0 on it."""
    dA = tan(x)
    if dA is None:
        return None
    L, V = out[0], out[1]
    dP = P.matmul(P.matmul(V.mH, dA), V)
    dL = dP.diagonal(0, -2, -1)
    if dL.is_complex():
        dL = dL.real
    n = L.shape[-1]
    eye = P.eye(n, dtype=P.bool, device=L.device)
    dX = P.where(eye, 0, dP / (L.unsqueeze(-2) - L.unsqueeze(-1)))
    return dL, P.matmul(V, dX)


@jvp_rule("triangular_solve")
def _triangular_solve_rule(tan, out, b, A, upper=True, transpose=False, unitriangular=False,
                           **k):
    """torch's triangular_solve_jvp (generic_solve_jvp): dX solves the same
    system for dB - op(dA) X with the whole dA (not its triangle); the copied
    coefficient's tangent is dA.  (torch takes dA X for transpose=True too,
    which finite differences refute; ptcore takes op(dA) = dA^T there.)"""
    dB, dA = tan(b), tan(A)
    if dB is None and dA is None:
        return None
    X = out[0]
    rhs = dB if dB is not None else P.zeros_like(X)
    if dA is not None:
        rhs = rhs - P.matmul(dA.mT if transpose else dA, X)
    dX = P.triangular_solve(rhs, A, upper, transpose, unitriangular)[0]
    return dX, dA


# ---------------------------------------------------------------------------
# nn.functional: linear in each input
# ---------------------------------------------------------------------------

def _conv_rule(name):
    def rule(tan, out, x, weight, bias=None, *args, **kwargs):
        f = _ctx.entry       # the nn.functional entry itself
        tx, tw = tan(x), tan(weight)
        tb = tan(bias) if _T(bias) else None
        r = _add(None if tx is None else f(tx, weight, None, *args, **kwargs),
                 None if tw is None else f(x, tw, None, *args, **kwargs))
        if tb is not None:
            if name != "linear":
                # the channel dim: 1, or 0 for an unbatched input
                shape = [1] * out.dim()
                shape[0 if x.dim() == weight.dim() - 1 else 1] = tb.numel()
                tb = tb.reshape(shape)
            r = _add(r, tb.expand(out.shape))
        return r
    F_JVP[name] = rule


for _n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "linear"):
    _conv_rule(_n)


# activations (nn.functional): from the output where torch allows it, so that
# ``inplace=True`` (the output is the input) works too
def _act(name, d, uses_x=False):
    def rule(tan, out, x, *args, **kwargs):
        t = tan(x)
        if t is None or not _fl(out) or x.dtype.is_complex or (uses_x and out is x):
            return _Fallback if t is not None else None
        return P.where(d(x, out, *args, **kwargs), t, 0) if d.mask else d(x, out, *args,
                                                                          **kwargs) * t
    F_JVP[name] = rule


def _mask(f):
    f.mask = True
    return f


def _scale(f):
    f.mask = False
    return f


_act("relu", _mask(lambda x, y, inplace=False: y > 0))
_act("relu6", _mask(lambda x, y, inplace=False: (y > 0) & (y < 6)))
_act("hardtanh", _mask(lambda x, y, min_val=-1.0, max_val=1.0, inplace=False:
                       (y > min_val) & (y < max_val)))
_act("leaky_relu", _scale(lambda x, y, negative_slope=0.01, inplace=False, **k:
                          P.where(y > 0, 1.0, P.full_like(y, negative_slope))))
_act("elu", _scale(lambda x, y, alpha=1.0, inplace=False: P.where(y > 0, 1.0, y + alpha)))
_act("celu", _scale(lambda x, y, alpha=1.0, inplace=False: P.where(y > 0, 1.0, y / alpha + 1)))
_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_act("selu", _scale(lambda x, y, inplace=False: P.where(y > 0, _SELU_S, y + _SELU_S * _SELU_A)))
_act("sigmoid", _scale(lambda x, y: y * (1 - y)))
_act("tanh", _scale(lambda x, y: 1 - y * y))
_act("silu", _scale(lambda x, y, inplace=False: x.sigmoid() * (1 + x * (1 - x.sigmoid()))),
     uses_x=True)
_act("logsigmoid", _scale(lambda x, y: (-x).sigmoid()), uses_x=True)
_act("softplus", _scale(lambda x, y, beta=1.0, threshold=20.0:
                        P.where(x * beta > threshold, 1.0, (x * beta).sigmoid())), uses_x=True)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _gelu_d(x, y, approximate="none"):
    if approximate != "none":
        return None
    return 0.5 * (1 + (x / math.sqrt(2.0)).erf()) + x * (-(x * x) / 2).exp() / _SQRT_2PI


_gelu_d.mask = False


def _gelu_rule(tan, out, x, approximate="none"):
    if approximate != "none" or (_T(x) and x.dtype.is_complex):
        return _Fallback
    t = tan(x)
    return None if t is None else _gelu_d(x, out) * t


F_JVP["gelu"] = _gelu_rule


@jvp_rule("layer_norm", table=F_JVP)
def _layer_norm_rule(tan, out, x, normalized_shape, weight=None, bias=None, eps=1e-5):
    tx = tan(x)
    tw = tan(weight) if _T(weight) else None
    tb = tan(bias) if _T(bias) else None
    dims = tuple(range(x.dim() - len(tuple(normalized_shape)), x.dim()))
    mu = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    xhat = (x - mu) * rstd
    r = None
    if tx is not None:
        txc = tx - tx.mean(dims, keepdim=True)
        th = rstd * (txc - xhat * (xhat * txc).mean(dims, keepdim=True))
        r = th * weight if weight is not None else th
    if tw is not None:
        r = _add(r, xhat * tw)
    if tb is not None:
        r = _add(r, tb.expand(out.shape))
    return r


# ---------------------------------------------------------------------------
# the generic fallback: jvp from the backward formula (double vjp)
# ---------------------------------------------------------------------------

class _FallbackMarker:
    pass


_Fallback = _FallbackMarker()


def _alias_for_grad(x, level):
    """A tensor with ``x``'s value (and its tangents of the levels below
    ``level``) that requires grad, connected to ``x``'s graph when ``x``
    requires grad."""
    if x._requires_grad and _gm.is_grad_enabled():
        return x.view_as(x)        # the view rule carries the lower levels' tangents
    a = x.detach()
    for k in range(level):
        tg = _L.get_tangent(x, k)
        if tg is not None:
            _L.set_tangent(a, k, tg)
    return a.requires_grad_(True)


def _double_vjp(fn, tan, out, args, kwargs, level):
    """Tangent(s) of ``out = fn(*args, **kwargs)`` by the double-vjp trick."""
    xs, ts = [], []

    def sub(v):
        if _fl(v):
            t = tan(v)
            if t is not None:
                a = _alias_for_grad(v, level)
                xs.append(a)
                ts.append(t)
                return a
        return v
    a2 = []
    for v in args:
        if isinstance(v, (list, tuple)) and not isinstance(v, _Size):
            a2.append((type(v) if type(v) in (list, tuple) else list)(sub(e) for e in v))
        else:
            a2.append(sub(v))
    k2 = {k: (type(v)(sub(e) for e in v) if type(v) in (list, tuple) else sub(v))
          for k, v in kwargs.items()}
    multi = isinstance(out, (tuple, list))
    outs = list(out) if multi else [out]
    if not xs:
        return [None] * len(outs) if multi else None
    with _gm.enable_grad():
        y = fn(*a2, **k2)
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        pick = [k for k, v in enumerate(ys) if _fl(v) and v.requires_grad]
        if not pick:
            return type(out)([None] * len(outs)) if multi and not hasattr(out, "_fields") \
                else ([None] * len(outs) if multi else None)
        us = [P.zeros_like(ys[k]).requires_grad_(True) for k in pick]
        gs = grad([ys[k] for k in pick], xs, us, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, ts) if g is not None and g.requires_grad]
        # the result joins the graph when an input (not our fresh leaf) or a tangent does
        create = _gm.is_grad_enabled() and (
            any(x._requires_grad for x in xs if x._base is not None)
            or any(t.requires_grad for t in ts))
        res = [None] * len(outs)
        if pairs:
            jv = grad([g for g, _ in pairs],
                      us, [t.to(g.dtype) if t.dtype is not g.dtype else t for g, t in pairs],
                      create_graph=create, allow_unused=True)
            for k, j in zip(pick, jv):
                res[k] = j if create or j is None else _L.detach(j)
        for k in pick:
            if res[k] is None:
                res[k] = P.zeros_like(outs[k])
    return res if multi else res[0]


class _Ctx(threading.local):
    """The level and the callable being differentiated (set around each rule)."""
    level = 0
    entry = None


_ctx = _Ctx()


# ---------------------------------------------------------------------------
# the driver (installed in the dispatch layer)
# ---------------------------------------------------------------------------

_DIFF_NS = ("ptcore", "Tensor", "linalg")


def _tangent_fn(level):
    get = _L.get_tangent

    def tan(x):
        if isinstance(x, _TensorBase):
            return get(x, level)
        return None
    return tan


def _inputs(args, kwargs):
    for a in args:
        if isinstance(a, _TensorBase):
            yield a
        elif isinstance(a, (list, tuple)) and not isinstance(a, _Size):
            for b in a:
                if isinstance(b, _TensorBase):
                    yield b
    for a in kwargs.values():
        if isinstance(a, _TensorBase):
            yield a


def _attach(out, tg, level, args, kwargs):
    if isinstance(out, (tuple, list)):
        if tg is None:
            tg = [None] * len(out)
        elif not isinstance(tg, (tuple, list)):
            tg = [tg] + [None] * (len(out) - 1)
        for o, t in zip(out, tg):
            _attach(o, t, level, args, kwargs)
        return
    if not _fl(out):
        return
    ins = list(_inputs(args, kwargs))
    if any(out is a for a in ins):
        return       # the op returned an input itself: its tangent stays
    if tg is None or tg is _Fallback:
        if out._base is not None:
            _L.block(out, level)     # not the view of a dual base that it may look like
        return
    if not _T(tg):
        tg = P.full_like(out, tg)
    if tuple(tg.shape) != tuple(out.shape):
        tg = tg.expand(out.shape)
    if tg.dtype is not out.dtype:
        tg = tg.real if (tg.dtype.is_complex and not out.dtype.is_complex) else tg
        tg = tg.to(out.dtype)
    if out._base is None:
        for a in ins:
            if tg is _L.get_tangent(a, level) or tg._base is not None and \
                    tg._base is _L.get_tangent(a, level):
                tg = tg.clone()      # a new tensor gets its own tangent storage
                break
    _L.set_tangent(out, level, tg)


def _run_rule(rule, fn, tan, out, args, kwargs, level):
    ctx = _ctx
    prev, preve = ctx.level, ctx.entry
    ctx.level = level
    ctx.entry = fn
    try:
        if rule is None:
            tg = _Fallback
        elif "out" in kwargs:
            # an explicit out=None (out= itself has no forward AD, see drive):
            # a rule's own ``out`` is the primal result
            tg = rule(tan, out, *args, **{k: v for k, v in kwargs.items() if k != "out"})
        else:
            tg = rule(tan, out, *args, **kwargs)
        if tg is _Fallback:
            tg = _double_vjp(fn, tan, out, args, kwargs, level)
        return tg
    finally:
        ctx.level = prev
        ctx.entry = preve


def _missing(out, level, args, kwargs):
    """Whether a differentiable output of a composite lacks a tangent."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    ins = list(_inputs(args, kwargs))
    return any(_fl(o) and _L.get_tangent(o, level) is None and not any(o is a for a in ins)
               for o in outs)


def _rule_for(opdef):
    ns = opdef.namespace
    if ns == "nn.functional":
        return F_JVP.get(opdef.name)
    if ns == "linalg" and opdef.name == "norm":
        return None     # (a composite: torch.norm's rule reads linalg.norm(A, 1) as a vector norm)
    if ns in _DIFF_NS:
        return JVP.get(opdef.name)
    return None


def drive(entry, opdef, args, kwargs, nxt, level, lower):
    """Forward AD of one op call whose arguments hold tangents at ``level``."""
    name = opdef.name
    if kwargs.get("out") is not None:
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                  "support it because it is an out= function")
    decl = opdef.decl
    at = decl.out_dtype if decl is not None and name == decl.name else None
    if at is not None and (kwargs.get("out_dtype") is not None     # (no derivative in torch)
                           or len(args) > at and args[at] is not None):
        raise NotImplementedError(f"Trying to use forward AD with {name} that does not support "
                                  "it because it has not been implemented yet.")
    if name == "rrelu" and (args[4] if len(args) > 4 else kwargs.get("inplace", False)):
        raise NotImplementedError("Trying to use forward AD with rrelu_with_noise_ that does not "
                                  "support it because it has not been implemented yet.")
    if decl is not None:
        kind = form_jvp(decl, name)
    else:
        # (the tensor core's protocol methods: conversions to Python values carry no tangent)
        protocol = PROTOCOL_METHODS.get(name) if opdef.namespace == "Tensor" else None
        kind = protocol.jvp if protocol is not None else None
    if kind == "none" or kind == "zero" or \
            ("random" in opdef.tags and "inplace" not in opdef.tags and kind != "inside") \
            or _gm._state.inference:        # (inference mode: no forward AD, as torch)
        tan = _tangent_fn(level)
        with _L.hidden(level):
            out = lower(args, kwargs)
            # torch's sampling ops with a differentiable parameter (bernoulli(p),
            # normal(mean, std), poisson(rates)) give a zero tangent
            tg = 0 if kind == "zero" and \
                any(tan(a) is not None for a in _inputs(args, kwargs)) else None
            _attach(out, tg, level, args, kwargs)
        return out
    if "inplace" in opdef.tags or kind == "inplace":
        return _inplace(entry, opdef, args, kwargs, level, lower)
    rule = _rule_for(opdef)
    tan = _tangent_fn(level)
    if rule is None and not (opdef.namespace in _DIFF_NS and name in FORMULAS
                             and opdef.body is not opdef.raw):
        # a composite (an op that autograd does not record with its formula
        # either): its inner ops carry the tangents
        out = nxt(args, kwargs)
        if _missing(out, level, args, kwargs):
            with _L.hidden(level):
                tg = _run_rule(None, entry, tan, out, args, kwargs, level)
                _fill_missing(out, tg, level, args, kwargs)
        return out
    with _L.hidden(level):
        out = lower(args, kwargs)
        tg = _run_rule(rule, entry, tan, out, args, kwargs, level)
        if tg is not None and args and out is args[0] and opdef.namespace == "nn.functional":
            _write(out, tg, level)          # inplace=True: the input's tangent changes
        else:
            _attach(out, tg, level, args, kwargs)
    return out


def _fill_missing(out, tg, level, args, kwargs):
    if isinstance(out, (tuple, list)):
        tg = tg if isinstance(tg, (tuple, list)) else [tg] + [None] * (len(out) - 1)
        for o, t in zip(out, tg):
            if _fl(o) and _L.get_tangent(o, level) is None:
                _attach(o, t, level, args, kwargs)
    else:
        _attach(out, tg, level, args, kwargs)


_NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
           "forward mode AD.")


def drive_function(cls, args, kwargs, level):
    """Forward AD through a custom :class:`~ptcore.autograd.Function`: its
    ``jvp`` staticmethod (torch's API: one tangent per input, zeros for
    tensors without one, None for other arguments); ptcore's own Functions
    without one get the double-vjp trick on their backward; a user's
    Function without one raises NotImplementedError, as in torch."""
    own_jvp = cls.jvp is not Function.jvp
    if not own_jvp and not cls.__module__.startswith("ptcore."):
        raise NotImplementedError(_NO_JVP)
    tan = _tangent_fn(level)
    with _L.hidden(level):
        if not own_jvp:
            out = cls.apply(*args, **kwargs)
            tg = _run_rule(None, cls.apply, tan, out, args, kwargs, level)
            _attach(out, tg, level, args, kwargs)
            return out
        record = _gm.is_grad_enabled() and any(_T(a) and a.requires_grad for a in args)
        ctx = None
        if record:
            out = cls.apply(*args, **kwargs)
            first = next((o for o in (out if isinstance(out, tuple) else (out,)) if _T(o)), None)
            ctx = getattr(getattr(first, "_grad_fn", None), "_ctx", None)
        if ctx is None:
            ctx = FunctionCtx()
            with _gm.no_grad():
                if cls.setup_context is not Function.setup_context:
                    out = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, out)
                else:
                    out = cls.forward(ctx, *args, **kwargs)
        tins = []
        for a in args:
            if _T(a):
                t = tan(a)
                tins.append(t if t is not None else _zeros(a))
            else:
                tins.append(None)
        fwd = getattr(ctx, "saved_for_forward", None)
        saved = (ctx._saved, ctx.to_save)
        if fwd is not None:
            ctx._saved, ctx.to_save = None, fwd      # ctx.saved_tensors in jvp: these
        try:
            tg = cls.jvp(ctx, *tins)
        finally:
            ctx._saved, ctx.to_save = saved
        _check_function_jvp(out, tg, args, tins, ctx)
        _attach(out, tg, level, args, kwargs)
    return out


def _check_function_jvp(out, tg, args, tins, ctx):
    """torch's checks of a custom Function's jvp results against its outputs."""
    outs = out if isinstance(out, tuple) else (out,)
    tgs = tg if isinstance(tg, (tuple, list)) else (tg,)
    if len(tgs) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(tgs)})")
    dirty = getattr(ctx, "_dirty", ())
    for o, t in zip(outs, tgs):
        if not (_T(o) and _T(t)):
            continue
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                               f"that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(o.shape)} while the given forward gradient is of size "
                               f"{list(t.shape)}.")
        k = next((i for i, a in enumerate(args) if a is o), None)
        if k is not None and any(d is o for d in dirty):
            if t is not tins[k]:
                raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                                   "gradients inplace. If the forward is modifying an input "
                                   "inplace, then the jvp function must modify the corresponding "
                                   "gradient inplace.")
        elif t._base is None and (k is not None or o._base is not None and any(
                _T(a) and a.untyped_storage() is o.untyped_storage() for a in args)):
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")


# ---------------------------------------------------------------------------
# in-place ops: the out-of-place rule on the old value, written into the
# tangent of ``self`` (so views of it see the change, as in torch)
# ---------------------------------------------------------------------------

# in-place forms with a tangent rule of their own, which reads no old value:
# in-place op name -> rule(tan, self, args, kwargs)
_inplace_rule = Handlers("in-place JVP")


@_inplace_rule("copy_", "fill_", "zero_")
def _overwrite_tangent(tan, self, args, kwargs):
    # (copy_'s src, fill_'s value, broadcast to self; zero_ has none)
    t = tan(args[1] if len(args) > 1 else kwargs.get("src", kwargs.get("value")))
    if t is None:
        return None if tan(self) is None else _zeros(self)
    return t.expand(self.shape) if tuple(t.shape) != tuple(self.shape) else t


@_inplace_rule("__setitem__")
def _setitem_tangent(tan, self, args, kwargs):
    ts = tan(self)
    idx, v = args[1], args[2]
    tv = tan(v)
    if tv is None and ts is None:
        return None
    new = ts.clone() if ts is not None else _zeros(self)
    new[idx] = tv if tv is not None else 0
    return new


def _jvp_inplace(opdef, name):
    """The declared ``jvp_inplace`` of the in-place form ``name`` (``X_``), or None."""
    d = opdef.decl
    return d.jvp_inplace if d is not None and name == d.name + "_" else None


def _outplace(name):
    base = name[:-1]
    f = getattr(P, base, None)
    if f is None:
        f = getattr(P.Tensor, base, None)
    return base, f


def _inplace(entry, opdef, args, kwargs, level, lower):
    name = opdef.name
    self = args[0]
    tan = _tangent_fn(level)
    if not _fl(self):
        with _L.hidden(level):
            return lower(args, kwargs)
    how = _jvp_inplace(opdef, name)
    if how == "same":
        with _L.hidden(level):
            out = lower(args, kwargs)
            ts = _L.get_tangent(self, level)
            if ts is not None:
                getattr(ts, name)(*args[1:], **kwargs)
        return out
    with _L.hidden(level):
        old = None
        if how != "linear" and name not in _inplace_rule:
            old = self.clone()
            t0 = tan(self)
            if t0 is not None:
                old.__dict__.setdefault("_fw", {})[level] = t0
        out = lower(args, kwargs)
        new = _inplace_tangent(name, opdef, tan, self, old, args, kwargs, level)
        if old is not None:
            old.__dict__.get("_fw", {}).pop(level, None)
        if new is not None:
            _write(self, new, level)
    return out


def _inplace_tangent(name, opdef, tan, self, old, args, kwargs, level):
    rule = _inplace_rule.get(name)
    if rule is not None:
        return rule(tan, self, args, kwargs)
    ts = tan(self)
    if "random" in opdef.tags:
        return None if ts is None else _zeros(self)
    base, f = _outplace(name)
    if f is None:
        return None if ts is None else _zeros(self)
    src = old if old is not None else self
    return _run_rule(JVP.get(base), f, tan, self, (src,) + tuple(args[1:]), kwargs, level)


def _write(self, new, level):
    cur = _L.get_tangent(self, level)
    if _batching.is_batched(new) and not _batching.is_batched(self):
        # vmap over jvp: an unbatched tensor with a batched tangent (one per sample):
        # the new tangent replaces the old one
        if self._base is None:
            _L.set_tangent(self, level, new.clone())
            return
        if cur is None or not _batching.is_batched(cur):
            # a view of an unbatched base (a backward formula writing into fresh
            # zeros, under jacfwd(jacrev)): the base's tangent becomes batched
            # (the old one, or zeros, in every sample), the view's a view of it
            b = self._base
            bt = _L.get_tangent(b, level)
            zero = P.zeros_like(new).sum()          # 0 in every sample
            _L.replace_base_tangent(b, level, (bt if bt is not None else P.zeros_like(b)) + zero)
            _L.set_tangent(self, level, None)     # (a cached or blocked entry)
            cur = _L.get_tangent(self, level)
        cur.copy_(new.to(cur.dtype) if new.dtype is not cur.dtype else new)
        return
    if cur is not None and not _L.overlapping(cur):
        if cur is not new:
            cur.copy_(new.to(cur.dtype) if new.dtype is not cur.dtype else new)
        return
    b = self._base
    if cur is None and b is not None:
        bt = _L.empty_like_layout(b, self.dtype).zero_()
        _L.set_tangent(b, level, bt)
        cur = _L.get_tangent(self, level)
        if cur is not None:
            cur.copy_(new)
            return
    tg = _L.empty_like_layout(self, self.dtype)
    tg.copy_(new)
    _L.set_tangent(self, level, tg)


def install():
    _L.driver[0] = drive
    _L.function_driver[0] = drive_function
