"""``ptcore.jit.script``: compile the Python of a function or module into a
graph with its control flow (``prim::If``, ``prim::Loop``, ``prim::While``).

The compiler reads the source (``ast``), and
* evaluates at compile time what only depends on constants, globals and the
  module's attributes (``if self.bias is not None``, ``_pair(3)``), as
  TorchScript resolves module attributes and constants;
* records every call of an op of ptcore's operator table as a node, and
  Python operations on run-time values (``x + 1``, ``len(xs)``, ``t.shape[0]``)
  as primitive nodes;
* inlines calls of submodules, of the module's own methods and of plain
  Python functions, and the graphs of traced or scripted submodules and
  functions (``_inline.py``).

``break``/``continue`` and ``return`` inside a loop become flags of the loop
node (``_exits.py``); ``with ptcore.no_grad():`` a ``prim::Grad`` node whose
block runs without gradients; a call of an ``@jit.ignore`` function a
``prim::python_call`` node (run in Python; such a graph cannot be saved);
``isinstance`` of a parameter without annotation follows TorchScript (a
Tensor), as does an argument bound to such a parameter of an inlined call;
``jit.fork(f, *args)`` calls ``f`` in place (its future is its value,
``jit.wait`` returns it), as TorchScript runs forks without an inter-op pool.

``self.buf = expr`` on a registered buffer (outside branches and loops)
makes later reads see the new tensor and the module rebind its buffer after
the run (the graph's extra ``buffer_writes`` result); ``self.buf += x`` is
in place.

What it does not accept (``try``, other ``with`` statements, closures over
run-time values, assignments to other attributes) raises
:class:`ScriptError` naming the file and line.
"""
import ast
import builtins
import functools
import inspect
import linecache
import operator
import textwrap
import typing
import warnings

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch.table import lookup, op_of
from ptcore._dispatch.declarations import declaration_of
from ptcore.jit._errors import (JitError, ScriptError, FrontendError,  # noqa: F401 (re-exported)
                                NotSupportedError, UnsupportedNodeError, ScriptWarning)
from ptcore.jit._compile_values import Const, _RAISED, _Seq, _NTSeq  # noqa: F401
from ptcore.jit._ir import Graph, Node, Block, encode_const
from ptcore.jit._exits import loop_exits, loop_returns, located as _located
from ptcore.jit._inline import call_compiled
from ptcore.jit._prim import MATH, TENSOR_ATTRS, SCRIPT_CLASSES as _SCRIPT_CLASSES
from ptcore.jit._plain import DEVICE_ATTRS, DTYPE_ATTRS, check_format, safe_format
from ptcore.jit import _script_class
from ptcore.jit._script_class import ScriptObject, is_script_instance
from ptcore.jit import _bounds
from ptcore.jit._bounds import _PYBIN
from ptcore.jit import _annotations
from ptcore.jit._prim import PythonCall, _STR_METHODS
from ptcore.jit._script_module import (ScriptFunction, ScriptModule, RecursiveScriptModule,
                                       _bind_python_calls, register_compiler)
from ptcore._checks import _assert as _checks_assert
from ptcore.autograd import grad_mode
from ptcore.autograd._record import name_grad_fn
from ptcore.nn import Module
from ptcore.nn.functional import _rnn

__all__ = ["script", "ScriptError"]


class ScriptSource:
    """Code given as a parsed function definition instead of a Python
    function (the TorchScript archive reader): ``_ts_fdef`` (ast.FunctionDef),
    ``_ts_filename``, ``_ts_signature`` (inspect.Signature) and ``__globals__``
    (the names the code may use)."""
    _ts_fdef = None
    # code read from a file is compiled restricted (see _Ctx); source the
    # caller hands to ``CompilationUnit`` is compiled as a scripted function
    _ts_restricted = True


def _is_ref(x):
    return type(x) is dict and "v" in x


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
           ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "bitand", ast.BitOr: "bitor",
           ast.BitXor: "bitxor"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
           ast.NotEq: "ne", ast.Is: "is", ast.IsNot: "isnot", ast.In: "in", ast.NotIn: "notin"}
# (not op names: the Python comparison operators of _CMPOPS, folded at compile time)
_PYCMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
          "eq": operator.eq, "ne": operator.ne, "is": operator.is_, "isnot": operator.is_not,
          "in": lambda a, b: a in b, "notin": lambda a, b: a not in b}
_UNOPS = {ast.USub: ("neg", operator.neg), ast.UAdd: ("pos", operator.pos),
          ast.Invert: ("invert", operator.invert), ast.Not: ("not", operator.not_)}
# (not op names: Python operators of _BINOPS -> their augmented-assignment prims)
_AUG = {"add": "iadd", "sub": "isub", "mul": "imul", "truediv": "itruediv",
        "floordiv": "ifloordiv", "mod": "imod", "pow": "ipow"}
_BUILTIN_PRIMS = {builtins.len: "len", builtins.int: "int", builtins.float: "float",
                  builtins.bool: "bool", builtins.abs: "abs", builtins.min: "min",
                  builtins.max: "max", builtins.round: "round", builtins.str: "str",
                  builtins.tuple: None, builtins.list: None, builtins.sorted: "sorted",
                  builtins.sum: "sum"}


# the Python operators of _BINOPS whose result is a Tensor when an operand is one
# (not op names: the prims a binary operator becomes)
_TENSOR_BINOPS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"}


def _tensor_result(name):
    """Whether the method ``Tensor.<name>`` of a Tensor returns a Tensor, as
    its op declares (``script_tensor``: the out-of-place method)."""
    d = declaration_of("Tensor", name)
    return d is not None and d.script_tensor and d.name == name


class _Return(Exception):
    pass


class _Compiler:
    def __init__(self, root):
        self.g = Graph()
        self.root = root                # the module being scripted, or None
        self.param_names = {}
        if root is not None:
            for name, p in root.named_parameters(remove_duplicate=False):
                self.param_names.setdefault(id(p), name)
            for name, b in root.named_buffers(remove_duplicate=False):
                if b is not None:
                    self.param_names.setdefault(id(b), name)
        self.param_values = {}
        self.writes = {}                # buffer name -> its new value (self.buf = ...)
        self.input_types = {}           # graph input id -> its annotation (None: none)
        self.tensor_values = set()      # ids of node outputs known to be Tensors
        self.nodes = self.g.nodes       # the block being filled
        self.depth = 0
        self.object_values = {}         # id(Python object) -> its script object's value
        self.object_memo = {}           # (script_object's memo: one copy per object)
        self.object_of = {}             # value id -> a script object it holds (its class)
        self.work = 0                   # statements and expressions compiled (inlined,
        #                                 unrolled: each time), bounded by _MAX_WORK

    def spend(self, ctx, node):
        """Count one statement or expression compiled: a program whose inlined
        calls and unrolled loops multiply past _MAX_WORK is refused, so that
        compiling (loading an archive) ends in bounded time."""
        self.work += 1
        if self.work > _MAX_WORK:
            raise ctx.err(node, f"the program is too large to compile: inlining its calls "
                                f"and unrolling its loops takes more than {_MAX_WORK} steps")

    # ------------------------------------------------------------ values
    def new(self):
        return {"v": self.g.new_value("node").id}

    def emit(self, op, args, kwargs=None, blocks=None, nout=1):
        enc_args = [self.enc(a) for a in args]
        enc_kw = {k: self.enc(v) for k, v in (kwargs or {}).items()}
        outs = [self.new() for _ in range(nout)]
        outputs = outs[0] if nout == 1 else {"tuple": outs}
        self.nodes.append(Node(op, enc_args, enc_kw, outputs, blocks))
        return outs[0] if nout == 1 else outs

    def enc(self, x):
        if _is_ref(x):
            return x
        if isinstance(x, _Seq):
            return {"tuple": [self.enc(a) for a in x.items]}
        if isinstance(x, Const):
            return self.const_enc(x.value)
        if isinstance(x, (list, tuple)):
            items = [self.enc(a) for a in x]
            return {"list": items} if isinstance(x, list) else {"tuple": items}
        raise ScriptError(f"internal: cannot encode {x!r}")

    def const_enc(self, v):
        if isinstance(v, _TensorBase):
            return self.tensor_ref(v)
        if isinstance(v, (list, tuple)) and not isinstance(v, ptcore.Size):
            items = [self.const_enc(a) for a in v]
            return {"list": items} if isinstance(v, list) else {"tuple": items}
        if is_script_instance(v):
            return self.object_ref(v)
        if type(v) is range:
            # a range too long to fold (``list(range(10 ** 12))``): made when the graph
            # runs, which bounds it
            return self.emit(("prim", "range"), [Const(v.start), Const(v.stop), Const(v.step)])
        if type(v) is dict:
            # a dict attribute read with a run-time key (``self.table[k]``): built
            # where the graph reads it, as a ``{k: v}`` written in the code
            return self.emit(("prim", "dict"), [Const(x) for kv in v.items() for x in kv])
        try:
            return encode_const(v)
        except TypeError:
            raise ScriptError(f"a value of type {type(v).__name__} cannot be used at run "
                              "time in a scripted graph") from None

    def object_ref(self, obj):
        """The graph value holding script object ``obj`` (a user-class instance is
        copied into one, as TorchScript copies a module's class-typed attributes)."""
        hit = self.object_values.get(id(obj))
        if hit is not None:
            return hit
        try:
            so = _script_class.script_object(obj, self.object_memo)
        except TypeError as ex:
            raise ScriptError(f"a {type(obj).__name__} cannot be used as a script class "
                              f"instance: {ex}") from None
        v = self.g.new_value("object")
        v.const = so
        ref = {"v": v.id}
        self.object_values[id(obj)] = ref
        self.object_values[id(so)] = ref
        self.object_memo.setdefault(id(obj), (so, obj))
        self.object_of[v.id] = so
        return ref

    def tensor_ref(self, t):
        name = self.param_names.get(id(t))
        key = id(t)
        hit = self.param_values.get(key)
        if hit is not None:
            return hit
        if name is not None:
            v = self.g.new_value("param", t, name)
        else:
            v = self.g.new_value("const", t.detach())
        ref = {"v": v.id}
        self.param_values[key] = ref
        return ref

    # ------------------------------------------------------------ functions
    def compile_function(self, fn, self_obj, args, kwargs, where):
        """Inline ``fn`` (a Python function) called with compiled ``args``."""
        if self.depth == 0:
            # the outermost call: code nested too deeply for the compiler's
            # recursion (a chain of 30,000 ``+``) is a ScriptError naming it
            try:
                return self._compile_function(fn, self_obj, args, kwargs, where)
            except RecursionError:
                self.depth = 0
                raise ScriptError(f"{where}: the code nests too deeply for ptcore.jit.script "
                                  "(an expression or statement chained or nested thousands "
                                  "of levels deep)") from None
        return self._compile_function(fn, self_obj, args, kwargs, where)

    def _compile_function(self, fn, self_obj, args, kwargs, where):
        self.depth += 1
        if self.depth > 64:
            raise ScriptError(f"{where}: calls nest too deeply (recursion is not supported)")
        if isinstance(fn, ScriptSource):
            fdef, filename, first, sig = fn._ts_fdef, fn._ts_filename, 1, fn._ts_signature
        else:
            try:
                src = textwrap.dedent(inspect.getsource(fn))
                filename = inspect.getsourcefile(fn) or "<unknown>"
                first = fn.__code__.co_firstlineno
            except (OSError, TypeError):
                raise ScriptError(f"{where}: the source of {fn!r} is not available") from None
            try:
                tree = ast.parse(src)
            except (RecursionError, MemoryError) as e:
                raise ScriptError(f"{where}: the source of {fn.__qualname__} nests too deeply "
                                  f"to be parsed ({type(e).__name__})") from None
            fdef = tree.body[0]
            if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
                raise ScriptError(f"{where}: {fn!r} is not a plain function")
            sig = inspect.signature(fn)
        call_args = ([Const(self_obj)] if self_obj is not None else []) + list(args)
        try:
            bound = sig.bind(*call_args, **kwargs)
        except TypeError as e:
            raise ScriptError(f"{where}: {e}") from None
        scope = {}
        for name, p in sig.parameters.items():
            if name in bound.arguments:
                val = bound.arguments[name]
                if p.kind == p.VAR_POSITIONAL:
                    val = tuple(val)
                    if not all(isinstance(a, Const) for a in val):
                        val = list(val)
                        scope[name] = _Seq(val)
                        continue
                    val = Const(tuple(a.value for a in val))
                elif p.kind == p.VAR_KEYWORD:
                    val = Const({k: a.value for k, a in val.items()}) if all(
                        isinstance(a, Const) for a in val.values()) else _raise_kw(where)
                scope[name] = val
            elif p.default is not inspect.Parameter.empty:
                scope[name] = Const(p.default)
            elif p.kind == p.VAR_POSITIONAL:
                scope[name] = Const(())
            elif p.kind == p.VAR_KEYWORD:
                scope[name] = Const({})
        for name, p in sig.parameters.items():
            # a run-time argument has the static type of the parameter it
            # binds (unannotated: Tensor), as in TorchScript
            v = scope.get(name)
            if _is_ref(v) and v["v"] not in self.input_types and \
                    not isinstance(p.annotation, str):
                self.input_types[v["v"]] = None if p.annotation is p.empty else p.annotation
        ctx = _Ctx(self, fn, scope, filename, first - 1)
        ctx.mutated = _mutated_names(fdef)
        result = ctx.body(loop_returns(fdef.body))
        self.depth -= 1
        return result if result is not None else Const(None)


def _runtime_able(v):
    """Whether compiled value ``v`` can be a run-time value (a branch output):
    not a compile-time module or function (a loop variable over a ModuleList)."""
    if not isinstance(v, Const) or isinstance(v.value, _TensorBase):
        return True
    try:
        encode_const(v.value)
        return True
    except TypeError:
        x = v.value
        return type(x) in (list, tuple) and all(_runtime_able(Const(a)) for a in x)


# the most items a loop or comprehension over a compile-time sequence is unrolled for
_UNROLL = 4096
# the most statements and expressions one compilation may compile (see _Compiler.spend)
_MAX_WORK = 1_000_000
_PLAIN_SCALARS = (type(None), bool, int, float, complex, str, range, slice, type(Ellipsis))


def _object_class(x):
    if type(x) is ScriptObject:
        return (x._cls, x._qualname)
    return (type(x), f"{type(x).__module__}.{type(x).__qualname__}")


def _assigns_self(fn):
    """Whether method ``fn`` assigns an attribute of its first parameter."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or not fdef.args.args:
        return False
    me = fdef.args.args[0].arg
    return any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and
               isinstance(n.value, ast.Name) and n.value.id == me for n in ast.walk(fdef))


def _too_long(x):
    """Whether sequence ``x`` has more items than a loop is unrolled for."""
    try:
        return len(x) > _UNROLL
    except OverflowError:
        return True
    except TypeError:
        return False


def _plain_const(v):
    """Whether compile-time value ``v`` is plain data (numbers, strings, ranges,
    dtypes, devices, and lists, tuples and dicts of them): what archive code
    may compute with besides tensors."""
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, _PLAIN_SCALARS) or isinstance(x, (ptcore.dtype, ptcore.device)):
            continue
        if isinstance(x, (list, tuple)):
            todo.extend(x)
        elif type(x) is dict:
            todo.extend(x)
            todo.extend(x.values())
        else:
            return False
    return True


def _short(x):
    r = repr(x) if _plain_const(x) else f"<{type(x).__name__}>"
    return r if len(r) <= 40 else r[:37] + "..."


def _raise_kw(where):
    raise ScriptError(f"{where}: **kwargs with run-time values is not supported")


_TENSOR_VALUED_ATTRS = {"T", "mT", "H", "mH", "real", "imag", "data", "grad"}


def metadata_query(name):
    """Whether the Tensor method ``name`` answers from the tensor's metadata alone
    (its declaration's ``metadata`` tag): a parameter's answers at compile time."""
    d = lookup(name, "Tensor")
    return d is not None and "metadata" in d.tags


def _tconst(x):
    """A compile-time tensor (a parameter, buffer or tensor attribute)."""
    return isinstance(x, Const) and isinstance(x.value, _TensorBase)


def _folds(x):
    """Whether operations on ``x`` are evaluated at compile time: constants,
    but not tensors, whose values change (training, ``load_state_dict``)."""
    return isinstance(x, Const) and not isinstance(x.value, _TensorBase)


def _is_namedtuple(cls):
    return inspect.isclass(cls) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def namedtuple_return(fn):
    """The NamedTuple class ``fn`` is annotated to return, or None: the scripted
    graph returns a tuple, which the caller wraps in it (as TorchScript returns it)."""
    try:
        ret = typing.get_type_hints(fn).get("return")
    except Exception:
        return None
    return ret if _is_namedtuple(ret) else None


class _Ctx:
    """Compiles one function body (a scope)."""

    def __init__(self, comp, fn, scope, filename, line0):
        self.c = comp
        self.fn = fn
        self.scope = scope
        self.filename = filename
        self.line0 = line0
        self.globals = getattr(fn, "__globals__", {})
        # code read from a file (a TorchScript archive) is untrusted: names
        # resolve only to its namespace and a few builtins, attributes only to
        # module state and namespace members, and nothing is called at compile
        # time but ops, primitives and the file's own functions
        self.restricted = isinstance(fn, ScriptSource) and fn._ts_restricted
        # ptcore's own functions may import in their body (bound when compiling)
        self.module = getattr(fn, "__module__", None) or ""
        self.mutated = set()
        self.closure = {}
        if getattr(fn, "__closure__", None):
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:
                    pass

    def err(self, node, msg, cls=ScriptError):
        line = self.line0 + getattr(node, "lineno", 1)
        # linecache: a real file's line, or the registered text of source
        # given as a string (CompilationUnit); "" for an archive's member name
        text = linecache.getline(self.filename, line).strip()
        return cls(f"{msg}\n  at {self.filename}:{line}: {text}")

    def fold(self, node, op, a, b):
        """``a <op> b`` of constants ``a`` and ``b`` computed now, or None where
        its result would be too large to compute while compiling (the node is
        then left to run time, where the interpreter's larger bound applies).
        Archive code computes with tensors and plain values only."""
        x, y = a.value, b.value
        if self.restricted and op not in ("is", "isnot") and \
                not (_plain_const(x) and _plain_const(y)):
            raise self.err(node, f"operator {op} on {type(x).__name__} and "
                                 f"{type(y).__name__}: archive code computes with tensors "
                                 "and plain values only")
        try:
            _bounds.check(op, x, y, _bounds.FOLD)
        except _bounds.ResultTooLarge:
            return None
        try:
            return Const((_PYBIN.get(op) or _PYCMP[op])(x, y))
        except Exception as ex:
            if not self.restricted:
                raise
            raise self.err(node, f"{op} of constants {_short(x)} and {_short(y)} failed: "
                                 f"{type(ex).__name__}: {ex}") from None

    def check_format(self, node, fmt):
        """A constant format string's fields are of those a graph formats (JitError
        naming the field otherwise: ``{0.__class__}``), checked while compiling."""
        try:
            check_format(fmt)
        except JitError as ex:
            raise self.err(node, str(ex)) from None

    def fold_call(self, node, fn, args, kwargs):
        """Builtin ``fn`` (``len``, ``list``, ``range``, ``min``, ...) of constants
        called now, or None where that would take too long or make too large a
        value (the call is then left to run time)."""
        vals = [a.value for a in args]
        kw = {k: v.value for k, v in kwargs.items()}
        if self.restricted and not all(_plain_const(v) for v in vals + list(kw.values())):
            raise self.err(node, f"{fn.__name__}() of a value that is not plain data: archive "
                                 "code computes with tensors and plain values only")
        if not _bounds.call_ok(fn, vals, kw, _bounds.FOLD):
            return None
        try:
            return Const(fn(*vals, **kw))
        except Exception as ex:
            raise self.err(node, f"{fn.__name__}() of constants failed: {type(ex).__name__}: "
                                 f"{ex}") from None

    # ------------------------------------------------------------ statements
    def body(self, stmts):
        """Compile ``stmts``; the returned value, or None if they do not return."""
        for i, st in enumerate(stmts):
            if isinstance(st, ast.Return):
                return self.expr(st.value) if st.value is not None else Const(None)
            if isinstance(st, ast.If) and (_returns(st.body) or _returns(st.orelse)):
                return self.if_return(st, stmts[i + 1:])
            if isinstance(st, ast.With) and _has_return(st.body):
                return self.with_stmt(st, returns=True)
            self.stmt(st)
            if isinstance(st, ast.Raise):
                return _RAISED      # the rest of the block is unreachable
        return None

    def stmt(self, st):
        self.c.spend(self, st)
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                return      # docstring
            self.expr(st.value)
        elif isinstance(st, ast.Assign):
            val = self.expr(st.value)
            for t in st.targets:
                self.assign(t, val)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.expr(st.value))
        elif isinstance(st, ast.AugAssign):
            op = _BINOPS.get(type(st.op))
            if op is None:
                raise self.err(st, "unsupported augmented assignment")
            cur = self.expr(st.target)
            rhs = self.expr(st.value)
            if isinstance(st.target, ast.Attribute) and _tconst(cur):
                # ``self.count += 1`` on a buffer: in place when the graph runs
                self.c.emit(("prim", _AUG.get(op, op)), [cur, rhs])
                return
            val = self.fold(st, op, cur, rhs) if isinstance(cur, Const) and \
                isinstance(rhs, Const) else None
            if val is None:
                val = self.c.emit(("prim", _AUG.get(op, op)), [cur, rhs])
            self.assign(st.target, val)
        elif isinstance(st, ast.If):
            self.if_stmt(st)
        elif isinstance(st, ast.For):
            self.for_stmt(st)
        elif isinstance(st, ast.While):
            self.while_stmt(st)
        elif isinstance(st, ast.With):
            self.with_stmt(st)
        elif isinstance(st, ast.Pass):
            pass
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                self.delete(t)
        elif isinstance(st, (ast.Import, ast.ImportFrom)) and not self.restricted and \
                self.module.startswith("ptcore."):
            self.import_stmt(st)
        elif isinstance(st, ast.Assert):
            self.assertion(self.expr(st.test),
                           self.expr(st.msg) if st.msg is not None else Const(None))
        elif isinstance(st, ast.Raise):
            msg = Const("scripted code raised")
            if isinstance(st.exc, ast.Call) and st.exc.args:
                msg = self.message(st.exc.args[0])
            self.c.emit(("prim", "raise"), [msg])
        else:
            raise self.err(st, f"{type(st).__name__} statements are not supported by "
                               "ptcore.jit.script", UnsupportedNodeError)

    def message(self, e):
        """The text of an error or warning message ``e``: its value (at run
        time if it depends on run-time values), or, where it uses Python the
        compiler does not take (``type(x).__name__``), its source text."""
        saved = self.c.nodes
        mark = len(saved)
        try:
            m = self.expr(e)
        except ScriptError:
            self.c.nodes = saved
            del saved[mark:]
            return Const(ast.unparse(e))
        return Const(str(m.value)) if isinstance(m, Const) else m

    def assign(self, target, val):
        if isinstance(target, ast.Name):
            if target.id in self.mutated:
                val = self._materialize(val)
            self.scope[target.id] = val
        elif isinstance(target, (ast.Tuple, ast.List)):
            n = len(target.elts)
            if isinstance(val, Const):
                items = list(val.value)
                if len(items) != n:
                    raise self.err(target, f"cannot unpack {len(items)} values into {n}")
                for t, v in zip(target.elts, items):
                    self.assign(t, Const(v))
            elif isinstance(val, _Seq):
                for t, v in zip(target.elts, val.items):
                    self.assign(t, v)
            else:
                for i, t in enumerate(target.elts):
                    self.assign(t, self.c.emit(("prim", "getitem"), [val, Const(i)]))
        elif isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            idx = self.index(target.slice)
            if isinstance(base, Const) and not isinstance(base.value, _TensorBase):
                raise self.err(target, "item assignment to a compile-time container")
            self.c.emit(("prim", "setitem"), [base, idx, val])
        elif isinstance(target, ast.Attribute):
            self._assign_buffer(target, val)
        else:
            raise self.err(target, "only names, tuples, items and buffers can be assigned "
                                   "in ptcore.jit.script")

    def import_stmt(self, st):
        """An import in the body of one of ptcore's functions (a scripted
        module's forward calls it): the names bound to what they import."""
        import importlib
        for alias in st.names:
            if isinstance(st, ast.Import):
                top = alias.name if alias.asname else alias.name.split(".")[0]
                mod = importlib.import_module(alias.name)
                self.scope[alias.asname or top] = Const(mod if alias.asname else
                                                        importlib.import_module(top))
                continue
            base = importlib.import_module("." * st.level + (st.module or ""),
                                           self.module.rpartition(".")[0] or None)
            obj = getattr(base, alias.name, _MISSING)
            if obj is _MISSING:
                obj = importlib.import_module(f"{base.__name__}.{alias.name}")
            self.scope[alias.asname or alias.name] = Const(obj)

    def delete(self, target):
        """``del xs[i]`` / ``del d[key]`` (when the graph runs), ``del name``."""
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if isinstance(base, Const):
                raise self.err(target, "item deletion from a compile-time container")
            self.c.emit(("prim", "delitem"), [base, self.index(target.slice)])
        elif isinstance(target, ast.Name) and target.id in self.scope:
            del self.scope[target.id]
        else:
            raise self.err(target, "only names and items can be deleted in ptcore.jit.script")

    def _assign_buffer(self, target, val):
        """``self.state = expr`` on a registered buffer: later reads in the
        graph see the new tensor, and the module's buffer is rebound to it
        when the graph has run (the graph's buffer writes)."""
        base = self.expr(target.value)
        if _is_ref(base) and base["v"] in self.c.object_of:
            # a field of a script object: set when the graph runs
            so = self.c.object_of[base["v"]]
            if target.attr not in so._fields:
                raise self.err(target, f"script object {so._qualname} has no field "
                                       f"{target.attr!r}")
            self.c.emit(("prim", "setattr"), [base, Const(target.attr), val])
            return
        mod = base.value if isinstance(base, Const) else None
        cur = mod._buffers.get(target.attr) if isinstance(mod, Module) else None
        name = self.c.param_names.get(id(cur)) if cur is not None else None
        if name is None:
            raise self.err(target, "only names, tuples, items and buffers can be assigned in "
                                   f"ptcore.jit.script (not the attribute {target.attr!r})")
        if self.c.nodes is not self.c.g.nodes:
            raise self.err(target, "assigning a buffer inside a branch or loop is not "
                                   "supported by ptcore.jit.script")
        ref = self.c.enc(val)
        if not _is_ref(ref):
            raise self.err(target, f"the buffer {target.attr!r} can only be assigned a tensor")
        self.c.param_values[id(cur)] = ref
        self.c.writes[name] = ref

    def _materialize(self, val):
        """A list or dict that the function mutates (``out.append(y)``,
        ``d[k] = v``) is built at run time, so that mutations in run-time
        loops and branches and of run-time values happen when the graph runs
        (as in TorchScript), not once while compiling."""
        if isinstance(val, Const) and type(val.value) in (list, dict):
            v = val.value
            try:
                if type(v) is list:
                    return self.c.emit(("prim", "list"), [Const(a) for a in v])
                return self.c.emit(("prim", "dict"), [Const(a) for kv in v.items() for a in kv])
            except ScriptError:
                return val          # items that cannot be run-time values (modules)
        if type(val) is list:
            return self.c.emit(("prim", "list"), list(val))
        return val

    # ------------------------------------------------------------ control flow
    def _branch(self, stmts, tail=None):
        """Compile ``stmts`` (then ``tail``) in a block; (block nodes, scope, returned)."""
        saved_nodes, saved_scope = self.c.nodes, self.scope
        self.c.nodes, self.scope = [], dict(saved_scope)
        try:
            ret = self.body(list(stmts) + list(tail or []))
            return self.c.nodes, self.scope, ret
        finally:
            self.c.nodes, self.scope = saved_nodes, saved_scope

    def _merge(self, node, branches):
        """Values assigned in the branches that exist in all of them become outputs."""
        names = []
        for _, sc, _ in branches:
            for k, v in sc.items():
                if k not in names and all(k in b[1] for b in branches) and \
                        any(b[1][k] is not self.scope.get(k) for b in branches) and \
                        all(_runtime_able(b[1][k]) for b in branches):
                    names.append(k)
        return names

    def if_stmt(self, st):
        cond = self.expr(st.test)
        if isinstance(cond, Const):
            ret = self.body(st.body if cond.value else st.orelse)
            if ret is not None and ret is not _RAISED:
                raise self.err(st, "internal: return inside a constant branch")
            return
        bt = self._branch(st.body)
        be = self._branch(st.orelse)
        # a branch that raises yields no values: the others' define the outputs
        live = [b for b in (bt, be) if b[2] is not _RAISED]
        names = self._merge(st, live) if live else []
        bt, be = [b if b[2] is not _RAISED else (b[0], {k: Const(None) for k in names}, None)
                  for b in (bt, be)]
        outs = self._if_node(cond, [bt, be], names)
        for k, v in zip(names, outs):
            self.scope[k] = v

    def _if_node(self, cond, branches, names, extra=()):
        blocks = []
        for nodes, sc, ret in branches:
            rets = [sc[k] for k in names] + [r for r in (ret,) if extra]
            blocks.append(Block([], nodes, [self.c.enc(r) for r in rets]))
        n = len(names) + (1 if extra else 0)
        outs = [self.c.new() for _ in range(n)]
        self.c.nodes.append(Node(("prim", "If"), [self.c.enc(cond)], {},
                                 {"tuple": outs}, blocks))
        return outs

    def if_return(self, st, rest):
        cond = self.expr(st.test)
        if isinstance(cond, Const):
            chosen = st.body if cond.value else st.orelse
            return self.body(list(chosen) + ([] if _returns(chosen) else list(rest)))
        bt = self._branch(st.body, None if _returns(st.body) else rest)
        be = self._branch(st.orelse, None if _returns(st.orelse) else rest)
        if bt[2] is _RAISED and be[2] is _RAISED:
            self._if_node(cond, [bt, be], [])
            return _RAISED
        if bt[2] is None or be[2] is None:
            raise self.err(st, "every path must return a value when one branch returns")
        # a branch that raises returns a placeholder: it never completes
        bt, be = [(b[0], b[1], Const(None)) if b[2] is _RAISED else b for b in (bt, be)]
        outs = self._if_node(cond, [bt, be], [], extra=(True,))
        return outs[0]

    def _grad_mode(self, e):
        """The grad mode that context expression ``e`` sets (``no_grad()``,
        ``enable_grad()``, ``set_grad_enabled(b)``), or None for another one."""
        if not isinstance(e, ast.Call):
            return None
        f = self.expr(e.func)
        if not isinstance(f, Const):
            return None
        if f.value is grad_mode.no_grad and not e.args and not e.keywords:
            return Const(False)
        if f.value is grad_mode.enable_grad and not e.args and not e.keywords:
            return Const(True)
        if f.value is grad_mode.set_grad_enabled and len(e.args) + len(e.keywords) == 1:
            mode = self.expr(e.args[0] if e.args else e.keywords[0].value)
            return Const(bool(mode.value)) if isinstance(mode, Const) else mode
        return None

    def with_stmt(self, st, returns=False):
        """``with ptcore.no_grad():`` (``enable_grad``, ``set_grad_enabled``):
        a ``prim::Grad`` node whose block runs in that grad mode; the names
        the block assigns are its outputs (and what it returns, if it does)."""
        mode = self._grad_mode(st.items[0].context_expr) if len(st.items) == 1 and \
            st.items[0].optional_vars is None else None
        if mode is None:
            raise self.err(st, "With statements are not supported by ptcore.jit.script "
                               "except 'with ptcore.no_grad()', 'enable_grad()' and "
                               "'set_grad_enabled(mode)'")
        nodes, scope, ret = self._branch(st.body)
        if returns and ret is None:
            raise self.err(st, "a 'with' block that returns on some paths must return on all "
                               "of them in ptcore.jit.script")
        names = []
        for k, v in scope.items():
            if v is self.scope.get(k):
                continue
            if isinstance(v, Const) and not _tconst(v):
                self.scope[k] = v       # compile-time values stay so
            else:
                names.append(k)
        rets = [self.c.enc(scope[k]) for k in names]
        if returns:
            rets.append(self.c.enc(ret if ret is not _RAISED else Const(None)))
        outs = [self.c.new() for _ in rets]
        self.c.nodes.append(Node(("prim", "Grad"), [self.c.enc(mode)], {}, {"tuple": outs},
                                 [Block([], nodes, rets)]))
        for k, v in zip(names, outs):
            self.scope[k] = v
        if returns:
            return outs[-1] if ret is not _RAISED else _RAISED
        return None

    def _carried(self, stmts):
        names = []
        for node in ast.walk(ast.Module(body=list(stmts), type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                    node.id in self.scope and node.id not in names:
                names.append(node.id)
        return names

    def _exits(self, body):
        """The :class:`Exits` of a loop body with ``break``/``continue`` (its
        break flag set in scope), or None."""
        self.c.nexits = getattr(self.c, "nexits", 0) + 1
        ex = loop_exits(body, self.c.nexits)
        if ex is not None and ex.brk is not None:
            self.scope[ex.brk] = Const(False)
        return ex

    def _loop_stmt(self, st, kind, compile_loop):
        """Compile loop ``st`` with ``compile_loop(st, exits)``; its flags end with it."""
        if st.orelse:
            raise self.err(st, f"{kind}/else is not supported")
        ex = self._exits(st.body)
        try:
            compile_loop(st, ex)
        finally:
            if ex is not None:
                for k in {ex.brk, ex.skip} - {None}:
                    self.scope.pop(k, None)

    def for_stmt(self, st):
        self._loop_stmt(st, "for", self._for)

    def _for(self, st, ex):
        it = st.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id == "range" and self._lookup_global("range") is builtins.range:
            bounds = [self.expr(a) for a in it.args]
            if all(isinstance(b, Const) for b in bounds) and ex is None:
                r = self.fold_call(it, builtins.range, bounds, {})
                n = _bounds.length(r.value) if r is not None else None
                if n is not None and n <= 64:
                    return self._unroll(st, [Const(i) for i in r.value])
            return self._loop(st, bounds, ex=ex)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords and \
                it.func.id not in self.scope and \
                self._lookup_global(it.func.id) in (builtins.enumerate, builtins.zip):
            items = self._static_items(it)
            if items is not None:
                return self._unroll(st, items, ex)
            return self._zip_loop(st, it, ex)
        seq = self.expr(it)
        if isinstance(seq, Const) and type(seq.value) is range and _too_long(seq.value):
            # a long range (``r = range(10 ** 9)``): a run-time loop
            r = seq.value
            return self._loop(st, [Const(r.start), Const(r.stop), Const(r.step)], ex=ex)
        if isinstance(seq, Const):
            if isinstance(seq.value, _TensorBase):
                raise self.err(st, "iterating over a parameter or buffer is not supported by "
                                   "ptcore.jit.script")
            # as in Python: a dict (or a ModuleDict) yields its keys
            return self._unroll(st, [Const(v) for v in seq.value], ex)
        if isinstance(seq, _Seq):
            return self._unroll(st, seq.items, ex)
        # a run-time dict yields its keys, as in Python
        seq = self.c.emit(("prim", "iterable"), [seq])
        n = self.c.emit(("prim", "len"), [seq])
        return self._loop(st, [n], seq=seq, ex=ex)

    def _unroll(self, st, items, ex=None):
        for v in items:
            if ex is None:
                self.assign(st.target, v)
                ret = self.body(st.body)
            else:
                # each iteration runs while the break flag is unset
                done = self.scope.get(ex.brk, Const(False))
                if isinstance(done, Const) and done.value:
                    break
                self.scope["$item"] = v
                stmts = [_located(ast.Assign(targets=[st.target],
                                             value=ast.Name(id="$item", ctx=ast.Load())), st)]
                stmts += ex.reset(st) + ex.body
                if not (isinstance(done, Const) and not done.value):
                    stmts = [_located(ast.If(test=ast.UnaryOp(
                        op=ast.Not(), operand=ast.Name(id=ex.brk, ctx=ast.Load())),
                        body=stmts, orelse=[]), st)]
                ret = self.body(stmts)
                self.scope.pop("$item", None)
            if ret not in (None, _RAISED):
                raise self.err(st, "return inside a loop is not supported")

    def _zip_loop(self, st, it, ex=None):
        """``for t in enumerate(xs)`` / ``zip(xs, ys)`` over run-time sequences."""
        fn = self._lookup_global(it.func.id)
        if fn is builtins.enumerate and len(it.args) != 1:
            raise self.err(it, "enumerate() with a start is not supported by ptcore.jit.script")
        args = it.args
        inner_zip = fn is builtins.enumerate and isinstance(args[0], ast.Call) and \
            isinstance(args[0].func, ast.Name) and not args[0].keywords and \
            args[0].func.id not in self.scope and \
            self._lookup_global(args[0].func.id) is builtins.zip
        if inner_zip:
            args = args[0].args           # enumerate(zip(xs, ys)): (i, (x, y)) per step
        seqs = [self.expr(a) for a in args]
        lens = [self.c.emit(("prim", "len"), [q]) if not isinstance(q, Const) else
                Const(len(q.value)) for q in seqs]
        n = lens[0] if len(lens) == 1 else self.c.emit(("prim", "min"), lens)

        def item(i_ref):
            got = [self.c.emit(("prim", "getitem"), [q, i_ref]) for q in seqs]
            if inner_zip:
                return _Seq([i_ref, _Seq(got)])
            return _Seq(([i_ref] if fn is builtins.enumerate else []) + got)
        return self._loop(st, [n], seq=item, ex=ex)

    def _loop(self, st, bounds, seq=None, ex=None):
        if seq is None:
            if len(bounds) == 1:
                start, stop, step = Const(0), bounds[0], Const(1)
            else:
                start, stop = bounds[0], bounds[1]
                step = bounds[2] if len(bounds) > 2 else Const(1)
            trips = self._trips(start, stop, step)
        else:
            trips = bounds[0]
        body = st.body if ex is None else ex.reset(st) + ex.body
        names = self._carried(body)
        i_ref = self.c.new()
        params = [self.c.new() for _ in names]
        saved_nodes, saved_scope = self.c.nodes, self.scope
        self.c.nodes, self.scope = [], dict(saved_scope)
        try:
            for k, p in zip(names, params):
                self.scope[k] = p
            if seq is None:
                idx = i_ref if (isinstance(start, Const) and start.value == 0 and
                                isinstance(step, Const) and step.value == 1) else \
                    self.c.emit(("prim", "add"), [start, self.c.emit(("prim", "mul"),
                                                                     [i_ref, step])])
            elif callable(seq):
                idx = seq(i_ref)
            else:
                idx = self.c.emit(("prim", "getitem"), [seq, i_ref])
            self.assign(st.target, idx)
            if self.body(body) not in (None, _RAISED):
                raise self.err(st, "return inside a loop is not supported")
            rets = [self.c.enc(self.scope[k]) for k in names]
            if ex is not None and ex.brk is not None:
                # the body's first result: whether to go on (TorchScript's
                # prim::Loop continue condition)
                rets.insert(0, self.c.enc(self._not(self.scope[ex.brk])))
            body_nodes = self.c.nodes
        finally:
            self.c.nodes, self.scope = saved_nodes, saved_scope
        outs = [self.c.new() for _ in names]
        block = Block([i_ref["v"]] + [p["v"] for p in params], body_nodes, rets)
        self.c.nodes.append(Node(("prim", "Loop"), [self.c.enc(trips)] +
                                 [self.c.enc(self.scope[k]) for k in names],
                                 {"cond": True} if len(rets) > len(names) else {},
                                 {"tuple": outs}, [block]))
        for k, v in zip(names, outs):
            self.scope[k] = v

    def _trips(self, start, stop, step):
        if all(isinstance(x, Const) for x in (start, stop, step)):
            r = self.fold_call(None, builtins.range, [start, stop, step], {})
            n = _bounds.length(r.value) if r is not None else None
            if n is not None:
                return Const(n)
        r = self.c.emit(("prim", "range"), [start, stop, step])
        return self.c.emit(("prim", "len"), [r])

    def _not(self, v):
        if isinstance(v, Const):
            return Const(not v.value)
        return self.c.emit(("prim", "not"), [v])

    def while_stmt(self, st):
        self._loop_stmt(st, "while", self._while)

    def _while(self, st, ex):
        body, test = st.body, st.test
        if ex is not None:
            body = ex.reset(st) + ex.body
            if ex.brk is not None:
                # the condition is not evaluated once the loop broke
                test = _located(ast.IfExp(test=ast.UnaryOp(op=ast.Not(), operand=ast.Name(
                    id=ex.brk, ctx=ast.Load())), body=test, orelse=ast.Constant(value=False)),
                    st.test)
        names = self._carried(body)
        for node in ast.walk(test):
            if isinstance(node, ast.Name) and node.id in self.scope and node.id not in names:
                names.append(node.id)
        params_c = [self.c.new() for _ in names]
        params_b = [self.c.new() for _ in names]
        saved_nodes, saved_scope = self.c.nodes, self.scope
        try:
            self.c.nodes, self.scope = [], dict(saved_scope)
            for k, p in zip(names, params_c):
                self.scope[k] = p
            cond = self.expr(test)
            cond_block = Block([p["v"] for p in params_c], self.c.nodes, [self.c.enc(cond)])
            self.c.nodes, self.scope = [], dict(saved_scope)
            for k, p in zip(names, params_b):
                self.scope[k] = p
            if self.body(body) not in (None, _RAISED):
                raise self.err(st, "return inside a loop is not supported")
            body_block = Block([p["v"] for p in params_b], self.c.nodes,
                               [self.c.enc(self.scope[k]) for k in names])
        finally:
            self.c.nodes, self.scope = saved_nodes, saved_scope
        outs = [self.c.new() for _ in names]
        self.c.nodes.append(Node(("prim", "While"), [self.c.enc(self.scope[k]) for k in names],
                                 {}, {"tuple": outs}, [cond_block, body_block]))
        for k, v in zip(names, outs):
            self.scope[k] = v

    # ------------------------------------------------------------ expressions
    def _lookup_global(self, name):
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        if self.restricted and name not in _SAFE_BUILTINS:
            return _MISSING
        return getattr(builtins, name, _MISSING)

    def _restricted_attr(self, e, obj, attr):
        if isinstance(obj, Module):
            for store in ("_parameters", "_buffers", "_modules"):
                d = obj.__dict__.get(store)
                if d is not None and attr in d:
                    return d[attr]
            if attr in obj.__dict__ or attr == "training":
                return obj.__dict__.get(attr, getattr(obj, "training", False))
            raise self.err(e, f"the module has no attribute {attr!r}")
        if getattr(type(obj), "_ts_namespace", False):
            # the namespace's own lookup (``torch.relu``, ``CONSTANTS.c0``), never one of
            # its real attributes (``torch.__class__``)
            return type(obj).__getattr__(obj, attr)
        if type(obj) is ScriptObject and attr in obj._fields:
            return obj._fields[attr]
        # a tensor's, dtype's or device's data attributes, as in a graph (_prim._getattr)
        if isinstance(obj, _TensorBase) and attr in TENSOR_ATTRS or \
                isinstance(obj, ptcore.dtype) and attr in DTYPE_ATTRS or \
                isinstance(obj, ptcore.device) and attr in DEVICE_ATTRS:
            return getattr(obj, attr)
        raise self.err(e, f"attribute {attr!r} of a {type(obj).__name__} is not accessible "
                          "from archive code")

    def expr(self, e):
        self.c.spend(self, e)
        if isinstance(e, ast.Constant):
            return Const(e.value)
        if isinstance(e, ast.Name):
            if e.id in self.scope:
                return self.scope[e.id]
            v = self._lookup_global(e.id)
            if v is _MISSING:
                raise self.err(e, f"undefined name {e.id!r}")
            return Const(v)
        if isinstance(e, ast.Attribute):
            base = self.expr(e.value)
            if _tconst(base) and e.attr in _TENSOR_VALUED_ATTRS:
                # a view or another tensor of a parameter/buffer: read at run time
                return self.c.emit(("prim", "getattr"), [base, Const(e.attr)])
            if isinstance(base, Const):
                try:
                    if self.restricted:
                        return Const(self._restricted_attr(e, base.value, e.attr))
                    return Const(getattr(base.value, e.attr))
                except AttributeError as ex:
                    if _is_ptcore_module(base.value):
                        # a function torch has and ptcore lacks (``torch.sparse_bsr_tensor``):
                        # the function compiles, and raises where a call of it runs
                        return Const(_Absent(e.attr, str(ex)))
                    raise self.err(e, str(ex)) from None
            if isinstance(base, _NTSeq) and e.attr in base.cls._fields:
                return base.items[base.cls._fields.index(e.attr)]
            if isinstance(base, _Seq):
                raise self.err(e, "attributes of a tuple are not supported")
            out = self.c.emit(("prim", "getattr"), [base, Const(e.attr)])
            so = self.c.object_of.get(base["v"]) if _is_ref(base) else None
            if so is not None:
                if e.attr not in so._fields:
                    raise self.err(e, f"script object {so._qualname} has no field {e.attr!r}")
                self._note_object(out, so._fields[e.attr])
            return out
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.BinOp):
            op = _BINOPS.get(type(e.op))
            if op is None:
                raise self.err(e, "unsupported operator")
            a, b = self.expr(e.left), self.expr(e.right)
            if _folds(a) and _folds(b):
                folded = self.fold(e, op, a, b)
                if folded is not None:
                    return folded
            out = self.c.emit(("prim", op), [self.seq(a), self.seq(b)])
            if op in _TENSOR_BINOPS and (self._is_tensor(a) or self._is_tensor(b)):
                self.c.tensor_values.add(out["v"])
            return out
        if isinstance(e, ast.UnaryOp):
            name, fn = _UNOPS[type(e.op)]
            a = self.expr(e.operand)
            if _folds(a) and (not self.restricted or _plain_const(a.value)):
                return Const(fn(a.value))
            return self.c.emit(("prim", name), [a])
        if isinstance(e, ast.Compare):
            left = self.expr(e.left)
            result = None
            for op, right_e in zip(e.ops, e.comparators):
                name = _CMPOPS[type(op)]
                right = self.expr(right_e)
                r = None
                if _folds(left) and _folds(right) or name in ("is", "isnot") and \
                        isinstance(left, Const) and isinstance(right, Const):
                    r = self.fold(e, name, left, right)
                if r is None:
                    r = self.c.emit(("prim", name), [self.seq(left), self.seq(right)])
                result = r if result is None else self._and(result, r)
                left = right
            return result
        if isinstance(e, ast.BoolOp):
            return self._boolop(isinstance(e.op, ast.And), e.values)
        if isinstance(e, ast.IfExp):
            cond = self.expr(e.test)
            if isinstance(cond, Const):
                return self.expr(e.body if cond.value else e.orelse)
            saved = self.c.nodes
            self.c.nodes = []
            a = self.expr(e.body)
            na, self.c.nodes = self.c.nodes, []
            b = self.expr(e.orelse)
            nb = self.c.nodes
            self.c.nodes = saved
            out = self.c.new()
            self.c.nodes.append(Node(("prim", "If"), [self.c.enc(cond)], {}, {"tuple": [out]},
                                     [Block([], na, [self.c.enc(a)]),
                                      Block([], nb, [self.c.enc(b)])]))
            return out
        if isinstance(e, (ast.Tuple, ast.List)):
            items = [self.expr(x) for x in e.elts]
            if all(isinstance(x, Const) for x in items):
                vals = [x.value for x in items]
                return Const(tuple(vals) if isinstance(e, ast.Tuple) else vals)
            if isinstance(e, ast.Tuple):
                return _Seq(items)
            return self.c.emit(("prim", "list"), items)
        if isinstance(e, ast.Dict):
            items = []
            for k, v in zip(e.keys, e.values):
                items += [self.expr(k), self.expr(v)]
            if all(isinstance(x, Const) for x in items):
                return Const({items[i].value: items[i + 1].value for i in range(0, len(items), 2)})
            return self.c.emit(("prim", "dict"), items)
        if isinstance(e, ast.Subscript):
            base = self.expr(e.value)
            idx = self.index(e.slice)
            if isinstance(base, Const) and isinstance(idx, Const) and \
                    not isinstance(base.value, _TensorBase):
                if self.restricted and not getattr(type(base.value), "_ts_type", False) \
                        and not (_plain_const(base.value) and _plain_const(idx.value)):
                    raise self.err(e, f"indexing a {type(base.value).__name__}: archive code "
                                      "computes with tensors and plain values only")
                try:
                    return Const(base.value[idx.value])
                except Exception as ex:
                    if not self.restricted:
                        raise
                    raise self.err(e, f"indexing a constant failed: {type(ex).__name__}: "
                                      f"{ex}") from None
            if isinstance(base, _Seq) and isinstance(idx, Const) and isinstance(idx.value, int):
                return base.items[idx.value]
            out = self.c.emit(("prim", "getitem"), [self.seq(base), idx])
            if isinstance(base, Const) and type(base.value) in (list, tuple, dict):
                items = list(base.value.values() if type(base.value) is dict else base.value)
                if items:
                    self._note_object(out, items[0], items)
            return out
        if isinstance(e, ast.JoinedStr):
            # each part: a literal, or a value with its field (``{x!r:>4}``)
            fmt, vals = [], []
            for v in e.values:
                if isinstance(v, ast.Constant):
                    fmt.append(str(v.value).replace("{", "{{").replace("}", "}}"))
                    continue
                field = "{" + ("!" + chr(v.conversion) if v.conversion != -1 else "")
                if v.format_spec is not None:
                    spec = self.expr(v.format_spec)
                    if not isinstance(spec, Const):
                        raise self.err(e, "a format spec computed at run time is not "
                                          "supported by ptcore.jit.script")
                    field += ":" + spec.value
                fmt.append(field + "}")
                vals.append(self.expr(v.value))
            fmt = "".join(fmt)
            self.check_format(e, fmt)
            if all(isinstance(p, Const) for p in vals):
                return Const(safe_format(fmt, *[p.value for p in vals]))
            return self.c.emit(("prim", "format"), [Const(fmt)] + vals)
        if isinstance(e, ast.Starred):
            raise self.err(e, "starred expressions are only supported in calls")
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(e)
        raise self.err(e, f"{type(e).__name__} expressions are not supported by "
                          "ptcore.jit.script", UnsupportedNodeError)

    def comprehension(self, e):
        """``[elt for t in it if c]`` / ``(elt for ...)``: over a sequence of
        compile-time length, unrolled (a constant if every item is one);
        otherwise compiled as the loop ``r = []; for t in it: if c: r.append(elt)``.
        ``{k: v for ...}``: the loop ``r = {}; for ...: r[k] = v``."""
        if len(e.generators) != 1 or e.generators[0].is_async:
            raise self.err(e, "comprehensions with several 'for' clauses are not supported "
                              "by ptcore.jit.script")
        gen = e.generators[0]
        bound = [n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)]
        saved = {n: self.scope.get(n, _MISSING) for n in bound}
        mark = len(self.c.nodes)
        try:
            items = None if isinstance(e, ast.DictComp) else self._static_items(gen.iter)
            out = None
            if items is not None:
                out = []
                for v in items:
                    self.assign(gen.target, v)
                    conds = [self.expr(c) for c in gen.ifs]
                    if not all(isinstance(c, Const) for c in conds):
                        out = None          # a run-time condition: the loop form
                        del self.c.nodes[mark:]
                        break
                    if all(c.value for c in conds):
                        out.append(self.expr(e.elt))
            if out is not None:
                if all(isinstance(x, Const) for x in out):
                    vals = [x.value for x in out]
                    return Const(vals if isinstance(e, ast.ListComp) else tuple(vals))
                if isinstance(e, ast.GeneratorExp):
                    return _Seq(out)
                return self.c.emit(("prim", "list"), out)
            self.c.ncomp = getattr(self.c, "ncomp", 0) + 1
            name = f"$comp{self.c.ncomp}"
            if isinstance(e, ast.DictComp):
                self.scope[name] = self.c.emit(("prim", "dict"), [])
                body = ast.Assign([ast.Subscript(ast.Name(name, ast.Load()), e.key,
                                                 ast.Store())], e.value)
            else:
                self.scope[name] = self.c.emit(("prim", "list"), [])
                body = ast.Expr(ast.Call(ast.Attribute(ast.Name(name, ast.Load()), "append",
                                                       ast.Load()), [e.elt], []))
            for c in reversed(gen.ifs):
                body = ast.If(c, [body], [])
            loop = ast.For(gen.target, gen.iter, [body], [])
            ast.copy_location(loop, e)
            ast.fix_missing_locations(loop)
            self.for_stmt(loop)
            return self.scope.pop(name)
        finally:
            for n, v in saved.items():
                if v is _MISSING:
                    self.scope.pop(n, None)
                else:
                    self.scope[n] = v

    def _static_items(self, it):
        """The items of iterable expression ``it`` when their number is known
        at compile time (a constant, a tuple or list display, ``range`` of
        constants, ``enumerate``/``zip`` of such), else None (nothing emitted)."""
        if isinstance(it, (ast.Tuple, ast.List)) and not any(
                isinstance(x, ast.Starred) for x in it.elts):
            return [self.expr(x) for x in it.elts]
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords:
            fn = self._lookup_global(it.func.id) if it.func.id not in self.scope else None
            if fn is builtins.enumerate and len(it.args) == 1:
                inner = self._static_items(it.args[0])
                return None if inner is None else [_Seq([Const(i), v])
                                                   for i, v in enumerate(inner)]
            if fn is builtins.zip and it.args:
                parts = [self._static_items(a) for a in it.args]
                if any(p is None for p in parts):
                    return None
                return [_Seq(list(t)) for t in zip(*parts)]
            if fn is builtins.range:
                mark = len(self.c.nodes)
                bounds = [self.expr(a) for a in it.args]
                if all(isinstance(b, Const) for b in bounds):
                    r = self.fold_call(it, fn, bounds, {})
                    if r is not None and not _too_long(r.value):
                        return [Const(i) for i in r.value]
                del self.c.nodes[mark:]
                return None
        if isinstance(it, (ast.Name, ast.Attribute)):
            mark = len(self.c.nodes)
            v = self.expr(it)
            if isinstance(v, Const) and not isinstance(v.value, (_TensorBase, str)) and \
                    not _too_long(v.value):
                return [Const(x) for x in v.value]
            if isinstance(v, _Seq):
                return list(v.items)
            del self.c.nodes[mark:]
        return None

    def seq(self, x):
        return x        # a _Seq is encoded as a tuple of its items

    def _boolop(self, is_and, values):
        """``a and b ...`` / ``a or b ...`` short-circuiting as in Python: the
        operands after a run-time one are computed in a ``prim::If`` branch."""
        a = self.expr(values[0])
        if len(values) == 1:
            return a
        if _folds(a):
            if bool(a.value) == is_and:
                return self._boolop(is_and, values[1:])
            return a
        saved = self.c.nodes
        self.c.nodes = []
        try:
            rest = self._boolop(is_and, values[1:])
            rest_nodes = self.c.nodes
        finally:
            self.c.nodes = saved
        out = self.c.new()
        rest_block = Block([], rest_nodes, [self.c.enc(rest)])
        a_block = Block([], [], [self.c.enc(a)])
        self.c.nodes.append(Node(("prim", "If"), [self.c.enc(a)], {}, {"tuple": [out]},
                                 [rest_block, a_block] if is_and else [a_block, rest_block]))
        return out

    def _and(self, a, b):
        if isinstance(a, Const):
            return b if a.value else a
        return self.c.emit(("prim", "and"), [a, b])

    def index(self, s):
        if isinstance(s, ast.Slice):
            parts = [self.expr(p) if p is not None else Const(None)
                     for p in (s.lower, s.upper, s.step)]
            if all(isinstance(p, Const) for p in parts):
                return Const(slice(*[p.value for p in parts]))
            return self.c.emit(("prim", "slice"), parts)
        if isinstance(s, ast.Tuple):
            items = [self.index(x) for x in s.elts]
            if all(isinstance(x, Const) for x in items):
                return Const(tuple(x.value for x in items))
            return self.c.emit(("prim", "tuple"), items)
        return self.seq(self.expr(s))

    def call_args(self, e):
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                v = self.expr(a.value)
                if isinstance(v, Const):
                    args.extend(Const(x) for x in v.value)
                elif isinstance(v, _Seq):
                    args.extend(v.items)
                else:
                    raise self.err(a, "*args of a run-time sequence is not supported")
            else:
                args.append(self.seq(self.expr(a)) if not isinstance(a, ast.Tuple)
                            else self.expr(a))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                v = self.expr(k.value)
                if not isinstance(v, Const):
                    raise self.err(k, "**kwargs of run-time values is not supported")
                kwargs.update({kk: Const(vv) for kk, vv in v.value.items()})
            else:
                kwargs[k.arg] = self.expr(k.value)
        return args, kwargs

    def assertion(self, test, msg):
        """``assert test, msg``: a raise when ``test`` is a false constant, a run-time check
        when it is a value."""
        if isinstance(test, Const):
            if not test.value:
                self.c.emit(("prim", "raise"), [Const(str(msg.value if isinstance(
                    msg, Const) else "assertion failed"))])
        else:
            self.c.emit(("prim", "assert"), [test, msg])

    def call(self, e):
        # a method of a run-time value: x.view(...), xs.append(...)
        if isinstance(e.func, ast.Attribute):
            base = self.expr(e.func.value)
            so = self.c.object_of.get(base["v"]) if _is_ref(base) else None
            if so is not None:
                return self._call_object_method(e, base, so, e.func.attr)
            if isinstance(base, Const) and is_script_instance(base.value) and \
                    not self.restricted and not (type(base.value) is ScriptObject and
                                                 e.func.attr in base.value._fields):
                # a method of a user-class instance: compiled inline
                so = base.value if type(base.value) is ScriptObject else \
                    _script_class.ScriptObject(type(base.value).__qualname__, {},
                                               type(base.value))
                if so._cls is not None and callable(getattr(so._cls, e.func.attr, None)):
                    return self._call_object_method(e, base, so, e.func.attr)
            if not isinstance(base, Const) or (
                    _tconst(base) and not metadata_query(e.func.attr)):
                # a parameter's/buffer's methods run when the graph runs
                # (``self.w.t()``, ``self.count.add_(1)``): their values change
                self._check_tensor_method(e.func, base)
                known = self._is_tensor(base)
                args, kwargs = self.call_args(e)
                base = self.seq(base)
                out = self.c.emit(("prim", "method"), [Const(e.func.attr), base] + args,
                                  {k: self.seq(v) for k, v in kwargs.items()})
                if known and _tensor_result(e.func.attr):
                    self.c.tensor_values.add(out["v"])
                return out
            if isinstance(base.value, ScriptModule) and not self.restricted and \
                    _compiled_method(base.value, e.func.attr):
                # a method of a traced, scripted or loaded module
                args, kwargs = self.call_args(e)
                return call_compiled(self, base.value, e.func.attr, args, kwargs,
                                     f"{self.filename}:{self.line0 + e.lineno}")
            ts = getattr(base.value, "_ts_methods", None) if isinstance(base.value, Module) \
                else None
            if ts and e.func.attr in ts:
                # a method of a module read from a TorchScript archive
                args, kwargs = self.call_args(e)
                return self.c.compile_function(ts[e.func.attr], base.value, args, kwargs,
                                               f"{self.filename}:{self.line0 + e.lineno}")
            try:
                fn = getattr(base.value, e.func.attr) if not self.restricted else \
                    self._restricted_attr(e.func, base.value, e.func.attr) if \
                    getattr(type(base.value), "_ts_namespace", False) else _refuse_call(
                        self, e, base.value, e.func.attr)
            except AttributeError as ex:
                if self.restricted or not _is_ptcore_module(base.value):
                    raise self.err(e, str(ex)) from None
                fn = _Absent(e.func.attr, str(ex))
        else:
            f = self.expr(e.func)
            if not isinstance(f, Const):
                raise self.err(e, "calling a run-time value is not supported")
            fn = f.value
        if fn is _annotations.fork and e.args and not self.restricted:
            # ``fork(f, *args)``: ``f(*args)`` run in order (as TorchScript
            # runs a fork without an inter-op pool); the future is its value
            return self.call(_located(ast.Call(func=e.args[0], args=e.args[1:],
                                               keywords=e.keywords), e))
        if fn is _annotations.wait and len(e.args) == 1 and not e.keywords:
            return self.expr(e.args[0])
        if fn is _annotations.jit_isinstance and len(e.args) == 2 and not e.keywords:
            x, tp = self.expr(e.args[0]), self.expr(e.args[1])
            try:
                spec = _annotations.type_spec(tp.value if isinstance(tp, Const) else None)
            except TypeError as ex:
                raise self.err(e, str(ex)) from None
            if isinstance(x, Const) and not isinstance(x.value, _TensorBase):
                return Const(_annotations.matches_spec(x.value, spec))
            return self.c.emit(("prim", "jit_isinstance"), [x, Const(spec)])
        args, kwargs = self.call_args(e)
        if isinstance(fn, _Absent):
            return self.c.emit(("prim", "raise"), [Const(fn.message)])
        while isinstance(fn, functools.partial) and not self.restricted:
            # ``partial(torch.clamp, min=0.1)`` (a closure's function: geoopt's matrix
            # functions): its function called with the bound arguments, as TorchScript does
            args = [Const(a) for a in fn.args] + list(args)
            kwargs = {**{k: Const(v) for k, v in fn.keywords.items()}, **kwargs}
            fn = fn.func
        allconst = all(isinstance(a, Const) for a in args) and \
            all(isinstance(v, Const) for v in kwargs.values())
        where = f"{self.filename}:{self.line0 + e.lineno}"
        if fn is _annotations.is_scripting:
            return Const(True)          # as in TorchScript: the scripted path
        if fn is _checks_assert and len(args) == 2 and not kwargs:
            # torch._assert(cond, msg): TorchScript compiles it as ``assert cond, msg``
            # (e3nn's generated tensor products call it)
            self.assertion(args[0], args[1])
            return Const(None)
        hook = getattr(type(fn), "_jit_compile_call", None)
        if hook is not None:            # names of a TorchScript archive's code (torch.*, ops.*)
            return hook(fn, self, args, kwargs, e)
        if isinstance(fn, ScriptSource):
            return self.c.compile_function(fn, None, args, kwargs, where)
        if isinstance(fn, ScriptFunction) and not self.restricted:
            # a function scripted (``@jit.script``) or traced before: inlined
            src = getattr(fn, "_py_fn", None)
            if src is None:
                return call_compiled(self, fn, None, args, kwargs, where)
            return self.c.compile_function(src, None, args, kwargs, where)
        if isinstance(fn, ScriptModule) and not self.restricted and \
                _compiled_method(fn, "forward"):
            return call_compiled(self, fn, "forward", args, kwargs, where)
        if self.restricted and fn not in _BUILTIN_PRIMS and fn is not builtins.range and \
                fn is not builtins.isinstance:
            raise self.err(e, f"archive code may not call {getattr(fn, '__qualname__', fn)!r}")
        d = op_of(fn)
        if d is not None:
            return self.c.emit((d.namespace, d.name), args, kwargs)
        if fn is name_grad_fn:
            # the grad_fn naming of nn's outputs (autograd's business): the value itself
            return args[0]
        prim = _NN_PRIMS.get(fn) if inspect.isfunction(fn) else None
        if prim is not None:
            return self.c.emit(("prim", prim), args, kwargs)
        if isinstance(fn, Module):
            return self.c.compile_function(type(fn).forward, fn, args, kwargs, where)
        mod = getattr(getattr(fn, "__func__", fn), "_torchscript_modifier", None) \
            if inspect.ismethod(fn) or inspect.isfunction(fn) else None
        if mod == "unused":
            # as TorchScript: calling an @unused function raises when it runs
            return self.c.emit(("prim", "raise"), [Const(
                f"{fn.__name__} is marked @ptcore.jit.unused and was called")])
        if mod == "ignore" or inspect.isclass(fn) and fn in _SCRIPT_CLASSES:
            # as TorchScript: an @ignore function stays Python, called when the
            # graph runs (such a graph cannot be saved); so is an instance of a
            # scripted class made (its methods are called when the graph runs)
            return self._python_call(fn, args, kwargs)
        if inspect.ismethod(fn) and isinstance(fn.__self__, Module):
            return self.c.compile_function(fn.__func__, fn.__self__, args, kwargs, where)
        tensor_arg = any(_tconst(a) for a in args) or any(_tconst(v) for v in kwargs.values())
        if tensor_arg and fn in _BUILTIN_PRIMS and fn is not builtins.len and \
                _BUILTIN_PRIMS[fn] is not None:
            return self.c.emit(("prim", _BUILTIN_PRIMS[fn]), args)
        if tensor_arg and inspect.isfunction(fn):
            # a helper on parameters/buffers: compiled, not evaluated once
            return self._compile_call(fn, args, kwargs, where)
        if fn in _BUILTIN_PRIMS:
            if allconst:
                folded = self.fold_call(e, fn, args, kwargs)
                if folded is not None:
                    return folded
            if fn in (builtins.tuple, builtins.list):
                if len(args) == 1 and isinstance(args[0], _Seq):
                    return args[0]
                if len(args) == 1 and not kwargs:   # list(t.shape), tuple(t.size())
                    return self.c.emit(("prim", "list_copy" if fn is builtins.list
                                        else "tuple_of"), args)
                raise self.err(e, f"{fn.__name__}() of a run-time value is not supported")
            return self.c.emit(("prim", _BUILTIN_PRIMS[fn]), args)
        if fn is builtins.isinstance and len(args) == 2 and isinstance(args[1], Const):
            if isinstance(args[0], Const):
                try:
                    return Const(isinstance(args[0].value, args[1].value))
                except TypeError as ex:
                    raise self.err(e, f"isinstance: {ex}") from None
            return self._isinstance(e, args[0], args[1].value)
        if fn is builtins.print and not kwargs:
            # as TorchScript (prim::Print): printed when the graph runs
            return self.c.emit(("prim", "print"), args)
        if fn is warnings.warn:
            # as TorchScript (aten::warn): warned when the graph runs
            msg = self.message(e.args[0]) if e.args else Const("")
            return self.c.emit(("prim", "warn"), [msg])
        if fn is builtins.range:
            if allconst:
                folded = self.fold_call(e, fn, args, kwargs)
                if folded is not None:
                    return folded
            return self.c.emit(("prim", "range"), args)
        if allconst:
            # a pure helper on constants (``_pair(3)``, ``math.sqrt(2)``): its value
            try:
                return Const(fn(*[a.value for a in args],
                                **{k: v.value for k, v in kwargs.items()}))
            except Exception as ex:
                raise self.err(e, f"evaluating {getattr(fn, '__name__', fn)}(...) at compile "
                                  f"time failed: {ex}") from None
        if inspect.isfunction(fn):
            return self._compile_call(fn, args, kwargs, where)
        if MATH.get(getattr(fn, "__name__", None)) is fn and not kwargs:
            return self.c.emit(("prim", "math"), [Const(fn.__name__)] + args)
        if getattr(fn, "__name__", None) == "format" and \
                isinstance(getattr(fn, "__self__", None), str) and not kwargs:
            # ``"{} has {}".format(name, x.numel())``: formatted when the graph runs
            self.check_format(e, fn.__self__)
            return self.c.emit(("prim", "format"), [Const(fn.__self__)] + args)
        if _is_namedtuple(fn):
            # ``Out(y, n)``: its fields (defaults filled), kept by name for ``.y``
            fields = fn._fields
            if len(args) > len(fields):
                raise self.err(e, f"{fn.__name__}() takes {len(fields)} fields")
            items = list(args)
            for f in fields[len(args):]:
                if f in kwargs:
                    items.append(kwargs.pop(f))
                elif f in fn._field_defaults:
                    items.append(Const(fn._field_defaults[f]))
                else:
                    raise self.err(e, f"{fn.__name__}() missing field {f!r}")
            if kwargs:
                raise self.err(e, f"{fn.__name__}() has no field {next(iter(kwargs))!r}")
            return _NTSeq(items, fn)
        if isinstance(getattr(fn, "__self__", None), str) and not kwargs and \
                getattr(fn, "__name__", None) in _STR_METHODS:
            # ``",".join(names)``: the constant string's method, called when the graph runs
            return self.c.emit(("prim", "method"), [Const(fn.__name__), Const(fn.__self__)] + args)
        raise self.err(e, f"cannot call {getattr(fn, '__qualname__', fn)!r} with run-time "
                          "values in ptcore.jit.script")


    def _note_object(self, ref, sample, items=None):
        """Record that run-time value ``ref`` holds a script object like ``sample``
        (when every one of ``items`` is of its class): its methods can be inlined."""
        if not is_script_instance(sample):
            return
        so = self.c.object_values.get(id(sample))
        so = self.c.object_of.get(so["v"]) if so is not None else None
        if so is None:
            so = sample if type(sample) is ScriptObject else \
                self.c.object_memo.get(id(sample), (None,))[0]
        if so is None:
            return
        if items is not None and any(
                _object_class(x) != (so._cls, so._qualname) for x in items):
            return
        self.c.object_of[ref["v"]] = so

    def _call_object_method(self, e, self_value, so, name):
        """Inline method ``name`` of script object ``so``'s class, ``self`` being
        ``self_value`` (a compile-time object or a run-time value holding one)."""
        fn = _script_class.methods(so).get(name)
        if fn is None:
            raise self.err(e, f"script object {so._qualname} has no method {name!r}"
                              + ("" if so._cls is not None else " (its class's code is not "
                                 "part of the graph)"))
        if isinstance(self_value, Const) and _assigns_self(fn):
            # a method that sets fields runs on the object's run-time value
            self_value = self.c.object_ref(self_value.value)
        args, kwargs = self.call_args(e)
        where = f"{self.filename}:{self.line0 + e.lineno}"
        if isinstance(self_value, Const):
            return self.c.compile_function(fn, self_value.value, args, kwargs, where)
        if so._cls is not None:
            self.c.input_types.setdefault(self_value["v"], so._cls)
        return self.c.compile_function(fn, None, [self_value] + args, kwargs, where)

    def _is_tensor(self, x):
        """Whether ``x`` is known to be a Tensor: a parameter, buffer or tensor
        constant, an argument typed Tensor (also by having no annotation), or the
        result of arithmetic on one or of one of its methods that return a Tensor."""
        if _tconst(x):
            return True
        if not _is_ref(x):
            return False
        if x["v"] in self.c.input_types:
            ann = self.c.input_types[x["v"]]
            return ann is None or ann is ptcore.Tensor or ann is _TensorBase
        return x["v"] in self.c.tensor_values

    def _check_tensor_method(self, e, x):
        """A method called on a value known to be a Tensor must be one of Tensor's:
        TorchScript refuses ``x.no_such_method()`` when it compiles."""
        if self._is_tensor(x) and not hasattr(ptcore.Tensor, e.attr):
            raise self.err(e, f"'Tensor (inferred)' object has no attribute or method "
                              f"'{e.attr}'.")

    def _isinstance(self, e, x, cls):
        """``isinstance`` of run-time value ``x``: checked when the graph runs
        against Tensor and the builtin types; against another class decided
        as TorchScript does from the value's static type: a parameter
        without annotation is a Tensor (``isinstance(input, PackedSequence)``
        is False), one annotated with a class is that class."""
        classes = cls if isinstance(cls, tuple) else (cls,)
        names = []
        for k in classes:
            if k is ptcore.Tensor or k is _TensorBase:
                names.append("Tensor")
            elif k in _PY_TYPES:
                names.append(k.__name__)
            elif not isinstance(k, type):
                raise self.err(e, f"isinstance with {k!r}, which is not a class")
        if len(names) == len(classes):
            if names == ["Tensor"]:
                return self.c.emit(("prim", "isinstance_tensor"), [x])
            return self.c.emit(("prim", "isinstance"), [x, Const(names)])
        ann = self.c.input_types.get(x["v"]) if _is_ref(x) else None
        if ann is None and _is_ref(x) and x["v"] in self.c.input_types:
            ann = ptcore.Tensor         # unannotated: a Tensor in TorchScript
        if isinstance(ann, type):
            return Const(issubclass(ann, classes))
        raise self.err(e, "isinstance of a run-time value of unknown type against "
                          f"{getattr(cls, '__name__', cls)!r}: annotate the parameter")

    def _compile_call(self, fn, args, kwargs, where):
        """Python function ``fn`` called with compiled ``args``: compiled inline.  A function
        of ptcore's own that is no op of the table (``sparse_coo_tensor``: TorchScript's are
        built-in ops) and whose code is beyond the compiler is called as Python when the
        graph runs instead (as an @ignore function: such a graph cannot be saved)."""
        c = self.c
        if self.restricted or not getattr(fn, "__module__", "").startswith("ptcore."):
            return c.compile_function(fn, None, args, kwargs, where)
        nodes, n0, depth = c.nodes, len(c.nodes), c.depth
        try:
            return c.compile_function(fn, None, args, kwargs, where)
        except ScriptError:
            del nodes[n0:]
            c.nodes, c.depth = nodes, depth
            return self._python_call(fn, args, kwargs)

    def _python_call(self, fn, args, kwargs):
        path = None
        if inspect.ismethod(fn) and isinstance(fn.__self__, Module) and self.c.root is not None:
            path = next((n for n, m in self.c.root.named_modules(remove_duplicate=False)
                         if m is fn.__self__), None)
        call = PythonCall(fn, path)
        out = self.c.emit(("prim", "python_call"), [Const(fn.__qualname__)] + list(args), kwargs)
        self.c.nodes[-1]._fn = call
        return out


_PY_TYPES = (bool, int, float, str, list, tuple, dict, type(None))
# ptcore.nn's kernels that are primitives of scripted graphs (as ``aten::lstm``
# & co. are TorchScript's): the recurrences of RNN, LSTM, GRU and their cells
_NN_PRIMS = {_rnn.rnn_forward: "rnn_forward", _rnn._cell_forward: "rnn_cell"}


_MISSING = object()


class _Absent:
    """A name read from a module of ptcore that ptcore lacks (torch has it): a call of it
    compiles to a raise (``message``, the AttributeError's)."""

    def __init__(self, name, message):
        self.name, self.message = name, message

    def __repr__(self):
        return f"<absent {self.name}>"


def _is_ptcore_module(obj):
    """Whether ``obj`` is ptcore or one of its modules (under the launcher the root's
    ``__name__`` is "torch": its spec names it)."""
    spec = getattr(obj, "__spec__", None) if isinstance(obj, type(ptcore)) else None
    return obj is ptcore or spec is not None and spec.name.startswith("ptcore.")
_SAFE_BUILTINS = {"bool", "int", "float", "str", "len", "range", "min", "max", "abs", "round", "sorted",
                  "isinstance", "list", "tuple", "True", "False", "None"}


def _compiled_method(sm, name):
    """Whether ScriptModule ``sm`` has a compiled method ``name`` (a
    subclass with ``@script_method`` s is compiled from its Python)."""
    if type(sm).__module__ != "ptcore.jit":
        return False
    d = sm.__dict__
    src = d.get("_script_src")
    if src is not None:
        return name == "forward" or getattr(getattr(type(src), name, None),
                                            "_torchscript_modifier", None) == "export"
    return name in (d.get("_ts_methods") or ()) or name in sm._sync()


def _refuse_call(ctx, e, obj, attr):
    raise ctx.err(e, f"archive code may not call {type(obj).__name__}.{attr}")


_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
             "reverse", "sort"}


def _mutated_names(fdef):
    """Names of ``fdef``'s local lists/dicts that it mutates in place."""
    out = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _MUTATORS and isinstance(n.func.value, ast.Name):
            out.add(n.func.value.id)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
                isinstance(n.value, ast.Name):
            out.add(n.value.id)
    return out


def _returns(stmts):
    """Whether ``stmts`` return (or raise) on every path, with a return on one."""
    return _ends(stmts) and any(isinstance(n, ast.Return) for st in stmts for n in ast.walk(st))


def _ends(stmts):
    """Whether every path through ``stmts`` ends in a return or a raise."""
    return bool(stmts) and (isinstance(stmts[-1], (ast.Return, ast.Raise)) or (
        isinstance(stmts[-1], ast.If) and _ends(stmts[-1].body) and _ends(stmts[-1].orelse))
        or (isinstance(stmts[-1], ast.With) and _ends(stmts[-1].body)))


def _has_return(stmts):
    """Whether ``stmts`` hold a return (not counting nested definitions)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return False


def _is_dtype_type(tp):
    """Whether annotation ``tp`` is ``dtype`` or ``Optional[dtype]``."""
    args = typing.get_args(tp) if typing.get_origin(tp) is typing.Union else (tp,)
    return any(a is ptcore.dtype or (isinstance(a, type) and a.__name__ == "dtype")
               for a in args)


def _arg_kind(tp, default, infer=True):
    """The type a parameter's argument is checked against when a compiled
    function is called from Python (TorchScript's argument check): ``int``,
    ``float``, ``bool``, ``str`` or ``Tensor`` (also an unannotated parameter,
    as TorchScript infers it, unless its default is some other value); None: unchecked."""
    if tp is None:
        ok = infer and (default is inspect.Parameter.empty or default is None or
                        isinstance(default, _TensorBase))
        return "Tensor" if ok else None
    if tp in (int, float, bool, str):
        return tp.__name__
    return "Tensor" if tp is ptcore.Tensor else None


def _compile(fn, self_obj, root, nargs_names):
    comp = _Compiler(root)
    inputs = []
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = getattr(fn, "__annotations__", {})
    for name in nargs_names:
        v = comp.g.new_value("input", name=name)
        comp.g.inputs.append(v.id)
        inputs.append({"v": v.id})
        comp.input_types[v.id] = hints.get(name)
    if inspect.isfunction(fn):
        # what the graph checks its arguments are when called from Python
        # (ptcore's own modules leave Tensor parameters unannotated, not others)
        params = inspect.signature(fn).parameters
        own = (fn.__module__ or "").startswith("ptcore.")
        comp.g.arg_kinds = [_arg_kind(hints.get(name), params[name].default, not own)
                            for name in nargs_names]
    dtype_inputs = [i for i, name in enumerate(nargs_names) if _is_dtype_type(hints.get(name))]
    if dtype_inputs:
        # a dtype passed as TorchScript's int (what a scripted x.dtype returns)
        comp.g.dtype_inputs = dtype_inputs
    result = comp.compile_function(fn, self_obj, inputs, {}, getattr(fn, "__qualname__", "fn"))
    comp.g.outputs = comp.enc(result)
    if comp.writes:
        # (result, {buffer: new tensor}): the module rebinds its buffers
        comp.g.outputs = {"tuple": [comp.g.outputs,
                                    {"dict": [[k, r] for k, r in comp.writes.items()]}]}
        comp.g.buffer_writes = True
    comp.g.check()
    return comp.g


def _positional(fn, skip_self):
    sig = inspect.signature(fn)
    names = []
    for i, (name, p) in enumerate(sig.parameters.items()):
        if skip_self and i == 0:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise NotSupportedError(f"ptcore.jit.script: {fn.__qualname__} takes *args/**kwargs "
                                    "or keyword-only arguments; script supports positional "
                                    "parameters")
        names.append(name)
    return names


def compile_module(obj, methods=None):
    """The graphs of ``obj``'s ``forward`` and ``@export`` methods, compiled
    for the module's current state (``training`` flags, attributes)."""
    if methods is None:
        methods = ["forward"] + [n for n in dir(type(obj)) if n != "forward" and getattr(
            getattr(type(obj), n, None), "_torchscript_modifier", None) == "export"]
    graphs = {}
    for m in methods:
        fn = getattr(type(obj), m)
        if fn.__name__ == "_forward_unimplemented":
            continue            # a container (ModuleList, ModuleDict): no forward
        if getattr(fn, "_torchscript_modifier", None) in ("ignore", "unused"):
            continue            # an @ignore/@unused forward stays Python (as torch's)
        names = _positional(fn, True)
        graphs[m] = _compile(fn, obj, obj, names)
        sig = list(inspect.signature(fn).parameters.values())[1:]
        graphs[m].signature = [[p.name, p.default] for p in sig]
        nt = namedtuple_return(fn)
        if nt is not None:
            graphs[m].nt_return = nt          # (the method's NamedTuple result type)
    return graphs


register_compiler(compile_module)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Compile ``obj`` (a function or an ``nn.Module``) with its control flow
    into a :class:`ScriptFunction` / :class:`ScriptModule` (``torch.jit.script``)."""
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        sm = RecursiveScriptModule._from_module(obj, {}, attributes=True)
        sm._attach_source(obj, {"epoch": 0})
        # compiled with the scripted module's attribute values: its script objects
        # (copies of user-class instances) are those its graphs read and set
        graphs = sm._compile_for(sm._mode_key())
        object.__setattr__(sm, "_graphs", graphs)
        _bind_python_calls(graphs, sm)
        sm._script_cache[(0,) + sm._mode_key()] = graphs
        return sm
    if inspect.isclass(obj):
        if issubclass(obj, Module):
            raise ScriptError(f"ptcore.jit.script: {obj.__qualname__} is an nn.Module class; "
                              "script an instance of it")
        # ``@torch.jit.script class ...``: torch compiles the class for TorchScript
        # and returns it; its instances are those of the Python class, made and
        # used by scripted code when the graph runs
        _SCRIPT_CLASSES.add(obj)
        return obj
    if inspect.isfunction(obj):
        g = _compile(obj, None, None, _positional(obj, False))
        sf = ScriptFunction(g, obj.__name__)
        sf._returns = namedtuple_return(obj)
        sig = inspect.signature(obj)
        sf._defaults = [p.default for p in sig.parameters.values()]
        sf._names = list(sig.parameters)
        sf._py_fn = obj
        return sf
    raise TypeError(f"ptcore.jit.script: cannot compile a {type(obj).__name__} (a function or "
                    "an nn.Module)")
