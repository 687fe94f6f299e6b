"""Linear algebra functions of the main array API namespace."""
import ptcore as _pt


def _promote(x1, x2):
    if x1.dtype != x2.dtype:
        dt = _pt.promote_types(x1.dtype, x2.dtype)
        return x1.to(dt), x2.to(dt)
    return x1, x2


def matmul(x1, x2, /):
    """Matrix product, promoting mixed dtypes (torch's matmul needs equal dtypes)."""
    if x1.dtype != x2.dtype:
        x1, x2 = _promote(x1, x2)
    return _pt.matmul(x1, x2)


def matrix_transpose(x, /):
    """Transpose of the last two axes."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got {x.ndim}")
    return x.mT


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over ``axes``."""
    x1, x2 = _promote(x1, x2)
    return _pt.tensordot(x1, x2, dims=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """Dot product of conjugated ``x1`` and ``x2`` along ``axis``, broadcasting the other axes."""
    x1, x2 = _promote(x1, x2)
    n1, n2 = x1.shape[axis] if x1.ndim else None, x2.shape[axis] if x2.ndim else None
    if n1 is None or n2 is None or n1 != n2:
        raise ValueError(f"vecdot: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have the same size "
                         f"along axis {axis} (it is not broadcast)")
    x1, x2 = _pt.broadcast_tensors(x1, x2)
    # computed here, not by linalg.vecdot: that refuses integer arrays (as torch's),
    # which the standard's vecdot takes
    out = ((x1.conj() if x1.dtype.is_complex else x1) * x2).sum(axis)
    return out if out.dtype == x1.dtype else out.to(x1.dtype)  # torch sums small integers in int64
