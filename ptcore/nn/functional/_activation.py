"""Activation functions of ``ptcore.nn.functional``.

Each activation uses ptcore's fused float kernel when no gradient is being
recorded, and otherwise a composition of ordinary differentiable ptcore ops
(so autograd derives the gradient).
"""

import ptcore
from ptcore._ops.kernels import _activation as _act_kernels
from ptcore._ops.kernels import _nn_kernels as _nn_kernels
from ptcore._ops import pointwise as _ew
from ptcore._ops.reduction import _get_softmax_dim
from ptcore._ops._out import check_out_grad, copy_out_same_dtype, check_written, check_out_arg
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import bool_param, number_arg, plain_number, real_param, scalar_param, \
    strict_int_param
from ptcore.autograd._formulas import FORMULAS as _FORMULAS, _recorded
from ptcore.autograd.grad_mode import _restore_mode, _set_mode, is_grad_enabled as _is_grad_enabled
from ptcore.autograd._record import check_inplace as _check_inplace
from ptcore.autograd._record import _check_inference_write
from ptcore.autograd._record import name_grad_fn as _name_grad_fn, one_node as _one_node
from ptcore.autograd.function import Function, output_mask
from ptcore._dispatch.dispatcher import on as _dispatch_on
from ptcore._dispatch.device import loop_for as _loop_for

__all__ = [
    "threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "elu", "elu_",
    "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_",
    "glu", "gelu", "logsigmoid", "hardshrink", "softshrink", "tanhshrink", "softsign", "softplus",
    "softmin", "softmax", "log_softmax", "tanh", "sigmoid", "hardsigmoid", "silu", "mish",
    "hardswish",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check(input, name):
    if not isinstance(input, _TensorBase):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")


def _needs_grad(t):
    return t.requires_grad and _is_grad_enabled()


def _fused(name, input, forward, *params):
    """``forward()`` (one fused kernel); when ``input`` needs grad, the result
    gets PyTorch's node through the activation formula ``name``."""
    if not _needs_grad(input):
        return forward()
    prev = _set_mode(False)         # (no_grad()'s switch, without its object)
    try:
        out = forward()
    finally:
        _restore_mode(prev)
    _FORMULAS[name](out, input, *params)
    return out


def _band_loop(name, input):
    """The one-kernel loop of band op ``name`` (threshold, hardshrink,
    softshrink, prelu) that ``input``'s device registered, for a float
    tensor; None for the composite (the CPU's, which its fuser makes one
    pass)."""
    if not input.dtype.is_floating_point:
        return None
    return _loop_for(name, input.device, None)


def _float_only(input, name):
    dt = input.dtype
    if not (dt.is_floating_point):
        raise NotImplementedError(f'"{name}" not implemented for \'{dt._legacy}\'')


def _assign(input, result, overlap_ok=False):
    # in-place variants: write the result into ``input`` and return it
    if overlap_ok:
        # an expanded ``input`` (torch's threshold_ skips its overlap check: the
        # op is elementwise, each memory location gets one value): written
        # through one element of each stride-0 dim
        one = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                    for n, st in zip(input.shape, input.stride()))
        if any(k.stop == 1 for k in one):
            input[one].copy_(result[one])
            return input
    input.copy_(result)
    return input


_NEG_SLOPE_MSG = {
    "leaky_relu": "In-place leakyReLu backward calculation is triggered with a negative slope which "
                  "is not supported. This is caused by calling in-place forward function with a "
                  "negative slope, please call out-of-place version instead.",
    "elu": "In-place elu backward calculation is triggered with a negative slope which is not "
           "supported. This is caused by calling in-place forward function with a negative slope, "
           "please call out-of-place version instead.",
}


_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


def _inplace(input, compute, negative_slope_of=None, overlap_ok=False):
    """Write ``compute(x)`` into ``input`` and return ``input``.

    Under autograd the activation's node must not save ``input`` itself (the
    write bumps its version and backward would refuse it), so it is computed
    from a copy of the original values, whose gradient flows back to the
    tensor ``input`` held before the write -- PyTorch's gradients for every
    in-place activation.  ``negative_slope_of`` names the formula (leaky_relu,
    elu) whose in-place backward PyTorch refuses for a negative slope: as
    PyTorch, the refusal comes when the gradient is computed.  ``overlap_ok``:
    an ``input`` with stride-0 dims may be written (threshold_, as torch's).
    """
    if not _needs_grad(input):
        return _assign(input, compute(input), overlap_ok)
    if input.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    _assign(input, compute(input.clone()), overlap_ok)
    msg = None
    if negative_slope_of is not None:
        msg = _NEG_SLOPE_MSG[negative_slope_of]
    elif overlap_ok and any(st == 0 and n > 1 for n, st in zip(input.shape, input.stride())):
        # torch's backward through the write into expanded memory (its CopySlices
        # over the expanded view) refuses the overlap then
        msg = _OVERLAP_MSG
    if msg is not None:

        def _refuse(grad):
            raise RuntimeError(msg)
        input.register_hook(_refuse)
    return input


def _inplace_direct(input):
    """Whether an in-place activation may write ``input`` directly and attach
    its node saving the result (PyTorch's ReluBackward0 / LeakyReluBackward1)
    instead of computing from a clone: a contiguous float32/float64 tensor
    that owns its storage (not a view), with no dispatch layer (vmap, forward
    AD, __torch_function__ ...) active."""
    return (input.dtype in _LEAKY_DTYPES and input._base is None and not _dispatch_on[0]
            and input.is_contiguous())


def _inplace_node(input, name, *params):
    """After ``input`` was overwritten in place: give it the node of formula
    ``name`` (edges to its previous history, the result saved)."""
    if _needs_grad(input):
        _FORMULAS[name](input, input, *params)
    return input


# -- ReLU family ---------------------------------------------------------------------


def threshold(input, threshold, value, inplace=False):
    """``y = x if x > threshold else value``."""
    _check(input, "threshold")
    threshold = scalar_param(threshold, "threshold", "threshold", 2)
    value = scalar_param(value, "threshold", "value", 3)
    if inplace:
        return _inplace(input, lambda x: globals()["threshold"](x, threshold, value),
                        overlap_ok=True)
    if isinstance(value, _TensorBase) or isinstance(threshold, _TensorBase):
        return _name_grad_fn(ptcore.where(input <= threshold, value, input), "ThresholdBackward0",
                             input)
    # as PyTorch: x <= threshold ? value : x, so NaN stays NaN
    loop = _band_loop("threshold", input)
    if loop is not None:
        return _fused("threshold", input, lambda: loop(input, threshold, value), threshold, value)
    return _fused("threshold", input,
                  lambda: ptcore.where(input <= threshold, ptcore.full_like(input, value), input),
                  threshold, value)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def relu(input, inplace=False):
    """``max(x, 0)`` elementwise."""
    _check(input, "relu")
    if inplace:
        return relu_(input)
    return ptcore.relu(input)


def relu_(input):
    """In-place :func:`relu`."""
    if _needs_grad(input) and _inplace_direct(input):
        _check_inplace(input)
        with ptcore.no_grad():
            input.relu_()
        return _inplace_node(input, "relu")
    return input.relu_()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]``."""
    _check(input, "hardtanh")
    if min_val > max_val:           # (torch's Python check, before its parser's)
        raise ValueError("min_val cannot be greater than max_val")
    min_val = number_arg(plain_number(min_val, "hardtanh", "min_val", 2))
    max_val = number_arg(plain_number(max_val, "hardtanh", "max_val", 3))
    for pos, (name, v) in enumerate((("min_val", min_val), ("max_val", max_val)), 2):
        if isinstance(v, _TensorBase):
            raise TypeError(f"hardtanh(): argument '{name}' (position {pos}) must be Number, not Tensor")
    if input.dtype is ptcore.bool:
        raise RuntimeError("\"hardtanh\" not implemented for 'Bool'")
    if input.dtype is ptcore.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        min_val, max_val = int(min_val), int(max_val)   # (bounds in the input's dtype)
    if inplace:
        return input.clamp_(min_val, max_val)
    if not input.dtype.is_floating_point:
        return ptcore.clamp(input, min_val, max_val)
    return _fused("hardtanh", input, lambda: ptcore.clamp(input, min_val, max_val),
                  float(min_val), float(max_val))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _elu_impl(input, negcoef, input_scale, poscoef, name, inplace):
    _check(input, name)
    _float_only(input, name)
    if inplace:
        return _inplace(input, lambda x: _elu_impl(x, negcoef, input_scale, poscoef, name, False),
                        "elu" if negcoef < 0 else None)
    return _fused("celu" if name == "celu" else "elu", input,
                  lambda: _ew._elu(input, negcoef, input_scale, poscoef), negcoef, input_scale, poscoef)


def elu(input, alpha=1.0, inplace=False):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""
    return _elu_impl(input, float(scalar_param(alpha, "elu", "alpha", 2)), 1.0, 1.0, "elu", inplace)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return elu(input, alpha, True)


def selu(input, inplace=False):
    """``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` with SELU's constants."""
    return _elu_impl(input, _SELU_ALPHA * _SELU_SCALE, 1.0, _SELU_SCALE, "selu", inplace)


def selu_(input):
    """In-place :func:`selu`."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    alpha = float(scalar_param(alpha, "celu", "alpha", 2))
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu_impl(input, alpha, 1.0 / alpha, 1.0, "celu", inplace)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, True)


def leaky_relu(input, negative_slope=0.01, inplace=False, _formula="leaky_relu"):
    """``x if x > 0 else negative_slope * x``."""
    _check(input, "leaky_relu")
    _float_only(input, "leaky_relu")
    slope = real_param(negative_slope, "leaky_relu_" if inplace else "leaky_relu", "negative_slope", 2)
    fast = _loop_for("leaky_relu_forward", input.device, _act_kernels.leaky_relu_forward)
    if inplace and slope >= 0 and _formula == "leaky_relu" and fast is not None and \
            _inplace_direct(input):
        # written in place by the loop (no clone, no copy back)
        _check_inference_write(input)
        if _needs_grad(input):
            _check_inplace(input)
        fast(input, input, slope)
        input._bump_version()
        return _inplace_node(input, "leaky_relu_", slope)
    if inplace:
        return _inplace(input, lambda x: leaky_relu(x, slope, False, _formula),
                        "leaky_relu" if slope < 0 else None)
    return _fused(_formula, input, lambda: _leaky_relu_values(input, slope), slope)


_LEAKY_DTYPES = (ptcore.float32, ptcore.float64)


def _leaky_relu_values(input, slope):
    # contiguous float32/float64: the branch-free loop (ptcore._ops.kernels._activation
    # on the CPU); everything else the generic elementwise one
    fast = _loop_for("leaky_relu_forward", input.device, _act_kernels.leaky_relu_forward)
    if fast is not None and input.dtype in _LEAKY_DTYPES and input.is_contiguous():
        out = ptcore.empty(tuple(input.shape), dtype=input.dtype, device=input.device)
        return fast(input, out, slope)
    return _ew._leaky_relu(input, slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


class _PreluKernel(Function):
    """``where(x > 0, x, x * w)`` for a ``w`` shaped to broadcast, as one node (torch's
    ``PreluKernelBackward0``) whose next functions are the input's and the shaped weight's
    (a View of the parameter), as torch's; the backward is written with ptcore ops, so it is
    differentiable again."""
    _backward_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        loop = _band_loop("prelu", x) if x.device == w.device else None
        return loop(x, w) if loop is not None else ptcore.where(x > 0, x, x * w)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        pos = x > 0
        needs = output_mask(ctx)
        gx = ptcore.where(pos, g, g * w) if needs[0] else None
        gw = ptcore.where(pos, 0.0, g * x).sum_to_size(w.shape) if needs[1] else None
        return gx, gw


def prelu(input, weight):
    """``x if x > 0 else weight * x`` with a learnable per-channel ``weight`` (channel dim 1)."""
    _check(input, "prelu")
    if not isinstance(weight, _TensorBase):
        raise TypeError(f"prelu(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dim() == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                f"and channel size = {channels}.")
    # as torch: the weight viewed with the input's number of dims, its values along dim 1
    w = weight
    if input.dim() != weight.dim():
        w = weight.reshape([1, n] + [1] * (input.dim() - 2) if input.dim() > 1
                           else [1] * input.dim())
    if weight.dtype != input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._legacy} and "
                           f"{weight.dtype._legacy}")
    if not _dispatch_on[0]:
        return _PreluKernel.apply(input, w)
    return _name_grad_fn(ptcore.where(input > 0, input, input * w), "PreluKernelBackward0", input)


def _rrelu(input, lower, upper, training, inplace, generator):
    _check(input, "rrelu")
    lower = scalar_param(lower, "rrelu", "lower", 2)
    upper = scalar_param(upper, "rrelu", "upper", 3)
    bool_param(training, "rrelu", "training", 4)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace, _formula="rrelu_eval")
    with ptcore.no_grad():
        slope = ptcore.empty_like(input).uniform_(lower, upper, generator=generator)
    if inplace:
        return _inplace(input, lambda x: ptcore.where(x >= 0, x, x * slope))
    return ptcore.where(input >= 0, input, input * slope)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: slope ~ U(lower, upper) in training, (lower+upper)/2 otherwise."""
    return _rrelu(input, lower, upper, training, inplace, None)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place :func:`rrelu` (``generator`` drives the slopes, as ``torch.rrelu_``)."""
    return _rrelu(input, lower, upper, training, True, generator)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``input`` along ``dim``."""
    _check(input, "glu")
    dim = strict_int_param(dim, "glu", "dim", 2)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.dim() if dim < 0 else dim
    size = input.shape[d]
    if size % 2 != 0:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {size}")
    _float_only(input, "glu_cpu")
    half = size // 2

    def compute():
        if not _recorded(input):
            r = _nn_kernels.glu_forward(input, d)     # one pass, the same values
            if r is not None:
                return r
        return input.narrow(d, 0, half) * ptcore.sigmoid(input.narrow(d, half, half))

    def backward(g, x):        # torch's glu_backward, in differentiable ops
        if not _recorded(g, x):
            r = _nn_kernels.glu_backward(g, x, d)     # one pass (its operations and order)
            if r is not None:
                return (r,)
        a, b = x.narrow(d, 0, half), x.narrow(d, half, half)
        s = ptcore.sigmoid(b)
        return (ptcore.cat([s * g, (1 - s) * s * a * g], d),)   # (torch's order)
    # one node over the input, as torch's kernel (not the halves' slices, sigmoid and mul)
    return _one_node("GluBackward0", compute, (input,), backward, save_inputs=True)


def gelu(input, *, approximate="none", out=None):
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh approximation
    (``out=`` as torch's ``torch._C._nn.gelu``, which it is)."""
    _check(input, "gelu")
    check_out_arg(out, "gelu")
    check_written(out, input)           # (torch's TensorIterator: the memory first)
    check_out_grad("gelu", out, input)
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    r = _fused("gelu", input, lambda: _ew._gelu(input) if approximate == "none"
               else _ew._gelu_tanh(input), approximate)
    return r if out is None else copy_out_same_dtype(out, r)


def softplus(input, beta=1.0, threshold=20.0, *, out=None):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""
    _check(input, "softplus")
    check_out_arg(out, "softplus")
    check_written(out, input)           # (torch's TensorIterator: the memory first)
    check_out_grad("softplus", out, input)
    _float_only(input, "softplus")
    beta = float(scalar_param(beta, "softplus", "beta", 2))
    threshold = float(scalar_param(threshold, "softplus", "threshold", 3))
    r = _fused("softplus", input, lambda: _ew._softplus(input, beta, threshold), beta, threshold)
    return r if out is None else copy_out_same_dtype(out, r)


def logsigmoid(input, *, out=None):
    """``log(sigmoid(x))`` computed stably."""
    _check(input, "logsigmoid")
    check_out_grad("log_sigmoid_forward", out, input)
    _float_only(input, "log_sigmoid_forward")
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))
    def forward():
        x = input.float() if input.dtype in (ptcore.float16, ptcore.bfloat16) else input
        r = ptcore.clamp_max(x, 0.0) - ptcore.log1p(ptcore.exp(-ptcore.abs(x)))
        return r.to(input.dtype)       # float16/bfloat16: the float32 formula rounded once
    r = _fused("logsigmoid", input, forward)
    return r if out is None else copy_out_same_dtype(out, r)


def hardshrink(input, lambd=0.5, *, out=None):
    """``x if |x| > lambd else 0`` (``out=`` as ``torch.hardshrink``, which it is)."""
    _check(input, "hardshrink")
    check_out_arg(out, "hardshrink")
    check_written(out, input)           # (torch's TensorIterator: before the dtype checks)
    _float_only(input, "hardshrink_cpu")
    check_out_grad("hardshrink", out, input)
    lambd = scalar_param(lambd, "hardshrink", "lambd", 2)
    # as PyTorch: (x >= -lambd and x <= lambd) ? 0 : x, so NaN stays NaN
    loop = _band_loop("hardshrink", input)
    if loop is not None:
        r = _fused("hardshrink", input, lambda: loop(input, lambd), lambd)
    else:
        r = _fused("hardshrink", input,
                   lambda: ptcore.where((input >= -lambd) & (input <= lambd),
                                        ptcore.zeros_like(input), input), lambd)
    return r if out is None else copy_out_same_dtype(out, r)


def softshrink(input, lambd=0.5, *, out=None):
    """``x - lambd if x > lambd, x + lambd if x < -lambd, else 0``."""
    _check(input, "softshrink")
    check_out_grad("softshrink", out, input)
    _float_only(input, "softshrink_check")
    lambd = scalar_param(lambd, "softshrink", "lambd", 2)
    if lambd is True or lambd is False:
        lambd = int(lambd)          # (a bool Scalar is its 0/1 value, as torch's kernel reads it)
    if lambd < 0:
        raise RuntimeError(
            f"lambda must be greater or equal to 0, but found to be {lambd}.")
    check_out_arg(out, "softshrink")
    check_written(out, input)           # (torch's TensorIterator, after its lambda check)
    # as PyTorch: NaN stays NaN, the middle branch is +0
    def forward():
        mid = ptcore.where(input != input, input, ptcore.zeros_like(input))
        return ptcore.where(input > lambd, input - lambd,
                            ptcore.where(input < -lambd, input + lambd, mid))
    loop = _band_loop("softshrink", input)
    r = _fused("softshrink", input, forward if loop is None else lambda: loop(input, lambd), lambd)
    return r if out is None else copy_out_same_dtype(out, r)


def tanhshrink(input):
    """``x - tanh(x)``."""
    _check(input, "tanhshrink")
    return input - ptcore.tanh(input)


def softsign(input):
    """``x / (1 + |x|)``."""
    _check(input, "softsign")
    return input / (input.abs() + 1)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim``."""
    _check(input, "softmax")
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    # (no dtype keyword when None: the call without keywords is the cheaper one)
    return ptcore.softmax(input, dim) if dtype is None else ptcore.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax of ``-input`` along ``dim``."""
    _check(input, "softmin")
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    # (no dtype keyword when None: the call without keywords is the cheaper one)
    return ptcore.softmax(-input, dim) if dtype is None else ptcore.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log of the softmax along ``dim``."""
    _check(input, "log_softmax")
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    # (no dtype keyword when None: the call without keywords is the cheaper one)
    return ptcore.log_softmax(input, dim) if dtype is None else ptcore.log_softmax(input, dim, dtype=dtype)


def tanh(input):
    """``tanh(x)``."""
    return ptcore.tanh(input)


def sigmoid(input):
    """``1 / (1 + exp(-x))``."""
    return ptcore.sigmoid(input)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    _check(input, "hardsigmoid")
    _float_only(input, "hardsigmoid")
    if inplace:
        return _inplace(input, lambda x: hardsigmoid(x))
    return _fused("hardsigmoid", input, lambda: _ew._hardsigmoid(input))


def _complex_silu(input, inplace):
    """Complex :func:`silu` (any device): torch computes it forward only."""
    if input.requires_grad and ptcore.is_grad_enabled():
        raise RuntimeError("silu does not support automatic differentiation for outputs "
                           "with complex dtype.")
    with ptcore.no_grad():
        out = input * ptcore.sigmoid(input)
    return _assign(input, out) if inplace else out


def silu(input, inplace=False):
    """``x * sigmoid(x)``."""
    _check(input, "silu")
    if input.dtype.is_complex:
        return _complex_silu(input, inplace)
    _float_only(input, "silu")
    if inplace:
        return _inplace(input, lambda x: silu(x))
    return _fused("silu", input, lambda: _ew._silu(input))


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    _check(input, "mish")
    _float_only(input, "mish")
    if inplace:
        return _inplace(input, lambda x: mish(x))
    return _fused("mish", input, lambda: _ew._mish(input))


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``."""
    _check(input, "hardswish")
    _float_only(input, "hardswish")
    if inplace:
        return _inplace(input, lambda x: hardswish(x))
    return _fused("hardswish", input, lambda: _hardswish_values(input))


def _hardswish_values(input):
    # contiguous float32/float64 host tensors: one vector pass (ATen's bits);
    # everything else the generic elementwise loop
    if not _dispatch_on[0] and input.is_contiguous():
        r = _nn_kernels.hardswish_forward(input)
        if r is not None:
            return r
    return _ew._hardswish(input)
