"""Reading checkpoints in ptcore's own format (version 1), which
``ptcore.save`` wrote before it wrote torch's format: a data-only format
(JSON and raw bytes, no pickle), so reading it never runs code.

The format
----------
A ZIP archive whose members are all *stored* (not compressed):

``ptcore/version``
    The format version as ASCII decimal digits and a newline (``b"1\\n"``).
``ptcore/data.json``
    UTF-8 JSON object ``{"format": "ptcore", "version": 1, "byteorder":
    "little", "storages": [...], "tensors": [...], "root": <value>}``.
``ptcore/storages/<k>``
    The raw bytes (little endian) of storage ``k``, one member per storage,
    each starting at a multiple of 64 bytes in the file.

``storages[k]`` is ``{"key": "<k>", "nbytes": int, "location": str}``
(the device the storage was saved from, e.g. ``"cpu"`` or ``"cuda:0"``;
``"meta"`` storages have no member).  ``tensors[i]`` is ``{"storage": k,
"dtype": "float32", "shape": [...], "stride": [...], "offset": int,
"requires_grad": bool, "parameter": bool}`` (strides and offset in
elements).  Values in ``root`` are JSON ``null``/``true``/``false``,
strings, integers, finite floats and lists, or objects tagged by the key
``"$"``: ``tensor`` (``id``), ``storage`` (``storage``), ``float`` (``v``:
``"nan"``, ``"inf"``, ``"-inf"``), ``complex`` (``re``, ``im``), ``tuple``,
``set``, ``frozenset`` and ``size`` (``items``), ``dict`` and ``odict``
(``items``: ``[key, value]`` pairs; ``odict`` also ``attrs``, e.g. a state
dict's ``_metadata``), ``bytes``/``bytearray`` (``b64``), ``dtype`` and
``device`` (``name``), ``sparse`` (``layout``, ``parts``, ``size``,
``coalesced``).

Every number read (dtypes, shapes, strides, offsets, byte counts, device
indices) is checked against the storages before a tensor is built, so a
corrupt or malicious file raises ``CheckpointError`` (a ``RuntimeError``)
naming the file and never reads out of bounds.
"""
import base64
import builtins
import collections
import json

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_tensors import (BadTensor, build_tensor, meta_storage, parameter_class,
                                        restore_at)

__all__ = ["load_ptcore_v1"]

FORMAT_VERSION = 1
_DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "complex64", "complex128", "complex32", "uint16", "uint32",
                "uint64")

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
            return _C._dtype_from_name(name)
        if tag == "device":
            name = v.get("name")
            if not isinstance(name, str):
                raise self.err(f"bad device {v!r}")
            try:
                return ptcore.device(name)
            except (RuntimeError, ValueError, TypeError, OverflowError) as e:
                raise self.err(f"bad device {name!r} ({e})") from None
        if tag == "sparse":
            return _decode_sparse(self, v)
        if tag in _TAGS_WITH_ITEMS:
            items = v.get("items")
            if type(items) is not list:
                raise self.err(f"{tag} without an items list")
            if tag == "size":
                if not builtins.all(type(x) is builtins.int and 0 <= x < 1 << 63 for x in items):
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


def _decode_sparse(dec, v):
    """A sparse tensor from its ``"sparse"`` entry, rebuilt through the
    public constructors (which check the indices against the size)."""
    # lazy: ptcore.sparse loads only for a file that holds a sparse tensor
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


def load_ptcore_v1(arch, restore):
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
        if e["nbytes"] >= 1 << 62:
            raise arch.error(f"corrupt ptcore/data.json: storage {k} declares an implausible "
                             f"size of {e['nbytes']} bytes")
        if e["location"] == "meta":
            # no data (as torch's meta tensors, whatever map_location says)
            storages.append(meta_storage(e["nbytes"]))
            continue
        st = arch.read_storage(f"ptcore/storages/{k}", e["nbytes"], exact=True)
        storages.append(restore_at(arch, restore, st, e["location"], f"storage {k}"))
    Parameter = parameter_class()
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
        dt = _C._dtype_from_name(e["dtype"])
        rg, is_param = e.get("requires_grad"), e.get("parameter", False)
        if type(rg) is not builtins.bool or type(is_param) is not builtins.bool:
            raise arch.error(f"corrupt {what}: requires_grad/parameter must be booleans")
        try:
            t = build_tensor(what, storages[k], dt, e.get("shape"), e.get("stride"),
                             e.get("offset"))
        except BadTensor as err:
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
