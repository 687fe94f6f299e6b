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
import numbers

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = ["number_arg", "int_arg", "is_number_tensor", "number_param", "int_param",
           "symint_param", "strict_int_param", "strict_symint_param",
           "float_param", "real_param", "bool_param", "dtype_param", "int_list_item",
           "plain_number", "scalar_param"]


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
    gives its Python value; any other tensor or a NumPy array raises torch's
    TypeError; other values pass unchanged."""
    if isinstance(v, _TensorBase):
        if is_number_tensor(v):
            return v.item()
        _refuse(v, fname, argname, "Number", pos)
    if type(v).__name__ == "ndarray" and type(v).__module__ == "numpy":
        # torch's parser takes no NumPy array (not even a 0-d one) as a Number
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{fname}(): argument '{argname}'{where} must be Number, not numpy.ndarray")
    return v


def plain_number(v, fname, argname, pos=None, kind="Number"):
    """``v`` for a Number (or ``kind``) parameter of a Python-level function that
    also takes a tensor there: a NumPy scalar gives its Python value (as torch's
    parser reads it, a NumPy bool included), a NumPy array raises torch's
    TypeError (not even a 0-d one is a number there); anything else passes."""
    t = type(v)
    if t.__module__ == "numpy":
        if t.__name__ == "ndarray":
            where = f" (position {pos})" if pos is not None else ""
            raise TypeError(f"{fname}(): argument '{argname}'{where} must be {kind}, not "
                            f"numpy.ndarray")
        if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
            return v.item()
    return v


def scalar_param(v, fname, argname, pos=None):
    """``v`` for a ``Scalar`` parameter of a Python-level function that takes no
    tensor there (an activation's threshold, ``alpha`` or ``lambd``, ``logit``'s
    ``eps``): a NumPy scalar or a 0-d tensor that does not require grad gives
    its Python value; a one-element tensor of more dims, one requiring grad or a
    NumPy array raises torch's TypeError; other values pass unchanged."""
    return number_param(plain_number(v, fname, argname, pos), fname, argname, pos)


def real_param(v, fname, argname, pos=None):
    """``v`` for a real Number parameter of a Python-level function (an
    activation's slope or bound), as a float: a Python or NumPy real (bool
    included) or a 0-d tensor that does not require grad; anything else (None,
    a string, a NumPy array, another tensor) raises torch's TypeError
    ("must be Number")."""
    v = number_param(plain_number(v, fname, argname, pos), fname, argname, pos)
    if isinstance(v, numbers.Real):
        return float(v)
    where = f" (position {pos})" if pos is not None else ""
    raise TypeError(f"{fname}(): argument '{argname}'{where} must be Number, not {_pyname(v)}")


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


def _pyname(v):
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def strict_int_param(v, fname, argname, pos=None):
    """``v`` for an ``int`` parameter, as torch's parser checks it: a Python int
    (not bool), a NumPy integer scalar, or a 0-d integral (non-bool) tensor that
    does not require grad gives an int; anything else (a bool, a float, a
    NumPy array, another tensor) raises torch's TypeError."""
    if type(v) is int:
        return v
    if isinstance(v, _TensorBase):
        return int_param(v, fname, argname, pos)
    if isinstance(v, int) and not isinstance(v, bool):
        return int(v)
    if type(v).__module__ == "numpy" and hasattr(v, "dtype") and v.dtype.kind in "iu" \
            and getattr(v, "ndim", 0) == 0 and type(v).__name__ != "ndarray":
        return int(v)
    where = f" (position {pos})" if pos is not None else ""
    prefix = f"{fname}(): " if fname else ""
    raise TypeError(f"{prefix}argument '{argname}'{where} must be int, not {_pyname(v)}")


def strict_symint_param(v, fname, argname, pos=None):
    """``v`` for a ``SymInt`` parameter (a size, ``randperm``'s ``n``): an int,
    anything with ``__index__`` but a bool, or a one-element integral tensor
    gives an int; a bool, a float or a NumPy bool raises torch's TypeError."""
    if type(v) is int:
        return v
    if isinstance(v, _TensorBase):
        if v.dtype is _C.bool_ and v.numel() == 1:
            # torch's SymInt reads a bool tensor's value as a non-integral scalar
            raise RuntimeError(f"{fname}(): argument '{argname}' must be an integer, not a bool "
                               f"tensor")
        return symint_param(v, fname, argname, pos)
    if not (isinstance(v, bool) or type(v).__name__ in ("bool", "bool_")) \
            and hasattr(type(v), "__index__") \
            and getattr(getattr(v, "dtype", None), "kind", "") != "b":    # (a NumPy bool array)
        import operator
        return operator.index(v)
    where = f" (position {pos})" if pos is not None else ""
    prefix = f"{fname}(): " if fname else ""
    raise TypeError(f"{prefix}argument '{argname}'{where} must be int, not {_pyname(v)}")


def float_param(v, fname, argname, pos=None):
    """``v`` for a ``float`` parameter (``uniform_``'s bounds, ``exponential_``'s
    ``lambd``): a Python or NumPy number (bool included) or a 0-d tensor that
    does not require grad gives a float; a one-element tensor of more dims, a
    NumPy array, None or a string raises torch's TypeError."""
    if type(v) is float:
        return v
    if isinstance(v, _TensorBase):
        return float(number_param(v, fname, argname, pos))
    if isinstance(v, numbers.Real) or (type(v).__module__ == "numpy" and
                                        type(v).__name__ in ("bool", "bool_")):
        return float(v)
    where = f" (position {pos})" if pos is not None else ""
    raise TypeError(f"{fname}(): argument '{argname}'{where} must be float, not {_pyname(v)}")


def bool_param(v, fname, argname, pos=None):
    """``v`` for a ``bool`` parameter, as torch's parser checks it: only a Python
    bool (not 0/1, a NumPy bool, a tensor or None) passes; anything else raises
    torch's TypeError."""
    if v is True or v is False:
        return v
    where = f" (position {pos})" if pos is not None else ""
    prefix = f"{fname}(): " if fname else ""
    tname = "Tensor" if isinstance(v, _TensorBase) else _pyname(v)
    raise TypeError(f"{prefix}argument '{argname}'{where} must be bool, not {tname}")


_PY_SCALAR_TYPES = (bool, int, float, complex)


def dtype_param(v, fname, argname="dtype", pos=None):
    """``v`` for a ``ScalarType?`` parameter, as torch's parser reads it: None, a
    dtype or one of the Python types bool/int/float/complex passes; anything else
    (a NumPy dtype or scalar type, a number, a tensor, a string) raises torch's
    TypeError."""
    if v is None or isinstance(v, _C.dtype) or v in _PY_SCALAR_TYPES:
        return v
    where = f" (position {pos})" if pos is not None else ""
    prefix = f"{fname}(): " if fname else ""
    if isinstance(v, _TensorBase):
        tname = "Tensor"
    elif isinstance(v, type):
        tname = "type"              # (torch names a class given as the dtype "type")
    else:
        tname = _pyname(v)
    raise TypeError(f"{prefix}argument '{argname}'{where} must be torch.dtype, not {tname}")


def int_list_item(a, fname, argname, i, sym=True):
    """Item ``i`` of an ``int[]`` (``sym``: ``SymInt[]``, a size) parameter, as torch's
    parser reads it: an int, a NumPy integer or any one-element integral tensor gives
    an int; a bool, a float or another object raises torch's TypeError, and a bool
    tensor where a size is expected torch's RuntimeError."""
    if type(a) is int:
        return a
    if isinstance(a, _TensorBase):
        if sym and a.dtype is _C.bool_:
            raise RuntimeError(f"{fname}(): a bool tensor cannot be used as a size")
        if a.numel() == 1 and _integral(a):
            return int(a.item())
    elif not (isinstance(a, bool) or type(a).__name__ in ("bool", "bool_")) \
            and hasattr(type(a), "__index__"):
        import operator
        return operator.index(a)
    tname = "Tensor" if isinstance(a, _TensorBase) else _pyname(a)
    raise TypeError(f"{fname}(): argument '{argname}' must be tuple of ints, but found element "
                    f"of type {tname} at pos {i}")
