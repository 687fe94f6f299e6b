"""Helpers shared by the masked operations: the canonical input mask, the
canonical reduction dims, the identity value of each reduction, and the
output mask of a reduction."""
import operator

import ptcore

__all__ = []


def canonical_dim(dim, ndim):
    """``dim`` (None, an int, or a sequence of ints) as a sorted tuple of
    non-negative dims; None and ``()`` mean every dim."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = (dim,) if not isinstance(dim, (tuple, list)) else dim
    out = []
    for d in dims:
        d = operator.index(d)
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        d %= ndim
        if d in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out))


def input_mask(input, mask):
    """``mask`` as a bool tensor of ``input``'s shape (broadcast if needed)."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if not isinstance(mask, ptcore.Tensor):
        mask = ptcore.as_tensor(mask, device=input.device)
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask "
                             "dimensionality higher than of the input)")
        mask = ptcore.broadcast_to(mask, input.shape)
    return mask.to(dtype=ptcore.bool)


def any_dims(mask, dims, keepdim):
    """``mask.any`` over each of ``dims`` (sorted), the output mask of a reduction."""
    r = mask
    for d in reversed(dims):
        r = r.any(dim=d, keepdim=keepdim)
    return r


def _is_int_like(dtype):
    """Signed integer types and uint8: those torch gives an identity for."""
    return dtype is ptcore.uint8 or (dtype.is_signed and not (dtype.is_floating_point or
                                                             dtype.is_complex))


def reduction_identity(op_name, input, *args):
    """The value that leaves ``op_name``'s reduction unchanged, as a 0-dim
    tensor of ``input``'s dtype, or None where there is none (mean, var, std)."""
    dtype, device = input.dtype, input.device

    def full(v, dt=dtype):
        return ptcore.tensor(v, dtype=dt, device=device)
    if op_name in ("sum", "cumsum"):
        return full(0)
    if op_name in ("prod", "cumprod"):
        return full(1)
    if op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if dtype.is_floating_point or (dtype.is_complex and op_name == "logsumexp"):
            return full(float("-inf"))
        if _is_int_like(dtype):
            return full(ptcore.iinfo(dtype).min)
    elif op_name in ("amin", "argmin"):
        if dtype.is_floating_point:
            return full(float("inf"))
        if _is_int_like(dtype):
            return full(ptcore.iinfo(dtype).max)
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not dtype.is_floating_point:
                raise RuntimeError(f"masked norm with ord=-inf needs a floating point input, "
                                   f"got {dtype}")
            return full(float("inf"))
        return full(0)
    elif op_name == "median":
        return full(float("nan"), dtype if dtype.is_floating_point else ptcore.float32)
    elif op_name in ("mean", "var", "std"):
        return None
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")
