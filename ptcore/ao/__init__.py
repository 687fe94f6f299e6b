"""``ptcore.ao`` (``torch.ao``): architecture optimisation: :mod:`ptcore.ao.quantization`
(dynamic quantization, observers, qconfigs, the quantization stubs) and
:mod:`ptcore.ao.nn` (the quantized modules)."""
from ptcore.ao import nn, quantization  # noqa: F401

__all__ = ["nn", "quantization"]
