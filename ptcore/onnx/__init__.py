"""``ptcore.onnx`` (``torch.onnx``): export a model to the ONNX format.

:func:`export` traces the model with :mod:`ptcore.jit` and writes the graph
as an ONNX ``ModelProto`` (opsets 17-21) — the protobuf is written directly,
so exporting needs no ``onnx`` package; check the file with ``onnx.checker``
and run it with ONNX Runtime.
"""
from ptcore.onnx._export import export, UnsupportedOperatorError, OnnxExporterError

__all__ = ["export", "UnsupportedOperatorError", "OnnxExporterError", "is_in_onnx_export"]


def is_in_onnx_export():
    """True while :func:`export` runs (tracing the model)."""
    from ptcore.jit import is_tracing
    return is_tracing()
