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

import ptcore.special._poly_loops as _loops

# degrees up to which the NumPy formulation (one array operation per step over
# all elements) is kept; above, the per-element C loop
_LOOP_FROM = 64

__all__ = ["chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "shifted",
           "hermite_h", "hermite_he", "laguerre_l", "legendre_p"]


def _recurrence(x, n, p0, p1, step, kind=None):
    """``P_n(x)`` from ``P_0 = p0``, ``P_1 = p1`` and ``P_k = step(k, P_{k-1},
    P_{k-2})`` (for ``k >= 2``), elementwise for an array of degrees ``n``.

    ``kind`` names the same recurrence in :mod:`._poly_loops`, which steps each
    element to its own degree in C (the same operations, so the same values):
    used for float32/float64 once a degree is large."""
    if kind is not None and x.dtype in (_np.float32, _np.float64) and n.size \
            and n.max() > _LOOP_FROM:
        shape = _np.broadcast_shapes(x.shape, n.shape)
        flat = [_np.ascontiguousarray(_np.broadcast_to(a, shape), dtype=x.dtype).ravel()
                for a in (x, p0, p1)]
        out = _np.empty(flat[0].shape, dtype=x.dtype)
        _loops.recurrence(_loops.KINDS[kind], *flat,
                          _np.ascontiguousarray(_np.broadcast_to(n, shape),
                                                dtype=_np.int64).ravel(), out)
        return out.reshape(shape)
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
    """The recurrence, or nothing (zeros) where the closed form covers all (the
    elements the closed form covers get degree 0: their recurrence is not run)."""
    if big.all():
        return _np.zeros_like(x)
    if big.any():
        n = _np.where(big, 0, n)
    return _recurrence(x, n, p0, p1, step, "chebyshev")


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
        return _recurrence(x, n, one, x2, lambda k, q, p: x2 * q - (2 * (k - 1)) * p,
                           "hermite_h")


def hermite_he(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        return _recurrence(x, n, one, x, lambda k, q, p: x * q - (k - 1) * p, "hermite_he")


def laguerre_l(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        r = _recurrence(x, n, one, 1 - x,
                        lambda k, q, p: ((2 * (k - 1) + (1 - x)) * q - (k - 1) * p) / k,
                        "laguerre")
        r = _sel((x == 0) & (n >= 0), one, r)
    return r


def legendre_p(x, n):
    one = _np.ones_like(x)
    with _np.errstate(all="ignore"):
        r = _recurrence(x, n, one, x,
                        lambda k, q, p: ((2 * (k - 1) + 1) * x * q - (k - 1) * p) / k,
                        "legendre")
        r = _sel((_np.abs(x) == 1) & (n >= 0),
                 _np.where((x > 0) | (n % 2 == 0), 1, -1).astype(x.dtype), r)
    return r
