"""Gradient clipping (``torch.nn.utils.clip_grad``)."""
import functools
import math
import types
import warnings
from collections.abc import Iterable
from typing import Union

import ptcore
from ptcore._dispatch.device import has_fused_kernels as _has_fused_kernels, loop_for as _loop_for
from ptcore._ops.kernels import _reduce as _K
from ptcore._tensor import _TensorBase
from ptcore.tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]

# torch's annotation of the ``parameters``/``tensors`` arguments (code typed
# against torch imports it from here)
_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]


def _no_grad(func):
    def _no_grad_wrapper(*args, **kwargs):
        with ptcore.no_grad():
            return func(*args, **kwargs)
    functools.update_wrapper(_no_grad_wrapper, func)
    return _no_grad_wrapper


def _check_foreach(foreach, tensors):
    if foreach:
        for t in tensors:
            if not _has_fused_kernels(t.device):
                raise RuntimeError(
                    f"foreach=True was passed, but can't use the foreach API on {t.device.type} tensors")


def _nonfinite(norm_type):
    return RuntimeError(
        f"The total norm of order {norm_type} for gradients from "
        "`parameters` is non-finite, so it cannot be clipped. To disable "
        "this error and scale the gradients by the non-finite norm anyway, "
        "set `error_if_nonfinite=False`")


def _norm2(t):
    return ptcore.linalg.vector_norm(t, 2.0)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of the norms of ``tensors`` (as if concatenated into one vector).

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
    norm_type : float
        ``inf`` for the max-norm.
    error_if_nonfinite : bool
        Raise if the total norm is nan or inf.
    foreach : bool, optional
        Accepted for compatibility (ptcore always loops).
    """
    if isinstance(tensors, _TensorBase):
        tensors = [tensors]
    else:
        tensors = list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return ptcore.tensor(0.0)
    if tensors[0] is None:
        raise AttributeError("'NoneType' object has no attribute 'device'")
    for i, t in enumerate(tensors):
        if t is None:
            # (torch groups the tensors by device and dtype, which needs each one)
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed "
                               f"to be defined but the {i}-th Tensor is not.")
    _check_foreach(foreach, tensors)
    for t in tensors:
        if t.layout is not ptcore.strided:
            # torch: linalg_vector_norm has no kernel for the sparse backends
            raise NotImplementedError(
                "Could not run 'aten::linalg_vector_norm' with arguments from the "
                f"'{'SparseCPU' if t.layout is ptcore.sparse_coo else 'SparseCsrCPU'}' backend: "
                f"the gradient norm of a {t.layout} tensor is not supported (as in torch)")
    first_device = tensors[0].device
    if norm_type == 2.0:
        total = _K.norm2_total(tensors)       # CPU float tensors of one dtype, one pass
        if total is not None:
            total_norm = ptcore.tensor(total, dtype=tensors[0].dtype)
            if error_if_nonfinite and not math.isfinite(total):
                raise _nonfinite(norm_type)
            return total_norm
    stacked_norm2 = _loop_for("stacked_norm2", first_device, None) if norm_type == 2.0 else None
    stacked = stacked_norm2(tensors, _norm2) if stacked_norm2 is not None else None
    if stacked is None:
        norms = [ptcore.linalg.vector_norm(g, norm_type) for g in tensors]
        stacked = ptcore.stack([n.to(first_device) for n in norms])
    total_norm = ptcore.linalg.vector_norm(stacked, norm_type)
    if error_if_nonfinite and bool(ptcore.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise _nonfinite(norm_type)
    return total_norm


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``."""
    if isinstance(parameters, _TensorBase):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    _check_foreach(foreach, grads)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = ptcore.clamp(clip_coef, max=1.0)
    scale_all_ = _loop_for("scale_all_", total_norm.device, _K.scale_all_)
    if not total_norm.requires_grad and scale_all_ is not None:
        # (a CPU norm: its value is at hand, one pass over the gradients in C)
        c = clip_coef_clamped.item()
        if c == 1.0:           # x * 1.0 is x: nothing to write
            return
        if scale_all_(grads, c):
            return
    coef = {}                       # device -> the coefficient there (one copy each)
    for g in grads:
        # the coefficient keeps the norm's dtype, as torch's: a float16 or
        # bfloat16 gradient is scaled at float precision, not by a rounded factor
        dev = g.device
        c = coef.get(dev)
        if c is None:
            c = coef[dev] = clip_coef_clamped.to(device=dev)
        g.mul_(c)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradient norm of ``parameters`` (in place); returns the total norm before clipping.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` is clipped.
    max_norm : float
        Maximum norm.
    norm_type : float
        Type of the p-norm (``inf`` for the max-norm).
    error_if_nonfinite : bool
        Raise if the total norm is nan or inf.
    foreach : bool, optional
        Accepted for compatibility.
    """
    if isinstance(parameters, _TensorBase):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated "
                  "in favor of `torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of ``parameters`` to ``[-clip_value, clip_value]`` (in place)."""
    if isinstance(parameters, _TensorBase):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    _check_foreach(foreach, grads)
    for grad in grads:
        grad.clamp_(min=-clip_value, max=clip_value)


# torch.nn.utils.clip_grad's names for the two (torch.nn.utils exports them public)
_get_total_norm = get_total_norm
_clip_grads_with_norm_ = clip_grads_with_norm_
