"""Nodes for opsets before 17: the converters write each op in the form of
the newest opsets, and :func:`lower` rewrites the nodes whose form changed
(called by the builder's ``add`` for every node of an export below the
opset where the op took its current form):

* axes / split sizes as inputs (Unsqueeze, Squeeze, Split, ReduceSum from
  13; the other Reduce* from 18) become attributes, read from their
  constant initializer;
* ``Shape`` with ``start``/``end`` (15) becomes ``Shape`` + ``Slice``;
* ``HardSwish`` (14) becomes ``x * HardSigmoid(x)``;
* ``GreaterOrEqual`` / ``LessOrEqual`` (12) become ``Not(Less)`` / ``Not(Greater)``;
* ``Clip`` with min/max inputs (11) takes them as attributes;
* ``Pad`` with pads / value inputs (11) takes them as attributes;
* ``Slice`` with inputs (10) takes starts/ends/axes as attributes;
* pooling (10) loses ``ceil_mode``/``dilations`` (refused when they matter).

Ops with no earlier form raise :class:`UnsupportedOperatorError` naming
the opset they need (``Range``, ``Trilu``, ``Resize`` with coordinate modes:
11, 14, 11).  ``LayerNormalization`` (17) and ``Softmax`` over a dim other
than the last (13: earlier opsets flatten the input around the axis) are
lowered by their converters, which know the dtype and rank.
"""
import numpy as np

from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = ["MIN_OPSET", "lower", "needs"]

MIN_OPSET = 9

_AXES_INPUT = {"Unsqueeze": 13, "Squeeze": 13, "ReduceSum": 13, "ReduceMean": 18,
               "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18, "ReduceL1": 18,
               "ReduceL2": 18, "ReduceLogSumExp": 18, "ReduceSumSquare": 18}
# op -> the first opset of its current form
_SINCE = dict(_AXES_INPUT, Split=13, Shape=15, HardSwish=14, GreaterOrEqual=12,
              LessOrEqual=12, Clip=11, Slice=10, MaxPool=10, AveragePool=10, Pad=11)
# op -> the first opset that has it at all
_NEEDS = {"Range": 11, "Trilu": 14, "Resize": 11, "Mod": 10, "Einsum": 12,
          "LayerNormalization": 17, "DepthToSpace": 11, "CumSum": 11, "GatherElements": 11,
          "GatherND": 11}


def needs(b, op, why=""):
    """Raise unless the export's opset has ``op``."""
    first = _NEEDS.get(op, 1)
    if b.opset < first:
        raise UnsupportedOperatorError(
            f"ONNX {op}{why} needs opset {first} or later; export with opset_version >= {first}")


def _const_ints(b, name, op):
    arr = b.const_values.get(name)
    if arr is None:
        raise UnsupportedOperatorError(
            f"ONNX {op} before opset {_SINCE[op]} takes its axes as an attribute: these are "
            "computed by the graph (export with a newer opset_version)")
    return [int(v) for v in np.asarray(arr).reshape(-1)]


def lower(b, op, inputs, outputs, attrs):
    """The node ``op`` in the form of ``b.opset``: the output name(s), or
    None when the node stays as it is."""
    since = _SINCE.get(op)
    if since is None or b.opset >= since:
        needs(b, op)
        return None
    add = b.add_raw
    if op in _AXES_INPUT:
        if len(inputs) > 1 and inputs[1]:
            attrs = dict(attrs, axes=_const_ints(b, inputs[1], op))
        return add(op, inputs[:1], outputs, attrs)
    if op == "Split":
        if len(inputs) > 1 and inputs[1]:
            attrs = dict(attrs, split=_const_ints(b, inputs[1], op))
        return add(op, inputs[:1], outputs, attrs)
    if op == "Pad":                         # before 11: pads and value as attributes
        attrs = dict(attrs, pads=_const_ints(b, inputs[1], op))
        if len(inputs) > 2 and inputs[2]:
            value = b.const_values.get(inputs[2])
            if value is None:
                raise UnsupportedOperatorError("ONNX Pad with a computed value needs opset 11")
            attrs["value"] = float(np.asarray(value).reshape(-1)[0])
        return add(op, inputs[:1], outputs, attrs)
    if op == "Slice":                       # opset 9: starts/ends/axes attributes, no steps
        vals = [_const_ints(b, n, op) for n in inputs[1:]]
        if len(vals) > 3 and any(v != 1 for v in vals[3]):
            raise UnsupportedOperatorError("ONNX Slice with a step needs opset 10")
        attrs = dict(attrs, starts=vals[0], ends=vals[1])
        if len(vals) > 2:
            attrs["axes"] = vals[2]
        return add(op, inputs[:1], outputs, attrs)
    if op in ("MaxPool", "AveragePool"):   # opset 9: no ceil_mode, no dilations
        attrs = dict(attrs)
        if attrs.pop("ceil_mode", 0) or any(d != 1 for d in attrs.pop("dilations", [])):
            raise UnsupportedOperatorError(f"ONNX {op} with ceil_mode or dilation needs opset 10")
        return add(op, inputs, outputs, attrs)
    if op == "Shape":
        if "start" not in attrs and "end" not in attrs:
            return add("Shape", inputs, outputs, attrs)
        shape = add("Shape", inputs, None, {})
        start, end = attrs.get("start", 0), attrs.get("end", 2 ** 63 - 1)
        # (b.add: a Slice lowered in turn where the opset has the attribute form)
        return b.add("Slice", [shape, b.const(np.array([start]), "int64"),
                               b.const(np.array([end]), "int64"),
                               b.const(np.array([0]), "int64")], outputs)
    if op == "HardSwish":
        hs = add("HardSigmoid", inputs, None, {"alpha": 1.0 / 6.0, "beta": 0.5})
        return add("Mul", [inputs[0], hs], outputs, {})
    if op in ("GreaterOrEqual", "LessOrEqual"):
        flip = "Less" if op == "GreaterOrEqual" else "Greater"
        return add("Not", [add(flip, inputs, None, {})], outputs, {})
    if op == "Clip":
        lo = b.const_values.get(inputs[1]) if len(inputs) > 1 and inputs[1] else None
        hi = b.const_values.get(inputs[2]) if len(inputs) > 2 and inputs[2] else None
        if (len(inputs) > 1 and inputs[1] and lo is None) or \
                (len(inputs) > 2 and inputs[2] and hi is None):
            raise UnsupportedOperatorError("ONNX Clip with computed bounds needs opset 11")
        extra = {}
        if lo is not None:
            extra["min"] = float(np.asarray(lo).reshape(-1)[0])
        if hi is not None:
            extra["max"] = float(np.asarray(hi).reshape(-1)[0])
        return add("Clip", inputs[:1], outputs, dict(attrs, **extra))
    return None


def axis(b, a, rank):
    """Axis attribute ``a`` of a rank-``rank`` input: negative axes exist from opset 11."""
    a = int(a)
    return a % rank if (b.opset < 11 and rank) else a


def softmax(b, op, x, dim, rank):
    """``Softmax`` / ``LogSoftmax`` over ``dim``: before opset 13 the op
    flattens its input to 2-D around the axis, so a dim other than the last
    is moved last and back."""
    dim = int(dim) % rank if rank else 0
    if b.opset >= 13 or dim == rank - 1 or rank == 0:
        return b.add(op, [x], axis=axis(b, dim, rank))
    perm = list(range(rank))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    y = b.add(op, [b.add("Transpose", [x], perm=perm)], axis=rank - 1)
    return b.add("Transpose", [y], perm=perm)


def layer_norm(b, x, scale, bias, first, eps, dtype, rank):
    """``LayerNormalization`` (opset 17) over the dims from ``first`` (negative)
    on; before 17 its ops: (x - mean) / sqrt(var + eps) * scale + bias."""
    if b.opset >= 17:
        return b.add("LayerNormalization", [x, scale, bias], axis=first, epsilon=float(eps))
    axes = [d % rank if b.opset < 11 else d for d in range(first, 0)]

    def mean(v):
        if b.opset >= 18:
            return b.add("ReduceMean", [v, b.const(np.array(axes), "int64")], keepdims=1)
        return b.add("ReduceMean", [v], axes=axes, keepdims=1)
    d = b.add("Sub", [x, mean(x)])
    var = mean(b.add("Mul", [d, d]))
    y = b.add("Div", [d, b.add("Sqrt", [b.add("Add", [var, b.const(np.array(eps), dtype)])])])
    return b.add("Add", [b.add("Mul", [y, scale]), bias])
