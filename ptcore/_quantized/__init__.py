"""Quantized tensors and the quantization ops (``torch.quantize_per_tensor``,
``torch.qint8`` ...): :mod:`ptcore._quantized._tensor` holds the tensor class and the
quantization schemes, :mod:`ptcore._quantized._ops` the ops; the package root
re-exports both under torch's names."""
from ptcore._quantized._tensor import (  # noqa: F401
    QuantizedTensor, qscheme, per_tensor_affine, per_channel_affine, per_tensor_symmetric,
    per_channel_symmetric, per_channel_affine_float_qparams)
from ptcore._quantized._ops import (  # noqa: F401
    quantize_per_tensor, quantize_per_channel, dequantize, quantize_per_tensor_dynamic,
    fake_quantize_per_tensor_affine, fake_quantize_per_channel_affine,
    _choose_qparams_per_tensor, int_repr, q_scale, q_zero_point, q_per_channel_scales,
    q_per_channel_zero_points, q_per_channel_axis)
