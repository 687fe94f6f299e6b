"""``ptcore.nn.utils._named_member_accessor`` (``torch.nn.utils._named_member_accessor``):
put a tensor or submodule in a module's slot by name and get the one it replaces, as
libraries that swap parameters in and out of modules import them (tensordict's
``TensorDict.to_module``)."""
from ptcore.nn.modules.module import Module
from ptcore.tensor import Tensor

__all__ = ["set_tensor", "swap_tensor", "swap_submodule"]

_MISSING = object()


def _check_name(name, what="tensor"):
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def _check_module(module):
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")


def set_tensor(module, name, tensor):
    """Put ``tensor`` (or None) in ``module``'s parameter, buffer or attribute ``name``."""
    _check_module(module)
    if not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    if name in module._parameters:
        module._parameters[name] = tensor
    elif name in module._buffers:
        module._buffers[name] = tensor
    else:
        setattr(module, name, tensor)


def swap_tensor(module, name, tensor, allow_missing=False):
    """Put ``tensor`` in ``module``'s slot ``name`` (``_MISSING``: delete it); returns what
    was there (``_MISSING`` for an absent attribute when ``allow_missing``)."""
    _check_module(module)
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    for slots in (module._parameters, module._buffers):
        if name in slots:
            orig = slots[name]
            if tensor is not _MISSING:
                slots[name] = tensor
            else:
                del slots[name]
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    elif not allow_missing:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    else:
        orig = _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def swap_submodule(module, name, submodule):
    """Put ``submodule`` in ``module``'s child slot ``name``; returns the child it replaces."""
    _check_module(module)
    if not isinstance(submodule, Module):
        raise TypeError(f"{submodule} is not an instance of torch.nn.Module")
    _check_name(name, "submodule")
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    orig = module._modules[name]
    if not isinstance(orig, Module):
        raise TypeError(f"{name} attribute is not an instance of torch.nn.Module")
    module._modules[name] = submodule
    return orig
