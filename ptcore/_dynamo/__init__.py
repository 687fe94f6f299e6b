"""``ptcore._dynamo``: the entry points of torch's graph capture (``torch._dynamo``) that
training scripts call.

ptcore has no graph capture: :func:`ptcore.compile` returns the model, which runs eagerly.
So ``reset()`` has nothing to clear, ``disable``/``optimize``/``run`` return the function
unchanged, ``mark_dynamic`` and friends record nothing, and ``is_compiling()`` is False.
The settings of :mod:`ptcore._dynamo.config` exist with torch's defaults.
"""
from ptcore.tensor import Tensor as _Tensor
from ptcore._dynamo import config, eval_frame, exc
from ptcore.compiler import (allow_in_graph, assume_constant_result, disable, is_compiling,
                             list_backends, reset, set_stance, substitute_in_graph)

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph", "exc",
           "explain", "forbid_in_graph", "graph_break", "is_compiling", "list_backends",
           "lookup_backend", "mark_dynamic", "mark_static", "mark_static_address",
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
    """A graph break: nothing to do when running eagerly."""


def _check_tensor(t, fn):
    if not isinstance(t, _Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(t).__name__}")


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Mark dimension(s) ``index`` of ``t`` dynamic: a no-op (ptcore specializes nothing)."""
    _check_tensor(t, "mark_dynamic")


def maybe_mark_dynamic(t, index):
    """As :func:`mark_dynamic`, a no-op."""
    _check_tensor(t, "maybe_mark_dynamic")


def mark_static(t, index=None):
    """Mark dimension(s) of ``t`` static: a no-op."""


def mark_static_address(t, guard=True):
    """Mark ``t``'s storage static: a no-op."""
    _check_tensor(t, "mark_static_address")


class _Optimize:
    """What :func:`optimize` returns: a decorator (``optimize("inductor")(fn)``) that is
    also a context manager; both run the code eagerly."""

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"optimize: expected a callable, got {type(fn).__name__}")
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             disable=False, dynamic=None, **kwargs):
    """``torch._dynamo.optimize``: a decorator / context manager that runs code eagerly."""
    return _Optimize()


def run(fn=None):
    """``torch._dynamo.run``: ``fn`` unchanged."""
    return _identity_decorator(fn)


_BACKENDS = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register a compiler backend by name (kept; ptcore never calls it)."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _BACKENDS[name or compiler_fn.__name__] = compiler_fn
    return compiler_fn


def lookup_backend(compiler_fn):
    """The backend registered under a name (a callable is returned as is)."""
    if callable(compiler_fn):
        return compiler_fn
    if compiler_fn in _BACKENDS:
        return _BACKENDS[compiler_fn]
    if compiler_fn in list_backends(exclude_tags=()):
        return compiler_fn
    raise exc.InvalidBackend(compiler_fn)


def explain(f, *extra_args, **extra_kwargs):
    """``torch._dynamo.explain`` needs graph capture, which ptcore does not have."""
    raise NotImplementedError("ptcore._dynamo.explain: ptcore has no graph capture "
                              "(ptcore.compile runs the model eagerly)")
