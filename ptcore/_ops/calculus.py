"""Finite differences and numerical integration: ``diff``, ``gradient``
(central differences, one-sided at the edges), ``trapezoid``/``trapz`` and
``cumulative_trapezoid``; composites of differentiable ops."""
import builtins
import numbers
import operator

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import strict_int_param as _strict_int
from ptcore._ops._composite_common import _check_tensor, _tname, _wrap_dim, _write_out
from ptcore._ops._out import check_out_arg, check_written

__all__ = [
    "diff", "trapezoid", "trapz", "cumulative_trapezoid", "gradient",
]


def _diff_n0_out(input, out):
    """``diff(n=0)``: a copy of ``input``; torch's ``diff_out`` then wants an out of
    exactly ``input``'s dtype ("expected scalar_type Float but found Double")."""
    if isinstance(out, _TensorBase) and out.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar_type {input.dtype._legacy} but found "
                           f"{out.dtype._legacy}")
    check_written(out, input)           # (torch's copy_ into out)
    return _write_out(input.clone(), out)


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """``n``-th forward difference along ``dim`` (``torch.diff``)."""
    _check_tensor(input, "diff", "input", 1)
    check_out_arg(out, "diff")
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = _strict_int(n, "diff", "n", 2)
    dim = _strict_int(dim, "diff", "dim", 3)
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:
        return _diff_n0_out(input, out)             # (torch checks no dim then)
    d = _wrap_dim(dim, input.dim())
    parts = []
    for t in (prepend, append):
        if t is None:
            continue
        if not isinstance(t, _TensorBase):
            raise TypeError(f"diff(): argument 'prepend'/'append' must be Tensor, not "
                            f"{type(t).__name__}")
        if t.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in builtins.range(input.dim()):
            if k != d and t.shape[k] != input.shape[k]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({k}) = "
                    f"{input.shape[k]}, but got tensor.size({k}) = {t.shape[k]}")
    if n == 0:                  # torch (as NumPy): prepend/append are checked, then unused
        return _diff_n0_out(input, out)
    x = input
    if prepend is not None or append is not None:
        parts = ([prepend] if prepend is not None else []) + [input] + \
            ([append] if append is not None else [])
        x = ptcore.cat(parts, d)
    is_bool = x.dtype is _C.bool_
    for i in builtins.range(n):
        L = x.shape[d]
        if L == 0:
            break
        a = x.narrow(d, 1, L - 1)
        b = x.narrow(d, 0, L - 1)
        if i == n - 1:
            # torch's last step is sub(a, b, out=out): its overlap checks first
            check_written(out, a, b)
        x = ptcore.logical_xor(a, b) if is_bool else ptcore.sub(a, b)
    if out is not None and not ptcore.can_cast(x.dtype, out.dtype):
        raise RuntimeError(f"result type {_tname(x.dtype)} can't be cast to the desired output "
                           f"type {_tname(out.dtype)}")
    return _write_out(x, out)


def _zeros_except(y, dim):
    sizes = list(y.shape)
    del sizes[dim]
    return ptcore.zeros(sizes, dtype=y.dtype, device=y.device)


def _x_viewed(x, y, dim, fn):
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{fn}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        return x.reshape(sizes)
    if x.dim() < y.dim():
        return x.reshape([1] * (y.dim() - x.dim()) + list(x.shape))
    return x


def _check_dx(dx, fn):
    if isinstance(dx, (builtins.bool, builtins.complex)) or \
            (isinstance(dx, _TensorBase) and (dx.dtype is _C.bool_ or dx.is_complex())):
        raise RuntimeError(f"{fn}: Currently, we only support dx as a real number.")
    return builtins.float(dx)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Trapezoidal rule along ``dim`` with sample points ``x`` or spacing ``dx``
    (``torch.trapezoid``)."""
    _check_tensor(y, "trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: pass either "
                        "x or dx, not both")
    L = y.size(dim)
    dim = _wrap_dim(dim, y.dim())
    if x is not None and isinstance(x, _TensorBase):
        if L == 0:
            return _zeros_except(y, dim)
        if y.dtype is _C.bool_ or x.dtype is _C.bool_:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not "
                               "supported")
        xv = _x_viewed(x, y, dim, "trapezoid")
        xl = xv.narrow(dim, 0, builtins.max(xv.shape[dim] - 1, 0))
        xr = xv.narrow(dim, 1, builtins.max(xv.shape[dim] - 1, 0))
        d = xr - xl
        return ((d * (y.narrow(dim, 1, L - 1) + y.narrow(dim, 0, L - 1))) / 2.).sum(dim)
    if x is not None:
        dx = x
    if L == 0:
        return _zeros_except(y, dim)
    if y.dtype is _C.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    dxv = _check_dx(1.0 if dx is None else dx, "trapezoid")
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dxv


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid` (``torch.trapz``)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulative trapezoidal rule along ``dim`` (``torch.cumulative_trapezoid``)."""
    _check_tensor(y, "cumulative_trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: "
                        "pass either x or dx, not both")
    L = y.size(dim)
    dim = _wrap_dim(dim, y.dim())
    m = builtins.max(L - 1, 0)
    pair = y.narrow(dim, 0, m) + y.narrow(dim, 1 if L else 0, m)
    if x is not None and isinstance(x, _TensorBase):
        if y.dtype is _C.bool_ or x.dtype is _C.bool_:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                               "bool is not supported")
        xv = _x_viewed(x, y, dim, "cumulative_trapezoid")
        k = builtins.max(xv.shape[dim] - 1, 0)
        d = xv.narrow(dim, 1 if xv.shape[dim] else 0, k) - xv.narrow(dim, 0, k)
        return ((d * pair) / 2.).cumsum(dim)          # (torch's order: the dtype of d * pair)
    if x is not None:
        dx = x
    if y.dtype is _C.bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    dxv = _check_dx(1.0 if dx is None else dx, "cumulative_trapezoid")
    return (dxv / 2. * pair).cumsum(dim)


def _gradient_dims(input, dim):
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    seen = set()
    out = []
    for d in dims:
        w = _wrap_dim(d, input.dim())
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
        out.append(w)
    return out


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimate of the derivative of ``input`` along each dimension in
    ``dim`` (all by default) with second-order central differences inside
    and first- or second-order one-sided differences at the edges
    (``torch.gradient``).

    ``spacing`` is a number (one step for every dimension), a list of
    numbers (a step per dimension) or a list of 1-D coordinate tensors.
    Returns a tuple with one tensor per dimension.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.gradient(ptcore.tensor([1., 4., 9., 16.]))
    (tensor([3., 4., 6., 7.]),)
    """
    _check_tensor(input, "gradient", "input", 1)
    if input.dtype is _C.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = _gradient_dims(input, dim)
    if spacing is None:         # torch's optional Scalar spacing: a unit step
        spacing = 1
    listed = isinstance(spacing, (list, tuple))
    if listed:
        n = len(spacing)
        if dims is None and n != input.dim():
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
                f"a list of length {n}")
        if dims is not None and n != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                f"arguments to have the same length, but got a spacing argument of length {n} and a "
                f"dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(builtins.range(input.dim())) if dims is None else dims
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    steps = list(spacing) if listed else [spacing] * len(dims)
    result = []
    for d, h in zip(dims, steps):
        if isinstance(h, _TensorBase):
            result.append(_gradient_coords(input, d, h, edge_order))
        else:
            result.append(_gradient_uniform(input, d, h, edge_order))
    return tuple(result)


def _slice_dim(x, d, start, stop):
    """``x[start:stop]`` along ``d`` (negative bounds from the end, stop None = end)."""
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return x.narrow(d, start, stop - start)


def _gradient_uniform(x, d, h, edge_order):
    def sl(start, stop):
        return _slice_dim(x, d, start, stop)
    center = (sl(2, None) - sl(0, -2)) / h
    if edge_order == 1:
        prepend = (sl(1, 2) - sl(0, 1)) / h
        append = (sl(-1, None) - sl(-2, -1)) / h
    else:
        prepend = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
        append = (0.5 * sl(-3, -2) - 2 * sl(-2, -1) + 1.5 * sl(-1, None)) / h
    return ptcore.cat([prepend, center / 2, append], d)


def _gradient_coords(x, d, coords, edge_order):
    if coords.dim() != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, "
                           f"but got an element with {coords.dim()} dimensions!")
    def sl(start, stop):
        return _slice_dim(x, d, start, stop)
    shape = [1] * x.dim()
    shape[d] = -1
    dx = ptcore.diff(coords)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * sl(0, -2) + b * sl(1, -1) + c * sl(2, None)
    if edge_order == 1:
        prepend = (sl(1, 2) - sl(0, 1)) / dx[0]
        append = (sl(-1, None) - sl(-2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        prepend = a * sl(0, 1) + b * sl(1, 2) + c * sl(2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        append = a * sl(-3, -2) + b * sl(-2, -1) + c * sl(-1, None)
    return ptcore.cat([prepend, center, append], d)


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "calculus")
del _bind_module
