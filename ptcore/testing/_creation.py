"""``make_tensor``: random test tensors of any shape, dtype and device, with
torch.testing's value ranges and argument checks (the values themselves come
from ptcore's generator, so they differ from torch's for the same seed)."""
import collections.abc
import math
import warnings

import ptcore

__all__ = ["make_tensor"]

_INTEGRAL = (ptcore.uint8, ptcore.int8, ptcore.int16, ptcore.int32, ptcore.int64, ptcore.uint16,
             ptcore.uint32, ptcore.uint64)
_BOOL_OR_INTEGRAL = (ptcore.bool, *_INTEGRAL)
_COMPLEX = (ptcore.complex32, ptcore.complex64, ptcore.complex128)
_FLOATING_OR_COMPLEX = (ptcore.float16, ptcore.bfloat16, ptcore.float32, ptcore.float64,
                        *_COMPLEX)


def _interval(dtype, low, high, lowest, highest, default_low, default_high):
    """``[low, high)`` checked against the dtype's ``[lowest, highest)`` and clamped to it."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING_OR_COMPLEX:
        warnings.warn("Passing `low==high` to `ptcore.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `ptcore.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = (min(max(v, lowest), highest) for v in (low, high))
    if dtype in _BOOL_OR_INTEGRAL:
        # randint's upper bound is exclusive: both ends round up
        return math.ceil(low), math.ceil(high)
    return low, high


def _fill_uniform(t, low, high):
    # uniform_ needs high - low to be finite in t's dtype: draw half the range and double it
    if high - low >= ptcore.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``
    (``torch.testing.make_tensor``).

    Default intervals: bool [0, 2), unsigned integers [0, 10), signed integers
    [-9, 10), floating and complex types [-9, 9) (real and imaginary parts).
    ``low`` and ``high`` outside the dtype's finite range are clamped to it; for
    integer dtypes both are rounded up.

    Parameters
    ----------
    *shape : int or sequence of int
        The shape, as separate sizes or one sequence.
    dtype : ptcore.dtype
        Any bool, integer, floating or complex dtype.
    device : str or ptcore.device
        Where the tensor lives.
    low, high : number, optional
        The interval; ``low`` inclusive, ``high`` exclusive.
    requires_grad : bool, optional
        Floating and complex dtypes only.
    noncontiguous : bool, optional
        Return a strided view (every second element of a tensor twice as long in
        its last dimension); ignored for fewer than two elements.
    exclude_zero : bool, optional
        Replace zeros by 1 (bool, integers) or the dtype's ``finfo.tiny``.
    memory_format : ptcore.memory_format, optional
        Lay the result out in this format; excludes ``noncontiguous``.

    Raises
    ------
    ValueError
        If ``low >= high``, either is NaN, the interval misses the dtype's range,
        ``requires_grad`` is asked of a bool or integer dtype, or both
        ``noncontiguous`` and ``memory_format`` are given.
    TypeError
        If ``dtype`` is not supported.

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.testing import make_tensor
    >>> t = make_tensor(2, 3, dtype=ptcore.float32, device="cpu", low=-1, high=1)
    >>> t.shape, bool(((t >= -1) & (t < 1)).all())
    (ptcore.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got {noncontiguous=} and {memory_format=}")
    if requires_grad and dtype in _BOOL_OR_INTEGRAL:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # twice as long in the last dimension, so that the view skips real values
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is ptcore.bool:
        low, high = _interval(dtype, low, high, 0, 2, 0, 2)
        result = ptcore.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = ptcore.iinfo(dtype)
        # randint takes int64 bounds: int64's maximum itself cannot be drawn
        highest = info.max + (1 if dtype is not ptcore.int64 else 0)
        low, high = _interval(dtype, low, high, info.min, highest, -9, 10)
        result = ptcore.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX:
        info = ptcore.finfo(dtype)
        low, high = _interval(dtype, low, high, info.min, info.max, -9, 9)
        result = ptcore.empty(shape, device=device, dtype=dtype)
        _fill_uniform(ptcore.view_as_real(result) if dtype in _COMPLEX else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "ptcore.testing.make_tensor().")

    if noncontiguous:
        result = result[..., 1::2]          # offset by one to catch offset bugs too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOL_OR_INTEGRAL else ptcore.finfo(dtype).tiny
    if dtype in _FLOATING_OR_COMPLEX:
        result.requires_grad = requires_grad
    return result
