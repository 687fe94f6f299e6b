"""``ptcore.compile``: ``torch.compile``'s signature; ptcore has no graph
compiler yet, so it returns the function itself, or a module wrapped as torch wraps it
(:class:`ptcore._dynamo.eval_frame.OptimizedModule`, after one warning); either runs
exactly as written."""
import warnings

from ptcore._dynamo import lookup_backend
from ptcore._dynamo.eval_frame import OptimizedModule
from ptcore.nn.modules.module import Module

__all__ = ["compile"]

_warned = [False]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """Return ``model`` ready to call (``torch.compile``).

    Parameters
    ----------
    model : callable, optional
        A module or function.  Without it, a decorator is returned.
    fullgraph, dynamic, backend, mode, options, disable
        Accepted for compatibility; ``mode`` must be one of torch's modes.

    Returns
    -------
    callable
        ``model`` itself, or for an ``nn.Module`` an ``OptimizedModule`` wrapping it (as
        torch: ``_orig_mod``, ``state_dict()`` keys prefixed ``_orig_mod.``); ptcore runs
        it eagerly.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in (None, "default", "lite", "reduce-overhead", "max-autotune",
                    "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, lite, "
                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune")
    if isinstance(backend, str):
        # an unknown backend name fails here, as torch's (a callable backend is kept)
        lookup_backend(backend)
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if not disable and not _warned[0]:
        _warned[0] = True
        warnings.warn("ptcore.compile: ptcore has no graph compiler yet; the model runs "
                      "eagerly, unchanged", UserWarning, stacklevel=2)
    if isinstance(model, Module) and not disable:
        return OptimizedModule(model)
    return model
