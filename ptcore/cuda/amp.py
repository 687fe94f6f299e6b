"""``ptcore.cuda.amp``: the deprecated per-device autocast and GradScaler spellings."""
from ptcore.amp.autocast_mode import _deprecated_alias, custom_bwd as _cbwd, custom_fwd as _cfwd
from ptcore.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]

autocast = _deprecated_alias("cuda", "cuda")


class GradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``ptcore.amp.GradScaler('cuda', ...)``
    (disabled with a warning when no CUDA device is available, as torch)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        import warnings
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: deprecated ``ptcore.amp.custom_fwd(device_type='cuda')``."""
    import warnings
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _cfwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.cuda.amp.custom_bwd``: deprecated ``ptcore.amp.custom_bwd(device_type='cuda')``."""
    import warnings
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    return _cbwd(bwd, device_type="cuda")
