"""``SummaryWriter.add_graph``: a model's graph for TensorBoard's graph
dashboard, from a ``ptcore.jit.trace`` of the model.

The ``GraphDef`` is laid out as torch's (``torch/utils/tensorboard/
_pytorch_graph.py``): one node per value, named ``<scope>/<value>`` where the
scope is the model's class and the path of submodules the op ran in
(``Sequential/Linear[0]``), op nodes of TorchScript's kinds (``aten::linear``,
``aten::relu``) with their output shapes, ``prim::GetAttr`` nodes for
parameters and buffers, and ``IO Node`` s for the inputs (``input/...``) and
outputs (``output/output.1``).  ptcore's trace records no module scopes, so
they are taken from forward hooks on the submodules while the trace runs: an
op belongs to the innermost submodule whose call recorded it.
"""
import contextlib
import inspect
import itertools

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef

from ptcore import jit
from ptcore._dispatch import tracing
from ptcore.jit._ir import _collect, _display_name

__all__ = ["graph", "onnx_graph"]


def _node(name, op, inputs=(), shape=None, attributes=""):
    attr = {"attr": AttrValue(s=attributes.encode("utf_8"))}
    if shape is not None:
        attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[TensorShapeProto(
            dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])]))
    return NodeDef(name=name.encode("utf_8"), op=op, input=list(inputs), attr=attr)


class _Scopes:
    """Forward hooks on every submodule: which submodule (its torch-style
    scope, ``Sequential/Linear[0]``) recorded each node of the trace."""

    def __init__(self, model):
        self.model = model
        self.base = type(model).__name__
        self.of_node = {}               # id(node) -> scope
        self._nodes = []                # keeps the nodes alive (ids stay unique)
        self._open = {}
        self._handles = []
        for path, m in model.named_modules():
            if m is not model:
                scope = self.scope(path)
                self._handles += [m.register_forward_pre_hook(self._pre(scope)),
                                  m.register_forward_hook(self._post(scope))]

    def scope(self, path):
        """``Sequential/Linear[0]`` for the submodule path ``"0"`` ("" is the model)."""
        parts, mod = [self.base], self.model
        for part in path.split(".") if path else ():
            mod = getattr(mod, part)
            parts.append(f"{type(mod).__name__}[{part}]")
        return "/".join(parts)

    def _pre(self, scope):
        def hook(m, args):
            tracer = tracing.active_tracer()
            if tracer is not None:
                self._open.setdefault(scope, []).append(len(tracer.graph.nodes))
        return hook

    def _post(self, scope):
        def hook(m, args, out):
            tracer = tracing.active_tracer()
            if tracer is not None and self._open.get(scope):
                start = self._open[scope].pop()
                for node in tracer.graph.nodes[start:]:
                    if id(node) not in self.of_node:          # the innermost call wins
                        self.of_node[id(node)] = scope
                        self._nodes.append(node)
        return hook

    def remove(self):
        for h in self._handles:
            h.remove()


@contextlib.contextmanager
def _eval_mode(model):
    training = getattr(model, "training", None)
    if training is not None:
        model.train(False)
    try:
        yield
    finally:
        if training is not None:
            model.train(training)


def _input_names(model, n):
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"input/{params[i]}" if i < len(params) else f"input/input.{i + 1}"
            for i in range(n)]


def graph(model, args, verbose=False, use_strict_trace=True):
    """``(GraphDef, RunMetadata)`` of ``model`` traced with ``args``."""
    inputs = args if isinstance(args, tuple) else (args,)
    scopes = _Scopes(model)
    try:
        with _eval_mode(model):
            traced = jit.trace(model, inputs, strict=use_strict_trace)
    except Exception as e:
        print(e)
        print("Error occurs, No graph saved")
        raise
    finally:
        scopes.remove()
    g = traced.graph
    if verbose:
        print(g)
    names, nodes = {}, []
    for vid, name in zip(g.inputs, _input_names(model, len(g.inputs))):
        names[vid] = name
        nodes.append(_node(name, "IO Node", shape=g.values[vid].shape))
    used = set()
    for n in g.nodes:
        used.update(n.input_ids())
    for v in g.params():
        if v.id not in used:
            continue
        path, _, attr = v.name.rpartition(".")
        names[v.id] = f"{scopes.scope(path)}/{attr}/{attr}"
        nodes.append(_node(names[v.id], "prim::GetAttr", attributes=f"{{ name :  {attr} }}"))
    for v in g.values.values():
        if v.kind == "const" and v.id in used:
            names[v.id] = f"{scopes.base}/{v.id}"
            nodes.append(_node(names[v.id], "prim::Constant", shape=v.shape,
                               attributes="{ value : <Tensor> }"))
    for n in g.nodes:
        scope = scopes.of_node.get(id(n), scopes.base)
        kind = _display_name(n)
        ins = [names[i] for i in n.input_ids() if i in names]
        for vid in n.output_ids():
            names[vid] = f"{scope}/{vid}"
            nodes.append(_node(names[vid], kind, ins, g.values[vid].shape, "{}"))
    outs = []
    _collect(g.outputs, outs)
    for k, vid in enumerate(outs):
        nodes.append(_node(f"output/output.{k + 1}", "IO Node", [names[vid]] if vid in names
                           else [], g.values[vid].shape))
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(
        device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats


def onnx_graph(fname):
    """The ``GraphDef`` of the ONNX model in ``fname``: a ``Variable`` node per
    graph input and output, one node per ONNX node (named by its first output)."""
    import onnx                 # lazy: an optional dependency, needed only here
    g = onnx.load(fname).graph
    nodes = []
    for v in itertools.chain(g.input, g.output):
        tt = v.type.tensor_type
        shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value) for d in tt.shape.dim])
        nodes.append(NodeDef(name=v.name.encode("utf_8"), op="Variable", input=[],
                             attr={"dtype": AttrValue(type=tt.elem_type),
                                   "shape": AttrValue(shape=shape)}))
    for n in g.node:
        params = ", ".join(" = ".join(str(f[1]) for f in a.ListFields()) for a in n.attribute)
        nodes.append(NodeDef(name=n.output[0].encode("utf_8"), op=n.op_type, input=n.input,
                             attr={"parameters": AttrValue(s=params.encode("utf_8"))}))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
