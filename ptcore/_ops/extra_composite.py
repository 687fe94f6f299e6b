"""Ops composed of other ops: ``histogramdd``, ``segment_reduce``, ``norm_except_dim``,
``slice_inverse``."""
import builtins
import math

from ptcore import _tensor as _C
from ptcore import linalg
from ptcore._ops import creation as _creation
from ptcore._ops import sorting as _sorting
from ptcore._tensor import _TensorBase
from ptcore._ops._composite_common import _check_tensor

__all__ = ["histogramdd", "segment_reduce", "norm_except_dim", "slice_inverse"]

# the family of each op in the dispatch table
FAMILIES = {"histogramdd": "reduction", "segment_reduce": "reduction",
            "norm_except_dim": "reduction", "slice_inverse": "shape"}
_TENSOR_METHODS = {}


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
            if b.dtype is not x.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have "
                                   "the same dtype")
            edges.append(b.detach().clone())
        return edges
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
        range = [0.0, 0.0] * n
    edges = []
    for d, nb in enumerate(counts):
        nb = builtins.int(nb)
        if nb <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {nb} for "
                               f"dimension {d}")
        edges.append(_sorting._even_edges(range[2 * d], range[2 * d + 1], nb, x))
    return edges


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
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
    x = input.detach().reshape(-1, n)
    edges = _histogramdd_edges(x, bins, range, n)
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


from ptcore._return_types import named as _named  # noqa: E402

_histogramdd_t = _named("histogramdd", ["hist", "bin_edges"])


# -- segment_reduce ---------------------------------------------------------------------------

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
    lens = lengths.reshape(-1)
    seg = _creation.arange(batch * nseg, device=data.device).repeat_interleave(lens)
    if seg.numel() != batch * n:
        raise RuntimeError("segment_reduce(): the lengths do not cover data along axis")
    index = seg.reshape((-1,) + (1,) * len(rest)).expand(src.shape)
    shape = (batch * nseg,) + rest
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
    return out.reshape(tuple(data.shape[:axis]) + (nseg,) + rest)


# -- norm_except_dim ----------------------------------------------------------------------------

def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (``torch.norm_except_dim``, weight normalization's norm); ``dim=-1`` gives the norm of
    the whole tensor."""
    _check_tensor(v, "norm_except_dim", "v", 1)
    if dim == -1:
        return linalg.vector_norm(v, pow)
    dim = dim + v.dim() if dim < 0 else dim
    others = [d for d in builtins.range(v.dim()) if d != dim]
    return linalg.vector_norm(v, pow, dim=others, keepdim=True)


# -- slice_inverse ------------------------------------------------------------------------------

def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of ``src.slice(dim, start, end, step)`` (``torch.slice_inverse``): a view
    of ``input``'s storage (``input`` being that slice) with ``src``'s sizes, strides and
    storage offset; ``RuntimeError`` when they reach outside ``input``'s storage."""
    _check_tensor(input, "slice_inverse", "input", 1)
    _check_tensor(src, "slice_inverse", "src", 2)
    return input.as_strided(tuple(src.shape), tuple(src.stride()), src.storage_offset())
