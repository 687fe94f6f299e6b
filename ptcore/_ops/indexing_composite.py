"""Indexing ops composed of other ops: ``unravel_index``, ``put``,
``index_reduce`` and ``Tensor.fill_diagonal_``."""
import builtins
import itertools
import numbers
import operator
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import number_param as _number_param
from ptcore._ops._composite_common import _check_tensor, _wrap_dim
from ptcore._ops._out import copy_out, assert_no_overlap
from ptcore._ops.shape import _clone_preserve_strides

__all__ = [
    "nonzero_static", "as_strided_scatter",
    "unravel_index", "put", "index_reduce",
]


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


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place; ``wrap`` restarts it below for tall
    matrices (``Tensor.fill_diagonal_``)."""
    fill_value = _number_param(fill_value, "fill_diagonal_", "fill_value", 1)
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


def put(input, index, source, accumulate=False):
    """Out-of-place :meth:`Tensor.put_` (``torch.put``): ``input`` copied,
    with ``source`` written at the flat positions ``index``."""
    _check_tensor(input, "put", "input", 1)
    return input.put(index, source, accumulate)


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
    if source.dim() == 0 and index.numel() != 1:     # PyTorch asks the 0-d source for size(dim)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if index.numel() != oshape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({oshape[d]}), for dim: {d}")
    if self.dim() != source.dim() or any(a != b for k, (a, b) in enumerate(zip(sshape, oshape))
                                         if k != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    odd = self.dtype is _C.bool_ or self.dtype.is_complex
    if odd and (self.dim() <= 1 or not include_self):
        # torch's one-dimensional kernel (and the exclude-self init) has no bool/complex loop;
        # more dims go through its composite: elementwise ops that have, or lack, them
        kname = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f'"{kname}" not implemented for \'{self.dtype._legacy}\'')
    if self.dtype.is_complex and reduce in ("amax", "amin"):
        kname = "maximum_cpu" if reduce == "amax" else "minimum_cpu"
        raise NotImplementedError(f'"{kname}" not implemented for \'{self.dtype._legacy}\'')
    idx = index.reshape(-1).to(_C.int64)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= sshape[d]):
        raise IndexError("index out of range in self")
    if self.dtype is _C.bool_ and reduce == "mean":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
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
    if out is not None and isinstance(out, _TensorBase) and out.dtype is not input.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {input.dtype._legacy}, but got "
                           f"{out.dtype._legacy} instead")
    if isinstance(out, _TensorBase) and isinstance(source, _TensorBase):
        assert_no_overlap(out, source)      # (torch writes input's copy in out in place)
    r = index_reduce_(input.clone(memory_format=_C.contiguous_format), dim, index, source,
                      reduce, include_self=include_self)
    if out is None:
        return r
    return out.resize_(r.shape).copy_(r)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """The indices of the nonzero elements as ``nonzero`` gives them, as exactly ``size``
    rows: extra rows are dropped, missing rows are filled with ``fill_value``."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size!r}")
    if out is not None and out.dtype is not _C.int64:
        raise RuntimeError(f"nonzero_static: Expected out tensor to have scalar type Long but got "
                           f"scalar type{out.dtype._legacy}")
    idx = ptcore.nonzero(input)
    n, nd = idx.shape[0], idx.shape[1]
    if n >= size:
        r = idx[:size].contiguous()
    else:
        pad = ptcore.full((size - n, nd), fill_value, dtype=idx.dtype, device=idx.device)
        r = ptcore.cat((idx, pad), dim=0)
    return r if out is None else copy_out(out, r)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` whose ``as_strided(size, stride, storage_offset)`` window holds
    ``src`` (differentiable in both)."""
    size = tuple(operator.index(s) for s in size)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    # torch's clone_preserve_strides: storage_offset addresses input's own storage layout
    out = _clone_preserve_strides(input)
    window = out.as_strided(size, stride, storage_offset)
    window.copy_(src)
    return out


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "indexing")
del _bind_module
