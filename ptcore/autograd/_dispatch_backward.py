"""Autograd around a ``__torch_dispatch__`` handler, for the ops whose kernel records
its own autograd.

ptcore records most ops above the kernel (their body records with the op's formula,
then calls the kernel, which a dispatch mode or a tensor subclass's
``__torch_dispatch__`` may take).  The views, ``clone``, ``nn.functional``'s ops and
the other composites record inside their kernel instead (the tensor core's view hook,
a composite's inner ops, a kernel computing on the data), so a handler returning a
result of its own would leave them out of the graph.  For those, while grad mode is
on and an input requires grad, :func:`record_around` takes, in order:

* a decomposition of :data:`DECOMPOSE` (:func:`decompose`): the op runs as the ops
  torch's CompositeImplicitAutograd runs (``dropout`` as ``bernoulli_``, ``div_`` and
  ``mul``; ``batch_norm`` as the aten op ``native_batch_norm``, made with
  :func:`aten_op`), each recorded on its own: the handler sees torch's ops;
* a formula of :data:`BACKWARD` (:func:`register`): the handler runs below autograd
  (grad mode off, as under torch's Python dispatch key) and the op is recorded
  around its result.  The formulas take the op's arguments by the names of its aten
  schema, defaults filled in, or by the parameter names of its ptcore function
  (``signature=``: ``F.mse_loss``'s string reduction fits no aten schema); they are
  written with ptcore ops, or run the backward as one op named as torch's
  (:func:`backward_op`, :func:`autograd_formula`:
  ``aten.max_pool2d_with_indices_backward`` ..., computed from the forward's own
  autograd on the handler's data);
* the op's formula of autograd's ``FORMULAS``, given the public call's arguments;
* else (:func:`_fallback`) a backward ``aten.<name>_backward`` that runs the op's
  kernel again under ptcore's autograd, for an op that draws no random numbers, is
  not in place and is no factory.

The backward goes through the dispatch layer again, so the handler sees its ops (a
wrapper subclass's gradient is a wrapper, as in torch).  An op none of these takes
runs its handler as before.  ``ptcore.nn.functional`` registers the formulas and
decompositions of its ops.
"""
import inspect

import ptcore as P
from ptcore._tensor import _TensorBase
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch import python_dispatch as _pd
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd._formulas import FORMULAS
from ptcore.autograd._record import _needs_grad
from ptcore.autograd._record_fast import input_edges
from ptcore.autograd.graph import Node, _sum_to

__all__ = ["BACKWARD", "DECOMPOSE", "register", "decompose", "backward_op", "record_around",
           "install"]

_state = _gm._state

# "aten.<op>.<overload>" -> (formula(out, arguments by name): attaches out's node,
# the ptcore function whose signature binds the public call, or None: the aten schema)
BACKWARD = {}
# "aten.<op>.<overload>" -> (decomposition(arguments by name), signature function or None)
DECOMPOSE = {}
_BY_FUNC = {}       # OpOverload -> formula or None (the table, looked up once per overload)


def _entries(table, names, signature):
    def deco(fn):
        for n in names:
            table[n] = (fn, signature)
        _BY_FUNC.clear()
        return fn
    return deco


def register(*names, signature=None):
    """Decorator: the formula of the overloads ``names`` (``"aten.view.default"``),
    given the op's arguments by the names of its aten schema, or of ``signature``'s
    parameters (the public call's arguments); it returns NotImplemented for a call it
    does not take (the op is then recorded with its kernel's autograd)."""
    return _entries(BACKWARD, names, signature)


def decompose(*names, signature=None):
    """Decorator: the overloads ``names`` run, when recorded, as this function of their
    arguments (by name, as :func:`register`'s), made of ops that record their own
    autograd, instead of going to the handler (torch's CompositeImplicitAutograd); it
    returns NotImplemented for a call it leaves to the handler (and the formula)."""
    return _entries(DECOMPOSE, names, signature)


def _binder(func, signature):
    """``bind(args, kwargs, call)``: the op's arguments by name, defaults filled in."""
    if signature is None:
        s = func._schema
        return lambda args, kwargs, call: _op_schema.bind(s, args, kwargs)[0]
    sig = signature if isinstance(signature, inspect.Signature) else \
        inspect.signature(signature)

    def bind(args, kwargs, call):
        b = sig.bind(*call[0], **call[1])
        b.apply_defaults()
        return b.arguments
    return bind


def _formula(func):
    """``(record(out, args, kwargs, call), decomposition(args, kwargs, call))`` for
    ``func``: its formula of :data:`BACKWARD` (the arguments bound by name), else the
    formula autograd records the op of that name with elsewhere (``FORMULAS``:
    ``nn.functional``'s ops record with these inside their kernel; given the public
    ``call``'s arguments, as there), else None; its decomposition of :data:`DECOMPOSE`
    or None."""
    try:
        return _BY_FUNC[func]
    except KeyError:
        pass
    name = str(func)
    d = DECOMPOSE.get(name)
    run = None
    if d is not None:
        def run(args, kwargs, call, _f=d[0], _b=_binder(func, d[1])):
            try:
                v = _b(args, kwargs, call)
            except (_op_schema.SchemaMismatch, TypeError):
                return NotImplemented
            return _f(v)
    f = BACKWARD.get(name)
    if f is not None:
        def record(out, args, kwargs, call, _f=f[0], _b=_binder(func, f[1])):
            try:
                v = _b(args, kwargs, call)
            except _op_schema.SchemaMismatch:
                # (a call of another function of that name: F.unfold, not Tensor.unfold)
                v = None
            if v is None or _f(out, v) is NotImplemented:
                # (or a call the formula does not take: the kernel's autograd)
                fb = _fallback(func, call[2])
                if fb is not None:
                    fb[0](out, args, kwargs, call)
    else:
        f = FORMULAS.get(func.overloadpacket.__name__)
        # (an activation's formula taking the parameters its body computes, elu's
        # negcoef ...: not the public call's; the kernel's autograd records it)
        record = None if f is None or getattr(f, "body_params", False) else _public_call(f)
    _BY_FUNC[func] = (record, run) if record is not None or run is not None else None
    return _BY_FUNC[func]


def _public_call(formula):
    def record(out, args, kwargs, call):
        a, k = call[0], call[1]
        if k:
            k = {n: v for n, v in k.items() if n != "out"}
        try:
            formula(out, *a, **k)
        except TypeError:
            # (arguments the formula does not take: the op stays unrecorded, as before)
            if isinstance(out, _TensorBase):
                out._requires_grad = False
                out._grad_fn = None
    return record


_tracing = [0]       # > 0 while a tracing mode's handler runs an op without a formula


def record_around(func, args, kwargs, handler, types, call=None):
    """``handler(func, types, args, kwargs)``; for an op with a formula (see
    :func:`_formula`) and an input requiring grad (grad mode on), run below autograd
    and recorded around its result."""
    kwargs = kwargs or {}
    if not (_state.enabled and _needs_grad(args, kwargs)):
        return handler(func, types, args, kwargs)
    call = (args, kwargs, None) if call is None else call
    above = getattr(getattr(handler, "__self__", None), "_ptc_decomposes_above_autograd", None)
    # (a tracing mode, make_fx's, would record the fallback's backward op, which is no
    # aten op a traced graph can run: not for it, nor for the modes below it, a fake
    # trace's FakeTensorMode)
    # (nor for a mode over plain tensors, a FlopCounterMode's: the op's kernel records its
    # own backward there, whose ops the mode sees as torch's modes see them)
    is_mode = not isinstance(getattr(handler, "__self__", None), type)
    f = _formula(func) or (None if above is not None or _tracing[0] or
                           (is_mode and not types) else _fallback(func, call[2]))
    if f is None:
        if above is None:
            return handler(func, types, args, kwargs)
        _tracing[0] += 1
        try:
            return handler(func, types, args, kwargs)
        finally:
            _tracing[0] -= 1
    if f[1] is not None:
        # (decomposed above autograd: its ops reach the handler and record themselves)
        mode = getattr(handler, "__self__", None)
        if isinstance(mode, _pd.TorchDispatchMode):
            # (a mode's handler runs with the mode off: its decomposition's ops see it)
            _pd._st.modes.append(mode)
            try:
                r = f[1](args, kwargs, call)
            finally:
                _pd._st.modes.pop()
        else:
            r = f[1](args, kwargs, call)
        if r is not NotImplemented:
            return r
        if f[0] is None:
            return handler(func, types, args, kwargs)
    if above is not None and above(func):
        # (a handler running the op as ops that each record, as torch's composite ops
        # decompose above autograd: make_fx's trace of linear as t and addmm)
        return handler(func, types, args, kwargs)
    _state.enabled = False
    try:
        out = handler(func, types, args, kwargs)
    finally:
        _state.enabled = True
    if isinstance(out, _TensorBase):
        if out._grad_fn is not None or not _differentiable(out) or any(out is a for a in args):
            return out
    elif not (isinstance(out, (tuple, list)) and any(
            isinstance(o, _TensorBase) and o._grad_fn is None and _differentiable(o)
            for o in out)):
        return out
    f[0](out, args, kwargs, call)
    return out


def _differentiable(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def install():
    _pd.record_around[0] = record_around


# ---------------------------------------------------------------------------
# the formulas of the views and copies (the tensor core's methods)
# ---------------------------------------------------------------------------

def _reshaped(g, shape):
    """``g`` viewed as ``shape`` (torch's ``reshape``: a view where g's layout allows)."""
    return g.view(shape) if g.is_contiguous() else g.reshape(shape)


_CLASSES = {}     # torch's node names -> plain node classes (the views' node classes of
                  # the core's view hook rebuild views from their base: not these)


def attach(name, out, inputs, backward):
    """Give ``out`` a node named ``name`` over ``inputs`` (``backward(g)``: their
    gradients, None where an input needs none)."""
    node = _new_node(name, inputs, backward)
    if node is None:
        return
    out._requires_grad = True
    out._grad_fn = node


def _new_node(name, inputs, backward):
    """A node of the class named ``name`` (made once) over ``inputs``' edges, or None
    when none of them needs a gradient."""
    em = input_edges(inputs)
    if em is None:
        return None
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (Node,), {"__slots__": ()})
    return cls(em[0], em[1], backward)


def _one(name, out, x, bw):
    attach(name, out, (x,), lambda g: (bw(g),))


def inferred_shape(shape, numel):
    """``shape`` with its one -1 worked out for ``numel`` elements."""
    shape = [int(s) for s in shape]
    if shape.count(-1) == 1:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape[shape.index(-1)] = numel // known if known else 0
    return shape


def _as_view(x, shape):
    # (torch's reshape of a contiguous tensor: a view; another: left as called)
    return x.view(inferred_shape(shape, x.numel())) if x.is_contiguous() else NotImplemented


@decompose("aten.reshape.default")
def _reshape_as_view(v):
    return _as_view(v["self"], v["shape"])


@decompose("aten.flatten.using_ints")
def _flatten_as_view(v):
    x = v["self"]
    n = x.dim()
    if n == 0:
        return _as_view(x, [1])
    s, e = v["start_dim"] % n, v["end_dim"] % n
    if s >= e:
        return NotImplemented
    shape = list(x.shape)
    return _as_view(x, shape[:s] + [-1] + shape[e + 1:])


@decompose("aten.movedim.int")
def _movedim_as_permute(v):
    x = v["self"]
    n = x.dim()
    if n == 0:
        return NotImplemented
    src, dst = v["source"] % n, v["destination"] % n
    perm = [d for d in range(n) if d != src]
    perm.insert(dst, src)
    return x.permute(perm)


@decompose("aten.narrow.default")
def _narrow_as_slice(v):
    x, d, start = v["self"], v["dim"], v["start"]
    if not isinstance(start, int):
        return NotImplemented
    if start < 0:
        start += x.shape[d]
    return x[(slice(None),) * (d % x.dim()) + (slice(start, start + v["length"]),)]


@register("aten.view.default", "aten.reshape.default", "aten.flatten.using_ints",
          "aten.unflatten.int", "aten._unsafe_view.default")
def _view(out, v):
    shape = tuple(v["self"].shape)
    _one("ViewBackward0", out, v["self"], lambda g: _reshaped(g, shape))


@register("aten.view_as.default")
def _view_as(out, v):
    shape = tuple(v["self"].shape)
    _one("ViewBackward0", out, v["self"], lambda g: _reshaped(g, shape))


@register("aten.transpose.int")
def _transpose(out, v):
    d0, d1 = v["dim0"], v["dim1"]
    _one("TransposeBackward0", out, v["self"], lambda g: g.transpose(d0, d1))


@register("aten.t.default")
def _t(out, v):
    _one("TBackward0", out, v["self"], lambda g: g.t())


def _inverse(perm):
    n = len(perm)
    inv = [0] * n
    for i, p in enumerate(perm):
        inv[p % n] = i
    return inv


@register("aten.permute.default")
def _permute(out, v):
    inv = _inverse(list(v["dims"]))
    _one("PermuteBackward0", out, v["self"], lambda g: g.permute(inv))


@register("aten.movedim.int")
def _movedim(out, v):
    src, dst = v["source"], v["destination"]
    _one("PermuteBackward0", out, v["self"], lambda g: g.movedim(dst, src))


@register("aten.expand.default", "aten.expand_as.default")
def _expand(out, v):
    shape = tuple(v["self"].shape)
    _one("ExpandBackward0", out, v["self"], lambda g: _sum_to(g, shape))


@register("aten.unsqueeze.default")
def _unsqueeze(out, v):
    d = v["dim"]
    _one("UnsqueezeBackward0", out, v["self"], lambda g: g.squeeze(d))


def _squeezed(shape, dims):
    """The dims of ``shape`` (in ``dims``, or all) a squeeze removed, ascending."""
    n = len(shape)
    cand = range(n) if dims is None else sorted({d % n for d in dims}) if n else []
    return [d for d in cand if shape[d] == 1]


@register("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims")
def _squeeze(out, v):
    x = v["self"]
    d = v.get("dim")
    gone = _squeezed(tuple(x.shape), None if d is None else [d] if type(d) is int else list(d))
    name = "SqueezeBackward0" if d is None else "SqueezeBackward1" if type(d) is int \
        else "SqueezeBackward2"

    def bw(g):
        for k in gone:          # (torch's unsqueeze_to)
            g = g.unsqueeze(k)
        return g
    _one(name, out, x, bw)


@register("aten.clone.default", "aten.contiguous.default", "aten.alias.default")
def _clone(out, v):
    _one("CloneBackward0", out, v["self"], lambda g: g)


@register("aten.select.int")
def _select(out, v):
    x, d, i = v["self"], v["dim"], v["index"]
    shape = tuple(x.shape)
    _one("SelectBackward0", out, x,
         lambda g: P.select_scatter(g.new_zeros(shape), g, d, i))


def _slice_back(name, out, x, d, start, end, step):
    shape = tuple(x.shape)
    _one(name, out, x,
         lambda g: P.slice_scatter(g.new_zeros(shape), g, d, start, end, step))


@register("aten.slice.Tensor")
def _slice(out, v):
    n = v["self"].shape[v["dim"]] if v["self"].dim() else 0
    start = 0 if v["start"] is None else v["start"]
    end = n if v["end"] is None else min(v["end"], n)
    _slice_back("SliceBackward0", out, v["self"], v["dim"], start, end, v["step"])


@register("aten.narrow.default")
def _narrow(out, v):
    x, d, s = v["self"], v["dim"], v["start"]
    if s < 0:
        s += x.shape[d]
    _slice_back("SliceBackward0", out, x, d, s, s + v["length"], 1)


def attach_multi(name, outs, inputs, backward):
    """:func:`attach` for the several outputs ``outs`` of one op: ``backward(*grads)``
    gets None for an output that received no gradient."""
    node = _new_node(name, inputs, backward)
    if node is None:
        return
    meta = []
    for k, o in enumerate(outs):
        if isinstance(o, _TensorBase) and o._grad_fn is None and _differentiable(o):
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = k
            meta.append((tuple(o.shape), o.dtype, o.device))
        else:
            meta.append(None)
    node._out_meta = tuple(meta)
    node._accepts_none = True


# ---------------------------------------------------------------------------
# a backward computed as one op named as torch's, from the forward's autograd
# ---------------------------------------------------------------------------

_BACKWARD_OPS = {}


def backward_op(name, forward):
    """``bw(grad_output, *inputs, output_mask, **params)``: the gradients of
    ``forward(**inputs by name, **params)``'s (first) output with respect to the
    ``inputs`` marked in ``output_mask`` (None for the others; one tensor for one
    input), dispatched as the aten op ``name`` (a handler sees
    ``aten.<name>.default`` and computes it on its data: the kernel runs ``forward``
    with ptcore's autograd).  ``inputs`` are given as ``(parameter name, tensor)``."""
    key = (name, forward)
    op = _BACKWARD_OPS.get(key)
    if op is None:
        op = _BACKWARD_OPS[key] = _pd.dispatch_as(name, _autograd_kernel(forward),
                                                  _autograd_meta)
    return op


def _autograd_kernel(forward):
    def kernel(grad_output, *inputs, output_mask, names, **params):
        with P.enable_grad():
            ins = [t.detach().requires_grad_(bool(m)) if isinstance(t, _TensorBase) else t
                   for t, m in zip(inputs, output_mask)]
            y = forward(**dict(zip(names, ins)), **params)
            if isinstance(y, (tuple, list)):
                y = y[0]
            wanted = [t for t, m in zip(ins, output_mask) if m]
            got = iter(P.autograd.grad(y, wanted, grad_output, allow_unused=True)
                       if wanted else ())
        res = []
        for t, m in zip(ins, output_mask):
            g = next(got) if m else None
            res.append(P.zeros_like(t) if m and g is None else g)
        return res[0] if len(res) == 1 else tuple(res)
    return kernel


def _autograd_meta(grad_output, *inputs, output_mask, names, **params):
    r = [t.new_empty(t.shape) if m else None for t, m in zip(inputs, output_mask)]
    return r[0] if len(r) == 1 else tuple(r)


def autograd_formula(names, node, backward, forward, inputs, signature=None, check=None):
    """Register, for the overloads ``names``, a formula recording ``node`` whose
    backward is :func:`backward_op` ``backward`` (a name, or ``backward(v)``: the name
    for these arguments) of ``forward`` (called with the op's arguments by name)
    with respect to the arguments named in ``inputs``.  ``check(v)``: False leaves the
    call unrecorded (a formula that does not apply)."""
    inputs = tuple(inputs)

    @register(*names, signature=signature)
    def formula(out, v):
        if check is not None and not check(v):
            return
        ts = [v[n] for n in inputs]
        ps = {k: a for k, a in v.items() if k not in inputs}
        mask = [t is not None and isinstance(t, _TensorBase) and t._requires_grad for t in ts]
        op = backward_op(backward if isinstance(backward, str) else backward(v), forward)

        def bw(g):
            r = op(g, *ts, output_mask=mask, names=inputs, **ps)
            return (r,) if len(ts) == 1 else r
        attach(node, out[0] if isinstance(out, (tuple, list)) else out, ts, bw)
    return formula


def aten_op(name, kernel, node, backward, inputs, overload="default", forward=None, meta=None):
    """``kernel`` (its parameters: those of torch's aten schema of ``name``) as the aten
    op ``name`` (:func:`~ptcore._dispatch.python_dispatch.dispatch_as`), recorded around
    a handler as :func:`autograd_formula` with the backward op ``backward`` of
    ``forward`` (by default the kernel: one without side effects) with respect to
    ``inputs``.  The decompositions of ptcore's public ops call it, so that a handler
    sees the op torch's composite reaches (``aten.native_batch_norm`` for
    ``F.batch_norm``)."""
    # (the arguments bound by the kernel's signature: ptcore may not know the schema)
    autograd_formula(["aten.%s.%s" % (name, overload)], node, backward, forward or kernel,
                     inputs, signature=kernel)
    return _pd.dispatch_as(name, kernel, meta)


# ---------------------------------------------------------------------------
# any other op recording inside its kernel: its backward from the kernel's autograd
# ---------------------------------------------------------------------------

# ops whose kernel draws random numbers: run again for the backward, it would not
# compute what the handler did (left unrecorded, as before)
# compute what the handler did (left unrecorded, as before), but where ``deterministic``
# (the call's arguments by name) says the call draws none
_RANDOM = frozenset({
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_dropout",
    "feature_alpha_dropout", "native_dropout", "rrelu", "gumbel_softmax",
    "fractional_max_pool2d", "fractional_max_pool3d", "multi_head_attention_forward",
    "scaled_dot_product_attention", "bernoulli", "multinomial", "normal", "rand_like",
    "randn_like", "randint_like", "poisson"})
_DETERMINISTIC = {
    "multi_head_attention_forward": lambda v: not v.get("dropout_p") or not v.get("training"),
    "scaled_dot_product_attention": lambda v: not v.get("dropout_p"),
    "rrelu": lambda v: not v.get("training"),
}
_FALLBACKS = {}


def _no_fallback(name):
    """Ops whose result does not depend differentiably on their inputs (a factory given
    a tensor for its metadata, detach: torch records none), and the in-place ops (their
    kernel records the write into the tensor's graph, with grad mode on)."""
    return name.endswith(("_like", "_")) or name.startswith(("new_", "detach")) or \
        name in ("empty_strided", "histc", "bincount", "retain_grad", "__setitem__")


class _Leaf:
    """Where the ``i``-th tensor of an op's arguments goes back (a backward kernel's
    template of the arguments: the tensors travel as its positional arguments, which
    a handler unwraps)."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _fallback(func, kernel):
    """``(record, None)`` for an op without a formula whose ``kernel`` (the function
    the public call runs) has a signature and draws no random numbers: the op is
    recorded with a backward that runs ``kernel`` again under ptcore's autograd, as
    one op ``aten.<name>_backward`` a handler computes on its data."""
    key = (func, kernel)
    try:
        return _FALLBACKS[key]
    except (KeyError, TypeError):
        pass
    r = None
    name = func.overloadpacket.__name__
    if kernel is not None and (name not in _RANDOM or name in _DETERMINISTIC) and \
            not _no_fallback(name):
        try:
            sig = inspect.signature(kernel)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            r = (_kernel_record(name, kernel, sig, _DETERMINISTIC.get(name)), None)
    try:
        _FALLBACKS[key] = r
    except TypeError:
        pass
    return r


def _kernel_record(name, kernel, sig, deterministic=None):
    node = "".join(w.title() for w in name.split("_")) + "Backward0"
    op = _pd.dispatch_as(name + "_backward", _kernel_autograd(kernel, sig), _kernel_meta)

    def record(out, args, kwargs, call):
        try:
            b = sig.bind(*call[0], **call[1])
        except TypeError:
            return
        if b.arguments.get("out") is not None or \
                (deterministic is not None and not deterministic(b.arguments)):
            return
        leaves = []

        def put(x):
            if isinstance(x, _TensorBase):
                leaves.append(x)
                return _Leaf(len(leaves) - 1)
            return x
        template = {n: type(x)(put(e) for e in x) if type(x) in (list, tuple) else put(x)
                    for n, x in b.arguments.items()}
        mask = [t._requires_grad and _differentiable(t) for t in leaves]
        if not any(mask):
            return
        # (the tensors first, the gradients by keyword: no aten schema of that name
        # takes these arguments)
        if isinstance(out, _TensorBase):
            attach(node, out, leaves,
                   lambda g: op(*leaves, grads=[g], output_mask=mask, template=template))
        else:
            attach_multi(node, out, leaves,
                         lambda *gs: op(*leaves, grads=list(gs), output_mask=mask,
                                        template=template))
    return record


def _filled(x, ins):
    if isinstance(x, _Leaf):
        return ins[x.i]
    if type(x) in (list, tuple):
        return type(x)(_filled(e, ins) for e in x)
    return x


def _kernel_autograd(kernel, sig):
    def backward(*leaves, grads, output_mask, template):
        with P.enable_grad():
            ins = [t.detach().requires_grad_(bool(m)) for t, m in zip(leaves, output_mask)]
            b = inspect.BoundArguments(sig, {n: _filled(x, ins) for n, x in template.items()})
            y = kernel(*b.args, **b.kwargs)
            ys = list(y) if isinstance(y, (tuple, list)) else [y]
            pairs = [(o, g) for o, g in zip(ys, grads)
                     if g is not None and isinstance(o, _TensorBase) and o._requires_grad]
            wanted = [t for t, m in zip(ins, output_mask) if m]
            got = iter(P.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                       allow_unused=True) if pairs else [None] * len(wanted))
        res = []
        for t, m in zip(ins, output_mask):
            g = next(got) if m else None
            res.append(P.zeros_like(t) if m and g is None else g)
        return tuple(res)
    return backward


def _kernel_meta(*leaves, grads, output_mask, template):
    return tuple(t.new_empty(t.shape) if m else None for t, m in zip(leaves, output_mask))


# ---------------------------------------------------------------------------
# the tensor core's multi-output views, conversions and indexing
# ---------------------------------------------------------------------------

def _pieces(out, gs, dim, join):
    gs = [g if g is not None else o.new_zeros(o.shape) for g, o in zip(gs, out)]
    return join(gs, dim)


@register("aten.split.Tensor", "aten.split.sizes", "aten.split_with_sizes.default",
          "aten.chunk.default", "aten.tensor_split.sections", "aten.tensor_split.indices")
def _split(out, v):
    d = v["dim"]
    attach_multi("SplitBackward0", out, (v["self"],),
                 lambda *gs: (_pieces(out, gs, d, P.cat),))


@register("aten.unbind.int")
def _unbind(out, v):
    d = v["dim"]
    attach_multi("UnbindBackward0", out, (v["self"],),
                 lambda *gs: (_pieces(out, gs, d, P.stack),))


@decompose("aten.chunk.default")
def _chunk(v):
    # (torch: a split of the chunks' size)
    x, d = v["self"], v["dim"]
    n = x.shape[d] if x.dim() else 0
    size = -(-n // v["chunks"])
    return x.split(size, d) if size else NotImplemented


def _to_copy_kernel(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                    non_blocking=False, memory_format=None):
    return self.to(device=self.device if device is None else device,
                   dtype=self.dtype if dtype is None else dtype, non_blocking=non_blocking,
                   copy=True, memory_format=P.preserve_format if memory_format is None
                   else memory_format)


def _to_copy_meta(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                  non_blocking=False, memory_format=None):
    return self.new_empty(tuple(self.shape), dtype=self.dtype if dtype is None else dtype)


_to_copy = _pd.dispatch_as("_to_copy", _to_copy_kernel, _to_copy_meta)


def _converted(x, dtype=None, device=None, non_blocking=False, copy=False,
               memory_format=None):
    """torch's ``to`` and its conversions: ``_to_copy``, or the tensor itself when it
    has the dtype and device already."""
    dtype = x.dtype if dtype is None else dtype
    device = x.device if device is None else P.device(device)
    if dtype is x.dtype and device == x.device and not copy and memory_format in (
            None, P.preserve_format):
        return x
    return _to_copy(x, dtype=dtype, device=device, non_blocking=non_blocking,
                    memory_format=memory_format)


@decompose("aten.to.dtype")
def _to_dtype(v):
    return _converted(v["self"], v["dtype"], None, v["non_blocking"], v["copy"],
                      v["memory_format"])


@decompose("aten.to.device")
def _to_device(v):
    return _converted(v["self"], v["dtype"], v["device"], v["non_blocking"], v["copy"],
                      v["memory_format"])


@decompose("aten.to.other")
def _to_other(v):
    o = v["other"]
    return _converted(v["self"], o.dtype, o.device, v["non_blocking"], v["copy"],
                      v["memory_format"])


@decompose("aten.type_as.default")
def _type_as(v):
    return _converted(v["self"], v["other"].dtype)


def _conversion(name, dtype):
    def convert(self, memory_format=None):
        """(the parameters of ``Tensor.<name>``)"""

    @decompose(f"aten.{name}.default", signature=convert)
    def fn(v):
        return _converted(v["self"], dtype, memory_format=v["memory_format"])


for _n, _t in (("double", P.float64), ("float", P.float32), ("half", P.float16),
               ("bfloat16", P.bfloat16)):
    _conversion(_n, _t)


@register("aten.to.dtype", "aten.to.device", "aten.to.other", "aten._to_copy.default")
def _to(out, v):
    x = v["self"]
    dt, dev = x.dtype, x.device
    if not (dt.is_floating_point or dt.is_complex):
        return
    _one("ToCopyBackward0", out, x,
         lambda g: _to_copy(g, dtype=dt) if g.device == dev else _to_copy(g, dtype=dt,
                                                                          device=dev))


autograd_formula(["aten.diagonal.default"], "DiagonalBackward0", "diagonal_backward",
                 lambda self, offset, dim1, dim2: self.diagonal(offset, dim1, dim2), ["self"])


autograd_formula(["aten.unfold.default"], "UnfoldBackward0", "unfold_backward",
                 lambda self, dimension, size, step: self.unfold(dimension, size, step),
                 ["self"])


def _getitem(self, key):
    """(the parameters of ``Tensor.__getitem__``)"""


def _index_key(key):
    """``key`` as aten.index's indices (tensors, None for a full slice) when it holds
    only tensors and full slices, else None."""
    ks = key if isinstance(key, tuple) else (key,)
    out = []
    for k in ks:
        if isinstance(k, _TensorBase):
            out.append(k)
        elif type(k) is slice and k == slice(None):
            out.append(None)
        else:
            return None
    while out and out[-1] is None:
        out.pop()
    return out if out else None


def _index_kernel(self, indices):
    return self[tuple(slice(None) if i is None else i for i in indices)]


_index_op = _pd.dispatch_as("index", _index_kernel)


@decompose("aten.__getitem__.default", signature=_getitem)
def _getitem_as_index(v):
    # (torch: advanced indexing by tensors is aten.index)
    ks = _index_key(v["key"])
    return NotImplemented if ks is None else _index_op(v["self"], ks)


def _index_put_kernel(self, indices, values, accumulate=False):
    if all(i is not None for i in indices):
        return P.index_put(self, indices, values, accumulate)
    # (None: a full slice, which ptcore's index_put does not take)
    key = tuple(slice(None) if i is None else i for i in indices)
    if not accumulate:
        r = self.clone()
        r[key] = values
        return r
    with P.enable_grad():
        z = P.zeros_like(self, requires_grad=True)
        (g,) = P.autograd.grad(z[key], z, values)
    return self + g


_index_put = _pd.dispatch_as("index_put", _index_put_kernel,
                             lambda self, indices, values, accumulate=False:
                             self.new_empty(self.shape))


def _index_backward(name, out, x, ks, v):
    shape = tuple(x.shape)
    _one(name, out, x, lambda g: _index_put(g.new_zeros(shape), ks, g, True))


@register("aten.index.Tensor")
def _index(out, v):
    _index_backward("IndexBackward0", out, v["self"], list(v["indices"]),
                    {"self": v["self"], "key": tuple(slice(None) if i is None else i
                                                     for i in v["indices"])})


@register("aten.__getitem__.default", signature=_getitem)
def _getitem_index(out, v):
    ks = _index_key(v["key"])
    if ks is None:
        _generic_index(out, v)
    else:
        _index_backward("IndexBackward0", out, v["self"], ks, v)


_generic_index = autograd_formula(
    [], "IndexBackward0", "index_backward", lambda self, key: self[key], ["self"])
