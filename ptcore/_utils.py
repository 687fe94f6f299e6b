"""``ptcore._utils`` (``torch._utils``): the private helpers of torch's that libraries import
by that name -- DDP-style and model-parallel code (neuraloperator's ``mpu``) packs tensors into
one buffer with ``_flatten_dense_tensors`` and views it back with ``_unflatten_dense_tensors``.
"""
from ptcore._c_nn import flatten_dense_tensors, unflatten_dense_tensors

__all__ = ["_flatten_dense_tensors", "_unflatten_dense_tensors"]


def _flatten_dense_tensors(tensors):
    """The tensors' elements one after another in one contiguous 1-D tensor (a copy)."""
    return flatten_dense_tensors(tensors)


def _unflatten_dense_tensors(flat, tensors):
    """A tuple of views of ``flat`` (from :func:`_flatten_dense_tensors`) shaped as
    ``tensors``."""
    return unflatten_dense_tensors(flat, tensors)
