"""Reading TorchScript archives written by ``torch.jit.save``.

A TorchScript archive is a zip file holding

* ``data.pkl`` -- the module tree: one ``__torch__.<qualified class>`` object
  per module with its attributes, parameters and buffers (tensors are
  persistent ids pointing at ``data/<key>``);
* ``constants.pkl`` -- the tensors that the code reads as ``CONSTANTS.c<i>``
  (storages in ``constants/<key>``);
* ``code/__torch__/...py`` -- the TorchScript source of every class and
  function, in TorchScript's Python-syntax subset, calling ATen ops as
  ``torch.<op>``, primitives as ``ops.prim.<op>``.

Reading one runs no code from the file and needs no PyTorch:

* the pickles go through ptcore.load's restricted unpickler, which only
  creates inert records for the ``__torch__`` classes and rebuilds tensors;
* the TorchScript source is parsed with :mod:`ast` (never executed) and
  compiled by ptcore.jit.script's compiler into ptcore's graph IR; names
  resolve only to ptcore's operator table, a fixed set of primitives, the
  archive's constants and the archive's own TorchScript functions.  A name
  outside those is a clear error.

The result is a :class:`ptcore.jit.ScriptModule` that shares ptcore's
parameters and runs through ptcore's dispatch point (so autograd works).
"""
import ast
import builtins
import inspect
import io
import pickle

import ptcore
from ptcore import serialization as _ser
from ptcore.jit._ir import JitError
from ptcore.jit._script import ScriptSource, _MAX_WORK
from ptcore.jit._script_class import ScriptObject
from ptcore.jit._aten_composites import COMPOSITES
from ptcore.jit._script_module import RecursiveScriptModule, _scalar_types
from ptcore.jit._compile_values import Const, _Seq
from ptcore.jit._script import _Compiler
from ptcore._dispatch.table import op_of
from ptcore.nn import Parameter

__all__ = ["is_torchscript_archive", "load_torchscript"]

_INT64_MAX = 2 ** 63 - 1


def is_torchscript_archive(names):
    """Whether the zip member ``names`` look like a torch.jit.save archive."""
    return any(n.endswith("/data.pkl") for n in names) and \
        any("/code/__torch__" in n for n in names)


# --------------------------------------------------------------------- pickles

class _TSClass:
    """Stands for a ``__torch__.*`` class named in a pickle."""

    def __init__(self, qualname):
        self.qualname = qualname

    def __repr__(self):
        return f"<TorchScript class {self.qualname}>"


class _TSObject:
    """An instance of a ``__torch__`` class: its attribute dict, nothing else."""

    def __init__(self, cls):
        self.cls = cls
        self.state = {}


def _ident(x):
    return x


_JIT_PICKLE_HELPERS = {"build_intlist", "build_tensorlist", "build_doublelist",
                       "build_boollist", "restore_type_tag"}


class _TSUnpickler(_ser._RestrictedUnpickler):
    dispatch = dict(_ser._RestrictedUnpickler.dispatch)

    def __init__(self, file, persistent_load):
        super().__init__(file, persistent_load)
        self._classes = {}

    def find_class(self, module, name):
        if isinstance(module, str) and (module == "__torch__" or module.startswith("__torch__.")):
            q = module + "." + name
            c = self._classes.get(q)
            if c is None:
                c = self._classes[q] = _TSClass(q)
            return c
        if module == "torch.jit._pickle" and name in _JIT_PICKLE_HELPERS:
            return _ident if name != "restore_type_tag" else (lambda v, t: v)
        return super().find_class(module, name)

    def load_reduce(self):
        func = self.stack[-2]
        if func is _ident or getattr(func, "__name__", "") == "<lambda>" and \
                func.__module__ == __name__:
            args = self.stack.pop()
            self.stack[-1] = func(*args)
            return
        super().load_reduce()
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        cls = self.stack[-2]
        if isinstance(cls, _TSClass):
            self.stack.pop()
            self.stack[-1] = _TSObject(cls)
            return
        super().load_newobj()
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_build(self):
        inst = self.stack[-2]
        if isinstance(inst, _TSObject):
            state = self.stack.pop()
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise pickle.UnpicklingError(f"the state of {inst.cls.qualname} is not an "
                                             "attribute dict")
            inst.state.update(state)
            return
        super().load_build()
    dispatch[pickle.BUILD[0]] = load_build


def _unpickle(arch, prefix, member, datadir, restore):
    data = arch.read_small(prefix + member)
    pl = _ser._torch_persistent_load(arch, prefix, restore, datadir=datadir)
    try:
        obj = _TSUnpickler(io.BytesIO(data), pl).load()
        return _ser._untype_storages(obj)
    except JitError:
        raise
    except pickle.UnpicklingError as e:
        raise JitError(f"ptcore.jit.load: {arch.name}: {prefix}{member}: {e}") from None
    except RecursionError:
        raise JitError(f"ptcore.jit.load: {arch.name}: {prefix}{member} nests its "
                       "containers too deeply to be read (RecursionError)") from None
    except (EOFError, IndexError, KeyError, ValueError, TypeError, AttributeError,
            OverflowError, MemoryError) as e:
        raise JitError(f"ptcore.jit.load: {arch.name}: corrupt {prefix}{member} "
                       f"({type(e).__name__}: {e})") from None


# --------------------------------------------------------------------- code

class TSFunction(ScriptSource):
    """A function (or method) of the archive's TorchScript code, compiled by
    ptcore.jit.script's compiler from its parsed AST."""

    def __init__(self, fdef, filename, namespace, qualname, annotation=None):
        """``annotation(node)``: the type a parameter's annotation names
        (None: parameters are typed by the code's uses, as in an archive)."""
        self._ts_fdef = fdef
        self._ts_filename = filename
        self.__globals__ = namespace
        self.__qualname__ = self.__name__ = qualname
        self.__annotations__ = {}
        params = []
        a = fdef.args
        defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
        for arg, d in zip(a.args, defaults):
            ann = inspect.Parameter.empty
            if annotation is not None and arg.annotation is not None:
                ann = self.__annotations__[arg.arg] = annotation(arg.annotation)
            default = inspect.Parameter.empty
            if d is not None:
                try:
                    default = ast.literal_eval(d)
                except ValueError:
                    raise JitError(f"{filename}: default of {arg.arg} in {qualname} is not a "
                                   "literal") from None
            params.append(inspect.Parameter(arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=default, annotation=ann))
        self._ts_signature = inspect.Signature(params)

    def __repr__(self):
        return f"<TorchScript function {self.__qualname__}>"


class _TSClassDef:
    def __init__(self, cdef, filename, namespace, qualname):
        self.qualname = qualname
        self.is_module = any(isinstance(b, ast.Name) and b.id == "Module" for b in cdef.bases)
        self.parameters, self.buffers, self.constants, self.methods = [], [], {}, {}
        for st in cdef.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                name = st.targets[0].id
                if name not in ("__parameters__", "__buffers__"):
                    # as torch: a class constant is ``name : Final[T] = value``
                    raise JitError(f"ptcore.jit.load: {filename}:{st.lineno}: class "
                                   f"{cdef.name}: Expected a type to present for class "
                                   f"constant {name!r}")
                vals = _literal(st.value, filename)
                if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
                    raise JitError(f"ptcore.jit.load: {filename}:{st.lineno}: {name} of class "
                                   f"{cdef.name} is not a list of names")
                (self.parameters if name == "__parameters__" else self.buffers).extend(vals)
            elif isinstance(st, ast.AnnAssign) and st.value is not None and \
                    isinstance(st.target, ast.Name):
                _check_attr_name(st.target.id, f"{filename}:{st.lineno}: class {cdef.name}")
                self.constants[st.target.id] = _literal(st.value, filename)
            elif isinstance(st, ast.FunctionDef):
                self.methods[st.name] = TSFunction(st, filename, namespace,
                                                   f"{qualname}.{st.name}")


# the attributes of a module read from an archive that its state and class
# constants may not set: ptcore's own (``_modules``, ``_graphs``, ...), the
# class's methods and properties, and Python's dunders (``__dict__``, ``__class__``)
_OWN_ATTRS = []


def _check_attr_name(name, where):
    if not _OWN_ATTRS:
        own = set(vars(RecursiveScriptModule())) | {"_ts_methods", "_graphs", "_original_name"}
        _OWN_ATTRS.append(own - {"training", "_is_full_backward_hook"})
    if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")) or \
            name in _OWN_ATTRS[0] or (name != "training" and
                                      hasattr(RecursiveScriptModule, name)):
        raise JitError(f"ptcore.jit.load: {where}: the attribute name {name!r} is reserved "
                       "(an attribute of the module object itself)")


def _literal(node, filename):
    try:
        return ast.literal_eval(node)
    except (TypeError, SyntaxError, MemoryError, RecursionError) as e:
        raise JitError(f"ptcore.jit.load: {filename}: class constant is not a literal "
                       f"({type(e).__name__})") from None
    except ValueError:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "device" and node.args:
            return ptcore.device(ast.literal_eval(node.args[0]))
        raise JitError(f"{filename}: class constant {ast.dump(node)[:80]} is not a literal") \
            from None


class _Code:
    """The archive's TorchScript sources, parsed on demand."""

    def __init__(self, arch, prefix, namespace):
        self.arch, self.prefix, self.ns = arch, prefix, namespace
        self.files = {}
        self.names = set(arch.zf.namelist())

    def _module(self, modpath):
        tree = self.files.get(modpath)
        if tree is None:
            member = self.prefix + "code/" + modpath.replace(".", "/") + ".py"
            if member not in self.names:
                raise JitError(f"ptcore.jit.load: {self.arch.name}: no code for {modpath} "
                               f"(expected {member})")
            try:
                src = self.arch.read_small(member).decode("utf-8")
                tree = ast.parse(src, filename=member)
            except (SyntaxError, UnicodeDecodeError, ValueError) as e:
                raise JitError(f"ptcore.jit.load: {member}: not valid TorchScript: {e}") from None
            except (RecursionError, MemoryError) as e:
                # Python's parser gives up on an expression nested or chained too deeply
                raise JitError(f"ptcore.jit.load: {member}: the code nests too deeply to be "
                               f"parsed ({type(e).__name__})") from None
            defs = {}
            for st in tree.body:
                if isinstance(st, ast.ClassDef):
                    defs[st.name] = _TSClassDef(st, member, self.ns, f"{modpath}.{st.name}")
                elif isinstance(st, ast.FunctionDef):
                    defs[st.name] = TSFunction(st, member, self.ns, f"{modpath}.{st.name}")
            tree = self.files[modpath] = defs
        return tree

    def lookup(self, qualname):
        modpath, _, name = qualname.rpartition(".")
        defs = self._module(modpath)
        if name not in defs:
            raise JitError(f"ptcore.jit.load: {self.arch.name}: {qualname} is not defined in "
                           "the archive's code")
        return defs[name]


class _QualifiedNS:
    """``__torch__.a.b.f`` in the code: resolves to the archive's functions."""
    _ts_namespace = True

    def __init__(self, code, path):
        self._code, self._path = code, path

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        q = self._path + "." + name
        modpath = q.rsplit(".", 1)[0]
        member = self._code.prefix + "code/" + modpath.replace(".", "/") + ".py"
        if member in self._code.names:
            defs = self._code._module(modpath)
            if name in defs:
                return defs[name]
        return _QualifiedNS(self._code, q)


class _ConstantsNS:
    _ts_namespace = True

    def __init__(self, consts):
        self._c = consts

    def __getattr__(self, name):
        if name.startswith("c") and name[1:].isdigit() and int(name[1:]) < len(self._c):
            return self._c[int(name[1:])]
        raise AttributeError(f"the archive has no constant {name}")


# ------------------------------------------------------- ops named in the code

def _dtype(v):
    if isinstance(v, int) and not isinstance(v, bool):
        try:
            return _DTYPES_BY_NUM()[v]
        except KeyError:
            raise JitError(f"TorchScript archive names dtype number {v}, which ptcore does not "
                           "support") from None
    return v


_dtype_cache = []


def _DTYPES_BY_NUM():
    """TorchScript's dtype numbers (``c10::ScalarType``: 6 is float32) -> dtype."""
    if not _dtype_cache:
        _dtype_cache.append({num: dt for dt, num in _scalar_types().items()})
    return _dtype_cache[0]


_MEMORY_FORMATS = {0: "contiguous_format", 1: "preserve_format", 2: "channels_last",
                   3: "channels_last_3d"}
# TorchScript's generic operators on numbers, lists and tensors (aten::add of two ints)
# -> the prim of the Python operator the compiler emits for them (not op-table names:
# the names of TorchScript's schema and of the Python operator prims)
_POLY = {"__xor__": "bitxor", "add": "add", "sub": "sub", "mul": "mul", "div": "truediv", "floordiv": "floordiv",
         "remainder": "mod", "gt": "gt", "lt": "lt", "ge": "ge", "le": "le", "eq": "eq",
         "ne": "ne", "__is__": "is", "__isnot__": "isnot", "__and__": "and", "__or__": "or"}
_PRIM_PY = {"len": "len", "Int": "int", "Float": "float", "Bool": "bool", "neg": "neg",
            "__not__": "not", "format": "format", "str": "str"}


def _norm_kwargs(kwargs):
    out = {}
    for k, v in kwargs.items():
        val = v.value if _is_const(v) else None
        if k == "dtype" and _is_const(v):
            v = _const(_dtype(val))
        elif k in ("layout", "pin_memory") and _is_const(v) and val in (None, False, 0):
            continue
        elif k == "memory_format" and _is_const(v) and isinstance(val, int):
            v = _const(getattr(ptcore, _MEMORY_FORMATS.get(val, "preserve_format")))
        out[k] = v
    return out


def _is_const(x):
    return isinstance(x, Const)


def _const(v):
    return Const(v)


_RECURRENCES = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN_TANH", "rnn_relu": "RNN_RELU"}


def _composite(name):
    return COMPOSITES.get(name)


class _ATen:
    """``torch.<name>`` / ``ops.aten.<name>`` in TorchScript code."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<aten::{self.name}>"

    def _jit_compile_call(self, ctx, args, kwargs, node):
        name = self.name
        emit = ctx.c.emit
        kwargs = _norm_kwargs(kwargs)
        allconst = all(_is_const(a) and not isinstance(a.value, ptcore.Tensor) for a in args) \
            and all(_is_const(v) for v in kwargs.values())
        if name in _RECURRENCES:
            # the whole-sequence recurrences: ptcore's ATen-form function
            return emit(("prim", "aten_recurrence"), [_const(_RECURRENCES[name])] + list(args))
        composite = _composite(name)
        if composite is not None:
            # ptcore's own composition of the op, compiled inline
            return ctx.c.compile_function(composite, None, list(args), kwargs,
                                          f"aten::{name}")
        if name == "device" and allconst:
            return _const(ptcore.device(*[a.value for a in args]))
        if name in _POLY and len(args) == 2 and not kwargs:
            if allconst and _POLY[name] not in ("and", "or"):
                # folded within the compiler's bounds (None: left to run time)
                folded = ctx.fold(node, _POLY[name], args[0], args[1])
                if folded is not None:
                    return folded
            return emit(("prim", _POLY[name]), args)
        if name == "format" and args and _is_const(args[0]):
            ctx.check_format(node, args[0].value)
        if name in _PRIM_PY:
            return emit(("prim", _PRIM_PY[name]), args)
        if name == "size" and len(args) == 1:     # List[int] in TorchScript
            return emit(("prim", "list_copy"), [emit(("prim", "method"), [_const("size"), args[0]])])
        if name == "_set_item" and len(args) == 3:      # aten::_set_item(l, idx, v): l[idx] = v
            return emit(("prim", "setitem"), args)
        if name in ("size", "dim", "numel", "append", "contiguous", "item", "tolist", "items",
                    "keys", "values"):
            return emit(("prim", "method"), [_const(name), args[0]] + list(args[1:]), kwargs)
        if name == "slice":
            x, dim, start, end, step = (list(args) + [_const(0), _const(None), _const(None),
                                                     _const(1)][len(args) - 1:])[:5]
            if _is_const(end) and end.value is not None and end.value >= _INT64_MAX:
                end = _const(None)
            return emit(("prim", "aten_slice"), [x, dim, start, end, step])
        if name == "list":
            return emit(("prim", "list_copy"), [args[0]]) if args else _const([])
        if name == "to" and len(args) >= 2:
            rest = list(args[1:])
            if _is_const(rest[0]) and isinstance(rest[0].value, int) and \
                    not isinstance(rest[0].value, bool):
                rest = [_const(_dtype(rest[0].value))] + rest[1:]
            elif len(rest) >= 2 and _is_const(rest[1]) and isinstance(rest[1].value, int) \
                    and not isinstance(rest[1].value, bool):
                rest = [rest[0], _const(_dtype(rest[1].value))] + rest[2:]
            # (tensor, dtype|device[, dtype], non_blocking, copy, memory_format)
            keep = [r for r in rest if not (_is_const(r) and (r.value is None or
                                                              isinstance(r.value, bool)))]
            return emit(("prim", "method"), [_const("to"), args[0]] + keep, kwargs)
        if name == "_convolution":
            return _convolution(ctx, args)
        if name == "warn":
            return _const(None)
        if name in ("any", "all"):       # also aten::any.bool / all.bool of a list
            return emit(("prim", "aten_" + name), args, kwargs)
        if name in ("is_grad_enabled", "is_autocast_enabled", "is_inference_mode_enabled"):
            return emit(("prim", name), args)
        if name == "__range_length":
            return emit(("prim", "len"), [emit(("prim", "range"), args)])
        if name == "__derive_index":
            return emit(("prim", "add"), [args[1], emit(("prim", "mul"), [args[0], args[2]])])
        if name == "__contains__":
            return emit(("prim", "in"), [args[1], args[0]])
        if name == "__getitem__":
            return emit(("prim", "getitem"), args)
        fn = _resolve(name)
        if fn is None:
            # fails when (and only if) the program reaches it, as a branch of the
            # code that is not taken (torch's fast paths) must not stop loading
            return emit(("prim", "unsupported"), [_const(f"aten::{name}")])
        if isinstance(fn, str):        # a Tensor method
            return emit(("prim", "method"), [_const(fn), args[0]] + list(args[1:]), kwargs)
        args = _dtype_positional(fn, args)
        d = op_of(fn)
        if d is None:
            raise JitError(f"aten::{name} maps to {fn!r}, which is not in ptcore's operator table")
        return emit((d.namespace, d.name), [a if not isinstance(a, _Seq) else a for a in args],
                    kwargs)


def _dtype_positional(fn, args):
    """Convert int dtypes passed positionally (``softmax(x, dim, 6)``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return args
    names = [p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = list(args)
    for i, a in enumerate(args):
        if i < len(names) and names[i] == "dtype" and _is_const(a):
            out[i] = _const(_dtype(a.value))
    return out


_RENAMES = {"dropout": ("nn.functional", "dropout"), "feature_dropout": ("nn.functional",
                                                                          "dropout2d")}


def _resolve(name):
    if name in _RENAMES:
        mod, n = _RENAMES[name]
        return getattr(ptcore.nn.functional, n)
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else None
    for ns in (ptcore, ptcore.nn.functional, ptcore.linalg, ptcore.special, ptcore.fft):
        f = getattr(ns, name, None)
        # only the operator table's entries: a plain function of the namespace (ptcore.lstm,
        # the ATen-form recurrences) has no graph node and is unsupported when reached
        if callable(f) and not isinstance(f, type) and op_of(f) is not None:
            return f
    if hasattr(ptcore.Tensor, name):
        return name
    if base is not None and hasattr(ptcore.Tensor, name):
        return name
    return None


def _convolution(ctx, args):
    (x, w, b, stride, padding, dilation, transposed, output_padding, groups) = args[:9]
    if not _is_const(transposed):
        raise JitError("aten::_convolution with a run-time 'transposed' flag")
    nd = len(stride.value) if _is_const(stride) else 2
    F = ptcore.nn.functional
    if transposed.value:
        fn = getattr(F, f"conv_transpose{nd}d")
        d = op_of(fn)
        return ctx.c.emit((d.namespace, d.name), [x, w, b, stride, padding, output_padding,
                                                  groups, dilation])
    fn = getattr(F, f"conv{nd}d")
    d = op_of(fn)
    return ctx.c.emit((d.namespace, d.name), [x, w, b, stride, padding, dilation, groups])


_TS_DUNDERS = {"__not__", "__is__", "__isnot__", "__and__", "__or__", "__xor__",
               "__contains__", "__getitem__", "__derive_index", "__range_length"}


class _TorchNS:
    _ts_namespace = True

    def __getattr__(self, name):
        if name.startswith("__") and name not in _TS_DUNDERS:
            raise AttributeError(name)
        return _ATen(name)


class _Prim:
    def __init__(self, name):
        self.name = name

    def _jit_compile_call(self, ctx, args, kwargs, node):
        n = self.name
        if n == "RaiseException":
            return ctx.c.emit(("prim", "raise"), [args[0] if args else _const("TorchScript exception")])
        if n in ("unchecked_cast", "unchecked_unwrap_optional"):
            return args[0]
        if n == "NumToTensor":
            return ctx.c.emit(("prim", "num_to_tensor"), [args[0]])
        if n in ("dtype", "device", "shape", "layout", "requires_grad", "is_cuda", "type",
                 "index"):
            return ctx.c.emit(("prim", "getattr"), [args[0], _const(n)])
        if n in ("is_nested", "is_sparse", "is_sparse_csr", "is_mkldnn", "is_quantized",
                 "is_meta", "is_xpu", "is_mps", "is_vulkan", "is_ipu", "is_xla", "is_mtia",
                 "is_maia"):
            return _const(False)        # ptcore has none of these tensor kinds
        if n == "data":
            return ctx.c.emit(("prim", "method"), [_const("detach"), args[0]])
        if n in ("min", "max", "abs"):
            return ctx.c.emit(("prim", n), args)
        if n == "TupleIndex":
            return ctx.c.emit(("prim", "getitem"), args)
        return ctx.c.emit(("prim", "unsupported"), [_const(f"prim::{n}")])


class _OpsNS:
    _ts_namespace = True

    def __init__(self, kind):
        self._kind = kind

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._kind is None:
            if name in ("prim", "aten"):
                return _OpsNS(name)
            raise AttributeError(f"ops.{name} is not supported")
        return _Prim(name) if self._kind == "prim" else _ATen(name)


class _Annotate:
    """``annotate(T, v)`` / ``unchecked_cast(T, v)``: ``v``; an empty list or
    dict literal becomes a run-time container (the code appends to it)."""

    def _jit_compile_call(self, ctx, args, kwargs, node):
        v = args[1]
        if _is_const(v) and type(v.value) is list:
            return ctx.c.emit(("prim", "list"), [_const(x) for x in v.value])
        if _is_const(v) and type(v.value) is dict:
            items = []
            for k, x in v.value.items():
                items += [_const(k), _const(x)]
            return ctx.c.emit(("prim", "dict"), items)
        return v


class _GetAttr:
    """``getattr(self, "0")`` (Sequential/ModuleList children in the code)."""

    def _jit_compile_call(self, ctx, args, kwargs, node):
        if len(args) != 2 or not all(_is_const(a) for a in args) or \
                not isinstance(args[1].value, str):
            raise ctx.err(node, "getattr needs a module and a constant name")
        return _const(ctx._restricted_attr(node, args[0].value, args[1].value))


class _Uninitialized:
    def _jit_compile_call(self, ctx, args, kwargs, node):
        return _const(None)


class _AnyType:
    """Type names used as values in the code (``annotate(List[int], [])``)."""
    _ts_namespace = True
    _ts_type = True         # subscripted in the code: ``Optional[Tensor]``

    def __getitem__(self, item):
        return self

    def __getattr__(self, name):
        raise AttributeError(f"a type name has no attribute {name!r}")


def code_namespace():
    """The names TorchScript code may use besides its own functions and
    classes (an archive's code, ``CompilationUnit`` source)."""
    return {"torch": _TorchNS(), "ops": _OpsNS(None), "annotate": _Annotate(),
            "unchecked_cast": _Annotate(), "getattr": _GetAttr(),
            "uninitialized": _Uninitialized(), "Tensor": _AnyType(), "List": _AnyType(),
            "Optional": _AnyType(), "Tuple": _AnyType(), "Dict": _AnyType(),
            "inf": float("inf"), "nan": float("nan"), "int": builtins.int,
            "float": builtins.float, "bool": builtins.bool, "str": builtins.str,
            "NoneType": _AnyType(), "Final": _AnyType()}


# --------------------------------------------------------------------- modules

def _build_module(obj, code, path, made):
    if id(obj) in made:
        return made[id(obj)]
    cdef = code.lookup(obj.cls.qualname)
    if not isinstance(cdef, _TSClassDef):
        raise JitError(f"{obj.cls.qualname} is not a class")
    sm = RecursiveScriptModule()
    made[id(obj)] = sm
    object.__setattr__(sm, "_original_name", obj.cls.qualname.rsplit(".", 1)[-1])
    object.__setattr__(sm, "_ts_methods", cdef.methods)
    state = obj.state
    sm.training = bool(state.get("training", False))
    for n in cdef.parameters:
        t = state.get(n)
        if t is None:
            sm._parameters[n] = None
            continue
        if not isinstance(t, ptcore.Tensor):
            raise JitError(f"{path or 'the root module'}: parameter {n} is not a tensor")
        sm._parameters[n] = Parameter(t, requires_grad=t.requires_grad or True)
    for n in cdef.buffers:
        sm._buffers[n] = state.get(n)
    for k, v in cdef.constants.items():
        object.__setattr__(sm, k, v)
    for k, v in state.items():
        if k in cdef.parameters or k in cdef.buffers or k == "training":
            continue
        _check_attr_name(k, f"{obj.cls.qualname} (data.pkl)")
        if isinstance(v, _TSObject):
            sub = code.lookup(v.cls.qualname)
            if isinstance(sub, _TSClassDef) and sub.is_module:
                sm._modules[k] = _build_module(v, code, f"{path}.{k}" if path else k, made)
                continue
        object.__setattr__(sm, k, _script_objects(v, {}))
    return sm


def _script_objects(v, memo):
    """``v`` with the archive's script-class objects (``__torch__.einops.einops.
    TransformRecipe``) as ScriptObjects: their class's name and attribute dict."""
    if isinstance(v, _TSObject):
        so = memo.get(id(v))
        if so is None:
            name = v.cls.qualname
            so = memo[id(v)] = ScriptObject(name[len("__torch__."):] if
                                            name.startswith("__torch__.") else name, {})
            for n, x in v.state.items():
                so._fields[n] = _script_objects(x, memo)
        return so
    if type(v) in (list, tuple):
        return type(v)(_script_objects(x, memo) for x in v)
    if type(v) is dict:
        return {k: _script_objects(x, memo) for k, x in v.items()}
    return v


def _forward_arg_names(fn):
    return [a.arg for a in fn._ts_fdef.args.args[1:]]


def _compile_all(root):
    graphs = {}
    spent = 0           # one compile budget for all of the archive's methods
    methods = root._ts_methods
    if "forward" not in methods:
        # an overloaded forward (torch's scripted RNN/LSTM/GRU: forward__0 for a
        # tensor input, forward__1 for a PackedSequence): the tensor overload
        overloads = sorted(n for n in methods if n.startswith("forward__"))
        for n in overloads:
            args = methods[n]._ts_fdef.args.args
            ann = args[1].annotation if len(args) > 1 else None
            if ann is None or (isinstance(ann, ast.Name) and ann.id == "Tensor"):
                methods = dict(methods, forward=methods[n])
                object.__setattr__(root, "_ts_methods", methods)
                break
    for name in ("forward",) + tuple(n for n in methods if n != "forward" and
                                     not n.startswith("_")):
        fn = methods.get(name)
        if fn is None:
            continue
        comp = _Compiler(root)
        comp.work = spent
        inputs = []
        for an in _forward_arg_names(fn):
            v = comp.g.new_value("input", name=an)
            comp.g.inputs.append(v.id)
            inputs.append({"v": v.id})
        try:
            result = comp.compile_function(fn, root, inputs, {}, fn.__qualname__)
        except JitError:
            if name == "forward" or comp.work > _MAX_WORK:
                raise
            continue        # helper methods are compiled where they are called
        finally:
            spent = comp.work
        comp.g.outputs = comp.enc(result)
        comp.g.check()
        # the code's parameter defaults (``mask: Optional[Tensor]=None``) apply
        # to calls, as in torch
        comp.g.signature = [[p.name, p.default] for p in
                            list(fn._ts_signature.parameters.values())[1:]]
        graphs[name] = comp.g
    return graphs


def load_torchscript(arch, map_location=None, _extra_files=None):
    """Read the torch.jit.save archive ``arch`` (an opened serialization
    archive) into a ScriptModule."""
    names = arch.zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        raise JitError(f"ptcore.jit.load: {arch.name}: no data.pkl at the top of the archive")
    prefix = pkl[0][:-len("data.pkl")]
    try:                                # (torch's reader refuses versions it does not know)
        _ser._check_format_version(arch, prefix)
    except _ser.CheckpointError as e:
        raise JitError(str(e).replace("ptcore.load:", "ptcore.jit.load:", 1)) from None
    restore = _ser._make_restore(map_location)
    root_obj = _unpickle(arch, prefix, "data.pkl", "data/", restore)
    consts = ()
    if prefix + "constants.pkl" in names:
        consts = _unpickle(arch, prefix, "constants.pkl", "constants/", restore)
        if not isinstance(consts, tuple):
            raise JitError(f"ptcore.jit.load: {arch.name}: constants.pkl is not a tuple")
    if not isinstance(root_obj, _TSObject):
        raise JitError(f"ptcore.jit.load: {arch.name}: data.pkl does not hold a module")
    ns = {}
    code = _Code(arch, prefix, ns)
    ns.update(code_namespace())
    ns.update({"CONSTANTS": _ConstantsNS(consts), "__torch__": _QualifiedNS(code, "__torch__")})
    try:
        root = _build_module(root_obj, code, "", {})
        graphs = _compile_all(root)
    except RecursionError:
        raise JitError(f"ptcore.jit.load: {arch.name}: the archive's modules or code nest too "
                       "deeply to be compiled (RecursionError)") from None
    object.__setattr__(root, "_graphs", graphs)
    if _extra_files is not None:
        for k in list(_extra_files):
            member = prefix + "extra/" + k
            _extra_files[k] = arch.read_small(member) if member in names else b""
    return root
