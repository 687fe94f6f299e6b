"""``torch.onnx.symbolic_opset11``: the symbolic functions of ATen ops that custom
symbolic functions build on (torchvision's for ``nms`` and ``roi_align`` call
``unsqueeze``, ``squeeze`` and ``select``), for a graph context ``g`` of
:func:`ptcore.onnx.register_custom_op_symbolic`.  Axes go as an attribute below
opset 13 and as an input from 13 on (ONNX moved them), by the opset being written."""
from ptcore._ops.creation import tensor as _tensor
from ptcore._tensor import int64 as _int64
from ptcore.onnx.symbolic_helper import parse_args

__all__ = ["unsqueeze", "squeeze", "select"]


def _axes(g, op, x, axes):
    if getattr(g, "opset", 11) >= 13:
        return g.op(op, x, g.op("Constant", value_t=_long_tensor(axes)))
    return g.op(op, x, axes_i=list(axes))


def _long_tensor(values):
    return _tensor(list(values), dtype=_int64)


@parse_args("v", "i")
def unsqueeze(g, self, dim):
    """``self.unsqueeze(dim)``: ONNX Unsqueeze."""
    return _axes(g, "Unsqueeze", self, [dim])


@parse_args("v", "i")
def squeeze(g, self, dim=None):
    """``self.squeeze(dim)`` (every size-1 dim without ``dim``): ONNX Squeeze."""
    if dim is None:
        return g.op("Squeeze", self)
    return _axes(g, "Squeeze", self, [dim])


@parse_args("v", "i", "v")
def select(g, self, dim, index):
    """``self.select(dim, index)`` (``index`` a value: a one-element index keeps the
    dim, as torch's opset 11 function's Gather does): ONNX Gather."""
    return g.op("Gather", self, index, axis_i=dim)
