"""``ptcore.utils._python_dispatch`` (``torch.utils._python_dispatch``):
dispatch-level modes that see every op's kernel call below autograd."""
from ptcore._dispatch.python_dispatch import (  # noqa: F401
    OpOverload, TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack,
    _pop_mode_temporarily,
)

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode",
           "_get_current_dispatch_mode_stack", "_pop_mode_temporarily"]
