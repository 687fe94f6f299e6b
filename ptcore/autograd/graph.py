"""The autograd graph: nodes, saved tensors, and the backward engine.

A tensor produced by a recorded op has ``grad_fn``: the :class:`Node` that
computes the gradients of that op's inputs from the gradient of its outputs.
Nodes hold their inputs' graph edges ``(node, output_nr)`` strongly (as
Chainer's and PyTorch's graphs do) and their outputs not at all, so dropping
the last output frees the whole graph.  Leaves that require grad are reached
through an :class:`AccumulateGrad` node, cached (strongly) on the leaf and
holding the leaf weakly.

The engine (:func:`run_backward`) counts dependencies, then executes the
nodes in an order where every node runs after all its consumers (ready nodes
by decreasing sequence number, as PyTorch), summing gradients that reach the
same output, and frees saved tensors after use unless ``retain_graph``.
"""
import contextlib
import itertools
import sys
import threading
import weakref
from collections import defaultdict
from typing import NamedTuple, Optional

from ptcore._hooks import RemovableHandle
from ptcore._tensor import _TensorBase
from ptcore._ops.kernels._ewdrv import grad_buffer_add as _buffer_add, fast_inplace as _fast_inplace
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore.autograd import grad_mode as _gm
from ptcore._settings import _anomaly
from ptcore.tensor import _legacy_type_name
from ptcore import tensor
from ptcore._tensor import contiguous_format
from ptcore._tensor import zeros
from ptcore._warn import _PKG
from ptcore._settings import _state as settings


def _is_sparse_tensor(value):
    """A sparse tensor (ptcore.sparse's Tensor subclass)."""
    return getattr(value, "_ptc_sparse", False) is True


# autograd._record's view-node rebuilder (it records views, above this module;
# it registers itself here when it loads)
_REFRESH_VIEW = [None]

_FWL = _fwl.layer()      # the forward-AD layer (its .enabled is read per call)

__all__ = ["Node", "AccumulateGrad", "apply_computing_all", "SavedTensor", "gradient_edge", "run_backward",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors"]

_seq = itertools.count()
_ACC_BASE = 1 << 62
_current = [None]      # the node whose backward is running (for SavedTensor.unpack)
_state = _gm._state


class _HookDict(dict):
    """An ordered dict of hooks that handles can refer to weakly."""
    __slots__ = ("__weakref__",)


# torch.utils.hooks.RemovableHandle, as torch's tensor and node hooks return
_RemovableHandle = RemovableHandle


def _add_hook(owner, attr, fn):
    d = getattr(owner, attr)
    if d is None:
        d = _HookDict()
        setattr(owner, attr, d)
    h = _RemovableHandle(d)
    d[h.id] = fn
    return h


_INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors "
                    "created in inference mode in computation tracked by autograd. To work "
                    "around this, you can make a clone to get a normal tensor and use it in "
                    "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")

_FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the graph "
              "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
              "you need to backward through the graph a second time or if you need to access saved "
              "tensors after calling backward.")

_FREED_HOOKS_MSG = ("Calling register_hooks on a saved tensor after it has been freed. Saved "
                    "intermediate values of the graph are freed when you call .backward() or "
                    "autograd.grad(). Specify retain_graph=True if you need to backward through "
                    "the graph a second time or if you need to access saved variables after "
                    "calling backward.")



class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    Under :class:`saved_tensors_hooks` the tensor is not kept: the pack
    hook's result is, and the unpack hook turns it back into a tensor when
    backward needs it (then no version check is possible, as in PyTorch)."""
    __slots__ = ("data", "version", "_hk")

    def __init__(self, t, is_output=False, output_nr=0):
        if _gm._ever[0] and not _state.inference and t.is_inference():
            raise RuntimeError(_INFERENCE_SAVED)
        if _hooks_on[0] and _pack(self, t, False):
            return
        self.data = t
        self.version = t._version

    def unpack(self, node=None):
        t = self.data
        if t is None:
            return _unpack_hooked(self, node, False)
        if t._version != self.version:
            _version_error(t, self, node)
        return t

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with ``pack_hook`` and unpack it with
        ``unpack_hook`` when it is needed (``grad_fn._raw_saved_self``), as
        PyTorch's ``SavedTensor.register_hooks``."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("Expected pack hook and unpack hook to be callable")
        if getattr(self, "_hk", None) is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        t = self.data
        if t is None:
            raise RuntimeError(_FREED_HOOKS_MSG)
        _pack_with(self, t, isinstance(self, SavedOutput), pack_hook, unpack_hook)


class SavedOutput(SavedTensor):
    """An output of the node itself, saved as a detached alias (no reference
    cycle node -> output -> node); unpacking re-attaches the node as the
    alias' ``grad_fn`` so that double backward through the output works."""
    __slots__ = ("output_nr",)

    def __init__(self, t, output_nr=0):
        self.output_nr = output_nr
        if _hooks_on[0] and _pack(self, t, True):
            return
        self.data = _alias(t)
        self.version = t._version

    def unpack(self, node=None):
        if node is None:
            node = _current[0]
        t = self.data
        if t is None:
            return _unpack_hooked(self, node, True)
        if t._version != self.version:
            _version_error(t, self, node)
        if node is not None and _state.enabled:
            a = _alias(t)
            a._requires_grad = True
            a._grad_fn = node
            if self.output_nr:
                a._output_nr = self.output_nr
            return a
        return t


# ---------------------------------------------------------------------------
# saved tensors hooks (torch.autograd.graph.saved_tensors_hooks)
# ---------------------------------------------------------------------------

class _HooksTLS(threading.local):
    def __init__(self):
        self.stack = []            # (pack_hook, unpack_hook), innermost last
        self.disabled = None       # disable_saved_tensors_hooks' error message


_hooks_tls = _HooksTLS()
_hooks_on = [0]     # hooks contexts open on any thread: one test on the hot path

_PACK_INPLACE = ("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                 "input to pack hook cannot be modified by in-place operations as this can lead "
                 "to unexpected side-effects. Please open an issue if you need to perform "
                 "in-place operations on the input to a pack hook.")


def _pack(saved, t, is_output):
    """Run the innermost pack hook on ``t`` (recording off, as PyTorch) and
    keep its result in ``saved`` instead of ``t``; False when this thread
    has no hooks."""
    stack = _hooks_tls.stack
    if not stack:
        return False
    _pack_with(saved, t, is_output, *stack[-1])
    return True


def _pack_with(saved, t, is_output, pack_hook, unpack_hook):
    edge = None
    if not is_output and t._requires_grad:
        edge = gradient_edge(t)      # for double backward through the unpacked value
    v = t._version
    prev = _state.enabled
    _state.enabled = False
    try:
        packed = pack_hook(t)
    finally:
        _state.enabled = prev
    if t._version != v:
        raise RuntimeError(_PACK_INPLACE)
    saved.data = None
    saved.version = v
    saved._hk = (unpack_hook, packed, edge)


def _unpack_hooked(saved, node, is_output):
    try:
        hk = saved._hk
    except AttributeError:
        hk = None
    if hk is None:
        raise RuntimeError(_FREED_MSG)
    unpack_hook, packed, edge = hk
    r = unpack_hook(packed)
    if not isinstance(r, _TensorBase):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(r).__name__}")
    if r._requires_grad:
        return r
    # the unpacked value stands for the saved tensor in the graph (as PyTorch:
    # it gets the original's grad_fn / gradient accumulator); saved outputs,
    # as unhooked ones, only when recording (double backward)
    if is_output:
        if node is None or not _state.enabled:
            return r
        edge = (node, saved.output_nr)
    elif edge is None:
        return r
    a = _alias(r)
    a._requires_grad = True
    if type(edge[0]) is AccumulateGrad:
        a._grad_acc = edge[0]
    else:
        a._grad_fn = edge[0]
        if edge[1]:
            a._output_nr = edge[1]
    return a


class saved_tensors_hooks:
    """Context manager that sets a pair of pack / unpack hooks for saved tensors.

    Every tensor an operation saves for backward inside the block is passed
    to ``pack_hook`` (with recording off); its result is stored instead of
    the tensor.  When backward needs the tensor, ``unpack_hook`` is called
    with that result and must return a tensor with the original's content.
    Nested blocks: the innermost pair applies.

    Parameters
    ----------
    pack_hook : callable
        ``pack_hook(tensor) -> Any``.  Must not modify its input in place.
    unpack_hook : callable
        ``unpack_hook(packed) -> Tensor``.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = _hooks_tls.disabled
        if msg is not None:
            raise RuntimeError(msg)
        _hooks_tls.stack.append((self.pack_hook, self.unpack_hook))
        _hooks_on[0] += 1

    def __exit__(self, *args):
        _hooks_tls.stack.pop()
        _hooks_on[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Context manager under which tensors saved for backward are stored on
    the CPU and copied back to their device when backward needs them.

    Parameters
    ----------
    pin_memory : bool, optional
        Accepted for PyTorch compatibility (copies are synchronous here).
    device_type : str, optional
        Accepted for PyTorch compatibility.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager that disables saved tensors hooks: entering
    :class:`saved_tensors_hooks` inside it raises ``RuntimeError(error_message)``
    (as does entering it while hooks are active)."""
    prev = _hooks_tls.disabled
    try:
        _hooks_tls.disabled = error_message
        if _hooks_tls.stack:
            raise RuntimeError(error_message)
        yield
    finally:
        _hooks_tls.disabled = prev


# graph tasks: one per run_backward call (torch._C._current_graph_task_id and
# torch.autograd._is_checkpoint_valid, used by activation checkpointing)
class _TaskTLS(threading.local):
    def __init__(self):
        self.stack = []            # (task id, checkpoint valid), innermost last
        self.callbacks = []        # per task: queue_callback's final callbacks


_task_tls = _TaskTLS()
_task_ids = itertools.count()


def _current_graph_task_id():
    """Id of the backward pass running on this thread, -1 outside backward."""
    st = _task_tls.stack
    return st[-1][0] if st else -1


def queue_callback(callback):
    """Run ``callback()`` when the backward pass running on this thread has
    finished (torch's ``Variable._execution_engine.queue_callback``): final
    callbacks run in order, after every node, and may queue more."""
    if not _task_tls.stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _task_tls.callbacks[-1].append(callback)


def _run_final_callbacks(callbacks):
    i = 0
    while i < len(callbacks):      # a callback may queue another
        callbacks[i]()
        i += 1


def _is_checkpoint_valid():
    """False inside a backward pass started by ``autograd.grad`` or
    ``backward(inputs=...)`` (reentrant checkpointing cannot serve those)."""
    st = _task_tls.stack
    return st[-1][1] if st else True


def _version_error(t, saved, node):
    """PyTorch's error for a saved tensor modified in place: it names the op
    whose output the tensor is (the saving node for a saved output, else the
    tensor's current grad_fn; none for a leaf), with the hint that depends
    on anomaly mode."""
    if node is None:
        node = _current[0]
    fn = node if isinstance(saved, SavedOutput) else t._grad_fn
    where = ""
    if fn is not None:
        name = type(fn).__name__
        base = name.rstrip("0123456789")
        if base.endswith("Backward"):
            base = base[:-len("Backward")]
        nr = getattr(saved, "output_nr", None) if isinstance(saved, SavedOutput) else t._output_nr
        where = f", which is output {nr or 0} of {base or name},"
    if _anomaly[0]:
        hint = ("Hint: the backtrace further above can show the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{_type_str(t)} {list(t.shape)}]{where} is at version "
        f"{t._version}; expected version {saved.version} instead. {hint}")


def _type_str(t):
    return _legacy_type_name(t)


def _alias(t):
    a = t.detach()
    if _FWL.enabled:
        _fwl.note_alias(t, a)       # the saved output keeps its tangents
    return a


class _Extra:
    """Rarely used node state (hooks, retain_grad, anomaly stack), kept out
    of the node itself so that creating a node stays cheap."""
    __slots__ = ("hooks", "prehooks", "tensor_prehooks", "retain", "stack", "accepts_none",
                 "metadata")

    def __init__(self):
        self.hooks = None
        self.prehooks = None
        self.tensor_prehooks = None
        self.retain = None
        self.stack = None
        self.accepts_none = False
        self.metadata = None


def _extra_prop(name):
    def get(self):
        x = self._x
        return None if x is None else getattr(x, name)

    def set_(self, v):
        x = self._x
        if x is None:
            x = self._x = _Extra()
        setattr(x, name, v)
    return property(get, set_)


class Node:
    """A backward function in the graph (``tensor.grad_fn``).

    ``next_functions`` are the edges to the nodes of this op's inputs;
    calling the node with the gradients of its outputs returns the
    gradients of its inputs.
    """
    __slots__ = ("_next", "_in_meta", "_out_meta", "_fn", "_seq", "_x", "_sv", "__weakref__")
    _name = "Node"
    _is_view = False      # view nodes (autograd._record._ViewNode) remember the base version
    # what ``_saved_<name>`` reads: the names of torch's saved variables for
    # this node class, in the order of the node's ``_sv`` tuple (set by the
    # formula that saves them, see node_class), and those of them that are
    # scalars in torch (the others read as tensors)
    _sv_names = ()
    _sv_scalars = ()

    def __init__(self, next_edges=(), in_meta=(), fn=None, out_meta=None, sv=None,
                 _next_seq=_seq.__next__):
        self._next = next_edges
        self._in_meta = in_meta
        self._out_meta = out_meta
        self._fn = fn
        self._seq = _next_seq()
        self._x = None
        self._sv = sv

    _hooks = _extra_prop("hooks")
    _prehooks = _extra_prop("prehooks")
    _tensor_prehooks = _extra_prop("tensor_prehooks")
    _retain = _extra_prop("retain")
    _stack = _extra_prop("stack")

    @property
    def _accepts_none(self):
        x = self._x
        return False if x is None else x.accepts_none

    @_accepts_none.setter
    def _accepts_none(self, v):
        if v or self._x is not None:
            if self._x is None:
                self._x = _Extra()
            self._x.accepts_none = bool(v)

    @property
    def metadata(self):
        if self._x is None:
            self._x = _Extra()
        if self._x.metadata is None:
            self._x.metadata = {}
        return self._x.metadata

    @property
    def _freed(self):
        return self._fn is None

    def name(self):
        """The node's name, as PyTorch's (``"MulBackward0"``)."""
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self._next)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; a non-None
        return replaces ``grad_inputs``."""
        if self._x is None:
            self._x = _Extra()
        return _add_hook(self._x, "hooks", fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; a non-None return
        replaces ``grad_outputs``."""
        if self._x is None:
            self._x = _Extra()
        return _add_hook(self._x, "prehooks", fn)

    def _register_tensor_prehook(self, output_nr, fn):
        if self._x is None:
            self._x = _Extra()
        if self._x.tensor_prehooks is None:
            self._x.tensor_prehooks = {}
        d = self._x.tensor_prehooks.setdefault(output_nr, _HookDict())
        h = _RemovableHandle(d)
        d[h.id] = fn
        return h

    def _release(self):
        self._fn = None
        if self._sv is not None:
            self._sv = None if type(self._sv) is ClosureSaved else _freed_saved(self._sv)

    def __getattr__(self, name):
        # grad_fn._saved_self / _saved_result / _raw_saved_self ... (torch's
        # saved variables of the node); only reached for names not found
        if name.startswith("_saved_"):
            key, raw = name[7:], False
        elif name.startswith("_raw_saved_"):
            key, raw = name[11:], True
        else:
            key = None
        names = type(self)._sv_names
        if key is not None and key in names:
            return self._sv_get(names.index(key), key, raw)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | {"_saved_" + n for n in type(self)._sv_names})

    def _sv_get(self, i, key, raw):
        sv = self._sv
        if type(sv) is ClosureSaved:
            sv = sv.read(self._fn) if self._fn is not None else None
        if sv is None or i >= len(sv):
            if self._fn is not None:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                     f"'_{'raw_' * raw}saved_{key}'")   # a site that keeps none
            v = _FREED      # released (the engine may drop the whole tuple)
        else:
            v = sv[i]
        if v is _FREED:
            if raw:     # torch still gives the (emptied) SavedTensor object
                v = SavedTensor.__new__(SavedTensor)
                v.data = None
                return v
            raise RuntimeError(_FREED_MSG)
        if raw:
            if isinstance(v, SavedTensor):
                return v
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'_raw_saved_{key}'")
        if v is None or isinstance(v, _TensorBase):
            return v
        if hasattr(type(v), "unpack"):      # SavedTensor or a saved non-tensor
            v = v.unpack(self)
        if key not in type(self)._sv_scalars and v is not None \
                and not isinstance(v, _TensorBase):
            v = tensor(v)       # torch wraps a Python number operand (x * 2: tensor(2))
        return v

    def _apply(self, grads):
        fn = self._fn
        if fn is None:
            raise RuntimeError(_FREED_MSG)
        prev = _current[0]
        _current[0] = self
        try:
            return fn(*grads)
        finally:
            _current[0] = prev

    def __call__(self, *grads):
        r = self._apply(grads)
        # as torch: a node of a one-input op returns that input's gradient itself
        if type(r) in (tuple, list) and len(r) == 1 and len(self._next) == 1:
            return r[0]
        return r

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


_node_classes = {}
_node_apply = Node._apply


def _ACC(*g):   # marker: AccumulateGrad nodes are never freed
    return ()


def node_class(name, saved=None, scalars=()):
    """The Node subclass named ``name`` (``"MulBackward0"``), created once.

    ``saved``: torch's names of the variables the formula saves, in the
    order of the ``_sv`` tuple it gives its nodes (``grad_fn._saved_self``
    ...); ``scalars``: those of them that torch keeps as Python scalars."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = type(name, (Node,), {"__slots__": ()})
        _node_classes[name] = cls
    if saved is not None:
        cls._sv_names = tuple(saved)
        cls._sv_scalars = tuple(scalars)
    return cls


# torch names this node by its C++ class (grad_fn.name() of a written view's base)
node_class("CopySlices").name = lambda self: "torch::autograd::CopySlices"


class ClosureSaved:
    """A node's saved values that live in its backward closure (the hot
    elementwise recording paths keep no tuple of them): ``read(fn)`` gives
    the closure variables ``names``, in the order of the node class's saved
    names."""
    __slots__ = ("names",)

    def __init__(self, *names):
        self.names = names

    def read(self, fn):
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        return tuple(cells[n].cell_contents for n in self.names)


class _FreedMarker:
    __slots__ = ()


_FREED = _FreedMarker()


def _freed_saved(sv):
    """A released node's saved values: tensors dropped (reading them raises
    torch's 'backward through the graph a second time' error), Python
    scalars kept (torch's ``_saved_exponent`` outlives backward)."""
    out = []
    for v in sv:
        if isinstance(v, _TensorBase) or isinstance(v, SavedTensor):
            v = _FREED
        elif hasattr(type(v), "unpack"):
            v = v.unpack()       # a saved non-tensor (autograd._record._Plain)
        out.append(v)
    return tuple(out)


class AccumulateGrad(Node):
    """The node that adds a leaf's gradient into ``leaf.grad``."""
    __slots__ = ("_var",)

    def __init__(self, var):
        Node.__init__(self, (), (), _ACC)
        self._var = weakref.ref(var)
        # after every op node (PyTorch gives accumulators top priority), unique;
        # of two ready together the one made first (an op's first input) runs
        # first, as torch's queue pops its equal-priority accumulators
        self._seq = _ACC_BASE + (_ACC_BASE >> 1) - next(_seq)

    def _release(self):
        pass

    @property
    def variable(self):
        return self._var()

    def name(self):
        return "torch::autograd::AccumulateGrad"      # PyTorch's node name

    def _apply(self, grads):
        g = grads[0]
        var = self._var()
        if var is None or g is None:
            return ()
        steal = True
        if var._backward_hooks:
            for h in list(var._backward_hooks.values()):
                r = h(g)
                if r is not None:
                    g = _hook_result(h, g, r)
                    steal = False       # (the hook may keep what it returned)
        accumulate_grad(var, g, steal)
        if var._post_acc_hooks:
            for h in list(var._post_acc_hooks.values()):
                r = h(var)
                if r is not None:       # (torch's checks of the hook's result)
                    if not isinstance(r, _TensorBase):
                        raise TypeError(f"expected Variable, but hook returned "
                                        f"'{type(r).__name__}'")
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


def _add_grads(a, b):
    """Sum of two gradients; one may be sparse (an embedding's with
    ``sparse=True``): dense + sparse is dense, sparse + sparse stays sparse."""
    if not _is_sparse_tensor(a) or _is_sparse_tensor(b):
        return a + b
    return b + a


_ADD_OP = None      # the add loop's code (set with _Tensor; the engine's buffer add)
_Tensor = [None]    # ptcore.Tensor (a subclass, e.g. vmap's BatchedTensor, is added out of place)


def accumulate_grad(var, g, steal=True):
    """Add ``g`` into ``var.grad``; a first gradient that nothing but the
    engine references (``steal``; see _can_steal) becomes ``var.grad``
    without a copy, as PyTorch's AccumulateGrad."""
    old = var._grad
    if g.dtype is not var.dtype:
        g = g.to(var.dtype)
    if _is_sparse_tensor(g):      # a sparse gradient
        var._grad = g if old is None else _add_grads(old, g)
        return
    if old is None:
        if _state.enabled:
            # create_graph: a copy that keeps the gradient's graph, with the leaf's strides
            # (torch's clone_obey_contract: never the engine's buffer or a view of it, which
            # an optimizer's ``grad.detach_()`` would refuse)
            var._grad = (g.new_empty_strided(tuple(var.shape), var.stride()).copy_(g)
                         if var.is_non_overlapping_and_dense()
                         else g.clone(memory_format=_contig()))
        elif var.is_contiguous() or not var.is_non_overlapping_and_dense():
            if steal and _can_steal(g):
                var._grad = g
            elif steal and _can_steal_view(g):
                var._grad = g.detach()  # the same memory, no longer a view of the engine's buffer
            else:
                var._grad = g.clone(memory_format=_contig())
        else:
            var._grad = _with_strides_of(g, var, steal)
    elif _state.enabled or _is_sparse_tensor(old):
        var._grad = _add_grads(old, g)
    else:
        if tuple(old.shape) != tuple(g.shape):
            g = g.expand(old.shape)
        T = _Tensor[0]
        # the add in C when no dispatch layer must see it and nothing would refuse
        # it (an inference tensor's write: only once inference mode was used)
        if _layers_on[0] or _gm._ever[0] or type(old) is not T or type(g) is not T \
                or _fast_inplace(_ADD_OP, old, g) is None:
            old.add_(g)


def _with_strides_of(g, var, steal):
    """torch's gradient layout contract for a dense, non-contiguous leaf (a
    channels_last weight, a transposed parameter): its gradient has its
    strides (``g`` itself when only the engine holds it, see _can_steal, and
    it has them over the dims of size > 1)."""
    if (steal and sys.getrefcount(g) <= _ENGINE_REFS and g._requires_grad is False
            and all(n == 1 or a == b for n, a, b in zip(g.shape, g.stride(), var.stride()))
            and g.is_non_overlapping_and_dense() and g._sole_owner()):
        return g
    return g.new_empty_strided(tuple(var.shape), var.stride()).copy_(g)


def _contig():
    return contiguous_format


# References to a gradient that only the engine holds, as seen inside
# _can_steal/_can_steal_view: the engine's buffer (or captured list), the
# caller's local, accumulate_grad's and the check's arguments, getrefcount's
_ENGINE_REFS = 5


def _can_steal(g):
    # the engine's own fresh result: referenced only by the engine, dense,
    # and the only user of its storage (as PyTorch's use_count() == 1)
    return (sys.getrefcount(g) <= _ENGINE_REFS and g._requires_grad is False
            and g.is_contiguous() and g._sole_owner())


def _can_steal_view(g):
    # a view (Linear's transposed weight gradient, LayerNorm's reshaped one)
    # of a fresh engine buffer that nothing else references: the view covers
    # the whole buffer, which only the view and its base use
    b = g._base
    if b is None or g._requires_grad or sys.getrefcount(g) > _ENGINE_REFS \
            or sys.getrefcount(b) > 3:
        return False
    st = g.untyped_storage()
    return (sys.getrefcount(st) <= 4 and g.is_contiguous() and g.storage_offset() == 0
            and st.nbytes() == g.numel() * g.element_size())


def gradient_edge(t):
    """The edge gradients of ``t`` flow into: ``(grad_fn, output_nr)``, or
    the leaf's AccumulateGrad."""
    fn = t._grad_fn
    if fn is not None:
        if fn._is_view and fn._bver != t._version:
            fn = _REFRESH_VIEW[0](t)
        return (fn, t._output_nr)
    acc = t._grad_acc
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = acc
    return (acc, 0)


# ---------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------

def _sum_to(g, shape):
    """Sum a broadcast gradient back to ``shape``."""
    gs = tuple(g.shape)
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    if lead < 0:
        return g.reshape(shape)
    dims = list(range(lead))
    for i, n in enumerate(shape):
        if n == 1 and gs[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        if len(dims) == lead:
            # only leading dims (a bias's gradient): summed away, no reshape after
            g = g.sum(dims)
            return g if tuple(g.shape) == shape else g.reshape(shape)
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    elif tuple(g.shape) != shape:
        g = g.reshape(shape)
    return g


def _validate(node, grads):
    """Match each input gradient to its input's shape and dtype."""
    meta = node._in_meta
    nxt = node._next
    n = len(nxt)
    out = grads if type(grads) is list else list(grads)
    if len(out) != n:
        if len(out) < n:
            out += [None] * (n - len(out))
        else:
            raise RuntimeError(f"function {type(node).__name__} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(out)})")
    for i in range(n):
        g = out[i]
        if g is None or nxt[i] is None:
            continue
        shape, dt = meta[i]
        try:
            if g.dtype is dt and g.shape == shape:
                continue
        except AttributeError:
            # torch: "expected Variable or None (got float)", a RuntimeError
            raise RuntimeError(f"function {type(node).__name__} returned a gradient of type "
                               f"{type(g).__name__} at position {i}: expected Variable (a "
                               f"Tensor) or None (got {type(g).__name__})") from None
        if g.shape != shape:
            try:
                g = _sum_to(g, tuple(shape))
            except Exception:
                raise RuntimeError(f"Function {type(node).__name__} returned an invalid gradient "
                                   f"at index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}") from None
        if g.dtype is not dt and dt is not None:
            if dt.is_complex or not g.dtype.is_complex:
                g = g.to(dt)
            else:
                g = g.real.to(dt)
        out[i] = g
    return out


def _zeros_for(node, k):
    if node._out_meta is not None and k < len(node._out_meta):
        m = node._out_meta[k]
        if m is None:
            return None            # a non-differentiable output (indices)
    else:
        m = None
    if m is None:
        raise RuntimeError(f"{type(node).__name__}: an output received no gradient and its shape "
                           "is unknown")
    shape, dt, dev = m
    return zeros(shape, dtype=dt, device=dev)


def _hook_result(h, old, new):
    """A tensor hook's replacement gradient, checked as PyTorch does: same
    size and same type (dtype/device) as the value it replaces."""
    if not isinstance(new, _TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(h, "__name__", type(h).__name__)
    if not new._meta_is(old.shape, new.dtype):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if new.dtype is not old.dtype or new.device != old.device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_str(old)} "
                           f"got {_type_str(new)})")
    return new


def _leaf_hooks(acc, g):
    """``g`` through the tensor hooks of the leaf of AccumulateGrad ``acc``."""
    var = acc._var()
    if var is not None and var._backward_hooks:
        for h in list(var._backward_hooks.values()):
            r = h(g)
            if r is not None:
                g = _hook_result(h, g, r)
    return g


def _run_tensor_prehooks(node, buf):
    for nr, hooks in node._x.tensor_prehooks.items():
        if nr < len(buf) and buf[nr] is not None:
            g = buf[nr]
            for h in list(hooks.values()):
                r = h(g)
                if r is not None:
                    g = _hook_result(h, g, r)
            buf[nr] = g


def _run_post_hooks(hooks, gin, buf):
    """A node's post hooks ``h(grad_inputs, grad_outputs)``; a result other
    than None replaces grad_inputs and must be a tuple of as many (torch's
    TypeError / RuntimeError otherwise)."""
    gin = tuple(gin)
    gout = tuple(buf)
    for h in list(hooks.values()):
        r = h(gin, gout)
        if r is None:
            continue
        if not isinstance(r, tuple):
            raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
        gin = _checked_hook_values(h, gin, r)
    return list(gin)


def _checked_hook_values(h, old, new):
    """A node hook's replacement of the gradients ``old`` (a tuple), checked
    as torch's check_result: as many values, each None or a tensor of the
    size and type of the value it replaces (RuntimeError / TypeError)."""
    if len(new) != len(old):
        raise RuntimeError(f"hook '{getattr(h, '__name__', type(h).__name__)}' has returned an "
                           f"incorrect number of values (got {len(new)}, but expected "
                           f"{len(old)})")
    for o, n in zip(old, new):
        if n is not None and o is not None:
            _hook_result(h, o, n)
    return tuple(new)


def _retain_grads(retain, buf, create_graph):
    for nr, ref in list(retain.items()):
        t = ref()
        if t is not None and nr < len(buf) and buf[nr] is not None:
            g = buf[nr]
            if t._grad is None:
                t._grad = g if create_graph else g.detach().clone()
            else:
                t._grad = t._grad + g


def _n_outputs(node, nr):
    m = node._out_meta
    n = len(m) if m is not None else 1
    return n if n > nr else nr + 1


# ---------------------------------------------------------------------------
# anomaly detection support
# ---------------------------------------------------------------------------

def forward_stack():
    """The traceback anomaly mode keeps for a node: the caller's stack
    without ptcore's own innermost frames (dispatch, recording), as torch's
    stops at its Python frames."""
    import traceback
    frames = traceback.extract_stack()
    n = len(frames)
    while n > 1 and frames[n - 1].filename.startswith(_PKG):
        n -= 1
    return "".join(traceback.format_list(frames[:n]))


def _warn_anomaly(node, stacklevel=4):
    # torch's anomaly mode: a UserWarning with the forward traceback of the
    # node whose backward failed, then the error itself (message unchanged)
    import warnings
    warnings.warn(f"Error detected in {type(node).__name__}. Traceback of forward call that "
                  f"caused the error:\n{node._stack}", UserWarning, stacklevel=stacklevel)


def _check_nan(node, gin):
    if not settings["anomaly_check_nan"]:
        return
    for i, g in enumerate(gin):
        if g is None:
            continue
        if (g.dtype.is_floating_point or g.dtype.is_complex) and bool(g.isnan().any()):
            _warn_anomaly(node)
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its "
                               f"{i}th output.")


# the engine's loop, compiled (ptcore/autograd/_engine_fast.pyx), over the
# helpers above
from ptcore.autograd import _engine_fast  # noqa: E402
_engine_fast.bind(sys.modules[__name__])
run_backward = _engine_fast.run_backward



# ---------------------------------------------------------------------------
# torch.autograd.graph's edge API: GradientEdge / get_gradient_edge (a place in
# the graph that autograd.grad and backward(inputs=...) accept in place of a
# tensor), increment_version and register_multi_grad_hook
# ---------------------------------------------------------------------------


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
    node, nr = gradient_edge(tensor)
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
    return gradient_edge(t)[0]


def task_output_mask(node):
    """torch's ``task_should_compute_output`` for each input edge of ``node``
    in the backward pass running on this thread: whether that edge leads to
    an input of ``autograd.grad`` / ``backward(inputs=)`` (None for a plain
    ``backward()``, which computes every gradient).  ptcore's own backward
    kernels read it (through :func:`ptcore.autograd.function.output_mask`) to
    skip gradients nobody asked for, as torch's built-in kernels do."""
    st = _task_tls.stack
    if not st:
        return None
    needed = st[-1][3]
    if needed is None:
        return None
    return tuple(e is not None and id(e[0]) in needed for e in node._next)


def apply_computing_all(node, grads):
    """``node``'s backward called directly on ``grads`` within the backward
    pass running on this thread, computing the gradient of every input edge:
    the pass's output mask concerns the nodes it reaches, and a caller that
    runs a node of its own graph (a compiled program's backward) needs all
    of that node's gradients."""
    st = _task_tls.stack
    if not st or st[-1][3] is None:
        return node._apply(grads)
    st.append(st[-1][:3] + (None,) + st[-1][4:])
    try:
        return node._apply(grads)
    finally:
        st.pop()


# :func:`task_output_mask` of the node whose backward formula is running (every
# mul/add backward asks: compiled, ptcore/autograd/_engine_fast.pyx)
current_output_mask = _engine_fast.current_output_mask


def _will_engine_execute_node(node):
    """Whether ``node`` runs in the backward pass running on this thread
    (reachable from its roots, and leading to one of its inputs when it has
    inputs)."""
    st = _task_tls.stack
    if not st:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    _, _, deps, needed, accumulate = st[-1]
    if not accumulate and type(node) is AccumulateGrad:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    if node not in deps:
        return False
    return needed is None or id(node) in needed


def _task_id():
    tid = _current_graph_task_id()
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
