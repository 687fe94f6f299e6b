"""``ptcore.storage`` (``torch.storage``): typed storages (``torch.TypedStorage``, ``FloatStorage`` ...) and the Tensor methods that
take or give storages: ``Tensor.storage``, ``storage_type``, ``set_``, and torch's deprecated
out-of-place ``resize`` / ``resize_as``.

A :class:`TypedStorage` is a dtype over an untyped :class:`ptcore.UntypedStorage` (the bytes
are shared, never copied).  As in torch, ``Tensor.storage()`` warns once per process that typed
storages are deprecated.
"""
import builtins
import operator
import warnings

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch.generate import method_form as _method_form
from ptcore.autograd.grad_mode import is_grad_enabled

__all__ = ["TypedStorage", "UntypedStorage", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage",
           "ByteStorage", "CharStorage", "ShortStorage", "IntStorage", "LongStorage",
           "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage"]

UntypedStorage = _C.Storage

_WARNED = False


def _warn_typed_storage_removal():
    global _WARNED
    if not _WARNED:
        _WARNED = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()", UserWarning, stacklevel=3)


class _LegacyStorageMeta(type):
    """``isinstance(s, FloatStorage)`` holds for every float32 CPU TypedStorage (as torch)."""

    def __instancecheck__(cls, obj):
        if cls.__dict__.get("dtype") is None:
            return type.__instancecheck__(cls, obj)
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype and obj.device.type == "cpu"


class TypedStorage(metaclass=_LegacyStorageMeta):
    """A dtype over untyped storage bytes.

    ``TypedStorage(size, dtype=...)`` allocates, ``TypedStorage(sequence, dtype=...)`` copies
    data in, ``TypedStorage(wrap_storage=untyped, dtype=...)`` views existing bytes.
    """

    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        cls_dtype = type(self).__dict__.get("dtype")
        if cls_dtype is not None:
            if dtype is not None and dtype is not cls_dtype:
                raise RuntimeError(f"{type(self).__name__}: dtype is fixed to {cls_dtype}, "
                                   f"got dtype={dtype}")
            dtype = cls_dtype
        if dtype is None:
            import ptcore
            dtype = ptcore.get_default_dtype()
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f"TypedStorage: dtype must be a ptcore.dtype, got {type(dtype).__name__}")
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage: wrap_storage= takes no positional arguments")
            if not isinstance(wrap_storage, _C.Storage):
                raise TypeError("TypedStorage: wrap_storage must be an UntypedStorage, got "
                                f"{type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
        elif not args:
            self._untyped_storage = _C.Storage(0, device=device)
        elif builtins.len(args) == 1 and isinstance(args[0], builtins.int) \
                and not isinstance(args[0], builtins.bool):
            self._untyped_storage = _C.Storage(args[0] * dtype.itemsize, device=device)
        elif builtins.len(args) == 1:
            import ptcore
            data = ptcore.tensor(args[0], dtype=dtype, device=device).reshape(-1).contiguous()
            self._untyped_storage = data.untyped_storage()
        else:
            raise TypeError(f"TypedStorage(): expected a size or a sequence, got {builtins.len(args)} "
                            "positional arguments")
        self.dtype = dtype
        if self._untyped_storage.nbytes() % dtype.itemsize:
            raise RuntimeError(f"TypedStorage: {self._untyped_storage.nbytes()} bytes is not a "
                               f"multiple of the {dtype} element size {dtype.itemsize}")

    # -- size and identity --------------------------------------------------------------
    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def __sizeof__(self):
        return super().__sizeof__() + self.nbytes()     # (as torch's: the object and its bytes)

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        return self._untyped_storage

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def is_pinned(self, device="cuda"):
        return self._untyped_storage.is_pinned()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def resize_(self, size):
        """Resize to ``size`` elements in place (the untyped storage's ``resize_`` of
        ``size * element_size()`` bytes, as torch's)."""
        _warn_typed_storage_removal()
        self._untyped_storage.resize_(size * self.dtype.itemsize)
        return self

    def resizable(self):
        return self._untyped_storage.resizable()

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            legacy = _LEGACY_BY_DTYPE.get(self.dtype)
            root = _C.root_name()
            return f"{root}.{legacy.__name__}" if legacy is not None else f"{root}.TypedStorage"
        raise NotImplementedError("TypedStorage.type(dtype): convert the tensor instead")

    # -- data ---------------------------------------------------------------------------
    def _as_tensor(self):
        return _C._tensor_from_storage(self._untyped_storage, self.dtype, [self.size()], [1], 0)

    def _index(self, idx):
        if isinstance(idx, builtins.slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        i = operator.index(idx)
        n = self.size()
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i % n if n else i

    def __getitem__(self, idx):
        return self._as_tensor()[self._index(idx)].item()

    def __setitem__(self, idx, value):
        t = self._as_tensor()
        if isinstance(idx, builtins.slice):
            t[idx] = value
        else:
            t[self._index(idx)] = value

    def tolist(self):
        return self._as_tensor().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._as_tensor().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = source._as_tensor() if isinstance(source, TypedStorage) else source
        self._as_tensor().copy_(src)
        return self

    def clone(self):
        return TypedStorage(wrap_storage=self._as_tensor().clone().untyped_storage(),
                            dtype=self.dtype, _internal=True)

    def cpu(self):
        return self

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"[{_C.root_name()}.storage.TypedStorage(dtype={self.dtype}, device={self.device}) " \
               f"of size {self.size()}]"
        return body + "\n" + head if body else head

    def __copy__(self):
        return self.clone()

    def __reduce__(self):
        return (_rebuild_typed_storage, (self.tolist(), self.dtype))


def _rebuild_typed_storage(data, dtype):
    return TypedStorage(data, dtype=dtype, _internal=True)


def _legacy_storage(name, dtype):
    return _LegacyStorageMeta(name, (TypedStorage,), {"dtype": dtype, "__module__": "ptcore"})


FloatStorage = _legacy_storage("FloatStorage", _C.float32)
DoubleStorage = _legacy_storage("DoubleStorage", _C.float64)
HalfStorage = _legacy_storage("HalfStorage", _C.float16)
BFloat16Storage = _legacy_storage("BFloat16Storage", _C.bfloat16)
ByteStorage = _legacy_storage("ByteStorage", _C.uint8)
CharStorage = _legacy_storage("CharStorage", _C.int8)
ShortStorage = _legacy_storage("ShortStorage", _C.int16)
IntStorage = _legacy_storage("IntStorage", _C.int32)
LongStorage = _legacy_storage("LongStorage", _C.int64)
BoolStorage = _legacy_storage("BoolStorage", _C.bool_)
ComplexFloatStorage = _legacy_storage("ComplexFloatStorage", _C.complex64)
ComplexDoubleStorage = _legacy_storage("ComplexDoubleStorage", _C.complex128)

_LEGACY_BY_DTYPE = {c.dtype: c for c in (
    FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, ByteStorage, CharStorage,
    ShortStorage, IntStorage, LongStorage, BoolStorage, ComplexFloatStorage,
    ComplexDoubleStorage)}


# -- Tensor methods ------------------------------------------------------------------------

@_method_form("storage")
def storage(self):
    """The tensor's storage as a (deprecated) :class:`TypedStorage` of its dtype."""
    _warn_typed_storage_removal()
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


@_method_form("storage_type")
def storage_type(self):
    """The legacy storage class of the tensor's dtype (``ptcore.FloatStorage`` ...)."""
    legacy = _LEGACY_BY_DTYPE.get(self.dtype)
    if legacy is None:
        raise RuntimeError(f"storage_type: no legacy storage type for dtype {self.dtype}")
    return legacy


def _check_inplace_leaf(self, name):
    if self.requires_grad and self.grad_fn is None and is_grad_enabled():
        raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place "
                           f"operation ({name}).")


@_method_form("set_")
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make the tensor view ``source`` (a tensor, an untyped or typed storage) with the given
    offset, size and strides (contiguous strides when omitted); ``set_()`` empties it."""
    _check_inplace_leaf(self, "set_")
    if source is None:
        untyped, storage_offset, size, stride = _C.Storage(0, device=self.device), 0, [0], None
    elif isinstance(source, _TensorBase):
        if source.dtype is not self.dtype:
            # torch's message (C++ type names, in its order: source, then self)
            raise RuntimeError(f"Could not set tensor of type {_cxx_type(source.dtype)} to a "
                               f"tensor of type {_cxx_type(self.dtype)}")
        if size is None and stride is None and storage_offset == 0:
            storage_offset, size, stride = source.storage_offset(), source.shape, source.stride()
        untyped = source.untyped_storage()
    elif isinstance(source, TypedStorage):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"set_: expected a storage of dtype {self.dtype} or an "
                               f"UntypedStorage, got a TypedStorage of dtype {source.dtype}")
        untyped = source.untyped()
    elif isinstance(source, _C.Storage):
        untyped = source
    else:
        raise TypeError(f"set_(): expected a Tensor or a Storage as source, got "
                        f"{type(source).__name__}")
    offset, size, stride = _geometry(self, untyped, storage_offset, size, stride)
    native = getattr(_C, "_set_storage_impl", None)
    if native is not None:  # the C setter (grows a resizable storage, export checks)
        return native(self, untyped, offset, tuple(size), tuple(stride))
    try:
        view = _C._tensor_from_storage(untyped, self.dtype, size, stride, offset)
    except (RuntimeError, ValueError) as err:
        raise RuntimeError(f"set_: size {size}, stride {stride} and storage offset {offset} do "
                           f"not fit a storage of {untyped.nbytes()} bytes for dtype "
                           f"{self.dtype} ({err})") from None
    _C._set_data(self, view)
    return self


def _geometry(self, untyped, offset, size, stride):
    """``(offset, size, stride)`` of a ``set_`` call with torch's defaults filled in."""
    offset = operator.index(offset)
    if size is None:
        numel = untyped.nbytes() // self.dtype.itemsize
        size = [numel - offset] if numel > offset else [0]
    size = [operator.index(s) for s in size]
    if stride is None:
        stride, acc = [], 1
        for s in reversed(size):
            stride.append(acc)
            acc *= max(s, 1)
        stride.reverse()
    else:
        stride = [operator.index(s) for s in stride]
    if builtins.len(stride) != builtins.len(size):
        raise RuntimeError(f"set_: {builtins.len(size)} sizes {size} but {builtins.len(stride)} "
                           f"strides {stride}")
    return offset, size, stride


@_method_form("resize")
def resize(self, *sizes):
    """Deprecated out-of-place resize: a differentiable reshape that keeps the element count."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize_keep_numel(self, sizes)


@_method_form("resize_as")
def resize_as(self, tensor):
    """Deprecated out-of-place ``resize_as``: reshape to ``tensor``'s size (same element count)."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize_keep_numel(self, tuple(tensor.shape))


def _resize_keep_numel(self, sizes):
    if builtins.len(sizes) == 1 and isinstance(sizes[0], (builtins.tuple, builtins.list, _C.Size)):
        sizes = tuple(sizes[0])
    sizes = tuple(operator.index(s) for s in sizes)
    numel = 1
    for s in sizes:
        numel *= s
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. ")
    return self.contiguous().view(sizes)


_CXX_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>"}


def _cxx_type(dt):
    """The C++ element type torch's messages name for ``dt``."""
    name = str(dt).split(".")[-1]
    return _CXX_TYPES.get(name, name)
