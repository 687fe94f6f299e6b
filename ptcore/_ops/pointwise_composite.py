"""Pointwise functions composed of other ops or with their own
``autograd.Function``: ``logaddexp``, ``heaviside``, ``gcd``/``lcm``, ``sinc``,
``frexp``/``ldexp``, the gamma-function family (``polygamma``, ``mvlgamma``,
``igamma``/``igammac``), fills (``fill_``, ``zero_``), Python-callable maps
(``apply_``, ``map_``) and the top-level in-place aliases (``ptcore.abs_(x)`` is
``x.abs_()``)."""
import builtins
import math
import operator

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import strict_int_param as _strict_int
from ptcore._ops._composite_common import _is_int_dtype, _tname, _check_tensor, _recording, _write_out, check_written, _inplace, _not_implemented_grad, _named, _to_np, _from_np, _float_dtype
from ptcore._ops._out import check_inplace_shape, check_out_arg
from ptcore._return_types import as_out
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._dispatch.declarations import DECLARED
from ptcore._ops.pointwise import _refuse_dtype
from ptcore._dispatch.device import cpu_kernel, common_device, in_host_memory
from ptcore._ops.pointwise import _unary

__all__ = [
    "logaddexp", "logaddexp2", "heaviside", "gcd", "gcd_", "lcm", "lcm_", "sinc", "sinc_",
    "frexp", "ldexp", "ldexp_", "positive", "polygamma", "mvlgamma", "igamma", "igammac",
    "fill", "fill_", "zero_",
]


def _check_out_cast(out, dt):
    """torch's TensorIterator check of an ``out=`` against the result type
    ``dt`` (made before the kernel's dtype support is checked): the result
    must cast to ``out``'s dtype without a change of kind (float into an
    integer ``out``, anything but bool into a bool one, are refused)."""
    if isinstance(out, _TensorBase) and not ptcore.can_cast(dt, out.dtype):
        raise RuntimeError(f"result type {_tname(dt)} can't be cast to the desired output type "
                           f"{_tname(out.dtype)}")


def _float_binary_check(a, b, fn, kernel, out=None):
    _check_tensor(a, fn, "input", 1)
    _check_tensor(b, fn, "other", 2)
    check_written(out, a, b)
    dt = ptcore.result_type(a, b)
    _check_out_cast(out, dt)
    if _is_int_dtype(dt):
        _refuse_dtype(a, b, NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(dt)}'"))
    return dt


def _logaddexp_impl(input, other, out, fname, exp_fn, scale):
    dt = _float_binary_check(input, other, fname, fname + "_cpu", out)
    if isinstance(input, ptcore.Tensor) and input.dtype != dt:
        input = input.to(dt)
    if isinstance(other, ptcore.Tensor) and other.dtype != dt:
        other = other.to(dt)
    if dt.is_complex and fname == "logaddexp2":
        _refuse_dtype(input, other, NotImplementedError(
            f"\"logaddexp2_cpu\" not implemented for '{_tname(dt)}'"))
    if dt.is_complex:
        # as PyTorch: order the operands by real part, ``max + log1p(exp(min - max))``
        first = ptcore.real(input) >= ptcore.real(other)
        mx, mn = ptcore.where(first, input, other), ptcore.where(first, other, input)
        mxr, mxi, mnr, mni = ptcore.real(mx), ptcore.imag(mx), ptcore.real(mn), ptcore.imag(mn)
        # min - max part by part (c10::complex's operator-), and exp of a -inf real part
        # is 0 whatever the imaginary part (std::exp): inf - inf keeps torch's results
        d = ptcore.complex(mnr - mxr, mni - mxi)
        e = ptcore.where(ptcore.real(d) == -math.inf, ptcore.zeros((), dtype=dt), exp_fn(d))
        r = mx + ptcore.log1p(e) * scale
        # torch's _log_add_exp_helper: a NaN part is NaN (in either operand, as torch's
        # results are); both real parts the same infinity: -inf gives min, +inf
        # log(exp(min) + exp(max))
        both_inf = ptcore.isinf(mnr) & (mnr == mxr)
        r = ptcore.where(both_inf & (mnr < 0), mn, r)
        e1, e2 = ptcore.exp(mn), ptcore.exp(mx)      # (their sum part by part, as c10's +)
        big = ptcore.log(ptcore.complex(ptcore.real(e1) + ptcore.real(e2),
                                        ptcore.imag(e1) + ptcore.imag(e2)))
        r = ptcore.where(both_inf & (mnr > 0), big, r)
        r = ptcore.where(ptcore.isnan(mnr) | ptcore.isnan(mni) | ptcore.isnan(mxr) | ptcore.isnan(mxi),
                         ptcore.full((), complex(math.nan, math.nan), dtype=dt), r)
        return _write_out(r, out)
    if dt is _C.float16 or dt is _C.bfloat16:
        # PyTorch evaluates the formula in float32 and rounds once
        f32 = _C.float32
        r = _logaddexp_impl(input.to(f32) if isinstance(input, ptcore.Tensor) else input,
                            other.to(f32) if isinstance(other, ptcore.Tensor) else other,
                            None, fname, exp_fn, scale)
        return _write_out(r.to(dt), out)
    m = ptcore.maximum(input, other)
    if _recording(input, other):
        r = m + ptcore.log1p(exp_fn(-ptcore.abs(input - other))) * scale
        r = ptcore.where(ptcore.isinf(input) & (input == other), m, r)
        return _write_out(r, out)
    # (not recorded: the same ops in place on one temporary, 8 passes and 2 new
    # tensors instead of 12 and 11: the same bits, NaNs' signs included)
    d = ptcore.sub(input, other)
    d.abs_().neg_()
    exp_fn(d, out=d)
    d.log1p_()
    if scale != 1.0:
        d.mul_(scale)
    r = m.add_(d)
    del d
    # (the same infinity twice: inf - inf made NaN there, where torch gives the operand)
    if not in_host_memory(r) or bool(r.isnan().any()):
        r = ptcore.where(ptcore.isinf(input) & (input == other), input.to(r.dtype), r)
    return _write_out(r, out)


def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))`` computed stably (``torch.logaddexp``)."""
    return _logaddexp_impl(input, other, out, "logaddexp", ptcore.exp, 1.0)


def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)`` computed stably (``torch.logaddexp2``)."""
    return _logaddexp_impl(input, other, out, "logaddexp2", ptcore.exp2, 1.0 / math.log(2.0))


def _heaviside(input, values):
    _check_tensor(input, "heaviside", "input", 1)
    _check_tensor(values, "heaviside", "values", 2)
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    pos = (input > 0).to(input.dtype)
    return ptcore.where(input == 0, values, pos)


_heaviside_nd = _not_implemented_grad("heaviside", _heaviside)


def heaviside(input, values, *, out=None):
    """Heaviside step: 0 below zero, ``values`` at zero, 1 above (``torch.heaviside``)."""
    check_written(out, input, values)
    r = _heaviside_nd(input, values)
    if isinstance(out, _TensorBase) and out.dtype is not r.dtype:
        # torch checks the out's dtype with the operands'
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _write_out(r, out)


def _int_binary(a, b, fn, out=None):
    _check_tensor(a, fn, "input", 1)
    if not isinstance(b, _TensorBase):
        raise TypeError(f"{fn}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    check_written(out, a, b)        # (torch's TensorIterator: memory first)
    dt = ptcore.result_type(a, b)
    _check_out_cast(out, dt)
    if not _is_int_dtype(dt) or dt is _C.bool_:
        _refuse_dtype(a, b, NotImplementedError(f"\"{fn}_cpu\" not implemented for '{_tname(dt)}'"))
    return dt


def _gcd_raw(a, b, dt):
    # c10's calc_gcd, step for step: Euclid on the absolute values (the minimum
    # of a signed type stays negative, as its two's-complement abs), with C's
    # truncating remainder, so a minimum operand gives torch's signed results
    # (gcd(-3, -2**63) == 1, gcd(-128, -127) == -1 for int8)
    a, b = ptcore.broadcast_tensors(a.to(dt), b.to(dt))
    a = ptcore.abs(a)
    b = ptcore.abs(b)
    while True:
        nz = a != 0
        if not builtins.bool(nz.any()):
            return b
        a_s = ptcore.where(nz, a, ptcore.ones_like(a))
        a, b = ptcore.where(nz, ptcore.fmod(b, a_s), a), ptcore.where(nz, a, b)


def gcd(input, other, *, out=None):
    """Elementwise greatest common divisor of integer tensors (``torch.gcd``)."""
    dt = _int_binary(input, other, "gcd", out)
    return _write_out(_gcd_raw(input, other, dt), out)


def lcm(input, other, *, out=None):
    """Elementwise least common multiple of integer tensors (``torch.lcm``).

    torch's ``|a / gcd * b|``: for uint8/int8/int16 in C's int arithmetic (the
    absolute value is taken before the result narrows to the dtype), for
    int32/int64 wrapping (the minimum divided by -1 is the minimum: torch
    itself traps there)."""
    dt = _int_binary(input, other, "lcm", out)
    g = _gcd_raw(input, other, dt)
    a, b = ptcore.broadcast_tensors(input.to(dt), other.to(dt))
    if dt.itemsize < 4:
        a, b, g = a.to(_C.int32), b.to(_C.int32), g.to(_C.int32)
    gz = g == 0
    gs = ptcore.where(gz, ptcore.ones_like(g), g)
    r = ptcore.abs(ptcore.div(a, gs, rounding_mode="trunc") * b)
    return _write_out(ptcore.where(gz, ptcore.zeros_like(r), r).to(dt), out)


def _inplace_binary(self, fn, other):
    """``self.fn_(other)`` with torch's order of checks: the shapes, then the
    promoted type's cast to ``self``'s dtype, then the kernel's dtype support."""
    if not isinstance(other, _TensorBase):
        raise TypeError(f"{fn.__name__}_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    check_written(self, other)
    check_inplace_shape(self, (other,))
    _check_out_cast(self, ptcore.result_type(self, other))
    return _inplace(self, fn, other)


def gcd_(input, other):
    """In-place :func:`gcd`."""
    return _inplace_binary(input, gcd, other)


def lcm_(input, other):
    """In-place :func:`lcm`."""
    return _inplace_binary(input, lcm, other)


def sinc(input, *, out=None):
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0 (``torch.sinc``)."""
    _check_tensor(input, "sinc", "input", 1)
    check_out_arg(out, "sinc")
    check_written(out, input)
    x = input
    if _is_int_dtype(x.dtype):
        x = x.to(_C.get_default_dtype())
    _check_out_cast(out, x.dtype)
    low = x.dtype if x.dtype in (_C.float16, _C.bfloat16) else None
    if low is not None:
        x = x.to(_C.float32)          # PyTorch: the float32 formula, rounded once
    zero = x == 0
    xs = ptcore.where(zero, ptcore.ones_like(x), x)
    px = xs * math.pi
    r = ptcore.where(zero, ptcore.ones_like(x), ptcore.sin(px) / px)
    return _write_out(r if low is None else r.to(low), out)


def sinc_(input):
    """In-place :func:`sinc`."""
    return _inplace(input, sinc)


FrexpResult = _named("frexp", ["mantissa", "exponent"])


def _pow2(e, dt):
    return ptcore.pow(2.0, e.to(dt))


def _frexp_checks(input, out):
    """frexp's argument checks (shared with the device kernels)."""
    _check_tensor(input, "frexp", "input", 1)
    if out is not None and not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"frexp(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if out is not None:
        # torch: the outs' dtypes exactly, not cast to (a float64 mantissa
        # of a float32 input, an int64 exponent are refused)
        if isinstance(out[0], _TensorBase) and out[0].dtype is not input.dtype:
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {input.dtype._legacy.lower()} "
                               f"but got {out[0].dtype._legacy.lower()}")
        if isinstance(out[1], _TensorBase) and out[1].dtype is not _C.int32:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{out[1].dtype._legacy.lower()}")
        for o in out:                   # (then torch's TensorIterator checks the memory)
            check_written(o, input)


def frexp(input, *, out=None):
    """Decompose into mantissa in [0.5, 1) and int32 exponent (``torch.frexp``)."""
    _frexp_checks(input, out)
    x = input
    wdt = _C.float64 if x.dtype is _C.float64 else _C.float32
    with ptcore.no_grad():
        xw = x.detach().to(wdt)
        a = ptcore.abs(xw)
        special = (a == 0) | ~ptcore.isfinite(xw)
        a = ptcore.where(special, ptcore.ones_like(a), a)
        e = ptcore.floor(ptcore.log2(a)) + 1
        for _ in builtins.range(2):                 # correct log2 rounding near powers of 2
            e1 = ptcore.floor(e / 2)
            m = a * _pow2(-e1, wdt) * _pow2(e1 - e, wdt)
            e = e + (m >= 1).to(wdt) - (m < 0.5).to(wdt)
        e = ptcore.where(special, ptcore.zeros_like(e), e)
        e1 = ptcore.floor(e / 2)
        s1, s2 = _pow2(-e1, wdt).to(x.dtype), _pow2(e1 - e, wdt).to(x.dtype)
        exponent = e.to(_C.int32)
    mantissa = x * s1 * s2
    if out is not None:
        _write_out(mantissa, out[0])
        _write_out(exponent, out[1])
        return as_out(FrexpResult(out[0], out[1]))
    return FrexpResult(mantissa, exponent)


def ldexp(input, other, *, out=None):
    """``input * 2**other`` (``torch.ldexp``)."""
    _check_tensor(input, "ldexp", "input", 1)
    _check_tensor(other, "ldexp", "other", 2)
    check_written(out, input, other)
    if other.is_floating_point() or other.is_complex() or input.is_complex():
        r = ptcore.mul(input, _two_to(input, other))
        _check_out_cast(out, r.dtype)
        return _write_out(r, out)
    # integral exponents: exact scaling in the input's floating dtype (the
    # default one for an integral input, whatever the exponent's integer
    # type: int8 with uint16 is float32), as PyTorch
    dt = input.dtype if input.is_floating_point() else ptcore.get_default_dtype()
    if input.is_floating_point():
        _ldexp_exp_check(other)
    _check_out_cast(out, dt)
    return _write_out(_ldexp_exact(input.to(dt), other), out)


def _ldexp_exp_check(other):
    """torch's kernel for a floating input and an integral exponent has none
    for a bool, uint16, uint32 or uint64 exponent."""
    if other.dtype in (_C.bool_, _C.uint16, _C.uint32, _C.uint64):
        raise NotImplementedError(f"\"ldexp_cpu_exp\" not implemented for '{_tname(other.dtype)}'")


def _two_to(input, other):
    """``2 ** other`` as torch's ldexp takes it where it is no exact scaling: a
    complex input's base is a 0-d tensor of its dtype (so complex64 with a
    float16 exponent is complex32, and with a 0-d uint16 one a promotion
    error), any other's the number 2.0."""
    if input.is_complex():
        return ptcore.pow(ptcore.full((), 2.0, dtype=input.dtype, device=input.device), other)
    return ptcore.pow(2.0, other)


_NORMAL_EXP = {_C.float16: (-14, 15), _C.bfloat16: (-126, 127), _C.float32: (-126, 127),
               _C.float64: (-1022, 1023)}


def _ldexp_exact(x, e):
    """``x * 2**e`` for floating ``x`` and an integral ``e``, rounded once as
    C's ldexp (torch): ``2**e`` itself may overflow or underflow where the
    product does not (ldexp(0.5, 16) in float16; ldexp(0, 1000) is 0, not
    0 * inf).  ``x = m * 2**k`` (frexp), then ``m * 2**(k + e)``, the power
    split in two when positive so that neither factor overflows early; the
    exponent is read as a C int, as torch (wrapping int64 values)."""
    dt = x.dtype
    lo, hi = _NORMAL_EXP[dt]
    if e.dtype in (_C.uint16, _C.uint32, _C.uint64):
        e = e.to(_C.int64)          # (no min/max for these; read as a C int below anyway)
    if e.numel() == 0 or (lo <= builtins.int(e.min()) and builtins.int(e.max()) <= hi):
        # the usual case: every 2**e a normal number of the dtype, exact, and
        # x * 2**e rounds once
        return x * _pow2(e, dt)
    special = (x == 0) | ~ptcore.isfinite(x)
    m, k = frexp(x)
    with ptcore.no_grad():
        p = (k.to(_C.int64) + e.to(_C.int32).to(_C.int64)).clamp(-2300, 2300)
        h = ptcore.where(p > 0, ptcore.div(p, 2, rounding_mode="floor"), ptcore.zeros_like(p))
        s1, s2 = _pow2(p - h, dt), _pow2(h, dt)
        # 0, inf, nan keep their value times 2**e with e clamped to the
        # dtype's normal range (finite, nonzero: their derivative 2**e as torch's)
        s0 = _pow2(e.to(_C.int32).to(_C.int64).clamp(lo, hi), dt)
    return ptcore.where(special, x * s0, (m * s1) * s2)


def ldexp_(input, other):
    """In-place :func:`ldexp`."""
    if isinstance(other, _TensorBase) and input.dtype.is_floating_point \
            and not (other.is_floating_point() or other.is_complex()):
        check_written(input, other)
        check_inplace_shape(input, (other,))
        _ldexp_exp_check(other)
        return input.copy_(_ldexp_exact(input, other).expand(input.shape))
    return input.mul_(_two_to(input, other) if isinstance(other, _TensorBase)
                      else ptcore.pow(2.0, other))


def positive(input):
    """Returns ``input`` (``torch.positive``); bool tensors are refused."""
    _check_tensor(input, "positive", "input", 1)
    if input.dtype is _C.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _polygamma_raw(n, x):
    """``polygamma(n, x)`` for ``n >= 1`` outside autograd: the element loop
    ``polygamma`` of ``x``'s device, ``loop(n, x)``."""
    return cpu_kernel("polygamma", x.device, _polygamma_cpu)(n, x.detach())


def _torch_trigamma(xp, x):
    """PyTorch's calc_trigamma in ``x``'s dtype, ``xp`` NumPy or ptcore (the
    CUDA loop): its reflection uses sin(pi x), so at the poles (negative
    integers) it gives the large finite pi^2 / sin(pi x)^2 that float rounding
    leaves, and nan at -inf.  (Python scalars keep ``x``'s dtype in both.)"""
    refl = x < 0.5
    s = xp.sin(x * math.pi)
    y = xp.where(refl, 1 - x, x)
    res = xp.zeros_like(x)
    for _ in range(6):
        res = res + 1 / (y * y)
        y = y + 1
    ixx = 1 / (y * y)
    res = res + (1 + 1 / (2 * y) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / y
    return xp.where(refl, math.pi * math.pi / (s * s) - res, res)


def _torch_trigamma_np(x):
    import numpy as np
    with np.errstate(all="ignore"):
        return _torch_trigamma(np, x)


def _polygamma_cpu(n, x):
    import numpy as np
    dt = _float_dtype(x)
    if n == 1 and dt in (_C.float32, _C.float16, _C.bfloat16):
        # trigamma: the vectorised float32 kernel (ptc_special.h; PyTorch's float
        # kernels compute in float too)
        x32 = x.detach()
        x32 = x32 if x32.dtype is _C.float32 else x32.to(_C.float32)
        r = _unary("trigamma", x32, None, _C.float32, _C.float32, "polygamma")
        xa = _to_np(x32)
    else:
        import scipy.special as sp
        if x.dtype is _C.bfloat16:
            x = x.to(_C.float32)        # (NumPy has no bfloat16; exact)
        xa = _to_np(x, "ptcore.polygamma").astype(np.float64)
        with np.errstate(all="ignore"):
            r = sp.polygamma(n, xa)
    # PyTorch's values where they are not the limit: trigamma at its poles
    # (the negative integers, -inf), and n >= 2 at +inf (its zeta(n + 1, inf)
    # is nan)
    with np.errstate(invalid="ignore"):
        if n == 1:
            poles = ((xa < 0) & (np.floor(xa) == xa)) | np.isneginf(xa)
        else:
            poles = np.isposinf(xa)
    if poles.any():
        r = np.array(r.numpy() if isinstance(r, _TensorBase) else r)
        r[poles] = _torch_trigamma_np(xa[poles]) if n == 1 else np.nan
    return r.to(dt) if isinstance(r, _TensorBase) else _from_np(r, dt)


# the autograd.Function of polygamma (n >= 1), supplied by the autograd layer
# (ptcore.autograd._composite_functions) when autograd installs
POLYGAMMA_FUNCTION = [None]


def polygamma(n, input, *, out=None):
    """``n``-th derivative of the digamma function (``torch.polygamma``)."""
    _check_tensor(input, "polygamma", "input", 2)
    n = _strict_int(n, "polygamma", "n", 1)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    check_written(out, input)           # (torch's TensorIterator: before the dtype checks)
    if input.is_complex():
        raise NotImplementedError(f"\"polygamma\" not implemented for '{_tname(input.dtype)}'")
    _check_out_cast(out, _float_dtype(input))
    if n == 0:
        x = input if input.dtype.is_floating_point else input.to(_C.get_default_dtype())
        return _write_out(ptcore.digamma(x), out)
    if _recording(input):
        r = POLYGAMMA_FUNCTION[0].apply(input, n)
    else:
        r = _polygamma_raw(n, input)
    return _write_out(r, out)


def mvlgamma(input, p, *, out=None):
    """Multivariate log-gamma of dimension ``p`` (``torch.mvlgamma``)."""
    _check_tensor(input, "mvlgamma", "input", 1)
    p = _strict_int(p, "mvlgamma", "p", 2)
    if input.dtype is _C.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if input.dtype.is_complex:
        # (torch fails building its arange of the complex dtype)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_tname(input.dtype)}'")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dt = _float_dtype(input)
    _check_out_cast(out, dt)
    args = ptcore.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dt, device=input.device)
    x = input if input.dtype is dt else input.to(dt)
    args = args + x.unsqueeze(-1)
    r = ptcore.lgamma(args).sum(-1) + (p * (p - 1)) * math.log(math.pi) * 0.25
    return _write_out(r, out)


def _igamma_cpu(a_, x_, upper, cdt):
    import numpy as np
    import scipy.special as sp
    npdt = np.float64 if cdt is _C.float64 else np.float32
    # (float16/bfloat16/integer operands read in the computation type: NumPy
    # has no bfloat16)
    a_ = a_ if a_.dtype is cdt else a_.to(cdt)
    x_ = x_ if x_.dtype is cdt else x_.to(cdt)
    a, x = _to_np(a_, "ptcore.igamma").astype(npdt), _to_np(x_).astype(npdt)
    with np.errstate(all="ignore"):
        r = np.array((sp.gammaincc if upper else sp.gammainc)(a, x), dtype=npdt, ndmin=a.ndim)
        # torch's calc_igamma(c) decides these before the series, so a NaN operand need not
        # give NaN: x == 0 (a NaN) is the lower end, a == inf (x NaN) too, x == inf the upper
        nan = np.isnan(a) | np.isnan(x)
        if nan.any():
            low, high = (1.0, 0.0) if upper else (0.0, 1.0)
            # (its first test, x < 0 or a < 0, is NaN: -inf operands stay NaN)
            r[nan & ((x == 0) | np.isposinf(a))] = low
            r[nan & np.isposinf(x)] = high
    return _from_np(r.reshape(a.shape), cdt)


def _igamma_raw(a, x, upper):
    """``igamma``/``igammac`` of the broadcast operands in float64 for a float64
    result, float32 otherwise; the element loop ``igamma`` of their device."""
    dt = ptcore.result_type(a, x)
    a_, x_ = ptcore.broadcast_tensors(a, x)
    dev = common_device(a_, x_)
    cdt = _C.float64 if dt is _C.float64 else _C.float32
    r = cpu_kernel("igamma", dev, _igamma_cpu)(a_.detach(), x_.detach(), upper, cdt)
    return r if r.dtype is dt else r.to(dt)


# the autograd.Function of igamma/igammac, supplied by the autograd layer
IGAMMA_FUNCTION = [None]


def _igamma(input, other, upper, out):
    name = "igammac" if upper else "igamma"
    _check_tensor(input, name, "input", 1)
    _check_tensor(other, name, "other", 2)
    check_written(out, input, other)
    ptcore.broadcast_shapes(input.shape, other.shape)     # torch: the shapes before the dtype
    dt = ptcore.result_type(input, other)
    _check_out_cast(out, dt)
    if not dt.is_floating_point:
        dev = common_device(input, other)
        raise NotImplementedError(f"\"{name}_{dev.type}\" not implemented for '{_tname(dt)}'")
    if _recording(input, other):
        r = IGAMMA_FUNCTION[0].apply(input, other, upper)
    else:
        r = _igamma_raw(input, other, upper)
    return _write_out(r, out)


def igamma(input, other, *, out=None):
    """Regularized lower incomplete gamma ``P(input, other)`` (``torch.igamma``)."""
    return _igamma(input, other, False, out)


def igammac(input, other, *, out=None):
    """Regularized upper incomplete gamma ``Q(input, other)`` (``torch.igammac``)."""
    return _igamma(input, other, True, out)


def fill(input, value):
    """A new tensor like ``input`` filled with ``value`` (``torch.fill``)."""
    _check_tensor(input, "fill", "input", 1)
    if isinstance(value, _TensorBase):
        if value.dim() != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        r = ptcore.empty_like(input)
        r.copy_(value)
        return r
    return ptcore.full_like(input, value)


def fill_(input, value):
    """Fill ``input`` with ``value`` in place (``torch.fill_``)."""
    return input.fill_(value)


fill_._calls_entry = True      # (recorded by Tensor.fill_: FillBackward2)


def zero_(input):
    """Fill ``input`` with zeros in place (``torch.zero_``)."""
    return input.zero_()


@_method_form("sgn_")
def _sgn_(self):
    return _inplace(self, ptcore.sgn)


@_method_form("conj_physical_")
def _conj_physical_(self):
    if not self.is_complex():
        return self
    return _inplace(self, ptcore.conj_physical)


@_method_form("polygamma")
def _polygamma_method(self, n):
    return polygamma(n, self)


@_method_form("polygamma_")
def _polygamma_inplace(self, n):
    return _inplace(self, lambda x: polygamma(n, x))


@_method_form("apply_")
def _apply_(self, callable):
    if not in_host_memory(self):
        raise TypeError("apply_ is only implemented on CPU tensors")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


@_method_form("map_")
def _map_(self, other, callable):
    o = other.expand_as(self)
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), o.reshape(-1).tolist())]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


@_method_form("map2_")
def _map2_(self, x, y, callable):
    xs, ys = x.expand_as(self), y.expand_as(self)
    vals = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(),
                                                 xs.reshape(-1).tolist(), ys.reshape(-1).tolist())]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _make_alias(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``ptcore.{name}(input, ...)`` is ``input.{name}(...)`` (in place)."
    # it calls the method's entry, which records and dispatches: autograd
    # leaves this function form alone whatever the op's declaration says
    fn._calls_entry = True
    return fn


# the in-place function forms the declarations say are their method (inplace_fn)
for _name in sorted(d.name + "_" for d in DECLARED.values() if d.inplace_fn):
    if _name not in globals():
        globals()[_name] = _make_alias(_name)
        __all__.append(_name)


del _name


# in-place forms written with their op's function (or method: the aliases' record as their op)
_method_form("absolute_", lambda self: self.abs_())
_method_form("arctan2_", lambda self, other: self.atan2_(other))
_method_form("fix_", lambda self: self.trunc_())
_method_form("heaviside_", lambda self, values: _inplace_binary(self, heaviside, values))
_method_form("mvlgamma_", lambda self, p: _inplace(self, mvlgamma, p))
_method_form("igamma_", lambda self, other: _inplace_binary(self, igamma, other))
_method_form("igammac_", lambda self, other: _inplace_binary(self, igammac, other))


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "pointwise")
del _bind_module
