"""Element-wise functions of the array API namespace.

Unary functions whose ptcore semantics already match the standard are the
ptcore functions themselves (no wrapper, no overhead). Binary functions go
through ``_operands``: a Python scalar on either side is accepted (torch only
takes one as the second operand), and a 0-D tensor promotes like any array.
"""
import builtins as _b

import ptcore as _pt
from ptcore.array_api._dtypes import result_type as _result_type

_Tensor = _pt.Tensor
_SCALARS = (_b.bool, int, float, complex)


def _operands(x1, x2):
    """``(x1, x2)`` made into tensors of the standard's common dtype where torch's rules differ."""
    if isinstance(x1, _Tensor):
        if isinstance(x2, _Tensor):
            if x1.dtype != x2.dtype and (x1.ndim == 0 or x2.ndim == 0):
                dt = _pt.promote_types(x1.dtype, x2.dtype)
                return x1.to(dt), x2.to(dt)
            return x1, x2
        if isinstance(x2, _SCALARS):
            return x1, _pt.tensor(x2, dtype=_result_type(x1.dtype, x2), device=x1.device)
    elif isinstance(x2, _Tensor) and isinstance(x1, _SCALARS):
        return _pt.tensor(x1, dtype=_result_type(x2.dtype, x1), device=x2.device), x2
    raise TypeError(f"expected arrays or Python scalars with at least one array, got "
                    f"{type(x1).__name__} and {type(x2).__name__}")


def _binary(name, fn, takes_scalar=True):
    """The standard's ``name``: ``fn`` with the standard's operand rules.

    ``takes_scalar``: ``fn(tensor, python_scalar)`` already gives the standard's
    result, so that case skips the conversion.
    """
    if takes_scalar:
        def f(x1, x2, /):
            if type(x1) is _Tensor:
                t2 = type(x2)
                if (t2 is _Tensor and x1.dtype == x2.dtype) or t2 is float or t2 is int or t2 is _b.bool:
                    return fn(x1, x2)
            x1, x2 = _operands(x1, x2)
            return fn(x1, x2)
    else:
        def f(x1, x2, /):
            if type(x1) is _Tensor and type(x2) is _Tensor and x1.dtype == x2.dtype:
                return fn(x1, x2)
            x1, x2 = _operands(x1, x2)
            return fn(x1, x2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Element-wise ``{name}`` of the array API standard (``ptcore.{fn.__name__}``)."
    return f


add = _binary("add", _pt.add)
atan2 = _binary("atan2", _pt.atan2, takes_scalar=False)
bitwise_and = _binary("bitwise_and", _pt.bitwise_and)
bitwise_left_shift = _binary("bitwise_left_shift", _pt.bitwise_left_shift)
bitwise_or = _binary("bitwise_or", _pt.bitwise_or)
bitwise_right_shift = _binary("bitwise_right_shift", _pt.bitwise_right_shift)
bitwise_xor = _binary("bitwise_xor", _pt.bitwise_xor)
copysign = _binary("copysign", _pt.copysign)
divide = _binary("divide", _pt.divide)
equal = _binary("equal", _pt.eq)


def _floor_divide(x1, x2):
    out = _pt.floor_divide(x1, x2)
    if out.is_floating_point():
        # the standard: an infinite operand against a finite one gives the signed quotient
        # (+-inf or +-0) where floor would give NaN or -1
        a = x1 if isinstance(x1, _Tensor) else _pt.tensor(x1, dtype=out.dtype)
        b = x2 if isinstance(x2, _Tensor) else _pt.tensor(x2, dtype=out.dtype)
        out = _pt.where(_pt.isinf(a) != _pt.isinf(b), a / b, out)
    return out


_floor_divide.__name__ = "floor_divide"
floor_divide = _binary("floor_divide", _floor_divide)
greater = _binary("greater", _pt.greater)
greater_equal = _binary("greater_equal", _pt.greater_equal)
hypot = _binary("hypot", _pt.hypot, takes_scalar=False)
less = _binary("less", _pt.less)
less_equal = _binary("less_equal", _pt.less_equal)
logaddexp = _binary("logaddexp", _pt.logaddexp, takes_scalar=False)
logical_and = _binary("logical_and", _pt.logical_and, takes_scalar=False)
logical_or = _binary("logical_or", _pt.logical_or, takes_scalar=False)
logical_xor = _binary("logical_xor", _pt.logical_xor, takes_scalar=False)
maximum = _binary("maximum", _pt.maximum, takes_scalar=False)
minimum = _binary("minimum", _pt.minimum, takes_scalar=False)
multiply = _binary("multiply", _pt.multiply)
nextafter = _binary("nextafter", _pt.nextafter, takes_scalar=False)
not_equal = _binary("not_equal", _pt.not_equal)
pow = _binary("pow", _pt.pow)


def _remainder(x1, x2):
    out = _pt.remainder(x1, x2)
    if out.is_floating_point():
        # a zero remainder takes the divisor's sign (the standard's signed-zero cases); a
        # nonzero one already has it
        out = _pt.copysign(out, x2 if isinstance(x2, _Tensor) else _pt.tensor(x2, dtype=out.dtype))
    return out


_remainder.__name__ = "remainder"
remainder = _binary("remainder", _remainder)
subtract = _binary("subtract", _pt.subtract)

abs = _pt.abs
acos = _pt.acos
acosh = _pt.acosh
asin = _pt.asin
asinh = _pt.asinh
atan = _pt.atan
atanh = _pt.atanh
bitwise_invert = _pt.bitwise_not
ceil = _pt.ceil
cos = _pt.cos
cosh = _pt.cosh
exp = _pt.exp
floor = _pt.floor
isfinite = _pt.isfinite
isinf = _pt.isinf
isnan = _pt.isnan
log = _pt.log
log1p = _pt.log1p
log2 = _pt.log2
log10 = _pt.log10
logical_not = _pt.logical_not
negative = _pt.negative
reciprocal = _pt.reciprocal
signbit = _pt.signbit
sin = _pt.sin
sinh = _pt.sinh
sqrt = _pt.sqrt
square = _pt.square
tan = _pt.tan
tanh = _pt.tanh
trunc = _pt.trunc


def expm1(x, /):
    """``exp(x) - 1``; complex infinities and NaNs follow the standard's special cases."""
    if x.is_complex():
        # ptcore's complex expm1 gives NaN for every non-finite input; exp(x) - 1 has the
        # standard's values there
        return _pt.where(_pt.isfinite(x), _pt.expm1(x), _pt.exp(x) - 1)
    return _pt.expm1(x)


def conj(x, /):
    """Complex conjugate (a real array is returned as is)."""
    return _pt.conj_physical(x) if x.is_complex() else x


def real(x, /):
    """Real part; a real array is returned as is."""
    return _pt.real(x)


def imag(x, /):
    """Imaginary part; zeros for a real array."""
    return _pt.imag(x) if x.is_complex() else _pt.zeros_like(x)


def positive(x, /):
    """``+x`` (a copy, as the standard's operator)."""
    return _pt.clone(x)


def round(x, /):
    """Round half to even; complex numbers round their two parts."""
    if x.is_complex():
        return _pt.complex(_pt.round(_pt.real(x)), _pt.round(_pt.imag(x)))
    return _pt.round(x)


def sign(x, /):
    """Sign; NaN stays NaN and ``x / |x|`` for complex numbers (0 at 0)."""
    if x.is_complex():
        return _pt.sgn(x)
    out = _pt.sign(x)
    if x.is_floating_point():
        out = _pt.where(_pt.isnan(x), x, out)
    return out


def clip(x, /, min=None, max=None):
    """Clamp ``x`` to ``[min, max]``; bounds may be scalars or arrays, the result keeps ``x``'s dtype."""
    if min is None and max is None:
        return _pt.clone(x)
    if isinstance(min, _Tensor) or isinstance(max, _Tensor):
        if min is not None and not isinstance(min, _Tensor):
            min = _pt.tensor(min, dtype=x.dtype, device=x.device)
        if max is not None and not isinstance(max, _Tensor):
            max = _pt.tensor(max, dtype=x.dtype, device=x.device)
        out = _pt.clamp(x, min, max)
        return out if out.dtype == x.dtype else out.to(x.dtype)
    return _pt.clamp(x, min, max)


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` else ``x2``, with the standard's promotion."""
    x1, x2 = _operands(x1, x2)
    return _pt.where(condition, x1, x2)
