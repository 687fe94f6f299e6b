"""The annotations and helpers TorchScript programs use, so that they run
unchanged: ``Final``, ``annotate``, ``ignore``, ``unused``, ``export``,
``script_method``, ``is_scripting``, ``is_tracing``, ``fork``/``wait``,
``isinstance`` (``jit_isinstance``)."""
import builtins
import typing

import ptcore

from ptcore._dispatch import tracing as _tracing
from ptcore.futures import Future, _completed

__all__ = ["Final", "annotate", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "fork", "wait", "Future", "script_method", "jit_isinstance", "type_spec",
           "matches_spec", "Attribute", "interface", "script_if_tracing",
           "copy", "enable_onednn_fusion", "onednn_fusion_enabled", "overload",
           "overload_method"]

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


def script_method(fn):
    """``@torch.jit.script_method`` (the API before ``torch.jit.script`` of
    modules) on a method of a :class:`ScriptModule` subclass: compiled with
    ``forward`` when the module is saved or its graph read; calls run the
    Python method."""
    fn._torchscript_modifier = "export"
    return fn


def type_spec(tp):
    """TorchScript type ``tp`` (``List[Tensor]``, ``Optional[int]``, ...) as
    plain data a graph can hold, or raise TypeError."""
    if tp is None or tp is type(None):
        return "None"
    if tp is typing.Any:
        return "Any"
    for cls, name in ((ptcore.Tensor, "Tensor"), (bool, "bool"), (int, "int"),
                      (float, "float"), (str, "str"), (ptcore.device, "device")):
        if tp is cls:
            return name
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    kinds = {list: "List", tuple: "Tuple", dict: "Dict", typing.Union: "Union"}
    if origin in kinds and args:
        return [kinds[origin]] + [type_spec(a) for a in args]
    raise TypeError(f"jit.isinstance: unsupported type {tp!r}")


def matches_spec(obj, spec):
    """Whether ``obj`` is of the type that :func:`type_spec` gave ``spec``."""
    if isinstance(spec, str):
        if spec == "Any":
            return True
        if spec == "None":
            return obj is None
        cls = {"Tensor": ptcore.Tensor, "bool": bool, "int": int, "float": float,
               "str": str, "device": ptcore.device}[spec]
        if cls is int and builtins.isinstance(obj, bool):
            return False
        return builtins.isinstance(obj, cls)
    kind, args = spec[0], spec[1:]
    if kind == "Union":
        return any(matches_spec(obj, a) for a in args)
    if kind == "List":
        return builtins.isinstance(obj, list) and all(matches_spec(x, args[0]) for x in obj)
    if kind == "Tuple":
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and \
            all(matches_spec(x, a) for x, a in zip(obj, args))
    if kind == "Dict":
        return builtins.isinstance(obj, dict) and all(
            matches_spec(k, args[0]) and matches_spec(v, args[1]) for k, v in obj.items())
    raise TypeError(f"jit.isinstance: bad type record {spec!r}")


# container types that need their element types, by torch's name for them
_RAW_CONTAINERS = {list: "list", dict: "dict", tuple: "tuple", typing.List: "List",
                   typing.Dict: "Dict", typing.Tuple: "Tuple", typing.Optional: "Optional"}


def jit_isinstance(obj, target_type):
    """``torch.jit.isinstance``: whether ``obj`` is of TorchScript type
    ``target_type``, container element types included
    (``List[Tensor]``, ``Dict[str, int]``, ``Optional[Tuple[int, int]]``);
    a tuple of types matches any of them."""
    if builtins.isinstance(target_type, tuple):
        return any(jit_isinstance(obj, t) for t in target_type)
    if builtins.isinstance(target_type, (str, list, dict, set)):
        raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a "
                           "tuple of types")
    name = _RAW_CONTAINERS.get(target_type)
    if name is not None:
        if name.endswith("ict"):
            raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                               f"contained type, e.g. {name}[int, int]")
        raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                           f"contained type, e.g. {name}[int]")
    if typing.get_origin(target_type) is None:
        return builtins.isinstance(obj, target_type)     # a plain class, as torch's eager check
    return matches_spec(obj, type_spec(target_type))


def interface(obj):
    """``@torch.jit.interface``: the class itself."""
    return obj


# TorchScript overload declarations (``torch.jit._overload``/``_overload_method``):
# qualified name -> the declared signatures, in order.  In Python the definition after
# the declarations is the one that runs; the declarations are kept for inspection.
_overloaded_fns = {}
_overloaded_methods = {}


def _qualified(fn):
    return f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', fn)}"


def overload(fn):
    """Declare an overload of a function (``torch.jit._overload``): recorded, and
    returned unchanged (the undecorated definition that follows is what runs)."""
    _overloaded_fns.setdefault(_qualified(fn), []).append(fn)
    return fn


def overload_method(fn):
    """Declare an overload of a method (``torch.jit._overload_method``), as
    :func:`overload`."""
    _overloaded_methods.setdefault(_qualified(fn), []).append(fn)
    return fn


def script_if_tracing(fn):
    return fn


def is_scripting():
    """False: ptcore runs Python code eagerly or through traced graphs."""
    return False


def is_tracing():
    """True while ``ptcore.jit.trace`` records on this thread (not while
    ``ptcore.compile`` captures or ``ptcore.export`` traces, as torch's)."""
    return getattr(_tracing.active_tracer(), "jit_tracing", False)


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
