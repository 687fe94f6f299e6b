"""Declarations of the queries about tensors (is_nonzero, is_same_size ...).

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("info")

op("const_data_ptr", "method", device="through")
op("is_distributed", "method", device="through")
op("is_inference", "function method", device="through")
op("is_neg", "function method", device="through")
op("is_nonzero", "function method", device="through", jvp="none", data_dependent="item")
op("is_same_size", "function method", device="through")
op("is_signed", "function method", device="through")
# the quantizer of a quantized tensor (ptcore._quantized, whose class overrides them;
# on a plain tensor they raise, dequantize returns a float tensor itself)
op("dequantize", "method", device="through", jvp="none")
op("int_repr", "method", device="through", jvp="none")
op("q_scale", "method", device="through", jvp="none")
op("q_zero_point", "method", device="through", jvp="none")
op("q_per_channel_scales", "method", device="through", jvp="none")
op("q_per_channel_zero_points", "method", device="through", jvp="none")
op("q_per_channel_axis", "method", device="through", jvp="none")
op("qscheme", "method", device="through", jvp="none")
