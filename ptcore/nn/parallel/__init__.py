"""``ptcore.nn.parallel``: data-parallel wrappers (``torch.nn.parallel``)."""
from ptcore.nn.parallel.distributed import DistributedDataParallel
from ptcore.nn.parallel.data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
