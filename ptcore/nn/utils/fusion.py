"""Folding batch norm into a preceding convolution or linear layer for inference
(``torch.nn.utils.fusion``).

Ported from PyTorch 2.13's torch/nn/utils/fusion.py (BSD-3-Clause, (c) the PyTorch
contributors) onto ptcore.
"""
from __future__ import annotations

import copy
from typing import TypeVar

import ptcore


__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

ConvT = TypeVar("ConvT", bound="ptcore.nn.modules.conv._ConvNd")
LinearT = TypeVar("LinearT", bound="ptcore.nn.Linear")


def fuse_conv_bn_eval(
    conv: ConvT,
    bn: ptcore.nn.modules.batchnorm._BatchNorm,
    transpose: bool = False,
) -> ConvT:
    r"""Fuse a convolutional module and a BatchNorm module into a single, new convolutional module.

    Args:
        conv (ptcore.nn.modules.conv._ConvNd): A convolutional module.
        bn (ptcore.nn.modules.batchnorm._BatchNorm): A BatchNorm module.
        transpose (bool, optional): If True, transpose the convolutional weight. Defaults to False.

    Returns:
        ptcore.nn.modules.conv._ConvNd: The fused convolutional module.

    .. note::
        Both ``conv`` and ``bn`` must be in eval mode, and ``bn`` must have its running buffers computed.
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)

    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight,
        fused_conv.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )

    return fused_conv


def fuse_conv_bn_weights(
    conv_w: ptcore.Tensor,
    conv_b: ptcore.Tensor | None,
    bn_rm: ptcore.Tensor,
    bn_rv: ptcore.Tensor,
    bn_eps: float,
    bn_w: ptcore.Tensor | None,
    bn_b: ptcore.Tensor | None,
    transpose: bool = False,
) -> tuple[ptcore.nn.Parameter, ptcore.nn.Parameter]:
    r"""Fuse convolutional module parameters and BatchNorm module parameters into new convolutional module parameters.

    Args:
        conv_w (ptcore.Tensor): Convolutional weight.
        conv_b (Optional[ptcore.Tensor]): Convolutional bias.
        bn_rm (ptcore.Tensor): BatchNorm running mean.
        bn_rv (ptcore.Tensor): BatchNorm running variance.
        bn_eps (float): BatchNorm epsilon.
        bn_w (Optional[ptcore.Tensor]): BatchNorm weight.
        bn_b (Optional[ptcore.Tensor]): BatchNorm bias.
        transpose (bool, optional): If True, transpose the conv weight. Defaults to False.

    Returns:
        Tuple[ptcore.nn.Parameter, ptcore.nn.Parameter]: Fused convolutional weight and bias.
    """
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = ptcore.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ptcore.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ptcore.zeros_like(bn_rm)
    bn_var_rsqrt = ptcore.rsqrt(bn_rv + bn_eps)

    if transpose:
        shape = [1, -1] + [1] * (len(conv_w.shape) - 2)
    else:
        shape = [-1, 1] + [1] * (len(conv_w.shape) - 2)

    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(
        dtype=conv_weight_dtype
    )
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(
        dtype=conv_bias_dtype
    )

    return (
        ptcore.nn.Parameter(fused_conv_w, conv_w.requires_grad),
        ptcore.nn.Parameter(fused_conv_b, conv_b.requires_grad),
    )


def fuse_linear_bn_eval(
    linear: LinearT,
    bn: ptcore.nn.modules.batchnorm._BatchNorm,
) -> LinearT:
    r"""Fuse a linear module and a BatchNorm module into a single, new linear module.

    Args:
        linear (ptcore.nn.Linear): A Linear module.
        bn (ptcore.nn.modules.batchnorm._BatchNorm): A BatchNorm module.

    Returns:
        ptcore.nn.Linear: The fused linear module.

    .. note::
        Both ``linear`` and ``bn`` must be in eval mode, and ``bn`` must have its running buffers computed.
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)

    """
    Linear-BN needs to be fused while preserving the shapes of linear weight/bias.
    To preserve the shapes of linear weight/bias, the channel dim of bn needs to be broadcastable with the last dim of linear,
    because bn operates over the channel dim, (N, C_in, H, W) while linear operates over the last dim, (*, H_in).
    To be broadcastable, the number of features in bn and
    the number of output features from linear must satisfy the following condition:
    1. they are equal, or
    2. the number of features in bn is 1
    Otherwise, skip the folding path
    """
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )

    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight,
        fused_linear.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
    )

    return fused_linear


def fuse_linear_bn_weights(
    linear_w: ptcore.Tensor,
    linear_b: ptcore.Tensor | None,
    bn_rm: ptcore.Tensor,
    bn_rv: ptcore.Tensor,
    bn_eps: float,
    bn_w: ptcore.Tensor,
    bn_b: ptcore.Tensor,
) -> tuple[ptcore.nn.Parameter, ptcore.nn.Parameter]:
    r"""Fuse linear module parameters and BatchNorm module parameters into new linear module parameters.

    Args:
        linear_w (ptcore.Tensor): Linear weight.
        linear_b (Optional[ptcore.Tensor]): Linear bias.
        bn_rm (ptcore.Tensor): BatchNorm running mean.
        bn_rv (ptcore.Tensor): BatchNorm running variance.
        bn_eps (float): BatchNorm epsilon.
        bn_w (ptcore.Tensor): BatchNorm weight.
        bn_b (ptcore.Tensor): BatchNorm bias.

    Returns:
        Tuple[ptcore.nn.Parameter, ptcore.nn.Parameter]: Fused linear weight and bias.
    """
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = ptcore.zeros_like(bn_rm)
    bn_scale = bn_w * ptcore.rsqrt(bn_rv + bn_eps)

    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)

    return ptcore.nn.Parameter(fused_w, linear_w.requires_grad), ptcore.nn.Parameter(
        fused_b, linear_b.requires_grad
    )
