"""``torch.PyTorchFileReader`` and ``torch.PyTorchFileWriter``: the records of an archive
in ``torch.save``'s zip layout, by name (``data.pkl``, ``data/0``, ``version`` ...), for
libraries that read or write checkpoints record by record (Lightning annotates with the
reader and reads pickles through it).

Both stand on :mod:`ptcore._checkpoint_zip`: a record is read with its size checked against
the file before anything is allocated, and written stored and 64-byte aligned as torch's
miniz writer does, so ``torch.load`` reads what the writer wrote.  Errors are
``RuntimeError``, as torch's.
"""
import builtins
import io
import zipfile
import zlib

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_tensors import CheckpointError
from ptcore._checkpoint_zip import Archive, RecordWriter, file_name, is_path

__all__ = ["PyTorchFileReader", "PyTorchFileWriter"]

_READ_ERRORS = (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError,
                zlib.error, OverflowError)


def _storage_dtype(dtype):
    """The element type of ``get_storage_from_record``'s ``dtype``: a dtype, or a storage
    class (``UntypedStorage`` is bytes, a legacy ``FloatStorage`` its dtype)."""
    if isinstance(dtype, _C.dtype):
        return dtype
    if dtype is ptcore.UntypedStorage:
        return ptcore.uint8
    legacy = getattr(dtype, "dtype", None)
    if isinstance(legacy, _C.dtype):
        return legacy
    raise TypeError(f"get_storage_from_record(): dtype must be a torch.dtype or a storage "
                    f"class, not {type(dtype).__name__}")


class PyTorchFileReader:
    """The records of a zip archive written by ``torch.save`` or :class:`PyTorchFileWriter`.

    ``PyTorchFileReader(f)``: ``f`` is a file name or a binary file object with ``read``
    and ``seek``.  Every record lies under one top-level folder, the archive's name;
    records are named without it.
    """

    def __init__(self, f):
        if is_path(f):
            fh, self._own = open(f, "rb"), True
        elif hasattr(f, "read") and hasattr(f, "seek"):
            fh, self._own = f, False
        else:
            raise TypeError(f"PyTorchFileReader(): expected a file name or a binary file object, "
                            f"got {type(f).__name__}")
        name = file_name(f)
        try:
            size = fh.seek(0, io.SEEK_END)
            fh.seek(0)
            zf = zipfile.ZipFile(fh, "r")
        except _READ_ERRORS as e:
            if self._own:
                fh.close()
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive {name}: {e}") \
                from None
        names = zf.namelist()
        prefix = names[0].split("/", 1)[0] + "/" if names else ""
        if not names or builtins.any(not n.startswith(prefix) or n == prefix for n in names):
            zf.close()
            if self._own:
                fh.close()
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive {name}: its "
                               "records do not all lie under one top-level folder")
        self._fh = fh
        self._prefix = prefix
        self._records = [n[len(prefix):] for n in names]
        self._arch = Archive(zf, name, None, size)

    def _member(self, name):
        if not isinstance(name, str):
            raise TypeError(f"record name must be a str, not {type(name).__name__}")
        if not self._arch.has(self._prefix + name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found "
                               f"in {self._arch.name}")
        return self._prefix + name

    def get_all_records(self):
        """The records' names, in the archive's order."""
        return list(self._records)

    def has_record(self, name):
        return self._arch.has(self._prefix + name)

    def get_record_size(self, name):
        return self._arch.info(self._member(name)).file_size

    def get_record(self, name):
        """The record's bytes."""
        try:
            return self._arch.read_small(self._member(name), limit=builtins.max(self._arch.size, 0))
        except CheckpointError as e:
            raise RuntimeError(str(e)) from None

    def get_storage_from_record(self, name, numel, dtype):
        """An empty tensor of ``dtype`` whose storage holds the record's first
        ``numel`` elements (torch's form: ``.untyped_storage()`` is what callers use)."""
        dt = _storage_dtype(dtype)
        if isinstance(numel, builtins.bool) or not isinstance(numel, builtins.int) or numel < 0:
            raise RuntimeError(f"get_storage_from_record(): numel must be an int >= 0, got "
                               f"{numel!r}")
        nbytes = numel * dt.itemsize
        try:
            st = self._arch.read_storage(self._member(name), nbytes, exact=False)
        except CheckpointError as e:
            raise RuntimeError(str(e)) from None
        return _C._tensor_from_storage(st, dt, [0], [1], 0)

    def serialization_id(self):
        """The archive's ``.data/serialization_id`` record as text ("" when it has none)."""
        if not self.has_record(".data/serialization_id"):
            return ""
        return self.get_record(".data/serialization_id").decode("ascii", "replace")

    def close(self):
        self._arch.zf.close()
        if self._own:
            self._fh.close()

    def __del__(self):
        arch = getattr(self, "_arch", None)
        if arch is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


class PyTorchFileWriter:
    """Writes records into a zip archive in ``torch.save``'s layout.

    ``PyTorchFileWriter(f)``: a file name (the archive is named after its base name, as
    torch) or a binary file object with ``write``.  ``write_record(name, data, size)``
    adds a record (``data`` bytes or a tensor/storage's bytes); ``write_end_of_file()``
    adds the ``version`` and ``.data/serialization_id`` records and the zip directory.
    """

    def __init__(self, f, compute_crc32=True, storage_alignment=64):
        if is_path(f):
            path = file_name(f)
            base = path.rsplit("/", 1)[-1]
            self._archive = base.rsplit(".", 1)[0] if "." in base else base
            self._fh, self._own = open(path, "wb"), True
        elif hasattr(f, "write"):
            self._archive, self._fh, self._own = "archive", f, False
        else:
            raise TypeError(f"PyTorchFileWriter(): expected a file name or a binary file object, "
                            f"got {type(f).__name__}")
        self._writer = RecordWriter(self._fh, self._archive)
        self._written = builtins.set()
        self._ended = False

    def archive_name(self):
        return self._archive

    def get_all_written_records(self):
        return builtins.set(self._written)

    def set_min_version(self, version):
        """Accepted (ptcore writes format version 3)."""

    def serialization_id(self):
        return ""

    def write_record(self, name, data, size):
        """Add record ``name`` holding the first ``size`` bytes of ``data``."""
        if self._ended:
            raise RuntimeError("PyTorchFileWriter: write_record after write_end_of_file")
        if name in self._written:
            raise RuntimeError(f"PyTorchFileWriter: record {name!r} was already written")
        if isinstance(data, _C._TensorBase):
            data = data.untyped_storage()
        if isinstance(data, _C.Storage):
            data = _C._tensor_from_storage(data, ptcore.uint8, [data.nbytes()], [1], 0).numpy()
        view = memoryview(data).cast("B")
        if size < 0 or size > view.nbytes:
            raise RuntimeError(f"PyTorchFileWriter: size {size} for a record of {view.nbytes} "
                               "bytes")
        self._writer.write_record(name, bytes(view[:size]))
        self._written.add(name)

    def write_end_of_file(self):
        if self._ended:
            return
        self._ended = True
        if "byteorder" not in self._written:
            self._writer.write_record("byteorder", b"little")
        self._writer.finish()
        self._fh.flush()
        if self._own:
            self._fh.close()
