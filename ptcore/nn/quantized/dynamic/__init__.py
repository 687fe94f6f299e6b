"""``ptcore.nn.quantized.dynamic`` (``torch.nn.quantized.dynamic``): the dynamic quantized
modules of :mod:`ptcore.ao.nn.quantized.dynamic` under their older path."""
from ptcore.ao.nn.quantized.dynamic import Linear  # noqa: F401

__all__ = ["Linear"]
