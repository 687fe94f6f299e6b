"""``ptcore.compiler``: torch.compiler's entry points.

ptcore has no graph compiler: :func:`compile` (``ptcore.compile``) returns the model, which
runs eagerly.  The rest follows from that: ``is_compiling()`` is always False, ``disable``
and the other decorators return the function unchanged, ``reset()`` has no cache to clear.
"""
import ptcore

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin",
           "disable", "get_default_backend", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "nested_compile_region", "reset",
           "set_default_backend", "set_stance", "substitute_in_graph", "wrap_numpy"]

# the backend names torch.compile accepts here (every one runs the model eagerly)
_BACKENDS = {"cudagraphs": (), "inductor": (), "eager": ("debug",), "aot_eager": ("debug",)}
_DEFAULT_BACKEND = ["inductor"]


def compile(*args, **kwargs):
    """``ptcore.compile(*args, **kwargs)`` (``torch.compiler.compile``): see
    :func:`ptcore.compile`."""
    return ptcore.compile(*args, **kwargs)


def _check_callable(fn, who):
    if not callable(fn):
        raise AssertionError(f"{who}: fn must be callable, got {type(fn).__name__}")
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """Exclude ``fn`` from compilation: returns it unchanged (a decorator without ``fn``)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    return _check_callable(fn, "disable")


def allow_in_graph(fn):
    """Returns ``fn`` (nothing is traced, so nothing needs allowing)."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    return _check_callable(fn, "allow_in_graph")


def assume_constant_result(fn):
    """Returns ``fn`` (its result is computed at each call)."""
    return _check_callable(fn, "assume_constant_result")


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """A decorator returning its function unchanged (``original_fn`` keeps running)."""
    _check_callable(original_fn, "substitute_in_graph")
    return lambda fn: fn


def wrap_numpy(fn):
    """Returns ``fn`` (NumPy code runs as written)."""
    return _check_callable(fn, "wrap_numpy")


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Returns ``fn`` (a decorator without it)."""
    if fn is None:
        return lambda f: f
    return _check_callable(fn, "nested_compile_region")


def reset():
    """Clear the compilation caches: ptcore keeps none."""


def is_compiling():
    """False: ptcore never traces Python code for a compiler."""
    return False


def is_dynamo_compiling():
    """False, as :func:`is_compiling`."""
    return False


def is_exporting():
    """False: no export is ever in progress."""
    return False


def cudagraph_mark_step_begin():
    """Mark the start of a step for CUDA graph trees: nothing to mark."""


def list_backends(exclude_tags=("debug", "experimental")):
    """Names accepted as ``ptcore.compile(backend=...)``."""
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKENDS.items() if not exclude.intersection(tags))


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


class _Stance:
    """``set_stance``'s result: usable as a decorator or a context manager."""

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Set how compiled functions behave: every stance runs eagerly here."""
    return _Stance()
