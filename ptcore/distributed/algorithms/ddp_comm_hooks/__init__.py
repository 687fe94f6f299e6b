"""DDP communication hooks (``torch.distributed.algorithms.ddp_comm_hooks``)."""
from ptcore.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: F401

__all__ = ["default_hooks"]
