"""``ptcore.nn.quantized`` (``torch.nn.quantized``): the quantized modules of
:mod:`ptcore.ao.nn.quantized` under their older path."""
from ptcore.ao.nn.quantized import LinearPackedParams  # noqa: F401
from ptcore.nn.quantized import dynamic  # noqa: F401

__all__ = ["dynamic", "LinearPackedParams"]
