"""Inference-time graph passes of ``torch.fx.experimental.optimization``:
:func:`fuse` folds each eval-mode BatchNorm into the convolution or linear
layer before it, :func:`remove_dropout` drops the dropout modules,
:func:`extract_subgraph` makes a module of a list of nodes.  (torch's MKLDNN
passes of the same module have no ptcore counterpart.)"""
import copy

from ptcore import nn
from ptcore.fx._symbolic_trace import symbolic_trace
from ptcore.fx.graph import Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.interpreter import Transformer
from ptcore.fx.node import Node
from ptcore.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["matches_module_pattern", "replace_node_module", "fuse", "remove_dropout",
           "extract_subgraph"]


def _parent_name(target):
    """``'foo.bar.baz'`` -> ``('foo.bar', 'baz')``."""
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern, node, modules):
    """Whether ``node`` and its first argument are calls of modules of exactly
    the two types of ``pattern`` (``(nn.Conv2d, nn.BatchNorm2d)``)."""
    if len(node.args) == 0:
        return False
    nodes = (node.args[0], node)
    for expected_type, current in zip(pattern, nodes):
        if not isinstance(current, Node) or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected_type:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """Install ``new_module`` as the module ``node`` calls (in ``modules`` and
    on its parent module)."""
    if not isinstance(node.target, str):
        raise AssertionError(f"Expected str target, got {type(node.target)}")
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """A GraphModule of ``model`` in which every Conv1d/2d/3d + BatchNorm and
    Linear + BatchNorm1d pair (the BatchNorm tracking running statistics, the
    layer's output used by the BatchNorm only) is one layer computing the
    same eval-mode function.  ``model`` is deep-copied unless ``inplace``;
    with ``no_trace`` a GraphModule is used as it is."""
    patterns = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d),
                (nn.Conv3d, nn.BatchNorm3d), (nn.Linear, nn.BatchNorm1d)]
    if not inplace:
        model = copy.deepcopy(model)
    if not no_trace or not isinstance(model, GraphModule):
        fx_model = symbolic_trace(model)
    else:
        fx_model = model
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in new_graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:
                continue                  # the layer's output is read elsewhere too
            first = modules[node.args[0].target]
            bn = modules[node.target]
            if not bn.track_running_stats:
                continue
            if pattern[0] is nn.Linear:
                fused = fuse_linear_bn_eval(first, bn)
            else:
                fused = fuse_conv_bn_eval(first, bn)
            replace_node_module(node.args[0], modules, fused)
            node.replace_all_uses_with(node.args[0])
            new_graph.erase_node(node)
    return GraphModule(fx_model, new_graph)


def remove_dropout(model):
    """A GraphModule of ``model`` without its ``nn.Dropout`` modules."""
    fx_model = symbolic_trace(model)

    class DropoutRemover(Transformer):
        def call_module(self, target, args, kwargs):
            if isinstance(self.submodules[target], nn.Dropout):
                if len(args) != 1:
                    raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
                return args[0]
            return super().call_module(target, args, kwargs)

    return DropoutRemover(fx_model).transform()


def extract_subgraph(orig_module, nodes, inputs, outputs):
    """A GraphModule running ``nodes`` (of a graph of ``orig_module``) from
    placeholders for ``inputs`` and returning ``outputs`` (a list)."""
    new_graph = Graph()
    env = {}
    for inp in inputs:
        env[inp] = new_graph.placeholder(inp.name)
    for node in nodes:
        env[node] = new_graph.node_copy(node, lambda x: env[x])
    new_graph.output([env[o] for o in outputs])
    new_graph.lint()
    return GraphModule(orig_module, new_graph)
