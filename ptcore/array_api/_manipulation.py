"""Manipulation and indexing functions of the array API namespace."""
import builtins as _b

import numpy as _np

import ptcore as _pt
from ptcore.array_api._dtypes import result_type

_Tensor = _pt.Tensor


def broadcast_arrays(*arrays):
    """Views of ``arrays`` broadcast to their common shape."""
    return tuple(_pt.broadcast_tensors(*arrays))


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to."""
    try:
        return tuple(_pt.broadcast_shapes(*shapes))
    except RuntimeError as exc:  # the standard's error type
        raise ValueError(str(exc)) from None


def broadcast_to(x, /, shape):
    """A view of ``x`` broadcast to ``shape``."""
    return _pt.broadcast_to(x, shape)


def concat(arrays, /, *, axis=0):
    """Join arrays along ``axis`` (flattened first when ``axis`` is None), promoting their dtypes."""
    arrays = _same_dtype(arrays)
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    return _pt.cat(arrays, axis)


def _same_dtype(arrays):
    arrays = list(arrays)
    if arrays and _b.any(a.dtype != arrays[0].dtype for a in arrays):
        dt = result_type(*arrays)
        arrays = [a.to(dt) for a in arrays]
    return arrays


def expand_dims(x, /, axis):
    """Insert size-1 axes at the positions ``axis`` (int or tuple) of the result."""
    if isinstance(axis, int):
        return _pt.unsqueeze(x, axis)
    n = x.ndim + len(axis)
    norm = sorted(a + n if a < 0 else a for a in axis)
    if _b.any(not 0 <= a < n for a in norm) or len(set(norm)) != len(norm):
        raise IndexError(f"expand_dims: axes {axis} out of range or repeated for a {n}-D result")
    for a in norm:
        x = _pt.unsqueeze(x, a)
    return x


def flip(x, /, *, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    if axis is None:
        axis = tuple(range(x.ndim))
    elif isinstance(axis, int):
        axis = (axis,)
    return _pt.flip(x, axis)


def moveaxis(x, source, destination, /):
    """Move axes ``source`` to positions ``destination``."""
    return _pt.movedim(x, source, destination)


def permute_dims(x, /, axes):
    """Permute the axes of ``x``."""
    return _pt.permute(x, axes)


def repeat(x, repeats, /, *, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array when None)."""
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    if isinstance(repeats, _Tensor) and repeats.dtype != _pt.int64:
        repeats = repeats.to(_pt.int64)  # torch's kernel takes int32/int64 counts only
    return _pt.repeat_interleave(x, repeats, axis)


def reshape(x, /, shape, *, copy=None):
    """``x`` with a new shape: a view where possible, a copy when ``copy=True``."""
    if copy:
        return _pt.reshape(x, shape).clone()
    if copy is False:
        try:
            return x.view(shape)
        except RuntimeError as exc:
            raise ValueError(f"reshape: cannot reshape {tuple(x.shape)} to {tuple(shape)} without a copy") from exc
    return _pt.reshape(x, shape)


def roll(x, /, shift, *, axis=None):
    """Roll elements along ``axis`` (of the flattened array when None)."""
    if axis is None:
        return _pt.roll(x, shift)
    return _pt.roll(x, shift, axis)


def squeeze(x, /, axis):
    """Remove the size-1 axes ``axis`` (an error if one is not of size 1)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -x.ndim <= a < _b.max(x.ndim, 1):
            raise IndexError(f"squeeze: axis {a} out of range for a {x.ndim}-D array")
        if x.ndim and x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return _pt.squeeze(x, axes)


def stack(arrays, /, *, axis=0):
    """Join arrays along a new ``axis``, promoting their dtypes."""
    return _pt.stack(_same_dtype(arrays), axis)


def tile(x, repetitions, /):
    """Repeat ``x`` ``repetitions`` times along each axis."""
    return _pt.tile(x, tuple(repetitions))


def unstack(x, /, *, axis=0):
    """Views of ``x`` split along ``axis``."""
    return tuple(_pt.unbind(x, axis))


def take(x, indices, /, *, axis=None):
    """Elements of ``x`` at ``indices`` along ``axis`` (negative indices count from the end)."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for a {x.ndim}-D array")
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    return _pt.index_select(x, axis, _wrap(indices, x.shape[axis]))


def take_along_axis(x, indices, /, *, axis=-1):
    """Elements of ``x`` at ``indices`` matched along ``axis`` (negative indices count from the end)."""
    return _pt.take_along_dim(x, _wrap(indices, x.shape[axis]), axis)


def _wrap(indices, n):
    if indices.dtype == _pt.uint8 or indices.dtype == _pt.bool:
        return indices.to(_pt.int64)
    if indices.device.type == "cpu" and (indices.numel() == 0 or _np.asarray(indices).min() >= 0):
        return indices  # nothing to wrap (a NumPy view of the CPU buffer checks it cheaply)
    # one op: maps -n <= i < 0 to i + n and keeps 0 <= i < n (out-of-range indices are
    # unspecified by the standard)
    return _pt.remainder(indices, n)
