"""The array API standard's ``fft`` extension.

Calls ``ptcore.fft`` where that module exists. Until it does, the transforms
(not the shifts and frequencies) take a NumPy round trip through
``scipy.fft``/``numpy.fft`` on the CPU: REPLACE with ``ptcore.fft`` once it is
merged (marked ``_ROUND_TRIP``).
"""
import importlib as _il
import importlib.util as _ilu

import ptcore as _pt

__all__ = ["fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft",
           "irfftn", "rfft", "rfftfreq", "rfftn"]

_NORMS = ("backward", "ortho", "forward")
_pfft = _il.import_module("ptcore.fft") if _ilu.find_spec("ptcore.fft") is not None else None


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be one of {_NORMS}, got {norm!r}")


def _ROUND_TRIP(name, x, **kwargs):
    """Run ``numpy.fft.<name>`` on ``x`` (CPU only) and return a tensor of the standard's dtype."""
    import numpy as np
    if x.device.type != "cpu":
        raise NotImplementedError(f"fft.{name}: needs ptcore.fft for tensors on {x.device}")
    a = x.detach().numpy()
    out = getattr(np.fft, name)(a, **kwargs)
    single = x.dtype in (_pt.float32, _pt.complex64)
    if np.iscomplexobj(out):
        out = out.astype(np.complex64 if single else np.complex128, copy=False)
    else:
        out = out.astype(np.float32 if single else np.float64, copy=False)
    return _pt.from_numpy(np.ascontiguousarray(out))


def _one(name):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        _check_norm(norm)
        if _pfft is not None:
            return getattr(_pfft, name)(x, n=n, dim=axis, norm=norm)
        return _ROUND_TRIP(name, x, n=n, axis=axis, norm=norm)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"One-dimensional ``{name}`` along ``axis`` (``n`` points, ``norm`` scaling)."
    return f


def _many(name):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        _check_norm(norm)
        if _pfft is not None:
            return getattr(_pfft, name)(x, s=s, dim=axes, norm=norm)
        return _ROUND_TRIP(name, x, s=s, axes=axes, norm=norm)
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
