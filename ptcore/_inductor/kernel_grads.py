"""Backward steps of a training graph that call an op's one-pass backward
kernel directly.

softmax, log_softmax and gelu have one-pass backward kernels in eager
ptcore, called by their formulas outside the operator table, so the
backward tracer of :mod:`ptcore._inductor.aot` cannot record them: such a
node ran *opaque* (its forward under autograd recording on detached leaves,
its backward through the autograd node), which cost more Python than the
kernels' own time at transformer sizes.  Here the forward node stays a plain
(no-grad, fusable) op and the backward graph gets one step calling the
kernel on the saved input or output: the same kernel, the same values as
eager.  A backward run with ``create_graph`` (the gradient's ops recorded)
takes the ops' differentiable composite instead, as eager's formulas do.
"""
from ptcore import strided
from ptcore._tensor import _TensorBase
from ptcore.autograd._formulas import _one_pass_softmax_backward
from ptcore.autograd._formulas_nn import _gelu_grad
from ptcore.jit._ir import Node

__all__ = ["KernelGrad", "direct_backward"]

_FLOATS = ("float32", "float64")
_SOFTMAX = {("ptcore", "softmax"): False, ("Tensor", "softmax"): False,
            ("nn.functional", "softmax"): False, ("ptcore", "log_softmax"): True,
            ("Tensor", "log_softmax"): True, ("nn.functional", "log_softmax"): True}
_GELU = (("nn.functional", "gelu"),)


class KernelGrad(Node):
    """A backward step ``outputs = fn(*args)`` (``fn`` a Python function of
    tensors: :func:`softmax_grad`, :func:`gelu_grad`)."""
    __slots__ = ()

    def __init__(self, fn, args, out):
        super().__init__(("prim", "compile_kernel_grad"), args, {}, out)
        self._fn = fn


def softmax_grad(g, y):
    """Gradient of ``softmax(x, -1)`` from its output ``y``."""
    r = _one_pass_softmax_backward(g, y, -1, False)
    if r is not None:
        return r
    gy = g * y
    return gy - y * gy.sum(-1, keepdim=True)


def log_softmax_grad(g, y):
    """Gradient of ``log_softmax(x, -1)`` from its output ``y``."""
    r = _one_pass_softmax_backward(g, y, -1, True)
    if r is not None:
        return r
    return g - y.exp() * g.sum(-1, keepdim=True)


def gelu_grad(g, x):
    """Gradient of the exact (erf) ``gelu`` from its input ``x``."""
    return _gelu_grad(g, x, None, "none")


def _arg(node, pos, name, default):
    if len(node.args) > pos:
        return node.args[pos]
    return node.kwargs.get(name, default)


def _match(node, tensors):
    """``(fn, forward id read, input id)`` of a node this module handles, else None."""
    op = node.op
    outs = node.output_ids()
    if len(outs) != 1 or not (type(node.outputs) is dict and "v" in node.outputs):
        return None
    x = node.args[0] if node.args else None
    if type(x) is not dict or "v" not in x:
        return None
    xt, yt = tensors.get(x["v"]), tensors.get(outs[0])
    if not isinstance(xt, _TensorBase) or not isinstance(yt, _TensorBase):
        return None
    if xt.device.type != "cpu" or str(xt.dtype).replace("ptcore.", "") not in _FLOATS or \
            yt.dtype is not xt.dtype or xt.dim() == 0 or xt.layout is not strided or \
            not yt.is_contiguous():
        return None
    if op in _SOFTMAX:
        if set(node.kwargs) - {"dim", "dtype", "_stacklevel"} or len(node.args) > 4:
            return None
        dim = _arg(node, 1, "dim", None)
        # (dtype: ptcore.softmax's third parameter, F.softmax's fourth)
        dtype = _arg(node, 3 if op[0] == "nn.functional" else 2, "dtype", None)
        if dtype is not None or type(dim) is not int or dim not in (-1, xt.dim() - 1):
            return None
        return (log_softmax_grad if _SOFTMAX[op] else softmax_grad), outs[0], x["v"]
    if op in _GELU:
        if len(node.args) != 1 or set(node.kwargs) - {"approximate"} or \
                node.kwargs.get("approximate", "none") != "none":
            return None
        return gelu_grad, x["v"], x["v"]
    return None


def direct_backward(b, node, tensors, rg):
    """Record the backward of ``node`` into builder ``b`` (of
    :mod:`ptcore._inductor.aot`) as one :class:`KernelGrad` step; False when
    the node is not one this module handles (nothing recorded)."""
    m = _match(node, tensors)
    if m is None:
        return False
    fn, saved_fid, x_fid = m
    out_fid = node.output_ids()[0]
    if out_fid not in b.grad or x_fid not in rg or not tensors[x_fid].requires_grad:
        return False
    sv = b.saved.get(saved_fid)
    if sv is None:
        sv = b.saved[saved_fid] = b.value(like=b.fwd.values[saved_fid])
    gx = b.value(like=b.fwd.values[x_fid])
    b.nodes.append(KernelGrad(fn, [{"v": b.grad[out_fid]}, {"v": sv}], {"v": gx}))
    b.accumulate(x_fid, gx)
    return True
