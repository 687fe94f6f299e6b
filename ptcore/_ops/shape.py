"""Shape and indexing ops: gather/scatter and friends, masks, nonzero,
cat/stack, flip/roll/rot90, repeat/tile, triangles and diagonals, meshgrid,
broadcasting helpers and padding.

Every public function checks its arguments (PyTorch's error types and
messages), computes the result's shape and dtype and allocates it, then calls
its CPU kernel (``cpu_kernel``: a thin wrapper over ``ptcore._ops.kernels._index``;
tensors on another device reach the kernels the operator table holds for
it, through the dispatch point's device layer).  Ops that are views plus a
copy (``repeat``, ``roll``, ``rot90``, ``pad`` ...) are written with views and
``copy_``, which runs the strided copy kernel.
"""
import builtins
import operator
import warnings

import numpy as _np

from ptcore._dispatch.device import in_host_memory as _in_host_memory
from ptcore import _tensor as _C
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._dispatch.device import (check_same_device as _check_same_device,
                                     cpu_kernel as _cpu_kernel)
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import (number_param as _number_param, strict_int_param as _strict_int,
                                 strict_symint_param as _strict_symint,
                                 bool_param, int_list_item, dtype_param as _dtype_param)
from ptcore._ops.kernels import _index as _K
from ptcore._ops._out import broadcast_shapes as _infer_size, copy_out, copy_out_same_dtype, \
    copy_out_exact, resize_out, check_out_overlaps as _check_out_overlaps, \
    assert_no_overlap as _assert_no_overlap, assert_no_internal_overlap as _assert_no_internal_overlap, \
    dense_overlap as _dense_overlap
from ptcore._ops.creation import _pinned
from ptcore._ops._memory_format import _suggest_memory_format, _in_memory_format
from ptcore._dtype_utils import _refuse_complex32, _refuse_limited, promote_types, can_cast, _cpp_name
from ptcore._ops.indexing import (
    _plain, _int64, _fmt, _scalar_name, _broadcast_strides, _check_bounds, _index_bounds_cpu,
    _masked_select_cpu as _masked_select_plain, index_put_, index_put,
)
from ptcore._warn import warn_once, warn_at_caller
from ptcore._settings import alert_not_deterministic as _alert_not_deterministic

__all__ = [
    "index_select", "index_add", "index_copy", "index_fill", "index_put", "index_put_",
    "gather", "scatter", "scatter_add", "scatter_reduce",
    "masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere", "take",
    "take_along_dim",
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "row_stack",
    "flip", "fliplr", "flipud", "roll", "rot90", "tile", "repeat_interleave",
    "tril", "triu", "tril_indices", "triu_indices", "diag", "diag_embed", "diagflat",
    "diagonal_scatter", "select_scatter", "slice_scatter", "trace",
    "meshgrid", "broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d",
    "atleast_3d", "narrow_copy", "ravel", "constant_pad_nd",
]

_MODE_GATHER, _MODE_SCATTER, _MODE_REDUCE = 0, 1, 2



# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _wrap(dim, ndim, fname="", argname="dim"):
    # an int parameter of torch's: no bool, float, NumPy array or one-element tensor
    if type(dim) is not int:
        dim = _strict_int(dim, fname, argname)
    return _C._wrap_dim_py(dim, ndim)


def _typename(o):
    return type(o).__name__


def _check_tensor(t, fname, argname, pos):
    if not isinstance(t, _TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, "
                        f"not {_typename(t)}")


def _nonempty(t):
    """``t`` as at least 1-D (a 0-d tensor becomes shape (1,))."""
    return t.view(1) if t.dim() == 0 else t


def _scalar_tensor(value, dtype):
    """A 0-d tensor of ``dtype`` holding ``value`` (PyTorch's conversion and
    overflow checks, as ``fill_``)."""
    return _C._checked_scalar(value.item() if isinstance(value, _TensorBase) else value, dtype)


def _value_of(value, fname):
    """A fill value given as a number or a 0-d tensor."""
    if isinstance(value, _TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"{fname} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        return value.item()
    return value


def _out_same_dtype(result_dtype, out, msg):
    if out is not None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"argument 'out' must be Tensor, not {_typename(out)}")
        if out.dtype is not result_dtype:
            raise RuntimeError(msg)


def _write_out(result, out):
    """Return ``result`` or copy it into ``out`` (resized like PyTorch)."""
    return result if out is None else copy_out(out, result)


def _int_list(v, fname, argname, sym=False):
    if isinstance(v, _TensorBase) or not isinstance(v, (list, tuple, _C.Size)):
        raise TypeError(f"{fname}(): argument '{argname}' must be tuple of ints, not "
                        f"{_typename(v)}")
    return [int_list_item(x, fname, argname, i, sym) for i, x in enumerate(v)]


def _broadcast_shape_tensors(shapes):
    """Broadcast shape with PyTorch's ``infer_size`` message."""
    return tuple(_infer_size(*shapes))


def _along_dim(mode, op, dense, dense_strides, data, dim, index, index_strides, shape):
    """The indexed kernel with one index operand selecting along ``dim`` of
    ``data`` (gather/scatter/index_select/index_add ...)."""
    data_strides = list(data.stride())
    data_strides[dim] = 0
    _K.indexed(mode, op, dense, dense_strides, data, data_strides, list(shape), [index],
               [index_strides], [data.shape[dim]], [data.stride(dim)])


def _dim_vector_strides(index, ndim, dim):
    st = [0] * ndim
    st[dim] = index.stride(0) if index.dim() else 0
    return st


def _refusing_limited(kname):
    """Decorator: the kernel raises PyTorch's NotImplementedError for
    uint16/32/64 tensors (the limited unsigned types its CPU kernel lacks)."""
    def deco(fn):
        def kernel(*args, **kwargs):
            _refuse_limited(kname, *args)
            return fn(*args, **kwargs)
        kernel.__name__ = fn.__name__
        return kernel
    return deco


# ---------------------------------------------------------------------------
# CPU kernels (called through cpu_kernel with validated arguments)
# ---------------------------------------------------------------------------
@_refusing_limited("index_select")
def _index_select_cpu(out, input, dim, index):
    _along_dim(_MODE_GATHER, 0, out, out.stride(), input, dim, index,
               _dim_vector_strides(index, out.dim(), dim), out.shape)


@_refusing_limited("scatter_gather_tensor_cpu")
def _gather_cpu(out, input, dim, index):
    _along_dim(_MODE_GATHER, 0, out, out.stride(), input, dim, index, list(index.stride()),
               index.shape)


@_refusing_limited("scatter_gather_tensor_cpu")
def _scatter_cpu(self, dim, index, src, reduce):
    """self[... index ...] = src (or reduce into it); ``src`` has self's dtype
    (a 0-d tensor for a value); the iteration runs over index's shape."""
    dstr = [0] * index.dim() if src.dim() == 0 else list(src.stride())
    if reduce is None:
        _along_dim(_MODE_SCATTER, 0, src, dstr, self, dim, index, list(index.stride()),
                   index.shape)
    else:
        _along_dim(_MODE_REDUCE, _K.REDUCTIONS[reduce], src, dstr, self, dim, index,
                   list(index.stride()), index.shape)


def _scatter_mean_finish_cpu(self, counts):
    _K.div_count(self, counts)


@_refusing_limited("index_copy_cpu")
def _index_put_dim_cpu(self, dim, index, source, reduce):
    """index_copy_/index_add_/index_fill_: self.select(dim, index[i]) <-
    source.select(dim, i) (or += with reduce='add'); a 0-d ``source`` fills."""
    shape = list(self.shape)
    shape[dim] = index.numel()
    dstr = [0] * len(shape) if source.dim() == 0 else list(source.stride())
    istr = _dim_vector_strides(index, len(shape), dim)
    if reduce is None:
        _along_dim(_MODE_SCATTER, 0, source, dstr, self, dim, index, istr, shape)
    elif reduce == "add" and dim == 0 and _K.index_add_rows(self, index, source):
        pass        # contiguous float rows (embedding backward): one row add each
    else:
        _along_dim(_MODE_REDUCE, _K.REDUCTIONS[reduce], source, dstr, self, dim, index, istr,
                   shape)


def _scale_cpu(t, alpha):
    """t *= alpha in place (alpha a 0-d tensor of t's dtype)."""
    _K.indexed(_MODE_REDUCE, _K.REDUCTIONS["multiply"], alpha, [0] * t.dim(), t,
               list(t.stride()), list(t.shape), [], [], [], [])


@_refusing_limited("masked_fill")
def _masked_fill_cpu(self, mask, value):
    _K.masked(2, self, self.stride(), mask, _broadcast_strides(mask, self.shape), self.shape,
              value)


_masked_select_cpu = _refusing_limited("masked_select")(_masked_select_plain)


@_refusing_limited("masked_scatter")
def _masked_scatter_cpu(self, mask, source):
    """Returns False (nothing written) when source has too few elements."""
    mstr = _broadcast_strides(mask, self.shape)
    n = _K.masked_count(mask, mstr, self.shape)
    if n > source.numel():
        return False
    src = source.contiguous() if n else source
    _K.masked(1, self, self.stride(), mask, mstr, self.shape, src)
    return True


@_refusing_limited("nonzero_count_cpu")
def _nonzero_cpu(input):
    mask = input if input.dtype is _C.bool_ else input._to_dtype(_C.bool_)
    n = _K.masked_count(mask, mask.stride(), mask.shape)
    if not input.dim():
        return _C.empty((n, 0), dtype=_C.int64)
    out = _C.empty_strided((n, input.dim()), (1, n), dtype=_C.int64)    # torch's layout
    if n:
        _K.nonzero(mask, out)
    return out


def _cat_cpu(out, tensors, dim):
    _K.cat_into(out, list(tensors), dim, False)


def _stack_cpu(out, tensors, dim):
    _K.cat_into(out, list(tensors), dim, True)


@_refusing_limited("flip_cpu")
def _flip_cpu(out, input, flags):
    _K.flip_into(out, input, flags)


@_refusing_limited("tril")
def _tri_cpu(t, diagonal, upper):
    _K.tri_zero(t, diagonal, upper)


def _repeat_interleave_index_cpu(repeats, total):
    out = _C.empty(total, dtype=_C.int64)
    _K.repeat_index(repeats, out)
    return out


@_refusing_limited("trace")
def _trace_cpu(out, input):
    _K.trace_sum(input, out)


def _mod_index_cpu(index, size):
    _K.mod_index(index, size)




# ---------------------------------------------------------------------------
# index_select / gather / take
# ---------------------------------------------------------------------------
def index_select(input, dim, index, *, out=None):
    """Entries of ``input`` along ``dim`` at the positions in ``index``.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        1-D (or 0-d) int64/int32 tensor of positions in ``[0, input.size(dim))``.
    out : Tensor, optional

    Returns
    -------
    Tensor
        ``input``'s shape with ``dim`` of size ``index.numel()`` (a copy).

    Raises
    ------
    RuntimeError
        Wrong index dtype or a position out of range (checked before anything
        is written).
    IndexError
        ``index`` has more than one dimension.

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.arange(6).view(2, 3)
    >>> ptcore.index_select(x, 1, ptcore.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    if out is None:
        # the common small case (contiguous CPU input, int64 positions in range): one kernel call
        r = _K.index_select_fast(input, dim, index)
        if r is not None:
            return r
    _check_tensor(input, "index_select", "input", 1)
    _check_tensor(index, "index_select", "index", 3)
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype is not _C.int64 and index.dtype is not _C.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    _check_same_device("index_select", input, index)
    _out_same_dtype(input.dtype, out, "index_select(): self and result must have the same "
                                      "scalar type")
    _check_out_overlaps(out, (input, index))
    ndim = input.dim()
    dim = _wrap(dim, ndim)
    src = _plain(input)
    idx = _int64(_plain(index))
    if ndim == 0:
        if idx.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.numel()} value(s)")
        if int(idx.reshape(-1)[0].item()) != 0:
            raise IndexError("index out of range in self")
        return _write_out(src.clone(), out)
    size = input.shape[dim]
    if size == 0 and idx.numel():
        if ndim == 1:      # torch's 1-d kernel bounds-checks first
            raise IndexError("index out of range in self")
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    # PyTorch's dim-1 kernel reports a RuntimeError, the others an IndexError
    _check_bounds(idx, size, False, lambda v: RuntimeError(
        f"INDICES element is out of DATA bounds, id={v} axis_dim={size}") if dim == 1 else
        IndexError("index out of range in self"))
    shape = list(input.shape)
    shape[dim] = idx.numel()
    result = _C.empty(shape, dtype=input.dtype, device=input.device)
    if result.numel():
        _cpu_kernel("index_select", input.device, _index_select_cpu)(result, src, dim, idx)
    return _write_out(result, out)


def _check_index_dtype(index, fname):
    if index.dtype is not _C.int64 and index.dtype is not _C.int32:
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Values of ``input`` along ``dim`` at ``index``:
    ``out[i][j] = input[i][index[i][j]]`` for ``dim=1``.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        int64/int32, same number of dimensions as ``input``, no larger than
        ``input`` in the other dims; values in ``[0, input.size(dim))``.
    sparse_grad : bool
        Accepted for compatibility; ignored.
    out : Tensor, optional

    Returns
    -------
    Tensor
        ``index``'s shape, ``input``'s dtype.

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.tensor([[1, 2], [3, 4]])
    >>> ptcore.gather(x, 1, ptcore.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    if out is None:
        # the common case (CPU operands, int64 index in range, shapes that fit): one kernel call
        r = _K.gather_fast(input, dim, index)
        if r is not None:
            return r
    _refuse_complex32("scatter_gather_tensor_cpu", input)
    _check_tensor(input, "gather", "input", 1)
    _check_tensor(index, "gather", "index", 3)
    ndim = input.dim()
    dim = _wrap(dim, ndim)
    empty = index.numel() == 0           # PyTorch checks nothing about an empty index
    if not empty:
        _check_index_dtype(index, "gather")
    if not empty and max(index.dim(), 1) != max(ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(input.dtype)}, "
                           f"but got {_cpp_name(out.dtype)} instead")
    _check_same_device("gather", input, index)
    if out is not None:
        resize_out(out, index.shape)        # torch's meta resizes, then the kernel checks aliasing
    _check_out_overlaps(out, (input,), (index,))
    result = _C.empty(index.shape, dtype=input.dtype, device=input.device)
    if empty:
        return _write_out(result, out)
    src = _nonempty(_plain(input))
    idx = _nonempty(_int64(_plain(index)))
    for d in range(src.dim()):
        if d != dim and idx.shape[d] > src.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {_fmt(index.shape)} to be "
                f"no larger than self {_fmt(input.shape)} apart from dimension {dim}")
    if idx.numel():
        size = src.shape[dim]
        _check_bounds(idx, size, False, lambda v: RuntimeError(
            f"index {v} is out of bounds for dimension {dim} with size {size}"))
        _cpu_kernel("gather", input.device, _gather_cpu)(_nonempty(result), src, dim, idx)
    return _write_out(result, out)


def _flat(t):
    return t.reshape(-1)


def take(input, index, *, out=None):
    """``input`` as a 1-D tensor, indexed by ``index`` (result has index's shape)."""
    _refuse_complex32("take_cpu", input)
    _check_tensor(input, "take", "input", 1)
    _check_tensor(index, "take", "index", 2)
    if index.dtype is not _C.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_scalar_name(index.dtype)}")
    _check_same_device("take", input, index)
    _out_same_dtype(input.dtype, out, "take(): self and result must have the same scalar type")
    _check_out_overlaps(out, (input, index))
    n = input.numel()
    idx = _plain(index)
    result = _C.empty(index.shape, dtype=input.dtype, device=input.device)
    if idx.numel():
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        _check_bounds(idx, n, True, lambda v: IndexError(
            f"out of range: tried to access index {v} on a tensor of {n} elements."))
        _cpu_kernel("gather", input.device, _gather_cpu)(_flat(result), _flat(_plain(input)), 0,
                                                 _flat(idx))
    return _write_out(result, out)


def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the
    other dims; flattened when ``dim`` is None)."""
    _check_tensor(input, "take_along_dim", "input", 1)
    _check_tensor(indices, "take_along_dim", "indices", 2)
    if indices.dtype is not _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_scalar_name(indices.dtype)}")
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(input.dtype)}, "
                           f"but got {_cpp_name(out.dtype)} instead")
    if dim is None:
        return gather(_flat(_plain(input)), 0, _flat(_plain(indices)), out=out)
    if input.dim() != indices.dim():
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.dim()} dimensions for input, and {indices.dim()} "
            "dimensions for indices")
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap(dim, input.dim())
    x = _plain(input)
    idx = _plain(indices)
    s = list(x.shape)
    s[d] = idx.shape[d]
    idx = idx.expand(_broadcast_shape_tensors([s, idx.shape]))
    s = list(idx.shape)
    s[d] = x.shape[d]
    x = x.expand(_broadcast_shape_tensors([s, x.shape]))
    if idx.numel():
        size = x.shape[d]
        if size == 0:
            raise RuntimeError("ZeroDivisionError")
        idx = idx.clone(memory_format=_C.contiguous_format)     # our own copy to wrap
        _cpu_kernel("mod_index", idx.device, _mod_index_cpu)(idx, size)
    return gather(x, d, idx, out=out)


# ---------------------------------------------------------------------------
# scatter family
# ---------------------------------------------------------------------------
def _scatter_checks(self, dim, index, src, fname):
    ndim = self.dim()
    dim = _wrap(dim, ndim)
    if index.numel():
        _check_index_dtype(index, "scatter")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_same_device(fname, self, index, src)
    if index.numel() == 0:               # PyTorch checks no shapes for an empty index
        return dim
    if max(index.dim(), 1) != max(ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None:
        if max(src.dim(), 1) != max(index.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
    s = _nonempty(self)
    ix = _nonempty(index)
    sr = _nonempty(src) if src is not None else None
    for d in range(s.dim()):
        bad = (d != dim and ix.shape[d] > s.shape[d]) or (sr is not None
                                                          and ix.shape[d] > sr.shape[d])
        if bad:
            if sr is None:
                raise RuntimeError(
                    f"Expected index {_fmt(index.shape)} to be no larger than self "
                    f"{_fmt(self.shape)} apart from dimension {dim}")
            raise RuntimeError(
                f"Expected index {_fmt(index.shape)} to be no larger than self "
                f"{_fmt(self.shape)} apart from dimension {dim} and to be no larger size than "
                f"src {_fmt(src.shape)}")
    _check_same_device(fname, self, index, src)
    return dim


def _scatter_impl(self, dim, index, src, value, reduce, fname):
    """Validated in-place scatter into ``self``; returns self."""
    if src is not None:
        _check_tensor(src, fname, "src", 4)
        if (reduce is None or reduce == "add") and _K.scatter_fast(self, dim, index, src,
                                                                   reduce is not None):
            # the common case (CPU operands, contiguous self, int64 index in range,
            # shapes that fit): written by one kernel call
            self._bump_version()
            return self
    dim = _scatter_checks(self, dim, index, src, fname)
    if index.numel() == 0:
        return self
    target = _nonempty(_plain(self))
    idx = _nonempty(_int64(_plain(index)))
    size = target.shape[dim]
    _check_bounds(idx, size, False, lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {dim} with size {size}"))
    if src is None:
        if isinstance(value, complex) and not (self.is_complex()):
            raise RuntimeError(f"value cannot be converted to type {self.dtype._name} without "
                               "overflow")
        s = _scalar_tensor(value, self.dtype)
    else:
        s = _nonempty(_plain(src))
        _assert_no_overlap(target, s)       # (torch: src shares no memory with self)
    _assert_no_internal_overlap(target)
    _cpu_kernel("scatter", self.device, _scatter_cpu)(target, dim, idx, s, reduce)
    self._bump_version()
    return self


def _out_source_check(out, src):
    """The out= forms of scatter/index_add/index_copy: torch writes into ``out``
    (``input``'s copy) in place, so ``src`` may share no memory with it."""
    if isinstance(out, _TensorBase) and isinstance(src, _TensorBase):
        _assert_no_overlap(out, src)


def _split_src_value(src, value, fname):
    if isinstance(src, _TensorBase):
        if value is not None:
            raise TypeError(f"{fname}() received both 'src' and 'value'")
        return src, None
    if src is None and value is None:
        raise TypeError(f"{fname}() missing required argument 'src' or 'value'")
    return None, (value if src is None else src)


def _check_scatter_reduce(src, reduce):
    """torch's check of ``reduce``, and its once-per-process deprecation warning
    of ``reduce`` with a tensor ``src`` (scatter_reduce replaces it)."""
    if reduce is None:
        return
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is not None:
        warn_once("scatter_reduce_src", "The reduce argument of torch.scatter with Tensor src is "
                  "deprecated and will be removed in a future PyTorch release. Use "
                  "torch.scatter_reduce instead for more reduction options.")


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In place: writes ``src`` (or the number ``value``) into ``self`` at the
    positions ``index`` gives along ``dim``: ``self[index[i][j]][j] = src[i][j]``
    for ``dim=0``.

    Parameters
    ----------
    dim : int
    index : Tensor
        int64/int32, same number of dimensions as ``self``; values in
        ``[0, self.size(dim))`` (all checked before anything is written).
    src : Tensor or number
        Values (``self``'s dtype, at least ``index``'s size) or one number.
    reduce : {'add', 'multiply'}, optional
        Combine with the existing values instead of overwriting.

    Returns
    -------
    Tensor
        ``self``.

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.zeros(2, 3)
    >>> x.scatter_(1, ptcore.tensor([[2], [0]]), 1.0)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    _refuse_complex32("scatter_gather_tensor_cpu", self)
    src, value = _split_src_value(src, value, "scatter_")
    _check_scatter_reduce(src, reduce)
    return _scatter_impl(self, dim, index, src, value, reduce, "scatter_")


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """Out-of-place :func:`scatter_`."""
    _refuse_complex32("scatter_gather_tensor_cpu", input)
    src, value = _split_src_value(src, value, "scatter")
    _check_scatter_reduce(src, reduce)
    _out_source_check(out, src)
    result = _plain(input).clone(memory_format=_C.contiguous_format)   # (torch's layout)
    _scatter_impl(result, dim, index, src, value, reduce, "scatter")
    return copy_out_exact(out, result)


def scatter_add_(self, dim, index, src):
    """In place: ``self[index[i][j]][j] += src[i][j]`` (dim=0), duplicates summed."""
    _check_tensor(src, "scatter_add_", "src", 3)
    return _scatter_impl(self, dim, index, src, None, "add", "scatter_add_")


def scatter_add(input, dim, index, src, *, out=None):
    """Out-of-place :func:`scatter_add_`."""
    _check_tensor(src, "scatter_add", "src", 4)
    _out_source_check(out, src)
    result = _plain(input).clone(memory_format=_C.contiguous_format)   # (torch's layout)
    _scatter_impl(result, dim, index, src, None, "add", "scatter_add")
    return copy_out_exact(out, result)


# (keys: values of scatter_reduce's reduce= argument, not op names)
_REDUCE_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_REDUCE_ALIAS = {"max": "amax", "min": "amin"}


def _reduce_identity(dtype, reduce):
    if reduce in _REDUCE_IDENTITY:
        return _REDUCE_IDENTITY[reduce]
    hi = reduce == "amin"
    if dtype is _C.bool_:
        return hi
    if dtype.is_floating_point:
        return float("inf") if hi else float("-inf")
    info = _np.iinfo(dtype._np)
    return int(info.max if hi else info.min)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In place: reduces ``src`` into ``self`` along ``dim`` at ``index`` with
    'sum', 'prod', 'mean', 'amax' or 'amin' (``include_self``: whether the
    original values take part)."""
    _check_tensor(src, "scatter_reduce_", "src", 3)
    # torch's order: dim and shapes, the reduce name; then (with include_self=False,
    # whose initial fill checks the indices first) bounds and dtype
    dim = _scatter_checks(self, dim, index, src, "scatter_reduce_")
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    # torch's kernel takes 'max' and 'min' as 'amax' and 'amin' (its backward does not)
    reduce = _REDUCE_ALIAS.get(reduce, reduce)
    unsupported = (reduce in ("amax", "amin") and self.is_complex()) or (
        reduce == "mean" and self.dtype is _C.bool_)
    if index.numel() == 0:
        if unsupported and reduce == "mean":
            raise NotImplementedError(f"\"div_floor_cpu\" not implemented for 'Bool'")
        return self
    if unsupported and include_self:
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented '
                                  f"for '{_scalar_name(self.dtype)}'")
    target = _nonempty(_plain(self))
    idx = _nonempty(_int64(_plain(index)))
    size = target.shape[dim]
    _check_bounds(idx, size, False, lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {dim} with size {size}"))
    if unsupported:
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented '
                                  f"for '{_scalar_name(self.dtype)}'")
    _assert_no_internal_overlap(target)
    s = _nonempty(_plain(src))
    _assert_no_overlap(target, s)           # (torch: src shares no memory with self)
    kern = _cpu_kernel("scatter", self.device, _scatter_cpu)
    if not include_self:
        kern(target, dim, idx, _scalar_tensor(_reduce_identity(self.dtype, reduce), self.dtype),
             None)
    kern(target, dim, idx, s, "add" if reduce == "mean" else reduce)
    if reduce == "mean":
        counts = _C.full(target.shape, 1 if include_self else 0, dtype=_C.int64,
                         device=self.device)
        kern(counts, dim, idx, _scalar_tensor(1, _C.int64), "add")
        _cpu_kernel("scatter_mean_finish", self.device, _scatter_mean_finish_cpu)(target, counts)
    self._bump_version()
    return self


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Out-of-place :func:`scatter_reduce_`."""
    _out_source_check(out, src)
    result = _plain(input).clone(memory_format=_C.contiguous_format)   # (torch's layout)
    scatter_reduce_(result, dim, index, src, reduce, include_self=include_self)
    return copy_out_exact(out, result)


# ---------------------------------------------------------------------------
# index_add / index_copy / index_fill
# ---------------------------------------------------------------------------
def _vector_index_checks(self, dim, index, source, fname):
    if index.dim() > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {_scalar_name(index.dtype)} and size: "
                         f"{_fmt(index.shape)}")
    if index.dtype is not _C.int64 and index.dtype is not _C.int32:
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index but got: "
                           f"{_scalar_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"{fname}(): self ({_scalar_name(self.dtype)}) and source "
                           f"({_scalar_name(source.dtype)}) must have the same scalar type")
    dim = _wrap(dim, self.dim())
    if not (dim == 0 or dim < source.dim()):
        raise IndexError(f"{fname}(): Indexing dim {dim} is out of bounds of the source tensor "
                         f"with dim {source.dim()}")
    n = index.numel()
    ssize = 1 if source.dim() == 0 else source.shape[dim]
    if n != ssize:
        raise RuntimeError(f"{fname}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ssize}), for dim: {dim}")
    a, b = list(self.shape), list(source.shape)
    if a and b:
        del a[dim]
        del b[dim]
    if a != b:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {_fmt(self.shape)} source.shape = "
            f"{_fmt(source.shape)}")
    _check_same_device(fname, self, index, source)
    return dim


def index_add_(self, dim, index, source, *, alpha=1):
    """In place: ``self.select(dim, index[i]) += alpha * source.select(dim, i)``,
    duplicates accumulated."""
    alpha = _number_param(alpha, "index_add_", "alpha")
    if alpha == 1 and _K.index_add_fast(self, dim, index, source):
        # the common case (CPU operands, contiguous self, 1-D int64 index in range,
        # matching shapes): written by one kernel call
        self._bump_version()
        return self
    _check_tensor(source, "index_add_", "source", 3)
    dim = _vector_index_checks(self, dim, index, source, "index_add_")
    idx = _int64(_plain(index)).reshape(-1)
    target = _nonempty(_plain(self))
    size = target.shape[dim]
    if target.numel() == 0:
        return self         # torch checks no index when nothing is written
    # torch: a 1-D self goes through its index_select-like path (IndexError),
    # others through the strided kernel (RuntimeError naming the index)
    _check_bounds(idx, size, False, lambda v: IndexError("index out of range in self")
                  if target.dim() <= 1 else RuntimeError(
                      f"index {v} is out of bounds for dimension {dim} with size {size}"))
    if idx.numel() == 0:
        return self
    if self.dtype is _C.complex32:
        # no ComplexHalf accumulation kernel: accumulate in complex64, round once
        wide = _plain(self).to(_C.complex64)
        index_add_(wide, dim, index, _plain(source).to(_C.complex64), alpha=alpha)
        target.copy_(wide)
        self._bump_version()
        return self
    src = _plain(source)
    _assert_no_overlap(target, src)         # (torch: source shares no memory with self)
    if alpha != 1:
        src = src.clone()
        _cpu_kernel("scale", self.device, _scale_cpu)(src, _scalar_tensor(alpha, self.dtype))
    src = _nonempty(src) if target.dim() == 1 and src.dim() == 0 else src
    _assert_no_internal_overlap(target)
    _cpu_kernel("index_put_dim", self.device, _index_put_dim_cpu)(target, dim, idx, src.reshape(
        _index_dim_shape(target, dim, idx.numel())), "add")
    self._bump_version()
    return self


def _index_dim_shape(target, dim, n):
    shape = list(target.shape)
    shape[dim] = n
    return shape


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Out-of-place :func:`index_add_`."""
    alpha = _number_param(alpha, "index_add", "alpha")
    _out_source_check(out, source)
    result = _plain(input).clone(memory_format=_C.contiguous_format)   # (torch's layout)
    index_add_(result, dim, index, source, alpha=alpha)
    return copy_out_exact(out, result)


def _cpp_sizes(sizes):
    return " ".join(str(int(s)) for s in sizes)


def index_copy_(self, dim, index, source):
    """In place: ``self.select(dim, index[i]) = source.select(dim, i)``."""
    _check_tensor(source, "index_copy_", "source", 3)
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    if source.dim() == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if source.dim() != self.dim() and source.dim() != 0 and self.dim() != 0:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.dim()}), destination dimensionality "
            f"({self.dim()})")
    if index.dtype is not _C.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_scalar_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_scalar_name(self.dtype)} and (source) "
                           f"{_scalar_name(source.dtype)}")
    dim = _wrap(dim, self.dim())
    a, b = list(self.shape), list(source.shape)
    if a:
        del a[dim]
    if b:
        del b[dim]
    if a != b:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {_cpp_sizes(a)} at dimension {dim} and source slice shape: "
            f"{_cpp_sizes(b)} at dimension 0.")
    if source.dim() and n != source.shape[dim]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source.shape[dim]})")
    _check_same_device("index_copy_", self, index, source)
    target = _nonempty(_plain(self))
    idx = _plain(index).reshape(-1)
    size = target.shape[dim]
    _check_bounds(idx, size, False, lambda v: IndexError(
        f"index_copy_(): index {v} is out of bounds for dimension {dim} with size {size}"))
    if n == 0 or target.numel() == 0:
        return self
    src = _plain(source)
    _assert_no_overlap(target, src)         # (torch: source shares no memory with self)
    _assert_no_internal_overlap(target)
    _cpu_kernel("index_put_dim", self.device, _index_put_dim_cpu)(
        target, dim, idx, src.reshape(_index_dim_shape(target, dim, n)), None)
    self._bump_version()
    return self


def index_copy(input, dim, index, source, *, out=None):
    """Out-of-place :func:`index_copy_`."""
    _out_source_check(out, source)
    result = _plain(input).clone(memory_format=_C.contiguous_format)   # (torch's layout)
    index_copy_(result, dim, index, source)
    return copy_out_exact(out, result)


def _warn_if_expanded(target, fname):
    """torch's fills (one value written to each chosen element) accept a
    target whose elements share memory, with a deprecation warning."""
    if any(st == 0 and n > 1 for n, st in zip(target.shape, target.stride())):
        warn_at_caller(f"Use of {fname} on expanded tensors is deprecated. Please clone() the "
                       "tensor before performing this operation. This also applies to advanced "
                       "indexing e.g. tensor[mask] = scalar")


def index_fill_(self, dim, index, value):
    """In place: fills ``self.select(dim, i)`` with ``value`` for i in ``index``."""
    _check_tensor(index, "index_fill_", "index", 2)
    if index.dtype is not _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    value = _value_of(value, "index_fill_")
    if isinstance(value, complex) and not self.is_complex():
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    dim = _wrap(dim, self.dim())
    _check_same_device("index_fill_", self, index)
    target = _nonempty(_plain(self))
    idx = _plain(index).reshape(-1)
    size = target.shape[dim]
    _check_bounds(idx, size, True, lambda v: IndexError(
        f"index {v} is out of bounds for dimension {dim} with size {size}"))
    v = _scalar_tensor(value, self.dtype)
    if idx.numel() == 0 or target.numel() == 0:
        return self
    _warn_if_expanded(target, "index_fill_")
    _cpu_kernel("index_put_dim", self.device, _index_put_dim_cpu)(target, dim, idx, v, None)
    self._bump_version()
    return self


def index_fill(input, dim, index, value):
    """Out-of-place :func:`index_fill_`."""
    result = _plain(input).clone()
    return index_fill_(result, dim, index, value)


# ---------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------
_FAST_FILL_DTYPES = frozenset((_C.float32, _C.float64, _C.float16, _C.bfloat16, _C.int64,
                               _C.int32, _C.int16, _C.int8, _C.uint8, _C.bool_))


def _fast_mask_strides(target, mask, value):
    """The mask's strides over ``target``'s shape when a masked fill of ``target`` (a host
    tensor of a common dtype) by ``mask`` (a bool host tensor broadcasting to target's
    shape without growing it) with ``value`` (a Python float or int) needs none of the
    general path's checks; else None."""
    if (type(value) is not float and type(value) is not int) or \
            not isinstance(target, _TensorBase) or not isinstance(mask, _TensorBase) or \
            mask.dtype is not _C.bool_ or target.dtype not in _FAST_FILL_DTYPES or \
            not _in_host_memory(target) or not _in_host_memory(mask):
        return None
    shape = target.shape
    if mask.shape != shape:
        off = len(shape) - mask.dim()
        if off < 0:
            return None
        for i, n in enumerate(mask.shape):
            if n != 1 and n != shape[off + i]:
                return None
    return _broadcast_strides(mask, shape)


def masked_fill_(self, mask, value):
    """In place: ``self`` = ``value`` where the bool ``mask`` (broadcast) is True."""
    mstr = _fast_mask_strides(self, mask, value)
    if mstr is not None and 0 not in self.stride():
        # (an attention mask's fill: the checks below hold by construction)
        v = _C._checked_scalar(value, self.dtype)
        if self.numel():
            target = _plain(self)
            _K.masked(2, target, target.stride(), mask, mstr, target.shape, v)
            self._bump_version()
        return self
    _check_tensor(mask, "masked_fill_", "mask", 1)
    if mask.dtype is not _C.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_cpp_name(mask.dtype)}")
    value = _value_of(value, "masked_fill_")
    b = _broadcast_shape_tensors([self.shape, mask.shape])
    if tuple(b) != tuple(self.shape):
        raise RuntimeError(f"output with shape {_fmt(self.shape)} doesn't match the broadcast "
                           f"shape {_fmt(b)}")
    _check_same_device("masked_fill_", self, mask)
    v = _scalar_tensor(value, self.dtype)
    if self.numel() == 0:
        return self
    target = _plain(self)
    _warn_if_expanded(target, "masked_fill_")
    _cpu_kernel("masked_fill_", self.device, _masked_fill_cpu)(target, _plain(mask), v)
    self._bump_version()
    return self


def masked_fill(input, mask, value):
    """Out-of-place :func:`masked_fill_` (``input`` and ``mask`` broadcast)."""
    _check_tensor(input, "masked_fill", "input", 1)
    _check_tensor(mask, "masked_fill", "mask", 2)
    if mask.dtype is not _C.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_cpp_name(mask.dtype)}")
    mstr = _fast_mask_strides(input, mask, value)
    if mstr is not None:
        # (the mask does not grow input's shape: one contiguous copy, then the fill)
        v = _C._checked_scalar(value, input.dtype)
        result = _plain(input).clone(memory_format=_C.contiguous_format)
        if result.numel():
            _K.masked(2, result, result.stride(), mask, mstr, result.shape, v)
        return result
    shape = _broadcast_shape_tensors([mask.shape, input.shape])
    # torch: clone(memory_format=contiguous_format), fresh C-order strides even for a
    # tensor whose size-1 dims have other strides
    result = _plain(input).expand(shape).clone(memory_format=_C.contiguous_format)
    return masked_fill_(result, mask, value)


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-D
    tensor (``input`` and ``mask`` broadcast together; C order).

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.tensor([[1, -2], [-3, 4]])
    >>> ptcore.masked_select(x, x > 0)
    tensor([1, 4])
    """
    _check_tensor(input, "masked_select", "input", 1)
    _check_tensor(mask, "masked_select", "mask", 2)
    if mask.dtype is not _C.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _out_same_dtype(input.dtype, out, "masked_select(): self and result must have the same "
                                      "scalar type")
    _check_same_device("masked_select", input, mask)
    _check_out_overlaps(out, (input, mask))
    shape = _broadcast_shape_tensors([input.shape, mask.shape])
    result = _cpu_kernel("masked_select", input.device, _masked_select_cpu)(
        _plain(input), _plain(mask), shape)
    return _write_out(result, out)


def masked_scatter_(self, mask, source):
    """In place: the elements of ``self`` where ``mask`` is True are replaced,
    in order, by the first elements of ``source``."""
    _refuse_complex32("masked_scatter", self)
    _check_tensor(mask, "masked_scatter_", "mask", 1)
    _check_tensor(source, "masked_scatter_", "source", 2)
    if mask.dtype is not _C.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_scalar_name(mask.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_scalar_name(self.dtype)} and {_scalar_name(source.dtype)}")
    m = _plain(mask).expand(self.shape)
    _check_same_device("masked_scatter_", self, mask, source)
    target = _plain(self)
    _assert_no_internal_overlap(target)
    src = _plain(source)
    if _dense_overlap(target, src):
        src = src.clone()
    if target.numel() == 0:
        return self
    ok = _cpu_kernel("masked_scatter_", self.device, _masked_scatter_cpu)(target, m, src)
    if not ok:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    self._bump_version()
    return self


def masked_scatter(input, mask, source):
    """Out-of-place :func:`masked_scatter_` (``input`` and ``mask`` broadcast)."""
    _check_tensor(mask, "masked_scatter", "mask", 2)
    shape = _broadcast_shape_tensors([input.shape, mask.shape])
    result = _plain(input).expand(shape).clone(memory_format=_C.contiguous_format)
    return masked_scatter_(result, _plain(mask).expand(shape), source)


def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements (NaN counts as non-zero).

    Returns
    -------
    Tensor or tuple of Tensor
        An (n, ndim) int64 tensor (column-major, as torch's), or with ``as_tuple=True`` one
        1-D tensor per dimension (a 0-d input counts as 1-D).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.nonzero(ptcore.tensor([[0, 1], [2, 0]]))
    tensor([[0, 1],
            [1, 0]])
    >>> ptcore.nonzero(ptcore.tensor([0, 3, 5]), as_tuple=True)
    (tensor([1, 2]),)
    """
    _check_tensor(input, "nonzero", "input", 1)
    if as_tuple is not False and as_tuple is not True:
        bool_param(as_tuple, "nonzero", "as_tuple")
    if out is not None and not isinstance(out, _TensorBase):
        raise TypeError(f"nonzero(): argument 'out' must be Tensor, not {_typename(out)}")
    if out is not None and out.dtype is not _C.int64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar "
                           f"type{_scalar_name(out.dtype)}")
    if out is not None:                 # (torch's nonzero_out checks both)
        _assert_no_internal_overlap(out)
        _assert_no_overlap(out, input)
    result = _cpu_kernel("nonzero", input.device, _nonzero_cpu)(_plain(input))
    if as_tuple and input.dim() == 0:
        return (_C.zeros(result.shape[0], dtype=_C.int64, device=input.device),)
    if input.dim() and tuple(result.stride()) != (1, result.shape[0]):
        # torch's layout: column-major (n, ndim), strides (1, n); as_tuple gives
        # its contiguous columns (the CPU kernel writes it so)
        result = _C.empty_strided(result.shape, (1, result.shape[0]), dtype=_C.int64,
                                  device=result.device).copy_(result)
    if as_tuple:
        return tuple(result.select(1, j) for j in range(input.dim()))
    return _write_out(result, out)


def argwhere(input):
    """``nonzero(input)``: the (n, ndim) indices of the non-zero elements."""
    return nonzero(input)


def _where1(condition):
    """``where(condition)`` (single argument) = ``nonzero(condition, as_tuple=True)``."""
    return nonzero(condition, as_tuple=True)


# ---------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------
def _tensor_seq(tensors, fname):
    if isinstance(tensors, _TensorBase):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    try:
        seq = list(tensors)
    except TypeError:
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {_typename(tensors)}") from None
    for i, t in enumerate(seq):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_typename(t)}")
    return seq


def _promote_all(seq):
    dt = seq[0].dtype
    for t in seq[1:]:
        dt = promote_types(dt, t.dtype)
    return dt


def _legacy_empty(t):
    return t.dim() == 1 and t.shape[0] == 0


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dimension.

    The result dtype is the promotion of all inputs' dtypes; legacy empty
    1-D tensors (shape ``(0,)``) are skipped whatever the other shapes.

    Parameters
    ----------
    tensors : sequence of Tensor
    dim : int
    out : Tensor, optional
        Any dtype the promoted dtype can be cast to.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.cat([ptcore.tensor([[1, 2]]), ptcore.tensor([[3.5, 4.0]])])
    tensor([[1.0000, 2.0000],
            [3.5000, 4.0000]])
    """
    if type(dim) is not int:
        dim = _strict_int(dim, "cat", "dim", 2)
    if out is None and (type(tensors) is list or type(tensors) is tuple):
        r = _K.cat_fast(tensors, dim, False)    # CPU tensors of one dtype, shapes matching
        if r is not None:
            return _cat_memory_format(r, tensors)
    seq = _tensor_seq(tensors, "cat")
    if not seq:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(seq):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _promote_all(seq)
    _check_same_device("cat", *seq)
    ref = next((t for t in seq if not _legacy_empty(t)), None)
    if out is not None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"cat(): argument 'out' must be Tensor, not {_typename(out)}")
        if not can_cast(dtype, out.dtype):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{_scalar_name(out.dtype)}")
    if ref is None:
        result = _C.empty(0, dtype=dtype if out is None else out.dtype, device=seq[0].device)
        return result if out is None else _write_out(result, out)
    nd = ref.dim()
    dim = _wrap(dim, nd)
    shape = list(ref.shape)
    total = 0
    for i, t in enumerate(seq):
        if _legacy_empty(t):
            continue
        if t.dim() != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{t.dim()}")
        for d in range(nd):
            if d != dim and t.shape[d] != shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{shape[d]} but got size {t.shape[d]} for tensor number {i} in the list.")
        total += t.shape[dim]
    shape[dim] = total
    plain = [_plain(t) for t in seq]
    if out is not None:
        if tuple(out.shape) != tuple(shape):
            _write_out(_C.empty(shape, dtype=out.dtype), out)    # resize with PyTorch's warning
        _assert_no_internal_overlap(out)
        for t in plain:
            _assert_no_overlap(out, t)
        result = _plain(out)
    else:
        result = _C.empty(shape, dtype=dtype, device=ref.device)
    if result.numel():
        _cpu_kernel("cat", ref.device, _cat_cpu)(result, plain, dim)
    if out is not None:
        out._bump_version()
        return out
    return _cat_memory_format(result, seq)


def _cat_memory_format(result, seq):
    """``result`` channels_last(_3d) when every input suggests that format, as
    torch's cat (its compute_output_memory_format)."""
    if result.dim() not in (4, 5) or seq[0].is_contiguous():
        return result
    fmt = _suggest_memory_format(seq[0])
    if any(_suggest_memory_format(t) is not fmt for t in seq[1:]):
        return result
    return _in_memory_format(result, fmt)


def concat(tensors, dim=0, *, out=None):
    """Alias of :func:`cat`."""
    return cat(tensors, dim, out=out)


def concatenate(tensors, dim=0, *, out=None):
    """Alias of :func:`cat` (also taking NumPy's ``axis`` name for ``dim``, as torch)."""
    return cat(tensors, dim, out=out)


def stack(tensors, dim=0, *, out=None):
    """Join tensors of equal shape along a new dimension ``dim``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.stack([ptcore.tensor([1, 2]), ptcore.tensor([3, 4])], dim=1)
    tensor([[1, 3],
            [2, 4]])
    """
    if type(dim) is not int:
        dim = _strict_int(dim, "stack", "dim", 2)
    if out is None and (type(tensors) is list or type(tensors) is tuple):
        r = _K.cat_fast(tensors, dim, True)     # CPU tensors of one dtype and shape
        if r is not None:
            return r
    seq = _tensor_seq(tensors, "stack")
    if not seq:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tuple(seq[0].shape)
    for i, t in enumerate(seq[1:], 1):
        if tuple(t.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_fmt(s0)} at "
                               f"entry 0 and {_fmt(t.shape)} at entry {i}")
    dim = _wrap(dim, len(s0) + 1)
    dtype = _promote_all(seq)
    _check_same_device("stack", *seq)
    shape = list(s0)
    shape.insert(dim, len(seq))
    if out is not None:
        if not isinstance(out, _TensorBase):
            raise TypeError(f"stack(): argument 'out' must be Tensor, not {_typename(out)}")
        if not can_cast(dtype, out.dtype):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{_scalar_name(out.dtype)}")
        if tuple(out.shape) != tuple(shape):
            _write_out(_C.empty(shape, dtype=out.dtype), out)
        plain = [_plain(t) for t in seq]
        for t in plain:
            _assert_no_overlap(out, t)
        if out.numel():
            _cpu_kernel("stack", out.device, _stack_cpu)(_plain(out), plain, dim)
        out._bump_version()
        return out
    result = _C.empty(shape, dtype=dtype, device=seq[0].device)
    if result.numel():
        _cpu_kernel("stack", seq[0].device, _stack_cpu)(result, [_plain(t) for t in seq], dim)
    return result


def _stack_family(tensors, fname, transform, dim_of):
    seq = _tensor_seq(tensors, fname)
    if not seq:
        raise RuntimeError(f"{fname} expects a non-empty TensorList")
    seq = [transform(t) for t in seq]      # views/cat keep the autograd history
    return seq, dim_of(seq)


def hstack(tensors, *, out=None):
    """Concatenate column-wise (along dim 0 for 1-D inputs, else dim 1)."""
    seq, dim = _stack_family(tensors, "hstack", lambda t: atleast_1d(t),
                             lambda s: 0 if s[0].dim() == 1 else 1)
    return cat(seq, dim, out=out)


def vstack(tensors, *, out=None):
    """Concatenate row-wise (inputs made at least 2-D)."""
    seq, dim = _stack_family(tensors, "vstack", lambda t: atleast_2d(t), lambda s: 0)
    return cat(seq, dim, out=out)


def row_stack(tensors, *, out=None):
    """Alias of :func:`vstack`."""
    return vstack(tensors, out=out)


def dstack(tensors, *, out=None):
    """Concatenate depth-wise (inputs made at least 3-D, along dim 2)."""
    seq, dim = _stack_family(tensors, "dstack", lambda t: atleast_3d(t), lambda s: 2)
    return cat(seq, dim, out=out)


def column_stack(tensors, *, out=None):
    """Stack 0-D/1-D inputs as columns, 2-D inputs as they are, along dim 1."""
    seq, dim = _stack_family(tensors, "column_stack",
                             lambda t: t.reshape(t.numel(), 1) if t.dim() <= 1 else t,
                             lambda s: 1)
    return cat(seq, dim, out=out)


# ---------------------------------------------------------------------------
# flip / roll / rot90
# ---------------------------------------------------------------------------
def flip(input, dims):
    """Reverse the order of elements along ``dims`` (a copy).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.flip(ptcore.arange(4).view(2, 2), [0, 1])
    tensor([[3, 2],
            [1, 0]])
    """
    _check_tensor(input, "flip", "input", 1)
    dims = _int_list(dims, "flip", "dims (position 2)")
    nd = input.dim()
    flags = [False] * max(nd, 1)
    for d in dims:
        w = _wrap(d, nd)
        if flags[w]:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        flags[w] = True
    if input.dtype is _C.complex32 and (flags[nd - 1] or not input.is_contiguous()):
        # PyTorch's flip kernel takes ComplexHalf only when the innermost dim stays
        _refuse_complex32("flip_cpu", input)
    x = _plain(input)
    # torch's flip keeps a dense input's layout (empty_like, preserve_format)
    result = _C._like(x, None, None, False, 0, None, _C.preserve_format)
    if result.numel():
        _cpu_kernel("flip", input.device, _flip_cpu)(result, x, flags[:nd])
    return result


def fliplr(input):
    """Flip along dim 1 (input at least 2-D)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    """Flip along dim 0 (input at least 1-D)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def _int_item(x, fname="roll", argname="shifts"):
    # an int[] item: a bool is refused (torch: "must be tuple of ints, not bool")
    if isinstance(x, bool):
        raise TypeError(f"{fname}(): argument '{argname}' must be tuple of ints, not bool")
    return operator.index(x)


def _as_list(v, fname="roll", argname="shifts"):
    if isinstance(v, (list, tuple, _C.Size)):
        return [_int_item(x, fname, argname) for x in v]
    return [_int_item(v, fname, argname)]


def _roll_one(x, shift, d):
    n = x.shape[d]
    if x.numel() == 0:
        return _C.empty(x.shape, dtype=x.dtype, device=x.device)
    # torch's roll: the cat of two narrows (so the result has cat's memory format:
    # channels_last for a channels_last input)
    start = (n - shift) % n
    return cat([x.narrow(d, start, n - start), x.narrow(d, 0, start)], d)


def roll(input, shifts, dims=None):
    """Roll elements along ``dims`` by ``shifts`` (flattened when dims is None).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.roll(ptcore.arange(5), 2)
    tensor([3, 4, 0, 1, 2])
    """
    _check_tensor(input, "roll", "input", 1)
    shifts = _as_list(shifts)
    dims = [] if dims is None else _as_list(dims, "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    x = _plain(input)
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        flat = x.reshape(-1)
        if flat.numel() == 0:
            return x.clone()
        return _roll_one(flat, shifts[0], 0).view(input.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if x.numel() == 0 and x.dim():
        return x.clone()        # torch returns an empty input before checking the dims
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    wd = [_wrap(d, x.dim()) for d in dims]
    result = x
    for s, d in zip(shifts, wd):
        result = _roll_one(result, s, d)
    return result


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the
    first towards the second)."""
    _check_tensor(input, "rot90", "input", 1)
    dims = _as_list(dims, "rot90", "dims")
    nd = input.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _wrap(dims[0], nd), _wrap(dims[1], nd)
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k = _strict_int(k, "rot90", "k", 2) % 4
    x = _plain(input)
    if k == 1:
        return flip(x, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(x, [d0, d1])
    if k == 3:
        return flip(x, [d0]).transpose(d0, d1)
    return x.clone(memory_format=_C.contiguous_format)


# ---------------------------------------------------------------------------
# repeat / tile / repeat_interleave
# ---------------------------------------------------------------------------
def _size_args(sizes, fname):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple, _C.Size)):
        sizes = sizes[0]
    return [int_list_item(s, fname, "repeats", i) for i, s in enumerate(sizes)]


def repeat(input, *sizes, repeats=None):
    """Tile ``input`` ``sizes[i]`` times along each dim (``Tensor.repeat``; torch's
    keyword form ``repeats=``)."""
    if repeats is not None:
        if sizes:
            raise TypeError("repeat() got its sizes both positionally and as repeats=")
        sizes = (repeats,)
    elif not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _size_args(sizes, "repeat")
    nd = input.dim()
    if len(reps) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = _plain(input)
    for _ in range(len(reps) - nd):
        x = x.unsqueeze(0)
    # PyTorch multiplies in int64 (wrapping); the checks below then refuse
    # every wrapped size, as its own do
    target = [((r * s + 2 ** 63) & (2 ** 64 - 1)) - 2 ** 63 for r, s in zip(reps, x.shape)]
    for t in target:
        if t == -2 ** 63:
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a "
                               f"SymInt: {t}")
    for t in target:
        if t < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {t}: "
                               f"{_fmt(target)}")
    out = _C.empty(target, dtype=input.dtype, device=input.device)
    if 0 in reps:
        return out
    for i, (t, r, s) in enumerate(zip(target, reps, x.shape)):
        if t != r * s:
            raise RuntimeError(f"maximum size for tensor at dimension {i} is {t} but size is {s}"
                               if t < s else
                               f"repeat: size {r} * {s} at dimension {i} overflows int64")
    if out.numel() == 0:
        return out
    inter = []
    src = x
    for i, (r, s) in enumerate(zip(reps, x.shape)):
        inter += [r, s]
        src = src.unsqueeze(2 * i)
    out.view(inter).copy_(src.expand(inter))
    return out


def tile(input, dims):
    """:func:`repeat` with ``dims`` padded with leading 1s to input's rank."""
    _check_tensor(input, "tile", "input", 1)
    reps = _int_list(dims, "tile", "dims", sym=True)
    if len(reps) < input.dim():
        reps = [1] * (input.dim() - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (``dim`` None: of the flattened input) ``repeats``
    times; ``repeats`` an int or a tensor with one count per element.  With a
    single tensor argument, ``repeat_interleave(r)`` gives
    ``[0]*r[0] + [1]*r[1] + ...``."""
    if repeats is None:
        r = input
        if r.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        out = _repeat_index(r, output_size)
        return out if r.dtype is _C.int64 else out._to_dtype(r.dtype)
    x = _plain(input)
    if dim is None:
        x = x.reshape(-1)
        d = 0
    else:
        d = _wrap(dim, x.dim())
    if isinstance(repeats, _TensorBase):
        if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
            repeats = int(repeats.item())
        else:
            if repeats.dim() != 1:
                raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
            if repeats.shape[0] != x.shape[d]:
                raise RuntimeError(
                    f"repeats must have the same size as input along dim, but got "
                    f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {x.shape[d]}")
            idx = _repeat_index(repeats, output_size)
            return index_select(x, d, idx)
    if isinstance(repeats, bool) or type(repeats).__name__ in ("bool", "bool_"):
        raise TypeError("repeat_interleave(): argument 'repeats' must be Tensor or int, not bool")
    r = operator.index(repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    n = x.shape[d] * r if x.dim() else r
    if output_size is not None and output_size != n:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n} but got "
                           f"{output_size}")
    e = x.unsqueeze(d + 1)
    shape = list(e.shape)
    shape[d + 1] = r
    e = e.expand(shape)
    shape = list(x.shape)
    shape[d] = shape[d] * r
    out = _C.empty(shape, dtype=x.dtype, device=x.device)
    if out.numel():
        out.view(e.shape).copy_(e)
    return out


def _repeat_index(repeats, output_size):
    if repeats.dtype is not _C.int64 and repeats.dtype is not _C.int32:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_scalar_name(repeats.dtype)}'")
    r = _int64(_plain(repeats))
    r = r.contiguous()
    if r.numel():
        bad = _cpu_kernel("index_bounds", r.device, _index_bounds_cpu)(r, 2 ** 62, False)
        if bad is not None:
            raise RuntimeError("repeats can not be negative")
    total = sum(r.tolist()) if r.numel() else 0
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return _cpu_kernel("repeat_interleave_index", r.device, _repeat_interleave_index_cpu)(r, total)


# ---------------------------------------------------------------------------
# triangles, diagonals, trace
# ---------------------------------------------------------------------------
def _tri_check(input, fname):
    if input.dim() < 2:
        raise RuntimeError(f"{fname}: input tensor must have at least 2 dimensions")


def tril_(self, diagonal=0):
    """In place: zero the elements above the ``diagonal``-th diagonal."""
    diagonal = _strict_symint(diagonal, "tril_", "diagonal", 2)
    _tri_check(self, "tril")
    if self.numel():
        _cpu_kernel("tri_", self.device, _tri_cpu)(_plain(self), diagonal, False)
        self._bump_version()
    return self


def triu_(self, diagonal=0):
    """In place: zero the elements below the ``diagonal``-th diagonal."""
    diagonal = _strict_symint(diagonal, "triu_", "diagonal", 2)
    _tri_check(self, "triu")
    if self.numel():
        _cpu_kernel("tri_", self.device, _tri_cpu)(_plain(self), diagonal, True)
        self._bump_version()
    return self


def tril(input, diagonal=0, *, out=None):
    """Lower triangle (elements with ``j - i <= diagonal``) of the last two dims.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tril(ptcore.ones(3, 3, dtype=ptcore.int64), -1)
    tensor([[0, 0, 0],
            [1, 0, 0],
            [1, 1, 0]])
    """
    _check_tensor(input, "tril", "input", 1)
    diagonal = _strict_symint(diagonal, "tril", "diagonal", 2)
    _tri_check(input, "tril")
    result = _plain(input).clone(memory_format=_C.contiguous_format)
    return copy_out_exact(out, tril_(result, diagonal))


def triu(input, diagonal=0, *, out=None):
    """Upper triangle (elements with ``j - i >= diagonal``) of the last two dims."""
    _check_tensor(input, "triu", "input", 1)
    diagonal = _strict_symint(diagonal, "triu", "diagonal", 2)
    _tri_check(input, "triu")
    result = _plain(input).clone(memory_format=_C.contiguous_format)
    return copy_out_exact(out, triu_(result, diagonal))


def _tri_indices(row, col, offset, dtype, device, upper, fname):
    row, col, offset = (_strict_int(v, fname, a, i + 1) for i, (v, a) in
                        enumerate(((row, "row"), (col, "col"), (offset, "offset"))))
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = _C._as_dtype(_dtype_param(dtype, fname)) if dtype is not None else _C.int64
    if dt is not _C.int64 and dt is not _C.int32:        # (torch's index types)
        raise NotImplementedError(f"\"{fname}\" not implemented for '{_scalar_name(dt)}'")
    # the size is known up front (torch's get_tril_size): the result is allocated
    # first (an overflowing or unallocatable size fails at once), then filled row
    # by row over the rows that have elements
    if upper:
        count = row * col - _ramp_sum(row, offset, col)
        first = 0
        last = builtins.max(0, builtins.min(row, col - offset))
    else:
        count = _ramp_sum(row, offset + 1, col)
        first = builtins.min(row, builtins.max(0, -offset))
        last = row
    if count > 9223372036854775807:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[2, {count}]")
    out = _C.empty((2, count), dtype=dt)
    if count:
        _K.tri_indices_fill(out, first, last, offset, col, upper)
    return out if device is None else out.to(device)      # (out itself on the CPU)


def _ramp_sum(n, k, cap):
    """``sum(min(max(i + k, 0), cap) for i in range(n))`` in closed form (Python ints)."""
    a = builtins.min(builtins.max(1 - k, 0), n)            # first i with i + k >= 1
    b = builtins.min(builtins.max(cap - k, a), n)          # first i with i + k >= cap
    return (b - a) * (a + b - 1) // 2 + k * (b - a) + (n - b) * cap


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False, pin_memory=False):
    """The (2, N) coordinates of the lower triangle of a row x col matrix."""
    return _pinned(_tri_indices(row, col, offset, dtype, device, False, "tril_indices"), pin_memory)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False, pin_memory=False):
    """The (2, N) coordinates of the upper triangle of a row x col matrix."""
    return _pinned(_tri_indices(row, col, offset, dtype, device, True, "triu_indices"), pin_memory)


def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with it on the ``diagonal``-th diagonal;
    2-D input: that diagonal as a 1-D tensor."""
    _check_tensor(input, "diag", "input", 1)
    nd = input.dim()
    k = operator.index(diagonal)
    x = _plain(input)
    if nd == 1:
        n = x.shape[0] + abs(k)
        result = _C.zeros((n, n), dtype=x.dtype, device=x.device)
        if x.numel():
            result.diagonal(k).copy_(x)
    elif nd == 2:
        result = x.diagonal(k).clone(memory_format=_C.contiguous_format)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return copy_out_exact(out, result)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Batched diagonal matrices: the last dim of ``input`` becomes the
    ``offset`` diagonal of the planes (dim1, dim2) of the result."""
    _check_tensor(input, "diag_embed", "input", 1)
    nd = input.dim() + 1
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    k = operator.index(offset)
    x = _plain(input)
    n = x.shape[-1] + abs(k)
    rest = list(x.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else rest.pop(0))
    result = _C.zeros(shape, dtype=x.dtype, device=x.device)
    if x.numel():
        result.diagonal(k, d1, d2).copy_(x)
    return result


def diagflat(input, offset=0):
    """:func:`diag` of the flattened input."""
    _check_tensor(input, "diagflat", "input", 1)
    return diag(_plain(input).reshape(-1), offset)


def _clone_preserve_strides(x):
    """torch's ``clone_preserve_strides``: a copy of ``x``'s whole storage viewed with
    ``x``'s sizes, strides and storage offset (a plain clone when some dim of more
    than one element has stride 0)."""
    if any(st == 0 and n > 1 for n, st in zip(x.shape, x.stride())):
        return x.clone()
    n = x.untyped_storage().nbytes() // x.element_size()
    full = x.as_strided((n,), (1,), 0).clone()
    return full.as_strided(x.shape, x.stride(), x.storage_offset())


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on ``input.diagonal(offset, dim1, dim2)``."""
    _check_tensor(input, "diagonal_scatter", "input", 1)
    _check_tensor(src, "diagonal_scatter", "src", 2)
    result = _clone_preserve_strides(_plain(input))
    view = result.diagonal(offset, dim1, dim2)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src.shape)}, slice size = {_fmt(view.shape)}")
    view.copy_(_plain(src))
    return result


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written on ``input.select(dim, index)``."""
    _check_tensor(input, "select_scatter", "input", 1)
    _check_tensor(src, "select_scatter", "src", 2)
    result = _clone_preserve_strides(_plain(input))
    view = result.select(dim, index)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src.shape)}, slice size = {_fmt(view.shape)}")
    view.copy_(_plain(src))
    return result


def slice_scatter(input, src, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of ``input`` with ``src`` written on ``input[..., start:end:step, ...]``
    (the slice taken along ``dim``)."""
    _check_tensor(input, "slice_scatter", "input", 1)
    _check_tensor(src, "slice_scatter", "src", 2)
    result = _clone_preserve_strides(_plain(input))
    d = _wrap(dim, result.dim())
    view = result[(slice(None),) * d + (slice(start, end, step),)]
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src.shape)}, slice size = {_fmt(view.shape)}")
    view.copy_(_plain(src))
    return result if out is None else copy_out_same_dtype(out, result)


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers give int64)."""
    # a CPU float32/float64 matrix: no check below can fail, the kernel at once
    out = _K.trace_fast(input)
    if out is not None:
        return out
    _check_tensor(input, "trace", "input", 1)
    if input.dtype is _C.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    dt = _C.int64 if input.dtype._category == 1 else input.dtype
    out = _C.empty((), dtype=dt, device=input.device)
    _cpu_kernel("trace", input.device, _trace_cpu)(out, _plain(input))
    return out


# ---------------------------------------------------------------------------
# broadcasting helpers, meshgrid, atleast_nd, misc
# ---------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape all ``shapes`` broadcast to (no tensors are created)."""
    max_len = 0
    norm = []
    for s in shapes:
        if isinstance(s, (int, _np.integer)) and not isinstance(s, bool):
            s = (int(s),)
        elif isinstance(s, (tuple, list, _C.Size)):
            s = tuple(operator.index(v) for v in s)
        else:
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {s}")
        norm.append(s)
        max_len = max(max_len, len(s))
    result = [1] * max_len
    for idx, s in enumerate(norm):
        for i in range(-1, -1 - len(s), -1):
            if s[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if s[i] == 1 or s[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                    f"argument at index {idx} had {s}; but expected shape should be "
                    f"broadcastable to {result}")
            result[i] = s[i]
    return _C.Size(result)


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape; a tensor that
    already has that shape is returned itself (torch's expand_outplace), so a leaf stays
    the leaf (torch.distributions keep the parameters they are given, whose .grad a
    program reads)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_typename(t)}")
    shape = _broadcast_shape_tensors([t.shape for t in tensors])
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-D/1-D tensors (``indexing`` 'ij' or 'xy');
    the results are expanded views."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_typename(t)}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _atleast(args, fn):
    if len(args) == 1:
        a = args[0]
        if isinstance(a, _TensorBase):
            return fn(a)
        if isinstance(a, (list, tuple)):
            return tuple(fn(t) for t in a)
    return tuple(fn(t) for t in args)


def _al1(t):
    return t.reshape(1) if t.dim() == 0 else t


def _al2(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _al3(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    """Views with at least one dimension."""
    return _atleast(tensors, _al1)


def atleast_2d(*tensors):
    """Views with at least two dimensions (1-D (n) -> (1, n))."""
    return _atleast(tensors, _al2)


def atleast_3d(*tensors):
    """Views with at least three dimensions ((n) -> (1, n, 1), (a, b) -> (a, b, 1))."""
    return _atleast(tensors, _al3)


def narrow_copy(input, dim, start, length, *, out=None):
    """A contiguous copy of ``input.narrow(dim, start, length)``."""
    _check_tensor(input, "narrow_copy", "input", 1)
    if isinstance(dim, int) and 0 < input.dim() <= dim:     # (a negative dim: IndexError below)
        raise RuntimeError(f"narrow_copy(): Expected dim < {input.dim()} (the input's dims), "
                           f"but got dim {dim}")
    result = _plain(input).narrow(dim, start, length).clone(memory_format=_C.contiguous_format)
    if out is None:
        return result
    if out.dtype is not result.dtype:
        raise RuntimeError("narrow_copy: expected out to have the input's dtype "
                           f"{result.dtype._legacy}, got {out.dtype._legacy}")
    out.resize_(result.shape)        # (torch's narrow_copy_out resizes without a warning)
    return out.copy_(result)


def ravel(input):
    """The elements as a 1-D tensor (a view when ``input`` is contiguous)."""
    _check_tensor(input, "ravel", "input", 1)
    return input.contiguous().view(-1)


# ---------------------------------------------------------------------------
# padding
# ---------------------------------------------------------------------------
def constant_pad_nd(input, pad, value=0):
    """Pad the last ``len(pad) // 2`` dims with ``value``; ``pad`` is
    (last_left, last_right, 2nd_last_left, ...); negative entries crop."""
    _check_tensor(input, "constant_pad_nd", "input", 1)
    pad = [operator.index(p) for p in pad]
    nd = input.dim()
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > nd:
        raise RuntimeError(
            f"Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)}while the input has {nd}dimensions.")
    if isinstance(value, _TensorBase):
        value = value.item()
    x = _plain(input)
    shape = list(x.shape)
    npad = len(pad) // 2
    # crop negative padding first (as PyTorch, narrow's errors included)
    for i in range(npad):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            x = x.narrow(d, -lo, x.shape[d] + lo)
        if hi < 0:
            x = x.narrow(d, 0, x.shape[d] + hi)
    for i in range(npad):
        d = nd - 1 - i
        shape[d] = shape[d] + pad[2 * i] + pad[2 * i + 1]
        if shape[d] < 0:
            raise RuntimeError(
                f"The input size {input.shape[d]}, plus negative padding {pad[2 * i]} and "
                f"{pad[2 * i + 1]} resulted in a negative output size, which is invalid. Check "
                f"dimension {d} of your input.")
    out = _C.empty(shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    out.fill_(value)
    inner = out
    for i in range(npad):
        d = nd - 1 - i
        inner = inner.narrow(d, max(pad[2 * i], 0), x.shape[d])
    if x.numel():
        inner.copy_(x)
    return out


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(n_in, lo, hi, mode):
    """Source positions along one dim (PyTorch's reflection/replication maps)."""
    n_out = n_in + lo + hi
    i0 = max(0, -lo)
    o0 = max(0, lo)
    idx = []
    for j in range(n_out):
        if mode == "reflect":
            if j < lo:
                p = lo * 2 - j
            elif j < n_in + lo:
                p = j
            else:
                p = (n_in + lo - 1) * 2 - j
        else:
            if j < lo:
                p = lo
            elif j < n_in + lo:
                p = j
            else:
                p = n_in + lo - 1
        idx.append(p - o0 + i0)
    return idx


def _pad_circular(x, pad):
    nd = x.dim()
    npad = len(pad) // 2
    shape = list(x.shape)
    for i in range(npad):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = shape[d]
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        core = size + min(lo, 0) + min(hi, 0)
        if size + lo + hi > 0 and (lo > core or hi > core):
            # PyTorch reads uninitialised memory here; refuse instead
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] = size + lo + hi
    out = _C.empty(shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    o, s = out, x
    for i in range(npad):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        o = o.narrow(d, max(lo, 0), shape[d] - max(lo, 0) - max(hi, 0))
        s = s.narrow(d, max(-lo, 0), x.shape[d] - max(-lo, 0) - max(-hi, 0))
    o.copy_(s)
    for i in range(npad):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[d]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, n - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, n - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out


def pad(input, pad, mode="constant", value=None):
    """``torch.nn.functional.pad``: pad (or, with negative entries, crop) the
    last ``len(pad) // 2`` dims.

    Parameters
    ----------
    input : Tensor
    pad : sequence of int
        ``(last_left, last_right, 2nd_last_left, 2nd_last_right, ...)``.
    mode : {'constant', 'reflect', 'replicate', 'circular'}
        Non-constant modes pad the last 1, 2 or 3 dims of a (batched) input
        and follow PyTorch's size rules (reflect: padding < dim size).
    value : number, optional
        Fill value for 'constant' (default 0).

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.arange(4.0).view(1, 4)
    >>> pad(x, (2, 1), mode="reflect")
    tensor([[2., 1., 0., 1., 2., 3., 2.]])
    >>> pad(x, (1, -2), value=9)
    tensor([[9., 0., 1.]])
    """
    _check_tensor(input, "pad", "input", 1)
    pad = [operator.index(p) for p in pad]
    nd = input.dim()
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    x = _plain(input)
    if mode == "circular":
        return _pad_circular(x, pad)
    if x.dtype is _C.bool_:
        name = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{name}_pad{k}d\" not implemented for 'Bool'")
    batch = nd == k + 2
    for d in range(1 if batch else 0, nd):
        if x.shape[d] == 0:
            raise RuntimeError(
                f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {_fmt(x.shape)}")
    sizes_in, sizes_out = [], []
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and not (lo < x.shape[d] and hi < x.shape[d]):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{_fmt(x.shape)}")
        sizes_in.insert(0, x.shape[d])
        sizes_out.insert(0, x.shape[d] + lo + hi)
    too_small = (sizes_out[0] < 1) if k == 1 else builtins.all(s < 1 for s in sizes_out)
    if too_small or builtins.any(s < 0 for s in sizes_out):
        names = "DHW"[3 - k:]
        a = (", " if k == 2 else " ").join(f"{n}: {s}" for n, s in zip(names, sizes_in))
        b = " ".join(f"{n}: {s}" for n, s in zip(names, sizes_out))
        raise RuntimeError(f"input ({a}) is too small. Calculated output {b}")
    result = x
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        if lo >= 0 and hi >= 0:
            result = _pad_dim_slices(result, d, lo, hi, mode)
        else:      # negative padding: PyTorch's index map (may read cropped elements)
            idx = _index_tensor(_pad_index(result.shape[d], lo, hi, mode)).to(result.device)
            result = index_select(result, d, idx)
    return result if result is not x else x.clone()


def _pad_dim_slices(x, d, lo, hi, mode):
    """reflect/replicate padding of one dim by non-negative amounts as three
    strided copies (centre, left band, right band)."""
    n = x.shape[d]
    shape = list(x.shape)
    shape[d] = n + lo + hi
    out = _C.empty(shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    out.narrow(d, lo, n).copy_(x)
    if mode == "reflect":
        if lo:
            out.narrow(d, 0, lo).copy_(flip(x.narrow(d, 1, lo), [d]))
        if hi:
            out.narrow(d, lo + n, hi).copy_(flip(x.narrow(d, n - 1 - hi, hi), [d]))
    else:
        if lo:
            band = out.narrow(d, 0, lo)
            band.copy_(x.narrow(d, 0, 1).expand(band.shape))
        if hi:
            band = out.narrow(d, lo + n, hi)
            band.copy_(x.narrow(d, n - 1, 1).expand(band.shape))
    return out


def _index_tensor(values):
    arr = _np.asarray(values, dtype=_np.int64).reshape(-1)
    return _C.from_numpy(arr)


# ---------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------
@_method_form("scatter_")
def _m_scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    return scatter_(self, dim, index, src, value=value, reduce=reduce)


@_method_form("scatter")
def _m_scatter(self, dim, index, src=None, value=None, *, reduce=None):
    return scatter(self, dim, index, src, value=value, reduce=reduce)


@_method_form("put_")
def _m_put_(self, index, source, accumulate=False):
    """``Tensor.put_``: ``self.view(-1)[index] = source`` (``accumulate`` adds)."""
    if not accumulate:
        # (torch's first step: which of repeated indices wins is unspecified)
        _alert_not_deterministic("put_")
    _check_tensor(index, "put_", "index", 1)
    _check_tensor(source, "put_", "source", 2)
    if index.dtype is not _C.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_scalar_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_scalar_name(self.dtype)} and source.dtype = "
                           f"{_scalar_name(source.dtype)}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                           f"{index.numel()}")
    n = self.numel()
    idx = _plain(index).reshape(-1)
    if idx.numel() == 0:
        return self
    if n == 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    _check_bounds(idx, n, True, lambda v: IndexError(
        f"out of range: tried to access index {v} on a tensor of {n} elements."))
    if self.is_contiguous():
        flat = _plain(self).view(-1)
        index_put_(flat, (idx,), _plain(source).reshape(-1), accumulate)
    else:
        tmp = _plain(self).contiguous().view(-1)
        index_put_(tmp, (idx,), _plain(source).reshape(-1), accumulate)
        _plain(self).copy_(tmp.view(self.shape))
    self._bump_version()
    return self


@_method_form("put")
def _m_put(self, index, source, accumulate=False):
    return _m_put_(_plain(self).clone(), index, source, accumulate)


@_method_form("masked_fill")
def _m_masked_fill(self, mask, value):
    return masked_fill(self, mask, value)


@_method_form("repeat_interleave")
def _m_repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    return repeat_interleave(self, repeats, dim, output_size=output_size)


@_method_form("nonzero")
def _m_nonzero(self, *, as_tuple=False):
    return nonzero(self, as_tuple=as_tuple)


@_method_form("flip")
def _m_flip(self, *dims, **kwargs):
    if "dims" in kwargs:
        dims = kwargs.pop("dims")
    elif not dims:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    elif len(dims) == 1 and isinstance(dims[0], (list, tuple, _C.Size)):
        dims = dims[0]
    if kwargs:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return flip(self, list(dims) if isinstance(dims, (list, tuple, _C.Size)) else dims)


@_method_form("tile")
def _m_tile(self, *dims, **kwargs):
    if "dims" in kwargs:
        dims = kwargs.pop("dims")
    elif not dims:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    elif len(dims) == 1 and isinstance(dims[0], (list, tuple, _C.Size)):
        dims = dims[0]
    if kwargs:
        raise TypeError(f"tile() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return tile(self, dims)


@_method_form("roll")
def _m_roll(self, shifts, dims=None):
    return roll(self, shifts, dims)


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "shape")
del _bind_module
