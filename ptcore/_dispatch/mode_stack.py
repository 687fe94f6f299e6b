"""A per-thread stack of modes (``TorchFunctionMode``, ``TorchDispatchMode``):
the innermost mode handles a call; while it does, it is popped so that the
calls it makes reach the modes below it."""
import threading

__all__ = ["ModeStack"]


class ModeStack(threading.local):
    """The modes of one kind entered on the current thread, innermost last."""

    def __init__(self):
        self.modes = []

    def current(self):
        return self.modes[-1] if self.modes else None

    def stack(self):
        return list(self.modes)

    def pop_temporarily(self):
        """Context: the innermost mode, off the stack while the block runs."""
        return _Popped(self)


class _Popped:
    def __init__(self, st):
        self.st = st

    def __enter__(self):
        self.mode = self.st.modes.pop()
        return self.mode

    def __exit__(self, *exc):
        self.st.modes.append(self.mode)
        return False
