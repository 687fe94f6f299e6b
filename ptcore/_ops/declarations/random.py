"""Declarations of the random sampling.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("random")

op("bernoulli", "function method inplace out", tags="random", jvp="zero", device="frontend",
    core_entry="inplace")
op("binomial", "function", tags="random", device="frontend", grad_fallback=True)
op("cauchy", "inplace", tags="random", device="through")
op("geometric", "inplace", tags="random", device="through")
op("log_normal", "inplace", tags="random", device="through")
op("multinomial", "function method out", tags="random", jvp="none", device="frontend")
op("normal", "function inplace out", tags="random factory", jvp="zero", device="frontend",
    core_entry="inplace")
op("poisson", "function", tags="random", jvp="zero", device="frontend")
op("rand", "function out", tags="random factory", default_device=True)
op("rand_like", "function", tags="random factory", jvp="none", device="frontend")
op("randint", "function out", tags="random factory", default_device=True)
op("randint_like", "function", tags="random", jvp="none", device="frontend")
op("randn", "function out", tags="random factory", default_device=True)
op("randn_like", "function", tags="random", jvp="none", device="frontend")
op("randperm", "function out", tags="random factory", default_device=True)
