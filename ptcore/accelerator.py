"""``ptcore.accelerator``: the current accelerator (CUDA when usable), as
``torch.accelerator``.  On a machine without one, ``is_available()`` is
False, ``current_accelerator()`` None, ``device_count()`` 0, and the calls
that need a device raise ``RuntimeError``."""
import builtins

import ptcore.cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "empty_host_cache",
           "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    return ptcore.cuda


def is_available():
    """True when an accelerator (a usable CUDA device) is present."""
    return _cuda().is_available()


def current_accelerator(check_available=False):
    """``device('cuda')`` when an accelerator is available, else None."""
    import ptcore
    if _cuda().is_available():
        return ptcore.device("cuda")
    return None


def device_count():
    """Number of accelerator devices (0 without one)."""
    return _cuda().device_count() if _cuda().is_available() else 0


def _require():
    if not is_available():
        raise RuntimeError(_NONE)


def current_device_index():
    """Index of the current accelerator device."""
    _require()
    return _cuda().current_device()


current_device_idx = current_device_index


def _index(device):
    import ptcore
    if isinstance(device, builtins.int) and not isinstance(device, builtins.bool):
        return device
    if isinstance(device, (str, ptcore.device)):
        dev = ptcore.device(device)
        if dev.index is not None:
            return dev.index
    raise ValueError(f"Expected a ptcore.device with a specified index or an integer, but got:"
                     f"{device}")


def set_device_index(device):
    """Make ``device`` (an index or an indexed device) the current accelerator device."""
    idx = _index(device)
    _require()
    _cuda().set_device(idx)


set_device_idx = set_device_index


def synchronize(device=None):
    """Wait for the work queued on ``device`` (the current one by default)."""
    _require()
    _cuda().synchronize(device)


class device_index:
    """Context manager: ``device`` is the current accelerator device inside
    (``None`` makes it a no-op, as torch)."""

    def __init__(self, device):
        self.idx = None if device is None else _index(device)
        self.prev = None

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev)
        return False


# -- memory and streams: the current accelerator's (ptcore.cuda's) ---------------------

def _device_arg(device_index):
    return None if device_index is None else _index(device_index)


def empty_cache():
    """Release the cached, unused device memory."""
    _require()
    _cuda().empty_cache()


def empty_host_cache():
    """Release the cached pinned host memory."""
    _require()


def memory_stats(device_index=None, /):
    """The device allocator's statistics (a dict)."""
    _require()
    return _cuda().memory_stats(_device_arg(device_index))


def memory_allocated(device_index=None, /):
    """Bytes of device memory held by live tensors."""
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    """Peak of :func:`memory_allocated` since the last reset."""
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    """Bytes of device memory held by the caching allocator."""
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    """Peak of :func:`memory_reserved` since the last reset."""
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    """Reset the allocator's accumulated counters."""
    _require()
    _cuda().reset_accumulated_memory_stats(_device_arg(device_index))


def reset_peak_memory_stats(device_index=None, /):
    """Reset the allocator's peak counters."""
    _require()
    _cuda().reset_peak_memory_stats(_device_arg(device_index))


def get_memory_info(device_index=None, /):
    """(free, total) bytes of device memory."""
    _require()
    return _cuda().mem_get_info(_device_arg(device_index))


def get_device_capability(device=None, /):
    """The device's capabilities."""
    _require()
    return _cuda().get_device_capability(device)


def current_stream(device=None, /):
    """The current stream of ``device``."""
    _require()
    return _cuda().current_stream(device)


def set_stream(stream):
    """Make ``stream`` the current stream of its device."""
    _require()
    _cuda().set_stream(stream)


def get_device_module(device=None):
    """The module of a device type (``ptcore.get_device_module``, torch's
    top-level function): ``ptcore.cuda`` for CUDA, ``ptcore.cpu`` for the CPU;
    with no argument, the current accelerator's module (the CPU's without one)."""
    import importlib
    import ptcore
    if device is None:
        acc = current_accelerator()
        kind = "cpu" if acc is None else acc.type
    elif isinstance(device, ptcore.device):
        kind = device.type
    elif isinstance(device, str):
        kind = ptcore.device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'ptcore.{kind}'.")
    return importlib.import_module(f"ptcore.{kind}")
