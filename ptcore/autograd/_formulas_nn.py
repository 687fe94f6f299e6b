"""Backward formulas of nn.functional's fused activations: the forward is
one kernel; these attach PyTorch's node (GeluBackward0 ...) with a backward
written in differentiable ptcore ops, into :mod:`ptcore.autograd._formulas`'
``FORMULAS`` table."""
import math
import struct
import ptcore as P
from ptcore._ops.kernels import _nn_kernels as _NNK
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore.autograd._record import attach, save, save_out, _is_diff, mask_link, not_implemented
from ptcore._dispatch.dispatcher import on as _dispatch_on
from ptcore._dispatch.device import cpu_kernel as _loop, has_loop as _has_loop
from ptcore._ops.kernels import _activation as _act_kernels
from ptcore.autograd._formulas import FORMULAS, _opmath, _recorded


# ---------------------------------------------------------------------------
# nn.functional activations: the forward is one fused kernel; these attach
# PyTorch's node (GeluBackward0 ...) with a backward written in differentiable
# ops, so double backward works
# ---------------------------------------------------------------------------

def activation(name, node, df, need=("x",), opmath=True):
    """``FORMULAS[name](out, x, *params)``: node ``node`` whose backward is
    ``df(g, x, y, *params)``.  (``f.body_params``: the formula takes parameters as the
    op's body computes them, not the public call's.)"""
    body_params = df.__code__.co_argcount > 3
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
    f.body_params = body_params
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
        if not _recorded(g, x):
            r = _pointwise_kernel(_NNK.gelu_tanh_backward, g, x)
            if r is not None:              # one pass, the composite's operations
                return r
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
    if not _recorded(g, x):
        r = _pointwise_kernel(lambda g, x: _NNK.softplus_backward(g, x, beta, threshold), g, x)
        if r is not None:              # one pass, the composite's operations
            return r
    xb = x * beta
    xs = P.where(xb >= threshold, x.detach(), x)
    return P.where(xb > threshold, g, g * P.sigmoid(xs * beta))


def _elu_grad(g, x, y, negcoef, input_scale, poscoef):
    # torch: first derivative takes x <= 0, its derivative (double backward) x < 0
    if not _recorded(g, x):
        r = _pointwise_kernel(
            lambda g, x: _NNK.elu_backward(g, x, negcoef, input_scale, poscoef), g, x)
        if r is not None:              # one pass, the composite's operations
            return r
    xn = P.where(x < 0, x, x.detach())
    return P.where(x <= 0, g * (input_scale * negcoef) * P.exp(xn * input_scale), g * poscoef)


def _hardswish_grad(g, x, y):
    if not _recorded(g, x):
        r = _pointwise_kernel(_NNK.hardswish_backward, g, x)   # one vectorised pass, as ATen's
        if r is not None:
            return r
    xm = P.where((x > -3.0) & (x < 3.0), x, x.detach())     # torch: strict in double backward
    return P.where(x <= -3.0, g * 0.0, P.where(x < 3.0, g * (xm / 3.0 + 0.5), g))


activation("gelu", "GeluBackward0", _gelu_grad)
activation("silu", "SiluBackward0", _silu_grad)
activation("mish", "MishBackward0", _mish_grad)
activation("softplus", "SoftplusBackward0", _softplus_grad)
activation("elu", "EluBackward0", _elu_grad)
def _celu_grad(g, x, y, negcoef, input_scale, poscoef):
    # torch's CeluBackward0: elu_backward(grad, alpha, 1, 1.0 / alpha.toFloat()):
    # the input scale of the backward is 1 over alpha rounded to float32 (the
    # forward's is 1 / alpha in double); an alpha past float32's range is
    # torch's RuntimeError, one that rounds to 0 an infinite scale (C's 1 / 0)
    try:
        a32 = struct.unpack("f", struct.pack("f", negcoef))[0]
    except OverflowError:
        a32 = math.inf
    if math.isinf(a32) and math.isfinite(negcoef):
        raise RuntimeError(f"celu backward: alpha={negcoef!r} cannot be converted to type float "
                           "without overflow")
    scale = 1.0 / a32 if a32 != 0 else math.copysign(math.inf, a32)
    return _elu_grad(g, x, y, negcoef, scale, poscoef)


activation("celu", "CeluBackward0", _celu_grad)
def _leaky_relu_kernel(g, x, slope):
    """torch's leaky_relu_backward in one pass (ptcore._ops.kernels._activation)
    where nothing must see the ops (recording off, no dispatch layer) and it
    applies; else None."""
    if (not P.is_grad_enabled() and not _dispatch_on[0] and isinstance(slope, (int, float))
            and x.dtype in (P.float32, P.float64) and g.dtype == x.dtype
            and g.device == x.device and _has_loop("leaky_relu_backward", x.device.type)
            and tuple(g.shape) == tuple(x.shape)):
        # host tensors: one pass reading g as it is (sum's expanded gradient from a
        # filled row, no copy to a full tensor); None for other layouts and devices
        r = _NNK.leaky_relu_backward(g, x, float(slope))
        if r is not None:
            return r
        kernel = _loop("leaky_relu_backward", x.device, _act_kernels.leaky_relu_backward)
        return kernel(g.contiguous(), x.contiguous(),
                      P.empty(tuple(x.shape), dtype=x.dtype, device=x.device), slope)
    return None


def _leaky_relu_grad(g, x, y, slope):
    r = _leaky_relu_kernel(g, x, slope)
    if r is not None:
        return r

    def again(h):
        # (mask_link runs it unrecorded: the kernel also serves create_graph, but not
        # forward AD or vmap, whose tangents / batches the composite carries)
        r = None if _fw_levels() or _vmap_frames() else _leaky_relu_kernel(h, x, slope)
        return P.where(x > 0, h, h * slope) if r is None else r
    return mask_link(g, again, "LeakyReluBackwardBackward0", x)


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
