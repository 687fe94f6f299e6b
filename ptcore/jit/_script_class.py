"""Script classes: instances of user classes that scripted code uses as values.

TorchScript compiles a class that a scripted module reaches through its
attributes (einops' ``TransformRecipe`` in a ``Dict[int, TransformRecipe]``)
into a script class: typed fields and compiled methods; the scripted module
holds ``torch.ScriptObject`` s, copies of the Python objects.  ptcore does the
same: :func:`script_object` copies an instance into a :class:`ScriptObject`,
a record of its class's qualified name and its fields (tensors, plain data,
other script objects); scripted code reads and writes its fields, and the
compiler inlines its class's methods.  A graph holds script objects as values
(``Value.kind == "object"``); saved, they are data (no code), and a loaded
one is a ScriptObject without its Python class.
"""
import enum
import inspect
import types

from ptcore._tensor import _TensorBase
from ptcore import dtype, device
from ptcore.nn import Module

__all__ = ["ScriptObject", "is_script_instance", "script_object", "script_data", "methods"]

_MAX_DEPTH = 64
_SCALARS = (type(None), bool, int, float, complex, str)


class ScriptObject:
    """An instance of a script class (``torch.ScriptObject``): its fields, read
    and written as attributes; its class's methods are compiled into the graphs
    that call them."""
    __slots__ = ("_qualname", "_fields", "_cls")

    def __init__(self, qualname, fields, cls=None):
        object.__setattr__(self, "_qualname", str(qualname))
        object.__setattr__(self, "_fields", dict(fields))
        object.__setattr__(self, "_cls", cls)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_fields")[name]
        except KeyError:
            qn = object.__getattribute__(self, "_qualname")
            raise AttributeError(f"'{qn}' script object has no attribute {name!r}") from None

    def __setattr__(self, name, value):
        if name in ScriptObject.__slots__:
            object.__setattr__(self, name, value)
            return
        if name not in self._fields:
            raise AttributeError(f"'{self._qualname}' script object has no field {name!r} "
                                 "(a script class's fields are those its __init__ sets)")
        self._fields[name] = value

    def __dir__(self):
        return sorted(self._fields)

    def _type(self):
        """The script class's qualified name (``torch.ScriptObject._type().qualified_name()``)."""
        return self._qualname

    def __repr__(self):
        return f"<ptcore.jit.ScriptObject {self._qualname}>"


def _python_class(cls):
    """Whether ``cls`` is a plain class written in Python (not a builtin, a
    module, a tensor, an exception, an enum or one of ptcore's classes)."""
    if not isinstance(cls, type) or cls.__module__ == "builtins" or \
            (cls.__module__ or "").startswith("ptcore"):
        return False
    if issubclass(cls, (Module, _TensorBase, BaseException, enum.Enum, type, tuple, list, dict,
                        set, frozenset, str, bytes, int, float, complex)):
        return False
    init = cls.__init__
    return init is object.__init__ or isinstance(init, types.FunctionType)


def is_script_instance(v):
    """Whether ``v`` is a script object or an instance of a user class that
    scripted code can use as one."""
    return type(v) is ScriptObject or _python_class(type(v))


def _fields_of(obj):
    d = getattr(obj, "__dict__", None)
    out = dict(d) if d is not None else {}
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                out[name] = getattr(obj, name)
    return out


def script_object(obj, memo=None, where="", depth=0):
    """The ScriptObject copy of user-class instance ``obj`` (the same copy for
    the same object within one ``memo``); TypeError naming the field whose
    value a script class cannot hold."""
    if type(obj) is ScriptObject:
        return obj
    memo = {} if memo is None else memo
    hit = memo.get(id(obj))
    if hit is not None:
        return hit[0]
    cls = type(obj)
    qualname = f"{cls.__module__}.{cls.__qualname__}"
    so = ScriptObject(qualname, {}, cls)
    memo[id(obj)] = (so, obj)            # (the object kept alive: its id stays unique)
    for name, v in _fields_of(obj).items():
        so._fields[name] = script_data(v, memo, f"{qualname}.{name}", depth + 1)
    return so


def script_data(v, memo=None, where="", depth=0):
    """``v`` with every user-class instance in it copied into a ScriptObject;
    TypeError for a value scripted code cannot hold (a function, a file, a module)."""
    if depth > _MAX_DEPTH:
        raise TypeError(f"{where}: data nested more than {_MAX_DEPTH} deep")
    if isinstance(v, _SCALARS) and type(v) in _SCALARS or isinstance(v, _TensorBase) or \
            isinstance(v, (dtype, device)) or type(v) is ScriptObject:
        return v
    if type(v) in (list, tuple):
        return type(v)(script_data(x, memo, f"{where}[{i}]", depth + 1) for i, x in enumerate(v))
    if type(v) is dict:
        return {script_data(k, memo, where, depth + 1): script_data(x, memo, f"{where}[{k!r}]",
                                                                   depth + 1)
                for k, x in v.items()}
    if _python_class(type(v)):
        return script_object(v, memo, where, depth)
    raise TypeError(f"{where or 'value'}: a value of type {type(v).__name__} cannot be a "
                    "field of a script class")


def methods(so):
    """The Python functions of script object ``so``'s class (none for a loaded one)."""
    cls = so._cls
    if cls is None:
        return {}
    return {n: f for n, f in inspect.getmembers(cls, inspect.isfunction)}
