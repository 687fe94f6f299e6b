"""Reductions and statistics composed of other ops: ``cov``, ``corrcoef``,
``dist``, ``renorm``, ``Tensor.sum_to_size``, ``histogramdd``, ``segment_reduce`` and
``norm_except_dim``."""
import builtins
import math
import operator

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import strict_int_param as _strict_int
from ptcore._scalar_args import number_param as _number_param
from ptcore._ops import creation as _creation
from ptcore._ops import sorting as _sorting
from ptcore._return_types import named as _named
from ptcore._ops._out import check_out_grad, check_same_dtype, resize_out, check_written
from ptcore._ops._composite_common import _is_int_dtype, _tname, _check_tensor, _wrap_dim, _inplace
from ptcore._warn import warn_at_caller

__all__ = [
    "cov", "corrcoef", "dist", "renorm", "histogramdd", "segment_reduce", "norm_except_dim",
]


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the rows (variables) of ``input`` (``torch.cov``)."""
    _check_tensor(input, "cov", "input", 1)
    correction = _strict_int(correction, "cov", "correction")     # (an int: not a float or bool)
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
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                       "than the number of observations.")
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


def renorm(input, p, dim, maxnorm, *, out=None):
    """Rescale each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm``
    (``Tensor.renorm``)."""
    check_out_grad("renorm", out, input)
    dim = _strict_int(dim, "renorm", "dim", 2)
    p, maxnorm = _number_param(p, "renorm", "p", 1), _number_param(maxnorm, "renorm", "maxnorm", 3)
    if builtins.float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if builtins.float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           "dimensions")
    if _is_int_dtype(input.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(input.dtype)}")
    d = _wrap_dim(dim, input.dim())
    dims = [k for k in builtins.range(input.dim()) if k != d]
    acc = _C.complex128 if input.is_complex() else _C.float64
    x = input.to(acc) if input.dtype is not acc else input
    norm = ptcore.linalg.vector_norm(x, p, dims, keepdim=True)
    factor = ptcore.where(norm > maxnorm, maxnorm / (norm + 1e-7), ptcore.ones_like(norm))
    rdt = _C.float64 if input.dtype is _C.complex128 else (
        _C.float32 if input.dtype is _C.complex64 else input.dtype)
    r = input * factor.to(rdt)
    if out is None:
        return r
    # torch's mul into out, resized first: out may then be input's own memory, not part of it
    check_same_dtype(out, r.dtype)
    resize_out(out, r.shape)
    check_written(out, input)
    return out.copy_(r)


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
    if not size:
        return self.sum()       # as torch's at::sum_to: a full sum (bool/int -> int64), even of a 0-d
    r = self
    lead = len(shape) - len(size)
    if lead:
        r = r.sum(list(builtins.range(lead)))
    red = [i for i, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    if red:
        r = r.sum(red, keepdim=True)
    return r


# -- histogramdd -------------------------------------------------------------------------------

def _histogramdd_edges(x, bins, range, n):
    """The ``n`` bin-edge tensors of ``histogramdd``."""
    if isinstance(bins, _TensorBase) or (isinstance(bins, (list, tuple)) and bins and
                                         isinstance(bins[0], _TensorBase)):
        seq = [bins] if isinstance(bins, _TensorBase) else list(bins)
        if len(seq) != n:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        edges = []
        for d, b in enumerate(seq):
            if b.dim() != 1:
                raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, "
                                   f"but got {b.dim()} dimensions in the bin tensor for "
                                   f"dimension {d}")
            if b.numel() < 1:
                raise RuntimeError(f"torch.histogramdd(): bins tensor should have at least 1 "
                                   f"element, but got {b.numel()} elements for dimension {d}")
            if b.numel() == 1:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for "
                                   f"dimension {d}")
            if b.dtype is not x.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have "
                                   "the same dtype")
            edges.append(b.detach().clone())
        return edges
    if x.dtype in (_C.float16, _C.bfloat16):          # torch: only the edges' variant has these
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{'Half' if x.dtype is _C.float16 else 'BFloat16'}'")
    counts = [bins] * n if isinstance(bins, builtins.int) else list(bins)
    if len(counts) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None:
        range = [builtins.float(v) for v in range]
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should "
                               f"have {2 * n} elements, but got {len(range)}")
    elif x.shape[0]:
        lo_t, hi_t = x.detach().amin(0), x.detach().amax(0)
        range = [v for d in builtins.range(n) for v in (lo_t[d].item(), hi_t[d].item())]
    else:
        range = [0.0, 1.0] * n             # torch's range for no points
    edges = []
    for d, nb in enumerate(counts):
        nb = builtins.int(nb)
        if nb <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {nb} for "
                               f"dimension {d}")
        edges.append(_sorting._even_edges(range[2 * d], range[2 * d + 1], nb, x))
    return edges


def histogramdd(input, bins, range=None, weight=None, density=False, *, out=None):
    """Multi-dimensional histogram of the points in the rows of ``input`` (``torch.histogramdd``).

    Parameters
    ----------
    input : Tensor
        Floating point, at least 2-D: ``(..., N)`` holds points in N dimensions.
    bins : int or sequence of int or sequence of Tensor
        Bins per dimension, or each dimension's increasing bin edges.
    range : sequence of float, optional
        ``[min0, max0, min1, max1, ...]`` for counted bins (default: the data's range).
    weight : Tensor, optional
        One weight per point (``input.shape[:-1]``).
    density : bool, default False
        Normalise to a probability density.

    Returns
    -------
    (Tensor, tuple of Tensor)
        ``hist`` of shape ``(bins0, bins1, ...)`` and the bin edges.
    """
    _check_tensor(input, "histogramdd", "input", 1)
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_cpp_dtype_name(input.dtype)}'")
    n = input.shape[-1]
    if weight is not None:
        _check_tensor(weight, "histogramdd", "weight", 4)
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                f"as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(input.shape)} and weight with shape {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor "
                               "and weight tensor should have the same dtype")
    if n == 0:                             # points in no dimensions: torch's 0-d empty count
        if not isinstance(bins, builtins.int) and len(bins) != 0:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        return _histogramdd_t(_C.zeros((), dtype=input.dtype, device=input.device), ())
    x = input.detach().reshape(-1, n)
    edges = _histogramdd_edges(x, bins, range, n)
    nbins = [e.numel() - 1 for e in edges]
    total = 1
    for nb in nbins:
        total *= nb
    flat = _C.zeros(x.shape[0], dtype=_C.int64, device=x.device)
    inside = _C.ones(x.shape[0], dtype=_C.bool_, device=x.device)
    for d, e in enumerate(edges):
        col = x[:, d].contiguous()
        inside = inside & (col >= e[0]) & (col <= e[-1])
        pos = _sorting.searchsorted(e, col, right=True) - 1
        pos = pos.clamp(0, builtins.max(nbins[d] - 1, 0))   # the last edge closes the last bin
        flat = flat * nbins[d] + pos
    w = None if weight is None else weight.detach().reshape(-1)[inside].to(_C.float64)
    counts = flat[inside].bincount(weights=w, minlength=total)[:total] if total else \
        _C.zeros(0, dtype=_C.float64, device=x.device)
    hist = counts.to(input.dtype).reshape(nbins)
    if density:
        s = hist.sum()
        hist = hist / s
        for d, e in enumerate(edges):
            shape = [1] * n
            shape[d] = nbins[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    if out is not None:
        hist_out, edges_out = out
        hist_out.resize_(hist.shape).copy_(hist)
        for o, e in zip(edges_out, edges):
            o.resize_(e.shape).copy_(e)
        hist, edges = hist_out, list(edges_out)
    return _histogramdd_t(hist, tuple(edges))


def _cpp_dtype_name(dt):
    return {_C.int64: "Long", _C.int32: "Int", _C.int16: "Short",
            _C.int8: "Char", _C.uint8: "Byte", _C.bool_: "Bool"}.get(dt, str(dt))



_histogramdd_t = _named("histogramdd", ["hist", "bin_edges"], out_twin=False)     # (no out=)


# -- segment_reduce ---------------------------------------------------------------------------

# (keys: the values segment_reduce's reduce= argument takes, not op names)
_SEGMENT_REDUCE = {"sum": "sum", "mean": "mean", "max": "amax", "amax": "amax", "min": "amin",
                   "amin": "amin", "prod": "prod"}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce ``data`` over consecutive segments along ``axis`` (``torch.segment_reduce``).

    Parameters
    ----------
    data : Tensor
        Floating point.
    reduce : {'sum', 'mean', 'max', 'min', 'prod'}
    lengths, offsets : Tensor
        Each segment's length, or the segments' ``S + 1`` boundaries; their leading
        dimensions are ``data``'s leading dimensions before ``axis``.
    axis : int, default 0
        Must be ``lengths.dim() - 1``.
    unsafe : bool, default False
        Skip the check that the lengths are non-negative and cover ``data.size(axis)``.
    initial : number, optional
        Start value of every segment (empty segments give it); without it an empty segment
        gives 0 (sum), 1 (prod), -inf (max), inf (min), nan (mean).
    """
    _check_tensor(data, "segment_reduce", "data", 1)
    if reduce not in _SEGMENT_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    op = _SEGMENT_REDUCE[reduce]
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{_cpp_dtype_name(data.dtype)}'")
    axis = axis + data.dim() if axis < 0 else axis
    if lengths is None:
        if offsets.shape[-1] < 1:
            raise RuntimeError("segment_reduce(): offsets must have at least one element")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    lengths = lengths.to(_C.int64)
    if axis != lengths.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if tuple(lengths.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): lengths shape {list(lengths.shape)} does not "
                           f"match data's leading dimensions {list(data.shape[:axis])}")
    if not unsafe:
        if bool((lengths < 0).any()):
            raise RuntimeError("lengths contains negative value!")
        if bool((lengths.sum(-1) != data.shape[axis]).any()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    batch = 1
    for s in data.shape[:axis]:
        batch *= s
    nseg, n = lengths.shape[-1], data.shape[axis]
    rest = tuple(data.shape[axis + 1:])
    src = data.reshape((batch * n,) + rest)
    # one more segment per row takes what the lengths leave uncovered (unsafe: torch
    # reduces the segments from the start and ignores the rest), dropped below
    lens2 = lengths.reshape(batch, nseg)
    lens2 = ptcore.cat([lens2, (n - lens2.sum(-1, keepdim=True)).clamp(min=0)], -1)
    lens = lens2.reshape(-1)
    seg = _creation.arange(batch * (nseg + 1), device=data.device).repeat_interleave(lens)
    if seg.numel() != batch * n:
        raise RuntimeError("segment_reduce(): the lengths do not cover data along axis")
    index = seg.reshape((-1,) + (1,) * len(rest)).expand(src.shape)
    shape = (batch * (nseg + 1),) + rest
    if op == "mean":
        start = 0.0 if initial is None else initial
        total = _C.full(shape, start, dtype=data.dtype, device=data.device)
        total = total.scatter_add(0, index, src)
        count = lens.to(data.dtype).reshape((-1,) + (1,) * len(rest))
        if initial is None:
            out = total / count
        else:
            out = (total / count.clamp_min(1)).where(count > 0, total)
    else:
        empty = {"sum": 0.0, "prod": 1.0, "amax": -math.inf, "amin": math.inf}[op]
        start = empty if initial is None else initial
        out = _C.full(shape, start, dtype=data.dtype, device=data.device)
        out = out.scatter_reduce(0, index, src, op, include_self=True)
    out = out.reshape((batch, nseg + 1) + rest)[:, :nseg]
    return out.reshape(tuple(data.shape[:axis]) + (nseg,) + rest)


# -- norm_except_dim ----------------------------------------------------------------------------

def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (``torch.norm_except_dim``, weight normalization's norm); ``dim=-1`` gives the norm of
    the whole tensor."""
    _check_tensor(v, "norm_except_dim", "v", 1)
    if dim == -1:
        return ptcore.linalg.vector_norm(v, pow)
    if v.dim() == 0:                       # torch asks for v.size(0)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = dim + v.dim() if dim < 0 else dim
    others = [d for d in builtins.range(v.dim()) if d != dim]
    if not others:                         # a 1-D v: the norm of each element (torch's view(n, -1))
        return ptcore.linalg.vector_norm(v.unsqueeze(-1), pow, dim=-1)
    return ptcore.linalg.vector_norm(v, pow, dim=others, keepdim=True)


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "reduction")
del _bind_module
