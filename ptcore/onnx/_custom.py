"""User conversions: ``register_custom_op_symbolic`` (``torch.onnx``'s API).

A symbolic function takes a graph context ``g`` and the op's arguments --
tensors as :class:`Value` handles, other arguments as the Python values the
trace recorded -- and returns the handle(s) of its result, made with
``g.op("OpType", *inputs, attr_f=1.0, ...)``: the attribute's type from its
name's suffix as in torch (``_i`` int, ``_f`` float, ``_s`` string, ``_t``
tensor, ``_is`` ints, ``_fs`` floats) or else from the Python value;
``"domain::OpType"`` writes an op of a custom domain (its version from
``export(custom_opsets=)``, default 1).  A registration for ``aten::name``
applies to the ptcore op ``name`` (function, method or ``nn.functional``);
``namespace::name`` to a custom op of ``ptcore.library``.  The function
registered for the highest opset at most the export's is used, before the
built-in conversion.
"""
import re
import threading

import numpy as np

from ptcore._tensor import _TensorBase
import ptcore.onnx._proto as P
from ptcore.onnx._shapes import dec, init
from ptcore.onnx.errors import UnsupportedOperatorError

__all__ = ["register_custom_op_symbolic", "unregister_custom_op_symbolic", "Value",
           "GraphContext", "lookup", "convert"]

_REGISTRY = {}                 # (namespace, name) -> {opset: fn}
_LOCK = threading.Lock()
_NAME = re.compile(r"^([A-Za-z_][\w.]*)::([A-Za-z_]\w*)$")


def _split(symbolic_name):
    m = _NAME.match(symbolic_name) if isinstance(symbolic_name, str) else None
    if m is None:
        raise ValueError(f"Failed to register operator {symbolic_name}. The symbolic name "
                         "must match the format domain::name, and should start with a letter "
                         "and contain only alphanumerical characters")
    return m.group(1), m.group(2)


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Convert the op ``symbolic_name`` (``"aten::gelu"``, ``"mylib::op"``)
    with ``symbolic_fn(g, *args)`` in exports of opset ``opset_version`` and above."""
    ns, name = _split(symbolic_name)
    if not callable(symbolic_fn):
        raise TypeError(f"symbolic_fn must be callable, not {type(symbolic_fn).__name__}")
    with _LOCK:
        _REGISTRY.setdefault((ns, name), {})[int(opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove the registration of ``symbolic_name`` for ``opset_version``."""
    ns, name = _split(symbolic_name)
    with _LOCK:
        fns = _REGISTRY.get((ns, name), {})
        fns.pop(int(opset_version), None)
        if not fns:
            _REGISTRY.pop((ns, name), None)


_LIBRARY_PREFIX = "ops."


def lookup(op, opset):
    """The symbolic function registered for the traced op ``(namespace,
    name)`` in an export of ``opset``, or None."""
    ns, name = op
    if not _REGISTRY:
        return None
    if ns.startswith(_LIBRARY_PREFIX):
        keys = [(ns[len(_LIBRARY_PREFIX):], name)]
    else:
        keys = [("aten", name.strip("_") if name.startswith("__") else name)]
    with _LOCK:
        for key in keys:
            fns = _REGISTRY.get(key)
            if fns:
                usable = [v for v in fns if v <= opset]
                if usable:
                    return fns[max(usable)]
    return None


class Value:
    """A tensor of the ONNX graph being written (a symbolic function's input
    or a ``g.op`` result)."""
    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype=None, shape=None):
        self.name, self.dtype, self.shape = name, dtype, shape

    def debugName(self):
        return self.name

    def __repr__(self):
        return f"Value({self.name!r})"


_ATTR_SUFFIX = {"i": int, "f": float, "s": str, "is": list, "fs": list, "t": None}


class GraphContext:
    """The ``g`` a symbolic function receives."""

    def __init__(self, builder, domains):
        self._b = builder
        self._domains = domains
        self.opset = builder.opset

    def _input(self, x):
        if isinstance(x, Value):
            return x.name
        if x is None:
            return ""
        if isinstance(x, _TensorBase):
            arr = x.detach().cpu().numpy()
            return init(self._b, arr, str(arr.dtype) if arr.dtype != np.bool_ else "bool")
        if isinstance(x, bool) or isinstance(x, int):
            return init(self._b, np.array(int(x)), "int64")
        if isinstance(x, float):
            return init(self._b, np.array(x), "float32")
        if isinstance(x, (list, tuple)) and all(isinstance(v, int) for v in x):
            return init(self._b, np.array(list(x), dtype=np.int64), "int64")
        raise TypeError(f"g.op: cannot use {type(x).__name__} {x!r} as an ONNX input")

    def _attrs(self, attrs):
        out = {}
        for key, v in attrs.items():
            name, _, suffix = key.rpartition("_")
            if not name or suffix not in _ATTR_SUFFIX:
                name, suffix = key, None
            if suffix == "t" or (suffix is None and hasattr(v, "numpy")):
                arr = np.ascontiguousarray(v.detach().cpu().numpy()
                                           if hasattr(v, "detach") else np.asarray(v))
                dt = "bool" if arr.dtype == np.bool_ else str(arr.dtype)
                out[name] = ("tensor", P.tensor("", dt, list(arr.shape), arr.tobytes()))
            elif suffix == "i":         # (a list under ``_i`` is ints, as torch's g.op takes it)
                out[name] = [int(i) for i in v] if isinstance(v, (list, tuple)) else int(v)
            elif suffix == "f":
                out[name] = [float(i) for i in v] if isinstance(v, (list, tuple)) else float(v)
            elif suffix == "s":
                out[name] = v.decode() if isinstance(v, bytes) else str(v)
            elif suffix == "is":
                out[name] = [int(i) for i in v]
            elif suffix == "fs":
                out[name] = [float(i) for i in v]
            else:
                out[name] = v
        return out

    def op(self, opname, *inputs, outputs=1, **attrs):
        """Add the ONNX node ``opname`` (``"domain::Op"`` for a custom domain);
        its result handle, or a tuple of ``outputs`` handles."""
        domain, _, op = opname.rpartition("::")
        if domain == "onnx":
            domain = ""
        b = self._b
        names = [b.fresh(op.lower()) for _ in range(int(outputs))]
        ins = [self._input(x) for x in inputs]
        b.read.update(ins)
        b.nodes.append(P.node(op, ins, names, b.fresh("n_" + op), self._attrs(attrs),
                              domain=domain))
        if domain:
            self._domains.add(domain)
        vals = tuple(Value(n) for n in names)
        return vals[0] if outputs == 1 else vals

    def at(self, *args, **kwargs):
        raise UnsupportedOperatorError("g.at (ATen fallback ops) is not supported: ptcore.onnx "
                                       "writes standard ONNX ops")


def convert(b, node, fn, domains):
    """Run the symbolic function ``fn`` on ``node``; the ONNX name(s) of its result."""

    def arg(enc):
        if type(enc) is dict and "v" in enc:
            v = b.g.values[enc["v"]]
            return Value(b.name(enc), v.dtype or "int64", v.shape)
        if type(enc) is dict and ("list" in enc or "tuple" in enc):
            items = [arg(e) for e in enc.get("list", enc.get("tuple"))]
            return items if "list" in enc else tuple(items)
        return dec(enc)
    args = [arg(a) for a in node.args]
    kwargs = {k: arg(v) for k, v in node.kwargs.items()}
    out = fn(GraphContext(b, domains), *args, **kwargs)
    if isinstance(out, Value):
        return out.name
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, Value) for o in out):
        return [o.name for o in out]
    raise UnsupportedOperatorError(
        f"the symbolic function registered for {node.op[0]}::{node.op[1]} returned "
        f"{type(out).__name__}, not the value(s) made by g.op")
