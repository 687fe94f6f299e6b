"""Declarations of the sorting, searching and selection.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("sorting", grad="formula", device="frontend")

op("argsort", "function method out", grad="none", jvp="none", batch="scan")
op("bincount", "function method", tags="nondeterministic", grad="none", data_dependent="output")
op("bucketize", "function out", grad="none")
op("histc", "function method out", tags="nondeterministic", grad="none", data_dependent="output")
op("histogram", "function method out", grad="not_implemented", data_dependent="output",
    grad_fallback=True)
op("isin", "function out", grad="none")
op("kthvalue", "function method out", tags="nondeterministic", batch="dim")
op("msort", "function method out", batch="scan")
op("searchsorted", "function out", grad="none")
op("sort", "function method out", batch="scan")
op("topk", "function method out", batch="dim")
op("unique", "function method", grad="not_implemented", data_dependent="output")
op("unique_consecutive", "function method", grad="not_implemented", data_dependent="output")
