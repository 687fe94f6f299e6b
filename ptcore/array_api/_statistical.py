"""Statistical and utility (reduction) functions of the array API namespace.

The standard's ``axis=()`` reduces nothing (torch reads an empty dim list as
"all axes"), and ``keepdims`` applies to ``axis=None`` too.
"""
import ptcore as _pt


def _axes(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _none_reduction(x, dtype):
    """The result of reducing over no axis: ``x`` itself, as a new array of ``dtype``."""
    return x.to(dtype, copy=True) if dtype is not None else _pt.clone(x)


def max(x, /, *, axis=None, keepdims=False):
    """Largest elements along ``axis`` (NaN propagates)."""
    if axis == ():
        return _pt.clone(x)
    if axis is None and not keepdims:
        return _pt.amax(x)
    return _pt.amax(x, dim=() if axis is None else axis, keepdim=keepdims)


def min(x, /, *, axis=None, keepdims=False):
    """Smallest elements along ``axis`` (NaN propagates)."""
    if axis == ():
        return _pt.clone(x)
    if axis is None and not keepdims:
        return _pt.amin(x)
    return _pt.amin(x, dim=() if axis is None else axis, keepdim=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Arithmetic mean along ``axis``."""
    if axis == ():
        return _pt.clone(x)
    return _pt.mean(x, dim=_axes(axis), keepdim=keepdims)


def _sum_dtype(x, dtype):
    if dtype is None and x.dtype in (_pt.bool, _pt.int8, _pt.int16, _pt.int32, _pt.uint8):
        return _pt.int64
    return dtype


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """Sum along ``axis``; integer inputs sum in the default integer dtype."""
    if axis == ():
        return _none_reduction(x, _sum_dtype(x, dtype))
    if dtype is None:
        if not keepdims:
            return _pt.sum(x, _axes(axis)) if axis is not None else _pt.sum(x)
        return _pt.sum(x, dim=_axes(axis), keepdim=keepdims)
    return _pt.sum(x, dim=_axes(axis), keepdim=keepdims, dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product along ``axis``; integer inputs multiply in the default integer dtype."""
    if axis == ():
        return _none_reduction(x, _sum_dtype(x, dtype))
    if axis is None:
        out = _pt.prod(x, dtype=dtype)
        return out.reshape((1,) * x.ndim) if keepdims else out
    if isinstance(axis, int):
        return _pt.prod(x, axis, keepdim=keepdims, dtype=dtype)
    dims = sorted({a % x.ndim for a in axis})
    kept = [s for i, s in enumerate(x.shape) if i not in dims]
    reduced = 1
    for d in dims:
        reduced *= x.shape[d]
    # the reduced dims flattened into one (an explicit size: -1 is ambiguous when
    # a kept dim is 0)
    out = _pt.prod(_pt.movedim(x, dims, list(range(x.ndim - len(dims), x.ndim))).reshape(
        *kept, reduced), -1, dtype=dtype)
    if keepdims:
        for d in dims:
            out = out.unsqueeze(d)
    return out


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation along ``axis`` with ``correction`` degrees of freedom removed."""
    if axis == ():
        return _pt.std(x.unsqueeze(-1), dim=-1, correction=correction)
    return _pt.std(x, dim=_axes(axis), correction=correction, keepdim=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance along ``axis`` with ``correction`` degrees of freedom removed."""
    if axis == ():
        return _pt.var(x.unsqueeze(-1), dim=-1, correction=correction)
    return _pt.var(x, dim=_axes(axis), correction=correction, keepdim=keepdims)


def _cumulative(fn, x, axis, dtype, include_initial, initial):
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"cumulative: axis is required for a {x.ndim}-D array")
        axis = 0
    if x.ndim == 0:
        raise ValueError("cumulative: x must have at least one dimension")
    out = fn(x, axis, dtype=_sum_dtype(x, dtype))
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = _pt.cat([_pt.full(shape, initial, dtype=out.dtype, device=out.device), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along ``axis`` (a leading 0 with ``include_initial``)."""
    return _cumulative(_pt.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product along ``axis`` (a leading 1 with ``include_initial``)."""
    return _cumulative(_pt.cumprod, x, axis, dtype, include_initial, 1)


def all(x, /, *, axis=None, keepdims=False):
    """Whether all elements along ``axis`` are true (a bool array)."""
    if axis == ():
        return x.to(_pt.bool, copy=True)
    out = _pt.all(x, dim=_axes(axis), keepdim=keepdims)
    return out if out.dtype == _pt.bool else out.to(_pt.bool)


def any(x, /, *, axis=None, keepdims=False):
    """Whether any element along ``axis`` is true (a bool array)."""
    if axis == ():
        return x.to(_pt.bool, copy=True)
    out = _pt.any(x, dim=_axes(axis), keepdim=keepdims)
    return out if out.dtype == _pt.bool else out.to(_pt.bool)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """``n``-th forward difference along ``axis``."""
    return _pt.diff(x, n=n, dim=axis, prepend=prepend, append=append)
