"""``ptcore.distributed.elastic`` (``torch.distributed.elastic``): what training scripts use of
torchelastic, the ``@record`` decorator of :mod:`.multiprocessing.errors`.  Launch the
processes with ``python -m ptcore.distributed.run``; elastic restarts and rendezvous backends
are not provided."""
from ptcore.distributed.elastic import multiprocessing  # noqa: F401

__all__ = ["multiprocessing"]
