"""ONNX converters of the selection, ordering and triangle ops models use in their
forwards: ``index_select`` (Gather), ``gather`` (GatherElements), ``topk`` (TopK),
``sort``/``argsort`` (TopK over the whole dim), ``flip`` (Slice with step -1),
``triu``/``tril`` (Trilu), ``one_hot`` (OneHot), ``logsumexp``/``amax``/``amin``
(Reduce*) and ``clamp_min``/``clamp_max`` (Max/Min with a constant), in the shapes
torch's exporter writes; registered in the exporter's converter table."""
import numpy as np

from ptcore.onnx import _opsets
from ptcore.onnx._more_ops import (CONVERTERS as _MORE, _arg, _val, _shape, _slice, _reduce,
                                   _scalar_like)
from ptcore.onnx._shapes import ints as _ints, init as _init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = ["CONVERTERS"]

_INT64_MIN = -(1 << 63)


def _axis(b, x, dim):
    return _opsets.axis(b, int(dim), len(_shape(b, x)))


def _index_select(b, node):
    x, dim, index = node.args[0], _val(node, 1, "dim"), _arg(node, 2, "index")
    return b.add("Gather", [b.name(x), b.name(index)], axis=_axis(b, x, dim))


def _gather(b, node):
    x, dim, index = node.args[0], _val(node, 1, "dim"), _arg(node, 2, "index")
    if _val(node, 3, "sparse_grad", False):
        raise UnsupportedOperatorError("gather(sparse_grad=True)")
    return b.add("GatherElements", [b.name(x), b.name(index)], axis=_axis(b, x, dim))


def _topk_node(b, x, k, dim, largest, sorted_):
    return b.add("TopK", [b.name(x), _ints(b, [int(k)])], outputs=[b.fresh("topk_values"),
                                                                  b.fresh("topk_indices")],
                 axis=_axis(b, x, dim), largest=int(bool(largest)), sorted=int(bool(sorted_)))


def _topk(b, node):
    x = node.args[0]
    k = _val(node, 1, "k")
    return list(_topk_node(b, x, k, _val(node, 2, "dim", -1), _val(node, 3, "largest", True),
                           _val(node, 4, "sorted", True)))


def _sort(b, node):
    x = node.args[0]
    dim = _val(node, 1, "dim", -1)
    descending = _val(node, 2, "descending", False)
    if isinstance(dim, bool):           # sort(x, descending) positionally
        dim, descending = -1, dim
    if _val(node, 99, "stable", False):
        raise UnsupportedOperatorError("sort(stable=True) (ONNX TopK does not keep the order "
                                       "of equal elements)")
    n = _shape(b, x)[_axis(b, x, dim)]
    values, indices = _topk_node(b, x, n, dim, descending, True)
    return indices if node.op[1] == "argsort" else [values, indices]


def _flip(b, node):
    x = node.args[0]
    dims = _val(node, 1, "dims")
    if isinstance(dims, int):
        dims = [dims]
    axes = [_axis(b, x, d) for d in dims]
    return _slice(b, b.name(x), axes, [-1] * len(axes), [_INT64_MIN] * len(axes),
                  [-1] * len(axes))


def _trilu(b, node):
    if b.opset < 14:
        raise UnsupportedOperatorError(f"{node.op[1]} before opset 14 (Trilu)")
    x = node.args[0]
    k = int(_val(node, 1, "diagonal", 0))
    return b.add("Trilu", [b.name(x), _init(b, np.array(k), "int64")],
                 upper=int(node.op[1] == "triu"))


def _one_hot(b, node):
    x = node.args[0]
    n = int(_val(node, 1, "num_classes", -1))
    if n < 0:
        raise UnsupportedOperatorError("one_hot without num_classes (it depends on the data)")
    values = _init(b, np.array([0, 1]), "int64")
    return b.add("OneHot", [b.name(x), _init(b, np.array(n), "int64"), values], axis=-1)


def _dims_reduce(op):
    def convert(b, node):
        x = node.args[0]
        dims = _val(node, 1, "dim", None)
        keep = int(bool(_val(node, 2, "keepdim", False)))
        if dims is None or dims == [] or dims == ():
            dims = list(range(len(_shape(b, x))))
        elif isinstance(dims, int):
            dims = [dims]
        return _reduce(b, op, b.name(x), [_axis(b, x, d) for d in dims], keep)
    return convert


def _clamp_one(op, name):
    def convert(b, node):
        x, v = node.args[0], _arg(node, 1, name)
        if type(v) is dict and "v" in v:
            return b.add(op, [b.name(x), b.operand(v, x)])
        return b.add(op, [b.name(x), _scalar_like(b, v if not isinstance(v, dict) else
                                                  _val(node, 1, name), x)])
    return convert


CONVERTERS = {}
for _ns in ("ptcore", "Tensor"):
    CONVERTERS.update({
        (_ns, "index_select"): _index_select, (_ns, "gather"): _gather, (_ns, "topk"): _topk,
        (_ns, "sort"): _sort, (_ns, "argsort"): _sort, (_ns, "flip"): _flip,
        (_ns, "triu"): _trilu, (_ns, "tril"): _trilu, (_ns, "logsumexp"): _dims_reduce(
            "ReduceLogSumExp"), (_ns, "amax"): _dims_reduce("ReduceMax"),
        (_ns, "amin"): _dims_reduce("ReduceMin"),
        (_ns, "clamp_min"): _clamp_one("Max", "min"), (_ns, "clamp_max"): _clamp_one("Min", "max"),
    })
CONVERTERS[("nn.functional", "one_hot")] = _one_hot
_MORE.update(CONVERTERS)        # (the export looks its converters up there)
