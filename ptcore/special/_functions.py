"""The ``torch.special`` functions that ptcore's top level does not already
provide: Bessel and Airy functions, the scaled and modified Bessel
functions, the normal distribution's ``ndtr``/``ndtri``/``log_ndtr``,
``erfcx``, ``entr``, ``xlog1py``, the Hurwitz ``zeta`` and the orthogonal
polynomials.  Kernels from ``scipy.special`` (Cephes, as PyTorch's), with
PyTorch's values at the special points where the two libraries differ, and
PyTorch's derivative formulas."""
import math as _math

import numpy as _np

import ptcore.special._polynomials as _P
from ptcore.special._kernels import unary, binary, NO_GRAD, NOT_IMPLEMENTED

_sc = None


def _s():
    global _sc
    if _sc is None:
        import scipy.special as m
        _sc = m
    return _sc


def _inf_to_nan(a, x):
    """PyTorch's kernels give nan at +-inf where SciPy gives the limit."""
    return _np.where(_np.isinf(x), _np.nan, a)


_SQRT_2PI = _math.sqrt(2 * _math.pi)


def _pt():
    import ptcore
    return ptcore


# ---------------------------------------------------------------------------
# derivative formulas (PyTorch's derivatives.yaml), in ptcore ops (the public
# entries, so that vmap and the other layers see them)
# ---------------------------------------------------------------------------

def _d_entr(g, r, x):
    return (g * -(_pt().log(x) + 1),)


def _d_erfcx(g, r, x):
    return ((x * r * 2 - 2.0 / _math.sqrt(_math.pi)) * g,)


def _d_i0e(g, r, x):
    return (g * (_pt().special.i1e(x) - x.sgn() * r),)


def _tiny_safe(x):
    pt = _pt()
    eps = pt.finfo(x.dtype).eps
    ok = x.abs() > eps
    return ok, pt.where(ok, x, pt.full((), eps, dtype=x.dtype, device=x.device))


def _d_i1(g, r, x):
    pt = _pt()
    ok, sx = _tiny_safe(x)
    gx = pt.i0(sx) - r * sx.reciprocal()
    return (g * pt.where(ok, gx, pt.full((), 0.5, dtype=x.dtype, device=x.device)),)


def _d_i1e(g, r, x):
    pt = _pt()
    ok, sx = _tiny_safe(x)
    gx = pt.special.i0e(sx) - r * (sx.sgn() + sx.reciprocal())
    return (g * pt.where(ok, gx, pt.full((), 0.5, dtype=x.dtype, device=x.device)),)


def _d_ndtr(g, r, x):
    return (g * _pt().exp(x * x * -0.5) * (1.0 / _SQRT_2PI),)


def _d_ndtri(g, r, x):
    return (g * _SQRT_2PI * _pt().exp(r * r * 0.5),)


def _d_log_ndtr(g, r, x):
    return (g * (1.0 / _SQRT_2PI) * _pt().exp(-(r + x * x * 0.5)),)


def _d_xlog1py(g, r, x, y):
    gx = _pt().special.xlog1py(g, y).masked_fill((x == 0) & (y <= -1), 0)
    return gx, g * x / (y + 1)


def _d_zeta(g, r, x, q):
    return NOT_IMPLEMENTED, g * -x * _pt().special.zeta(x + 1.0, q)


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------

def _airy_ai_far_left(x):
    """Ai(x) for x << 0 by its asymptotic expansion to the 1/zeta**4 term
    (relative error below 1e-16 for x < -1e3), in the operations' order of
    PyTorch's (Cephes') kernel, whose phase ``zeta + pi/4`` it rounds alike."""
    u1, u2, u3, u4 = 5 / 72, 385 / 10368, 85085 / 2239488, 37182145 / 644972544
    with _np.errstate(all="ignore"):
        t = _np.sqrt(-x)
        zeta = -2.0 * x * t / 3.0
        z = 1.0 / zeta
        zz = z * z
        theta = zeta + 0.25 * _math.pi
        uf = 1 - u2 * zz + u4 * zz * zz
        ug = z * (u1 - u3 * zz)
        return 5.64189583547756286948e-01 / _np.sqrt(t) * (_np.sin(theta) * uf - _np.cos(theta) * ug)


def _airy_ai(x):
    a = _s().airy(x)[0]
    # SciPy's Ai overflows to nan far right, where Ai underflows to 0; far
    # left (below about -1.3e6) its AMOS routine gives nan where PyTorch's
    # asymptotic form is finite (above, SciPy's is the more accurate value)
    a = _np.where(_np.isnan(a) & (x > 0), 0, a)
    far = _np.isnan(a) & _np.isfinite(x) & (x < -1e3)
    if far.any():
        a = _np.where(far, _airy_ai_far_left(_np.where(far, x, -1e3)), a)
    return _inf_to_nan(a, x)


def _spherical_j0(x):
    with _np.errstate(all="ignore"):
        r = _np.where(x == 0, 1, _np.sin(x) / x)
    return _np.where(_np.isinf(x), 0, r)


def _i1e(x):
    return _np.where(_np.isinf(x), _np.copysign(0.0, x), _s().i1e(x))


def _i0e(x):
    return _s().i0e(x)


airy_ai = unary("airy_ai", _airy_ai, doc="Airy function Ai (``torch.special.airy_ai``).")
bessel_j0 = unary("bessel_j0", lambda x: _inf_to_nan(_s().j0(x), x),
                  doc="Bessel function of the first kind of order 0 "
                      "(``torch.special.bessel_j0``).")
bessel_j1 = unary("bessel_j1", lambda x: _inf_to_nan(_s().j1(x), x),
                  doc="Bessel function of the first kind of order 1 "
                      "(``torch.special.bessel_j1``).")
bessel_y0 = unary("bessel_y0", lambda x: _inf_to_nan(_s().y0(x), x),
                  doc="Bessel function of the second kind of order 0 "
                      "(``torch.special.bessel_y0``).")
bessel_y1 = unary("bessel_y1", lambda x: _inf_to_nan(_s().y1(x), x),
                  doc="Bessel function of the second kind of order 1 "
                      "(``torch.special.bessel_y1``).")
modified_bessel_i0 = unary("modified_bessel_i0", lambda x: _inf_to_nan(_s().i0(x), x),
                           ew="i0", ew_inf_nan=True, doc="Modified Bessel function of the first kind of order 0 "
                               "(``torch.special.modified_bessel_i0``).")
modified_bessel_i1 = unary("modified_bessel_i1", lambda x: _inf_to_nan(_s().i1(x), x),
                           ew="i1", ew_inf_nan=True, doc="Modified Bessel function of the first kind of order 1 "
                               "(``torch.special.modified_bessel_i1``).")
modified_bessel_k0 = unary("modified_bessel_k0", lambda x: _s().k0(x),
                           doc="Modified Bessel function of the second kind of order 0 "
                               "(``torch.special.modified_bessel_k0``).")
modified_bessel_k1 = unary("modified_bessel_k1", lambda x: _s().k1(x),
                           doc="Modified Bessel function of the second kind of order 1 "
                               "(``torch.special.modified_bessel_k1``).")
scaled_modified_bessel_k0 = unary("scaled_modified_bessel_k0", lambda x: _s().k0e(x),
                                  doc="``exp(x) * K0(x)`` "
                                      "(``torch.special.scaled_modified_bessel_k0``).")
scaled_modified_bessel_k1 = unary("scaled_modified_bessel_k1", lambda x: _s().k1e(x),
                                  doc="``exp(x) * K1(x)`` "
                                      "(``torch.special.scaled_modified_bessel_k1``).")
spherical_bessel_j0 = unary("spherical_bessel_j0", _spherical_j0,
                            doc="Spherical Bessel function ``j0(x) = sin(x) / x`` "
                                "(``torch.special.spherical_bessel_j0``).")
entr = unary("entr", lambda x: _s().entr(x), _d_entr, half_ok=True, ew="entr",
             doc="Elementwise entropy ``-x log x`` (0 at 0, -inf below) "
                 "(``torch.special.entr``).")
erfcx = unary("erfcx", lambda x: _s().erfcx(x), _d_erfcx,
              ew="erfcx", doc="Scaled complementary error function ``exp(x**2) erfc(x)`` "
                  "(``torch.special.erfcx``).")
i0e = unary("i0e", _i0e, _d_i0e, half_ok=True,
            ew="i0e", doc="Exponentially scaled modified Bessel function ``exp(-|x|) I0(x)`` "
                "(``torch.special.i0e``).")
i1 = unary("i1", lambda x: _inf_to_nan(_s().i1(x), x), _d_i1, half_ok=True,
           ew="i1", doc="Modified Bessel function of the first kind of order 1 (``torch.special.i1``).")
i1e = unary("i1e", _i1e, _d_i1e, half_ok=True,
            ew="i1e", doc="Exponentially scaled ``exp(-|x|) I1(x)`` (``torch.special.i1e``).")
ndtr = unary("ndtr", lambda x: _s().ndtr(x), _d_ndtr, half_ok=True,
             ew="ndtr", doc="Standard normal CDF (``torch.special.ndtr``).")
ndtri = unary("ndtri", lambda x: _s().ndtri(x), _d_ndtri,
              ew="ndtri", doc="Inverse of :func:`ndtr` (``torch.special.ndtri``).")
log_ndtr = unary("log_ndtr", lambda x: _s().log_ndtr(x), _d_log_ndtr,
                 ew="log_ndtr", doc="``log(ndtr(x))``, accurate in the tails (``torch.special.log_ndtr``).")
xlog1py = binary("xlog1py", lambda x, y: _s().xlog1py(x, y), _d_xlog1py, half_ok=True,
                 doc="``input * log1p(other)``, 0 where ``input == 0`` "
                     "(``torch.special.xlog1py``).")
def _zeta(x, q):
    # torch's Cephes kernel gives nan at q = +inf (SciPy the limit 0), after
    # its x == 1 test (inf)
    return _np.where(_np.isposinf(q) & (x != 1), _np.nan, _s().zeta(x, q))


zeta = binary("zeta", _zeta, _d_zeta,
              doc="Hurwitz zeta function ``sum_k (k + other) ** -input`` "
                  "(``torch.special.zeta``).")


def _poly(name, kernel, title):
    def k(x, n):
        n = _np.broadcast_to(n, _np.broadcast_shapes(x.shape, n.shape))
        x = _np.broadcast_to(x, n.shape)
        # torch truncates n with a C cast: nan, +-inf and out-of-range degrees
        # become INT64_MIN, a negative degree, whose polynomial is 0
        with _np.errstate(all="ignore"):
            ok = _np.isfinite(n) & (_np.abs(n) < 2.0 ** 63)
            ni = _np.where(ok, n, -1).astype(_np.int64)
        return kernel(_np.array(x, order="C"), ni)     # (ascontiguousarray makes 0-d 1-d)
    f = binary(name, k, NO_GRAD)

    def poly(x, n, *, out=None):        # (torch's keywords are x and n)
        return f(x, n, out=out)
    poly.__name__ = poly.__qualname__ = name
    poly.__doc__ = (f"{title} of degree ``n`` (truncated to an integer) at ``x`` "
                    f"(``torch.special.{name}``); not differentiable, as PyTorch.")
    return poly


chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", _P.chebyshev_t,
                               "Chebyshev polynomial of the first kind")
chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", _P.chebyshev_u,
                               "Chebyshev polynomial of the second kind")
chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", _P.chebyshev_v,
                               "Chebyshev polynomial of the third kind")
chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", _P.chebyshev_w,
                               "Chebyshev polynomial of the fourth kind")
shifted_chebyshev_polynomial_t = _poly("shifted_chebyshev_polynomial_t",
                                       _P.shifted(_P.chebyshev_t),
                                       "Shifted Chebyshev polynomial of the first kind")
shifted_chebyshev_polynomial_u = _poly("shifted_chebyshev_polynomial_u",
                                       _P.shifted(_P.chebyshev_u),
                                       "Shifted Chebyshev polynomial of the second kind")
shifted_chebyshev_polynomial_v = _poly("shifted_chebyshev_polynomial_v",
                                       _P.shifted(_P.chebyshev_v),
                                       "Shifted Chebyshev polynomial of the third kind")
shifted_chebyshev_polynomial_w = _poly("shifted_chebyshev_polynomial_w",
                                       _P.shifted(_P.chebyshev_w),
                                       "Shifted Chebyshev polynomial of the fourth kind")
hermite_polynomial_h = _poly("hermite_polynomial_h", _P.hermite_h,
                             "Physicists' Hermite polynomial")
hermite_polynomial_he = _poly("hermite_polynomial_he", _P.hermite_he,
                              "Probabilists' Hermite polynomial")
laguerre_polynomial_l = _poly("laguerre_polynomial_l", _P.laguerre_l, "Laguerre polynomial")
legendre_polynomial_p = _poly("legendre_polynomial_p", _P.legendre_p, "Legendre polynomial")
