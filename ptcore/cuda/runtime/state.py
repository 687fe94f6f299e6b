"""Process state of ptcore's CUDA runtime: the driver, lazy initialisation,
the thread-local current device and current streams, and the caching
allocator of each device (a :class:`~ptcore.cuda.allocator.device_allocators.Backend` over
the driver).

Everything here talks to a device only through the driver
:func:`get_driver` creates (the one interface,
:class:`ptcore.cuda.driver.interface.Driver`); the emulated device
(``PTCORE_CUDA_EMULATE``) and the real one share all of it.  What lives
above the runtime (the device's tensors and op kernels, the stream pools)
plugs in through :func:`on_init` and :func:`on_reset`.
"""
import importlib.util as _ilu
import os
import threading

from ptcore.cuda.allocator import device_allocators as _allocator
from ptcore.cuda.allocator.device_allocators import Backend, CachingAllocator

__all__ = ["probe", "lazy_init", "get", "get_driver", "emulation_requested", "is_initialized",
           "current_device", "set_device", "current_stream_handle", "set_current_stream_handle",
           "allocator", "on_init", "on_reset", "reset"]

class CudaUnavailableError(RuntimeError, AssertionError):
    """A CUDA call on a machine where ptcore cannot use CUDA.  Both a
    RuntimeError (torch built with CUDA, no driver or device) and an
    AssertionError (torch's CPU-only build: "Torch not compiled with CUDA
    enabled"), so code written against either catches it."""


_lock = threading.RLock()
_state = {"reason": None, "driver": None, "initialized": False}


_driver = None
_driver_lock = threading.Lock()


def emulation_requested():
    """Number of emulated devices asked for by ``PTCORE_CUDA_EMULATE``
    (0 when unset/empty/``0``).  Raises ValueError for a malformed value."""
    v = os.environ.get("PTCORE_CUDA_EMULATE", "").strip()
    if v in ("", "0"):
        return 0
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"PTCORE_CUDA_EMULATE must be a device count (e.g. 1), got {v!r}") from None
    if n < 0 or n > 16:
        raise ValueError(f"PTCORE_CUDA_EMULATE must be between 0 and 16, got {n}")
    return n


def get_driver():
    """The process's driver (created on the first call): the emulated one
    when ``PTCORE_CUDA_EMULATE`` asks for it, else the real CUDA driver.
    Raises RuntimeError (with the reason) when neither is usable."""
    global _driver
    d = _driver
    if d is not None:
        return d
    with _driver_lock:
        if _driver is None:
            n = emulation_requested()
            if n:
                # lazy: a driver and the libraries it wraps load at CUDA's first use, not at import
                from ptcore.cuda.emulated.driver import EmulatedDriver
                _driver = EmulatedDriver(n)
            else:
                # lazy: a driver and the libraries it wraps load at CUDA's first use, not at import
                from ptcore.cuda.driver.real import RealDriver
                _driver = RealDriver()
        return _driver


class _ThreadState(threading.local):
    """This thread's current device and current stream per device.  The
    class attributes are the defaults, so reading them never goes through
    a missing attribute (an AttributeError raised and caught: 0.3 us)."""
    device = None          # int; None: device 0
    streams = None         # {device: stream handle}; None: the default streams


_tls = _ThreadState()


def probe():
    """``(available, reason)`` -- never raises; cached per process."""
    r = _state["reason"]
    if r is not None:
        return r
    with _lock:
        if _state["reason"] is not None:
            return _state["reason"]
        try:
            n = emulation_requested()
        except ValueError as e:
            r = (False, str(e))
        else:
            if n:
                r = (True, None)
            elif _ilu.find_spec("cuda") is None or _ilu.find_spec("cuda.bindings") is None:
                r = (False, "the 'cuda' extra is not installed (pip install ptcore[cuda] for cuda-bindings)")
            else:
                try:
                    get_driver()
                    r = (True, None)
                except Exception as e:  # a broken install must not break is_available()
                    r = (False, f"{e}")
        _state["reason"] = r
        return r


def lazy_init(what="CUDA"):
    """The driver, initialising the runtime on first use.  Raises
    RuntimeError naming ``what`` when CUDA is unavailable."""
    d = _state["driver"]
    if d is not None:
        return d
    ok, why = probe()
    if not ok:
        raise CudaUnavailableError(f"{what}: CUDA is not available: {why}")
    with _lock:
        if _state["driver"] is None:
            d = get_driver()
            _allocator._set_allocator_factory(_make_allocator, current_device)
            _state["driver"] = d
            _state["initialized"] = True
            for fn in _INIT_HOOKS:
                fn()
        return _state["driver"]


def get():
    """The driver if the runtime is initialised, else None."""
    return _state["driver"]


def is_initialized():
    return _state["initialized"]


def device_count():
    if not probe()[0]:
        return 0
    return lazy_init("device_count()").device_count()


def current_device():
    d = _tls.device
    return 0 if d is None else d


def check_index(idx, what="device"):
    n = lazy_init(what).device_count()
    if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n:
        raise RuntimeError(f"{what}: invalid device ordinal {idx!r}: this machine has {n} CUDA "
                           f"device{'s' if n != 1 else ''}")
    return idx


def set_device(idx):
    drv = lazy_init("set_device()")
    check_index(idx, "set_device()")
    drv.set_current(idx)
    _tls.device = idx


def device_index(device, what="CUDA"):
    """Ordinal of a device argument (None: the current device)."""
    if device is None:
        return current_device()
    if isinstance(device, bool):
        raise TypeError(f"{what}: expected a cuda device, got {device!r}")
    if isinstance(device, int):
        return device
    from ptcore import device as _dev
    if isinstance(device, str):
        device = _dev(device)
    typ = getattr(device, "type", None)
    if typ != "cuda":
        raise ValueError(f"{what}: expected a cuda device, but got: {device}")
    return current_device() if device.index is None else device.index


def current_stream_handle(device):
    s = _tls.streams
    if s is None:
        return 0
    return s.get(device, 0)


def set_current_stream_handle(device, handle):
    s = _tls.streams
    if s is None:
        s = _tls.streams = {}
    s[device] = handle


class DriverBackend(Backend):
    """The caching allocator's backend on one device of the driver."""

    def __init__(self, drv, device):
        self.drv = drv
        self.device = device

    def raw_alloc(self, nbytes):
        # as PyTorch's allocator: a graph's pool may grow while a stream
        # captures (cuMemAlloc under the relaxed capture mode)
        drv = self.drv
        old = drv.exchange_capture_mode("relaxed")
        try:
            return drv.mem_alloc(self.device, nbytes)
        finally:
            drv.exchange_capture_mode(old)

    def raw_free(self, ptr):
        self.drv.mem_free(self.device, ptr)

    def mem_get_info(self):
        return self.drv.mem_get_info(self.device)

    def event_create(self):
        return self.drv.event_create(self.device)

    def event_record(self, event, stream):
        self.drv.set_current(self.device)
        self.drv.event_record(event, stream)

    def event_query(self, event):
        return self.drv.event_query(event)

    def event_synchronize(self, event):
        self.drv.event_synchronize(event)

    def event_destroy(self, event):
        self.drv.event_destroy(event)


def _make_allocator(idx):
    drv = lazy_init("the caching allocator")
    check_index(idx, "the caching allocator")
    return CachingAllocator(DriverBackend(drv, idx), idx)


def allocator(idx):
    """The caching allocator of device ``idx`` (created on first use)."""
    lazy_init("the caching allocator")
    return _allocator._get_allocator(idx, create=True)


_INIT_HOOKS = []
_RESET_HOOKS = []


def on_init(fn):
    """Call ``fn()`` once the driver is up, at the first CUDA use (and again
    after a :func:`reset`): ``ptcore.cuda`` installs the device's tensors and
    op kernels this way."""
    _INIT_HOOKS.append(fn)
    return fn


def on_reset(fn):
    """Call ``fn()`` at every :func:`reset`, first (a module's cache of
    device tensors lets them go)."""
    _RESET_HOOKS.append(fn)
    return fn


def reset():
    """Forget the probe, the driver, the allocators and this thread's
    current device/streams (tests switch ``PTCORE_CUDA_EMULATE`` in-process
    with this).  Internal; every CUDA tensor must be gone first."""
    for fn in _RESET_HOOKS:
        fn()
    global _driver
    with _lock:
        for a in list(_allocator._allocators.values()):
            try:
                a.empty_cache()
            except Exception:
                pass
        _allocator._allocators.clear()
        _allocator._set_allocator_factory(None, None)
        _state.update(reason=None, driver=None, initialized=False)
        _driver = None
        _tls.device = _tls.streams = None
