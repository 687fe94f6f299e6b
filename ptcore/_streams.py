"""``ptcore.Stream`` and ``ptcore.Event``: device-generic streams and events (torch.Stream,
torch.Event), built on the current accelerator.

A stream or event of the CUDA device wraps a :class:`ptcore.cuda.Stream` /
:class:`ptcore.cuda.Event`.  The CPU has a single, always-complete stream, as torch's: its
``query()`` is True, ``synchronize()`` returns at once, and a CPU event cannot be recorded
(``RuntimeError``, as torch).  Without a device argument the current accelerator's device
is used, the CPU when there is none.
"""
import builtins

import ptcore.cuda
from ptcore import accelerator
from ptcore._tensor import device as _device

__all__ = ["Stream", "Event"]

_DEVICE_TYPE_CODE = {"cpu": 0, "cuda": 1}
_NO_CPU_EVENTS = "cpu backend doesn't support events."


def _resolve_device(device, who):
    """The ptcore.device a Stream/Event lives on."""
    if device is None:
        acc = accelerator.current_accelerator()
        if acc is None:
            return _device("cpu")
        return _device("cuda", ptcore.cuda.current_device())
    if isinstance(device, builtins.int) and not isinstance(device, builtins.bool):
        if not accelerator.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return _device("cuda", device)
    if not isinstance(device, (str, _device)):
        raise TypeError(f"{who}: device must be a ptcore.device, str or int, got "
                        f"{type(device).__name__}")
    dev = _device(device)
    if dev.type == "cpu":
        return dev
    if dev.type != "cuda":
        raise RuntimeError(f"{who}: ptcore has no support for {dev.type} devices")
    if not ptcore.cuda.is_available():
        raise RuntimeError(f"{who}: no CUDA device is available")
    return _device("cuda", ptcore.cuda.current_device() if dev.index is None else dev.index)


class Stream:
    """An in-order queue of work on a device (``torch.Stream(device=None, *, priority=0)``).

    Parameters
    ----------
    device : ptcore.device or str or int, optional
        The stream's device (default: the current accelerator's, else the CPU).
    priority : int, default 0
        0 or negative (higher priority).
    """

    def __init__(self, device=None, *, priority=0):
        if isinstance(priority, builtins.bool) or not isinstance(priority, builtins.int):
            raise TypeError(f"Stream(): priority must be an int, got {type(priority).__name__}")
        self._device = _resolve_device(device, "Stream()")
        self._impl = None
        if self._device.type == "cuda":
            self._impl = ptcore.cuda.Stream(self._device, priority=priority)

    @classmethod
    def _wrap(cls, cuda_stream):
        """A generic stream over an existing ptcore.cuda.Stream."""
        s = cls.__new__(cls)
        s._device = _device("cuda", cuda_stream.device_index)
        s._impl = cuda_stream
        return s

    @property
    def device(self):
        return self._device

    @property
    def device_type(self):
        return _DEVICE_TYPE_CODE[self._device.type]

    @property
    def device_index(self):
        return -1 if self._device.index is None else self._device.index

    @property
    def stream_id(self):
        return 0 if self._impl is None else self._impl.stream_id

    def native_handle(self):
        return 0 if self._impl is None else self._impl.cuda_stream

    def is_capturing(self):
        return False

    def query(self):
        """True when all work queued on the stream has completed."""
        return True if self._impl is None else self._impl.query()

    def synchronize(self):
        """Wait for all work queued on the stream."""
        if self._impl is not None:
            self._impl.synchronize()

    def wait_event(self, event):
        """Make work queued on this stream from now on wait for ``event``."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event: expected a ptcore.Event, got {type(event).__name__}")
        event.wait(self)

    def wait_stream(self, stream):
        """Make work queued on this stream from now on wait for ``stream``'s work so far."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream: expected a ptcore.Stream, got {type(stream).__name__}")
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one when None) on this stream; returns it."""
        if event is None:
            event = Event(self._device)
        event.record(self)
        return event

    def __enter__(self):
        if self._impl is not None:
            self._impl.__enter__()
        return self

    def __exit__(self, *exc):
        if self._impl is not None:
            return self._impl.__exit__(*exc)
        return False

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return NotImplemented
        return self._device == other._device and self.stream_id == other.stream_id

    def __hash__(self):
        return hash((self._device.type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"ptcore.Stream device_type={self._device.type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a stream's work (``torch.Event(device=None, *, enable_timing=False,
    blocking=False, interprocess=False)``).

    Parameters
    ----------
    device : ptcore.device or str or int, optional
        The event's device (default: the current accelerator's, else the CPU, whose events
        cannot be recorded).
    enable_timing : bool, default False
        Needed for :meth:`elapsed_time`.
    blocking, interprocess : bool, default False
        As :class:`ptcore.cuda.Event`.
    """

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self._device = _resolve_device(device, "Event()")
        self.enable_timing = builtins.bool(enable_timing)
        self._impl = None
        if self._device.type == "cuda":
            self._impl = ptcore.cuda.Event(enable_timing=enable_timing, blocking=blocking,
                                           interprocess=interprocess)

    @property
    def device(self):
        return self._device

    @property
    def event_id(self):
        return 0 if self._impl is None else self._impl.cuda_event

    def _cuda_stream(self, stream):
        if stream is None:
            return None
        if isinstance(stream, Stream):
            if stream._device != self._device:
                raise RuntimeError(f"Event device {self._device} does not match the stream's "
                                   f"device {stream._device}")
            return stream._impl
        return stream                               # a ptcore.cuda.Stream

    def record(self, stream=None):
        """Record the event on ``stream`` (default: the current stream)."""
        if self._impl is None:
            raise RuntimeError(_NO_CPU_EVENTS)
        self._impl.record(self._cuda_stream(stream))

    def wait(self, stream=None):
        """Make ``stream`` (default: the current stream) wait for the event."""
        if self._impl is not None:
            self._impl.wait(self._cuda_stream(stream))

    def query(self):
        """True when the work recorded before the event has completed."""
        return True if self._impl is None else self._impl.query()

    def synchronize(self):
        """Wait for the work recorded before the event."""
        if self._impl is not None:
            self._impl.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event``."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time: expected a ptcore.Event, got "
                            f"{type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._impl is None or end_event._impl is None:
            raise RuntimeError(_NO_CPU_EVENTS)
        return self._impl.elapsed_time(end_event._impl)

    def ipc_handle(self):
        raise NotImplementedError("Event.ipc_handle: interprocess event handles are not "
                                  "supported yet")

    def __repr__(self):
        return (f"ptcore.Event device_type={self._device.type}, "
                f"device_index={-1 if self._device.index is None else self._device.index}, "
                f"event_id={self.event_id}")
