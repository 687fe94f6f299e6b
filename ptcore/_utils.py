"""``ptcore._utils`` (``torch._utils``): the private helpers of torch's that libraries import
by that name -- DDP-style and model-parallel code (neuraloperator's ``mpu``) packs tensors into
one buffer with ``_flatten_dense_tensors`` and views it back with ``_unflatten_dense_tensors``;
device-generic code (tensordict) asks ``_get_available_device_type`` which accelerator there is
and ``_get_device_module`` for its module.
"""
import functools
import importlib

from ptcore import accelerator as _accelerator
from ptcore._c_nn import flatten_dense_tensors, unflatten_dense_tensors

__all__ = ["_flatten_dense_tensors", "_unflatten_dense_tensors", "_get_available_device_type",
           "_get_device_module"]


def _flatten_dense_tensors(tensors):
    """The tensors' elements one after another in one contiguous 1-D tensor (a copy)."""
    return flatten_dense_tensors(tensors)


def _unflatten_dense_tensors(flat, tensors):
    """A tuple of views of ``flat`` (from :func:`_flatten_dense_tensors`) shaped as
    ``tensors``."""
    return unflatten_dense_tensors(flat, tensors)


def _get_available_device_type():
    """The type of the accelerator present ("cuda" ...), or None on a CPU-only machine."""
    acc = _accelerator.current_accelerator()
    return None if acc is None else acc.type


@functools.lru_cache(2)
def _get_device_module(device_type):
    """The root's module for ``device_type`` (``ptcore.cuda`` for "cuda")."""
    root = importlib.import_module("ptcore")
    module = getattr(root, device_type, None)
    if module is None:
        raise RuntimeError(f"Device '{device_type}' does not have a corresponding module "
                           f"registered as 'torch.{device_type}'.")
    return module
