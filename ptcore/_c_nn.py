"""``ptcore._C._nn`` (``torch._C._nn``): the neural-network ops under the names and
signatures of torch's C namespace, which libraries call directly -- Lightning's
``DeviceDtypeModuleMixin.to`` parses its arguments with ``_parse_to``; DDP-style code
packs gradients with ``flatten_dense_tensors``.

The signatures are the ATen ones, not ``nn.functional``'s: a loss takes ``reduction`` as
the integer of :func:`ptcore.nn._reduction.get_enum` (0 none, 1 mean, 2 sum), positionally
after ``weight`` where it has one.  ``ptcore.nn`` loads on the first call, not with ptcore.
"""
import ptcore
from ptcore.tensor import _parse_to as _parse_to_args

__all__ = ["_parse_to", "linear", "gelu", "silu", "mish", "hardswish", "hardsigmoid",
           "relu6", "log_sigmoid", "softplus", "leaky_relu", "hardtanh", "glu", "one_hot",
           "pad", "scaled_dot_product_attention", "pad_sequence", "mse_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss", "soft_margin_loss", "binary_cross_entropy",
           "nll_loss", "cross_entropy_loss", "flatten_dense_tensors",
           "unflatten_dense_tensors"]

_REDUCTIONS = ("none", "mean", "sum")


def _F():
    # lazy: ptcore.nn loads on first use, not with ptcore (_LAZY_MODULES)
    import ptcore.nn.functional as F
    return F


def _reduction(reduction):
    if isinstance(reduction, bool) or not isinstance(reduction, int) \
            or not 0 <= reduction < len(_REDUCTIONS):
        raise TypeError(f"reduction must be an int 0 (none), 1 (mean) or 2 (sum), got "
                        f"{reduction!r}")
    return _REDUCTIONS[reduction]


def _parse_to(*args, **kwargs):
    """``(device, dtype, non_blocking, memory_format)`` of a ``to(...)`` call's
    arguments (any of ``Tensor.to``'s forms); ``copy=`` is refused, as torch."""
    if "copy" in kwargs:
        raise RuntimeError(".to() does not accept copy argument")
    device, dtype, non_blocking, _copy, memory_format = _parse_to_args(args, dict(kwargs))
    return device, dtype, non_blocking, memory_format


def linear(input, weight, bias=None):
    return _F().linear(input, weight, bias)


def gelu(input, *, approximate="none"):
    return _F().gelu(input, approximate=approximate)


def silu(input):
    return _F().silu(input)


def mish(input):
    return _F().mish(input)


def hardswish(input):
    return _F().hardswish(input)


def hardsigmoid(input):
    return _F().hardsigmoid(input)


def relu6(input):
    return _F().relu6(input)


def log_sigmoid(input):
    return _F().logsigmoid(input)


def softplus(input, beta=1, threshold=20):
    return _F().softplus(input, beta, threshold)


def leaky_relu(input, negative_slope=0.01):
    return _F().leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1, max_val=1):
    return _F().hardtanh(input, min_val, max_val)


def glu(input, dim=-1):
    return _F().glu(input, dim)


def one_hot(tensor, num_classes=-1):
    return _F().one_hot(tensor, num_classes)


def pad(input, pad, mode="constant", value=None):
    return _F().pad(input, pad, mode, value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    return _F().scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                             is_causal, scale=scale, enable_gqa=enable_gqa)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    # lazy: ptcore.nn loads on first use, not with ptcore (_LAZY_MODULES)
    from ptcore.nn.utils.rnn import pad_sequence as _pad_sequence
    return _pad_sequence(sequences, batch_first, padding_value, padding_side)


def mse_loss(input, target, reduction=1):
    return _F().mse_loss(input, target, reduction=_reduction(reduction))


def l1_loss(input, target, reduction=1):
    return _F().l1_loss(input, target, reduction=_reduction(reduction))


def smooth_l1_loss(input, target, reduction=1, beta=1.0):
    return _F().smooth_l1_loss(input, target, reduction=_reduction(reduction), beta=beta)


def huber_loss(input, target, reduction=1, delta=1.0):
    return _F().huber_loss(input, target, reduction=_reduction(reduction), delta=delta)


def soft_margin_loss(input, target, reduction=1):
    return _F().soft_margin_loss(input, target, reduction=_reduction(reduction))


def binary_cross_entropy(input, target, weight=None, reduction=1):
    return _F().binary_cross_entropy(input, target, weight, reduction=_reduction(reduction))


def nll_loss(input, target, weight=None, reduction=1, ignore_index=-100):
    return _F().nll_loss(input, target, weight, ignore_index=ignore_index,
                         reduction=_reduction(reduction))


def cross_entropy_loss(input, target, weight=None, reduction=1, ignore_index=-100,
                       label_smoothing=0.0):
    return _F().cross_entropy(input, target, weight, ignore_index=ignore_index,
                              reduction=_reduction(reduction), label_smoothing=label_smoothing)


def flatten_dense_tensors(tensors):
    """The tensors' elements one after another in one 1-D tensor (a copy)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("flatten_dense_tensors: expected a non-empty list of tensors")
    return ptcore.cat([t.reshape(-1) for t in tensors])


def unflatten_dense_tensors(flat, tensors):
    """A tuple of views of ``flat`` shaped as ``tensors``, in order (the inverse of
    :func:`flatten_dense_tensors`), as torch's."""
    tensors = list(tensors)
    total = sum(t.numel() for t in tensors)
    if flat.dim() != 1 or flat.numel() != total:
        raise RuntimeError(f"unflatten_dense_tensors: a 1-D tensor of {total} elements was "
                           f"expected for tensors of shapes {[tuple(t.shape) for t in tensors]}, "
                           f"got shape {tuple(flat.shape)}")
    out, offset = [], 0
    for t in tensors:
        out.append(flat.narrow(0, offset, t.numel()).view(t.shape))
        offset += t.numel()
    return tuple(out)
