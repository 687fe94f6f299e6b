"""``ptcore._dynamo``: graph capture for :func:`ptcore.compile` (``torch._dynamo``).

A compiled program is captured by running it once with the tracing layer of the dispatch
point on (:mod:`~ptcore._dynamo.capture`), under guards (:mod:`~ptcore._dynamo.guards`),
into a cache of graphs per compiled callable (:mod:`~ptcore._dynamo.compiled`).  Here:
``reset()``, ``explain(fn)(*args)`` (the graphs and graph breaks of a call),
``graph_break()``, ``disable``/``optimize``/``run``, the backend registry and the settings
(:mod:`ptcore._dynamo.config`: ``cache_size_limit``, ``suppress_errors`` ...).
``mark_dynamic`` marks a tensor's dims as torch does; ptcore's graphs are specialised to
shapes, and a marked argument makes a compiled function shape-dynamic (graphs found by shape).
"""
from ptcore.tensor import Tensor as _Tensor
from ptcore._dynamo import config, eval_frame, exc
from ptcore._dynamo import capture as _capture
from ptcore._dynamo.backends import list_backends, lookup_backend, register_backend
from ptcore._dynamo.explain import ExplainOutput, explain
from ptcore._dynamo.decorators import (allow_in_graph, assume_constant_result, disable,
                                       is_compiling, reset, set_stance, substitute_in_graph)
from ptcore._dynamo.eval_frame import OptimizedModule
from ptcore._dynamo.eval_frame import compile_callable as _compile_fn

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph", "exc",
           "explain", "ExplainOutput", "forbid_in_graph", "graph_break", "is_compiling", "list_backends",
           "lookup_backend", "mark_dynamic", "OptimizedModule", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "optimize", "register_backend", "reset", "run", "set_stance",
           "substitute_in_graph"]


def _identity_decorator(fn=None):
    if fn is None:
        return lambda f: f
    return fn


def disallow_in_graph(fn):
    """Returns ``fn`` (nothing is captured, so nothing is kept out of a graph)."""
    return fn


forbid_in_graph = disallow_in_graph


def graph_break():
    """Cut the graph being captured here (the program runs as two graphs)."""
    tracer = _capture._tls.tracer
    if tracer is not None:
        tracer.explicit_break()


def _check_tensor(t, fn):
    if not isinstance(t, _Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(t).__name__}")


def _mark(t, index, fn):
    """Add ``index`` (an int, or a list/tuple of them) to ``t``'s marked dims,
    stored as given, as torch stores them."""
    _check_tensor(t, fn)
    if isinstance(index, (list, tuple)):
        dims = list(index)
    elif isinstance(index, int):
        dims = [index]
    else:
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")
    marked = getattr(t, "_dynamo_dynamic_indices", None)
    t._dynamo_dynamic_indices = (set(marked) if marked else set()) | set(dims)


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Mark dimension(s) ``index`` of ``t`` dynamic (torch's
    ``t._dynamo_dynamic_indices``): a compiled function called with ``t``
    finds its graphs by argument shapes, compiling a shape when it recurs
    (ptcore's graphs are specialised to shapes; see
    :mod:`ptcore._dynamo.compiled`)."""
    _mark(t, index, "mark_dynamic")


def maybe_mark_dynamic(t, index):
    """As :func:`mark_dynamic`."""
    _mark(t, index, "maybe_mark_dynamic")


def mark_static(t, index=None):
    """Mark dimension(s) of ``t`` static: a no-op."""


def mark_static_address(t, guard=True):
    """Mark ``t``'s storage static: a no-op."""
    _check_tensor(t, "mark_static_address")


class _Optimize:
    """What :func:`optimize` returns: a decorator compiling a function
    (``optimize("inductor")(fn)``), also usable as a context manager (which compiles
    nothing, as torch's deprecated form)."""

    def __init__(self, backend, nopython, disable, dynamic):
        self.backend, self.nopython, self.disable, self.dynamic = backend, nopython, disable, \
            dynamic

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"optimize: expected a callable, got {type(fn).__name__}")
        if self.disable:
            return fn
        return _compile_fn(fn, backend=self.backend, fullgraph=self.nopython,
                           dynamic=self.dynamic)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             disable=False, dynamic=None, **kwargs):
    """``torch._dynamo.optimize``: a decorator compiling a function with ``backend``
    (``nopython=True`` is ``fullgraph=True``); an unknown backend name is
    :class:`~ptcore._dynamo.exc.InvalidBackend` here, as torch's."""
    if isinstance(backend, str) and not disable:
        lookup_backend(backend)
    return _Optimize(backend, nopython, disable, dynamic)


def run(fn=None):
    """``torch._dynamo.run``: ``fn`` unchanged (its compiled graphs, if any, keep running)."""
    return _identity_decorator(fn)
