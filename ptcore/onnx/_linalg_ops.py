"""ONNX converters of contractions and distances: ``einsum`` (ONNX Einsum,
opset 12; the equation form and the sublist form ``einsum(a, [0, 1], b, [1, 2])``)
and ``cdist`` (pairwise p-norm distances of the rows of two batches: the
differences broadcast, then ReduceL2 / ReduceL1 / max / a general power sum)."""
import math

import numpy as np

import ptcore.onnx._proto as P
from ptcore.onnx._more_ops import _shape, _reduce
from ptcore.onnx._registration import converter
from ptcore.onnx._norm_ops import _bound
from ptcore.onnx._shapes import dec, is_value, ints as _ints, init as _init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = []

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(items):
    """einsum's sublist form ``(op, dims, op, dims, ..., [output dims])`` as
    ``(equation, operands)``."""
    def letters(dims):
        return "".join("..." if d is Ellipsis else _LETTERS[int(d)] for d in dims)
    out = None
    if len(items) % 2 == 1:
        items, out = items[:-1], items[-1]
    eq = ",".join(letters(s) for s in items[1::2])
    return eq + ("" if out is None else "->" + letters(out)), list(items[0::2])


@converter("ptcore.einsum")
def _einsum(b, node):
    args = [dec(a) if not is_value(a) else a for a in node.args]
    if args and isinstance(args[0], str):
        eq, ops = args[0], args[1:]
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _sublist(args)
    if not all(is_value(o) for o in ops):
        raise UnsupportedOperatorError("einsum of operands that are not tensors")
    dt = b.dtype_of(node.outputs)
    return b.add("Einsum", [b.as_dtype(o, dt) for o in ops], equation=eq.replace(" ", ""))


@converter("ptcore.cdist")
def _cdist(b, node):
    import ptcore
    a = _bound(node, ptcore.cdist)
    x1, x2 = a["x1"], a["x2"]
    p = float(a["p"])
    if p < 0:
        raise ValueError(f"cdist only supports non-negative p values, got {p}")
    rank = len(_shape(b, x1))
    dt = b.dtype_of(node.outputs)
    # (..., P, 1, M) - (..., 1, R, M): the differences of every pair of rows
    d = b.add("Sub", [b.add("Unsqueeze", [b.as_dtype(x1, dt), _ints(b, [rank - 1])]),
                      b.add("Unsqueeze", [b.as_dtype(x2, dt), _ints(b, [rank - 2])])])
    last = [rank]
    if p == 2.0:
        return _reduce(b, "ReduceL2", d, last, 0)
    if p == 1.0:
        return _reduce(b, "ReduceL1", d, last, 0)
    ad = b.add("Abs", [d])
    if math.isinf(p):
        return _reduce(b, "ReduceMax", ad, last, 0)
    if p == 0.0:                            # the number of coordinates that differ
        nz = b.add("Cast", [b.add("Greater", [ad, _init(b, np.array(0), dt)])],
                   to=P.DTYPES[dt])
        return _reduce(b, "ReduceSum", nz, last, 0)
    s = _reduce(b, "ReduceSum", b.add("Pow", [ad, _init(b, np.array(p), dt)]), last, 0)
    return b.add("Pow", [s, _init(b, np.array(1.0 / p), dt)])

