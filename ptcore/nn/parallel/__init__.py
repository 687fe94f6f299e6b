"""``ptcore.nn.parallel``: ``DataParallel``, ``data_parallel`` and
``DistributedDataParallel`` (as ``torch.nn.parallel``)."""
from ptcore.nn.parallel.data_parallel import DataParallel, data_parallel  # noqa: F401
from ptcore.nn.parallel.distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
