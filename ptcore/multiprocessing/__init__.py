"""``ptcore.multiprocessing``: a drop-in for :mod:`multiprocessing` (``torch.multiprocessing``).

It re-exports every name of the standard module and registers reductions so
that a tensor sent through a ``Queue``, a ``Pipe`` or as an argument of a
spawned ``Process`` arrives *sharing the sender's memory*: its storage is
moved to shared memory (``Tensor.share_memory_()``) when it is not already,
and the receiver maps the same pages.  Works with every start method; with
``fork`` the arguments of a ``Process`` are not pickled at all, so share
them (``share_memory_()``, ``Module.share_memory()``) before starting it.

Both of PyTorch's sharing strategies on Linux are implemented (see
:mod:`ptcore._shared_memory`): ``"file_descriptor"`` (the default), an
anonymous ``memfd`` per storage that nothing names in ``/dev/shm`` and that
the kernel frees when the last process using it drops it or dies; and
``"file_system"``, a named file in ``/dev/shm`` per storage, so that no
process keeps a descriptor open per shared storage, reference-counted and
unlinked by the last process to release it.
"""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403

from ptcore import _shared_memory
from ptcore.multiprocessing import reductions as _reductions
from ptcore.multiprocessing.spawn import (
    ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext,
    spawn, start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "SpawnContext",
           "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (this process's, as torch's:
    a spawned child starts with ``"file_descriptor"``, a forked one inherits it).

    Parameters
    ----------
    new_strategy : str
        One of :func:`get_all_sharing_strategies`: ``"file_descriptor"``
        (anonymous memory passed by descriptor, nothing named in
        ``/dev/shm``) or ``"file_system"`` (a named, reference-counted file
        in ``/dev/shm`` per storage: no descriptor kept open per storage).
        Storages already shared keep their memory and the way it is sent.
    """
    _shared_memory.set_strategy(new_strategy)


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _shared_memory.get_strategy()


def get_all_sharing_strategies():
    """The set of sharing strategies supported on this system."""
    return set(_shared_memory.STRATEGIES)


_PR_SET_NAME, _PR_GET_NAME = 15, 16  # prctl(2) options (Linux)


def _prctl():
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def _set_thread_name(name):
    """Name the calling OS thread (what ``ps -L``, ``top -H`` and
    ``/proc/<pid>/task/<tid>/comm`` show; the main thread's name is the
    process's). Linux keeps the first 15 bytes; a no-op elsewhere.

    Parameters
    ----------
    name : str
    """
    import ctypes
    import sys
    if not isinstance(name, str):
        raise TypeError(f"_set_thread_name(): name must be a str, not {type(name).__name__}")
    prctl = _prctl()
    if prctl is not None and sys.platform.startswith("linux"):
        prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def _get_thread_name():
    """The name of the calling OS thread ("" where it cannot be read)."""
    import ctypes
    import sys
    prctl = _prctl()
    if prctl is None or not sys.platform.startswith("linux"):
        return ""
    buf = ctypes.create_string_buffer(16)
    if prctl(_PR_GET_NAME, buf, 0, 0, 0) != 0:
        return ""
    return buf.value.decode(errors="replace")


_reductions.init_reductions()
del sys
