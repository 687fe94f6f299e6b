"""Decorators and switches of the graph compiler (``torch._dynamo``'s and
``torch.compiler``'s): ``disable`` (a function a compiled program must run eagerly),
``reset``, ``is_compiling``, ``set_stance`` and the decorators ptcore needs no action
for (``allow_in_graph`` ...: ptcore captures the op calls a function makes wherever they
come from)."""
import functools

from ptcore._dynamo import compiled as _compiled
from ptcore._dynamo.capture import is_capturing, mark_disabled
from ptcore._inductor import cudagraphs as _cudagraphs

__all__ = ["allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "nested_compile_region",
           "reset", "set_stance", "substitute_in_graph", "wrap_numpy"]


def _check_callable(fn, who):
    if not callable(fn):
        raise AssertionError(f"{who}: fn must be callable, got {type(fn).__name__}")
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """Exclude ``fn`` from compilation (a decorator without ``fn``): a compiled program that
    calls it runs eagerly, as its body must run at every call.  Returns ``fn`` (a function)
    or a function calling it (another callable)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    _check_callable(fn, "disable")
    code = getattr(fn, "__code__", None)
    if code is None:
        inner = fn

        @functools.wraps(inner)
        def fn(*args, **kwargs):
            return inner(*args, **kwargs)
        code = fn.__code__
    mark_disabled(code)
    return fn


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
    """Forget every graph compiled so far: compiled functions capture again at their next
    call."""
    _compiled.reset_all()


def is_compiling():
    """True while a compiled program is being captured on this thread (code that checks it
    is captured with the branch it takes then)."""
    return is_capturing()


def is_dynamo_compiling():
    """As :func:`is_compiling`."""
    return is_capturing()


def is_exporting():
    """False: no export is ever in progress."""
    return False


def cudagraph_mark_step_begin():
    """Mark the start of a step for CUDA graph trees (``mode="reduce-overhead"``):
    counted only, as each replay overwrites its graph's previous outputs
    (:mod:`ptcore._inductor.cudagraphs`)."""
    _cudagraphs.mark_step_begin()


_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")


class _Stance:
    """``set_stance``'s result: the stance is set when it is made; as a context manager the
    previous one comes back on exit, as a decorator the stance holds while the function
    runs."""

    def __init__(self, stance, prev):
        self.stance = stance
        self.prev = prev

    def __call__(self, fn):
        _compiled.stance[0] = self.prev         # (a decorator: not set until called)
        stance = self.stance

        @functools.wraps(fn)
        def run(*args, **kwargs):
            prev = _compiled.stance[0]
            _compiled.stance[0] = stance
            try:
                return fn(*args, **kwargs)
            finally:
                _compiled.stance[0] = prev
        return run

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _compiled.stance[0] = self.prev
        return False


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Set how compiled functions behave (``torch.compiler.set_stance``): ``"default"``,
    ``"force_eager"`` (run eagerly, the caches kept), ``"eager_on_recompile"`` (use the
    graphs compiled so far, run eagerly where none fits) or ``"fail_on_recompile"`` (raise
    where a new graph would be compiled)."""
    if stance not in _STANCES:
        raise RuntimeError(f"Invalid stance {stance!r}; expected one of {list(_STANCES)}")
    prev = _compiled.stance[0]
    _compiled.stance[0] = stance
    return _Stance(stance, prev)
