"""``ptcore.nn.parallel``: data-parallel wrappers (``torch.nn.parallel``)."""
from ptcore.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
