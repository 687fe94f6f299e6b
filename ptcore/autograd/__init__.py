"""ptcore.autograd: tape-based reverse-mode automatic differentiation."""
from ptcore.autograd.grad_mode import (  # noqa: F401
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled,
)
