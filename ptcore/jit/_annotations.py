"""The annotations and helpers TorchScript programs use, so that they run
unchanged: ``Final``, ``annotate``, ``ignore``, ``unused``, ``export``,
``is_scripting``, ``is_tracing``, ``fork``/``wait``."""
import typing

from ptcore._dispatch import tracing as _tracing
from ptcore.futures import Future, _completed

__all__ = ["Final", "annotate", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "fork", "wait", "Future", "Attribute", "interface", "script_if_tracing",
           "copy", "enable_onednn_fusion", "onednn_fusion_enabled"]

Final = typing.Final


def annotate(the_type, the_value):
    """``torch.jit.annotate``: the value itself (the type is for the compiler)."""
    return the_value


def Attribute(value, type):   # noqa: A002 - torch's signature
    return value


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore``: leave a function to Python: scripted code calls it
    when it runs (a module or function that does cannot be saved);
    ``drop=True`` is :func:`unused`."""
    if callable(drop):
        drop._torchscript_modifier = "ignore"
        return drop

    def deco(fn):
        fn._torchscript_modifier = "unused" if drop else "ignore"
        return fn
    return deco


def unused(fn):
    """``@torch.jit.unused``: a function the compiler does not compile; a
    call of it raises :class:`ptcore.jit.Error` when it runs."""
    fn._torchscript_modifier = "unused"
    return fn


def export(fn):
    """``@torch.jit.export``: a method to compile besides ``forward``."""
    fn._torchscript_modifier = "export"
    return fn


def interface(obj):
    """``@torch.jit.interface``: the class itself."""
    return obj


def script_if_tracing(fn):
    return fn


def is_scripting():
    """False: ptcore runs Python code eagerly or through traced graphs."""
    return False


def is_tracing():
    """True while ``ptcore.jit.trace`` records on this thread."""
    return _tracing.active_tracer() is not None


def fork(func, *args, **kwargs):
    """``torch.jit.fork``: run ``func`` now (ptcore has no inter-op thread
    pool for Python code) and return a completed :class:`ptcore.futures.Future`
    holding its result."""
    try:
        return _completed(func(*args, **kwargs))
    except Exception as e:     # delivered by wait(), as torch does
        return _completed(exc=e)


def wait(future):
    return future.wait()


def copy(obj):
    import copy as _copy
    return _copy.deepcopy(obj)


_ONEDNN = [False]


def enable_onednn_fusion(enabled):
    _ONEDNN[0] = bool(enabled)


def onednn_fusion_enabled():
    return _ONEDNN[0]
