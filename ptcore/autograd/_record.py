"""Recording ops on the tape.

Every differentiable public op (function, Tensor method, operator) is
wrapped once, at import, by :func:`differentiable`: when grad mode is on and
an argument requires grad, the op runs with recording off, then its formula
(``ptcore/autograd/_formulas.py``) saves what backward needs and the
outputs get a :class:`~ptcore.autograd.graph.Node`.  Ops on tensors that do
not require grad pay one flag test and an argument scan.

Views are recorded by the tensor core's view hook (:func:`_on_view`): a
view's node scatters its gradient into its base's geometry, so every view op
(slicing, transpose, expand, as_strided ...) is differentiable without a
formula of its own.  In-place ops on tensors in the graph are rewritten as
"out-of-place, then copy into self", and ``self`` (or its view base) gets
the new history.
"""
import re as _re
from builtins import sum as builtins_sum
import inspect

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._tensor import Size as _Size
from ptcore._tensor import _args_require_grad as _C_args_require_grad
from ptcore._dispatch import python_dispatch as _pd
from ptcore._dispatch.batching import frames as _vmap_frames
from ptcore._dispatch.forward_ad import detach as _fwl_detach
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch.batching import is_batched as _vmap_is_batched
from ptcore.autograd import grad_mode as _gm
from ptcore.autograd import graph as _graph
from ptcore.autograd.graph import _node_classes
from ptcore.autograd.graph import (Node, SavedTensor, SavedOutput, forward_stack, gradient_edge,
                                   node_class)

from ptcore._settings import _anomaly  # noqa: E402  (the flag lives in the core settings)
from ptcore._ops.kernels import _ewdrv
from ptcore._ops import pointwise as _pointwise
from ptcore._dispatch.dispatcher import kernel_layer
from ptcore._dispatch.declarations import DECLARED
from ptcore._dispatch.device import in_host_memory as _in_host_memory
import ptcore
from ptcore.autograd.graph import _sum_to
from ptcore.autograd import _record_fast
from ptcore.autograd._record_fast import input_edges as _input_edges, edge_meta as _edge_meta
# attach specialised for one output and three inputs (addmm and a Linear's forward)
from ptcore.autograd._record_fast import attach3  # noqa: F401

_state = _gm._state


# whether a tensor among a call's arguments (also inside lists and tuples) requires grad
_needs_grad = _C_args_require_grad


def _is_diff(t):
    return isinstance(t, _TensorBase) and (t.dtype.is_floating_point or t.dtype.is_complex)


def save(t):
    """Save a tensor (or pass a non-tensor through) for backward."""
    if isinstance(t, _TensorBase):
        return SavedTensor(t)
    return _Plain(t)


def save_out(t, output_nr=0):
    return SavedOutput(t, output_nr)


class _Plain:
    __slots__ = ("data",)

    def __init__(self, v):
        self.data = v

    def unpack(self, node=None):
        return self.data


def attach(name, outs, inputs, backward, multi=False, accepts_none=False):
    """Give the differentiable tensors in ``outs`` a node named ``name``
    whose backward maps output gradients to gradients of ``inputs``."""
    em = _input_edges(inputs)       # (compiled: ptcore/autograd/_record_fast.pyx)
    if em is None:
        return None
    cls = _node_classes.get(name)
    if cls is None:
        cls = node_class(name)
    node = cls(em[0], em[1], backward)
    if multi:
        om = []
        for k, o in enumerate(outs):
            if _is_diff(o):
                o._requires_grad = True
                o._grad_fn = node
                if k:
                    o._output_nr = k
                om.append((tuple(o.shape), o.dtype, o.device))
            else:
                om.append(None)
        node._out_meta = tuple(om)
    else:
        outs._requires_grad = True
        outs._grad_fn = node
    if accepts_none:
        node._accepts_none = True
    if _anomaly[0]:
        node._stack = forward_stack()
    return node


def _link(r, src, d_src, name, inputs):
    """``r`` recorded as node ``name`` over ``src`` (derivative ``d_src``)
    and the forward ``inputs`` (derivative zero); ``r`` itself when grad
    mode is off, under vmap, or when no input needs grad."""
    if not _state.enabled or _vmap_frames():
        return r
    ins = tuple(t for t in inputs if isinstance(t, _TensorBase) and t._requires_grad)
    if not ins or not _is_diff(r):
        return r
    out = _fwl_detach(r)           # (keeping its tangents: forward-over-reverse)

    def bw(g):
        return (d_src(g),) + tuple(t.new_zeros(t.shape) for t in ins)
    attach(name, out, (src,) + ins, bw)
    return out


def zero_link(grad, name, *inputs):
    """``grad`` (a gradient computed inside a backward) recorded as depending
    on the forward ``inputs`` with a zero derivative, as torch's backward
    kernels do (``threshold_backward(g, self, 0)``,
    ``max_pool2d_with_indices_backward(g, self, ...)``): under create_graph
    the next ``autograd.grad`` gives zeros for those inputs, not None.
    Returns ``grad`` itself when grad mode is off or no input needs grad, and
    under vmap (a batched ``grad``'s graph is its physical tensor's: detaching
    the wrapper would cut it; the transforms give zeros for unused inputs)."""
    return _link(grad, grad, lambda g: g, name, inputs)


def mask_link(g, again, name, *inputs):
    """``again(g)``, a backward kernel linear in the gradient ``g`` (a mask
    or scale read from the forward ``inputs``, as ``threshold_backward(g,
    self, 0)``), recorded as torch records such kernels: its derivative in
    ``g`` is ``again`` once more (recorded the same way, so a gradient of any
    order still depends on ``inputs``), in ``inputs`` zero."""
    if _state.enabled and not _vmap_frames() and _is_diff(g) and any(
            isinstance(t, _TensorBase) and t._requires_grad for t in inputs):
        # recorded below as one node: ``again``'s own ops are not recorded (the
        # where/mul of a composite mask would be nodes thrown away)
        _state.enabled = False
        try:
            r = again(g)
        finally:
            _state.enabled = True
    else:
        r = again(g)
    return _link(r, g, lambda gg: mask_link(gg, again, name, *inputs), name, inputs)


_UNREAD = object()     # attach2's marker: the operand records are not read yet


def attach2(cls, out, a, b, backward, ra=_UNREAD, rb=_UNREAD, sv=None):
    """:func:`attach` specialised for one output and two inputs (the binary
    elementwise ops), with the node class given directly.  ``ra``/``rb``: the
    operands' ``_ad_input()`` records (None for one that needs no gradient)
    when the caller has read them already; ``sv``: the node's saved values
    (``grad_fn._saved_*``)."""
    if ra is _UNREAD:
        ra = a._ad_input() if isinstance(a, _TensorBase) and a._requires_grad else None
        rb = b._ad_input() if isinstance(b, _TensorBase) and b._requires_grad else None
    if ra is not None:
        fn = ra[0]
        if fn is None:
            ea = gradient_edge(a)
        else:
            if fn._is_view and fn._bver != ra[3]:
                fn = refresh_view(a)
            ea = (fn, a._output_nr)
        ma = (ra[1], ra[2])
    else:
        ea = ma = None
    if rb is not None:
        fn = rb[0]
        if fn is None:
            eb = gradient_edge(b)
        else:
            if fn._is_view and fn._bver != rb[3]:
                fn = refresh_view(b)
            eb = (fn, b._output_nr)
        mb = (rb[1], rb[2])
    else:
        if ea is None:
            return None
        eb = mb = None
    node = cls((ea, eb), (ma, mb), backward, None, sv)
    out._requires_grad = True
    out._grad_fn = node
    if _anomaly[0]:
        node._stack = forward_stack()
    return node


_OUT_MSG = ("{}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")


_POSITIONAL = {}      # raw front-end -> names of its leading positional parameters


def _leading_positional(raw, args, kwargs):
    """``args``/``kwargs`` of a call of ``raw`` with the arguments of its
    positional parameters given by keyword (``topk(x, k=3)``,
    ``add(x, other=y)``, ``sum(input=x)``) moved into ``args``, in order, up to
    the first one not given: a formula names its parameters positionally
    (``x``, ``k_``) where the op's signature says ``input``, ``k``."""
    names = _POSITIONAL.get(raw)
    if names is None:
        try:
            params = inspect.signature(raw).parameters.values()
        except (TypeError, ValueError):
            params = ()
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        names = _POSITIONAL[raw] = tuple(names)
    i = len(args)
    if i >= len(names) or names[i] not in kwargs:
        return args, kwargs
    args = list(args)
    kwargs = dict(kwargs)
    while i < len(names) and names[i] in kwargs:
        args.append(kwargs.pop(names[i]))
        i += 1
    return tuple(args), kwargs


_MOVED = {}     # (raw front-end, formula) -> the keywords _leading_positional must move


def _moved_keywords(raw, formula):
    """The names of ``raw``'s leading positional parameters that a call must
    pass to ``formula`` by position (:func:`_leading_positional`): those whose
    parameter of the formula at the same place (after ``out``) has another
    name.  A keyword naming the formula's own parameter there binds the same
    parameter either way (``cat(ts, dim=-1)``, ``mean(x, -1, keepdim=True)``):
    the call passes it on as it came."""
    key = (raw, formula)
    r = _MOVED.get(key)
    if r is None:
        _leading_positional(raw, (), {})            # (fills _POSITIONAL[raw])
        names = _POSITIONAL[raw]
        code = getattr(formula, "__code__", None)
        if code is None or getattr(formula, "__defaults__", _UNREAD) is _UNREAD:
            r = frozenset(names)
        else:
            fp = code.co_varnames[:code.co_argcount]
            lo = code.co_posonlyargcount
            r = frozenset(n for i, n in enumerate(names)
                          if not (lo <= i + 1 < len(fp) and fp[i + 1] == n))
        _MOVED[key] = r
    return r


def differentiable(name, raw, formula, fast_op=None):
    """Wrap ``raw`` so that calls with inputs requiring grad are recorded
    with ``formula(out, *args, **kwargs)`` (which attaches the node).

    ``fast_op``: the elementwise kernel index of a binary op, whose Cython
    fast path then also serves recorded calls."""
    def recorded(args, kwargs):
        """``raw`` run without recording (``out=`` refused: not
        differentiable), then the formula attaches the node."""
        if "out" in kwargs:
            if kwargs["out"] is not None:
                raise RuntimeError(_OUT_MSG.format(name))
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        _state.enabled = False
        try:
            out = raw(*args, **kwargs)
        finally:
            _state.enabled = True
        if out is NotImplemented:
            return out
        for a in args:
            if out is a:
                # (an op that returned an input itself, as x.conj() of a real x,
                # leaves that input's history as it is)
                return out
        if kwargs and not _moved_keywords(raw, formula).isdisjoint(kwargs):
            args, kwargs = _leading_positional(raw, args, kwargs)
        formula(out, *args, **kwargs)
        return out

    if fast_op is not None:
        fast = _ewdrv.fast_binary

        def op(*args, **kwargs):
            if kernel_layer[0] is not None and kernel_layer[0].enabled:
                # a TorchDispatchMode is on: the kernel call goes down to it (the Cython
                # fast path would compute without it)
                return recorded(args, kwargs) if _state.enabled and _needs_grad(args, kwargs) \
                    else raw(*args, **kwargs)
            if _state.enabled and _needs_grad(args, kwargs):
                out = fast(fast_op, args[0], args[1], True) if len(args) == 2 and not kwargs \
                    else None
                if out is None:
                    return recorded(args, kwargs)
                formula(out, *args, **kwargs)
                return out
            if len(args) == 2 and not kwargs:
                # the operators' Cython path (same dtype, contiguous, plain
                # scalar): ptcore.add(x, 2.0) costs what x + 2.0 costs
                out = fast(fast_op, args[0], args[1], True)
                if out is not None:
                    return out
            return raw(*args, **kwargs)
    else:
        def op(*args, **kwargs):
            if _state.enabled and _needs_grad(args, kwargs):
                return recorded(args, kwargs)
            return raw(*args, **kwargs)
    op.__name__ = getattr(raw, "__name__", name)
    op.__qualname__ = getattr(raw, "__qualname__", name)
    op.__doc__ = getattr(raw, "__doc__", None)
    op.__wrapped__ = raw
    return op


def device_fast_binary(fast_op, formula):
    """A fast form for binary op ``fast_op`` (an elementwise
    kernel index): ``op(a, b)`` by the core fast path of the operands'
    device (the C dense paths a device runtime registers), recorded with
    ``formula`` when an input requires grad; None to take the layers."""
    fast = _ewdrv.fast_binary
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        a, b = args
        out = fast(fast_op, a, b, True)
        if out is not None and st.enabled and (a._requires_grad or (
                isinstance(b, _TensorBase) and b._requires_grad)):
            formula(out, a, b)
        return out
    return device_fast


def device_fast_of(fn, formula):
    """A fast form for a one-tensor call ``op(x)``: ``fn(x)``
    (a device's fast path: the result, or None to take the layers),
    recorded with ``formula`` when x requires grad (None: an op whose
    result is never differentiable)."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 1:
            return None
        x = args[0]
        out = fn(x)
        if out is not None and formula is not None and st.enabled and x._requires_grad:
            formula(out, x)
        return out
    return device_fast


def optional_args(args, kwargs, names, defaults):
    """``(x, a, b)`` from a call ``op(x[, a[, b]])`` whose two optional
    parameters ``names`` may also come by keyword (``defaults`` when left
    out), or None for any other call (the layers then take it)."""
    n = len(args)
    if n < 1 or n > 3:
        return None
    a = args[1] if n > 1 else defaults[0]
    b = args[2] if n > 2 else defaults[1]
    for k in kwargs:
        if k == names[0] and n < 2:
            a = kwargs[k]
        elif k == names[1] and n < 3:
            b = kwargs[k]
        else:
            return None
    return args[0], a, b


def device_fast_reduce(fn, formula):
    """A fast form for a reduction ``op(x, dim=None,
    keepdim=False)`` (no ``dtype``/``out``): ``fn(x, dim, keepdim)`` (the
    result, or None to take the layers), recorded with ``formula`` when x
    requires grad."""
    st = _state

    def device_fast(args, kwargs):
        call = optional_args(args, kwargs, ("dim", "keepdim"), (None, False))
        if call is None:
            return None
        x, dim, keepdim = call
        if keepdim is not True and keepdim is not False:
            return None
        out = fn(x, dim, keepdim)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, dim=dim, keepdim=keepdim)
        return out
    return device_fast


def device_fast_softmax(fn, formula, functional=False):
    """A fast form for ``softmax``/``log_softmax(x, dim, dtype=None)`` with no
    ``dtype`` (``functional``: ``F.softmax(x, dim, _stacklevel, dtype)``'s
    calls with ``_stacklevel`` by keyword or not at all): ``fn(x, dim)``
    (the result, or None to take the layers), recorded with ``formula``
    when x requires grad."""
    st = _state

    def device_fast(args, kwargs):
        if functional and "_stacklevel" in kwargs:
            kwargs = {k: v for k, v in kwargs.items() if k != "_stacklevel"}
        call = optional_args(args, kwargs, ("dim", "dtype"), (None, None))
        if call is None or call[2] is not None:
            return None
        x, dim, _ = call
        out = fn(x, dim)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, dim)
        return out
    return device_fast


def device_fast_mm(fn, formula):
    """A fast form for ``mm(a, b)``: ``fn(a, b)`` (the
    result, or None to take the layers), recorded with ``formula`` when an
    input requires grad."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        a, b = args
        out = fn(a, b)
        if out is not None and st.enabled and (a._requires_grad or b._requires_grad):
            formula(out, a, b)
        return out
    return device_fast


def device_fast_addmm(fn, formula):
    """A fast form for ``addmm(input, mat1, mat2, *, beta=1,
    alpha=1)`` (no ``out=``): ``fn(input, mat1, mat2, beta, alpha)``,
    recorded with ``formula`` when an input requires grad."""
    st = _state

    def device_fast(args, kwargs):
        if len(args) != 3:
            return None
        beta = alpha = 1
        if kwargs:
            for k in kwargs:
                if k == "beta":
                    beta = kwargs[k]
                elif k == "alpha":
                    alpha = kwargs[k]
                else:
                    return None
        i, a, b = args
        out = fn(i, a, b, beta, alpha)
        if out is not None and st.enabled and (i._requires_grad or a._requires_grad
                                               or b._requires_grad):
            formula(out, i, a, b, beta=beta, alpha=alpha)
        return out
    return device_fast


def device_fast_linear(fn, mm_formula, addmm_formula):
    """``F.linear(input, weight, bias=None)``'s fast form for a 2-D
    input: ``fn(input, weight, bias)``, recorded as its general path
    records it -- ``weight.t()`` (a view, TBackward0) then MmBackward0 or
    AddmmBackward0."""
    st = _state

    def device_fast(args, kwargs):
        n = len(args)
        if n < 2 or n > 3:
            return None
        x, w = args[0], args[1]
        bias = args[2] if n == 3 else None
        if kwargs:
            if len(kwargs) != 1 or n != 2 or "bias" not in kwargs:
                return None
            bias = kwargs["bias"]
        out = fn(x, w, bias)
        if out is not None and st.enabled and (x._requires_grad or w._requires_grad or (
                bias is not None and bias._requires_grad)):
            if bias is None:
                mm_formula(out, x, w.t())
            else:
                addmm_formula(out, bias, x, w.t())
        return out
    return device_fast


def device_fast_unary(fast_op, formula):
    """A fast form for unary op ``fast_op`` (an elementwise
    kernel index): ``op(x)`` by the core fast path of x's device."""
    from functools import partial
    return device_fast_of(partial(_ewdrv.device_fast_unary, fast_op), formula)


def device_fast_compare(fast_op):
    """A fast form for comparison ``fast_op``: ``op(a, b)`` by
    the core fast path of the operands' device (a bool result, not
    differentiable, so nothing records); None to take the layers."""
    fast = _ewdrv.fast_binary

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        return fast(fast_op, args[0], args[1], True)
    return device_fast


def device_fast_inplace(fast_op):
    """A fast form for in-place binary op ``fast_op``
    (``a.add_(b, alpha=...)``): the device's C dense path when nothing
    records and ``a`` may be written (else None: the in-place wrapper's
    checks, recording and errors)."""
    fast = _ewdrv.device_fast_inplace
    st = _state
    gm_ever = _gm._ever

    def device_fast(args, kwargs):
        if len(args) != 2:
            return None
        alpha = None
        if kwargs:
            if len(kwargs) != 1 or "alpha" not in kwargs:
                return None
            alpha = kwargs["alpha"]
        a, b = args
        if not isinstance(a, _TensorBase) or gm_ever[0] and not st.inference and a.is_inference():
            return None
        if st.enabled and (a._requires_grad or isinstance(b, _TensorBase) and b._requires_grad
                           or _nograd_views[0] and _is_nograd_view(a)):
            return None
        return fast(fast_op, a, b, alpha)
    return device_fast


def backward_name(name):
    """torchgen's node name of op ``name``: ``log1p`` -> ``Log1PBackward0``
    (str.title(): a letter after a digit is upper case)."""
    return "".join(p.title() for p in name.strip("_").split("_")) + "Backward0"


_FALLBACK_NODE = node_class("NotImplemented")
_FALLBACK_NODE.name = lambda self: "torch::autograd::NotImplemented"


def _unique_aten(args, kwargs):
    """torch.unique's ATen op: unique_dim with a dim, else _unique2."""
    dim = kwargs.get("dim", args[4] if len(args) > 4 else None)
    return "_unique2" if dim is None else "unique_dim"


def not_implemented(name, fallback=None):
    """Formula for ops whose derivative is not implemented: the outputs
    join the graph, and backward through them raises (as PyTorch).
    ``fallback``: torch has no formula at all (its autograd fallback's
    NotImplemented node, RuntimeError); default: the op ``name`` declares
    ``grad_fallback`` (else derivatives.yaml's not_implemented(): a node named after
    the op, NotImplementedError)."""
    if fallback is None:
        d = DECLARED.get(("ptcore", name))
        fallback = d is not None and d.grad_fallback
    def formula(out, *args, **kwargs):
        outs = out if isinstance(out, (tuple, list)) else (out,)
        ins = [a for a in args if isinstance(a, _TensorBase)]
        for a in args:
            if isinstance(a, (list, tuple)) and not isinstance(a, _Size):
                ins.extend(b for b in a if isinstance(b, _TensorBase))
        ins.extend(v for v in kwargs.values() if isinstance(v, _TensorBase))
        if fallback:
            node = "NotImplemented"

            def bw(*grads):
                raise RuntimeError(f"the derivative for '{name}' is not implemented "
                                   f"(aten::{name} has no derivative formula)")
        else:
            aten = _unique_aten(args, kwargs) if name == "unique" else name
            node = backward_name(aten)

            def bw(*grads):
                raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
        if any(_is_diff(o) for o in outs):
            attach(node, list(outs) if isinstance(out, (tuple, list)) else out,
                   ins, bw, multi=isinstance(out, (tuple, list)))
    return formula


# ---------------------------------------------------------------------------
# views
# ---------------------------------------------------------------------------

def _geometry(v, base):
    return (tuple(v.shape), tuple(v.stride()), v.storage_offset() - base.storage_offset())


def _scatter_to_base(g, base_shape, base_stride, vshape, vstride, voff, full):
    """Gradient of ``base`` from the gradient ``g`` of its view."""
    if 0 in vshape or 0 in base_shape:
        # an empty view (or base): nothing to place; the zero-sized dims may have
        # any stride (NumPy gives 0), which the placement below would misread
        return _C.zeros(base_shape, dtype=g.dtype, device=g.device)
    if voff < 0 or voff + _extent(vshape, vstride) > _extent(base_shape, base_stride):
        # an as_strided view reaching outside its input's elements (its
        # storage offset below the input's, as ``x[2:].as_strided((3,), (1,),
        # 0)``): torch's as_strided_backward scatters g into a buffer over
        # both extents and reads the input's geometry back, so elements of
        # the storage outside the input get no gradient
        return _scatter_overlapping(g, base_shape, base_stride, vshape, vstride, voff)
    # expanded (stride-0) dims: sum them first
    red = [d for d in range(len(vshape)) if vstride[d] == 0 and vshape[d] != 1]
    if red:
        g = g.sum(red, keepdim=True)
        vshape = tuple(1 if d in red else n for d, n in enumerate(vshape))
    if voff == 0 and vshape == base_shape and all(
            n == 1 or a == b for n, a, b in zip(vshape, vstride, base_stride)):
        # the view is the base itself up to its expanded (now summed) dims, as
        # expand/expand_as of a tensor: g is the base's gradient, no placement
        return g
    if _overlaps(vshape, vstride) or hasattr(g, "_bt_phys"):
        # (a gradient batched by vmap cannot be copied into an unbatched
        # buffer in place: the out-of-place index_add path batches)
        return _scatter_overlapping(g, base_shape, base_stride, vshape, vstride, voff)
    if full and not red and tuple(g.stride()) == vstride and g.storage_offset() >= voff:
        # g already has the view's layout (e.g. a weight gradient computed in
        # the transposed weight's strides): reinterpret it, no copy
        return g.as_strided(base_shape, base_stride, g.storage_offset() - voff)
    if base_stride == _contiguous_strides(base_shape):
        gb = _C.empty_strided(base_shape, base_stride, dtype=g.dtype, device=g.device)
        if not full:
            gb.zero_()
    else:
        # a base laid out with gaps (a slice taken as a base): a view of one
        # contiguous buffer, not a root with gaps, so that forward AD can
        # give the views written below tangents batched per sample (jacfwd
        # over jacrev: the Hessian through a slice of a slice)
        span = _extent(base_shape, base_stride)
        buf = (_C.empty if full else _C.zeros)((span,), dtype=g.dtype, device=g.device)
        buf.as_strided(base_shape, base_stride, 0).as_strided(vshape, vstride, voff).copy_(g)
        return buf.as_strided(base_shape, base_stride, 0)      # (the written buffer's view)
    gb.as_strided(vshape, vstride, voff).copy_(g)
    return gb


def _contiguous_strides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


_OVERLAPS = {}


def _overlaps(shape, stride):
    """Whether two indices of a (shape, stride) view (tuples) reach the same
    element.  Memoised: every view op of a recorded graph asks it several
    times, of the few geometries a model has."""
    key = (shape, stride)
    r = _OVERLAPS.get(key)
    if r is None:
        if len(_OVERLAPS) >= 4096:
            _OVERLAPS.clear()
        r = _OVERLAPS[key] = _overlaps_of(shape, stride)
    return r


def _overlaps_of(shape, stride):
    dims = sorted((abs(s), n) for s, n in zip(stride, shape) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent = s * (n - 1) + extent if s else extent
        extent = max(extent, s * (n - 1) + 1)
    return False


def _extent(shape, stride):
    """One past the last storage position (relative to the offset) that a
    non-empty (shape, stride) geometry with non-negative strides reaches."""
    return 1 + builtins_sum((k - 1) * s for s, k in zip(stride, shape))


def _scatter_overlapping(g, base_shape, base_stride, vshape, vstride, voff):
    """The base's gradient by index_add over a flat buffer spanning both the
    base's and the view's storage (the view may reach outside the base)."""
    lo = min(0, voff)
    span = max(_extent(base_shape, base_stride), voff + _extent(vshape, vstride)) - lo
    idx = ptcore.arange(span, device=g.device).as_strided(vshape, vstride, voff - lo).reshape(-1)
    flat = _C.zeros(span, dtype=g.dtype, device=g.device)
    flat = flat.index_add(0, idx, g.reshape(-1))
    return flat.as_strided(base_shape, base_stride, -lo)


_UNPERMUTE = {}


def _unpermute(bshape, bstride, vshape, vstride):
    """The inverse (a tuple) of the permutation :func:`_match_dims` finds, or
    None.  Memoised, as :func:`_overlaps`: a model transposes the same few
    geometries."""
    key = (bshape, bstride, vshape, vstride)
    r = _UNPERMUTE.get(key, _UNREAD)
    if r is _UNREAD:
        if len(_UNPERMUTE) >= 4096:
            _UNPERMUTE.clear()
        perm = _match_dims(bshape, bstride, vshape, vstride)
        if perm is not None:
            inv = [0] * len(perm)
            for i, p_ in enumerate(perm):
                inv[p_] = i
            r = tuple(inv)
        else:
            r = None
        _UNPERMUTE[key] = r
    return r


def _match_dims(bshape, bstride, vshape, vstride):
    """The permutation ``perm`` with ``v = base.permute(perm)`` when every
    dim's (size, stride) pair is unique, else None."""
    pairs = list(zip(bshape, bstride))
    if len(set(pairs)) != len(pairs) or len(vshape) != len(bshape):
        return None
    index = {p: i for i, p in enumerate(pairs)}
    perm = [index.get(p) for p in zip(vshape, vstride)]
    return perm if None not in perm else None


def _covers(vshape, vstride, voff, base):
    n = 1
    for k, s in zip(vshape, vstride):
        if s == 0:
            continue
        n *= k
    return n == base.numel() and voff == 0 and not _overlaps(vshape, vstride)


# PyTorch's node names per view-op code of the core (ptcore/_tensor.pxd VK_*)
_VIEW_NAMES = (None, "ViewBackward0", "TransposeBackward0", "TBackward0", "PermuteBackward0",
               "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
               "ExpandBackward0", "SliceBackward0", "SelectBackward0", "DiagonalBackward0",
               "UnfoldBackward0", "AsStridedBackward0", "SplitBackward0",
               "SplitWithSizesBackward0", "UnbindBackward0", "AliasBackward0")
# the core's code of reshape's copy (ptcore/_tensor.pyx VK_UNSAFE_VIEW): no view, its
# node UnsafeViewBackward0 (torch's _unsafe_view of the clone)
_UNSAFE_VIEW = 19


def _t_backward(g):
    return (g.t(),)


def _same_grad1(g):
    return (g,)


_FW_LAYER = _fwl.layer()
_NO_CEILING = _fwl.ceiling()        # (the ceiling when no level is hidden)


def _hidden_view_tangents(src, v):
    """A view of a dual tensor made while its level is hidden (inside an op
    that forward AD drives by its own rule, as ``linear``'s ``weight.t()``)
    takes the view of its tangent all the same: the backward graph recorded
    in there saves the view, and differentiating that graph under the level
    (forward-over-reverse) needs its tangent.  The ops run in the hidden
    computation do not see it (the level stays hidden from them)."""
    ceil = _fwl.ceiling()
    for lv in _fwl.levels():
        k = lv.idx
        if k < ceil or _fwl.has_own_tangent(v, k):
            continue
        tg = _fwl.get_tangent(src, k)
        if tg is None or tuple(tg.shape) != tuple(src.shape) or \
                tuple(tg.stride()) != tuple(src.stride()) or \
                _vmap_is_batched(tg) or _vmap_is_batched(src):
            continue
        _fwl.set_tangent(v, k, tg.as_strided(
            tuple(v.shape), tuple(v.stride()),
            tg.storage_offset() + v.storage_offset() - src.storage_offset()))


def _t_of_chained(src, base):
    """Whether :func:`_on_view`'s general path takes ``src`` itself as the
    base of a 2-d ``src.t()`` (``src``: a view with a history of its own, or
    the root; elements not overlapping; no split or custom-view marks), where
    the permutation's node is ``t()``'s."""
    if src is not base and src._grad_fn is None:
        return False
    d = src.__dict__
    if "_multi_view" in d or "_custom_view_of" in d:
        return False
    return not _overlaps(tuple(src.shape), tuple(src.stride()))


def _on_view(src, v, kind=0, name=None):
    """Core hook: ``v`` is a new view of ``src`` (which requires grad) made
    by the view op ``kind`` (a code of ``_VIEW_NAMES``; 0: name it from the
    geometry), or named ``name``."""
    if _FW_LAYER.enabled and _fwl.ceiling() < _NO_CEILING:
        _hidden_view_tangents(src, v)
    if kind == _UNSAFE_VIEW:
        # reshape's copy, torch's _unsafe_view of the clone ``src``: no view, one node
        if _state.enabled:
            bshape = tuple(src.shape)
            attach("UnsafeViewBackward0", v, (src,), lambda g: (g.reshape(bshape),))
        return
    if not _state.enabled:
        _mark_nograd_view(v)
        return
    if v._output_nr:
        v._output_nr = 0       # a piece of a split re-viewed alone (refresh_view, rebase)
    base = v._base
    if kind == 3 and src._requires_grad and (v.dtype.is_floating_point or v.dtype.is_complex) \
            and ((base is src and src.is_contiguous()) or _t_of_chained(src, base)):
        # t() of a tensor that owns its layout (a Linear's weight), or of a
        # view with a history of its own (the weight's t() transposed back in
        # mm's backward): the gradient is g.t(), no geometry to work out (the
        # general path below reaches the same node)
        base = src
        r = base._ad_input()            # base requires grad: one input, inlined attach
        fn = r[0]
        if fn is None:
            e = gradient_edge(base)
        else:
            if fn._is_view and fn._bver != r[3]:
                fn = refresh_view(base)
            e = (fn, base._output_nr)
        node = _T_NODE((e,), ((r[1], r[2]),), _t_backward)
        node._bver = r[3]
        v._requires_grad = True
        v._grad_fn = node
        if _anomaly[0]:
            node._stack = forward_stack()
        return          # (a root: never a piece of split/unbind, below)
    if (kind == 1 or kind == 2 or kind == 4 or (5 <= kind <= 8 and name is None)) and (
            base is src or src._grad_fn is not None) and src.is_contiguous():
        # view/reshape, transpose, permute, squeeze or unsqueeze of a contiguous
        # tensor that is a root or has a history of its own (a model's head split
        # and merge, a rotary table's unsqueeze): the general path below takes
        # ``src`` as the base and reaches the same nodes, after tests that cannot
        # fail here (a contiguous tensor has no overlapping elements; its squeeze
        # or unsqueeze covers it in the same order, a plain reshape)
        d = src.__dict__
        dt = src.dtype
        if "_multi_view" not in d and "_custom_view_of" not in d and (
                dt.is_floating_point or dt.is_complex):
            bshape = tuple(src.shape)
            if kind == 1 or (kind >= 5 and v.is_contiguous() and v.numel() == src.numel()
                             and v.storage_offset() == src.storage_offset()):
                # (a squeeze/unsqueeze code also names an indexing view that
                # selects too, as x[0, None]: only the same elements in the same
                # order are a plain reshape)
                node = attach(_VIEW_NAMES[kind], v, (src,), lambda g: (g.reshape(bshape),))
                if node is not None:
                    node._bver = v._version
                    v.__dict__["_ag_view_of"] = src
                return
            if kind < 5:
                inv = _unpermute(bshape, tuple(src.stride()), tuple(v.shape), tuple(v.stride()))
                if inv is not None and v.storage_offset() == src.storage_offset():
                    node = attach(_VIEW_NAMES[kind], v, (src,), lambda g: (g.permute(inv),))
                    if node is not None:
                        node._bver = v._version
                    return
    if kind >= 15 and kind <= 17:
        # one output of split/chunk/unbind (torch's CreationMeta::MULTIPLE_OUTPUTS)
        v.__dict__["_multi_view"] = _unbind_index(src, v) if kind == 17 else 0
    elif "_multi_view" in src.__dict__ and "_multi_view" not in v.__dict__:
        v.__dict__["_multi_view"] = 0       # a view of one inherits it (torch: "Output 0 of Select")
    if "_custom_view_of" in src.__dict__:
        # a view of a custom Function's view output: its base is the input's
        # root, so the in-place check must see the flag on the view itself
        # (torch names the view's own op: "Output 0 of Slice")
        v.__dict__["_custom_view_of"] = (0, None)
    if base is None or (src is not base and src._grad_fn is not None
                        and not (base._requires_grad and _overlaps(tuple(src.shape), tuple(src.stride()))
                                 and not _overlaps(tuple(base.shape), tuple(base.stride())))):
        base = src       # chain through an intermediate view: grad() w.r.t. it sees this use
    # (an intermediate view with overlapping elements, e.g. expanded, cannot
    # locate ``v`` among its elements from strides alone: chain to the root)
    if v.dtype is not base.dtype or not (v.dtype.is_floating_point or v.dtype.is_complex):
        return
    if not base._requires_grad:
        # ``src`` may be an op's result that aliases an internal buffer (a
        # LAPACK/NumPy output): ``src`` itself is then the differentiable base
        if base is src or not src._requires_grad:
            return
        base = src
    # a base with overlapping elements (an expanded view) cannot locate ``v``
    # among its elements: use the tensor that base was itself taken from
    while not base.is_contiguous() and _overlaps(tuple(base.shape), tuple(base.stride())):
        up = base.__dict__.get("_ag_view_of")
        if up is None:
            break
        base = up
    bshape, bstride = tuple(base.shape), tuple(base.stride())
    if kind == 1 and base is src:
        # view/reshape/flatten of its direct input: the same elements in the
        # same order, so the gradient is g reshaped (a copy only where g's
        # layout needs one), never a scatter through the geometry
        node = attach(_VIEW_NAMES[kind], v, (base,), lambda g: (g.reshape(bshape),))
        if node is not None:
            node._bver = v._version
            v.__dict__["_ag_view_of"] = base
        return
    if kind in (2, 3, 4) and base is src:
        # a transpose/permute of its direct input: the gradient is g with the
        # inverse permutation (a view, as PyTorch's), found from the dims when
        # each (size, stride) pair identifies one dim -- which also serves a
        # tensor whose elements overlap (an expanded leaf), where storage
        # positions cannot say which element is which
        inv = _unpermute(bshape, bstride, tuple(v.shape), tuple(v.stride()))
        if inv is not None and v.storage_offset() == base.storage_offset():
            node = attach(_VIEW_NAMES[kind], v, (base,), lambda g: (g.permute(inv),))
            if node is not None:
                node._bver = v._version
            return
    if kind == 9 and base is src and v.dim() == len(bshape) and \
            v.storage_offset() == base.storage_offset():
        # expand/expand_as of its direct input with no new leading dims: the
        # gradient is g summed over the expanded dims (what _scatter_to_base
        # gives for this geometry), the dims found once here
        vshape, vstride = tuple(v.shape), tuple(v.stride())
        red = [d for d in range(len(vshape)) if vstride[d] == 0 and vshape[d] != 1]
        if 0 not in vshape and all((bshape[d] == 1 and d in red) or
                                   (vshape[d] == bshape[d] and (vshape[d] == 1 or
                                                                vstride[d] == bstride[d]))
                                   for d in range(len(vshape))):
            node = attach(_VIEW_NAMES[kind], v, (base,),
                          (lambda g: (g.sum(red, keepdim=True),)) if red else _same_grad1)
            if node is not None:
                node._bver = v._version
                v.__dict__["_ag_view_of"] = base
            return
    vshape, vstride, voff = _geometry(v, base)
    full = _covers(vshape, vstride, voff, base)
    if full and _is_plain_reshape(base, vshape, vstride, voff):
        def bw(g):
            return (g.reshape(bshape),)
    else:
        def bw(g):
            return (_scatter_to_base(g, bshape, bstride, vshape, vstride, voff, full),)
    if name is None:
        name = _VIEW_NAMES[kind] if 0 < kind < len(_VIEW_NAMES) else None
        if name is None:
            name = "ViewBackward0" if full else "AsStridedBackward0"
    node = attach(name, v, (base,), bw)
    if node is not None:
        node._bver = v._version
        v.__dict__["_ag_view_of"] = base


# a view of a tensor that requires grad, made while grad mode was off (torch's
# CreationMeta::NO_GRAD_MODE): an in-place write into it with grad mode on is
# refused.  The flag says whether any such view was made (the in-place
# wrappers look for the mark only then).
_nograd_views = [False]

_NOGRAD_VIEW_MSG = ("A view was created in no_grad mode and is being modified inplace with grad mode "
                    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
                    "You can clarify your code by moving both the view and the inplace either both "
                    "inside the no_grad block (if you don't want the inplace to be tracked) or both "
                    "outside (if you want the inplace to be tracked).")


def _mark_nograd_view(v):
    d = getattr(v, "__dict__", None)
    if d is not None and (v.dtype.is_floating_point or v.dtype.is_complex):
        d["_nograd_view"] = True
        _nograd_views[0] = True


def _is_nograd_view(t):
    d = getattr(t, "__dict__", None)
    return d is not None and "_nograd_view" in d and t._base is not None \
        and t._base._requires_grad


def _unbind_index(src, v):
    """Which slice of ``src`` the unbind output ``v`` is (the dim whose removal
    leaves v's sizes and strides; its index from the storage offsets)."""
    sh, st = tuple(src.shape), tuple(src.stride())
    vsh, vst = tuple(v.shape), tuple(v.stride())
    off = v.storage_offset() - src.storage_offset()
    for d in range(len(sh)):
        if sh[:d] + sh[d + 1:] == vsh and st[:d] + st[d + 1:] == vst:
            if st[d] == 0:
                return 0
            i, r = divmod(off, st[d])
            if r == 0 and 0 <= i < sh[d]:
                return i
    return 0


_MULTI_VIEW_MSG = ("Output {} of {} is a view and is being modified inplace. This view is the output "
                   "of a function that returns multiple views. Such functions do not allow the output "
                   "views to be modified inplace. You should replace the inplace operation by an "
                   "out-of-place one.")


def _on_split(src, outs, dim, kind):
    """Core hook: ``outs`` are the pieces of ``src`` (which requires grad)
    along ``dim`` from split/chunk (``kind``: VK_SPLIT or VK_SPLIT_SIZES) or
    its slices from unbind (VK_UNBIND).  Records them as the outputs of one
    node, as PyTorch's SplitBackward0/UnbindBackward0, whose backward
    concatenates (stacks) the pieces' gradients (zeros for a piece without
    one): one pass instead of a zero-filled copy of ``src`` per piece and the
    sum of those.  Returns False to leave the pieces to
    :func:`_on_view` (one view node each)."""
    if not _state.enabled:
        for o in outs:
            _mark_nograd_view(o)
        return True
    if not (src.dtype.is_floating_point or src.dtype.is_complex):
        return False
    shape = tuple(src.shape)
    if _overlaps(shape, tuple(src.stride())):
        return False
    unbind = kind == _VIEW_NAMES.index("UnbindBackward0")
    sizes = [1 if unbind else o.shape[dim] for o in outs]
    dtype, device = src.dtype, src.device

    def bw(*grads):
        parts = []
        for g, n in zip(grads, sizes):
            if g is None:
                sh = list(shape)
                if unbind:
                    del sh[dim]
                else:
                    sh[dim] = n
                g = _C.zeros(sh, dtype=dtype, device=device)
            parts.append(g)
        return (ptcore.stack(parts, dim) if unbind else ptcore.cat(parts, dim),)

    node = attach(_VIEW_NAMES[kind], list(outs), (src,), bw, multi=True, accepts_none=True)
    if node is not None:
        # a piece used after src (or any piece) was written in place gets a
        # view node of its own from the base's new history (refresh_view)
        node._bver = src._version
        for i, o in enumerate(outs):
            o.__dict__["_ag_view_of"] = src
            o.__dict__["_multi_view"] = i     # torch's CreationMeta::MULTIPLE_OUTPUTS
    return True


class _ViewNode(Node):
    """Node of a view; remembers the storage version at the view's creation
    so that a view whose base was later modified in place gets its history
    regenerated (as PyTorch does)."""
    __slots__ = ("_bver",)
    _is_view = True


for _n in _VIEW_NAMES[1:]:
    _node_classes[_n] = type(_n, (_ViewNode,), {"__slots__": ()})
del _n
_T_NODE = _node_classes[_VIEW_NAMES[3]]      # t()'s node class (_on_view's fast path)


_MULTI_VIEW_REBASED_MSG = (
    "Output {} of {} is a view and its base or another view of its base has been modified "
    "inplace. This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one.")


def refresh_view(t):
    """``t``'s view node is stale (its base changed in place after the view
    was taken): rebuild it from the base's current history.  An output of
    split/chunk/unbind (or a view of one) cannot be rebuilt: torch raises
    when its history is read (CreationMeta::MULTIPLE_OUTPUTS)."""
    d = t.__dict__
    if "_multi_view" in d and t._requires_grad:
        fn = t._grad_fn
        name = _re.sub(r"Backward\d*$", "", fn.name()) if fn is not None else "a view op"
        raise RuntimeError(_MULTI_VIEW_REBASED_MSG.format(d["_multi_view"], name))
    base = t._base
    if base is None:
        # no view (a reshape that copied, its node view-named): nothing to rebuild from
        return t._grad_fn
    prev = _state.enabled
    _state.enabled = True
    old, old_nr = t._grad_fn, t._output_nr
    try:
        t._grad_fn = None
        # torch regenerates the view from its geometry: AsStridedBackward0
        _on_view(base, t, name="AsStridedBackward0" if isinstance(old, _ViewNode) else None)
    finally:
        _state.enabled = prev
    _move_retain(t, old, old_nr)
    return t._grad_fn


def _is_plain_reshape(base, vshape, vstride, voff):
    if not base.is_contiguous() or voff:
        return False
    z = 1
    for n, s in zip(reversed(vshape), reversed(vstride)):
        if n != 1 and s != z:
            return False
        z *= n
    return True


def _on_grad_wrap(src, out, name):
    """Core hook for ``clone``/``contiguous`` results."""
    if _state.enabled:
        attach("CloneBackward0", out, (src,), lambda g: (g,))
    return out


def _on_to(src, out):
    if _state.enabled and _is_diff(out):
        dev = src.device
        # the gradient goes back to the source's device (a copy across devices)
        attach("ToCopyBackward0", out, (src,),
               lambda g: (g if g.device == dev else g.to(dev),))
    return out


# ---------------------------------------------------------------------------
# in-place ops
# ---------------------------------------------------------------------------

_INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed."
                      "You can make a clone to get a normal tensor before doing inplace update."
                      "See https://github.com/pytorch/rfcs/pull/17 for more details.")


def _check_inference_write(t):
    """PyTorch's refusal to write into an inference tensor outside inference mode."""
    if _gm._ever[0] and not _state.inference and t.is_inference():
        raise RuntimeError(_INFERENCE_INPLACE)


def check_inplace(t):
    if _nograd_views[0] and _is_nograd_view(t):
        raise RuntimeError(_NOGRAD_VIEW_MSG)
    d = getattr(t, "__dict__", None)
    if d is not None and "_multi_view" in d and t._requires_grad:
        fn = t._grad_fn
        name = _re.sub(r"Backward\d*$", "", fn.name()) if fn is not None else "a view op"
        raise RuntimeError(_MULTI_VIEW_MSG.format(d["_multi_view"], name))
    _check_custom_view(t)
    if t._grad_fn is None and t._requires_grad:
        if t._base is not None:     # requires_grad_() on a view: a leaf, and a view
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    b = t._base
    if b is not None and b._grad_fn is None and b._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _check_custom_view(t):
    for v in (t, t._base):
        info = getattr(v, "_custom_view_of", None) if v is not None else None
        if info is not None and v._requires_grad:
            name = info[1]
            if name is None:
                fn = v._grad_fn
                name = _re.sub(r"Backward\d*$", "", fn.name()) if fn is not None else "a view op"
            raise RuntimeError(
                f"Output {info[0]} of {name} is a view and is being modified inplace. This "
                "view was created inside a custom Function (or because an input was returned "
                "as-is) and the autograd logic to handle view+inplace would override the custom "
                "backward associated with the custom Function, leading to incorrect gradients. "
                "This behavior is forbidden. You can fix this by cloning the output of the "
                "custom Function.")


_RENAMED = {}


def name_grad_fn(t, name, *inputs):
    """Give ``t``'s node torch's name ``name`` (a composite's output shows the
    node of torch's kernel for the whole op: ``NativeGroupNormBackward0`` rather
    than that of its last part).  The node becomes an instance of a subclass of
    its class, so it behaves exactly as before; a node that is one of
    ``inputs``' (the op returned an input's alias) is left alone."""
    node = t._grad_fn if isinstance(t, _TensorBase) else None
    if node is None or type(node).__name__ == name:
        return t
    for x in inputs:
        if isinstance(x, _TensorBase) and x._grad_fn is node:
            return t
    base = type(node)
    cls = _RENAMED.get((base, name))
    if cls is None:
        cls = _RENAMED[base, name] = type(name, (base,), {"__slots__": ()})
    node.__class__ = cls
    return t


def one_node(name, compute, inputs, backward, save_inputs=False):
    """``compute()``, a composite standing for one torch kernel, recorded as that
    kernel's one node ``name`` over the tensors ``inputs`` (``grad_fn.next_functions``
    has their edges only, not the composite's inner nodes): ``compute`` runs with
    recording off, and the node's ``backward(g)`` (``backward(g, *inputs)`` with
    ``save_inputs``: the inputs saved, their in-place changes detected) gives the tuple
    of the inputs' gradients, written with differentiable ops (so ``create_graph``
    holds).  Where
    nothing records (grad mode off, no input requiring grad) and under vmap or forward
    AD, ``compute()`` runs as it is and its node, if any, gets the name
    (:func:`name_grad_fn`).  ``compute`` must return a new tensor (never a view of
    an input)."""
    if not _state.enabled or _vmap_frames() or _fwl.levels() or not any(
            isinstance(t, _TensorBase) and t._requires_grad for t in inputs):
        return name_grad_fn(compute(), name, *inputs)
    _state.enabled = False
    try:
        out = compute()
    finally:
        _state.enabled = True
    if _is_diff(out):
        if save_inputs:
            saved = tuple(save(t) for t in inputs)

            def bw(g):
                return backward(g, *(sv.unpack() for sv in saved))
            attach(name, out, inputs, bw)
        else:
            attach(name, out, inputs, backward)
    return out


def add_scalar(t, number):
    """``t + number`` as torch's C++ functions add a double (``aten::add.Scalar``,
    pairwise_distance's eps, margin_ranking_loss's margin): node AddBackward1 with one
    edge, to ``t`` (a Python-level ``t + number`` is AddBackward0 with a None edge for
    the number, as torch's)."""
    return one_node("AddBackward1", lambda: t + number, (t,), _same_grad1)


def _copy_slices_outplace(g, bshape, bstride, vshape, vstride, voff):
    """CopySlices' gradients ``(g with the view's region zeroed, g's region)``
    without writing into ``g``'s buffer: for a gradient batched by vmap,
    which cannot be copied into an unbatched buffer in place."""
    span = 1
    for s, k in zip(bstride, bshape):
        span += (k - 1) * s
    n = 1
    for k in bshape:
        n *= k
    # the base element at each storage position, then those the view covers
    at = _C.zeros(span, dtype=ptcore.int64, device=g.device)
    at.as_strided(bshape, bstride, 0).copy_(
        ptcore.arange(n, device=g.device).reshape(bshape))
    covered = at.as_strided(vshape, vstride, voff).reshape(-1)
    mask = _C.zeros(n, dtype=ptcore.bool, device=g.device)
    mask[covered] = True
    flat = g.reshape(-1)
    gb = ptcore.where(mask.reshape(bshape), ptcore.zeros((), dtype=g.dtype, device=g.device), g)
    return gb, flat.index_select(0, covered).reshape(vshape)


def _move_retain(t, old_fn, old_nr):
    """``t``'s history changed (an in-place op, a regenerated view node): its
    ``retain_grad`` slot moves from ``old_fn`` to the new node, as torch's
    ``update_tensor_hooks_on_new_gradfn`` (hooks registered before stay put)."""
    if not t._retains_grad or old_fn is None or old_fn._retain is None:
        return
    ref = old_fn._retain.pop(old_nr, None)
    new = t._grad_fn
    if ref is None or new is None or new is old_fn:
        return
    if new._retain is None:
        new._retain = {}
    new._retain[t._output_nr] = ref


def rebase(self, r):
    """Give ``self`` (just overwritten in place with ``r``'s values) the
    history of ``r``; for a view, its base gets a CopySlices node."""
    if not r._requires_grad:
        return self
    base = self._base
    old, old_nr = self._grad_fn, self._output_nr
    if base is None:
        self._grad_fn = r._grad_fn
        self._output_nr = r._output_nr
        self._requires_grad = True
        _move_retain(self, old, old_nr)
        return self
    bshape, bstride = tuple(base.shape), tuple(base.stride())
    vshape, vstride, voff = _geometry(self, base)

    def bw(g):
        if hasattr(g, "_bt_phys"):
            return _copy_slices_outplace(g, bshape, bstride, vshape, vstride, voff)
        gb = _C.empty_strided(bshape, bstride, dtype=g.dtype, device=g.device)
        gb.copy_(g)
        region = gb.as_strided(vshape, vstride, voff)
        gr = region.clone()
        region.zero_()
        return gb, gr
    ins = (base, r)
    base_old, base_nr = base._grad_fn, base._output_nr
    attach("CopySlices", base, ins, bw)
    _move_retain(base, base_old, base_nr)
    # the view now reads the new base (regenerated from its geometry, as torch's)
    self._grad_fn = None
    self._requires_grad = False
    _on_view(base, self, name="AsStridedBackward0")
    _move_retain(self, old, old_nr)
    return self


def inplace(name, raw_inplace, outplace, needs_old_self=True):
    """Wrap an in-place op ``x.op_(...)``: when recording, compute
    ``outplace(x, ...)`` with autograd, copy it into ``x`` and rebase."""
    def op(self=None, *args, **kwargs):
        if self is None:
            # the function form's keyword: ptcore.cos_(input=x)
            if "input" not in kwargs:
                raise TypeError(f"{name}() missing 1 required positional argument: 'input'")
            self = kwargs.pop("input")
        if isinstance(self, _TensorBase):
            _check_inference_write(self)
        if _state.enabled and (self._requires_grad or _needs_grad(args, kwargs)
                               or _nograd_views[0] and _is_nograd_view(self)):
            check_inplace(self)
            src = self
            if needs_old_self:
                # the formula saves the old self (for self's gradient, or for an
                # argument's: ``logits /= temperature``), which the write below changes
                src = self.clone()
            if _pd.modes_on():
                # a TorchDispatchMode sees the in-place kernel (as torch's), not the
                # out-of-place computation that gives the graph
                with _pd.modes_hidden():
                    r = outplace(src, *args, **kwargs)
                if r is NotImplemented:
                    return r
                _state.enabled = False
                try:
                    raw_inplace(self, *args, **kwargs)
                finally:
                    _state.enabled = True
                return rebase(self, r)
            r = outplace(src, *args, **kwargs)
            if r is NotImplemented:
                return r
            _state.enabled = False
            try:
                _TensorBase.copy_(self, r)
            finally:
                _state.enabled = True
            return rebase(self, r)
        return raw_inplace(self, *args, **kwargs)
    op.__name__ = getattr(raw_inplace, "__name__", name)
    op.__doc__ = getattr(raw_inplace, "__doc__", None)
    op.__wrapped__ = raw_inplace
    return op


def _copy_outplace(self, src, non_blocking=False, node="CopyBackwards"):
    """The values ``self.copy_(src)`` leaves in ``self`` (``src`` converted
    to self's dtype and broadcast), as a new tensor with torch's node for
    the copy: inputs ``(self, src)``, a zero gradient for the overwritten
    ``self`` and the gradient summed to src's shape, in src's dtype, for
    ``src``."""
    r = src.detach()
    r = r.to(self.dtype) if r.dtype is not self.dtype else r
    if tuple(r.shape) != tuple(self.shape):
        r = r.expand(self.shape)
    r = r.clone()
    if _state.enabled and (self._requires_grad or src._requires_grad):
        sshape, sdtype, zero_self = tuple(src.shape), src.dtype, self._requires_grad

        def bw(g):
            gs = None
            if src._requires_grad:
                gs = _sum_to(g, sshape)
                if gs.dtype.is_complex and not sdtype.is_complex:
                    gs = gs.real
                gs = gs.to(sdtype) if gs.dtype is not sdtype else gs
            return (g.new_zeros(g.shape) if zero_self else None), gs
        attach(node, r, (self, src), bw)
    return r


def _copy_inplace(self, other, non_blocking=False, node="CopyBackwards"):
    src = other                     # (torch 2.13 names copy_'s source ``other``)
    _check_inference_write(self)
    if _state.enabled and _nograd_views[0] and _is_nograd_view(self):
        check_inplace(self)
    if _state.enabled and (self._requires_grad or (isinstance(src, _TensorBase) and src._requires_grad)):
        src = _C._number_as_tensor(src)     # a number: a constant 0-d source
        if not isinstance(src, _TensorBase):
            return _TensorBase.copy_(self, src, non_blocking)
        check_inplace(self)
        r = _copy_outplace(self, src, node=node)
        _state.enabled = False
        try:
            _TensorBase.copy_(self, r, non_blocking)
        finally:
            _state.enabled = True
        return rebase(self, r)
    return _TensorBase.copy_(self, src, non_blocking)


def _const_source(self, node):
    """An alias of ``self`` (overwritten with values that do not require
    grad) whose node, named ``node``, sends no gradient anywhere but a zero
    one to self's old history (torch's fill_/zero_ nodes keep it as input)."""
    r = self.detach()
    if self._requires_grad:
        attach(node, r, (self,), lambda g: (g.new_zeros(g.shape),))
        return r
    r._grad_fn = node_class(node)((), (), lambda g: ())
    r._requires_grad = True
    return r


def _fill_inplace(self, value, node=None):
    """``self.fill_(value)``; torch's node names its overload: FillBackward2
    for a number, FillBackward3 for a tensor (``node`` overrides)."""
    _check_inference_write(self)
    if _state.enabled and _nograd_views[0] and _is_nograd_view(self):
        check_inplace(self)
    if _state.enabled and (self._requires_grad or (isinstance(value, _TensorBase) and value._requires_grad)):
        check_inplace(self)
        if node is None:
            node = "FillBackward3" if isinstance(value, _TensorBase) else "FillBackward2"
        if isinstance(value, _TensorBase):
            if value.dim():
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {value.dim()} dimensions.")
            return _copy_inplace(self, value, node=node)
        _state.enabled = False
        try:
            _TensorBase.fill_(self, value)
        finally:
            _state.enabled = True
        return rebase(self, _const_source(self, node))
    return _TensorBase.fill_(self, value)


def _zero_inplace(self):
    return _fill_inplace(self, 0, "ZeroBackward0")


def _basic_items(idx):
    """The items of ``idx`` when it is basic indexing (ints, slices, None,
    Ellipsis, 0-d integer tensors), else None."""
    items = idx if type(idx) is tuple else (idx,)
    out = []
    for it in items:
        if isinstance(it, _TensorBase):
            # a 0-d integer tensor indexes as an int
            if it.dim() or it.dtype.is_floating_point or it.dtype.is_complex \
                    or it.dtype is _C.bool_:
                return None
            it = int(it.item())
        elif hasattr(it, "ndim") and hasattr(it, "dtype"):
            # a NumPy array or scalar: basic only as a 0-d integer (an int to torch); an
            # index array selects a copy, which a write into self[items] would miss
            if it.ndim or getattr(it.dtype, "kind", "") not in ("i", "u"):
                return None
            it = int(it)
        elif not (it is None or it is Ellipsis or type(it) is slice) and (
                isinstance(it, bool) or not hasattr(type(it), "__index__")):
            return None
        out.append(it)
    return tuple(out)


def _whole(self, items):
    """Whether basic ``items`` select all of ``self`` as it is (torch's
    slicing returns ``self`` then, not a view)."""
    if any(it is not Ellipsis and type(it) is not slice for it in items):
        return False
    sl = [it for it in items if it is not Ellipsis]
    if len(sl) > self.dim():
        return False
    k = items.index(Ellipsis) if Ellipsis in items else len(items)
    dims = list(range(k)) + list(range(self.dim() - (len(sl) - k), self.dim()))
    for d, it in zip(dims, sl):
        if it.indices(self.shape[d]) != (0, self.shape[d], 1):
            return False
    return True


def _last_view_op(t, items):
    """The view op torch's indexing applies last for basic ``items`` (its
    node's name without 'Backward'): Select, Slice or Unsqueeze."""
    name = "Alias"
    k = items.index(Ellipsis) if Ellipsis in items else len(items)
    nd = sum(1 for it in items if it is not None and it is not Ellipsis)
    dims = list(range(k)) + list(range(t.dim() - (nd - sum(
        1 for it in items[:k] if it is not None)), t.dim()))
    di = 0
    for it in items:
        if it is Ellipsis:
            continue
        if it is None:
            name = "Unsqueeze"
            continue
        d = dims[di] if di < len(dims) else di
        di += 1
        if type(it) is slice:
            if d < t.dim() and it.indices(t.shape[d]) != (0, t.shape[d], 1):
                name = "Slice"
        else:
            name = "Select"
    return name


def _setitem_basic(self, items, value):
    """``self[items] = value`` as torch's: into the view ``self[items]`` (or
    ``self`` when the items take all of it), with fill_ for a number or a
    0-d tensor and copy_ otherwise; the base gets CopySlices."""
    dst = self if _whole(self, items) else self[items if len(items) != 1 else items[0]]
    if not isinstance(value, _TensorBase):
        if tuple(dst.shape) == ():
            return _copy_inplace(dst, _C._number_as_tensor(value).to(dst.dtype))
        return _fill_inplace(dst, _C._number_as_tensor(value), "FillBackward3")
    v = value
    k = 0
    while k < v.dim() and v.shape[k] == 1:      # torch's slicePrefix1sSize
        k += 1
    if k:
        v = v.reshape(tuple(v.shape[k:]))
    if tuple(v.shape) != tuple(dst.shape) and v.dim() == 0 and _in_host_memory(v):
        return _fill_inplace(dst, v)
    return _copy_inplace(dst, v)


def _setitem(self, idx, value):
    _check_inference_write(self)
    if _state.enabled and _nograd_views[0] and _is_nograd_view(self):
        items = _basic_items(idx)
        if items is not None and not _whole(self, items):
            # torch writes into the view self[items], a view of this view
            raise RuntimeError(f"Output 0 of {_last_view_op(self, items)} is a view of a view "
                               "which was created in no_grad mode and is being modified inplace "
                               "with grad mode enabled." + _NOGRAD_VIEW_MSG[len(
                                   "A view was created in no_grad mode and is being modified "
                                   "inplace with grad mode enabled."):])
        check_inplace(self)
    if _state.enabled and (self._requires_grad or (isinstance(value, _TensorBase) and value._requires_grad)):
        items = _basic_items(idx)
        if items is None or _whole(self, items):
            check_inplace(self)
        else:
            # as torch: the write goes into the view self[items], whose own
            # check runs (a view of a leaf, or of one output of split/unbind)
            _check_custom_view(self)
        if items is not None:
            _setitem_basic(self, items, value)
            return None
        r = index_put_like(self, idx, value)
        _state.enabled = False
        try:
            _TensorBase.copy_(self, r)
        finally:
            _state.enabled = True
        rebase(self, r)
        return None
    return _TensorBase.__setitem__(self, idx, value)



def index_put_like(self, idx, value):
    """Out-of-place ``self[idx] = value`` recorded for autograd."""
    with _gm.no_grad():
        r = self.clone()
        ptcore.Tensor.__setitem__.__wrapped__(r, idx, value) if hasattr(ptcore.Tensor.__setitem__, "__wrapped__") \
            else _TensorBase.__setitem__(r, idx, value)
    vt = value if isinstance(value, _TensorBase) else None
    sh = tuple(self.shape)

    def bw(g):
        gs = g.clone()
        gs[idx] = 0          # recorded when create_graph (the region got no gradient)
        gv = g[idx] if vt is not None else None
        return gs, gv
    attach("IndexPutBackward0", r, (self, vt), bw)
    return r


# ---------------------------------------------------------------------------
# the recorded forms of the device runtimes' C fast paths (ptcore.cuda.ops.dense_fast)
# ---------------------------------------------------------------------------

def _writable_unrecorded(x):
    """Whether an in-place op may write ``x`` on a device's fast path:
    nothing would record it and none of the in-place wrapper's checks
    (inference tensors, leaves and views that require grad) applies --
    those of ``_record.device_fast_inplace``."""
    st = _state
    if not isinstance(x, _TensorBase) or _gm._ever[0] and not st.inference and x.is_inference():
        return False
    return not (st.enabled and (x._requires_grad or _nograd_views[0] and _is_nograd_view(x)))


def device_fast_inplace_unary(fn):
    """An in-place unary op's fast form (``x.relu_()``) for a device
    runtime: ``fn(x)`` (the device's C dense path: x, or None to decline)
    when :func:`_writable_unrecorded`, else None: the in-place wrapper's
    checks, recording and errors."""
    def device_fast(args, kwargs):
        if kwargs or len(args) != 1 or not _writable_unrecorded(args[0]):
            return None
        return fn(args[0])
    return device_fast


def device_fast_reflected(fn, formula):
    """The fast form of a reflected op with a number (``other - x``,
    ``rsub(x, other)``): ``fn(x, other)`` (the device's path: the result,
    or None to take the layers), recorded with ``formula`` when x requires
    grad."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        x = args[0]
        out = fn(x, args[1])
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, args[1])
        return out
    return device_fast


def device_fast_reflected_nograd(fn):
    """The fast form of a reflected op with a number (``number // x``,
    ``number ** x``) when nothing records: ``fn(x, other)`` (the device's
    path: the result, or None to take the layers); None while x requires
    grad and autograd records (the layers record the op)."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        x = args[0]
        if not isinstance(x, _TensorBase) or st.enabled and x._requires_grad:
            return None
        return fn(x, args[1])
    return device_fast


def device_fast_rtruediv(recip, mul):
    """``Tensor.__rtruediv__``'s fast form (``number / x``): torch's
    ``x.reciprocal() * number`` by the device's dense paths of the two ops,
    each recorded with its formula (``recip``, ``mul``) when x requires grad;
    None to take the layers."""
    st = _state
    ui, mi = _ewdrv.UNARY["reciprocal"], _pointwise._B["mul"]
    unary, binary = _ewdrv.device_fast_unary, _ewdrv.fast_binary

    def device_fast(args, kwargs):
        if kwargs or len(args) != 2:
            return None
        x, other = args
        if type(other) is not float and type(other) is not int:
            return None
        r = unary(ui, x)
        if r is None:
            return None
        out = binary(mi, r, other, True)
        if out is None:
            return None
        if st.enabled and x._requires_grad:
            recip(r, x)
            mul(out, r, other)
        return out
    return device_fast


def device_fast_masked_fill(fn, formula, inplace):
    """``masked_fill``/``masked_fill_``'s fast form: ``fn(x, mask,
    value)`` for positional calls (the device's path: the result, or None
    to take the layers); out of place recorded with ``formula`` when x
    requires grad, in place only when :func:`_writable_unrecorded`."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 3:
            return None
        x = args[0]
        if inplace:
            return fn(*args) if _writable_unrecorded(x) else None
        out = fn(*args)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, *args)
        return out
    return device_fast


def device_fast_where(fn, formula, method):
    """``where(cond, x, y)``'s fast form (``x.where(cond, y)`` when
    ``method``): ``fn(cond, x, y)`` (the device's path: the result, or None
    to take the layers), recorded with ``formula`` when x or y requires grad."""
    st = _state

    def device_fast(args, kwargs):
        if kwargs or len(args) != 3:
            return None
        cond, x, y = (args[1], args[0], args[2]) if method else args
        out = fn(cond, x, y)
        if out is not None and st.enabled and (x._requires_grad or y._requires_grad):
            formula(out, cond, x, y)
        return out
    return device_fast


def device_fast_clamp(fn, formula):
    """``clamp``/``clip``'s fast form: ``fn(x, min, max)`` for the
    calls ``(x[, min[, max]])`` with ``min``/``max`` also by keyword (the
    device's path: the result, or None to take the layers), recorded with
    ``formula`` when x requires grad."""
    st = _state

    def device_fast(args, kwargs):
        call = optional_args(args, kwargs, ("min", "max"), (None, None))
        if call is None:
            return None
        x, lo, hi = call
        out = fn(x, lo, hi)
        if out is not None and st.enabled and x._requires_grad:
            formula(out, x, lo, hi)
        return out
    return device_fast



_graph._REFRESH_VIEW[0] = refresh_view      # (graph.gradient_edge rebuilds stale views)
_record_fast.bind(gradient_edge, refresh_view, _anomaly, forward_stack)
