"""``ptcore.compiler``: torch.compiler's entry points over ptcore's graph compiler
(:func:`compile` is ``ptcore.compile``): ``reset()`` forgets every compiled graph,
``is_compiling()`` is True while a program is being captured, ``disable(fn)`` makes ``fn``
run eagerly (a compiled program that calls it runs eagerly), ``set_stance`` switches compiled
functions to eager execution.  ``allow_in_graph`` and the other decorators return the
function unchanged: ptcore captures the op calls a function makes wherever they come from.
"""
from ptcore._compile import compile
from ptcore._dynamo.backends import list_backends
from ptcore._dynamo.decorators import (allow_in_graph, assume_constant_result,
                                       cudagraph_mark_step_begin, disable, is_compiling,
                                       is_dynamo_compiling, is_exporting, nested_compile_region,
                                       reset, set_stance, substitute_in_graph, wrap_numpy)

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin",
           "disable", "get_default_backend", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "nested_compile_region", "reset",
           "set_default_backend", "set_stance", "substitute_in_graph", "wrap_numpy"]

_DEFAULT_BACKEND = ["inductor"]


def get_default_backend():
    """The backend ``ptcore.compile`` is documented to use by default."""
    return _DEFAULT_BACKEND[0]


def set_default_backend(backend):
    """Set the default backend name (``None`` restores ``"inductor"``)."""
    if backend is None:
        backend = "inductor"
    if not (callable(backend) or isinstance(backend, str)):
        raise TypeError(f"set_default_backend: expected a str or a callable, got "
                        f"{type(backend).__name__}")
    _DEFAULT_BACKEND[0] = backend


