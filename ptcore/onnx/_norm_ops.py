"""ONNX converters of the normalisations, statistics and losses models compute in their
forwards: ``group_norm`` / ``instance_norm`` (InstanceNormalization, as torch's exporter
writes them), ``std`` / ``var``, ``norm`` / ``linalg.vector_norm`` (p = 1, 2),
``any`` / ``all`` and ``cosine_similarity`` (the losses are ``_loss_ops``')."""
import inspect

import numpy as np

import ptcore.nn.functional as F

from ptcore.onnx._more_ops import _shape, _reduce
from ptcore.onnx._registration import converter
from ptcore.onnx._opsets import axis as _opset_axis
from ptcore.onnx._shapes import dec, ints as _ints, init as _init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = []


def _bound(node, fn):
    """The node's arguments bound to ``fn``'s signature (defaults applied), decoded
    where they are not tensor values."""
    a = inspect.signature(fn).bind(*node.args, **node.kwargs)
    a.apply_defaults()
    return {k: (v if type(v) is dict and "v" in v else dec(v)) for k, v in a.arguments.items()}


def _dims(b, x, dim):
    rank = len(_shape(b, x))
    if dim is None or dim == [] or dim == ():
        return list(range(rank))
    dim = [dim] if isinstance(dim, int) else list(dim)
    return [_opset_axis(b, d, rank) for d in dim]


def _channel_affine(b, y, weight, bias, rank):
    """``y * weight + bias`` with per-channel (dim 1) vectors."""
    shape = [-1] + [1] * (rank - 2)
    if weight is not None:
        y = b.add("Mul", [y, b.add("Reshape", [b.name(weight), _ints(b, shape)])])
    if bias is not None:
        y = b.add("Add", [y, b.add("Reshape", [b.name(bias), _ints(b, shape)])])
    return y


@converter("nn.functional.group_norm")
def _group_norm(b, node):
    a = _bound(node, F.group_norm)
    x, g = a["input"], int(a["num_groups"])
    rank, dt = len(_shape(b, x)), b.dtype_of(a["input"])
    grouped = b.add("Reshape", [b.name(x), _ints(b, [0, g, -1])])
    normed = b.add("InstanceNormalization", [grouped, _init(b, np.ones(g), dt),
                                             _init(b, np.zeros(g), dt)],
                   epsilon=float(a["eps"]))
    y = b.add("Reshape", [normed, b.add("Shape", [b.name(x)])])
    return _channel_affine(b, y, a["weight"], a["bias"], rank)


@converter("nn.functional.instance_norm")
def _instance_norm(b, node):
    a = _bound(node, F.instance_norm)
    if not a["use_input_stats"]:
        raise UnsupportedOperatorError("instance_norm(use_input_stats=False)")
    x = a["input"]
    c, dt = _shape(b, x)[1], b.dtype_of(x)
    scale = b.name(a["weight"]) if a["weight"] is not None else _init(b, np.ones(c), dt)
    bias = b.name(a["bias"]) if a["bias"] is not None else _init(b, np.zeros(c), dt)
    return b.add("InstanceNormalization", [b.name(x), scale, bias], epsilon=float(a["eps"]))


@converter("var", "std")
def _var_std(b, node):
    x = node.args[0]
    rest, kw = list(node.args[1:]), dict(node.kwargs)
    dim = dec(rest.pop(0)) if rest else dec(kw.pop("dim", None))
    unbiased = None
    if isinstance(dim, bool):                   # var(x, unbiased)
        dim, unbiased = None, dim
    elif rest:
        unbiased = dec(rest.pop(0))
    keepdim = bool(dec(rest.pop(0))) if rest else bool(dec(kw.pop("keepdim", False)))
    unbiased = dec(kw.pop("unbiased", unbiased))
    correction = dec(kw.pop("correction", None))
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _dims(b, x, dim)
    shape = _shape(b, x)
    n = 1
    for d in dims:
        n *= shape[d]
    dt = b.dtype_of(x)
    xn = b.name(x)
    centred = b.add("Sub", [xn, _reduce(b, "ReduceMean", xn, dims, 1)])
    ss = _reduce(b, "ReduceSum", b.add("Mul", [centred, centred]), dims, int(keepdim))
    var = b.add("Div", [ss, _init(b, np.array(max(n - correction, 0)), dt)])
    return b.add("Sqrt", [var]) if node.op[1] == "std" else var


def _p_norm(b, x, p, dim, keepdim):
    op = {1: "ReduceL1", 2: "ReduceL2", "fro": "ReduceL2"}.get(p if not isinstance(p, float)
                                                               or not p.is_integer() else int(p))
    if op is None:
        raise UnsupportedOperatorError(f"norm of order {p!r} (only 1 and 2)")
    return _reduce(b, op, b.name(x), _dims(b, x, dim), int(bool(keepdim)))


@converter("norm")
def _norm(b, node):
    x = node.args[0]
    rest, kw = list(node.args[1:]), node.kwargs
    p = dec(rest[0]) if rest else dec(kw.get("p", "fro"))
    dim = dec(rest[1]) if len(rest) > 1 else dec(kw.get("dim", None))
    keep = dec(rest[2]) if len(rest) > 2 else dec(kw.get("keepdim", False))
    if kw.get("dtype") is not None:
        raise UnsupportedOperatorError("norm with dtype=")
    return _p_norm(b, x, 2 if p is None else p, dim, keep)


@converter("linalg.vector_norm")
def _vector_norm(b, node):
    x = node.args[0]
    rest, kw = list(node.args[1:]), node.kwargs
    p = dec(rest[0]) if rest else dec(kw.get("ord", 2))
    dim = dec(rest[1]) if len(rest) > 1 else dec(kw.get("dim", None))
    keep = dec(rest[2]) if len(rest) > 2 else dec(kw.get("keepdim", False))
    return _p_norm(b, x, p, dim, keep)


@converter("any", "all")
def _any_all(b, node):
    x = node.args[0]
    dim = dec(node.args[1]) if len(node.args) > 1 else dec(node.kwargs.get("dim", None))
    keep = dec(node.args[2]) if len(node.args) > 2 else dec(node.kwargs.get("keepdim", False))
    as_int = b.add("Cast", [b.add("Cast", [b.name(x)], to=9)], to=6)   # -> bool -> int32
    red = _reduce(b, "ReduceMax" if node.op[1] == "any" else "ReduceMin", as_int,
                  _dims(b, x, dim), int(bool(keep)))
    return b.add("Cast", [red], to=9)


@converter("nn.functional.cosine_similarity")
def _cosine_similarity(b, node):
    a = _bound(node, F.cosine_similarity)
    x1, x2 = a["x1"], a["x2"]
    if _shape(b, x1) != _shape(b, x2):
        raise UnsupportedOperatorError("cosine_similarity of inputs that broadcast")
    dt = b.dtype_of(x1)
    dims = _dims(b, x1, int(a["dim"]))
    eps = _init(b, np.array(float(a["eps"])), dt)
    n1 = b.add("Max", [_reduce(b, "ReduceL2", b.name(x1), dims, 1), eps])
    n2 = b.add("Max", [_reduce(b, "ReduceL2", b.name(x2), dims, 1), eps])
    prod = b.add("Mul", [b.add("Div", [b.name(x1), n1]), b.add("Div", [b.name(x2), n2])])
    return _reduce(b, "ReduceSum", prod, dims, 0)

