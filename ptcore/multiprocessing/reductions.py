"""Pickling reductions that send tensors between processes by shared memory.

A storage is moved to shared memory in the current sharing strategy when it
is sent (see :mod:`ptcore._shared_memory`), and goes the way its memory was
shared:

- ``"file_descriptor"`` (PyTorch's default on Linux): a duplicate of the
  descriptor of its anonymous ``memfd`` (``multiprocessing.reduction.DupFd``:
  passed to a spawned child directly, otherwise through
  ``multiprocessing.resource_sharer``).  Nothing is ever named in
  ``/dev/shm``.
- ``"file_system"``: the name of its file in ``/dev/shm``; the message
  holds a reference of the file's count, which the receiver takes over.
"""
import os
from multiprocessing.reduction import ForkingPickler, DupFd

from ptcore import _tensor as _C
from ptcore._tensor import Storage, _TensorBase
from ptcore.tensor import Tensor, _AUTOGRAD_ATTRS
from ptcore._shared_memory import (  # noqa: F401 (the mechanics live there; re-exported)
    _HAVE_MOVE, _SharedFileHandle, _SharedHandle, _cache, _cache_lock, _cached, _file_ref, _map_fd,
    _new_fd, _new_shared_storage, _open_named, _register, _share_storage, _storage_on, builtin_max)

__all__ = ["init_reductions", "reduce_tensor", "reduce_storage", "rebuild_tensor",
           "rebuild_storage_fd", "rebuild_storage_filename"]


def _new_shared_tensor(shape, dtype):
    """An uninitialised contiguous tensor of ``shape``/``dtype`` in shared memory."""
    shape = [int(s) for s in shape]
    n = 1
    for s in shape:
        n *= s
    st = _new_shared_storage(n * dtype.itemsize)
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= builtin_max(s, 1)
    strides.reverse()
    t = _C._tensor_from_storage(st, dtype, shape, strides, 0)
    if type(t) is not Tensor:
        t = Tensor._make_subclass(Tensor, t, False)
    return t


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

def rebuild_storage_fd(df, nbytes):
    """Rebuild a shared storage from a duplicated file descriptor."""
    fd = df.detach()
    try:
        key = os.fstat(fd)
        key = (key.st_dev, key.st_ino)
        st = _cached(key)
        if st is not None:
            os.close(fd)
            return st
        handle = _SharedHandle(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    size = os.fstat(fd).st_size
    if size < nbytes:
        raise RuntimeError(f"shared memory segment of {size} bytes is smaller than its storage ({nbytes} bytes)")
    return _storage_on(handle, *_map_fd(fd, nbytes), nbytes)


def rebuild_storage_filename(name, nbytes):
    """Rebuild a shared storage from the name of its file in ``/dev/shm``
    (strategy ``"file_system"``)."""
    return _open_named(name, nbytes)


def rebuild_storage_empty():
    return Storage(0)


def reduce_storage(storage):
    """Send a storage as a duplicated descriptor of its shared memory."""
    if storage.device.type != "cpu":
        raise RuntimeError(
            f"sending a storage on {storage.device} between processes is not supported; "
            "copy it to the CPU first")
    nbytes = storage.nbytes()
    if nbytes == 0:
        return (rebuild_storage_empty, ())
    _share_storage(storage)
    handle = storage._shared
    if isinstance(handle, _SharedFileHandle):
        _file_ref(handle.name, 1)       # the message's reference, taken over by the receiver
        return (rebuild_storage_filename, (handle.name, nbytes))
    return (rebuild_storage_fd, (DupFd(handle.fd), nbytes))


def rebuild_tensor(cls, storage, dtype, shape, stride, offset, requires_grad, state=None):
    """Rebuild a tensor viewing a (shared) storage."""
    t = _C._tensor_from_storage(storage, dtype, shape, stride, offset)
    if cls is not type(t):
        if not (isinstance(cls, type) and issubclass(cls, _TensorBase)):
            raise TypeError(f"{cls!r} is not a tensor class")
        t = Tensor._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(tensor):
    """Reduce a tensor to (its storage, metadata); the storage goes by shared memory."""
    if tensor.requires_grad and getattr(tensor, "grad_fn", None) is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the data, "
            "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    if tensor.device.type != "cpu":
        raise RuntimeError(
            f"sending a tensor on {tensor.device} between processes is not supported; "
            "copy it to the CPU first")
    state = getattr(tensor, "__dict__", None) or None
    if state:
        # (the autograd bookkeeping a forward leaves, as the gradient accumulator of a
        # used Parameter, is not the tensor's state: pickling it would fail)
        state = {k: v for k, v in state.items() if k not in _AUTOGRAD_ATTRS} or None
    return (rebuild_tensor, (type(tensor), tensor.untyped_storage(), tensor.dtype,
                             tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset(),
                             bool(tensor.requires_grad), state))


def _tensor_classes():
    out, todo = [], [_TensorBase]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def register_tensor_class(cls):
    """Register a Tensor subclass (e.g. ``nn.Parameter``) for shared-memory sending.

    The multiprocessing pickler dispatches on the exact type, so subclasses
    defined after ``ptcore.multiprocessing`` was imported are registered here
    (``init_reductions`` registers the ones that exist).
    """
    ForkingPickler.register(cls, reduce_tensor)


def init_reductions():
    """Register the storage and tensor reductions with multiprocessing's pickler."""
    ForkingPickler.register(Storage, reduce_storage)
    try:
        # lazy: registers Parameter/Buffer too, without loading ptcore.nn (~1 s) at import
        import ptcore.nn.parameter  # noqa: F401
    except Exception:
        pass
    for cls in _tensor_classes():
        ForkingPickler.register(cls, reduce_tensor)
