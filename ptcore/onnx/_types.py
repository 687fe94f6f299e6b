"""The enums of :mod:`ptcore.onnx`'s interface (torch's names and values):
:class:`TrainingMode`, :class:`OperatorExportTypes`,
:class:`TensorProtoDataType` (ONNX's element types) and
:class:`JitScalarType` (scalar types, mapped to dtypes and ONNX types)."""
import enum

import ptcore
from ptcore.onnx.errors import OnnxExporterError

__all__ = ["TrainingMode", "OperatorExportTypes", "TensorProtoDataType", "JitScalarType"]


class _NamedIntEnum(enum.IntEnum):
    """An int enum printed as ``Class.NAME`` (torch's are pybind11 enums)."""

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"


class TrainingMode(_NamedIntEnum):
    """The mode a model is exported in."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(_NamedIntEnum):
    """How ops are exported (ptcore writes standard ONNX ops only)."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


TensorProtoDataType = _NamedIntEnum("TensorProtoDataType", [
    ("UNDEFINED", 0), ("FLOAT", 1), ("UINT8", 2), ("INT8", 3), ("UINT16", 4), ("INT16", 5),
    ("INT32", 6), ("INT64", 7), ("STRING", 8), ("BOOL", 9), ("FLOAT16", 10), ("DOUBLE", 11),
    ("UINT32", 12), ("UINT64", 13), ("COMPLEX64", 14), ("COMPLEX128", 15), ("BFLOAT16", 16),
    ("FLOAT8E4M3FN", 17), ("FLOAT8E4M3FNUZ", 18), ("FLOAT8E5M2", 19), ("FLOAT8E5M2FNUZ", 20)],
    module=__name__)

# member: (scalar name, torch name, dtype name or None, ONNX type name)
_INFO = {
    "UINT8": ("Byte", "uint8_t", "uint8", "UINT8"),
    "INT8": ("Char", "int8_t", "int8", "INT8"),
    "INT16": ("Short", "int16_t", "int16", "INT16"),
    "INT": ("Int", "int", "int32", "INT32"),
    "INT64": ("Long", "int64_t", "int64", "INT64"),
    "HALF": ("Half", "half", "float16", "FLOAT16"),
    "FLOAT": ("Float", "float", "float32", "FLOAT"),
    "DOUBLE": ("Double", "double", "float64", "DOUBLE"),
    "COMPLEX32": ("ComplexHalf", "complex32", "complex32", "UNDEFINED"),
    "COMPLEX64": ("ComplexFloat", "complex64", "complex64", "COMPLEX64"),
    "COMPLEX128": ("ComplexDouble", "complex128", "complex128", "COMPLEX128"),
    "BOOL": ("Bool", "bool", "bool", "BOOL"),
    "QINT8": ("QInt8", "qint8", None, "INT8"),
    "QUINT8": ("QUInt8", "quint8", None, "UINT8"),
    "QINT32": ("QInt32", "qint32", None, "INT32"),
    "BFLOAT16": ("BFloat16", "bfloat16", "bfloat16", "BFLOAT16"),
    "FLOAT8E5M2": ("Float8E5M2", "float8_e5m2", None, "FLOAT8E5M2"),
    "FLOAT8E4M3FN": ("Float8E4M3FN", "float8_e4m3fn", None, "FLOAT8E4M3FN"),
    "FLOAT8E5M2FNUZ": ("Float8E5M2FNUZ", "float8_e5m2fnuz", None, "FLOAT8E5M2FNUZ"),
    "FLOAT8E4M3FNUZ": ("Float8E4M3FNUZ", "float8_e4m3fnuz", None, "FLOAT8E4M3FNUZ"),
    "UNDEFINED": ("Undefined", None, None, "UNDEFINED"),
}
_ONNX_INCOMPATIBLE = ("COMPLEX32", "UNDEFINED")


class JitScalarType(enum.IntEnum):
    """Scalar types as torch.onnx numbers them, with their dtypes and ONNX
    element types."""
    UINT8 = 0
    INT8 = 1
    INT16 = 2
    INT = 3
    INT64 = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    COMPLEX32 = 8
    COMPLEX64 = 9
    COMPLEX128 = 10
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    FLOAT8E5M2 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E5M2FNUZ = 18
    FLOAT8E4M3FNUZ = 19
    UNDEFINED = 20

    @classmethod
    def from_dtype(cls, dtype):
        """The scalar type of ``dtype``."""
        if not isinstance(dtype, ptcore.dtype):
            raise OnnxExporterError(f"Unknown dtype: {dtype}")
        name = dtype._name
        for member, info in _INFO.items():
            if info[2] == name:
                return cls[member]
        raise OnnxExporterError(f"Unknown dtype: {dtype}")

    @classmethod
    def from_onnx_type(cls, onnx_type):
        """The scalar type of an ONNX element type (a TensorProtoDataType or its int)."""
        try:
            name = TensorProtoDataType(int(onnx_type)).name
        except (ValueError, TypeError):
            raise OnnxExporterError(f"Unknown onnx_type: {onnx_type}") from None
        found = None
        for member, info in _INFO.items():
            if info[3] == name and member != "UNDEFINED":
                found = member          # the last scalar type of the ONNX type, as torch's
        if found is None:
            raise OnnxExporterError(f"Unknown onnx_type: {onnx_type}")
        return cls[found]

    @classmethod
    def from_value(cls, value, default=None):
        """The scalar type of tensor ``value`` (``default`` for None)."""
        if isinstance(value, ptcore.Tensor):
            return cls.from_dtype(value.dtype)
        if value is None and default is not None:
            return default
        raise OnnxExporterError("value must be either a ptcore.Tensor or a graph value")

    def scalar_name(self):
        return _INFO[self.name][0]

    def torch_name(self):
        name = _INFO[self.name][1]
        if name is None:
            raise KeyError(self)
        return name

    def dtype(self):
        name = _INFO[self.name][2]
        if name is None:
            raise KeyError(self) if self.name == "UNDEFINED" else OnnxExporterError(
                f"ptcore has no dtype for the scalar type {self.name}")
        return getattr(ptcore, name)

    def onnx_type(self):
        return TensorProtoDataType[_INFO[self.name][3]]

    def onnx_compatible(self):
        return self.name not in _ONNX_INCOMPATIBLE


for _cls in (TrainingMode, OperatorExportTypes, TensorProtoDataType, JitScalarType):
    _cls.__module__ = "ptcore.onnx"
