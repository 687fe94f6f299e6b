"""``ptcore.nn.parallel``: data-parallel wrappers (``torch.nn.parallel``)."""
from ptcore.nn.parallel.distributed import DistributedDataParallel
from ptcore.nn.parallel.data_parallel import DataParallel, data_parallel  # noqa: F401
from ptcore.nn.parallel.parallel_apply import parallel_apply  # noqa: F401
from ptcore.nn.parallel.replicate import replicate  # noqa: F401
from ptcore.nn.parallel.scatter_gather import gather, scatter  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply",
           "replicate", "scatter"]
