"""``ptcore.ao.quantization`` (``torch.ao.quantization``): eager-mode dynamic quantization
(:func:`quantize_dynamic`: ``nn.Linear`` layers to qint8 dynamic quantized ones), the
observers that choose quantization parameters, the dynamic qconfigs, and the
quantization stubs a model marks its quantized region with (identities before
conversion, as in torch; ptcore has no static ``prepare``/``convert`` flow)."""
from ptcore.ao.quantization.fake_quantize import (
    FakeQuantizeBase, FakeQuantize, default_fake_quant, default_weight_fake_quant,
    default_per_channel_weight_fake_quant, disable_fake_quant, enable_fake_quant,
    disable_observer, enable_observer)
from ptcore.ao.quantization.observer import (
    ObserverBase, UniformQuantizationObserverBase, MinMaxObserver, PerChannelMinMaxObserver,
    MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, HistogramObserver,
    PlaceholderObserver, default_histogram_observer, default_weight_observer, default_per_channel_weight_observer,
    default_observer, default_dynamic_quant_observer)
from ptcore.ao.quantization.qconfig import (
    QConfig, QConfigDynamic, default_dynamic_qconfig, per_channel_dynamic_qconfig)
from ptcore.ao.quantization.quantize import (
    quantize_dynamic, propagate_qconfig_, convert, swap_module,
    get_default_dynamic_quant_module_mappings)
from ptcore.nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub", "ObserverBase", "FakeQuantizeBase",
           "UniformQuantizationObserverBase", "MinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAverageMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
           "HistogramObserver", "default_histogram_observer", "FakeQuantize", "default_fake_quant", "default_weight_fake_quant",
           "default_per_channel_weight_fake_quant", "disable_fake_quant", "enable_fake_quant",
           "disable_observer", "enable_observer",
           "PlaceholderObserver", "default_weight_observer",
           "default_per_channel_weight_observer", "default_observer",
           "default_dynamic_quant_observer", "QConfig", "QConfigDynamic",
           "default_dynamic_qconfig", "per_channel_dynamic_qconfig", "quantize_dynamic",
           "propagate_qconfig_", "convert", "swap_module",
           "get_default_dynamic_quant_module_mappings"]


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
