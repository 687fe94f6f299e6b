"""ptcore.fx: capture and transform programs as graphs (``torch.fx``).

:func:`symbolic_trace` runs a module's ``forward`` on :class:`Proxy` values
and records a :class:`Graph` of :class:`Node` objects; a
:class:`GraphModule` turns a graph back into a module by generating Python
code for its ``forward``.  :class:`Interpreter` and :class:`Transformer` run
or rewrite graphs node by node; :func:`replace_pattern` rewrites matching
subgraphs.
"""
from ptcore.fx.node import Node, has_side_effect, map_arg
from ptcore.fx.graph import CodeGen, Graph
from ptcore.fx.graph_module import GraphModule
from ptcore.fx.proxy import Attribute, ParameterProxy, Proxy, TraceError, TracerBase
from ptcore.fx._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from ptcore.fx.interpreter import Interpreter, Transformer
from ptcore.fx.subgraph_rewriter import replace_pattern
from ptcore.fx import immutable_collections, node, graph, graph_module, proxy, interpreter, subgraph_rewriter, passes

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Node", "Proxy",
           "Attribute", "ParameterProxy", "TraceError", "TracerBase", "Interpreter",
           "Transformer", "replace_pattern", "map_arg", "has_side_effect", "PH",
           "ProxyableClassMeta", "CodeGen"]
