"""Padding layers (``torch.nn.ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``,
``ReplicationPad*``, ``CircularPad*``)."""
from collections.abc import Iterable

import ptcore.nn.functional as F
from ptcore.nn.modules.module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _ntuple(v, n):
    # as torch's _ntuple: a sequence is kept whatever its length (F.pad judges it, so a
    # ZeroPad2d given 6 ints pads 3 dims), a scalar is repeated
    if isinstance(v, Iterable):
        return tuple(v)
    return (v,) * n


class _PadNd(Module):
    __constants__ = ["padding", "mode"]
    _nd = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._nd)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(Module):
    # torch's base takes the value only (a subclass sets ``padding``); ptcore's
    # ConstantPad*d pass their padding along
    __constants__ = ["padding", "value"]
    _nd = 1

    def __init__(self, value, padding=None):
        super().__init__()
        self.value = value
        if padding is not None:
            self.padding = _ntuple(padding, 2 * self._nd)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _constant_pad_init(self, padding, value):
    _ConstantPadNd.__init__(self, value, padding)


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant ``value``."""
    _nd = 1
    __init__ = _constant_pad_init


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant ``value``."""
    _nd = 2
    __init__ = _constant_pad_init


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant ``value``."""
    _nd = 3
    __init__ = _constant_pad_init


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with the reflection of the input."""
    _nd = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dims with the reflection of the input."""
    _nd = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dims with the reflection of the input."""
    _nd = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating the edge values."""
    _nd = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dims by repeating the edge values."""
    _nd = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dims by repeating the edge values."""
    _nd = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        # torch's CircularPad*d check the rank themselves (ValueError), before F.pad
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input "
                             f"(got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim circularly."""
    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dims circularly."""
    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dims circularly."""
    _nd = 3
