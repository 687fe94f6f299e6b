"""``ptcore._dynamo.exc``: the exceptions of torch's graph capture that ptcore raises
(``torch._dynamo.exc``): an unknown ``compile`` backend is :class:`InvalidBackend`."""

__all__ = ["TorchDynamoException", "InvalidBackend", "Unsupported", "BackendCompilerFailed"]


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
