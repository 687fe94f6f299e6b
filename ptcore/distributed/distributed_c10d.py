"""``ptcore.distributed.distributed_c10d`` (``torch.distributed.distributed_c10d``): the
module where torch defines the process-group API.  Scripts import from it directly
(``from torch.distributed.distributed_c10d import _get_default_group``); it holds the same
objects as :mod:`ptcore.distributed`, and the private helpers scripts use most."""
from ptcore.distributed import *  # noqa: F401,F403
from ptcore.distributed import __all__ as _public
from ptcore.distributed.process_group import _state, _world, get_global_rank


def _get_default_group():
    """The default process group (``ValueError`` before ``init_process_group``)."""
    return _world("_get_default_group")


def _rank_not_in_group(group):
    """True when this rank is not a member of ``group`` (None: the default group)."""
    if group is None:
        return False
    if isinstance(group, int):                 # GroupMember.NON_GROUP_MEMBER
        return True
    return group._comm is None


def _get_global_rank(group, rank):
    return get_global_rank(group, rank)


def _get_pg_default_device(group=None):
    """The device of the tensors the group's collectives take: the CPU (ptcore's groups
    move CPU tensors; CUDA tensors go through the CPU)."""
    from ptcore import device
    return device("cpu")


__all__ = list(_public)
