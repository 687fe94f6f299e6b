"""Backward formulas of ``linear``, the convolutions and ``layer_norm`` for autograd
around a ``__torch_dispatch__`` handler (:mod:`ptcore.autograd._dispatch_backward`):
these ops record their autograd inside their kernel, so when a dispatch mode or a
tensor subclass computes them itself, autograd records them with these formulas,
written with ptcore ops the handler then sees (a convolution's backward as torch's one
``aten.convolution_backward``)."""
import ptcore
from ptcore._dispatch.python_dispatch import dispatch_as
from ptcore.autograd._dispatch_backward import attach, register
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
