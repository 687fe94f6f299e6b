"""Autograd helpers of ``ptcore.nn.Module`` (``torch.nn.modules._functions``):
the identity Function behind the module backward hooks, defined with
:class:`BackwardHook` in :mod:`ptcore.utils.hooks` (torch's home of it)."""
from ptcore.utils.hooks import BackwardHookFunction, BackwardHook

__all__ = ["BackwardHookFunction", "BackwardHook"]
