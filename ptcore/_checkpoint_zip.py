"""The zip archives of checkpoints: reading members into storages (copied or
memory-mapped, every size checked against the file before anything is
allocated) and writing records laid out byte for byte as torch's
``PyTorchStreamWriter`` (miniz) writes them.

Written records (:class:`RecordWriter`) are *stored* (uncompressed), named
``<archive>/<record>``, and each one's data starts at a multiple of 64 bytes
from the start of the archive: the local header's extra field ends with a
field of id ``b"FB"`` padded with ``b"Z"`` bytes.  Local headers carry no
sizes (general purpose flag bit 3); a data descriptor follows every
non-empty record, and the archive always ends with a ZIP64 end of central
directory record, its locator and the classic end record.  Since torch's
loader can compute storage offsets from this layout alone
(``torch.utils.serialization.config.load.calculate_storage_offsets``), the
layout is kept exactly.
"""
import builtins
import hashlib
import io
import mmap as _mmap_mod
import os
import pickle
import struct
import zipfile
import zlib

import numpy as np

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_tensors import CheckpointError, tls

__all__ = ["Archive", "open_archive", "close_archive", "RecordWriter", "is_path", "file_name",
           "EmptyCheckpoint", "NotACheckpoint"]

ALIGN = 64
_CHUNK = 1 << 24
# deflate cannot expand data more than 1032-fold: a member declaring more is a zip bomb
_MAX_DEFLATE_RATIO = 1032


def is_path(f):
    return isinstance(f, (str, os.PathLike))


def file_name(f):
    if is_path(f):
        return os.fsdecode(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__} object>"


class EmptyCheckpoint(CheckpointError, EOFError):
    """An empty file given to load: torch.load raises EOFError there (an
    interrupted save leaves one), so ``except EOFError`` catches it as it
    catches torch's."""


class NotACheckpoint(CheckpointError, pickle.UnpicklingError):
    """A file that is no zip archive given to load: torch.load unpickles it
    as its legacy format and raises an UnpicklingError."""


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

class Archive:
    """An open zip archive plus (optionally) a memory map of its file."""

    def __init__(self, zf, name, mm=None, size=None):
        self.zf = zf
        self.name = name
        self.mm = mm
        self.size = size
        self._mm_array = None
        self._names = None

    def error(self, msg):
        return CheckpointError(f"ptcore.load: {self.name}: {msg}")

    def has(self, member):
        if self._names is None:
            self._names = builtins.set(self.zf.namelist())
        return member in self._names

    def info(self, member):
        try:
            return self.zf.getinfo(member)
        except KeyError:
            raise self.error(f"archive member {member!r} is missing (truncated or corrupt "
                             "file?)") from None

    def _check_size(self, info, member):
        """Refuse a member whose declared size its bytes in the file cannot hold,
        before anything of that size is allocated."""
        if info.compress_type == zipfile.ZIP_STORED:
            if self.size is not None and info.header_offset + 30 + info.file_size > self.size:
                raise self.error(f"archive member {member!r} declares {info.file_size} bytes, "
                                 f"more than the file's {self.size} bytes (truncated or "
                                 "corrupt file)")
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            if info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 64:
                raise self.error(f"archive member {member!r} declares {info.file_size} bytes "
                                 f"from {info.compress_size} compressed bytes, which deflate "
                                 "cannot produce (a zip bomb or a corrupt file)")
        else:
            raise self.error(f"archive member {member!r} uses zip compression method "
                             f"{info.compress_type}; checkpoints are stored or deflated")

    def read_small(self, member, limit=1 << 30):
        info = self.info(member)
        if info.file_size > limit:
            raise self.error(f"archive member {member!r} is implausibly large ({info.file_size} "
                             "bytes)")
        self._check_size(info, member)
        try:
            return self.zf.read(info)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError,
                zlib.error) as e:
            raise self.error(f"cannot read archive member {member!r} ({e}); the file is "
                             "truncated or corrupt") from None

    def read_storage(self, member, nbytes, exact):
        """A new Storage holding the first ``nbytes`` bytes of ``member``."""
        info = self.info(member)
        if (info.file_size != nbytes) if exact else (info.file_size < nbytes):
            raise self.error(f"archive member {member!r} holds {info.file_size} bytes, expected "
                             f"{nbytes}{'' if exact else ' or more'}")
        self._check_size(info, member)
        if nbytes == 0:
            return _C.Storage(0)
        if tls.skip_data:      # the layout only: zeros, the bytes unread
            return ptcore.zeros(nbytes, dtype=ptcore.uint8).untyped_storage()
        if self.mm is not None:
            return self._map_storage(info, member, nbytes)
        st = _C.Storage(nbytes)
        view = _C._tensor_from_storage(st, ptcore.uint8, [nbytes], [1], 0).numpy()
        pos = 0
        try:
            with self.zf.open(info) as src:
                while pos < nbytes:
                    n = src.readinto(view[pos:pos + builtins.min(_CHUNK, nbytes - pos)])
                    if not n:
                        break
                    pos += n
                if pos == nbytes and info.file_size == nbytes:
                    src.read(1)     # reach the member's end: zipfile checks its CRC there
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError,
                zlib.error) as e:
            raise self.error(f"cannot read archive member {member!r} ({e}); the file is "
                             "truncated or corrupt") from None
        if pos != nbytes:
            raise self.error(f"archive member {member!r} ended after {pos} of {nbytes} bytes; "
                             "the file is truncated or corrupt")
        return st

    def _map_storage(self, info, member, nbytes):
        if info.compress_type != zipfile.ZIP_STORED:
            raise self.error(f"archive member {member!r} is compressed and cannot be "
                             "memory-mapped; load it with mmap=False")
        mm = self.mm
        h = info.header_offset
        if h < 0 or h + 30 > len(mm) or mm[h:h + 4] != b"PK\x03\x04":
            raise self.error(f"bad local header for archive member {member!r}")
        name_len, extra_len = struct.unpack("<HH", mm[h + 26:h + 30])
        start = h + 30 + name_len + extra_len
        if start + nbytes > len(mm):
            raise self.error(f"archive member {member!r} runs past the end of the file "
                             "(truncated file?)")
        if self._mm_array is None:
            self._mm_array = np.frombuffer(mm, dtype=np.uint8)
        arr = self._mm_array[start:start + nbytes]
        return _C._storage_from_pointer(arr.ctypes.data, nbytes, arr)


class LegacySource:
    """A checkpoint in torch.save's legacy (non-zip) format, open for reading
    (``ptcore._torch_legacy_checkpoint`` reads it): the file object positioned
    at its first pickle, its name (for messages) and its size."""

    def __init__(self, fh, name, size):
        self.fh = fh
        self.name = name
        self.size = size
        self.mm = None

    def error(self, msg):
        return CheckpointError(f"ptcore.load: {self.name}: {msg}")


class MMapReader(io.RawIOBase):
    """A seekable read-only file over a memory map (no copies)."""

    def __init__(self, mm):
        self._mv = memoryview(mm)
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, pos, whence=0):
        if whence == 0:
            self._pos = pos
        elif whence == 1:
            self._pos += pos
        else:
            self._pos = len(self._mv) + pos
        if self._pos < 0:
            self._pos = 0
            raise OSError("negative seek position")
        return self._pos

    def readinto(self, b):
        n = builtins.max(0, builtins.min(len(b), len(self._mv) - self._pos))
        b[:n] = self._mv[self._pos:self._pos + n]
        self._pos += n
        return n

    def read(self, n=-1):
        end = len(self._mv) if n is None or n < 0 else builtins.min(len(self._mv),
                                                                     self._pos + n)
        data = bytes(self._mv[self._pos:end]) if end > self._pos else b""
        self._pos = builtins.max(self._pos, end)
        return data

    def close(self):
        self._mv.release()
        super().close()


def open_archive(f, mmap):
    """``(archive, kind)``: kind is ``'ptcore'`` (ptcore's own format, version 1),
    ``('torch', prefix)`` (torch.save's zip format under ``prefix``) or
    ``'legacy'`` (torch.save's legacy format: the archive is a :class:`LegacySource`)."""
    name = file_name(f)
    mm = None
    if is_path(f):
        fh = open(f, "rb")
        if mmap and os.fstat(fh.fileno()).st_size > 0:
            try:
                mm = _mmap_mod.mmap(fh.fileno(), 0, access=_mmap_mod.ACCESS_COPY)
            finally:
                fh.close()
            fh = MMapReader(mm)   # zipfile reads the directory without copying the file
        try:
            return _open_zip(fh, name, mm)
        except BaseException:
            fh.close()
            raise
    if mmap:
        raise ValueError("ptcore.load: mmap=True needs a file name (str or os.PathLike), "
                         f"not a {type(f).__name__}")
    if not (hasattr(f, "read") and hasattr(f, "seek")):
        raise TypeError("ptcore.load: expected a file name (str or os.PathLike) or a binary "
                        f"file-like object with read() and seek(), got {type(f).__name__}")
    fh = f
    try:
        seekable = f.seekable() if hasattr(f, "seekable") else True
    except Exception:  # noqa: BLE001 - odd file objects
        seekable = False
    if not seekable:
        fh = io.BytesIO(f.read())
    return _open_zip(fh, name, mm)


def close_archive(arch, f):
    if type(arch) is LegacySource:
        if is_path(f):
            arch.fh.close()
        return
    fp = arch.zf.fp
    arch.zf.close()
    if is_path(f) and fp is not None:
        fp.close()


def _open_zip(fh, name, mm):
    start = fh.tell()
    magic = fh.read(4)
    if not isinstance(magic, bytes):
        raise TypeError(f"ptcore.load: {name}: the file object must be opened in binary mode")
    size = fh.seek(0, 2)
    fh.seek(start)
    if len(magic) == 0:
        raise EmptyCheckpoint(f"ptcore.load: {name} is empty (0 bytes): not a checkpoint")
    if magic[:1] == b"\x80":          # a pickle: torch.save's legacy (pre-1.6) format
        if mm is not None:
            raise CheckpointError(
                f"ptcore.load: {name}: mmap can only be used with files saved with "
                "torch.save(_use_new_zipfile_serialization=True); it is in the legacy format")
        return LegacySource(fh, name, size), "legacy"
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise NotACheckpoint(f"ptcore.load: {name} is not a ptcore or PyTorch checkpoint (it "
                               f"does not start with a zip header; first bytes {magic!r})")
    try:
        zf = zipfile.ZipFile(fh, "r")
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error,
            NotImplementedError, OverflowError) as e:
        raise CheckpointError(f"ptcore.load: {name} is not a valid checkpoint: the zip archive "
                              f"is truncated or corrupt ({e})") from None
    arch = Archive(zf, name, mm, size)
    names = zf.namelist()
    if len(names) != len(builtins.set(names)):
        # readers disagree on which of two same-named members counts (Python's zipfile
        # takes the last, torch's reader the first): no honest writer makes one
        seen = builtins.set()
        dup = next(n for n in names if n in seen or seen.add(n))
        zf.close()
        raise CheckpointError(f"ptcore.load: {name} is not a valid checkpoint: the archive "
                              f"member {dup!r} occurs more than once")
    if "ptcore/data.json" in names:
        return arch, "ptcore"
    if builtins.any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
        zf.close()
        raise CheckpointError(f"ptcore.load: {name} is a TorchScript archive (torch.jit.save); "
                              "ptcore.load reads checkpoints written by torch.save only")
    pkls = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkls) == 1:
        return arch, ("torch", pkls[0][:-len("data.pkl")])
    zf.close()
    # (torch unpickles nothing there: its UnpicklingError)
    raise NotACheckpoint(f"ptcore.load: {name} is a zip archive but not a checkpoint: it has "
                         "neither <archive>/data.pkl nor ptcore/data.json")


# ---------------------------------------------------------------------------
# writing, as torch's PyTorchStreamWriter (miniz) does
# ---------------------------------------------------------------------------

_U32 = 0xFFFFFFFF
_LOCAL, _CENTRAL, _DESCRIPTOR = 0x04034B50, 0x02014B50, 0x08074B50
_EOCD64, _EOCD64_LOCATOR, _EOCD = 0x06064B50, 0x07064B50, 0x06054B50


class RecordWriter:
    """Write the records of one archive to a binary stream (never seeks, so
    unseekable streams work); offsets count from where writing started."""

    def __init__(self, fh, archive_name):
        self.fh = fh
        self.prefix = archive_name + "/"
        self.pos = 0
        self.entries = []           # (name bytes, flags, crc, size, offset)
        self._names_hash = hashlib.blake2b(digest_size=8)
        self._crc_hash = hashlib.blake2b(digest_size=8)

    def _put(self, data):
        self.fh.write(data)
        self.pos += len(data) if isinstance(data, bytes) else data.nbytes

    def write_record(self, record, data):
        """One record: ``data`` is bytes, a NumPy array, or an int (that many
        zero bytes, for ``skip_data``)."""
        name = (self.prefix + record).encode("utf-8")
        if isinstance(data, builtins.int):
            size = data
        elif isinstance(data, np.ndarray):
            data = memoryview(np.ascontiguousarray(data)).cast("B")
            size = data.nbytes
        else:
            size = len(data)
        cursor = self.pos
        zip64_fields = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                       (struct.pack("<Q", cursor) if cursor >= _U32 else b"")
        extra = struct.pack("<HH", 1, len(zip64_fields)) + zip64_fields if zip64_fields else b""
        pad = -(cursor + 30 + len(name) + len(extra) + 4) % ALIGN
        extra += b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800      # UTF-8 names; sizes in a data descriptor
        self._put(struct.pack("<IHHHHHIIIHH", _LOCAL, 0, flags, 0, 0, 0, 0, 0, 0, len(name),
                              len(extra)) + name + extra)
        crc = 0
        if isinstance(data, builtins.int):
            zeros = bytes(builtins.min(_CHUNK, size))
            for start in range(0, size, _CHUNK):
                chunk = zeros[:builtins.min(_CHUNK, size - start)]
                crc = zlib.crc32(chunk, crc)
                self._put(chunk)
        elif size:
            crc = zlib.crc32(data)
            self._put(data if isinstance(data, (bytes, memoryview)) else bytes(data))
        if size:
            if zip64_fields:
                self._put(struct.pack("<IIQQ", _DESCRIPTOR, crc, size, size))
            else:
                self._put(struct.pack("<IIII", _DESCRIPTOR, crc, size, size))
        self.entries.append((name, flags, crc, size, cursor))
        self._names_hash.update(name + b"\0")
        self._crc_hash.update(struct.pack("<I", crc))

    def finish(self):
        """The ``version`` and ``.data/serialization_id`` records, then the
        central directory and the end records."""
        self.write_record("version", b"3\n")
        names_id = int.from_bytes(self._names_hash.digest(), "little")
        crc_id = int.from_bytes(self._crc_hash.digest(), "little")
        self.write_record(".data/serialization_id", f"{names_id:020d}{crc_id:020d}".encode())
        cd_start = self.pos
        for name, flags, crc, size, offset in self.entries:
            fields = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                     (struct.pack("<Q", offset) if offset >= _U32 else b"")
            extra = struct.pack("<HH", 1, len(fields)) + fields if fields else b""
            self._put(struct.pack(
                "<IHHHHHHIIIHHHHHII", _CENTRAL, 0, 45 if fields else 0, flags, 0, 0, 0, crc,
                builtins.min(size, _U32), builtins.min(size, _U32), len(name), len(extra), 0, 0,
                0, 0, builtins.min(offset, _U32)) + name + extra)
        cd_size = self.pos - cd_start
        n = len(self.entries)
        eocd64 = self.pos
        self._put(struct.pack("<IQHHIIQQQQ", _EOCD64, 44, 0x031E, 45, 0, 0, n, n, cd_size,
                              cd_start))
        self._put(struct.pack("<IIQI", _EOCD64_LOCATOR, 0, eocd64, 1))
        self._put(struct.pack("<IHHHHIIH", _EOCD, 0, 0, builtins.min(n, 0xFFFF),
                              builtins.min(n, 0xFFFF), builtins.min(cd_size, _U32),
                              builtins.min(cd_start, _U32), 0))
