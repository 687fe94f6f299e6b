"""Declarations of the random sampling.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("random")

op("bernoulli", "function method inplace out", tags="random")
op("binomial", "function", tags="random")
op("cauchy", "inplace", tags="random", device="through")
op("geometric", "inplace", tags="random", device="through")
op("log_normal", "inplace", tags="random", device="through")
op("multinomial", "function method out", tags="random")
op("normal", "function inplace out", tags="random factory")
op("poisson", "function", tags="random")
op("rand", "function out", tags="random factory")
op("rand_like", "function", tags="random factory")
op("randint", "function out", tags="random factory")
op("randint_like", "function", tags="random")
op("randn", "function out", tags="random factory")
op("randn_like", "function", tags="random")
op("randperm", "function out", tags="random factory")
