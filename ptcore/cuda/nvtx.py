"""``ptcore.cuda.nvtx``: NVTX range and mark annotations (``torch.cuda.nvtx``).

ptcore does not link the NVTX library, so the annotations are kept only as a per-thread
range depth (what NVTX returns): scripts that annotate their steps run unchanged and
profilers see ptcore's own records (:mod:`ptcore.profiler`)."""
import contextlib
import itertools
import threading

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_local = threading.local()
_ids = itertools.count(1)


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def range_push(msg):
    """Push a range named ``msg``; returns its zero-based depth."""
    stack = _stack()
    stack.append(str(msg))
    return len(stack) - 1


def range_pop():
    """Pop the innermost range; returns its depth (-1 when none is open, as NVTX)."""
    stack = _stack()
    if not stack:
        return -1
    stack.pop()
    return len(stack)


def range_start(msg):
    """Start a range that may end on another thread; returns its id."""
    return next(_ids)


def range_end(range_id):
    """End the range ``range_id`` returned by :func:`range_start`."""


def mark(msg):
    """An instantaneous event named ``msg``."""


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """``with range("step {}", i):`` pushes ``msg.format(*args, **kwargs)`` for the block."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
