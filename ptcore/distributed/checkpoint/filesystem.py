"""Checkpoints in a directory: a JSON ``.metadata`` index plus per-rank data files of raw
tensor bytes (``__<rank>_<n>.distcp``).

The format is ptcore's own (torch pickles its metadata; ptcore does not, so reading a
checkpoint never runs code from it): tensors are stored as their little-endian bytes,
C-contiguous, and the index records each tensor's dtype, shape, file, offset and length;
non-tensor values are stored in the index itself as JSON."""
import json
import os
import warnings

import numpy as np

import ptcore
import ptcore.distributed.checkpoint._values as _values
from ptcore.distributed.checkpoint.metadata import (
    BytesStorageMetadata, ChunkStorageMetadata, Metadata, TensorProperties,
    TensorStorageMetadata,
)

__all__ = ["FileSystemReader", "FileSystemWriter"]

METADATA_FILE = ".metadata"
_FORMAT = "ptcore.distributed.checkpoint"
_VERSION = 1


def _tensor_bytes(t):
    """The C-contiguous bytes of ``t`` (on the CPU) as a NumPy uint8 array."""
    flat = t.detach().cpu().contiguous().reshape(-1)
    return np.ascontiguousarray(flat.view(ptcore.uint8).numpy())


def metadata_from_items(items):
    """The :class:`Metadata` of an index ``{key: {"tensor": record} | {"value": json}}``;
    its ``storage_data`` maps each tensor's key to ``(file, offset, nbytes)``."""
    md, storage = {}, {}
    for key, item in items.items():
        if "tensor" in item:
            rec = item["tensor"]
            size = ptcore.Size(rec["shape"])
            md[key] = TensorStorageMetadata(
                TensorProperties(_values.dtype_by_name(rec["dtype"]), ptcore.strided),
                size, [ChunkStorageMetadata((0,) * len(size), tuple(size))])
            storage[key] = (rec["file"], rec["offset"], rec["nbytes"])
        else:
            md[key] = BytesStorageMetadata()
    return Metadata(md, storage_data=storage)


class FileSystemWriter:
    """Write a checkpoint into the directory ``path`` (created when missing).

    Args:
        path: the checkpoint directory.
        single_file_per_rank: one data file per rank (default) instead of one per tensor.
        sync_files: ``fsync`` every file before the checkpoint is declared complete.
        thread_count, per_thread_copy_ahead: accepted for torch compatibility; ptcore
            writes from one thread.
        cache_staged_state_dict: accepted for torch compatibility (ptcore's
            :func:`~ptcore.distributed.checkpoint.async_save` saves synchronously and
            stages nothing).
        overwrite: when False, saving into a directory that already holds a checkpoint
            raises ``RuntimeError`` (reported as a
            :class:`~ptcore.distributed.checkpoint.CheckpointException`); when True (the
            default) it warns and overwrites.
    """

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True):
        if int(thread_count) < 1:
            raise ValueError(f"thread_count must be at least 1, got {thread_count}")
        self.path = os.fspath(path)
        self.single_file_per_rank = bool(single_file_per_rank)
        self.sync_files = bool(sync_files)
        self.thread_count = int(thread_count)
        self.per_thread_copy_ahead = per_thread_copy_ahead
        self.cache_staged_state_dict = bool(cache_staged_state_dict)
        self.overwrite = bool(overwrite)

    def reset(self, checkpoint_id=None):
        """Point the writer at another directory (when ``checkpoint_id`` is given)."""
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        """Whether ``checkpoint_id`` can name a directory on the local file system."""
        return isinstance(checkpoint_id, (str, os.PathLike)) and bool(os.fspath(checkpoint_id))

    # -- used by ptcore.distributed.checkpoint.save -----------------------------------
    def _prepare(self):
        os.makedirs(self.path, exist_ok=True)
        if os.path.exists(os.path.join(self.path, METADATA_FILE)):
            if not self.overwrite:
                raise RuntimeError(f"Checkpoint already exists in {self.path!r} and "
                                   f"overwrite=False.")
            warnings.warn(f"Detected an existing checkpoint in {self.path}, overwriting "
                          f"since overwrite=True.", stacklevel=4)

    def _write(self, rank, tensors):
        """Write ``[(key, tensor)]`` for ``rank``; ``{key: record}`` of where each went."""
        records = {}
        handle, name = None, None
        try:
            for i, (key, t) in enumerate(tensors):
                if handle is None or not self.single_file_per_rank:
                    if handle is not None:
                        self._close(handle)
                    name = f"__{rank}_{i if not self.single_file_per_rank else 0}.distcp"
                    handle = open(os.path.join(self.path, name), "wb")
                data = _tensor_bytes(t)
                records[key] = {"dtype": _values.dtype_name(t.dtype),
                                "shape": [int(s) for s in t.shape], "file": name,
                                "offset": handle.tell(), "nbytes": int(data.nbytes)}
                handle.write(memoryview(data))
        finally:
            if handle is not None:
                self._close(handle)
        return records

    def _close(self, handle):
        handle.flush()
        if self.sync_files:
            os.fsync(handle.fileno())
        handle.close()

    def _finish(self, items):
        """Write the index (``{key: {"tensor": record} | {"value": json}}``) atomically."""
        doc = {"format": _FORMAT, "version": _VERSION, "items": items}
        final = os.path.join(self.path, METADATA_FILE)
        tmp = final + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f)
            f.flush()
            if self.sync_files:
                os.fsync(f.fileno())
        os.replace(tmp, final)


class FileSystemReader:
    """Read a checkpoint that :class:`FileSystemWriter` wrote into the directory ``path``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._index = None

    def reset(self, checkpoint_id=None):
        """Point the reader at another directory (when ``checkpoint_id`` is given)."""
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)
        self._index = None

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        """Whether ``checkpoint_id`` can name a directory on the local file system."""
        return isinstance(checkpoint_id, (str, os.PathLike)) and bool(os.fspath(checkpoint_id))

    def _items(self):
        if self._index is None:
            path = os.path.join(self.path, METADATA_FILE)
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
                raise ValueError(f"{path} is not a ptcore distributed checkpoint index")
            if doc.get("version") != _VERSION:
                raise ValueError(f"{path}: unsupported checkpoint version {doc.get('version')}")
            self._index = doc["items"]
        return self._index

    def read_metadata(self):
        """The checkpoint's :class:`~ptcore.distributed.checkpoint.metadata.Metadata`."""
        return metadata_from_items(self._items())

    # -- used by ptcore.distributed.checkpoint.load -----------------------------------
    def _entry(self, key):
        return self._items().get(key)

    def _read_value(self, item):
        return _values.decode(item["value"])

    def _read_tensor(self, item):
        rec = item["tensor"]
        dtype = _values.dtype_by_name(rec["dtype"])
        shape = [int(s) for s in rec["shape"]]
        name = os.path.basename(rec["file"])
        buf = bytearray(int(rec["nbytes"]))
        with open(os.path.join(self.path, name), "rb") as f:
            f.seek(int(rec["offset"]))
            if f.readinto(buf) != len(buf):
                raise ValueError(f"checkpoint file {name} is truncated")
        raw = ptcore.from_numpy(np.frombuffer(buf, dtype=np.uint8))
        count = 1
        for s in shape:
            count *= s
        if raw.numel() != count * dtype.itemsize:
            raise ValueError(f"checkpoint record for a {dtype} tensor of shape {shape} has "
                             f"{raw.numel()} bytes")
        return raw.view(dtype).reshape(shape)
