"""``ptcore.futures``: :class:`Future` (the result of :func:`ptcore.jit.fork` and of
asynchronous collectives), :func:`collect_all` and :func:`wait_all`, as ``torch.futures``.
ptcore's futures are completed by the code that creates them or by :meth:`Future.set_result`
(there is no background executor)."""
import threading
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]


T = TypeVar("T")


class Future(Generic[T]):
    """A value (or an error) that becomes available later (``torch.futures.Future``); generic
    in its value's type, as torch's (``Future[Tensor]`` in annotations).

    Parameters
    ----------
    devices : list, optional
        Accepted for torch's signature (the devices whose streams the value uses).
    """

    def __init__(self, *, devices=None):
        self._cv = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []

    def done(self):
        """True once a result or an error is set."""
        return self._done

    def wait(self):
        """Block until the future completes; returns its value or raises its error."""
        with self._cv:
            self._cv.wait_for(lambda: self._done)
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self):
        """The value of a completed future (its error raised)."""
        if not self._done:
            raise RuntimeError("Future.value(): the future is not completed yet")
        if self._exc is not None:
            raise self._exc
        return self._value

    def _complete(self, value, exc):
        with self._cv:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cv.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """Complete the future with ``result`` (running the callbacks)."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the error ``result``."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{type(result).__name__} is not an Exception")
        self._complete(None, result)

    def add_done_callback(self, callback):
        """Call ``callback(self)`` once the future completes (now if it has)."""
        with self._cv:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new future completed with ``callback(self)`` once this one completes."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:
                out.set_exception(e)
        self.add_done_callback(run)
        return out

    def __repr__(self):
        return f"<ptcore.futures.Future {'done' if self._done else 'pending'}>"


def _completed(value=None, exc=None):
    fut = Future()
    fut._complete(value, exc)
    return fut


def collect_all(futures):
    """A future completed with the list of ``futures`` once all of them complete."""
    futures = list(futures)
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"collect_all: expected Futures, got {type(f).__name__}")
    out = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Wait for all ``futures``; the list of their values (the first error is raised)."""
    return [f.wait() for f in collect_all(futures).wait()]
