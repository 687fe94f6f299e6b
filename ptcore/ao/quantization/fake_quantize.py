"""``ptcore.ao.quantization.fake_quantize`` (``torch.ao.quantization.fake_quantize``): the base
class fake-quantize modules derive from, with its enable/disable switches (uint8 buffers, as
torch's).  No concrete fake quantizer: see :mod:`ptcore.ao.quantization.observer`."""
import ptcore
from ptcore.ao.quantization.observer import _QuantizerBase

__all__ = ["FakeQuantizeBase"]


class FakeQuantizeBase(_QuantizerBase):
    """Base fake-quantize module: ``forward`` observes and fake-quantizes its input,
    ``calculate_qparams`` gives the quantization parameters (both abstract);
    ``fake_quant_enabled`` and ``observer_enabled`` are one-element uint8 buffers."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", ptcore.tensor([1], dtype=ptcore.uint8))
        self.register_buffer("observer_enabled", ptcore.tensor([1], dtype=ptcore.uint8))

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)
