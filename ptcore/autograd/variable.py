"""``ptcore.autograd.variable``: ``Variable``, the pre-0.4 wrapper (as torch: calling it
returns a :class:`ptcore.Tensor`, and every tensor is an instance of it)."""
import warnings

import ptcore
from ptcore.autograd.graph import queue_callback

__all__ = ["VariableMeta", "Variable"]


class VariableMeta(type):
    """``isinstance(t, Variable)`` is ``isinstance(t, Tensor)``; calling ``Variable``
    builds a tensor (torch's legacy constructor)."""

    def __instancecheck__(cls, other):
        return isinstance(other, ptcore.Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None,
                 name=None):
        """``Variable(data, requires_grad=False, volatile=False)``: ``data`` detached (same
        storage, a leaf), with ``requires_grad`` set; ``Variable()`` is an empty tensor."""
        if data is None:
            data = ptcore.empty(0)
        elif not isinstance(data, ptcore.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if _grad_fn is not None:
            raise TypeError(f"_grad_fn has to be a Function object or None, but got "
                            f"{type(_grad_fn).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        var = data.detach()
        if requires_grad:
            var.requires_grad_(True)
        return var


class Variable(metaclass=VariableMeta):
    """``torch.autograd.Variable``: a function-like class returning tensors."""


class _ImperativeEngine:
    """``Variable._execution_engine`` (torch's autograd engine object): what
    libraries reach through it -- final callbacks of the running backward pass."""

    @staticmethod
    def queue_callback(callback):
        """Run ``callback()`` once the running backward pass has finished."""
        queue_callback(callback)


Variable._execution_engine = _ImperativeEngine()
