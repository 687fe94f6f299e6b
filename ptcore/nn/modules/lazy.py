"""``LazyModuleMixin``: modules whose parameter shapes are inferred on the first forward.

A lazy module holds :class:`~ptcore.nn.parameter.UninitializedParameter` (and
``UninitializedBuffer``) objects until its first call; a forward pre-hook then calls
``initialize_parameters(*args)``, which materializes them from the input's shape and
resets them, and the module turns into ``cls_to_become`` (``LazyLinear`` -> ``Linear``).
Loading a state dict into a lazy module materializes its parameters to the loaded shapes.
"""
import itertools

import ptcore
from ptcore.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Uninitialized parameters are saved as they are (detach() would need a shape).
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with ptcore.no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the uninitialized parameters from the first input (subclasses)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still uninitialized."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                         self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules")
