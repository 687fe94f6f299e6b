"""``ptcore.distributed.nn`` (``torch.distributed.nn``): collectives that autograd sees
through (:mod:`ptcore.distributed.nn.functional`)."""
from ptcore.distributed.nn.functional import (
    all_gather, all_reduce, all_to_all, all_to_all_single, broadcast, gather, reduce,
    reduce_scatter, scatter,
)

__all__ = ["all_gather", "all_reduce", "all_to_all", "all_to_all_single", "broadcast",
           "gather", "reduce", "reduce_scatter", "scatter"]
