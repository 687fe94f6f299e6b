r"""Weight normalization by a forward pre-hook (``torch.nn.utils.weight_norm``, deprecated in
torch for ``parametrizations.weight_norm`` but still widely used):
:math:`w = g \, v / \|v\|`, the norm taken over every dim except ``dim``."""
import warnings

import ptcore
from ptcore.nn.parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow, dim):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept as size-1 dims); ``dim=-1``
    is the norm of the whole tensor, as torch's ``norm_except_dim``."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, dim=1).view(shape)
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, dim=0).view(shape)
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`ptcore.nn.utils.weight_norm` is deprecated in favor of "
                      "`ptcore.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replace ``module.<name>`` by ``<name>_g`` (magnitude) and ``<name>_v`` (direction)
    parameters, recombined before every forward; ``dim=None`` normalizes the whole tensor."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo :func:`weight_norm`: ``<name>`` becomes a plain parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


del ptcore
