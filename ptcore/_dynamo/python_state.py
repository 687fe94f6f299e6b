"""What Python state a captured program changes besides its tensors.

A graph replays a program's op calls, not its Python statements: a program
that appends to a list it did not create (a forward hook collecting
activations), counts calls in a global, sets an attribute of an object, or
fills a dict passed to it would do so only on the call that was captured.
torch's capture replays such writes; ptcore's runs the program eagerly
instead (the entry's ``reason`` says why), which gives the eager result and
effects on every call.

:class:`StateWatch` finds these writes.  While the capture runs, the profile
hook hands it each Python frame the program enters (outside ptcore's own
code and the standard library, whose caches are not the program's state);
on a frame's first call it notes, before the frame's body runs, what the
frame can reach that existed before the call: the globals its code names,
the variables of enclosing functions it reads, and -- for the outermost
call -- the arguments, and what the program's modules hold in their own
attributes (``self.log = []``), each with the objects inside them two levels
deep (list, dict and set items, instance attributes).  After the run
:meth:`StateWatch.changed` compares.  Objects the program creates during the
call are never noted (they are reached only later), so building results is
no side effect; nor are tensors (their writes are ops, in the graph),
modules themselves (their attributes are compared by
``capture._module_state``), functions, classes and
modules of Python, and instances of ptcore's and the standard library's
classes (a logger's cache of enabled levels).  Values compare by identity, numbers and strings by
value (a recomputed equal float is no change).
"""
import dis
import functools
import sys
import types

from ptcore._tensor import _TensorBase
from ptcore.nn.modules.module import Module

__all__ = ["StateWatch", "global_names", "module_bookkeeping"]

_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, types.FrameType, type, property, staticmethod, classmethod)
# (objects noted per capture at most, and the items of a container looked
# into: bounds on the capture's extra cost -- a vocabulary dict of a million
# words is compared whole, its words not noted one by one)
_LIMIT = 20000
_INNER = 256
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


_BOOKKEEPING = []
_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME",
                         "STORE_NAME", "DELETE_NAME"))


@functools.lru_cache(maxsize=4096)
def global_names(code):
    """The global names ``code`` reads or writes, with those of the code it
    defines (comprehensions, lambdas, inner functions: the same globals).
    Not its ``co_names``: they also hold the attribute and method names it
    uses (``self.out`` names ``out``, which is no global of the function,
    whatever a script's ``out`` is)."""
    names = {}
    todo = [code]
    while todo:
        c = todo.pop()
        for i in dis.get_instructions(c):
            if i.opname in _GLOBAL_OPS and type(i.argval) is str:
                names[i.argval] = None
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(names)


def module_bookkeeping():
    """The attributes every Module has (hooks, registries): not user state."""
    if not _BOOKKEEPING:
        _BOOKKEEPING.append(frozenset(Module().__dict__))
    return _BOOKKEEPING[0]


def _own_module(name):
    """Whether frames of module ``name`` are skipped: ptcore's, the standard
    library's and importlib's (their caches and registries are no part of
    the program's state)."""
    top = name.split(".", 1)[0]
    return top == "ptcore" or top in _STDLIB or top.startswith("_frozen_importlib")


def _same(a, b):
    return a is b or (type(a) is type(b) and type(a) in _SCALARS and a == b)


def _contents(obj):
    """``(kind, items)``: the shallow state of a container or instance (None
    for anything whose state is not watched, or cannot be read: a proxy
    whose attribute access raises)."""
    try:
        return _contents_of(obj)
    except Exception:
        return None


def _contents_of(obj):
    t = type(obj)
    if t in _SCALARS or isinstance(obj, (_TensorBase, _OPAQUE)):
        return None
    if isinstance(obj, list):
        return "list", list(obj)
    if isinstance(obj, dict):
        return "dict", list(obj.items())
    if isinstance(obj, (set, frozenset)):
        return "set", sorted(map(id, obj))
    if isinstance(obj, tuple):
        return "tuple", list(obj)
    if isinstance(obj, Module):
        return None
    mod = getattr(t, "__module__", None)
    if type(mod) is not str or _own_module(mod):
        return None             # (a logger's level cache, a lock: not the program's state)
    d = getattr(obj, "__dict__", None)
    if type(d) is dict:
        return "object", list(d.items())
    return None


def _items_same(kind, old, new):
    if len(old) != len(new):
        return False
    if kind == "set":
        return old == new
    if kind == "dict" or kind == "object":
        return all(_same(k0, k1) and _same(v0, v1) for (k0, v0), (k1, v1) in zip(old, new))
    return all(_same(a, b) for a, b in zip(old, new))


def _encloses(outer, inner, depth=4):
    """Whether code ``inner`` is defined inside code ``outer`` (its constants)."""
    if depth < 0:
        return False
    for c in outer.co_consts:
        if c is inner or (isinstance(c, types.CodeType) and _encloses(c, inner, depth - 1)):
            return True
    return False


class StateWatch:
    """The state noted before the program wrote it (see the module docstring)."""

    def __init__(self):
        self.objects = {}       # id -> (object, kind, items, where)
        self.bindings = []      # (namespace dict, name, value, where)
        self.cells = []         # (frame, name, value, where)
        self.codes = set()      # code objects whose frames were noted
        self.full = False
        self.failed = None      # why a frame could not be read
        self.run_frames = set()  # ids of the frames the program entered

    def note_arguments(self, args, kwargs):
        for i, a in enumerate(args):
            self._note(a, f"argument {i}", 2)
        for k, a in kwargs.items():
            self._note(a, f"argument {k!r}", 2)

    def note_modules(self, modules):
        """The containers and plain objects the modules' own attributes hold
        (``self.log = []`` appended to in forward: the module keeps the same
        list, so comparing its attributes by identity does not see it)."""
        book = module_bookkeeping()
        for m in modules:
            for name, sub in m.named_modules():
                for k, v in sub.__dict__.items():
                    if k not in book and not k.startswith("__"):
                        self._note(v, f"attribute {k!r} of {type(sub).__name__}"
                                      f"{' ' + name if name else ''}", 2)

    def enter(self, frame):
        """A Python frame the program enters (the profile hook's 'call' event).
        Never raises (an exception of a profile hook would surface in the
        program): a frame it cannot read is reported by :meth:`changed`."""
        try:
            self.run_frames.add(id(frame))
            self._enter(frame)
        except Exception as e:
            if self.failed is None:
                self.failed = f"{type(e).__name__}: {e}"

    def _enter(self, frame):
        code = frame.f_code
        if code in self.codes or self.full:
            return
        g = frame.f_globals
        mod = g.get("__name__")
        if type(mod) is str and _own_module(mod):
            return
        self.codes.add(code)
        where = f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})"
        for name in global_names(code):
            if name in g:
                v = g[name]
                self.bindings.append((g, name, v, where))
                self._note(v, f"global {name!r} of {where}", 2)
        if code.co_freevars:
            local = frame.f_locals
            for name in code.co_freevars:
                if name in local and not self._own_cell(frame, name):
                    v = local[name]
                    self.cells.append((frame, name, v, where))
                    self._note(v, f"variable {name!r} of {where}", 2)

    def _own_cell(self, frame, name):
        """Whether free variable ``name`` of ``frame`` is a local of a function
        the program itself is running (a generator expression or inner
        function reading its enclosing loop's variable: the enclosing frame
        assigns it, no state from before the call)."""
        code = frame.f_code
        f = frame.f_back
        while f is not None:
            if id(f) in self.run_frames and name in f.f_code.co_cellvars and \
                    _encloses(f.f_code, code):
                return True
            f = f.f_back
        return False

    def _note(self, obj, where, depth):
        if depth < 0 or self.full or id(obj) in self.objects:
            return
        state = _contents(obj)
        if state is None:
            return
        if len(self.objects) >= _LIMIT:
            self.full = True
            return
        kind, items = state
        self.objects[id(obj)] = (obj, kind, items, where)
        if kind == "set" or len(items) > _INNER:
            return
        for it in items:
            if kind in ("dict", "object"):
                self._note(it[1], where, depth - 1)
            else:
                self._note(it, where, depth - 1)

    def changed(self):
        """What the program wrote of the state noted (a sentence), or None."""
        if self.failed is not None:
            return f"the Python state the program reaches could not be read ({self.failed})"
        for g, name, v, where in self.bindings:
            if name not in g or not _same(g[name], v):
                return f"{where} assigns the global {name!r}"
        for frame, name, v, where in self.cells:
            try:
                now = frame.f_locals.get(name, v)
            except Exception:
                now = v
            if not _same(now, v):
                return f"{where} assigns the variable {name!r} of an enclosing function"
        for obj, kind, items, where in self.objects.values():
            state = _contents(obj)
            if state is None or not _items_same(kind, items, state[1]):
                what = "attributes of" if kind == "object" else "the items of"
                return f"the program changes {what} a {type(obj).__name__} ({where})"
        return None
