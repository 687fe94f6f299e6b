"""Top-level functional ops (``torch.dropout``, ``torch.batch_norm``,
``torch.embedding`` ...): thin adapters with PyTorch's *top-level*
signatures over :mod:`ptcore.nn.functional`.

The top-level forms follow the ATen schemas, which differ from
``torch.nn.functional`` in places: ``embedding(weight, indices, ...)``
takes the table first, ``batch_norm`` takes ``weight, bias`` before the
running statistics, the losses take an integer ``reduction`` (0 none,
1 mean, 2 sum) and, as PyTorch's Python bindings do, default to no
reduction when it is left out.

``ptcore.nn.functional`` is imported on first call, so ``import ptcore``
does not load ``ptcore.nn``.  The module belongs to the nn layer (it calls
nn.functional's kernels), outside the ``ptcore.nn`` package only so that
``import ptcore`` can bind these names without importing ``ptcore.nn``.
"""
import builtins

from ptcore._ops._out import check_out_grad, copy_out
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import can_cast
from ptcore._dispatch.generate import method_form as _method_form

__all__ = [
    # dropout
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout",
    # normalization
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
    "native_layer_norm", "native_batch_norm", "native_group_norm",
    # embedding
    "embedding", "embedding_renorm_",
    # weight normalization (torch._weight_norm: v * g / norm_except_dim(v, 2, dim))
    "_weight_norm",
    # pooling
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d",
    # convolution
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution",
    # vision / distance
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "pdist", "cosine_similarity", "pairwise_distance",
    # activations
    "prelu", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "threshold", "threshold_",
    "relu_", "hardshrink",
    # linear
    "bilinear",
    # losses
    "kl_div", "ctc_loss", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
    "hinge_embedding_loss", "poisson_nll_loss", "binary_cross_entropy_with_logits",
]


def _F():
    # lazy: ptcore.nn loads with its first use, not with `import ptcore` (startup time)
    from ptcore.nn import functional
    return functional


def _pt():
    import ptcore
    return ptcore


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction, fname):
    if isinstance(reduction, builtins.bool) or not isinstance(reduction, builtins.int):
        raise TypeError(f"{fname}(): argument 'reduction' must be int, not {type(reduction).__name__}")
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{fname}(): reduction must be 0 (none), 1 (mean) or 2 (sum), "
                         f"got {reduction}") from None


def _check_tensor(x, fname, argname="input"):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' must be Tensor, not {type(x).__name__}")


def _fmt(v):
    return "%g" % v


# ---------------------------------------------------------------------------
# dropout: (input, p, train)
# ---------------------------------------------------------------------------

def _dropout(input, p, train, inplace, feature, alpha, fname):
    _check_tensor(input, fname)
    p = builtins.float(p)
    if not (0.0 <= p <= 1.0):
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_fmt(p)}")
    # lazy: ptcore.nn loads with its first use, not with `import ptcore` (startup time)
    from ptcore.nn.functional._dropout import _dropout_impl
    return _dropout_impl(input, p, builtins.bool(train), inplace, feature, alpha)


def dropout(input, p, train):
    """Zero elements with probability ``p`` and scale by ``1/(1-p)`` when ``train``
    (``torch.dropout``; see :func:`ptcore.nn.functional.dropout`)."""
    return _dropout(input, p, train, False, False, False, "dropout")


def dropout_(input, p, train):
    """In-place :func:`dropout`."""
    return _dropout(input, p, train, True, False, False, "dropout_")


def alpha_dropout(input, p, train):
    """Alpha dropout (``torch.alpha_dropout``)."""
    return _dropout(input, p, train, False, False, True, "alpha_dropout")


def alpha_dropout_(input, p, train):
    """In-place :func:`alpha_dropout`."""
    return _dropout(input, p, train, True, False, True, "alpha_dropout_")


def feature_dropout(input, p, train):
    """Dropout of whole channels (dims 0, 1 drawn; the rest broadcast)."""
    return _dropout(input, p, train, False, True, False, "feature_dropout")


def feature_dropout_(input, p, train):
    """In-place :func:`feature_dropout`."""
    return _dropout(input, p, train, True, True, False, "feature_dropout_")


def feature_alpha_dropout(input, p, train):
    """Alpha dropout of whole channels."""
    return _dropout(input, p, train, False, True, True, "feature_alpha_dropout")


def feature_alpha_dropout_(input, p, train):
    """In-place :func:`feature_alpha_dropout`."""
    return _dropout(input, p, train, True, True, True, "feature_alpha_dropout_")


def native_dropout(input, p, train):
    """Dropout that also returns its keep mask: ``(output, mask)`` with a bool mask.

    ``train=None`` counts as training, as in PyTorch; when not training the
    output is a copy of ``input`` and the mask is all True.
    """
    _check_tensor(input, "native_dropout")
    pt = _pt()
    p = builtins.float(p)
    if train is None or train:
        if not (0.0 <= p <= 1.0):
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_fmt(p)}")
        with pt.no_grad():
            mask = pt.empty(input.shape, dtype=pt.bool, device=input.device).bernoulli_(1.0 - p)
        scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
        return input * mask * scale, mask
    return input.clone(), pt.ones(input.shape, dtype=pt.bool, device=input.device)


# ---------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``torch.batch_norm``: :func:`ptcore.nn.functional.batch_norm` with ATen's argument
    order (``weight, bias`` before the running statistics; ``cudnn_enabled`` is ignored)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """``torch.instance_norm`` (ATen argument order; ``cudnn_enabled`` is ignored)."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``torch.layer_norm`` (``cudnn_enable`` is ignored)."""
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``torch.group_norm`` (``cudnn_enabled`` is ignored)."""
    return _F().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``torch.rms_norm``: root-mean-square normalization over the trailing dims."""
    return _F().rms_norm(input, normalized_shape, weight, eps)


def _stat_dtype(input):
    pt = _pt()
    return pt.float32 if input.dtype in (pt.float16, pt.bfloat16) else input.dtype


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Layer norm returning ``(output, mean, rstd)``; ``mean`` and ``rstd`` have the
    input's leading dims followed by ones (no gradient flows through them)."""
    _check_tensor(input, "native_layer_norm")
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    ns = (builtins.int(normalized_shape),) if isinstance(normalized_shape, builtins.int) \
        else tuple(normalized_shape)
    nd = builtins.len(ns)
    dims = tuple(range(input.dim() - nd, input.dim()))
    with _pt().no_grad():
        x = input.detach().to(_stat_dtype(input))
        if x.numel() == 0 or not dims:
            mean = x.mean(dim=dims, keepdim=True) if dims else x.clone()
            var = x.var(dim=dims, unbiased=False, keepdim=True) if dims else x * 0
        else:
            var, mean = _pt().var_mean(x, dim=dims, unbiased=False, keepdim=True)
        rstd = (var + eps).rsqrt()
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, *,
                      out=None):
    """Batch norm returning ``(output, save_mean, save_invstd)``.

    In training the saved statistics are the batch mean and ``1/sqrt(var + eps)``
    over every dim but 1 (shape ``(C,)``); in evaluation they are empty.  ``out``:
    three tensors of the input's dtype (torch's ``native_batch_norm.out``).
    """
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 3 or \
                not all(isinstance(o, _TensorBase) for o in out):
            raise TypeError("native_batch_norm(): argument 'out' must be tuple of Tensors")
        for o in out:
            if o.dtype is not input.dtype:
                raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                                   f"{o.dtype._legacy}")
        check_out_grad("native_batch_norm", out[0], input, weight, bias)
        res = native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                momentum, eps)
        return tuple(copy_out(o, r) for o, r in zip(out, res))
    _check_tensor(input, "native_batch_norm")
    pt = _pt()
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = pt.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = (0,) + tuple(range(2, input.dim()))
    with pt.no_grad():
        x = input.detach().to(_stat_dtype(input))
        var, mean = pt.var_mean(x, dim=dims, unbiased=False)
        invstd = (var + eps).rsqrt()
    return out, mean.to(input.dtype), invstd.to(input.dtype)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Group norm returning ``(output, mean, rstd)`` with ``mean, rstd`` of shape ``(N, group)``.

    ``N, C, HxW`` must describe ``input`` (``N*C*HxW == input.numel()``).
    """
    _check_tensor(input, "native_group_norm")
    pt = _pt()
    N, C, HxW, group = (builtins.int(v) for v in (N, C, HxW, group))
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements (N={N}, C={C}, "
                           f"HxW={HxW}), but got input of shape {list(input.shape)}")
    if group <= 0 or C % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups={group}")
    x = input.reshape(N, group, (C // group) * HxW)   # (-1: ambiguous for N == 0)
    xs = x.to(_stat_dtype(input))
    var, mean = pt.var_mean(xs, dim=2, unbiased=False)
    rstd = (var + eps).rsqrt()
    out = _F().group_norm(input.reshape(N, C, HxW), group, weight, bias, eps).reshape(input.shape)
    return out, mean.to(input.dtype), rstd.to(input.dtype)


# ---------------------------------------------------------------------------
# embedding: (weight, indices, ...)
# ---------------------------------------------------------------------------

def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding``: rows of ``weight`` at ``indices`` (note: table first).

    A negative ``padding_idx`` means no padding row (ATen's convention); the
    padding row gets no gradient.
    """
    _check_tensor(weight, "embedding", "weight")
    _check_tensor(indices, "embedding", "indices")
    padding_idx = builtins.int(padding_idx)
    return _F().embedding(indices, weight, padding_idx if padding_idx >= 0 else None, None, 2.0,
                          scale_grad_by_freq, sparse)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale, in place, the rows of ``input`` at ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm`` to norm ``max_norm``."""
    _check_tensor(input, "embedding_renorm_")
    _check_tensor(indices, "embedding_renorm_", "indices")
    # lazy: ptcore.nn loads with its first use, not with `import ptcore` (startup time)
    from ptcore.nn.functional._sparse import _embedding_renorm_
    with _pt().no_grad():
        _embedding_renorm_(input, indices.contiguous(), builtins.float(max_norm),
                           builtins.float(norm_type))
    return input


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------

def _stride(stride):
    # ATen's default ``stride=[]`` means "same as kernel_size"
    if stride is None:
        return None
    if isinstance(stride, (tuple, list)) and builtins.len(stride) == 0:
        return None
    return stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d`` (no ``return_indices``: see :func:`max_pool1d_with_indices`)."""
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool2d``."""
    return _F().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool3d``."""
    return _F().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """``torch.max_pool1d_with_indices``: ``(output, indices)``."""
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                           True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """``torch.avg_pool1d``."""
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                           count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """``torch.adaptive_avg_pool1d``."""
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: always returns ``(output, indices)``."""
    return _F().adaptive_max_pool1d(input, output_size, True)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv1d`` (as :func:`ptcore.nn.functional.conv1d`)."""
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv2d`` (as :func:`ptcore.nn.functional.conv2d`)."""
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv3d`` (as :func:`ptcore.nn.functional.conv3d`)."""
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``torch.conv_transpose1d``."""
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``torch.conv_transpose2d``."""
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``torch.conv_transpose3d``."""
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution``: the 1d/2d/3d (transposed) convolution chosen by ``weight.dim()``."""
    _check_tensor(input, "convolution")
    _check_tensor(weight, "convolution", "weight")
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, but got weight of "
                           f"shape {list(weight.shape)}")
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional "
                           f"weight {list(weight.shape)}, but got {input.dim()}-dimensional input "
                           f"of size {list(input.shape)} instead")
    F = _F()
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------------
# vision / distance
# ---------------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """``torch.pixel_shuffle``."""
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """``torch.pixel_unshuffle``."""
    return _F().pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    """``torch.channel_shuffle``."""
    return _F().channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """``torch.native_channel_shuffle`` (same values as :func:`channel_shuffle`)."""
    return _F().channel_shuffle(input, groups)


def pdist(input, p=2):
    """``torch.pdist``: pairwise ``p``-norm distances between the rows of a 2-D ``input``."""
    return _F().pdist(input, p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``torch.cosine_similarity``."""
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``torch.pairwise_distance``."""
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


# ---------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------

def prelu(input, weight):
    """``torch.prelu``: ``max(0, x) + weight * min(0, x)`` with ``weight`` per channel (dim 1)."""
    return _F().prelu(input, weight)


def selu(input):
    """``torch.selu``."""
    return _F().selu(input)


def selu_(input):
    """In-place :func:`selu`."""
    return _F().selu(input, True)


def celu(input, alpha=1.0):
    """``torch.celu``."""
    return _F().celu(input, alpha)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return _F().celu(input, alpha, True)


def _rrelu(input, lower, upper, training, generator, inplace, fname):
    _check_tensor(input, fname)
    F = _F()
    if not training:
        return F.leaky_relu(input, (lower + upper) / 2, inplace)
    pt = _pt()
    with pt.no_grad():
        slope = pt.empty_like(input).uniform_(lower, upper, generator=generator)
    out = pt.where(input >= 0, input, input * slope)
    if inplace:
        input.copy_(out)
        return input
    return out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """``torch.rrelu``: negative slope ~ U(lower, upper) per element when ``training``,
    ``(lower + upper) / 2`` otherwise; ``generator`` drives the slopes."""
    return _rrelu(input, lower, upper, training, generator, False, "rrelu")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place :func:`rrelu`."""
    return _rrelu(input, lower, upper, training, generator, True, "rrelu_")


def threshold(input, threshold, value, *, out=None):
    """``torch.threshold``: ``value`` where ``input <= threshold``, else ``input``."""
    check_out_grad("threshold", out, input)
    r = _F().threshold(input, threshold, value)
    if out is None:
        return r
    if not can_cast(r.dtype, out.dtype):
        raise RuntimeError(f"result type {r.dtype._legacy} can't be cast to the desired output "
                           f"type {out.dtype._legacy}")
    return copy_out(out, r)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return _F().threshold(input, threshold, value, True)


def relu_(input):
    """In-place ReLU."""
    return _F().relu(input, True)


relu_._calls_entry = True       # (nn.functional.relu records and dispatches)


def hardshrink(input, lambd=0.5, *, out=None):
    """``torch.hardshrink``: ``x`` where ``|x| > lambd``, else 0."""
    return _F().hardshrink(input, lambd, out=out)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear``: ``x1^T A x2 + b``."""
    return _F().bilinear(input1, input2, weight, bias)


# ---------------------------------------------------------------------------
# losses: integer ``reduction``.  PyTorch's Python binding of these ATen ops
# defaults ``reduction`` to 0 (no reduction) when it is omitted, although the
# schemas say Mean; ptcore follows the observed behaviour.
# ---------------------------------------------------------------------------

def kl_div(input, target, reduction=0, *, log_target=False):
    """``torch.kl_div`` (``reduction``: 0 none, 1 mean over elements, 2 sum)."""
    r = _reduction(reduction, "kl_div")
    import warnings
    with warnings.catch_warnings():
        # nn.functional warns that 'mean' is not the KL mathematical definition
        warnings.simplefilter("ignore")
        return _F().kl_div(input, target, reduction=r, log_target=log_target)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """``torch.ctc_loss`` (``reduction``: 0 none, 1 mean, 2 sum)."""
    r = _reduction(reduction, "ctc_loss")
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, r,
                         zero_infinity)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.cosine_embedding_loss``."""
    r = _reduction(reduction, "cosine_embedding_loss")
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=r)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.margin_ranking_loss``."""
    r = _reduction(reduction, "margin_ranking_loss")
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=r)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    """``torch.triplet_margin_loss``."""
    r = _reduction(reduction, "triplet_margin_loss")
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=r)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``torch.hinge_embedding_loss``."""
    r = _reduction(reduction, "hinge_embedding_loss")
    return _F().hinge_embedding_loss(input, target, margin, reduction=r)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss`` (every argument required, as in PyTorch)."""
    r = _reduction(reduction, "poisson_nll_loss")
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=r)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``torch.binary_cross_entropy_with_logits`` (note ``pos_weight`` before ``reduction``)."""
    r = _reduction(reduction, "binary_cross_entropy_with_logits")
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=r,
                                                 pos_weight=pos_weight)


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------

@_method_form("prelu")
def _m_prelu(self, weight):
    return prelu(self, weight)


@_method_form("hardshrink")
def _m_hardshrink(self, lambd=0.5):
    return hardshrink(self, lambd)


_m_prelu.__name__ = "prelu"
_m_prelu.__doc__ = "See :func:`ptcore.prelu`."
_m_hardshrink.__name__ = "hardshrink"
_m_hardshrink.__doc__ = "See :func:`ptcore.hardshrink`."


def _weight_norm(v, g, dim=0):
    """``v * (g / norm_except_dim(v, 2, dim))`` (``torch._weight_norm``)."""
    # lazy: ptcore.nn loads with its first use, not with `import ptcore` (startup time)
    from ptcore.nn.utils.weight_norm import _weight_norm as wn
    return wn(v, g, dim)


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "functional")
del _bind_module
