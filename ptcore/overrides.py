"""``ptcore.overrides`` (``torch.overrides``): the ``__torch_function__``
protocol — helpers for functions that take part in it, the list of
overridable functions (every entry of the operator table), and
:class:`TorchFunctionMode`."""
import functools

import ptcore
from ptcore._dispatch.table import op_of
from ptcore._dispatch.torch_function import (  # noqa: F401
    DisableTorchFunction, DisableTorchFunctionSubclass, TorchFunctionMode,
    _disabled_torch_function_impl, _get_current_function_mode, _get_current_function_mode_stack,
    _pop_mode_temporarily, get_default_nowrap_functions, handle_torch_function,
    has_torch_function, has_torch_function_unary, has_torch_function_variadic, is_tensor_like,
    is_torch_function_mode_enabled,
)

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "resolve_name",
           "wrap_torch_function", "TorchFunctionMode", "enable_reentrant_dispatch"]


def _namespaces():
    # lazy: ptcore.nn (~1 s) loads on the first query, not with ptcore.overrides
    import ptcore.nn.functional as F
    return ((ptcore, "ptcore"), (ptcore.Tensor, "ptcore.Tensor"), (F, "ptcore.nn.functional"),
            (ptcore.linalg, "ptcore.linalg"))


@functools.lru_cache(None)
def _overridable():
    out = {}
    for ns, _ in _namespaces():
        names = vars(ns) if isinstance(ns, type) else ns.__dict__
        fns = []
        for name, fn in sorted(names.items()):
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            d = op_of(fn)
            if d is not None and "factory" not in d.tags:
                fns.append(fn)
        out[ns] = fns
    return out


def get_overridable_functions():
    """Namespace -> the functions in it that ``__torch_function__`` can override."""
    return {k: list(v) for k, v in _overridable().items()}


def get_testing_overrides():
    """Overridable function -> a dummy with the same signature that returns -1
    (as torch's), for testing ``__torch_function__`` implementations: a
    subclass's handler can check it is called for every function."""
    import inspect
    out = {}
    for fns in _overridable().values():
        for fn in fns:
            def dummy(*args, **kwargs):
                return -1
            try:
                dummy.__signature__ = inspect.signature(fn)
            except (TypeError, ValueError):     # no introspectable signature: (*args, **kwargs)
                pass
            dummy.__name__ = dummy.__qualname__ = getattr(fn, "__name__", "dummy")
            out[fn] = dummy
    return out


def get_ignored_functions():
    """Public callables that a Tensor subclass cannot override: settings and
    introspection (not ops), and factory functions, which have no tensor
    argument to dispatch on (a :class:`TorchFunctionMode` still sees those)."""
    out = set()
    for name in dir(ptcore):
        if name.startswith("_"):
            continue
        fn = getattr(ptcore, name, None)
        if not callable(fn) or isinstance(fn, type):
            continue
        d = op_of(fn)
        if d is None or "factory" in d.tags:
            out.add(fn)
    return out


def is_tensor_method_or_property(func):
    """True for a method or property of ``ptcore.Tensor``: also a typed-core method reached
    through the class (``ptcore.Tensor.__getitem__``) and the protocol wrapper the dispatch layer
    installs over one while a ``__torch_function__`` subclass exists (its ``__wrapped__``), so
    the answer does not depend on when the overridable list was first built."""
    import types
    import ptcore
    fns = _overridable()[ptcore.Tensor]
    f = func
    for _ in range(8):
        if f in fns:
            return True
        if isinstance(f, (types.MethodDescriptorType, types.WrapperDescriptorType,
                          types.GetSetDescriptorType, types.MemberDescriptorType)) \
                and issubclass(ptcore.Tensor, f.__objclass__):
            return True
        nxt = getattr(f, "__wrapped__", None)
        if nxt is None or nxt is f:
            break
        f = nxt
    return func.__name__ == "__get__"


def resolve_name(f):
    """The dotted public name of an overridable function, or None."""
    for ns, nsname in _namespaces():
        for fn in _overridable().get(ns, ()):
            if fn is f:
                return f"{nsname}.{f.__name__}"
    return None


def wrap_torch_function(dispatcher):
    """Decorator: make a Python function take part in the protocol;
    ``dispatcher(*args, **kwargs)`` returns the arguments to check."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


class enable_reentrant_dispatch:
    """Kept for source compatibility (a no-op context, as on torch's Python side)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
