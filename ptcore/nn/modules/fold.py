"""``Fold`` and ``Unfold`` layers (sliding-window column <-> image)."""
import ptcore.nn.functional as F
from ptcore.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combine sliding local blocks ``(N, C*prod(kernel), L)`` into an image
    ``(N, C, *output_size)``; see :func:`ptcore.nn.functional.fold`.

    Parameters
    ----------
    output_size, kernel_size : int or tuple
    dilation, padding, stride : int or tuple
    """
    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """Extract sliding local blocks of an image into columns; see
    :func:`ptcore.nn.functional.unfold`.

    Parameters
    ----------
    kernel_size : int or tuple
    dilation, padding, stride : int or tuple
    """
    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
