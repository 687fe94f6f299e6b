"""torch's legacy sparse tensor types ``torch.sparse.FloatTensor`` ...
``torch.sparse.BFloat16Tensor``: ``isinstance`` checks (a COO tensor of the
type's dtype) and the constructors old scripts use (pygcn's
``torch.sparse.FloatTensor(indices, values, shape)``)."""
import builtins

from ptcore import _tensor as _C
from ptcore._legacy_types import _LEGACY_TYPES, _LegacyTensorType
from ptcore.sparse._tensor import SparseTensor, empty_coo, sparse_coo, sparse_coo_tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor"]


def _is_size(args):
    return all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args)


class _SparseLegacyType(_LegacyTensorType):
    """Metaclass of the legacy sparse types: ``isinstance`` compares layout and dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, SparseTensor) and obj.layout is sparse_coo and \
            obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class '{_C.root_name()}.sparse.{cls.__name__}'>"

    @property
    def is_sparse(cls):
        return True

    def __call__(cls, *args, device=None):
        """``T()``, ``T(*sizes)`` / ``T(Size)``: no stored entries;
        ``T(indices, values[, size])``: ``sparse_coo_tensor`` (the values keep
        their dtype, as torch's)."""
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor sparse.{cls.__name__} expects device type "
                               f"cpu, got {_C.device(device).type}")
        if not args:
            return empty_coo((0,), cls.dtype, 1)
        if builtins.len(args) == 1 and isinstance(args[0], (builtins.tuple, builtins.list)) \
                and _is_size(args[0]):
            args = builtins.tuple(args[0])
        if _is_size(args):
            return empty_coo(builtins.tuple(args), cls.dtype)
        if builtins.len(args) in (2, 3) and all(isinstance(a, _C._TensorBase) for a in args[:2]):
            return sparse_coo_tensor(*args)
        raise TypeError(f"sparse.{cls.__name__}(): expected sizes, or (indices, values[, size]), "
                        f"got ({', '.join(type(a).__name__ for a in args)})")


def _legacy(name, dtype):
    return _SparseLegacyType(name, (), {"dtype": dtype, "__module__": "ptcore.sparse",
                                        "__doc__": f"Legacy type of sparse COO tensors of "
                                                   f"dtype {dtype}."})


# one per dense legacy type but BoolTensor (torch.sparse has none)
for _dense in _LEGACY_TYPES:
    if _dense.__name__ != "BoolTensor":
        globals()[_dense.__name__] = _legacy(_dense.__name__, _dense.dtype)
del _dense
