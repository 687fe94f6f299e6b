"""``ptcore.ao`` (``torch.ao``): architecture optimisation.  ptcore has no quantized
tensors; :mod:`ptcore.ao.quantization` holds the float-mode modules that models written
for eager-mode quantization build before they are quantized (torchvision's quantizable
models), which are what they are in torch then: identities."""
from ptcore.ao import quantization  # noqa: F401

__all__ = ["quantization"]
