"""Window functions as ``torch.signal.windows`` computes them (SciPy's definitions).

Each takes the window length ``M`` and the keywords ``sym`` (``True``: symmetric, for filter
design; ``False``: periodic, for spectral analysis), ``dtype`` (float32 or float64, default
dtype when None), ``layout``, ``device`` and ``requires_grad``.  The values are computed with
torch's formulas (a ``linspace`` of the argument, then the waveform) so they round as torch's.
"""
import math
from collections.abc import Iterable

import ptcore

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not ptcore.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (ptcore.float32, ptcore.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _dtype(dtype):
    return ptcore.get_default_dtype() if dtype is None else dtype


def _trivial(M, dtype, device, requires_grad, ones_at_one=True):
    """The window of length 0 (empty) or 1 (a one), else None."""
    if M == 0:
        return ptcore.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_at_one:
        return ptcore.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _linspace(start, end, M, dtype, device, requires_grad):
    return ptcore.linspace(start, end, M, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=ptcore.strided,
                device=None, requires_grad=False):
    r"""Exponential (Poisson) window :math:`w_n = \exp(-|n - c| / \tau)`; the center ``c``
    defaults to ``(M - 1) / 2`` (``M / 2`` when ``sym=False``)."""
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    out = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if out is not None:
        return out
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ptcore.exp(-ptcore.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None,
           requires_grad=False):
    r"""Cosine (sine) window :math:`w_n = \sin(\pi (n + 0.5) / M)`."""
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    out = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if out is not None:
        return out
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ptcore.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=ptcore.strided, device=None,
             requires_grad=False):
    r"""Gaussian window :math:`w_n = \exp(-(n / (2\sigma))^2)` around the window's center."""
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    out = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if out is not None:
        return out
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return ptcore.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=ptcore.strided, device=None,
           requires_grad=False):
    r"""Kaiser window :math:`I_0(\beta \sqrt{1 - ((n - N/2)/(N/2))^2}) / I_0(\beta)`."""
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    out = _trivial(M, dtype, device, requires_grad)
    if out is not None:
        return out
    beta = ptcore.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = ptcore.minimum(beta, start + (M - 1) * constant)
    k = _linspace(start.item(), end.item(), M, dtype, device, requires_grad)
    return ptcore.i0(ptcore.sqrt(beta * beta - ptcore.pow(k, 2))) / ptcore.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=ptcore.strided, device=None,
                   requires_grad=False):
    r"""Generic weighted sum of cosines :math:`\sum_i (-1)^i a_i \cos(2\pi i n / N)`."""
    dtype = _dtype(dtype)
    _checks("general_cosine", M, dtype, layout)
    out = _trivial(M, dtype, device, requires_grad)
    if out is not None:
        return out
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = ptcore.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                        requires_grad=requires_grad)
    i = ptcore.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
                      requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * ptcore.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=ptcore.strided, device=None,
                    requires_grad=False):
    r"""Generalized Hamming window :math:`\alpha - (1 - \alpha) \cos(2\pi n / N)`."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None,
            requires_grad=False):
    """Hamming window (``general_hamming`` with ``alpha=0.54``)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None, requires_grad=False):
    """Hann window (``general_hamming`` with ``alpha=0.5``)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None,
             requires_grad=False):
    """Blackman window (cosine weights 0.42, 0.5, 0.08)."""
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None,
             requires_grad=False):
    r"""Bartlett (triangular) window :math:`1 - |2n/N - 1|`."""
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    out = _trivial(M, dtype, device, requires_grad)
    if out is not None:
        return out
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(start, start + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - ptcore.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=ptcore.strided, device=None,
            requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
