"""ptcore.autograd: tape-based reverse-mode automatic differentiation.

Operations on tensors with ``requires_grad=True`` are recorded as they run
(a dynamic graph of :class:`~ptcore.autograd.graph.Node` objects reachable
from each result's ``grad_fn``); :func:`backward` and :func:`grad` replay it
backwards.  Every backward formula is written with ptcore ops, so it works
on every device and is itself differentiable (``create_graph=True``).
"""
from ptcore.autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled,
)
from ptcore.autograd.engine import backward, grad  # noqa: F401
from ptcore.autograd.function import Function, once_differentiable, FunctionCtx  # noqa: F401
from ptcore.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from ptcore.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: F401
from ptcore.autograd import functional, graph  # noqa: F401
from ptcore.autograd.graph import Node  # noqa: F401
from ptcore.autograd.graph import _is_checkpoint_valid  # noqa: F401
from ptcore.autograd.graph import SavedTensor  # noqa: F401
from ptcore.autograd import _mutation_on_saved
# torch's home of it is autograd.graph (kept in its own module: it builds on graph's hooks)
graph.allow_mutation_on_saved_tensors = _mutation_on_saved.allow_mutation_on_saved_tensors
# torch.autograd re-exports torch.overrides' helpers (the same functions)
from ptcore._dispatch.torch_function import (  # noqa: F401
    handle_torch_function, has_torch_function, is_tensor_like)
from ptcore.autograd.grad_mode import (  # noqa: F401
    set_multithreading_enabled, is_multithreading_enabled, is_view_replay_enabled)
from ptcore.autograd import variable  # noqa: F401

Variable = None  # set by ptcore/__init__ (ptcore.Tensor), as torch.autograd.Variable

__all__ = ["backward", "grad", "Function", "once_differentiable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
           "set_detect_anomaly", "gradcheck", "gradgradcheck", "functional", "graph"]


def __getattr__(name):
    # ptcore.autograd.profiler: imported on first use
    if name in ("profiler", "forward_ad"):
        import importlib
        mod = importlib.import_module("ptcore.autograd." + name)
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'ptcore.autograd' has no attribute '{name}'")
