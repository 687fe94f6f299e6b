"""Reading checkpoints in torch.save's zip format: a restricted unpickler for
``<archive>/data.pkl`` (``weights_only=True``), full unpickling for trusted
files (``weights_only=False``), storages from ``<archive>/data/<key>``, and
``get_unsafe_globals_in_checkpoint``.

The restricted unpickler resolves globals from an explicit allowlist
(tensor and parameter rebuild functions, typed storage classes, dtypes,
``torch.Size``, ``torch.device``, ``collections.OrderedDict``, ``set``,
``complex``, ``bytearray`` and ``_codecs.encode`` for bytes; ``frozenset``
and ``slice`` only when allowlisted with ``add_safe_globals``, as in torch),
each mapped to a ptcore implementation; calls, object creation and ``BUILD``
are allowed only on those, anything else raises ``pickle.UnpicklingError``
naming ``module.name``.  Every number a tensor record carries (sizes,
strides, offset, storage size) is checked against the bytes the file holds
before the tensor is built; the unpickler keeps its own stack (no recursion),
so any nesting depth loads, as with torch.
"""
import _compat_pickle
import builtins
import collections
import contextlib
import io
import pickle
import pickletools
import re
import struct

import ptcore
from ptcore import _tensor as _C
from ptcore._quantized import _tensor as _qt
from ptcore import _checkpoint_allowlist as _allow
from ptcore._checkpoint_tensors import (BadTensor, CheckpointError, build_tensor,
                                        check_tensor_geometry, parameter_class, restore_at)
from ptcore._checkpoint_zip import close_archive, open_archive

__all__ = ["RestrictedUnpickler", "FullUnpickler", "load_torch", "torch_persistent_load",
           "unpickling_errors",
           "untype_storages", "get_unsafe_globals_in_checkpoint", "torch_globals"]


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
    # a quantized tensor's storage holds its integers (_rebuild_qtensor)
    "QInt8Storage": "int8", "QUInt8Storage": "uint8", "QInt32Storage": "int32",
}
_TORCH_UNSUPPORTED_DTYPES = {
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
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
    if not (1 <= len(args) <= 2 and isinstance(args[0], str)
            and (len(args) == 1 or args[1] is None or type(args[1]) is builtins.int)):
        raise pickle.UnpicklingError(f"torch.device: unexpected arguments {args!r}")
    try:
        return ptcore.device(*args)
    except (RuntimeError, ValueError, TypeError, OverflowError) as e:
        raise pickle.UnpicklingError(f"torch.device{args!r}: not a device ({e})") from None


def _make_size(items=()):
    items = tuple(items)
    if not builtins.all(type(x) is builtins.int and -1 << 63 <= x < 1 << 63 for x in items):
        raise pickle.UnpicklingError(f"torch.Size: expected int64 values, got {items!r}")
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
    return build_tensor("tensor in data.pkl", storage.storage, storage.dtype, size, stride,
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
    Parameter = parameter_class()
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
    # lazy: ptcore.sparse loads only for a file that holds a sparse tensor
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


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad,
                     backward_hooks):
    """torch's ``_rebuild_qtensor``: a quantized tensor over the integers of ``storage``,
    through the quantized tensor's constructors (which check the parameters)."""
    qt = _qt
    data = _rebuild_tensor(storage, storage_offset, size, stride)
    qdtype = {ptcore.int8: ptcore.qint8, ptcore.uint8: ptcore.quint8,
              ptcore.int32: ptcore.qint32}.get(data.dtype)
    if qdtype is None or not isinstance(quantizer_params, tuple) or not quantizer_params:
        raise pickle.UnpicklingError("_rebuild_qtensor: bad storage or quantizer parameters")
    scheme = quantizer_params[0]
    if scheme is qt.per_tensor_affine and len(quantizer_params) == 3 and isinstance(
            quantizer_params[1], float) and isinstance(quantizer_params[2], int):
        return qt.make_per_tensor(data, qdtype, quantizer_params[1], quantizer_params[2])
    if scheme in (qt.per_channel_affine, qt.per_channel_affine_float_qparams) and len(
            quantizer_params) == 4 and all(isinstance(p, _C._TensorBase)
                                           for p in quantizer_params[1:3]) and isinstance(
            quantizer_params[3], int) and 0 <= quantizer_params[3] < max(data.dim(), 1) and \
            quantizer_params[1].numel() == quantizer_params[2].numel() == data.shape[
                quantizer_params[3]]:
        return qt.make_per_channel(data, qdtype, quantizer_params[1].to(ptcore.float64),
                                   quantizer_params[2].to(ptcore.int64), quantizer_params[3])
    raise pickle.UnpicklingError(f"_rebuild_qtensor: unsupported quantizer {scheme!r}")


def _get_layout(name):
    """torch's ``serialization._get_layout``: a layout by its name (e.g. ``"torch.sparse_coo"``)."""
    if name == "torch.strided":
        return ptcore.strided
    # lazy: ptcore.sparse loads only for a file that holds a sparse tensor
    from ptcore.sparse import _tensor as sp
    layout = {"torch.sparse_coo": sp.sparse_coo, "torch.sparse_csr": sp.sparse_csr,
              "torch.sparse_csc": sp.sparse_csc}.get(name)
    if layout is None:
        raise pickle.UnpicklingError(f"_get_layout: unsupported layout {name!r}")
    return layout


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """torch's ``_utils._rebuild_meta_tensor_no_storage``: a meta tensor of that geometry."""
    if not isinstance(dtype, _C.dtype) or type(requires_grad) is not builtins.bool:
        raise pickle.UnpicklingError(f"_rebuild_meta_tensor_no_storage: bad arguments "
                                     f"{dtype!r}, {requires_grad!r}")
    # a meta tensor has no bytes: only the numbers are checked (no storage bounds)
    size, stride, _ = check_tensor_geometry("meta tensor in data.pkl", 1 << 63, dtype, size,
                                            stride, 0)
    return ptcore.empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta",
                                requires_grad=requires_grad)


def _build_torch_globals():
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
        ("torch._utils", "_rebuild_qtensor"): _rebuild_qtensor,
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
        g[("torch", cls)] = _StorageType(f"torch.{cls}", _C._dtype_from_name(dt))
    g[("torch.storage", "UntypedStorage")] = g[("torch", "UntypedStorage")]
    for name in ("per_tensor_affine", "per_channel_affine", "per_channel_affine_float_qparams",
                 "per_tensor_symmetric", "per_channel_symmetric"):
        g[("torch", name)] = getattr(_qt, name)
    for name in dir(ptcore):        # every dtype ptcore has, under torch's names and aliases
        obj = getattr(ptcore, name, None)
        if isinstance(obj, _C.dtype):
            g[("torch", name)] = obj
    return g


_TORCH_GLOBALS = None
# callables the pickle may call (REDUCE) and classes it may instantiate (NEWOBJ)
_CALLABLES = None
_NEWOBJ_CLASSES = (collections.OrderedDict, set, frozenset, builtins.complex)


def torch_globals():
    global _TORCH_GLOBALS, _CALLABLES
    if _TORCH_GLOBALS is None:
        _TORCH_GLOBALS = _build_torch_globals()
        _CALLABLES = [v for v in _TORCH_GLOBALS.values()
                      if callable(v) and not isinstance(v, (_StorageType, _TorchType))]
    return _TORCH_GLOBALS


def _allowed_callable(func):
    return builtins.any(func is c for c in _CALLABLES)


class RestrictedUnpickler(pickle._Unpickler):
    """Pure-Python unpickler with an allowlist for every opcode that can
    call, construct or mutate objects (GLOBAL/STACK_GLOBAL, REDUCE, NEWOBJ,
    NEWOBJ_EX, BUILD) and none of INST, OBJ or the copyreg extension codes."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, encoding="utf-8"):
        super().__init__(file, fix_imports=True, encoding=encoding, errors="strict")
        torch_globals()
        self._persistent = persistent_load

    def find_class(self, module, name):
        if not isinstance(module, str) or not isinstance(name, str):
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        if self.proto < 3 and self.fix_imports:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        obj = torch_globals().get((module, name))
        if obj is not None:
            return obj
        obj = _allow.user_global(module, name)
        if obj is not None:
            return obj
        if module == "torch" and name in _TORCH_UNSUPPORTED_DTYPES:
            raise pickle.UnpicklingError(f"ptcore.load: the checkpoint uses torch.{name}, a "
                                         "dtype ptcore does not support")
        if module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(f"ptcore.load: the checkpoint uses {module}.{name}, a "
                                         "storage type ptcore does not support")
        raise pickle.UnpicklingError(_allow.unsupported_global_message(module, name))

    def persistent_load(self, pid):
        return self._persistent(pid)

    def _refuse(self, what):
        raise pickle.UnpicklingError(f"ptcore.load: pickle opcode {what} is not allowed in a "
                                     "checkpoint")

    def load_reduce(self):
        stack = self.stack
        args = stack.pop()
        func = stack[-1]
        if not (_allowed_callable(func) or _allow.is_user_global(func)):
            raise pickle.UnpicklingError(f"ptcore.load: refusing to call {func!r}")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
        stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if not (builtins.any(cls is c for c in _NEWOBJ_CLASSES) or _allow.is_user_global(cls)) \
                or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"ptcore.load: refusing to create an object of {cls!r}")
        self.append(cls.__new__(cls, *args))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        if _allow.is_user_global(cls) and isinstance(args, tuple) and isinstance(kwargs, dict):
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
        if _allow.is_user_global(type(inst)):
            _allow.build_allowed(inst, state)
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


@contextlib.contextmanager
def unpickling_errors(arch, what, full=False):
    """Report what goes wrong while ``what`` of the file ``arch`` is unpickled
    as a corrupt file: ``pickle.UnpicklingError`` (or the file's
    ``CheckpointError`` for a tensor that does not fit its storage), naming
    the file.  Under full unpickling (``full``) only a truncated pickle is
    reported so; the errors of the code it runs pass through."""
    try:
        yield
    except pickle.UnpicklingError as e:
        if str(e).startswith(("ptcore.load", "Weights only load failed")):
            raise
        raise pickle.UnpicklingError(f"ptcore.load: {arch.name}: corrupt {what} ({e})") from None
    except BadTensor as e:
        raise arch.error(f"corrupt {what}: {e}") from None
    except CheckpointError:
        raise
    except (EOFError, IndexError, KeyError, ValueError, TypeError, struct.error,
            AttributeError, RecursionError, OverflowError, MemoryError) as e:
        if full and not isinstance(e, (EOFError, struct.error)):
            raise
        raise pickle.UnpicklingError(f"ptcore.load: {arch.name}: corrupt {what} "
                                     f"({type(e).__name__}: {e})") from None


class UnknownByteOrder(CheckpointError, ValueError):
    """A byteorder record neither 'little' nor 'big' (torch: ValueError)."""


# the archive format versions torch 2.13's reader takes (caffe2::serialize's
# kMinSupportedFileFormatVersion, kMaxSupportedFileFormatVersion)
_MIN_FORMAT_VERSION, _MAX_FORMAT_VERSION = 1, 10


def check_format_version(arch, prefix):
    """Refuse an archive whose version record is missing, unreadable or out of the range
    torch reads, as torch's PyTorchStreamReader does (a RuntimeError each)."""
    name = prefix + ".data/version" if arch.has(prefix + ".data/version") else prefix + "version"
    if not arch.has(name):
        raise arch.error('Expected hasRecord("version") to be true, but got false.')
    text = arch.read_small(name, 64).decode("latin-1")
    num = re.match(r"\s*([+-]?\d+)", text)      # as C++'s istream >> long long reads it
    if num is None:
        raise arch.error(f"Couldn't parse the version {text} as Long Long.")
    version = builtins.int(num.group(1))
    if version < _MIN_FORMAT_VERSION:
        raise arch.error(f"Attempted to read a PyTorch file with version {version}, but the "
                         f"minimum supported version for reading is {_MIN_FORMAT_VERSION}.")
    if version > _MAX_FORMAT_VERSION:
        raise arch.error(f"Attempted to read a PyTorch file with version {version}, but the "
                         f"maximum supported version for reading is {_MAX_FORMAT_VERSION}.")


def load_torch(arch, prefix, restore, encoding, full=False):
    """The object in the torch.save archive ``arch`` (its records under ``prefix``)."""
    check_format_version(arch, prefix)
    persistent_load = torch_persistent_load(arch, prefix, restore)
    data = arch.read_small(prefix + "data.pkl")
    if full:
        return untype_storages(FullUnpickler(io.BytesIO(data), persistent_load,
                                             encoding=encoding).load())
    up = RestrictedUnpickler(io.BytesIO(data), persistent_load, encoding=encoding)
    with unpickling_errors(arch, f"{prefix}data.pkl"):
        result = up.load()
    return untype_storages(result)


def torch_persistent_load(arch, prefix, restore, datadir="data/"):
    """The ``persistent_load`` of a torch.save archive: storage ids
    ``("storage", <storage type>, key, location, numel)`` to the bytes of
    ``<prefix><datadir><key>``, read once per key; as torch, a key's first
    storage type fixes its dtype."""
    byteorder = "little"
    if arch.has(prefix + "byteorder"):
        byteorder = arch.read_small(prefix + "byteorder", 64).decode("ascii", "replace").strip()
        if byteorder not in ("little", "big"):
            raise UnknownByteOrder(f"ptcore.load: {arch.name}: unknown byte order {byteorder!r} "
                                   f"in {prefix}byteorder")
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
        typed = loaded.get(key)
        if typed is None:
            dt = stype.dtype
            nbytes = numel * dt.itemsize
            st = arch.read_storage(f"{prefix}{datadir}{key}", nbytes, exact=True)
            if byteorder == "big" and st.nbytes():
                if arch.mm is not None:
                    st = _copy_storage(st)
                _swap_bytes(st, dt.itemsize // 2 if dt.is_complex else dt.itemsize)
            typed = loaded[key] = _TypedStorage(
                restore_at(arch, restore, st, location, f"storage {key!r}"), dt)
        return typed

    return persistent_load


def _copy_storage(st):
    n = st.nbytes()
    out = _C.Storage(n)
    _C._tensor_from_storage(out, ptcore.uint8, [n], [1], 0).numpy()[:] = \
        _C._tensor_from_storage(st, ptcore.uint8, [n], [1], 0).numpy()
    return out


def untype_storages(root):
    """``root`` with every storage wrapper that ended up as a value (a saved
    storage, not a tensor's) replaced by its ptcore Storage: lists and dicts
    are changed in place, tuples holding one rebuilt.  Walks with its own
    stack, so any nesting depth the unpickler built is fine."""
    if isinstance(root, _TypedStorage):
        return root.storage
    replaced = {}                       # id(tuple) -> its rebuilt copy

    def fixed(v):
        if isinstance(v, _TypedStorage):
            return v.storage
        return replaced.get(id(v), v) if type(v) is tuple else v

    seen = builtins.set()
    stack = [(root, False)]
    while stack:
        obj, children_done = stack.pop()
        if children_done:
            if isinstance(obj, list):
                for i, v in enumerate(obj):
                    w = fixed(v)
                    if w is not v:
                        obj[i] = w
            elif isinstance(obj, dict):
                for k, v in obj.items():
                    w = fixed(v)
                    if w is not v:
                        obj[k] = w
            else:
                new = tuple(fixed(v) for v in obj)
                if builtins.any(a is not b for a, b in zip(new, obj)):
                    replaced[id(obj)] = new
            continue
        if id(obj) in seen or not (isinstance(obj, (list, dict)) or type(obj) is tuple):
            continue
        seen.add(id(obj))
        stack.append((obj, True))
        stack.extend((v, False) for v in (obj.values() if isinstance(obj, dict) else obj))
    return replaced.get(id(root), root)


# ---------------------------------------------------------------------------
# weights_only=False
# ---------------------------------------------------------------------------

def _full_rebuild_from_type_v2(func, new_type, args, state):
    """torch's ``_rebuild_from_type_v2`` for full unpickling: any tensor subclass
    and any state."""
    ret = func(*args)
    Parameter = parameter_class()
    if isinstance(new_type, type) and issubclass(new_type, Parameter):
        if type(ret) is not new_type:
            ret = Parameter(ret, ret.requires_grad)
    elif isinstance(new_type, type) and type(ret) is not new_type:
        ret = ptcore.Tensor._make_subclass(new_type, ret, ret.requires_grad)
    if state:
        if isinstance(state, tuple):
            state, slots = state
            for k, v in (slots or {}).items():
                setattr(ret, k, v)
        for k, v in (state or {}).items():
            setattr(ret, k, v)
    return ret


class FullUnpickler(pickle.Unpickler):
    """Full unpickling (``weights_only=False``): PyTorch's tensor globals
    resolve to ptcore's, ``torch.X`` to ``ptcore.X``, anything else is
    imported.  Runs the code the file names: for trusted files only."""

    def __init__(self, file, persistent_load, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self._persistent = persistent_load

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        obj = torch_globals().get((module, name))
        if obj is _TORCH_TENSOR:
            return ptcore.Tensor
        if obj is _TORCH_PARAMETER:
            return parameter_class()
        if obj is _rebuild_from_type_v2:
            return _full_rebuild_from_type_v2
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("ptcore" + module[5:], name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(
                    f"ptcore.load: the checkpoint needs {module}.{name}, which ptcore does not "
                    f"provide as ptcore{module[5:]}.{name}") from None
        return super().find_class(module, name)


# ---------------------------------------------------------------------------
# get_unsafe_globals_in_checkpoint
# ---------------------------------------------------------------------------

def globals_in_pickle(data):
    """Every ``(module, name)`` the pickle ``data`` refers to (GLOBAL/STACK_GLOBAL)."""
    found, strings, memo = [], [], {}
    for op, arg, _pos in pickletools.genops(data):
        if op.name in ("GLOBAL", "INST"):
            found.append(tuple(arg.split(" ", 1)))
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            strings.append(arg)
        elif op.name == "MEMOIZE":
            memo[len(memo)] = strings[-1] if strings else None
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[arg] = strings[-1] if strings else None
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            if isinstance(memo.get(arg), str):
                strings.append(memo[arg])
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append((strings[-2], strings[-1]))
    return found


# torch.load(weights_only=True) refuses frozenset and slice unless allowlisted
_ALWAYS_SAFE = {("builtins", "set"), ("builtins", "complex"), ("builtins", "bytearray"),
                ("collections", "OrderedDict")}


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint uses that ``weights_only=True`` would refuse.

    Parameters
    ----------
    f : str, os.PathLike or binary file-like object

    Returns
    -------
    list of str
        ``"module.name"`` for each global neither allowed by default nor added
        with :func:`add_safe_globals` (empty for files in ptcore's earlier own
        format, which hold no pickle).
    """
    arch, kind = open_archive(f, False)
    try:
        if kind == "ptcore":
            return []
        if kind == "legacy":
            raise ValueError("Expected input to be a checkpoint returned by torch.save (a zip "
                             f"archive); {arch.name} is in the legacy format")
        data = arch.read_small(kind[1] + "data.pkl")
    finally:
        close_archive(arch, f)
    allowed = torch_globals()
    out = []
    for module, name in globals_in_pickle(data):
        if (module, name) in _compat_pickle.NAME_MAPPING:       # protocol 2's Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if ((module, name) in allowed or (module, name) in _ALWAYS_SAFE
                or _allow.user_global(module, name) is not None or full in out):
            continue
        out.append(full)
    return out
