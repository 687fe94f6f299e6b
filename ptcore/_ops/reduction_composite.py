"""Reductions and statistics composed of other ops: ``cov``, ``corrcoef``,
``dist``, ``renorm`` and ``Tensor.sum_to_size``."""
import builtins
import operator
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._ops._composite_common import _is_int_dtype, _tname, _check_tensor, _wrap_dim, _inplace

__all__ = [
    "cov", "corrcoef", "dist", "renorm",
]


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


def dist(input, other, p=2):
    """``p``-norm of ``input - other`` (``torch.dist``)."""
    _check_tensor(input, "dist", "input", 1)
    _check_tensor(other, "dist", "other", 2)
    d = input - other
    if _is_int_dtype(d.dtype):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_tname(d.dtype)} instead.")
    return ptcore.linalg.vector_norm(d, p)


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


_TENSOR_METHODS = {
    "cov": cov,
    "corrcoef": corrcoef,
    "dist": dist,
    "renorm": renorm,
    "renorm_": renorm_,
    "sum_to_size": sum_to_size,
}

for _k, _v in list(_TENSOR_METHODS.items()):
    if callable(_v) and getattr(_v, "__name__", "") == "<lambda>":
        _v.__name__ = _k
        _v.__qualname__ = "Tensor." + _k
del _k, _v
