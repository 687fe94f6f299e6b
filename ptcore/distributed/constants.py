"""``ptcore.distributed.constants`` (``torch.distributed.constants``): the default timeouts
of the process groups."""
from ptcore.distributed.process_group import default_pg_timeout

# torch's NCCL default; ptcore has no NCCL, so (as in a torch build without NCCL) it is None
default_pg_nccl_timeout = None

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]
