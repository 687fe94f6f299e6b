"""``ptcore.ao.nn.quantized`` (``torch.ao.nn.quantized``): quantized modules; the dynamic
ones (weights quantized ahead, activations at each call) are in :mod:`.dynamic`."""
from ptcore.ao.nn.quantized import dynamic  # noqa: F401
from ptcore.ao.nn.quantized.dynamic.modules.linear import LinearPackedParams  # noqa: F401

__all__ = ["dynamic", "LinearPackedParams"]
