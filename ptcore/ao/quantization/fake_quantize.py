"""``ptcore.ao.quantization.fake_quantize`` (``torch.ao.quantization.fake_quantize``):
fake-quantize modules for quantization-aware training: ``FakeQuantize`` observes what
passes through (a moving-average min/max observer by default) and fake-quantizes it with
the observed parameters (``ptcore.fake_quantize_per_tensor_affine`` / ``_per_channel_``:
the gradient passes straight through inside the range); the base class with its
enable/disable switches (uint8 buffers, as torch's) and the default constructors."""
import ptcore
from ptcore.ao.quantization.observer import (
    MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, _QuantizerBase)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "default_fake_quant",
           "default_weight_fake_quant", "default_per_channel_weight_fake_quant",
           "disable_fake_quant", "enable_fake_quant", "disable_observer", "enable_observer"]


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


class FakeQuantize(FakeQuantizeBase):
    """Observes its input with ``observer(**observer_kwargs)`` and fake-quantizes it with
    the observed scale and zero point (``scale``/``zero_point`` buffers)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        app = self.activation_post_process
        self.quant_min, self.quant_max = app.quant_min, app.quant_max
        self.is_dynamic = app.is_dynamic
        self.register_buffer("scale", ptcore.tensor([1.0], dtype=ptcore.float32))
        self.register_buffer("zero_point", ptcore.tensor([0], dtype=ptcore.int32))
        self.dtype = app.dtype
        self.qscheme = app.qscheme
        self.ch_axis = getattr(app, "ch_axis", -1)
        self.bitwidth = (self.quant_max - self.quant_min + 1).bit_length() - 1
        self.is_per_channel = self.qscheme in (ptcore.per_channel_affine,
                                               ptcore.per_channel_symmetric)
        self.is_symmetric_quant = self.qscheme in (ptcore.per_tensor_symmetric,
                                                   ptcore.per_channel_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if int(self.observer_enabled[0]) == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            if self.scale.shape != scale.shape:
                self.scale = ptcore.empty(scale.shape, dtype=self.scale.dtype)
                self.zero_point = ptcore.empty(zero_point.shape, dtype=self.zero_point.dtype)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if int(self.fake_quant_enabled[0]) == 1:
            if self.is_per_channel:
                X = ptcore.fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max)
            else:
                X = ptcore.fake_quantize_per_tensor_affine(
                    X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, quant_min={self.quant_min}, "
                f"quant_max={self.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ptcore.quint8,
    qscheme=ptcore.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ptcore.qint8,
    qscheme=ptcore.per_tensor_symmetric, reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ptcore.qint8, qscheme=ptcore.per_channel_symmetric, reduce_range=False, ch_axis=0)


def disable_fake_quant(mod):
    """For ``module.apply``: turn fake quantization off in a fake-quantize module."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    """For ``module.apply``: turn fake quantization on in a fake-quantize module."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    """For ``module.apply``: freeze the observer of a fake-quantize module."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    """For ``module.apply``: let the observer of a fake-quantize module observe again."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()
