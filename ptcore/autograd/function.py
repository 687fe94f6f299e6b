"""Custom differentiable operations: :class:`Function` (PyTorch's API)."""
import functools
import inspect
import warnings
import weakref

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd.graph import Node, SavedOutput, SavedTensor, gradient_edge, node_class
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch import batching as _batching
from ptcore._dispatch import tracing as _tracing
from ptcore.autograd import _record as R
from ptcore.autograd.graph import _FREED_MSG
from ptcore.autograd import graph as G
from ptcore.autograd.graph import forward_stack

_FWL = _fwl.layer()      # the forward-AD layer (its .enabled is read per call)

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]

_state = _gm._state


class FunctionCtx:
    """The ``ctx`` passed to ``forward``/``backward``: save tensors and flags."""

    def __init__(self):
        self.to_save = ()
        self._saved = None
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._dirty = ()
        self._non_diff = ()
        self._node = None
        self._tensor_inputs = ()

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{i} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._saved is None:
            return tuple(self.to_save)
        if self._saved == "freed":
            raise RuntimeError(_FREED_MSG)
        node = self._node() if self._node is not None else None
        return tuple(s.unpack(node) if s is not None else None for s in self._saved)

    saved_variables = saved_tensors

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_diff = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


def output_mask(ctx):
    """``ctx.needs_input_grad`` narrowed to the gradients the running backward
    pass uses (torch's ``task_should_compute_output``, which its built-in
    kernels read): ``autograd.grad(loss, x)`` then computes no weight
    gradient of a convolution on its way to ``x`` (a gradient penalty's
    backward).  For ptcore's own Functions: a user's Function sees
    ``needs_input_grad`` as torch gives it, fixed at forward time."""
    needs = ctx.needs_input_grad
    ref = ctx._node
    node = ref() if ref is not None else None
    m = G.task_output_mask(node) if node is not None else None
    if m is None or len(m) != len(needs):
        return needs
    return tuple(a and b for a, b in zip(needs, m))


def _cfn(*g):      # marker: a live custom-Function node (None once freed)
    raise AssertionError


class BackwardCFunction(Node):
    """The node of a custom Function (``grad_fn`` of its outputs)."""
    __slots__ = ("_ctx", "_cls", "_n_out", "_diff_out")

    def _apply(self, grads):
        if self._fn is None:
            raise RuntimeError(_FREED_MSG)
        ctx = self._ctx
        prev = G._current[0]
        G._current[0] = self
        try:
            gs = list(grads)
            if not ctx.materialize_grads:
                pass
            out = self._cls.backward(ctx, *gs)
        finally:
            G._current[0] = prev
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._next)
        if len(out) > n:
            extra = out[n:]
            if any(e is not None for e in extra):
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(out)})")
            out = out[:n]
        elif len(out) < n:
            raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(out)})")
        for i, (g, e) in enumerate(zip(out, self._next)):
            if e is None and g is not None and not ctx._tensor_inputs[i]:
                raise RuntimeError(f"function {type(self).__name__} returned a gradient different "
                                   f"than None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        return out

    def apply(self, *grads):
        """Call the Function's ``backward`` (``vjp``) with this node's ctx, as
        torch's ``BackwardCFunction.apply`` (no checks on the result)."""
        cls = self._cls
        backward, vjp = cls.backward, cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        user_fn = vjp if vjp is not Function.vjp else backward
        return user_fn(self._ctx, *grads)

    def _release(self):
        # torch frees what save_for_backward saved and nothing else: the node
        # stays callable, and only a later backward that reads
        # ctx.saved_tensors raises (one that saved nothing, or reads only
        # ctx attributes, runs again)
        ctx = self._ctx
        if ctx is not None and ctx._saved:
            ctx._saved = "freed"

    def __getattr__(self, name):
        # ctx attributes are reachable on grad_fn, as in PyTorch
        ctx = object.__getattribute__(self, "_ctx")
        return getattr(ctx, name)


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        # (ptcore's own fused ops name their node as torch's: ``_backward_name``)
        node = attrs.get("_backward_name") or name + "Backward"
        body = {"__slots__": ()}
        count = getattr(cls, "_backward_inputs", None)     # (inherited by renamed subclasses)
        if count is not None:
            # a fused op standing for a torch kernel: next_functions has an entry for each of
            # the kernel's tensor inputs (its first ``count`` arguments), as torch's node,
            # not one for every argument of ``forward`` as a custom Function's
            edges = BackwardCFunction.next_functions.fget
            body["next_functions"] = property(lambda self: edges(self)[:count])
        cls._backward_cls = type(node, (BackwardCFunction,), body)
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class for custom autograd ops.

    Subclasses define static ``forward(ctx, *args, **kwargs)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and
    ``backward(ctx, *grad_outputs)``, and are called with ``.apply(...)``.
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future version "
                      "of PyTorch.", DeprecationWarning, stacklevel=2)
        super().__init__()

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method. "
                           "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                  "to use it with forward mode AD.")

    # vmap support (torch.func): set True to batch forward and backward by
    # running them on batched tensors, or override the ``vmap`` staticmethod
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the "
                                  "vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        uses_setup = cls.setup_context is not Function.setup_context
        if uses_setup:
            # setup_context sees every argument of forward, defaults included
            args, kwargs = _bind_defaults(cls.forward, args, kwargs)
        if _FWL.enabled:
            lvl = _fwl.visible_level(args, kwargs)
            if lvl >= 0:
                return _fwl.function_driver[0](cls, args, kwargs, lvl)
        if _batching._active[0] and _batching.frames():
            out = _batching.function_driver[0](cls, args, kwargs, uses_setup)
            if out is not NotImplemented:
                return out
        ctx = FunctionCtx()
        prev = _state.enabled
        # (one pass: the tensor arguments, which need a gradient, whether any does)
        tensor_args, need = [], []
        record = False
        for a in args:
            if isinstance(a, _TensorBase):
                tensor_args.append(a)
                r = bool(prev and a._requires_grad)
                record = record or r
            else:
                tensor_args.append(None)
                r = False
            need.append(r)
        ctx.needs_input_grad = tuple(need)
        _state.enabled = False
        start = _tracing.node_count() if _tracing._tls.tracer is not None else None
        try:
            if uses_setup:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev
        if start is not None:
            _tracing.python_op(cls, start, tensor_args, out)
        if not record:
            return out
        if _tracing._tls.tracer is not None:
            _tracing.custom_node(cls)
        return connect(cls, ctx, tensor_args, out)


_SIGNATURES = weakref.WeakKeyDictionary()


def _bind_defaults(forward, args, kwargs):
    """``(args, kwargs)`` bound to ``forward``'s signature with the defaults
    filled in, as torch passes them to ``setup_context``."""
    try:
        sig = _SIGNATURES[forward]
    except (KeyError, TypeError):
        sig = inspect.signature(forward)
        try:
            _SIGNATURES[forward] = sig
        except TypeError:
            pass
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def connect(cls, ctx, tensor_args, out, backward=None):
    """Make the node of ``cls`` with inputs ``tensor_args`` (None for the
    non-tensor arguments) for the output ``out`` of its forward, and save
    ``ctx``'s tensors; returns the outputs (inputs and views among them as
    new aliases).  ``backward`` (default ``cls``) is what the node calls
    ``.backward(ctx, *grads)`` on."""
    is_tuple = isinstance(out, tuple)
    outs = out if is_tuple else (out,)
    # inputs returned unchanged become new tensors (so their identity is
    # not rebased), as PyTorch does for non-dirty inputs; outputs that are
    # views become plain aliases: the core's view tracking links views to
    # their root base, which would bypass this node for views of outputs
    # (no dirty or non-differentiable marks, the common case: empty sets, no scans)
    dirty = {id(t) for t in ctx._dirty} if ctx._dirty else _NONE
    if dirty and any(not any(d is o for o in outs) for d in ctx._dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    if dirty and any(not any(d is a for a in tensor_args) for d in ctx._dirty):
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                      "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                      UserWarning, stacklevel=3)
    non_diff = {id(t) for t in ctx._non_diff}
    new_outs = []
    for k, o in enumerate(outs):
        if isinstance(o, _TensorBase) and id(o) not in dirty and (
                o._base is not None or _is_among(o, tensor_args)):
            nd = id(o) in non_diff
            st = o.untyped_storage()
            of_input = any(a is not None and a.untyped_storage() is st for a in tensor_args)
            base = o if o._base is None else o._base
            o = o.detach()
            if nd:
                non_diff.add(id(o))
            if of_input:
                # a view of an input: modifying it in place would bypass
                # this node, so it is forbidden (as PyTorch); it is a view of
                # the input's base (``_base``, ``_is_view()``), as torch's
                o._custom_view_of = (k, cls.__name__)
                _C._set_view_base(o, base)
        new_outs.append(o)
    outs = tuple(new_outs)
    for d in ctx._dirty:
        R.check_inplace(d)
        d._bump_version()       # torch counts the Function's in-place change once more
    edges, meta = [], []
    for t in tensor_args:
        if t is not None and t._requires_grad:
            edges.append(gradient_edge(t))
            meta.append((tuple(t.shape), t.dtype))
        else:
            edges.append(None)
            meta.append(None)
    node = cls._backward_cls(tuple(edges), tuple(meta), _cfn)
    ctx._tensor_inputs = tuple(t is not None for t in tensor_args)
    node._ctx = ctx
    node._cls = cls if backward is None else backward
    # weakly: node -> ctx -> node would be a reference cycle keeping the
    # saved tensors alive until the cyclic GC runs
    ctx._node = weakref.ref(node)
    om = []
    for k, o in enumerate(outs):
        if isinstance(o, _TensorBase):
            om.append((tuple(o.shape), o.dtype, o.device))
            if id(o) in non_diff or not (o.dtype.is_floating_point or o.dtype.is_complex):
                o._requires_grad = False
                continue
            if o._base is not None and id(o) in dirty:
                R.rebase(o, _carrier(o, node, k))
                continue
            old, old_nr = o._grad_fn, o._output_nr
            o._requires_grad = True
            o._grad_fn = node
            if k:
                o._output_nr = k
            if id(o) in dirty:
                R._move_retain(o, old, old_nr)      # a dirty input's retain_grad follows it
        else:
            om.append(None)
    node._out_meta = tuple(om)
    node._accepts_none = not ctx.materialize_grads
    if R._anomaly[0]:
        node._stack = forward_stack()
    # saved tensors (after outputs got their grad_fn, so outputs are
    # recognised and saved without a reference cycle)
    out_ids = {id(o): k for k, o in enumerate(outs) if isinstance(o, _TensorBase)}
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
        elif id(t) in out_ids and t._grad_fn is node:
            saved.append(SavedOutput(t, out_ids[id(t)]))
        else:
            saved.append(SavedTensor(t))
    ctx._saved = saved
    ctx.to_save = ()
    ctx._dirty = ()
    ctx._non_diff = ()
    return outs if is_tuple else outs[0]


_NONE = frozenset()


def _is_among(o, tensors):
    """Whether ``o`` is one of ``tensors`` (by identity)."""
    for a in tensors:
        if a is o:
            return True
    return False


def _carrier(o, node, k):
    c = o.detach()
    c._grad_fn = node
    c._requires_grad = True
    if k:
        c._output_nr = k
    return c


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs
    with recording off, and a double backward through it raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _gm.no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        requires = any(isinstance(a, _TensorBase) and a._requires_grad for a in args)
        if not requires:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        ins = [a for a in args if isinstance(a, _TensorBase)]

        def bw(*g):
            raise RuntimeError("trying to differentiate twice a function that was marked with "
                               "@once_differentiable")
        res = []
        for o in outs:
            if isinstance(o, _TensorBase):
                o = o.detach()
                R.attach("DelayedError", o, ins, bw)
            res.append(o)
        return res[0] if single else tuple(res)
    return wrapper
