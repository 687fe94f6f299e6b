"""The tracing layer of the dispatch point: while a tracer is active on a
thread (``ptcore.jit.trace``), every op call made by the traced program —
not the calls an op makes inside its own implementation — is handed to the
tracer with its arguments and result, which records it as a graph node.
Conversions of a tensor to a Python value (``item``, ``bool(t)`` ...) are
reported too: the jit tracer warns that the value becomes a constant; a
tracer with a ``converted_value(opdef, args, kwargs, value)`` method (the
compiler's, :mod:`ptcore._dynamo.capture`) gets the value instead."""
import gc
import threading

from ptcore import _tensor as _C
from ptcore._dispatch import dispatcher as _D

__all__ = ["TracerWarning", "active_tracer", "custom_node", "tracing", "plain_size"]


class TracerWarning(Warning):
    """A traced program did something the trace cannot generalise (``torch.jit.TracerWarning``)."""

    @staticmethod
    def ignore_lib_warnings():
        import warnings
        warnings.filterwarnings("ignore", category=TracerWarning, module="ptcore")


TracerWarning.__module__ = "ptcore.jit"

# core methods that turn a tensor into a Python value: not graph nodes
CONVERSIONS = {"item": "number", "__float__": "number", "__int__": "number",
               "__index__": "number", "__bool__": "boolean", "tolist": "list",
               "numpy": "NumPy array"}


class _Tls(threading.local):
    def __init__(self):
        self.tracer = None
        self.depth = 0
        self.collecting = False


_tls = _Tls()


def active_tracer():
    return _tls.tracer


def custom_node(cls):
    """Tell the tracer that ``autograd.Function`` ``cls`` attaches its own
    autograd node to a result at the traced program's level (not inside an
    op), through its ``custom_node(cls)`` method where it has one: a graph of
    the ops its forward calls would lose that node (its backward)."""
    st = _tls
    if st.tracer is None or st.depth:
        return
    seen = getattr(st.tracer, "custom_node", None)
    if seen is not None:
        seen(cls)


def node_count():
    """How many nodes the trace running at this thread's program level has recorded (None
    when none runs there): where an ``autograd.Function``'s forward starts."""
    st = _tls
    if st.tracer is None or st.depth:
        return None
    count = getattr(st.tracer, "node_count", None)
    return count() if count is not None else None


def python_op(cls, start, args, out):
    """Tell the tracer that the nodes recorded since ``start`` (:func:`node_count` when
    ``cls.apply`` began) are the forward of ``autograd.Function`` ``cls`` on ``args`` giving
    ``out`` (TorchScript records such a call as one ``prim::PythonOp`` node)."""
    st = _tls
    if st.tracer is None or st.depth:
        return
    hook = getattr(st.tracer, "python_op", None)
    if hook is not None:
        hook(cls, start, args, out)


# Sizes.  A tracer with a ``read_size(t, which, value)`` method (the jit
# tracer) sees every ``shape``/``size()``/``numel()`` read on its thread
# outside the ops' own implementations, and returns what the program gets
# (jit: ints that know how the graph computes them).  The core calls the hook
# below only while such a trace runs somewhere (_set_size_hook).
_size_traces = [0]
_size_lock = threading.Lock()


def plain_size(which, value):
    """What ``shape``/``size(which)``/``numel()`` return untraced (``value``: the
    shape, or the number of elements for "numel")."""
    return value if which is None or which == "numel" else value[which]


def _read_size(t, which, value):
    st = _tls
    tracer = st.tracer
    read = getattr(tracer, "read_size", None) if tracer is not None and not st.depth else None
    return plain_size(which, value) if read is None else read(t, which, value)


def _sizes_on(tracer, on):
    if getattr(tracer, "read_size", None) is None:
        return
    with _size_lock:
        _size_traces[0] += 1 if on else -1
        _C._set_size_hook(_read_size if _size_traces[0] > 0 else None)


# Collections.  The finalizers and weakref callbacks the garbage collector
# runs in the middle of a traced program (objects left by earlier code: a
# progress bar's ``__del__`` ...) are not the program's: while a collection
# runs on a tracing thread, its trace records nothing, as inside an op's own
# implementation (``depth``), and the compiler's profile hook sees nothing.
_active = [0]                   # traces running, over all threads
_active_lock = threading.Lock()


def _collection_starts(phase, info):
    st = _tls
    if phase == "start" and st.tracer is not None and not st.collecting:
        st.collecting = True
        st.depth += 1


def _collection_ends(phase, info):
    st = _tls
    if phase == "stop" and st.collecting:
        st.collecting = False
        st.depth -= 1


def _count_trace(delta):
    """One trace more or fewer: the tracing layer and the collection hooks are
    on while any thread traces.  The hooks bracket the other ``gc.callbacks``
    (which run in list order at both phases: a library's GC timer reads the
    clock there), the first at the front, the second at the end."""
    with _active_lock:
        _active[0] += delta
        on = _active[0] > 0
        if on != _LAYER.enabled:
            _LAYER.set_enabled(on)
        cbs = gc.callbacks
        for hook in (_collection_starts, _collection_ends):
            while hook in cbs:
                cbs.remove(hook)
        if on:
            cbs.insert(0, _collection_starts)
            cbs.append(_collection_ends)


class tracing:
    """Context: ``tracer`` records the op calls made on this thread."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        if _tls.tracer is not None:
            raise RuntimeError("ptcore.jit.trace: a trace is already running on this thread")
        _tls.tracer = self.tracer
        _tls.depth = 0
        _tls.collecting = False
        _count_trace(1)
        _sizes_on(self.tracer, True)
        return self.tracer

    def __exit__(self, *exc):
        if _tls.tracer is self.tracer:
            _tls.tracer = None
        _count_trace(-1)
        _sizes_on(self.tracer, False)
        return False


class paused:
    """Context: the trace running on this thread records nothing (a traced
    program calls a compiled graph, which the tracer records whole)."""

    def __enter__(self):
        self.tracer = _tls.tracer
        if self.tracer is not None:
            tracing(self.tracer).__exit__()
        return self.tracer

    def __exit__(self, *exc):
        if self.tracer is not None:
            tracing(self.tracer).__enter__()
        return False


class _TracingLayer(_D.Layer):
    order = 30
    name = "tracing"

    def handle(self, entry, opdef, args, kwargs, nxt):
        st = _tls
        tracer = st.tracer
        if tracer is None or st.depth:
            return nxt(args, kwargs)
        if (opdef.namespace, opdef.name) in getattr(tracer, "transparent", ()):
            # a composite the tracer records the ops of (an exporter's
            # decomposition, the compiler's training graphs): its own calls
            # are the trace's; a tracer with ``enter_transparent`` may still
            # record the call as one node when it sees it cannot decompose it
            enter = getattr(tracer, "enter_transparent", None)
            mark = enter(opdef) if enter is not None else None
            tracer.transparent_depth += 1
            try:
                out = nxt(args, kwargs)
            finally:
                tracer.transparent_depth -= 1
            if enter is not None:
                tracer.exit_transparent(mark, opdef, args, kwargs, out)
            else:
                tracer.passed_through(opdef, out)
            return out
        st.depth += 1
        try:
            out = nxt(args, kwargs)
            # recording may call ops itself (a captured tensor becomes a
            # constant through ``detach``): those are not part of the trace
            if opdef.name in CONVERSIONS and opdef.namespace == "Tensor":
                seen = getattr(tracer, "converted_value", None)
                if seen is not None:
                    # (the compiler's tracer: the value becomes a guard of its graph)
                    seen(opdef, args, kwargs, out)
                else:
                    tracer.converted(opdef.name, CONVERSIONS[opdef.name])
            else:
                tracer.record(opdef, args, kwargs, out)
        finally:
            st.depth -= 1
        return out


_LAYER = _D.register_layer(_TracingLayer())
