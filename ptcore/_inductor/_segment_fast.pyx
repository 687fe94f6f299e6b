# cython: language_level=3, boundscheck=False, wraparound=False
"""A compiled training segment's call as one autograd node, compiled
(:func:`apply_segment`): ``SegmentFunction.apply(seg, *args)`` connected by
the steps :func:`ptcore.autograd.function.connect` takes for outputs that are
new tensors (no input among them, no view, nothing dirty) -- the same node,
ctx, saved tensors and output flags, without the interpreter's cost of the
loops over the segment's inputs (its parameters among them).  Anything else
-- grad mode off, forward AD, vmap, a tracer, anomaly mode, an output that is
an input or a view -- takes ``SegmentFunction.apply``'s own way (for the
outputs: its ``connect``).  :func:`node_apply` is the node's backward call
(the engine's ``node._apply(grads)``).  :func:`bind` hands over the Python
objects (``ptcore._inductor.aot`` calls it once they exist)."""
from ptcore._tensor cimport _TensorBase

cdef object _grad_state = None
cdef object _FWL, _batching_active, _tracing_tls, _anomaly, _SegmentFunction, _connect
cdef object _Ctx, _node_cls, _cfn, _gradient_edge, _SavedTensor, _SavedOutput, _weakref
cdef object _current, _FREED_MSG, _is_grad_enabled

__all__ = ["bind", "apply_segment", "node_apply"]


def bind(*, grad_state, fwl, batching_active, tracing_tls, anomaly, segment_function, connect,
         ctx_class, cfn, gradient_edge, saved_tensor, saved_output, weakref_ref, current,
         freed_msg, is_grad_enabled):
    global _grad_state, _FWL, _batching_active, _tracing_tls, _anomaly, _SegmentFunction
    global _connect, _Ctx, _node_cls, _cfn, _gradient_edge, _SavedTensor, _SavedOutput, _weakref
    global _current, _FREED_MSG, _is_grad_enabled
    _current = current
    _FREED_MSG = freed_msg
    _is_grad_enabled = is_grad_enabled
    _grad_state = grad_state
    _FWL = fwl
    _batching_active = batching_active
    _tracing_tls = tracing_tls
    _anomaly = anomaly
    _SegmentFunction = segment_function
    _node_cls = segment_function._backward_cls
    _connect = connect
    _Ctx = ctx_class
    _cfn = cfn
    _gradient_edge = gradient_edge
    _SavedTensor = saved_tensor
    _SavedOutput = saved_output
    _weakref = weakref_ref


cdef inline object _edge(_TensorBase t):
    """``gradient_edge(t)``: a leaf's accumulator when it has one, else the
    Python function (a node's edge, a view's refresh, a new accumulator)."""
    if t._grad_fn is None:
        acc = t._grad_acc
        if acc is not None:
            return (acc, 0)
    return _gradient_edge(t)


def apply_segment(seg, tuple args):
    """``SegmentFunction.apply(seg, *args)`` (see the module docstring)."""
    cdef Py_ssize_t n = len(args), i, k, n_out, ns
    cdef bint record = False
    cdef _TensorBase t
    st = _grad_state
    if not st.enabled or _FWL.enabled or _batching_active[0] or \
            _tracing_tls.tracer is not None or _anomaly[0]:
        return _SegmentFunction.apply(seg, *args)
    cdef list tensor_args = [None] * (n + 1)
    cdef list needs = [False] * (n + 1)
    for i in range(n):
        a = args[i]
        if isinstance(a, _TensorBase):
            tensor_args[i + 1] = a
            if (<_TensorBase>a)._requires_grad:
                needs[i + 1] = True
                record = True
    ctx = _Ctx()
    ctx.needs_input_grad = tuple(needs)
    st.enabled = False
    try:
        # (SegmentFunction.forward's steps; its outputs are the generated code's)
        r = seg.forward(*args)
    finally:
        st.enabled = True
    n_out = seg.n_out
    ns = n_out + seg.n_saved
    cdef tuple outs = tuple(r[:n_out])
    ctx.seg = seg
    ctx.inputs = args
    cdef tuple to_save = tuple(r[n_out:ns])
    ctx.to_save = to_save
    ctx.live = r[ns:]
    nd_pos = seg.nondiff_pos
    if nd_pos:
        nd = [outs[j] for j in nd_pos if isinstance(outs[j], _TensorBase)]
        if nd:
            ctx.mark_non_differentiable(*nd)
    if not record:
        return outs
    for o in outs:
        if isinstance(o, _TensorBase):
            t = <_TensorBase>o
            if t._requires_grad or t._grad_fn is not None or t._base is not None:
                return _connect(_SegmentFunction, ctx, tensor_args, outs)
            for a in args:
                if a is o:
                    return _connect(_SegmentFunction, ctx, tensor_args, outs)
    # (connect's steps for new outputs: edges, node, output flags, saved tensors)
    cdef list edges = [None] * (n + 1)
    cdef list meta = [None] * (n + 1)
    cdef list inputs_ = [False] * (n + 1)
    for i in range(n):
        a = tensor_args[i + 1]
        if a is None:
            continue
        inputs_[i + 1] = True
        if needs[i + 1]:
            t = <_TensorBase>a
            edges[i + 1] = _edge(t)
            m = t._ad_input()
            meta[i + 1] = (m[1], m[2])
    node = _node_cls(tuple(edges), tuple(meta), _cfn)
    ctx._tensor_inputs = tuple(inputs_)
    node._ctx = ctx
    node._cls = _SegmentFunction
    ctx._node = _weakref(node)
    non_diff = ctx._non_diff
    cdef list om = []
    for k in range(n_out):
        o = outs[k]
        if isinstance(o, _TensorBase):
            t = <_TensorBase>o
            dt = t.dtype
            om.append((tuple(t.shape), dt, t.device))
            if not (dt.is_floating_point or dt.is_complex):
                continue
            if non_diff and any(o is x for x in non_diff):
                continue
            t._requires_grad = True
            t._grad_fn = node
            if k:
                o._output_nr = k
        else:
            om.append(None)
    node._out_meta = tuple(om)
    cdef list saved = []
    for x in to_save:
        if x is None:
            saved.append(None)
        elif isinstance(x, _TensorBase) and (<_TensorBase>x)._grad_fn is node:
            for k in range(n_out):
                if outs[k] is x:
                    break
            saved.append(_SavedOutput(x, k))
        else:
            saved.append(_SavedTensor(x))
    ctx._saved = saved
    ctx.to_save = ()
    ctx._non_diff = ()
    return outs


def node_apply(node, grads):
    """The segment node's backward: ``SegmentFunction.backward(ctx, *grads)``
    (its own way under ``create_graph``), with the node current while it
    runs, without the checks a user's Function's result needs (the segment
    returns one gradient per input, None for those that take none)."""
    cdef Py_ssize_t i, n_in
    if node._fn is None:
        raise RuntimeError(_FREED_MSG)
    cur = _current
    prev = cur[0]
    cur[0] = node
    try:
        ctx = node._ctx
        if _is_grad_enabled():
            return _SegmentFunction.backward(ctx, *grads)
        seg = ctx.seg
        saved = ctx.saved_tensors
        res = seg.backward(*saved, *ctx.live, *[grads[i] for i in seg.grad_pos])
    finally:
        cur[0] = prev
    n_in = seg.n_in
    cdef list out = [None] * (n_in + 1)
    for pos, g in zip(seg.diff_pos, res):
        out[<Py_ssize_t>pos + 1] = g
    return tuple(out)
