"""Storages and tensor records in checkpoints: the per-thread serialization
state (``skip_data``), the bytes a storage is written as, and the checks that
every tensor read from a file fits its storage before it is built.

Shared by the checkpoint readers (``_torch_checkpoint_reader``,
``_ptcore_checkpoint_v1``) and the writer (``_torch_checkpoint_writer``).
"""
import builtins
import threading

import numpy as np

import ptcore
from ptcore import _tensor as _C

__all__ = ["CheckpointError", "BadTensor", "check_tensor_geometry", "build_tensor",
           "storage_view", "storage_payload", "meta_storage", "parameter_class", "restore_at",
           "tls"]

MAX_DIMS = 64


class CheckpointError(RuntimeError):
    """A checkpoint file that ``ptcore.load`` cannot read: truncated, corrupt,
    not a checkpoint, or describing data it does not hold (``RuntimeError``,
    as torch's ``PytorchStreamReader`` errors)."""

    __module__ = "ptcore.serialization"      # its public home


class BadTensor(CheckpointError):
    """A tensor record in a file does not fit its storage (corrupt file)."""


class _SerializationLocal(threading.local):
    """Per-thread serialization state (torch's ``_serialization_tls``)."""

    def __init__(self):
        super().__init__()
        self.skip_data = False
        self.materialize_fake_tensors = False


tls = _SerializationLocal()


def parameter_class():
    """``ptcore.nn.Parameter`` (None while ``ptcore.nn`` cannot be imported)."""
    try:
        from ptcore.nn.parameter import Parameter   # lazy: ptcore.nn sits above serialization
    except ImportError:
        return None
    return Parameter


def storage_view(st):
    """A uint8 NumPy array over a storage's bytes (a host copy for device storages)."""
    n = st.nbytes()
    if n == 0:
        return np.empty(0, dtype=np.uint8)
    flat = _C._tensor_from_storage(st, ptcore.uint8, [n], [1], 0)
    if st.device.type != "cpu":
        flat = flat.to("cpu")
    return flat.numpy()


def storage_payload(st):
    """What a storage's archive member holds: its bytes, or (within
    ``skip_data``) its size, written as that many zero bytes."""
    return st.nbytes() if tls.skip_data else storage_view(st)


def meta_storage(nbytes, what="storage"):
    """A meta storage of ``nbytes`` bytes, made by the meta runtime."""
    if type(nbytes) is not builtins.int or not 0 <= nbytes < 1 << 62:
        raise CheckpointError(f"{what}: implausible size {nbytes!r} bytes for a meta storage")
    return ptcore.empty(nbytes, dtype=ptcore.uint8, device="meta").untyped_storage()


def restore_at(arch, restore, storage, location, what):
    """``restore(storage, location)`` (the load's ``map_location``), with a
    location it cannot use reported as an error of the file ``arch``."""
    try:
        return restore(storage, location)
    except RuntimeError as e:
        if str(e).startswith("ptcore.load: "):
            raise
        raise arch.error(f"{what} saved at location {location!r}: {e}") from None


def check_tensor_geometry(what, nbytes, dt, shape, stride, offset):
    """Validate numbers read from a file before a tensor is built over a storage
    of ``nbytes`` bytes (Python ints: no overflow); returns lists of ints."""
    def _intlist(v, name):
        if not isinstance(v, (list, tuple)) or not builtins.all(type(x) is builtins.int for x in v):
            raise BadTensor(f"{what}: {name} must be a list of ints, got {v!r}")
        return list(v)
    shape = _intlist(shape, "shape")
    stride = _intlist(stride, "stride")
    if type(offset) is not builtins.int:
        raise BadTensor(f"{what}: storage offset must be an int, got {offset!r}")
    if len(shape) != len(stride):
        raise BadTensor(f"{what}: shape {shape} and stride {stride} differ in length")
    if len(shape) > MAX_DIMS:
        raise BadTensor(f"{what}: {len(shape)} dimensions (ptcore supports at most {MAX_DIMS})")
    if builtins.any(s < 0 for s in shape):
        raise BadTensor(f"{what}: negative size in shape {shape}")
    if builtins.any(s < 0 for s in stride):
        raise BadTensor(f"{what}: negative stride in {stride} (not supported)")
    if offset < 0:
        raise BadTensor(f"{what}: negative storage offset {offset}")
    if builtins.any(v >= 1 << 62 for v in shape + stride):
        raise BadTensor(f"{what}: shape {shape} or stride {stride} is too large")
    numel = 1
    for s in shape:
        numel *= s
    if numel > 0:
        need = (offset + 1 + builtins.sum((s - 1) * k for s, k in zip(shape, stride))) * dt.itemsize
        if need > nbytes:
            raise BadTensor(
                f"{what}: sizes {shape}, strides {stride}, storage offset {offset} and itemsize "
                f"{dt.itemsize} need a storage of {need} bytes, but the storage has {nbytes} bytes")
    if numel * dt.itemsize >= 1 << 62:
        raise BadTensor(f"{what}: shape {shape} is too large")
    return shape, stride, offset


def build_tensor(what, storage, dt, shape, stride, offset):
    """A tensor over ``storage`` after :func:`check_tensor_geometry`."""
    shape, stride, offset = check_tensor_geometry(what, storage.nbytes(), dt, shape, stride,
                                                  offset)
    if builtins.any(s == 0 for s in shape):
        offset = builtins.min(offset, storage.nbytes() // dt.itemsize)
    return _C._tensor_from_storage(storage, dt, shape, stride, offset)
