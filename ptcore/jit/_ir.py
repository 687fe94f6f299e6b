"""The graph IR of ``ptcore.jit``: a :class:`Graph` is a list of
:class:`Node` s in execution order over SSA :class:`Value` s.

A node calls one op of the operator table, named by its table key
(``namespace``, ``name``) — ``("ptcore", "add")``, ``("Tensor", "view")``,
``("nn.functional", "linear")`` — with arguments encoded as plain data:
``{"v": n}`` for value ``n``, lists, tuples, numbers, strings, None, and
tagged forms for dtypes, devices, slices, ``...`` and sizes.  The encoding is
JSON-compatible, which is how graphs are saved: a graph file names ops, it
never holds code.
"""
import inspect
import math

import importlib as _importlib

import ptcore
from ptcore._dispatch.table import lookup, op_of
from ptcore._dispatch import dispatcher as D
from ptcore.jit._errors import JitError, Error  # noqa: F401 (re-exported)
from ptcore.jit._prim import PRIM, CONTROL

__all__ = ["Value", "Node", "Graph", "encode_const", "decode", "resolve_op", "JitError"]



class Value:
    """One SSA value: a graph input, a parameter or buffer (``name`` is its
    qualified attribute name), a constant tensor, or a node output."""
    __slots__ = ("id", "kind", "name", "dtype", "shape", "device", "const")

    def __init__(self, id, kind, name=None, dtype=None, shape=None, device=None, const=None):
        self.id = id
        self.kind = kind            # "input", "param", "const", "node"
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.device = device
        self.const = const          # the tensor of a "const" value

    @classmethod
    def of_tensor(cls, id, kind, t, name=None):
        return cls(id, kind, name, t.dtype._name, tuple(t.shape),
                   str(t.device), t if kind == "const" else None)

    def type_str(self):
        if self.kind == "object":
            return getattr(self.const, "_qualname", "Object")
        if self.dtype is None:
            return "Tensor"
        dt = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
              "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(
            self.dtype, self.dtype)
        return f"{dt}({', '.join(map(str, self.shape))}, device={self.device})"

    def ref(self):
        return f"%self.{self.name}" if self.kind == "param" else f"%{self.id}"


class Block:
    """The body of a control-flow node: parameters (value ids bound on
    entry), nodes, and the encoded values it returns."""
    __slots__ = ("params", "nodes", "returns")

    def __init__(self, params=(), nodes=None, returns=()):
        self.params = list(params)
        self.nodes = nodes if nodes is not None else []
        self.returns = list(returns)

    def to_json(self):
        return [self.params, [n.to_json() for n in self.nodes], self.returns]

    @classmethod
    def from_json(cls, data):
        params, nodes, returns = data
        return cls([int(i) for i in params], [Node.from_json(n) for n in nodes], returns)


class Node:
    """One op call: ``op`` is its table key (or ``("prim", name)`` for the
    primitive operations of scripted graphs); ``args``/``kwargs`` encoded;
    ``outputs`` is the encoded structure of its result (value references where
    it holds tensors); control-flow nodes have ``blocks``."""
    __slots__ = ("op", "args", "kwargs", "outputs", "blocks", "_fn")

    def __init__(self, op, args, kwargs, outputs, blocks=None):
        self.op = tuple(op)
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        self.blocks = blocks or []
        self._fn = None

    def fn(self):
        if self._fn is None:
            self._fn = resolve_op(self.op)
        return self._fn

    def to_json(self):
        out = [list(self.op), self.args, self.kwargs, self.outputs]
        if self.blocks:
            out.append([b.to_json() for b in self.blocks])
        return out

    @classmethod
    def from_json(cls, data):
        if not isinstance(data, list) or len(data) not in (4, 5):
            raise JitError(f"bad node record {str(data)[:80]}")
        op, args, kwargs, outputs = data[:4]
        if not (isinstance(op, list) and len(op) == 2 and all(isinstance(p, str) for p in op)):
            raise JitError(f"bad op name {op!r}")
        if not isinstance(kwargs, dict) or not isinstance(args, list):
            raise JitError(f"bad arguments for {op!r}")
        blocks = [Block.from_json(b) for b in data[4]] if len(data) == 5 else None
        return cls(op, args, kwargs, outputs, blocks)

    def input_ids(self):
        """Every value the node reads, inside its blocks included."""
        out = []
        _collect(self.args, out)
        for a in self.kwargs.values():
            _collect(a, out)
        for b in self.blocks:
            for n in b.nodes:
                out.extend(n.input_ids())
            _collect(b.returns, out)
        return out

    def output_ids(self):
        out = []
        _collect(self.outputs, out)
        return out

    def qualname(self):
        ns, name = self.op
        return {"ptcore": "ptcore", "Tensor": "ptcore.Tensor",
                "nn.functional": "ptcore.nn.functional", "linalg": "ptcore.linalg"}.get(
            ns, "ptcore." + ns) + "." + name



class Graph:
    """Inputs, values, nodes and outputs of one traced method."""

    def __init__(self):
        self.values = {}            # id -> Value
        self.inputs = []            # ids of the graph inputs, in order
        self.nodes = []
        self.outputs = None         # encoded structure of the result

    def new_value(self, kind, t=None, name=None):
        vid = max(self.values, default=-1) + 1
        v = Value.of_tensor(vid, kind, t, name) if t is not None else Value(vid, kind, name)
        self.values[vid] = v
        return v

    def params(self):
        return [v for v in self.values.values() if v.kind == "param"]

    # ------------------------------------------------------------------ text
    def __str__(self):
        vals = self.values
        ins = [f"%{i} : {vals[i].type_str()}" for i in self.inputs]
        ins += [f"{v.ref()} : {v.type_str()}" for v in self.params()]
        lines = ["graph(" + ",\n      ".join(ins) + "):"]
        for v in vals.values():
            if v.kind == "const":
                lines.append(f"  %{v.id} : {v.type_str()} = prim::Constant[value=<Tensor>]()")
        self._text_nodes(self.nodes, lines, "  ")
        lines.append(f"  return ({_text(self.outputs, vals)})")
        return "\n".join(lines) + "\n"

    def _check_nodes(self, nodes, defined):
        for n in nodes:
            if n._fn is None or n.op != ("prim", "python_call"):
                resolve_op(n.op)
            own = []
            _collect(n.args, own)
            for a in n.kwargs.values():
                _collect(a, own)
            for i in own:
                if i not in defined:
                    raise JitError(f"{n.op[0]}::{n.op[1]} uses %{i} before it is defined")
            for b in n.blocks:
                inner = set(defined) | set(b.params)
                for i in b.params:
                    if i not in self.values:
                        raise JitError(f"block parameter %{i} is not a value of the graph")
                self._check_nodes(b.nodes, inner)
                rets = []
                _collect(b.returns, rets)
                for i in rets:
                    if i not in inner:
                        raise JitError(f"a block of {n.op[1]} returns undefined %{i}")
            for i in n.output_ids():
                if i not in self.values:
                    raise JitError(f"{n.op[0]}::{n.op[1]} defines unknown value %{i}")
                defined.add(i)

    def _text_nodes(self, nodes, lines, ind):
        vals = self.values
        for n in nodes:
            outs = n.output_ids()
            lhs = ", ".join(f"%{i} : {vals[i].type_str()}" for i in outs) if outs else "_"
            args = [_text(a, vals) for a in n.args]
            args += [f"{k}={_text(a, vals)}" for k, a in n.kwargs.items()]
            name = _display_name(n)
            if n.op == ("prim", "method") and name != "prim::method":
                args = args[1:]
            lines.append(f"{ind}{lhs} = {name}({', '.join(args)})")
            for k, b in enumerate(n.blocks):
                params = ", ".join(f"%{i}" for i in b.params)
                lines.append(f"{ind}  block{k}({params}):")
                self._text_nodes(b.nodes, lines, ind + "    ")
                lines.append(f"{ind}    -> ({', '.join(_text(r, vals) for r in b.returns)})")

    def code(self, method="forward", has_self=True):
        """Python-like text of the graph (``ScriptModule.code``)."""
        vals = self.values

        def name(v):
            if v.kind == "input":
                return f"input_{self.inputs.index(v.id)}"
            if v.kind == "param":
                out = "self"
                for part in v.name.split("."):
                    out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
                return out
            return f"_{v.id}"
        params = (["self"] if has_self else []) + [f"input_{i}" for i in range(len(self.inputs))]
        lines = [f"def {method}({', '.join(params)}):"]
        for v in vals.values():
            if v.kind == "const":
                lines.append(f"    _{v.id} = CONSTANTS.c{v.id}")

        def emit(nodes, ind):
            for n in nodes:
                outs = n.output_ids()
                lhs = ", ".join(f"_{i}" for i in outs) if outs else "_"
                args = [_pycode(a, vals, name) for a in n.args]
                args += [f"{k}={_pycode(a, vals, name)}" for k, a in n.kwargs.items()]
                lines.append(f"{ind}{lhs} = {n.qualname()}({', '.join(args)})")
                for k, b in enumerate(n.blocks):     # control flow: its blocks
                    params = ", ".join(f"_{i}" for i in b.params)
                    lines.append(f"{ind}  # block{k}({params}):")
                    emit(b.nodes, ind + "    ")
                    rets = ", ".join(_pycode(r, vals, name) for r in b.returns)
                    lines.append(f"{ind}    # -> ({rets})")
        emit(self.nodes, "    ")
        lines.append(f"    return {_pycode(self.outputs, vals, name)}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ (de)serialise
    def to_json(self):
        return {
            "values": [[v.id, v.kind, v.name, v.dtype, list(v.shape) if v.shape is not None
                        else None, v.device] for v in self.values.values()],
            "inputs": list(self.inputs),
            "nodes": [n.to_json() for n in self.nodes],
            "outputs": self.outputs,
            **({"signature": _enc_signature(self.signature)}
               if getattr(self, "signature", None) is not None else {}),
            **({"buffer_writes": True} if getattr(self, "buffer_writes", False) else {}),
            **({"dtype_inputs": list(self.dtype_inputs)}
               if getattr(self, "dtype_inputs", None) else {}),
        }

    @classmethod
    def from_json(cls, data, constants):
        g = cls()
        try:
            for vid, kind, name, dtype, shape, device in data["values"]:
                if kind not in ("input", "param", "const", "node", "object") or \
                        not isinstance(vid, int):
                    raise JitError(f"bad value record {vid!r}")
                g.values[vid] = Value(vid, kind, name, dtype,
                                      tuple(shape) if shape is not None else None, device,
                                      constants.get(vid) if kind in ("const", "object")
                                      else None)
                if kind in ("const", "object") and vid not in constants:
                    raise JitError(f"constant %{vid} has no {'tensor' if kind == 'const' else 'record'} in the file")
            g.inputs = [int(i) for i in data["inputs"]]
            for n in data["nodes"]:
                g.nodes.append(Node.from_json(n))
            g.outputs = data["outputs"]
            if data.get("buffer_writes"):
                g.buffer_writes = True
            if data.get("dtype_inputs"):
                g.dtype_inputs = [int(i) for i in data["dtype_inputs"]]
            if "signature" in data:
                g.signature = [[str(p[0])] + ([decode(p[1], {})] if len(p) > 1 else [])
                               for p in data["signature"]]
                g.signature = [p if len(p) > 1 else [p[0], inspect.Parameter.empty]
                               for p in g.signature]
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise JitError(f"malformed graph: {e}") from None
        g.check()
        return g

    def check(self):
        """Every op is in the operator table (or a known primitive) and every
        value is defined before use."""
        defined = {v.id for v in self.values.values() if v.kind != "node"}
        self._check_nodes(self.nodes, defined)
        out = []
        _collect(self.outputs, out)
        for i in out:
            if i not in defined:
                raise JitError(f"the graph returns %{i}, which is never defined")


# TorchScript's names of the primitive operations that are aten ops there
_ATEN_PRIMS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div",
               "floordiv": "floordiv", "mod": "remainder", "pow": "pow", "matmul": "matmul",
               "neg": "neg", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq",
               "ne": "ne", "iadd": "add_", "isub": "sub_", "imul": "mul_", "itruediv": "div_",
               "len": "len", "getitem": "__getitem__", "slice": "slice", "format": "format",
               "warn": "warn", "dict": "dict", "list_copy": "list", "math": "math"}


def _display_name(n):
    """The node's op as TorchScript prints it in a graph (``aten::relu``,
    ``aten::linalg_norm``, ``prim::If``), so that a program checking a
    graph's text for an op finds it."""
    ns, name = n.op
    if ns in ("ptcore", "Tensor", "nn.functional"):
        return f"aten::{name}"
    if ns == "prim":
        if name == "method" and n.args and isinstance(n.args[0], str):
            return f"aten::{n.args[0]}"
        if name == "math" and n.args and isinstance(n.args[0], str):
            return f"aten::{n.args[0]}"
        hit = _ATEN_PRIMS.get(name)
        return f"aten::{hit}" if hit is not None else f"prim::{name}"
    if ns.startswith("ops."):               # a library op: its own namespace, as torch's
        return f"{ns[4:]}::{name}"
    return f"aten::{ns.replace('.', '_')}_{name}"


# ---------------------------------------------------------------------------
# argument encoding
# ---------------------------------------------------------------------------

_DTYPES = None


def _dtype_by_name(name):
    global _DTYPES
    if _DTYPES is None:
        _DTYPES = {getattr(ptcore, n)._name: getattr(ptcore, n)
                   for n in dir(ptcore) if isinstance(getattr(ptcore, n, None), ptcore.dtype)}
    try:
        return _DTYPES[name]
    except KeyError:
        raise JitError(f"unknown dtype {name!r}") from None


def _enc_signature(sig):
    """A scripted method's parameters ``[[name, default], ...]`` as JSON: a
    parameter without a default (or with one a graph cannot hold) is ``[name]``."""
    out = []
    for name, default in sig:
        try:
            out.append([name] if default is inspect.Parameter.empty
                       else [name, encode_const(default)])
        except TypeError:
            out.append([name])
    return out


def encode_sequence(x, encode):
    """The encoding of a plain list or tuple whose items ``encode`` encodes
    (``{"list": ...}``/``{"tuple": ...}``), or None for anything else."""
    t = type(x)
    if t is list:
        return {"list": [encode(a) for a in x]}
    if t is tuple:
        return {"tuple": [encode(a) for a in x]}
    return None


def encode_const(x):
    """The encoding of a non-tensor argument, or raise TypeError."""
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"float": repr(x)}
    if isinstance(x, complex):
        return {"complex": [encode_const(x.real), encode_const(x.imag)]}
    if isinstance(x, ptcore.dtype):
        return {"dtype": x._name}
    if isinstance(x, ptcore.device):
        return {"device": str(x)}
    if isinstance(x, slice):
        return {"slice": [encode_const(x.start), encode_const(x.stop), encode_const(x.step)]}
    if x is Ellipsis:
        return {"ellipsis": True}
    if isinstance(x, ptcore.Size):
        return {"size": [int(i) for i in x]}
    mf = getattr(ptcore, "memory_format", None)
    if mf is not None and isinstance(x, mf):
        return {"memory_format": x.name}
    if isinstance(x, ptcore.layout):
        return {"layout": x.name}
    raise TypeError(f"cannot record an argument of type {type(x).__name__} in a graph")


def decode(x, env):
    """The Python object of encoded ``x``; value references read from ``env``."""
    if type(x) is dict:
        if "v" in x:
            return env[x["v"]]
        if "list" in x:
            return [decode(a, env) for a in x["list"]]
        if "tuple" in x:
            return tuple(decode(a, env) for a in x["tuple"])
        if "dtype" in x:
            return _dtype_by_name(x["dtype"])
        if "device" in x:
            return ptcore.device(x["device"])
        if "slice" in x:
            return slice(*(decode(a, env) for a in x["slice"]))
        if "ellipsis" in x:
            return Ellipsis
        if "size" in x:
            return ptcore.Size(x["size"])
        if "float" in x:
            return float(x["float"])
        if "complex" in x:
            return complex(decode(x["complex"][0], env), decode(x["complex"][1], env))
        if "memory_format" in x:
            return getattr(ptcore, x["memory_format"])
        if "layout" in x:
            return getattr(ptcore, x["layout"])
        if "dict" in x:
            return {k: decode(v, env) for k, v in x["dict"]}
        raise JitError(f"unknown encoded argument {x!r}")
    return x


def _collect(x, out):
    if type(x) is dict:
        if "v" in x:
            out.append(x["v"])
            return
        for k in ("list", "tuple", "slice"):
            if k in x:
                for a in x[k]:
                    _collect(a, out)
        if "dict" in x:
            for _, a in x["dict"]:
                _collect(a, out)
    elif type(x) in (list, tuple):
        for a in x:
            _collect(a, out)


def _text(x, vals):
    if type(x) is dict:
        if "v" in x:
            return vals[x["v"]].ref()
        if "list" in x:
            return "[" + ", ".join(_text(a, vals) for a in x["list"]) + "]"
        if "tuple" in x:
            return "(" + ", ".join(_text(a, vals) for a in x["tuple"]) + ")"
        if "slice" in x:
            return "slice(" + ", ".join(_text(a, vals) for a in x["slice"]) + ")"
        k, v = next(iter(x.items()))
        return f"{k}:{v}"
    return repr(x)


def _pycode(x, vals, name):
    if type(x) is dict:
        if "v" in x:
            return name(vals[x["v"]])
        if "list" in x:
            return "[" + ", ".join(_pycode(a, vals, name) for a in x["list"]) + "]"
        if "tuple" in x:
            inner = ", ".join(_pycode(a, vals, name) for a in x["tuple"])
            return f"({inner},)" if len(x["tuple"]) == 1 else f"({inner})"
        if "dtype" in x:
            return "ptcore." + x["dtype"]
        if "device" in x:
            return f"ptcore.device({x['device']!r})"
        if "slice" in x:
            a, b, c = (_pycode(p, vals, name) for p in x["slice"])
            return f"slice({a}, {b}, {c})"
        if "ellipsis" in x:
            return "..."
        if "size" in x:
            return repr(tuple(x["size"]))
        if "float" in x:
            return f"float({x['float']!r})"
        return repr(decode(x, {}))
    return repr(x)


# ---------------------------------------------------------------------------
# op resolution: only ops of the operator table
# ---------------------------------------------------------------------------

_NAMESPACES = {"ptcore": lambda: ptcore, "Tensor": lambda: ptcore.Tensor,
               # (import_module, not __import__ with a fromlist, which looks for a
               # submodule named by the fromlist on every call)
               "nn.functional": lambda: _importlib.import_module("ptcore.nn.functional"),
               "linalg": lambda: ptcore.linalg}


def resolve_op(op):
    """The callable of table op ``op`` = (namespace, name) or of a primitive
    ``("prim", name)``; JitError for anything else (a graph can call nothing else)."""
    ns, name = op
    ns, name = op
    if ns == "prim" and name == "python_call":
        raise JitError("prim::python_call: a graph read from a file cannot call Python "
                       "(an @ignore function)")
    if ns == "prim":
        if name in CONTROL:
            return None
        try:
            return PRIM[name]
        except KeyError:
            raise JitError(f"unknown primitive prim::{name}") from None
    d = lookup(name, ns)
    if d is None:
        raise JitError(f"unknown op {ns}::{name}: not in ptcore's operator table")
    owner = _NAMESPACES.get(ns)
    if ns.startswith("ops."):
        # a custom op (ptcore.library.custom_op): ptcore.ops.<namespace>.<name>
        # lazy: custom ops exist once ptcore.library is imported (~60 ms: logging, ops namespace)
        from ptcore.library import ops
        fn = getattr(getattr(ops, ns[4:]), name, None)
    elif owner is None:
        # another public submodule whose ops are in the table (ptcore.fft ...)
        import importlib
        mod = importlib.import_module("ptcore." + ns)
        fn = getattr(mod, name, None)
    else:
        obj = owner()
        fn = getattr(obj, name, None)
        if fn is None and d.raw is not None:
            # an op whose table name is not its public one (linalg::linalg_inv is
            # ptcore.linalg.inv): the binding of its function's name, when it is the op's
            alt = getattr(obj, getattr(d.raw, "__name__", ""), None)
            if alt is not None and op_of(alt) is d:
                fn = alt
    if fn is None:
        raise JitError(f"op {ns}::{name} is declared but not bound")
    if ns == "Tensor" and d.kind == "core":
        # the entry (seen by layers), whichever of entry or Cython method is bound now
        fn = _core_entry(name) or fn
    return fn


def _core_entry(name):
    for cls, n, _own, entry in D._CORE_ENTRIES:
        if n == name:
            return entry
    return None
