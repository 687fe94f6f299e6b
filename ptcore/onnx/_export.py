"""``ptcore.onnx.export``: trace a model with ``ptcore.jit`` and write its
graph as an ONNX model (opset 17 by default).  Each op of the trace maps to
ONNX operators; an op with no mapping raises :class:`UnsupportedOperatorError`
naming it."""
import contextlib
import inspect
import math
import os
import sys
import warnings

import numpy as np

import ptcore
from ptcore._tensor import _TensorBase
from ptcore._dispatch.declarations import same_call_as
from ptcore.jit._sizes import static_sizes as _static_sizes
from ptcore.jit._trace import none_outputs
from ptcore.jit._ir import _collect
from ptcore import jit
import ptcore.nn.functional as F
import ptcore.onnx._proto as P
# the converter modules (each registers its converters at its import)
import ptcore.onnx._more_ops as _more_ops
import ptcore.onnx._recurrent as _recurrent
import ptcore.onnx._indexing_ops  # noqa: F401
import ptcore.onnx._norm_ops  # noqa: F401
import ptcore.onnx._layer_ops  # noqa: F401
import ptcore.onnx._arith_ops  # noqa: F401
import ptcore.onnx._linalg_ops  # noqa: F401
import ptcore.onnx._loss_ops  # noqa: F401
from ptcore.onnx._more_ops import _bind, _pair
from ptcore.onnx._shapes import Sym, dec, symbols, vector, has_sym, NP_DTYPES
import ptcore.onnx._custom as _custom
import ptcore.onnx._opsets as _opsets
from ptcore.onnx._program import ONNXProgram
from ptcore.onnx._registration import CONVERTERS, ELEMENTWISE, elementwise
from ptcore.onnx.errors import OnnxExporterError, OnnxExporterWarning, UnsupportedOperatorError
from ptcore.onnx._types import TrainingMode, OperatorExportTypes

__all__ = ["export", "select_model_mode_for_export"]


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Put ``model`` in the mode ``mode`` (a :class:`TrainingMode`) asks for
    while the block runs, and back after (``EVAL``: eval, ``TRAINING``:
    train, ``PRESERVE``: as it is)."""
    if not isinstance(mode, TrainingMode):
        raise TypeError("'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    was = model.training
    if mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        model.train(was)


def _np_dtype_name(t):
    return t.dtype._name


def _raw(t):
    t = t.detach().contiguous().cpu()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(ptcore.uint8).numpy().tobytes()


class _Builder:
    def __init__(self, graph, opset):
        self.g = graph
        self.opset = opset
        self.nodes = []
        self.syms = {}              # value id -> Sym: the sizes the graph computes
        self.domains = set()        # custom operator domains the nodes use
        self.inits = []
        self.const_values = {}      # initializer name -> its NumPy value (constants)
        # the constants' initializers by name: written only if a node reads them (an
        # opset lowering may turn one into an attribute)
        self.const_inits = {}
        self.read = set()           # the names some node reads
        self.names = {}
        self.count = 0
        self.used = set()           # value ids read by some node
        self.dynamic = False        # the export has dynamic axes

    def fresh(self, base="t"):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, array, dtype):
        """An initializer holding ``array`` (NumPy) as ONNX ``dtype``."""
        name = self.fresh("const")
        if dtype not in NP_DTYPES:
            raise UnsupportedOperatorError(f"a constant of dtype {dtype}")
        arr = np.ascontiguousarray(np.asarray(array, dtype=NP_DTYPES[dtype]))
        self.const_inits[name] = P.tensor(name, dtype, arr.shape, arr.tobytes())
        self.const_values[name] = arr
        return name

    def initializers(self):
        """The weights' initializers and the constants some node reads."""
        return self.inits + [t for n, t in self.const_inits.items() if n in self.read]

    def add(self, op, inputs, outputs=None, **attrs):
        """Add node ``op`` (written in the newest opsets' form; rewritten for
        an earlier export opset by :func:`_opsets.lower`)."""
        if self.opset < 18:
            out = _opsets.lower(self, op, inputs, outputs, attrs)
            if out is not None:
                return out
        return self.add_raw(op, inputs, outputs, attrs)

    def add_raw(self, op, inputs, outputs, attrs):
        outputs = outputs or [self.fresh(op.lower())]
        self.read.update(inputs)
        self.nodes.append(P.node(op, inputs, outputs, self.fresh("n_" + op), attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def name(self, enc):
        if type(enc) is dict and "v" in enc:
            sym = self.syms.get(enc["v"])
            if sym is not None:
                return sym.name                 # a size: its nodes made now
            self.used.add(enc["v"])
            return self.names[enc["v"]]
        raise OnnxExporterError(f"expected a tensor argument, got {enc!r}")

    def dtype_of(self, enc):
        if not (type(enc) is dict and "v" in enc):
            raise OnnxExporterError(f"expected a tensor argument, got {enc!r} (an operand "
                                    "this op's export takes as a tensor only)")
        return self.g.values[enc["v"]].dtype

    def value_of(self, enc):
        """The NumPy value of a tensor operand known when exporting (a constant
        of the trace, a weight or buffer, a constant a conversion made), or
        None when the graph computes it or it is an input."""
        v = self.g.values[enc["v"]]
        if v.kind == "const":
            return v.const.detach().cpu().numpy()
        if v.kind == "param" and v.name in getattr(self, "params", {}):
            return self.params[v.name].detach().cpu().numpy()
        name = self.names.get(enc["v"])
        return None if name is None else self.const_values.get(name)

    def as_dtype(self, enc, dtype):
        """An operand as ONNX ``dtype``: a tensor value (cast if it is not), a
        size the graph computes, or a Python number."""
        if type(enc) is dict and "v" in enc:
            have = self.dtype_of(enc)
            name = self.name(enc)
            return name if have == dtype else self.add("Cast", [name], to=P.DTYPES[dtype])
        return self.const(np.array(dec(enc)), dtype)

    def operand(self, enc, like):
        """A tensor operand: a value, or a Python number as a constant of
        ``like``'s dtype (a size the graph computes cast to it)."""
        if type(enc) is dict and "v" in enc:
            if self.dtype_of(enc) is None:          # a size
                return self.add("Cast", [self.name(enc)], to=P.DTYPES[self.dtype_of(like)])
            return self.name(enc)
        return self.const(np.array(dec(enc)), self.dtype_of(like))


def _conv(b, node, F, nd):
    a = _bind(getattr(F, f"conv{nd}d"), node.args, node.kwargs)
    pad = dec(a["padding"])
    if isinstance(pad, str):
        if pad != "valid":
            raise UnsupportedOperatorError(f"conv{nd}d with padding={pad!r}")
        pad = 0
    pads = _pair(pad, nd)
    ins = [b.name(a["input"]), b.name(a["weight"])]
    if a["bias"] is not None:
        ins.append(b.name(a["bias"]))
    return b.add("Conv", ins, strides=_pair(dec(a["stride"]), nd), pads=pads + pads,
                 dilations=_pair(dec(a["dilation"]), nd), group=int(a["groups"]))


def _pool(b, node, F, kind, nd):
    a = _bind(getattr(F, f"{kind}_pool{nd}d"), node.args, node.kwargs)
    k = _pair(dec(a["kernel_size"]), nd)
    stride = dec(a["stride"])
    s = k if stride in (None, [], ()) else _pair(stride, nd)
    p = _pair(dec(a["padding"]), nd)
    attrs = dict(kernel_shape=k, strides=s, pads=p + p, ceil_mode=int(bool(a["ceil_mode"])))
    if kind == "max":
        if a.get("return_indices"):
            raise UnsupportedOperatorError("max_pool with return_indices=True")
        attrs["dilations"] = _pair(dec(a["dilation"]), nd)
        return b.add("MaxPool", [b.name(a["input"])], **attrs)
    if a.get("divisor_override") is not None:
        raise UnsupportedOperatorError("avg_pool with divisor_override")
    attrs["count_include_pad"] = int(bool(a["count_include_pad"]))
    return b.add("AveragePool", [b.name(a["input"])], **attrs)


def _shape_arg(node):
    """The sizes of ``x.f(*sizes)`` / ``x.f(sizes)``: ints and :class:`Sym` s."""
    args = [dec(a) for a in node.args[1:]]
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = list(args[0])
    return [i if isinstance(i, Sym) else int(i) for i in args]


# the ops that are one ONNX operator on their tensor operands
elementwise("Relu", "relu", arity=1)
elementwise("Tanh", "tanh", arity=1)
elementwise("Sigmoid", "sigmoid", arity=1)
elementwise("Exp", "exp", arity=1)
elementwise("Log", "log", arity=1)
elementwise("Sqrt", "sqrt", arity=1)
elementwise("Neg", "neg", arity=1)
elementwise("Abs", "abs", arity=1)
elementwise("Erf", "erf", arity=1)
elementwise("Sin", "sin", arity=1)
elementwise("Cos", "cos", arity=1)
elementwise("Reciprocal", "reciprocal", arity=1)
elementwise("Floor", "floor", arity=1)
elementwise("Ceil", "ceil", arity=1)
elementwise("Identity", "contiguous", "clone", "detach", arity=1)
elementwise("Add", "add", arity=2)
elementwise("Sub", "sub", arity=2)
elementwise("Mul", "mul", arity=2)
elementwise("Div", "div", arity=2)
elementwise("MatMul", "matmul", "bmm", arity=2)
elementwise("Pow", "pow", arity=2)
elementwise("Max", "maximum", arity=2)
elementwise("Min", "minimum", arity=2)


def _converted_as(name):
    """The op among the ``ELEMENTWISE`` ones whose conversion a node of
    ``name`` takes: the op that a call of ``name`` is with the same arguments
    (:func:`~ptcore._dispatch.declarations.same_call_as`), else ``name``."""
    op = same_call_as(name)
    return op if op in ELEMENTWISE else name


def _convert(b, node, batch_dims):
    ns, name = node.op
    args, kw = node.args, node.kwargs
    custom = _custom.lookup(node.op, b.opset)
    if custom is not None:                   # register_custom_op_symbolic
        return _custom.convert(b, node, custom, b.domains)
    if ns == "prim" and (ns, name) in CONVERTERS:        # arithmetic on sizes
        return CONVERTERS[(ns, name)](b, node)
    name = _converted_as(name)
    if name == "__rpow__" and len(args) == 2:
        return b.add("Pow", [b.operand(args[1], args[0]), b.name(args[0])])
    onnx_op, arity = ELEMENTWISE.get(name, (None, 0))
    if arity == 1 and len(args) == 1:
        return b.add(onnx_op, [b.name(args[0])])
    if arity == 2 and len(args) == 2 and not kw:
        x, y = args
        out_dt = b.g.values[node.output_ids()[0]].dtype
        if name != "pow" and out_dt in P.DTYPES and out_dt != "bool":
            # operands in the result's dtype (torch's type promotion, int / int -> float)
            return b.add(onnx_op, [b.as_dtype(x, out_dt), b.as_dtype(y, out_dt)])
        if type(x) is dict and "v" in x:
            return b.add(onnx_op, [b.name(x), b.operand(y, x)])
        return b.add(onnx_op, [b.operand(x, y), b.name(y)])     # number op tensor
    if ns == "Tensor" and name in ("__rsub__", "__rtruediv__", "__rdiv__") and len(args) == 2:
        op = "Sub" if name == "__rsub__" else "Div"
        return b.add(op, [b.const(np.array(dec(args[1])), b.dtype_of(args[0])),
                          b.name(args[0])])
    if ns == "nn.functional":
        if name == "linear":
            a = _bind(F.linear, args, kw)
            x, w, bias = a["input"], a["weight"], a["bias"]
            if len(b.g.values[x["v"]].shape) == 2:
                ins = [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else [])
                return b.add("Gemm", ins, transB=1)
            wt = b.add("Transpose", [b.name(w)], perm=[1, 0])
            y = b.add("MatMul", [b.name(x), wt])
            return b.add("Add", [y, b.name(bias)]) if bias is not None else y
        for nd in (1, 2, 3):
            if name == f"conv{nd}d":
                return _conv(b, node, F, nd)
            if name == f"max_pool{nd}d":
                return _pool(b, node, F, "max", nd)
            if name == f"avg_pool{nd}d":
                return _pool(b, node, F, "avg", nd)
        if name in ("relu", "tanh", "sigmoid"):
            return b.add(onnx_op, [b.name(args[0])])
        if name == "leaky_relu":
            a = _bind(F.leaky_relu, args, kw)
            return b.add("LeakyRelu", [b.name(a["input"])], alpha=float(a["negative_slope"]))
        if name == "gelu":
            a = _bind(F.gelu, args, kw)
            x = b.name(a["input"])
            dt = b.dtype_of(a["input"])
            if a["approximate"] == "tanh":
                inner = b.add("Mul", [x, b.const(np.array(math.sqrt(2 / math.pi)), dt)])
                cube = b.add("Mul", [b.add("Mul", [x, x]), x])
                inner = b.add("Add", [inner, b.add("Mul", [cube, b.const(
                    np.array(0.044715 * math.sqrt(2 / math.pi)), dt)])])
                t = b.add("Tanh", [inner])
            else:
                t = b.add("Erf", [b.add("Div", [x, b.const(np.array(math.sqrt(2.0)), dt)])])
            one = b.add("Add", [t, b.const(np.array(1.0), dt)])
            return b.add("Mul", [b.add("Mul", [x, one]), b.const(np.array(0.5), dt)])
        if name in ("softmax", "log_softmax"):
            a = _bind(getattr(F, name), args, kw)
            if a.get("dtype") is not None:
                raise UnsupportedOperatorError(f"{name} with dtype=")
            return _opsets.softmax(b, "Softmax" if name == "softmax" else "LogSoftmax",
                                   b.name(a["input"]), a["dim"],
                                   len(b.g.values[a["input"]["v"]].shape))
        if name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"):
            a = _bind(getattr(F, name), args, kw)
            if a["training"]:
                raise UnsupportedOperatorError(f"{name} in training mode (export in eval mode)")
            return b.add("Identity", [b.name(a["input"])])
        if name == "batch_norm":
            a = _bind(F.batch_norm, args, kw)
            if a["training"]:
                raise UnsupportedOperatorError("batch_norm in training mode (call model.eval())")
            x = a["input"]
            c = b.g.values[a["running_mean"]["v"]].shape[0]
            dt = b.dtype_of(x)
            scale = b.name(a["weight"]) if a["weight"] is not None else b.const(np.ones(c), dt)
            bias = b.name(a["bias"]) if a["bias"] is not None else b.const(np.zeros(c), dt)
            return b.add("BatchNormalization", [b.name(x), scale, bias,
                                                b.name(a["running_mean"]),
                                                b.name(a["running_var"])],
                         epsilon=float(a["eps"]), momentum=float(1 - a["momentum"]))
        if name == "layer_norm":
            a = _bind(F.layer_norm, args, kw)
            shape = dec(a["normalized_shape"])
            shape = [shape] if isinstance(shape, int) else list(shape)
            dt = b.dtype_of(a["input"])
            scale = b.name(a["weight"]) if a["weight"] is not None else \
                b.const(np.ones(shape), dt)
            bias = b.name(a["bias"]) if a["bias"] is not None else b.const(np.zeros(shape), dt)
            return _opsets.layer_norm(b, b.name(a["input"]), scale, bias, -len(shape),
                                      float(a["eps"]), dt,
                                      len(b.g.values[a["input"]["v"]].shape))
        if name == "embedding":
            a = _bind(F.embedding, args, kw)
            return b.add("Gather", [b.name(a["weight"]), b.name(a["input"])], axis=0)
    if ns in ("Tensor", "ptcore") and name in ("flatten",):
        start = int(dec(args[1])) if len(args) > 1 else int(kw.get("start_dim", 0))
        end = int(dec(args[2])) if len(args) > 2 else int(kw.get("end_dim", -1))
        rank = len(b.g.values[args[0]["v"]].shape)
        start, end = start % max(rank, 1), end % max(rank, 1)
        x = b.name(args[0])
        if start >= end:
            return b.add("Identity", [x])
        if start == 1 and end == rank - 1:
            return b.add("Flatten", [x], axis=1)          # ONNX Flatten: always 2-D
        if end == rank - 1:                              # keep the leading dims (0)
            return b.add("Reshape", [x, b.const(np.array([0] * start + [-1]), "int64")])
        shape = b.add("Concat", [b.add("Shape", [x], start=0, end=start),
                                 b.const(np.array([-1]), "int64"),
                                 b.add("Shape", [x], start=end + 1)], axis=0)
        return b.add("Reshape", [x, shape])
    if ns in ("Tensor", "ptcore") and name in ("view", "reshape"):
        shape = _shape_arg(node) if ns == "Tensor" else \
            [i if isinstance(i, Sym) else int(i) for i in dec(args[1])]
        x = args[0]
        if has_sym(shape):
            return b.add("Reshape", [b.name(x), vector(b, shape)])
        in_shape = b.g.values[x["v"]].shape
        # a dimension equal to a dynamic axis of the input is copied from it (0)
        shape = [0 if (i in batch_dims.get(x["v"], ()) and i < len(in_shape) and
                       s == in_shape[i]) else s for i, s in enumerate(shape)]
        return b.add("Reshape", [b.name(x), b.const(np.array(shape), "int64")])
    if ns in ("Tensor", "ptcore") and name in ("t", "transpose", "permute", "swapaxes"):
        x = args[0]
        rank = len(b.g.values[x["v"]].shape)
        if name == "t":
            perm = list(range(rank))[::-1]
        elif name == "permute":
            perm = _shape_arg(node) if ns == "Tensor" else list(dec(args[1]))
            perm = [p % rank for p in perm]
        else:
            d0, d1 = (int(dec(a)) % rank for a in args[1:3])
            perm = list(range(rank))
            perm[d0], perm[d1] = perm[d1], perm[d0]
        return b.add("Transpose", [b.name(x)], perm=perm)
    if ns == "ptcore" and name == "cat":
        items = args[0].get("list", args[0].get("tuple"))
        dim = int(dec(args[1])) if len(args) > 1 else int(kw.get("dim", 0))
        return b.add("Concat", [b.name(t) for t in items],
                     axis=_opsets.axis(b, dim, len(b.g.values[items[0]["v"]].shape)))
    if ns in ("Tensor", "ptcore") and name in ("mean", "sum") and \
            (len(args) >= 2 or "dim" in kw) and kw.get("dtype") is None:
        dim = dec(args[1] if len(args) > 1 else kw["dim"])
        rank = len(b.g.values[args[0]["v"]].shape)
        dims = [int(d) % max(rank, 1) for d in ([dim] if isinstance(dim, int) else list(dim))]
        keep = dec(args[2]) if len(args) > 2 else kw.get("keepdim", False)
        if name == "mean" and b.opset < 18:
            return b.add("ReduceMean", [b.name(args[0])], axes=dims, keepdims=int(bool(keep)))
        if name == "mean":
            return b.add("ReduceMean", [b.name(args[0]), b.const(np.array(dims), "int64")],
                         keepdims=int(bool(keep)))
        return b.add("ReduceSum", [b.name(args[0]), b.const(np.array(dims), "int64")],
                     keepdims=int(bool(keep)))
    conv = CONVERTERS.get((ns, name))
    if conv is not None:
        return conv(b, node)
    raise UnsupportedOperatorError(
        f"Exporting the operator '{ns}::{name}' to ONNX opset version {b.opset} is not "
        "supported by ptcore.onnx")


def export(model, args=(), f=None, export_params=True, verbose=False, training=None,
           input_names=None, output_names=None, operator_export_type=None,
           opset_version=None, do_constant_folding=True, dynamic_axes=None,
           keep_initializers_as_inputs=None, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True, dynamo=True, *,
           kwargs=None, dynamic_shapes=None, external_data=True, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           custom_translation_table=None, fallback=False, **_options):
    """Export ``model`` (an ``nn.Module`` or function), traced on ``args``
    (and the keyword inputs ``kwargs``), to the ONNX file ``f`` (a path or a
    binary file object, or None); returns the :class:`ONNXProgram` as torch's
    default exporter does (``dynamo=True``), None with ``dynamo=False``.
    ``dynamic_shapes`` (``{input name: {dim: name}}`` or one such dict per
    positional input) names dynamic axes as ``dynamic_axes`` does; inputs are
    named after the model's parameters unless ``input_names`` says otherwise."""
    # an ExportedProgram exists only once ptcore.export is imported (onnx does not load it)
    ep = sys.modules.get("ptcore.export.exported_program")
    if ep is not None and isinstance(model, ep.ExportedProgram):
        # torch exports the program's module, on its example inputs unless given others
        if not args and kwargs is None and model.example_inputs is not None:
            args, kwargs = model.example_inputs
        model = model.module()
    opset = 17 if opset_version is None else int(opset_version)
    if opset < _opsets.MIN_OPSET or opset > 21:
        raise OnnxExporterError(f"ptcore.onnx exports opset versions {_opsets.MIN_OPSET}-21, "
                                f"not {opset}")
    if isinstance(args, _TensorBase):
        args = (args,)
    args = tuple(args)
    if kwargs:
        args = args + (dict(kwargs),)
    args = _with_kwargs(model, args)
    arg_names = _arg_names(model, len(args))
    if dynamic_shapes is not None and dynamic_axes is None:
        dynamic_axes = _from_dynamic_shapes(dynamic_shapes, arg_names, input_names)
    target, args = _flat_inputs(model, args)
    if operator_export_type is not None and \
            OperatorExportTypes(operator_export_type) == OperatorExportTypes.ONNX_ATEN:
        raise OnnxExporterError("ptcore.onnx writes standard ONNX ops; operator_export_type="
                                "ONNX_ATEN (every op as an ATen op) is not supported")
    mode = TrainingMode.EVAL if training is None else TrainingMode(training)
    # with dynamic axes the trace records the sizes it reads (Tensor::size and
    # the arithmetic on them), so that the graph computes them from its inputs
    _sizes_mode = contextlib.nullcontext if dynamic_axes else _static_sizes
    if isinstance(model, ptcore.nn.Module):
        with select_model_mode_for_export(target, mode):
            with ptcore.no_grad(), _sizes_mode(), none_outputs():
                traced = jit.trace(target, args, _transparent=_more_ops.DECOMPOSED,
                                   _leaves=_recurrent.LEAVES, strict=False)
        g = traced.graph
        params = dict(target.named_parameters(remove_duplicate=False))
        params.update(target.named_buffers(remove_duplicate=False))
    else:
        with ptcore.no_grad(), _sizes_mode(), none_outputs():
            traced = jit.trace(target, args, _transparent=_more_ops.DECOMPOSED, strict=False)
        g = traced.graph
        params = {}
    b = _Builder(g, opset)
    b.params = params           # (the recurrent converters fold the weights)
    input_names = list(input_names or [])
    if len(g.inputs) != len(arg_names):
        arg_names = [f"input_{i}" for i in range(len(g.inputs))]     # (nested inputs)
    in_names = [input_names[i] if i < len(input_names) else arg_names[i]
                for i in range(len(g.inputs))]
    dyn = dynamic_axes or {}
    batch_dims = {}
    inputs = []
    for vid, nm in zip(g.inputs, in_names):
        b.names[vid] = nm
        v = g.values[vid]
        axes = _axes(dyn.get(nm), nm)
        batch_dims[vid] = set(axes)
        shape = [axes.get(i, s) for i, s in enumerate(v.shape)]
        inputs.append(P.value_info(nm, v.dtype, shape))
    b.dynamic = any(batch_dims.values())
    for v in g.values.values():
        if v.kind == "param":     # (a weight's name in the model, not in its wrapper)
            b.names[v.id] = v.name[len(_FlatInputs.PREFIX):] if target is not model else v.name
        elif v.kind == "const":
            b.names[v.id] = f"const_{v.id}"
    for n in g.nodes:
        outs = n.output_ids()
        with symbols(b.syms):
            out_name = _convert(b, n, batch_dims)
        if isinstance(out_name, Sym):                   # a size the graph computes
            b.syms[outs[0]] = out_name
            continue
        if isinstance(out_name, list) and len(out_name) == len(outs):
            b.names.update(zip(outs, out_name))         # split / chunk / unbind
        elif len(outs) != 1 or isinstance(out_name, list):
            raise UnsupportedOperatorError(f"{n.op[0]}::{n.op[1]} returns {len(outs)} tensors")
        else:
            b.names[outs[0]] = out_name
        src = n.input_ids()
        if src and src[0] in batch_dims and n.op[1] not in ("t", "transpose", "permute"):
            batch_dims[outs[0]] = set(batch_dims[src[0]])
    out_ids = []
    _collect(g.outputs, out_ids)
    # the weights and constants some node reads, as initializers
    # export_params=False: the weights are inputs of the model (no data);
    # keep_initializers_as_inputs: they are initializers and inputs (as torch:
    # the weights, not the constants the conversion made)
    for v in g.values.values():
        if v.id in b.used or v.id in out_ids:
            t = params[v.name] if v.kind == "param" else v.const if v.kind == "const" else None
            if t is None:
                continue
            if v.kind == "param" and (not export_params or keep_initializers_as_inputs):
                inputs.append(P.value_info(b.names[v.id], _np_dtype_name(t), list(t.shape)))
            if export_params or v.kind != "param":
                b.inits.append(P.tensor(b.names[v.id], _np_dtype_name(t), list(t.shape),
                                        _raw(t)))
    output_names = list(output_names or [])
    outputs = []
    for i, vid in enumerate(out_ids):
        nm = output_names[i] if i < len(output_names) else f"output_{i}"
        b.add("Identity", [b.names[vid]], [nm])
        v = g.values[vid]
        axes = _axes(dyn.get(nm), nm)
        # with dynamic inputs, an output dim dynamic_axes does not name is
        # unknown (it may follow them) unless ONNX's shape inference finds it
        outputs.append((nm, v.dtype, [axes.get(j, None if b.dynamic else s)
                                      for j, s in enumerate(v.shape)]))
    if b.dynamic:
        _warn_baked_sizes(b, g)
    name = type(model).__name__ if isinstance(model, ptcore.nn.Module) else \
        getattr(model, "__name__", "graph")
    custom_opsets = dict(custom_opsets or {})

    def write(outputs):
        return P.model(P.graph(f"main_graph_{name}", b.nodes, b.initializers(), inputs,
                               [P.value_info(*o) for o in outputs]), opset,
                       producer_version=getattr(ptcore, "__version__", "0"),
                       domains={d: custom_opsets.get(d, 1) for d in b.domains})
    data = write(outputs)
    if any(None in dims for _, _, dims in outputs):
        inferred = _inferred_outputs(data, outputs)
        if inferred != outputs:
            data = write(inferred)
    if verbose:
        print(f"Exported graph: {g}")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    elif f is not None:
        f.write(data)
    if not dynamo and f is not None:
        return None
    return ONNXProgram(data)


def _arg_names(model, n):
    """The names of the first ``n`` parameters of the model's forward (the
    default input names); ``input_<i>`` where they cannot be read."""
    fn = model.forward if isinstance(model, ptcore.nn.Module) else model
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) != n or len(set(names)) != n:
        return [f"input_{i}" for i in range(n)]
    return names


def _from_dynamic_shapes(spec, arg_names, input_names):
    """``dynamic_shapes`` (torch.export's form) as ``dynamic_axes``: a dict by
    parameter name, or a sequence by position, of ``{dim: Dim or name}``
    (None: static)."""
    names = list(input_names or []) + arg_names[len(input_names or []):]
    if isinstance(spec, dict):
        items = [(names[arg_names.index(k)] if k in arg_names else k, v)
                 for k, v in spec.items()]
    elif isinstance(spec, (list, tuple)):
        items = list(zip(names, spec))
    else:
        raise OnnxExporterError("dynamic_shapes must be a dict or a tuple/list")
    out = {}
    for name, dims in items:
        if dims is None:
            continue
        if isinstance(dims, (list, tuple)):
            dims = dict(enumerate(dims))
        if not isinstance(dims, dict):
            raise OnnxExporterError(f"dynamic_shapes[{name!r}] must map dims to names")
        axes = {int(d): str(getattr(v, "__name__", None) or v) for d, v in dims.items()
                if v is not None}
        if axes:
            out[name] = axes
    return out


def _with_kwargs(model, args):
    """``args`` ending in a dict (the keyword arguments, as torch reads it;
    an empty dict when the last positional input is a dict) as positional
    inputs, in the order of the model's parameters (their defaults between)."""
    if not args or not isinstance(args[-1], dict):
        return args
    args, kwargs = args[:-1], args[-1]
    if not kwargs:
        return args
    import inspect
    fn = model.forward if isinstance(model, ptcore.nn.Module) else model
    params = list(inspect.signature(fn).parameters.values())[len(args):]
    unknown = [k for k in kwargs if k not in {p.name for p in params}]
    if unknown:
        raise OnnxExporterError(f"the keyword argument {unknown[0]!r} is not a parameter "
                                "of the model's forward (after its positional inputs)")
    last = max(i for i, p in enumerate(params) if p.name in kwargs)
    out = list(args)
    for p in params[:last + 1]:
        if p.name not in kwargs and p.default is inspect.Parameter.empty:
            raise OnnxExporterError(f"the model's input {p.name!r} is given no value")
        out.append(kwargs.get(p.name, p.default))
    return tuple(out)


class _FlatInputs(ptcore.nn.Module):
    """A model whose inputs nest in tuples or lists (``model(x, (h0, c0))``)
    taking their tensors flat, as torch's exported model does."""
    PREFIX = "model."

    def __init__(self, model, spec):
        super().__init__()
        self.model = model
        self._spec = spec

    def forward(self, *flat):
        return self.model(*_unflatten(self._spec, iter(flat)))


def _flatten(x, leaves):
    if isinstance(x, (tuple, list)):
        return (type(x), [_flatten(a, leaves) for a in x])
    if isinstance(x, _TensorBase):
        leaves.append(x)
        return None
    return ("value", x)


def _unflatten(spec, flat):
    if spec is None:
        return next(flat)
    kind, items = spec
    if kind == "value":
        return items
    return kind(_unflatten(a, flat) for a in items)


def _flat_inputs(model, args):
    """``(model, args)`` to trace: with nested inputs, a wrapper taking them
    flat (and the inputs that are no tensors, such as None, as constants)."""
    if all(isinstance(a, _TensorBase) for a in args):
        return model, args
    leaves = []
    spec = _flatten(tuple(args), leaves)
    if isinstance(model, ptcore.nn.Module):
        return _FlatInputs(model, spec), tuple(leaves)

    def flat_model(*flat):
        return model(*_unflatten(spec, iter(flat)))
    flat_model.__name__ = getattr(model, "__name__", "graph")
    return flat_model, tuple(leaves)


def _inferred_outputs(data, outputs):
    """``outputs`` (name, dtype, dims) with the dims left unknown that ONNX's
    shape inference finds (a number, or a name it gives the dim), as torch
    writes them; as they are without the ``onnx`` package."""
    try:
        import onnx
        from onnx import shape_inference
        got = shape_inference.infer_shapes(onnx.load_from_string(data), data_prop=True)
    except Exception:       # no onnx (ptcore writes the protobuf itself), or no inference
        return outputs
    shapes = {o.name: list(o.type.tensor_type.shape.dim) for o in got.graph.output}
    out = []
    for nm, dtype, dims in outputs:
        found = shapes.get(nm, [])
        if len(found) == len(dims):
            dims = [d if d is not None else
                    x.dim_value if x.HasField("dim_value") else x.dim_param or None
                    for d, x in zip(dims, found)]
        out.append((nm, dtype, dims))
    return out


def _warn_baked_sizes(b, g):
    """Warn where an op read a size of the example that its conversion keeps
    as a number (the size's own nodes were never made)."""
    baked = {vid for vid, sym in b.syms.items() if not sym.used}
    for n in g.nodes:
        if n.op[0] == "prim" or n.op in (("Tensor", "size"), ("Tensor", "numel")):
            continue
        hit = baked.intersection(n.input_ids())
        if hit:
            warnings.warn(
                f"ptcore.onnx.export: {n.op[0]}::{n.op[1]} reads a size of the example "
                f"({int(b.syms[min(hit)])}) that its conversion keeps as a constant: the "
                "exported model may not follow dynamic_axes there", OnnxExporterWarning,
                stacklevel=3)
            baked -= hit


def _axes(spec, name):
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(spec)}
    raise OnnxExporterError(f"dynamic_axes[{name!r}] must be a dict or a list of axes")
