"""The primitive operations of scripted graphs (``prim::*`` nodes): Python
scalar and container operations, attribute reads and method calls on the
values a graph computes, and the control-flow nodes' bodies run by the
interpreter.  Every name a graph file may use is in :data:`PRIM`; a method
or attribute name must be one of the allowlisted ones, so a graph cannot
reach anything but ptcore's ops and plain data operations.
"""
import math
import operator
import warnings
import weakref

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch.table import lookup
from ptcore.jit import _annotations
from ptcore.jit import _bounds
from ptcore.jit._errors import JitError, Error
from ptcore.jit._script_class import ScriptObject
from ptcore.nn.functional import _aten_forms, _rnn
from ptcore.jit._plain import (DEVICE_ATTRS, DTYPE_ATTRS, TENSOR_METHODS_REFUSED,
                               safe_format)

__all__ = ["PRIM", "CONTROL", "TENSOR_ATTRS", "MATH", "PythonCall"]

TENSOR_ATTRS = {"shape", "dtype", "device", "ndim", "T", "mT", "H", "mH", "real", "imag",
                "data", "grad", "requires_grad", "is_cuda", "is_leaf", "layout", "is_sparse",
                "is_quantized", "is_meta"}
_LIST_METHODS = {"append", "extend", "insert", "pop", "index", "count", "reverse", "copy",
                 "clear", "remove", "sort"}
_DICT_METHODS = {"keys", "values", "items", "get", "pop", "update", "setdefault", "copy",
                 "clear"}
_STR_METHODS = {"startswith", "endswith", "lower", "upper", "strip", "split", "join"}


# the functions of Python's math module a graph may call (TorchScript's aten::sqrt &
# co. on scalars): ``prim::math(name, *args)``
MATH = {n: getattr(math, n) for n in (
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "floor", "ceil", "trunc", "fabs",
    "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "erf", "erfc", "gamma", "lgamma", "isnan", "isinf", "isfinite",
    "fmod", "hypot", "gcd", "copysign", "degrees", "radians", "factorial", "modf", "frexp",
    "ldexp", "remainder")}


def _math(name, *args):
    try:
        fn = MATH[name]
    except (KeyError, TypeError):
        raise JitError(f"prim::math names {name!r}, which is not a math function a graph "
                       "may call") from None
    if not _bounds.call_ok(fn, args, {}, _bounds.RUN):
        raise _bounds.ResultTooLarge(f"math.{name} of a too large argument in a scripted graph")
    return fn(*args)


def _round(*args):
    if not _bounds.call_ok(round, args, {}, _bounds.RUN):
        raise _bounds.ResultTooLarge("round() to too many digits in a scripted graph")
    return round(*args)


def _range(*args):
    r = range(*args)
    n = _bounds.length(r)
    if n is None or n > _bounds.RUN.items:
        raise _bounds.ResultTooLarge(f"range{args} has too many items for a scripted graph "
                                     f"(at most {_bounds.RUN.items})")
    return list(r)


def _bounded(op):
    """The primitive of binary operator ``op``, bounded in its result's size."""
    fn = _bounds._PYBIN[op]
    check, run = _bounds.check, _bounds.RUN

    def prim(a, b):
        if not isinstance(a, _TensorBase) and not isinstance(b, _TensorBase):
            check(op, a, b, run)
        return fn(a, b)
    prim.__name__ = op
    return prim


def _add(a, b):
    if not isinstance(a, _TensorBase) and not isinstance(b, _TensorBase):
        _bounds.check("add", a, b, _bounds.RUN)
    try:
        return a + b
    except TypeError:
        # a size is TorchScript's List[int]: ``x.size()[:-1] + [2, n]``
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return list(a) + list(b)
        raise


def _bounded_in(a, b):
    _bounds.check("in", a, b, _bounds.RUN)
    return a in b


def _print(*args):
    print(*args)


# classes given to ``jit.script`` (``@torch.jit.script class``): scripted code makes
# their instances through ``prim::python_call`` and reads their public attributes
# and calls their public methods
SCRIPT_CLASSES = weakref.WeakSet()


def _script_object(x, name):
    return type(x) in SCRIPT_CLASSES and not name.startswith("_")


def _getattr(x, name):
    if type(x) is ScriptObject:
        try:
            return x._fields[name]
        except KeyError:
            raise JitError(f"script object {x._qualname} has no field {name!r}") from None
    if _script_object(x, name):
        v = getattr(x, name)
        if not callable(v):
            return v
    if isinstance(x, _TensorBase) and name in TENSOR_ATTRS:
        return getattr(x, name)
    if isinstance(x, ptcore.dtype) and name in DTYPE_ATTRS or \
            isinstance(x, ptcore.device) and name in DEVICE_ATTRS:
        return getattr(x, name)
    if isinstance(x, tuple) and name in getattr(type(x), "_fields", ()):
        # a named tuple's field: ``x.topk(k).values``, ``x.max(1).indices``
        return getattr(x, name)
    raise JitError(f"attribute {name!r} of a {type(x).__name__} is not available in a "
                   "scripted graph")


def _setattr(x, name, value):
    """``obj.field = value`` on a script object (its fields only)."""
    if type(x) is not ScriptObject or name not in x._fields:
        raise JitError(f"cannot set attribute {name!r} of a {type(x).__name__} in a scripted "
                       "graph")
    x._fields[name] = value


def _method(name, x, *args, **kwargs):
    if isinstance(x, _TensorBase):
        if lookup(name, "Tensor") is None or name in TENSOR_METHODS_REFUSED:
            raise JitError(f"Tensor.{name} is not an op of ptcore's operator table that a "
                           "scripted graph may call")
        return getattr(ptcore.Tensor, name)(x, *args, **kwargs)
    allowed = (_LIST_METHODS if isinstance(x, list) else _DICT_METHODS if isinstance(x, dict)
               else _STR_METHODS if isinstance(x, str) else ())
    if name not in allowed and not _script_object(x, name):
        raise JitError(f"method {name!r} of a {type(x).__name__} is not available in a "
                       "scripted graph")
    r = getattr(x, name)(*args, **kwargs)
    if isinstance(x, dict) and name in ("keys", "values", "items"):
        # TorchScript's dict.keys()/values()/items() return lists (indexable)
        r = list(r)
    return r


class PythonCall:
    """The callable of a ``prim::python_call`` node: an ``@jit.ignore``
    function left to Python (as TorchScript does).  Only a graph compiled in
    this process holds one: it is never saved, and a graph read from a file
    that names ``prim::python_call`` does not load.  A method is called on
    the scripted module at ``path`` (its ``owner``), as torch calls it on its
    RecursiveScriptModule; until that is bound, on the source module."""

    def __init__(self, fn, path=None):
        self.fn = getattr(fn, "__func__", fn) if path is not None else fn
        self.path = path
        self.owner = getattr(fn, "__self__", None)
        self.name = fn.__name__

    def __call__(self, name, *args, **kwargs):
        if self.path is None:
            return self.fn(*args, **kwargs)
        return self.fn(self.owner, *args, **kwargs)

    def __deepcopy__(self, memo):
        return self


def _raise(msg):
    raise Error(msg)


def _assert(cond, msg=None):
    if not cond:
        raise Error("AssertionError: " + (str(msg) if msg is not None else
                                           "scripted assertion failed"))


_TYPES = {"bool": bool, "int": int, "float": float, "str": str, "list": list, "tuple": tuple,
          "dict": dict, "NoneType": type(None), "Tensor": _TensorBase}


def _isinstance(x, names):
    try:
        return isinstance(x, tuple(_TYPES[n] for n in names))
    except (KeyError, TypeError):
        raise JitError(f"prim::isinstance: unknown types {names!r}") from None


def _warn(msg):
    warnings.warn(str(msg), stacklevel=2)


def _rnn_forward(*args, **kwargs):
    return _rnn.rnn_forward(*args, **kwargs)


def _rnn_cell(*args, **kwargs):
    return _rnn._cell_forward(*args, **kwargs)


def _aten_recurrence(mode, *args):
    """``aten::lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` (TorchScript archives)."""
    if mode not in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"):
        raise RuntimeError(f"unknown recurrence {mode!r}")
    return _aten_forms._recurrence(mode, args, {})


def _aten_slice(x, dim=0, start=None, end=None, step=1):
    """``aten::slice`` (TorchScript archives): ``x[..., start:end:step]`` along ``dim``."""
    if isinstance(x, _TensorBase):
        d = dim + x.dim() if dim < 0 else dim
        return x[(slice(None),) * d + (slice(start, end, step),)]
    # aten::slice.t(list, start, end, step): no dim, its arguments one place earlier
    return x[dim:start:end]


def _unsupported(what):
    raise NotImplementedError(f"{what} is used by this TorchScript program and is not supported "
                              "by ptcore")


def _num_to_tensor(v):
    return v.detach().clone() if isinstance(v, _TensorBase) else ptcore.tensor(v)


PRIM = {
    "add": _add, "sub": operator.sub, "mul": _bounded("mul"),
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": _bounded("mod"),
    "pow": _bounded("pow"), "matmul": operator.matmul, "lshift": _bounded("lshift"),
    "rshift": operator.rshift, "bitand": operator.and_, "bitor": operator.or_,
    "bitxor": operator.xor, "neg": operator.neg, "pos": operator.pos,
    "invert": operator.invert, "not": operator.not_, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
    "is": operator.is_, "isnot": operator.is_not, "in": _bounded_in,
    "notin": lambda a, b: not _bounded_in(a, b), "and": lambda a, b: a and b, "or": lambda a, b: a or b,
    "iadd": _bounded("iadd"), "isub": operator.isub, "imul": _bounded("imul"),
    "itruediv": operator.itruediv, "ifloordiv": operator.ifloordiv, "imod": _bounded("imod"),
    "ipow": _bounded("ipow"), "getitem": operator.getitem, "setitem": operator.setitem,
    "delitem": operator.delitem,
    "len": len, "int": int, "float": float, "bool": bool, "str": str, "abs": abs,
    "min": min, "max": max, "round": _round, "tuple": lambda *a: tuple(a),
    "list": lambda *a: list(a), "dict": lambda *kv: dict(zip(kv[::2], kv[1::2])),
    "slice": slice, "range": _range, "getattr": _getattr, "setattr": _setattr,
    "method": _method, "raise": _raise, "assert": _assert, "format": safe_format,
    "isinstance_tensor": lambda x: isinstance(x, _TensorBase), "isinstance": _isinstance,
    "warn": _warn, "tuple_of": tuple, "rnn_forward": _rnn_forward, "rnn_cell": _rnn_cell,
    "aten_recurrence": _aten_recurrence,
    "is_grad_enabled": lambda: ptcore.is_grad_enabled(),
    "is_autocast_enabled": lambda *a: ptcore.is_autocast_enabled(*a),
    "is_inference_mode_enabled": lambda: ptcore.is_inference_mode_enabled(),
    "aten_any": lambda x, *a, **k: x.any(*a, **k) if isinstance(x, _TensorBase) else any(x),
    "aten_all": lambda x, *a, **k: x.all(*a, **k) if isinstance(x, _TensorBase) else all(x),
    "unsupported": _unsupported, "aten_slice": _aten_slice, "num_to_tensor": _num_to_tensor, "list_copy": list,
    "sorted": sorted, "sum": sum, "iterable": lambda x: list(x) if isinstance(x, dict) else x,
    "math": _math, "print": _print, "jit_isinstance": lambda x, spec: _annotations.matches_spec(x, spec),
}

# control-flow nodes: the interpreter runs their blocks
CONTROL = {"If", "Loop", "While", "Grad"}
