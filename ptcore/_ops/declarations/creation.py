"""Declarations of the tensor creation.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("creation")

op("arange", "function out", tags="factory", default_device=True)
op("as_tensor", "function", tags="factory", default_device=True)
op("asarray", "function", tags="factory", default_device=True)
op("bartlett_window", "function", tags="factory", default_device=True)
op("blackman_window", "function", tags="factory", default_device=True)
op("block_diag", "function", grad="formula")
op("cartesian_prod", "function")
op("combinations", "function", data_dependent="output")
op("empty", "function out", tags="factory", default_device=True)
op("empty_like", "function", device="through", jvp="none")
op("empty_permuted", "function", tags="factory", default_device=True)
op("empty_strided", "function", tags="factory", default_device=True)
op("eye", "function out", tags="factory", default_device=True)
op("full", "function out", tags="factory", default_device=True)
op("full_like", "function", device="through", jvp="none")
op("hamming_window", "function", tags="factory", default_device=True)
op("hann_window", "function", tags="factory", default_device=True)
op("kaiser_window", "function", tags="factory", default_device=True)
op("linspace", "function out", tags="factory", default_device=True)
op("logspace", "function out", tags="factory", default_device=True)
op("new", "method")
op("ones", "function out", tags="factory", default_device=True)
op("ones_like", "function", device="through", jvp="none")
op("range", "function out", tags="factory", default_device=True)
op("scalar_tensor", "function", tags="factory", default_device=True)
op("tensor", "function", tags="factory", default_device=True)
op("vander", "function")
op("zeros", "function out", tags="factory", default_device=True)
op("zeros_like", "function", device="through", jvp="none")
