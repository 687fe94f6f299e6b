"""Auto-wrap policies and manual wrapping for FSDP (``torch.distributed.fsdp.wrap``).

A policy is called as ``policy(module=m, recurse=bool, nonwrapped_numel=int)``: with
``recurse=True`` it says whether to look into ``m``'s children, with ``recurse=False``
whether to wrap ``m`` itself (``nonwrapped_numel`` counts ``m``'s parameters not already in
a wrapped child).  Wrapping is bottom-up: children are wrapped before their parents.
"""
import contextlib

from ptcore import nn

__all__ = [
    "CustomPolicy", "ModuleWrapPolicy", "always_wrap_policy", "enable_wrap",
    "lambda_auto_wrap_policy", "size_based_auto_wrap_policy", "transformer_auto_wrap_policy",
    "wrap",
]


def always_wrap_policy(*args, **kwargs):
    """Wrap every submodule."""
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """Wrap the modules for which ``lambda_fn(module)`` is true."""
    if recurse:
        return True
    return bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap the instances of the classes in ``transformer_layer_cls`` (a set of layer
    classes, e.g. the transformer block)."""
    if recurse:
        return True
    return isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module once its not-yet-wrapped parameters number at least ``min_num_params``
    (smaller modules are not looked into either).

    ``force_leaf_modules`` (default ``{nn.MultiheadAttention}``) are not recursed into;
    ``exclude_wrap_modules`` (default ``{nn.ModuleList, nn.ModuleDict}``) are never wrapped.
    """
    force_leaf_modules = (size_based_auto_wrap_policy.FORCE_LEAF_MODULES
                          if force_leaf_modules is None else force_leaf_modules)
    exclude_wrap_modules = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
                            if exclude_wrap_modules is None else exclude_wrap_modules)
    is_large = nonwrapped_numel >= min_num_params
    if recurse:
        return is_large and not isinstance(module, tuple(force_leaf_modules))
    return is_large and not isinstance(module, tuple(exclude_wrap_modules))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


class CustomPolicy:
    """Wrap the modules for which ``lambda_fn(module)`` is true; a dict result wraps the
    module with those keyword arguments overriding the root's."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def _overrides(self, module):
        res = self._lambda_fn(module)
        if isinstance(res, dict):
            return res
        return {} if res else None

    def __call__(self, module, recurse, *args, **kwargs):
        if recurse:
            return True
        return self._overrides(module) is not None


class ModuleWrapPolicy(CustomPolicy):
    """Wrap every instance of the given module classes."""

    def __init__(self, module_classes):
        classes = tuple(set(module_classes))
        self._module_classes = classes
        super().__init__(lambda m: isinstance(m, classes))

    def __repr__(self):
        return f"{type(self).__name__}({set(self._module_classes)})"


def _recursive_wrap(module, policy, wrap_fn, ignored_modules, ignored_params,
                    only_wrap_children=False):
    """Wrap ``module``'s subtree bottom-up where ``policy`` says so; returns the (maybe
    wrapped) module and the number of its parameters now inside wrappers."""
    numel = sum(p.numel() for p in module.parameters() if id(p) not in ignored_params)
    if not policy(module=module, recurse=True, nonwrapped_numel=numel):
        return module, 0
    wrapped = 0
    for name, child in list(module.named_children()):
        if child in ignored_modules:
            continue
        new_child, n = _recursive_wrap(child, policy, wrap_fn, ignored_modules, ignored_params)
        if new_child is not child:
            setattr(module, name, new_child)
        wrapped += n
    if not only_wrap_children and policy(module=module, recurse=False,
                                         nonwrapped_numel=numel - wrapped):
        overrides = policy._overrides(module) if isinstance(policy, CustomPolicy) else {}
        return wrap_fn(module, overrides or {}), numel
    return module, wrapped


class _WrapContext:
    active = False
    wrapper_cls = None
    kwargs = {}


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Within this context :func:`wrap` wraps modules with ``wrapper_cls(module,
    **wrapper_kwargs)``."""
    if _WrapContext.active:
        raise NotImplementedError("You are already within an enable_wrap context and we "
                                  "currently do not support nested wrapping")
    _WrapContext.active = True
    _WrapContext.wrapper_cls = wrapper_cls
    _WrapContext.kwargs = dict(wrapper_kwargs)
    try:
        yield
    finally:
        _WrapContext.active = False
        _WrapContext.wrapper_cls = None
        _WrapContext.kwargs = {}


def wrap(module, **wrap_overrides):
    """Wrap ``module`` with the wrapper of the enclosing :func:`enable_wrap` (its keyword
    arguments updated by ``wrap_overrides``); outside such a context, return ``module``."""
    if not _WrapContext.active:
        return module
    kwargs = {**_WrapContext.kwargs, **wrap_overrides}
    return _WrapContext.wrapper_cls(module, **kwargs)
