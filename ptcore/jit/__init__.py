"""``ptcore.jit`` (``torch.jit``): trace functions and modules into a graph
IR, run, optimise, save and load them.

* :func:`trace` / :func:`trace_module` record a program's op calls through
  the tracing layer of the dispatch point into a graph
  (:class:`ScriptFunction`, :class:`ScriptModule`: ``.graph``, ``.code``).
* :func:`save` / :func:`load`: one zip file with the graphs (op names and
  encoded arguments, no code, no pickle) and the tensors.
* :func:`freeze` / :func:`optimize_for_inference`: inline the weights, fold
  constants and batch norms, remove dead and repeated nodes.

* :func:`script` compiles the Python of a function or module, with its
  control flow, into the same graphs.
"""
from ptcore._dispatch.tracing import TracerWarning
from ptcore.jit._ir import JitError, Error, Graph
from ptcore.jit._trace import trace, trace_module, TracingCheckError
from ptcore.jit._ts_graph import _get_trace_graph  # noqa: F401 - torch.jit's (fvcore)
from ptcore.jit._script_module import (  # noqa: F401
    ScriptModule, ScriptFunction, RecursiveScriptModule, TracedModule, TopLevelTracedModule,
)
from ptcore.jit._serialization import save, load
from ptcore.jit._passes import (  # noqa: F401
    freeze, optimize_for_inference, export_opnames, run_frozen_optimizations,
)
from ptcore.jit._script import script, ScriptError, ScriptWarning
from ptcore.jit import frontend  # noqa: F401 - torch.jit.frontend's exceptions
from ptcore.jit import annotations  # noqa: F401 - torch.jit.annotations
from ptcore.jit._compilation_unit import CompilationUnit
from ptcore.jit._executor import (  # noqa: F401
    optimized_execution, fuser, set_fusion_strategy, strict_fusion, last_executed_optimized_graph,
)
from ptcore.jit._annotations import (  # noqa: F401
    Final, annotate, ignore, unused, export, is_scripting, is_tracing, fork, wait, Future,
    Attribute, interface, script_if_tracing, script_method, copy, enable_onednn_fusion,
    onednn_fusion_enabled,
)
from ptcore.jit._annotations import jit_isinstance as isinstance  # noqa: A001 - torch's name

# torch's private spellings, which torchvision decorates its ops and methods with
_script_if_tracing = script_if_tracing
from ptcore.jit._annotations import overload as _overload  # noqa: E402
from ptcore.jit._annotations import overload_method as _overload_method  # noqa: E402

__all__ = ["trace", "trace_module", "script", "save", "load", "freeze", "optimize_for_inference",
           "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "TracerWarning",
           "TracingCheckError", "JitError", "Error", "ScriptError", "Graph", "Final", "annotate", "ignore", "unused",
           "export", "is_scripting", "is_tracing", "fork", "wait", "Future", "Attribute",
           "script_method", "isinstance",
           "interface", "script_if_tracing", "enable_onednn_fusion", "onednn_fusion_enabled",
           "TracedModule", "TopLevelTracedModule", "ScriptWarning", "CompilationUnit",
           "export_opnames", "optimized_execution", "fuser", "set_fusion_strategy",
           "strict_fusion", "run_frozen_optimizations", "last_executed_optimized_graph"]
