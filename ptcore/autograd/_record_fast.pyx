# cython: language_level=3, boundscheck=False, wraparound=False
"""The graph edges of a recorded op's inputs, compiled: every recorded op
(:func:`ptcore.autograd._record.attach` and its two- and three-input forms)
walks its inputs for ``(grad_fn, output_nr)`` edges and ``(shape, dtype)``
metadata, the interpreter's per-statement cost a third of a small op's
recording.  The same statements as the Python they replace, reading the
tensor core's fields directly; :func:`bind` hands over the helpers that stay
in Python (the leaves' AccumulateGrad, the rebuilding of a stale view's
node)."""
from functools import partial

from ptcore._tensor cimport _TensorBase, ptc_version

cdef object _gradient_edge = None
cdef object _refresh_view = None
cdef object _anomaly = None
cdef object _forward_stack = None


def bind(gradient_edge, refresh_view, anomaly, forward_stack):
    """Take ``graph.gradient_edge``, ``_record.refresh_view``, the anomaly
    mode's flag cell and ``graph.forward_stack`` (called by ``_record`` once
    they all exist)."""
    global _gradient_edge, _refresh_view, _anomaly, _forward_stack
    _gradient_edge = gradient_edge
    _refresh_view = refresh_view
    _anomaly = anomaly
    _forward_stack = forward_stack


cdef inline tuple _shape(_TensorBase t):
    cdef Py_ssize_t i
    cdef list r = [t._shape[i] for i in range(t._ndim)]
    return tuple(r)


cdef inline object _edge(_TensorBase t):
    fn = t._grad_fn
    if fn is None:
        return _gradient_edge(t)
    if fn._is_view and fn._bver != ptc_version(t):
        fn = _refresh_view(t)
    return (fn, t._output_nr)


def edge_meta(t):
    """``((grad_fn, output_nr), (shape, dtype))`` of a tensor that requires
    grad (its AccumulateGrad for a leaf; a stale view's node rebuilt)."""
    cdef _TensorBase x = <_TensorBase?>t
    return _edge(x), (_shape(x), x._dtype)


def input_edges(inputs):
    """``(edges, meta)`` tuples of an op's inputs: for each one that requires
    grad its edge and ``(shape, dtype)``, None for the others; None when no
    input requires grad."""
    cdef list edges = [], meta = []
    cdef bint anyg = False
    cdef _TensorBase x
    for t in inputs:
        if isinstance(t, _TensorBase) and (<_TensorBase>t)._requires_grad:
            x = <_TensorBase>t
            edges.append(_edge(x))
            meta.append((_shape(x), x._dtype))
            anyg = True
        else:
            edges.append(None)
            meta.append(None)
    if not anyg:
        return None
    return tuple(edges), tuple(meta)


def attach3(cls, out, a, b, c, backward):
    """Attach a node of class ``cls`` with ``backward`` to the one output
    ``out`` of an op of three inputs (addmm, a Linear's forward); None when
    no input requires grad."""
    cdef object ea = None, ma = None, eb = None, mb = None, ec = None, mc = None
    cdef _TensorBase x
    if isinstance(a, _TensorBase) and (<_TensorBase>a)._requires_grad:
        x = <_TensorBase>a
        ea = _edge(x)
        ma = (_shape(x), x._dtype)
    if isinstance(b, _TensorBase) and (<_TensorBase>b)._requires_grad:
        x = <_TensorBase>b
        eb = _edge(x)
        mb = (_shape(x), x._dtype)
    if isinstance(c, _TensorBase) and (<_TensorBase>c)._requires_grad:
        x = <_TensorBase>c
        ec = _edge(x)
        mc = (_shape(x), x._dtype)
    if ea is None and eb is None and ec is None:
        return None
    node = cls((ea, eb, ec), (ma, mb, mc), backward)
    x = <_TensorBase?>out
    x._requires_grad = True
    x._grad_fn = node
    if _anomaly[0]:
        node._stack = _forward_stack()
    return node


def record_addmm(cls, out, inp, m1, m2, beta, alpha, saved, backward):
    """Record ``out = addmm(inp, m1, m2, beta=, alpha=)`` (a Linear's forward):
    ``m1``/``m2`` saved (by ``saved``, the SavedTensor class) where the other
    one's gradient needs them, their transposed layouts and the input's
    shape noted, and a node of class ``cls`` attached whose backward is
    ``backward(s1, s2, t1, t2, ishape, beta, alpha, g)``.  The statements of
    the Python formula, compiled: a Linear layer records one per call."""
    cdef _TensorBase a = <_TensorBase?>m1
    cdef _TensorBase b = <_TensorBase?>m2
    s1 = saved(a) if b._requires_grad else None
    s2 = saved(b) if a._requires_grad else None
    ishape = _shape(<_TensorBase>inp) if isinstance(inp, _TensorBase) and \
        (<_TensorBase>inp)._requires_grad else None
    return attach3(cls, out, inp, m1, m2,
                   partial(backward, s1, s2, a._is_t2d(), b._is_t2d(), ishape, beta, alpha))
