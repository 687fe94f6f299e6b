"""``conv_tbc``: a 1-D convolution over (time, batch, channels) input, and torch's
``assert_int_or_pair`` argument check (``torch.nn.functional``)."""
from ptcore.nn.functional._conv import conv1d

__all__ = ["conv_tbc", "assert_int_or_pair"]


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution of a ``(time, batch, in_channels)`` input with a
    ``(kernel_width, in_channels, out_channels)`` weight and ``out_channels`` bias, with
    ``pad`` time steps of zeros on each side; the result is ``(time', batch, out_channels)``."""
    if input.dim() != 3:
        raise RuntimeError(f"conv_tbc: input must have 3 dims (time, batch, channels), got "
                           f"shape {tuple(input.shape)}")
    if weight.dim() != 3:
        raise RuntimeError(f"conv_tbc: weight must have 3 dims (kernel width, in channels, out "
                           f"channels), got shape {tuple(weight.shape)}")
    if bias.dim() != 1:
        raise RuntimeError(f"conv_tbc: bias must have 1 dim, got shape {tuple(bias.shape)}")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"conv_tbc: input has {input.shape[2]} channels but the weight "
                           f"expects {weight.shape[1]} (input {tuple(input.shape)}, weight "
                           f"{tuple(weight.shape)})")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def assert_int_or_pair(arg, arg_name, message):
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or a pair."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
