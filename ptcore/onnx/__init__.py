"""``ptcore.onnx`` (``torch.onnx``): export a model to the ONNX format.

:func:`export` traces the model with :mod:`ptcore.jit` and writes the graph
as an ONNX ``ModelProto`` (opsets 9-21, 17 by default) — the protobuf is written directly,
so exporting needs no ``onnx`` package; check the file with ``onnx.checker``
and run it with ONNX Runtime.
"""
from ptcore.onnx import errors
from ptcore.onnx.errors import (OnnxExporterError, OnnxExporterWarning,
                                UnsupportedOperatorError)
from ptcore.onnx._types import (TrainingMode, OperatorExportTypes, TensorProtoDataType,
                                JitScalarType)
from ptcore.onnx._export import export, select_model_mode_for_export
from ptcore.onnx._custom import register_custom_op_symbolic, unregister_custom_op_symbolic
from ptcore.onnx._program import ONNXProgram
from ptcore.onnx import symbolic_helper, symbolic_opset11
from ptcore.version import __version__ as _version
from ptcore.jit import is_tracing as _is_tracing

__all__ = ["export", "UnsupportedOperatorError", "OnnxExporterError", "OnnxExporterWarning",
           "is_in_onnx_export", "errors", "TrainingMode", "OperatorExportTypes",
           "TensorProtoDataType", "JitScalarType", "select_model_mode_for_export",
           "producer_name", "producer_version", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic", "symbolic_helper", "symbolic_opset11", "ONNXProgram"]

# what export writes in the model's producer fields
producer_name = "ptcore"
producer_version = _version


def is_in_onnx_export():
    """True while :func:`export` runs (tracing the model)."""
    return _is_tracing()
