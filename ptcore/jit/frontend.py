"""``ptcore.jit.frontend`` (``torch.jit.frontend``): the exceptions the
script compiler raises for Python it does not take."""
from ptcore.jit._script import FrontendError, NotSupportedError, UnsupportedNodeError

__all__ = ["FrontendError", "NotSupportedError", "UnsupportedNodeError"]
