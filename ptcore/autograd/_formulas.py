"""Backward formulas, one per differentiable op, written with ptcore ops
(so they run on every device and are themselves differentiable).

Each formula is called as ``formula(out, *args, **kwargs)`` right after the
op ran (with recording off) and attaches a node to ``out`` with
:func:`~ptcore.autograd._record.attach`.  Gradients are returned in the
broadcast shape and the op's compute dtype: the engine sums them back to
each input's shape and casts them to its dtype.
"""
import math

import ptcore as P
from ptcore._dispatch.device import cpu_kernel as _loop, has_loop as _has_loop
from ptcore._ops import _nn_kernels as _NNK
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._tensor import _TensorBase
from ptcore.autograd._record import (attach, attach2, attach3, save, save_out, _is_diff, _Plain,
                                    zero_link, mask_link, backward_name, not_implemented)
from ptcore.autograd.graph import SavedTensor, _hooks_on, node_class, ClosureSaved
from ptcore.autograd.grad_mode import _ever as _inference_ever
from ptcore._dispatch.dispatcher import on as _dispatch_on
from ptcore._ops.pointwise import _threshold_backward
from ptcore.autograd.grad_mode import _state
from ptcore.autograd.graph import _version_error
from ptcore.autograd.graph import _sum_to
from ptcore._ops import indexing as I
from ptcore.autograd import grad_mode
from ptcore._ops import _activation as _act_kernels
from ptcore.linalg._extra import _lu_backward

FORMULAS = {}


def _T(x):
    return isinstance(x, _TensorBase)


def formula(*names):
    def deco(fn):
        for n in names:
            FORMULAS[n] = fn
        return fn
    return deco


_bname = backward_name


def _c(t):
    """conj for complex tensors and Python complex scalars (a no-op for real ones)."""
    if _T(t):
        return t.conj() if t.dtype.is_complex else t
    return t.conjugate() if isinstance(t, complex) else t


def _relu_grad(g, y):
    """ReLU's input gradient from its output ``y``: torch's
    ``threshold_backward(g, y, 0)`` (0 where y <= 0, even for a NaN or inf
    ``g``); ``where`` when the gradient itself is recorded (create_graph)."""
    if (_state.enabled and (g.requires_grad or y.requires_grad)) or _fw_levels() \
            or _vmap_frames():
        # (the kernel carries no tangents, and reads a batched tensor's memory)
        return mask_link(g, lambda h: P.where(y <= 0, 0, h), "ThresholdBackwardBackward0", y)
    return _threshold_backward(g, y, 0)


# ---------------------------------------------------------------------------
# elementwise unary: d(out)/d(x) from x and/or out
# ---------------------------------------------------------------------------

def _half_opmath(g):
    """A float16/bfloat16 gradient in an unrecorded backward: torch's dedicated backward
    kernels compute it in float32."""
    return (g.dtype is P.float16 or g.dtype is P.bfloat16) and not P.is_grad_enabled()


def _opmath(df):
    """``df(g, x, y, *params)`` computed as torch's half-precision backward kernels
    compute it (tanh_backward, sigmoid_backward, the activations' ...): in float32,
    rounded once to the gradient's float16/bfloat16 (the composite in half precision
    rounds at every step: a last-bit difference in about half the elements).  A recorded
    backward (create_graph) keeps the differentiable composite."""
    def run(g, x, y, *params):
        if _half_opmath(g):
            f32 = P.float32
            return df(g.to(f32), None if x is None else x.to(f32),
                      None if y is None else y.to(f32), *params).to(g.dtype)
        return df(g, x, y, *params)
    return run


def unary(name, df, need=("x",), node=None, opmath=False):
    bn = node or _bname(name)
    if opmath:
        df = _opmath(df)
    nx, ny = "x" in need, "y" in need
    node_class(bn, saved=("self",) * nx + ("result",) * ny)   # grad_fn._saved_self ...

    def f(out, x, *args, **kwargs):
        if not _is_diff(out):
            return
        sx = save(x) if nx else None
        sy = save_out(out) if ny else None

        def bw(g):
            return (df(g, sx.unpack() if nx else None, sy.unpack() if ny else None),)
        node = attach(bn, out, (x,), bw)
        if node is not None and (nx or ny):
            node._sv = (sx, sy) if nx and ny else (sx,) if nx else (sy,)
    FORMULAS[name] = f
    return f


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)

unary("neg", lambda g, x, y: -g, ())
unary("negative", lambda g, x, y: -g, ())
unary("positive", lambda g, x, y: g, ())
unary("exp", lambda g, x, y: g * _c(y), ("y",))
unary("exp2", lambda g, x, y: g * _c(y) * _LN2, ("y",))
unary("expm1", lambda g, x, y: g * (_c(y) + 1), ("y",))
unary("log", lambda g, x, y: g / _c(x))
unary("log2", lambda g, x, y: g / (_c(x) * _LN2))
unary("log10", lambda g, x, y: g / (_c(x) * _LN10))
unary("log1p", lambda g, x, y: g / (_c(x) + 1))
unary("sqrt", lambda g, x, y: g / (2 * _c(y)), ("y",))
unary("rsqrt", lambda g, x, y: -0.5 * g * _c(y) ** 3, ("y",))
unary("sin", lambda g, x, y: g * _c(x.cos()))
unary("cos", lambda g, x, y: -g * _c(x.sin()))
unary("tan", lambda g, x, y: g * (1 + _c(y) ** 2), ("y",))
unary("asin", lambda g, x, y: g * _c((1 - x * x).rsqrt()))
unary("acos", lambda g, x, y: -g * _c((1 - x * x).rsqrt()))
unary("atan", lambda g, x, y: g / _c(1 + x * x))
unary("sinh", lambda g, x, y: g * _c(x.cosh()))
unary("cosh", lambda g, x, y: g * _c(x.sinh()))
unary("tanh", lambda g, x, y: g * (1 - _c(y) * _c(y)), ("y",), opmath=True)
unary("asinh", lambda g, x, y: g * _c((x * x + 1).rsqrt()))
# torch: rsqrt(x * x - 1) for real x (finite below -1, inf at -1, where the
# product of the two square roots is nan), the product for complex x
unary("acosh", lambda g, x, y: g * (_c((x + 1).rsqrt() * (x - 1).rsqrt()) if x.is_complex()
                                    else (x * x - 1).rsqrt()))
unary("atanh", lambda g, x, y: g / _c(1 - x * x))
def _sigmoid_grad(g, x, y):
    # torch's sigmoid_backward: bfloat16 in float32 math, float16 in its own (g (1 - y) y)
    if g.dtype is P.float16:
        return g * (1 - y) * y
    if _half_opmath(g):
        gf, yf = g.to(P.float32), y.to(P.float32)
        return (gf * (yf * (1 - yf))).to(g.dtype)
    return g * _c(y * (1 - y))


unary("sigmoid", _sigmoid_grad, ("y",))
unary("erf", lambda g, x, y: g * _2_SQRTPI * (-(x * x)).exp())
unary("erfc", lambda g, x, y: -g * _2_SQRTPI * (-(x * x)).exp())
unary("erfinv", lambda g, x, y: g * (math.sqrt(math.pi) / 2) * (y * y).exp(), ("y",))
unary("lgamma", lambda g, x, y: g * x.digamma())
unary("reciprocal", lambda g, x, y: -g * _c(y * y), ("y",))


@formula("square")
def _square(out, x, **k):
    # torch records pow(x, 2): PowBackward0, grad_fn._saved_exponent == 2
    if not _is_diff(out):
        return
    sx = save(x)
    node = attach("PowBackward0", out, (x,), lambda g: (2 * g * _c(sx.unpack()),))
    if node is not None:
        node._sv = (sx, 2)


unary("relu", lambda g, x, y: _relu_grad(g, y), ("y",))
unary("abs", lambda g, x, y: g * x.sgn())
unary("absolute", lambda g, x, y: g * x.sgn())
unary("deg2rad", lambda g, x, y: g * (math.pi / 180), ())
unary("rad2deg", lambda g, x, y: g * (180 / math.pi), ())
unary("frac", lambda g, x, y: g, ())
unary("conj", lambda g, x, y: g.conj(), ())
unary("conj_physical", lambda g, x, y: g.conj(), ())
unary("resolve_conj", lambda g, x, y: g, ())
unary("resolve_neg", lambda g, x, y: g, ())
unary("nan_to_num", lambda g, x, y: g * x.isfinite())
def _sinc_grad(g, x):
    # torch's sinc_backward: 0 where pi x**2 is 0 (also where it underflows);
    # the conjugate of the whole derivative for complex x, in torch's order (the
    # quotient, then its product with g: under cancellation near 0 the rounding shows)
    xp, x2p = x * math.pi, x * x * math.pi
    return P.where(x2p == 0, 0, g * _c((xp * xp.cos() - xp.sin()) / x2p))


unary("sinc", lambda g, x, y: _sinc_grad(g, x))
# torch's: i0' = i1 (special_i1, nan at +-inf as torch's), digamma' = polygamma(1, .)
# (inf at the poles; both differentiable again)
unary("i0", lambda g, x, y: g * P.special.i1(x))
unary("digamma", lambda g, x, y: g * P.polygamma(1, x))
for _n in ("sign", "sgn_real", "floor", "ceil", "round", "trunc", "fix"):
    unary(_n, lambda g, x, y: P.zeros_like(g), ())
_round0 = FORMULAS["round"]
unary("round", lambda g, x, y: P.zeros_like(g), (), node="RoundBackward1")
_round1 = FORMULAS["round"]


@formula("round")
def _round(out, x, *args, **kwargs):
    # torch's round.decimals overload (decimals given, even 0: special.round
    # passes it) is RoundBackward1
    (_round1 if args or "decimals" in kwargs else _round0)(out, x)


def _not_impl(name):
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


@formula("sgn")
def _sgn(out, x, *a, **k):
    if not _is_diff(out):
        return
    if not x.dtype.is_complex:
        attach("SgnBackward0", out, (x,), lambda g: (P.zeros_like(g),))
        return
    sx, sy = save(x), save_out(out)

    def bw(g):
        x, y = sx.unpack(), sy.unpack()
        a = x.abs()
        r = (g - (g * y.conj()).real * y) / a
        return (P.where(a == 0, 0, r),)
    attach("SgnBackward0", out, (x,), bw)


@formula("logit")
def _logit(out, x, eps=None, **k):
    sx = save(x)

    def bw(g):
        x = sx.unpack()
        r = g / (x * (1 - x))
        if eps is not None:
            r = P.where((x < eps) | (x > 1 - eps), 0, r)
        else:
            r = P.where((x < 0) | (x > 1), math.nan, r)     # (torch: nan off [0, 1])
        return (r,)
    attach("LogitBackward0", out, (x,), bw)


@formula("real")
def _real(out, x, *a, **k):
    if x.dtype.is_complex:
        attach("RealBackward0", out, (x,), lambda g: (P.complex(g, P.zeros_like(g)),))
    else:
        attach("RealBackward0", out, (x,), lambda g: (g,))


@formula("imag")
def _imag(out, x, *a, **k):
    attach("ImagBackward0", out, (x,), lambda g: (P.complex(P.zeros_like(g), g),))


@formula("angle")
def _angle(out, x, *a, **k):
    sx = save(x)

    def bw(g):
        x = sx.unpack()
        if not x.dtype.is_complex:
            return (P.zeros_like(x),)
        r = g * x / (x.abs() ** 2) * 1j
        return (P.where(x == 0, 0, r),)
    attach("AngleBackward0", out, (x,), bw)


@formula("complex")
def _complex(out, re, im, **k):
    attach("ComplexBackward0", out, (re, im), lambda g: (g.real, g.imag))


@formula("view_as_real")
def _view_as_real(out, x, **k):
    attach("ViewAsRealBackward0", out, (x,), lambda g: (P.view_as_complex(g.contiguous()),))


@formula("view_as_complex")
def _vac(out, x, **k):
    attach("ViewAsComplexBackward0", out, (x,), lambda g: (P.view_as_real(g),))


node_class("PolarBackward0", saved=("result",))


@formula("polar")
def _polar(out, ab, an, **k):
    # torch's polar_backward, from the result: abs gets re(conj(g) sgn(result))
    # (0 where abs is 0, -sign for a negative abs), angle re(conj(g) i result)
    so = save_out(out)

    def bw(g):
        y = so.unpack()
        gc = g.conj()
        return (gc * y.sgn()).real, (gc * (y * 1j)).real
    node = attach("PolarBackward0", out, (ab, an), bw)
    if node is not None:
        node._sv = (so,)


# ---------------------------------------------------------------------------
# elementwise binary
# ---------------------------------------------------------------------------

def _scalar_like(v):
    return v.conjugate() if isinstance(v, complex) else v


def _attach_kept(name, out, inputs, keep, backward):
    """:func:`attach` with only ``inputs[i]`` for ``i`` in ``keep`` as the node's
    inputs: torch's nodes list only the differentiable inputs of their overload
    (``next_functions`` has no entry for a Python number, a mask or an index);
    ``backward`` still returns one gradient per input of ``inputs``."""
    if len(keep) == len(inputs):
        return attach(name, out, inputs, backward)

    def bw(g):
        gs = backward(g)
        return tuple(gs[i] for i in keep)
    return attach(name, out, tuple(inputs[i] for i in keep), bw)


_AddB, _SubB, _RsubB = (node_class("AddBackward0"), node_class("SubBackward0"),
                        node_class("RsubBackward0"))
_MulB = node_class("MulBackward0", saved=("self", "other"))
_RsubScalarB = node_class("RsubBackward1")        # torch's overload for a Python number


def _same_grad(g):
    return g, g


def _add_plain(out, a, b):
    attach2(_AddB, out, a, b, _same_grad)


@formula("add")
def _add(out, a, b, *dep, alpha=1, out_=None, **k):
    if dep:                     # torch's deprecated order add(a, alpha, b)
        b, alpha = dep[0], b
    if alpha == 1:
        bw = _same_grad
    else:
        def bw(g):
            return g, g * _scalar_like(alpha)
    attach2(_AddB, out, a, b, bw)


@formula("sub", "subtract")
def _sub(out, a, b, *dep, alpha=1, **k):
    if dep:                     # sub(a, alpha, b)
        b, alpha = dep[0], b
    if alpha == 1:
        def bw(g):
            return g, -g
    else:
        def bw(g):
            return g, -g * _scalar_like(alpha)
    attach2(_SubB, out, a, b, bw)


@formula("rsub")
def _rsub(out, a, b, *, alpha=1, **k):
    # rsub(a, b) = b - alpha * a
    def bw(g):
        return (-g if alpha == 1 else -g * _scalar_like(alpha)), g
    if isinstance(b, _TensorBase):
        attach2(_RsubB, out, a, b, bw)
    else:
        _attach_kept("RsubBackward1", out, (a, b), (0,), bw)


def _stale(a, va, b, vb):
    """Raise PyTorch's error for the operand modified in place after being saved."""
    t, v = (a, va) if a._version != va else (b, vb)
    _version_error(t, _VersionOnly(v), None)


class _VersionOnly:
    __slots__ = ("version",)

    def __init__(self, v):
        self.version = v


@formula("mul", "multiply")
def _mul(out, a, b, **k):
    _mul_plain(out, a, b)


_MUL_SAVED = ClosureSaved("a", "b")     # the hot path's _saved_self, _saved_other


def _mul_plain(out, a, b):
    ta = isinstance(a, _TensorBase)
    tb = isinstance(b, _TensorBase)
    if ta and tb and a._requires_grad and b._requires_grad and not _hooks_on[0]:
        ra, rb = a._ad_input(), b._ad_input()
        if ra[2] is rb[2] and not ra[2].is_complex:
            # the hot case (both operands differentiable, real, one dtype): the
            # operands and their versions live in the closure, no SavedTensor
            # objects (not under saved_tensors_hooks, which must see every
            # saved tensor)
            va, vb = ra[3], rb[3]
            if _inference_ever[0] and (a.is_inference() or b.is_inference()):
                SavedTensor(a)          # raises torch's error for inference tensors
                SavedTensor(b)

            def bw(g):
                if a._version != va or b._version != vb:
                    _stale(a, va, b, vb)
                return g * b, g * a
            attach2(_MulB, out, a, b, bw, ra, rb, _MUL_SAVED)      # (a, b): bw's cells
            return
    # other first: torch's order (saved_tensors_hooks see other, then self)
    sb = (SavedTensor(b) if tb else _Plain(b)) if ta and a._requires_grad else None
    sa = (SavedTensor(a) if ta else _Plain(a)) if tb and b._requires_grad else None
    if out.dtype.is_complex:
        def bw(g):
            ga = g * _c(sb.unpack()) if sb is not None else None
            gb = g * _c(sa.unpack()) if sa is not None else None
            return ga, gb
    else:
        def bw(g):
            ga = g * sb.unpack() if sb is not None else None
            gb = g * sa.unpack() if sa is not None else None
            return ga, gb
    node = attach2(_MulB, out, a, b, bw)
    if node is not None:
        node._sv = (sa, sb)


# recorders for the operator fast path (``a + b``, ``a * b``): the formula
# of a call with no keyword arguments, called without collecting them
BINARY_RECORDERS = {"add": _add_plain, "mul": _mul_plain}


_DivB = node_class("DivBackward0", saved=("self", "other")).__name__


@formula("div", "divide", "true_divide")
def _div(out, a, b, *, rounding_mode=None, **k):
    if rounding_mode is not None:
        attach("DivBackward2", out, (a, b), lambda g: (P.zeros_like(g), P.zeros_like(g)))
        return
    sb = save(b)
    sa = save(a) if _T(b) and b._requires_grad else None

    def bw(g):
        b = sb.unpack()
        ga = g / _c(b)
        gb = None
        if sa is not None:
            gb = -g * _c((sa.unpack() / b) / b)   # torch's order: finite for a tiny b
        return ga, gb
    node = attach(_DivB, out, (a, b), bw)
    if node is not None:
        node._sv = (sa, sb)


_FLOOR_DIVIDE_NOT_IMPLEMENTED = not_implemented("floor_divide")


@formula("floor_divide", "remainder_int")
def _floordiv(out, a, b, **k):
    # as PyTorch: the result joins the graph (its autograd fallback's
    # NotImplemented node), backward raises
    if _is_diff(out):
        _FLOOR_DIVIDE_NOT_IMPLEMENTED(out, a, b)


def _log_number(a):
    """log of a number base, as C's: nan for a negative real."""
    if isinstance(a, complex):
        import cmath
        return cmath.log(a)
    return math.log(a) if a > 0 else math.nan


@formula("pow")
def _pow(out, a, b, **k):
    _record_pow(out, a, b)


def _record_pow(out, a, b, compute=None):
    """pow's node; ``compute``: the dtype its gradients are computed in (float_power's
    float64/complex128: torch converts the operands before its pow)."""
    sb = save(b)        # exponent first: torch's order (what saved_tensors_hooks see)
    sa = save(a)
    so = save_out(out) if _T(b) else None       # torch saves the result of Tensor_Tensor
    need_a, need_b = _T(a) and a._requires_grad, _T(b) and b._requires_grad

    def bw(g):
        b, a = sb.unpack(), sa.unpack()
        if compute is not None:
            a, b = (x.to(compute) if _T(x) else x for x in (a, b))
        y = so.unpack() if so is not None else None     # checks its version, as torch
        ga = gb = None
        if need_a:
            if _T(b):
                ga = g * _c(b * a ** (b - 1))
                ga = P.where((b == 0), 0, ga)
            elif b == 0:
                ga = P.zeros_like(a) * g
            else:
                ga = g * _c(b * a ** (b - 1))
        if need_b:
            if _T(a):
                gb = g * _c(y * a.log())
                gb = P.where((a == 0) & (b.real >= 0 if b.dtype.is_complex else b >= 0), 0, gb)
            else:
                if a != 0:
                    gb = g * _c(y * _log_number(complex(a) if b.dtype.is_complex else a))
                else:       # torch: 0 for 0 ** (b >= 0), y * log(0) (-inf) below
                    ok = (b.real >= 0) & (b.imag == 0) if b.dtype.is_complex else b >= 0
                    gb = P.where(ok, 0, g * _c(y * -math.inf))
        return ga, gb
    # torch's overloads: Tensor_Scalar, Tensor_Tensor, Scalar (a number base)
    if _T(a) and _T(b):
        node = attach("PowBackward1", out, (a, b), bw)
        sv = (sa, sb, so)
    elif _T(a):     # (the number is no input of the node: next_functions as torch's)
        node = attach("PowBackward0", out, (a,), lambda g: bw(g)[:1])
        sv = (sa, sb)
    else:
        node = attach("PowBackward2", out, (b,), lambda g: bw(g)[1:])
        sv = (sa, sb, so)
    if node is not None:
        node._sv = sv


# grad_fn._saved_exponent of x ** 2 is the number 2, as torch's Scalar
node_class("PowBackward0", saved=("self", "exponent"), scalars=("exponent",))
node_class("PowBackward1", saved=("self", "exponent", "result"))
node_class("PowBackward2", saved=("self", "exponent", "result"), scalars=("self",))


@formula("float_power")
def _float_power(out, a, b, **k):
    _record_pow(out, a, b, out.dtype)


@formula("atan2", "arctan2")
def _atan2(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        d = a * a + b * b
        # as torch: 0 where a^2 + b^2 is 0 (the origin, or both underflow)
        recip = P.where(d == 0, P.zeros_like(d), d.reciprocal())
        return g * b * recip, -g * a * recip
    attach("Atan2Backward0", out, (a, b), bw)


def _logaddexp_formula(name, exp_fn):
    """torch's derivatives.yaml: ``grad / (1 + exp(other - self))`` for self,
    ``grad / (1 + exp(self - other))`` for other (``exp2`` for logaddexp2);
    the conjugate for complex operands."""
    bn = _bname(name)
    node_class(bn, saved=("self", "other"))

    @formula(name)
    def f(out, a, b, **k):
        if not _is_diff(out):
            return
        sa, sb = save(a), save(b)

        def bw(g):
            a, b = sa.unpack(), sb.unpack()
            return g / _c(1 + exp_fn(b - a)), g / _c(1 + exp_fn(a - b))
        node = attach(bn, out, (a, b), bw)
        if node is not None:
            node._sv = (sa, sb)


_logaddexp_formula("logaddexp", lambda t: t.exp())
_logaddexp_formula("logaddexp2", lambda t: t.exp2())


@formula("ldexp")
def _ldexp(out, a, b, **k):
    # torch: self: grad * 2 ** other, other: grad * result * ln 2
    if not _is_diff(out):
        return
    node_class("LdexpBackward0", saved=("other", "result"))
    sb, so = save(b), save_out(out)

    def bw(g):
        b, y = sb.unpack(), so.unpack()
        # (conjugated for complex operands, as torch's)
        return g * _c(b.to(g.dtype).exp2()), g * _c(y) * _LN2
    node = attach("LdexpBackward0", out, (a, b), bw)
    if node is not None:
        node._sv = (sb, so)


@formula("frexp")
def _frexp(out, x, **k):
    # torch: the mantissa's gradient over 2 ** exponent (the exponent: none)
    m, e = out
    if not _is_diff(m):
        return
    node_class("FrexpBackward0", saved=("exponent",))
    se = save(e)

    def bw(gm, ge=None):
        return (gm / se.unpack().to(gm.dtype).exp2(),)
    node = attach("FrexpBackward0", [m, e], (x,), bw, multi=True)
    if node is not None:
        node._sv = (se,)


@formula("mvlgamma")
def _mvlgamma(out, x, p, **k):
    # torch's mvlgamma_backward: grad * sum_{i < p} digamma(x - i / 2)
    if not _is_diff(out):
        return
    node_class("MvlgammaBackward0", saved=("self", "p"), scalars=("p",))
    sx = save(x)

    def bw(g):
        x = sx.unpack()
        args = P.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device) + x.unsqueeze(-1)
        return (g * args.digamma().sum(-1),)
    node = attach("MvlgammaBackward0", out, (x,), bw)
    if node is not None:
        node._sv = (sx, _Plain(p))


@formula("fill")
def _fill(out, x, value, **k):
    # torch: fill.Scalar is FillBackward0, fill.Tensor FillBackward1 (the
    # value's gradient is the sum of the result's); the input's is zero
    if not _is_diff(out):
        return
    if _T(value):
        attach("FillBackward1", out, (x, value), lambda g: (P.zeros_like(g), g.sum()))
    else:
        attach("FillBackward0", out, (x,), lambda g: (P.zeros_like(g),))


@formula("hypot")
def _hypot(out, a, b, **k):
    sa, sb, so = save(a), save(b), save_out(out)

    def bw(g):
        a, b, y = sa.unpack(), sb.unpack(), so.unpack()
        return g * a / y, g * b / y
    attach("HypotBackward0", out, (a, b), bw)


def _minmax(name, cmp):
    @formula(name)
    def f(out, a, b, **k):
        sa, sb = save(a), save(b)

        def bw(g):
            a, b = sa.unpack(), sb.unpack()
            if name in ("fmax", "fmin"):
                # torch: self takes the whole gradient where it is chosen,
                # ties included (a >= b for fmax) or where other is NaN
                wa = (cmp(a, b) | b.isnan()) if _T(b) else cmp(a, b)
                wa = wa.to(g.dtype)
                return g * wa, g * (1 - wa)
            # torch: half each on ties, the whole to the larger (maximum), the
            # whole to both where a NaN makes them incomparable
            half = P.where(a == b, 0.5, 1.0).to(g.dtype)
            lo, hi = (a < b, a > b) if name == "maximum" else (a > b, a < b)
            return g * half.masked_fill(lo, 0), g * half.masked_fill(hi, 0)
        attach(_bname(name), out, (a, b), bw)


_minmax("maximum", None)
_minmax("minimum", None)
_minmax("fmax", lambda a, b: a >= b)
_minmax("fmin", lambda a, b: a <= b)


@formula("fmod")
def _fmod(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        # torch: div(rounding_mode="trunc"), whose own derivative is zero (no 0/0)
        gb = -g * P.div(a, b, rounding_mode="trunc") if _T(b) and b._requires_grad else None
        return g, gb
    # (torch's overloads: a Tensor other is FmodBackward1)
    _attach_kept("FmodBackward1" if _T(b) else "FmodBackward0", out, (a, b),
                 (0, 1) if _T(b) else (0,), bw)


@formula("remainder")
def _remainder(out, a, b, **k):
    if not _is_diff(out):
        return
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        # torch: the forward's floor division (0.5 // -inf is -1, floor(0.5 / -inf) -0)
        gb = -g * P.div(a, b, rounding_mode="floor") if _T(b) and b._requires_grad else None
        return g, gb
    _attach_kept("RemainderBackward1" if _T(b) else "RemainderBackward0", out, (a, b),
                 (0, 1) if _T(b) else (0,), bw)


@formula("copysign")
def _copysign(out, a, b, **k):
    sa, so = save(a), save_out(out)

    def bw(g):
        a, y = sa.unpack(), so.unpack()
        r = P.where(a == 0, 0, y / a)
        return g * r, P.zeros_like(g) if _T(b) else None
    # (torch's overloads: a number other is CopysignBackward1)
    _attach_kept("CopysignBackward0" if _T(b) else "CopysignBackward1", out, (a, b),
                 (0, 1) if _T(b) else (0,), bw)


@formula("xlogy")
def _xlogy(out, x, y, **k):
    sx, sy = save(x), save(y)

    def bw(g):
        x, y = sx.unpack(), sy.unpack()
        # torch: xlogy(grad, other), 0 where self == 0 and other <= 0
        if not _T(x):
            gx = None
        elif _T(y):
            gx = P.xlogy(g, y).masked_fill((x == 0) & (y <= 0), 0)
        else:
            gx = P.xlogy(g, float(y))
            if y <= 0:
                gx = gx.masked_fill(x == 0, 0)
        gy = g * x / y if _T(y) else None
        return gx, gy
    # (torch's overloads: a number self is XlogyBackward1, a number other XlogyBackward2)
    if _T(x) and _T(y):
        attach("XlogyBackward0", out, (x, y), bw)
    elif _T(y):
        _attach_kept("XlogyBackward1", out, (x, y), (1,), bw)
    else:
        _attach_kept("XlogyBackward2", out, (x, y), (0,), bw)


@formula("lerp")
def _lerp(out, start, end, weight, **k):
    ss, se, sw = save(start), save(end), save(weight)

    def bw(g):
        s, e, w = ss.unpack(), se.unpack(), sw.unpack()
        gw = g * _c(e - s) if _T(w) else None
        return g * _c(1 - w), g * _c(w), gw
    # (torch's overloads: a tensor weight is LerpBackward1)
    _attach_kept("LerpBackward1" if _T(weight) else "LerpBackward0", out, (start, end, weight),
                 (0, 1, 2) if _T(weight) else (0, 1), bw)


@formula("addcmul")
def _addcmul(out, inp, t1, t2, *dep, value=1, **k):
    if dep:                     # torch's deprecated order addcmul(inp, value, t1, t2)
        t1, t2, value = t2, dep[0], t1
    s1, s2 = save(t1), save(t2)

    def bw(g):
        a, b = s1.unpack(), s2.unpack()
        return g, g * _c(b) * value, g * _c(a) * value
    attach("AddcmulBackward0", out, (inp, t1, t2), bw)


@formula("addcdiv")
def _addcdiv(out, inp, t1, t2, *dep, value=1, **k):
    if dep:                     # torch's deprecated order addcdiv(inp, value, t1, t2)
        t1, t2, value = t2, dep[0], t1
    s1, s2 = save(t1), save(t2)

    def bw(g):
        a, b = s1.unpack(), s2.unpack()
        return g, g * value / _c(b), -g * value * _c(a) / _c(b * b)
    attach("AddcdivBackward0", out, (inp, t1, t2), bw)


@formula("where")
def _where(out, cond, a=None, b=None, **k):
    if a is None:
        return
    if _T(cond) and cond.dtype is not P.bool:
        # the method: self.where(condition, other) (a condition is bool, or
        # the op raised)
        cond, a = a, cond
    sc = save(cond)

    def bw(g):
        c = sc.unpack()
        return P.where(c, g, 0), P.where(c, 0, g)
    # (torch's node: edges to self and other, the condition saved)
    node = attach("WhereBackward0", out, (a, b), bw)
    if node is not None:
        node._sv = (sc,)


node_class("WhereBackward0", saved=("condition",))


def _clamp_record(out, x, min, max, node):
    sx, smin, smax = save(x), save(min), save(max)

    def bw(g):
        x, lo, hi = sx.unpack(), smin.unpack(), smax.unpack()
        mask = None
        if lo is not None:
            mask = x >= lo
        if hi is not None:
            m2 = x <= hi
            mask = m2 if mask is None else mask & m2
        # torch's where(mask, grad, 0): an inf/NaN incoming gradient where the
        # bound holds gives 0, not NaN (g * mask would)
        gx = g.masked_fill(~mask, 0) if mask is not None else g
        glo = ghi = None
        # torch's clamp_backward_min_max: with both bounds, min gets no
        # gradient unless min < max, max gets it wherever max < min
        if _T(lo) and lo._requires_grad:
            glo = g.masked_fill(~((x < lo) if hi is None else (x < lo) & (lo < hi)), 0)
        if _T(hi) and hi._requires_grad:
            ghi = g.masked_fill(~((x > hi) if lo is None else (x > hi) | (hi < lo)), 0)
        return gx, glo, ghi
    # torch's nodes: clamp's tensor overload lists self, min and max; clamp_min's /
    # clamp_max's tensor overloads self and the bound; the number overloads self
    if node == "ClampBackward0":
        keep = (0, 1, 2)
    elif node in ("ClampMinBackward1", "ClampMaxBackward1"):
        keep = (0, 1) if node == "ClampMinBackward1" else (0, 2)
    else:
        keep = (0,)
    _attach_kept(node, out, (x, min, max), keep, bw)


# torch's overloads: number bounds (ClampBackward1, ClampMinBackward0 ...)
# or tensor bounds (ClampBackward0, ClampMinBackward1 ...)
@formula("clamp", "clip")
def _clamp(out, x, min=None, max=None, **k):
    _clamp_record(out, x, min, max, "ClampBackward0" if _T(min) or _T(max) else "ClampBackward1")


@formula("clamp_min")
def _clamp_min(out, x, min, **k):
    _clamp_record(out, x, min, None, "ClampMinBackward1" if _T(min) else "ClampMinBackward0")


@formula("clamp_max")
def _clamp_max(out, x, max, **k):
    _clamp_record(out, x, None, max, "ClampMaxBackward1" if _T(max) else "ClampMaxBackward0")


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

def _dims(x, dim):
    nd = x.dim()
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return list(range(nd))
    if not nd:
        return []       # a 0-d tensor's dim 0 / -1 is the whole (one-element) tensor
    if isinstance(dim, int):
        dim = [dim]
    return sorted(d % nd for d in dim)


def _unsqueeze_to(g, x, dims, keepdim):
    """Re-insert reduced dims so that ``g`` broadcasts against ``x``."""
    if not keepdim and x.dim():
        for d in dims:
            g = g.unsqueeze(d)
    return g


@formula("sum")
def _sum(out, x, dim=None, keepdim=False, **k):
    if not _is_diff(out):
        return
    shape = tuple(x.shape)
    dims = _dims(x, dim)

    def bw(g):
        return (_unsqueeze_to(g, x_stub(shape), dims, keepdim).expand(shape),)
    node = attach("SumBackward1" if dim is not None else "SumBackward0", out, (x,), bw)
    if node is not None:
        # torch's saved dim is the dims as given, negative ones as uint64 wrap-around
        node._sv = (shape,) if dim is None else (
            shape, tuple(d % (1 << 64) for d in ((dim,) if isinstance(dim, int) else dim)),
            bool(keepdim))


node_class("SumBackward0", saved=("self_sym_sizes",), scalars=("self_sym_sizes",))
node_class("SumBackward1", saved=("self_sym_sizes", "dim", "keepdim"),
           scalars=("self_sym_sizes", "dim", "keepdim"))


class x_stub:
    """Shape-only stand-in (so that backward closures hold no tensor)."""
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape

    def dim(self):
        return len(self.shape)


@formula("nansum")
def _nansum(out, x, dim=None, keepdim=False, **k):
    sx = save(x)
    dims = _dims(x, dim)

    def bw(g):
        x = sx.unpack()
        return (_unsqueeze_to(g, x, dims, keepdim) * ~x.isnan(),)
    attach("NansumBackward0", out, (x,), bw)


@formula("mean")
def _mean(out, x, dim=None, keepdim=False, **k):
    shape = tuple(x.shape)
    dims = _dims(x, dim)
    n = 1
    for d in dims:
        n *= shape[d]

    def bw(g):
        return (_unsqueeze_to(g, x_stub(shape), dims, keepdim).expand(shape) / n,)
    attach("MeanBackward1" if dim is not None else "MeanBackward0", out, (x,), bw)


@formula("nanmean")
def _nanmean(out, x, dim=None, keepdim=False, **k):
    sx = save(x)
    dims = _dims(x, dim)

    def bw(g):
        x = sx.unpack()
        ok = ~x.isnan()
        cnt = ok.sum(dims, keepdim=True)
        return (_unsqueeze_to(g, x, dims, keepdim) * ok / cnt,)
    attach("NanmeanBackward0", out, (x,), bw)


@formula("prod")
def _prod(out, x, dim=None, keepdim=False, **k):
    sx, so = save(x), save_out(out)
    dims = _dims(x, dim) if dim is not None else list(range(x.dim()))

    def bw(g):
        # torch's prod_backward: result / input while the input has no zero,
        # else the products of the elements before and after each one (cumprods:
        # right where one or more are zero, differentiable again)
        x, y = sx.unpack(), so.unpack()
        if x.dim() == 0:
            return (g,)
        if dim is None or len(dims) != 1:
            batched = _vmap_frames()
            nz = 1 if batched else int((x == 0).sum())
            if nz == 0:
                return (g * _c(y / x),)
            if nz > 1 and not _recorded(g, x):
                return (P.zeros_like(x),)
            return (_prod_safe_zeros(g, x.reshape(-1), 0).reshape(x.shape),)
        d = dims[0]
        g = _unsqueeze_to(g, x, dims, keepdim)
        if not _vmap_frames() and not bool((x == 0).any()):
            return (g * _c(_unsqueeze_to(y, x, dims, keepdim) / x),)
        return (_prod_safe_zeros(g, x, d),)
    # (torch's overloads: prod(dim) is ProdBackward1)
    attach("ProdBackward0" if dim is None else "ProdBackward1", out, (x,), bw)


def _prod_safe_zeros(g, x, d):
    """torch's prod_safe_zeros_backward along dim ``d``."""
    n = x.shape[d]
    if x.numel() == 0 or n == 1:        # (nothing else in the slice: torch's g * 1)
        return g.expand_as(x)
    ones = P.ones(_keep_shape(x, [d]), dtype=g.dtype, device=g.device)
    before = P.cat([ones, x.narrow(d, 0, n - 1)], d).cumprod(d)
    after = P.cat([ones, x.narrow(d, 1, n - 1).flip(d)], d).cumprod(d).flip(d)
    return g * _c(before * after)


def _keep_shape(x, dims):
    return [1 if d in dims else n for d, n in enumerate(x.shape)]


def _select_ties(out, x, dims, keepdim, name, nan=True):
    """The gradient shared evenly by the elements equal to the result; with
    ``nan`` a NaN result selects the NaNs (torch's evenly_distribute_backward
    of max()/min()/median()), without it (amax/amin) nothing: NaN throughout."""
    sx, so = save(x), save_out(out)

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        y = _unsqueeze_to(y, x, dims, keepdim)
        g = _unsqueeze_to(g, x, dims, keepdim)
        mask = ((x == y) | (x.isnan() & y.isnan())) if nan else (x == y)
        mask = mask.to(g.dtype)
        cnt = mask.sum(dims, keepdim=True)
        return (g * mask / cnt,)
    attach(name, out, (x,), bw)


def _value_index(out, x, dim, keepdim, name):
    """(values, indices) reductions: the gradient goes to the index."""
    vals, idx = out[0], out[1]
    if not _is_diff(vals):
        return
    shape = tuple(x.shape)
    si = save(idx)
    d = dim % x.dim() if x.dim() else 0

    def bw(gv, gi=None):
        i = si.unpack()
        if x_dim := len(shape):
            if not keepdim:
                gv = gv.unsqueeze(d)
                i = i.unsqueeze(d)
            return (P.zeros(shape, dtype=gv.dtype, device=gv.device).scatter(d, i, gv),)
        return (gv.reshape(shape),)
    attach(name, [vals, idx], (x,), bw, multi=True, accepts_none=False)


@formula("max", "min")
def _maxmin(out, x, dim=None, keepdim=False, *, other=None, **k):
    name = "MaxBackward" if out is not None else "MinBackward"
    if isinstance(dim, _TensorBase) or other is not None:
        o = dim if isinstance(dim, _TensorBase) else other
        FORMULAS["maximum"](out, x, o)
        return
    if dim is None:
        if _is_diff(out):
            _select_ties(out, x, list(range(x.dim())), False, name + "1")
        return
    _value_index(out, x, dim, keepdim, name + "0")


def _fix_minmax_names():
    def mx(out, x, dim=None, keepdim=False, *, other=None, **k):
        if isinstance(dim, _TensorBase) or other is not None:
            FORMULAS["maximum"](out, x, dim if isinstance(dim, _TensorBase) else other)
        elif dim is None:
            if _is_diff(out):
                _select_ties(out, x, list(range(x.dim())), False, "MaxBackward1")
        else:
            _value_index(out, x, dim, keepdim, "MaxBackward0")

    def mn(out, x, dim=None, keepdim=False, *, other=None, **k):
        if isinstance(dim, _TensorBase) or other is not None:
            FORMULAS["minimum"](out, x, dim if isinstance(dim, _TensorBase) else other)
        elif dim is None:
            if _is_diff(out):
                _select_ties(out, x, list(range(x.dim())), False, "MinBackward1")
        else:
            _value_index(out, x, dim, keepdim, "MinBackward0")
    FORMULAS["max"] = mx
    FORMULAS["min"] = mn


_fix_minmax_names()


@formula("amax")
def _amax(out, x, dim=(), keepdim=False, **k):
    _select_ties(out, x, _dims(x, dim), keepdim, "AmaxBackward0", nan=False)


@formula("amin")
def _amin(out, x, dim=(), keepdim=False, **k):
    _select_ties(out, x, _dims(x, dim), keepdim, "AminBackward0", nan=False)


@formula("aminmax")
def _aminmax(out, x, *, dim=None, keepdim=False, **k):
    dims = _dims(x, dim)
    mn, mx = out[0], out[1]
    sx, smn, smx = save(x), save_out(mn, 0), save_out(mx, 1)

    def bw(gmin, gmax):
        x = sx.unpack()
        r = None
        for g, s in ((gmin, smn), (gmax, smx)):
            if g is None:
                continue
            y = _unsqueeze_to(s.unpack(), x, dims, keepdim)
            mask = (x == y).to(g.dtype)
            t = _unsqueeze_to(g, x, dims, keepdim) * mask / mask.sum(dims, keepdim=True)
            r = t if r is None else r + t
        return (r,)
    n = attach("AminmaxBackward0", [mn, mx], (x,), bw, multi=True, accepts_none=True)


@formula("median")
def _median(out, x, dim=None, keepdim=False, *, _name="Median", **k):
    if dim is None:
        if _is_diff(out):
            _select_ties(out, x, list(range(x.dim())), False, _name + "Backward0")
        return
    _value_index(out, x, dim, keepdim, _name + "Backward1")


@formula("nanmedian")
def _nanmedian(out, x, dim=None, keepdim=False, **k):
    _median(out, x, dim, keepdim, _name="Nanmedian")


@formula("mode")
def _mode(out, x, dim=-1, keepdim=False, **k):
    _value_index(out, x, dim, keepdim, "ModeBackward0")


@formula("kthvalue")
def _kthvalue(out, x, k_, dim=-1, keepdim=False, **k):
    _value_index(out, x, dim, keepdim, "KthvalueBackward0")


@formula("cummax")
def _cummax(out, x, dim, **k):
    vals, idx = out[0], out[1]
    shape = tuple(x.shape)
    si = save(idx)
    d = dim % x.dim() if x.dim() else 0

    def bw(gv, gi=None):
        i = si.unpack()
        if not shape:
            return (gv,)
        return (P.zeros(shape, dtype=gv.dtype, device=gv.device).scatter_add(d, i, gv),)
    attach("CumminBackward0" if k.get("_cummin") else "CummaxBackward0", [vals, idx], (x,), bw,
           multi=True)


@formula("cummin")
def _cummin(out, x, dim, **k):
    _cummax(out, x, dim, _cummin=True)


@formula("sort")
def _sort(out, x, dim=-1, descending=False, stable=False, **k):
    _value_index(out, x, dim, True, "SortBackward0")


@formula("msort")
def _msort(out, x, **k):
    # values only: recompute the permutation
    if not _is_diff(out):
        return
    idx = x.detach().sort(0)[1]
    shape = tuple(x.shape)

    def bw(g):
        return (P.zeros(shape, dtype=g.dtype, device=g.device).scatter(0, idx, g),)
    attach("SortBackward0", out, (x,), bw)


@formula("topk")
def _topk(out, x, k_, dim=-1, largest=True, sorted=True, **k):
    _value_index(out, x, dim, True, "TopkBackward0")


@formula("logsumexp")
def _logsumexp(out, x, dim, keepdim=False, **k):
    sx, so = save(x), save_out(out)
    dims = _dims(x, dim)

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        # (complex: conjugate, as torch's logsumexp_backward)
        return (_unsqueeze_to(g, x, dims, keepdim)
                * _c((x - _unsqueeze_to(y, x, dims, keepdim)).exp()),)
    attach("LogsumexpBackward0", out, (x,), bw)


def _recorded(*ts):
    """Whether a backward computed from ``ts`` is itself differentiated: recorded
    (create_graph), or run under a forward-AD level (forward-over-reverse needs
    the tangents of the backward's own ops, which the one-pass kernels skip);
    also under vmap (the kernels would read a batched tensor's memory, which a
    one-element one passes for a contiguous sample)."""
    if _fw_levels() or _vmap_frames():
        return True
    return P.is_grad_enabled() and any(t is not None and t._requires_grad for t in ts)


def _one_pass_softmax_backward(g, y, dim, log):
    """The one-pass kernel's gradient (last dim, contiguous float; the kernel
    of y's device), else None."""
    if _recorded(g, y) or not isinstance(dim, int) or y.dim() == 0:
        return None
    if (dim if dim >= 0 else dim + y.dim()) != y.dim() - 1:
        return None
    if not _has_loop("softmax_backward", y.device.type):
        return None
    return _loop("softmax_backward", y.device, _NNK.softmax_backward)(g, y, -1, log)


@formula("softmax")
def _softmax(out, x, dim, dtype=None, **k):
    so = save_out(out)

    def bw(g):
        y = so.unpack()
        r = _one_pass_softmax_backward(g, y, dim, False)
        if r is not None:
            return (r,)
        if _half_opmath(g):
            # torch's _softmax_backward_data of float16/bfloat16: float32 math, one rounding
            gf, yf = g.to(P.float32), y.to(P.float32)
            return ((yf * (gf - (gf * yf).sum(dim, keepdim=True))).to(g.dtype),)
        gy = g * y
        return (gy - y * gy.sum(dim, keepdim=True),)
    attach("SoftmaxBackward0", out, (x,), bw)


@formula("log_softmax")
def _log_softmax(out, x, dim, dtype=None, **k):
    so = save_out(out)

    def bw(g):
        y = so.unpack()
        r = _one_pass_softmax_backward(g, y, dim, True)
        if r is not None:
            return (r,)
        if _half_opmath(g):
            gf, yf = g.to(P.float32), y.to(P.float32)
            return ((gf - yf.exp() * gf.sum(dim, keepdim=True)).to(g.dtype),)
        return (g - y.exp() * g.sum(dim, keepdim=True),)
    attach("LogSoftmaxBackward0", out, (x,), bw)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(x, dim, unbiased, correction):
    if isinstance(dim, bool) and unbiased is None:
        unbiased, dim = dim, None
    dims = _dims(x, dim)
    c = _correction(unbiased, correction)
    n = 1
    for d in dims:
        n *= x.shape[d]
    return dims, c, n, dim is None or x.dim() == 0


def _var_grad(g, xc, n, c, full):
    """torch's var_backward from ``xc = x - mean``: ``2 / (n - correction)``
    as it is (negative, or inf, past the sample size), except that a reduction
    over everything with ``n <= correction`` gives inf (NaN where x is its mean)."""
    dof = n - c
    if full and dof <= 0:
        return g * P.full_like(xc, math.inf).masked_fill(xc == 0, math.nan)
    return g * xc * (2.0 / dof if dof else math.inf)


@formula("var")
def _var(out, x, dim=None, unbiased=None, keepdim=False, *, correction=None, **k):
    dims, c, n, full = _var_args(x, dim, unbiased, correction)
    sx = save(x)

    def bw(g):
        x = sx.unpack()
        m = x.mean(dims, keepdim=True)
        return (_var_grad(_unsqueeze_to(g, x, dims, keepdim), x - m, n, c, full),)
    attach("VarBackward0", out, (x,), bw)


def builtins_max(a, b):
    return a if a > b else b


@formula("std")
def _std(out, x, dim=None, unbiased=None, keepdim=False, *, correction=None, **k):
    dims, c, n, full = _var_args(x, dim, unbiased, correction)
    sx, so = save(x), save_out(out)

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        m = x.mean(dims, keepdim=True)
        y = _unsqueeze_to(y, x, dims, keepdim)
        return (_std_grad(_unsqueeze_to(g, x, dims, keepdim), x - m, y, n, c, full),)
    attach("StdBackward0", out, (x,), bw)


def _std_grad(g, xc, y, n, c, full):
    """torch's std_backward: var's of ``g / (2 y)``, zero where the std ``y``
    is zero (torch's masked_fill); the division by a safe ``y`` keeps the
    double backward finite there (0 * inf made it NaN)."""
    zero = y == 0
    return P.where(zero, 0, _var_grad(g / (2 * P.where(zero, 1, y)), xc, n, c, full))


@formula("var_mean", "std_mean")
def _var_mean(out, x, dim=None, unbiased=None, keepdim=False, *, correction=None,
              _node="VarMeanBackward0", **k):
    dims, c, n, full = _var_args(x, dim, unbiased, correction)
    v, m = out[0], out[1]
    is_std = False
    sx, sv = save(x), save_out(v, 0)

    def bw(gv, gm):
        x = sx.unpack()
        r = None
        if gv is not None:
            mm = x.mean(dims, keepdim=True)
            vv = _unsqueeze_to(sv.unpack(), x, dims, keepdim)
            gvv = _unsqueeze_to(gv, x, dims, keepdim)
            if bw.std:
                r = _std_grad(gvv, x - mm, vv, n, c, full)
            else:
                r = _var_grad(gvv, x - mm, n, c, full)
        if gm is not None:
            t = _unsqueeze_to(gm, x, dims, keepdim).expand(x.shape) / n
            r = t if r is None else r + t
        return (r,)
    bw.std = is_std
    return attach(_node, [v, m], (x,), bw, multi=True, accepts_none=True), bw


def _std_mean(out, x, dim=None, unbiased=None, keepdim=False, *, correction=None, **k):
    r = _var_mean(out, x, dim, unbiased, keepdim, correction=correction,
                  _node="StdMeanBackward0")
    if r is not None and r[1] is not None:
        r[1].std = True


FORMULAS["std_mean"] = _std_mean


def _norm_bw(x, y, g, p, dims, keepdim):
    g = _unsqueeze_to(g, x, dims, keepdim)
    y = _unsqueeze_to(y, x, dims, keepdim)
    if p == 2:
        # torch: grad * (self / norm).masked_fill_(norm == 0, 0): linear in grad
        # with a finite factor (a second derivative through grad is 0 where
        # the norm is 0, not 0 * nan)
        return g * P.where(y == 0, 0, x / y)
    if p == 1:
        return g * x.sgn()
    if p == 0:
        return None             # torch's backward returns an undefined gradient
    if p == math.inf or p == -math.inf:
        mask = (x.abs() == y).to(g.dtype)
        return g * x.sgn() * mask / mask.sum(dims, keepdim=True)
    a = x.abs()
    if p < 1:
        # torch: sgn(x) |x|^(p-1) with the zeros of x masked to 0, times g ||x||^(1-p)
        return g * x.sgn() * P.where(x == 0, 0, a ** (p - 1)) * y ** (1 - p)
    # torch: the scale g / ||x||^(p-1) masked to 0 where the norm is 0 (so that a
    # second derivative there is 0 too, not 0 * inf)
    scaled = x.sgn() * a ** (p - 1) if p < 2 else x * a ** (p - 2)
    return scaled * P.where(y == 0, 0, g / y ** (p - 1))


@formula("dist")
def _dist(out, a, b, p=2, **k):
    # torch: norm_backward(grad, self - other, p, result) for self, its
    # negation for other (one DistBackward0 node)
    if not _is_diff(out):
        return
    node_class("DistBackward0", saved=("other", "p", "result", "self"), scalars=("p",))
    sa, sb, so = save(a), save(b), save_out(out)
    pf = float(p)

    def bw(g):
        d = sa.unpack() - sb.unpack()
        r = _norm_bw(d, so.unpack(), g, pf, _dims(d, None), False)
        return r, (None if r is None else -r)
    node = attach("DistBackward0", out, (a, b), bw)
    if node is not None:
        node._sv = (sb, _Plain(p), so, sa)


@formula("vector_norm", "_vector_norm")
def _vnorm(out, x, ord=2, dim=None, keepdim=False, **k):
    sx, so = save(x), save_out(out)
    dims = _dims(x, dim)
    p = float(ord)

    def bw(g):
        return (_norm_bw(sx.unpack(), so.unpack(), g, p, dims, keepdim),)
    attach("LinalgVectorNormBackward0", out, (x,), bw)


@formula("norm")
def _norm(out, x, p="fro", dim=None, keepdim=False, **k):
    if p == "nuc":
        return _nuc_norm(out, x, dim, keepdim)
    pf = 2.0 if p in ("fro", None) else float(p)
    sx, so = save(x), save_out(out)
    dims = _dims(x, dim)

    def bw(g):
        return (_norm_bw(sx.unpack(), so.unpack(), g, pf, dims, keepdim),)
    attach("LinalgVectorNormBackward0", out, (x,), bw)     # torch's norm calls vector_norm


def _nuc_norm(out, x, dim, keepdim):
    """Nuclear norm: d||X||_* = U V^H (the reduced SVD's singular vectors)."""
    d = (-2, -1) if dim is None else tuple(k % x.dim() for k in dim)
    sx = save(x)

    def bw(g):
        x = sx.unpack()
        U, _, Vh = P.linalg.svd(x.movedim(d, (-2, -1)), full_matrices=False)
        if keepdim:
            g = g.squeeze(max(d)).squeeze(min(d)) if dim is not None else g.squeeze(-1).squeeze(-1)
        return ((g.unsqueeze(-1).unsqueeze(-1) * (U @ Vh)).movedim((-2, -1), d),)
    attach("NormBackward1", out, (x,), bw)


def _rev_cumsum(g, d):
    return g.flip(d).cumsum(d).flip(d)


@formula("cumsum")
def _cumsum(out, x, dim, **k):
    d = dim % x.dim() if x.dim() else 0
    attach("CumsumBackward0", out, (x,), lambda g: (_rev_cumsum(g, d) if g.dim() else g,))


@formula("cumprod")
def _cumprod(out, x, dim, **k):
    sx, so = save(x), save_out(out)
    d = dim % x.dim() if x.dim() else 0

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        if x.numel() <= 1 or x.shape[d] == 1:      # torch: the gradient itself
            return (g,)
        if not bool((x == 0).any()):
            return (_rev_cumsum(g * _c(y), d) / _c(x),)
        # general case (zeros): O(n^2) over the scanned dim
        n = x.shape[d]
        xs = x.movedim(d, -1)
        gs = g.movedim(d, -1)
        cols = []
        for k_ in range(n):
            # d y_j / d x_k = prod_{i<=j, i!=k} x_i for j >= k
            ones = P.ones_like(xs)
            ones[..., k_] = 0
            m = P.where(ones == 0, P.ones_like(xs), xs).cumprod(-1)
            m = m * (P.arange(n, device=x.device) >= k_)
            cols.append((gs * _c(m)).sum(-1))
        return (P.stack(cols, -1).movedim(-1, d),)
    attach("CumprodBackward0", out, (x,), bw)


@formula("logcumsumexp")
def _logcumsumexp(out, x, dim, **k):
    sx, so = save(x), save_out(out)
    d = dim % x.dim() if x.dim() else 0

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        if x.dim() == 0 or x.numel() == 0:      # torch: the gradient itself
            return (g,)
        return ((x.unsqueeze(d + 1) - y.unsqueeze(d)).exp().mul(g.unsqueeze(d))
                .tril(0) if False else _lcse_bw(x, y, g, d),)
    attach("LogcumsumexpBackward0", out, (x,), bw)


def _lcse_bw(x, y, g, d):
    # grad_i = sum_{j >= i} g_j exp(x_i - y_j), computed stably per column
    # (complex: the conjugate weights, as torch's conj(exp(... log(conj g))))
    n = x.shape[d]
    xs, ys, gs = x.movedim(d, -1), y.movedim(d, -1), g.movedim(d, -1)
    w = (xs.unsqueeze(-1) - ys.unsqueeze(-2))          # [..., i, j]
    tri = P.ones(n, n, dtype=P.bool, device=x.device).triu()
    w = P.where(tri, w, -math.inf).exp()
    if w.is_complex():
        w = w.conj()
    r = (w * gs.unsqueeze(-2)).sum(-1)
    return r.movedim(-1, d)


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------

def _mT(t):
    return t.transpose(-2, -1)


def _H(t):
    return _c(t.transpose(-2, -1))


def _is_transposed(t):
    """A 2-D real tensor laid out as the transpose of a contiguous matrix
    (``W.t()``): its gradient is best computed in the same layout, as
    PyTorch's mm_mat*_backward does, so that no copy is needed later."""
    return isinstance(t, _TensorBase) and t._is_t2d()


def _mm_grad_a(g, b, a_transposed):
    # d/da (a @ b) = g @ b^H, in a's layout when a is a transposed matrix
    if a_transposed:
        return b.mm(g.t()).t()
    return g.mm(_H(b))


def _mm_grad_b(g, a, b_transposed):
    # d/db (a @ b) = a^H @ g, in b's layout when b is a transposed matrix
    if b_transposed:
        return g.t().mm(a).t()
    return _H(a).mm(g)


# the out_dtype= overloads (aten::mm.dtype & co.) have no derivative in torch:
# its autograd fallback's NotImplemented node, backward raises RuntimeError
_OUT_DTYPE_NOT_IMPLEMENTED = {n: not_implemented(n, fallback=True)
                              for n in ("mm", "bmm", "addmm", "baddbmm")}


@formula("mm")
def _mm(out, a, b, out_dtype=None, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["mm"](out, a, b)
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None
    ta, tb = _is_transposed(a), _is_transposed(b)

    def bw(g):
        ga = _mm_grad_a(g, sb.unpack(), ta) if sb is not None else None
        gb = _mm_grad_b(g, sa.unpack(), tb) if sa is not None else None
        return ga, gb
    node = attach("MmBackward0", out, (a, b), bw)
    if node is not None:
        # grad_fn._saved_self / _saved_mat2 (None when not needed) and their geometry
        node._sv = (sa, sb, tuple(a.shape), tuple(a.stride()), tuple(b.shape),
                    tuple(b.stride()))


node_class("MmBackward0", saved=("self", "mat2", "self_sym_sizes", "self_sym_strides",
                                 "mat2_sym_sizes", "mat2_sym_strides"),
           scalars=("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides"))


@formula("bmm")
def _bmm(out, a, b, out_dtype=None, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["bmm"](out, a, b)
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None

    def bw(g):
        ga = g.bmm(_H(sb.unpack())) if sb is not None else None
        gb = _H(sa.unpack()).bmm(g) if sa is not None else None
        return ga, gb
    attach("BmmBackward0", out, (a, b), bw)


@formula("matmul", "__matmul__")
def _matmul(out, a, b, **k):
    if not (_T(a) and _T(b)):
        return
    sa = save(a) if b._requires_grad else None
    sb = save(b) if a._requires_grad else None
    ashape, bshape = tuple(a.shape), tuple(b.shape)

    def bw(g):
        a1, b1 = len(ashape) == 1, len(bshape) == 1
        if a1 and b1:
            ga = g * _c(sb.unpack()) if sb is not None else None
            gb = g * _c(sa.unpack()) if sa is not None else None
            return ga, gb
        if a1:
            g = g.unsqueeze(-2)
        if b1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if sb is not None:
            bb = sb.unpack()
            bb = bb.unsqueeze(-1) if b1 else bb
            ga = P.matmul(g, _H(bb))
            ga = _sum_to_batch(ga, (1,) + ashape if a1 else ashape)
            if a1:
                ga = ga.reshape(ashape)
        if sa is not None and len(ashape) >= 3 and len(bshape) == 2:
            # (..., n, k) @ (k, m), a linear layer's: the batch folds into the
            # rows, one product (not a batched one summed over the batch)
            rows = math.prod(ashape[:-1])   # (not -1: ambiguous when a dim is 0)
            gb = _H(sa.unpack().reshape(rows, ashape[-1])).mm(g.reshape(rows, bshape[-1]))
        elif sa is not None:
            aa = sa.unpack()
            aa = aa.unsqueeze(-2) if a1 else aa
            gb = P.matmul(_H(aa), g)
            gb = _sum_to_batch(gb, bshape + (1,) if b1 else bshape)
            if b1:
                gb = gb.reshape(bshape)
        return ga, gb
    node = attach(_matmul_node(len(ashape), len(bshape), a), out, (a, b), bw)
    if node is not None and len(ashape) == 2 == len(bshape):
        node._sv = (sa, sb, ashape, tuple(a.stride()), bshape, tuple(b.stride()))


_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
                 (2, 2): "MmBackward0"}


def _matmul_node(da, db, a):
    """The grad_fn torch's matmul shows: that of the last op of its
    decomposition (dot, mv, mm, squeeze_, the transposed fold's clone, or
    the batched result's _unsafe_view)."""
    if (da, db) in _MATMUL_NODES:
        return _MATMUL_NODES[da, db]
    if da <= 2 and db >= 3 and _T(a) and a._requires_grad:
        return "CloneBackward0"
    return "UnsafeViewBackward0"


def _sum_to_batch(g, shape):
    return _sum_to(g, tuple(shape))


@formula("mv")
def _mv(out, a, v, **k):
    sa, sv = save(a), save(v)

    def bw(g):
        return g.unsqueeze(1) * _c(sv.unpack()).unsqueeze(0), _H(sa.unpack()).mv(g)
    attach("MvBackward0", out, (a, v), bw)


@formula("dot", "inner_1d")
def _dot(out, a, b, **k):
    sa, sb = save(a), save(b)
    attach("DotBackward0", out, (a, b), lambda g: (g * _c(sb.unpack()), g * _c(sa.unpack())))


@formula("vdot")
def _vdot(out, a, b, **k):
    sa, sb = save(a), save(b)
    attach("VdotBackward0", out, (a, b), lambda g: (_c(g) * sb.unpack(), g * sa.unpack()))


@formula("outer", "ger")
def _outer(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        return g.mv(_c(sb.unpack())), g.t().mv(_c(sa.unpack()))
    attach("MulBackward0", out, (a, b), bw)     # torch: a.unsqueeze(1) * b


_ADDMM_NODE = node_class("AddmmBackward0")


@formula("addmm")
def _addmm(out, inp, m1, m2, out_dtype=None, *, beta=1, alpha=1, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["addmm"](out, inp, m1, m2)
    s1 = SavedTensor(m1) if m2._requires_grad else None
    s2 = SavedTensor(m2) if m1._requires_grad else None
    t1, t2 = _is_transposed(m1), _is_transposed(m2)

    # (complex alpha/beta: the gradient takes their conjugates, as torch's)
    beta, alpha = _c(beta), _c(alpha)

    def bw(g):
        gi = g if beta == 1 else g * beta
        g1 = _mm_grad_a(g, s2.unpack(), t1) if s2 is not None else None
        g2 = _mm_grad_b(g, s1.unpack(), t2) if s1 is not None else None
        if alpha != 1:
            g1 = g1 * alpha if g1 is not None else None
            g2 = g2 * alpha if g2 is not None else None
        return gi, g1, g2
    attach3(_ADDMM_NODE, out, inp, m1, m2, bw)


@formula("addmv")
def _addmv(out, inp, m, v, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    sm, sv = save(m), save(v)

    def bw(g):
        return (g * beta, g.unsqueeze(1) * _c(sv.unpack()).unsqueeze(0) * alpha,
                _H(sm.unpack()).mv(g) * alpha)
    attach("AddmvBackward0", out, (inp, m, v), bw)


@formula("addr")
def _addr(out, inp, v1, v2, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(v1), save(v2)

    def bw(g):
        return (g * beta, g.mv(_c(s2.unpack())) * alpha, g.t().mv(_c(s1.unpack())) * alpha)
    attach("AddrBackward0", out, (inp, v1, v2), bw)


@formula("baddbmm")
def _baddbmm(out, inp, b1, b2, out_dtype=None, *, beta=1, alpha=1, **k):
    if out_dtype is not None:
        return _OUT_DTYPE_NOT_IMPLEMENTED["baddbmm"](out, inp, b1, b2)
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(b1), save(b2)

    def bw(g):
        return (g * beta, g.bmm(_H(s2.unpack())) * alpha, _H(s1.unpack()).bmm(g) * alpha)
    attach("BaddbmmBackward0", out, (inp, b1, b2), bw)


@formula("addbmm")
def _addbmm(out, inp, b1, b2, *, beta=1, alpha=1, **k):
    beta, alpha = _c(beta), _c(alpha)
    s1, s2 = save(b1), save(b2)

    def bw(g):
        n = s1.unpack().shape[0]
        ge = g.unsqueeze(0).expand(n, *g.shape)
        return (g * beta, ge.bmm(_H(s2.unpack())) * alpha, _H(s1.unpack()).bmm(ge) * alpha)
    attach("AddbmmBackward0", out, (inp, b1, b2), bw)


@formula("inverse", "linalg_inv")
def _inverse(out, a, **k):
    so = save_out(out)

    def bw(g):
        y = so.unpack()
        return (-P.matmul(P.matmul(_H(y), g), _H(y)),)
    attach("LinalgInvExBackward0", out, (a,), bw)


@formula("cholesky_solve")
def _cholesky_solve(out, b, L, upper=False, **k):
    # torch's cholesky_solve_backward: the whole of input2 gets a gradient
    # (not only the triangle the solve reads)
    node_class("CholeskySolveBackward0", saved=("input2", "self", "result"), scalars=("upper",))
    sL, sb, so = save(L), save(b), save_out(out)

    def bw(g):
        L, x = sL.unpack(), so.unpack()
        gb = P.cholesky_solve(g, L, upper)
        common = P.matmul(gb, _H(x))
        common = common + _H(common)
        gL = -P.matmul(L, common) if upper else -P.matmul(common, L)
        return gb, gL
    node = attach("CholeskySolveBackward0", out, (b, L), bw)
    if node is not None:
        node._sv = (sL, sb, so, _Plain(upper))


@formula("cholesky_inverse")
def _cholesky_inverse(out, L, upper=False, **k):
    # torch's cholesky_inverse_backward (the whole input gets a gradient)
    node_class("CholeskyInverseBackward0", saved=("self", "upper", "result"), scalars=("upper",))
    sL, so = save(L), save_out(out)

    def bw(g):
        L, inv = sL.unpack(), so.unpack()
        common = P.matmul(inv, P.matmul(g + _H(g), inv))
        return (-P.matmul(L, common) if upper else -P.matmul(common, L),)
    node = attach("CholeskyInverseBackward0", out, (L,), bw)
    if node is not None:
        node._sv = (sL, _Plain(upper), so)


@formula("triangular_solve")
def _triangular_solve(out, b, A, upper=True, transpose=False, unitriangular=False, **k):
    # torch's triangular_solve_backward: the solution's gradient solves with
    # A^H (A's conjugate when transposed), A's is the product with the
    # solution on A's triangle; the cloned coefficient's gradient adds to A's
    X, M = out[0], out[1]
    if not _is_diff(X):
        return
    sA, sX = save(A), save_out(X, 0)

    def bw(gX, gM=None):
        A, x = sA.unpack(), sX.unpack()
        gb = gA = None
        if gX is not None:
            T = _c(A) if transpose else _H(A)
            gb = P.linalg.solve_triangular(T, gX, upper=upper if transpose else not upper,
                                           unitriangular=unitriangular)
            gA = -P.matmul(_c(x), gb.mT) if transpose else -P.matmul(gb, _H(x))
            gA = gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))
        if gM is not None:
            gA = gM if gA is None else gA + gM
        return gb, gA
    attach("TriangularSolveBackward0", [X, M], (b, A), bw, multi=True, accepts_none=True)


@formula("matrix_exp")
def _matrix_exp(out, a, **k):
    # torch's linalg_matrix_exp_differential(A, grad, adjoint): the top right
    # block of exp([[A^H, G], [0, A^H]])
    node_class("LinalgMatrixExpBackward0", saved=("self",))
    sa = save(a)

    def bw(g):
        a = sa.unpack()
        n = a.shape[-1]
        ah = _H(a)
        m = P.cat([P.cat([ah, g], -1), P.cat([P.zeros_like(ah), ah], -1)], -2)
        return (P.matrix_exp(m)[..., :n, n:],)
    node = attach("LinalgMatrixExpBackward0", out, (a,), bw)
    if node is not None:
        node._sv = (sa,)


@formula("det", "linalg_det")
def _det(out, a, **k):
    sa, so = save(a), save_out(out)

    def bw(g):
        a, d = sa.unpack(), so.unpack()
        # torch: conj(det) * grad * A^-H, which is 0 for a singular matrix
        # (det == 0; its inverse does not exist, so no error either)
        if P.is_grad_enabled() and not _vmap_frames() and a.numel():
            # a recorded backward (create_graph): torch's formula for higher
            # derivatives, whose first derivative at |det| < 100 eps is the
            # cofactor matrix (through the SVD), not 0
            mask = d.abs() < 100 * P.finfo(a.dtype).eps
            if bool(mask.any()):
                return (_det_grad_recorded(a, g, d, mask),)
        dg = (g * _c(d)).unsqueeze(-1).unsqueeze(-1)
        # torch reuses the forward's LU, which for a contiguous real A is that of A^T (an
        # exactly singular A can have a rounding-sized pivot there): invert the same matrix
        tr = a.is_contiguous() and not a.dtype.is_complex
        inv = P.linalg.inv_ex(a.mT if tr else a).inverse
        singular = (d == 0).unsqueeze(-1).unsqueeze(-1)
        return (P.where(singular, P.zeros_like(inv), dg * (inv if tr else _H(inv))),)
    attach("LinalgDetBackward0", out, (a,), bw)


def _det_grad_recorded(a, g, d, mask):
    """torch's linalg_det_backward with grad mode on: conj(det) g A^-H where
    |det| >= 100 eps, and U diag(conj(det U det Vh) g prod_{j != i} s_j) Vh
    (A = U diag(s) Vh) for the (near-)singular matrices of ``mask``."""
    n = a.shape[-1]
    shape = a.shape
    a, g, d, mask = a.reshape(-1, n, n), g.reshape(-1), d.reshape(-1), mask.reshape(-1)
    res = P.zeros_like(a)
    keep = ~mask
    if bool(keep.any()):
        ak = a[keep]
        eye = P.eye(n, dtype=a.dtype, device=a.device)
        rk = P.linalg.solve(_H(ak), (g[keep] * _c(d[keep])).unsqueeze(-1).unsqueeze(-1) * eye)
        res = res.index_put((keep,), rk)
    U, S, Vh = P.linalg.svd(a[mask])
    alpha = _c(P.linalg.det(U) * P.linalg.det(Vh))
    ones = P.ones_like(S[..., :1])
    before = P.cat((ones, S[..., :-1]), -1).cumprod(-1)
    after = P.cat((ones, S[..., 1:].flip(-1)), -1).cumprod(-1).flip(-1)
    D = (g[mask] * alpha).unsqueeze(-1) * _c(before * after)
    res = res.index_put((mask,), (U * D.unsqueeze(-2)) @ Vh)
    return res.reshape(shape)


@formula("logdet")
def _logdet(out, a, **k):
    sa = save(a)

    def bw(g):
        A = sa.unpack()
        r = g.unsqueeze(-1).unsqueeze(-1) * _H(P.linalg.inv(A))
        if not A.dtype.is_complex:
            # torch's logdet is where(sign == -1, nan, logabsdet): no gradient reaches a matrix
            # with a negative determinant
            neg = (P.linalg.slogdet(A).sign < 0).unsqueeze(-1).unsqueeze(-1)
            r = P.where(neg, P.zeros_like(r), r)
        return (r,)
    attach("LogdetBackward0", out, (a,), bw)


@formula("slogdet", "linalg_slogdet")
def _slogdet(out, a, **k):
    sign, logabs = out[0], out[1]
    sa = save(a)
    ss = save_out(sign, 0) if a.dtype.is_complex else None

    def bw(gs, gl):
        A = sa.unpack()
        g = gl
        if A.dtype.is_complex and gs is not None:
            # torch: (g_abs - i Im(conj(g_sign) * sign)) A^-H (the sign moves with A's phase)
            gi = (_c(gs) * ss.unpack()).imag * 1j
            g = -gi if g is None else g - gi
        if g is None:
            return (None,)
        # A^-H through the LU as torch (lu_solve, adjoint): a singular A gives infs/nans,
        # not an error
        LU, piv = P.linalg.lu_factor_ex(A)[:2]
        n = A.shape[-1]
        eye = P.eye(n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, n)
        return (g.unsqueeze(-1).unsqueeze(-1) * P.linalg.lu_solve(LU, piv, eye, adjoint=True),)
    attach("LinalgSlogdetBackward0", [sign, logabs], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_solve")
def _solve(out, A, B, *, left=True, **k):
    sA, so = save(A), save_out(out)
    vec = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))

    def bw(g):
        A, X = sA.unpack(), so.unpack()
        if not left:
            # X A = B: gB = g A^-H, i.e. A gB^H = g^H
            gB = _H(P.linalg.solve(A, _H(g)))
            gA = -_H(X) @ gB
            return gA, gB
        gB = P.linalg.solve(_H(A), g)
        if vec:
            gA = -gB.unsqueeze(-1) * _c(X).unsqueeze(-2)
        else:
            gA = -gB @ _H(X)
        return gA, gB
    attach("LinalgSolveExBackward0", out, (A, B), bw)


def _phi(a):
    return a.tril(-1) + a.diagonal(0, -2, -1).diag_embed() * 0.5


@formula("cholesky", "linalg_cholesky")
def _cholesky(out, a, upper=False, **k):
    so = save_out(out)

    def bw(g):
        L = so.unpack()
        if upper:
            L, g = _H(L), _H(g)
        # torch: L^-H pi*(tril(L^H g)) L^-1, pi*(X) = (X + X^H - diag(X)) / 2: Hermitian
        # for real input; for complex the diagonal keeps X's imaginary part
        X = (_H(L) @ g).tril()
        M = 0.5 * (X + _H(X.tril(-1)))
        Linv = P.linalg.inv(L)
        return (_H(Linv) @ M @ Linv,)
    attach("LinalgCholeskyExBackward0", out, (a,), bw)


@formula("linalg_eigh")
def _eigh(out, a, UPLO="L", **k):
    w, V = out[0], out[1]
    sw, sV = save_out(w, 0), save_out(V, 1)

    def bw(gw, gV):
        w, V = sw.unpack(), sV.unpack()
        r = None
        if gV is not None:
            # torch: the skew-Hermitian part of V^H gV over the eigenvalue gaps (the
            # diagonal's gap taken as 1): a repeated eigenvalue gives nan/inf, as torch
            E = w.unsqueeze(-2) - w.unsqueeze(-1)
            n = E.shape[-1]
            E = P.where(P.eye(n, dtype=P.bool, device=E.device), 1, E)
            VhgV = _H(V) @ gV
            if VhgV.dtype.is_complex:
                im = VhgV.diagonal(0, -2, -1).imag
                if not P.allclose(im, P.zeros_like(im), rtol=1e-2, atol=1e-2):
                    raise RuntimeError(
                        "linalg_eigh_backward: The eigenvectors in the complex case are "
                        "specified up to multiplication by e^{i phi}. The specified loss "
                        "function depends on this quantity, so it is ill-defined.")
            r = 0.5 * (VhgV - _H(VhgV)) / E.to(VhgV.dtype)
        if gw is not None:
            d = gw.to(V.dtype).diag_embed()
            r = d if r is None else r + d
        gA = V @ r @ _H(V)
        return (0.5 * (gA + _H(gA)),)
    attach("LinalgEighBackward0", [w, V], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_eigvalsh")
def _eigvalsh(out, a, UPLO="L", **k):
    sa = save(a)

    def bw(g):
        w, V = P.linalg.eigh(sa.unpack(), UPLO=UPLO)
        gA = V @ g.to(V.dtype).diag_embed() @ _H(V)
        return (gA,)
    attach("LinalgEighBackward0", out, (a,), bw)          # (torch's: eigvalsh is eigh)


def _eig_backward(gL, gV, L, V, real_input):
    """torch's linalg_eig_backward (general, non-Hermitian A = V diag(L) V^-1):
    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(L_j - L_i)) V^H,
    real part for a real A."""
    VH = _H(V)
    if gV is None:
        gA = P.linalg.solve(VH, gL.unsqueeze(-1) * VH)
    else:
        VhgV = VH @ gV
        diag = VhgV.diagonal(0, -2, -1)
        if not P.allclose(diag.imag, P.zeros_like(diag.imag), rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                "so it is ill-defined.")
        VhgV = VhgV - VH @ (V * diag.real.unsqueeze(-2))
        Lc = L.conj()
        E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
        E.diagonal(0, -2, -1).fill_(1.0)
        inner = VhgV / E
        if gL is not None:
            inner.diagonal(0, -2, -1).copy_(gL)
        gA = P.linalg.solve(VH, inner @ VH)
    return gA.real if real_input else gA


@formula("linalg_eig")
def _eig(out, a, **k):
    L, V = out[0], out[1]
    sL, sV = save_out(L, 0), save_out(V, 1)
    real_input = not a.dtype.is_complex

    def bw(gL, gV):
        return (_eig_backward(gL, gV, sL.unpack(), sV.unpack(), real_input),)
    attach("LinalgEigBackward0", [L, V], (a,), bw, multi=True, accepts_none=True)


@formula("linalg_eigvals")
def _eigvals(out, a, **k):
    sa = save(a)
    real_input = not a.dtype.is_complex

    def bw(gL):
        L, V = P.linalg.eig(sa.unpack())
        return (_eig_backward(gL, None, L, V, real_input),)
    attach("LinalgEigBackward0", out, (a,), bw)     # torch's node (eigvals is linalg_eig)


@formula("trace")
def _trace(out, a, **k):
    shape = tuple(a.shape)

    def bw(g):
        n = min(shape)
        e = P.zeros(shape, dtype=g.dtype, device=g.device)
        e.diagonal().fill_(1) if not g._requires_grad else None
        if g._requires_grad:
            e = P.eye(shape[0], shape[1], dtype=g.dtype, device=g.device)
        return (e * g,)
    attach("TraceBackward0", out, (a,), bw)


@formula("kron")
def _kron(out, a, b, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        nd = max(a.dim(), b.dim())
        ash = (1,) * (nd - a.dim()) + tuple(a.shape)
        bsh = (1,) * (nd - b.dim()) + tuple(b.shape)
        gv = g.reshape(*[x for pair in zip(ash, bsh) for x in pair])
        ev = [2 * i for i in range(nd)]
        od = [2 * i + 1 for i in range(nd)]
        b_ = b.reshape(bsh)
        a_ = a.reshape(ash)
        ga = (gv * _c(b_).reshape(*[x for pair in zip((1,) * nd, bsh) for x in pair])).sum(od).reshape(a.shape)
        gb = (gv * _c(a_).reshape(*[x for pair in zip(ash, (1,) * nd) for x in pair])).sum(ev).reshape(b.shape)
        return ga, gb
    attach("KronBackward0", out, (a, b), bw)


# ---------------------------------------------------------------------------
# shape / indexing ops
# ---------------------------------------------------------------------------

@formula("cat", "concat", "concatenate")
def _cat(out, tensors, dim=0, axis=None, **k):
    if axis is not None:
        dim = axis
    ts = list(tensors)
    ref = next((t for t in ts if not (t.dim() == 1 and t.shape[0] == 0)), ts[0])
    d = dim % ref.dim()
    sizes = [t.shape[d] if t.dim() == ref.dim() else 0 for t in ts]

    def bw(g):
        res = []
        off = 0
        for t_size, t in zip(sizes, shapes):
            if t is None:
                res.append(None)
                continue
            res.append(g.narrow(d, off, t_size) if len(t) == g.dim()
                       else P.zeros(t, dtype=g.dtype, device=g.device))
            off += t_size
        return tuple(res)
    shapes = [tuple(t.shape) for t in ts]
    attach("CatBackward0", out, ts, bw)


@formula("stack")
def _stack(out, tensors, dim=0, **k):
    ts = list(tensors)
    d = dim % (ts[0].dim() + 1)
    attach("StackBackward0", out, ts, lambda g: tuple(g.unbind(d)))


@formula("flip")
def _flip(out, x, *dims, **k):
    dims = _int_list(dims if dims else k.get("dims"))
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(dims),))


@formula("fliplr")
def _fliplr(out, x, **k):
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(1),))


@formula("flipud")
def _flipud(out, x, **k):
    attach("FlipBackward0", out, (x,), lambda g: (g.flip(0),))


@formula("roll")
def _roll(out, x, shifts, dims=None, **k):
    if isinstance(shifts, int):
        neg = -shifts
    else:
        neg = tuple(-s for s in shifts)
    shape = tuple(x.shape)
    if dims is None:
        attach("RollBackward0", out, (x,), lambda g: (g.flatten().roll(neg).reshape(shape),))
    else:
        attach("RollBackward0", out, (x,), lambda g: (g.roll(neg, dims),))


@formula("rot90")
def _rot90(out, x, k_=1, dims=(0, 1), **k):
    attach("Rot90Backward0", out, (x,), lambda g: (g.rot90(-k_, dims),))


def _int_list(args):
    """A method's ints given as varargs or as one sequence (``x.flip(0, 1)``,
    ``x.flip((0, 1))``, ``x.tile(2)``) as a tuple."""
    if isinstance(args, (tuple, list)) and len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
    return (args,) if isinstance(args, int) else tuple(args)


@formula("repeat")
def _repeat(out, x, *sizes, **k):
    sizes = _int_list(sizes if sizes else k.get("repeats"))
    shape = tuple(x.shape)

    def bw(g):
        nd = len(sizes)
        xs = (1,) * (nd - len(shape)) + shape
        inter = []
        for r, n in zip(sizes, xs):
            inter += [r, n]
        gg = g.reshape(inter)
        gg = gg.sum(tuple(range(0, 2 * nd, 2)))
        return (gg.reshape(shape),)
    attach("RepeatBackward0", out, (x,), bw)


@formula("tile")
def _tile(out, x, *dims, **k):
    dims = _int_list(dims if dims else k.get("dims"))
    nd = max(len(dims), x.dim())
    sizes = (1,) * (nd - len(dims)) + dims
    _repeat(out, x, sizes)


@formula("repeat_interleave")
def _repeat_interleave(out, x, repeats=None, dim=None, **k):
    if not _T(x) or not _is_diff(out):
        return
    shape = tuple(x.shape)
    if isinstance(repeats, int) or (_T(repeats) and repeats.numel() == 1):
        r = int(repeats)
        d = None if dim is None else dim % x.dim()

        def bw(g):
            if d is None:
                return (g.reshape(-1, r).sum(1).reshape(shape),)
            n = shape[d]
            gs = list(g.shape)
            return (g.reshape(gs[:d] + [n, r] + gs[d + 1:]).sum(d + 1),)
    else:
        rep = repeats
        d = 0 if dim is None else dim % x.dim()

        def bw(g):
            idx = P.arange(rep.shape[0], device=g.device).repeat_interleave(rep)
            src = g if dim is not None else g
            z = P.zeros((shape[d],) + tuple(g.shape[d + 1:]) if dim is None else
                        shape, dtype=g.dtype, device=g.device)
            if dim is None:
                return (P.zeros(rep.shape[0], dtype=g.dtype, device=g.device).index_add(0, idx, g).reshape(shape),)
            return (z.index_add(d, idx, src),)
    attach("RepeatInterleaveBackward0", out, (x,), bw)


@formula("tril")
def _tril(out, x, diagonal=0, **k):
    attach("TrilBackward0", out, (x,), lambda g: (g.tril(diagonal),))


@formula("triu")
def _triu(out, x, diagonal=0, **k):
    attach("TriuBackward0", out, (x,), lambda g: (g.triu(diagonal),))


@formula("diag")
def _diag(out, x, diagonal=0, **k):
    shape = tuple(x.shape)
    # (torch's nodes: diag is diag_embed of a vector, diagonal_copy of a matrix)
    if len(shape) == 1:
        attach("DiagEmbedBackward0", out, (x,), lambda g: (g.diagonal(diagonal),))
    else:
        attach("DiagonalBackward0_copy", out, (x,), lambda g: (
            P.diagonal_scatter(P.zeros(shape, dtype=g.dtype, device=g.device), g, diagonal),))


@formula("diag_embed")
def _diag_embed(out, x, offset=0, dim1=-2, dim2=-1, **k):
    attach("DiagEmbedBackward0", out, (x,), lambda g: (g.diagonal(offset, dim1, dim2),))


def _unsafe_split_formula(node):
    """unsafe_split/unsafe_chunk/unsafe_split_with_sizes: pieces that are not
    views (an in-place write into one leaves the input's history alone), one
    node over all of them whose backward concatenates their gradients."""
    @formula(node)
    def f(out, x, n, dim=0, **k):
        if not out or not _is_diff(out[0]):
            return
        d = dim % x.dim()
        shapes = [tuple(o.shape) for o in out]

        def bw(*grads):
            return (P.cat([P.zeros(s, dtype=x.dtype, device=x.device) if g is None else g
                           for g, s in zip(grads, shapes)], d),)
        attach(_bname(node.replace("chunk", "split")), list(out), (x,), bw, multi=True,
               accepts_none=True)


for _n in ("unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"):
    _unsafe_split_formula(_n)


@formula("block_diag")
def _block_diag(out, *tensors, **k):
    # torch's block_diag_backward: each input's block of the gradient
    if not _is_diff(out):
        return
    shapes = [tuple(t.shape) if _T(t) else () for t in tensors]
    real = [_T(t) and not t.is_complex() for t in tensors]

    def bw(g):
        res, r, c = [], 0, 0
        for shape, re in zip(shapes, real):
            rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape
            piece = g[r:r + rows, c:c + cols].reshape(shape)
            res.append(piece.real if re and piece.is_complex() else piece)
            r, c = r + rows, c + cols
        return tuple(res)
    attach("BlockDiagBackward0", out, tensors, bw)


node_class("DiagEmbedBackward0", saved=("dim1", "dim2", "offset"),
           scalars=("dim1", "dim2", "offset"))


@formula("diagflat")
def _diagflat(out, x, offset=0, **k):
    # torch's diagflat is diag_embed(x.contiguous().view(-1), offset): a
    # DiagEmbedBackward0 over a ViewBackward0
    if not _is_diff(out):
        return
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().view(-1)
    node = attach("DiagEmbedBackward0", out, (flat,), lambda g: (g.diagonal(offset),))
    if node is not None:
        node._sv = (_Plain(-2), _Plain(-1), _Plain(offset))


@formula("diagonal_scatter")
def _diagonal_scatter(out, x, src, offset=0, dim1=0, dim2=1, **k):
    def bw(g):
        return (P.diagonal_scatter(g, P.zeros_like(g.diagonal(offset, dim1, dim2)), offset, dim1, dim2),
                g.diagonal(offset, dim1, dim2))
    attach("DiagonalScatterBackward0", out, (x, src), bw)


@formula("select_scatter")
def _select_scatter(out, x, src, dim, index, **k):
    def bw(g):
        return (P.select_scatter(g, P.zeros_like(g.select(dim, index)), dim, index), g.select(dim, index))
    attach("SelectScatterBackward0", out, (x, src), bw)


@formula("slice_scatter")
def _slice_scatter(out, x, src, dim=0, start=None, end=None, step=1, **k):
    def sl(t):
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end, step)
        return t[tuple(idx)]

    def bw(g):
        return (P.slice_scatter(g, P.zeros_like(sl(g)), dim, start, end, step), sl(g))
    attach("SliceScatterBackward0", out, (x, src), bw)


@formula("index_select")
def _index_select(out, x, dim, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        return (P.zeros(shape, dtype=g.dtype, device=g.device).index_add(dim, si.unpack(), g),)
    attach("IndexSelectBackward0", out, (x,), bw)


@formula("gather")
def _gather(out, x, dim, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        return (P.zeros(shape, dtype=g.dtype, device=g.device).scatter_add(dim, si.unpack(), g),)
    attach("GatherBackward0", out, (x,), bw)


@formula("take_along_dim")
def _take_along_dim(out, x, indices, dim=None, **k):
    shape = tuple(x.shape)
    si = save(indices)

    def bw(g):
        i = si.unpack()
        if dim is None:
            i = i.reshape(-1)
            z = P.zeros((x_numel,), dtype=g.dtype, device=g.device)
            return (z.scatter_add(0, i, g.reshape(-1)).reshape(shape),)
        d = dim % len(shape)
        # the forward broadcast input and indices against each other (but
        # along dim) and wrapped the indices modulo the size: scatter into the broadcast
        # input's shape, then sum over the broadcast dims (torch: gather of expand)
        ib = i.expand(*[g.shape[j] if j != d else i.shape[j] for j in range(len(shape))])
        if shape[d]:
            ib = ib.remainder(shape[d])      # the forward's wrap: torch's _maybe_wrap_indices
        bshape = [g.shape[j] if j != d else shape[d] for j in range(len(shape))]
        z = P.zeros(bshape, dtype=g.dtype, device=g.device).scatter_add(d, ib, g)
        return (z.sum_to_size(shape) if tuple(bshape) != shape else z,)
    x_numel = x.numel()
    # torch's take_along_dim is a composite: its result comes from gather
    attach("GatherBackward0", out, (x,), bw)


@formula("take")
def _take(out, x, index, **k):
    shape = tuple(x.shape)
    si = save(index)

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device).reshape(-1)
        i = si.unpack().reshape(-1)
        i = P.where(i < 0, i + z.shape[0], i)
        return (z.index_add(0, i, g.reshape(-1)).reshape(shape),)
    attach("TakeBackward0", out, (x,), bw)


@formula("scatter")
def _scatter(out, x, dim, index, src=None, *, value=None, reduce=None, **k):
    si = save(index)
    if reduce is not None:
        return _not_impl_attach(out, "scatter (with reduce)", (x, src))

    def bw(g):
        i = si.unpack()
        gx = g.scatter(dim, i, 0)
        gs = g.gather(dim, i) if _T(src) else None
        return gx, gs
    # torch: scatter.src is ScatterBackward0, scatter.value (a number) ScatterBackward1
    attach("ScatterBackward0" if _T(src) else "ScatterBackward1", out, (x, src), bw)


@formula("scatter_add")
def _scatter_add(out, x, dim, index, src, **k):
    si = save(index)
    attach("ScatterAddBackward0", out, (x, src), lambda g: (g, g.gather(dim, si.unpack())))


@formula("index_add")
def _index_add(out, x, dim, index, source, *, alpha=1, **k):
    si = save(index)

    def bw(g):
        gs = g.index_select(dim, si.unpack())
        if alpha != 1:
            gs = gs * alpha
        if _T(source) and source.dim() == 0:
            gs = gs.reshape(())
        return g, gs
    attach("IndexAddBackward0", out, (x, source), bw)


@formula("index_copy")
def _index_copy(out, x, dim, index, source, **k):
    si = save(index)

    def bw(g):
        i = si.unpack()
        return g.index_fill(dim, i, 0), g.index_select(dim, i)
    attach("IndexCopyBackward0", out, (x, source), bw)


@formula("index_fill")
def _index_fill(out, x, dim, index, value, **k):
    si = save(index)

    def bw(g):
        i = si.unpack()
        # each filled slice counts once however often the index repeats it
        gv = g.index_select(dim, i.unique()).sum() if _T(value) else None
        return g.index_fill(dim, i, 0), gv
    attach("IndexFillBackward0", out, (x, value), bw)


@formula("masked_fill")
def _masked_fill(out, x, mask, value, **k):
    sm = save(mask)

    def bw(g):
        m = sm.unpack()
        gv = P.where(m, g, 0).sum() if _T(value) else None
        return g.masked_fill(m, 0), None, gv
    # (torch's overloads: a tensor value is MaskedFillBackward1)
    _attach_kept("MaskedFillBackward1" if _T(value) else "MaskedFillBackward0", out,
                 (x, mask, value), (0, 2) if _T(value) else (0,), bw)


@formula("masked_select")
def _masked_select(out, x, mask, **k):
    sm = save(mask)
    shape = tuple(x.shape)

    def bw(g):
        m = sm.unpack()
        bshape = P.broadcast_shapes(shape, tuple(m.shape))
        z = P.zeros(bshape, dtype=g.dtype, device=g.device)
        return (z.masked_scatter(m.expand(bshape), g), None)
    attach("MaskedSelectBackward0", out, (x, mask), bw)


@formula("masked_scatter")
def _masked_scatter(out, x, mask, source, **k):
    sm = save(mask)
    sshape = tuple(source.shape)

    def bw(g):
        m = sm.unpack().expand(g.shape)
        sel = g.masked_select(m)
        n = 1
        for s in sshape:
            n *= s
        gs = P.cat([sel, P.zeros(n - sel.numel(), dtype=g.dtype, device=g.device)]).reshape(sshape)
        return g.masked_fill(m, 0), None, gs
    attach("MaskedScatterBackward0", out, (x, mask, source), bw)


@formula("put")
def _put(out, x, index, source, accumulate=False, **k):
    shape, sshape = tuple(x.shape), tuple(source.shape)
    si = save(index)

    def bw(g):
        flat = g.reshape(-1)
        i = si.unpack().reshape(-1)
        i = P.where(i < 0, i + flat.shape[0], i)
        gx = g if accumulate else P.index_put(flat, (i,), P.zeros((), dtype=g.dtype,
                                                                  device=g.device)).reshape(shape)
        return gx, flat[i].reshape(sshape)
    attach("PutBackward0", out, (x, source), bw)


@formula("index_put")
def _index_put(out, x, indices, values, accumulate=False, **k):
    idx = list(indices)

    def bw(g):
        gx = g if accumulate else P.index_put(g, idx, P.zeros((), dtype=g.dtype, device=g.device))
        gv = g[tuple(idx)]
        return gx, gv
    attach("IndexPutBackward0", out, (x, values), bw)


node_class("PdistBackward0", saved=("self", "p", "result"), scalars=("p",))
_PDIST_BACKWARD_NOT_IMPLEMENTED = not_implemented("_pdist_backward")


def _pdist_grad(g, x, r, p, i, j):
    """torch's _pdist_backward kernel: the gradient of the rows ``x`` from
    that of their distances ``r`` (pairs ``i[k] < j[k]``)."""
    gd = _pair_dist_grad(x[i] - x[j], r.unsqueeze(1), g.unsqueeze(1), p)
    return P.zeros_like(x).index_add(0, i, gd).index_add(0, j, -gd)


def _pair_dist_grad(diff, d, gk, p):
    """The gradient of ``diff`` (pairs' coordinate differences) from ``gk``,
    that of their ``p``-distances ``d`` (both with a trailing dim of 1), as
    torch's pdist/cdist backward kernels: for p = inf each coordinate where
    |diff| reaches the distance takes the whole gradient; p < 1 gives 0 where
    a difference is 0, any p 0 at a zero distance."""
    if p == 0:
        gd = P.zeros_like(diff)
    elif p == 1:
        gd = diff.sign() * gk
    elif p == math.inf:
        gd = diff.sign() * (diff.abs() == d) * gk
    elif p == 2:
        gd = P.where(d == 0, 0., gk * diff / d)
    elif p < 2:
        zero = (d == 0) | (diff == 0) if p < 1 else (d == 0).expand_as(diff)
        gd = P.where(zero, 0., diff.sign() * diff.abs() ** (p - 1) * gk / d ** (p - 1))
    else:
        gd = P.where(d == 0, 0., diff * diff.abs() ** (p - 2) * gk / d ** (p - 1))
    return gd


def pdist_node(out, x, p, i, j):
    """Record ``out = pdist(x, p)`` (the pairs ``i``, ``j``) as torch's
    PdistBackward0, whose gradient is not differentiable again (torch:
    "the derivative for '_pdist_backward' is not implemented")."""
    sx, so = save(x), save_out(out)

    def bw(g):
        x_, r = sx.unpack(), so.unpack()
        with P.no_grad():
            gx = _pdist_grad(g, x_, r, p, i, j)
        if P.is_grad_enabled():
            _PDIST_BACKWARD_NOT_IMPLEMENTED(gx, g, x_, r)
        return (gx,)
    node = attach("PdistBackward0", out, (x,), bw)
    if node is not None:
        node._sv = (sx, _Plain(float(p)), so)
    return out


node_class("CdistBackward0", saved=("p", "result", "x1", "x2"), scalars=("p",))
_CDIST_BACKWARD_NOT_IMPLEMENTED = not_implemented("_cdist_backward")


def cdist_node(out, x1, x2, a, b, p):
    """Record ``out = cdist(x1, x2, p)`` (``a``, ``b``: x1 and x2 broadcast
    to the batch) as torch's CdistBackward0 with its _cdist_backward kernel
    (the gradient in the broadcast shape; not differentiable again)."""
    sa, sb, so = save(a), save(b), save_out(out)

    def bw(g):
        a_, b_, r = sa.unpack(), sb.unpack(), so.unpack()
        with P.no_grad():
            gd = _pair_dist_grad(a_.unsqueeze(-2) - b_.unsqueeze(-3), r.unsqueeze(-1),
                                 g.unsqueeze(-1), p)
            ga, gb = gd.sum(-2), -gd.sum(-3)
        if P.is_grad_enabled():
            for t in (ga, gb):
                _CDIST_BACKWARD_NOT_IMPLEMENTED(t, g, a_, b_, r)
        return ga, gb
    node = attach("CdistBackward0", out, (x1, x2), bw)
    if node is not None:
        node._sv = (_Plain(float(p)), so, sa, sb)
    return out


def _not_impl_attach(out, name, ins):
    def bw(*g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    attach(_bname(name.split(" ")[0]), out, ins, bw)


def getitem(out, x, idx):
    shape = tuple(x.shape)
    if not _is_diff(out):
        return

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device)
        return (_index_backward(z, idx, g),)
    attach("IndexBackward0", out, (x,), bw)


def _index_backward(z, idx, g):
    """z[idx] += g with duplicate indices accumulated (differentiable)."""
    if g._requires_grad or hasattr(g, "_bt_phys"):
        # create_graph (or a gradient batched by vmap): express through the
        # differentiable index_add on a flat index map
        n = z.numel()
        pos = P.arange(n, device=z.device).reshape(z.shape)[idx]
        return P.zeros(n, dtype=g.dtype, device=g.device).index_add(0, pos.reshape(-1), g.reshape(-1)).reshape(z.shape)
    result, recorded = I._apply_slicing(z, I._items_of(idx))
    if not recorded:
        result.add_(g)
        return z
    I._index_put_impl(result, recorded, g, True)
    return z


@formula("narrow_copy")
def _narrow_copy(out, x, dim, start, length, **k):
    shape = tuple(x.shape)

    def bw(g):
        z = P.zeros(shape, dtype=g.dtype, device=g.device)
        return (P.slice_scatter(z, g, dim, start, start + length),)
    attach("NarrowCopyBackward0", out, (x,), bw)


@formula("constant_pad_nd")
def _constant_pad_nd(out, x, pad, value=0, **k):
    # (the third positional argument is the fill value, not a mode)
    return _pad(out, x, pad, **k)


@formula("pad")
def _pad(out, x, pad, mode="constant", value=None, **k):
    if mode != "constant":
        return _not_impl_attach(out, f"pad (mode={mode})", (x,))
    shape = tuple(x.shape)
    pad = list(pad)

    def bw(g):
        idx = [slice(None)] * len(shape)
        for i in range(len(pad) // 2):
            d = len(shape) - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            n = g.shape[d]
            idx[d] = slice(max(lo, 0), n - max(hi, 0))
        gg = g[tuple(idx)]
        # negative padding cropped the input: put the gradient back in place
        if any(p < 0 for p in pad):
            z = P.zeros(shape, dtype=g.dtype, device=g.device)
            idx2 = [slice(None)] * len(shape)
            for i in range(len(pad) // 2):
                d = len(shape) - 1 - i
                lo, hi = pad[2 * i], pad[2 * i + 1]
                idx2[d] = slice(max(-lo, 0), shape[d] - max(-hi, 0))
            z[tuple(idx2)] = gg
            return (z,)
        return (gg,)
    attach("ConstantPadNdBackward0", out, (x,), bw)


# ---------------------------------------------------------------------------
# decompositions: SVD and QR
# ---------------------------------------------------------------------------

def _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """PyTorch's linalg.svd backward (U, S, Vh; the reduced part is used)."""
    if gU is None and gVh is None:
        if gS is None:
            return None
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        Uk, Vhk = U[..., :, :k], Vh[..., :k, :]
        return P.matmul(Uk * gS.unsqueeze(-2).to(U.dtype), Vhk)
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = gU[..., :, :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
    if gU is None:
        gU = P.zeros_like(U)
    if gVh is None:
        gVh = P.zeros_like(Vh)
    is_complex = U.dtype.is_complex
    V = _H(Vh)
    gV = _H(gVh)
    UhgU = _H(U) @ gU
    VhgV = _H(V) @ gV
    UhgU = UhgU - _H(UhgU)
    VhgV = VhgV - _H(VhgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + P.eye(k, dtype=E.dtype, device=E.device)
    Sc = S.to(U.dtype)
    ret = (UhgU * Sc.unsqueeze(-2) + Sc.unsqueeze(-1) * VhgV) / E.to(U.dtype)
    if gS is not None:
        ret = ret + gS.to(U.dtype).diag_embed()
    if is_complex:
        ret = ret + (UhgU.diagonal(0, -2, -1) / (2 * Sc)).diag_embed()
    if m > k:
        ret = U @ ret
        gUSinv = gU / Sc.unsqueeze(-2)
        ret = ret + gUSinv - U @ (_H(U) @ gUSinv)
        ret = ret @ Vh
    elif n > k:
        ret = ret @ Vh
        SinvgVh = gVh / Sc.unsqueeze(-1)
        ret = ret + SinvgVh - (SinvgVh @ V) @ Vh
        ret = U @ ret
    else:
        ret = U @ (ret @ Vh)
    return ret


@formula("linalg_svd")
def _linalg_svd(out, A, full_matrices=True, **k):
    U, S, Vh = out[0], out[1], out[2]
    sU, sS, sV = save_out(U, 0), save_out(S, 1), save_out(Vh, 2)

    def bw(gU, gS, gVh):
        return (_svd_backward(gU, gS, gVh, sU.unpack(), sS.unpack(), sV.unpack(), full_matrices),)
    attach("LinalgSvdBackward0", [U, S, Vh], (A,), bw, multi=True, accepts_none=True)


@formula("svd")
def _svd_old(out, A, some=True, compute_uv=True, **k):
    U, S, V = out[0], out[1], out[2]
    if not compute_uv:
        # as torch: S is differentiable (svdvals' backward), U and V are zeros
        return _svdvals(S, A)
    sU, sS, sV = save_out(U, 0), save_out(S, 1), save_out(V, 2)

    def bw(gU, gS, gV):
        gVh = _H(gV) if gV is not None else None
        return (_svd_backward(gU, gS, gVh, sU.unpack(), sS.unpack(), _H(sV.unpack()), not some),)
    attach("SvdBackward0", [U, S, V], (A,), bw, multi=True, accepts_none=True)


@formula("linalg_svdvals")
def _svdvals(out, A, **k):
    sA = save(A)

    def bw(gS):
        U, S, Vh = P.linalg.svd(sA.unpack(), full_matrices=False)
        return (_svd_backward(None, gS, None, U, S, Vh, False),)
    attach("LinalgSvdBackward0", out, (A,), bw)      # torch's node name (svdvals is _linalg_svd)


def _qr_backward_tall(gQ, gR, Q, R):
    """torch's linalg_qr_backward for ``m >= n`` (reduced): ``R`` square."""
    M = R @ _H(gR) - _H(gQ) @ Q
    low = M.tril(-1)
    d = M.diagonal(0, -2, -1)
    if M.dtype.is_complex:
        d = d.real.to(M.dtype)
    copyltu = low + _H(low) + d.diag_embed()
    X = gQ + Q @ copyltu
    # gA = X R^{-H}  <=>  R gA^H = X^H
    return _H(P.linalg.solve(R, _H(X)))


@formula("linalg_qr")
def _linalg_qr(out, A, mode="reduced", **k):
    Q, R = out[0], out[1]
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r" or (mode == "complete" and m > n):
        # torch's RuntimeErrors, raised when the backward reaches the node
        msg = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
               "through linalg.qr." if mode == "r" else
               "The QR decomposition is not differentiable when mode='complete' and "
               "nrows > ncols.")

        def bw_err(gQ, gR):
            raise RuntimeError(msg)
        return attach("LinalgQrBackward0", [Q, R], (A,), bw_err, multi=True, accepts_none=True)
    sQ, sR = save_out(Q, 0), save_out(R, 1)

    def bw(gQ, gR):
        Q, R = sQ.unpack(), sR.unpack()
        if gQ is None:
            gQ = P.zeros_like(Q)
        if gR is None:
            gR = P.zeros_like(R)
        if m >= n:
            return (_qr_backward_tall(gQ, gR, Q, R),)
        # wide (torch's case m < n): A = [X | Y], R = [U | V], Y = Q V; X's QR is (Q, U)
        U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
        gV = gR.narrow(-1, m, n - m)
        gX = _qr_backward_tall(gQ + (Q @ V) @ _H(gV), gR.narrow(-1, 0, m), Q, U)
        return (P.cat([gX, Q @ gV], -1),)
    attach("LinalgQrBackward0", [Q, R], (A,), bw, multi=True, accepts_none=True)


@formula("_product")
def _product_formula(out, a, b, c=None, alpha=1, beta=0, kname=None, **k):
    """The private GEMM of ``ptcore._ops.linalg`` (``beta * c + alpha * a @ b``
    with equal batch dims), which composites such as einsum, tensordot,
    kron, multi_dot and matrix_power are built on."""
    sa = save(a) if _T(b) and b._requires_grad else None
    sb = save(b) if _T(a) and a._requires_grad else None
    cg = _T(c) and c._requires_grad

    def bw(g):
        ga = P.matmul(g, _H(sb.unpack())) if sb is not None else None
        gb = P.matmul(_H(sa.unpack()), g) if sa is not None else None
        if alpha != 1:
            ga = ga * _scalar_like(alpha) if ga is not None else None
            gb = gb * _scalar_like(alpha) if gb is not None else None
        gc = (g * _scalar_like(beta) if beta != 1 else g) if cg else None
        return ga, gb, gc
    attach("MmBackward0" if a.dim() == 2 else "BmmBackward0", out, (a, b, c), bw)



@formula("linalg_inv_ex")
def _inv_ex(out, a, **k):
    inv, info = out[0], out[1]
    so = save_out(inv, 0)

    def bw(g, gi=None):
        y = so.unpack()
        return (-P.matmul(P.matmul(_H(y), g), _H(y)),)
    attach("LinalgInvExBackward0", [inv, info], (a,), bw, multi=True)


@formula("linalg_cross")
def _cross(out, a, b, *, dim=-1, **k):
    sa, sb = save(a), save(b)

    def bw(g):
        a, b = sa.unpack(), sb.unpack()
        ga = P.linalg.cross(b.conj() if b.dtype.is_complex else b, g, dim=dim) \
            if _T(a) and a._requires_grad else None
        gb = P.linalg.cross(g, a.conj() if a.dtype.is_complex else a, dim=dim) \
            if _T(b) and b._requires_grad else None
        return ga, gb
    attach("LinalgCrossBackward0", out, (a, b), bw)


def _pinv_backward(g, pinvA, A):
    """PyTorch's pinv_backward (``torch/csrc/autograd/FunctionsManual.cpp``)."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = _H(pinvA)
    gpinvAh = _H(g)
    if m <= n:
        K = P.matmul(gpinvAh, pinvA)
        KpinvAh = P.matmul(K, pinvAh)
        return (-_H(P.matmul(pinvA, K)) + KpinvAh - P.matmul(P.matmul(A, pinvA), KpinvAh)
                + P.matmul(P.matmul(pinvAh, pinvA), gpinvAh - P.matmul(K, A)))
    K = P.matmul(pinvA, gpinvAh)
    pinvAhK = P.matmul(pinvAh, K)
    return (-_H(P.matmul(K, pinvA)) + P.matmul(P.matmul(gpinvAh - P.matmul(A, K), pinvA), pinvAh)
            + pinvAhK - P.matmul(P.matmul(pinvAhK, pinvA), A))


@formula("linalg_pinv")
def _pinv(out, a, *args, **k):
    sa, so = save(a), save_out(out)

    def bw(g):
        return (_pinv_backward(g, so.unpack(), sa.unpack()),)
    attach("LinalgPinvBackward0", out, (a,), bw)


@formula("linalg_lstsq")
def _lstsq(out, A, B, *args, **k):
    X = out[0]
    sA, sB = save(A), save(B)
    vec = B.dim() == A.dim() - 1

    sX = save_out(X, 0)

    def bw(gX, gR=None):
        if gX is None and gR is None:
            return None, None
        A, B = sA.unpack(), sB.unpack()
        B2 = B.unsqueeze(-1) if vec else B
        gA = gB = None
        if gX is not None:
            pinvA = P.linalg.pinv(A)
            g2 = gX.unsqueeze(-1) if vec else gX
            gA = _pinv_backward(P.matmul(g2, _H(B2)), pinvA, A) if A._requires_grad else None
            gB = P.matmul(_H(pinvA), g2) if B._requires_grad else None
        if gR is not None and gR.numel():
            # residuals |A X - B|^2 per column: at the least-squares X the
            # derivative through X vanishes, d = 2 (A X - B) (dA X - dB)
            X2 = sX.unpack()
            X2 = X2.unsqueeze(-1) if vec else X2
            r = (P.matmul(A, X2) - B2) * (2 * gR.unsqueeze(-2))
            if A._requires_grad:
                ra = P.matmul(r, _H(X2))
                gA = ra if gA is None else gA + ra
            if B._requires_grad:
                gB = -r if gB is None else gB - r
        if gB is not None and vec:
            gB = gB.squeeze(-1)
        return gA, gB
    # (torch: the solution and the residuals are differentiable; rank and
    # singular_values are not)
    attach("LinalgLstsqBackward0", [out[0], out[1]], (A, B), bw, multi=True, accepts_none=True)


@formula("scatter_reduce")
def _scatter_reduce(out, x, dim, index, src, reduce, *, include_self=True, **k):
    """PyTorch's scatter_reduce_backward (sum, mean, prod, amax, amin)."""
    si, sx, ss = save(index), save(x), save(src)
    so = save_out(out)

    def bw(g):
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            # the forward takes 'max' / 'min' too; torch's backward refuses them
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {reduce}.")
        i, x, src = si.unpack(), sx.unpack(), ss.unpack()
        if reduce == "sum":
            gx, gs = g, g.gather(dim, i)
        elif reduce == "mean":
            N = (P.ones_like(g) if include_self else P.zeros_like(g)).scatter_add(
                dim, i, P.ones_like(src))
            N = P.where(N == 0, 1, N)
            gx = g / N
            gs = gx.gather(dim, i)
        elif reduce == "prod":
            # products that leave out one factor, computed without dividing by a zero
            y = so.unpack()
            mx = x.masked_fill(x == 0, 1)
            gx = g * mx.scatter_reduce(dim, i, src, "prod", include_self=include_self) / mx
            s0 = src == 0
            nz = P.zeros_like(x).scatter_add(dim, i, s0.to(x.dtype)).gather(dim, i)
            single = s0 & (nz == 1)
            ms_out = x.scatter_reduce(dim, i, src.masked_fill(single, 1), "prod",
                                      include_self=include_self)
            gs = P.where(single, (g * ms_out).gather(dim, i),
                         (g * y).gather(dim, i) / src.masked_fill(s0, 1))
        else:
            y = so.unpack()
            val = y.gather(dim, i)
            x_is = (x == y).to(g.dtype)
            s_is = (src == val).to(g.dtype)
            if not include_self:
                x_is = x_is.scatter(dim, i, 0)
            n = x_is.scatter_add(dim, i, s_is)
            gd = g / n
            gx = x_is * gd
            gs = s_is * gd.gather(dim, i)
        if not include_self:
            gx = gx.scatter(dim, i, 0)
        return gx, gs
    attach("ScatterReduceBackward0", out, (x, src), bw)



@formula("quantile", "nanquantile")
def _quantile(out, x, q, dim=None, keepdim=False, *, interpolation="linear", **k):
    """The result interpolates two order statistics per row: the gradient
    goes to their original positions (weights 1 - w and w)."""
    if not _is_diff(out):
        return
    sx = save(x)
    qt = q.detach() if _T(q) else P.tensor(q, dtype=P.float64, device=x.device)
    # torch's linear interpolation lerps with weights q * (n - 1) - floor(...):
    # q gets the gradient g * (above - below) * (n - 1) (none in other modes)
    qin = q if _T(q) and interpolation == "linear" else None

    def rows(t, d):
        return t.reshape(-1) if d is None else (t.movedim(d, -1) if t.dim() else t.reshape(1))

    def bw(g):
        # (the live x and q enter the weights and q's gradient, so that a
        # recorded backward has torch's second derivatives; the ranks do not)
        xl = sx.unpack()
        x = xl.detach()
        d = None if dim is None else dim % builtins_max(x.dim(), 1)
        xm = rows(x, d)
        nanq = bw.nan
        vals, si = xm.sort(-1)
        nan = xm.isnan()
        n = (~nan).sum(-1, keepdim=True) if nanq else P.full_like(nan.sum(-1, keepdim=True), xm.shape[-1])
        qv = qt.to(P.float64).reshape(-1)
        ql = qin.to(P.float64).reshape(-1) if qin is not None else qv
        pos = ql * (n - 1).clamp(min=0).to(P.float64)            # (..., Q)
        if not nanq:     # (torch: a row with a NaN takes its last order statistic)
            pos = P.where(nan.any(-1, keepdim=True), (n - 1).to(P.float64), pos)
        pos_l, pos = pos, pos.detach()
        if interpolation == "lower":
            lo = hi = pos.floor()
            w = P.zeros_like(pos)
        elif interpolation == "higher":
            lo = hi = pos.ceil()
            w = P.zeros_like(pos)
        elif interpolation == "nearest":
            lo = hi = pos.round()
            w = P.zeros_like(pos)
        else:
            lo, hi = pos.floor(), pos.ceil()
            w = (pos_l - lo) if interpolation == "linear" else P.full_like(pos, 0.5)
        lo_i = si.gather(-1, lo.long())
        hi_i = si.gather(-1, hi.long())
        # g -> (..., Q)
        gq = g
        if qt.dim() != 0:
            gq = gq.movedim(0, -1)
        else:
            gq = gq.unsqueeze(-1)
        if keepdim:
            if d is None:
                gq = gq.reshape(-1)
            elif x.dim():
                gq = gq.squeeze(d)
        gq = gq.reshape(tuple(xm.shape[:-1]) + (qv.shape[0],))
        w = w.to(g.dtype)
        z = P.zeros(tuple(xm.shape), dtype=g.dtype, device=g.device)
        gx = z.scatter_add(-1, lo_i, gq * (1 - w)).scatter_add(-1, hi_i, gq * w)
        gqq = None
        if qin is not None and qin.requires_grad:
            # rows ranked at the end (a NaN for quantile, no value for nanquantile)
            # have a constant rank
            dead = (n == 0) if nanq else nan.any(-1, keepdim=True)
            xml = rows(xl, d)
            step = (xml.gather(-1, hi_i) - xml.gather(-1, lo_i)).to(g.dtype)
            dq = P.where(dead, 0, gq * step * (n - 1).to(g.dtype))
            gqq = dq.reshape(-1, qv.shape[0]).sum(0).reshape(qt.shape).to(qt.dtype)
        gx = gx.reshape(x.shape) if d is None or not x.dim() else gx.movedim(-1, d)
        return gx, gqq
    bw.nan = False
    attach("QuantileBackward0", out, (x, qin), bw)
    return bw


def _nanquantile(out, x, q, dim=None, keepdim=False, *, interpolation="linear", **k):
    bw = _quantile(out, x, q, dim, keepdim, interpolation=interpolation)
    if bw is not None:
        bw.nan = True


FORMULAS["nanquantile"] = _nanquantile


# ---------------------------------------------------------------------------
# nn.functional activations: the forward is one fused kernel; these attach
# PyTorch's node (GeluBackward0 ...) with a backward written in differentiable
# ops, so double backward works
# ---------------------------------------------------------------------------

def activation(name, node, df, need=("x",), opmath=True):
    """``FORMULAS[name](out, x, *params)``: node ``node`` whose backward is
    ``df(g, x, y, *params)``."""
    nx, ny = "x" in need, "y" in need
    if opmath:
        df = _opmath(df)            # (torch's activation backward kernels: float32 math)

    def f(out, x, *params):
        if not _is_diff(out):
            return
        sx = save(x) if nx else None
        sy = save_out(out) if ny else None

        def bw(g):
            return (df(g, sx.unpack() if nx else None, sy.unpack() if ny else None, *params),)
        attach(node, out, (x,), bw)
    FORMULAS[name] = f
    return f


_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)


def _pointwise_kernel(kernel, g, x):
    """``kernel(g, x)`` (a one-pass ``g * f'(x)`` of contiguous operands, None where
    it does not apply); a gradient of x's shape and dtype in another layout (sum's
    expanded ones) is made contiguous first rather than taking the composite."""
    r = kernel(g, x)
    if r is None and g.dtype is x.dtype and g.shape == x.shape and x.is_contiguous() \
            and not g.is_contiguous():
        r = kernel(g.contiguous(), x)
    return r


def _gelu_grad(g, x, y, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = P.tanh(_GELU_K * (x + 0.044715 * x2 * x))
        dinner = _GELU_K * (1.0 + 3.0 * 0.044715 * x2)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)
    if not _recorded(g, x):
        r = _pointwise_kernel(_NNK.gelu_backward, g, x)   # one vectorised pass, as ATen's
        if r is not None:
            return r
    cdf = 0.5 * (1.0 + P.erf(x * _SQRT1_2))
    return g * (cdf + x * P.exp(-0.5 * x * x) * _INV_SQRT_2PI)


def _silu_grad(g, x, y):
    if not _recorded(g, x):
        r = _pointwise_kernel(_NNK.silu_backward, g, x)   # one vectorised pass, as ATen's
        if r is not None:
            return r
    s = P.sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


def _mish_grad(g, x, y):
    t = P.tanh(P.nn.functional.softplus(x))
    return g * (t + x * P.sigmoid(x) * (1.0 - t * t))


def _softplus_grad(g, x, y, beta, threshold):
    # torch: g * sigmoid(beta x) up to the threshold (inclusive), g above it; the
    # double backward (softplus_double_backward) is zero where beta x >= threshold
    xb = x * beta
    xs = P.where(xb >= threshold, x.detach(), x)
    return P.where(xb > threshold, g, g * P.sigmoid(xs * beta))


def _elu_grad(g, x, y, negcoef, input_scale, poscoef):
    # torch: first derivative takes x <= 0, its derivative (double backward) x < 0
    xn = P.where(x < 0, x, x.detach())
    return P.where(x <= 0, g * (input_scale * negcoef) * P.exp(xn * input_scale), g * poscoef)


def _hardswish_grad(g, x, y):
    xm = P.where((x > -3.0) & (x < 3.0), x, x.detach())     # torch: strict in double backward
    return P.where(x <= -3.0, g * 0.0, P.where(x < 3.0, g * (xm / 3.0 + 0.5), g))


activation("gelu", "GeluBackward0", _gelu_grad)
activation("silu", "SiluBackward0", _silu_grad)
activation("mish", "MishBackward0", _mish_grad)
activation("softplus", "SoftplusBackward0", _softplus_grad)
activation("elu", "EluBackward0", _elu_grad)
activation("celu", "CeluBackward0", _elu_grad)
def _leaky_relu_grad(g, x, y, slope):
    # one pass (ptcore._ops._activation) where nothing must see the ops (no
    # create_graph, no dispatch layer); the composite formula otherwise
    if (not P.is_grad_enabled() and not _dispatch_on[0] and isinstance(slope, (int, float))
            and x.dtype in (P.float32, P.float64) and g.dtype == x.dtype
            and x.device.type == "cpu" and g.device.type == "cpu"
            and tuple(g.shape) == tuple(x.shape)):
        return _act_kernels.leaky_relu_backward(g.contiguous(), x.contiguous(),
                                             P.empty(tuple(x.shape), dtype=x.dtype), slope)
    return mask_link(g, lambda h: P.where(x > 0, h, h * slope), "LeakyReluBackwardBackward0", x)


activation("leaky_relu", "LeakyReluBackward0", _leaky_relu_grad)
# in place (slope >= 0): as PyTorch, the node saves the result, whose sign is the input's
activation("leaky_relu_", "LeakyReluBackward1",
           lambda g, x, y, slope: _leaky_relu_grad(g, y, None, slope), ("y",))
activation("rrelu_eval", "RreluWithNoiseBackward0",
           lambda g, x, y, slope: mask_link(g, lambda h: P.where(x > 0, h, h * slope),
                                            "RreluWithNoiseBackwardBackward0", x))
_HARDSIGMOID_BACKWARD_NOT_IMPLEMENTED = not_implemented("hardsigmoid_backward", fallback=True)


def _hardsigmoid_grad(g, x, y):
    # torch's hardsigmoid_backward has no derivative: a recorded gradient
    # (create_graph) gets the autograd fallback's NotImplemented node over the
    # inputs that require grad (forward AD and vmap keep the formula's graph)
    r = P.where((x > -3.0) & (x < 3.0), g / 6.0, g * 0.0)
    if P.is_grad_enabled() and not _fw_levels() and not _vmap_frames():
        _HARDSIGMOID_BACKWARD_NOT_IMPLEMENTED(r, *(t for t in (g, x) if t.requires_grad))
    return r


activation("hardsigmoid", "HardsigmoidBackward0", _hardsigmoid_grad)
activation("hardswish", "HardswishBackward0", _hardswish_grad)
activation("hardtanh", "HardtanhBackward0",
           lambda g, x, y, lo, hi: mask_link(
               g, lambda h: P.where((x <= lo) | (x >= hi), 0.0, h),
               "HardtanhBackwardBackward0", x))
def _logsigmoid_grad(g, x, y):
    if (g.dtype is P.float16 or g.dtype is P.bfloat16) and not P.is_grad_enabled():
        # torch's log_sigmoid_backward: the forward's buffer exp(-|x|) in the input's
        # dtype, the rest in float32, rounded once
        f32 = P.float32
        z = P.exp(-x.abs()).to(f32)
        neg = x < 0
        r = (neg.to(f32) - P.where(neg, 1.0, -1.0) * (z / (1 + z))) * g.to(f32)
        return r.to(g.dtype)
    return g * P.sigmoid(-x)


activation("logsigmoid", "LogSigmoidBackward0", _logsigmoid_grad, opmath=False)
# torch's threshold_backward / hardshrink_backward / softshrink_backward: 0 inside the band (a NaN
# input passes the gradient), recorded with a zero derivative in x under create_graph
activation("threshold", "ThresholdBackward0",
           lambda g, x, y, thr, value: mask_link(g, lambda h: P.where(x <= thr, 0.0, h),
                                                 "ThresholdBackwardBackward0", x))
activation("hardshrink", "HardshrinkBackward0",
           lambda g, x, y, lambd: mask_link(
               g, lambda h: P.where((x >= -lambd) & (x <= lambd), 0.0, h),
               "HardshrinkBackwardBackward0", x))
activation("softshrink", "SoftshrinkBackward0",
           lambda g, x, y, lambd: mask_link(
               g, lambda h: P.where((x >= -lambd) & (x <= lambd), 0.0, h),
               "SoftshrinkBackwardBackward0", x))


# ---------------------------------------------------------------------------
# LU factorisation, torch.qr, nextafter
# ---------------------------------------------------------------------------
def _lu_factor_formula(out, A, *a, **k):
    """torch's lu_factor_ex_backward: the packed ``LU``'s gradient split into
    L's strictly lower and U's upper parts, then ``linalg.lu``'s backward."""
    LU, piv = out[0], out[1]
    if not _is_diff(LU):
        return
    sLU = save_out(LU, 0)
    pv = piv.detach()

    def bw(gLU, *rest):
        lu = sLU.unpack()
        m, n = lu.shape[-2], lu.shape[-1]
        kk = min(m, n)
        Pm, L, U = P.lu_unpack(lu, pv)
        gL = P.tril(gLU, -1).narrow(-1, 0, kk)
        gU = P.triu(gLU).narrow(-2, 0, kk)
        return (_lu_backward(gL, gU, Pm, L, U),)
    attach("LinalgLuFactorExBackward0", list(out), (A,), bw, multi=True, accepts_none=True)


formula("linalg_lu_factor")(_lu_factor_formula)
formula("linalg_lu_factor_ex")(_lu_factor_formula)


@formula("qr")
def _torch_qr_formula(out, A, some=True, **k):
    _linalg_qr(out, A, "reduced" if some else "complete")


@formula("nextafter")
def _nextafter(out, a, b, **k):
    # torch: the gradient passes to ``input`` except where input == other (the
    # result is ``other`` there: zero), ``other`` gets zeros
    if not _T(b):
        attach("NextafterBackward0", out, (a,), lambda g: (g,))
        return
    eq = (a == b).detach()
    attach("NextafterBackward0", out, (a, b),
           lambda g: (P.where(eq, 0, g), P.zeros_like(b)))



# the _ex forms of the linalg factorisations: the formula of the factorisation,
# on the first output (the info tensor is not differentiable)
def _ex_formula(base):
    def f(out, *args, **kwargs):
        return FORMULAS[base](out[0], *args, **kwargs)
    return f


FORMULAS["linalg_solve_ex"] = _ex_formula("linalg_solve")
FORMULAS["linalg_cholesky_ex"] = _ex_formula("linalg_cholesky")
