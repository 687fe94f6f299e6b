"""``skip_init`` (``torch.nn.utils.init``): build a module without running its parameter
initialization.

torch builds the module on the ``meta`` device and materializes it with ``to_empty``; ptcore
has no meta device, so the ``ptcore.nn.init`` functions are made no-ops while the module is
built (the parameters then hold the uninitialized memory of ``ptcore.empty``, as torch's).
Construction must not run other computation on the parameters (torch's condition too).
"""
import contextlib
import inspect
import threading

import ptcore
import ptcore.nn.init as _init

__all__ = ["skip_init"]

_LOCK = threading.Lock()
_INIT_FUNCTIONS = [n for n in dir(_init) if n.endswith("_") and not n.startswith("_")
                   and callable(getattr(_init, n))]


@contextlib.contextmanager
def _no_init():
    with _LOCK:
        saved = {n: getattr(_init, n) for n in _INIT_FUNCTIONS}
        try:
            for n in _INIT_FUNCTIONS:
                setattr(_init, n, lambda tensor, *args, **kwargs: tensor)
            yield
        finally:
            for n, fn in saved.items():
                setattr(_init, n, fn)


def skip_init(module_cls, *args, **kwargs):
    """Instantiate ``module_cls(*args, **kwargs)`` without initializing its parameters and
    buffers (their values are unspecified, as ``ptcore.empty``'s)."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, ptcore.nn.Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with _no_init():
        return module_cls(*args, **kwargs)
