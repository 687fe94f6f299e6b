"""The orthogonal polynomials of ``torch.special`` evaluated at ``(x, n)``:
Chebyshev T/U/V/W (and their shifted forms on ``[0, 1]``), Hermite H/He,
Laguerre L and Legendre P.

``n`` is truncated to an integer; ``n < 0`` gives 0.  Values follow
PyTorch's kernels: the three-term recurrence, with the same closed forms at
``|x| == 1`` and (Chebyshev, large ``n``) inside ``(-1, 1)``.  The
recurrence runs vectorized over the whole array, stepping ``k`` up to the
largest ``n``.  PyTorch defines no derivative for these: the results do not
require grad.
"""
import numpy as _np

__all__ = ["chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "shifted",
           "hermite_h", "hermite_he", "laguerre_l", "legendre_p"]


def _recurrence(x, n, p0, p1, step):
    """``P_n(x)`` from ``P_0 = p0``, ``P_1 = p1`` and ``P_k = step(k, P_{k-1},
    P_{k-2})`` (for ``k >= 2``), elementwise for an array of degrees ``n``."""
    if n.size and n.min() == n.max() >= 0:
        # one degree for all (a scalar ``n``, the common case): the plain recurrence
        top = int(n.flat[0])
        if top == 0:
            return _np.broadcast_to(p0, x.shape).astype(x.dtype)
        p, q = p0, p1
        for k in range(2, top + 1):
            p, q = q, step(k, q, p)
        return _np.broadcast_to(q, x.shape).astype(x.dtype, copy=False)
    r = _np.where(n == 0, p0, p1)
    top = int(n.max()) if n.size else 0
    if top >= 2:
        p, q = _np.broadcast_to(p0, x.shape).astype(x.dtype), _np.broadcast_to(p1, x.shape)
        for k in range(2, top + 1):
            nq = step(k, q, p)
            p, q = q, nq
            sel = n == k
            if sel.any():
                r = _np.where(sel, q, r)
    return _np.where(n < 0, 0, r).astype(x.dtype, copy=False)


def _sel(cond, a, r):
    """``a`` where ``cond`` (skipping the work when nowhere)."""
    return _np.where(cond, a, r) if cond.any() else r


def _rec_unless(big, x, n, p0, p1, step):
    """The recurrence, or nothing (zeros) where the closed form covers all."""
    if big.all():
        return _np.zeros_like(x)
    return _recurrence(x, n, p0, p1, step)


def chebyshev_t(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        ax = _np.abs(x)
        x2 = x + x
        big = (n > 6) & (ax < 1)
        r = _rec_unless(big, x, n, one, x, lambda k, q, p: x2 * q - p)
        r = _sel(big, _np.cos(n * _np.arccos(x)), r)
        r = _sel(ax == 1, _np.where((x > 0) | (n % 2 == 0), 1, -1).astype(x.dtype), r)
    return _np.where(n < 0, 0, r).astype(x.dtype, copy=False)


def chebyshev_u(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        ax = _np.abs(x)
        x2 = x + x
        r = _rec_unless((n > 8) & (ax < 1), x, n, one, x + x, lambda k, q, p: x2 * q - p)
        big = (n > 8) & (ax < 1)
        if big.any():
            t = _np.arccos(x)
            s = _np.sin(t)
            v = _np.where(s != 0, _np.sin((n + 1) * t) / s, (n + 1) * _np.cos((n + 1) * t) / x)
            r = _np.where(big, v, r)
        r = _sel(ax == 1, _np.where((x > 0) | (n % 2 == 0), n + 1, -(n + 1)).astype(x.dtype), r)
    return _np.where(n < 0, 0, r).astype(x.dtype, copy=False)


def chebyshev_v(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        ax = _np.abs(x)
        x2 = x + x
        r = _rec_unless((n > 8) & (ax < 1), x, n, one, x + x - 1, lambda k, q, p: x2 * q - p)
        odd = _np.where(n % 2 == 0, n + n + 1, -(n + n + 1)).astype(x.dtype)
        big = (n > 8) & (ax < 1)
        if big.any():
            t = _np.arccos(x)
            v = _np.where(_np.sin(t / 2) != 1, _np.cos((n + 0.5) * t) / _np.cos(t / 2), odd)
            r = _np.where(big, v, r)
        r = _sel(ax == 1, _np.where(x > 0, 1, odd).astype(x.dtype), r)
    return _np.where(n < 0, 0, r).astype(x.dtype, copy=False)


def chebyshev_w(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        ax = _np.abs(x)
        x2 = x + x
        r = _rec_unless((n > 8) & (ax < 1), x, n, one, x + x + 1, lambda k, q, p: x2 * q - p)
        edge = _np.where(x > 0, n + n + 1, _np.where(n % 2 == 0, 1, -1)).astype(x.dtype)
        big = (n > 8) & (ax < 1)
        if big.any():
            t = _np.arccos(x)
            v = _np.where(_np.cos(t / 2) != 1, _np.sin((n + 0.5) * t) / _np.sin(t / 2), edge)
            r = _np.where(big, v, r)
        r = _sel(ax == 1, edge, r)
    return _np.where(n < 0, 0, r).astype(x.dtype, copy=False)


def shifted(kernel):
    """The shifted polynomial ``P*_n(x) = P_n(2x - 1)`` of a Chebyshev kernel."""
    def f(x, n):
        return kernel(x + x - 1, n)
    return f


def hermite_h(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        x2 = x + x
        return _recurrence(x, n, one, x2, lambda k, q, p: x2 * q - (2 * (k - 1)) * p)


def hermite_he(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        return _recurrence(x, n, one, x, lambda k, q, p: x * q - (k - 1) * p)


def laguerre_l(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        r = _recurrence(x, n, one, 1 - x,
                        lambda k, q, p: ((2 * (k - 1) + (1 - x)) * q - (k - 1) * p) / k)
        r = _sel((x == 0) & (n >= 0), one, r)
    return r


def legendre_p(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        r = _recurrence(x, n, one, x,
                        lambda k, q, p: ((2 * (k - 1) + 1) * x * q - (k - 1) * p) / k)
        r = _sel((_np.abs(x) == 1) & (n >= 0),
                 _np.where((x > 0) | (n % 2 == 0), 1, -1).astype(x.dtype), r)
    return r
