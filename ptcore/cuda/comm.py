"""``torch.cuda.comm``: the multi-device copies of :mod:`ptcore.nn.parallel.comm`."""
from ptcore.nn.parallel.comm import (broadcast, broadcast_coalesced, gather, reduce_add,  # noqa: F401
                                     reduce_add_coalesced, scatter)

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter", "gather"]
