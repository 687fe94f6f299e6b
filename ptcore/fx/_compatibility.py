"""``torch.fx._compatibility``: the decorator torch.fx marks its API with (and that code
subclassing fx's classes applies to its overrides, PyTorch Geometric's tracer among them).
It notes in the docstring whether the API is backward compatible and keeps the marked
objects in two registries, as torch's does."""
import textwrap

__all__ = ["compatibility"]

#: objects marked backward compatible, and all marked objects (insertion-ordered sets)
_BACK_COMPAT_OBJECTS = {}
_MARKED_WITH_COMPATIBILITY = {}

_NOTE = """

.. note::
    Backwards-compatibility for this API is guaranteed.
"""
_WARNING = """

.. warning::
    This API is experimental and is *NOT* backward-compatible.
"""


def compatibility(is_backward_compatible):
    """A decorator marking ``fn`` as backward compatible (or experimental) API.

    >>> from ptcore.fx._compatibility import compatibility
    >>> @compatibility(is_backward_compatible=True)
    ... def f():
    ...     "Doc."
    >>> "guaranteed" in f.__doc__
    True
    """
    def mark(fn):
        doc = textwrap.dedent(getattr(fn, "__doc__", None) or "")
        fn.__doc__ = doc + (_NOTE if is_backward_compatible else _WARNING)
        if is_backward_compatible:
            _BACK_COMPAT_OBJECTS.setdefault(fn)
        _MARKED_WITH_COMPATIBILITY.setdefault(fn)
        return fn
    return mark
