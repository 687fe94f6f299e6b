"""Autograd around a ``__torch_dispatch__`` handler, for the ops whose kernel records
its own autograd.

ptcore records most ops above the kernel (their body records with the op's formula,
then calls the kernel, which a dispatch mode or a tensor subclass's
``__torch_dispatch__`` may take).  The views, ``clone``, ``F.linear``, the
convolutions and ``layer_norm`` record inside their kernel instead (the tensor core's
view hook, a composite's inner ops, a kernel computing on the data), so a handler
returning a result of its own left them out of the graph.  For those, while grad
mode is on and an input requires grad, the handler now runs below autograd (grad mode
off, as under torch's Python dispatch key) and the op is recorded around its result
with a backward formula from :data:`BACKWARD`, written with ptcore ops: the backward
goes through the dispatch layer again, so the handler sees its ops (a wrapper
subclass's gradient is a wrapper, as in torch).  An op without a formula here runs
its handler as before.

The formulas take the op's arguments by the names of its aten schema, defaults filled
in.  ``ptcore.nn.functional`` registers those of ``linear``, the convolutions and
``layer_norm`` (:func:`register`).
"""
import ptcore as P
from ptcore._tensor import _TensorBase
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch import python_dispatch as _pd
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd._formulas import FORMULAS
from ptcore.autograd._record import _needs_grad
from ptcore.autograd._record_fast import input_edges
from ptcore.autograd.graph import Node, _sum_to

__all__ = ["BACKWARD", "register", "record_around", "install"]

_state = _gm._state

# "aten.<op>.<overload>" -> formula(out, arguments by name): attaches out's node
BACKWARD = {}
_BY_FUNC = {}       # OpOverload -> formula or None (the table, looked up once per overload)


def register(*names):
    """Decorator: the formula of the overloads ``names`` (``"aten.view.default"``)."""
    def deco(fn):
        for n in names:
            BACKWARD[n] = fn
        _BY_FUNC.clear()
        return fn
    return deco


def _formula(func):
    """``record(out, args, kwargs, call)`` for ``func``: its formula of :data:`BACKWARD`
    (the aten arguments bound by name), else the formula autograd records the op of that
    name with elsewhere (``FORMULAS``: ``nn.functional``'s ops record with these inside
    their kernel; given the public ``call``'s arguments, as there), else None."""
    try:
        return _BY_FUNC[func]
    except KeyError:
        pass
    f = BACKWARD.get(str(func))
    if f is not None:
        def record(out, args, kwargs, call, _f=f, _s=func._schema):
            _f(out, _op_schema.bind(_s, args, kwargs)[0])
    else:
        f = FORMULAS.get(func.overloadpacket.__name__)
        record = None if f is None else _public_call(f)
    _BY_FUNC[func] = record
    return record


def _public_call(formula):
    def record(out, args, kwargs, call):
        a, k = call
        if k:
            k = {n: v for n, v in k.items() if n != "out"}
        try:
            formula(out, *a, **k)
        except TypeError:
            # (arguments the formula does not take: the op stays unrecorded, as before)
            out._requires_grad = False
            out._grad_fn = None
    return record


def record_around(func, args, kwargs, handler, types, call=None):
    """``handler(func, types, args, kwargs)``; for an op with a formula (see
    :func:`_formula`) and an input requiring grad (grad mode on), run below autograd
    and recorded around its result."""
    kwargs = kwargs or {}
    f = _formula(func) if _state.enabled else None
    if f is None or not _needs_grad(args, kwargs):
        return handler(func, types, args, kwargs)
    above = getattr(getattr(handler, "__self__", None), "_ptc_decomposes_above_autograd", None)
    if above is not None and above(func):
        # (a handler running the op as ops that each record, as torch's composite ops
        # decompose above autograd: make_fx's trace of linear as t and addmm)
        return handler(func, types, args, kwargs)
    _state.enabled = False
    try:
        out = handler(func, types, args, kwargs)
    finally:
        _state.enabled = True
    if not isinstance(out, _TensorBase) or out._grad_fn is not None or \
            not (out.dtype.is_floating_point or out.dtype.is_complex) or \
            any(out is a for a in args):
        return out
    f(out, args, kwargs, (args, kwargs) if call is None else call)
    return out


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
    em = input_edges(inputs)
    if em is None:
        return
    cls = _CLASSES.get(name)
    if cls is None:
        cls = _CLASSES[name] = type(name, (Node,), {"__slots__": ()})
    out._requires_grad = True
    out._grad_fn = cls(em[0], em[1], backward)


def _one(name, out, x, bw):
    attach(name, out, (x,), lambda g: (bw(g),))


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
