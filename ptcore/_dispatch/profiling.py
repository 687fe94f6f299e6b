"""The profiler layer of the dispatch point: while a profile records, every
op call (and every ``record_function`` range) becomes a timed event with its
nesting, thread and, optionally, input shapes.  The public API is
:mod:`ptcore.profiler` (and :mod:`ptcore.autograd.profiler`)."""
import threading
import time

from ptcore._tensor import _TensorBase
from ptcore._tensor import _host_allocated_bytes
from ptcore._dispatch import dispatcher as _D
from ptcore._dispatch.declarations import OPERATOR_FORMS, PROTOCOL_METHODS

__all__ = ["Event", "start_recording", "stop_recording", "push_range", "pop_range", "recording"]


def _event_name(name):
    """The name of an op's event: ``aten::`` and the aten op torch's profiler
    shows (an operator method's from its declaration, ``__getitem__``'s
    ``index``), else the op's name without its underscores."""
    form = OPERATOR_FORMS.get(name)
    if form is not None:
        return "aten::" + (form.aten or form.op)
    protocol = PROTOCOL_METHODS.get(name)
    if protocol is not None and protocol.aten is not None:
        return "aten::" + protocol.aten
    return "aten::" + (name.lstrip("_") if not name.startswith("__") else name.strip("_"))


def _allocated():
    return _host_allocated_bytes()


class Event:
    """One timed range: an op (``aten::add``) or a user ``record_function``."""
    __slots__ = ("name", "start_ns", "end_ns", "thread", "depth", "input_shapes", "children_ns",
                 "is_user", "id", "parent", "mem_start", "mem", "children_mem")

    def __init__(self, name, start_ns, thread, depth, input_shapes, is_user, parent):
        self.name = name
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.thread = thread
        self.depth = depth
        self.input_shapes = input_shapes
        self.children_ns = 0
        self.is_user = is_user
        self.parent = parent
        self.id = 0
        self.mem_start = 0          # host bytes allocated (profile_memory): at the start,
        self.mem = 0                # net over the range,
        self.children_mem = 0       # and by its children


class _Session:
    def __init__(self, record_shapes, profile_memory=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.events = []
        self.lock = threading.Lock()


class _Tls(threading.local):
    def __init__(self):
        self.stack = []


_tls = _Tls()
_session = [None]


def recording():
    return _session[0] is not None


def _shapes(args, kwargs):
    out = []
    for a in args:
        if isinstance(a, _TensorBase):
            out.append(list(a.shape))
        elif type(a) in (list, tuple) and a and isinstance(a[0], _TensorBase):
            out.append([list(t.shape) for t in a if isinstance(t, _TensorBase)])
        else:
            out.append([])
    return out


def push_range(name, args=(), kwargs=None, is_user=False):
    s = _session[0]
    if s is None:
        return None
    stack = _tls.stack
    parent = stack[-1] if stack else None
    ev = Event(name, 0, threading.get_ident(), len(stack),
               _shapes(args, kwargs) if s.record_shapes else None, is_user, parent)
    stack.append(ev)
    if s.profile_memory:
        ev.mem_start = _allocated()
    ev.start_ns = time.perf_counter_ns()
    return ev


def pop_range(ev):
    if ev is None:
        return
    ev.end_ns = time.perf_counter_ns()
    stack = _tls.stack
    if stack and stack[-1] is ev:
        stack.pop()
    elif ev in stack:
        stack.remove(ev)
    s = _session[0]
    if s is not None and s.profile_memory:
        ev.mem = _allocated() - ev.mem_start
    if ev.parent is not None:
        ev.parent.children_ns += ev.end_ns - ev.start_ns
        ev.parent.children_mem += ev.mem
    if s is not None:
        with s.lock:
            ev.id = len(s.events)
            s.events.append(ev)


class _ProfilerLayer(_D.Layer):
    order = 5
    name = "profiler"

    def handle(self, entry, opdef, args, kwargs, nxt):
        name = _event_name(opdef.name)
        stack = _tls.stack
        if stack and stack[-1].name == name and not stack[-1].is_user:
            # one spelling of an op forwarding to another (F.relu -> ptcore.relu,
            # Tensor.sum -> ptcore.sum): one call, one event, as in torch
            return nxt(args, kwargs)
        ev = push_range(name, args, kwargs)
        try:
            return nxt(args, kwargs)
        finally:
            pop_range(ev)


_LAYER = _D.register_layer(_ProfilerLayer())


def start_recording(record_shapes=False, profile_memory=False):
    if _session[0] is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    _session[0] = _Session(record_shapes, profile_memory)
    _tls.stack = []
    _LAYER.set_enabled(True)


def stop_recording():
    s = _session[0]
    _session[0] = None
    _LAYER.set_enabled(False)
    return [] if s is None else sorted(s.events, key=lambda e: (e.start_ns, e.depth))
