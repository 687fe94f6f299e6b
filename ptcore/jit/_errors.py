"""The exceptions and warnings of ``ptcore.jit``: a graph or file it cannot
build or load (:class:`JitError`), scripted code raising while it runs
(:class:`Error`, ``torch.jit.Error``) and Python the script compiler does not
take (:class:`ScriptError` and torch's ``jit.frontend`` classes).  Every
module of the package raises them, so they sit below all of them."""

__all__ = ["JitError", "Error", "ScriptError", "FrontendError", "NotSupportedError",
           "UnsupportedNodeError", "ScriptWarning"]


class JitError(RuntimeError):
    """A graph or a file that ``ptcore.jit`` cannot build, check or load."""


class Error(Exception):
    """An exception raised by scripted code while it runs (``raise``,
    ``assert``): ``torch.jit.Error``, which is not a RuntimeError."""


Error.__module__ = "ptcore.jit"


class ScriptError(JitError):
    """Python that ``ptcore.jit.script`` cannot compile."""


class FrontendError(ScriptError):
    """``torch.jit.frontend.FrontendError``: Python the script compiler does
    not take (a ScriptError here, so a RuntimeError too)."""


class NotSupportedError(FrontendError):
    """``torch.jit.frontend.NotSupportedError``: a construct TorchScript does
    not support (``*args``, keyword-only parameters, ...)."""


class UnsupportedNodeError(NotSupportedError):
    """``torch.jit.frontend.UnsupportedNodeError``: a kind of statement or
    expression TorchScript does not support (``try``, ``lambda``, ``global``, ...)."""


class ScriptWarning(Warning):
    """Warnings about scripted code (``torch.jit.ScriptWarning``)."""


ScriptWarning.__module__ = "ptcore.jit"
