"""``ptcore.accelerator``: the current accelerator (CUDA when usable), as
``torch.accelerator``.  On a machine without one, ``is_available()`` is
False, ``current_accelerator()`` None, ``device_count()`` 0, and the calls
that need a device raise ``RuntimeError``."""
import builtins

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "is_available", "set_device_idx", "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    import ptcore.cuda
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
