"""``ptcore.cpu.amp``: the deprecated per-device autocast and GradScaler spellings."""
from ptcore.amp.autocast_mode import _deprecated_alias
from ptcore.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler"]

autocast = _deprecated_alias("cpu", "cpu")


class GradScaler(_GradScaler):
    """``torch.cpu.amp.GradScaler(...)``: ``ptcore.amp.GradScaler('cpu', ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        import warnings
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
