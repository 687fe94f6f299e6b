"""``ptcore.cpu`` (``torch.cpu``): the CPU device's module — availability,
device count, a no-op ``synchronize``, streams that run in order, and the
deprecated ``ptcore.cpu.amp`` spellings."""
from ptcore.cpu import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize",
           "set_device", "Stream", "current_stream", "stream", "StreamContext"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    """Accepted and ignored, as torch.cpu.set_device."""


def synchronize(device=None):
    """CPU work is synchronous: returns at once."""


class Stream:
    """The CPU 'stream': work runs in order, so there is nothing to wait for."""

    def __init__(self, priority=-1):
        self.priority = priority

    def wait_stream(self, stream):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True

    def record_event(self, event=None):
        return event


_default_stream = Stream()


def current_stream(device=None):
    return _default_stream


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)
