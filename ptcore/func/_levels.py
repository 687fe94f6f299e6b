"""Whether a function transform is running on this thread (``torch._C.
_are_functorch_transforms_active``): a ``vmap`` (the batching layer's frames), or a
``grad``/``vjp``/``jacrev`` (their tracking level) or a ``jvp``/``jacfwd``/``hessian``/
``linearize`` (their dual level) entered with :class:`transform_level`.  A plain
``forward_ad.dual_level`` or ``functional_call`` is no transform, as in torch."""
import threading

from ptcore._dispatch import batching as _B

__all__ = ["transform_level", "transforms_active"]


class _Depth(threading.local):
    def __init__(self):
        self.n = 0


_depth = _Depth()


class transform_level:
    """Context: a reverse- or forward-mode transform's level is active on this thread."""

    def __enter__(self):
        _depth.n += 1
        return self

    def __exit__(self, *exc):
        _depth.n -= 1
        return False


def transforms_active():
    """Whether a ``ptcore.func`` transform is running on this thread.

    >>> import ptcore
    >>> from ptcore.func._levels import transforms_active
    >>> transforms_active()
    False
    >>> out = []
    >>> _ = ptcore.func.vmap(lambda x: (out.append(transforms_active()), x)[1])(ptcore.ones(2))
    >>> out
    [True]
    """
    return _depth.n > 0 or bool(_B.frames())
