"""``ptcore.utils._contextlib`` (``torch.utils._contextlib``): the base of context managers
that double as decorators, which libraries subclass for their own modes (tensordict's
``set_lazy_legacy``, ``set_capture_non_tensor_stack`` ...).  The grad-mode switches of
:mod:`ptcore.autograd.grad_mode` are built on the same class."""
import functools
import inspect

from ptcore.autograd.grad_mode import _DecoratorContextManager, _wrap_generator

__all__ = ["_DecoratorContextManager", "_NoParamDecoratorContextManager", "context_decorator",
           "_wrap_generator"]


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A context manager usable as a decorator without parentheses (``@mode``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


def context_decorator(ctx, func):
    """``func`` run inside ``ctx`` (a reusable context manager, or a callable that makes
    one) on each call; a generator function's every resumption runs inside it."""
    if callable(ctx) and hasattr(ctx, "__enter__"):
        raise AssertionError(
            f"Passed in {ctx} is both callable and also a valid context manager (has "
            "__enter__), making it ambiguous which interface to use.  If you intended to pass "
            "a context manager factory, rewrite your call as context_decorator(lambda: ctx()); "
            "if you intended to pass a context manager directly, rewrite your call as "
            "context_decorator(lambda: ctx)")
    ctx_factory = ctx if callable(ctx) else (lambda: ctx)
    if inspect.isclass(func):
        raise RuntimeError(
            "Cannot decorate classes; it is ambiguous whether or not only the constructor or "
            "all methods should have the context manager applied; additionally, decorating a "
            "class at definition-site will prevent use of the identifier as a conventional "
            "type.  To specify which methods to decorate, decorate each of them individually.")
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(ctx_factory, func)

    @functools.wraps(func)
    def decorate_context(*args, **kwargs):
        with ctx_factory():
            return func(*args, **kwargs)
    return decorate_context
