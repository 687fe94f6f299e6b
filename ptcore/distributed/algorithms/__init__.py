"""``ptcore.distributed.algorithms`` (``torch.distributed.algorithms``): DDP's
communication hooks."""
from ptcore.distributed.algorithms import ddp_comm_hooks  # noqa: F401

__all__ = ["ddp_comm_hooks"]
