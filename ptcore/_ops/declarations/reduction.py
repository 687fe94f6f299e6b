"""Declarations of the reductions and scans.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("reduction", grad="formula")

op("_vector_norm", "function out", batch="reduce_dims", device="frontend", beyond_torch="function")
op("all", "function method out", grad="none", batch="reduce", device="frontend")
op("amax", "function method out", batch="reduce_dims", device="frontend")
op("amin", "function method out", batch="reduce_dims", device="frontend")
op("aminmax", "function method out", batch="reduce", device="frontend")
op("any", "function method out", grad="none", batch="reduce", device="frontend")
op("argmax", "function method out", grad="none", jvp="none", batch="reduce", device="frontend")
op("argmin", "function method out", grad="none", jvp="none", batch="reduce", device="frontend")
op("corrcoef", "function method", grad="inside")
op("count_nonzero", "function method", grad="none", batch="reduce_dims", device="frontend")
op("cov", "function method", grad="inside")
op("cummax", "function method out", batch="scan", device="frontend")
op("cummin", "function method out", batch="scan", device="frontend")
op("cumprod", "function method inplace out", batch="scan", device="frontend")
op("cumsum", "function method inplace out", tags="nondeterministic", jvp="same", batch="scan",
   device="frontend", script_tensor=True)
op("dist", "function method")
op("histogramdd", "function out", grad="inside", data_dependent="output")
op("log_softmax", "function method out", batch="scan", script_tensor=True)
op("logcumsumexp", "function method out", batch="scan", device="frontend")
op("logsumexp", "function method out", batch="reduce_dims", device="frontend")
op("max", "function method out", batch="reduce", device="frontend")
op("mean", "function method out", jvp="same", batch="reduce_dims", device="frontend",
    script_tensor=True)
op("median", "function method out", tags="nondeterministic", batch="reduce", device="frontend")
op("min", "function method out", batch="reduce", device="frontend")
op("mode", "function method out", batch="dim", device="frontend")
op("nanmean", "function method out", batch="reduce_dims", device="frontend")
op("nanmedian", "function method out", batch="reduce", device="frontend")
op("nanquantile", "function method out", autocast="fp32", batch="reduce", device="frontend")
op("nansum", "function method out", batch="reduce_dims", device="frontend")
op("norm", "function method out", batch="reduce_dims", device="frontend")
op("norm_except_dim", "function", grad="inside")
op("prod", "function method out", autocast="fp32", batch="reduce", device="frontend")
op("quantile", "function method out", autocast="fp32", batch="reduce", device="frontend")
op("renorm", "function method inplace out", grad="inside", batch="scan")
op("segment_reduce", "function", grad="inside")
op("softmax", "function method out", batch="scan", script_tensor=True)
op("std", "function method out", batch="reduce_dims", device="frontend", correction=True)
op("std_mean", "function out", batch="reduce_dims", device="frontend", correction=True)
op("sum", "function method out", jvp="same", batch="reduce_dims", device="frontend",
    script_tensor=True)
op("sum_to_size", "method", grad="inside")
op("var", "function method out", batch="reduce_dims", device="frontend", correction=True)
op("var_mean", "function out", batch="reduce_dims", device="frontend", correction=True)
op("vector_norm", "function out", alias="_vector_norm", beyond_torch="function")
