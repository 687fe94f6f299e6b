"""The autograd graph's edges and multi-tensor hooks as ``torch.autograd.graph``
exposes them: :class:`GradientEdge` / :func:`get_gradient_edge` (a place in
the graph that ``autograd.grad`` and ``backward(inputs=...)`` accept in
place of a tensor), :func:`increment_version` and
:func:`register_multi_grad_hook`.  Re-exported by
:mod:`ptcore.autograd.graph` (which this module reads at call time)."""
import threading
from collections import defaultdict
from typing import NamedTuple, Optional

from ptcore._tensor import _TensorBase

__all__ = ["GradientEdge", "get_gradient_edge", "increment_version", "register_multi_grad_hook"]


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor is computed in the graph: the node it
    flows into and which of that node's inputs it is (``output_nr``).  Get
    one with :func:`get_gradient_edge`."""
    node: object
    output_nr: int
    ownership_token: Optional[object] = None


def get_gradient_edge(tensor):
    """The :class:`GradientEdge` of ``tensor``: ``autograd.grad(loss, input)``
    equals ``autograd.grad(loss, get_gradient_edge(input))``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not "
                           "require gradients")
    from ptcore.autograd import graph as _graph
    node, nr = _graph.gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Mark ``tensor`` (or each tensor of an iterable) as modified in place,
    for the engine's saved-tensor checks (memory written behind autograd's
    back, e.g. through ``data_ptr()``).  Inference tensors have no version
    counter and are left as they are."""
    tensors = (tensor,) if isinstance(tensor, _TensorBase) else tensor
    for t in tensors:
        if not isinstance(t, _TensorBase):
            raise TypeError(f"increment_version(): expected Tensors, got {type(t).__name__}")
        if not t.is_inference():
            t._bump_version()


def _node_of(t):
    if isinstance(t, GradientEdge):
        return t.node
    from ptcore.autograd import graph as _graph
    return _graph.gradient_edge(t)[0]


def _will_engine_execute_node(node):
    """Whether ``node`` runs in the backward pass running on this thread
    (reachable from its roots, and leading to one of its inputs when it has
    inputs)."""
    from ptcore.autograd import graph as _graph
    st = _graph._task_tls.stack
    if not st:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    _, _, deps, needed, accumulate = st[-1]
    if not accumulate and type(node) is _graph.AccumulateGrad:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    if node not in deps:
        return False
    return needed is None or id(node) in needed


def _task_id():
    from ptcore.autograd import graph as _graph
    tid = _graph._current_graph_task_id()
    if tid == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return tid


class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` removes every hook."""
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass for a group of tensors.

    ``mode="all"``: after the gradients of every tensor of ``tensors`` that
    this pass computes are ready, ``fn(grads)`` with one entry per tensor
    (None for a tensor outside the pass: not in the graph, or not leading to
    the ``inputs`` of ``backward``/``grad``).  ``mode="any"``: ``fn(grad)``
    with the first of their gradients the pass computes.  Returns a handle
    whose ``remove()`` unregisters it."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = list(tensors)
    lock = threading.Lock()
    if mode == "any":
        ran = defaultdict(bool)

        def wrapped(grad):
            tid = _task_id()
            with lock:
                prev, ran[tid] = ran[tid], True
            if not prev:
                fn(grad)
        return _MultiHandle(t.register_hook(wrapped) for t in tensors if t.requires_grad)

    nodes = [_node_of(t) for t in tensors]
    n = len(tensors)
    count, buffers, expected = {}, {}, {}

    def inner(idx):
        def hook(grad):
            tid = _task_id()
            with lock:
                seen = count.get(tid, 0)
                count[tid] = seen + 1
                if seen == 0:
                    expected[tid] = sum(map(_will_engine_execute_node, nodes))
                    buffers[tid] = [None] * n
                buf = buffers[tid]
                buf[idx] = grad
                done = seen + 1 == expected[tid]
                if done:
                    del count[tid], buffers[tid], expected[tid]
            if done:
                fn(buf)
        return hook
    return _MultiHandle(t.register_hook(inner(i)) for i, t in enumerate(tensors))
