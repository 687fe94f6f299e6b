"""``ptcore._dynamo.explain(fn)(*args, **kwargs)``: the graphs and graph breaks
of one call of ``fn`` (``torch._dynamo.explain``).

The call is captured (and run, eagerly) as a compiled call would be, without
touching any cache.  The result has torch's fields: ``graphs`` (the captured
graphs, one per segment), ``graph_count``, ``graph_break_count``,
``break_reasons`` (each with ``reason`` and ``user_stack``), ``op_count``,
``ops_per_graph``, ``out_guards`` and ``compile_times``; and ptcore's
``eager``: whether ptcore runs such a call eagerly (a break it cannot replay:
a ``print``, a call marked ``disable`` ... -- torch compiles the graphs between
such calls, ptcore runs the whole call eagerly) and ``eager_reason``.
"""
import time

from ptcore._dynamo import capture as _capture
from ptcore._dynamo import guards as _guards
from ptcore._dynamo.eval_frame import OptimizedModule
from ptcore._dynamo.compiled import CompiledFunction
from ptcore._inductor import backend as _backend
from ptcore.jit._ir import Graph
from ptcore.nn.modules.module import Module

__all__ = ["ExplainOutput", "explain"]


class ExplainOutput:
    """What :func:`explain` found (see the module docstring)."""

    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count,
                 ops_per_graph, out_guards, compile_times, eager=False, eager_reason=None):
        self.graphs = graphs
        self.graph_count = graph_count
        self.graph_break_count = graph_break_count
        self.break_reasons = break_reasons
        self.op_count = op_count
        self.ops_per_graph = ops_per_graph
        self.out_guards = out_guards
        self.compile_times = compile_times
        self.eager = eager
        self.eager_reason = eager_reason

    def __str__(self):
        out = [f"Graph Count: {self.graph_count}",
               f"Graph Break Count: {self.graph_break_count}",
               f"Op Count: {self.op_count}"]
        out.append("Break Reasons:")
        for i, b in enumerate(self.break_reasons, 1):
            out.append(f"  Break Reason {i}:")
            out.append(f"    Reason: {b.reason}")
            out.append("    User Stack:")
            for f in b.user_stack:
                out.append(f"      <FrameSummary file {f.filename}, line {f.lineno} in {f.name}>")
        out.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            out.append(f"  Ops {i}:")
            for op in ops:
                out.append(f"    {op}")
        out.append("Out Guards:")
        for i, g in enumerate(self.out_guards, 1):
            out.append(f"  Guard {i}:")
            out.append(f"    {g}")
        if self.eager:
            out.append(f"Runs eagerly: {self.eager_reason}")
        if self.compile_times:
            out.append(f"Compile Times: {self.compile_times}")
        return "\n".join(out) + "\n"

    __repr__ = __str__


def _target(f):
    """(function to capture, its modules) for what ``explain`` was given."""
    if isinstance(f, OptimizedModule):
        f = f._orig_mod
    if isinstance(f, CompiledFunction):
        return f._fn, f._modules_of_call()
    if isinstance(f, Module):
        return f._call_impl, [f]
    owner = getattr(f, "__self__", None)
    return f, [owner] if isinstance(owner, Module) else []


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` -> :class:`ExplainOutput` for that call."""
    def inner(*args, **kwargs):
        fn, modules = _target(f)
        t0 = time.perf_counter()
        guards, found = _guards.build(fn, args, kwargs, modules, _guards.global_state())
        cap, _ = _capture.capture(fn, args, kwargs, found)
        # every cut, in order: conversions, graph_break(), and what runs eagerly
        cuts = sorted(list(cap.breaks) + list(cap.problems), key=lambda b: b.index)
        nodes = cap.graph.nodes
        graphs, ops_per_graph = [], []
        start = 0
        for b in cuts + [None]:
            end = b.index if b is not None else len(nodes)
            part = nodes[start:end]
            start = end
            if not part:
                continue
            g = Graph()
            g.values = cap.graph.values
            g.nodes = part
            graphs.append(g)
            ops_per_graph.append([n.fn() for n in part])
        eager = bool(cap.problems)
        if not eager:
            _backend.compile_capture(cap, name="explain")
        compile_time = time.perf_counter() - t0
        return ExplainOutput(graphs, len(graphs), len(cuts), cuts,
                             sum(len(o) for o in ops_per_graph), ops_per_graph, guards.text,
                             f"TorchDynamo compilation metrics:\n  capture and compile: "
                             f"{compile_time:.4f} s",
                             eager, cap.problems[0].reason if eager else None)
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
