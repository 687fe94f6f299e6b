"""Elementwise operators with PyTorch semantics: unary math, binary
arithmetic/comparison/logical/bitwise ops, ``where``/``clamp``/``lerp``/
``addcmul``/``addcdiv``, ``isclose``/``allclose``/``equal``, complex views,
and the Python operators on ``Tensor``.

Dtype rules (result_type with weak Python scalars, int -> float for
transcendental functions, bool special cases, PyTorch's error messages)
live here; the loops run in ``ptcore._ops.kernels._ew`` through the driver
``ptcore._ops.kernels._ewdrv``, on the CPU only: tensors on another device reach
the kernels of the operator table (``OpDef.kernels``) through the dispatch
point's device layer.
"""
import builtins
import math
import numbers
import operator
import warnings

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import common_device as _device_of
from ptcore._dispatch.device import in_host_memory as _in_host_memory
from ptcore._dispatch.device import loop_for as _loop_for, loop_table as _loop_table
from ptcore._dispatch.device import no_kernel_error as _no_kernel_error
from ptcore._dtype_utils import _refuse_complex32, _result_type, _FLOAT8
from ptcore._scalar_args import number_arg, number_param
from ptcore._warn import warn_once
from ptcore._ops.kernels import _ewdrv as _D
from ptcore._ops import lowp_axpy as _lowp_axpy
from ptcore._dispatch.table import entry as _op_entry
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._dispatch.handlers import Handlers
from ptcore._ops._out import (broadcast_shapes as _D_broadcast,
                              check_inplace_shape as _check_inplace_shape,
                              check_same_dtype as _check_out_same_dtype, copy_out as _copy_out,
                              resize_out as _resize_out, check_written as _check_written)
from ptcore._dtype_utils import finfo
from ptcore._dtype_utils import iinfo

_U = _D.UNARY
_B = _D.BINARY
_T = _D.TERNARY

__all__ = []


def _export(fn, name=None):
    name = name or fn.__name__
    __all__.append(name)
    globals()[name] = fn
    return fn


def _is_number(x):
    # NumPy's bool scalar is no numbers.Number, but torch takes it as a (float) Scalar
    t = type(x)
    if t is float or t is int or t is bool:
        return True         # (the common scalars without the ABC's isinstance)
    return isinstance(x, (numbers.Number, _np.bool_)) and not isinstance(x, _TensorBase)


_SCALAR_FIRST_WARNED = [False]


def _scalar_first(name, scalar, rest, tensor_names, kw, kw_value):
    """torch's deprecated overloads that take the scalar first, still common in older
    tutorials and optimizers: ``p.data.add_(-lr, grad)``, ``exp_avg_sq.addcmul_(1 - beta2,
    grad, grad)``, ``ptcore.add(x, alpha, other)``.  Returns the tensor arguments and the
    scalar (``alpha``/``value``) for the current form; warns once per process, as torch's
    TORCH_WARN_ONCE does for every deprecated overload together."""
    if len(rest) != len(tensor_names) or not _is_number(scalar) or kw_value != 1:
        got = ", ".join(type(a).__name__ for a in (scalar,) + tuple(rest))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}"
                        f"{', ' + kw + '=...' if kw_value != 1 else ''})")
    if not _SCALAR_FIRST_WARNED[0]:
        _SCALAR_FIRST_WARNED[0] = True
        tensors = ", ".join(f"Tensor {t}" for t in tensor_names)
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number {kw}, {tensors})\n"
                      f"Consider using one of the following signatures instead:\n\t{name}("
                      f"{tensors}, *, Number {kw} = 1)", UserWarning, stacklevel=5)
    return tuple(rest), scalar


def _check_tensor(x, fname, argname="input"):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' (position 1) must be Tensor, not {type(x).__name__}")


# the elementwise loops per device type: None for the CPU (the drivers of
# _ewdrv below run there), the loops a device registered (the CUDA backend's)
_EW_UNARY = _loop_table("ew_unary", None)
_EW_BINARY = _loop_table("ew_binary", None)
_EW_TERNARY = _loop_table("ew_ternary", None)


def _device_loop(table, fname, dev):
    """None on the CPU (the elementwise drivers below); elsewhere the device's
    elementwise loop in ``table``, or the ``NotImplementedError`` naming the op
    ``fname`` and the device."""
    if dev is None:
        return None
    try:
        return table[dev.type]
    except KeyError:
        raise _no_kernel_error(fname, dev) from None


_FLOAT_CAT = 2


def _default_float():
    return _C.get_default_dtype()


def _to_float_dtype(dt):
    """int/bool -> default float dtype; float/complex unchanged."""
    return dt if dt._category >= _FLOAT_CAT else _default_float()


def _name(dt):
    return dt._legacy


# ---------------------------------------------------------------------------
# unary
# ---------------------------------------------------------------------------

def _unary(op, x, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, d2=0.0, i0=0):
    k = _device_loop(_EW_UNARY, fname, x.device)
    if k is not None:
        return k(op, x, out, compute, result, fname, inplace, d0, d1, d2, i0)
    return _D.run_unary(_U[op], x, out, compute, result, fname, inplace, d0, d1, d2, i0)


def _complex_parts(z):
    return view_as_real(z).select(-1, 0), view_as_real(z).select(-1, 1)


def _scale_parts(z, c):
    """``z * c`` for a real ``c``, part by part (a complex product would turn
    ``inf * 0`` into NaN)."""
    view_as_real(z).mul_(c)
    return z


# op name -> its complex form composed of other ops (real/imaginary parts
# computed apart where a complex kernel would lose accuracy), registered where written
_complex_form = Handlers("complex composed form")


@_complex_form("exp2")
def _c_exp2(z):
    return exp(_scale_parts(z.clone(), math.log(2.0)))  # noqa: F821


@_complex_form("log2")
def _c_log2(z):
    return _scale_parts(log(z), 1.0 / math.log(2.0))  # noqa: F821


@_complex_form("log10")
def _c_log10(z):
    return _scale_parts(log(z), 1.0 / math.log(10.0))  # noqa: F821


@_complex_form("expm1")
def _c_expm1(z):
    # exp(x + iy) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y, accurate near 0
    x, y = _complex_parts(z)
    s = sin(mul(y, 0.5))  # noqa: F821
    re = sub(mul(expm1(x), cos(y)), mul(mul(s, s), 2.0))  # noqa: F821
    im = mul(exp(x), sin(y))  # noqa: F821
    return complex(re.contiguous(), im.contiguous())


@_complex_form("log1p")
def _c_log1p(z):
    # as c10's log1p for complex: 0.5 * log1p(x (x + 2) + y^2) for |z| < 0.5
    x, y = _complex_parts(z)
    x1 = add(x, 1.0)
    theta = atan2(y, x1)  # noqa: F821
    r = add(mul(x, add(x, 2.0)), mul(y, y))
    small = lt(abs(z), 0.5)  # noqa: F821
    re_small = where(eq(r, 0), x, mul(log1p(r), 0.5))  # noqa: F821
    re_big = log(hypot(x1, y))  # noqa: F821
    return complex(where(small, re_small, re_big).contiguous(), theta.contiguous())


# the common case of the unary front-ends: a CPU tensor of a real floating
# dtype, no out=: the result has the input's dtype and no check can fail
_REAL_FLOAT = frozenset((_C.float16, _C.bfloat16, _C.float32, _C.float64))
_fast_unary = _D.fast_unary
_U_NEG = _U["neg"]
_U_CUBE = _U["cube"]


def _run_unary(code, x, dt, name):
    """``op(x)`` into a new tensor of x's dtype ``dt`` (a CPU tensor)."""
    r = _fast_unary(code, x)            # contiguous float32/float64
    return r if r is not None else _D.run_unary(code, x, None, dt, dt, name)


def _make_float_unary(name, op=None, float_only=False, complex_ok=True):
    op = op or name
    composed = _complex_form.get(name)
    code = _U[op]

    def fn(input, *, out=None):
        if out is None and isinstance(input, _TensorBase) and _in_host_memory(input):
            dt = input.dtype
            if dt in _REAL_FLOAT:
                return _run_unary(code, input, dt, name)
        _check_tensor(input, name)
        dt = input.dtype
        if dt is _C.complex32:
            raise NotImplementedError(f"\"{name}\" not implemented for 'ComplexHalf'")
        if dt.is_complex and composed is not None:
            r = composed(input)
            if out is None:
                return r
            if isinstance(out, _TensorBase) and not _can_cast_py(r.dtype, out.dtype):
                raise RuntimeError(f"result type {_name(r.dtype)} can't be cast to the desired "
                                   f"output type {_name(out.dtype)}")
            return _copy_out(out, r)
        if dt.is_complex and name in ("deg2rad", "rad2deg"):
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        if float_only and out is not None:
            _check_out_same_dtype(out, dt)      # (frac keeps its input's dtype)
        if dt.is_complex and not complex_ok:
            raise NotImplementedError(f"\"{name}\" not implemented for '{_name(dt)}'")
        if float_only and dt._category < _FLOAT_CAT:
            raise NotImplementedError(f"\"{name}\" not implemented for '{_name(dt)}'")
        res = _to_float_dtype(dt)
        return _unary(op, input, out, res, res, name)

    def fn_(self):
        dt = self.dtype
        if dt is _C.complex32:
            raise NotImplementedError(f"\"{name}\" not implemented for 'ComplexHalf'")
        if dt.is_complex and name in ("deg2rad", "rad2deg"):
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        if float_only and (dt._category < _FLOAT_CAT or dt.is_complex):
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_name(dt)}'")
        if dt._category < _FLOAT_CAT:
            raise RuntimeError(f"result type {_name(_to_float_dtype(dt))} can't be cast to the desired output type {_name(dt)}")
        if dt.is_complex and composed is not None:
            return self.copy_(composed(self))
        return _unary(op, self, self, dt, dt, name + "_", True)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (integer inputs are promoted to the default float dtype)."
    fn_.__name__ = name + "_"
    fn_.__doc__ = f"In-place ``{name}``."
    _export(fn)
    __all__.append(name + "_") if name in ("exp", "sigmoid", "sqrt", "rsqrt", "log", "sin", "cos", "tanh") else None
    globals()[name + "_"] = fn_
    return fn


for _n in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
           "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
           "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "deg2rad", "rad2deg", "i0",
           "reciprocal"):
    _make_float_unary(_n, complex_ok=_n not in ("exp2", "expm1", "log2", "log10", "log1p", "erf",
                                                 "erfc", "erfinv", "lgamma", "digamma",
                                                 "deg2rad", "rad2deg", "i0"))
_make_float_unary("frac", float_only=True, complex_ok=False)

# aliases PyTorch has
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
for _a, _f in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
               ("arccosh", "acosh"), ("arctanh", "atanh"), ("special_expit", "sigmoid")):
    if not _a.startswith("special"):
        __all__.append(_a)
        globals()[_a + "_"] = globals()[_f + "_"]


def _same_unary(name, op=None, allow_bool=True, allow_complex=True, allow_float=True, bool_result=None,
                takes_out=True, complex_error=None):
    """``complex_error``: the NotImplementedError torch's meta function raises for a
    complex input, before looking at out=."""
    op = op or name
    code = _U[op]
    fast = _REAL_FLOAT if allow_float else ()

    def check(input, out):
        """The dtype checks of ``name(input, out=out)`` (torch's order); input's dtype."""
        _check_tensor(input, name)
        _check_written(out, input)      # (torch's TensorIterator: memory first)
        dt = input.dtype
        if dt.is_complex and complex_error is not None:
            raise NotImplementedError(complex_error)
        # (a complex abs may write into a real out: torch copies its real result there)
        if out is not None and not (op == "abs" and dt.is_complex and isinstance(out, _TensorBase)
                                    and not out.dtype.is_complex):
            _check_out_same_dtype(out, dt)
        if op == "relu":
            relu_dtype_check(dt)
        if (dt is _C.bool_ and not allow_bool) or (dt.is_complex and not allow_complex) or \
                (dt.is_floating_point and not allow_float):
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_name(dt)}'")
        return dt

    def fn(input, *, out=None):
        if out is None and isinstance(input, _TensorBase) and _in_host_memory(input):
            dt = input.dtype
            if dt in fast:
                return _run_unary(code, input, dt, name)
        dt = check(input, out)
        res = dt
        if bool_result is not None and dt is _C.bool_:
            res = bool_result
        compute = res
        if op == "abs" and dt.is_complex:
            return _unary(op, input, out, dt, dt.to_real(), name)
        return _unary(op, input, out, compute, res, name)

    def fn_(self):
        dt = self.dtype
        if op == "abs" and dt.is_complex:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        _check_written(self)
        check(self, None)
        return _unary(op, self, self, dt, dt, name + "_", True)

    public = fn
    if not takes_out:
        def public(input):
            return fn(input)
    public.__name__ = name
    public.__qualname__ = name
    fn_.__name__ = name + "_"
    _export(public)
    globals()[name + "_"] = fn_
    return public


def neg_dtype_check(dt):
    """torch's refusal of a bool ``neg`` (every device's kernel calls it)."""
    if dt is _C.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")


def relu_dtype_check(dt):
    """torch's refusal of a bool ``relu`` (every device's kernel calls it)."""
    if dt is _C.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")


def neg(input, *, out=None):
    """``-input``."""
    if out is None:
        r = _fast_unary(_U_NEG, input)      # (bool has no neg loop: it gets torch's error below)
        if r is not None:
            return r
    _check_tensor(input, "neg")
    neg_dtype_check(input.dtype)
    _check_out_same_dtype(out, input.dtype)
    return _unary("neg", input, out, input.dtype, input.dtype, "neg")


def neg_(self):
    neg_dtype_check(self.dtype)
    return _unary("neg", self, self, self.dtype, self.dtype, "neg_", True)


_export(neg)
_export(neg_)
negative = neg
negative_ = neg_
__all__ += ["negative"]

_same_unary("abs", allow_bool=False)
absolute = abs  # noqa: F821
__all__.append("absolute")
_same_unary("sign", allow_complex=False, complex_error="Unlike NumPy, torch.sign is not intended "
            "to support complex numbers. Please use torch.sgn instead.")
_same_unary("floor", allow_complex=False, allow_bool=False,
            complex_error="floor is not supported for complex inputs")
_same_unary("ceil", allow_complex=False, allow_bool=False,
            complex_error="ceil is not supported for complex inputs")
_same_unary("trunc", allow_complex=False, allow_bool=False,
            complex_error="trunc is not supported for complex inputs")
fix = trunc  # noqa: F821
__all__.append("fix")
_same_unary("relu", allow_bool=False, allow_complex=False, takes_out=False)     # no out= in torch
_same_unary("bitwise_not", allow_float=False, allow_complex=False)


def sgn(input, *, out=None):
    """Sign for real inputs; ``z / |z|`` for complex."""
    _check_tensor(input, "sgn")
    if input.dtype.is_complex:
        _check_out_same_dtype(out, input.dtype)
        return _unary("sgn", input, out, input.dtype, input.dtype, "sgn")
    return sign(input, out=out)  # noqa: F821


_export(sgn)


def square(input, *, out=None):
    """``input * input`` (bool becomes int64, as PyTorch)."""
    _check_tensor(input, "square")
    dt = _C.int64 if input.dtype is _C.bool_ else input.dtype
    return _unary("square", input, out, dt, dt, "square")


def square_(self):
    if isinstance(self, _TensorBase) and self.dtype is _C.bool_:
        _check_inplace_result(self, _C.int64)      # bool squares to int64
    return _unary("square", self, self, self.dtype, self.dtype, "square_", True)


_export(square)


def _decimals_arg(decimals):
    """torch's int64 ``decimals``: a bool or a float is a TypeError."""
    if isinstance(decimals, builtins.bool) or not hasattr(decimals, "__index__") or \
            isinstance(decimals, _np.ndarray) or (isinstance(decimals, _TensorBase) and (
                decimals.dim() != 0 or decimals.dtype is _C.bool_)):
        raise TypeError(f"round() received an invalid combination of arguments - got (Tensor, "
                        f"decimals={type(decimals).__name__}), but expected one of: (Tensor input) "
                        f"or (Tensor input, *, int decimals)")
    return operator.index(decimals)


def _ten_pow(decimals):
    """``10 ** |decimals|`` as torch's round kernel takes it: inf past the
    double range (so every element rounds to nan, as torch), not an error."""
    d = builtins.abs(decimals)
    return 10.0 ** d if d <= 308 else math.inf


def round(input, *, decimals=0, out=None):
    """Round half to even, optionally to ``decimals`` digits."""
    _check_tensor(input, "round")
    dt = input.dtype
    _check_out_same_dtype(out, dt)
    if dt.is_complex or dt is _C.bool_:
        raise NotImplementedError(f"\"round_cpu\" not implemented for '{_name(dt)}'")
    decimals = _decimals_arg(decimals)
    if decimals == 0 or dt._category < _FLOAT_CAT:
        if decimals != 0:
            raise NotImplementedError("round_cpu not implemented for integer types with decimals != 0")
        return _unary("round", input, out, dt, dt, "round")
    return _unary("round_dec", input, out, dt, dt, "round", d0=_ten_pow(decimals),
                  i0=1 if decimals > 0 else -1)


def round_(self, *, decimals=0):
    decimals = _decimals_arg(decimals)
    dt = self.dtype
    if dt.is_complex or dt is _C.bool_ or (decimals != 0 and dt._category < _FLOAT_CAT):
        raise NotImplementedError(f"\"round_cpu\" not implemented for '{_name(dt)}'")
    if decimals == 0 or dt._category < _FLOAT_CAT:
        return _unary("round", self, self, dt, dt, "round_", True)
    return _unary("round_dec", self, self, dt, dt, "round_", True, d0=_ten_pow(decimals),
                  i0=1 if decimals > 0 else -1)


_export(round)


def _bool_unary(name, takes_out):
    def fn(input):
        _check_tensor(input, name)
        return _unary(name, input, None, input.dtype, _C.bool_, name)

    def fn_out(input, *, out=None):
        _check_tensor(input, name)
        if input.dtype.is_complex and name in ("isposinf", "isneginf"):
            raise RuntimeError(f"{name} does not support complex inputs.")
        if isinstance(out, _TensorBase) and out.dtype is not _C.bool_:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
        return _unary(name, input, out, input.dtype, _C.bool_, name)
    f = fn_out if takes_out else fn
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise ``{name}`` test (bool result)."
    return _export(f)


# (as torch: only isposinf, isneginf and signbit take out=)
for _n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
    _bool_unary(_n, _n in ("isposinf", "isneginf", "signbit"))


def isreal(input):
    """True where the imaginary part is zero (always True for real dtypes)."""
    if not input.dtype.is_complex:
        return _C.ones(input.shape, dtype=_C.bool_, device=input.device)
    return eq(imag(input), 0)  # noqa: F821


_export(isreal)


def logical_not(input, *, out=None):
    """``input == 0`` as bool."""
    _check_tensor(input, "logical_not")
    return _unary("logical_not", input, out, input.dtype, _C.bool_ if out is None else out.dtype,
                  "logical_not")


def logical_not_(self):
    return _unary("logical_not", self, self, self.dtype, self.dtype, "logical_not_", True)


_export(logical_not)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replace NaN/+inf/-inf by finite numbers (the dtype's extremes by default)."""
    _refuse_complex32("nan_to_num", input)
    _check_tensor(input, "nan_to_num")
    # float? parameters, read as torch's parser reads them (None: the default)
    nan, posinf, neginf = (_float_param(v, "nan_to_num", k) for k, v in
                           (("nan", nan), ("posinf", posinf), ("neginf", neginf)))
    nan = 0.0 if nan is None else nan
    dt = input.dtype
    _check_out_same_dtype(out, dt)
    if dt._category < _FLOAT_CAT:
        return input.clone() if out is None else _copy_out(out, input)
    if dt.is_complex:
        r = nan_to_num(real(input), nan, posinf, neginf)  # noqa: F821
        i = nan_to_num(imag(input), nan, posinf, neginf)  # noqa: F821
        return complex(r, i) if out is None else _copy_out(out, complex(r, i))
    fi = _C_finfo(dt)
    return _unary("nan_to_num", input, out, dt, dt, "nan_to_num", d0=float(nan),
                  d1=fi.max if posinf is None else float(posinf),
                  d2=fi.min if neginf is None else float(neginf))


def _float_param(v, fname, name):
    """``v`` for an optional ``float`` parameter as torch's parser reads it: None,
    a real number or a 0-d tensor's value; anything else (a complex, a string,
    a longer tensor) is a TypeError."""
    if v is None:
        return v
    t = v
    v = number_arg(v)
    if isinstance(t, _TensorBase) and isinstance(v, builtins.complex):
        if v.imag != 0:         # a 0-d complex tensor is read with a checked conversion
            raise RuntimeError("value cannot be converted to type double without overflow")
        return v.real
    if not _is_number(v) or isinstance(v, builtins.complex):
        tname = "Tensor" if isinstance(v, _TensorBase) else type(v).__name__
        raise TypeError(f"{fname}(): argument '{name}' must be float, not {tname}")
    if isinstance(v, _np.complexfloating):
        return float(v.real)    # (torch's parser takes NumPy's complex64 scalar as its real part)
    return v


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return self.copy_(nan_to_num(self, nan, posinf, neginf))


def _C_finfo(dt):
    return finfo(dt)


_export(nan_to_num)


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when eps is given."""
    _check_tensor(input, "logit")
    eps = number_param(eps, "logit", "eps")
    res = _to_float_dtype(input.dtype)
    if res is _C.float16 or res is _C.bfloat16:
        if eps is not None:
            # PyTorch clamps to [eps, 1 - eps] in the 16-bit type itself, as
            # x < lo ? lo : (x > hi ? hi : x): lo wins when eps > 0.5 puts it above hi
            lo = _C.full((), float(eps), dtype=res)
            hi = sub(1.0, lo)
            x = input.to(res)
            input = where(lt(x, lo), lo, where(gt(x, hi), hi, x))  # noqa: F821
        # ... and evaluates log(x / (1 - x)) with every step rounded to it
        x = input.to(res)
        q = _binary("div", x, _binary("sub", 1.0, x, None, res, res, "logit"), None, res, res, "logit")
        return _unary("log", q, out, res, res, "logit")
    return _unary("logit", input, out, res, res, "logit", d0=0.0 if eps is None else float(eps),
                  i0=0 if eps is None else 1)


def logit_(self, eps=None):
    eps = number_param(eps, "logit_", "eps", 1)
    dt = self.dtype
    if dt._category < _FLOAT_CAT:
        raise RuntimeError(f"result type {_name(_to_float_dtype(dt))} can't be cast to the "
                           f"desired output type {_name(dt)}")
    if dt is _C.float16 or dt is _C.bfloat16:
        return self.copy_(logit(self, eps))     # every step rounded to the 16-bit type
    return _unary("logit", self, self, dt, dt, "logit_", True,
                  d0=0.0 if eps is None else float(eps), i0=0 if eps is None else 1)


_export(logit)


def _nn_unary(name, *params):
    """Activation kernels (float-only, as PyTorch's CPU kernels)."""
    def fn(input, *args, out=None):
        dt = input.dtype
        if dt._category < _FLOAT_CAT or dt.is_complex:
            raise NotImplementedError(f"\"{name}\" not implemented for '{_name(dt)}'")
        vals = [float(a) for a in args] + [0.0] * (3 - len(args))
        return _unary(name, input, out, dt, dt, name, False, *vals[:3])
    fn.__name__ = "_" + name
    return fn


_silu = _nn_unary("silu")
_gelu = _nn_unary("gelu")
_gelu_tanh = _nn_unary("gelu_tanh")
_softplus = _nn_unary("softplus")
_mish = _nn_unary("mish")
_elu = _nn_unary("elu")
_leaky_relu = _nn_unary("leaky_relu")
_hardsigmoid = _nn_unary("hardsigmoid")
_hardswish = _nn_unary("hardswish")


def angle(input, *, out=None):
    """Argument of complex numbers (0 or pi for reals)."""
    _check_tensor(input, "angle")
    dt = input.dtype
    if dt.is_complex:
        r = _unary("angle", input, out, dt, dt.to_real(), "angle")
        # torch computes a complex angle into a resized empty out: C-contiguous
        return r if out is not None or r.is_contiguous() else r.contiguous()
    res = _to_float_dtype(dt)
    return _unary("angle", input, out, res, res, "angle")


_export(angle)


def conj_physical(input, *, out=None):
    """Complex conjugate as a new tensor (a copy for real tensors)."""
    _check_tensor(input, "conj_physical")
    _check_out_same_dtype(out, input.dtype)
    if not input.dtype.is_complex:
        return input.clone() if out is None else _copy_out(out, input)
    return _unary("conj", input, out, input.dtype, input.dtype, "conj_physical")


def conj(input):
    """Complex conjugate (``input`` itself for real tensors, as PyTorch)."""
    if not input.dtype.is_complex:
        return input
    return conj_physical(input)


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input):
    if not isinstance(input, _TensorBase):
        raise TypeError(f"is_conj(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


for _f in (conj_physical, conj, resolve_conj, resolve_neg, is_conj):
    _export(_f)


def view_as_real(input):
    """A real view of a complex tensor with a trailing dim of size 2."""
    dt = input.dtype
    if not dt.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    real_dt = dt.to_real()
    shape = list(input.shape) + [2]
    strides = [s * 2 for s in input.stride()] + [1]
    v = _C._tensor_from_storage(input.untyped_storage(), real_dt, shape, strides,
                                input.storage_offset() * 2)
    v._share_version_counter(input)
    return v


def view_as_complex(input):
    """A complex view of a real tensor whose last dim has size 2 and stride 1."""
    dt = input.dtype
    if dt not in (_C.float32, _C.float64, _C.float16):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {_name(dt)}")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]) or input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    cdt = dt.to_complex()
    v = _C._tensor_from_storage(input.untyped_storage(), cdt, list(input.shape[:-1]),
                                [s // 2 for s in input.stride()[:-1]], input.storage_offset() // 2)
    v._share_version_counter(input)
    return v


def real(input):
    """The real part (a view for complex tensors, ``input`` itself otherwise)."""
    if not input.dtype.is_complex:
        return input
    return view_as_real(input).select(-1, 0)


def imag(input):
    """The imaginary part of a complex tensor (a view)."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def _iter_strides(shape, tensors):
    """The strides of a new result of an elementwise op over ``tensors``
    (TensorIterator's rule): all inputs contiguous (or channels_last) of the
    result's shape give that format, else the dims are ordered by the inputs'
    strides, the first input that tells two dims apart deciding."""
    shape = tuple(shape)
    nd = len(shape)
    same = [t for t in tensors if tuple(t.shape) == shape]
    if len(same) == len(tensors):
        for fmt in (_C.contiguous_format, _C.channels_last, _C.channels_last_3d):
            if (fmt is _C.contiguous_format or nd == (4 if fmt is _C.channels_last else 5)) \
                    and all(t.is_contiguous(memory_format=fmt) for t in tensors):
                return _C.empty(shape).contiguous(memory_format=fmt).stride() \
                    if fmt is not _C.contiguous_format else None
    perm = _lowp_axpy._order(shape, [_lowp_axpy._bcast_strides(t, shape) for t in tensors])
    strides = [0] * nd
    acc = 1
    for d in perm:          # dense in the iteration order (innermost first)
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def complex(real, imag, *, out=None):
    """A complex tensor from real and imaginary parts."""
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_name(real.dtype)} but got scalar type {_name(imag.dtype)} for second argument")
    if real.dtype not in (_C.float32, _C.float64, _C.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_name(real.dtype)} and {_name(imag.dtype)}")
    shape = _D_broadcast(real.shape, imag.shape)
    cdt = real.dtype.to_complex()
    if out is not None:
        _check_tensor(out, "complex", "out")
        if out.dtype is not cdt:
            raise RuntimeError(f"Expected object of scalar type {_name(cdt)} but got scalar type "
                               f"{_name(out.dtype)} for argument 'out'")
        _check_written(out, real, imag)     # (torch's TensorIterator, before resizing out)
        _resize_out(out, shape)
    if out is None:
        st = _iter_strides(shape, (real, imag))
        res = _C.empty(shape, dtype=cdt) if st is None else _C.empty_strided(shape, st, dtype=cdt)
    else:
        res = out
    v = view_as_real(res)
    v.select(-1, 0).copy_(real)
    v.select(-1, 1).copy_(imag)
    return res


def polar(abs, angle, *, out=None):
    """``abs * (cos(angle) + i sin(angle))``: ``abs`` and ``angle`` of one float dtype."""
    if out is None:
        # the common case (CPU, one shape and float dtype, contiguous: valid
        # arguments) in one call, without the five dispatched ops and the two
        # copies below
        r = _D.fast_polar(abs, angle)
        if r is not None:
            return r
    _polar_check(abs, angle, "polar_cpu")
    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)), out=out)  # noqa: F821


def _polar_check(abs, angle, kname):
    """torch's argument checks of polar (``kname``: its kernel, which has no float16)."""
    for name, t in (("abs", abs), ("angle", angle)):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"polar(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if abs.dtype not in (_C.float16, _C.float32, _C.float64) or \
            angle.dtype not in (_C.float16, _C.float32, _C.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_name(abs.dtype)} and {_name(angle.dtype)}")
    if abs.dtype is not angle.dtype:
        raise RuntimeError(f"Expected object of scalar type {_name(abs.dtype)} but got scalar "
                           f"type {_name(angle.dtype)} for second argument")
    if abs.dtype is _C.float16:
        raise NotImplementedError(f"\"{kname}\" not implemented for 'Half'")


for _f in (view_as_real, view_as_complex, complex, polar, real, imag):
    _export(_f)


# ---------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------

# the Cython fast path of plain same-dtype, same-shape, contiguous in-place
# ops (the autograd wrapper has already run its checks)
_fast_inplace = _D.fast_inplace
_fast_binary = _D.fast_binary
_B_ADD, _B_SUB, _B_DIV = _B["add"], _B["sub"], _B["div"]
_B_EQ, _B_NE, _B_MUL = _B["eq"], _B["ne"], _B["mul"]
_FAST_INPLACE = {"mul"}


def _binary(op, a, b, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, d2=0.0, i0=0):
    dev = _device_of(a, b, out)
    k = _device_loop(_EW_BINARY, fname, dev)
    if k is not None:
        return k(op, a, b, out, compute, result, fname, inplace, d0, d1, d2, i0)
    return _D.run_binary(_B[op], a, b, out, compute, result, fname, inplace, d0, d1, d2, i0)


def _threshold_backward(grad, self, threshold):
    """``aten.threshold_backward``: ``grad`` where ``self > threshold``, else 0
    (the gradient of ReLU and threshold: a NaN or inf gradient at an input
    that was clamped gives 0, as in torch); one kernel for floating
    operands of one dtype and device, else ``where``.  Not differentiable
    itself (the formulas use ``where`` when recording)."""
    dt = self.dtype
    if isinstance(grad, _TensorBase) and grad.dtype is dt and dt.is_floating_point \
            and grad.device == self.device:
        return _binary("threshold_fill", self, grad, None, dt, dt, "threshold_backward",
                       d0=float(threshold), d1=0.0)
    return where(self > threshold, grad, 0)  # noqa: F821


# which operands of a binary function may be Python numbers (PyTorch's
# signatures): "both" (Tensor/Scalar overloads either way), "second"
# (``op(Tensor, Scalar)`` only), "none" (``op(Tensor, Tensor)`` only), "two" (both,
# and two Python numbers: the first becomes a 0-d tensor)
_SCALARS_TWO, _SCALARS_BOTH, _SCALARS_SECOND, _SCALARS_NONE = 3, 2, 1, 0


def _operands(fname, input, other, scalars=_SCALARS_BOTH):
    if not isinstance(input, _TensorBase):
        if scalars >= _SCALARS_BOTH and _is_number(input):
            if isinstance(other, _TensorBase):
                return input, other
            if scalars == _SCALARS_TWO and _is_number(other):
                if fname == "sub":
                    _sub_check(input, other)
                return _C.full((), input, dtype=_result_type(input, other)), other
        if scalars == _SCALARS_NONE or not _is_number(input):
            raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        raise TypeError(
            f"{fname}() received an invalid combination of arguments - got ({type(input).__name__}, "
            f"{type(other).__name__}), but expected (Tensor input, Tensor other) or (Tensor input, Number other)")
    if isinstance(other, _TensorBase):
        return input, other
    if scalars == _SCALARS_NONE or not _is_number(other):
        what = "Tensor" if scalars == _SCALARS_NONE else "Tensor or Number"
        raise TypeError(f"{fname}(): argument 'other' (position 2) must be {what}, not {type(other).__name__}")
    return input, other


def _other_tensor(fname, other):
    """Method / in-place forms of Tensor-only ops: ``other`` must be a Tensor."""
    if not isinstance(other, _TensorBase):
        raise TypeError(f"{fname}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")


def _is_boolish(x):
    return x.dtype is _C.bool_ if isinstance(x, _TensorBase) else isinstance(x, builtins.bool)


def _chalf_check(dt, a, b, kname):
    """PyTorch's error where its CPU kernel has no complex32 (ComplexHalf)."""
    if dt is _C.complex32:
        raise NotImplementedError(f"\"{kname}\" not implemented for 'ComplexHalf'")


def _big_int_check(*xs):
    """PyTorch's argument parser: a Python int is an int64 or uint64 Scalar, or an OverflowError."""
    for x in xs:
        if isinstance(x, builtins.int) and not -2 ** 63 <= x < 2 ** 64:
            raise OverflowError("can't convert negative int to unsigned" if x < 0
                                else "int too big to convert")


def _sub_check(a, b):
    """PyTorch refuses subtraction with bool operands (tensors or Python bools)."""
    ba, bb = _is_boolish(a), _is_boolish(b)
    if ba or bb:
        _big_int_check(a, b)  # PyTorch converts the scalar (and overflows) first
    if ba and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")
    if ba or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _scalar_value(x):
    if isinstance(x, _TensorBase):
        return None
    return x


def add(input, other, *deprecated, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion (``add(input, alpha,
    other)``, torch's deprecated order, is accepted with its warning)."""
    if deprecated:
        (other,), alpha = _scalar_first("add", other, deprecated, ("other",), "alpha", alpha)
    input, other = _operands("add", input, other, _SCALARS_TWO)
    dt = _result_type(input, other)
    return _add_impl(input, other, alpha, out, dt, "add", False)


def _alpha_check(dt, alpha):
    if isinstance(alpha, builtins.bool):
        if dt is not _C.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif dt._category < _FLOAT_CAT and not isinstance(alpha, numbers.Integral):
        # (PyTorch says "floating point" for a complex alpha too)
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dt.is_complex and isinstance(alpha, builtins.complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _add_impl(a, b, alpha, out, dt, fname, inplace, negate=False):
    if out is not None and not inplace:
        _check_written(out, a, b)       # (torch's TensorIterator, before the alpha checks)
    if type(alpha) is not int:
        alpha = number_arg(alpha)
        if not _is_number(alpha):
            raise TypeError(f"{fname}(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    if negate:
        _big_int_check(alpha)   # (torch's parser, before the bool check)
        _sub_check(a, b)
    if type(alpha) is not int:  # a plain int alpha passes every check
        _alpha_check(dt, alpha)
    if dt is _C.bool_:
        _big_int_check(alpha)
        if not alpha:
            # a + False * b == a (broadcast against b)
            b = _binary("mul", b, False, None, dt, dt, "mul") if isinstance(b, _TensorBase) else False
        return _binary("add", a, b, out, dt, dt, fname, inplace)
    if isinstance(alpha, builtins.bool):
        alpha = int(alpha)
    if negate:
        alpha = -alpha
    if dt is _C.complex32 and (isinstance(alpha, builtins.complex) or alpha not in (1, -1)) \
            and (out is None or out.dtype.is_complex):
        _C._checked_scalar(alpha, dt)
        return _c32_add_alpha(a, b, alpha, out, fname, inplace)
    if alpha == 1 and not isinstance(alpha, builtins.complex):
        return _binary("add", a, b, out, dt, dt, fname, inplace)
    if negate and alpha == -1 and not isinstance(alpha, builtins.complex):
        return _binary("sub", a, b, out, dt, dt, fname, inplace)
    _C._checked_scalar(alpha, dt)              # PyTorch's range check of alpha
    if isinstance(alpha, builtins.complex):
        return _binary("add_alpha", a, b, out, dt, dt, fname, inplace, d0=alpha.real, d1=alpha.imag)
    if dt._category < _FLOAT_CAT:
        return _binary("add_alpha", a, b, out, dt, dt, fname, inplace, i0=int(alpha))
    lowp = None if dt is not _C.float16 and dt is not _C.bfloat16 else \
        _loop_for("add_alpha_lowp", _device_of(a, b, out), _lowp_axpy.add_alpha)
    if lowp is not None:
        # PyTorch's CPU kernel takes alpha in the tensor's dtype: a + b * alpha
        # is then one exact float32 product and one rounding (its vectorized
        # fused multiply-add), except where its scalar loop rounds the product first
        alpha = _C._checked_scalar(alpha, dt).item()
        return lowp(
            lambda: _binary("add_alpha", a, b, out, dt, dt, fname, inplace, d0=float(alpha)),
            lambda op, x, y, o: _binary(op, x, y, o, dt, dt, fname, inplace and o is not None),
            a, b, alpha, out, dt)
    if dt is _C.float16 or dt is _C.bfloat16:
        alpha = _C._checked_scalar(alpha, dt).item()
    return _binary("add_alpha", a, b, out, dt, dt, fname, inplace, d0=float(alpha))


def _c32_add_alpha(a, b, alpha, out, fname, inplace):
    """PyTorch's ComplexHalf ``a + alpha * b``: the product is rounded to
    complex32, then the parts are added without a further complex product."""
    c32, f16 = _C.complex32, _C.float16
    t = _binary("mul", b, alpha, None, c32, c32, "mul")
    a = a._to_dtype(c32) if isinstance(a, _TensorBase) else _C.full((), a, dtype=c32)
    o = view_as_real(out) if out is not None else None
    r = _binary("add", view_as_real(a), view_as_real(t), o, f16, f16, fname, inplace)
    return out if out is not None else r.view(c32).squeeze(-1)


def sub(input, other, *deprecated, alpha=1, out=None):
    """``input - alpha * other`` (also in torch's deprecated order ``sub(input, alpha, other)``)."""
    if deprecated:
        (other,), alpha = _scalar_first("sub", other, deprecated, ("other",), "alpha", alpha)
    input, other = _operands("sub", input, other, _SCALARS_TWO)
    dt = _result_type(input, other)
    return _add_impl(input, other, alpha, out, dt, "sub", False, negate=True)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    if not isinstance(input, _TensorBase):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    dt = _result_type(input, other)
    if isinstance(other, _TensorBase) or True:
        return _add_impl(other, input, alpha, None, dt, "rsub", False, negate=True)


def add_(self, other, *deprecated, alpha=1):
    if deprecated:
        (other,), alpha = _scalar_first("add_", other, deprecated, ("other",), "alpha", alpha)
    if type(alpha) is int and alpha == 1:
        r = _fast_inplace(_B_ADD, self, other)
        if r is not None:
            return r
    dt = _result_type(self, other)
    _check_inplace_result(self, dt, other)
    return _add_impl(self, other, alpha, self, dt, "add_", True)


def sub_(self, other, *deprecated, alpha=1):
    if deprecated:
        (other,), alpha = _scalar_first("sub_", other, deprecated, ("other",), "alpha", alpha)
    if type(alpha) is int and alpha == 1:
        r = _fast_inplace(_B_SUB, self, other)
        if r is not None:
            return r
    dt = _result_type(self, other)
    _sub_check(self, other)
    _check_inplace_result(self, dt, other)
    return _add_impl(self, other, alpha, self, dt, "sub_", True, negate=True)


subtract = sub
subtract_ = sub_
for _f in (add, sub, rsub):
    _export(_f)
__all__ += ["subtract"]


_KERNEL_NAMES = {"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}


def _refuse_dtype(a, b, exc):
    """Raise ``exc`` (an op refusing its computation dtype), unless the operands do not
    broadcast: torch's TensorIterator compares the shapes before a kernel looks at the dtype,
    so a shape mismatch is the RuntimeError a user sees first."""
    if isinstance(a, _TensorBase) and isinstance(b, _TensorBase) and a.shape != b.shape:
        _D_broadcast(a.shape, b.shape)
    raise exc


def _arith(name, op=None, float_result=False, int_only=False, float_only=False, bool_ok=True,
           complex_ok=True, doc=None, scalars=_SCALARS_BOTH, int_ok=True, swap_bf16=False, lowp=None):
    """A binary op with result_type promotion (and int -> float when asked);
    ``lowp(a, b, out, dtype, fname, inplace)`` replaces the kernel for
    float16/bfloat16 results."""
    op = op or name
    kname = _KERNEL_NAMES.get(name, name)      # PyTorch's kernel name in its errors

    def dtypes(a, b):
        dt = _result_type(a, b)
        if int_only and dt._category >= _FLOAT_CAT:
            _refuse_dtype(a, b, NotImplementedError(
                f"\"{kname}_cpu\" not implemented for '{_name(dt)}'"))
        if float_only and dt._category != _FLOAT_CAT:
            if dt._category < _FLOAT_CAT and int_ok:
                dt = _default_float()
            else:
                _refuse_dtype(a, b, NotImplementedError(
                    f"\"{kname}_cpu\" not implemented for '{_name(dt)}'"))
        if dt is _C.bool_ and not bool_ok:
            _refuse_dtype(a, b, NotImplementedError(f"\"{kname}_cpu\" not implemented for 'Bool'"))
        if dt.is_complex and not complex_ok:
            if name in ("maximum", "minimum", "fmax", "fmin"):
                _refuse_dtype(a, b, RuntimeError(f"{name} not implemented for complex tensors."))
            _refuse_dtype(a, b, NotImplementedError(
                f"\"{kname}_cpu\" not implemented for '{_name(dt)}'"))
        if float_result:
            dt = _to_float_dtype(dt)
        if name == "mul" and dt in _FLOAT8 and (not isinstance(b, _TensorBase) or b.dim() == 0):
            # (torch multiplies float8 tensors, but a scalar second operand takes its
            # reduced-float scalar kernel, which has no float8)
            raise NotImplementedError(f"\"{kname}_cpu_reduced_float\" not implemented for "
                                      f"'{_name(dt)}'")
        return dt

    fast_code = None if int_only else _B.get(op)

    def fn(input, other, *, out=None):
        if out is None and fast_code is not None and isinstance(input, _TensorBase) \
                and isinstance(other, _TensorBase) and input.dtype is other.dtype \
                and (input.dtype is _C.float32 or input.dtype is _C.float64) \
                and _in_host_memory(input) and _in_host_memory(other):
            # two CPU tensors of one float32/float64 dtype: the result has it,
            # no check below can fail; the driver's fast path (contiguous
            # operands of one shape in a flat loop, else the broadcast loop)
            r = _fast_binary(fast_code, input, other, True)
            if r is not None:
                return r
        input, other = _operands(name, input, other, scalars)
        if isinstance(out, _TensorBase):
            _check_written(out, input, other)      # (torch's TensorIterator: memory first)
            # torch checks the out's dtype against the common dtype before
            # the kernel's dtype support (bitwise_and of floats into an int out
            # is the cast error, not "not implemented")
            cdt = _result_type(input, other)
            if not _can_cast_py(cdt, out.dtype):
                raise RuntimeError(f"result type {_name(cdt)} can't be cast to the desired "
                                   f"output type {_name(out.dtype)}")
        dt = dtypes(input, other)
        if lowp is not None and (dt is _C.float16 or dt is _C.bfloat16):
            return lowp(input, other, out, dt, name, False)
        if swap_bf16 and dt is _C.bfloat16:
            return _binary(op, other, input, out, dt, dt, name)
        return _binary(op, input, other, out, dt, dt, name)

    opi = _B.get(op) if name in _FAST_INPLACE else None

    def fn_(self, other):
        if opi is not None:
            r = _fast_inplace(opi, self, other)
            if r is not None:
                return r
        if scalars == _SCALARS_NONE:
            _other_tensor(name + "_", other)
        _check_inplace_result(self, _result_type(self, other), other)
        dt = dtypes(self, other)
        if lowp is not None and (dt is _C.float16 or dt is _C.bfloat16):
            return lowp(self, other, self, dt, name + "_", True)
        if swap_bf16 and dt is _C.bfloat16:
            return _binary(op, other, self, self, dt, dt, name + "_", True)
        return _binary(op, self, other, self, dt, dt, name + "_", True)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise ``{name}`` with broadcasting and type promotion."
    fn_.__name__ = name + "_"
    _export(fn)
    globals()[name + "_"] = fn_
    return fn


_arith("mul", doc="``input * other``.", scalars=_SCALARS_TWO)
multiply = mul  # noqa: F821
multiply_ = mul_  # noqa: F821
__all__.append("multiply")
_arith("maximum", complex_ok=False, scalars=_SCALARS_NONE)
_arith("minimum", complex_ok=False, scalars=_SCALARS_NONE)
# fmax/fmin of equal values (+0 and -0) give the first operand, but the second
# for bfloat16, as PyTorch's CPU kernels
_arith("fmax", complex_ok=False, scalars=_SCALARS_NONE, swap_bf16=True)
_arith("fmin", complex_ok=False, scalars=_SCALARS_NONE, swap_bf16=True)
_arith("remainder", bool_ok=False, complex_ok=False)
_arith("fmod", bool_ok=False, complex_ok=False, scalars=_SCALARS_SECOND)
_arith("bitwise_and", int_only=True)
_arith("bitwise_or", int_only=True)
_arith("bitwise_xor", int_only=True)
_arith("bitwise_left_shift", op="left_shift", int_only=True, bool_ok=False)
_arith("bitwise_right_shift", op="right_shift", int_only=True, bool_ok=False)
_arith("atan2", float_only=True, scalars=_SCALARS_NONE)
_arith("hypot", float_only=True, scalars=_SCALARS_NONE, int_ok=False)
_arith("copysign", float_only=True, scalars=_SCALARS_SECOND)
_arith("nextafter", float_only=True, scalars=_SCALARS_NONE, int_ok=False)
_nextafter_kernel = nextafter  # noqa: F821
_nextafter_kernel_ = nextafter_  # noqa: F821


def _nextafter16(x, y, dt):
    """nextafter for float16/bfloat16, stepping their own bit patterns
    (the float32 kernel would step float32's)."""
    x, y = x.to(dt), y.to(dt)
    shape = _D_broadcast(x.shape, y.shape)
    x, y = x.expand(shape), y.expand(shape)
    xf, yf = x.to(_C.float32), y.to(_C.float32)
    u = bitwise_and(x.view(_C.int16).to(_C.int32), 0xFFFF)  # noqa: F821
    up = eq(gt(yf, xf), gt(xf, 0))  # noqa: F821 -- magnitude grows
    step = where(up, add(u, 1), sub(u, 1))
    tiny = where(signbit(yf), 0x8001, 1)  # noqa: F821 -- smallest subnormal towards y
    bits = where(eq(xf, 0), tiny, step)  # noqa: F821
    r = bits.to(_C.int16).view(dt)
    r = where(eq(xf, yf), y, r)  # noqa: F821
    return where(logical_or(isnan(xf), isnan(yf)), add(x, y), r)  # noqa: F821


def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` towards ``other``."""
    input, other = _operands("nextafter", input, other, _SCALARS_NONE)
    dt = _result_type(input, other)
    if dt is _C.float16 or dt is _C.bfloat16:
        r = _nextafter16(input, other, dt)
        if out is not None and not _can_cast_py(dt, out.dtype):
            raise RuntimeError(f"result type {_name(dt)} can't be cast to the desired output type {_name(out.dtype)}")
        return r if out is None else _copy_out(out, r)
    return _nextafter_kernel(input, other, out=out)


def nextafter_(self, other):
    _other_tensor("nextafter_", other)
    dt = _result_type(self, other)
    if (dt is _C.float16 or dt is _C.bfloat16) and self.dtype is dt:
        return self.copy_(_nextafter16(self, other, dt))
    return _nextafter_kernel_(self, other)


_export(nextafter)
__all__.remove("nextafter")     # ptcore.nextafter: the composite's; these are the methods
_method_form("nextafter", nextafter)
_method_form("nextafter_", nextafter_)
def _scalar_value(v):
    return float(v) if isinstance(v, builtins.int) and not -2 ** 63 <= v < 2 ** 63 else v


def _xlogy_lowp(a, b, out, dt, fname, inplace):
    # PyTorch's Half/BFloat16 xlogy: log(y) rounded to the dtype, then x * it;
    # NaN where y is NaN, else 0 where x == 0
    _big_int_check(a, b)
    # (a number operand as a double first: an int past int64, which torch
    # takes as a uint64 scalar, does not fit C's long long)
    a = a if isinstance(a, _TensorBase) else _C.full((), _scalar_value(a), dtype=dt)
    b = b if isinstance(b, _TensorBase) else _C.full((), _scalar_value(b), dtype=dt)
    prod = _binary("mul", a, _unary("log", b, None, dt, dt, fname), None, dt, dt, fname)
    r = where(b != b, _C.full((), float("nan"), dtype=dt),  # noqa: F821
              where(a == 0, _C.zeros((), dtype=dt), prod))  # noqa: F821
    if out is None:
        return r
    return _binary("mul", r, 1, out, dt, dt, fname, inplace)


_arith("xlogy", float_only=True, lowp=_xlogy_lowp)
arctan2 = atan2  # noqa: F821
__all__.append("arctan2")


def div(input, other, *, rounding_mode=None, out=None):
    """True division (integers promote to float), or ``rounding_mode`` 'trunc'/'floor'."""
    input, other = _operands("div", input, other, _SCALARS_TWO)
    return _div_impl(input, other, rounding_mode, out, False)


def _div_impl(a, b, rounding_mode, out, inplace):
    dt = _result_type(a, b)
    fname = "div_" if inplace else "div"
    if rounding_mode is None:
        dt = _to_float_dtype(dt)
        if inplace:
            _check_inplace_result(a, dt, b)
        _chalf_check(dt, a, b, "div_cpu")
        return _binary("div", a, b, out, dt, dt, fname, inplace)
    if isinstance(rounding_mode, (bytes, bytearray)):
        rounding_mode = rounding_mode.decode()      # (torch's parser takes bytes as a str)
    if not isinstance(rounding_mode, str):
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"rounding_mode={type(rounding_mode).__name__}: rounding_mode must be "
                        f"str or None")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if inplace:
        _check_inplace_result(a, dt, b)
    if dt.is_complex or dt is _C.bool_:
        _refuse_dtype(a, b, NotImplementedError(
            f"\"div_{rounding_mode}_cpu\" not implemented for '{_name(dt)}'"))
    if rounding_mode == "trunc" and (dt is _C.float16 or dt is _C.bfloat16) \
            and isinstance(b, _TensorBase) and b.dim() > 0:
        # PyTorch truncates the quotient rounded to the 16-bit type (a scalar
        # divisor instead takes the float32 path of the kernel)
        q = _binary("div", a, b, None, dt, dt, "div")
        return _unary("trunc", q, out, dt, dt, fname, inplace)
    return _binary("div_" + rounding_mode, a, b, out, dt, dt, fname, inplace)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        r = _fast_inplace(_B_DIV, self, other)
        if r is not None:
            return r
    return _div_impl(self, other, rounding_mode, self, True)


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


def floor_divide(input, other, *, out=None):
    """Division rounded toward negative infinity."""
    input, other = _operands("floor_divide", input, other, _SCALARS_TWO)
    return _div_impl(input, other, "floor", out, False)


def floor_divide_(self, other):
    return _div_impl(self, other, "floor", self, True)


divide = div
divide_ = div_
true_divide_ = div_
for _f in (div, true_divide, floor_divide):
    _export(_f)
__all__.append("divide")


def pow(input, exponent, *, out=None):
    """``input ** exponent`` (integer bases with negative integer exponents raise)."""
    if out is None and (type(exponent) is int or type(exponent) is float) and exponent == 2 \
            and isinstance(input, _TensorBase) and input.dtype in _POW_SPECIAL_DTYPES:
        # x ** 2 is x * x (torch's, see _pow_scalar_special): the operators' one-call path
        # for contiguous CPU operands (the autograd body records the result itself)
        r = _D.fast_binary(_B_MUL, input, input, True)
        if r is not None:
            return r
    if out is None and (type(exponent) is int or type(exponent) is float) and exponent == 3 \
            and isinstance(input, _TensorBase) and \
            (input.dtype is _C.float32 or input.dtype is _C.float64):
        r = _fast_unary(_U_CUBE, input)       # x * x * x (contiguous CPU operands)
        if r is not None:
            return r
    if not isinstance(input, _TensorBase):
        if _is_number(input) and isinstance(exponent, _TensorBase):
            dt = _result_type(input, exponent)
            if not isinstance(input, (builtins.bool, _np.bool_)) and input == 1:
                # torch fills ones before looking for a kernel (uint16 too) and
                # before checking that the result type casts to out's
                if out is None:
                    return _C.ones(exponent.shape, dtype=dt, device=exponent.device)
                return _resize_out(out, exponent.shape).fill_(1)
            if dt is _C.bool_:
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            _chalf_check(dt, input, exponent, "pow")
            r = _binary("pow", input, exponent, out, dt, dt, "pow")
            # torch allocates this overload's result contiguous, whatever the
            # exponent's layout (2 ** x.t() is row-major)
            return r if out is not None else r.contiguous()
        raise TypeError(f"pow(): argument 'input' must be Tensor, not {type(input).__name__}")
    return _pow_impl(input, exponent, out, False)


_POW_SPECIAL_DTYPES = (_C.float32, _C.float64, _C.bfloat16, _C.complex64, _C.complex128)


def _pow_scalar_special(a, e, out, dt, fname, inplace):
    """PyTorch's pow with a scalar exponent: 0 fills ones and 1 copies (every
    dtype); 0.5/-0.5/-1 are sqrt/rsqrt/reciprocal and 2/3/-2 products
    (x*x, x*x*x, 1/(x*x), rounded per step) for float32/float64/bfloat16
    and complex.  None when the plain pow kernel applies."""
    if isinstance(e, builtins.bool) or not isinstance(a, _TensorBase):
        return None
    if e == 0 or e == 1:
        if out is not None:
            if e == 0 and dt.is_complex and out.dtype is dt:
                # the complex kernel's 0 ** 0 is nan; torch fills ones (pow_(0) too)
                return _resize_out(out, a.shape).fill_(1)
            return None              # the kernel gives the same values
        return _C.ones(a.shape, dtype=dt) if e == 0 else a._to_dtype(dt, True)
    if dt not in _POW_SPECIAL_DTYPES:
        return None
    if e == 0.5:
        return _unary("sqrt", a, out, dt, dt, fname, inplace)
    if e == -0.5:
        return _unary("rsqrt", a, out, dt, dt, fname, inplace)
    if e == -1:
        return _unary("reciprocal", a, out, dt, dt, fname, inplace)
    if e == 2:
        return _binary("mul", a, a, out, dt, dt, fname, inplace)
    if e == 3:
        # (pow's front end takes a contiguous float32/float64 CPU operand through
        # the one-pass loop "cube", the same two roundings)
        return _binary("mul", _binary("mul", a, a, None, dt, dt, fname), a, out, dt, dt, fname, inplace)
    if e == -2:
        return _unary("reciprocal", _binary("mul", a, a, None, dt, dt, fname), out, dt, dt, fname,
                      inplace)
    return None


def _real_exponent(e):
    """A number exponent as torch's Scalar comparisons see it: a complex with
    a zero imaginary part compares equal to its real part (z ** 0j is 1)."""
    if isinstance(e, builtins.complex):
        return e.real if e.imag == 0 else None
    return e


def _pow_impl(a, e, out, inplace):
    dt = _result_type(a, e)
    if _is_number(e) and not isinstance(e, (builtins.bool, builtins.complex)):
        # torch converts the exponent to the tensor's type with an overflow
        # check (int8 ** 255, float16 ** 1e10 raise); float32 and wider take
        # it as a double
        if isinstance(e, numbers.Integral) and not (dt is _C.float16 or dt is _C.bfloat16):
            if not (dt._category < _FLOAT_CAT and e < 0) and dt not in _LIMITED_UINTS:
                _scalar_fits(e, dt)
        elif dt is _C.float16 or dt is _C.bfloat16:         # (float16 ** 65520 too)
            _big_int_check(e)
            _C._checked_scalar(float(e), dt)
    if _is_number(e) and _real_exponent(e) is not None and dt._category >= _FLOAT_CAT:
        r = _pow_scalar_special(a, _real_exponent(e), out, dt, "pow_" if inplace else "pow", inplace)
        if r is not None:
            return r
    if inplace:
        _check_inplace_result(a, dt, e)
    elif out is not None and not _can_cast_py(dt, out.dtype):
        # checked before the kernel lookup, as torch (uint16 ** 2 into a bool out)
        raise RuntimeError(f"result type {_name(dt)} can't be cast to the desired output type "
                           f"{_name(out.dtype)}")
    if dt in _LIMITED_UINTS and isinstance(e, numbers.Integral) and e in (0, 1):
        return _pow_uint_fill_or_copy(a, e, out, dt)
    _chalf_check(dt, a, e, "pow")
    if dt._category < _FLOAT_CAT and _is_number(e) and not isinstance(e, builtins.bool) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dt is _C.bool_:
        # bool ** bool exists only with a Python bool exponent (x ** True == x)
        if not isinstance(e, builtins.bool):
            _refuse_dtype(a, e, NotImplementedError("\"pow\" not implemented for 'Bool'"))
        return _binary("pow", a, e, out, _C.uint8, _C.bool_, "pow_" if inplace else "pow", inplace)
    return _binary("pow", a, e, out, dt, dt, "pow_" if inplace else "pow", inplace)


_LIMITED_UINTS = (_C.uint16, _C.uint32, _C.uint64)


def _pow_uint_fill_or_copy(a, e, out, dt):
    """uint16/32/64 ``** 0`` and ``** 1`` (or False/True): torch's pow fills
    ones or copies the base before looking for a kernel, which these dtypes
    lack, so those two exponents work on them."""
    r = _C.ones(a.shape, dtype=dt, device=a.device) if e == 0 else a._to_dtype(dt, True)
    if out is None:
        return r
    return out if (out is a and e == 1) else _copy_out(out, r)


def pow_(self, exponent):
    return _pow_impl(self, exponent, self, True)


def float_power(input, exponent, *, out=None):
    """Power computed in double precision (float64 or complex128 result)."""
    if not isinstance(input, _TensorBase) and not isinstance(exponent, _TensorBase):
        # torch's overloads (Tensor, Tensor), (Number, Tensor), (Tensor, Number)
        raise TypeError(f"float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected one "
                        f"of: (Tensor input, Tensor exponent), (Number self, Tensor exponent), "
                        f"(Tensor input, Number exponent)")
    cplx = (isinstance(input, _TensorBase) and input.dtype.is_complex) or \
        (isinstance(exponent, _TensorBase) and exponent.dtype.is_complex) or \
        isinstance(input, builtins.complex) or isinstance(exponent, builtins.complex)
    dt = _C.complex128 if cplx else _C.float64
    if isinstance(out, _TensorBase) and out.dtype is not dt:
        # torch: the out= of float_power must be exactly its double result type
        raise RuntimeError(f"the output given to float_power has dtype {_name(out.dtype)} but the "
                           f"operation's result requires dtype {_name(dt)}")
    if _is_number(exponent) and _real_exponent(exponent) is not None:
        # a scalar exponent takes pow's special cases (0 -> ones, also for 0 ** 0 of complex)
        r = _pow_scalar_special(input, _real_exponent(exponent), out, dt, "float_power", False)
        if r is not None:
            return r
    return _binary("pow", input, exponent, out, dt, dt, "float_power")


def float_power_(self, exponent):
    dt = self.dtype
    # the result type is complex128 when either operand is complex (a float64
    # base with a complex exponent is refused, not truncated), else float64
    cplx = dt.is_complex or isinstance(exponent, builtins.complex) or (
        isinstance(exponent, _TensorBase) and exponent.dtype.is_complex)
    want = _C.complex128 if cplx else _C.float64
    if dt is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {_name(dt)} but the "
                           f"operation's result requires dtype {_name(want)}")
    return _binary("pow", self, exponent, self, dt, dt, "float_power_", True)


_export(pow)
_export(float_power)


def _compare(name, op=None):
    op = op or name

    def fn(input, other, *, out=None):
        input, other = _operands(name, input, other, _SCALARS_SECOND)
        dt = _result_type(input, other)
        if dt.is_complex and op not in ("eq", "ne"):
            _refuse_dtype(input, other, NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_name(dt)}'"))
        return _binary(op, input, other, out, dt, _C.bool_ if out is None else out.dtype, name)

    def fn_(self, other):
        _check_inplace_shape(self, (other,))    # before the dtype support, as torch
        dt = _result_type(self, other)
        return _binary(op, self, other, self, dt, self.dtype, name + "_", True)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` comparison (bool result)."
    fn_.__name__ = name + "_"
    _export(fn)
    globals()[name + "_"] = fn_
    return fn


for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    _compare(_n)
for _alias, _n in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                   ("less_equal", "le"), ("not_equal", "ne")):
    globals()[_alias] = globals()[_n]
    globals()[_alias + "_"] = globals()[_n + "_"]
    __all__.append(_alias)


def _logical(name):
    def fn(input, other, *, out=None):
        input, other = _operands(name, input, other, _SCALARS_NONE)
        dt = _result_type(input, other)
        _chalf_check(dt, input, other, name + "_cpu")
        return _binary(name, input, other, out, dt, _C.bool_ if out is None else out.dtype, name)

    def fn_(self, other):
        _other_tensor(name + "_", other)
        _check_inplace_shape(self, (other,))    # before the dtype support, as torch
        dt = _result_type(self, other)
        return _binary(name, self, other, self, dt, self.dtype, name + "_", True)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (nonzero is True; bool result)."
    _export(fn)
    globals()[name + "_"] = fn_
    return fn


for _n in ("logical_and", "logical_or", "logical_xor"):
    _logical(_n)


# ---------------------------------------------------------------------------
# ternary
# ---------------------------------------------------------------------------

def _ternary(op, a, b, c, out, compute, result, fname, inplace=False, d0=0.0, d1=0.0, i0=0):
    dev = _device_of(a, b, c, out)
    k = _device_loop(_EW_TERNARY, fname, dev)
    if k is not None:
        return k(op, a, b, c, out, compute, result, fname, inplace, d0, d1, i0)
    return _D.run_ternary(_T[op], a, b, c, out, compute, result, fname, inplace, d0, d1, i0)


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` else ``other`` (one-argument form: nonzero indices)."""
    if out is None:
        # the common call (contiguous CPU operands of one shape, a number
        # that keeps the tensor's dtype): the kernel directly
        r = _D.fast_where(condition, input, other)
        if r is not None:
            return r
    if input is None and other is None:
        if out is not None:
            raise TypeError("where() received an invalid combination of arguments - got (Tensor, "
                            "out=Tensor), but expected (Tensor condition) or (Tensor condition, "
                            "Tensor input, Tensor other, *, Tensor out)")
        return _op_entry("nonzero")(condition, as_tuple=True)
    _big_int_check(other, input)  # torch's C++ converts the arguments last to first
    if not isinstance(condition, _TensorBase):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}")
    if out is not None:
        # torch's where.self_out takes tensors only
        for pos, (arg, v) in enumerate((("input", input), ("other", other)), 2):
            if not isinstance(v, _TensorBase):
                raise TypeError(f"where(): argument '{arg}' (position {pos}) must be Tensor, "
                                f"not {type(v).__name__}")
    if condition.dtype is not _C.bool_:
        if condition.dtype is _C.uint8:
            warn_once("where_uint8", "where received a uint8 condition tensor. This behavior is "
                      "deprecated and will be removed in a future version of PyTorch. Use a "
                      "boolean condition instead.")
            condition = condition.to(_C.bool_)
        else:
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype {_name(condition.dtype)}")
    if not isinstance(input, _TensorBase) and not isinstance(other, _TensorBase):
        dt = _result_type(input, other)
        if isinstance(input, builtins.float) or isinstance(other, builtins.float):
            dt = _to_float_dtype(dt)
    else:
        dt = _result_type(input, other)
    if dt is not _C.float16 and dt is not _C.bfloat16:
        for v in (input, other):
            if not isinstance(v, _TensorBase):
                # PyTorch's range check of the scalar (where(c, int8, 200) and
                # where(c, float32, 1e39) raise; float16/bfloat16 take inf)
                _C._checked_scalar(v, dt)
    if isinstance(out, _TensorBase) and out.dtype is not dt:
        raise RuntimeError(f"Expected out type to be {_name(dt)} but got {_name(out.dtype)}")
    return _ternary("where", input, other, condition, out, dt, dt, "where")


def _where_method(self, condition, other):
    return where(condition, self, other)


_where_method.__name__ = "where"       # the name __torch_function__ sees, as torch's

_export(where)
_method_form("where", _where_method)


def clamp(input, min=None, max=None, *, out=None):
    """Limit values to ``[min, max]`` (scalars or tensors; NaN stays NaN)."""
    if out is None:
        # the common call (a contiguous float32/float64 CPU tensor, number
        # bounds): the kernel directly, the result in the tensor's dtype
        r = _D.fast_clamp(input, min, max)
        if r is not None:
            return r
    _check_tensor(input, "clamp")
    return _clamp_impl(input, min, max, out, False)




def _scalar_fits(v, dt):
    """PyTorch's check that a Python scalar converts to ``dt`` without overflow."""
    if isinstance(v, builtins.complex) and not dt.is_complex:
        # c10::overflows: a complex converts to a real type when its
        # imaginary part is zero
        ok = v.imag == 0
    elif dt._category < _FLOAT_CAT and dt is not _C.bool_ and isinstance(v, numbers.Integral) \
            and not isinstance(v, builtins.bool):
        hi = _int_max(dt)
        # c10::overflows: an unsigned type also takes negatives down to -max
        ok = (-hi if _int_min(dt) == 0 else _int_min(dt)) <= v <= hi
    else:
        ok = True
    if not ok:
        raise _C._overflow_exception(dt)


_BOUND_TYPES = (builtins.float, builtins.int, type(None))


def _clamp_impl(x, lo, hi, out, inplace):
    if lo is not None and hi is not None and isinstance(lo, _TensorBase) != isinstance(hi, _TensorBase):
        # not the all-tensor overload: torch's (Number min, Number max) one, which
        # takes a 0-d tensor without grad as its value
        lo, hi = number_arg(lo), number_arg(hi)
    _big_int_check(hi, lo)  # torch's C++ converts the arguments last to first
    if out is None and not inplace and type(lo) in _BOUND_TYPES and type(hi) in _BOUND_TYPES \
            and isinstance(x, _TensorBase) and _in_host_memory(x) and x.dtype._category == _FLOAT_CAT \
            and (lo is not None or hi is not None):
        # the common call (a floating CPU tensor, Python-number bounds): the
        # tensor's dtype is the result's; PyTorch's range check of the bounds
        for v in (lo, hi):
            if v is not None:
                _C._checked_scalar(v, x.dtype)
        return _D.run_ternary(_T["clamp"], x, -math.inf if lo is None else lo,
                              math.inf if hi is None else hi, None, x.dtype, x.dtype, "clamp")
    lo_t, hi_t = isinstance(lo, _TensorBase), isinstance(hi, _TensorBase)
    if isinstance(x, _TensorBase) and x.dtype.is_floating_point:
        # torch converts complex number bounds of a real float tensor to double
        lo, hi = (_real_bound(v) for v in (lo, hi))
    if lo is None:
        if hi is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        dt = _result_type(x, hi)
    elif hi is None:
        dt = _result_type(x, lo)
    else:
        if lo_t != hi_t:
            raise TypeError(
                "clamp() received an invalid combination of arguments - got (Tensor, "
                f"{'Tensor' if lo_t else type(lo).__name__}, {'Tensor' if hi_t else type(hi).__name__}), "
                "but expected one of: (Tensor input, Tensor min = None, Tensor max = None) or "
                "(Tensor input, Number min = None, Number max = None)")
        dt = _result_type(x, lo, hi)
    if inplace:
        _check_inplace_result(x, dt, lo, hi)
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    scalar_bounds = not (lo_t or hi_t)
    if lo_t and hi_t and dt is _C.bool_:
        # torch's clamp.Tensor kernel has no bool (clamp_min/clamp_max do)
        raise NotImplementedError("\"clamp_cpu\" not implemented for 'Bool'")
    if scalar_bounds and dt._category < _FLOAT_CAT:
        if dt is _C.bool_:
            kname = "clamp_scalar_cpu" if lo is not None and hi is not None else \
                ("clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu")
            raise NotImplementedError(f"\"{kname}\" not implemented for 'Bool'")
        for v in (lo, hi):
            if v is not None:
                _scalar_fits(v, dt)
    elif scalar_bounds:
        for v in (lo, hi):
            if v is not None:
                _C._checked_scalar(v, dt)      # PyTorch's range check (1e39 for float32)
    if out is not None and not inplace and isinstance(out, _TensorBase) and out.dtype is not dt:
        if scalar_bounds:       # torch's clamp.Scalar out: exactly the result dtype
            raise RuntimeError(f"Found dtype {_name(out.dtype)} but expected {_name(dt)}")
        if not _can_cast_py(dt, out.dtype):     # clamp.Tensor: a TensorIterator op, it casts
            raise RuntimeError(f"result type {_name(dt)} can't be cast to the desired output "
                               f"type {_name(out.dtype)}")
    if inplace:
        dt_res = x.dtype
        if dt_res is not dt and not _can_cast_py(dt, dt_res):
            raise RuntimeError(f"result type {_name(dt)} can't be cast to the desired output type {_name(dt_res)}")
    else:
        dt_res = dt
    if lo is None:
        lo = -math.inf if dt._category >= _FLOAT_CAT else (False if dt is _C.bool_ else _int_min(dt))
    if hi is None:
        hi = math.inf if dt._category >= _FLOAT_CAT else (True if dt is _C.bool_ else _int_max(dt))
    return _ternary("clamp", x, lo, hi, out, dt, dt_res if out is None else out.dtype,
                    "clamp_" if inplace else "clamp", inplace)


def _real_bound(v):
    if isinstance(v, builtins.complex):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return v.real
    return v


def _check_inplace_result(self, dt, *operands):
    """torch's in-place checks, in its order and before any dtype support
    check: self's memory (no element written twice, each operand all of it or
    none), the tensor ``operands`` broadcast to self's shape, then the promoted
    result type ``dt`` casts to self's dtype."""
    _check_written(self, *operands)
    _check_inplace_shape(self, operands)
    if dt is not self.dtype and not _can_cast_py(dt, self.dtype):
        raise RuntimeError(f"result type {_name(dt)} can't be cast to the desired output type "
                           f"{_name(self.dtype)}")


def _can_cast_py(frm, to):
    if frm.is_complex and not to.is_complex:
        return False
    if frm._category >= _FLOAT_CAT and to._category < _FLOAT_CAT:
        return False
    if frm._category > 0 and to is _C.bool_:
        return False
    return True


def _int_min(dt):
    return 0 if dt._category == 0 else iinfo(dt).min


def _int_max(dt):
    return 1 if dt._category == 0 else iinfo(dt).max


def clamp_(self, min=None, max=None):
    return _clamp_impl(self, min, max, self, True)


def clamp_min(input, min, *, out=None):
    if out is None:
        r = _D.fast_clamp(input, min, None)     # (clamp's common call, without its entry)
        if r is not None:
            return r
    return clamp(input, min=min, out=out)


def clamp_max(input, max, *, out=None):
    if out is None:
        r = _D.fast_clamp(input, None, max)
        if r is not None:
            return r
    return clamp(input, max=max, out=out)


clip = clamp
clip_ = clamp_
_export(clamp)
_export(clamp_min)
_export(clamp_max)
__all__.append("clip")
_method_form("clamp_min_", lambda self, min: clamp_(self, min=min))
_method_form("clamp_max_", lambda self, max: clamp_(self, max=max))


def _lerp_check(input, end, weight):
    _check_tensor(input, "lerp")
    _check_tensor(end, "lerp", "end")
    dt = input.dtype
    if end.dtype is not dt:
        raise RuntimeError(f"expected dtype {_C._scalar_cpp_name(dt)} for `end` but got dtype "
                           f"{_C._scalar_cpp_name(end.dtype)}")
    if isinstance(weight, _TensorBase):
        if weight.dim() > 0 and weight.dtype is not dt:
            raise RuntimeError(f"expected dtype {_C._scalar_cpp_name(dt)} for `weight` but got dtype "
                               f"{_C._scalar_cpp_name(weight.dtype)}")
        if weight.dim() == 0:
            # a 0-d weight takes part in type promotion
            dt = _result_type(input, end, weight)
            if dt._category < _FLOAT_CAT:
                raise NotImplementedError(f"\"lerp_kernel_tensor\" not implemented for '{_name(dt)}'")
    elif not _is_number(weight):
        raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not {type(weight).__name__}")
    if dt._category < _FLOAT_CAT:
        kname = "lerp_kernel_tensor" if isinstance(weight, _TensorBase) else "lerp_kernel_scalar"
        _refuse_dtype(input, end, NotImplementedError(f"\"{kname}\" not implemented for '{_name(dt)}'"))
    if isinstance(weight, builtins.complex) and not dt.is_complex:
        _scalar_fits(weight, dt)  # raises as PyTorch
    return dt


_T_LERP = _T["lerp"]


def _lerp_dtype(input, end, weight):
    # common case first: float tensors of one dtype and a float weight
    if type(weight) is float and isinstance(input, _TensorBase) and isinstance(end, _TensorBase):
        dt = input.dtype
        if end.dtype is dt and dt._category == _FLOAT_CAT:
            return dt
    return _lerp_check(input, end, weight)


def _lerp_weight_check(weight, dt):
    """torch's conversion of a number weight: an int past (u)int64 is an
    OverflowError, a float past float32's range a RuntimeError for the
    float32/float16/bfloat16 kernels (their opmath type is float)."""
    if isinstance(weight, builtins.int):
        _big_int_check(weight)
    if isinstance(weight, (builtins.int, builtins.float)) and not -3.4e38 <= weight <= 3.4e38 \
            and (dt is _C.float32 or dt is _C.float16 or dt is _C.bfloat16):
        _C._checked_scalar(float(weight), _C.float32)


def _lerp_weight(weight, dt):
    """A 0-d tensor weight of a wider float dtype is cast to a float16/bfloat16 lerp's
    dtype first, as torch's iterator does (a number weight stays in float32 opmath)."""
    if isinstance(weight, _TensorBase) and weight.dim() == 0 and weight.dtype is not dt \
            and (dt is _C.float16 or dt is _C.bfloat16):
        return weight._to_dtype(dt)
    return weight


def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``."""
    if out is None and type(weight) is float and -3.4e38 <= weight <= 3.4e38:
        # a number weight in float's range and CPU tensors of one float32/float64
        # dtype: no check below can fail, the kernel at once (contiguous operands of
        # one shape in a flat loop, else the broadcast loop)
        r = _D.fast_lerp(input, end, weight)
        if r is not None:
            return r
        if isinstance(input, _TensorBase) and isinstance(end, _TensorBase) \
                and input.dtype is end.dtype and (input.dtype is _C.float32 or
                                                  input.dtype is _C.float64) \
                and _in_host_memory(input) and _in_host_memory(end):
            dt = input.dtype
            return _D.run_ternary(_T_LERP, input, end, weight, None, dt, dt, "lerp")
    dt = _lerp_dtype(input, end, weight)
    _lerp_weight_check(weight, dt)
    weight = _lerp_weight(weight, dt)
    if isinstance(out, _TensorBase) and out.dtype is not dt and isinstance(weight, _TensorBase) \
            and weight.dim() > 0:
        # torch's lerp.Tensor iterator checks all dtypes the same (a number or 0-d weight casts)
        raise RuntimeError(f"Found dtype {_name(out.dtype)} but expected {_name(dt)}")
    return _ternary("lerp", input, end, weight, out, dt, dt, "lerp")


def lerp_(self, end, weight):
    if isinstance(self, _TensorBase):
        _check_inplace_result(self, self.dtype, end, weight)
    dt = _lerp_dtype(self, end, weight)
    _lerp_weight_check(weight, dt)
    return _ternary("lerp", self, end, _lerp_weight(weight, dt), self, dt, dt, "lerp_", True)


def addcmul(input, tensor1, tensor2, *deprecated, value=1, out=None):
    """``input + value * tensor1 * tensor2`` (also in torch's deprecated order
    ``addcmul(input, value, tensor1, tensor2)``)."""
    if deprecated:
        (tensor1, tensor2), value = _scalar_first("addcmul", tensor1, (tensor2,) + deprecated,
                                                  ("tensor1", "tensor2"), "value", value)
    dt = _result_type(input, tensor1, tensor2)
    return _addc("addcmul", input, tensor1, tensor2, value, out, dt, False)


def _check_addcdiv_operands(tensor1, tensor2):
    # torch refuses when both divided operands are integral (bool included),
    # whatever input's dtype
    if all(isinstance(t, _TensorBase) and t.dtype._category < _FLOAT_CAT for t in (tensor1, tensor2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv "
            "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
            "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
            "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
            "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
            "for all dtypes.")


def addcdiv(input, tensor1, tensor2, *deprecated, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (also in torch's deprecated order
    ``addcdiv(input, value, tensor1, tensor2)``)."""
    if deprecated:
        (tensor1, tensor2), value = _scalar_first("addcdiv", tensor1, (tensor2,) + deprecated,
                                                  ("tensor1", "tensor2"), "value", value)
    _check_addcdiv_operands(tensor1, tensor2)
    dt = _result_type(input, tensor1, tensor2)
    return _addc("addcdiv", input, tensor1, tensor2, value, out, dt, False)


def _number_param(v, fname, name):
    """``v`` read for a ``Number`` parameter as torch's argument parser reads
    it: a 0-d tensor (no grad) gives its value; any other tensor, a NumPy
    array, a string ... is a TypeError."""
    v = number_arg(v)
    if not _is_number(v):
        tname = "Tensor" if isinstance(v, _TensorBase) else (
            type(v).__name__ if type(v).__module__ == "builtins" else
            f"{type(v).__module__.split('.')[0]}.{type(v).__name__}")
        raise TypeError(f"{fname}(): argument '{name}' must be Number, not {tname}")
    _big_int_check(v)
    return v


def _addc_args(op, x, t1, t2, inplace):
    # PyTorch takes only tensors here (a number is a TypeError, not a scalar operand)
    names = (("tensor1", t1, 1), ("tensor2", t2, 2)) if inplace else \
        (("input", x, 1), ("tensor1", t1, 2), ("tensor2", t2, 3))
    for name, v, pos in names:
        if not isinstance(v, _TensorBase):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def _addc(op, x, t1, t2, value, out, dt, inplace):
    # torch's argument parser, before the tensors' checks
    value = _number_param(value, op + ("_" if inplace else ""), "value")
    _addc_args(op + ("_" if inplace else ""), x, t1, t2, inplace)
    if dt is _C.bool_:
        raise NotImplementedError(f"\"{op}_cpu_out\" not implemented for 'Bool'")
    _scalar_fits(value, dt)
    if isinstance(value, builtins.complex) and not dt.is_complex:
        value = value.real                  # (its imaginary part is zero: checked)
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        # a float value converts with c10's overflow check: to the integer
        # type (NaN, infinities, -1.5 into uint8 raise), to float32 for the
        # half types (their opmath), to the type itself otherwise
        half = dt is _C.float16 or dt is _C.bfloat16
        _C._checked_scalar(float(value), _C.float32 if half else dt)
    if isinstance(value, builtins.complex):
        return _ternary(op, x, t1, t2, out, dt, dt, op, inplace, d0=value.real, d1=value.imag)
    if dt._category < _FLOAT_CAT:
        # the value converts to the integer type (truncation), as PyTorch
        return _ternary(op, x, t1, t2, out, dt, dt, op, inplace, i0=int(value))
    return _ternary(op, x, t1, t2, out, dt, dt, op, inplace, d0=float(value))


def addcmul_(self, tensor1, tensor2, *deprecated, value=1):
    if deprecated:
        (tensor1, tensor2), value = _scalar_first("addcmul_", tensor1, (tensor2,) + deprecated,
                                                  ("tensor1", "tensor2"), "value", value)
    value = _number_param(value, "addcmul_", "value")    # (parsed before the tensors' checks)
    dt = _result_type(self, tensor1, tensor2)
    _check_inplace_result(self, dt, tensor1, tensor2)
    return _addc("addcmul", self, tensor1, tensor2, value, self, dt, True)


def addcdiv_(self, tensor1, tensor2, *deprecated, value=1):
    if deprecated:
        (tensor1, tensor2), value = _scalar_first("addcdiv_", tensor1, (tensor2,) + deprecated,
                                                  ("tensor1", "tensor2"), "value", value)
    value = _number_param(value, "addcdiv_", "value")    # (parsed before the tensors' checks)
    dt = _result_type(self, tensor1, tensor2)
    _check_inplace_result(self, dt, tensor1, tensor2)
    _check_addcdiv_operands(tensor1, tensor2)
    return _addc("addcdiv", self, tensor1, tensor2, value, self, dt, True)


for _f in (lerp, addcmul, addcdiv):
    _export(_f)


# ---------------------------------------------------------------------------
# closeness and equality
# ---------------------------------------------------------------------------

def _closeness_params(fname, rtol, atol, equal_nan):
    """isclose/allclose's ``float`` tolerances and ``bool`` equal_nan, read as
    torch's parser reads them (an int beyond int64 is a float, a 0-d tensor
    its value; None, a longer tensor, an int equal_nan are TypeErrors)."""
    tols = []
    for name, v in (("rtol", rtol), ("atol", atol)):
        v = _float_param(v, fname, name) if v is not None else v
        if v is None:
            raise TypeError(f"{fname}(): argument '{name}' must be float, not NoneType")
        tols.append(float(v) if isinstance(v, builtins.int) and not -2 ** 63 <= v < 2 ** 63 else v)
    if not isinstance(equal_nan, builtins.bool):
        tname = "Tensor" if isinstance(equal_nan, _TensorBase) else type(equal_nan).__name__
        raise TypeError(f"{fname}(): argument 'equal_nan' must be bool, not {tname}")
    return tols[0], tols[1], builtins.bool(equal_nan)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (bool)."""
    return _isclose(input, other, *_closeness_params("isclose", rtol, atol, equal_nan))


def _isclose(input, other, rtol, atol, equal_nan, all_of=False):
    """isclose (a bool tensor), or with ``all_of`` allclose's bool."""
    if rtol >= 0 and atol >= 0:
        # contiguous float32/float64 CPU tensors of one shape and dtype: the
        # composite below (eq, isnan, mul, abs, add, sub, isfinite, le and
        # the logical ops) in one loop, stopping at the first False for allclose
        r = _D.fast_isclose(input, other, rtol, atol, equal_nan, all_of)
        if r is not None:
            return r
    c = _isclose_ops(input, other, rtol, atol, equal_nan)
    return builtins.bool(_all_true(c)) if all_of else c


def _isclose_ops(input, other, rtol, atol, equal_nan):
    _check_tensor(input, "isclose")
    _check_tensor(other, "isclose", "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_name(input.dtype)} did not match {_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = eq(input, other)  # noqa: F821
    if equal_nan and input.dtype._category >= _FLOAT_CAT:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))  # noqa: F821
    if rtol == 0 and atol == 0:
        return close
    # as PyTorch: integer and bool operands compute in the default float dtype
    a, b = input, other
    if input.dtype._category < _FLOAT_CAT:
        a, b = input.to(_default_float()), other.to(_default_float())
    allowed = add(abs(mul(b, rtol)), atol)  # noqa: F821
    actual = abs(sub(a, b))  # noqa: F821
    return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)))  # noqa: F821


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if ``isclose`` holds everywhere."""
    return _isclose(input, other, *_closeness_params("allclose", rtol, atol, equal_nan),
                    all_of=True)


def _all_true(b):
    if b.numel() == 0:
        return True
    return not _any_false(b)


def _any_false(b):
    # a reduction on the tensors' device (a CUDA tensor is never read as NumPy)
    return builtins.bool(logical_not(b).any().item())  # noqa: F821


def equal(input, other):
    """True if both tensors have the same shape and elements."""
    _refuse_complex32("equal_cpu", input, other)
    _check_tensor(input, "equal")
    _check_tensor(other, "equal", "other")
    if tuple(input.shape) != tuple(other.shape):
        return False
    if input.numel() == 0:
        return True
    return _all_true(eq(input, other))  # noqa: F821


_export(isclose)
_export(allclose)
_export(equal)


# ---------------------------------------------------------------------------
# Python operators
# ---------------------------------------------------------------------------

def _op(fn, reflected=False):
    def method(self, other):
        if not isinstance(self, _TensorBase):
            # called unbound with another self (torch's C method descriptors refuse it)
            raise TypeError(f"descriptor for 'Tensor' objects doesn't apply to a "
                            f"'{type(self).__name__}' object")
        if not (isinstance(other, _TensorBase) or _is_number(other)):
            return NotImplemented
        if reflected:
            return fn(other, self) if isinstance(other, _TensorBase) else _reflected(fn, self, other)
        return fn(self, other)
    return method


def _reflected(fn, self, other):
    if fn is sub:
        return rsub(self, other)
    if fn is div:
        return div(_C.full((), other, dtype=_result_type(self, other)) if False else other, self)
    return fn(other, self)


def _rtruediv(self, other):
    if not (isinstance(other, _TensorBase) or _is_number(other)):
        return NotImplemented
    # PyTorch's Tensor.__rtruediv__ is ``self.reciprocal() * other`` (its
    # rounding, and its dtypes: float16 / complex scalar -> complex32 via mul)
    return mul(reciprocal(self), other)  # noqa: F821


def _rfloordiv(self, other):
    if isinstance(other, _TensorBase):  # called by name, as torch's: ``other // self``
        return floor_divide(other, self)  # noqa: F821
    if not _is_number(other):
        return NotImplemented
    dt = _result_type(self, other)
    if dt.is_complex:
        raise NotImplementedError(f"\"div_floor_cpu\" not implemented for '{_name(dt)}'")
    return _binary("div_floor", other, self, None, dt, dt, "floor_divide")


def _rpow(self, other):
    if not (isinstance(other, _TensorBase) or _is_number(other)):
        return NotImplemented
    return pow(other, self)


def _rmod(self, other):
    if isinstance(other, _TensorBase):  # called by name, as torch's: ``other % self``
        return remainder(other, self)  # noqa: F821
    if not _is_number(other):
        return NotImplemented
    dt = _result_type(self, other)
    if dt.is_complex:
        raise NotImplementedError(f"\"remainder_cpu\" not implemented for '{_name(dt)}'")
    return _binary("remainder", other, self, None, dt, dt, "remainder")


def _inplace(fn_):
    def method(self, other):
        # (a tensor-like operand -- a sparse tensor -- goes to the in-place op too: ``w += s``
        # writes into w, keeping its dtype, as torch's)
        if not (isinstance(other, _TensorBase) or _is_number(other)
                or hasattr(type(other), "__torch_function__")):
            return NotImplemented
        return fn_(self, other)
    return method


def _invert(self):
    if self.dtype is _C.bool_:
        return logical_not(self)  # noqa: F821
    if self.dtype._category >= _FLOAT_CAT:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)  # noqa: F821


def _pos(self):
    if self.dtype is _C.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _eq_op(self, other):
    # (a tensor or plain number; None otherwise; operands that require grad too: a bool
    # result is never recorded)
    r = _D.fast_binary(_B_EQ, self, other, True)
    if r is not None:
        return r
    if not (isinstance(other, _TensorBase) or _is_number(other)):
        if type(other).__name__ == "ndarray" and type(other).__module__ == "numpy":
            # as torch: ``t == ndarray`` compares with the array as a tensor
            # (``!=`` is left to Python, as in torch)
            return eq(self, _C.from_numpy(other).to(self.device))  # noqa: F821
        return False if other is None else NotImplemented
    return eq(self, other)  # noqa: F821


def _ne_op(self, other):
    r = _D.fast_binary(_B_NE, self, other, True)
    if r is not None:
        return r
    if not (isinstance(other, _TensorBase) or _is_number(other)):
        return True if other is None else NotImplemented
    return ne(self, other)  # noqa: F821


def _fast_op(opname, generic):
    """Comparison operator method: the Cython fast path for same-dtype
    operands (also those that require grad: a comparison's bool result is
    never recorded), else the general function (promotion, broadcasting,
    devices)."""
    opi = _B[opname]
    fast = _D.fast_binary

    def method(self, other):
        r = fast(opi, self, other, True)
        if r is not None:
            return r
        return generic(self, other)
    method.__name__ = generic.__name__
    return method


# The operator methods' implementations written here (the package root binds them,
# generate.bind_operators; autograd gives those of the arithmetic operators)
_method_form("__rfloordiv__", _rfloordiv)
_method_form("__and__", _op(bitwise_and))  # noqa: F821
_method_form("__rand__", _op(bitwise_and))  # noqa: F821
_method_form("__iand__", _inplace(bitwise_and_))  # noqa: F821
_method_form("__or__", _op(bitwise_or))  # noqa: F821
_method_form("__ror__", _op(bitwise_or))  # noqa: F821
_method_form("__ior__", _inplace(bitwise_or_))  # noqa: F821
_method_form("__xor__", _op(bitwise_xor))  # noqa: F821
_method_form("__rxor__", _op(bitwise_xor))  # noqa: F821
_method_form("__ixor__", _inplace(bitwise_xor_))  # noqa: F821
_method_form("__lshift__", _op(bitwise_left_shift))  # noqa: F821
_method_form("__ilshift__", _inplace(bitwise_left_shift_))  # noqa: F821
_method_form("__rlshift__", _op(bitwise_left_shift, reflected=True))  # noqa: F821
_method_form("__rshift__", _op(bitwise_right_shift))  # noqa: F821
_method_form("__irshift__", _inplace(bitwise_right_shift_))  # noqa: F821
_method_form("__rrshift__", _op(bitwise_right_shift, reflected=True))  # noqa: F821
_method_form("__eq__", _eq_op)
_method_form("__ne__", _ne_op)
_method_form("__lt__", _fast_op("lt", _op(lt)))  # noqa: F821
_method_form("__le__", _fast_op("le", _op(le)))  # noqa: F821
_method_form("__gt__", _fast_op("gt", _op(gt)))  # noqa: F821
_method_form("__ge__", _fast_op("ge", _op(ge)))  # noqa: F821
_method_form("__pos__", _pos)
_method_form("__invert__", _invert)
# (setting __eq__ takes no hash away; the core's hash, as torch's: by identity)
_method_form("__hash__", _TensorBase.__hash__)
# the real and imaginary parts are properties (settable: written into the tensor)
_method_form("real", property(real, lambda self, v: real(self).copy_(v)))
_method_form("imag", property(imag, lambda self, v: imag(self).copy_(v)))


def _scalar_self_form(fn, other_name):
    """``ptcore.X`` taking torch's ``X.Scalar`` overload, whose first parameter is
    named ``self``: ``pow(self=2, exponent=t)``; a number passed as ``input=`` is
    refused (that overload's first parameter is a tensor)."""
    def f(*args, **kw):
        if "self" in kw:
            first = kw.pop("self")
            if args or "input" in kw or not _is_number(first) or \
                    not isinstance(kw.get(other_name), _TensorBase):
                raise TypeError(f"{fn.__name__}() received an invalid combination of arguments: "
                                f"self= takes a Number with a Tensor {other_name}")
            return fn(first, **kw)
        if "input" in kw and not isinstance(kw["input"], _TensorBase):
            raise TypeError(f"{fn.__name__}() received an invalid combination of arguments: "
                            f"argument 'input' must be Tensor, not {type(kw['input']).__name__} "
                            f"(a Number goes as self=)")
        return fn(*args, **kw)
    f.__name__ = f.__qualname__ = fn.__name__
    f.__doc__ = fn.__doc__
    f.__wrapped__ = fn
    return f


# the namespace functions (the methods keep their bound self)
for _n, _o in (("pow", "exponent"), ("float_power", "exponent"), ("xlogy", "other"),
               ("remainder", "other"), ("bitwise_and", "other"), ("bitwise_or", "other"),
               ("bitwise_xor", "other"), ("bitwise_left_shift", "other"),
               ("bitwise_right_shift", "other")):
    globals()[_n] = _scalar_self_form(globals()[_n], _o)
del _n, _o


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "pointwise")
del _bind_module
