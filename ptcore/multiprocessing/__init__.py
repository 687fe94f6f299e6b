"""``ptcore.multiprocessing``: a drop-in for :mod:`multiprocessing` (``torch.multiprocessing``).

It re-exports every name of the standard module and registers reductions so
that a tensor sent through a ``Queue``, a ``Pipe`` or as an argument of a
spawned ``Process`` arrives *sharing the sender's memory*: its storage is
moved to shared memory (``Tensor.share_memory_()``) when it is not already,
and the receiver maps the same pages.  Works with every start method; with
``fork`` the arguments of a ``Process`` are not pickled at all, so share
them (``share_memory_()``, ``Module.share_memory()``) before starting it.

Shared memory is an anonymous ``memfd`` per storage (strategy
``"file_descriptor"``): nothing is named in ``/dev/shm`` and the kernel
frees it when the last process using it drops it or dies.
"""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403

from ptcore.multiprocessing import reductions as _reductions
from ptcore.multiprocessing.spawn import (
    ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext,
    spawn, start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "SpawnContext",
           "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors.

    Parameters
    ----------
    new_strategy : str
        One of :func:`get_all_sharing_strategies` (only ``"file_descriptor"``
        is implemented: it never leaves names behind in ``/dev/shm``).
    """
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise ValueError(f"unsupported sharing strategy {new_strategy!r}; "
                         f"choose from {sorted(_all_sharing_strategies)}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies supported on this system."""
    return set(_all_sharing_strategies)


_reductions.init_reductions()
del sys
