"""Sample frequencies and spectrum shifts of ``torch.fft``: ``fftfreq``,
``rfftfreq``, ``fftshift``, ``ifftshift``."""
import operator as _operator

from ptcore import _tensor as _C
from ptcore._ops._out import resize_out as _resize_out

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _freq_dtype(fname, dtype):
    dt = _C.get_default_dtype() if dtype is None else dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        # torch 2.13 on CPU builds the frequencies with arange, which has no complex kernel
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dt._legacy}\'')
    return dt


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
            requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``
    (``torch.fft.fftfreq``).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    import ptcore
    if isinstance(n, bool):
        raise TypeError("argument 'n' (position 1) must be int, not bool")
    n = _operator.index(n)
    dt = _freq_dtype("fftfreq", out.dtype if out is not None and dtype is None else dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    r = ptcore.arange(n, dtype=dt, device=device)
    h = (n + 1) // 2
    if n - h:
        r[h:] = ptcore.arange(-(n // 2), 0, dtype=dt, device=device)
    r = r.mul_(_scale(n, d))
    return _finish(r, out, requires_grad)


def _scale(n, d):
    # torch multiplies by 1.0 / (n * d) in C++: inf (and nan for 0 * inf) when n * d == 0
    nd = n * d
    return float("inf") if nd == 0 else 1.0 / nd


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    """The non-negative sample frequencies of an ``n``-point :func:`~ptcore.fft.rfft`:
    ``[0, 1, ..., n // 2] / (n * d)`` (``torch.fft.rfftfreq``)."""
    import ptcore
    if isinstance(n, bool):
        raise TypeError("argument 'n' (position 1) must be int, not bool")
    n = _operator.index(n)
    dt = _freq_dtype("rfftfreq", out.dtype if out is not None and dtype is None else dtype)
    # torch sizes the result n / 2 + 1 with C++'s truncating division: n = -1 gives one
    # frequency (-0.), n = -2, -3 none, and n <= -4 a negative size
    m = int(n / 2) + 1
    if m < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {m}: [{m}]")
    r = ptcore.arange(m, dtype=dt, device=device)
    r = r.mul_(_scale(n, d))
    return _finish(r, out, requires_grad)


def _finish(r, out, requires_grad):
    if out is not None:
        _resize_out(out, r.shape)
        out.copy_(r)
        r = out
    if requires_grad:
        r.requires_grad_(True)
    return r


def _shift(input, dim, inverse):
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int) or not hasattr(dim, "__len__"):
        dims = [_operator.index(dim)]
    else:
        dims = [_operator.index(d) for d in dim]
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return input.roll(shifts, dims)


def fftshift(input, dim=None):
    """Move the zero-frequency term to the centre of the spectrum: roll each
    of ``dim`` (default all) by ``n // 2`` (``torch.fft.fftshift``)."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    """Inverse of :func:`fftshift`: roll each of ``dim`` by ``(n + 1) // 2``
    (``torch.fft.ifftshift``)."""
    return _shift(input, dim, True)
