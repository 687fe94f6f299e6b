"""``ptcore._dynamo.eval_frame``: :class:`OptimizedModule`, what ``torch.compile(module)``
returns.

Calling the wrapper calls the compiled ``__call__`` of the original module
(:class:`ptcore._dynamo.compiled.CompiledFunction`: its forward hooks and forward
captured as graphs).  It keeps torch's visible layout, which training scripts rely on:
the module is ``_orig_mod`` (a child, so ``state_dict()`` keys carry the ``_orig_mod.``
prefix), attribute reads and writes go through to it, ``training`` mirrors it, and the
repr shows it as the child.  Pickled, it is compiled again when loaded (its graphs are
not saved).

An optimizer's bound ``step`` (``opt.step = ptcore.compile(opt.step)``) of SGD, Adam or
AdamW becomes a :class:`ptcore._inductor.optim_step.CompiledStep`.
"""
from ptcore._dynamo.compiled import CompiledFunction
from ptcore._inductor import optim_step as _optim_step
from ptcore.nn.modules.module import Module

__all__ = ["OptimizedModule", "compile_callable"]


def compile_callable(model, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                     options=None):
    """``model`` compiled: an :class:`OptimizedModule` for a module, a
    :class:`~ptcore._dynamo.compiled.CompiledFunction` otherwise (arguments checked by
    :func:`ptcore.compile`)."""
    opts = dict(options or {})
    if mode in ("reduce-overhead", "max-autotune"):     # (torch's modes with CUDA graphs)
        opts.setdefault("triton.cudagraphs", True)
    settings = {"fullgraph": fullgraph, "dynamic": dynamic, "backend": backend, "mode": mode,
                "options": opts}
    if backend == "inductor" and _optim_step.compiles_step(model):
        # (an optimizer's step: one call of the update loops per param group)
        return _optim_step.CompiledStep(model)
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model._call_impl, modules=[model],
                                                       **settings))
    return CompiledFunction(model, **settings)


def _rebuild(mod, settings):
    """An OptimizedModule of ``mod`` compiled with ``settings`` (unpickling)."""
    return compile_callable(mod, **settings)


class OptimizedModule(Module):
    """Wraps the original ``nn.Module``; calling it calls the module (eagerly)."""

    _opt_mod_attributes = {
        "_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "_torchdynamo_wrapper_id",
        "get_compiler_config", "forward", "_forward", "__dict__", "named_children_walk",
        "_super_module_initialized",
    }

    def __init__(self, mod, dynamo_ctx=None):
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod      # registered as the child module
        self.dynamo_ctx = dynamo_ctx
        self._initialize()

    def _initialize(self):
        ctx = self.__dict__.get("dynamo_ctx")
        self.forward = ctx if ctx is not None else self._orig_mod.__call__

    def __len__(self):
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __reduce__(self):
        ctx = self.dynamo_ctx
        settings = ctx.settings() if ctx is not None else {}
        return (_rebuild, (self._orig_mod, settings))

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("__call__", None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self._initialize()

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        # Module.__init__ sets the default; the wrapper mirrors the wrapped module instead
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self):
        orig = self._orig_mod.__dir__()
        return orig + [a for a in super().__dir__() if a not in orig]
