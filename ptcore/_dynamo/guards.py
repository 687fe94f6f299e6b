"""Guards of a compiled graph: the conditions under which a graph captured
for one call is valid for another (``torch._dynamo``'s guards).

A graph is valid for a call whose arguments have the same structure and the
same Python values, whose tensors have the same type, dtype, shape, strides,
device and ``requires_grad``, whose grad mode and autocast state are the
same, and whose modules (the compiled module, modules among the arguments,
globals and closure of the function) have the same ``training`` flags,
parameters, buffers, submodules, hooks and attributes (Python values by
equality, other objects by identity), and whose function's globals and closure
cells hold the same values.  The conditions are compiled into one Python
function (:class:`Guards`), so checking them costs one call.

What the guards do not see (documented in ``doc/dev/compile.rst``): Python
state read deeper than the function's own globals and closure and the
modules' attributes -- a global of another module read by a helper, an
attribute of an arbitrary object.
"""
import argparse
import dataclasses
import math
import types

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dynamo import _guard_fast
from ptcore._dynamo.python_state import global_names, module_bookkeeping
from ptcore._dispatch import autocast as _autocast
from ptcore.autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from ptcore.nn.modules.module import Module

__all__ = ["Guards", "global_state", "build"]

_SIMPLE = (bool, int, float, str, bytes, complex, type(None))


_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def global_state():
    """The thread's state a graph depends on: grad mode, inference mode, the
    autocast settings and the default dtype."""
    st = _autocast.state
    ac = tuple(sorted((k, st.dtype.get(k)) for k, on in st.enabled.items() if on)) \
        if _autocast._active[0] else ()
    return (is_grad_enabled(), is_inference_mode_enabled(), ac, ptcore.get_default_dtype())


def _simple_value(v):
    """Whether ``v`` is compared by value (a Python number, string, or a
    tuple of them; NaN compared as NaN)."""
    if type(v) in _SIMPLE:
        return True
    if type(v) is tuple and len(v) <= 16:
        return all(_simple_value(a) for a in v)
    # (the type itself: an object whose __class__ raises is simply no dtype)
    return issubclass(type(v), (ptcore.dtype, ptcore.device))


# plain-data objects whose attributes are guarded like a container's items
# when a global, a closure cell or a module attribute holds one (a config)
_PLAIN_DATA = (types.SimpleNamespace, argparse.Namespace)
# containers and objects with more items are guarded by identity only
_CONTENTS_CAP = 64


def _plain_data(v):
    return type(v) in _PLAIN_DATA or (dataclasses.is_dataclass(v) and not isinstance(v, type))


def _literal_eq(expr, v, consts):
    """A Python condition that is True when ``expr`` differs from ``v``."""
    if type(v) is float and math.isnan(v):
        return f"not (type({expr}) is float and {expr} != {expr})"
    if v is None or type(v) is bool:
        return f"{expr} is not {v!r}"
    name = f"k{len(consts)}"
    consts[name] = v
    # (type first: 1 == 1.0 == True, but a graph of an int argument is not one of a float)
    return f"(type({expr}) is not {_typename(type(v), consts)} or {expr} != {name})"


def _typename(t, consts):
    name = f"t{len(consts)}"
    consts[name] = t
    return name


def _is_module(v):
    """``isinstance(v, Module)``, False for an object whose ``__class__``
    cannot be read."""
    try:
        return isinstance(v, Module)
    except Exception:
        return False


class _Builder:
    def __init__(self):
        self.lines = []
        self.consts = {"_global_state": global_state}
        self.text = []          # readable guards (explain's out_guards)
        self.n = 0
        self.seen_modules = set()
        # the modules' dict comparisons (run when a watched dict changed), the
        # dicts watched and their owners, and the tensors they hold: their
        # state is compared each call
        self.slow = []
        self.watch = []
        self.owners = []
        self.tensors = []
        self.tmeta = []
        self.tmsg = []

    def var(self):
        self.n += 1
        return f"x{self.n}"

    def fail_if(self, cond, what, into=None):
        (self.lines if into is None else into).append(f"    if {cond}: return {what!r}")

    def held_tensor(self, t, what):
        """Compare ``t``'s type, requires_grad, dtype and shape each call
        (a tensor a watched dict holds: its identity is the dict's)."""
        self.tensors.append(t)
        self.tmeta.append((type(t), bool(t.requires_grad), t.dtype, tuple(t.shape)))
        self.tmsg.append(what)

    def obj(self, v, prefix="o"):
        name = f"{prefix}{len(self.consts)}"
        self.consts[name] = v
        return name

    def value(self, expr, v, where, modules, depth=0, same=False):
        """Guards of the Python value ``v`` found at ``expr`` (``same``: its
        tensors must be the same objects, as the program reads a tensor it
        did not receive as an argument by identity)."""
        x = self.var()
        self.lines.append(f"    {x} = {expr}")
        if isinstance(v, _TensorBase):
            if same:
                self.fail_if(f"{x} is not {self.obj(v, 'p')}", f"{where} is another tensor")
            self.tensor(x, v, where)
            return
        if _simple_value(v) and not isinstance(v, tuple):
            self.fail_if(_literal_eq(x, v, self.consts), f"{where} is not {v!r}")
            self.text.append(f"{where} == {v!r}")
            return
        t = type(v)
        if depth < 6 and (t is tuple or t is list or (isinstance(v, tuple) and
                                                        hasattr(t, "_fields"))):
            self.fail_if(f"type({x}) is not {self.obj(t, 't')} or len({x}) != {len(v)}",
                         f"{where} is not a {t.__name__} of length {len(v)}")
            for i, a in enumerate(v):
                self.value(f"{x}[{i}]", a, f"{where}[{i}]", modules, depth + 1, same)
            return
        if depth < 6 and t is dict and all(type(k) in (str, int) for k in v):
            keys = list(v)
            self.fail_if(f"type({x}) is not dict or list({x}) != {self.obj(keys, 'k')}",
                         f"{where} has other keys than {keys}")
            for k in keys:
                self.value(f"{x}[{k!r}]", v[k], f"{where}[{k!r}]", modules, depth + 1, same)
            return
        if isinstance(v, Module):
            modules.append(v)
        self.fail_if(f"{x} is not {self.obj(v)}", f"{where} is another object")
        self.text.append(f"{where} is the same {t.__name__} object")

    def safe_contents(self, expr, v, where, modules):
        """:meth:`contents`, or nothing where reading ``v`` raises (a proxy
        whose attribute access fails: guarded by identity only, as a
        container too big to compare); the guards begun are dropped."""
        marks = {k: len(a) for k, a in self.__dict__.items() if type(a) is list}
        nmod = len(modules)
        try:
            self.contents(expr, v, where, modules)
        except Exception:
            for k, n in marks.items():
                del getattr(self, k)[n:]
            del modules[nmod:]

    def contents(self, expr, v, where, modules):
        """Guards of what the list, dict or plain-data object ``v`` (already
        guarded by identity at ``expr``: a global, a closure cell, a module
        attribute) holds now: the program may have read an item of it, and a
        change in place keeps its identity.  Items by value (tensors by type,
        dtype, shape, strides), two levels deep; more than ``_CONTENTS_CAP``
        items: identity only (documented)."""
        t = type(v)
        if t is list or t is dict:
            if len(v) <= _CONTENTS_CAP:
                self.value(expr, v, where, modules, depth=4, same=True)
            return
        if not _plain_data(v):
            return
        d = getattr(v, "__dict__", None)
        if type(d) is not dict or len(d) > _CONTENTS_CAP:
            return
        x = self.var()
        self.lines.append(f"    {x} = {expr}.__dict__")
        self.fail_if(f"list({x}) != {self.obj(list(d), 'k')}",
                     f"{where} has other attributes than {list(d)}")
        for k, a in d.items():
            if type(a) in (list, dict) and len(a) > _CONTENTS_CAP:
                self.fail_if(f"{x}[{k!r}] is not {self.obj(a)}", f"{where}.{k} is another object")
            else:
                self.value(f"{x}[{k!r}]", a, f"{where}.{k}", modules, depth=4, same=True)

    def tensor(self, x, t, where):
        ty = type(t)
        conds = [f"type({x}) is not {self.obj(ty, 't')}",
                 f"{x}.dtype is not {self.obj(t.dtype, 'd')}",
                 f"{x}.shape != {tuple(t.shape)!r}",
                 f"{x}.stride() != {tuple(t.stride())!r}",
                 f"{x}.requires_grad is not {bool(t.requires_grad)}"]
        if not t.is_cpu:
            conds.append(f"{x}.device != {self.obj(t.device, 'd')}")
        else:
            conds.append(f"not {x}.is_cpu")
        self.fail_if(" or ".join(conds),
                     f"{where}: not a {ty.__name__} of dtype {t.dtype}, shape "
                     f"{tuple(t.shape)}, strides {tuple(t.stride())}, device {t.device}, "
                     f"requires_grad={bool(t.requires_grad)}")
        self.text.append(f"{where}: {ty.__name__}(dtype={t.dtype}, shape={tuple(t.shape)}, "
                         f"stride={tuple(t.stride())}, device={t.device}, "
                         f"requires_grad={bool(t.requires_grad)})")

    def module(self, m, where):
        """Guards of module ``m`` and its submodules."""
        book = module_bookkeeping()
        for path, sub in m.named_modules(remove_duplicate=True):
            if id(sub) in self.seen_modules:
                continue
            self.seen_modules.add(id(sub))
            name = f"{where}.{path}" if path else where
            sd = sub.__dict__
            # (the dicts' comparisons run when one of them changed: each is
            # watched; a registry that is not a dict is compared each call)
            held = [sd.get(reg) for reg in ("_parameters", "_buffers", "_modules") + _HOOKS]
            watched = all(d is None or isinstance(d, dict) for d in held)
            into = self.slow if watched else self.lines
            if watched:
                self.watch.append(sd)
                self.owners.append(sub)
                for d in held:
                    if d is not None:
                        self.watch.append(d)
                        self.owners.append(None)
            s = self.obj(sub, "m")
            x = self.var()
            into.append(f"    {x} = {s}.__dict__")
            # (an OptimizedModule's training is a property: its wrapped module's)
            flag = f"{x}.get('training')" if "training" in sd else f"{s}.training"
            self.fail_if(f"{flag} is not {bool(sub.training)}",
                         f"{name}.training is not {bool(sub.training)}", into)
            self.text.append(f"{name}.training == {bool(sub.training)}")
            for reg in ("_parameters", "_buffers", "_modules"):
                d = sd.get(reg)
                if d is None:
                    continue
                y = self.var()
                into.append(f"    {y} = {x}.get({reg!r})")
                conds = [f"type({y}) is not dict", f"len({y}) != {len(d)}"]
                for k, v in d.items():
                    conds.append(f"{y}.get({k!r}) is not {self.obj(v, 'p')}")
                    if isinstance(v, _TensorBase):
                        if watched:
                            self.held_tensor(v, f"{name}: {reg[1:]} changed")
                            continue
                        conds.append(f"{y}[{k!r}].requires_grad is not {bool(v.requires_grad)}")
                        conds.append(f"{y}[{k!r}].shape != {tuple(v.shape)!r}")
                        conds.append(f"{y}[{k!r}].dtype is not {self.obj(v.dtype, 'd')}")
                self.fail_if(" or ".join(conds), f"{name}: {reg[1:]} changed", into)
            for h in _HOOKS:
                d = sd.get(h)
                if d is not None:
                    self.fail_if(f"len({x}.get({h!r}, ())) != {len(d)}",
                                 f"{name}: {h[1:]} changed", into)
            for k, v in sd.items():
                if k in book or k.startswith("__"):
                    continue
                if _simple_value(v):
                    self.fail_if(_literal_eq(f"{x}.get({k!r})", v, self.consts),
                                 f"{name}.{k} is not {v!r}", into)
                else:
                    self.fail_if(f"{x}.get({k!r}) is not {self.obj(v)}",
                                 f"{name}.{k} is another object", into)
                    if type(v) is list or type(v) is dict or _plain_data(v):
                        # (changed in place, the module's dict stays as it was:
                        # compared each call)
                        self.contents(self.obj(v), v, f"{name}.{k}", [])
                    if isinstance(v, _TensorBase):
                        if watched:
                            self.held_tensor(v, f"{name}.{k} changed shape or requires_grad")
                            continue
                        self.fail_if(f"{x}[{k!r}].shape != {tuple(v.shape)!r} or "
                                     f"{x}[{k!r}].requires_grad is not {bool(v.requires_grad)}",
                                     f"{name}.{k} changed shape or requires_grad", into)
            self.fail_if(f"len({x}) != {len(sd)}", f"{name}: attributes added or removed", into)

    def code_globals(self, fn, where):
        """Guards of the globals and closure cells ``fn``'s code reads."""
        code = getattr(fn, "__code__", None)
        if code is None:
            return []
        found = []
        g = getattr(fn, "__globals__", None) or {}
        gname = self.obj(g, "g")
        for name in global_names(code):
            if name not in g:
                continue
            v = g[name]
            if _is_module(v):
                found.append(v)
            if _simple_value(v):
                self.fail_if(_literal_eq(f"{gname}.get({name!r})", v, self.consts),
                             f"global {name} of {where} is not {v!r}")
                self.text.append(f"global {name} == {v!r}")
            else:
                self.fail_if(f"{gname}.get({name!r}, {gname}) is not {self.obj(v)}",
                             f"global {name} of {where} is another object")
                self.safe_contents(f"{gname}[{name!r}]", v, f"global {name} of {where}",
                                   found)
        for cname, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            c = self.obj(cell, "c")
            if _is_module(v):
                found.append(v)
            if _simple_value(v):
                self.fail_if(_literal_eq(f"{c}.cell_contents", v, self.consts),
                             f"closure variable {cname} of {where} is not {v!r}")
            else:
                self.fail_if(f"{c}.cell_contents is not {self.obj(v)}",
                             f"closure variable {cname} of {where} is another object")
                self.safe_contents(f"{c}.cell_contents", v,
                                   f"closure variable {cname} of {where}", found)
        return found


class Guards:
    """The compiled conditions: ``check(args, kwargs)`` returns None when they
    hold, else a string saying which one failed; ``text`` lists them."""

    def __init__(self, source, consts, text):
        ns = dict(consts)
        exec(compile(source, "<ptcore.compile guards>", "exec"), ns)
        self.check = ns["check"]
        self.source = source
        self.text = text


def build(fn, args, kwargs, modules, state, arguments_only=False):
    """The guards of a graph captured by calling ``fn(*args, **kwargs)``
    with ``modules`` (the modules it belongs to) under global ``state``.
    ``arguments_only``: the global state, the arguments and the modules'
    training flags only, for an entry
    that runs eagerly (its program writes Python state: comparing the state
    it writes would only fail on the next call)."""
    b = _Builder()
    b.lines.append("def check(args, kwargs):")
    b.fail_if(f"_global_state() != {b.obj(state, 's')}",
              "grad mode, inference mode, autocast or the default dtype changed")
    b.text.append(f"grad_enabled == {state[0]}, inference_mode == {state[1]}, "
                  f"autocast == {state[2]}, default dtype == {state[3]}")
    b.fail_if(f"len(args) != {len(args)}", f"not {len(args)} positional arguments")
    b.fail_if(f"list(kwargs) != {b.obj(list(kwargs), 'k')}", f"keyword arguments not {list(kwargs)}")
    found = list(modules)
    for i, a in enumerate(args):
        b.value(f"args[{i}]", a, f"args[{i}]", found)
    for k, a in kwargs.items():
        b.value(f"kwargs[{k!r}]", a, f"kwargs[{k!r}]", found)
    if arguments_only:
        for m in modules:       # (model.eval() may leave a program that compiles)
            b.fail_if(f"{b.obj(m, 'm')}.training is not {bool(m.training)}",
                      f"{type(m).__name__}.training is not {bool(m.training)}")
        b.lines.append("    return None")
        return Guards("\n".join(b.lines) + "\n", b.consts, b.text), found
    # the globals of the function and of the forward of every module reached
    # (modules found among them are guarded too)
    seen_code = set()
    todo = [getattr(fn, "__func__", fn)]
    done_modules = set()
    i = 0
    while todo or i < len(found):
        while todo:
            f = todo.pop()
            code = getattr(f, "__code__", None)
            if code is None or code in seen_code:
                continue
            seen_code.add(code)
            for m in b.code_globals(f, getattr(f, "__qualname__", "the function")):
                if not any(m is x for x in found):
                    found.append(m)
        while i < len(found):
            for sub in found[i].modules():
                if id(type(sub)) not in done_modules:
                    done_modules.add(id(type(sub)))
                    todo.append(type(sub).forward)
            i += 1
    for k, m in enumerate(found):
        b.module(m, "self" if k == 0 and modules else type(m).__name__)
    if b.slow:
        # the modules' dicts compared only when one of them changed since they
        # were last found right (their tags read before the comparison)
        b.consts["_watch"] = _guard_fast.DictWatch(b.watch, b.owners)
        b.lines.append("    if not _watch.unchanged():")
        b.lines.append("        tags = _watch.begin()")
        b.lines.append("        why = _modules_changed()")
        b.lines.append("        if why is not None:")
        b.lines.append("            return why")
        b.lines.append("        _watch.commit(tags)")
    if b.tensors:
        b.consts.update(_held=tuple(b.tensors), _held_meta=tuple(b.tmeta),
                        _held_msg=tuple(b.tmsg), _tensors_changed=_guard_fast.tensors_changed)
        b.lines.append("    i = _tensors_changed(_held, _held_meta)")
        b.lines.append("    if i >= 0:")
        b.lines.append("        return _held_msg[i]")
    b.lines.append("    return None")
    source = "\n".join(b.lines) + "\n"
    if b.slow:
        source += "\n\ndef _modules_changed():\n" + "\n".join(b.slow) + "\n    return None\n"
    return Guards(source, b.consts, b.text), found
