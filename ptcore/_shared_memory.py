"""Shared memory for storages: a storage's bytes in an anonymous
``memfd_create`` file mapped ``MAP_SHARED`` (PyTorch's ``file_descriptor``
strategy on Linux).

The mechanics below the pickling reductions of
:mod:`ptcore.multiprocessing.reductions`: new shared storages, moving an
existing storage into shared memory in place (``share_memory_``), and the
per-process table that maps a shared file back to its one Storage object.
Nothing is named in ``/dev/shm``: the kernel frees the memory when the last
process closes its descriptor and unmaps it, even when processes are killed.
"""
import ctypes
import mmap
import os
import threading
import weakref

from ptcore import _tensor as _C
from ptcore._tensor import Storage

_HAVE_MOVE = hasattr(Storage, "_move_to_buffer")

# (st_dev, st_ino) of a memfd -> the Storage mapping it in this process, so a
# storage received twice (or sent back to its creator) is one Storage object.
_cache = weakref.WeakValueDictionary()
_cache_lock = threading.Lock()


class _SharedHandle:
    """Owns the file descriptor of a shared storage (closed when dropped)."""

    __slots__ = ("fd", "nbytes", "key", "__weakref__")

    def __init__(self, fd, nbytes):
        self.fd = fd
        self.nbytes = nbytes
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)

    def __del__(self, _close=os.close):
        fd, self.fd = self.fd, -1
        if fd >= 0:
            try:
                _close(fd)
            except OSError:
                pass

    def __repr__(self):
        return f"<shared memory fd={self.fd} nbytes={self.nbytes}>"


def _map_fd(fd, nbytes):
    """A writable MAP_SHARED view of ``fd``: (memoryview, address)."""
    mm = mmap.mmap(fd, builtin_max(nbytes, 1), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    mv = memoryview(mm)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mv))
    return mv, addr


def builtin_max(a, b):
    return a if a >= b else b


def _new_fd(nbytes):
    fd = os.memfd_create("ptcore_shm", os.MFD_CLOEXEC)
    try:
        if nbytes:
            os.ftruncate(fd, nbytes)
        else:
            os.ftruncate(fd, 1)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _register(storage, handle):
    with _cache_lock:
        _cache[handle.key] = storage


def _new_shared_storage(nbytes):
    """A new, uninitialised Storage of ``nbytes`` bytes in shared memory."""
    fd = _new_fd(nbytes)
    handle = _SharedHandle(fd, nbytes)
    mv, addr = _map_fd(fd, nbytes)
    st = _C._storage_from_pointer(addr, nbytes, mv)
    st._shared = handle
    _register(st, handle)
    return st


def _share_storage(storage):
    """Move ``storage`` to shared memory in place (no-op when already shared)."""
    if not isinstance(storage, Storage):
        raise TypeError(f"expected a ptcore.Storage, got {type(storage).__name__}")
    if storage.is_shared():
        return storage
    if storage.device.type != "cpu":
        # CUDA tensors would need CUDA IPC; PyTorch's share_memory_ is a no-op for them.
        return storage
    if not _HAVE_MOVE:
        raise RuntimeError(
            "this ptcore build cannot move a storage to shared memory in place "
            "(Storage._move_to_buffer is missing: rebuild the extension modules)")
    nbytes = storage.nbytes()
    fd = _new_fd(nbytes)
    handle = _SharedHandle(fd, nbytes)
    mv, _ = _map_fd(fd, nbytes)
    storage._move_to_buffer(mv, handle)
    _register(storage, handle)
    return storage
