"""``ptcore.distributed.elastic.multiprocessing``: its ``errors`` module (``record``,
``ChildFailedError``, ``ErrorHandler``)."""
from ptcore.distributed.elastic.multiprocessing import errors  # noqa: F401
from ptcore.distributed.elastic.multiprocessing.errors import ProcessFailure

__all__ = ["errors", "ProcessFailure"]
