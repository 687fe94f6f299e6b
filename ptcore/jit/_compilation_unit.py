"""``ptcore.jit.CompilationUnit`` (``torch.jit.CompilationUnit``): functions
compiled from TorchScript source text.

The text is parsed with :mod:`ast` and each ``def`` compiled by
``ptcore.jit.script``'s compiler into a graph (:class:`ScriptFunction`);
the source is never executed by Python.  In the code, ``torch`` names
ptcore, and the functions of the unit may call each other."""
import ast
import itertools
import linecache
import typing

import ptcore
from ptcore.jit._script import ScriptError, _compile
from ptcore.jit._torchscript import TSFunction, code_namespace
from ptcore.jit._script_module import ScriptFunction
from ptcore.jit._compile_values import Const
from ptcore._dispatch.table import op_of

__all__ = ["CompilationUnit"]

_SOURCES = itertools.count(1)
_TYPING = ("List", "Tuple", "Dict", "Optional", "Union", "Any")


def _types():
    """The names an annotation may use."""
    ns = {"Tensor": ptcore.Tensor, "int": int, "float": float, "bool": bool, "str": str,
          "complex": complex, "torch": ptcore}
    for name in _TYPING:
        ns[name] = getattr(typing, name)
    return ns


def _namespace():
    """The names the code may use: the TorchScript archive reader's, with the
    ``torch`` of hand-written TorchScript (``torch.nn.functional.X``,
    ``torch.linalg.X``, ``torch.jit.annotate``, dtypes and constants).
    ``torch.X`` resolves to an op of the operator table; nothing else is
    callable."""
    ns = code_namespace()
    ns["torch"] = _UserTorch(ns["torch"], ns["annotate"])
    return ns


_SUBMODULES = frozenset({"nn.functional", "linalg", "special", "fft"})
_TORCH_CONSTANTS = ("pi", "e", "inf", "nan")


class _UserTorch:
    """``torch`` in CompilationUnit source."""
    _ts_namespace = True

    def __init__(self, aten, annotate):
        self._aten, self._annotate = aten, annotate

    def __getattr__(self, name):
        if name.startswith("__"):
            return getattr(self._aten, name)
        if name == "jit":
            return _UserJit(self._annotate)
        if name == "nn":
            return _UserModule("nn")
        if name in _SUBMODULES:
            return _UserModule(name)
        v = getattr(ptcore, name, None)
        if isinstance(v, ptcore.dtype) or (name in _TORCH_CONSTANTS and isinstance(v, float)):
            return v
        return getattr(self._aten, name)


class _UserJit:
    """``torch.jit`` in CompilationUnit source: ``annotate``, ``is_scripting``."""
    _ts_namespace = True

    def __init__(self, annotate):
        self._annotate = annotate

    def __getattr__(self, name):
        if name == "annotate":
            return self._annotate
        if name == "is_scripting":
            return _Constant(True)
        raise AttributeError(f"torch.jit.{name} is not available in compiled source")


class _Constant:
    def __init__(self, value):
        self.value = value

    def _jit_compile_call(self, ctx, args, kwargs, node):
        return Const(self.value)


class _UserModule:
    """``torch.nn.functional`` / ``torch.linalg`` / ... : their table ops."""
    _ts_namespace = True

    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        path = f"{self._path}.{name}"
        if path in _SUBMODULES:
            return _UserModule(path)
        mod = ptcore
        for part in self._path.split("."):
            mod = getattr(mod, part)
        fn = getattr(mod, name, None)
        if fn is None or not callable(fn):
            raise AttributeError(f"torch.{path} is not available in compiled source")
        return _TableOp(fn, f"torch.{path}")


class _TableOp:
    """A function of a ptcore namespace called in compiled source: its
    operator-table entry becomes the node."""

    def __init__(self, fn, where):
        self._fn, self._where = fn, where

    def _jit_compile_call(self, ctx, args, kwargs, node):
        d = op_of(self._fn)
        if d is None:
            raise ctx.err(node, f"{self._where} is not an op of ptcore's operator table")
        return ctx.c.emit((d.namespace, d.name), args, kwargs)


class _UnitFunction(TSFunction):
    """One ``def`` of the unit's source, compiled restricted (as a TorchScript
    archive's code: names resolve to the unit's functions, ``torch``'s ops and
    a few builtins; no Python function runs at compile time), its parameters
    typed by their annotations."""

    def __init__(self, fdef, filename, namespace):
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise ScriptError(f"{filename}:{fdef.lineno}: {fdef.name} takes *args, **kwargs, "
                              "keyword-only or positional-only parameters; CompilationUnit "
                              "functions take plain parameters")
        types = _types()
        super().__init__(fdef, filename, namespace, fdef.name,
                         annotation=lambda node: _annotation(node, types, filename))

    def __repr__(self):
        return f"<CompilationUnit function {self.__qualname__}>"


def _annotation(node, ns, filename):
    """The type an annotation names (``int``, ``Tensor``, ``List[int]``,
    ``Optional[Tensor]``, ``torch.Tensor``), resolved without evaluating code."""
    if isinstance(node, ast.Constant) and node.value is None:
        return type(None)
    if isinstance(node, ast.Name):
        if node.id in ns:
            return ns[node.id]
    if isinstance(node, ast.Attribute):
        base = _annotation(node.value, ns, filename)
        if base is ptcore and hasattr(ptcore, node.attr):
            return getattr(ptcore, node.attr)
    if isinstance(node, ast.Subscript):
        base = _annotation(node.value, ns, filename)
        sl = node.slice
        args = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        resolved = tuple(_annotation(x, ns, filename) for x in args)
        return base[resolved if len(resolved) > 1 else resolved[0]]
    raise ScriptError(f"{filename}:{getattr(node, 'lineno', '?')}: unknown type annotation "
                      f"{ast.unparse(node)!r}")


class CompilationUnit:
    """Functions compiled from source: ``CompilationUnit(src)`` or
    ``cu = CompilationUnit(); cu.define(src)``, then ``cu.name(args)``."""

    def __init__(self, lang=None, _frames_up=0):
        self.__dict__["_functions"] = {}
        self.__dict__["_ns"] = _namespace()
        if lang is not None:
            self.define(lang)

    def define(self, src, rcb=None, _frames_up=0):
        """Compile the ``def`` s of ``src`` (TorchScript source text)."""
        if not isinstance(src, str):
            raise TypeError(f"CompilationUnit.define expects source text, got "
                            f"{type(src).__name__}")
        filename = f"<CompilationUnit {next(_SOURCES)}>"
        # the compiler's errors quote the line (as for a scripted function's file)
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        try:
            tree = ast.parse(src, filename)
        except SyntaxError as e:
            raise ScriptError(f"{filename}:{e.lineno}: {e.msg}") from None
        except (RecursionError, MemoryError) as e:
            # Python's parser gives up on an expression nested or chained too deeply
            raise ScriptError(f"{filename}: the source nests too deeply to be parsed "
                              f"({type(e).__name__})") from None
        new = []
        for st in tree.body:
            if not isinstance(st, ast.FunctionDef):
                raise ScriptError(f"{filename}:{st.lineno}: a CompilationUnit holds function "
                                  f"definitions only, not {type(st).__name__}")
            new.append(_UnitFunction(st, filename, self._ns))
        # the source's functions see each other; if one does not compile, the
        # unit is left as it was (no half-defined names)
        saved_ns, saved_fns = dict(self._ns), dict(self._functions)
        try:
            for fn in new:
                self._ns[fn.__name__] = fn
            for fn in new:
                names = list(fn._ts_signature.parameters)
                g = _compile(fn, None, None, names)
                sf = ScriptFunction(g, fn.__name__)
                sf._defaults = [p.default for p in fn._ts_signature.parameters.values()]
                sf._names = names
                self._functions[fn.__name__] = sf
        except BaseException:
            self._ns.clear()
            self._ns.update(saved_ns)
            self._functions.clear()
            self._functions.update(saved_fns)
            raise

    def find_function(self, name):
        """The compiled function ``name``, or None."""
        return self._functions.get(name)

    def get_functions(self):
        return list(self._functions.values())

    def __getattr__(self, name):
        try:
            return self.__dict__["_functions"][name]
        except KeyError:
            raise AttributeError(f"'CompilationUnit' has no attribute '{name}'") from None

    def __setattr__(self, name, value):
        raise AttributeError("CompilationUnit functions are defined from source (define())")
