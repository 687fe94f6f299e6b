"""``ptcore.distributed.algorithms`` (``torch.distributed.algorithms``): DDP's
communication hooks and the join context manager for uneven inputs."""
from ptcore.distributed.algorithms import ddp_comm_hooks  # noqa: F401
from ptcore.distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["ddp_comm_hooks", "Join", "Joinable", "JoinHook"]
