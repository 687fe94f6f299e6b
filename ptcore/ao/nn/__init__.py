"""``ptcore.ao.nn`` (``torch.ao.nn``): the quantized neural-network modules."""
from ptcore.ao.nn import quantized  # noqa: F401

__all__ = ["quantized"]
