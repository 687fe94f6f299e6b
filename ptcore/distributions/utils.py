"""Helpers shared by the distributions: argument broadcasting, probs/logits
conversion, cached properties and triangular-matrix packing."""
from functools import update_wrapper
from numbers import Number

import ptcore

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """Broadcast tensors and numbers to one shape; numbers become tensors of the
    first tensor's dtype/device (default dtype when all are numbers)."""
    if not all(isinstance(v, (ptcore.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "ptcore.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ptcore.Tensor) for v in values):
        options = dict(dtype=ptcore.get_default_dtype())
        for v in values:
            if isinstance(v, ptcore.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, ptcore.Tensor) else ptcore.tensor(v, **options) for v in values]
    return ptcore.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device, generator=None):
    return ptcore.normal(0.0, 1.0, size=tuple(shape), dtype=dtype, device=device, generator=generator)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Logits to probabilities: sigmoid when binary, softmax over the last dim otherwise."""
    if is_binary:
        return ptcore.sigmoid(logits)
    return ptcore.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into the open interval (eps, 1 - eps) of their dtype."""
    eps = ptcore.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to logits: log-odds when binary, log-probabilities otherwise."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ptcore.log(ps_clamped) - ptcore.log1p(-ps_clamped)
    return ptcore.log(ps_clamped)


class lazy_property:
    """Computed on first access, then cached on the instance.  The value is
    computed with grad enabled, so a property first read inside ``no_grad``
    still carries the graph back to the parameters."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ptcore.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Lets a lazy_property be read from the class like a property (for docs)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """Pack the lower triangle (offset ``diag``) of the last two dims into a vector, row-major."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = ptcore.arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of :func:`tril_matrix_to_vec`."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = ptcore.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, ptcore.Tensor) else round(n)
    mat = vec.new_zeros(vec.shape[:-1] + ptcore.Size((n, n)))
    arange = ptcore.arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat
