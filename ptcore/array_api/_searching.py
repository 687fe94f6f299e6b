"""Searching, sorting and set functions of the array API namespace."""
import ptcore as _pt
from collections import namedtuple as _namedtuple

from ptcore.array_api._dtypes import result_type

UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the first largest element along ``axis`` (of the flattened array when None)."""
    if axis is None and keepdims:
        return _pt.argmax(x).reshape((1,) * x.ndim)
    return _pt.argmax(x, axis, keepdim=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the first smallest element along ``axis`` (of the flattened array when None)."""
    if axis is None and keepdims:
        return _pt.argmin(x).reshape((1,) * x.ndim)
    return _pt.argmin(x, axis, keepdim=keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """Number of non-zero elements along ``axis``."""
    if axis == ():
        return (x != 0).to(_pt.int64)
    out = _pt.count_nonzero(x, dim=axis)
    if keepdims:
        axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
        axes = {a % x.ndim for a in axes}
        out = out.reshape([1 if i in axes else s for i, s in enumerate(x.shape)])
    return out


def nonzero(x, /):
    """Indices of the non-zero elements, one array per axis."""
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension")
    return _pt.nonzero(x, as_tuple=True)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Insertion points of ``x2`` into the sorted 1-D ``x1``."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if not isinstance(x2, _pt.Tensor):
        x2 = _pt.tensor(x2, dtype=x1.dtype, device=x1.device)
    elif x2.dtype != x1.dtype:
        dt = result_type(x1, x2)
        x1, x2 = x1.to(dt), x2.to(dt)
    return _pt.searchsorted(x1, x2, side=side, sorter=sorter)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort ``x`` along ``axis`` (stable by default)."""
    if x.ndim == 0:
        return _pt.zeros((), dtype=_pt.int64, device=x.device)
    if descending and stable:
        # the standard keeps equal elements in their original order when descending
        n = x.shape[axis]
        flipped = _pt.flip(x, (axis,))
        idx = _pt.argsort(flipped, dim=axis, stable=True)
        return _pt.flip(n - 1 - idx, (axis,))
    return _pt.argsort(x, dim=axis, descending=descending, stable=stable)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis``."""
    if x.ndim == 0:
        return _pt.clone(x)
    return _pt.sort(x, dim=axis, descending=descending, stable=stable).values


def _unique(x):
    """Sorted unique values of the flattened ``x`` with first indices, inverse and counts (each NaN distinct)."""
    flat = x.reshape(-1)
    n = flat.shape[0]
    if flat.is_complex():
        # no complex sort (as torch): order by real part, then imaginary part
        order = _pt.argsort(flat.imag, stable=True)
        order = order[_pt.argsort(flat.real[order], stable=True)]
    else:
        order = _pt.argsort(flat, stable=True)
    s = flat[order]
    new = _pt.ones(n, dtype=_pt.bool, device=x.device)
    if n > 1:
        new[1:] = s[1:] != s[:-1]
    starts = _pt.nonzero(new).reshape(-1)
    values = s[starts]
    bounds = _pt.cat([starts, _pt.tensor([n], dtype=starts.dtype, device=x.device)])
    counts = bounds[1:] - bounds[:-1]
    group = _pt.cumsum(new.to(_pt.int64), 0) - 1
    inverse = _pt.empty(n, dtype=_pt.int64, device=x.device)
    inverse[order] = group
    return values, order[starts], inverse.reshape(x.shape), counts


def unique_all(x, /):
    """Unique values with their first indices, the inverse indices and the counts."""
    return UniqueAllResult(*_unique(x))


def unique_counts(x, /):
    """Unique values and their counts."""
    v, _, _, c = _unique(x)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /):
    """Unique values and the indices that rebuild ``x`` from them."""
    v, _, inv, _ = _unique(x)
    return UniqueInverseResult(v, inv)


def unique_values(x, /):
    """Unique values (sorted; each NaN distinct)."""
    return _unique(x)[0]


def isin(x1, x2, /, *, invert=False):
    """Whether each element of ``x1`` is in ``x2``."""
    if not isinstance(x1, _pt.Tensor):
        x1 = _pt.tensor(x1, dtype=x2.dtype, device=x2.device)
    if not isinstance(x2, _pt.Tensor):
        x2 = _pt.tensor(x2, dtype=x1.dtype, device=x1.device)
    return _pt.isin(x1, x2, invert=invert)
