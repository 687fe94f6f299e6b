"""``ptcore.ao.nn.quantized.dynamic`` (``torch.ao.nn.quantized.dynamic``): modules whose
weights are quantized once and whose activations are quantized at each call."""
from ptcore.ao.nn.quantized.dynamic.modules import Linear  # noqa: F401

__all__ = ["Linear"]
