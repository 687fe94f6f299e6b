"""The user's allowlist of globals for ``ptcore.load(..., weights_only=True)``
(``add_safe_globals`` / ``safe_globals``, as torch's) and the message a
refused global gets.

The globals allowed by default (tensors, storages, dtypes, plain containers)
are the restricted unpickler's own, in ``_torch_checkpoint_reader``; the
ones listed here are what the caller added: allowlisted classes may be
created (``__new__``) and given their pickled state, allowlisted functions
may be called.
"""

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "user_global", "is_user_global", "build_allowed", "unsupported_global_message"]

_SAFE_GLOBALS = []     # objects, or (object, "module.name") pairs, in the order given


def _entry_name(entry):
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError("safe globals entries must be objects or (object, 'module.name') "
                            f"pairs, got {entry!r}")
        return entry[0], entry[1]
    module = getattr(entry, "__module__", None)
    qualname = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if module is None or qualname is None:
        raise TypeError(f"cannot allowlist {entry!r}: it has no __module__ and __qualname__")
    return entry, f"{module}.{qualname}"


def add_safe_globals(safe_globals):
    """Allow the globals in ``safe_globals`` in ``ptcore.load(..., weights_only=True)``.

    Parameters
    ----------
    safe_globals : list
        Classes and functions (or ``(obj, "module.name")`` pairs when ``obj``
        is pickled under another name).  Allowed classes may be created
        (``__new__``) and given their pickled state (``__setstate__`` or their
        ``__dict__``); allowed functions may be called.
    """
    if not isinstance(safe_globals, list):
        raise TypeError(f"add_safe_globals expects a list, got {type(safe_globals).__name__}")
    for entry in safe_globals:
        _entry_name(entry)
    _SAFE_GLOBALS.extend(safe_globals)


def get_safe_globals():
    """The globals added by :func:`add_safe_globals` (a new list)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Forget every global added by :func:`add_safe_globals`."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: the globals are allowed while the block runs."""

    def __init__(self, safe_globals):
        if not isinstance(safe_globals, list):
            raise TypeError(f"safe_globals expects a list, got {type(safe_globals).__name__}")
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        for entry in self.safe_globals:
            for i in range(len(_SAFE_GLOBALS) - 1, -1, -1):
                if _SAFE_GLOBALS[i] is entry:
                    del _SAFE_GLOBALS[i]
                    break
        return False


def user_global(module, name):
    """The allowlisted object pickled as ``module.name``, or None."""
    full = f"{module}.{name}"
    for entry in reversed(_SAFE_GLOBALS):
        obj, entry_name = _entry_name(entry)
        if entry_name == full:
            return obj
    return None


def is_user_global(obj):
    return any((e[0] if isinstance(e, tuple) else e) is obj for e in _SAFE_GLOBALS)


def build_allowed(inst, state):
    """BUILD for an instance of an allowlisted class: ``__setstate__`` when the
    class has one, else its ``__dict__`` (and slots) get the state."""
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        setattr(inst, k, v)


def unsupported_global_message(module, name):
    full = f"{module}.{name}"
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint. \n\t(1) "
        "Re-running `ptcore.load` with `weights_only` set to `False` will likely succeed, but "
        "it can result in arbitrary code execution. Do it only if you got the file from a "
        "trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check "
        "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`ptcore.serialization.add_safe_globals([{full}])` or the "
        f"`ptcore.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function.\n\nCheck the documentation of ptcore.load to "
        "learn more about types accepted by default with weights_only.")
