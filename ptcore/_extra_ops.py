"""Assorted PyTorch functions and Tensor methods built from existing ptcore
ops: ``cross``, ``diff``, ``cov``, ``block_diag``, ``trapezoid``, ``gcd``,
``frexp``, ``matrix_exp``, ``lu``/``lu_unpack``/``lu_solve``, window
functions, top-level in-place aliases (``ptcore.abs_`` ...), and more.

Every function here is a composite of differentiable ptcore ops (so
gradients flow through its parts), an integer-only op, or carries its own
``autograd.Function`` (``polygamma``, ``igamma``, ``igammac``).
"""
import builtins
import itertools
import math
import numbers
import operator
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase

__all__ = [
    "cross", "diff", "cov", "corrcoef", "block_diag", "cartesian_prod", "combinations",
    "trapezoid", "trapz", "cumulative_trapezoid", "vander", "unravel_index",
    "hsplit", "vsplit", "dsplit",
    "logaddexp", "logaddexp2", "heaviside", "gcd", "gcd_", "lcm", "lcm_", "sinc", "sinc_",
    "frexp", "ldexp", "ldexp_", "dist", "positive",
    "matrix_exp", "cholesky_solve", "cholesky_inverse", "lu", "lu_unpack", "lu_solve",
    "polygamma", "mvlgamma", "igamma", "igammac",
    "is_nonzero", "is_same_size", "is_signed", "scalar_tensor", "range", "fill", "fill_",
    "renorm", "is_inference", "is_neg",
    "zero_", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window", "as_strided_", "gradient", "put", "empty_permuted",
]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _is_int_dtype(dt):
    return not (dt.is_floating_point or dt.is_complex)


def _tname(dt):
    """torch's C++ scalar type name (``Float``, ``Long`` ...)."""
    return dt._legacy


def _check_tensor(x, fn, name, pos):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _wrap_dim(dim, ndim):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _recording(*ts):
    from ptcore.autograd import grad_mode
    return grad_mode.is_grad_enabled() and builtins.any(
        isinstance(t, _TensorBase) and t.requires_grad for t in ts)


def _write_out(res, out):
    if out is None:
        return res
    if tuple(out.shape) != tuple(res.shape):
        out.resize_(res.shape)
    out.copy_(res)
    return out


def _inplace(self, fn, *args, **kwargs):
    """``self.op_(...)``: compute ``fn(self, ...)`` and write it back, with
    torch's checks (result dtype castable, shape unchanged by broadcasting)."""
    src = self.clone() if _recording(self) else self
    r = fn(src, *args, **kwargs)
    if not ptcore.can_cast(r.dtype, self.dtype):
        raise RuntimeError(f"result type {_tname(r.dtype)} can't be cast to the desired output "
                           f"type {_tname(self.dtype)}")
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(r.shape)}")
    self.copy_(r)
    return self


def _not_implemented_grad(name, fn):
    """Run ``fn``; if an input requires grad, give the result a node that
    raises torch's "the derivative for 'name' is not implemented"."""
    def wrapper(*args, **kwargs):
        w = _NOT_IMPL_CACHE.get(name)
        if w is None:
            from ptcore.autograd import _record as R
            w = R.differentiable(name, fn, R.not_implemented(name))
            _NOT_IMPL_CACHE[name] = w
        return w(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


_NOT_IMPL_CACHE = {}


def _named(name, fields):
    from ptcore._sorting import _named as mk
    return mk(name, fields)


# ---------------------------------------------------------------------------
# cross, diff, cov, corrcoef
# ---------------------------------------------------------------------------

def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (``torch.cross``).

    With ``dim=None`` (deprecated) the first dimension of ``input`` of size 3
    is used, as torch does; prefer :func:`ptcore.linalg.cross`.
    """
    _check_tensor(input, "cross", "input", 1)
    _check_tensor(other, "cross", "other", 2)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of linalg.cross "
                      "in a future release.", UserWarning, stacklevel=2)
        for i, s in enumerate(input.shape):
            if s == 3:
                dim = i
                break
        else:
            raise RuntimeError("no dimension of size 3 in input")
    return _write_out(ptcore.linalg.cross(input, other, dim=dim), out)


def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """``n``-th forward difference along ``dim`` (``torch.diff``)."""
    _check_tensor(input, "diff", "input", 1)
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
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
    x = input
    if prepend is not None or append is not None:
        parts = ([prepend] if prepend is not None else []) + [input] + \
            ([append] if append is not None else [])
        x = ptcore.cat(parts, d)
    is_bool = x.dtype is _C.bool_
    for _ in builtins.range(n):
        L = x.shape[d]
        if L == 0:
            break
        a = x.narrow(d, 1, L - 1)
        b = x.narrow(d, 0, L - 1)
        x = ptcore.logical_xor(a, b) if is_bool else ptcore.sub(a, b)
    return _write_out(x, out)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the rows (variables) of ``input`` (``torch.cov``)."""
    _check_tensor(input, "cov", "input", 1)
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype is _C.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    nobs = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.dim() > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got "
                               f"fweights with {w.dim()} dimensions")
        if not _is_int_dtype(w.dtype) or w.dtype is _C.bool_:
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                               f"with {_tname(w.dtype)} dtype")
        if w.numel() != nobs:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {w.numel()} != {nobs}")
        if nobs and not builtins.bool(w.min().ge(0)):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.dim() > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got "
                               f"aweights with {aw.dim()} dimensions")
        if not aw.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_tname(aw.dtype)} dtype")
        if aw.numel() != nobs:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {aw.numel()} != {nobs}")
        if nobs and not builtins.bool(aw.min().ge(0)):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    if w is None:
        w_sum = ptcore.scalar_tensor(nobs, dtype=_C.int64)
    else:
        w_sum = w.sum()
        if not builtins.bool(w_sum.ne(0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if builtins.bool(norm_factor.le(0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = ptcore.zeros_like(norm_factor)
    x = x - avg.unsqueeze(1)
    y = x if w is None else x * w
    c = ptcore.mm(x, y.t().conj())
    return ptcore.true_divide(c, norm_factor).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (``torch.corrcoef``)."""
    _check_tensor(input, "corrcoef", "input", 1)
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    sd = ptcore.sqrt(ptcore.real(d) if d.is_complex() else d)
    c = c / sd.view(-1, 1)
    c = c / sd.view(1, -1)
    if c.is_complex():
        return ptcore.complex(ptcore.real(c).clip(-1, 1), ptcore.imag(c).clip(-1, 1))
    return c.clip(-1, 1)


# ---------------------------------------------------------------------------
# constructions: block_diag, cartesian_prod, combinations, vander, unravel_index
# ---------------------------------------------------------------------------

def block_diag(*tensors):
    """Block-diagonal matrix from 0-, 1- and 2-D tensors (``torch.block_diag``)."""
    if not tensors:
        return ptcore.empty(1, 0)
    mats = []
    dt = None
    for i, t in enumerate(tensors):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, but "
                            f"found element of type {type(t).__name__} at pos {i}")
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        m = t.reshape(1, 1) if t.dim() == 0 else (t.reshape(1, -1) if t.dim() == 1 else t)
        mats.append(m)
        dt = t.dtype if dt is None else ptcore.promote_types(dt, t.dtype)
    cols = builtins.sum(m.shape[1] for m in mats)
    rows = []
    c0 = 0
    for m in mats:
        h, w = m.shape
        if m.dtype is not dt:
            m = m.to(dt)
        parts = []
        if c0:
            parts.append(ptcore.zeros(h, c0, dtype=dt, device=m.device))
        parts.append(m)
        if cols - c0 - w:
            parts.append(ptcore.zeros(h, cols - c0 - w, dtype=dt, device=m.device))
        rows.append(ptcore.cat(parts, 1) if len(parts) > 1 else m)
        c0 += w
    return ptcore.cat(rows, 0)


def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors, as rows (``torch.cartesian_prod``)."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = ptcore.meshgrid(*tensors, indexing="ij")
    return ptcore.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Length-``r`` combinations of the elements of a 1-D tensor (``torch.combinations``)."""
    _check_tensor(input, "combinations", "input", 1)
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    r = operator.index(r)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ptcore.empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(gen(builtins.range(n), r))
    if not idx:
        return ptcore.empty(0, r, dtype=input.dtype, device=input.device)
    return input[ptcore.tensor(idx, dtype=_C.int64)]


def vander(x, N=None, increasing=False):
    """Vandermonde matrix with columns ``x**(N-1) ... x**0`` (``torch.vander``)."""
    _check_tensor(x, "vander", "x", 1)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = ptcore.promote_types(x.dtype, _C.int64)
    m = x.shape[0]
    if n == 0:
        res = ptcore.empty(m, 0, dtype=dt, device=x.device)
    else:
        cols = [ptcore.ones(m, 1, dtype=dt, device=x.device)]
        if n > 1:
            xs = x.to(dt) if x.dtype is not dt else x
            cols.append(ptcore.cumprod(xs.unsqueeze(1).expand(m, n - 1), 1))
        res = ptcore.cat(cols, 1) if len(cols) > 1 else cols[0]
    return res if increasing else ptcore.flip(res, [1])


def unravel_index(indices, shape):
    """Flat indices -> tuple of coordinate tensors for ``shape`` (``torch.unravel_index``)."""
    if isinstance(indices, _TensorBase):
        dt = indices.dtype
        bad = dt.is_complex or dt.is_floating_point or dt is _C.bool_
    else:
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not "
                        f"{type(indices).__name__}")
    if bad:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {dt}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, builtins.bool):
        shape = [builtins.int(shape)]
    elif isinstance(shape, (list, tuple)):
        for d in shape:
            if not (isinstance(d, numbers.Integral) and not isinstance(d, builtins.bool)):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(d)}")
        shape = [builtins.int(d) for d in shape]
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if not builtins.all(d >= 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + [1]),
                                                    func=operator.mul))))
    res = indices.unsqueeze(-1).floor_divide(
        ptcore.tensor(coefs, dtype=_C.int64, device=indices.device)) % \
        ptcore.tensor(shape, dtype=_C.int64, device=indices.device)
    return res.unbind(-1)


# ---------------------------------------------------------------------------
# trapezoid
# ---------------------------------------------------------------------------

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
        return (d / 2. * pair).cumsum(dim)
    if x is not None:
        dx = x
    if y.dtype is _C.bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    dxv = _check_dx(1.0 if dx is None else dx, "cumulative_trapezoid")
    return (dxv / 2. * pair).cumsum(dim)


# ---------------------------------------------------------------------------
# hsplit / vsplit / dsplit
# ---------------------------------------------------------------------------

def _dir_split(input, ios, name, min_dim, dim):
    _check_tensor(input, name, "input", 1)
    if input.dim() < min_dim:
        s = "" if min_dim == 1 else ""
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension{s}, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(ios, numbers.Integral) and not isinstance(ios, builtins.bool):
        size = input.shape[dim]
        if ios == 0 or size % ios != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{ios}!")
    else:
        ios = list(ios)
    return input.tensor_split(ios, dim)


def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for 1-D tensors) (``torch.hsplit``)."""
    d = 0 if isinstance(input, _TensorBase) and input.dim() == 1 else 1
    return _dir_split(input, indices_or_sections, "hsplit", 1, d)


def vsplit(input, indices_or_sections):
    """Split along dim 0 of a tensor with at least 2 dims (``torch.vsplit``)."""
    return _dir_split(input, indices_or_sections, "vsplit", 2, 0)


def dsplit(input, indices_or_sections):
    """Split along dim 2 of a tensor with at least 3 dims (``torch.dsplit``)."""
    return _dir_split(input, indices_or_sections, "dsplit", 3, 2)


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

def _float_binary_check(a, b, fn, kernel):
    _check_tensor(a, fn, "input", 1)
    _check_tensor(b, fn, "other", 2)
    dt = ptcore.result_type(a, b)
    if _is_int_dtype(dt):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(dt)}'")
    return dt


def _logaddexp_impl(input, other, out, fname, exp_fn, scale):
    dt = _float_binary_check(input, other, fname, fname + "_cpu")
    if isinstance(input, ptcore.Tensor) and input.dtype != dt:
        input = input.to(dt)
    if isinstance(other, ptcore.Tensor) and other.dtype != dt:
        other = other.to(dt)
    if dt.is_complex and fname == "logaddexp2":
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{_tname(dt)}'")
    if dt.is_complex:
        # as PyTorch: order the operands by real part, ``max + log1p(exp(min - max))``
        first = ptcore.real(input) >= ptcore.real(other)
        mx, mn = ptcore.where(first, input, other), ptcore.where(first, other, input)
        r = mx + ptcore.log1p(exp_fn(mn - mx)) * scale
        return _write_out(r, out)
    if dt is _C.float16 or dt is _C.bfloat16:
        # PyTorch evaluates the formula in float32 and rounds once
        f32 = _C.float32
        r = _logaddexp_impl(input.to(f32) if isinstance(input, ptcore.Tensor) else input,
                            other.to(f32) if isinstance(other, ptcore.Tensor) else other,
                            None, fname, exp_fn, scale)
        return _write_out(r.to(dt), out)
    m = ptcore.maximum(input, other)
    r = m + ptcore.log1p(exp_fn(-ptcore.abs(input - other))) * scale
    r = ptcore.where(ptcore.isinf(input) & (input == other), m, r)
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
    return _write_out(_heaviside_nd(input, values), out)


def _int_binary(a, b, fn):
    _check_tensor(a, fn, "input", 1)
    if not isinstance(b, _TensorBase):
        raise TypeError(f"{fn}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    dt = ptcore.result_type(a, b)
    if not _is_int_dtype(dt) or dt is _C.bool_:
        raise NotImplementedError(f"\"{fn}_cpu\" not implemented for '{_tname(dt)}'")
    return dt


def _gcd_raw(a, b, dt):
    a, b = ptcore.broadcast_tensors(a.to(dt), b.to(dt))
    a = ptcore.abs(a)
    b = ptcore.abs(b)
    while True:
        nz = b != 0
        if not builtins.bool(nz.any()):
            return a
        bs = ptcore.where(nz, b, ptcore.ones_like(b))
        a, b = ptcore.where(nz, b, a), ptcore.where(nz, ptcore.remainder(a, bs), b)


def gcd(input, other, *, out=None):
    """Elementwise greatest common divisor of integer tensors (``torch.gcd``)."""
    dt = _int_binary(input, other, "gcd")
    return _write_out(_gcd_raw(input, other, dt), out)


def lcm(input, other, *, out=None):
    """Elementwise least common multiple of integer tensors (``torch.lcm``)."""
    dt = _int_binary(input, other, "lcm")
    g = _gcd_raw(input, other, dt)
    a, b = ptcore.broadcast_tensors(input.to(dt), other.to(dt))
    gz = g == 0
    gs = ptcore.where(gz, ptcore.ones_like(g), g)
    r = ptcore.abs(ptcore.div(a, gs, rounding_mode="trunc") * b)
    return _write_out(ptcore.where(gz, ptcore.zeros_like(r), r), out)


def gcd_(input, other):
    """In-place :func:`gcd`."""
    return _inplace(input, gcd, other)


def lcm_(input, other):
    """In-place :func:`lcm`."""
    return _inplace(input, lcm, other)


def sinc(input, *, out=None):
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0 (``torch.sinc``)."""
    _check_tensor(input, "sinc", "input", 1)
    x = input
    if _is_int_dtype(x.dtype):
        x = x.to(_C.get_default_dtype())
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


def frexp(input, *, out=None):
    """Decompose into mantissa in [0.5, 1) and int32 exponent (``torch.frexp``)."""
    _check_tensor(input, "frexp", "input", 1)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
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
        return FrexpResult(out[0], out[1])
    return FrexpResult(mantissa, exponent)


def ldexp(input, other, *, out=None):
    """``input * 2**other`` (``torch.ldexp``)."""
    _check_tensor(input, "ldexp", "input", 1)
    _check_tensor(other, "ldexp", "other", 2)
    if other.is_floating_point() or other.is_complex():
        return _write_out(ptcore.mul(input, ptcore.pow(2.0, other)), out)
    # integral exponents: exact scaling in the result's floating dtype, as PyTorch
    dt = ptcore.result_type(input, other)
    if not (dt.is_floating_point or dt.is_complex):
        dt = ptcore.get_default_dtype()
    elif other.dtype == ptcore.bool and dt.is_floating_point:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    r = ptcore.mul(input.to(dt), ptcore.pow(2.0, other.to(dt)))
    return _write_out(r, out)


def ldexp_(input, other):
    """In-place :func:`ldexp`."""
    return input.mul_(ptcore.pow(2.0, other))


def dist(input, other, p=2):
    """``p``-norm of ``input - other`` (``torch.dist``)."""
    _check_tensor(input, "dist", "input", 1)
    _check_tensor(other, "dist", "other", 2)
    d = input - other
    if _is_int_dtype(d.dtype):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_tname(d.dtype)} instead.")
    return ptcore.linalg.vector_norm(d, p)


def positive(input):
    """Returns ``input`` (``torch.positive``); bool tensors are refused."""
    _check_tensor(input, "positive", "input", 1)
    if input.dtype is _C.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------

_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _square_check(A, fn):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def matrix_exp(A):
    """Matrix exponential of (batches of) square matrices (``torch.matrix_exp``):
    scaling and squaring with the degree-13 Pade approximant (Higham 2005),
    computed in double precision."""
    _check_tensor(A, "matrix_exp", "input", 1)
    _square_check(A, "linalg.matrix_exp")
    if not (A.dtype.is_floating_point or A.is_complex()):
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(A.dtype)}")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return ptcore.exp(A)
    wdt = _C.complex128 if A.is_complex() else _C.float64
    X = A.to(wdt) if A.dtype is not wdt else A
    with ptcore.no_grad():
        norm1 = ptcore.abs(X.detach()).sum(-2).amax(-1)          # 1-norm per matrix
        ratio = ptcore.where(ptcore.isfinite(norm1), norm1, ptcore.zeros_like(norm1)) / _THETA13
        s = ptcore.clamp(ptcore.ceil(ptcore.log2(ratio)), min=0)
        s = ptcore.where(ratio > 0, s, ptcore.zeros_like(s))
        smax = builtins.int(s.max().item()) if s.numel() else 0
    scale = ptcore.pow(2.0, -s).to(X.dtype).unsqueeze(-1).unsqueeze(-1)
    X = X * scale
    eye = ptcore.eye(n, dtype=wdt)
    b = _PADE13
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 +
             b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + \
        b[0] * eye
    R = ptcore.linalg.solve(V - U, V + U)
    for k in builtins.range(smax):
        sq = R @ R
        R = ptcore.where((s > k).unsqueeze(-1).unsqueeze(-1), sq, R)
    return R.to(A.dtype) if R.dtype is not A.dtype else R


def _broadcast_mats(B, A):
    batch = ptcore.broadcast_shapes(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    return (B.expand(*batch, *B.shape[-2:]), A.expand(*batch, *A.shape[-2:]))


def _check_linear_solve(b, A, name):
    """PyTorch's linearSolveCheckInputs: same dtype, square A, matching rows."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(b.dtype)} and A of type {_tname(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solve ``A X = B`` given the Cholesky factor of ``A`` (``torch.cholesky_solve``)."""
    _check_tensor(B, "cholesky_solve", "input", 1)
    _check_tensor(L, "cholesky_solve", "input2", 2)
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions "
                           "instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions "
                           "instead")
    _check_linear_solve(B, L, "cholesky_solve")
    if _is_int_dtype(B.dtype):
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_tname(B.dtype)}'")
    B, L = _broadcast_mats(B, L)
    if upper:
        L = L.mH
    y = ptcore.linalg.solve(L, B)
    return _write_out(ptcore.linalg.solve(L.mH, y), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """Inverse of ``A`` from its Cholesky factor (``torch.cholesky_inverse``)."""
    _check_tensor(L, "cholesky_inverse", "input", 1)
    _square_check(L, "cholesky_inverse")
    if _is_int_dtype(L.dtype):
        raise NotImplementedError(
            f"\"cholesky_inverse_out_cpu\" not implemented for '{_tname(L.dtype)}'")
    Li = ptcore.linalg.inv(L)
    r = Li @ Li.mH if upper else Li.mH @ Li
    return _write_out(r, out)


LUWithInfo = _named("_lu_with_info", ["LU", "pivots", "info"])
LUUnpackResult = _named("lu_unpack", ["P", "L", "U"])


def lu(A, pivot=True, get_infos=False, out=None):
    """LU factorisation, legacy API (``torch.lu``): ``(LU, pivots)`` or
    ``(LU, pivots, infos)``; prefer :func:`ptcore.linalg.lu_factor`."""
    _check_tensor(A, "lu", "A", 1)
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", UserWarning, stacklevel=2)
    if A.dim() < 2:
        raise RuntimeError("torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    LU, piv, info = ptcore.linalg.lu_factor_ex(A, pivot=pivot)
    if out is not None:
        res = [_write_out(LU, out[0]), _write_out(piv, out[1])]
        if get_infos:
            res.append(_write_out(info, out[2]))
        return tuple(res)
    if get_infos:
        return LUWithInfo(LU, piv, info)
    return LU, piv


def _perm_from_pivots(piv, m):
    """LAPACK 1-based row interchanges -> permutation such that
    ``P @ L @ U == A`` with ``P[..., perm[i], i] = 1``."""
    import numpy as np
    p = np.asarray(piv.detach().to(_C.int64).numpy()) - 1
    batch = p.shape[:-1]
    k = p.shape[-1]
    nb = int(np.prod(batch, dtype=np.int64))
    p2 = p.reshape(nb, k)
    perm = np.tile(np.arange(m, dtype=np.int64), (nb, 1))
    rows = np.arange(nb)
    for i in builtins.range(k):
        j = p2[:, i]
        if ((j < 0) | (j >= m)).any():
            raise RuntimeError("torch.lu_unpack: pivots out of range [1, "
                               f"{m}]")
        a = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = a
    P = np.zeros((nb, m, m))
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1.0
    return P.reshape(*batch, m, m)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """Unpack ``(LU, pivots)`` from :func:`lu` into ``P, L, U`` with ``A = P L U``
    (``torch.lu_unpack``)."""
    _check_tensor(LU_data, "lu_unpack", "LU_data", 1)
    _check_tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if LU_data.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = builtins.min(m, n)
    if unpack_pivots:
        if LU_pivots.dtype is not _C.int32:
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor")
        if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
            raise RuntimeError(
                "torch.lu_unpack: Expected LU_pivots.size(-1) == min(LU_data.size(-1), "
                f"LU_data.size(-2)), but got {LU_pivots.shape[-1] if LU_pivots.dim() else 0}")
    dt = LU_data.dtype
    empty = ptcore.empty(0, dtype=dt, device=LU_data.device)
    if unpack_data:
        Lfull = ptcore.tril(LU_data, -1).narrow(-1, 0, k)
        L = Lfull + ptcore.eye(m, k, dtype=dt)
        U = ptcore.triu(LU_data.narrow(-2, 0, k))
    else:
        L = U = empty
    if unpack_pivots:
        import numpy as np
        P = ptcore.from_numpy(np.ascontiguousarray(_perm_from_pivots(LU_pivots, m))).to(dt)
    else:
        P = empty
    if out is not None:
        return LUUnpackResult(_write_out(P, out[0]), _write_out(L, out[1]),
                              _write_out(U, out[2]))
    return LUUnpackResult(P, L, U)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """Solve ``A x = b`` from ``A``'s LU factorisation (``torch.lu_solve``)."""
    _check_tensor(b, "lu_solve", "input", 1)
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                  "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                  "with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    if b.dim() < 2:
        raise RuntimeError(f"linalg.lu_solve: Expected B to have at least 2 dimensions, but it "
                           f"has {b.dim()} dimensions instead")
    _square_check(LU_data, "linalg.lu_solve")
    if b.shape[-2] != LU_data.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({LU_data.shape[-2]}x{LU_data.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    if b.dtype is not LU_data.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_tname(LU_data.dtype)} and B of type "
                           f"{_tname(b.dtype)} instead")
    P, L, U = lu_unpack(LU_data, LU_pivots)
    b, P = _broadcast_mats(b, P)
    b, L = _broadcast_mats(b, L)
    b, U = _broadcast_mats(b, U)
    y = ptcore.linalg.solve(L, P.mT @ b)
    return _write_out(ptcore.linalg.solve(U, y), out)


# ---------------------------------------------------------------------------
# special functions
# ---------------------------------------------------------------------------

def _to_np(t):
    return t.detach().resolve_conj().numpy()


def _from_np(a, dt):
    import numpy as np
    r = ptcore.from_numpy(np.ascontiguousarray(a))
    return r.to(dt) if r.dtype is not dt else r


def _float_dtype(x):
    return x.dtype if x.dtype.is_floating_point else _C.get_default_dtype()


def _polygamma_raw(n, x):
    import scipy.special as sp
    dt = _float_dtype(x)
    import numpy as np
    xa = _to_np(x).astype(np.float64)
    with np.errstate(all="ignore"):
        r = sp.polygamma(n, xa)
    return _from_np(r, dt)


_POLYGAMMA_FN = []


def _polygamma_function():
    if not _POLYGAMMA_FN:
        from ptcore.autograd import Function

        class PolygammaBackward(Function):
            @staticmethod
            def forward(ctx, x, n):
                ctx.n = n
                ctx.save_for_backward(x)
                return _polygamma_raw(n, x)

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * polygamma(ctx.n + 1, x), None

        _POLYGAMMA_FN.append(PolygammaBackward)
    return _POLYGAMMA_FN[0]


def polygamma(n, input, *, out=None):
    """``n``-th derivative of the digamma function (``torch.polygamma``)."""
    _check_tensor(input, "polygamma", "input", 2)
    n = operator.index(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if input.is_complex():
        raise NotImplementedError(f"\"polygamma\" not implemented for '{_tname(input.dtype)}'")
    if n == 0:
        x = input if input.dtype.is_floating_point else input.to(_C.get_default_dtype())
        return _write_out(ptcore.digamma(x), out)
    if _recording(input):
        r = _polygamma_function().apply(input, n)
    else:
        r = _polygamma_raw(n, input)
    return _write_out(r, out)


def mvlgamma(input, p, *, out=None):
    """Multivariate log-gamma of dimension ``p`` (``torch.mvlgamma``)."""
    _check_tensor(input, "mvlgamma", "input", 1)
    p = operator.index(p)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dt = _float_dtype(input)
    args = ptcore.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dt, device=input.device)
    x = input if input.dtype is dt else input.to(dt)
    args = args + x.unsqueeze(-1)
    r = ptcore.lgamma(args).sum(-1) + (p * (p - 1)) * math.log(math.pi) * 0.25
    return _write_out(r, out)


def _igamma_raw(a, x, upper):
    import numpy as np
    import scipy.special as sp
    dt = ptcore.result_type(a, x)
    a_, x_ = ptcore.broadcast_tensors(a, x)
    npdt = np.float64 if dt is _C.float64 else np.float32
    with np.errstate(all="ignore"):
        r = (sp.gammaincc if upper else sp.gammainc)(_to_np(a_).astype(npdt),
                                                       _to_np(x_).astype(npdt))
    return _from_np(np.asarray(r), dt)


_IGAMMA_FN = []


def _igamma_function():
    if not _IGAMMA_FN:
        from ptcore.autograd import Function

        class IgammaBackward(Function):
            @staticmethod
            def forward(ctx, a, x, upper):
                ctx.upper = upper
                ctx.save_for_backward(a, x)
                return _igamma_raw(a, x, upper)

            @staticmethod
            def backward(ctx, g):
                a, x = ctx.saved_tensors
                name = "igammac" if ctx.upper else "igamma"
                if ctx.needs_input_grad[0]:
                    raise NotImplementedError(f"the derivative for '{name}: input' is not "
                                              "implemented.")
                dx = None
                if ctx.needs_input_grad[1]:
                    d = ptcore.exp((a - 1) * ptcore.log(x) - x - ptcore.lgamma(a))
                    dx = g * (-d if ctx.upper else d)
                    if tuple(dx.shape) != tuple(x.shape):
                        dx = sum_to_size(dx, *x.shape)
                    if dx.dtype is not x.dtype:
                        dx = dx.to(x.dtype)
                return None, dx, None

        _IGAMMA_FN.append(IgammaBackward)
    return _IGAMMA_FN[0]


def _igamma(input, other, upper, out):
    name = "igammac" if upper else "igamma"
    _check_tensor(input, name, "input", 1)
    _check_tensor(other, name, "other", 2)
    dt = ptcore.result_type(input, other)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_tname(dt)}'")
    if _recording(input, other):
        r = _igamma_function().apply(input, other, upper)
    else:
        r = _igamma_raw(input, other, upper)
    return _write_out(r, out)


def igamma(input, other, *, out=None):
    """Regularized lower incomplete gamma ``P(input, other)`` (``torch.igamma``)."""
    return _igamma(input, other, False, out)


def igammac(input, other, *, out=None):
    """Regularized upper incomplete gamma ``Q(input, other)`` (``torch.igammac``)."""
    return _igamma(input, other, True, out)


# ---------------------------------------------------------------------------
# predicates, creation, fills
# ---------------------------------------------------------------------------

def is_nonzero(input):
    """Truth value of a single-element tensor (``torch.is_nonzero``)."""
    _check_tensor(input, "is_nonzero", "input", 1)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


def is_same_size(input, other):
    """True if both tensors have the same shape (``torch.is_same_size``)."""
    _check_tensor(input, "is_same_size", "input", 1)
    _check_tensor(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """True if ``input``'s dtype is signed (``torch.is_signed``)."""
    _check_tensor(input, "is_signed", "input", 1)
    return input.is_signed()


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    """0-dim tensor holding ``s``, default float dtype (``torch.scalar_tensor``)."""
    if isinstance(s, _TensorBase):
        s = s.item()
    dt = _C.get_default_dtype() if dtype is None else dtype
    return ptcore.full((), s, dtype=dt, device=device, requires_grad=requires_grad)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated inclusive ``[start, end]`` range (``torch.range``); use :func:`arange`."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    vals = [v.item() if isinstance(v, _TensorBase) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = builtins.int(math.floor((end - start) / step)) + 1
    dt = _C.get_default_dtype() if dtype is None else dtype
    if _is_int_dtype(dt) and dt is not _C.bool_ and not (builtins.float(step).is_integer()):
        raise RuntimeError("step must be an integer for integral dtypes in torch.range")
    r = ptcore.arange(size, dtype=_C.float64) * step + start
    r = r.to(dt)
    if requires_grad:
        r.requires_grad_(True)
    return _write_out(r, out)


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


def zero_(input):
    """Fill ``input`` with zeros in place (``torch.zero_``)."""
    return input.zero_()


# ---------------------------------------------------------------------------
# window functions
# ---------------------------------------------------------------------------

def _window(name, N, periodic, dtype, device, requires_grad, make):
    dt = _C.get_default_dtype() if dtype is None else dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    N = operator.index(N)
    if N < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={N}")
    if N == 0:
        w = ptcore.empty(0, dtype=dt, device=device)
    elif N == 1:
        w = ptcore.ones(1, dtype=dt, device=device)
    else:
        L = N + 1 if periodic else N
        w = make(ptcore.arange(L, dtype=dt, device=device), L)
        if periodic:
            w = w.narrow(0, 0, L - 1).contiguous()
    if requires_grad:
        w.requires_grad_(True)
    return w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (``torch.hamming_window``)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, L: ptcore.cos(n * (math.pi * 2. / (L - 1))) * (-beta) + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """Hann window (``torch.hann_window``)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, L: ptcore.cos(n * (math.pi * 2. / (L - 1))) * (-0.5) + 0.5)


def _blackman(n, L):
    w = n * (math.pi / (L - 1))
    return ptcore.cos(w * 4) * 0.08 - ptcore.cos(w * 2) * 0.5 + 0.42


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Blackman window (``torch.blackman_window``)."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def _bartlett(n, L):
    w = n * (2. / (L - 1))
    h = ((L - 1) >> 1) + 1
    return ptcore.cat([w.narrow(0, 0, h), w.narrow(0, h, L - h) * -1 + 2])


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """Bartlett (triangular) window (``torch.bartlett_window``)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """Kaiser window with shape parameter ``beta`` (``torch.kaiser_window``)."""
    def make(n, L):
        nd = n.to(_C.float64) if n.dtype is _C.float64 else n
        alpha = (L - 1) / 2.0
        t = ptcore.abs(1 - ((nd - alpha) / alpha) ** 2)
        b = ptcore.full((), beta, dtype=nd.dtype)
        return ptcore.i0(ptcore.sqrt(t) * beta) / ptcore.i0(b)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, make)


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------

def renorm(self, p, dim, maxnorm):
    """Rescale each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm``
    (``Tensor.renorm``)."""
    if builtins.float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if builtins.float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} "
                           "dimensions")
    if _is_int_dtype(self.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(self.dtype)}")
    d = _wrap_dim(dim, self.dim())
    dims = [k for k in builtins.range(self.dim()) if k != d]
    acc = _C.complex128 if self.is_complex() else _C.float64
    x = self.to(acc) if self.dtype is not acc else self
    norm = ptcore.linalg.vector_norm(x, p, dims, keepdim=True)
    factor = ptcore.where(norm > maxnorm, maxnorm / (norm + 1e-7), ptcore.ones_like(norm))
    rdt = _C.float64 if self.dtype is _C.complex128 else (
        _C.float32 if self.dtype is _C.complex64 else self.dtype)
    return self * factor.to(rdt)


def renorm_(self, p, dim, maxnorm):
    """In-place :meth:`renorm`."""
    return _inplace(self, renorm, p, dim, maxnorm)


def _size_args(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, _C.Size)):
        size = size[0]
    return [operator.index(s) for s in size]


def sum_to_size(self, *size):
    """Sum ``self`` down to ``size`` (which must broadcast to ``self.shape``)
    (``Tensor.sum_to_size``)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = _size_args(size)
    shape = list(self.shape)
    ok = len(size) <= len(shape)
    if ok:
        for s, t in zip(reversed(size), reversed(shape)):
            if s != t and s != 1:
                ok = False
                break
    if not ok:
        raise RuntimeError(f"size {{{size}}} is not expandable to size {{{shape}}}.")
    r = self
    lead = len(shape) - len(size)
    if lead:
        r = r.sum(list(builtins.range(lead)))
    red = [i for i, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    if red:
        r = r.sum(red, keepdim=True)
    return r


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place; ``wrap`` restarts it below for tall
    matrices (``Tensor.fill_diagonal_``)."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    h, w = self.shape[0], self.shape[1]
    if nd > 2:
        for i in builtins.range(1, nd):
            if self.shape[i] != h:
                raise RuntimeError("all dimensions of input must be of equal length")
    off = self.storage_offset()
    stride = builtins.sum(self.stride())
    size = builtins.min(h, w)
    self.as_strided([size], [stride], off).fill_(fill_value)
    if wrap and nd == 2 and h > w + 1:
        step = w + 1
        wrap_size = (self.numel() + step - 1) // step - size
        self.as_strided([wrap_size], [stride], off + self.stride(0) * (w + 1)).fill_(fill_value)
    return self


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.dim()}-D tensor.")
    return self.mT.conj() if self.is_complex() else self.mT


def _H(self):
    if self.dim() == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return self.conj() if self.is_complex() else self
    if self.dim() != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor. For batches of matrices, consider using "
                           "tensor.mH")
    return self.mT.conj() if self.is_complex() else self.mT


def adjoint(self):
    """Conjugate transpose of the last two dims (``Tensor.adjoint``)."""
    if self.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {self.dim()}-D tensor.")
    return _mH(self)


def _output_nr(self):
    return getattr(self, "_output_nr", 0)




def is_neg(self):
    """Whether the negative bit is set (ptcore negates eagerly: always False)."""
    return False


def new(self, *args, device=None, **kwargs):
    """Legacy constructor with ``self``'s dtype (``Tensor.new``)."""
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(k + '=' + type(v).__name__ for k, v in kwargs.items())}, )")
    dt = self.dtype
    dev = self.device if device is None else device
    if not args:
        return ptcore.empty(0, dtype=dt, device=dev)
    if len(args) == 1 and isinstance(args[0], _TensorBase):
        o = args[0]
        if o.dtype is not dt:
            raise TypeError(f"expected dtype {dt} (got {o.dtype})")
        return o.detach()
    if len(args) == 1 and isinstance(args[0], _C.Size):
        return ptcore.empty(tuple(args[0]), dtype=dt, device=dev)
    if builtins.all(isinstance(a, numbers.Integral) and not isinstance(a, builtins.bool)
                    for a in args):
        return ptcore.empty(*args, dtype=dt, device=dev)
    if len(args) == 1 and not isinstance(args[0], (numbers.Number, str)):
        return ptcore.tensor(args[0], dtype=dt, device=dev)
    raise TypeError("new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def _sgn_(self):
    return _inplace(self, ptcore.sgn)


def _conj_physical_(self):
    if not self.is_complex():
        return self
    return _inplace(self, ptcore.conj_physical)


def _rebind(self, name, *args):
    """In-place metadata ops (``squeeze_``, ``t_`` ...): compute the view and
    make ``self`` take its shape/strides/offset (and its autograd history)."""
    v = getattr(self, name)(*args)
    if _recording(self):
        if self.grad_fn is None and self._base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        _C._set_data(self, v)
        self._grad_fn = v._grad_fn
        self._output_nr = getattr(v, "_output_nr", 0)
        return self
    _C._set_data(self, v)
    return self


def squeeze_(self, *dim):
    """In-place :meth:`squeeze` (rebinds the shape)."""
    return _rebind(self, "squeeze", *dim)


def unsqueeze_(self, dim):
    """In-place :meth:`unsqueeze`."""
    return _rebind(self, "unsqueeze", dim)


def t_(self):
    """In-place :meth:`t`."""
    return _rebind(self, "t")


def transpose_(self, dim0, dim1):
    """In-place :meth:`transpose`."""
    return _rebind(self, "transpose", dim0, dim1)


def as_strided_(self, size, stride, storage_offset=None):
    """In-place :meth:`as_strided`."""
    if storage_offset is None:
        return _rebind(self, "as_strided", size, stride)
    return _rebind(self, "as_strided", size, stride, storage_offset)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_inplace(self, n):
    return _inplace(self, lambda x: polygamma(n, x))


_TENSOR_METHODS = {
    "cross": cross, "diff": diff, "cov": cov, "corrcoef": corrcoef,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "logaddexp": logaddexp, "logaddexp2": logaddexp2,
    "heaviside": heaviside, "heaviside_": lambda self, values: _inplace(self, heaviside, values),
    "gcd": gcd, "gcd_": gcd_, "lcm": lcm, "lcm_": lcm_, "sinc": sinc, "sinc_": sinc_,
    "frexp": frexp, "ldexp": ldexp, "ldexp_": ldexp_, "dist": dist, "positive": positive,
    "matrix_exp": matrix_exp, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "lu_solve": lu_solve,
    "lu": lambda self, pivot=True, get_infos=False: tuple(lu(self, pivot, get_infos)),
    "polygamma": _polygamma_method, "polygamma_": _polygamma_inplace,
    "mvlgamma": mvlgamma, "mvlgamma_": lambda self, p: _inplace(self, mvlgamma, p),
    "igamma": igamma, "igamma_": lambda self, other: _inplace(self, igamma, other),
    "igammac": igammac, "igammac_": lambda self, other: _inplace(self, igammac, other),
    "is_nonzero": is_nonzero, "is_same_size": is_same_size,
    "renorm": renorm, "renorm_": renorm_, "sum_to_size": sum_to_size,
    "fill_diagonal_": fill_diagonal_,
    "mH": property(_mH), "H": property(_H), "adjoint": adjoint,
    "output_nr": property(_output_nr), "is_neg": is_neg,
    "new": new,
    "absolute_": lambda self: self.abs_(),
    "arctan2_": lambda self, other: self.atan2_(other),
    "sgn_": _sgn_, "fix_": lambda self: self.trunc_(),
    "conj_physical_": _conj_physical_,
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "t_": t_, "transpose_": transpose_,
    "swapaxes_": transpose_, "swapdims_": transpose_, "as_strided_": as_strided_,
}
for _k, _v in list(_TENSOR_METHODS.items()):
    if callable(_v) and getattr(_v, "__name__", "") == "<lambda>":
        _v.__name__ = _k
        _v.__qualname__ = "Tensor." + _k
del _k, _v


# ---------------------------------------------------------------------------
# more function forms: *_copy ops, unsafe splits, legacy norms/solvers
# ---------------------------------------------------------------------------

def _fresh(t):
    return t.clone(memory_format=_C.contiguous_format)


def _copy_op(name, method):
    def fn(input, *args, out=None, **kwargs):
        r = input if method == "view_as_self" else getattr(input, method)(*args, **kwargs)
        r = tuple(_fresh(v) for v in r) if isinstance(r, (tuple, list)) else _fresh(r)
        return r if out is None else _write_out(r, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A contiguous copy of ``input.{method}(...)`` (``torch.{name}``)."
    return fn


def _fn_copy_op(name, base):
    def fn(input, *, out=None):
        r = _fresh(getattr(ptcore, base)(input))
        return r if out is None else _write_out(r, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"A contiguous copy of ``ptcore.{base}(input)`` (``torch.{name}``)."
    return fn


_COPY_OPS = {
    "alias_copy": "view_as_self", "as_strided_copy": "as_strided", "detach_copy": "detach",
    "diagonal_copy": "diagonal", "expand_copy": "expand", "permute_copy": "permute",
    "select_copy": "select", "split_copy": "split", "split_with_sizes_copy": "split",
    "squeeze_copy": "squeeze", "t_copy": "t", "transpose_copy": "transpose",
    "unbind_copy": "unbind", "unfold_copy": "unfold", "unsqueeze_copy": "unsqueeze",
    "view_copy": "view",
}
for _n, _m in _COPY_OPS.items():
    globals()[_n] = _copy_op(_n, _m)
    __all__.append(_n)
for _n in ("view_as_real_copy", "view_as_complex_copy"):
    globals()[_n] = _fn_copy_op(_n, _n[:-5])
    __all__.append(_n)
del _n, _m


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """A contiguous copy of ``input[..., start:end:step, ...]`` along ``dim`` (``torch.slice_copy``)."""
    d = _wrap_dim(dim, input.dim())
    r = _fresh(input[(slice(None),) * d + (slice(start, end, step),)])
    return r if out is None else _write_out(r, out)


def split_with_sizes(input, split_sizes, dim=0):
    """Split into chunks of the given sizes (``torch.split_with_sizes``)."""
    return input.split_with_sizes(split_sizes, dim)


def unsafe_split(input, split_size, dim=0):
    """:meth:`Tensor.split` without view tracking (``torch.unsafe_split``)."""
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """:func:`split_with_sizes` without view tracking (``torch.unsafe_split_with_sizes``)."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    """:meth:`Tensor.chunk` without view tracking (``torch.unsafe_chunk``)."""
    return input.chunk(chunks, dim)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated; ``linalg.vector_norm(input, 2, dim, keepdim)`` (``torch.frobenius_norm``)."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2)
    return _write_out(ptcore.linalg.vector_norm(input, 2., dim, keepdim), out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated; ``linalg.matrix_norm(input, 'nuc', dim, keepdim)`` (``torch.nuclear_norm``)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
                  "will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.dim()} dimensions instead.")
        dim = (0, 1)
    return _write_out(ptcore.linalg.matrix_norm(input, "nuc", tuple(dim), keepdim), out)


TriangularSolveResult = _named("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Solve a triangular system, legacy API (``torch.triangular_solve``):
    returns ``(solution, cloned_coefficient)``."""
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                  "release.\ntorch.linalg.solve_triangular has its arguments reversed and does "
                  "not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
                  "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
                  UserWarning, stacklevel=2)
    _check_tensor(b, "triangular_solve", "input", 1)
    _check_tensor(A, "triangular_solve", "A", 2)
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.dim()} dimensions instead")
    _check_linear_solve(b, A, "triangular_solve")
    T = ptcore.triu(A) if upper else ptcore.tril(A)
    if unitriangular:
        n = A.shape[-1]
        eye = ptcore.eye(n, dtype=A.dtype)
        T = T * (1 - eye) + eye
    if transpose:
        T = T.mT
    bb, TT = _broadcast_mats(b, T)
    sol = ptcore.linalg.solve(TT, bb)
    coef = _fresh(_broadcast_mats(b, A)[1])
    if out is not None:
        return TriangularSolveResult(_write_out(sol, out[0]), _write_out(coef, out[1]))
    return TriangularSolveResult(sol, coef)


def is_inference(input):
    """Whether ``input`` is an inference tensor (``torch.is_inference``): its
    memory was allocated inside ``inference_mode``."""
    _check_tensor(input, "is_inference", "input", 1)
    return input.is_inference()


def is_neg(input):
    """Whether ``input`` has the negative bit set (``torch.is_neg``; always False)."""
    return False


__all__ += ["slice_copy", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes",
            "unsafe_chunk", "frobenius_norm", "nuclear_norm", "triangular_solve"]


# random in-place fills and Python-callable maps (Tensor methods)

def _cauchy_(self, median=0., sigma=1., *, generator=None):
    u = ptcore.empty_like(self).uniform_(generator=generator)
    return self.copy_(median + sigma * ptcore.tan(math.pi * (u - 0.5)))


def _log_normal_(self, mean=1., std=2., *, generator=None):
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return self.normal_(mean, std, generator=generator).exp_()


def _geometric_(self, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = ptcore.empty_like(self, dtype=_C.float64).uniform_(generator=generator)
    u = ptcore.where(u == 0, ptcore.full_like(u, 5e-324), u)
    return self.copy_(ptcore.ceil(ptcore.log(u) / math.log1p(-p)))


def _apply_(self, callable):
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, tensor, callable):
    o = tensor.expand_as(self)
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), o.reshape(-1).tolist())]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _map2_(self, x, y, callable):
    xs, ys = x.expand_as(self), y.expand_as(self)
    vals = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(),
                                                 xs.reshape(-1).tolist(), ys.reshape(-1).tolist())]
    self.copy_(ptcore.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


_TENSOR_METHODS.update({
    "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk,
    "triangular_solve": triangular_solve,
    "cauchy_": _cauchy_, "log_normal_": _log_normal_, "geometric_": _geometric_,
    "apply_": _apply_, "map_": _map_, "map2_": _map2_,
    "bernoulli": lambda self, p=None, *, generator=None: ptcore.bernoulli(
        self, p, generator=generator),
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None:
        ptcore.multinomial(self, num_samples, replacement, generator=generator),
    "const_data_ptr": lambda self: self.data_ptr(),
})
for _k in ("is_xla", "is_xpu", "is_ipu", "is_maia", "is_mps", "is_mtia", "is_vulkan",
           "is_mkldnn", "is_nested", "is_sparse_csr"):
    _TENSOR_METHODS[_k] = property(lambda self: False, doc=f"``Tensor.{_k}``: always False.")
_TENSOR_METHODS["is_distributed"] = lambda self: False
for _k, _v in list(_TENSOR_METHODS.items()):
    if callable(_v) and getattr(_v, "__name__", "") == "<lambda>":
        _v.__name__ = _k
        _v.__qualname__ = "Tensor." + _k
del _k, _v


# ---------------------------------------------------------------------------
# top-level in-place aliases: ptcore.abs_(x) is x.abs_()
# ---------------------------------------------------------------------------

_INPLACE_ALIASES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_",
    "log1p_", "log2_", "logit_", "nan_to_num_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "resize_as_", "round_", "sinh_", "square_", "tan_", "trunc_", "xlogy_",
)   # (cos_, exp_, log_, neg_, sigmoid_, sin_, sqrt_, rsqrt_, tanh_ come from _elementwise)


def _make_alias(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``ptcore.{name}(input, ...)`` is ``input.{name}(...)`` (in place)."
    return fn


for _name in _INPLACE_ALIASES:
    if _name not in globals():
        globals()[_name] = _make_alias(_name)
        __all__.append(_name)
del _name


# ---------------------------------------------------------------------------
# gradient (torch.gradient: central differences, one-sided at the edges)
# ---------------------------------------------------------------------------

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


def put(input, index, source, accumulate=False):
    """Out-of-place :meth:`Tensor.put_` (``torch.put``): ``input`` copied,
    with ``source`` written at the flat positions ``index``."""
    _check_tensor(input, "put", "input", 1)
    return input.put(index, source, accumulate)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """Uninitialised tensor of logical shape ``size`` whose memory is laid
    out in the dimension order ``physical_layout`` (outermost first),
    as ``torch.empty_permuted``."""
    size = [operator.index(s) for s in size]
    order = [operator.index(d) for d in physical_layout]
    nd = len(size)
    if len(order) != nd:
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; i.e. "
            f"len(size) = {nd} is not equal to len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if d < 0 or d >= nd:
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {nd - 1}, but got {d} at index "
                f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    t = ptcore.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [0] * nd
    for i, d in enumerate(order):
        inverse[d] = i
    t = t.permute(inverse)
    return t.requires_grad_() if requires_grad else t


# ---------------------------------------------------------------------------
# index_reduce (torch.index_reduce / Tensor.index_reduce_)
# ---------------------------------------------------------------------------
_INDEX_REDUCE_WARNED = [False]


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In place: ``self.select(dim, index[i])`` combined with
    ``source.select(dim, i)`` by ``reduce`` ('prod', 'mean', 'amax' or
    'amin'), ``self``'s values included unless ``include_self=False``."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin "
                           f"but got {reduce}.")
    if not _INDEX_REDUCE_WARNED[0]:
        _INDEX_REDUCE_WARNED[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning,
                      stacklevel=2)
    _check_tensor(index, "index_reduce_", "index", 2)
    _check_tensor(source, "index_reduce_", "source", 3)
    if index.dim() > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{index.dtype._legacy} and size: {list(index.shape)}")
    if index.dtype not in (_C.int32, _C.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._legacy}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({self.dtype._legacy}) and source "
                           f"({source.dtype._legacy}) must have the same scalar type")
    nd = builtins.max(self.dim(), 1)
    d = _wrap_dim(dim, nd)
    sshape, oshape = list(self.shape) or [1], list(source.shape) or [1]
    if len(sshape) != len(oshape) or any(a != b for k, (a, b) in enumerate(zip(sshape, oshape))
                                         if k != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    if index.numel() != oshape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({oshape[d]}), for dim: {d}")
    idx = index.reshape(-1).to(_C.int64)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= sshape[d]):
        raise IndexError("index out of range in self")
    target = self.reshape(sshape) if self.dim() == 0 else self
    src = source.reshape(oshape)
    view = [1] * nd
    view[d] = -1
    target.scatter_reduce_(d, idx.reshape(view).expand(oshape), src, reduce,
                           include_self=include_self)
    return self


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Out-of-place :func:`index_reduce_` (``torch.index_reduce``)."""
    _check_tensor(input, "index_reduce", "input", 1)
    r = index_reduce_(input.clone(), dim, index, source, reduce, include_self=include_self)
    if out is None:
        return r
    return out.resize_(r.shape).copy_(r)


__all__ += ["index_reduce"]
_TENSOR_METHODS.update(index_reduce=index_reduce, index_reduce_=index_reduce_)
