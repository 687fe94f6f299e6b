"""Dropout functions of ``ptcore.nn.functional``."""
import math
import warnings

import ptcore
from ptcore._dispatch.device import loop_for as _loop_for
from ptcore._dispatch.dispatcher import parts_intercepted as _parts_intercepted
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import bool_param, float_param

__all__ = ["dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
           "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766


def _check_p(p, training, fname):
    """``p`` and ``training`` read as torch's kernels take them: ``p`` a float (a
    NumPy scalar or 0-d tensor passes, a NumPy array is a TypeError), ``training``
    a Python bool."""
    if p < 0.0 or p > 1.0:          # (torch's Python check, before its parser's)
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    p = float_param(p, fname, "p", 2)
    bool_param(training, fname, "train", 3)
    return p


def _dropout_impl(input, p, train, inplace, feature, alpha):
    if not isinstance(input, _TensorBase):
        raise TypeError(f"dropout(): argument 'input' must be Tensor, not {type(input).__name__}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = ptcore.zeros((), dtype=input.dtype)
        if inplace:
            return input.mul_(zero)
        return input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError(
                "Feature dropout requires at least 2 dimensions in the input")
        noise_shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    else:
        noise_shape = list(input.shape)
    with ptcore.no_grad():
        b = None
        # a device's one-kernel scaled mask (the bits and draws of the two ops below)
        fused = None if alpha or _parts_intercepted() else \
            _loop_for("dropout_noise", input.device, None)
        noise = None if fused is None else fused(noise_shape, input.dtype, input.device, 1 - p)
        if noise is None:
            noise = ptcore.empty(noise_shape, dtype=input.dtype, device=input.device)
            noise.bernoulli_(1 - p)
            if alpha:
                a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
                b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
                noise.mul_(a)
            else:
                noise.div_(1 - p)
    if inplace:
        input.mul_(noise)
        if b is not None:
            input.add_(b)
        return input
    out = input * noise
    if b is not None:
        out = out + b
    return out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (training only)."""
    p = _check_p(p, training, "dropout")
    return _dropout_impl(input, p, training, inplace, False, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (keeps SELU's self-normalising mean and variance)."""
    p = _check_p(p, training, "alpha_dropout")
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels."""
    p = _check_p(p, training, "feature_alpha_dropout")
    return _dropout_impl(input, p, training, inplace, True, True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of ``(N, C, L)`` or ``(C, L)`` inputs."""
    p = _check_p(p, training, "feature_dropout")
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    is_batched = inp_dim == 3
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, inplace, True, False)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of ``(N, C, H, W)`` or ``(C, H, W)`` inputs (3-D is read as (N, C, L))."""
    p = _check_p(p, training, "feature_dropout")
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""
    p = _check_p(p, training, "feature_dropout")
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    is_batched = inp_dim == 5
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, inplace, True, False)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result
