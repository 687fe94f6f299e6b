"""``ptcore.compile``: torch.compile's signature over ptcore's graph compiler.

A compiled function captures the op calls of its program as graphs with
guards (:mod:`ptcore._dynamo`), compiled with fused kernels and, for
training, a captured backward (:mod:`ptcore._inductor`); ``doc/dev/compile.rst``
describes the design."""
from ptcore._dynamo.backends import lookup_backend
from ptcore._dynamo.eval_frame import compile_callable
from ptcore._inductor.options import check_options

__all__ = ["compile"]

_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune",
          "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, **kwargs):
    """Compile ``model`` (a function or an ``nn.Module``) into graphs with fused kernels
    (``torch.compile``).

    Parameters
    ----------
    model : callable, optional
        A module or function.  Without it, a decorator is returned.
    fullgraph : bool
        Raise :class:`ptcore._dynamo.exc.Unsupported` where the program cannot be one
        graph (a tensor converted to a Python value, a call the graph cannot replay),
        instead of running that program eagerly.
    dynamic : bool or None
        ``False`` or ``None``: graphs are specialised to the shapes they saw (a new
        shape is a new graph, up to ``ptcore._dynamo.config.cache_size_limit``);
        ``True``: the same, as ptcore's graphs are always specialised.
    backend : str, callable or None
        ``"inductor"`` (fused kernels; also ``None``), ``"eager"`` / ``"aot_eager"`` (the captured
        graphs run op by op: no fusion), ``"cudagraphs"``, or a callable
        ``backend(graph_module, example_inputs)`` returning the callable that runs the
        graph.
    mode : str, optional
        One of torch's modes; ``"reduce-overhead"`` replays the graphs of a CUDA program
        as CUDA graphs.
    options : dict, optional
        Backend options (``{"triton.cudagraphs": True}`` as ``mode="reduce-overhead"``).
    disable : bool
        Return ``model`` unchanged.

    Returns
    -------
    callable
        A compiled function, or for an ``nn.Module`` an ``OptimizedModule`` wrapping it
        (as torch: ``_orig_mod``, ``state_dict()`` keys prefixed ``_orig_mod.``).

    Examples
    --------
    >>> import ptcore
    >>> @ptcore.compile
    ... def f(x):
    ...     return (x * 2).relu() + 1
    >>> f(ptcore.tensor([-1.0, 2.0]))
    tensor([1., 5.])
    """
    if backend is None:
        backend = "inductor"                # (torch's default backend)
    if dynamic is not None and not isinstance(dynamic, bool):
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, lite, "
                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune")
    if backend == "inductor" and options is not None:
        check_options(options)      # (torch's inductor wrapper checks them here)
    if isinstance(backend, str):
        # an unknown backend name fails here, as torch's (a callable backend is kept)
        backend = lookup_backend(backend) if not callable(backend) else backend
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    return compile_callable(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                            mode=mode, options=options)
