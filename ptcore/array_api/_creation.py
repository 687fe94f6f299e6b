"""Creation functions of the array API namespace (standard argument names over ptcore's)."""
import builtins as _b

import ptcore as _pt

_Tensor = _pt.Tensor


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """An array from a tensor, a (nested) sequence, a scalar or a buffer; shares memory unless needed or ``copy``."""
    if device is None and isinstance(obj, _Tensor):
        device = obj.device
    return _pt.asarray(obj, dtype=dtype, device=device, copy=copy)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)``; empty where the step points away from ``stop``."""
    if stop is None:
        start, stop = 0, start
    if (step > 0 and stop <= start) or (step < 0 and stop >= start):
        if dtype is None:
            dtype = _pt.int64 if _b.all(isinstance(v, int) for v in (start, stop, step)) else \
                _pt.get_default_dtype()
        return _pt.empty(0, dtype=dtype, device=device)
    return _pt.arange(start, stop, step, dtype=dtype, device=device)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised array of ``shape``."""
    if dtype is None and device is None:
        return _pt.empty(shape)
    return _pt.empty(shape, dtype=dtype, device=device)


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised array shaped as ``x``."""
    if dtype is None and device is None:
        return _pt.empty_like(x)
    return _pt.empty_like(x, dtype=dtype, device=device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D array with ones on the ``k``-th diagonal."""
    if n_cols is None:
        n_cols = n_rows
    z = _pt.zeros(n_rows, n_cols, dtype=dtype, device=device)
    if -n_rows < k < n_cols:
        z.diagonal(k).fill_(1)
    return z


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing the memory of a DLPack producer; copied when ``copy=True`` or to reach ``device``."""
    t = _pt.from_dlpack(x)
    if device is not None and t.device != _pt.device(device):
        if copy is False:
            raise BufferError(f"from_dlpack: moving from {t.device} to {device} needs a copy, but copy=False")
        return t.to(device)
    return t.clone() if copy else t


def full(shape, fill_value, *, dtype=None, device=None):
    """An array of ``shape`` filled with ``fill_value``."""
    if isinstance(shape, int):
        shape = (shape,)
    return _pt.full(shape, fill_value, dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """An array shaped as ``x`` filled with ``fill_value``."""
    return _pt.full_like(x, fill_value, dtype=dtype, device=device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced samples over ``[start, stop]`` (or ``[start, stop)``)."""
    if not endpoint:
        if num == 0:
            return _pt.linspace(start, stop, 0, dtype=dtype, device=device)
        return _pt.linspace(start, stop, num + 1, dtype=dtype, device=device)[:-1]
    return _pt.linspace(start, stop, num, dtype=dtype, device=device)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-D arrays (``indexing`` 'xy' by default, as the standard)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return ()
    return tuple(_pt.meshgrid(*arrays, indexing=indexing))


def ones(shape, *, dtype=None, device=None):
    """An array of ones."""
    if dtype is None and device is None:
        return _pt.ones(shape)
    return _pt.ones(shape, dtype=dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones shaped as ``x``."""
    if dtype is None and device is None:
        return _pt.ones_like(x)
    return _pt.ones_like(x, dtype=dtype, device=device)


def tril(x, /, *, k=0):
    """Lower triangle of the last two axes."""
    return _pt.tril(x, k)


def triu(x, /, *, k=0):
    """Upper triangle of the last two axes."""
    return _pt.triu(x, k)


def zeros(shape, *, dtype=None, device=None):
    """An array of zeros."""
    if dtype is None and device is None:
        return _pt.zeros(shape)
    return _pt.zeros(shape, dtype=dtype, device=device)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros shaped as ``x``."""
    if dtype is None and device is None:
        return _pt.zeros_like(x)
    return _pt.zeros_like(x, dtype=dtype, device=device)
