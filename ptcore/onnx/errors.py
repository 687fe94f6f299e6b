"""Errors and warnings of :mod:`ptcore.onnx` (``torch.onnx.errors``)."""

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError",
           "SymbolicValueError"]


class OnnxExporterWarning(UserWarning):
    """Warnings of the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """The model cannot be exported as asked."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the traced model has no ONNX mapping."""


class SymbolicValueError(OnnxExporterError):
    """A value of the exported graph is not what the export of an op needs."""


for _cls in (OnnxExporterWarning, OnnxExporterError):
    _cls.__module__ = "ptcore.onnx"
