"""Flatten parameters to one vector and back (``torch.nn.utils.convert_parameters``)."""
import ptcore
from ptcore._dispatch.device import is_accelerator as _is_accelerator
from ptcore._settings import typename as _typename
from ptcore._tensor import _TensorBase

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    if old_param_device is None:
        old_param_device = param.get_device() if _is_accelerator(param.device) else -1
    else:
        if _is_accelerator(param.device):
            warn = param.get_device() != old_param_device
        else:
            warn = old_param_device != -1
        if warn:
            raise TypeError("Found two parameters on different devices, "
                            "this is currently not supported.")
    return old_param_device


def parameters_to_vector(parameters):
    """Concatenate the flattened ``parameters`` into one 1-D tensor."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return ptcore.cat(vec)


def vector_to_parameters(vec, parameters):
    """Copy slices of the 1-D ``vec`` into ``parameters`` (their ``.data`` becomes views of ``vec``)."""
    if not isinstance(vec, _TensorBase):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
