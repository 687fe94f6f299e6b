"""ONNX converters of the rounding divisions and remainders: ``//`` /
``floor_divide`` and ``div(rounding_mode=...)`` (ONNX Div truncates integers
toward zero; torch floors), ``%`` / ``remainder`` (Python's sign rule: the
divisor's sign; ONNX Mod with ``fmod=0`` for integers, ``fmod`` corrected for
floats, as torch computes it) and ``fmod`` (the dividend's sign, Mod with
``fmod=1``).  Operands are taken in the recorded result's dtype (torch's type
promotion); the reflected operators (``7 // x``, ``7 % x``) swap them."""
import numpy as np

from ptcore.onnx._more_ops import _arg
from ptcore.onnx._registration import converter
from ptcore.onnx._shapes import dec, is_value, init as _init, floor_div_int, signs_differ
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = []

_FLOATS = ("float32", "float64", "float16", "bfloat16")


def _operands(b, node):
    """``(x, y, dtype)``: the two operands as ONNX names in the result's dtype
    (a number as a 0-d constant), swapped for ``__r*__``."""
    x, y = node.args[0], _arg(node, 1, "other")
    if node.op[1].startswith("__r"):
        x, y = y, x
    dt = b.dtype_of(node.outputs)

    def operand(v):
        v = dec(v) if not is_value(v) else v
        if is_value(v):
            return b.as_dtype(v, dt)
        return _init(b, np.array(v), dt)
    return operand(x), operand(y), dt


def _floor_div(b, x, y, dt):
    if dt in _FLOATS:
        return b.add("Floor", [b.add("Div", [x, y])])
    if dt in ("bool", "uint8"):             # (no negative values: truncation floors)
        return b.add("Div", [x, y])
    return floor_div_int(b, x, y, dt)


def _trunc_div(b, x, y, dt):
    q = b.add("Div", [x, y])
    if dt not in _FLOATS:
        return q                            # ONNX Div of integers truncates
    # trunc(q): Floor of |q| with q's sign (ONNX has no Trunc)
    zero = _init(b, np.array(0), dt)
    return b.add("Where", [b.add("Less", [q, zero]), b.add("Ceil", [q]), b.add("Floor", [q])])


@converter("Tensor.__floordiv__", "Tensor.__rfloordiv__", "floor_divide")
def _floor_divide(b, node):
    return _floor_div(b, *_operands(b, node))


@converter("div", "divide")
def _div(b, node):
    """div / divide with ``rounding_mode`` (the plain form is the exporter's Div)."""
    mode = dec(node.kwargs.get("rounding_mode"))
    x, y, dt = _operands(b, node)
    if mode is None:
        return b.add("Div", [x, y])
    if mode == "floor":
        return _floor_div(b, x, y, dt)
    if mode == "trunc":
        return _trunc_div(b, x, y, dt)
    raise UnsupportedOperatorError(f"div with rounding_mode={mode!r}")


@converter("Tensor.__mod__", "Tensor.__rmod__", "remainder")
def _remainder(b, node):
    """Python's remainder (the divisor's sign): Mod(fmod=0) for integers; for
    floats (Mod takes fmod=1 only) torch's rule: r = fmod(x, y), plus y where
    r is not 0 and its sign differs from y's."""
    x, y, dt = _operands(b, node)
    if dt not in _FLOATS:
        return b.add("Mod", [x, y], fmod=0)
    r = b.add("Mod", [x, y], fmod=1)
    fix = signs_differ(b, r, y, _init(b, np.array(0), dt))
    return b.add("Where", [fix, b.add("Add", [r, y]), r])


@converter("fmod")
def _fmod(b, node):
    x, y, _ = _operands(b, node)
    return b.add("Mod", [x, y], fmod=1)

