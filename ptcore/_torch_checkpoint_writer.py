"""Writing checkpoints in torch.save's format, so that ``torch.load`` reads
what ``ptcore.save`` wrote.

The archive (see :class:`ptcore._checkpoint_zip.RecordWriter` for the zip
layout) holds ``<archive>/data.pkl``, ``.format_version`` (``1``),
``.storage_alignment`` (``64``), ``byteorder``, one record ``data/<key>``
per storage (keys ``"0"``, ``"1"`` ... in the order the pickle first meets
them), ``version`` (``3``) and ``.data/serialization_id``; ``<archive>`` is
the file's name without directory and extension (``archive`` for file
objects), as torch names it.

``data.pkl`` is a pickle (protocol 2 unless asked otherwise) in which
ptcore's objects are written under torch's names, exactly as torch's own
``__reduce_ex__`` methods write torch's: a tensor is
``torch._utils._rebuild_tensor_v2(<storage>, offset, size, stride,
requires_grad, OrderedDict())`` over a typed storage (``torch.FloatStorage``
...), or ``_rebuild_tensor_v3(..., dtype)`` over ``torch.storage.
UntypedStorage`` for the dtypes without a typed storage class (uint16/32/64,
complex32 ...); a storage is the persistent id ``("storage", <storage
type>, key, location, numel)``; a parameter is ``_rebuild_parameter(<tensor>,
requires_grad, OrderedDict())``; a tensor subclass or a tensor with Python
attributes goes through ``torch._tensor._rebuild_from_type_v2``; dtypes are
``torch.float32`` ..., ``Size`` is ``torch.Size``, devices ``torch.device``,
layouts ``torch.serialization._get_layout``, sparse tensors
``_rebuild_sparse_tensor`` and meta tensors
``_rebuild_meta_tensor_no_storage``.  So state dicts, optimizer states and
nested containers of these use only globals that
``torch.load(weights_only=True)`` allows; other objects (modules, NumPy
arrays, dataclasses ...) are pickled as any pickle does, under their own
names, and need ``weights_only=False`` or allowlisting, as with torch.

torch refuses to save two tensors that view one storage as different dtypes;
ptcore writes every reference to such a storage as an untyped storage
(``_rebuild_tensor_v3`` with each tensor's dtype), which torch reads too.
"""
import builtins
import collections
import io
import os
import pickle
import sys
import types
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._checkpoint_tensors import parameter_class, storage_payload
from ptcore._checkpoint_zip import RecordWriter, is_path
from ptcore._torch_legacy_checkpoint import write_legacy
from ptcore.storage import TypedStorage

__all__ = ["save_torch_format", "archive_name"]


class _TorchGlobal:
    """A global of torch's that the pickle names (``GLOBAL module name``)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args, **kwargs):    # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} names torch's function in a pickle written "
                        "by ptcore.save; it cannot be called")


_G = _TorchGlobal
_REBUILD_TENSOR_V2 = _G("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _G("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAMETER = _G("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _G("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = _G("torch._tensor", "_rebuild_from_type_v2")
_REBUILD_SPARSE_TENSOR = _G("torch._utils", "_rebuild_sparse_tensor")
_REBUILD_QTENSOR = _G("torch._utils", "_rebuild_qtensor")
_REBUILD_META_TENSOR = _G("torch._utils", "_rebuild_meta_tensor_no_storage")
_GET_LAYOUT = _G("torch.serialization", "_get_layout")
_SIZE = _G("torch", "Size")
_DEVICE = _G("torch", "device")
_CODECS_ENCODE = _G("_codecs", "encode")
_ORDERED_DICT = collections.OrderedDict
_UNTYPED_STORAGE = _G("torch.storage", "UntypedStorage")
# torch's typed storage classes (torch.storage._dtype_to_storage_type_map); the other
# dtypes are saved over an UntypedStorage with _rebuild_tensor_v3
_TYPED_STORAGES = {dt: _G("torch", cls) for dt, cls in (
    ("float64", "DoubleStorage"), ("float32", "FloatStorage"), ("float16", "HalfStorage"),
    ("int64", "LongStorage"), ("int32", "IntStorage"), ("int16", "ShortStorage"),
    ("int8", "CharStorage"), ("uint8", "ByteStorage"), ("bool", "BoolStorage"),
    ("bfloat16", "BFloat16Storage"), ("complex128", "ComplexDoubleStorage"),
    ("complex64", "ComplexFloatStorage"), ("qint8", "QInt8Storage"),
    ("quint8", "QUInt8Storage"), ("qint32", "QInt32Storage"))}


def _tensor_state(t):
    """The Python attributes torch pickles with a tensor (``_get_obj_state``),
    without ptcore's autograd bookkeeping."""
    from ptcore.tensor import _AUTOGRAD_ATTRS    # lazy: ptcore.tensor imports ptcore at import
    return {k: v for k, v in getattr(t, "__dict__", {}).items() if k not in _AUTOGRAD_ATTRS}


class _StorageRef:
    """A storage seen through a dtype (None: untyped): what a tensor's pickle refers to."""

    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage = storage
        self.dtype = dtype


# the types pickle writes itself, none of them ptcore's (b"" is not: see TorchPickler.save)
_PLAIN = frozenset({str, builtins.int, builtins.float, builtins.bool, type(None), tuple, list,
                    dict})


class TorchPickler(pickle._Pickler):
    """Pickles ptcore's tensor types under torch's names (see the module
    documentation), storages as persistent ids; their bytes go to the
    archive's ``data/<key>`` records."""

    def __init__(self, file, protocol, location_tag, untyped=frozenset(), legacy=False):
        super().__init__(file, protocol)
        self.legacy = legacy          # the legacy format's ids carry a sixth item (no view)
        self.numels = {}              # key -> the element count its id declares
        self.location_tag = location_tag
        self.storages = []            # (key, storage) in key order; keeps the storages alive
        self.keys = {}                # id(storage) -> key
        self.dtypes = {}              # id(storage) -> the dtype it was saved with (None: untyped)
        self.mixed = builtins.set()   # ids of storages met with two dtypes
        self.untyped = untyped        # ids of storages to save untyped everywhere
        self.Parameter = parameter_class()

    # -- storages -------------------------------------------------------------------------
    def persistent_id(self, obj):
        if type(obj) in _PLAIN:
            return None
        if type(obj) is _StorageRef:
            st, dt = obj.storage, obj.dtype
        elif isinstance(obj, _C.Storage):
            st, dt = obj, None
        elif issubclass(type(obj), TypedStorage):     # (isinstance runs its metaclass's check)
            st, dt = obj._untyped_storage, obj.dtype
            if dt._name not in _TYPED_STORAGES:
                dt = None
        else:
            return None
        if id(st) in self.untyped:
            dt = None
        if st.device.type == "meta":
            raise RuntimeError("ptcore.save: cannot save a storage on the meta device (it has "
                               "no data); save the meta tensor instead")
        key = self.keys.get(id(st))
        if key is None:
            key = self.keys[id(st)] = str(len(self.storages))
            self.storages.append((key, st))
            self.dtypes[id(st)] = dt
        elif self.dtypes[id(st)] is not dt:
            self.mixed.add(id(st))
        if dt is None:
            pid = ("storage", _UNTYPED_STORAGE, key, self.location_tag(st), st.nbytes())
        else:
            pid = ("storage", _TYPED_STORAGES[dt._name], key, self.location_tag(st),
                   st.nbytes() // dt.itemsize)
        self.numels[key] = pid[4]
        return pid + (None,) if self.legacy else pid

    # -- objects written under torch's names --------------------------------------------
    def _memoized(self, obj):
        x = self.memo.get(id(obj))
        if x is None:
            return False
        self.write(self.get(x[0]))
        return True

    def _global(self, obj, module, name):
        if not self._memoized(obj):
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" +
                       name.encode("utf-8") + b"\n")
            self.memoize(obj)

    def save(self, obj, save_persistent_id=True):
        t = type(obj)
        if t in _PLAIN:
            return super().save(obj, save_persistent_id)
        if t is _TorchGlobal:
            return self._global(obj, obj.module, obj.name)
        if isinstance(obj, _C.dtype):
            return self._global(obj, "torch", obj._name)
        if isinstance(obj, _C._TensorBase):
            if not self._memoized(obj):
                # (a sparse tensor, a Tensor subclass: torch's _rebuild_sparse_tensor)
                if getattr(obj, "_ptc_sparse", False):
                    self.save_reduce(*self._reduce_sparse(obj), obj=obj)
                elif obj.is_quantized:
                    self.save_reduce(*self._reduce_quantized(obj), obj=obj)
                else:
                    self.save_reduce(*self._reduce_tensor(obj), obj=obj)
            return None
        if t is ptcore.Size:
            if not self._memoized(obj):
                self.save_reduce(_SIZE, (tuple(obj),), obj=obj)
            return None
        if t is ptcore.device:
            if not self._memoized(obj):
                args = (obj.type,) if obj.index is None else (obj.type, obj.index)
                self.save_reduce(_DEVICE, args, obj=obj)
            return None
        if obj is ptcore.Tensor:
            return self._global(obj, "torch", "Tensor")
        if obj is self.Parameter and obj is not None:
            return self._global(obj, "torch.nn.parameter", "Parameter")
        sparse = sys.modules.get("ptcore.sparse._tensor")    # (none before it is imported)
        if sparse is not None and isinstance(obj, sparse._Layout):
            return self.save_reduce(_GET_LAYOUT, (f"torch.{obj.name}",))
        quantized = sys.modules.get("ptcore._quantized._tensor")   # (none before it is imported)
        if quantized is not None and isinstance(obj, quantized.qscheme):
            return self._global(obj, "torch", obj.name)
        if obj is ptcore.strided:
            return self.save_reduce(_GET_LAYOUT, ("torch.strided",))
        if t is bytes and not obj and self.proto < 3:
            # (pickle writes b"" as builtins.bytes(), which torch's weights_only refuses;
            # _codecs.encode("", "latin1"), as for any other bytes, it allows)
            return self.save_reduce(_CODECS_ENCODE, ("", "latin1"), obj=obj)
        return super().save(obj, save_persistent_id)

    def _reduce_tensor(self, t):
        if getattr(t, "_backward_hooks", None):
            warnings.warn("backward hooks on a tensor are not serialized", UserWarning,
                          stacklevel=5)
        state = _tensor_state(t)
        Parameter = self.Parameter
        if Parameter is not None and isinstance(t, Parameter):
            args = (t.detach(), builtins.bool(t.requires_grad), _ORDERED_DICT())
            if state:
                return _REBUILD_PARAMETER_WITH_STATE, args + (state,)
            return _REBUILD_PARAMETER, args
        if t.device.type == "meta":
            func, args = _REBUILD_META_TENSOR, (t.dtype, tuple(t.shape), tuple(t.stride()),
                                                builtins.bool(t.requires_grad))
        else:
            st = t.untyped_storage()
            typed = t.dtype._name in _TYPED_STORAGES and id(st) not in self.untyped
            ref = _StorageRef(st, t.dtype if typed else None)
            args = (ref, t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                    builtins.bool(t.requires_grad), _ORDERED_DICT())
            func = _REBUILD_TENSOR_V2 if typed else _REBUILD_TENSOR_V3
            if not typed:
                args += (t.dtype,)
        if type(t) is ptcore.Tensor and not state:
            return func, args
        return _REBUILD_FROM_TYPE_V2, (func, type(t), args, state)

    @staticmethod
    def _reduce_sparse(s):
        size = ptcore.Size([builtins.int(n) for n in s.shape])
        if s.layout.name == "sparse_coo":
            data = (s._parts[0], s._parts[1], size, builtins.bool(s._coalesced))
        else:
            data = tuple(s._parts) + (size,)
        return _REBUILD_SPARSE_TENSOR, (s.layout, data)

    @staticmethod
    def _reduce_quantized(q):
        """torch's ``_rebuild_qtensor`` over a typed storage of the quantized dtype."""
        d = q._qdata
        if q.qscheme() is ptcore.per_tensor_affine:
            params = (q.qscheme(), q.q_scale(), q.q_zero_point())
        else:
            params = (q.qscheme(), q.q_per_channel_scales(), q.q_per_channel_zero_points(),
                      q.q_per_channel_axis())
        return _REBUILD_QTENSOR, (_StorageRef(d.untyped_storage(), q.dtype), d.storage_offset(),
                                  tuple(d.shape), tuple(d.stride()), params, False,
                                  _ORDERED_DICT())

    def save_global(self, obj, name=None):
        try:
            super().save_global(obj, name)
        except pickle.PicklingError:
            # torch.save pickles with the C pickler: a local class or function is its
            # AttributeError ("Can't pickle local object ..."), not the pure-Python
            # pickler's PicklingError; let the C pickler raise its own error
            pickle.dumps(obj, protocol=self.proto)
            raise

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = save_global


def _pickle(obj, protocol, location_tag, legacy=False):
    """``(data.pkl bytes, [(key, storage)], {key: numel})`` for ``obj``."""
    untyped = frozenset()
    for _ in range(2):
        buf = io.BytesIO()
        pk = TorchPickler(buf, protocol, location_tag, untyped, legacy)
        try:
            pk.dump(obj)
        except RecursionError:
            raise RecursionError("ptcore.save: maximum recursion depth exceeded: the object is "
                                 "nested too deeply to be saved") from None
        if not pk.mixed:
            return buf.getvalue(), pk.storages, pk.numels
        untyped = frozenset(pk.mixed)      # write those storages untyped everywhere
    raise AssertionError("ptcore.save: storages saved with mixed dtypes twice")


def archive_name(f):
    """The folder name of the records: the file's name without directory and
    extension, as torch's ``PyTorchStreamWriter`` names it (``archive`` for
    file objects, or where that leaves nothing)."""
    if not is_path(f):
        return "archive"
    base = os.path.basename(os.fsdecode(f).replace("\\", "/"))
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem or "archive"


def save_torch_format(obj, f, location_tag, pickle_protocol=2, disable_byteorder_record=False,
                      legacy=False):
    """Write ``obj`` to ``f`` (a path or a binary file object) as torch.save does
    (``legacy``: in torch's pre-1.6 format, see ``ptcore._torch_legacy_checkpoint``)."""
    if not is_path(f) and not hasattr(f, "write"):
        raise TypeError("ptcore.save: expected a file name (str or os.PathLike) or a binary "
                        f"file-like object with write(), got {type(f).__name__}")
    data, storages, numels = _pickle(obj, pickle_protocol, location_tag, legacy)
    if legacy:
        if is_path(f):
            with open(f, "wb") as fh:
                write_legacy(fh, pickle_protocol, data, storages, numels)
        else:
            write_legacy(f, pickle_protocol, data, storages, numels)
        return
    if is_path(f):
        with open(f, "wb") as fh:
            _write_archive(fh, archive_name(f), data, storages, disable_byteorder_record)
    else:
        _write_archive(f, "archive", data, storages, disable_byteorder_record)


def _write_archive(fh, name, data, storages, disable_byteorder_record):
    w = RecordWriter(fh, name)
    w.write_record("data.pkl", data)
    w.write_record(".format_version", b"1")
    w.write_record(".storage_alignment", b"64")
    if not disable_byteorder_record:
        w.write_record("byteorder", sys.byteorder.encode("ascii"))
    for key, st in storages:
        w.write_record(f"data/{key}", storage_payload(st))
    w.finish()
