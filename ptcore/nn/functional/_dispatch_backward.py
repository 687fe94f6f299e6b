"""Backward formulas of ``nn.functional``'s ops (linear, convolutions, norms, pooling,
losses, attention, interpolate, dropout's decomposition) for autograd
around a ``__torch_dispatch__`` handler (:mod:`ptcore.autograd._dispatch_backward`):
these ops record their autograd inside their kernel, so when a dispatch mode or a
tensor subclass computes them itself, autograd records them with these formulas,
written with ptcore ops the handler then sees (a convolution's backward as torch's one
``aten.convolution_backward``)."""
import sys

import ptcore
from ptcore._dispatch.python_dispatch import dispatch_as
from ptcore.autograd._dispatch_backward import attach, autograd_formula, decompose, register
from ptcore.autograd.graph import _sum_to
from ptcore.nn.functional import _conv

__all__ = []


def _needs(t):
    return t is not None and t._requires_grad


@register("aten.linear.default")
def _linear(out, v):
    x, w, b = v["input"], v["weight"], v["bias"]
    nx, nw = _needs(x), _needs(w)
    xshape = tuple(x.shape)

    def bw(g):
        gx = gw = gb = None
        if w.dim() == 2:
            g2 = g if g.dim() == 2 else g.reshape(-1, w.shape[0])
            if nx:
                gx = g2.mm(w) if x.dim() >= 2 else g.matmul(w)
                if tuple(gx.shape) != xshape:
                    gx = gx.reshape(xshape)
            if nw:
                x2 = x if x.dim() == 2 else x.reshape(-1, w.shape[1])
                gw = g2.t().mm(x2)
        else:                   # a vector weight: out = x @ w
            if nx:
                gx = g.unsqueeze(-1) * w
            if nw:
                gw = (g.unsqueeze(-1) * x).reshape(-1, w.shape[0]).sum(0)
        if _needs(b):
            gb = _sum_to(g, tuple(b.shape))
        return gx, gw, gb
    attach("AddmmBackward0" if x.dim() == 2 and b is not None else "MmBackward0"
           if b is None else "LinearBackward0", out, (x, w, b), bw)


def _conv_backward_kernel(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    """``aten.convolution_backward`` of a (not transposed) convolution, on tensors with
    data: the convolution's own backward, through ptcore's autograd."""
    conv = (_conv.conv1d, _conv.conv2d, _conv.conv3d)[weight.dim() - 3]
    with ptcore.enable_grad():
        x = input.detach().requires_grad_(bool(output_mask[0]))
        w = weight.detach().requires_grad_(bool(output_mask[1]))
        out = conv(x, w, None, stride, padding, dilation, groups)
        wanted = [t for t, m in zip((x, w), output_mask[:2]) if m]
        got = list(ptcore.autograd.grad(out, wanted, grad_output)) if wanted else []
    gx = got.pop(0) if output_mask[0] else None
    gw = got.pop(0) if output_mask[1] else None
    gb = None
    if output_mask[2]:
        ch = 0 if grad_output.dim() == weight.dim() - 1 else 1
        gb = grad_output.sum([d for d in range(grad_output.dim()) if d != ch])
    return gx, gw, gb


def _conv_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                        transposed, output_padding, groups, output_mask):
    """The gradients' metadata: those of the input, the weight and the bias."""
    return tuple(t.new_empty(shape) if m else None for t, shape, m in zip(
        (input, weight, grad_output), (input.shape, weight.shape, bias_sizes or [0]),
        output_mask))


_convolution_backward = dispatch_as("convolution_backward", _conv_backward_kernel,
                                    _conv_backward_meta)


def _ints(v, n):
    return [int(v)] * n if isinstance(v, int) else [int(e) for e in v]


@register("aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
          "aten.conv1d.padding", "aten.conv2d.padding", "aten.conv3d.padding")
def _convolution(out, v):
    x, w, b = v["input"], v["weight"], v["bias"]
    nd = w.dim() - 2
    dilation = _ints(v["dilation"], nd)
    padding = v["padding"]
    if padding == "valid":
        padding = [0] * nd
    elif padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])]
        if any(t % 2 for t in total):
            return      # (an uneven 'same' pads one side more: no formula here)
        padding = [t // 2 for t in total]
    else:
        padding = _ints(padding, nd)
    stride, groups = _ints(v["stride"], nd), v["groups"]
    mask = [_needs(x), _needs(w), _needs(b)]
    bias_sizes = None if b is None else list(b.shape)

    def bw(g):
        return _convolution_backward(g, x, w, bias_sizes, stride, padding, dilation, False,
                                     [0] * nd, groups, mask)
    attach("ConvolutionBackward0", out, (x, w, b), bw)


@register("aten.layer_norm.default")
def _layer_norm(out, v):
    x, w, b, eps = v["input"], v["weight"], v["bias"], v["eps"]
    dims = list(range(-len(v["normalized_shape"]), 0))
    lead = list(range(x.dim() - len(dims)))
    nx, nw = _needs(x), _needs(w)

    def bw(g):
        xc = x - x.mean(dims, keepdim=True)
        rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
        xhat = xc * rstd
        gx = gw = gb = None
        if nx:
            gh = g if w is None else g * w
            gx = rstd * (gh - gh.mean(dims, keepdim=True)
                         - xhat * (gh * xhat).mean(dims, keepdim=True))
        if nw:
            gw = (g * xhat).sum(lead) if lead else g * xhat
        if _needs(b):
            gb = g.sum(lead) if lead else g
        return gx, gw, gb
    attach("NativeLayerNormBackward0", out, (x, w, b), bw)


# ---------------------------------------------------------------------------
# the ops whose backward is one op in torch: run as that op (named as torch's),
# computed from the forward's own autograd on the handler's data
# ---------------------------------------------------------------------------

_F = sys.modules["ptcore.nn.functional"]      # (being imported: its ops are bound)


def _formula(op, names, node, backward, inputs=("input",), forward=None, check=None):
    autograd_formula(["aten.%s.%s" % (op.__name__, n) for n in names], node, backward,
                     forward or op, inputs, signature=op, check=check)


_formula(_F.gelu, ["default"], "GeluBackward0", "gelu_backward")
for _d in (1, 2, 3):
    _k = min(_d, 2) if _d < 3 else 3
    _formula(getattr(_F, f"max_pool{_d}d"), ["default"], f"MaxPool{_k}DWithIndicesBackward0",
             f"max_pool{_k}d_with_indices_backward")
    _formula(getattr(_F, f"avg_pool{_d}d"), ["default"], f"AvgPool{_k}DBackward0",
             f"avg_pool{_k}d_backward")
    _formula(getattr(_F, f"adaptive_max_pool{_d}d"), ["default"],
             f"AdaptiveMaxPool{_k}DBackward0", f"adaptive_max_pool{_k}d_backward")
    _formula(getattr(_F, f"adaptive_avg_pool{_d}d"), ["default"],
             f"AdaptiveAvgPool{_k}DBackward0", f"_adaptive_avg_pool{_k}d_backward")
    _formula(getattr(_F, f"conv_transpose{_d}d"), ["default", "input"], "ConvolutionBackward0",
             "convolution_backward", ("input", "weight", "bias"))


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    # (training: the batch's statistics; the running ones are not updated again)
    if training:
        running_mean = running_var = None
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                   momentum, eps):
    if use_input_stats:
        running_mean = running_var = None
    return _F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                            momentum, eps)


_formula(_F.batch_norm, ["default"], "NativeBatchNormBackward0", "native_batch_norm_backward",
         ("input", "weight", "bias"), _batch_norm)
_formula(_F.instance_norm, ["default"], "NativeBatchNormBackward0",
         "native_batch_norm_backward", ("input", "weight", "bias"), _instance_norm)
_formula(_F.group_norm, ["default"], "NativeGroupNormBackward0", "native_group_norm_backward",
         ("input", "weight", "bias"))
_formula(_F.scaled_dot_product_attention, ["default"],
         "ScaledDotProductFlashAttentionForCpuBackward0",
         "_scaled_dot_product_flash_attention_for_cpu_backward",
         ("query", "key", "value", "attn_mask"), check=lambda v: not v["dropout_p"])
_formula(_F.mse_loss, ["default"], "MseLossBackward0", "mse_loss_backward",
         ("input", "target"))
_formula(_F.l1_loss, ["default"], "L1LossBackward0", "l1_loss_backward", ("input", "target"))
_formula(_F.smooth_l1_loss, ["default"], "SmoothL1LossBackward0", "smooth_l1_loss_backward",
         ("input", "target"))
_formula(_F.huber_loss, ["default"], "HuberLossBackward0", "huber_loss_backward",
         ("input", "target"))
_formula(_F.nll_loss, ["default"], "NllLossBackward0", "nll_loss_backward")
_formula(_F.cross_entropy, ["default"], "LogSoftmaxBackward0", "cross_entropy_backward",
         ("input", "target"))
_formula(_F.binary_cross_entropy, ["default"], "BinaryCrossEntropyBackward0",
         "binary_cross_entropy_backward", ("input", "target"))
_formula(_F.binary_cross_entropy_with_logits, ["default"],
         "BinaryCrossEntropyWithLogitsBackward0", "binary_cross_entropy_with_logits_backward",
         ("input", "target", "weight", "pos_weight"))

# interpolate: torch's upsample op of the mode and the input's rank
_UPSAMPLE = {"nearest": "upsample_nearest{}d", "nearest-exact": "_upsample_nearest_exact{}d",
             "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
             "bicubic": "upsample_bicubic2d", "trilinear": "upsample_trilinear3d",
             "area": "_adaptive_avg_pool{}d"}


def _upsample_name(v):
    n = v["input"].dim() - 2
    name = _UPSAMPLE.get(v["mode"], "upsample_{}d").format(n)
    if v["antialias"]:
        name = "_" + name + "_aa"
    return name + "_backward"


autograd_formula(["aten.interpolate.default"], "UpsampleBackward0", _upsample_name,
                 _F.interpolate, ("input",), signature=_F.interpolate)


# ---------------------------------------------------------------------------
# the ops torch decomposes above autograd: their ops reach the handler and record
# ---------------------------------------------------------------------------

@decompose("aten.dropout.default", signature=_F.dropout)
def _dropout(v):
    x, p = v["input"], v["p"]
    if v["inplace"] or not (x.dtype.is_floating_point or x.dtype.is_complex):
        return NotImplemented
    if not v["training"] or p == 0:
        return x
    if p == 1:
        return x * ptcore.zeros_like(x)
    mask = ptcore.empty_like(x).bernoulli_(1 - p)
    mask.div_(1 - p)
    return x * mask


def _reduced(d, reduction):
    return d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d


@decompose("aten.l1_loss.default", signature=_F.l1_loss)
def _l1_loss(v):
    if v["size_average"] is not None or v["reduce"] is not None or v["weight"] is not None:
        return NotImplemented
    return _reduced((v["input"] - v["target"]).abs(), v["reduction"])


@decompose("aten.cross_entropy.default", signature=_F.cross_entropy)
def _cross_entropy(v):
    x, t = v["input"], v["target"]
    if v["label_smoothing"] or t.dtype.is_floating_point or \
            v["size_average"] is not None or v["reduce"] is not None:
        return NotImplemented
    return _F.nll_loss(_F.log_softmax(x, 1 if x.dim() > 1 else 0), t, v["weight"],
                       ignore_index=v["ignore_index"], reduction=v["reduction"])
