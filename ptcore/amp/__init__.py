"""Automatic mixed precision (``torch.amp``): :class:`autocast` regions,
whose casts the dispatch point's autocast layer applies, and
:class:`GradScaler` for loss scaling."""
from ptcore.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from ptcore.amp.grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
