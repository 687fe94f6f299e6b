"""Data types and data type functions of the array API namespace.

The dtype objects are ptcore's own (``ptcore.float32`` ...). ``result_type``
and the binary functions follow the standard's promotion, in which a 0-D array
takes part like any other array (torch lets a 0-D tensor's dtype yield to the
other operand's within the same category).
"""
import builtins as _b

import ptcore as _pt
from ptcore import (bool, int8, int16, int32, int64, uint8, float32, float64,  # noqa: F401
                    complex64, complex128)

_INTEGRAL = (int8, int16, int32, int64, uint8)
_REAL_FLOATING = (float32, float64)
_COMPLEX_FLOATING = (complex64, complex128)
_NUMERIC = _INTEGRAL + _REAL_FLOATING + _COMPLEX_FLOATING
_ALL = (bool,) + _NUMERIC
_DTYPE = type(float32)
_KINDS = {
    "bool": (bool,),
    "signed integer": (int8, int16, int32, int64),
    "unsigned integer": (uint8,),
    "integral": _INTEGRAL,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX_FLOATING,
    "numeric": _NUMERIC,
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is ``kind`` (a dtype, a kind name or a tuple of those)."""
    if not isinstance(dtype, _DTYPE):
        raise TypeError(f"isdtype: expected a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return _b.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        try:
            return dtype in _KINDS[kind]
        except KeyError:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}") from None
    if isinstance(kind, _DTYPE):
        return dtype == kind
    raise TypeError(f"isdtype: kind must be a dtype, a str or a tuple, got {type(kind).__name__}")


def _dtype_of(x):
    return x if isinstance(x, _DTYPE) else x.dtype


def result_type(*arrays_and_dtypes):
    """The standard's result dtype of arrays, dtypes and Python scalars.

    Arrays and dtypes combine first (0-D arrays count fully); Python scalars
    then yield to that dtype within their kind, as in torch.
    """
    others = [a for a in arrays_and_dtypes if not isinstance(a, (_b.bool, int, float, complex))]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, (_b.bool, int, float, complex))]
    if not others:
        raise ValueError("result_type: at least one array or dtype is required")
    dt = _dtype_of(others[0])
    for o in others[1:]:
        dt = _pt.promote_types(dt, _dtype_of(o))
    for s in scalars:
        dt = _pt.result_type(_pt.empty(0, dtype=dt), s)
    return dt


def can_cast(from_, to, /):
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the promotion rules."""
    return _pt.can_cast(_dtype_of(from_), to)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` as ``dtype`` (and on ``device``); a copy unless ``copy=False`` allows the input."""
    if device is None:
        device = x.device
    return x.to(device=device, dtype=dtype, copy=copy)


class finfo_object:
    """Machine limits of a floating dtype (the standard's ``finfo_object``)."""
    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, dtype):
        fi = _pt.finfo(dtype)
        self.bits, self.eps, self.max = fi.bits, fi.eps, fi.max
        self.min, self.smallest_normal = fi.min, fi.smallest_normal
        self.dtype = {complex64: float32, complex128: float64}.get(dtype, dtype)

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


class iinfo_object:
    """Machine limits of an integer dtype (the standard's ``iinfo_object``)."""
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype):
        ii = _pt.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = ii.bits, ii.max, ii.min, dtype

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Limits of a floating dtype or of an array's floating dtype."""
    return finfo_object(_dtype_of(type))


def iinfo(type, /):
    """Limits of an integer dtype or of an array's integer dtype."""
    return iinfo_object(_dtype_of(type))
