"""``CTCLoss`` (defined with the other losses in ``ptcore.nn.modules.loss``, as
torch's; this module keeps the old import path working)."""
from ptcore.nn.modules.loss import CTCLoss  # noqa: F401

__all__ = ["CTCLoss"]
