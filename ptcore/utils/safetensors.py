"""Read and write safetensors files, as ``safetensors.torch`` does for PyTorch.

The format (https://github.com/huggingface/safetensors):

* 8 bytes: ``N``, the header length, an unsigned little-endian 64-bit int;
* ``N`` bytes: a UTF-8 JSON object (starting with ``{``, possibly padded
  with trailing spaces) mapping each tensor name to ``{"dtype": "F32",
  "shape": [2, 3], "data_offsets": [begin, end]}``, plus an optional
  ``"__metadata__": {str: str}``;
* the byte buffer: each tensor's data, row-major and little endian, at
  ``[begin, end)`` relative to the start of the buffer.

Offsets must tile the buffer exactly (sorted by offset: the first begins at
0, each begins where the previous ends, and the last ends at the end of the
file), and each tensor's byte count must equal ``numel * itemsize``.
Loading checks all of this and raises :class:`SafetensorError` naming the
problem, so a corrupt file can never be read out of bounds.

Files are memory-mapped (privately: writes to loaded tensors never reach
the file) and the tensors are views of the mapping, so loading copies
nothing (a tensor whose data is not aligned to its itemsize is copied).
Writing streams each tensor's memory to the file without copying it.
Supported dtypes: ``BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64 C64``; other
dtypes of the format (``U16``, ``F8_E4M3`` ...) are validated, listed by
``keys()``, and raise ``TypeError`` when read.
"""
import builtins
import json
import mmap as _mmap_mod
import os
import struct
import sys

import numpy as np

import ptcore
from ptcore import _tensor as _C

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "SafetensorError"]

MAX_HEADER_SIZE = 100_000_000

_TO_PTCORE = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
    "I64": "int64", "F16": "float16", "BF16": "bfloat16", "F32": "float32",
    "F64": "float64", "C64": "complex64",
}
_FROM_PTCORE = {v: k for k, v in _TO_PTCORE.items()}
# bits per element of every dtype of the format (to validate files that use
# dtypes ptcore cannot represent)
_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "I16": 16, "U16": 16, "I32": 32, "U32": 32, "I64": 64,
    "U64": 64, "F16": 16, "BF16": 16, "F32": 32, "F64": 64, "C64": 64, "F8_E4M3": 8,
    "F8_E5M2": 8, "F8_E8M0": 8, "E8M0": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}
# the reference writer orders tensors by dtype (this rank, largest first) and then name,
# so that every tensor is aligned to its itemsize
_WRITE_RANK = {"BOOL": 0, "U8": 1, "I8": 2, "I16": 5, "F16": 7, "BF16": 8, "I32": 9,
               "F32": 11, "C64": 12, "F64": 13, "I64": 14}


class SafetensorError(Exception):
    """A safetensors file or buffer is malformed (as ``safetensors.SafetensorError``)."""


def _header_error(what):
    return SafetensorError(f"Error while deserializing header: {what}")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _header_error(f"duplicate key {k!r} in the JSON header")
        out[k] = v
    return out


def _parse(buf_len, head):
    """Validate the header; ``head(n)`` returns the first ``n`` bytes.

    Returns (infos, metadata, data_start) with infos {name: (dtype, shape,
    begin, end)}."""
    if buf_len < 8:
        raise _header_error(f"HeaderTooSmall: the file has {buf_len} bytes, fewer than the "
                            "8-byte header length")
    n, = struct.unpack("<Q", head(8))
    if n > MAX_HEADER_SIZE:
        raise _header_error(f"HeaderTooLarge: header length {n} exceeds {MAX_HEADER_SIZE}")
    if 8 + n > buf_len:
        raise _header_error(f"InvalidHeaderLength: header length {n} runs past the end of the "
                            f"{buf_len}-byte file (truncated file?)")
    raw = head(8 + n)[8:]
    if raw[:1] != b"{":
        raise _header_error("InvalidHeaderStart: the JSON header must start with '{'")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _header_error(f"InvalidHeader: the header is not UTF-8 ({e})") from None
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates)
    except SafetensorError:
        raise
    except (ValueError, RecursionError) as e:
        raise _header_error(f"InvalidHeaderDeserialization: {e}") from None
    if type(header) is not dict:
        raise _header_error("InvalidHeaderDeserialization: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (type(metadata) is not dict or not builtins.all(
            isinstance(v, str) for v in metadata.values())):
        raise _header_error("InvalidHeaderDeserialization: __metadata__ must map str to str")
    infos = {}
    for name, info in header.items():
        if type(info) is not dict:
            raise _header_error(f"InvalidHeaderDeserialization: entry {name!r} is not an object")
        dt, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dt not in _BITS:
            raise _header_error(f"InvalidHeaderDeserialization: tensor {name!r} has unknown "
                                f"dtype {dt!r}")
        if type(shape) is not list or not builtins.all(type(s) is int and 0 <= s < 1 << 62
                                                       for s in shape):
            raise _header_error(f"InvalidHeaderDeserialization: tensor {name!r} has invalid "
                                f"shape {shape!r}")
        if (type(offs) is not list or len(offs) != 2 or not builtins.all(
                type(o) is int and 0 <= o < 1 << 64 for o in offs)):
            raise _header_error(f"InvalidHeaderDeserialization: tensor {name!r} has invalid "
                                f"data_offsets {offs!r}")
        if len(shape) > 64:
            raise _header_error(f"TensorInvalidInfo: tensor {name!r} has {len(shape)} "
                                "dimensions (at most 64)")
        infos[name] = (dt, shape, offs[0], offs[1])
    end = 0
    for name, (dt, shape, b, e) in sorted(infos.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if b != end or e < b:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset: tensor "
                                  f"{name!r} has data_offsets [{b}, {e}], expected it to begin at "
                                  f"{end} (offsets must tile the buffer)")
        numel = 1
        for s in shape:
            numel *= s
        bits = numel * _BITS[dt]
        if bits % 8 or bits // 8 != e - b:
            raise SafetensorError(f"Error while deserializing header: TensorInvalidInfo: tensor "
                                  f"{name!r} of dtype {dt} and shape {shape} needs "
                                  f"{bits / 8:g} bytes, its data_offsets span {e - b}")
        end = e
    if 8 + n + end != buf_len:
        raise SafetensorError(f"Error while deserializing header: MetadataIncompleteBuffer: the "
                              f"tensors end at byte {end} of the buffer, but the buffer has "
                              f"{buf_len - 8 - n} bytes (truncated or padded file?)")
    return infos, metadata, 8 + n


def _device(device):
    if isinstance(device, builtins.int) and not isinstance(device, builtins.bool):
        return ptcore.device("cuda", device)
    return ptcore.device(device) if not isinstance(device, ptcore.device) else device


def _contig_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= builtins.max(s, 1)
    return strides[::-1]


class _Source:
    """A validated safetensors buffer (a private memory map or an owned copy)."""

    def __init__(self, buf, name):
        self.name = name
        self.base = np.frombuffer(buf, dtype=np.uint8) if len(buf) else np.empty(0, np.uint8)
        self.infos, self._metadata, self.data_start = _parse(
            len(self.base), lambda k: self.base[:k].tobytes())

    def tensor(self, key):
        try:
            dt_name, shape, b, e = self.infos[key]
        except (KeyError, TypeError):
            raise SafetensorError(f"File does not contain tensor {key}") from None
        if dt_name not in _TO_PTCORE:
            raise TypeError(f"tensor {key!r} has safetensors dtype {dt_name}, which ptcore does "
                            "not support")
        dt = getattr(ptcore, _TO_PTCORE[dt_name])
        nbytes = e - b
        if nbytes == 0:
            return ptcore.empty(shape, dtype=dt)
        arr = self.base[self.data_start + b:self.data_start + e]
        if arr.ctypes.data % dt.itemsize:
            arr = arr.copy()       # misaligned data: a fresh (aligned) copy
        storage = _C._storage_from_pointer(arr.ctypes.data, nbytes, arr)
        return _C._tensor_from_storage(storage, dt, shape, _contig_strides(shape), 0)


def _open_source(filename):
    name = os.fsdecode(filename)
    with open(filename, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise _header_error("HeaderTooSmall: the file is empty")
        mm = _mmap_mod.mmap(fh.fileno(), 0, access=_mmap_mod.ACCESS_COPY)
    return _Source(mm, name)


class _Slice:
    """A lazily read tensor (``safe_open(...).get_slice(name)``)."""

    def __init__(self, owner, name):
        self._owner = owner
        self._name = name
        self._info = owner._src.infos[name]

    def get_shape(self):
        """The tensor's shape, a list of ints."""
        return list(self._info[1])

    def get_dtype(self):
        """The tensor's safetensors dtype string, e.g. ``"F32"``."""
        return self._info[0]

    def __getitem__(self, index):
        return self._owner._convert(self._owner._src.tensor(self._name)[index].clone())


class safe_open:
    """Open a safetensors file lazily, as ``safetensors.safe_open``.

    Parameters
    ----------
    filename : str or os.PathLike
        The file (memory-mapped privately).
    framework : str
        ``"pt"`` (also ``"torch"``, ``"ptcore"``) for ptcore tensors, or
        ``"np"``/``"numpy"`` for NumPy arrays.
    device : str, ptcore.device or int
        Where ``get_tensor`` puts the tensors (an int is a CUDA index).

    Examples
    --------
    >>> with safe_open("model.safetensors", framework="pt") as f:  # doctest: +SKIP
    ...     w = f.get_tensor("weight")
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "ptcore", "np", "numpy"):
            raise ValueError(f"framework {framework!r} is not supported: use 'pt' or 'numpy'")
        self._numpy = framework in ("np", "numpy")
        self._device = _device(device)
        self._src = _open_source(filename)

    @classmethod
    def _from_source(cls, src, device="cpu"):
        self = cls.__new__(cls)
        self._numpy = False
        self._device = _device(device)
        self._src = src
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        """Tensor names, sorted."""
        return sorted(self._src.infos)

    def offset_keys(self):
        """Tensor names in the order of their data in the file."""
        return [k for k, _ in sorted(self._src.infos.items(), key=lambda kv: kv[1][2:])]

    def metadata(self):
        """The ``__metadata__`` dict (``None`` when the file has none)."""
        md = self._src._metadata
        return None if md is None else dict(md)

    def _convert(self, t):
        if self._numpy:
            return t.numpy()
        if self._device.type != "cpu":
            t = t.to(self._device)
        return t

    def get_tensor(self, name):
        """The tensor ``name`` (a view of the memory-mapped file on the CPU)."""
        return self._convert(self._src.tensor(name))

    def get_slice(self, name):
        """A lazy handle with ``get_shape()``, ``get_dtype()`` and indexing."""
        if name not in self._src.infos:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)


def load_file(filename, device="cpu"):
    """Load every tensor of a safetensors file.

    Parameters
    ----------
    filename : str or os.PathLike
    device : str, ptcore.device or int, optional

    Returns
    -------
    dict
        ``{name: tensor}``; on the CPU the tensors are views of a private
        memory map of the file (no copies).
    """
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def load(data):
    """Load tensors from safetensors bytes (one copy of the buffer is made,
    which the tensors then share)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load expects bytes, got {type(data).__name__}")
    src = _Source(bytearray(data), "<bytes>")
    f = safe_open._from_source(src)
    return {k: f.get_tensor(k) for k in f.keys()}


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

def _shared_groups(tensors):
    """Names of tensors whose memory overlaps (as safetensors'
    ``_find_shared_tensors`` after ``_filter_shared_not_shared``)."""
    by_storage = {}
    for k, v in tensors.items():
        st = v.untyped_storage()
        if st.nbytes() == 0 or v.numel() == 0:
            continue
        by_storage.setdefault((str(st.device), st.data_ptr()), []).append(
            (v.data_ptr(), v.data_ptr() + v.numel() * v.element_size(), k))
    failing = []
    for spans in by_storage.values():
        spans.sort()
        group, end = [], None
        for b, e, k in spans:
            if group and b < end:
                group.append(k)
                end = builtins.max(end, e)
            else:
                if len(group) > 1:
                    failing.append(set(group))
                group, end = [k], e
        if len(group) > 1:
            failing.append(set(group))
    return failing


def _prepare(tensors, metadata):
    if sys.byteorder != "little":   # pragma: no cover
        raise ValueError("Big endian is not supported, serialization need to be in little endian")
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, ptcore.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(f"tensor names must be str, got {type(k).__name__} {k!r}")
        if k == "__metadata__":
            raise ValueError("'__metadata__' is reserved and cannot be a tensor name")
        if not isinstance(v, _C._TensorBase):
            raise ValueError(f"Key `{k}` is invalid, expected ptcore.Tensor but received "
                             f"{type(v)}")
    if metadata is not None and (not isinstance(metadata, dict) or not builtins.all(
            isinstance(a, str) and isinstance(b, str) for a, b in metadata.items())):
        raise TypeError("metadata must be a dict mapping str to str")
    failing = _shared_groups(tensors)
    if failing:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {failing}.\nA potential way to correctly save "
            "your model is to clone the shared tensors first (or save only one of them).")
    entries = []
    for k, v in tensors.items():
        code = _FROM_PTCORE.get(v.dtype._name)
        if code is None:
            raise TypeError(f"tensor {k!r} has dtype {v.dtype}, which safetensors cannot store")
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It "
                "either means you are trying to save tensors which are reference of each other "
                "in which case it's recommended to save only the full tensors, and reslice at "
                "load time, or simply call `.contiguous()` on your tensor to pack it before "
                "saving.")
        entries.append((k, code, v))
    entries.sort(key=lambda e: (-_WRITE_RANK[e[1]], e[0]))
    header = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for k, code, v in entries:
        nbytes = v.numel() * v.element_size()
        header[k] = {"dtype": code, "shape": list(v.shape),
                     "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
        chunks.append(_tensor_bytes(v, nbytes))
    blob = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    blob += b" " * (-len(blob) % 8)
    return struct.pack("<Q", len(blob)) + blob, chunks


def _tensor_bytes(t, nbytes):
    """The bytes of a contiguous tensor as a uint8 NumPy view (no copy on the CPU)."""
    if nbytes == 0:
        return np.empty(0, dtype=np.uint8)
    if t.device.type != "cpu":
        t = t.to("cpu")
    flat = _C._tensor_from_storage(t.untyped_storage(), ptcore.uint8, [nbytes], [1],
                                   t.storage_offset() * t.element_size())
    return flat.numpy()


def save(tensors, metadata=None):
    """Serialize ``{name: tensor}`` to safetensors bytes.

    Parameters
    ----------
    tensors : dict of str to Tensor
        Contiguous tensors that do not share memory.
    metadata : dict of str to str, optional
        Stored as ``__metadata__``.

    Returns
    -------
    bytes
    """
    head, chunks = _prepare(tensors, metadata)
    return b"".join([head] + [memoryview(c) for c in chunks])


def save_file(tensors, filename, metadata=None):
    """Write ``{name: tensor}`` to a safetensors file (see :func:`save`)."""
    head, chunks = _prepare(tensors, metadata)
    with open(filename, "wb") as fh:
        fh.write(head)
        for c in chunks:
            if c.nbytes:
                fh.write(memoryview(c))
