"""Declarations of the numerical calculus (gradient, trapezoid ...).

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("calculus")

op("cumulative_trapezoid", "function")
op("diff", "function method out")
op("gradient", "function")
op("trapezoid", "function")
op("trapz", "function")
