"""``ptcore.autograd.variable``: ``Variable``, which is :class:`ptcore.Tensor` (as torch)."""
import ptcore

__all__ = ["Variable"]

Variable = ptcore.Tensor
