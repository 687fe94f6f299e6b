"""``ptcore.jit.frontend`` (``torch.jit.frontend``): the exceptions the
script compiler raises for Python it does not take."""
from ptcore.jit._errors import FrontendError, NotSupportedError, UnsupportedNodeError

__all__ = ["FrontendError", "NotSupportedError", "UnsupportedNodeError"]
