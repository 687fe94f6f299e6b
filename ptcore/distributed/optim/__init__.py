"""``ptcore.distributed.optim`` (``torch.distributed.optim``): the
:class:`ZeroRedundancyOptimizer`, which shards optimizer state over the ranks."""
from ptcore.distributed.optim.zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
