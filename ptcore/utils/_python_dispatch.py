"""``ptcore.utils._python_dispatch`` (``torch.utils._python_dispatch``):
dispatch-level modes that see every op's kernel call below autograd.  Their
``func`` is ``ptcore.ops.aten.<op>.<overload>``, callable outside the mode too
(:mod:`ptcore._ops_namespace` makes aten's ops callable)."""
from ptcore import _ops_namespace  # noqa: F401
from ptcore._dispatch.python_dispatch import (  # noqa: F401
    OpOverload, TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack,
    _pop_mode_temporarily,
)

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_pop_mode_temporarily"]
