"""CUDA streams and events (``torch.cuda.Stream``, ``torch.cuda.Event``).

A :class:`Stream` wraps a driver stream handle (``0`` is the legacy default
stream, which is what :func:`default_stream` returns, as in PyTorch).  New
streams come from a per-device pool of 32 non-blocking streams handed out
round robin (PyTorch's stream pool), so creating streams in a loop does not
exhaust the driver.  An :class:`Event` creates its driver event lazily, on
the device of the first stream it is recorded on.
"""
import threading

from ptcore.cuda.runtime import state as _runtime

__all__ = ["Stream", "ExternalStream", "Event", "StreamContext", "stream", "current_stream",
           "default_stream", "set_stream"]

_POOL_SIZE = 32
_pool_lock = threading.Lock()
_pools = {}          # (device, priority) -> [handles], next index


def _reset():
    with _pool_lock:
        _pools.clear()


_runtime.on_reset(_reset)


def _pool_stream(device, priority):
    drv = _runtime.lazy_init("Stream()")
    key = (device, priority)
    with _pool_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = [[], 0]
        handles = pool[0]
        if len(handles) < _POOL_SIZE:
            h = drv.stream_create(device, priority)
            handles.append(h)
            return h
        h = handles[pool[1] % _POOL_SIZE]
        pool[1] += 1
        return h


def _device_obj(idx):
    from ptcore import device
    return device("cuda", idx)


class Stream:
    """A CUDA stream: work queued on it runs in order.

    Parameters
    ----------
    device : ptcore.device or int or str, optional
        Device of the stream (default: the current device).
    priority : int, default 0
        0 or -1 (higher priority), as PyTorch's ``Stream(priority=-1)``.
    """

    def __init__(self, device=None, priority=0, **kwargs):
        stream_id = kwargs.pop("_handle", None)
        if kwargs:
            raise TypeError(f"Stream() got unexpected keyword arguments {sorted(kwargs)}")
        idx = _runtime.device_index(device, "Stream()")
        _runtime.check_index(idx, "Stream()")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"Stream(): priority must be an int, got {type(priority).__name__}")
        self.device_index = idx
        self.priority = max(-1, min(0, priority))
        self.cuda_stream = stream_id if stream_id is not None else _pool_stream(idx, self.priority)

    @classmethod
    def _wrap(cls, idx, handle, priority=0):
        s = cls.__new__(cls)
        s.device_index = idx
        s.priority = priority
        s.cuda_stream = handle
        return s

    @property
    def device(self):
        return _device_obj(self.device_index)

    @property
    def device_type(self):
        return 1        # DeviceType::CUDA

    @property
    def stream_id(self):
        return self.cuda_stream

    def _drv(self):
        drv = _runtime.lazy_init("Stream")
        drv.set_current(self.device_index)
        return drv

    def query(self):
        """True when all work queued on this stream has completed."""
        return self._drv().stream_query(self.cuda_stream)

    def synchronize(self):
        """Wait for all work queued on this stream."""
        self._drv().stream_synchronize(self.cuda_stream)

    def wait_event(self, event):
        """Make work queued on this stream from now on wait for ``event``."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event: expected an Event, got {type(event).__name__}")
        event.wait(self)

    def wait_stream(self, stream):
        """Make work queued on this stream from now on wait for the work
        queued on ``stream`` so far."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream: expected a Stream, got {type(stream).__name__}")
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one when None) on this stream; returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __cuda_stream__(self):
        return (0, self.cuda_stream)

    def __enter__(self):
        """``with stream:`` makes it current (as ``ptcore.cuda.stream(stream)``)."""
        ctx = StreamContext(self)
        self.__dict__.setdefault("_contexts", []).append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self.__dict__["_contexts"].pop().__exit__(*exc)

    def __eq__(self, other):
        if isinstance(other, Stream):
            return self.cuda_stream == other.cuda_stream and self.device_index == other.device_index
        return NotImplemented

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<ptcore.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class ExternalStream(Stream):
    """A stream created elsewhere (e.g. by CuPy), wrapped by its handle."""

    def __init__(self, stream_ptr, device=None):
        idx = _runtime.device_index(device, "ExternalStream()")
        _runtime.check_index(idx, "ExternalStream()")
        self.device_index = idx
        self.priority = 0
        self.cuda_stream = int(stream_ptr)


def current_stream(device=None):
    """The stream work is queued on for ``device`` on this thread."""
    idx = _runtime.device_index(device, "current_stream()")
    _runtime.check_index(idx, "current_stream()")
    return Stream._wrap(idx, _runtime.current_stream_handle(idx))


def default_stream(device=None):
    """The default (legacy, handle 0) stream of ``device``."""
    idx = _runtime.device_index(device, "default_stream()")
    _runtime.check_index(idx, "default_stream()")
    return Stream._wrap(idx, 0)


def set_stream(stream):
    """Make ``stream`` the current stream of its device (and its device the
    current device), as ``torch.cuda.set_stream``.  None is a no-op."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream: expected a Stream, got {type(stream).__name__}")
    _runtime.set_device(stream.device_index)
    _runtime.set_current_stream_handle(stream.device_index, stream.cuda_stream)


class StreamContext:
    """Context manager making ``stream`` current (and its device); None is a
    no-op.  On exit the previous streams and device come back."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream(): expected a Stream or None, got {type(stream).__name__}")
        self.stream = stream
        self._saved = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return s
        cur_dev = _runtime.current_device()
        self._saved = (cur_dev, _runtime.current_stream_handle(cur_dev),
                       _runtime.current_stream_handle(s.device_index))
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self.stream is None or self._saved is None:
            return False
        cur_dev, cur_handle, dst_handle = self._saved
        _runtime.set_current_stream_handle(self.stream.device_index, dst_handle)
        _runtime.set_device(cur_dev)
        _runtime.set_current_stream_handle(cur_dev, cur_handle)
        self._saved = None
        return False


def stream(stream):
    """``with ptcore.cuda.stream(s):`` queues work on ``s``."""
    return StreamContext(stream)


class Event:
    """A CUDA event: a marker in a stream's work.

    Parameters
    ----------
    enable_timing : bool, default False
        Needed for :meth:`elapsed_time`.
    blocking : bool, default False
        :meth:`synchronize` blocks the thread instead of spinning.
    interprocess : bool, default False
        Shareable between processes (then timing is off).
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self._handle = None
        self._device = None
        self._recorded = False

    @property
    def cuda_event(self):
        return self._handle or 0

    @property
    def device(self):
        return None if self._device is None else _device_obj(self._device)

    def _create(self, device):
        if self._handle is None:
            drv = _runtime.lazy_init("Event")
            self._handle = drv.event_create(device, timing=self.enable_timing and not self.interprocess,
                                            blocking=self.blocking, interprocess=self.interprocess)
            self._device = device
        elif device != self._device:
            raise RuntimeError(f"Event device cuda:{device} does not match recording stream's "
                               f"device cuda:{self._device}")

    def record(self, stream=None):
        """Record on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        self._create(stream.device_index)
        drv = stream._drv()
        drv.event_record(self._handle, stream.cuda_stream)
        self._recorded = True

    def wait(self, stream=None):
        """Make ``stream`` (default: the current stream) wait for this event."""
        if stream is None:
            stream = current_stream()
        if self._handle is None:
            return                  # never recorded: nothing to wait for (as CUDA)
        stream._drv().stream_wait_event(stream.cuda_stream, self._handle)

    def query(self):
        """True when the work recorded before this event has completed."""
        if self._handle is None:
            return True
        return _runtime.lazy_init("Event").event_query(self._handle)

    def synchronize(self):
        """Wait until the work recorded before this event has completed."""
        if self._handle is None:
            return
        _runtime.lazy_init("Event").event_synchronize(self._handle)

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event`` (both recorded with
        ``enable_timing=True`` and completed)."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time: expected an Event, got {type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _runtime.lazy_init("Event").event_elapsed_ms(self._handle, end_event._handle)

    def ipc_handle(self):
        raise NotImplementedError("Event.ipc_handle: interprocess event handles are not supported yet")

    def __del__(self):
        h = self._handle
        if h is not None:
            self._handle = None
            drv = _runtime.get()
            if drv is not None:
                try:
                    drv.event_destroy(h)
                except Exception:
                    pass

    def __repr__(self):
        if self._handle is None:
            return "<ptcore.cuda.Event uninitialized>"
        return f"<ptcore.cuda.Event {self._handle:#x}>"
