"""Declarations of the indexing ops (index_*, scatter, gather, masked ops).

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("indexing")

op("as_strided_scatter", "function method", layout_bound=True)
op("fill_diagonal", "inplace")
op("index_reduce", "function method inplace out", device="frontend")
op("nonzero_static", "function method out")
op("unravel_index", "function")
