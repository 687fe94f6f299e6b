"""torch.save's legacy (pre-1.6, non-zip) checkpoint format: reading it in
``ptcore.load`` and writing it for ``ptcore.save(...,
_use_new_zipfile_serialization=False)``.

The format is five pickles one after another, then the storages' bytes:

1. ``MAGIC_NUMBER`` (``0x1950a86a20f9469cfc6c``),
2. ``PROTOCOL_VERSION`` (``1001``),
3. a dict describing the writer (byte order, C type sizes; unused on load, as
   torch),
4. the object, storages as persistent ids ``("storage", <storage type>, key,
   location, numel, view_metadata)``, where ``view_metadata`` is ``None`` or
   ``(view_key, offset, size)`` (in elements) for a view of storage ``key``
   written by old PyTorch versions,
5. the list of storage keys,

then, for every key of that list in order, the storage's element count as a
little-endian int64 followed by its bytes (little-endian).  Model zoos of
2017-2020 and code that still passes ``_use_new_zipfile_serialization=False``
write it.

Loading runs the same restricted unpickler as the zip format
(``weights_only=True``) on all five pickles, or full unpickling when asked.
The storages are allocated while the object pickle is read, before their
bytes follow, so every declared size is checked against the bytes left in
the file first: a hostile size raises :class:`CheckpointError`, it never
allocates.  Every storage must be listed and its bytes present, in full, with
the element count its persistent id declared.  (PyTorch's still older tar
format is not read.)
"""
import builtins
import pickle
import struct
import sys

import numpy as np

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_tensors import CheckpointError, restore_at, storage_view, tls
from ptcore._checkpoint_zip import LegacySource
from ptcore._torch_checkpoint_reader import (FullUnpickler, RestrictedUnpickler, _StorageType,
                                             _TypedStorage, unpickling_errors, untype_storages)

__all__ = ["MAGIC_NUMBER", "PROTOCOL_VERSION", "LegacySource", "load_legacy", "write_legacy"]

MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
             "type_sizes": {"short": 2, "int": 4, "long": 4}}
_CHUNK = 1 << 24


def _decode(v):
    return v.decode("ascii", "replace") if isinstance(v, bytes) else v


def _no_persistent_id(pid):
    raise pickle.UnpicklingError(f"ptcore.load: unexpected persistent id {pid!r} outside the "
                                 "object's pickle")


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

class _Storages:
    """The storages of the object's pickle, keyed as the file keys them, with
    the bytes the rest of the file can still hold for them."""

    def __init__(self, src, restore, full):
        self.src = src
        self.restore = restore
        self.full = full
        self.roots = {}        # key -> [host storage, typed storage as restored, numel, filled]
        self.views = {}        # view key -> typed storage
        self.budget = 0        # set when the object's pickle starts: the bytes after it

    def persistent_load(self, pid):
        if type(pid) is not tuple or not pid:
            raise pickle.UnpicklingError(f"ptcore.load: unexpected persistent id {pid!r}")
        tag = _decode(pid[0])
        if tag == "module" and self.full and len(pid) == 4:
            return pid[1]      # a module class saved with its source (torch checks the source)
        if tag != "storage" or len(pid) != 6 or not isinstance(pid[1], _StorageType):
            raise pickle.UnpicklingError(f"ptcore.load: only storages may be persistent ids, "
                                         f"got {pid!r}")
        _, stype, key, location, numel, view = pid
        location = _decode(location)
        if (not isinstance(key, str) or not isinstance(location, str)
                or type(numel) is not builtins.int or numel < 0):
            raise pickle.UnpicklingError(f"ptcore.load: malformed storage id {pid!r}")
        root = self.roots.get(key)
        if root is None:
            root = self.roots[key] = self._new_root(key, stype.dtype, numel, location)
        typed = root[1]
        if view is None:
            return typed
        return self._view(typed, view, pid)

    def _new_root(self, key, dt, numel, location):
        nbytes = numel * dt.itemsize
        if nbytes > self.budget:
            raise self.src.error(f"storage {key!r} declares {nbytes} bytes, more than the "
                                 f"{builtins.max(self.budget, 0)} bytes left in the file "
                                 "(truncated or corrupt file)")
        self.budget -= nbytes
        host = ptcore.zeros(nbytes, dtype=ptcore.uint8).untyped_storage() if nbytes else \
            _C.Storage(0)
        st = restore_at(self.src, self.restore, host, location, f"storage {key!r}")
        if st.nbytes() != nbytes:
            raise self.src.error(f"map_location returned a storage of {st.nbytes()} bytes for "
                                 f"storage {key!r} of {nbytes} bytes")
        return [host, _TypedStorage(st, dt), numel, False]

    def _view(self, typed, view, pid):
        if (type(view) is not tuple or len(view) != 3 or not isinstance(view[0], str)
                or not builtins.all(type(v) is builtins.int and v >= 0 for v in view[1:])):
            raise pickle.UnpicklingError(f"ptcore.load: malformed storage view in {pid!r}")
        vkey, offset, size = view
        got = self.views.get(vkey)
        if got is None:
            item = typed.dtype.itemsize
            begin, end = offset * item, (offset + size) * item
            if end > typed.storage.nbytes():
                raise self.src.error(f"storage view {vkey!r} (offset {offset}, size {size}) "
                                     f"runs past its storage of {typed.storage.nbytes()} bytes")
            got = self.views[vkey] = _TypedStorage(typed.storage[begin:end], typed.dtype)
        return got

    def read_data(self, keys):
        """Fill every storage from the bytes after the pickles, in ``keys``' order."""
        src = self.src
        if type(keys) is not list or not builtins.all(isinstance(k, str) for k in keys):
            raise src.error("the storage key list is not a list of strings (corrupt file)")
        for key in keys:
            root = self.roots.get(key)
            if root is None:
                raise src.error(f"the storage key list names {key!r}, which the object does "
                                "not use (corrupt file)")
            if root[3]:
                raise src.error(f"the storage key list names {key!r} twice (corrupt file)")
            head = src.fh.read(8)
            if len(head) != 8:
                raise src.error(f"storage {key!r} is missing: the file is truncated")
            numel = struct.unpack("<q", head)[0]
            if numel != root[2]:
                raise src.error(f"storage {key!r} holds {numel} elements, but the object "
                                f"declares {root[2]} (corrupt file)")
            self._fill(key, root)
            root[3] = True
        missing = [k for k, r in self.roots.items() if not r[3]]
        if missing:
            raise src.error(f"no data for storage(s) {missing[:5]} (truncated or corrupt file)")

    def _readinto(self, out):
        """``readinto`` for file objects that only have ``read``."""
        data = self.src.fh.read(len(out))
        out[:len(data)] = np.frombuffer(data, dtype=np.uint8)
        return len(data)

    def _fill(self, key, root):
        host, typed = root[0], root[1]
        nbytes = host.nbytes()
        if nbytes == 0:
            return
        view = _C._tensor_from_storage(host, ptcore.uint8, [nbytes], [1], 0).numpy()
        pos = 0
        readinto = getattr(self.src.fh, "readinto", None) or self._readinto
        while pos < nbytes:
            n = readinto(view[pos:pos + builtins.min(_CHUNK, nbytes - pos)])
            if not n:
                raise self.src.error(f"storage {key!r} ended after {pos} of {nbytes} bytes: "
                                     "the file is truncated")
            pos += n
        st = typed.storage
        if st is not host and st.device.type != "meta":
            # map_location moved it: copy the bytes that have now arrived (as torch's
            # _set_from_file fills a storage on its device)
            _C._tensor_from_storage(st, ptcore.uint8, [nbytes], [1], 0).copy_(
                _C._tensor_from_storage(host, ptcore.uint8, [nbytes], [1], 0))


def load_legacy(src, restore, encoding, full=False):
    """The object in the legacy checkpoint ``src`` (a :class:`LegacySource`)."""
    fh = src.fh
    storages = _Storages(src, restore, full)

    def unpickle(persistent_load):
        cls = FullUnpickler if full else RestrictedUnpickler
        return cls(fh, persistent_load, encoding=encoding).load()

    with unpickling_errors(src, "legacy checkpoint", full):
        magic = unpickle(_no_persistent_id)
        if type(magic) is not builtins.int or magic != MAGIC_NUMBER:
            raise src.error("invalid magic number: not a PyTorch checkpoint, or a corrupt one")
        version = unpickle(_no_persistent_id)
        if type(version) is not builtins.int or version != PROTOCOL_VERSION:
            raise src.error(f"invalid protocol version {version!r} (expected {PROTOCOL_VERSION})")
        unpickle(_no_persistent_id)                 # the writer's sys_info: unused, as torch
        storages.budget = src.size - fh.tell()
        result = unpickle(storages.persistent_load)
        keys = unpickle(_no_persistent_id)
        if not tls.skip_data:                       # skip_data: the zero-filled layout only
            storages.read_data(keys)
    return untype_storages(result)


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

def write_legacy(fh, protocol, data, storages, numels):
    """Write the legacy format to the binary file ``fh``: ``data`` is the
    object's pickle (storages as 6-element persistent ids), ``storages`` its
    ``(key, storage)`` pairs and ``numels`` each key's element count."""
    if sys.byteorder != "little":   # pragma: no cover - no big-endian CI
        raise NotImplementedError("ptcore.save: big-endian hosts are not supported")
    fh.write(pickle.dumps(MAGIC_NUMBER, protocol))
    fh.write(pickle.dumps(PROTOCOL_VERSION, protocol))
    fh.write(pickle.dumps(_SYS_INFO, protocol))
    fh.write(data)
    by_key = builtins.dict(storages)
    keys = sorted(by_key)                           # torch writes them sorted
    fh.write(pickle.dumps(keys, protocol))
    for key in keys:
        fh.write(struct.pack("<q", numels[key]))
        payload = storage_view(by_key[key])
        if payload.size:
            fh.write(memoryview(payload))
