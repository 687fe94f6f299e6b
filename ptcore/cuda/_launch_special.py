"""CUDA kernels of the ``ptcore.special`` functions that are closed forms of
other ops (``ndtr``, ``entr``, ``xlog1py``, ``spherical_bessel_j0``): each is
written with the elementwise ops' entries, so it runs on the device and its
gradient comes from its parts.  The CPU keeps its own kernels (SciPy, the
float32 elementwise library); the dtype rules are the CPU front-ends':
integers compute in the default float dtype, float16/bfloat16 in float32
rounded back where PyTorch allows them.

The orthogonal polynomials run their own kernels (family ``special`` of
:mod:`ptcore.cuda._kernels_special`), float32/float64 as the CPU (float16,
bfloat16 and complex raise ``NotImplementedError``, integers compute in the
default float dtype); their results never require grad, as PyTorch.

``erfcx``/``log_ndtr``/``ndtri``/``i0e``/``i1``/``i1e``/``modified_bessel_i0/i1``
run the CPU's float32 kernels (a generated device copy of ``ptc_special.h``;
float16/bfloat16 computed in float32), ``ndtri`` also float64 (Cephes);
``zeta`` (Cephes, in double) and ``polygamma`` (digamma, or through zeta) run
on the device with their gradients.  The Bessel functions ``j0/j1/y0/y1/k0/k1``,
the incomplete gamma functions and the other float64 kernels have no CUDA
kernel yet (they raise ``NotImplementedError`` naming the op and the device).
"""
import math

from ptcore import _tensor as _C

__all__ = ["register"]

_HALF = ("float16", "bfloat16")


def _P():
    import ptcore
    return ptcore


def _dtypes(fname, dt, half_ok):
    """(result dtype, compute dtype), as ``ptcore.special._kernels._compute_dtype``."""
    if dt.is_complex:
        raise NotImplementedError(f'"{fname}_cuda" not implemented for \'{dt._legacy}\'')
    if not dt.is_floating_point:
        dt = _C.get_default_dtype()
    if dt._name in _HALF:
        if not half_ok:
            raise NotImplementedError(f'"{fname}_cuda" not implemented for \'{dt._legacy}\'')
        return dt, _C.float32
    return dt, dt


def _finish(fname, r, dt, out):
    if r.dtype is not dt:
        r = r.to(dt)
    if out is None:
        return r
    if not isinstance(out, _C._TensorBase):
        raise TypeError(f"special_{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    out.copy_(r)
    return out


def _unary(fname, body, half_ok):
    def kernel(input, *, out=None):
        if not isinstance(input, _C._TensorBase):
            raise TypeError(f"special_{fname}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        dt, cdt = _dtypes(fname, input.dtype, half_ok)
        x = input if input.dtype is cdt else input.to(cdt)
        return _finish(fname, body(x), dt, out)
    kernel.__name__ = fname
    return kernel


def _ndtr(x):
    P = _P()
    return P.mul(P.erfc(P.mul(x, -math.sqrt(0.5))), 0.5)


def _entr(x):
    P = _P()
    pos = P.gt(x, 0)
    safe = P.where(pos, x, 1.0)
    r = P.where(pos, P.neg(P.mul(safe, P.log(safe))), 0.0)
    r = P.where(P.lt(x, 0), -math.inf, r)
    return P.where(P.isnan(x), x, r)


def _spherical_j0(x):
    P = _P()
    with P.no_grad():           # (PyTorch has no derivative: the result never requires grad)
        x = x.detach()
        nz = P.ne(x, 0)
        safe = P.where(nz, x, 1.0)
        r = P.where(nz, P.div(P.sin(safe), safe), 1.0)
        return P.where(P.isinf(x), 0.0, r)


def _xlog1py(input, other, *, out=None):
    P = _P()
    ta, tb = isinstance(input, _C._TensorBase), isinstance(other, _C._TensorBase)
    dev = input.device if ta else other.device
    dt, cdt = _dtypes("xlog1py", P.result_type(input, other), True)
    x = input.to(cdt) if ta else P.full((), input, dtype=cdt, device=dev)
    y = other.to(cdt) if tb else P.full((), other, dtype=cdt, device=dev)
    x, y = P.broadcast_tensors(x, y)
    zero = P.logical_and(P.eq(x, 0), P.logical_not(P.isnan(y)))
    safe = P.where(zero, 0.0, y)
    r = P.where(zero, 0.0, P.mul(x, P.log1p(safe)))
    return _finish("xlog1py", r, dt, out)


def _detach(v):
    return v.detach() if isinstance(v, _C._TensorBase) else v


def _d_zeta(g, r, x, q):
    from ptcore.special._kernels import NOT_IMPLEMENTED
    return NOT_IMPLEMENTED, g * -x * _P().special.zeta(x + 1.0, q)


def _polynomial(fname, grad=None):
    def kernel(input, other, *, out=None):
        import numbers
        from ptcore.cuda import _launch as L
        P = _P()
        ta, tb = isinstance(input, _C._TensorBase), isinstance(other, _C._TensorBase)
        if not ta and not isinstance(input, numbers.Number):
            raise TypeError(f"special_{fname}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if not tb and not isinstance(other, numbers.Number):
            raise TypeError(f"special_{fname}(): argument 'n' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        dt, cdt = _dtypes(fname, P.result_type(input, other), False)
        dev = L._device_of(input, other)
        shape = L._broadcast_shape(input, other, f"special_{fname}")
        x, n = L._as_operand(_detach(input), cdt, dev), L._as_operand(_detach(other), cdt, dev)
        res = L._empty(shape, cdt, dev)
        L._elementwise("special", (fname, (L._tag(cdt, fname),)), res, [x, n], L._params())
        if grad is not None and res.dtype.is_floating_point:
            from ptcore.special._kernels import _attach
            xs = tuple(v if isinstance(v, _C._TensorBase) and v.dtype is dt else
                       (v.to(dt) if isinstance(v, _C._TensorBase) else P.full((), v, dtype=dt, device=dev))
                       for v in (input, other))
            res = _attach(res, grad, fname, getattr(P.special, fname), xs)
        return _finish(fname, res, dt, out)
    kernel.__name__ = fname
    return kernel


def _unary_f32(fname):
    """A float32 kernel of ``ptc_special.h`` (float16/bfloat16 computed in float32);
    the CPU's backward formula (public ops) attached where PyTorch has one."""
    def kernel(input, *, out=None):
        from ptcore.cuda import _launch as L
        from ptcore.special import _kernels as SK
        if not isinstance(input, _C._TensorBase):
            raise TypeError(f"special_{fname}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        half_ok = fname not in ("erfcx", "ndtri", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1")
        dt, cdt = _dtypes(fname, input.dtype, half_ok)
        from ptcore.cuda._kernels_special import UNARY_F64
        if cdt is not _C.float32 and not (cdt is _C.float64 and fname in UNARY_F64):
            raise NotImplementedError(f"special.{fname}: no CUDA kernel for {cdt} yet (float32, float16 "
                                      f"and bfloat16 run on CUDA)")
        dev = input.device
        x = L._as_operand(input.detach(), cdt, dev)
        res = L._empty(x.shape, cdt, dev)
        L._elementwise("special", (fname, (L._tag(cdt, fname),)), res, [x], L._params())
        if fname in ("modified_bessel_i0", "modified_bessel_i1"):
            res = _P().where(_P().isinf(x), float("nan"), res)     # as the CPU (torch: nan at +-inf)
        if dt is not cdt:
            res = res.to(dt)
        grad = _GRADS.get(fname)
        if grad is not None and input.dtype.is_floating_point:
            xin = input if input.dtype is dt else input.to(dt)
            res = SK._attach(res, grad, fname, getattr(_P().special, fname), (xin,))
        return _finish(fname, res, dt, out)
    kernel.__name__ = fname
    return kernel


# the CPU's backward formulas (ptcore.special._functions) through the public,
# dispatched ops, so that they run on the device
_SQRT_2PI = math.sqrt(2 * math.pi)


def _d_erfcx(g, r, x):
    return ((x * r * 2 - 2.0 / math.sqrt(math.pi)) * g,)


def _d_ndtri(g, r, x):
    return (g * _SQRT_2PI * _P().exp(r * r * 0.5),)


def _d_log_ndtr(g, r, x):
    return (g * (1.0 / _SQRT_2PI) * _P().exp(-(r + x * x * 0.5)),)


def _d_i0e(g, r, x):
    return (g * (_P().special.i1e(x) - x.sgn() * r),)


def _tiny_safe(x):
    P = _P()
    ok = x.abs() > P.finfo(x.dtype).eps
    return ok, P.where(ok, x, P.full((), P.finfo(x.dtype).eps, dtype=x.dtype, device=x.device))


def _d_i1(g, r, x):
    P = _P()
    ok, sx = _tiny_safe(x)
    gx = P.special.modified_bessel_i0(sx) - r * sx.reciprocal()
    return (g * P.where(ok, gx, 0.5),)


def _d_i1e(g, r, x):
    P = _P()
    ok, sx = _tiny_safe(x)
    gx = P.special.i0e(sx) - r * (sx.sgn() + sx.reciprocal())
    return (g * P.where(ok, gx, 0.5),)


_GRADS = {"erfcx": _d_erfcx, "log_ndtr": _d_log_ndtr, "ndtri": _d_ndtri, "i0e": _d_i0e,
          "i1": _d_i1, "i1e": _d_i1e}

def _polygamma(n, input, *, out=None):
    """``polygamma(n, x)`` on CUDA: digamma for ``n == 0``, else
    ``(-1)^(n+1) n! zeta(n + 1, x)`` in float64 (as PyTorch's CUDA kernel,
    trigamma included); composed of public ops, so its gradient
    ``polygamma(n + 1, x)`` comes from zeta's."""
    import operator
    P = _P()
    if isinstance(n, _C._TensorBase) and not isinstance(input, _C._TensorBase):
        n, input = input, n             # the method form, ``x.polygamma(n)``
    if not isinstance(input, _C._TensorBase):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.is_complex():
        raise NotImplementedError(f"\"polygamma\" not implemented for '{input.dtype._legacy}'")
    dt = input.dtype if input.dtype.is_floating_point else _C.get_default_dtype()
    if n == 0:
        r = P.digamma(input if input.dtype is dt else input.to(dt))
    else:
        try:
            c = float(math.factorial(n)) * (1.0 if n % 2 else -1.0)
        except OverflowError:
            c = math.inf if n % 2 else -math.inf
        x64 = input.to(_C.float64)
        r = P.mul(P.special.zeta(float(n + 1), x64), c)
        # the CPU's limits: 0 (signed as (-1)^(n+1)) at +inf; trigamma(-inf) is nan
        r = P.where(P.isposinf(x64.detach()), 0.0 if n % 2 else -0.0, r)
        if n == 1:
            r = P.where(P.isneginf(x64.detach()), math.nan, r)
        r = r.to(dt)
    if out is None:
        return r
    return _finish("polygamma", r, dt, out)


_registered = [False]


def register():
    if _registered[0]:
        return
    from ptcore._dispatch.device import register_kernel
    import ptcore.special  # noqa: F401 (declares the special ops: light, SciPy loads on first use)
    ns = ("special",)
    register_kernel("ndtr", "cuda", _unary("ndtr", _ndtr, True), namespaces=ns)
    register_kernel("entr", "cuda", _unary("entr", _entr, True), namespaces=ns)
    register_kernel("spherical_bessel_j0", "cuda", _unary("spherical_bessel_j0", _spherical_j0, False),
                    namespaces=ns)
    register_kernel("xlog1py", "cuda", _xlog1py, namespaces=ns)
    from ptcore.cuda._kernels_special import POLYNOMIALS, UNARY_F32
    for name in UNARY_F32:
        register_kernel(name, "cuda", _unary_f32(name), namespaces=ns)
    register_kernel("zeta", "cuda", _polynomial("zeta", _d_zeta), namespaces=ns)
    register_kernel("polygamma", "cuda", _polygamma)
    for name in POLYNOMIALS:
        register_kernel(name, "cuda", _polynomial(name), namespaces=ns)
    _registered[0] = True
