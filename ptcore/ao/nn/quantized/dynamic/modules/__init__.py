"""The dynamic quantized modules (``torch.ao.nn.quantized.dynamic.modules``)."""
from ptcore.ao.nn.quantized.dynamic.modules.linear import Linear  # noqa: F401

__all__ = ["Linear"]
