"""Backward formulas, one per differentiable op, written with ptcore ops
(so they run on every device and are themselves differentiable): the
helpers, the elementwise ops and the reductions here, the linear algebra in
``_formulas_linalg``, shape and indexing ops in ``_formulas_shape``,
nn.functional's fused activations in ``_formulas_nn`` (each adds to
``FORMULAS``; :mod:`ptcore.autograd._op_bodies` loads them all).

Each formula is called as ``formula(out, *args, **kwargs)`` right after the
op ran (with recording off) and attaches a node to ``out`` with
:func:`~ptcore.autograd._record.attach`.  Gradients are returned in the
broadcast shape and the op's compute dtype: the engine sums them back to
each input's shape and casts them to its dtype.
"""
import math

import ptcore as P
from ptcore._dispatch.device import cpu_kernel as _loop, has_loop as _has_loop
from ptcore._ops.kernels import _nn_kernels as _NNK
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch.dispatcher import on as _dispatch_on
from ptcore._tensor import _TensorBase
from ptcore.autograd._record import (attach, attach2, save, save_out, _is_diff, _Plain,
                                    mask_link, backward_name, not_implemented)
from ptcore.autograd.graph import SavedTensor, _hooks_on, node_class, ClosureSaved, \
    current_output_mask
from ptcore.autograd.grad_mode import _ever as _inference_ever
from ptcore._ops.pointwise import _threshold_backward
from ptcore._dispatch.python_dispatch import dispatch_as
from ptcore.autograd.grad_mode import _state
from ptcore.autograd.graph import _version_error

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


# the kernel as aten.threshold_backward, for dispatch modes and __torch_dispatch__ (a
# make_fx trace of a backward records it, a wrapper's gradient passes its handler)
_threshold_backward_op = dispatch_as("threshold_backward", _threshold_backward)


def _relu_grad(g, y):
    """ReLU's input gradient from its output ``y``: torch's
    ``threshold_backward(g, y, 0)`` (0 where y <= 0, even for a NaN or inf
    ``g``); ``where`` when the gradient itself is recorded (create_graph)."""
    if (_state.enabled and (g.requires_grad or y.requires_grad)) or _fw_levels() \
            or _vmap_frames():
        # (the kernel carries no tangents, and reads a batched tensor's memory)
        # (mask_link runs it unrecorded: the kernel, where no layer must see the
        # ops and neither tangents nor batches need the composite)
        return mask_link(g, lambda h: _threshold_backward(h, y, 0) if not (
            _state.enabled or _fw_levels() or _vmap_frames() or _dispatch_on[0])
            else P.where(y <= 0, 0, h), "ThresholdBackwardBackward0", y)
    if _dispatch_on[0]:
        return _threshold_backward_op(g, y, 0)
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
    if not _recorded(g, y):
        # one pass, torch's (g (1 - y)) y (bfloat16 in float32, rounded once)
        r = _NNK.sigmoid_backward(g, y)
        if r is not None:
            return r
    if _half_opmath(g):
        gf, yf = g.to(P.float32), y.to(P.float32)
        return (gf * (1 - yf) * yf).to(g.dtype)
    return g * _c(1 - y) * _c(y)          # (torch's order: (g (1 - y)) y)


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
    # the gradients this pass uses (torch's task_should_compute_output): a bias's
    # broadcast reduction is skipped under autograd.grad(out, x)
    m = current_output_mask()
    if m is None:
        return g, g
    return (g if m[0] else None), (g if m[1] else None)


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
            m = current_output_mask()
            return ((g if m is None or m[0] else None),
                    (g * _scalar_like(alpha) if m is None or m[1] else None))
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
                m = current_output_mask()       # (the gradients this pass uses)
                if m is None:
                    return g * b, g * a
                return (g * b if m[0] else None), (g * a if m[1] else None)
            attach2(_MulB, out, a, b, bw, ra, rb, _MUL_SAVED)      # (a, b): bw's cells
            return
    # other first: torch's order (saved_tensors_hooks see other, then self)
    sb = (SavedTensor(b) if tb else _Plain(b)) if ta and a._requires_grad else None
    sa = (SavedTensor(a) if ta else _Plain(a)) if tb and b._requires_grad else None
    if out.dtype.is_complex:
        def bw(g):
            m = current_output_mask()
            ga = g * _c(sb.unpack()) if sb is not None and (m is None or m[0]) else None
            gb = g * _c(sa.unpack()) if sa is not None and (m is None or m[1]) else None
            return ga, gb
    else:
        def bw(g):
            m = current_output_mask()
            ga = g * sb.unpack() if sb is not None and (m is None or m[0]) else None
            gb = g * sa.unpack() if sa is not None and (m is None or m[1]) else None
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
            elif b == 2:
                ga = g * _c(b * a)      # (a ** 1 is a copy of a: the same values, one op less)
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
    if not _T(min) and not _T(max):
        # number bounds (the common call): only self is saved and is the node's one
        # input; the gradient of _clamp_bw below, without the bounds' branches
        sx1 = save(x)

        def bw1(g):
            x = sx1.unpack()
            mask = (x >= min) if max is None else (x <= max) if min is None else \
                (x >= min) & (x <= max)
            return (P.where(mask, g, 0),)
        attach(node, out, (x,), bw1)
        return
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
        # bound fails gives 0, not NaN (g * mask would); one op, no inverted mask
        gx = P.where(mask, g, 0) if mask is not None else g
        glo = ghi = None
        # torch's clamp_backward_min_max: with both bounds, min gets no
        # gradient unless min < max, max gets it wherever max < min
        if _T(lo) and lo._requires_grad:
            glo = P.where((x < lo) if hi is None else (x < lo) & (lo < hi), g, 0)
        if _T(hi) and hi._requires_grad:
            ghi = P.where((x > hi) if lo is None else (x > hi) | (hi < lo), g, 0)
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
    if dim is None:
        # a 0-d gradient (keepdim: all-ones dims) expands to any shape directly
        def bw(g):
            return (g.expand(shape),)
    else:
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
    one-element one passes for a contiguous sample), and for a ``__torch_dispatch__``
    wrapper subclass (it holds no data for the kernels; its handler sees the
    composite's ops).  A dispatch mode over real tensors (a FLOP counter, compile's
    capture) sees the one-pass kernel, as eager runs it."""
    if _fw_levels() or _vmap_frames():
        return True
    if _dispatch_on[0] and any(_holds_no_data(t) for t in ts):
        return True
    return P.is_grad_enabled() and any(t is not None and t._requires_grad for t in ts)


def _holds_no_data(t):
    """A tensor of a wrapper subclass (``Tensor._make_wrapper_subclass``): elements
    but no memory."""
    if t is None or type(t) is P.Tensor:
        return False
    try:
        return t.numel() > 0 and t.data_ptr() == 0
    except RuntimeError:        # (a sparse tensor: no strided data either)
        return True


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
        if not P.is_grad_enabled():
            return (_cumprod_bw_zeros(x, y, g, d),)
        # zeros, recording for a higher derivative: O(n^2) over the scanned
        # dim, whose own derivative is cumprod's second (as torch)
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


def _cumprod_bw_zeros(x, y, g, d):
    """cumprod's gradient when ``x`` holds zeros, in O(n): with z1 the first
    zero of a line, grad_k = sum_{j >= k} g_j conj(y_j) / conj(x_k) before z1;
    at z1 the sum over j >= z1 of g_j times conj(the product up to j leaving
    out x_z1) (zero from the second zero on); 0 after z1."""
    zeros = x == 0
    seen = zeros.cumsum(d)
    before = seen == 0
    first = zeros & (seen == 1)
    head = _rev_cumsum(g * _c(y), d) / _c(P.where(before, x, 1))
    skip = P.where(first, P.ones_like(x), x).cumprod(d)
    at_first = (g * _c(skip)).masked_fill(before, 0).sum(d, keepdim=True)
    return P.where(before, head, P.where(first, at_first, P.zeros_like(head)))


@formula("logcumsumexp")
def _logcumsumexp(out, x, dim, **k):
    sx, so = save(x), save_out(out)
    d = dim % x.dim() if x.dim() else 0

    def bw(g):
        x, y = sx.unpack(), so.unpack()
        if x.dim() == 0 or x.numel() == 0:      # torch: the gradient itself
            return (g,)
        return (_lcse_bw(x, y, g, d),)
    attach("LogcumsumexpBackward0", out, (x,), bw)


def _rev_lcse(z, d):
    return z.flip(d).logcumsumexp(d).flip(d)


def _lcse_bw(x, y, g, d):
    """grad_i = sum_{j >= i} g_j exp(x_i - y_j) in O(n), as torch: the sums
    of the positive and of the negative g_j in log space, each a reversed
    logcumsumexp (complex: one, of log(conj g), conjugated back)."""
    if g.is_complex():
        return (_rev_lcse(g.conj().log() - y, d) + x).exp().conj()
    low = P.finfo(g.dtype).min
    log_abs = g.abs().log()
    pos = P.where(g > 0, log_abs, low)
    neg = P.where(g < 0, log_abs, low)
    return (_rev_lcse(pos - y, d) + x).exp() - (_rev_lcse(neg - y, d) + x).exp()
