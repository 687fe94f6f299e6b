"""Convolution layers (``torch.nn.Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d``)."""
import math

import ptcore
import ptcore.nn.functional as F
import ptcore.nn.init as init
from ptcore.nn.parameter import Parameter, UninitializedParameter
from ptcore.nn.modules.lazy import LazyModuleMixin
from ptcore.nn.modules.module import Module
# torch.nn.modules.conv's names that custom convolution layers import from it
from ptcore.nn.modules.utils import _single, _pair, _triple  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def _reverse_repeat_tuple(t, n):
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(ptcore.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ptcore.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Kaiming-uniform weight (a=sqrt(5)); bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _ConvBase(_ConvNd):
    _nd = 2
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        n = self._nd
        kernel_size_ = _ntuple(kernel_size, n)
        stride_ = _ntuple(stride, n)
        padding_ = padding if isinstance(padding, str) else _ntuple(padding, n)
        dilation_ = _ntuple(dilation, n)
        super().__init__(in_channels, out_channels, kernel_size_, stride_, padding_, dilation_,
                         False, _ntuple(0, n), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice,
                            mode=self.padding_mode),
                      weight, bias, self.stride, _ntuple(0, self._nd), self.dilation,
                      self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvBase):
    """1-d convolution over ``(N, C_in, L)`` or ``(C_in, L)`` inputs.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, dilation : int or tuple
        ``padding`` may be ``'valid'`` or ``'same'``.
    groups : int
    bias : bool
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}
    device, dtype : optional
    """
    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_ConvBase):
    """2-d convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` inputs.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, dilation : int or tuple
        ``padding`` may be ``'valid'`` or ``'same'``.
    groups : int
    bias : bool
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}
    device, dtype : optional

    Examples
    --------
    >>> import ptcore
    >>> m = ptcore.nn.Conv2d(3, 8, 3, padding=1)
    >>> m(ptcore.randn(2, 3, 5, 5)).shape
    ptcore.Size([2, 8, 5, 5])
    """
    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_ConvBase):
    """3-d convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` inputs.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, dilation : int or tuple
    groups : int
    bias : bool
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}
    device, dtype : optional
    """
    _nd = 3
    _fn = staticmethod(F.conv3d)


def _conv_transpose_init(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                         output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                         device=None, dtype=None):
    """ConvTranspose{1,2,3}d's constructor: the sizes as n-tuples, then the base's."""
    n = self._nd
    _ConvTransposeNd.__init__(self, in_channels, out_channels, _ntuple(kernel_size, n),
                              _ntuple(stride, n), _ntuple(padding, n), _ntuple(dilation, n), True,
                              _ntuple(output_padding, n), groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    _nd = 2
    _fn = None

    # torch's base signature (a custom transposed convolution calls it with the
    # sizes already as tuples); the public classes take theirs (_conv_transpose_init)
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims,
                        dilation=None):
        if output_size is None:
            return _ntuple(self.output_padding, num_spatial_dims)
        has_batch = input.dim() == num_spatial_dims + 2
        num_non_spatial = 2 if has_batch else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial + num_spatial_dims:
            output_size = output_size[num_non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {num_non_spatial + num_spatial_dims} elements (got "
                f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.shape[d + num_non_spatial] - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            size, mn, mx = output_size[i], min_sizes[i], max_sizes[i]
            if size < mn or size > mx:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{min_sizes} to {max_sizes} (for an input of {list(input.shape[2:])})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        n = self._nd
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, n, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution ("deconvolution").

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, output_padding, dilation : int or tuple
    groups : int
    bias : bool
    padding_mode : 'zeros'
    device, dtype : optional
    """
    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)
    __init__ = _conv_transpose_init


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution ("deconvolution").

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, output_padding, dilation : int or tuple
    groups : int
    bias : bool
    padding_mode : 'zeros'
    device, dtype : optional
    """
    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)
    __init__ = _conv_transpose_init


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution ("deconvolution").

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or tuple
    stride, padding, output_padding, dilation : int or tuple
    groups : int
    bias : bool
    padding_mode : 'zeros'
    device, dtype : optional
    """
    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)
    __init__ = _conv_transpose_init


# --- lazy convolutions: in_channels inferred from the first input ---

class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                         *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                         *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._nd + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(
                f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {list(input.shape)}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _lazy_setup(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_conv(base):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device=device, dtype=dtype)
            self._lazy_setup(out_channels, bias, device, dtype)
    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    LazyConv.__doc__ = (f"A :class:`{base.__name__}` whose ``in_channels`` is inferred from the "
                        f"first input; becomes a :class:`{base.__name__}` after it.")
    return LazyConv


def _lazy_conv_transpose(base):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                             dilation, padding_mode, device=device, dtype=dtype)
            self._lazy_setup(out_channels, bias, device, dtype)
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    LazyConvTranspose.__doc__ = (f"A :class:`{base.__name__}` whose ``in_channels`` is inferred "
                                 f"from the first input; becomes a :class:`{base.__name__}`.")
    return LazyConvTranspose


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d)
for _cls in (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
             LazyConvTranspose3d):
    _cls.__module__ = __name__
del _cls
__all__ += ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d"]
