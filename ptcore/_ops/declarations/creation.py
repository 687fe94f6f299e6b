"""Declarations of the tensor creation.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("creation")

op("arange", "function out", tags="factory")
op("as_tensor", "function", tags="factory")
op("asarray", "function", tags="factory")
op("bartlett_window", "function", tags="factory")
op("blackman_window", "function", tags="factory")
op("block_diag", "function", grad="formula")
op("cartesian_prod", "function")
op("combinations", "function", data_dependent="output")
op("empty", "function out", tags="factory")
op("empty_like", "function", device="through", jvp="none")
op("empty_permuted", "function", tags="factory")
op("empty_strided", "function", tags="factory")
op("eye", "function out", tags="factory")
op("full", "function out", tags="factory")
op("full_like", "function", device="through", jvp="none")
op("hamming_window", "function", tags="factory")
op("hann_window", "function", tags="factory")
op("kaiser_window", "function", tags="factory")
op("linspace", "function out", tags="factory")
op("logspace", "function out", tags="factory")
op("new", "method")
op("ones", "function out", tags="factory")
op("ones_like", "function", device="through", jvp="none")
op("range", "function out", tags="factory")
op("scalar_tensor", "function", tags="factory")
op("tensor", "function", tags="factory")
op("vander", "function")
op("zeros", "function out", tags="factory")
op("zeros_like", "function", device="through", jvp="none")
