"""Convolutions: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``, ``unfold``, ``fold``.

Every operation is reduced to three spatial dims ``(D, H, W)`` (1-d and 2-d
inputs get leading spatial sizes of 1) and runs the im2col + GEMM kernels of
``ptcore._ops.kernels._conv``.  Each operation is one autograd ``Function`` whose
backward calls the same kernels (input gradient = col2im of ``W^T gy``,
weight gradient = ``gy cols(x)^T``, bias gradient = a sum), so a convolution
is a single node of the graph.
"""
import builtins
import math
import operator

import ptcore
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel, loop_for as _loop_for, \
    in_host_memory as _in_host_memory
from ptcore._ops import linalg as _linalg_ops
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import _cpp_name
from ptcore._ops._memory_format import _in_memory_format, _output_memory_format
import ptcore.nn.functional._conv_int as _conv_int

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "unfold", "fold",
]

# ---------------------------------------------------------------------------
# kernels and the autograd Function base
# ---------------------------------------------------------------------------
def _load_cpu_kernels():
    _linalg_ops._blas()          # SciPy's BLAS, with ptcore's thread count
    # lazy: the kernels cimport SciPy's BLAS (scipy.linalg, ~0.5 s): loaded on first use
    from ptcore._ops.kernels import _conv
    return _conv


def _kernels(device):
    """The CPU im2col/GEMM, fold and pooling kernels (``ptcore._ops.kernels._conv``);
    tensors on another device reach the kernels the operator table holds
    for conv/pool ops, through the dispatch point's device layer."""
    return _cpu_kernel("convolution and pooling", device, _load_cpu_kernels)()


def _int_loops(device):
    """The integer convolution loops on ``device`` (ptcore.nn.functional._conv_int's,
    in int64 with NumPy, on the CPU), or None where the device has none."""
    return _loop_for("integer convolution", device, _conv_int)


from ptcore.autograd import Function as _Function  # noqa: E402
from ptcore.autograd.function import output_mask as _output_mask  # noqa: E402
from ptcore.autograd.function import FunctionCtx as _FunctionCtx, connect as _connect  # noqa: E402
from ptcore.autograd.grad_mode import _state as _grad_state  # noqa: E402
from ptcore._dispatch.dispatcher import on as _layers_on  # noqa: E402


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------
_FLOATS = (ptcore.float32, ptcore.float64)
_LOW = (ptcore.float16, ptcore.bfloat16)


def _legacy(dt):
    return f"torch.{dt._legacy}Tensor"


def _size(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _tuple(v, n, name):
    """Expand an int or a sequence of ``n`` ints."""
    if isinstance(v, _TensorBase):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        vals = [operator.index(i) for i in v]
        if len(vals) == 1 and n != 1:
            vals = vals * n
        if len(vals) != n:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} values to match "
                f"the convolution dimensions, but got {name}={vals}")
        return tuple(vals)
    return (operator.index(v),) * n


def _to5(shape_tail, nd):
    """Pad a spatial tuple of ``nd`` entries to 3 with leading ``fill``."""
    return (1,) * (3 - nd) + tuple(shape_tail)


def _pad5(vals, nd, fill):
    return (fill,) * (3 - nd) + tuple(vals)


def _check_tensor(x, name, what):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{name}(): argument '{what}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _torch_picks_onednn(input, weight, groups):
    """Whether torch's CPU convolution takes its oneDNN path (ConvParams::use_mkldnn for
    float32; bfloat16 always): its dtype-mismatch message depends on it."""
    if input.dtype is ptcore.bfloat16:
        return True
    if input.dtype is not ptcore.float32:
        return False
    ks = tuple(weight.shape[2:])
    kh, kw = (ks[-2] if len(ks) > 1 else 1), ks[-1]
    return (groups > 1 or (kw > 3 and kh > 3) or input.shape[0] > 1
            or math.prod(input.shape[:4]) > 20480)


def _check_dtype(input, weight, bias, name, transposed=False, groups=1, dilated=False):
    # torch's CPU order: a convolution checks the bias first, a transposed one the weight
    bias_bad = bias is not None and bias.dtype != input.dtype
    if bias_bad and not transposed:
        _bias_dtype_error(input, bias)
    if weight.dtype != input.dtype:
        if _torch_picks_onednn(input, weight, groups):
            raise RuntimeError(
                f"Input type ({_legacy(input.dtype)}) and weight type ({_legacy(weight.dtype)}) "
                f"should be the same or input should be a MKLDNN tensor and weight is a dense "
                f"tensor")
        raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                           f"{weight.dtype._legacy}")
    if bias_bad:
        _bias_dtype_error(input, bias)
    if input.dtype not in _FLOATS and input.dtype not in _LOW and \
            not (_int_loops(input.device) is not None
                 and _conv_int.supports(input, transposed or dilated)):
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{input.dtype._legacy}'")
    for t in (weight, bias):
        if t is not None and t.device != input.device:
            raise RuntimeError(f"{name}: expected the weight and bias on the input's device "
                               f"{input.device}, got {t.device}")


def _bias_dtype_error(input, bias):
    raise RuntimeError(f"Input type ({_cpp_name(input.dtype)}) and bias type "
                       f"({_cpp_name(bias.dtype)}) should be the same")


def _compute_dtype(dt):
    return ptcore.float32 if dt in _LOW else dt


def _c5(t, shape, dt):
    """``t`` as a contiguous tensor of ``shape`` and dtype ``dt`` (no copy when possible)."""
    if t.dtype != dt:
        t = t.to(dt)
    return t.contiguous().reshape(shape)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------
def _prim(kind, a, b, bias, geo, out_shape):
    """Run one convolution primitive on natural-shaped ``(N, C, *spatial)``
    tensors; returns a tensor of ``out_shape`` in ``a``'s dtype.

    kind ``"fwd"``: y = conv(x=a, w=b) + bias; ``"bx"``: gx = input gradient
    of the conv for gy=a, w=b (+ bias: also the transposed convolution);
    ``"bw"``: gw = weight gradient for x=a, gy=b.  float16/bfloat16 compute in
    float32, as PyTorch's CPU kernels do."""
    nd, stride, pad, dil, groups = geo[:5]
    odt = a.dtype
    if not (odt.is_floating_point or odt.is_complex):     # integers: exact, in int64
        a5 = a.reshape(tuple(a.shape[:2]) + _to5(a.shape[2:], nd))
        b5 = b.reshape(tuple(b.shape[:2]) + _to5(b.shape[2:], nd))
        out5 = tuple(out_shape[:2]) + _to5(out_shape[2:], nd)
        K = _int_loops(a.device)
        run = K.conv_forward if kind == "fwd" else K.conv_transpose
        return run(a5, b5, bias, stride, pad, dil, groups, out5).reshape(tuple(out_shape))
    dt = _compute_dtype(odt)
    if dt is odt and not _in_host_memory(a) and a.numel() and b.numel():
        # a device's whole primitive in one call (optional; None: it declines)
        fast = getattr(_kernels(a.device), "conv_prim", None)
        out = fast(kind, a, b, bias, geo, out_shape) if fast is not None else None
        if out is not None:
            return out
    a5 = _c5(a, tuple(a.shape[:2]) + _to5(a.shape[2:], nd), dt)
    b5 = _c5(b, tuple(b.shape[:2]) + _to5(b.shape[2:], nd), dt)
    bias5 = None if bias is None else _c5(bias, (bias.shape[0],), dt)
    out5 = tuple(out_shape[:2]) + _to5(out_shape[2:], nd)
    out = ptcore.empty(out5, dtype=dt, device=a.device)
    if out.numel():
        if a5.numel() and b5.numel():
            K = _kernels(a.device)
            if kind == "fwd":
                K.conv_forward(a5, b5, bias5, out, tuple(b5.shape[2:]), stride, pad, dil, groups)
            elif kind == "bx":
                K.conv_backward_input(a5, b5, bias5, out, tuple(b5.shape[2:]), stride, pad, dil,
                                      groups)
            else:
                K.conv_backward_weight(a5, b5, out, out5[2:], stride, pad, dil, groups)
        elif bias5 is not None:
            out.copy_(bias5.reshape((1, out5[1], 1, 1, 1)).expand(out5))
        else:
            out.zero_()
    out = out.reshape(tuple(out_shape))
    return out if dt == odt else out.to(odt)


def _bias_grad(g):
    return g.sum([0] + list(range(2, g.dim())))


def _conv_memory_format(x, w, geo):
    """The layout of a convolution's output and gradients, as torch's CPU
    convolution: channels_last(_3d) when the input or the weight is; in 3-d
    only where torch picks its oneDNN kernel (float32, and a batch of more
    than one, groups, a kernel over 3x3 or a large input), its fallback
    returning contiguous tensors."""
    if geo[0] == 3 and not (
            x.dtype is ptcore.float32 and (x.shape[0] > 1 or geo[4] > 1
                                           or (w.shape[-1] > 3 and w.shape[-2] > 3)
                                           or x.shape[0] * x.shape[1] * x.shape[2] * x.shape[3]
                                           > 20480)):
        return ptcore.contiguous_format
    return _output_memory_format(x, w) if geo[0] != 1 else ptcore.contiguous_format


# The three primitives are each other's derivatives, so every gradient is
# itself differentiable (double backward, gradient penalties):
#   <conv(x, w), gy> = <x, bx(gy, w)> = <w, bw(x, gy)>.
class _ConvFwd(_Function):
    """y = conv(x, w) + b, of shape ``yshape``."""
    _backward_name = "ConvolutionBackward0"           # grad_fn as torch names it
    _backward_inputs = 3

    @staticmethod
    def forward(ctx, x, w, b, geo, yshape):
        ctx.save_for_backward(x, w)
        ctx.geo = geo
        return _in_memory_format(_prim("fwd", x, w, b, geo, yshape), _conv_memory_format(x, w, geo))

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved_tensors
        needs = _output_mask(ctx)
        fmt = _conv_memory_format(x, w, ctx.geo)    # torch's: the forward's, whatever gy's
        # (a backward that records nothing, seen by no layer: the primitives
        # without their Function's bookkeeping)
        plain = not _grad_state.enabled and not _layers_on[0]
        gx = gw = gb = None
        if needs[0]:
            gx = _in_memory_format(_bx(gy, w, None, ctx.geo, tuple(x.shape)) if plain
                                   else _ConvBwdX.apply(gy, w, None, ctx.geo, tuple(x.shape)), fmt)
        if needs[1]:
            gw = _in_memory_format(_bw(x, gy, ctx.geo, tuple(w.shape)) if plain
                                   else _ConvBwdW.apply(x, gy, ctx.geo, tuple(w.shape)), fmt)
        if needs[2]:
            gb = _bias_grad(gy)
        return gx, gw, gb, None, None


def record_forward(y, x, w, bias, geo):
    """Record ``y``, computed by a device's fast form of ``conv{1,2,3}d(x, w,
    bias)`` with the geometry ``geo`` (``_prepare_conv``'s), as the general
    path's ``_ConvFwd.apply`` records it (the same node, ctx and edges);
    the caller has checked that grad mode is on and an input requires
    grad.  Returns the recorded result."""
    ctx = _FunctionCtx()
    ctx.needs_input_grad = (x._requires_grad, w._requires_grad,
                            bias is not None and bias._requires_grad, False, False)
    ctx.save_for_backward(x, w)
    ctx.geo = geo
    return _connect(_ConvFwd, ctx, [x, w, bias, None, None], y)


def _bx(gy, w, b, geo, xshape):
    """The input gradient of conv(., w) for ``gy`` (+ b): ``_ConvBwdX``'s value."""
    return _in_memory_format(_prim("bx", gy, w, b, geo, xshape), _conv_memory_format(gy, w, geo))


def _bw(x, gy, geo, wshape):
    """The weight gradient of conv(x, .) for ``gy``: ``_ConvBwdW``'s value."""
    return _in_memory_format(_prim("bw", x, gy, None, geo, wshape), _output_memory_format(x, gy))


class _ConvBwdX(_Function):
    """gx = input gradient of conv(., w) for ``gy`` (+ b), of shape ``xshape``:
    also the transposed convolution of ``gy`` (its ``b`` is then the bias)."""

    @staticmethod
    def forward(ctx, gy, w, b, geo, xshape):
        ctx.save_for_backward(gy, w)
        ctx.geo = geo
        return _bx(gy, w, b, geo, xshape)

    @staticmethod
    def backward(ctx, g):
        gy, w = ctx.saved_tensors
        needs = _output_mask(ctx)
        ggy = _ConvFwd.apply(g, w, None, ctx.geo, tuple(gy.shape)) if needs[0] else None
        gw = _ConvBwdW.apply(g, gy, ctx.geo, tuple(w.shape)) if needs[1] else None
        gb = _bias_grad(g) if needs[2] else None
        return ggy, gw, gb, None, None


class _ConvTransposeFn(_ConvBwdX):
    """The transposed convolution: the input gradient of a convolution, named as
    torch's node for it."""
    _backward_name = "ConvolutionBackward0"
    _backward_inputs = 3


class _ConvBwdW(_Function):
    """gw = weight gradient of conv(x, .) for ``gy``, of shape ``wshape``."""

    @staticmethod
    def forward(ctx, x, gy, geo, wshape):
        ctx.save_for_backward(x, gy)
        ctx.geo = geo
        return _bw(x, gy, geo, wshape)

    @staticmethod
    def backward(ctx, g):
        x, gy = ctx.saved_tensors
        needs = _output_mask(ctx)
        gx = _ConvBwdX.apply(gy, g, None, ctx.geo, tuple(x.shape)) if needs[0] else None
        ggy = _ConvFwd.apply(x, g, None, ctx.geo, tuple(gy.shape)) if needs[1] else None
        return gx, ggy, None, None


def _check_kernel_size(ks):
    """PyTorch's error for a weight with an empty spatial dim (a 0-size kernel)."""
    if builtins.any(kk <= 0 for kk in ks):
        if len(ks) == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got: "
                               f"{ks[0]} x {ks[1]} x {ks[2]} (TxHxW)")
        kh, kw = (1, ks[0]) if len(ks) == 1 else ks[:2]
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kh} kernel_width: {kw}")


def _prepare_conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """Validate the arguments as PyTorch does; returns (batched input, geo, unbatched)."""
    _check_tensor(input, name, "input")
    _check_tensor(weight, name, "weight")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {_size(input)}")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = weight.dim() - 2
    stride = _tuple(stride, k, "stride")
    dilation = _tuple(dilation, k, "dilation")
    if k != nd or input.dim() != weight.dim():
        # PyTorch's message for a weight of the wrong rank
        if input.dim() != weight.dim():
            raise RuntimeError(
                f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional "
                f"weight {_size(weight)}, but got {input.dim()}-dimensional input of size "
                f"{_size(input)} instead")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and builtins.any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    else:
        padding = _tuple(padding, k, "padding")
        if builtins.any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
    if builtins.any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if builtins.any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    groups = operator.index(groups)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] == 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {_size(weight)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{_size(weight)}] instead")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_size(weight)}, expected input{_size(input)} "
            f"to have {weight.shape[1] * groups} channels, but got {input.shape[1]} channels "
            f"instead")
    ks = tuple(weight.shape[2:])
    _check_kernel_size(ks)
    spatial = tuple(input.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pad_l = pad_r = (0,) * k
        else:
            tot = [d * (kk - 1) for d, kk in zip(dilation, ks)]
            pad_l = tuple(t // 2 for t in tot)
            pad_r = tuple(t - t // 2 for t in tot)
    else:
        pad_l = pad_r = padding
    padded = [s + a + b for s, a, b in zip(spatial, pad_l, pad_r)]
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, ks)]
    if builtins.any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(str(p) for p in padded)}). "
            f"Kernel size: ({' x '.join(str(e) for e in eff)}). Kernel size can't be greater "
            f"than actual input size")
    if bias is not None:
        _check_tensor(bias, name, "bias")
        if bias.dim() != 1 or bias.shape[0] != weight.shape[0]:
            raise RuntimeError(
                f"Given weight of size {_size(weight)}, expected bias to be 1-dimensional with "
                f"{weight.shape[0]} elements, but got bias of size {_size(bias)} instead")
    _check_dtype(input, weight, bias, name, groups=groups,
                 dilated=builtins.any(d != 1 for d in dilation))
    osz = tuple((p - e) // s + 1 for p, e, s in zip(padded, eff, stride))
    geo = (nd, _pad5(_used_strides(stride, osz), nd, 1), _pad5(pad_l, nd, 0), _pad5(dilation, nd, 1), groups,
           _pad5(osz, nd, 1))
    return input, geo, unbatched


def _is_complex_conv(input, weight, bias):
    return (isinstance(input, ptcore.Tensor) and input.is_complex()
            and isinstance(weight, ptcore.Tensor) and weight.dtype == input.dtype
            and (bias is None or (isinstance(bias, ptcore.Tensor) and bias.dtype == input.dtype)))


def _complex_conv(conv, input, weight, bias, *args):
    """torch's complex convolution by three real ones (Gauss's trick):
    a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi, wr + wi, br + bi),
    conv(x, w, bias) = a - b + i (c - a - b); differentiable in all parts."""
    xr, xi = input.real, input.imag
    wr, wi = weight.real, weight.imag
    br = bi = None
    if bias is not None:
        br, bi = bias.real, bias.imag
    a = conv(xr, wr, br, *args)
    b = conv(xi, wi, None, *args)
    c = conv(xr + xi, wr + wi, None if bias is None else br + bi, *args)
    return ptcore.complex(a - b, c - a - b)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    if _is_complex_conv(input, weight, bias):
        return _complex_conv(_conv, input, weight, bias, stride, padding, dilation, groups, nd,
                             name)
    x, geo, unbatched = _prepare_conv(input, weight, bias, stride, padding, dilation, groups,
                                      nd, name)
    nd, osz = geo[0], geo[5]
    y = _ConvFwd.apply(x, weight, bias, geo, (x.shape[0], weight.shape[0]) + tuple(osz[3 - nd:]))
    return y.squeeze(0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over an input of shape ``(N, C_in, L)`` or ``(C_in, L)``.

    Parameters
    ----------
    input : Tensor
    weight : Tensor
        ``(C_out, C_in / groups, kW)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, padding, dilation : int or tuple
        ``padding`` may also be ``'valid'`` or ``'same'``.
    groups : int

    Returns
    -------
    Tensor
        ``(N, C_out, L_out)``.
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over an input of shape ``(N, C_in, H, W)`` or ``(C_in, H, W)``.

    Parameters
    ----------
    input : Tensor
    weight : Tensor
        ``(C_out, C_in / groups, kH, kW)``.
    bias : Tensor, optional
        ``(C_out,)``.
    stride, padding, dilation : int or tuple
        ``padding`` may also be ``'valid'`` or ``'same'``.
    groups : int

    Returns
    -------
    Tensor
        ``(N, C_out, H_out, W_out)``.

    Examples
    --------
    >>> import ptcore
    >>> import ptcore.nn.functional as F
    >>> F.conv2d(ptcore.ones(1, 1, 3, 3), ptcore.ones(1, 1, 2, 2)).shape
    ptcore.Size([1, 1, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over an input of shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    Parameters
    ----------
    input : Tensor
    weight : Tensor
        ``(C_out, C_in / groups, kD, kH, kW)``.
    bias : Tensor, optional
    stride, padding, dilation : int or tuple
        ``padding`` may also be ``'valid'`` or ``'same'``.
    groups : int

    Returns
    -------
    Tensor
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# ---------------------------------------------------------------------------
# transposed convolution
# ---------------------------------------------------------------------------
def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd,
                    name):
    if _is_complex_conv(input, weight, bias):
        return _complex_conv(_conv_transpose, input, weight, bias, stride, padding,
                             output_padding, groups, dilation, nd, name)
    _check_tensor(input, name, "input")
    _check_tensor(weight, name, "weight")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {_size(input)}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{_size(weight)}, but got {x.dim()}-dimensional input of size {_size(x)} instead")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    stride = _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    dilation = _tuple(dilation, nd, "dilation")
    output_padding = _tuple(output_padding, nd, "output_padding")
    groups = operator.index(groups)
    if builtins.any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if builtins.any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if builtins.any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if builtins.any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            names = ["depth", "height", "width"][3 - nd:]
            if nd == 1:
                names = ["width"]
            detail = " ".join(
                f"output_padding_{n}: {o}" for n, o in zip(names, output_padding)) + " " + \
                " ".join(f"stride_{n}: {s2}" for n, s2 in zip(names, stride)) + " " + \
                " ".join(f"dilation_{n}: {d2}" for n, d2 in zip(names, dilation))
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got {detail}")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{_size(weight)}] instead")
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {_size(weight)}, expected input{_size(x)} to "
            f"have {weight.shape[0]} channels, but got {x.shape[1]} channels instead")
    OC = weight.shape[1] * groups
    if bias is not None:
        _check_tensor(bias, name, "bias")
        if bias.dim() != 1 or bias.shape[0] != OC:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_size(weight)}, expected bias to be "
                f"1-dimensional with {OC} elements, but got bias of size {_size(bias)} instead")
    _check_dtype(x, weight, bias, name, transposed=True, groups=groups)
    ks = tuple(weight.shape[2:])
    _check_kernel_size(ks)
    osz = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                for i, s, p, d, k, op in zip(x.shape[2:], stride, padding, dilation, ks,
                                             output_padding))
    if builtins.any(o <= 0 for o in osz):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(str(i) for i in x.shape[2:])}). "
            f"Calculated output size per channel: ({' x '.join(str(o) for o in osz)}). "
            f"Output size is too small")
    if (groups == 1 and x.dtype in _FLOATS and builtins.all(i == 1 for i in x.shape[2:])
            and not builtins.any(padding) and not builtins.any(output_padding)
            and builtins.all(d == 1 for d in dilation) and x.numel() and weight.numel()):
        # a 1x..x1 input (a DCGAN generator's first layer): every output pixel
        # is one kernel tap, so the product is one GEMM, (N, C) @ (C, OC * k)
        y = ptcore.mm(x.reshape(x.shape[0], x.shape[1]), weight.reshape(weight.shape[0], -1))
        y = y.reshape((x.shape[0], OC) + ks)
        if bias is not None:
            y = y + bias.reshape((1, OC) + (1,) * nd)
        y = _in_memory_format(y, _output_memory_format(x, weight))
        return y.squeeze(0) if unbatched else y
    geo = (nd, _pad5(stride, nd, 1), _pad5(padding, nd, 0), _pad5(dilation, nd, 1), groups,
           _pad5(osz, nd, 1))
    y = _ConvTransposeFn.apply(x, weight, bias, geo,
                        (x.shape[0], weight.shape[1] * groups) + tuple(osz))
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-d transposed convolution ("deconvolution").

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, L)`` or ``(C_in, L)``.
    weight : Tensor
        ``(C_in, C_out / groups, kW)``.
    bias : Tensor, optional
    stride, padding, output_padding, dilation : int or tuple
    groups : int

    Returns
    -------
    Tensor
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-d transposed convolution ("deconvolution").

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, H, W)`` or ``(C_in, H, W)``.
    weight : Tensor
        ``(C_in, C_out / groups, kH, kW)``.
    bias : Tensor, optional
    stride, padding, output_padding, dilation : int or tuple
    groups : int

    Returns
    -------
    Tensor
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-d transposed convolution ("deconvolution").

    Parameters
    ----------
    input : Tensor
        ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.
    weight : Tensor
        ``(C_in, C_out / groups, kD, kH, kW)``.
    bias : Tensor, optional
    stride, padding, output_padding, dilation : int or tuple
    groups : int

    Returns
    -------
    Tensor
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


# ---------------------------------------------------------------------------
# unfold / fold
# ---------------------------------------------------------------------------
class _UnfoldFn(_Function):
    _backward_name = "Im2ColBackward0"           # grad_fn as torch names it
    _backward_inputs = 1

    @staticmethod
    def forward(ctx, x, geo):
        kernel, stride, pad, dil, osz = geo
        K = _kernels(x.device)
        dt = _compute_dtype(x.dtype)
        N, C = x.shape[0], x.shape[1]
        x5 = _c5(x, (N, C, 1) + tuple(x.shape[2:]), dt)
        L = osz[0] * osz[1] * osz[2]
        col = ptcore.empty((N, C * kernel[1] * kernel[2], L), dtype=dt, device=x.device)
        if col.numel():
            K.unfold_into(x5, col, osz, kernel, stride, pad, dil)
        ctx.geo = geo
        ctx.shapes = (x.shape, x.dtype)
        return col if dt == x.dtype else col.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        # fold and unfold are each other's adjoints: twice differentiable
        return _FoldFn.apply(g, ctx.geo, ctx.shapes[0]), None


def _fold_kernel(col, xshape, kernel, stride, pad, dil, osz, dt):
    K = _kernels(col.device)
    N, C = xshape[0], xshape[1]
    col = _c5(col, tuple(col.shape), dt)
    x5 = ptcore.empty((N, C, 1) + tuple(xshape[2:]), dtype=dt, device=col.device)
    if x5.numel():
        if col.numel():
            K.fold_into(col, x5, osz, kernel, stride, pad, dil)
        else:
            x5.zero_()
    return x5.reshape(xshape)


class _FoldFn(_Function):
    _backward_name = "Col2ImBackward0"
    _backward_inputs = 1

    @staticmethod
    def forward(ctx, col, geo, xshape):
        kernel, stride, pad, dil, osz = geo
        dt = _compute_dtype(col.dtype)
        ctx.geo = geo
        ctx.shapes = (col.shape, col.dtype)
        out = _fold_kernel(col, xshape, kernel, stride, pad, dil, osz, dt)
        return out if dt == col.dtype else out.to(col.dtype)

    @staticmethod
    def backward(ctx, g):
        return _UnfoldFn.apply(g, ctx.geo), None, None


def _pair2(v, name):
    """An int, or a sequence of exactly 2 ints, as torch's im2col/col2im check them
    (a 1-element sequence is not broadcast there, as it is for a convolution)."""
    if isinstance(v, (list, tuple)) and len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return _tuple(v, 2, name)


def _fold_args(kernel_size, dilation, padding, stride):
    k = _pair2(kernel_size, "kernel_size")
    d = _pair2(dilation, "dilation")
    p = _pair2(padding, "padding")
    s = _pair2(stride, "stride")
    if builtins.any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if builtins.any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if builtins.any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if builtins.any(v < 0 for v in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def _used_strides(stride, osz):
    """The strides handed to the kernels: one over a dimension with a single output
    position is never applied, so it becomes 1 (a stride near 2**63 would overflow the
    kernels' int64 index arithmetic, which rounds extents up by it)."""
    return tuple(1 if o == 1 else st for st, o in zip(stride, osz))


def _blocks(size, k, d, p, s):
    return tuple((size[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks (im2col): ``(N, C, H, W)`` -> ``(N, C*kH*kW, L)``.

    Parameters
    ----------
    input : Tensor
        4-d (batched) or 3-d (unbatched) input.
    kernel_size, dilation, padding, stride : int or tuple

    Returns
    -------
    Tensor
    """
    _check_tensor(input, "unfold", "input")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.dim() < 3:
        # torch's im2col reads the sizes of dims 1 and 2 before checking the rank
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{input.dim()}, "
            f"{input.dim() - 1}], but got {input.dim()})")
    if input.dim() > 4:
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {_size(input)}")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    if x.dtype == ptcore.bool:
        # torch's im2col takes bool (a gather with False padding): exact through float32
        return unfold(input.to(ptcore.float32), kernel_size, dilation, padding,
                      stride).to(ptcore.bool)
    if x.dtype.is_complex:
        # torch's im2col takes complex (a gather): the real and imaginary planes apart
        return ptcore.complex(*(unfold(part, kernel_size, dilation, padding, stride)
                                for part in (input.real, input.imag)))
    if x.dtype not in _FLOATS and x.dtype not in _LOW:
        raise NotImplementedError(
            f"\"im2col\" not implemented for '{x.dtype._legacy}'")
    H, W = x.shape[2], x.shape[3]
    if x.shape[1] == 0 or (x.shape[0] == 0 and False):
        raise RuntimeError(
            f"Expected non-empty 3D or 4D input tensor, but got input of size {_size(input)}")
    oh, ow = _blocks((H, W), k, d, p, s)
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({H}, {W}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array "
            f"of sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    geo = ((1,) + k, (1,) + _used_strides(s, (oh, ow)), (0,) + p, (1,) + d, (1, oh, ow))
    col = _UnfoldFn.apply(x, geo)
    return col.squeeze(0) if unbatched else col


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor (col2im, overlaps summed).

    Parameters
    ----------
    input : Tensor
        ``(N, C*kH*kW, L)`` or ``(C*kH*kW, L)``.
    output_size : int or tuple
        Spatial size ``(H, W)`` of the output.
    kernel_size, dilation, padding, stride : int or tuple

    Returns
    -------
    Tensor
        ``(N, C, H, W)``.
    """
    _check_tensor(input, "fold", "input")
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {_size(input)}")
    osize = _pair2(output_size, "output_size")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    unbatched = input.dim() == 2
    x = input.unsqueeze(0) if unbatched else input
    if x.dtype == ptcore.bool:
        # torch's col2im takes bool (overlaps or-ed): exact through float32
        return fold(input.to(ptcore.float32), output_size, kernel_size, dilation, padding,
                    stride).to(ptcore.bool)
    if x.dtype.is_complex:      # torch's col2im takes complex (sums): planes apart
        return ptcore.complex(*(fold(part, output_size, kernel_size, dilation, padding, stride)
                                for part in (input.real, input.imag)))
    if x.dtype not in _FLOATS and x.dtype not in _LOW:
        raise NotImplementedError(
            f"\"col2im\" not implemented for '{x.dtype._legacy}'")
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size=({k[0]}, {k[1]})")
    oh, ow = _blocks(osize, k, d, p, s)
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given output_size=({osize[0]}, {osize[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"calculated shape of the array of sliding blocks as ({oh}, {ow}), but its "
            f"components must be at least one.")
    if x.shape[2] != oh * ow:
        raise RuntimeError(
            f"Given output_size=({osize[0]}, {osize[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {oh} * {ow} = {oh * ow}, but got input.size(2)={x.shape[2]}.")
    geo = ((1,) + k, (1,) + _used_strides(s, (oh, ow)), (0,) + p, (1,) + d, (1, oh, ow))
    xshape = (x.shape[0], x.shape[1] // kk) + osize
    out = _FoldFn.apply(x, geo, xshape)
    return out.squeeze(0) if unbatched else out
