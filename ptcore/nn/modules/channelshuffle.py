"""``ChannelShuffle`` layer."""
import ptcore.nn.functional as F
from ptcore.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Divide the channels into ``groups`` groups and interleave them; see
    :func:`ptcore.nn.functional.channel_shuffle`.

    Parameters
    ----------
    groups : int
    """
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
