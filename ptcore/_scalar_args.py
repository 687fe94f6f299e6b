"""Number parameters read the way torch's Python argument parser reads them.

Where a torch signature says ``Number``/``float`` (``clamp``'s bounds,
``vector_norm``'s ``ord``, ``normal``'s ``mean``/``std``), the parser also
takes a 0-d tensor that does not require grad and uses its value; an ``int``
parameter takes such a tensor only of an integral (non-bool) dtype.  Any
other tensor (more dims, or requiring grad) is refused as not a number.
A ``SymInt`` parameter (``topk``'s ``k``, a size) and an item of an ``int[]``
parameter (a ``dim`` list, ``view``'s sizes) take any one-element tensor of an
integral dtype, bool included.
"""
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = ["number_arg", "int_arg", "is_number_tensor", "number_param", "int_param",
           "symint_param"]


def is_number_tensor(v):
    """True for a tensor that torch's parser takes as a Number: 0-d, no grad."""
    return isinstance(v, _TensorBase) and v.ndim == 0 and not v.requires_grad


def _integral(v):
    return not (v.dtype.is_floating_point or v.dtype.is_complex)


def number_arg(v):
    """``v`` for a Number parameter: the Python value of a 0-d tensor that does
    not require grad, else ``v`` unchanged (for the caller's own type check)."""
    return v.item() if is_number_tensor(v) else v


def int_arg(v):
    """``v`` for an int parameter: the value of a 0-d integral (non-bool) tensor
    that does not require grad, else ``v`` unchanged."""
    if is_number_tensor(v) and _integral(v) and v.dtype is not _C.bool_:
        return v.item()
    return v


def _refuse(v, fname, argname, kind, pos):
    where = f" (position {pos})" if pos is not None else ""
    raise TypeError(f"{fname}(): argument '{argname}'{where} must be {kind}, not Tensor "
                    f"(a {v.dtype} tensor of shape {list(v.shape)}"
                    f"{', requiring grad' if v.requires_grad else ''})")


def number_param(v, fname, argname, pos=None):
    """``v`` for a Number parameter: a 0-d tensor that does not require grad
    gives its Python value; any other tensor raises torch's TypeError; other
    values pass unchanged."""
    if isinstance(v, _TensorBase):
        if is_number_tensor(v):
            return v.item()
        _refuse(v, fname, argname, "Number", pos)
    return v


def int_param(v, fname, argname, pos=None):
    """``v`` for an int parameter: a 0-d integral (non-bool) tensor gives its
    value; any other tensor raises torch's TypeError; other values pass."""
    if isinstance(v, _TensorBase):
        if is_number_tensor(v) and _integral(v) and v.dtype is not _C.bool_:
            return v.item()
        _refuse(v, fname, argname, "int", pos)
    return v


def symint_param(v, fname, argname, pos=None):
    """``v`` for a SymInt parameter or an ``int[]`` item: a one-element tensor
    of an integral dtype (bool included) gives its value as an int; any other
    tensor raises torch's TypeError; other values pass."""
    if isinstance(v, _TensorBase):
        if v.numel() == 1 and _integral(v):
            return int(v.item())
        _refuse(v, fname, argname, "int", pos)
    return v
