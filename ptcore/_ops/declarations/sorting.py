"""Declarations of the sorting, searching and selection.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("sorting")

op("argsort", "function method out")
op("bincount", "function method", tags="nondeterministic")
op("bucketize", "function out")
op("histc", "function method out", tags="nondeterministic")
op("histogram", "function method out")
op("isin", "function out")
op("kthvalue", "function method out", tags="nondeterministic")
op("msort", "function method out")
op("searchsorted", "function out")
op("sort", "function method out")
op("topk", "function method out")
op("unique", "function method")
op("unique_consecutive", "function method")
