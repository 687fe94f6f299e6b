"""The array API standard's ``fft`` extension.

The transforms are ``ptcore.fft``'s (with the standard's argument names).
"""
import ptcore as _pt
from ptcore import fft as _pfft

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft",
           "irfftn", "rfft", "rfftfreq", "rfftn"]

_NORMS = ("backward", "ortho", "forward")


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {_NORMS}, got {norm!r}")


def _one(name):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        _check_norm(norm)
        return getattr(_pfft, name)(x, n=n, dim=axis, norm=norm)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"One-dimensional ``{name}`` along ``axis`` (``n`` points, ``norm`` scaling)."
    return f


def _many(name):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        _check_norm(norm)
        return getattr(_pfft, name)(x, s=s, dim=axes, norm=norm)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"N-dimensional ``{name}`` over ``axes`` (shape ``s``, ``norm`` scaling)."
    return f


fft = _one("fft")
ifft = _one("ifft")
rfft = _one("rfft")
irfft = _one("irfft")
hfft = _one("hfft")
ihfft = _one("ihfft")
fftn = _many("fftn")
ifftn = _many("ifftn")
rfftn = _many("rfftn")
irfftn = _many("irfftn")


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of an ``n``-point transform with spacing ``d``."""
    k = _pt.arange(n, dtype=_pt.int64, device=device)
    k = _pt.where(k < (n + 1) // 2, k, k - n)
    return k.to(dtype or _pt.get_default_dtype()) / (n * d) if n else \
        _pt.empty(0, dtype=dtype or _pt.get_default_dtype(), device=device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """Sample frequencies of an ``n``-point real transform with spacing ``d``."""
    k = _pt.arange(n // 2 + 1, dtype=dtype or _pt.get_default_dtype(), device=device)
    return k / (n * d)


def _shift_axes(x, axes):
    if axes is None:
        return tuple(range(x.ndim))
    return (axes,) if isinstance(axes, int) else tuple(axes)


def fftshift(x, /, *, axes=None):
    """Move the zero frequency to the middle along ``axes``."""
    axes = _shift_axes(x, axes)
    return _pt.roll(x, [x.shape[a] // 2 for a in axes], axes)


def ifftshift(x, /, *, axes=None):
    """Inverse of ``fftshift``."""
    axes = _shift_axes(x, axes)
    return _pt.roll(x, [-(x.shape[a] // 2) for a in axes], axes)
