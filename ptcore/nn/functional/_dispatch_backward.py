"""Backward formulas of ``nn.functional``'s ops (linear, convolutions, norms, pooling,
losses, attention, interpolate, dropout's decomposition) for autograd
around a ``__torch_dispatch__`` handler (:mod:`ptcore.autograd._dispatch_backward`):
these ops record their autograd inside their kernel, so when a dispatch mode or a
tensor subclass computes them itself, autograd records them with these formulas,
written with ptcore ops the handler then sees (a convolution's backward as torch's one
``aten.convolution_backward``)."""
import inspect
import math
import sys

import ptcore
from ptcore._dispatch.python_dispatch import dispatch_as
from ptcore.autograd._dispatch_backward import attach, aten_op, autograd_formula, decompose, \
    register
from ptcore.autograd._formulas import FORMULAS
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
    """``aten.convolution_backward`` of a convolution (transposed or not), on tensors
    with data: the convolution's own backward, through ptcore's autograd."""
    nd = weight.dim() - 2
    with ptcore.enable_grad():
        x = input.detach().requires_grad_(bool(output_mask[0]))
        w = weight.detach().requires_grad_(bool(output_mask[1]))
        if transposed:
            out = getattr(_F, f"conv_transpose{nd}d")(x, w, None, stride, padding,
                                                       output_padding, groups, dilation)
        else:
            out = (_conv.conv1d, _conv.conv2d, _conv.conv3d)[nd - 1](
                x, w, None, stride, padding, dilation, groups)
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


def _conv_args(v):
    """A convolution's (input, weight, bias, stride, padding, dilation, groups) with
    its padding as numbers (a 'same' one pads both sides alike), or None for an
    uneven 'same'."""
    x, w = v["input"], v["weight"]
    nd = w.dim() - 2
    dilation = _ints(v["dilation"], nd)
    padding = v["padding"]
    if padding == "valid":
        padding = [0] * nd
    elif padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])]
        if any(t % 2 for t in total):
            return None         # (an uneven 'same' pads one side more)
        padding = [t // 2 for t in total]
    else:
        padding = _ints(padding, nd)
    return x, w, v["bias"], _ints(v["stride"], nd), padding, dilation, v["groups"]


def _attach_convolution(out, x, w, b, stride, padding, dilation, groups, transposed=False,
                        output_padding=None):
    nd = w.dim() - 2
    mask = [_needs(x), _needs(w), _needs(b)]
    bias_sizes = None if b is None else list(b.shape)
    output_padding = [0] * nd if output_padding is None else list(output_padding)

    def bw(g):
        return _convolution_backward(g, x, w, bias_sizes, stride, padding, dilation, transposed,
                                     output_padding, groups, mask)
    attach("ConvolutionBackward0", out, (x, w, b), bw)


@register("aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
          "aten.conv1d.padding", "aten.conv2d.padding", "aten.conv3d.padding")
def _conv_formula(out, v):
    a = _conv_args(v)
    if a is None:
        return NotImplemented
    _attach_convolution(out, *a)


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


def _dropout_family(fn, features):
    """torch's feature dropouts (``features`` spatial dimensions: noise of one element
    per channel) and, in eval mode or with p 0, the alpha dropouts: the input."""
    @decompose(f"aten.{fn.__name__}.default", signature=fn)
    def dropout(v):
        x, p = v["input"], v["p"]
        if v["inplace"] or not (x.dtype.is_floating_point or x.dtype.is_complex):
            return NotImplemented
        if not v["training"] or p == 0:
            return x
        if not features or x.dim() < features + 1:
            return NotImplemented
        shape = list(x.shape[:x.dim() - features]) + [1] * features
        if p == 1:
            return x * ptcore.zeros(shape, dtype=x.dtype, device=x.device)
        noise = ptcore.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(1 - p)
        noise.div_(1 - p)
        return x * noise


for _d in (1, 2, 3):
    _dropout_family(getattr(_F, f"dropout{_d}d"), _d)
_dropout_family(_F.alpha_dropout, 0)
_dropout_family(_F.feature_alpha_dropout, 0)


@decompose("aten.pad.default", signature=_F.pad)
def _pad_constant(v):
    # (torch: constant_pad_nd)
    if v["mode"] != "constant":
        return NotImplemented
    return ptcore.constant_pad_nd(v["input"], list(v["pad"]),
                                  0 if v["value"] is None else v["value"])


@register("aten.pad.default", signature=_F.pad)
def _pad(out, v):
    # (autograd's formula takes constant padding; the other modes: the kernel's autograd)
    if v["mode"] != "constant":
        return NotImplemented
    FORMULAS["pad"](out, v["input"], v["pad"], "constant", v["value"])


def _reduced(d, reduction):
    return d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d


@decompose("aten.l1_loss.default", signature=_F.l1_loss)
def _l1_loss(v):
    if v["size_average"] is not None or v["reduce"] is not None or v["weight"] is not None:
        return NotImplemented
    return _reduced((v["input"] - v["target"]).abs(), v["reduction"])


# ---------------------------------------------------------------------------
# the aten ops torch's composites reach (a handler sees these, as torch's): ptcore's
# public ops decompose into them when recorded around a handler
# ---------------------------------------------------------------------------

def _max_pool_with_indices(nd):
    pool = getattr(_F, f"max_pool{nd}d")

    def kernel(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return pool(self, kernel_size, stride or None, padding, dilation, ceil_mode,
                    return_indices=True)
    return aten_op(f"max_pool{nd}d_with_indices", kernel,
                   f"MaxPool{nd}DWithIndicesBackward0", f"max_pool{nd}d_with_indices_backward",
                   ("self",))


_MAX_POOL = {2: _max_pool_with_indices(2), 3: _max_pool_with_indices(3)}


def _pool_args(v, n):
    k = _ints(v["kernel_size"], n)
    return [k, k if v["stride"] is None or v["stride"] == [] else _ints(v["stride"], n),
            _ints(v["padding"], n)]


def _max_pool_decomposition(nd):
    @decompose(f"aten.max_pool{nd}d.default", signature=getattr(_F, f"max_pool{nd}d"))
    def fn(v):
        x = v["input"]
        if x.dim() not in (nd + 1, nd + 2):
            return NotImplemented
        r = _MAX_POOL[nd](x, *_pool_args(v, nd), _ints(v["dilation"], nd), v["ceil_mode"])
        return r if v["return_indices"] else r[0]


_max_pool_decomposition(2)
_max_pool_decomposition(3)


def _as_2d(v):
    """A 1-d pooling's input unsqueezed and its kernel, stride and padding as a 2-d
    pooling's (torch's 1-d poolings), or None for an input of another rank."""
    x = v["input"]
    if x.dim() not in (2, 3):
        return None
    return [x.unsqueeze(-2)] + [[e] + a for e, a in zip((1, 1, 0), _pool_args(v, 1))]


@decompose("aten.max_pool1d.default", signature=_F.max_pool1d)
def _max_pool1d(v):
    a = _as_2d(v)
    if a is None:
        return NotImplemented
    r = _MAX_POOL[2](*a, [1] + _ints(v["dilation"], 1), v["ceil_mode"])
    vals, idx = r[0].squeeze(-2), r[1].squeeze(-2)
    return (vals, idx) if v["return_indices"] else vals


@decompose("aten.avg_pool1d.default", signature=_F.avg_pool1d)
def _avg_pool1d(v):
    a = _as_2d(v)
    if a is None:
        return NotImplemented
    return _F.avg_pool2d(*a, v["ceil_mode"], v["count_include_pad"]).squeeze(-2)


def _adaptive_avg_pool_kernel(nd):
    pool = getattr(_F, f"adaptive_avg_pool{nd}d")

    def kernel(self, output_size):
        return pool(self, output_size)
    return aten_op(f"_adaptive_avg_pool{nd}d", kernel, f"AdaptiveAvgPool{nd}DBackward0",
                   f"_adaptive_avg_pool{nd}d_backward", ("self",))


_ADAPTIVE_AVG = {2: _adaptive_avg_pool_kernel(2), 3: _adaptive_avg_pool_kernel(3)}


def _adaptive_avg_decomposition(nd):
    @decompose(f"aten.adaptive_avg_pool{nd}d.default",
               signature=getattr(_F, f"adaptive_avg_pool{nd}d"))
    def fn(v):
        # (torch: a mean for an output of one element per channel)
        x = v["input"]
        size = [x.shape[x.dim() - nd + i] if s is None else s
                for i, s in enumerate(_ints(v["output_size"], nd)
                                      if not isinstance(v["output_size"], (list, tuple))
                                      else v["output_size"])]
        if x.dim() not in (nd + 1, nd + 2):
            return NotImplemented
        if all(s == 1 for s in size):
            return x.mean(list(range(-1, -nd - 1, -1)), keepdim=True)
        return _ADAPTIVE_AVG[nd](x, size)


_adaptive_avg_decomposition(2)
_adaptive_avg_decomposition(3)


def _native_batch_norm_kernel(input, weight, bias, running_mean, running_var, training,
                              momentum, eps):
    out = _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)
    if training:
        dims = [0] + list(range(2, input.dim()))
        mean = input.mean(dims)
        invstd = (input.var(dims, unbiased=False) + eps).rsqrt()
    else:
        mean = invstd = input.new_empty(0)
    return out, mean, invstd


_native_batch_norm = aten_op(
    "native_batch_norm", _native_batch_norm_kernel, "NativeBatchNormBackward0",
    "native_batch_norm_backward", ("input", "weight", "bias"),
    forward=lambda input, weight, bias, running_mean, running_var, training, momentum, eps:
    _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps))


@decompose("aten.batch_norm.default", signature=_F.batch_norm)
def _batch_norm_as_native(v):
    return _native_batch_norm(v["input"], v["weight"], v["bias"], v["running_mean"],
                              v["running_var"], v["training"], v["momentum"], v["eps"])[0]


def _viewed(x, shape):
    return x.view(shape) if x.is_contiguous() else x.reshape(shape)


@decompose("aten.instance_norm.default", signature=_F.instance_norm)
def _instance_norm_as_batch_norm(v):
    # (torch: a batch norm of the input viewed as one sample of N * C channels)
    x, w, b = v["input"], v["weight"], v["bias"]
    if not v["use_input_stats"] or v["running_mean"] is not None or \
            v["running_var"] is not None or x.dim() < 3:
        return NotImplemented
    shape = list(x.shape)
    n = shape[0]
    w = None if w is None else w.repeat(n)
    b = None if b is None else b.repeat(n)
    y = _native_batch_norm(_viewed(x, [1, n * shape[1]] + shape[2:]), w, b, None, None, True,
                           v["momentum"], v["eps"])[0]
    return y.view(shape)


def _native_group_norm_kernel(input, weight, bias, N, C, HxW, group, eps):
    out = _F.group_norm(input, group, weight, bias, eps)
    xs = input.reshape(N, group, -1)
    return out, xs.mean(-1), (xs.var(-1, unbiased=False) + eps).rsqrt()


_native_group_norm = aten_op("native_group_norm", _native_group_norm_kernel,
                             "NativeGroupNormBackward0", "native_group_norm_backward",
                             ("input", "weight", "bias"))


@decompose("aten.group_norm.default", signature=_F.group_norm)
def _group_norm_as_native(v):
    x = v["input"]
    if x.dim() < 2:
        return NotImplemented
    n, c = x.shape[0], x.shape[1]
    hw = 1
    for s in x.shape[2:]:
        hw *= s
    return _native_group_norm(x, v["weight"], v["bias"], n, c, hw, v["num_groups"],
                              v["eps"])[0]


def _convolution_kernel(input, weight, bias, stride, padding, dilation, transposed,
                        output_padding, groups):
    nd = weight.dim() - 2
    if transposed:
        return getattr(_F, f"conv_transpose{nd}d")(input, weight, bias, stride, padding,
                                                   output_padding, groups, dilation)
    return getattr(_F, f"conv{nd}d")(input, weight, bias, stride, padding, dilation, groups)


_convolution = aten_op("convolution", _convolution_kernel, "ConvolutionBackward0",
                       "convolution_backward", ("input", "weight", "bias"))


@register("aten.convolution.default", signature=_convolution_kernel)
def _convolution_formula(out, v):
    # (torch's convolution_backward arguments, transposed or not)
    _attach_convolution(out, v["input"], v["weight"], v["bias"], v["stride"], v["padding"],
                        v["dilation"], v["groups"], bool(v["transposed"]), v["output_padding"])


def _conv_decomposition(nd):
    @decompose(f"aten.conv{nd}d.default", f"aten.conv{nd}d.padding")
    def fn(v):
        # (torch: aten.convolution)
        a = _conv_args(v)
        if a is None or a[0].dim() != nd + 2:
            return NotImplemented
        x, w, b, stride, padding, dilation, groups = a
        return _convolution(x, w, b, stride, padding, dilation, False, [0] * nd, groups)


def _native_layer_norm_kernel(input, normalized_shape, weight, bias, eps):
    out = _F.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = list(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return out, mean, rstd


_native_layer_norm = aten_op("native_layer_norm", _native_layer_norm_kernel,
                             "NativeLayerNormBackward0", "native_layer_norm_backward",
                             ("input", "weight", "bias"))


@decompose("aten.layer_norm.default")
def _layer_norm_as_native(v):
    return _native_layer_norm(v["input"], list(v["normalized_shape"]), v["weight"],
                              v["bias"], v["eps"])[0]


def _conv_transpose_decomposition(nd):
    @decompose(f"aten.conv_transpose{nd}d.default", f"aten.conv_transpose{nd}d.input",
               signature=getattr(_F, f"conv_transpose{nd}d"))
    def fn(v):
        x = v["input"]
        if x.dim() != nd + 2 or isinstance(v["padding"], str):
            return NotImplemented
        return _convolution(x, v["weight"], v["bias"], _ints(v["stride"], nd),
                            _ints(v["padding"], nd), _ints(v["dilation"], nd), True,
                            _ints(v["output_padding"], nd), v["groups"])


for _d in (1, 2, 3):
    _conv_transpose_decomposition(_d)
    _conv_decomposition(_d)

_REDUCTION = ("none", "mean", "sum")


def _nll_loss_forward_kernel(self, target, weight, reduction, ignore_index):
    out = _F.nll_loss(self, target, weight, ignore_index=ignore_index,
                      reduction=_REDUCTION[reduction])
    keep = target != ignore_index
    if weight is None:
        total = keep.to(self.dtype).sum()
    else:
        total = (weight[target.clamp(0, self.shape[-1] - 1)] * keep).sum()
    return out, total


def _nll_loss_forward_meta(self, target, weight, reduction, ignore_index):
    return self.new_empty(() if reduction else tuple(target.shape)), self.new_empty(())


_nll_loss_forward = aten_op("nll_loss_forward", _nll_loss_forward_kernel, "NllLossBackward0",
                            "nll_loss_backward", ("self",), meta=_nll_loss_forward_meta)


def _nll_applies(x, t, v):
    return v["size_average"] is None and v["reduce"] is None and x.dim() <= 2 and \
        not t.dtype.is_floating_point


def _nll(x, t, v):
    if not _nll_applies(x, t, v):
        return NotImplemented
    return _nll_loss_forward(x, t, v["weight"], _REDUCTION.index(v["reduction"]),
                             v["ignore_index"])[0]


@decompose("aten.nll_loss.default", signature=_F.nll_loss)
def _nll_loss_as_forward(v):
    return _nll(v["input"], v["target"], v)


@decompose("aten.cross_entropy.default", signature=_F.cross_entropy)
def _cross_entropy(v):
    # (torch: _log_softmax, then nll_loss_forward)
    x, t = v["input"], v["target"]
    if v["label_smoothing"] or not _nll_applies(x, t, v):
        return NotImplemented
    return _nll(_log_softmax(x, 1 if x.dim() > 1 else 0, False), t, v)


# interpolate: torch's upsample op of the mode and the input's rank
_UPSAMPLE = {"nearest": ("upsample_nearest{}d", (1, 2, 3)),
             "nearest-exact": ("_upsample_nearest_exact{}d", (1, 2, 3)),
             "linear": ("upsample_linear1d", (1,)), "bilinear": ("upsample_bilinear2d", (2,)),
             "bicubic": ("upsample_bicubic2d", (2,)),
             "trilinear": ("upsample_trilinear3d", (3,))}
_UPSAMPLE_OPS = {}


def _upsample_op(mode, n):
    """torch's ``upsample_<mode><n>d(self, output_size, [align_corners,] scales...)``."""
    key = (mode, n)
    op = _UPSAMPLE_OPS.get(key)
    if op is not None:
        return op
    name = _UPSAMPLE[mode][0].format(n)
    aligns = "nearest" not in mode

    def kernel(self, output_size, *rest):
        align = rest[0] if aligns else None
        scales = list(rest[1:] if aligns else rest)
        if len(scales) == n and all(s is not None for s in scales):
            return _F.interpolate(self, scale_factor=scales, mode=mode, align_corners=align)
        return _F.interpolate(self, size=list(output_size), mode=mode, align_corners=align)

    kernel.__signature__ = inspect.Signature(
        [inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           **({} if a in ("self", "output_size") else {"default": None}))
         for a in ["self", "output_size"] + (["align_corners"] if aligns else []) +
         (["scales"] if n == 1 else ["scales_d", "scales_h", "scales_w"][3 - n:])])

    def forward(**v):
        return kernel(v.pop("self"), v.pop("output_size"), *v.values())
    node = "Upsample" + name.split("upsample_")[1].title().replace("_", "") + "Backward0"
    op = _UPSAMPLE_OPS[key] = aten_op(name, kernel, node, name + "_backward", ("self",),
                                      forward=forward)
    return op


@decompose("aten.interpolate.default", signature=_F.interpolate)
def _interpolate(v):
    x, mode, size, sf = v["input"], v["mode"], v["size"], v["scale_factor"]
    n = x.dim() - 2
    if mode == "area" and 1 <= n <= 3 and (size is None) != (sf is None) and \
            v["align_corners"] is None:
        out = _out_size(x, n, size, sf)
        return getattr(_F, f"adaptive_avg_pool{n}d")(x, out)
    if mode not in _UPSAMPLE or n not in _UPSAMPLE[mode][1] or v["antialias"] or \
            (size is None) == (sf is None) or \
            ("nearest" in mode and v["align_corners"] is not None):
        return NotImplemented
    out = _out_size(x, n, size, sf)
    args = [x, out]
    if "nearest" not in mode:
        args.append(bool(v["align_corners"]))
    if size is None and not v["recompute_scale_factor"]:
        args += [float(s) for s in _seq(sf, n)]
    return _upsample_op(mode, n)(*args)


def _seq(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def _out_size(x, n, size, sf):
    if size is not None:
        return [int(s) for s in _seq(size, n)]
    return [int(math.floor(float(x.shape[i + 2]) * float(s)))
            for i, s in enumerate(_seq(sf, n))]


def _sdpa_kernel(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                 scale=None):
    out = _F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                          scale=scale)
    s = query.matmul(key.transpose(-2, -1)) * (
        1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    if is_causal:
        s = s.masked_fill(ptcore.ones(s.shape[-2], s.shape[-1], dtype=ptcore.bool,
                                      device=s.device).tril().logical_not(), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(attn_mask.logical_not(), float("-inf")) \
            if attn_mask.dtype == ptcore.bool else s + attn_mask
    return out, s.logsumexp(-1)


_sdpa_flash = aten_op("_scaled_dot_product_flash_attention_for_cpu", _sdpa_kernel,
                      "ScaledDotProductFlashAttentionForCpuBackward0",
                      "_scaled_dot_product_flash_attention_for_cpu_backward",
                      ("query", "key", "value", "attn_mask"))


@decompose("aten.scaled_dot_product_attention.default",
           signature=_F.scaled_dot_product_attention)
def _sdpa(v):
    # (torch on the CPU: its flash attention for 4-d inputs)
    q, k, val = v["query"], v["key"], v["value"]
    if v["dropout_p"] or v["enable_gqa"] or not q.dim() == k.dim() == val.dim() == 4:
        return NotImplemented
    return _sdpa_flash(q, k, val, 0.0, v["is_causal"], attn_mask=v["attn_mask"],
                       scale=v["scale"])[0]


def _softmax_like(name, public):
    op = aten_op(name, lambda self, dim, half_to_float: getattr(self, public)(dim),
                 ("SoftmaxBackward0" if name == "_softmax" else "LogSoftmaxBackward0"),
                 name + "_backward_data", ("self",))

    @decompose(f"aten.{public}.int")
    def fn(v):
        # (torch: a conversion to the dtype asked for, then the op of the same dtype)
        x = v["self"]
        if v["dtype"] is not None and v["dtype"] is not x.dtype:
            x = x.to(v["dtype"])
        return op(x, v["dim"], False)
    return op


_softmax_like("_softmax", "softmax")
_log_softmax = _softmax_like("_log_softmax", "log_softmax")


@decompose("aten.linear.default")
def _linear(v):
    # (torch: t and addmm or mm, a batch viewed as rows)
    x, w, b = v["input"], v["weight"], v["bias"]
    if w.dim() != 2 or x.dim() < 2 or (b is not None and b.dim() > 1):
        return NotImplemented
    wt = w.t()
    if x.dim() == 2:
        return x.mm(wt) if b is None else ptcore.addmm(b, x, wt)
    if b is None:
        return x.matmul(wt)
    if x.dim() != 3 or not x.is_contiguous():
        # (torch folds only a contiguous 3-d input into addmm's rows; else matmul, add_)
        return x.matmul(wt).add_(b)
    batch = list(x.shape[:-1])
    y = ptcore.addmm(b, _viewed(x, [-1, x.shape[-1]]), wt)
    return y.view(batch + [w.shape[0]])
