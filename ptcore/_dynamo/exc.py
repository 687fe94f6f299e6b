"""``ptcore._dynamo.exc``: the exceptions of torch's graph capture that ptcore raises
(``torch._dynamo.exc``): an unknown ``compile`` backend is :class:`InvalidBackend`, a graph
break under ``fullgraph=True`` :class:`Unsupported`, a backend failure
:class:`BackendCompilerFailed`."""

__all__ = ["TorchDynamoException", "InvalidBackend", "Unsupported", "BackendCompilerFailed",
           "RecompileError", "FailOnRecompileLimitHit"]


class TorchDynamoException(RuntimeError):
    """Base of the graph-capture errors."""


class InvalidBackend(TorchDynamoException):
    """``compile(backend=name)`` with a name no backend is registered under."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `ptcore._dynamo.list_backends()` "
                         "for available backends.")


class Unsupported(TorchDynamoException):
    """Code the graph capture does not support."""


class BackendCompilerFailed(TorchDynamoException):
    """A backend raised while compiling."""


class RecompileError(TorchDynamoException):
    """A recompilation while ``config.error_on_recompile`` is set."""


class FailOnRecompileLimitHit(TorchDynamoException):
    """The recompile limit was reached while ``config.fail_on_recompile_limit_hit`` is set."""
