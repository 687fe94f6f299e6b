# cython: language_level=3, boundscheck=False, wraparound=False
"""The autograd engine's loop (:func:`ptcore.autograd.graph.run_backward`)
compiled: the same statements as a Python function, without the
interpreter's per-statement cost, which is most of a small graph's backward.

The helpers it calls (hooks, validation, anomaly checks, node release) stay
in ``graph.py``; :func:`bind` hands them over once ``graph.py`` has defined
them.  ``_add_into`` is here because it tests the Python references of the
gradient it may add in place, which a compiled caller holds differently.
"""
import heapq
import types

from cpython.ref cimport Py_REFCNT, PyObject

from ptcore._tensor cimport _TensorBase
from ptcore import _tensor as _C
from ptcore._dispatch import profiling as _profiling

# the profiler's session slot (a list whose item is set while a profile records)
cdef list _prof_session = _profiling._session

cdef object _g = None
cdef object AccumulateGrad, _node_apply, _state, _task_tls, _task_ids, _current, _FREED_MSG
cdef object _zeros_for, _run_tensor_prehooks, _retain_grads, _leaf_hooks
cdef object _n_outputs, _checked_hook_values, _validate, _warn_anomaly
cdef object _check_nan, _run_post_hooks, _freed_saved, ClosureSaved
cdef object _run_final_callbacks, _add_grads, _buffer_add, _layers_on, _Tensor


def bind(graph):
    """Take the engine's helpers from the module ``graph`` (called by it)."""
    global _g, AccumulateGrad, _node_apply, _state, _task_tls, _task_ids, _current, _FREED_MSG
    global _zeros_for, _run_tensor_prehooks, _retain_grads, _leaf_hooks
    global _n_outputs, _checked_hook_values, _validate, _warn_anomaly
    global _check_nan, _run_post_hooks, _freed_saved, ClosureSaved
    global _run_final_callbacks, _add_grads, _buffer_add, _layers_on, _Tensor, _P
    # dtypes, devices, layouts and memory formats: values a formula keeps for
    # the gradient's allocation (split's, to()'s), never tensor data
    _P = frozenset({int, float, bool, complex, str, type(None), _C.dtype, _C.device,
                    _C.layout, _C.memory_format})
    _g = graph
    AccumulateGrad = graph.AccumulateGrad
    _node_apply = graph._node_apply
    _state = graph._state
    _task_tls = graph._task_tls
    _task_ids = graph._task_ids
    _current = graph._current
    _FREED_MSG = graph._FREED_MSG
    _zeros_for = graph._zeros_for
    _run_tensor_prehooks = graph._run_tensor_prehooks
    _retain_grads = graph._retain_grads
    _leaf_hooks = graph._leaf_hooks
    _n_outputs = graph._n_outputs
    _checked_hook_values = graph._checked_hook_values
    _validate = graph._validate
    _warn_anomaly = graph._warn_anomaly
    _check_nan = graph._check_nan
    _run_post_hooks = graph._run_post_hooks
    _freed_saved = graph._freed_saved
    ClosureSaved = graph.ClosureSaved
    _run_final_callbacks = graph._run_final_callbacks
    _add_grads = graph._add_grads
    _buffer_add = graph._buffer_add
    _layers_on = graph._layers_on
    _Tensor = graph._Tensor


cdef extern from "Python.h":
    PyObject* PyCell_GET(object cell)
    PyObject* PyFunction_GET_CLOSURE(object fn)
    PyObject* PyFunction_GET_DEFAULTS(object fn)

cdef frozenset _P = None        # the plain types (set by bind)
cdef object _FunctionType = types.FunctionType


cdef bint _plain(object v, int depth) except -1:
    """``v`` holds no tensor: plain numbers and strings, dtypes, devices,
    tuples/lists (Sizes) of these, or a function whose closure and defaults
    are plain (a derivative picked per dtype, say)."""
    cdef PyObject* p
    cdef object t = type(v), e, c
    if t in _P:
        return True
    if depth > 4:
        return False
    if t is tuple or t is list or isinstance(v, (tuple, list)):
        for e in v:
            if type(e) not in _P and not _plain(e, depth + 1):
                return False
        return True
    if t is _FunctionType:
        p = PyFunction_GET_DEFAULTS(v)
        if p != NULL and not _plain(<object>p, depth + 1):
            return False
        p = PyFunction_GET_CLOSURE(v)
        if p != NULL:
            for c in <tuple>p:
                if PyCell_GET(c) == NULL:
                    return False        # an empty cell
                e = <object>PyCell_GET(c)
                if type(e) not in _P and not _plain(e, depth + 1):
                    return False
        return True
    return False


cdef bint _saves_nothing(object fn, object sv) except -1:
    """Whether a formula node's backward closure (and saved values) hold
    only plain values (sizes, dims, numbers, dtypes, devices): torch frees
    only saved tensors, so such a node stays callable after a backward
    without retain_graph (split, cat, neg, to ...)."""
    if sv is not None and (type(sv) is not tuple or not _plain(sv, 0)):
        return False        # (saved sizes and dims, as sum's, are plain)
    return _plain(fn, -1)


cdef object _add_into(list b, Py_ssize_t nr, object g):
    """graph._add_into for the buffer slot ``b[nr]``: added in place when the
    slot is the gradient's only reference (``old`` below is the other)."""
    old = b[nr]
    if not _state.enabled and Py_REFCNT(old) <= 2 and type(old) is _Tensor[0]:
        r = _buffer_add(_g._ADD_OP, old, g, not _layers_on[0])
        if r is not None:
            return old.add_(g) if r is False else r
    return _add_grads(old, g)


def current_output_mask():
    """:func:`task_output_mask` of the node whose backward formula is running
    (None outside one, or in a plain ``backward()``)."""
    st = _task_tls.stack            # (task_output_mask inlined: every mul/add backward asks)
    if not st:
        return None
    needed = st[len(st) - 1][3]       # (no negative index: wraparound is off)
    node = _current[0]
    if needed is None or node is None:
        return None
    cdef list r = []
    for e in node._next:
        r.append(e is not None and id(e[0]) in needed)
    return tuple(r)


cdef int _release_children(object node, dict deps, list heap) except -1:
    """A node that does not run: its inputs' dependency counts drop as if it
    had, those that reach zero become ready."""
    for e in node._next:
        if e is None:
            continue
        m = e[0]
        c = deps[m] - 1
        deps[m] = c
        if c == 0:
            heapq.heappush(heap, (-m._seq, m))
    return 0


cdef set _needed_nodes(dict deps, dict tset):
    """ids of the nodes (keys of ``deps``: those reachable from the roots)
    from which a node of ``tset`` (ids) is reachable: an iterative post-order,
    each node's edges walked by index."""
    cdef set needed = set(), seen = set()
    cdef list stack = [], top
    cdef Py_ssize_t i, k
    cdef bint advanced
    for root in deps:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack.append([root, 0])
        while stack:
            top = <list>stack[len(stack) - 1]
            n = top[0]
            nxt = n._next
            i = top[1]
            advanced = False
            while i < len(nxt):
                e = nxt[i]
                i += 1
                if e is None:
                    continue
                m = e[0]
                if id(m) not in seen:
                    seen.add(id(m))
                    top[1] = i
                    stack.append([m, 0])
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            if id(n) in tset:
                needed.add(id(n))
                continue
            for k in range(len(nxt)):
                e = nxt[k]
                if e is not None and id(e[0]) in needed:
                    needed.add(id(n))
                    break
    return needed


def run_backward(roots, root_grads, retain_graph, create_graph, targets=None,
                 accumulate=True, allow_unused=False):
    """Run the graph from ``roots`` (edges) with ``root_grads``.

    ``targets``: edges whose incoming gradient is captured and returned (for
    :func:`ptcore.autograd.grad` and ``backward(inputs=...)``); when given,
    only nodes that lead to a target run.  ``accumulate=False`` captures
    leaf gradients instead of adding them into ``.grad``.
    """
    cdef dict deps, buffers
    cdef list stack, heap, buf
    cdef Py_ssize_t i, k
    cdef bint is_acc, plain = False
    # dependency counts over the reachable graph
    deps = {}
    stack = []
    for e in roots:
        if e[0] not in deps:
            deps[e[0]] = 0
            stack.append(e[0])
    while stack:
        n = stack.pop()
        for e in n._next:
            if e is None:
                continue
            m = e[0]
            c = deps.get(m)
            if c is None:
                deps[m] = 1
                stack.append(m)
            else:
                deps[m] = c + 1

    capture = None
    needed = tset = None
    if targets is not None:
        capture = {}
        tset = {}
        for i, e in enumerate(targets):
            tset.setdefault(id(e[0]), []).append((i, e[1]))
        needed = _needed_nodes(deps, tset)
    buffers = {}
    for e, g in zip(roots, root_grads):
        b = buffers.get(e[0])
        if b is None:
            b = buffers[e[0]] = [None] * _n_outputs(e[0], e[1])
        elif len(b) <= e[1]:
            b.extend([None] * (e[1] + 1 - len(b)))
        b[e[1]] = g if b[e[1]] is None else b[e[1]] + g

    heap = []
    pushed = set()
    for e in roots:
        n = e[0]
        if deps[n] == 0 and id(n) not in pushed:
            pushed.add(id(n))
            heapq.heappush(heap, (-n._seq, n))

    heappush, heappop = heapq.heappush, heapq.heappop
    acc_t = AccumulateGrad
    prev = _state.enabled
    _state.enabled = bool(create_graph)
    nxt_node = None    # the only ready node, kept off the heap (chains)
    tasks = _task_tls.stack
    tasks.append((next(_task_ids), targets is None, deps, needed, accumulate))
    final_callbacks = []
    _task_tls.callbacks.append(final_callbacks)
    try:
        while True:
            if nxt_node is not None:
                node = nxt_node
                nxt_node = None
            elif heap:
                node = heappop(heap)[1]
            else:
                break
            buf = buffers.pop(node, None)
            if buf is None:
                buf = [None]
            x = node._x
            is_acc = type(node) is acc_t
            if capture is not None:
                hits = tset.get(id(node))
                if is_acc:
                    run = accumulate and hits is not None
                else:
                    run = False
                    for e in node._next:
                        if e is not None and id(e[0]) in needed:
                            run = True
                            break
                if not run and not hits:
                    # a node that leads to no input: skipped, its tensor
                    # hooks not run (as torch)
                    _release_children(node, deps, heap)
                    continue
            if x is not None:
                if x.tensor_prehooks:
                    _run_tensor_prehooks(node, buf)
                if x.retain:
                    _retain_grads(x.retain, buf, create_graph)
            if capture is not None:
                if hits:
                    for i, nr in hits:
                        if nr < len(buf) and buf[nr] is not None:
                            capture[i] = buf[nr]
                            if is_acc and not accumulate:
                                # autograd.grad w.r.t. a leaf: its tensor hooks
                                # apply to the returned gradient (as torch)
                                capture[i] = _leaf_hooks(node, buf[nr])
                if not run:
                    _release_children(node, deps, heap)
                    continue
            if buf[0] is None and not any(g is not None for g in buf):
                _release_children(node, deps, heap)
                if not retain_graph:
                    node._release()
                continue
            if x is not None and x.prehooks:
                for h in list(x.prehooks.values()):
                    r = h(tuple(buf))
                    if r is not None:
                        if not isinstance(r, tuple):
                            raise TypeError(f"expected tuple, but hook returned "
                                            f"'{type(r).__name__}'")
                        buf = list(_checked_hook_values(h, buf, r))
            if not is_acc:
                om = node._out_meta
                if om is not None:
                    if len(buf) < len(om):
                        buf.extend([None] * (len(om) - len(buf)))
                    if not (x is not None and x.accepts_none):
                        for k in range(len(buf)):
                            if buf[k] is None:
                                buf[k] = _zeros_for(node, k)
            plain = type(node)._apply is _node_apply
            ev_outer = ev_node = None
            if _prof_session[0] is not None:
                # a recording profile: the node's events, as torch's engine
                # names them (its ops nest inside)
                ev_outer = _profiling.push_range(
                    "autograd::engine::evaluate_function: " + node.name())
                ev_node = _profiling.push_range(node.name())
            try:
                if plain:
                    # formula nodes: call the backward closure directly
                    fn = node._fn
                    if fn is None:
                        raise RuntimeError(_FREED_MSG)
                    _current[0] = node
                    gin = fn(*buf)
                else:
                    gin = node._apply(buf)
            except Exception as exc:
                if x is not None and x.stack is not None:
                    _warn_anomaly(node, 3)
                raise
            finally:
                if plain:
                    _current[0] = None
                if ev_outer is not None:
                    _profiling.pop_range(ev_node)
                    _profiling.pop_range(ev_outer)
            if is_acc:
                if x is not None and x.hooks:
                    # AccumulateGrad's post hooks: no grad_inputs, after the
                    # leaf's .grad and its post-accumulate hooks (as torch)
                    _run_post_hooks(x.hooks, (), buf)
                continue
            if gin is None or isinstance(gin, _TensorBase):
                gin = [gin]
            # fast path: every gradient already has its input's shape and dtype
            meta = node._in_meta
            ok = len(gin) == len(meta)
            if ok:
                for i in range(len(meta)):
                    g = gin[i]
                    if g is not None:
                        mi = meta[i]
                        if mi is None or not isinstance(g, _TensorBase) or \
                                not g._meta_is(mi[0], mi[1]):
                            ok = False
                            break
            if not ok:
                gin = _validate(node, gin)
            if x is not None:
                if x.stack is not None:
                    _check_nan(node, gin)
                if x.hooks:
                    gin = _run_post_hooks(x.hooks, gin, buf)
            if not retain_graph:
                if plain:
                    # a node that saved nothing stays callable for a later
                    # backward, as torch's (add, sum, views ...)
                    if not _saves_nothing(fn, node._sv):
                        node._fn = None
                        if node._sv is not None:
                            # (a node class that saves no scalars: nothing to keep)
                            node._sv = _freed_saved(node._sv) if type(node)._sv_scalars \
                                and type(node._sv) is not ClosureSaved else None
                else:
                    node._release()
            nxt = node._next
            for k in range(len(nxt)):
                e = nxt[k]
                if e is None:
                    continue
                m = e[0]
                g = gin[k]
                if g is not None:
                    nr = e[1]
                    b = buffers.get(m)
                    if b is None:
                        if nr == 0 and m._out_meta is None:
                            buffers[m] = [g]
                        else:
                            b = buffers[m] = [None] * _n_outputs(m, nr)
                            b[nr] = g
                    else:
                        if len(b) <= nr:
                            b.extend([None] * (nr + 1 - len(b)))
                        b[nr] = g if b[nr] is None else _add_into(b, nr, g)
                c = deps[m] - 1
                deps[m] = c
                if c == 0:
                    if nxt_node is None and not heap:
                        nxt_node = m
                    else:
                        if nxt_node is not None:
                            heappush(heap, (-nxt_node._seq, nxt_node))
                            nxt_node = None
                        heappush(heap, (-m._seq, m))
            # drop this frame's references to the gradients just passed on, so
            # that AccumulateGrad sees the buffer as their only holder and can
            # take a fresh gradient without copying it (_can_steal)
            gin = g = None
        if final_callbacks:
            _run_final_callbacks(final_callbacks)
    finally:
        _state.enabled = prev
        tasks.pop()
        _task_tls.callbacks.pop()
    if capture is not None:
        return [capture.get(i) for i in range(len(targets))]
    return None
