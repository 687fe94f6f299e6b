"""``ptcore.jit._get_trace_graph`` (``torch.jit._get_trace_graph``): a trace read through
TorchScript's graph API, for tools that walk traced graphs (fvcore's FLOP and activation
counters): ``graph.nodes()``; ``node.kind()``, ``inputs()``, ``outputs()``, ``scopeName()``;
``value.type().sizes()``, ``isCompleteTensor()``, ``toIValue()``, ``node()``.

The nodes are the trace's op calls (:mod:`ptcore.jit._trace`) under the names and with the
arguments TorchScript's tracer records: ``F.conv2d`` and the transposed convolutions as
``aten::_convolution``, the norms with aten's argument order, ``F.interpolate`` as
``aten::upsample_<mode>``, ``x @ y`` as ``aten::matmul``, einsum with its operands in a list;
constants and lists of values are ``prim::Constant`` and ``prim::ListConstruct`` nodes; an
``autograd.Function`` call is a ``prim::PythonOp`` (``pyname()``: its class name) whose results
replace its forward's; dead code is removed, as TorchScript's tracer does.  A
module's forward hooks may name scopes (``ptcore._C._get_tracing_state().push_scope``): each
node's ``scopeName()`` is the scopes it was recorded in, joined by ``/``.
"""
import ast
import inspect

from ptcore._dispatch.aten_schemas import overload_lines
from ptcore._dispatch.op_schema import parse
from ptcore.jit._ir import JitError, _display_name, _dtype_by_name
from ptcore.jit._trace import _as_tuple, _trace_graph
from ptcore.nn import Module

__all__ = ["_get_trace_graph"]


def _get_trace_graph(f, args=(), kwargs=None, strict=True, _force_outplace=False,
                     return_inputs=False, _return_inputs_states=False):
    """Trace ``f(*args)`` (a module's parameters and buffers become graph inputs, and its
    hooks run) and return ``(graph, outputs)``, the graph read as TorchScript's."""
    if kwargs:
        raise JitError("ptcore.jit._get_trace_graph: keyword arguments are not supported")
    inputs = _as_tuple(args)
    marks = {}
    module = f if isinstance(f, Module) else None
    graph, out = _trace_graph(f, inputs, module=module, strict=strict, marks=marks,
                              transparent=_PYTHON_COMPOSITES)
    return TracedGraph(graph, marks.get("scopes", ()), marks.get("python_ops", ())), out


# ops of ptcore's table that are Python functions in torch: TorchScript records the ops they
# call (an attention's in/out projections as aten::linear ...), so the trace does too
_PYTHON_COMPOSITES = frozenset({("nn.functional", "multi_head_attention_forward")})


class TensorType:
    """A tensor value's type: ``sizes()``, ``dim()``, ``scalarType()`` (TorchScript's)."""

    def __init__(self, shape, dtype):
        self._shape, self._dtype = shape, dtype

    def sizes(self):
        return list(self._shape)

    def dim(self):
        return len(self._shape)

    def scalarType(self):  # noqa: N802 - TorchScript's name
        return _ST_NAMES.get(self._dtype, str(_dtype_by_name(self._dtype)))

    def kind(self):
        return "TensorType"

    def __str__(self):
        return f"{self.scalarType()}({', '.join(map(str, self._shape))})"


_ST_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


class _ConstType:
    _KINDS = {bool: "BoolType", int: "IntType", float: "FloatType", str: "StringType",
              type(None): "NoneType", list: "ListType", tuple: "TupleType"}

    def __init__(self, value):
        self._kind = self._KINDS.get(type(value), "AnyType")

    def kind(self):
        return self._kind

    def __str__(self):
        return self._kind[:-4]


class DeviceObjType:
    """TorchScript's type of device values (``torch.DeviceObjType``: libraries annotate
    device arguments ``str | torch.DeviceObjType``); ``get()`` gives its one instance."""
    _instance = None

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def kind(self):
        return "DeviceObjType"

    def __str__(self):
        return "Device"

    __repr__ = __str__


class Value:
    """One value of the graph: a tensor (with its shape) or a constant (``toIValue``)."""

    def __init__(self, graph, producer=None, shape=None, dtype=None, const=None, tensor=False):
        self._graph, self._node = graph, producer
        self._shape, self._dtype, self._const, self._tensor = shape, dtype, const, tensor
        self._id = len(graph._values)
        graph._values.append(self)

    def isCompleteTensor(self):  # noqa: N802 - TorchScript's name
        return self._tensor and self._shape is not None

    def type(self):
        return TensorType(self._shape, self._dtype) if self._tensor else _ConstType(self._const)

    def toIValue(self):  # noqa: N802 - TorchScript's name
        return None if self._tensor else self._const

    def node(self):
        return self._node

    def debugName(self):  # noqa: N802 - TorchScript's name
        return str(self._id)

    def unique(self):
        return self._id

    def uses(self):
        return [n for n in self._graph._nodes if self in n._inputs]

    def __repr__(self):
        return f"%{self._id} : {self.type()}"


class Node:
    """One node: its kind (``aten::linear``, ``prim::Constant`` ...), input and output values
    and scope name."""

    def __init__(self, kind, inputs, scope=""):
        self._kind, self._inputs, self._outputs, self._scope = kind, list(inputs), [], scope
        self._pyname = None

    def kind(self):
        return self._kind

    def inputs(self):
        return iter(self._inputs)

    def outputs(self):
        return iter(self._outputs)

    def input(self):
        return self._inputs[0]

    def output(self):
        if len(self._outputs) != 1:
            raise RuntimeError(f"{self._kind} has {len(self._outputs)} outputs, not one")
        return self._outputs[0]

    def scopeName(self):  # noqa: N802 - TorchScript's name
        return self._scope

    def pyname(self):
        """The autograd.Function's class name, for a ``prim::PythonOp``."""
        if self._pyname is None:
            raise RuntimeError(f"{self._kind} is no prim::PythonOp")
        return self._pyname

    def __repr__(self):
        outs = ", ".join(map(repr, self._outputs))
        return f"{outs} = {self._kind}({', '.join('%' + v.debugName() for v in self._inputs)})"


class TracedGraph:
    """A ptcore trace as TorchScript's ``Graph`` reads: inputs (arguments, then parameters and
    buffers), nodes in execution order, outputs."""

    def __init__(self, graph, scope_marks=(), python_ops=()):
        self._values, self._nodes = [], []
        self._by_id = {}
        for vid in graph.inputs:
            self._tensor_value(graph, vid)
        params = [v for v in graph.values.values() if v.kind == "param"]
        for v in params:
            self._tensor_value(graph, v.id)
        self._inputs = [self._by_id[v] for v in list(graph.inputs) + [p.id for p in params]
                        if v in self._by_id]
        marks = list(scope_marks)
        scope, m = "", 0
        starts = {}             # first node -> the autograd.Function calls starting there
        for op in sorted(python_ops, key=lambda p: (p[0], -p[1])):
            starts.setdefault(op[0], []).append(op)
        ends = {}               # node index -> the calls whose results take effect there
        for i, n in enumerate(list(graph.nodes) + [None]):
            while m < len(marks) and marks[m][0] <= i:
                scope = marks[m][1]
                m += 1
            for node, outs in reversed(ends.pop(i, ())):
                self._python_op_results(node, outs, scope)
            if n is None:
                break
            for _, end, pyname, ins, outs in starts.get(i, ()):
                node = Node("prim::PythonOp", [self._input(graph, {"v": v}, scope) for v in ins],
                            scope)
                node._pyname = pyname
                self._nodes.append(node)
                ends.setdefault(end, []).append((node, [(v, self._tensor_value(graph, v))
                                                        for v in outs]))
            self._convert(graph, n, scope)
        self._outputs = self._flat_values(graph, graph.outputs, scope)
        self._eliminate_dead_code()

    # -- TorchScript's reading API ---------------------------------------------------------
    def nodes(self):
        return iter(self._nodes)

    def inputs(self):
        return iter(self._inputs)

    def outputs(self):
        return iter(self._outputs)

    def __str__(self):
        ins = ", ".join(map(repr, self._inputs))
        body = "".join(f"  {n!r}\n" for n in self._nodes)
        outs = ", ".join("%" + v.debugName() for v in self._outputs)
        return f"graph({ins}):\n{body}  return ({outs})\n"

    # -- building --------------------------------------------------------------------------
    def _tensor_value(self, graph, vid, producer=None):
        v = graph.values.get(vid)
        shape = tuple(v.shape) if v is not None and v.shape is not None else None
        val = Value(self, producer, shape, v.dtype if v is not None else None, tensor=True)
        self._by_id[vid] = val
        return val

    def _constant(self, value, scope):
        node = Node("prim::Constant", (), scope)
        node._outputs.append(Value(self, node, const=value))
        self._nodes.append(node)
        return node._outputs[0]

    def _input(self, graph, enc, scope):
        """The value for an encoded argument: a tensor's, a list of values built by a
        ``prim::ListConstruct``, or a constant's."""
        if type(enc) is dict and "v" in enc:
            hit = self._by_id.get(enc["v"])
            return hit if hit is not None else self._tensor_value(graph, enc["v"])
        if type(enc) is dict and ("list" in enc or "tuple" in enc):
            items = enc.get("list", enc.get("tuple"))
            if any(type(e) is dict for e in items):
                node = Node("prim::ListConstruct", [self._input(graph, e, scope) for e in items],
                            scope)
                node._outputs.append(Value(self, node, const=None))
                self._nodes.append(node)
                return node._outputs[0]
            return self._constant(list(items), scope)
        return self._constant(enc, scope)       # (a number, string, None, constant tensor)

    def _flat_values(self, graph, enc, scope):
        if type(enc) is dict and "v" in enc:
            return [self._input(graph, enc, scope)]
        if type(enc) is dict:
            out = []
            for e in enc.get("list", enc.get("tuple", ())):
                out += self._flat_values(graph, e, scope)
            return out
        return []

    def _python_op_results(self, node, results, scope):
        """The results of autograd.Function call ``node`` (a ``prim::PythonOp``), as its
        ``apply`` returns them (``(value id, value)`` pairs): its outputs replace those of its
        forward's ops (which are in the graph, as in TorchScript's, until found dead); several
        come through a ``prim::TupleUnpack``."""
        for vid, v in results:
            self._by_id[vid] = v
        values = [v for _, v in results]
        if len(values) == 1:
            node._outputs.append(values[0])
            values[0]._node = node
            return
        packed = Value(self, node, const=())
        node._outputs.append(packed)
        unpack = Node("prim::TupleUnpack", [packed], scope)
        for v in values:
            v._node = unpack
            unpack._outputs.append(v)
        self._nodes.append(unpack)

    def _eliminate_dead_code(self):
        """Drop the nodes whose results nothing uses, but autograd.Function calls and
        in-place writes (TorchScript's tracer does: a batch-first LSTM's time-major layout,
        which the recorded rnn op does not read; a Function's forward's ops)."""
        used = set(map(id, self._outputs))
        keep = []
        for n in reversed(self._nodes):
            kind = n._kind
            writes = kind.endswith("_") and not kind.endswith("__")
            if writes or kind == "prim::PythonOp" or not n._outputs or \
                    any(id(o) in used for o in n._outputs):
                keep.append(n)
                used.update(map(id, n._inputs))
        self._nodes = keep[::-1]

    def _convert(self, graph, n, scope):
        kind, args = _aten_form(n, graph)
        ins = [self._input(graph, a, scope) for a in args]
        node = Node(kind, ins, scope)
        for vid in n.output_ids():
            node._outputs.append(self._tensor_value(graph, vid, node))
        self._nodes.append(node)


# ---------------------------------------------------------------------------
# the ops TorchScript's tracer records under other names or argument orders
# ---------------------------------------------------------------------------

def _sig(*params):
    """A signature from ``"name"`` / ``"name=<literal default>"`` strings."""
    return inspect.Signature([inspect.Parameter(
        p.split("=")[0], inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=ast.literal_eval(p.split("=")[1]) if "=" in p else inspect.Parameter.empty)
        for p in params])


_CONV = _sig("input", "weight", "bias=None", "stride=1", "padding=0", "dilation=1", "groups=1")
_CONV_T = _sig("input", "weight", "bias=None", "stride=1", "padding=0", "output_padding=0",
               "groups=1", "dilation=1")
_BN = _sig("input", "running_mean", "running_var", "weight=None", "bias=None", "training=False",
           "momentum=0.1", "eps=1e-05")
_IN = _sig("input", "running_mean=None", "running_var=None", "weight=None", "bias=None",
           "use_input_stats=True", "momentum=0.1", "eps=1e-05")
_LN = _sig("input", "normalized_shape", "weight=None", "bias=None", "eps=1e-05")
_GN = _sig("input", "num_groups", "weight=None", "bias=None", "eps=1e-05")
_INTERP = _sig("input", "size=None", "scale_factor=None", "mode='nearest'", "align_corners=None",
               "recompute_scale_factor=None", "antialias=False")
_GRID = _sig("input", "grid", "mode='bilinear'", "padding_mode='zeros'", "align_corners=None")


def _bind(sig, n):
    b = sig.bind(*n.args, **n.kwargs)
    b.apply_defaults()
    return b.arguments


def _ntuple(x, k):
    if type(x) is dict and "tuple" in x:
        x = x["tuple"]
    if isinstance(x, (list, tuple)):
        return {"list": list(x)}
    return {"list": [x] * k} if not isinstance(x, str) else x


def _conv(n, k, transposed):
    a = _bind(_CONV_T if transposed else _CONV, n)
    return "aten::_convolution", [
        a["input"], a["weight"], a["bias"], _ntuple(a["stride"], k), _ntuple(a["padding"], k),
        _ntuple(a["dilation"], k), transposed,
        _ntuple(a["output_padding"] if transposed else 0, k), a["groups"], False, False, True,
        True]


def _batch_norm(n):
    a = _bind(_BN, n)
    return "aten::batch_norm", [a["input"], a["weight"], a["bias"], a["running_mean"],
                                a["running_var"], a["training"], a["momentum"], a["eps"], True]


def _instance_norm(n):
    a = _bind(_IN, n)
    return "aten::instance_norm", [a["input"], a["weight"], a["bias"], a["running_mean"],
                                   a["running_var"], a["use_input_stats"], a["momentum"],
                                   a["eps"], True]


def _layer_norm(n):
    a = _bind(_LN, n)
    return "aten::layer_norm", [a["input"], _ntuple(a["normalized_shape"], 1), a["weight"],
                                a["bias"], a["eps"], True]


def _group_norm(n):
    a = _bind(_GN, n)
    return "aten::group_norm", [a["input"], a["num_groups"], a["weight"], a["bias"], a["eps"],
                                True]


_UPSAMPLE = {("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
             ("nearest", 3): "upsample_nearest3d", ("linear", 1): "upsample_linear1d",
             ("bilinear", 2): "upsample_bilinear2d", ("bicubic", 2): "upsample_bicubic2d",
             ("trilinear", 3): "upsample_trilinear3d"}


def _interpolate(n, rank):
    a = _bind(_INTERP, n)
    name = _UPSAMPLE.get((a["mode"], rank - 2))
    if name is None:
        return _display_name(n), list(n.args) + list(n.kwargs.values())
    args = [a["input"], None if a["size"] is None else _ntuple(a["size"], rank - 2)]
    if a["mode"] != "nearest":
        args.append(bool(a["align_corners"]))
    sf = a["scale_factor"]
    args.append(None if sf is None else _ntuple(sf, rank - 2))
    return f"aten::{name}", args


def _grid_sample(n):
    a = _bind(_GRID, n)
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    pads = {"zeros": 0, "border": 1, "reflection": 2}
    return "aten::grid_sampler", [a["input"], a["grid"], modes.get(a["mode"], a["mode"]),
                                  pads.get(a["padding_mode"], a["padding_mode"]),
                                  bool(a["align_corners"])]


def _einsum(n):
    eq, ops = n.args[0], list(n.args[1:])
    if len(ops) == 1 and type(ops[0]) is dict and "v" not in ops[0]:
        ops = ops[0].get("list", ops[0].get("tuple", ops))
    return "aten::einsum", [eq, {"list": ops}, None]


_RENAMED = {"__matmul__": "matmul", "__rmatmul__": "matmul", "__add__": "add", "__radd__": "add",
            "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_",
            "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
            "__rtruediv__": "div", "__itruediv__": "div_", "__pow__": "pow", "__neg__": "neg",
            "__getitem__": "index", "__setitem__": "index_put_"}


def _aten_form(n, graph):
    """``(kind, encoded args)`` of ptcore node ``n`` (of ``graph``) as TorchScript's tracer
    records it."""
    ns, name = n.op
    if (ns, name) == ("prim", "floordiv"):      # (a size // k: TorchScript traces a division)
        return "aten::div", list(n.args) + ["floor"]
    if ns in ("ptcore", "nn.functional", "Tensor"):
        if name in ("conv1d", "conv2d", "conv3d"):
            return _conv(n, int(name[4]), False)
        if name in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
            return _conv(n, int(name[14]), True)
        if name == "batch_norm":
            return _batch_norm(n)
        if name == "instance_norm":
            return _instance_norm(n)
        if name == "layer_norm":
            return _layer_norm(n)
        if name == "group_norm":
            return _group_norm(n)
        if name == "einsum":
            return _einsum(n)
        if name.startswith("adaptive_") and name[-2:] in ("1d", "2d", "3d"):
            return f"aten::{name}", [n.args[0], _ntuple(n.args[1] if len(n.args) > 1 else
                                                        n.kwargs["output_size"], int(name[-2]))]
        if name == "grid_sample":
            return _grid_sample(n)
        if name == "interpolate":
            out = graph.values[n.output_ids()[0]]
            return _interpolate(n, len(out.shape or ()))
        name = _RENAMED.get(name, name)
        laid_out = _schema_layout(name, n.args, n.kwargs)
        if laid_out is not None:
            return f"aten::{name}", laid_out
        return f"aten::{name}", list(n.args) + list(n.kwargs.values())
    return _display_name(n), list(n.args) + list(n.kwargs.values())


_LAYOUTS = {}     # aten op name -> its overloads' schemas (parsed once)


def _schema_layout(name, args, kwargs):
    """``args`` and ``kwargs`` laid out as the first overload of aten op ``name`` that takes
    them, with the defaults of the arguments not given (TorchScript's tracer records every
    argument of the schema: addmm's beta and alpha ...), or None."""
    schemas = _LAYOUTS.get(name)
    if schemas is None:
        schemas = _LAYOUTS[name] = [parse(line) for line in overload_lines().get(name, ())]
    for sch in schemas:
        params = [a for a in sch.arguments if not a.is_out]
        positional = [a for a in params if not a.kwarg_only]
        if len(args) > len(positional) or not set(kwargs) <= {a.name for a in params}:
            continue
        out = []
        for i, a in enumerate(params):
            if i < len(args) and not a.kwarg_only:
                out.append(args[i])
            elif a.name in kwargs:
                out.append(kwargs[a.name])
            elif a.has_default_value():
                out.append(a.default_value)
            else:
                break
        else:
            return out
    return None
