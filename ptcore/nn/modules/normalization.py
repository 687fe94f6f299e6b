"""Layer, group, RMS and local response normalization modules of ``ptcore.nn``."""
import numbers
import typing

import ptcore
import ptcore.nn.functional as F
from ptcore.nn.modules.module import Module
from ptcore.nn.parameter import Parameter

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]

# the normalized_shape type (torch.nn.modules.normalization._shape_t, which code
# annotating its own norm layers imports)
_shape_t = typing.Union[int, typing.List[int], ptcore.Size]


def _ones_(t):
    with ptcore.no_grad():
        t.fill_(1)


def _zeros_(t):
    with ptcore.no_grad():
        t.zero_()


class LocalResponseNorm(Module):
    """Local response normalization across channels.

    Parameters
    ----------
    size : int
    alpha, beta, k : float
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    normalized_shape : int or sequence of int
    eps : float
    elementwise_affine : bool
        Learnable weight (ones) and bias (zeros) of shape ``normalized_shape``.
    bias : bool
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(ptcore.empty(self.normalized_shape, **factory_kwargs))
            if bias:
                self.bias = Parameter(ptcore.empty(self.normalized_shape, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            _ones_(self.weight)
            if self.bias is not None:
                _zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups.

    Parameters
    ----------
    num_groups : int
    num_channels : int
    eps : float
    affine : bool
    bias : bool
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *,
                 bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(ptcore.empty(num_channels, **factory_kwargs))
            if bias:
                self.bias = Parameter(ptcore.empty(num_channels, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            _ones_(self.weight)
            if self.bias is not None:
                _zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None))


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    normalized_shape : int or sequence of int
    eps : float or None
        ``None`` uses ``finfo(input.dtype).eps``.
    elementwise_affine : bool
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(ptcore.empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            _ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__))


from ptcore.nn.modules._cross_map_lrn import CrossMapLRN2d  # noqa: E402

__all__ += ["CrossMapLRN2d"]
