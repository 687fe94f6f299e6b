"""Shared memory for storages, in PyTorch's two sharing strategies on Linux.

``"file_descriptor"`` (the default): a storage's bytes in an anonymous
``memfd_create`` file mapped ``MAP_SHARED``.  Nothing is named in
``/dev/shm``: the kernel frees the memory when the last process closes its
descriptor and unmaps it, even when processes are killed.  Each shared
storage keeps one descriptor open in every process holding it.

``"file_system"``: a storage's bytes in a named file in ``/dev/shm``
(``ptcore_<pid>_<random>``), mapped ``MAP_SHARED`` and closed at once, so a
process holds no descriptor per storage (what scripts that share many
tensors choose it for: the limit on open files).  Processes find the file by
its name; a reference count kept after the data in the file (updated under
a ``lockf`` lock) counts the processes holding it plus the messages in
flight, and the last release unlinks the file.  A process that exits
normally releases its references (``multiprocessing`` finalizers, run by
every start method); one that is killed leaves its references behind, and
then ``multiprocessing``'s resource tracker unlinks the file when the whole
process tree has exited (with a warning about leaked shared memory), as
PyTorch's ``torch_shm_manager`` does.  A forked child uses the references
of its parent: a storage it inherited stays valid as long as the parent
keeps it.

The mechanics below the pickling reductions of
:mod:`ptcore.multiprocessing.reductions`: new shared storages, moving an
existing storage into shared memory in place (``share_memory_``), and the
per-process table that maps a shared file back to its one Storage object.
"""
import ctypes
import fcntl
import functools
import mmap
import os
import secrets
import threading
import weakref

from ptcore import _tensor as _C
from ptcore._tensor import Storage

_HAVE_MOVE = hasattr(Storage, "_move_to_buffer")

STRATEGIES = ("file_descriptor", "file_system")
_strategy = "file_descriptor"
_SHM_DIR = "/dev/shm"

# (st_dev, st_ino) of a shared file (memfd or named) -> the Storage mapping it in this process, so a
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


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_MAP_FAILED = ctypes.c_void_p(-1).value


def _unmap(mapping, _munmap=_libc.munmap, _addressof=ctypes.addressof, _sizeof=ctypes.sizeof):
    _munmap(_addressof(mapping), _sizeof(mapping))


@functools.lru_cache(maxsize=64)
def _mapping_type(n):
    """A ctypes ``char[n]`` type whose instances unmap their memory when dropped."""
    return type("_SharedMapping", (ctypes.c_char * n,), {"__slots__": (), "__del__": _unmap})


def _map_fd(fd, nbytes):
    """A writable MAP_SHARED view of ``fd``: (memoryview, address).

    Mapped with libc's ``mmap`` rather than :mod:`mmap`, whose objects keep a
    duplicate of the descriptor open as long as the mapping lives: a shared
    storage costs no descriptor beyond its handle's (none in strategy
    ``"file_system"``).  The memory is unmapped when the view is dropped."""
    n = builtin_max(nbytes, 1)
    addr = _libc.mmap(None, n, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if addr is None or addr == _MAP_FAILED:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of {n} bytes of shared memory failed: {os.strerror(err)}")
    return memoryview(_mapping_type(n).from_address(addr)), addr


def builtin_max(a, b):
    return a if a >= b else b


def get_strategy():
    """The strategy new shared storages are made with."""
    return _strategy


def set_strategy(name):
    """Make new shared storages with strategy ``name`` (one of :data:`STRATEGIES`)."""
    global _strategy
    if name not in STRATEGIES:      # (AssertionError, as torch's)
        raise AssertionError(f"invalid sharing strategy {name!r}, expected one of "
                             f"{set(STRATEGIES)}")
    if name == "file_system":
        if not os.path.isdir(_SHM_DIR):
            raise RuntimeError(f"sharing strategy 'file_system' needs {_SHM_DIR}, which this "
                               "system does not have")
        # started now, before any worker is forked, so that every process of the
        # tree reports to one tracker
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
    _strategy = name


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


# --- strategy "file_system": named files with a reference count -----------------

_COUNT = 8      # bytes of the reference count, at the end of the file


class _SharedFileHandle:
    """One reference to a named shared-memory file (strategy ``"file_system"``),
    released when dropped, or when its process exits."""

    __slots__ = ("name", "nbytes", "key", "pid", "__weakref__")

    def __init__(self, name, nbytes, key):
        self.name, self.nbytes, self.key, self.pid = name, nbytes, key, os.getpid()
        _owned.add(self)
        _release_at_exit()

    def release(self):
        """Drop this process's reference (a no-op in a forked child: the
        reference is its parent's)."""
        name, self.name = self.name, None
        if name is not None and self.pid == os.getpid():
            try:
                _file_ref(name, -1)
            except OSError:
                pass

    def __del__(self):
        try:
            self.release()
        except Exception:       # interpreter shutdown
            pass

    def __repr__(self):
        return f"<shared memory file {self.name!r} nbytes={self.nbytes}>"


_owned = weakref.WeakSet()      # this process's live file references
_exit_hook_pid = None


def _release_at_exit():
    """Release this process's file references when it exits (once per process:
    ``multiprocessing``'s exit function runs at interpreter exit and at the
    end of every child, forked ones included, after the queues are flushed)."""
    global _exit_hook_pid
    if _exit_hook_pid != os.getpid():
        _exit_hook_pid = os.getpid()
        from multiprocessing import util
        util.Finalize(None, _release_all, exitpriority=-10)


def _release_all():
    for h in list(_owned):
        h.release()


def _shm_path(name):
    if os.sep in name or name.startswith("."):
        raise ValueError(f"not a shared-memory file name: {name!r}")
    return os.path.join(_SHM_DIR, name)


def _file_ref(name, delta):
    """Add ``delta`` to the reference count of shared-memory file ``name``;
    the file is unlinked when the count drops to zero.  Returns the count."""
    path = _shm_path(name)
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        at = os.fstat(fd).st_size - _COUNT
        fcntl.lockf(fd, fcntl.LOCK_EX, _COUNT, at)
        n = int.from_bytes(os.pread(fd, _COUNT, at), "little", signed=True) + delta
        os.pwrite(fd, n.to_bytes(_COUNT, "little", signed=True), at)
        if n <= 0:
            os.unlink(path)
            from multiprocessing import resource_tracker
            resource_tracker.unregister("/" + name, "shared_memory")
    finally:
        os.close(fd)        # (releases the lock)
    return n


def _new_named(nbytes):
    """A new named shared-memory file for ``nbytes`` bytes, its count at one
    (the creator's reference): (handle, memoryview, address)."""
    from multiprocessing import resource_tracker
    if not os.path.isdir(_SHM_DIR):
        raise RuntimeError(f"sharing strategy 'file_system' needs {_SHM_DIR}")
    while True:
        name = f"ptcore_{os.getpid()}_{secrets.token_hex(8)}"
        try:
            fd = os.open(_shm_path(name), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                         | os.O_NOFOLLOW, 0o600)
            break
        except FileExistsError:
            continue
    try:
        at = (builtin_max(nbytes, 1) + _COUNT - 1) // _COUNT * _COUNT
        os.ftruncate(fd, at + _COUNT)
        os.pwrite(fd, (1).to_bytes(_COUNT, "little", signed=True), at)
        st = os.fstat(fd)
        mv, addr = _map_fd(fd, nbytes)
    except BaseException:
        os.unlink(_shm_path(name))
        raise
    else:
        resource_tracker.register("/" + name, "shared_memory")
        handle = _SharedFileHandle(name, nbytes, (st.st_dev, st.st_ino))
    finally:
        os.close(fd)
    return handle, mv, addr


def _cached(key):
    """The Storage of this process mapping the shared file ``key`` (or None)."""
    with _cache_lock:
        return _cache.get(key)


def _storage_on(handle, mv, addr, nbytes):
    """A Storage on the mapping ``mv`` (at ``addr``) of the shared file of ``handle``."""
    st = _C._storage_from_pointer(addr, nbytes, mv)
    st._shared = handle
    _register(st, handle)
    return st


def _open_named(name, nbytes):
    """Map shared-memory file ``name``, taking over the reference its sender
    counted for the message (or dropping it when this process maps the file
    already): its Storage."""
    fd = os.open(_shm_path(name), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        cached = _cached(key)
        if cached is not None:
            _file_ref(name, -1)
            return cached
        if st.st_size < nbytes + _COUNT:
            raise RuntimeError(f"shared memory file {name!r} of {st.st_size} bytes is smaller "
                               f"than its storage ({nbytes} bytes)")
        mv, addr = _map_fd(fd, nbytes)
    finally:
        os.close(fd)
    return _storage_on(_SharedFileHandle(name, nbytes, key), mv, addr, nbytes)


def _new_mapping(nbytes):
    """New shared memory of ``nbytes`` bytes in the current strategy:
    (handle, memoryview, address)."""
    if _strategy == "file_system":
        return _new_named(nbytes)
    fd = _new_fd(nbytes)
    handle = _SharedHandle(fd, nbytes)
    return (handle,) + _map_fd(fd, nbytes)


def _new_shared_storage(nbytes):
    """A new, uninitialised Storage of ``nbytes`` bytes in shared memory
    (in the current strategy)."""
    return _storage_on(*_new_mapping(nbytes), nbytes)


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
    handle, mv, _ = _new_mapping(storage.nbytes())
    storage._move_to_buffer(mv, handle)
    _register(storage, handle)
    return storage


_C._set_module_hooks(share_storage=_share_storage)   # Storage.share_memory_
