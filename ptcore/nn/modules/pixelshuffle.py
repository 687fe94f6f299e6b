"""``PixelShuffle`` and ``PixelUnshuffle`` layers."""
import ptcore.nn.functional as F
from ptcore.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C*r^2, H, W)`` into ``(*, C, H*r, W*r)``.

    Parameters
    ----------
    upscale_factor : int
    """
    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r^2, H, W)``.

    Parameters
    ----------
    downscale_factor : int
    """
    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
