"""Checkpoints: ``ptcore.save`` and ``ptcore.load``.

``ptcore.save(obj, f)`` writes nested containers of tensors, numbers and
strings (state dicts, optimizer states, training checkpoints);
``ptcore.load(f)`` reads them back, and also reads checkpoints written by
``torch.save`` (its zip format) without PyTorch installed.  Loading never
executes code from the file: the ptcore format holds no code at all, and
PyTorch's pickles are read by a restricted unpickler that accepts only
tensors, storages and plain containers and refuses anything else by name.

The ptcore checkpoint format (version 1)
----------------------------------------
A ZIP archive whose members are all *stored* (not compressed):

``ptcore/version``
    The format version as ASCII decimal digits and a newline (``b"1\\n"``).
    It is the first member, so every checkpoint starts with
    ``b"PK\\x03\\x04"`` and has the name ``ptcore/version`` at byte 30.
``ptcore/data.json``
    UTF-8 JSON object ``{"format": "ptcore", "version": 1, "byteorder":
    "little", "storages": [...], "tensors": [...], "root": <value>}``.
``ptcore/storages/<k>``
    The raw bytes (little endian) of storage ``k``, one member per storage.
    Each member's data starts at a multiple of 64 bytes from the start of
    the archive (the local header's extra field is padded with a field of
    id ``0x5450``), so it can be memory-mapped (``load(..., mmap=True)``).

``storages[k]`` is ``{"key": "<k>", "nbytes": int, "location": str}``
(``location`` is the device the storage was saved from, e.g. ``"cpu"`` or
``"cuda:0"``; ``map_location`` rewrites it at load time).
``tensors[i]`` is ``{"storage": k, "dtype": "float32", "shape": [...],
"stride": [...], "offset": int, "requires_grad": bool, "parameter": bool}``
(strides and offset in elements).  Tensors that shared a storage when saved
(views) share one storage again after loading, as with ``torch.save``; a
tensor object that appears several times in ``obj`` is loaded as one object.

Values in ``root`` (and nested) are JSON ``null``/``true``/``false``,
strings, integers, finite floats (written so they read back bit for bit)
and lists (Python ``list``), or objects tagged by the key ``"$"``:

==============  ======================================================
``"$"``         other keys
==============  ======================================================
``tensor``      ``id``: index into ``tensors``
``storage``     ``storage``: index into ``storages`` (a saved Storage)
``float``       ``v``: ``"nan"``, ``"inf"`` or ``"-inf"``
``complex``     ``re``, ``im``: floats as above
``tuple``       ``items``: list of values
``set``         ``items`` (``frozenset`` in files of older versions;
                now pickled, as ``weights_only`` refuses it)
``dict``        ``items``: list of ``[key, value]`` pairs, in order; keys
                are any of these values that are hashable (str, int, float,
                bool, None, tuple ...)
``odict``       as ``dict``, for ``collections.OrderedDict``, with
                ``attrs``: ``{name: value}`` (e.g. a state dict's
                ``_metadata``)
``bytes``       ``b64``: base64 text (also ``bytearray``)
``dtype``       ``name``: e.g. ``"bfloat16"``
``device``      ``name``: e.g. ``"cuda:0"``
``size``        ``items``: ints (``ptcore.Size``)
``sparse``      ``layout``: ``"sparse_coo"``, ``"sparse_csr"`` or
                ``"sparse_csc"``; ``parts``: its index and value tensors
                (COO: indices, values; CSR: crow_indices, col_indices,
                values; CSC: ccol_indices, row_indices, values);
                ``size``: ints; ``coalesced``: bool (COO)
==============  ======================================================

Anything else (arbitrary class instances, functions, NumPy arrays) is
pickled as ``torch.save`` does, and ``load`` reads it back only with
``weights_only=False`` or allowlisted globals: the format itself is data
only.  Every number read from the JSON (dtypes, shapes, strides,
offsets, byte counts) is checked against the storages before a tensor is
built, so a corrupt or malicious file raises ``RuntimeError`` and never
reads out of bounds.

Reading ``torch.save`` files
----------------------------
PyTorch's zip layout is ``<archive>/data.pkl`` (a pickle),
``<archive>/byteorder``, ``<archive>/version`` and one member
``<archive>/data/<key>`` per storage.  The pickle is run by a restricted
unpickler: globals are resolved from an explicit allowlist (tensor and
parameter rebuild functions, typed storage classes, dtypes, ``torch.Size``,
``torch.device``, ``collections.OrderedDict``, ``set``, ``complex``,
``bytearray`` and ``_codecs.encode`` for bytes; ``frozenset`` and ``slice``
only when allowlisted with :func:`add_safe_globals`, as in torch),
each mapped to a ptcore implementation; calls, object creation and
``BUILD`` are allowed only on those; anything else raises
``pickle.UnpicklingError`` naming ``module.name``.  PyTorch's legacy
(pre-1.6, non-zip) format and TorchScript archives are refused with a
clear message.
"""
import base64
import builtins
import collections
import contextlib
import enum
import io
import json
import math
import mmap as _mmap_mod
import os
import pickle
import shutil
import struct
import sys
import tempfile
import threading
import warnings
import zipfile

import numpy as np

import ptcore
from ptcore import _tensor as _C
from ptcore import _pickle_checkpoint as _pc
from ptcore._pickle_checkpoint import (  # noqa: F401
    add_safe_globals, clear_safe_globals, get_safe_globals, get_unsafe_globals_in_checkpoint,
    safe_globals,
)

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "get_unsafe_globals_in_checkpoint", "safe_globals", "skip_data",
           "default_restore_location", "location_tag", "normalize_storage_type", "register_package",
           "SourceChangeWarning", "mkdtemp", "LoadEndianness", "get_default_load_endianness",
           "set_default_load_endianness"]

FORMAT_VERSION = 1
_ALIGN = 64
_PAD_EXTRA_ID = 0x5450
_MAX_DIMS = 64
_CHUNK = 1 << 24


class _SerializationLocal(threading.local):
    """Per-thread serialization state (torch's ``_serialization_tls``)."""

    def __init__(self):
        super().__init__()
        self.skip_data = False
        self.materialize_fake_tensors = False


_serialization_tls = _SerializationLocal()


class skip_data:
    """Context manager: ``save``/``load`` skip the storages' bytes (torch's
    ``torch.serialization.skip_data``).

    Saving writes every storage's member with its full size but zero bytes in
    place of the data (to be filled in a separate pass); loading builds every
    tensor as the checkpoint describes it with zero-filled storages, without
    reading their bytes.

    Parameters
    ----------
    materialize_fake_tensors : bool, optional
        Accepted as torch's (ptcore has no fake tensors); no effect on loading.

    Examples
    --------
    >>> import io
    >>> buf = io.BytesIO()
    >>> with ptcore.serialization.skip_data():
    ...     ptcore.save(ptcore.ones(2, 3), buf)
    >>> _ = buf.seek(0)
    >>> ptcore.load(buf)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """

    def __init__(self, materialize_fake_tensors: bool = False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = (_serialization_tls.skip_data, _serialization_tls.materialize_fake_tensors)
        _serialization_tls.skip_data = True
        _serialization_tls.materialize_fake_tensors = self.materialize_fake_tensors

    def __exit__(self, type, value, tb):
        _serialization_tls.skip_data, _serialization_tls.materialize_fake_tensors = self._old


def _storage_payload(st):
    """What a storage's archive member holds: its bytes, or (within
    :class:`skip_data`) its size, written as that many zero bytes."""
    return st.nbytes() if _serialization_tls.skip_data else _storage_view(st)

_DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "complex64", "complex128", "complex32", "uint16", "uint32",
                "uint64")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _file_name(f):
    if _is_path(f):
        return os.fsdecode(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__} object>"


def _parameter_class():
    try:
        from ptcore.nn.parameter import Parameter
    except ImportError:
        return None
    return Parameter


def _dtype_by_name(name):
    return _C._dtype_from_name(name)


def _as_location(loc):
    """A location string from a str / ptcore.device / torch.device."""
    if isinstance(loc, str):
        return loc
    if isinstance(loc, ptcore.device):
        return str(loc)
    if hasattr(loc, "type") and hasattr(loc, "index"):   # e.g. torch.device
        return str(loc)
    raise TypeError(f"map_location: expected a str, a device, a dict or a callable, got "
                    f"{type(loc).__name__}")


def _restore_location(storage, location):
    """Move a CPU storage to the device named by ``location`` (as torch's
    ``default_restore_location``)."""
    try:
        dev = ptcore.device(location)
    except (RuntimeError, ValueError, TypeError) as e:
        raise RuntimeError(f"don't know how to restore data location {location!r}: {e}") from None
    if dev.type == "cpu":
        return storage
    if dev.type == "cuda":
        if not ptcore.cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but ptcore.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use ptcore.load with "
                "map_location=ptcore.device('cpu') to map your storages to the CPU.")
        n = storage.nbytes()
        flat = _C._tensor_from_storage(storage, ptcore.uint8, [n], [1], 0)
        return flat.to(dev).untyped_storage()
    raise RuntimeError(f"don't know how to restore data location of storage tagged with "
                       f"{location!r}: ptcore can map storages to 'cpu' and 'cuda' only")


# -- torch.serialization's public helpers (fairseq-style loaders call
# default_restore_location in their map_location; device extensions register packages)

_packages = []   # (priority, tagger, deserializer), sorted by priority


def register_package(priority, tagger, deserializer):
    """Register a device's ``tagger(storage) -> str | None`` (its location tag)
    and ``deserializer(storage, location) -> storage | None`` (the storage on
    that location), tried in increasing ``priority`` before ptcore's own."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda t: t[0])


def location_tag(storage):
    """The location a storage is saved with: ``"cpu"``, ``"cuda:0"`` ..."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    dev = storage.device
    if dev.type == "cpu":
        return "cpu"
    return f"{dev.type}:{0 if dev.index is None else dev.index}"


def default_restore_location(storage, location):
    """``storage`` on the device ``location`` names (``"cpu"``, ``"cuda:1"``): what
    ``load`` does without a ``map_location``; RuntimeError for an unknown location."""
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    return _restore_location(storage, location)


def normalize_storage_type(storage_type):
    """The ptcore class of the storage type named as ``storage_type``."""
    return getattr(ptcore, storage_type.__name__)


class SourceChangeWarning(Warning):
    """torch's warning for a pickled module whose source changed (ptcore
    checkpoints hold no code: it is never raised, only caught)."""


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory, removed on exit."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness = [None]


def get_default_load_endianness():
    """The byte order assumed for a checkpoint that does not record one (None: native)."""
    return _load_endianness[0]


def set_default_load_endianness(endianness):
    """Set the byte order assumed for a checkpoint that does not record one.
    Every checkpoint ptcore reads records it (little endian), so this only
    keeps the setting that ``get_default_load_endianness`` returns."""
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness[0] = endianness


def _make_restore(map_location):
    if map_location is None:
        return default_restore_location if _packages else _restore_location
    if isinstance(map_location, dict):
        table = {_as_location(k) if not isinstance(k, str) else k: _as_location(v)
                 for k, v in map_location.items()}

        def restore(storage, location):
            return _restore_location(storage, table.get(location, location))
        return restore
    if callable(map_location) and not isinstance(map_location, ptcore.device):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                result = _restore_location(storage, location)
            if not isinstance(result, _C.Storage):
                raise RuntimeError(f"map_location callable returned {type(result).__name__}, "
                                   "expected a ptcore storage or None")
            return result
        return restore
    target = _as_location(map_location)
    return lambda storage, location: _restore_location(storage, target)


class _EmptyCheckpoint(RuntimeError, EOFError):
    """An empty file given to load: torch.load raises EOFError there (an
    interrupted save leaves one), so ``except EOFError`` catches it as it
    catches torch's."""


class _NotACheckpoint(RuntimeError, pickle.UnpicklingError):
    """A file that is no zip archive given to load: torch.load unpickles it
    as its legacy format and raises an UnpicklingError."""


class _BadTensor(RuntimeError):
    """A tensor record in a file does not fit its storage (corrupt file)."""


def _check_tensor_geometry(what, nbytes, dt, shape, stride, offset):
    """Validate numbers read from a file before a tensor is built over a storage
    of ``nbytes`` bytes (Python ints: no overflow)."""
    def _intlist(v, name):
        if not isinstance(v, (list, tuple)) or not builtins.all(type(x) is builtins.int for x in v):
            raise _BadTensor(f"{what}: {name} must be a list of ints, got {v!r}")
        return list(v)
    shape = _intlist(shape, "shape")
    stride = _intlist(stride, "stride")
    if type(offset) is not builtins.int:
        raise _BadTensor(f"{what}: storage offset must be an int, got {offset!r}")
    if len(shape) != len(stride):
        raise _BadTensor(f"{what}: shape {shape} and stride {stride} differ in length")
    if len(shape) > _MAX_DIMS:
        raise _BadTensor(f"{what}: {len(shape)} dimensions (ptcore supports at most {_MAX_DIMS})")
    if builtins.any(s < 0 for s in shape):
        raise _BadTensor(f"{what}: negative size in shape {shape}")
    if builtins.any(s < 0 for s in stride):
        raise _BadTensor(f"{what}: negative stride in {stride} (not supported)")
    if offset < 0:
        raise _BadTensor(f"{what}: negative storage offset {offset}")
    if builtins.any(v >= 1 << 62 for v in shape + stride):
        raise _BadTensor(f"{what}: shape {shape} or stride {stride} is too large")
    numel = 1
    for s in shape:
        numel *= s
    if numel > 0:
        need = (offset + 1 + builtins.sum((s - 1) * k for s, k in zip(shape, stride))) * dt.itemsize
        if need > nbytes:
            raise _BadTensor(
                f"{what}: sizes {shape}, strides {stride}, storage offset {offset} and itemsize "
                f"{dt.itemsize} need a storage of {need} bytes, but the storage has {nbytes} bytes")
    if numel * dt.itemsize >= 1 << 62:
        raise _BadTensor(f"{what}: shape {shape} is too large")
    return shape, stride, offset


def _build_tensor(what, storage, dt, shape, stride, offset):
    shape, stride, offset = _check_tensor_geometry(what, storage.nbytes(), dt, shape, stride,
                                                   offset)
    if builtins.any(s == 0 for s in shape):
        offset = builtins.min(offset, storage.nbytes() // dt.itemsize)
    return _C._tensor_from_storage(storage, dt, shape, stride, offset)


# ---------------------------------------------------------------------------
# reading zip members into storages
# ---------------------------------------------------------------------------

class _Archive:
    """An open zip archive plus (optionally) a memory map of its file."""

    def __init__(self, zf, name, mm=None):
        self.zf = zf
        self.name = name
        self.mm = mm
        self._mm_array = None

    def error(self, msg):
        return RuntimeError(f"ptcore.load: {self.name}: {msg}")

    def info(self, member):
        try:
            return self.zf.getinfo(member)
        except KeyError:
            raise self.error(f"archive member {member!r} is missing (truncated or corrupt "
                             "file?)") from None

    def read_small(self, member, limit=1 << 30):
        info = self.info(member)
        if info.file_size > limit:
            raise self.error(f"archive member {member!r} is implausibly large ({info.file_size} "
                             "bytes)")
        try:
            return self.zf.read(info)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
            raise self.error(f"cannot read archive member {member!r} ({e}); the file is "
                             "truncated or corrupt") from None

    def read_storage(self, member, nbytes, exact):
        """A new Storage holding the first ``nbytes`` bytes of ``member``."""
        info = self.info(member)
        if (info.file_size != nbytes) if exact else (info.file_size < nbytes):
            raise self.error(f"archive member {member!r} holds {info.file_size} bytes, expected "
                             f"{nbytes}{'' if exact else ' or more'}")
        if nbytes == 0:
            return _C.Storage(0)
        if _serialization_tls.skip_data:      # the layout only: zeros, the bytes unread
            return ptcore.zeros(nbytes, dtype=ptcore.uint8).untyped_storage()
        if self.mm is not None:
            return self._map_storage(info, member, nbytes)
        st = _C.Storage(nbytes)
        view = _C._tensor_from_storage(st, ptcore.uint8, [nbytes], [1], 0).numpy()
        pos = 0
        try:
            with self.zf.open(info) as src:
                while pos < nbytes:
                    chunk = src.read(builtins.min(_CHUNK, nbytes - pos))
                    if not chunk:
                        break
                    view[pos:pos + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
                    pos += len(chunk)
                if pos == nbytes and info.file_size == nbytes:
                    src.read(1)     # reach the member's end: zipfile checks its CRC there
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
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


def _open_archive(f, mmap):
    """(archive, kind) where kind is 'ptcore' or ('torch', prefix)."""
    name = _file_name(f)
    mm = None
    if _is_path(f):
        fh = open(f, "rb")
        if mmap and os.fstat(fh.fileno()).st_size > 0:
            try:
                mm = _mmap_mod.mmap(fh.fileno(), 0, access=_mmap_mod.ACCESS_COPY)
            finally:
                fh.close()
            fh = _MMapReader(mm)   # zipfile reads the directory without copying the file
        try:
            return _open_zip(fh, name, mm)
        except BaseException:
            fh.close()
            raise
    else:
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


def _open_zip(fh, name, mm):
    start = fh.tell()
    magic = fh.read(4)
    fh.seek(start)
    if not isinstance(magic, bytes):
        raise TypeError(f"ptcore.load: {name}: the file object must be opened in binary mode")
    if len(magic) == 0:
        raise _EmptyCheckpoint(f"ptcore.load: {name} is empty (0 bytes): not a checkpoint")
    if magic[:1] == b"\x80":
        raise RuntimeError(
            f"ptcore.load: {name} was written by torch.save in PyTorch's legacy (pre-1.6, "
            "non-zip) format, which ptcore.load does not read. Re-save it with a recent PyTorch: "
            "torch.save(torch.load(old_file), new_file).")
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise _NotACheckpoint(f"ptcore.load: {name} is not a ptcore or PyTorch checkpoint (it does "
                           f"not start with a zip header; first bytes {magic!r})")
    try:
        zf = zipfile.ZipFile(fh, "r")
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error,
            NotImplementedError) as e:
        raise RuntimeError(f"ptcore.load: {name} is not a valid checkpoint: the zip archive is "
                           f"truncated or corrupt ({e})") from None
    arch = _Archive(zf, name, mm)
    names = zf.namelist()
    if "ptcore/data.json" in names:
        return arch, "ptcore"
    if builtins.any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
        raise RuntimeError(f"ptcore.load: {name} is a TorchScript archive (torch.jit.save); "
                           "ptcore.load reads checkpoints written by torch.save only")
    pkls = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkls) == 1:
        return arch, ("torch", pkls[0][:-len("data.pkl")])
    raise RuntimeError(f"ptcore.load: {name} is a zip archive but not a checkpoint: it has "
                       "neither ptcore/data.json nor <archive>/data.pkl")


class _MMapReader(io.RawIOBase):
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


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

# (a frozenset is pickled: torch.load(weights_only=True) refuses it unless allowlisted)
_PLAIN_CONTAINERS = frozenset({list, tuple, dict, set, collections.OrderedDict})


class _Encoder:
    def __init__(self):
        self.storages = []          # Storage objects (kept alive: ids stay unique)
        self.storage_index = {}     # id(storage) -> index
        self.tensors = []           # JSON entries
        self.tensor_objs = []       # keep tensors alive while saving
        self.tensor_index = {}      # id(tensor) -> index
        self.active = set()         # ids of containers being encoded (cycle check)
        self.Parameter = _parameter_class()

    def storage(self, st):
        k = self.storage_index.get(id(st))
        if k is None:
            k = len(self.storages)
            self.storages.append(st)
            self.storage_index[id(st)] = k
        return k

    def tensor(self, t):
        i = self.tensor_index.get(id(t))
        if i is None:
            st = t.untyped_storage()
            is_param = self.Parameter is not None and isinstance(t, self.Parameter)
            entry = {
                "storage": self.storage(st),
                "dtype": t.dtype._name,
                "shape": list(t.shape),
                "stride": list(t.stride()),
                "offset": t.storage_offset(),
                "requires_grad": builtins.bool(t.requires_grad),
                "parameter": is_param,
            }
            i = len(self.tensors)
            self.tensors.append(entry)
            self.tensor_objs.append(t)
            self.tensor_index[id(t)] = i
        return {"$": "tensor", "id": i}

    @staticmethod
    def _float(x):
        x = builtins.float(x)
        if math.isfinite(x):
            return x
        return {"$": "float", "v": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}

    def encode(self, obj):
        if obj is None or isinstance(obj, (builtins.bool, str)):
            return str.__str__(obj) if isinstance(obj, str) and type(obj) is not str else obj
        if isinstance(obj, builtins.int):
            return builtins.int(obj)
        if isinstance(obj, builtins.float):
            return self._float(obj)
        if isinstance(obj, _C._TensorBase):
            return self.tensor(obj)
        if isinstance(obj, _C.Storage):
            return {"$": "storage", "storage": self.storage(obj)}
        if isinstance(obj, ptcore.dtype):
            return {"$": "dtype", "name": obj._name}
        if isinstance(obj, ptcore.device):
            return {"$": "device", "name": str(obj)}
        if isinstance(obj, builtins.complex):
            return {"$": "complex", "re": self._float(obj.real), "im": self._float(obj.imag)}
        if isinstance(obj, (bytes, bytearray)):
            return {"$": "bytes" if isinstance(obj, bytes) else "bytearray",
                    "b64": base64.b64encode(bytes(obj)).decode("ascii")}
        if _is_sparse(obj):
            return {"$": "sparse", "layout": obj.layout.name,
                    "parts": [self.tensor(p) for p in obj._parts],
                    "size": [builtins.int(n) for n in obj.shape],
                    "coalesced": builtins.bool(obj._coalesced)}
        if type(obj) in _PLAIN_CONTAINERS or isinstance(obj, ptcore.Size):
            # a subclass (defaultdict, namedtuple, Counter ...) is pickled, as torch keeps
            # its class (and weights_only refuses it)
            if id(obj) in self.active:
                raise ValueError("ptcore.save: the object contains a reference cycle (a "
                                 "container that contains itself), which cannot be saved")
            self.active.add(id(obj))
            try:
                return self._container(obj)
            finally:
                self.active.discard(id(obj))
        raise TypeError(
            f"ptcore.save: cannot save an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__}; the ptcore format holds tensors, storages, dtypes, "
            "devices, None, bool, int, float, complex, str, bytes and list/tuple/dict/set "
            "containers of these (convert other objects, e.g. NumPy arrays with "
            "ptcore.from_numpy, first)")

    def _container(self, obj):
        if isinstance(obj, ptcore.Size):
            return {"$": "size", "items": [builtins.int(v) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        if isinstance(obj, tuple):
            return {"$": "tuple", "items": [self.encode(v) for v in obj]}
        if isinstance(obj, (set, frozenset)):
            return {"$": "frozenset" if isinstance(obj, frozenset) else "set",
                    "items": [self.encode(v) for v in obj]}
        items = [[self.encode(k), self.encode(v)] for k, v in obj.items()]
        if isinstance(obj, collections.OrderedDict):
            attrs = {}
            for k, v in getattr(obj, "__dict__", {}).items():
                if isinstance(k, str):
                    attrs[k] = self.encode(v)
            return {"$": "odict", "items": items, "attrs": attrs}
        return {"$": "dict", "items": items}


def _storage_view(st):
    """A uint8 NumPy array over a storage's bytes (a host copy for device storages)."""
    n = st.nbytes()
    if n == 0:
        return np.empty(0, dtype=np.uint8)
    flat = _C._tensor_from_storage(st, ptcore.uint8, [n], [1], 0)
    if st.device.type != "cpu":
        flat = flat.to("cpu")
    return flat.numpy()


def _write_member(zf, name, data, align):
    """Write one stored member; with ``align`` its data starts at a multiple of 64.
    ``data`` is bytes, an array, or an int: that many zero bytes."""
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_STORED
    zi.external_attr = 0o644 << 16
    if isinstance(data, builtins.int):
        nbytes = data
    else:
        nbytes = data.nbytes if isinstance(data, (np.ndarray, memoryview)) else len(data)
    zi.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT
    if align:
        base = zf.fp.tell() + 30 + len(name.encode("utf-8")) + (20 if zip64 else 0) + 4
        pad = -base % _ALIGN
        zi.extra = struct.pack("<HH", _PAD_EXTRA_ID, pad) + b"\0" * pad
    with zf.open(zi, "w", force_zip64=zip64) as w:
        if isinstance(data, builtins.int):
            zeros = bytes(builtins.min(_CHUNK, nbytes))
            for pos in range(0, nbytes, _CHUNK):
                w.write(zeros[:builtins.min(_CHUNK, nbytes - pos)])
        elif nbytes:
            w.write(memoryview(data).cast("B") if isinstance(data, np.ndarray) else data)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save an object (tensors in nested containers) to a file.

    Parameters
    ----------
    obj : object
        Tensors, storages, dtypes, devices, ``None``, bool, int, float,
        complex, str, bytes, and list / tuple / dict (incl. ``OrderedDict``) /
        set containers of these, e.g. a state dict or a training checkpoint.
    f : str, os.PathLike or binary file-like object
        Where to write.
    pickle_module, pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record
        Accepted for compatibility with ``torch.save`` and ignored: the ptcore
        format holds no pickles (see :mod:`ptcore.serialization`).

    Notes
    -----
    Tensors that share a storage are saved once and share it again after
    ``ptcore.load``.  The file is a zip archive described in the module
    documentation of :mod:`ptcore.serialization`.
    """
    if sys.byteorder != "little":   # pragma: no cover - no big-endian CI
        raise NotImplementedError("ptcore.save: big-endian hosts are not supported")
    if _serialization_tls.skip_data and not _use_new_zipfile_serialization:
        raise RuntimeError("Cannot use skip_data=True with _use_new_zipfile_serialization=False")
    enc = _Encoder()
    try:
        root = enc.encode(obj)
    except RecursionError:
        raise RecursionError("ptcore.save: maximum recursion depth exceeded: the object is nested too deeply to be saved") from None
    except (TypeError, ValueError):
        # not data only (a module, an optimizer, a NumPy array ...): pickled as
        # torch.save does; ptcore.load needs weights_only=False (or allowlisted
        # globals) to read it back
        from ptcore._pickle_checkpoint import save_pickled
        save_pickled(obj, f, pickle_protocol)
        return
    storages = [{"key": str(k), "nbytes": st.nbytes(), "location": str(st.device)}
                for k, st in enumerate(enc.storages)]
    header = {"format": "ptcore", "version": FORMAT_VERSION, "byteorder": "little",
              "storages": storages, "tensors": enc.tensors, "root": root}
    blob = json.dumps(header, allow_nan=False, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    if _is_path(f):
        with open(f, "wb") as fh:
            _write_archive(fh, blob, enc.storages)
    else:
        if not hasattr(f, "write"):
            raise TypeError("ptcore.save: expected a file name (str or os.PathLike) or a binary "
                            f"file-like object with write(), got {type(f).__name__}")
        _write_archive(f, blob, enc.storages)


def _write_archive(fh, blob, storages):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_member(zf, "ptcore/version", f"{FORMAT_VERSION}\n".encode("ascii"), False)
        _write_member(zf, "ptcore/data.json", blob, False)
        for k, st in enumerate(storages):
            if st.device.type != "meta":        # a meta storage has no bytes to write
                _write_member(zf, f"ptcore/storages/{k}", _storage_payload(st), True)


# ---------------------------------------------------------------------------
# load: ptcore format
# ---------------------------------------------------------------------------

_TAGS_WITH_ITEMS = ("tuple", "set", "frozenset", "size", "dict", "odict")


class _Decoder:
    def __init__(self, arch, storages, tensors):
        self.arch = arch
        self.storages = storages
        self.tensors = tensors

    def err(self, msg):
        return self.arch.error(f"corrupt ptcore/data.json: {msg}")

    def _float(self, v):
        if type(v) in (builtins.int, builtins.float):
            return builtins.float(v)
        if isinstance(v, dict) and v.get("$") == "float" and v.get("v") in ("nan", "inf", "-inf"):
            return builtins.float(v["v"])
        raise self.err(f"expected a float, got {v!r}")

    def _index(self, v, table, what):
        if type(v) is not builtins.int or not 0 <= v < len(table):
            raise self.err(f"{what} index {v!r} is out of range (0..{len(table) - 1})")
        return table[v]

    def decode(self, v):
        if v is None or type(v) in (builtins.bool, builtins.int, builtins.float, str):
            return v
        if type(v) is list:
            return [self.decode(x) for x in v]
        if type(v) is not dict:
            raise self.err(f"unexpected value {v!r}")
        tag = v.get("$")
        if tag == "tensor":
            return self._index(v.get("id"), self.tensors, "tensor")
        if tag == "storage":
            return self._index(v.get("storage"), self.storages, "storage")
        if tag == "float":
            return self._float(v)
        if tag == "complex":
            return builtins.complex(self._float(v.get("re")), self._float(v.get("im")))
        if tag in ("bytes", "bytearray"):
            b64 = v.get("b64")
            if not isinstance(b64, str):
                raise self.err(f"bad bytes value {v!r}")
            try:
                raw = base64.b64decode(b64.encode("ascii"), validate=True)
            except (ValueError, UnicodeEncodeError) as e:
                raise self.err(f"bad base64 data ({e})") from None
            return raw if tag == "bytes" else bytearray(raw)
        if tag == "dtype":
            name = v.get("name")
            if name not in _DTYPE_NAMES:
                raise self.err(f"unknown dtype {name!r}")
            return _dtype_by_name(name)
        if tag == "device":
            name = v.get("name")
            if not isinstance(name, str):
                raise self.err(f"bad device {v!r}")
            try:
                return ptcore.device(name)
            except (RuntimeError, ValueError, TypeError) as e:
                raise self.err(f"bad device {name!r} ({e})") from None
        if tag == "sparse":
            return _decode_sparse(self, v)
        if tag in _TAGS_WITH_ITEMS:
            items = v.get("items")
            if type(items) is not list:
                raise self.err(f"{tag} without an items list")
            if tag == "size":
                if not builtins.all(type(x) is builtins.int and x >= 0 for x in items):
                    raise self.err(f"bad Size {items!r}")
                return ptcore.Size(items)
            if tag in ("dict", "odict"):
                out = collections.OrderedDict() if tag == "odict" else {}
                for pair in items:
                    if type(pair) is not list or len(pair) != 2:
                        raise self.err(f"bad dict item {pair!r}")
                    key = self.decode(pair[0])
                    try:
                        out[key] = self.decode(pair[1])
                    except TypeError:
                        raise self.err(f"unhashable dict key {key!r}") from None
                if tag == "odict":
                    attrs = v.get("attrs", {})
                    if type(attrs) is not dict:
                        raise self.err("odict attrs must be an object")
                    for k, a in attrs.items():
                        if k.startswith("__") or hasattr(collections.OrderedDict, k):
                            raise self.err(f"refusing attribute {k!r}")
                        out.__dict__[k] = self.decode(a)
                return out
            vals = [self.decode(x) for x in items]
            if tag == "tuple":
                return tuple(vals)
            try:
                return set(vals) if tag == "set" else frozenset(vals)
            except TypeError:
                raise self.err(f"unhashable {tag} element") from None
        raise self.err(f"unknown value tag {tag!r}")


def _is_sparse(obj):
    sp = sys.modules.get("ptcore.sparse._tensor")     # (no sparse tensor before it is imported)
    return sp is not None and isinstance(obj, sp.SparseTensor)


def _decode_sparse(dec, v):
    """A sparse tensor from its ``"sparse"`` entry, rebuilt through the
    public constructors (which check the indices against the size)."""
    from ptcore.sparse import _tensor as sp
    layout, size = v.get("layout"), v.get("size")
    parts = [dec.decode(p) for p in v.get("parts", ())] if type(v.get("parts")) is list else None
    n_parts = {"sparse_coo": 2, "sparse_csr": 3, "sparse_csc": 3}.get(layout)
    if (n_parts is None or parts is None or len(parts) != n_parts
            or not builtins.all(isinstance(p, _C._TensorBase) for p in parts)
            or type(size) is not list
            or not builtins.all(type(n) is builtins.int and n >= 0 for n in size)):
        raise dec.err(f"bad sparse tensor {v!r}")
    try:
        if layout == "sparse_coo":
            return sp.sparse_coo_tensor(parts[0], parts[1], size,
                                        is_coalesced=v.get("coalesced") is True)
        make = sp.sparse_csr_tensor if layout == "sparse_csr" else sp.sparse_csc_tensor
        return make(*parts, size)
    except (RuntimeError, ValueError, TypeError) as e:
        raise dec.err(f"bad sparse tensor ({e})") from None


def _load_ptcore(arch, restore):
    raw_version = arch.read_small("ptcore/version", 64)
    try:
        version = builtins.int(raw_version.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise arch.error(f"bad ptcore/version member {raw_version!r}") from None
    if version > FORMAT_VERSION or version < 1:
        raise arch.error(f"format version {version} is not supported by this ptcore (it reads "
                         f"versions 1..{FORMAT_VERSION}); upgrade ptcore")
    blob = arch.read_small("ptcore/data.json")
    try:
        header = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise arch.error(f"ptcore/data.json is not valid JSON ({type(e).__name__}: {e})") \
            from None
    if type(header) is not dict or header.get("format") != "ptcore":
        raise arch.error("ptcore/data.json is not a ptcore checkpoint header")
    if header.get("version") != version:
        raise arch.error(f"ptcore/data.json has version {header.get('version')!r}, "
                         f"ptcore/version says {version}")
    if header.get("byteorder", "little") != "little":
        raise arch.error(f"unsupported byte order {header.get('byteorder')!r}")
    entries = header.get("storages")
    tensor_entries = header.get("tensors")
    if type(entries) is not list or type(tensor_entries) is not list or "root" not in header:
        raise arch.error("ptcore/data.json lacks storages, tensors or root")
    storages = []
    for k, e in enumerate(entries):
        if (type(e) is not dict or e.get("key") != str(k) or type(e.get("nbytes")) is not
                builtins.int or e["nbytes"] < 0 or not isinstance(e.get("location"), str)):
            raise arch.error(f"corrupt ptcore/data.json: bad storage entry {k}: {e!r}")
        if e["location"] == "meta":
            # no data (as torch's meta tensors, whatever map_location says)
            storages.append(_meta_storage(e["nbytes"]))
            continue
        st = arch.read_storage(f"ptcore/storages/{k}", e["nbytes"], exact=True)
        storages.append(restore(st, e["location"]))
    Parameter = _parameter_class()
    tensors = []
    for i, e in enumerate(tensor_entries):
        what = f"ptcore/data.json tensor {i}"
        if type(e) is not dict:
            raise arch.error(f"corrupt {what}: {e!r}")
        k = e.get("storage")
        if type(k) is not builtins.int or not 0 <= k < len(storages):
            raise arch.error(f"corrupt {what}: storage index {k!r} out of range")
        if e.get("dtype") not in _DTYPE_NAMES:
            raise arch.error(f"corrupt {what}: unknown dtype {e.get('dtype')!r}")
        dt = _dtype_by_name(e["dtype"])
        rg, is_param = e.get("requires_grad"), e.get("parameter", False)
        if type(rg) is not builtins.bool or type(is_param) is not builtins.bool:
            raise arch.error(f"corrupt {what}: requires_grad/parameter must be booleans")
        try:
            t = _build_tensor(what, storages[k], dt, e.get("shape"), e.get("stride"),
                              e.get("offset"))
        except _BadTensor as err:
            raise arch.error(f"corrupt file: {err}") from None
        try:
            if is_param and Parameter is not None:
                t = Parameter(t, rg)
            elif rg:
                t.requires_grad = True
        except RuntimeError as err:
            raise arch.error(f"{what}: {err}") from None
        tensors.append(t)
    try:
        return _Decoder(arch, storages, tensors).decode(header["root"])
    except RecursionError:
        raise arch.error("ptcore/data.json is nested too deeply") from None


# ---------------------------------------------------------------------------
# load: torch.save zip format, restricted unpickler
# ---------------------------------------------------------------------------

class _StorageType:
    """Stands for ``torch.FloatStorage`` ... in a pickle (carries the dtype)."""

    def __init__(self, qualname, dtype):
        self.qualname = qualname
        self.dtype = dtype

    def __repr__(self):
        return f"<{self.qualname} (ptcore.load)>"


class _TypedStorage:
    """What PyTorch's persistent_load returns: an untyped storage and a dtype."""

    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage = storage
        self.dtype = dtype


class _TorchType:
    """Stands for ``torch.Tensor`` / ``torch.nn.Parameter`` in a pickle."""

    def __init__(self, qualname):
        self.qualname = qualname

    def __repr__(self):
        return f"<{self.qualname} (ptcore.load)>"


_TORCH_TENSOR = _TorchType("torch.Tensor")
_TORCH_PARAMETER = _TorchType("torch.nn.parameter.Parameter")

_TORCH_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "ComplexHalfStorage": "complex32",
    "UntypedStorage": "uint8",
}
_TORCH_DTYPE_NAMES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int8": "int8",
    "uint8": "uint8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32",
    "int64": "int64", "long": "int64", "bool": "bool", "complex64": "complex64",
    "cfloat": "complex64", "complex128": "complex128", "cdouble": "complex128",
    "complex32": "complex32", "chalf": "complex32",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
}
_TORCH_UNSUPPORTED_DTYPES = {
    "qint8", "quint8", "qint32",
    "quint4x2", "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16",
    "bits1x8", "bits2x4", "bits4x2", "int1", "int2", "int3", "int4", "int5", "int6",
    "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
}


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` as pickle protocol 2 uses it for bytes (str -> bytes)."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8",
                                                     "ascii"):
        raise pickle.UnpicklingError(
            f"_codecs.encode is allowed only to rebuild bytes from str with latin1/utf-8, got "
            f"{type(obj).__name__} and {encoding!r}")
    return obj.encode(encoding, errors if errors in ("strict",) else "strict")


def _make_bytearray(source=b"", encoding=None, errors="strict"):
    """``bytearray`` as pickles use it: from bytes, or from str with an encoding
    (never from an int, which would allocate that many bytes)."""
    if isinstance(source, (bytes, bytearray)) and encoding is None:
        return bytearray(source)
    if isinstance(source, str) and encoding in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        return bytearray(source, encoding, "strict")
    raise pickle.UnpicklingError(f"bytearray: unexpected arguments ({type(source).__name__}, "
                                 f"{encoding!r})")


def _make_device(*args):
    if len(args) == 1 and isinstance(args[0], str):
        return ptcore.device(args[0])
    if len(args) == 2 and isinstance(args[0], str) and (args[1] is None or
                                                         type(args[1]) is builtins.int):
        return ptcore.device(args[0], args[1])
    raise pickle.UnpicklingError(f"torch.device: unexpected arguments {args!r}")


def _make_size(items=()):
    items = tuple(items)
    if not builtins.all(type(x) is builtins.int for x in items):
        raise pickle.UnpicklingError(f"torch.Size: expected ints, got {items!r}")
    return ptcore.Size(items)


def _safe_set_state(obj, state, what):
    """Apply a pickled ``__dict__`` state without running setters: plain names only."""
    if state is None:
        return obj
    slots = None
    if isinstance(state, tuple):
        if len(state) != 2:
            raise pickle.UnpicklingError(f"{what}: invalid serialized state")
        state, slots = state
    for part in (state, slots):
        if not part:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"{what}: state must be a dict")
        d = getattr(obj, "__dict__", None)
        for k, v in part.items():
            if not isinstance(k, str) or k.startswith("__") or hasattr(type(obj), k):
                raise pickle.UnpicklingError(f"{what}: refusing to set attribute {k!r}")
            if d is None:
                raise pickle.UnpicklingError(f"{what}: object has no attribute dictionary")
            d[k] = v
    return obj


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _TypedStorage):
        raise pickle.UnpicklingError(f"_rebuild_tensor: expected a storage, got "
                                     f"{type(storage).__name__}")
    size = tuple(size) if isinstance(size, (tuple, list)) else size
    stride = tuple(stride) if isinstance(stride, (tuple, list)) else stride
    return _build_tensor("tensor in data.pkl", storage.storage, storage.dtype, size, stride,
                         storage_offset)


def _set_requires_grad(t, requires_grad):
    if type(requires_grad) is not builtins.bool:
        raise pickle.UnpicklingError(f"requires_grad must be a bool, got {requires_grad!r}")
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    return _set_requires_grad(_rebuild_tensor(storage, storage_offset, size, stride),
                              requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(dtype, ptcore.dtype) or not isinstance(storage, _TypedStorage):
        raise pickle.UnpicklingError("_rebuild_tensor_v3: bad dtype or storage")
    return _rebuild_tensor_v2(_TypedStorage(storage.storage, dtype), storage_offset, size,
                              stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    if not isinstance(data, _C._TensorBase):
        raise pickle.UnpicklingError(f"_rebuild_parameter: expected a tensor, got "
                                     f"{type(data).__name__}")
    if type(requires_grad) is not builtins.bool:
        raise pickle.UnpicklingError(f"requires_grad must be a bool, got {requires_grad!r}")
    Parameter = _parameter_class()
    if Parameter is None:
        t = data.detach()
        t.requires_grad = requires_grad
        return t
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _safe_set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state,
                           "Parameter")


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_tensor, _rebuild_parameter,
                    _rebuild_parameter_with_state) or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: unexpected function {func!r}")
    if new_type is not _TORCH_TENSOR and new_type is not _TORCH_PARAMETER:
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: unsupported tensor type "
                                     f"{new_type!r}")
    ret = func(*args)
    if new_type is _TORCH_PARAMETER and func not in (_rebuild_parameter,
                                                     _rebuild_parameter_with_state):
        ret = _rebuild_parameter(ret, ret.requires_grad, None)
    return _safe_set_state(ret, state, "Tensor")


def _rebuild_sparse_tensor(layout, data):
    """torch's ``_rebuild_sparse_tensor``: a COO/CSR/CSC tensor from its parts,
    through the public constructors (which check the indices)."""
    from ptcore.sparse import _tensor as sp
    if not isinstance(data, tuple) or not builtins.all(
            isinstance(p, _C._TensorBase) for p in data[:-2 if layout is sp.sparse_coo else -1]):
        raise pickle.UnpicklingError("_rebuild_sparse_tensor: bad data")
    if layout is sp.sparse_coo and len(data) in (3, 4):
        return sp.sparse_coo_tensor(data[0], data[1], data[2],
                                    is_coalesced=len(data) == 4 and data[3] is True)
    if layout in (sp.sparse_csr, sp.sparse_csc) and len(data) == 4:
        make = sp.sparse_csr_tensor if layout is sp.sparse_csr else sp.sparse_csc_tensor
        return make(*data)
    raise pickle.UnpicklingError(f"_rebuild_sparse_tensor: unsupported layout {layout!r}")


def _get_layout(name):
    """torch's ``serialization._get_layout``: a layout by its name (e.g. ``"torch.sparse_coo"``)."""
    if name == "torch.strided":
        return ptcore.strided
    from ptcore.sparse import _tensor as sp
    layout = {"torch.sparse_coo": sp.sparse_coo, "torch.sparse_csr": sp.sparse_csr,
              "torch.sparse_csc": sp.sparse_csc}.get(name)
    if layout is None:
        raise pickle.UnpicklingError(f"_get_layout: unsupported layout {name!r}")
    return layout


def _meta_storage(nbytes):
    """A meta storage of ``nbytes`` bytes, made by the meta runtime."""
    return ptcore.empty(nbytes, dtype=ptcore.uint8, device="meta").untyped_storage()


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """torch's ``_utils._rebuild_meta_tensor_no_storage``: a meta tensor of that geometry."""
    if not isinstance(dtype, _C.dtype) or type(requires_grad) is not builtins.bool:
        raise pickle.UnpicklingError(f"_rebuild_meta_tensor_no_storage: bad arguments "
                                     f"{dtype!r}, {requires_grad!r}")
    return ptcore.empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta",
                                requires_grad=requires_grad)


def _torch_globals():
    g = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,      # torch's allowlist has it too
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
        ("torch._utils", "_rebuild_meta_tensor_no_storage"): _rebuild_meta_tensor_no_storage,
        ("torch.serialization", "_get_layout"): _get_layout,
        ("torch", "Tensor"): _TORCH_TENSOR,
        ("torch.nn.parameter", "Parameter"): _TORCH_PARAMETER,
        ("torch", "Size"): _make_size,
        ("torch", "device"): _make_device,
        ("builtins", "set"): set,
        ("builtins", "complex"): builtins.complex,
        ("builtins", "bytearray"): _make_bytearray,
        ("_codecs", "encode"): _codecs_encode,
    }
    for cls, dt in _TORCH_STORAGE_DTYPES.items():
        g[("torch", cls)] = _StorageType(f"torch.{cls}", _dtype_by_name(dt))
    g[("torch.storage", "UntypedStorage")] = g[("torch", "UntypedStorage")]
    for name, dt in _TORCH_DTYPE_NAMES.items():
        g[("torch", name)] = _dtype_by_name(dt)
    return g


_TORCH_GLOBALS = None
# callables the pickle may call (REDUCE) and classes it may instantiate (NEWOBJ)
_CALLABLES = None
_NEWOBJ_CLASSES = (collections.OrderedDict, set, frozenset, builtins.complex)


def _globals():
    global _TORCH_GLOBALS, _CALLABLES
    if _TORCH_GLOBALS is None:
        _TORCH_GLOBALS = _torch_globals()
        _CALLABLES = [v for v in _TORCH_GLOBALS.values()
                      if callable(v) and not isinstance(v, (_StorageType, _TorchType))]
    return _TORCH_GLOBALS


def _allowed_callable(func):
    return builtins.any(func is c for c in _CALLABLES)


class _RestrictedUnpickler(pickle._Unpickler):
    """Pure-Python unpickler with an allowlist for every opcode that can
    call, construct or mutate objects (GLOBAL/STACK_GLOBAL, REDUCE, NEWOBJ,
    NEWOBJ_EX, BUILD) and none of INST, OBJ or the copyreg extension codes."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, encoding="utf-8"):
        super().__init__(file, fix_imports=True, encoding=encoding, errors="strict")
        _globals()
        self._persistent = persistent_load

    def find_class(self, module, name):
        if not isinstance(module, str) or not isinstance(name, str):
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        import _compat_pickle
        if self.proto < 3 and self.fix_imports:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        obj = _globals().get((module, name))
        if obj is not None:
            return obj
        obj = _pc.user_global(module, name)
        if obj is not None:
            return obj
        if module == "torch" and name in _TORCH_UNSUPPORTED_DTYPES:
            raise pickle.UnpicklingError(f"ptcore.load: the checkpoint uses torch.{name}, a "
                                         "dtype ptcore does not support")
        if module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(f"ptcore.load: the checkpoint uses {module}.{name}, a "
                                         "storage type ptcore does not support")
        raise pickle.UnpicklingError(_pc.unsupported_global_message(module, name))

    def persistent_load(self, pid):
        return self._persistent(pid)

    def _refuse(self, what):
        raise pickle.UnpicklingError(f"ptcore.load: pickle opcode {what} is not allowed in a "
                                     "checkpoint")

    def load_reduce(self):
        stack = self.stack
        args = stack.pop()
        func = stack[-1]
        if not (_allowed_callable(func) or _pc.is_user_global(func)):
            raise pickle.UnpicklingError(f"ptcore.load: refusing to call {func!r}")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
        stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if not (builtins.any(cls is c for c in _NEWOBJ_CLASSES) or _pc.is_user_global(cls)) \
                or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"ptcore.load: refusing to create an object of {cls!r}")
        self.append(cls.__new__(cls, *args))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        if _pc.is_user_global(cls) and isinstance(args, tuple) and isinstance(kwargs, dict):
            self.append(cls.__new__(cls, *args, **kwargs))
            return
        if (not builtins.any(cls is c for c in _NEWOBJ_CLASSES) or not isinstance(args, tuple)
                or kwargs):
            raise pickle.UnpicklingError(f"ptcore.load: refusing to create an object of {cls!r}")
        self.append(cls.__new__(cls, *args))
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is collections.OrderedDict:
            _safe_set_state(inst, state, "OrderedDict")
            return
        if _pc.is_user_global(type(inst)):
            _pc.build_allowed(inst, state)
            return
        raise pickle.UnpicklingError(f"ptcore.load: refusing to BUILD an object of type "
                                     f"{type(inst).__name__}")
    dispatch[pickle.BUILD[0]] = load_build

    def load_inst(self):
        self._refuse("INST")
    dispatch[pickle.INST[0]] = load_inst

    def load_obj(self):
        self._refuse("OBJ")
    dispatch[pickle.OBJ[0]] = load_obj

    def load_ext(self):
        self._refuse("EXT")
    dispatch[pickle.EXT1[0]] = load_ext
    dispatch[pickle.EXT2[0]] = load_ext
    dispatch[pickle.EXT4[0]] = load_ext


def _swap_bytes(storage, itemsize):
    n = storage.nbytes()
    if itemsize <= 1 or n == 0:
        return
    view = _C._tensor_from_storage(storage, ptcore.uint8, [n], [1], 0).numpy()
    usable = n - n % itemsize
    w = view[:usable].view(f"u{itemsize}")
    w.byteswap(inplace=True)


def _load_torch(arch, prefix, restore, encoding, full=False):
    persistent_load = _torch_persistent_load(arch, prefix, restore)
    data = arch.read_small(prefix + "data.pkl")
    if full:
        from ptcore._pickle_checkpoint import FullUnpickler
        return _untype_storages(FullUnpickler(io.BytesIO(data), persistent_load,
                                              encoding=encoding).load())
    up = _RestrictedUnpickler(io.BytesIO(data), persistent_load, encoding=encoding)
    try:
        result = up.load()
    except pickle.UnpicklingError as e:
        if str(e).startswith(("ptcore.load", "Weights only load failed")):
            raise
        raise pickle.UnpicklingError(f"ptcore.load: {arch.name}: corrupt {prefix}data.pkl "
                                     f"({e})") from None
    except _BadTensor as e:
        raise arch.error(f"corrupt {prefix}data.pkl: {e}") from None
    except (EOFError, IndexError, KeyError, ValueError, TypeError, struct.error,
            AttributeError, RecursionError, OverflowError, MemoryError) as e:
        raise pickle.UnpicklingError(f"ptcore.load: {arch.name}: corrupt {prefix}data.pkl "
                                     f"({type(e).__name__}: {e})") from None
    return _untype_storages(result)


def _torch_persistent_load(arch, prefix, restore, datadir="data/"):
    byteorder = "little"
    if prefix + "byteorder" in arch.zf.namelist():
        byteorder = arch.read_small(prefix + "byteorder", 64).decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise arch.error(f"unknown byte order {byteorder!r} in {prefix}byteorder")
    loaded = {}

    def persistent_load(pid):
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError(f"ptcore.load: unexpected persistent id {pid!r}")
        tag, stype, key, location, numel = pid
        if isinstance(tag, bytes):
            tag = tag.decode("ascii", "replace")
        if tag != "storage" or not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"ptcore.load: only storages may be persistent ids, "
                                         f"got {pid!r}")
        if (not isinstance(key, str) or not isinstance(location, str)
                or type(numel) is not builtins.int or numel < 0):
            raise pickle.UnpicklingError(f"ptcore.load: malformed storage id {pid!r}")
        dt = stype.dtype
        if key not in loaded:
            nbytes = numel * dt.itemsize
            st = arch.read_storage(f"{prefix}{datadir}{key}", nbytes, exact=False)
            if byteorder == "big" and st.nbytes():
                if arch.mm is not None:
                    st = _copy_storage(st)
                _swap_bytes(st, dt.itemsize // 2 if dt.is_complex else dt.itemsize)
            loaded[key] = restore(st, location)
        return _TypedStorage(loaded[key], dt)

    return persistent_load


def _copy_storage(st):
    n = st.nbytes()
    out = _C.Storage(n)
    _C._tensor_from_storage(out, ptcore.uint8, [n], [1], 0).numpy()[:] = \
        _C._tensor_from_storage(st, ptcore.uint8, [n], [1], 0).numpy()
    return out


def _untype_storages(obj, _seen=None):
    """Replace storage wrappers that ended up as values by the ptcore Storage."""
    if isinstance(obj, _TypedStorage):
        return obj.storage
    if _seen is None:
        _seen = set()
    if id(obj) in _seen:
        return obj
    if isinstance(obj, list):
        _seen.add(id(obj))
        for i, v in enumerate(obj):
            obj[i] = _untype_storages(v, _seen)
    elif isinstance(obj, dict):
        _seen.add(id(obj))
        for k, v in obj.items():
            obj[k] = _untype_storages(v, _seen)
    elif type(obj) is tuple:
        _seen.add(id(obj))
        new = tuple(_untype_storages(v, _seen) for v in obj)
        if builtins.any(a is not b for a, b in zip(new, obj)):
            return new
    return obj


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------

def _env_flag(name):
    return os.getenv(name, "0").lower() in ("1", "y", "yes", "true")


def _weights_only_from_environment(weights_only):
    """``load``'s ``weights_only`` after torch's environment overrides: the
    caller asks for full unpickling by setting ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``
    (which only changes an unset ``weights_only``)."""
    force, force_no = (_env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD"),
                       _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"))
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the "
                      "`weights_only` argument was not explicitly passed to `ptcore.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return True if weights_only is None else weights_only


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Load an object saved with ``ptcore.save`` or ``torch.save``.

    Parameters
    ----------
    f : str, os.PathLike or binary file-like object
        The checkpoint.
    map_location : None, str, device, dict or callable, optional
        Where to put the storages, as in ``torch.load``: ``None`` keeps the
        saved location, ``'cpu'`` (or a device) moves everything there, a dict
        maps saved locations to new ones (``{'cuda:0': 'cpu'}``), and a
        callable ``fn(storage, location)`` returns the storage to use (or
        ``None`` for the default).
    pickle_module : ignored
        Accepted for compatibility with ``torch.load``.
    weights_only : bool, optional
        ``True`` (the default, ``None``): only tensors, storages,
        plain containers and the globals allowed with
        :func:`add_safe_globals`; anything else is refused by name, never
        executed.  ``False``: full unpickling, as ``torch.load`` -- needed for
        whole modules, optimizers and other objects ``ptcore.save`` pickled;
        it runs whatever the file names, so use it only for trusted files.
        As torch, the environment variable ``TORCH_FORCE_WEIGHTS_ONLY_LOAD=1``
        forces ``True``, and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` makes an
        unset ``weights_only`` ``False`` (with a warning).
    mmap : bool, optional
        Memory-map the file (a file name is then required) instead of reading
        the storages into memory; the mapping is private (copy-on-write), so
        writes to loaded tensors never change the file.
    **kwargs
        ``encoding`` is used for Python 2 strings in PyTorch pickles; others
        are ignored.

    Returns
    -------
    object
        The saved object.

    Raises
    ------
    RuntimeError
        The file is truncated, corrupt or not a checkpoint, or a storage
        cannot be put on the requested device.
    pickle.UnpicklingError
        A PyTorch checkpoint refers to something other than tensors, storages
        and plain containers (refused by name, never executed).
    """
    if weights_only is not None and not isinstance(weights_only, builtins.bool):
        raise TypeError(f"ptcore.load: weights_only must be a bool, got "
                        f"{type(weights_only).__name__}")
    weights_only = _weights_only_from_environment(weights_only)
    restore = _make_restore(map_location)
    arch, kind = _open_archive(f, builtins.bool(mmap))
    try:
        if kind == "ptcore":
            return _load_ptcore(arch, restore)
        return _load_torch(arch, kind[1], restore, kwargs.get("encoding", "utf-8"),
                           full=weights_only is False)
    finally:
        fp = arch.zf.fp
        arch.zf.close()
        if _is_path(f) and fp is not None:
            fp.close()
