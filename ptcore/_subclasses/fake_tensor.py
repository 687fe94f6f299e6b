"""``torch._subclasses.fake_tensor``'s names.  ptcore has no fake tensors: nothing is ever
a :class:`FakeTensor` (so :func:`is_fake` is false for every object, as torch's is for
every tensor made outside a :class:`FakeTensorMode`), and entering or constructing the mode
raises :class:`NotImplementedError` (ptcore infers shapes on the ``meta`` device:
``ptcore.empty(..., device="meta")``)."""
from ptcore.tensor import Tensor

__all__ = ["DynamicOutputShapeException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException", "is_fake", "maybe_get_fake_mode"]

_NO_FAKE = ("ptcore has no fake tensors (torch._subclasses.FakeTensorMode); "
            "use tensors on the 'meta' device for shapes without data")


class UnsupportedFakeTensorException(RuntimeError):
    """An op fake tensors cannot run (torch's type; ptcore never raises it)."""


class DynamicOutputShapeException(RuntimeError):
    """An op whose output shape depends on data (torch's type; ptcore never raises it)."""


class FakeTensor(Tensor):
    """torch's fake tensor type, for ``isinstance`` checks: ptcore makes none."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_NO_FAKE)


class FakeTensorMode:
    """torch's fake-tensor mode: not available in ptcore (constructing it raises
    :class:`NotImplementedError`)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_NO_FAKE)


def is_fake(x):
    """Whether ``x`` is a fake tensor: false for every object in ptcore, which makes none.

    >>> import ptcore
    >>> from ptcore._subclasses.fake_tensor import is_fake
    >>> is_fake(ptcore.ones(2)), is_fake(ptcore.empty(2, device="meta"))
    (False, False)
    """
    return isinstance(x, FakeTensor)


def maybe_get_fake_mode(t):
    """The fake mode ``t`` belongs to: ``None`` (ptcore makes no fake tensors)."""
    return None
