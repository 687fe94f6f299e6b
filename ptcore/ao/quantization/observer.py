"""``ptcore.ao.quantization.observer`` (``torch.ao.quantization.observer``): the base class
observers derive from.  ptcore has no quantized tensors, so no concrete observer: the base is
here for code that subclasses it or tests ``isinstance`` against it (fvcore's checkpointer
skips observer modules)."""
import functools
from abc import ABC, abstractmethod

from ptcore.nn.modules.module import Module

__all__ = ["ObserverBase"]


def _with_args(cls_or_self, **kwargs):
    """A constructor of ``cls_or_self`` with ``kwargs`` bound (torch's ``with_args``)."""
    return functools.partial(cls_or_self, **kwargs)


class _QuantizerBase(ABC, Module):
    """What observers and fake quantizers share: an abstract ``forward`` (which observes what
    passes through) and ``calculate_qparams``, and the ``with_args`` constructor maker."""

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    with_args = classmethod(_with_args)


class ObserverBase(_QuantizerBase):
    """Base observer module: ``forward`` records statistics of what passes through and
    ``calculate_qparams`` turns them into quantization parameters (both abstract)."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic
