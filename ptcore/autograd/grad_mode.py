"""Grad-mode switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` (context managers and decorators, thread-local as in
PyTorch: a new thread starts with gradients enabled)."""
import functools
import warnings
import inspect
import threading

from ptcore import _tensor as _C
from ptcore._settings import _GradState, grad_state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


# the thread-local grad mode lives in the core settings (Tensor methods below
# the autograd layer read it)
_State = _GradState
_state = grad_state
# inference mode was entered at least once in this process: until then no
# inference tensor exists and autograd skips its inference-tensor checks
_ever = [False]


def is_grad_enabled():
    """True if grad mode is on on this thread (inside inference mode, ops do not
    record even then, as torch)."""
    return _state.enabled or (_state.inference and _state.nominal)


def _set_mode(mode):
    """Switch grad mode; returns the state to restore.  Inference mode keeps
    recording off whatever grad mode says."""
    prev = (_state.enabled, _state.nominal)
    if _state.inference:
        _state.nominal = mode
    else:
        _state.enabled = mode
    return prev


def _restore_mode(prev):
    """Undo ``_set_mode``; a bare bool (the ``prev`` of an ``no_grad()`` never
    entered, as torch's) sets grad mode to it."""
    if isinstance(prev, bool):
        _set_mode(prev)
    else:
        _state.enabled, _state.nominal = prev


def is_inference_mode_enabled():
    """True inside an ``inference_mode()`` block on this thread."""
    return _state.inference


def _wrap_generator(ctx_factory, func):
    """Generator function ``func`` with each of its resumptions (start, send, throw, close)
    inside a fresh context manager from ``ctx_factory()``."""
    @functools.wraps(func)
    def gen_wrapper(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException as e:
                    with ctx_factory():
                        response = gen.throw(e)
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return gen_wrapper


class _DecoratorContextManager:
    """A context manager that is also usable as a function decorator
    (``@no_grad()`` and ``@no_grad``)."""

    def __new__(cls, orig_func=None, *args, **kwargs):
        if orig_func is not None and callable(orig_func) and cls in (no_grad, enable_grad):
            # bare decorator: @no_grad
            return cls()(orig_func)
        return super().__new__(cls)

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isclass(func):
            # torch (deprecated): the class's construction runs in the mode
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper


class no_grad(_DecoratorContextManager):
    """Disable gradient recording (context manager or decorator)."""

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = _set_mode(False)

    def __exit__(self, *exc):
        _restore_mode(self.prev)
        return False


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside a ``no_grad`` block."""

    def __init__(self, orig_func=None):
        # no ``prev`` until entered: ``__exit__`` of a fresh instance raises
        # AttributeError, as torch's
        pass

    def __enter__(self):
        self.prev = _set_mode(True)

    def __exit__(self, *exc):
        _restore_mode(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set gradient recording on or off: as a function call (takes effect at
    once), as a context manager or as a decorator."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode = mode
        self.prev = _set_mode(mode)

    def __call__(self, func):
        _restore_mode(self.prev)
        return super().__call__(func)

    def __enter__(self):
        _set_mode(self.mode)

    def __exit__(self, *exc):
        _restore_mode(self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for inference-only code; ``inference_mode(False)``
    leaves inference mode and enables grad (as PyTorch)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            mode = True
        # no ``prev`` until entered: ``__exit__`` of a fresh instance raises
        # AttributeError, as torch's
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference, _state.nominal)
        # as c10::InferenceMode(mode): grad mode becomes ``not mode``; memory
        # allocated meanwhile makes inference tensors
        _state.enabled = not self.mode
        _state.inference = self.mode
        _state.nominal = False
        if self.mode:
            _ever[0] = True
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _state.enabled, _state.inference, _state.nominal = self.prev
        _C._set_inference_mode(self.prev[1])
        return False

    def clone(self):
        return self.__class__(self.mode)


class _EngineFlags(threading.local):
    def __init__(self):
        self.multithreading = True
        self.view_replay = False


_engine_flags = _EngineFlags()


def is_multithreading_enabled():
    """Whether multithreaded backward is enabled on this thread (``True`` by default).

    ptcore's engine runs backward on the calling thread either way; the flag is kept so code
    that switches it (``set_multithreading_enabled``) runs unchanged."""
    return _engine_flags.multithreading


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward on this thread, as a function or a context
    manager (the previous value returns on exit)."""

    def __init__(self, mode):
        self.prev = _engine_flags.multithreading
        _engine_flags.multithreading = bool(mode)
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        _engine_flags.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_view_replay_enabled():
    """Whether views are replayed instead of recorded as ``as_strided`` (always ``False``:
    ptcore keeps every view's own backward)."""
    return _engine_flags.view_replay


__all__ += ["set_multithreading_enabled", "is_multithreading_enabled", "is_view_replay_enabled"]
