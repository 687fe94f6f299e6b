"""Attention's scaled, masked softmax as one step of a training graph.

Attention written out by hand (nanoGPT's and minGPT's "slow" path, much
research code)::

    att = (q @ k.transpose(-2, -1)) * scale
    att = att.masked_fill(mask, float("-inf"))
    att = softmax(att, dim=-1)

is three passes over the scores forward (``mul``, ``masked_fill``,
``softmax``) and three backward (softmax's gradient, ``masked_fill(mask,
0)``, ``mul(scale)``).  :func:`fuse_masked_softmax` makes each chain one
step whose kernel does a row at a time: forward
``ptcore._ops.kernels._reduce.masked_softmax_last`` (the scaled, filled row
built in a scratch row and handed to ``ptcore.softmax``'s own row kernel),
backward ``ptcore._ops.kernels._nn_kernels.softmax_backward`` with a mask
(softmax's gradient row, then 0 where masked, then times the scale).  Both
give the bits of the three ops.  At run time a step runs the chain's own ops
(eager's values and errors) where its kernel does not take the call (another
dtype or device, a mask that is not bool or does not broadcast, a
non-contiguous input), when the chain is recorded (autograd on and an input
requiring grad: a backward under ``create_graph``), under forward AD or vmap.
"""
import math

from ptcore._tensor import _TensorBase
from ptcore._dispatch.forward_ad import levels as _fw_levels
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._ops.kernels._nn_kernels import softmax_backward as _softmax_backward
from ptcore._ops.kernels._reduce import masked_softmax_last as _fwd_kernel
from ptcore.autograd.grad_mode import _state
from ptcore.jit._ir import Node, decode
from ptcore._inductor.codegen import chain_runner, uses_and_makers
from ptcore._inductor.kernel_grads import KernelGrad, softmax_grad

__all__ = ["MaskedSoftmax", "MaskedSoftmaxGrad", "fuse_masked_softmax", "masked_softmax",
           "masked_softmax_grad"]

_MUL = (("Tensor", "mul"), ("ptcore", "mul"), ("Tensor", "__mul__"))
_MASKED_FILL = (("Tensor", "masked_fill"), ("ptcore", "masked_fill"))
_SOFTMAX = (("ptcore", "softmax"), ("Tensor", "softmax"), ("nn.functional", "softmax"))


class MaskedSoftmax(Node):
    """``out = masked_softmax(x, scale, mask, fill)`` replacing the nodes
    ``mul(x, scale)``, ``masked_fill(., mask, fill)``, ``softmax(., -1)``."""
    __slots__ = ()

    def __init__(self, x, scale, mask, fill, chain):
        super().__init__(("prim", "compile_masked_softmax"), [x, scale, mask, fill], {},
                         chain[-1].outputs)
        run = chain_runner(chain, [x["v"], None, mask["v"], None])

        def fused(x, scale, mask, fill):
            return masked_softmax(x, scale, mask, fill, run)
        fused.__name__ = "masked_softmax"
        self._fn = fused


class MaskedSoftmaxGrad(Node):
    """``out = masked_softmax_grad(g, y, mask, scale)`` replacing softmax's
    gradient step, ``masked_fill(., mask, 0)`` and ``mul(., scale)``."""
    __slots__ = ()

    def __init__(self, g, y, mask, scale, chain):
        super().__init__(("prim", "compile_masked_softmax_grad"), [g, y, mask, scale], {},
                         chain[-1].outputs)
        run = chain_runner(chain, [g["v"], y["v"], mask["v"], None])

        def fused(g, y, mask, scale):
            return masked_softmax_grad(g, y, mask, scale, run)
        fused.__name__ = "masked_softmax_grad"
        self._fn = fused


def _plain(*ts):
    """Whether nothing would record the ops on ``ts`` and no transform is on."""
    for t in ts:
        if not isinstance(t, _TensorBase) or (_state.enabled and t._requires_grad):
            return False
    return not _fw_levels() and not _vmap_frames()


def masked_softmax(x, scale, mask, fill, run):
    """``softmax(x.mul(scale).masked_fill(mask, fill), -1)`` by the one-pass
    kernel where it takes the call, else by the chain's ops (``run``)."""
    if _plain(x, mask):
        r = _fwd_kernel(x, scale, mask, fill)
        if r is not None:
            return r
    return run(x, None, mask, None)


def masked_softmax_grad(g, y, mask, scale, run):
    """``softmax_grad(g, y).masked_fill(mask, 0).mul(scale)`` by the one-pass
    kernel where it takes the call, else by the chain's ops (``run``)."""
    if _plain(g, y, mask):
        r = _softmax_backward(g, y, -1, False, scale, mask)
        if r is not None:
            return r
    return run(g, y, mask, None)


def _const(x):
    """The real number an encoded argument holds (not a bool), else None."""
    try:
        v = decode(x, {})
    except (KeyError, TypeError):
        return None
    if type(v) in (int, float):
        return float(v)
    return None


def _plus_zero(v):
    """Whether ``v`` is +0 (the kernel writes +0 where the mask is set; a -0
    fill's sign would be lost)."""
    return v is not None and v == 0.0 and math.copysign(1.0, v) > 0


def _ref(x):
    return type(x) is dict and "v" in x


def _last_dim(node, values):
    """Whether a softmax node is ``softmax(x, dim)`` over ``x``'s last dim
    (no dtype, no other arguments)."""
    args, kw = node.args, node.kwargs
    if len(args) > 2 or set(kw) - {"dim"} or (len(args) == 2) == ("dim" in kw):
        return False
    dim = kw["dim"] if "dim" in kw else args[1]
    shape = getattr(values.get(args[0]["v"]), "shape", None)
    if type(dim) is not int or not shape:
        return False
    return dim in (-1, len(shape) - 1)


def fuse_masked_softmax(nodes, live_ids, values, skip=()):
    """``nodes`` with each forward chain ``softmax(mul(x, s).masked_fill(m,
    f), -1)`` and each backward chain ``mul(masked_fill(softmax_grad(g, y),
    m, 0), s)`` (a :class:`KernelGrad` of :func:`softmax_grad`) made one step,
    the chain's intermediate values read by nothing else (``live_ids``:
    values read after the nodes; ``values``: the graph's values; nodes whose
    ``id`` is in ``skip`` stay as they are)."""
    uses, made_by = uses_and_makers(nodes, live_ids)
    repl, drop = {}, set()

    def single(v):
        n = made_by.get(v)
        if n is None or uses.get(v) != 1 or id(n) in skip or id(n) in drop:
            return None
        return n

    for n in nodes:
        if id(n) in skip or not n.args or not _ref(n.args[0]):
            continue
        if n.op in _SOFTMAX and _last_dim(n, values):
            fill_node = single(n.args[0]["v"])
            if fill_node is None or fill_node.op not in _MASKED_FILL or fill_node.kwargs or \
                    len(fill_node.args) != 3 or not _ref(fill_node.args[0]) or \
                    not _ref(fill_node.args[1]):
                continue
            fill = _const(fill_node.args[2])
            mul = single(fill_node.args[0]["v"])
            if fill is None or mul is None or mul.op not in _MUL or mul.kwargs or \
                    len(mul.args) != 2 or not _ref(mul.args[0]):
                continue
            scale = _const(mul.args[1])
            if scale is None or not math.isfinite(scale):
                continue
            repl[id(n)] = MaskedSoftmax(mul.args[0], scale, fill_node.args[1], fill,
                                        [mul, fill_node, n])
            drop.update((id(mul), id(fill_node)))
        elif n.op in _MUL and not n.kwargs and len(n.args) == 2:
            scale = _const(n.args[1])
            fill_node = single(n.args[0]["v"])
            if scale is None or fill_node is None or fill_node.op not in _MASKED_FILL or \
                    fill_node.kwargs or len(fill_node.args) != 3 or \
                    not _ref(fill_node.args[0]) or not _ref(fill_node.args[1]) or \
                    not _plus_zero(_const(fill_node.args[2])):
                continue
            grad = single(fill_node.args[0]["v"])
            if grad is None or not isinstance(grad, KernelGrad) or grad._fn is not softmax_grad or \
                    len(grad.args) != 2 or not all(_ref(a) for a in grad.args):
                continue
            repl[id(n)] = MaskedSoftmaxGrad(grad.args[0], grad.args[1], fill_node.args[1], scale,
                                            [grad, fill_node, n])
            drop.update((id(grad), id(fill_node)))
    if not repl:
        return nodes
    return [repl.get(id(n), n) for n in nodes if id(n) not in drop]
