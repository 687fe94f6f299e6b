"""Torch's legacy names for tensor types and layouts.

``ptcore.FloatTensor`` ... ``ptcore.BoolTensor`` (``isinstance`` checks on dtype
and device, constructors as ``torch.FloatTensor(2, 3)`` / ``torch.LongTensor([1, 2])``),
``ptcore.layout`` and ``ptcore.memory_format`` (the types of ``ptcore.strided`` and
``ptcore.channels_last``), and the constants ``inf``, ``nan``, ``pi``, ``e``, ``newaxis``.
"""
import builtins
import math

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase, Size
from ptcore.tensor import _sequence_data

__all__ = [
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
    "layout", "memory_format", "inf", "nan", "pi", "e", "newaxis",
]

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None


class _LegacyTensorType(type):
    """Metaclass of the legacy tensor types: ``isinstance`` compares dtype and device."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, _TensorBase) and obj.dtype is cls.dtype
                and obj.device.type == "cpu" and obj.layout is _C.strided)

    def __subclasscheck__(cls, sub):
        return type.__subclasscheck__(cls, sub)

    def __repr__(cls):
        return f"<class '{_C.root_name()}.{cls.__name__}'>"

    @property
    def is_cuda(cls):
        return False

    @property
    def is_sparse(cls):
        return False

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments "
                            f"{sorted(kwargs)}; it accepts sizes, data or a tensor, and device=")
        if device is not None and _C.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor {cls.__name__} expects device type cpu, "
                               f"got {_C.device(device).type}")
        dtype = cls.dtype
        import ptcore
        if not args:
            return ptcore.empty(0, dtype=dtype)
        if builtins.len(args) == 1:
            a = args[0]
            if isinstance(a, _TensorBase):
                if a.dtype is not dtype:
                    raise TypeError(f"{cls.__name__}: expected a tensor of dtype {dtype}, "
                                    f"got {a.dtype}")
                return a.detach() if not a.requires_grad else a.view(a.shape)
            if isinstance(a, Size):
                return ptcore.empty(tuple(a), dtype=dtype)
            if isinstance(a, _C.Storage) and hasattr(ptcore.Tensor, "set_"):
                return ptcore.empty(0, dtype=dtype).set_(a)
            if isinstance(a, (builtins.int, _np.integer)) and not isinstance(a, builtins.bool):
                return ptcore.empty(builtins.int(a), dtype=dtype)
            return ptcore.tensor(_sequence_data(a), dtype=dtype)
        if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
            return ptcore.empty(tuple(args), dtype=dtype)
        raise TypeError(f"{cls.__name__}(): expected integer sizes, got "
                        f"({', '.join(type(a).__name__ for a in args)})")


def _legacy(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "ptcore",
                                        "__doc__": f"Legacy type of CPU tensors of dtype {dtype}."})


FloatTensor = _legacy("FloatTensor", _C.float32)
DoubleTensor = _legacy("DoubleTensor", _C.float64)
HalfTensor = _legacy("HalfTensor", _C.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _C.bfloat16)
ByteTensor = _legacy("ByteTensor", _C.uint8)
CharTensor = _legacy("CharTensor", _C.int8)
ShortTensor = _legacy("ShortTensor", _C.int16)
IntTensor = _legacy("IntTensor", _C.int32)
LongTensor = _legacy("LongTensor", _C.int64)
BoolTensor = _legacy("BoolTensor", _C.bool_)

_LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor,
                 ShortTensor, IntTensor, LongTensor, BoolTensor)


class _LegacyCudaTensorType(_LegacyTensorType):
    """Metaclass of ``ptcore.cuda.FloatTensor`` & co.: ``isinstance`` is dtype and a
    CUDA device; calling one makes the tensor on the current CUDA device (a
    ``TypeError`` without CUDA, as torch's CPU builds)."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, _TensorBase) and obj.dtype is cls.dtype
                and obj.device.type == "cuda" and obj.layout is _C.strided)

    def __repr__(cls):
        return f"<class 'ptcore.cuda.{cls.__name__}'>"

    @property
    def is_cuda(cls):
        return True

    def __call__(cls, *args, device=None, **kwargs):
        import ptcore
        if not ptcore.cuda.is_available():
            raise TypeError(f"type ptcore.cuda.{cls.__name__} not available: no CUDA device "
                            "(ptcore.cuda.is_available() is False)")
        dev = ptcore.device("cuda", ptcore.cuda.current_device()) if device is None else \
            _C.device(device)
        if dev.type != "cuda":
            raise RuntimeError(f"legacy constructor ptcore.cuda.{cls.__name__} expects device "
                               f"type cuda, got {dev.type}")
        return _LegacyTensorType.__call__(cls._cpu, *args, **kwargs).to(dev)


def _legacy_cuda(cpu_type):
    t = _LegacyCudaTensorType(cpu_type.__name__, (), {
        "dtype": cpu_type.dtype, "__module__": "ptcore.cuda", "_cpu": cpu_type,
        "__doc__": f"Legacy type of CUDA tensors of dtype {cpu_type.dtype}."})
    return t


# ptcore.cuda.FloatTensor ... (bound in ptcore.cuda)
CUDA_LEGACY_TYPES = tuple(_legacy_cuda(t) for t in _LEGACY_TYPES)


# the types of the layouts and memory formats are the core's
layout = _C.layout
memory_format = _C.memory_format
