"""``ptcore.ao.quantization`` (``torch.ao.quantization``): the quantization stubs a
model marks its quantized region with.  Before ``prepare``/``convert`` (which need
quantized tensors: ptcore has none) they are identities, as in torch, so a model
written for eager-mode quantization runs in floating point unchanged.  The observer and
fake-quantize base classes are here for code that subclasses them or checks ``isinstance``."""
from ptcore.ao.quantization.fake_quantize import FakeQuantizeBase
from ptcore.ao.quantization.observer import ObserverBase
from ptcore.nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub", "ObserverBase", "FakeQuantizeBase"]


class _Stub(Module):
    """The identity in floating point; ``qconfig`` (when given) kept as an attribute."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Marks where a quantized region starts (``torch.ao.quantization.QuantStub``)."""


class DeQuantStub(_Stub):
    """Marks where a quantized region ends (``torch.ao.quantization.DeQuantStub``)."""
