"""The vmap batching layer of the dispatch point (order 10).

While a ``ptcore.func.vmap`` is running, every op call passes through this
layer.  A call with no batched argument (and no random op) goes straight on;
a call with a batched argument is handed to the batching rules, which run the
op once on the physical tensors (the batch dimension in front) and wrap the
result again.  Nested vmaps are *levels*: the rules handle the highest level
present among the arguments and re-enter this layer for the ones below.

The layer is off (costs nothing) when no vmap is active.  The batched-tensor
type and the rules live above the op layer (:mod:`ptcore.func._batched`,
:mod:`ptcore.func._batching_rules`) and install themselves with
:func:`set_handler`.
"""
import threading

from ptcore._dispatch import dispatcher as _D

__all__ = ["Frame", "push", "pop", "frames", "current_levels", "set_handler", "frame_of",
           "function_driver", "is_batched"]


class Frame:
    """One active vmap: its ``level``, batch ``size`` and ``randomness`` mode."""
    __slots__ = ("level", "size", "randomness")

    def __init__(self, level, size, randomness):
        self.level = level
        self.size = size
        self.randomness = randomness

    def __repr__(self):
        return f"Frame(level={self.level}, size={self.size}, randomness={self.randomness!r})"


class _State(threading.local):
    def __init__(self):
        self.frames = []            # active vmaps of this thread, outermost first


_st = _State()
_level_counter = [0]
_active = [0]                       # active frames over all threads
_lock = threading.Lock()
# handle(layer, entry, opdef, args, kwargs, nxt) -> result: installed by the rules module
_handler = [None]
# function_driver[0](cls, args, kwargs, uses_setup): an autograd.Function's
# apply while a vmap runs (NotImplemented when no argument is batched); set by
# ptcore.func._function_vmap
function_driver = [None]


def is_batched(t):
    """Whether ``t`` is a vmap batched tensor (``ptcore.func._batched.BatchedTensor``)."""
    return hasattr(type(t), "_bt_level")


def set_handler(fn):
    _handler[0] = fn


def frames():
    """The active vmap frames of this thread, outermost first."""
    return _st.frames


def frame_of(level):
    for f in _st.frames:
        if f.level == level:
            return f
    return None


def current_levels():
    return [f.level for f in _st.frames]


def push(size, randomness):
    """Enter a vmap level of batch ``size``; returns its :class:`Frame`."""
    with _lock:
        _level_counter[0] += 1
        level = _level_counter[0]
        _active[0] += 1
        on = _active[0] > 0
    f = Frame(level, size, randomness)
    _st.frames.append(f)
    _LAYER.set_enabled(on)
    return f


def pop(frame):
    fr = _st.frames
    if frame in fr:
        fr.remove(frame)
    with _lock:
        _active[0] -= 1
        on = _active[0] > 0
    _LAYER.set_enabled(on)


class _BatchingLayer(_D.Layer):
    order = 10
    name = "vmap"

    def handle(self, entry, opdef, args, kwargs, nxt):
        h = _handler[0]
        if h is None or not _st.frames:
            return nxt(args, kwargs)
        return h(self, entry, opdef, args, kwargs, nxt)


_LAYER = _D.register_layer(_BatchingLayer())
