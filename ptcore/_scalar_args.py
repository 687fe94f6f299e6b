"""Number parameters read the way torch's Python argument parser reads them.

Where a torch signature says ``Number``/``float`` (``clamp``'s bounds,
``vector_norm``'s ``ord``, ``normal``'s ``mean``/``std``), the parser also
takes a 0-d tensor that does not require grad and uses its value; an ``int``
parameter takes such a tensor only of an integral (non-bool) dtype.  Any
other tensor (more dims, or requiring grad) is refused as not a number.
"""
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = ["number_arg", "int_arg", "is_number_tensor"]


def is_number_tensor(v):
    """True for a tensor that torch's parser takes as a Number: 0-d, no grad."""
    return isinstance(v, _TensorBase) and v.ndim == 0 and not v.requires_grad


def number_arg(v):
    """``v`` for a Number parameter: the Python value of a 0-d tensor that does
    not require grad, else ``v`` unchanged (for the caller's own type check)."""
    return v.item() if is_number_tensor(v) else v


def int_arg(v):
    """``v`` for an int parameter: the value of a 0-d integral (non-bool) tensor
    that does not require grad, else ``v`` unchanged."""
    if is_number_tensor(v) and not (v.dtype.is_floating_point or v.dtype.is_complex
                                    or v.dtype is _C.bool_):
        return v.item()
    return v
