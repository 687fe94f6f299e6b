"""Symbolic-size helpers of torch's root (``torch.sym_int`` ... and the ``SymInt`` /
``SymFloat`` / ``SymBool`` classes).

ptcore has no symbolic tracing: sizes are always concrete Python numbers, so no ``Sym*``
instance is ever produced (``isinstance(n, ptcore.SymInt)`` is False for every size, as in
eager torch) and the ``sym_*`` functions compute on plain numbers (and on tensors as far as
``int()``, ``float()`` and ``math`` accept them), exactly as torch's eager fallbacks do.
"""
import builtins
import math

import numpy as np

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min",
           "sym_not", "sym_sqrt", "sym_ite", "sym_sum"]


class _SymNumber:
    """Base of the symbolic number types: a value held by a symbolic node (never created
    by ptcore itself)."""

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return f"{type(self).__name__}({self.node!r})"


class SymInt(_SymNumber):
    """An integer whose value is symbolic (``torch.SymInt``); plain ``int`` sizes are used
    everywhere in ptcore."""


class SymFloat(_SymNumber):
    """A float whose value is symbolic (``torch.SymFloat``)."""


class SymBool(_SymNumber):
    """A bool whose value is symbolic (``torch.SymBool``)."""


_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def sym_int(a):
    """``int(a)`` (truncating a float), as ``torch.sym_int``."""
    if isinstance(a, SymInt):
        return a
    return builtins.int(a)


def sym_float(a):
    """``float(a)``, as ``torch.sym_float``."""
    if isinstance(a, SymFloat):
        return a
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def _check_numbers(a, b):
    for v in (a, b):
        if not isinstance(v, _ALL_TYPES):
            raise AssertionError(f"expected {_ALL_TYPES}, got {type(v)}")
    return isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES)


def sym_max(a, b):
    """``max(a, b)`` of two numbers, a float when either is one (``torch.sym_max``)."""
    if _check_numbers(a, b):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    """``min(a, b)`` of two numbers, a float when either is one (``torch.sym_min``)."""
    if _check_numbers(a, b):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    """Logical negation (``torch.sym_not``)."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_sqrt(a):
    """``math.sqrt(a)`` (``torch.sym_sqrt``)."""
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_ite(b, t, f):
    """``t if b else f`` (``torch.sym_ite``): ``b`` must be a bool and ``t``, ``f`` of one type."""
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sum(*args):
    """The sum of the arguments (``sym_sum([a, b, c])`` or ``sym_sum(a, b, c)``)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)
