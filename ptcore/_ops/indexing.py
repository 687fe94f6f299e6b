"""Advanced indexing: ``x[idx]`` and ``x[idx] = v`` where ``idx`` holds
integer tensors, lists or boolean masks (mixed with ints, slices, None and
Ellipsis), and ``index_put_``.

Basic indexing (ints, slices, None, Ellipsis) is done as views in
``ptcore._tensor``; it calls :func:`getitem` / :func:`setitem` (registered with
``_C._set_indexing_hooks``) as soon as an index item is a tensor or a
sequence.  The algorithm is PyTorch's (``applySlicing`` + ``index``):

1. walk the items left to right: ints and 0-d integer tensors *select*,
   slices slice, None (and Python bools) unsqueeze, Ellipsis skips dims; a
   tensor (or a sequence, turned into an int64 or bool tensor) is recorded
   against the current dim; a k-dim bool/uint8 mask covers k dims;
2. masks become k int64 tensors (their ``nonzero`` coordinates), int32
   becomes int64, all index tensors are broadcast together;
3. the broadcast index dims replace the indexed dims in place when those are
   adjacent, else they go first (NumPy's rule, applied after step 1, so ints
   never count as advanced indices).

The element loop is ``ptcore._ops.kernels._index.indexed``.  Index values are
checked before anything is written.
"""
import operator
import warnings

import numpy as _np

from ptcore import _tensor as _C
from ptcore._dispatch.device import (check_same_device as _check_same_device,
                                     cpu_kernel as _cpu_kernel,
                                     in_host_memory as _in_host_memory)
from ptcore._tensor import _TensorBase
from ptcore._ops.kernels import _index as _K
from ptcore._ops.creation import tensor as _tensor
from ptcore._dispatch.table import entry as _op_entry

__all__ = []

_INDEX_DTYPE_MSG = "tensors used as indices must be long, int, byte or bool tensors"


# ---------------------------------------------------------------------------
# small helpers shared with ptcore._ops.shape
# ---------------------------------------------------------------------------
def _plain(t):
    """``t`` without autograd tracking (same memory)."""
    return t.detach() if t._requires_grad else t


def _int64(t):
    return t if t.dtype is _C.int64 else t._to_dtype(_C.int64)


def _fmt(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _scalar_name(dt):
    """PyTorch's ScalarType name (``Float``, ``Long``, ``ComplexFloat`` ...)."""
    return dt._legacy


def _masked_select_cpu(input, mask, shape):
    istr = _broadcast_strides(input, shape)
    mstr = _broadcast_strides(mask, shape)
    n = _K.masked_count(mask, mstr, shape)
    out = _C.empty(n, dtype=input.dtype)
    _K.masked(0, input, istr, mask, mstr, shape, out)
    return out


def _broadcast_strides(t, shape):
    """Element strides of ``t`` viewed broadcast to ``shape`` (t's shape is
    known to broadcast)."""
    nd = len(shape)
    off = nd - t.dim()
    out = [0] * nd
    tshape = t.shape
    tstr = t.stride()
    for i in range(t.dim()):
        if tshape[i] != 1 or shape[off + i] == 1:
            out[off + i] = tstr[i]
    return out


def _broadcast_two(a, b):
    """Broadcast shape of two shapes or None when they do not broadcast."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _check_bounds(index, size, allow_negative, make_error):
    """Raise ``make_error(bad_value)`` if an int64 index is out of range."""
    bad = _cpu_kernel("index_bounds", index.device, _index_bounds_cpu)(index, size, allow_negative)
    if bad is not None:
        raise make_error(bad)


def _index_bounds_cpu(index, size, allow_negative):
    return _K.check_index(index, size, allow_negative)


def _tensor_from_sequence(seq):
    """PyTorch's ``indexing_tensor_from_data``: bool/uint8 data stays, anything
    else becomes int64."""
    t = _tensor(seq)
    if t.dtype is _C.bool_ or t.dtype is _C.uint8:
        return t
    if t.dtype is _C.int64:
        return t
    if t.is_complex():
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return t._to_dtype(_C.int64)


def _is_sequence(o):
    return isinstance(o, (list, tuple, range, _np.ndarray))


def _items_of(idx):
    """The index as a tuple of items (PyTorch's ``treatSequenceAsTuple``)."""
    if isinstance(idx, tuple):
        return tuple(idx)
    if isinstance(idx, (_TensorBase, _np.ndarray)) or not _is_sequence(idx):
        return (idx,)     # torch never reads an ndarray as a tuple of indices
    n = len(idx)
    if n >= 32:
        return (idx,)
    for o in idx:
        if (isinstance(o, (_TensorBase, slice)) or o is None or o is Ellipsis
                or _is_sequence(o)):
            warnings.warn(
                "Using a non-tuple sequence for multidimensional indexing is deprecated; "
                "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=4)
            return tuple(idx)
    return (idx,)


def _is_bool_scalar(o):
    return type(o) is bool      # (a NumPy bool scalar is no index for torch: IndexError)


def _is_mask(t):
    return t.dtype is _C.bool_ or t.dtype is _C.uint8


def _specified_dims(items):
    count = 0
    for o in items:
        if isinstance(o, _TensorBase):
            count += o.dim() if _is_mask(o) else 1
        elif o is not None and o is not Ellipsis and not _is_bool_scalar(o):
            count += 1
    return count


def _bool_index(value, device):
    """The int64 index tensor a Python/0-d bool stands for ([0] or [])."""
    t = _C.zeros(1 if value else 0, dtype=_C.int64)
    return t.to(device)


def _select(result, dim, i, real_dim):
    size = result.shape[dim]
    if i < -size or i >= size:
        raise IndexError(f"index {i} is out of bounds for dimension {real_dim} with size {size}")
    return result.select(dim, i)


def _apply_slicing(self, items):
    """Step 1: the view after the basic items and the recorded tensors as a
    list of ``(dim, tensor)``."""
    ndim = self.dim()
    specified = _specified_dims(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = _plain(self)
    recorded = []
    dim = 0
    real_dim = 0
    for o in items:
        if isinstance(o, _np.ndarray) and o.ndim == 0:
            o = _tensor_from_sequence(o)          # a 0-d array indexes as a 0-d tensor
            if o.device != self.device:
                o = o.to(self.device)
        if isinstance(o, _TensorBase):
            if o.dim() == 0 and not o.is_floating_point() and not o.is_complex():
                if not _is_mask(o):
                    result = _select(result, dim, int(o.item()), real_dim)
                    real_dim += 1
                    continue
                result = result.unsqueeze(dim)
                recorded.append((dim, _bool_index(bool(o.item()), self.device)))
                dim += 1
                continue
            recorded.append((dim, o))
            k = o.dim() if _is_mask(o) else 1
            dim += k
            real_dim += k
        elif _is_bool_scalar(o):
            result = result.unsqueeze(dim)
            recorded.append((dim, _bool_index(bool(o), self.device)))
            dim += 1
        elif o is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif o is Ellipsis:
            dim += ndim - specified
            real_dim += ndim - specified
        elif type(o) is slice:
            if o.step is not None and operator.index(o.step) <= 0:
                raise ValueError("step must be greater than zero")
            result = result[(slice(None),) * dim + (o,)]
            dim += 1
            real_dim += 1
        elif _is_sequence(o):
            t = _tensor_from_sequence(o)
            if t.device != self.device:
                t = t.to(self.device)
            recorded.append((dim, t))
            k = t.dim() if _is_mask(t) else 1
            dim += k
            real_dim += k
        elif hasattr(o, "__index__") and not isinstance(o, float):
            result = _select(result, dim, operator.index(o), real_dim)
            real_dim += 1
        elif isinstance(o, (str, bytes)):
            # torch reads a str as a sequence of data for an index tensor
            raise TypeError(f"new(): invalid data type '{type(o).__name__}'")
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(o).__name__})")
    return result, recorded


def _expand_indices(result, recorded):
    """Step 2: a list (one entry per dim of ``result``, None where not indexed)
    of int64 index tensors; masks are replaced by their coordinates."""
    nonzero = _op_entry("nonzero")
    indices = [None] * result.dim()
    for dim, t in recorded:
        if _is_mask(t):
            if t.dtype is _C.uint8:
                warnings.warn("indexing with dtype ptcore.uint8 is now deprecated, please use a "
                              "dtype ptcore.bool instead.", UserWarning, stacklevel=4)
            for j in range(t.dim()):
                if t.shape[j] != result.shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {_fmt(t.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {_fmt(result.shape)} at index {dim + j}")
            coords = nonzero(_plain(t) if t.device == result.device else t.to(result.device))
            for j in range(t.dim()):
                indices[dim + j] = coords.select(1, j)
        elif t.dtype is _C.int64 or t.dtype is _C.int32:
            t = _int64(_plain(t))
            indices[dim] = t if t.device == result.device else t.to(result.device)
        else:
            raise IndexError(_INDEX_DTYPE_MSG)
    return indices


def _index_shape(src_shape, indices):
    """Step 3: (broadcast index shape, result shape, positions, adjacent)."""
    positions = [d for d, t in enumerate(indices) if t is not None]
    bshape = ()
    shapes = []
    for d in positions:
        s = tuple(indices[d].shape)
        shapes.append(s)
        b = _broadcast_two(bshape, s)
        if b is None:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(_fmt(x) for x in shapes))
        bshape = b
    if 0 not in bshape and any(src_shape[d] == 0 for d in positions):
        # no value is a valid index into an empty dimension (PyTorch's early check)
        raise IndexError("index is out of bounds for dimension with size 0")
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    if adjacent:
        shape = (tuple(src_shape[:positions[0]]) + bshape
                 + tuple(src_shape[positions[-1] + 1:]))
    else:
        shape = bshape + tuple(s for d, s in enumerate(src_shape) if indices[d] is None)
    return bshape, shape, positions, adjacent


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _validate(src_shape, indices, positions):
    for k, d in enumerate(positions):
        size = src_shape[d]
        _check_bounds(indices[d], size, True, lambda v, k=k, size=size: IndexError(
            f"index {v} is out of bounds for dimension {k} with size {size}"))


def _plan(src, indices, bshape, shape, positions, adjacent):
    """Strides (elements) of the indexed operand and of each index operand
    over the result's iteration space."""
    nb = len(bshape)
    first = positions[0] if adjacent else 0
    src_shape = src.shape
    src_str = src.stride()
    data_strides = []
    if adjacent:
        for d in range(first):
            data_strides.append(src_str[d])
        data_strides.extend([0] * nb)
        for d in range(positions[-1] + 1, len(src_shape)):
            data_strides.append(src_str[d])
    else:
        data_strides.extend([0] * nb)
        for d in range(len(src_shape)):
            if indices[d] is None:
                data_strides.append(src_str[d])
    idx_tensors, idx_strides, sizes, muls = [], [], [], []
    for d in positions:
        t = indices[d]
        st = [0] * len(shape)
        st[first:first + nb] = _broadcast_strides(t, bshape)
        idx_tensors.append(t)
        idx_strides.append(st)
        sizes.append(src_shape[d])
        muls.append(src_str[d])
    return data_strides, idx_tensors, idx_strides, sizes, muls


def _index_cpu(out, src, indices, bshape, positions, adjacent):
    """out (contiguous, the result shape) = src[indices]; indices validated."""
    shape = tuple(out.shape)
    data_strides, idx, idx_strides, sizes, muls = _plan(src, indices, bshape, shape,
                                                         positions, adjacent)
    _K.indexed(0, 0, out, out.stride(), src, data_strides, shape, idx, idx_strides,
               sizes, muls)


def _index_put_cpu(self, indices, values, accumulate, bshape, shape, positions, adjacent):
    """self[indices] = values (or +=); values (self's dtype) broadcast to
    ``shape``; indices validated."""
    if self.dtype in (_C.uint16, _C.uint32, _C.uint64):     # as PyTorch's kernel
        raise NotImplementedError(f"\"index_put\" not implemented for '{self.dtype._legacy}'")
    data_strides, idx, idx_strides, sizes, muls = _plan(self, indices, bshape, shape,
                                                         positions, adjacent)
    vstr = _broadcast_strides(values, shape)
    if accumulate:
        _K.indexed(2, _K.REDUCTIONS["add"], values, vstr, self, data_strides, shape, idx,
                   idx_strides, sizes, muls)
    else:
        _K.indexed(1, 0, values, vstr, self, data_strides, shape, idx, idx_strides,
                   sizes, muls)


def _on_device(indices, device):
    """Index tensors on the indexed tensor's device (as PyTorch, a CUDA
    tensor takes CPU indices)."""
    return [t if t is None or t.device == device else t.to(device) for t in indices]


def _index_get(result, indices):
    bshape, shape, positions, adjacent = _index_shape(result.shape, indices)
    out = _C.empty(shape, dtype=result.dtype, device=result.device)
    if _numel(shape) == 0:
        return out
    _validate(result.shape, indices, positions)
    _check_same_device("index", result, *[indices[d] for d in positions])
    _cpu_kernel("index", result.device, _index_cpu)(out, result, indices, bshape, positions,
                                                     adjacent)
    return out


def _take_rows(src, idx):
    """``src[idx]`` for one int64 CPU index tensor (the common advanced
    index): rows of ``src`` in ``idx``'s shape, without the general
    planner's passes over the index items."""
    shape = tuple(idx.shape) + tuple(src.shape[1:])
    if src.shape[0] == 0 and idx.numel():
        raise IndexError("index is out of bounds for dimension with size 0")
    out = _C.empty(shape, dtype=src.dtype)
    if out.numel():
        indices = [idx] + [None] * (src.dim() - 1)
        size = src.shape[0]
        bad = _K.check_index(idx, size, True)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {size}")
        _index_cpu(out, src, indices, tuple(idx.shape), [0], True)
    return out


def accumulate_rows(target, idx, values):
    """``target[idx] += values`` for one int64 index tensor selecting along
    dim 0 and ``values`` of the indexed shape (``idx.shape + target.shape[1:]``,
    ``target``'s dtype), host memory only: the backward of ``x[idx]`` (its
    gradient into a fresh zero tensor, which shares no memory with
    ``values``).  Rows are added in index order, as the general accumulating
    kernel adds them (the same bits).  True when done; False (nothing
    written) for any other call, which the general ``index_put_`` then takes
    (and whose errors it raises)."""
    if idx.dtype is not _C.int64 or not idx.dim() or not target.dim() \
            or values.dtype is not target.dtype or not _in_host_memory(target) \
            or not _in_host_memory(values) or not _in_host_memory(idx):
        return False
    shape = tuple(idx.shape) + tuple(target.shape[1:])
    if tuple(values.shape) != shape:
        return False
    if idx.dim() == 1 and _K.index_add_rows(target, idx, values):
        return True     # contiguous float rows, every index in [0, rows)
    if _K.check_index(idx, target.shape[0], True) is not None or \
            target.dtype in (_C.uint16, _C.uint32, _C.uint64):
        return False
    if not _numel(shape):
        return True
    _index_put_cpu(target, [idx] + [None] * (target.dim() - 1), values, True,
                   tuple(idx.shape), shape, [0], True)
    return True


def _same_memory(a, b):
    """Whether two tensors' storages are one block of memory: the same
    address, or the same storage where there is no memory (meta tensors)."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    p = sa.data_ptr()
    return p == sb.data_ptr() and (p != 0 or sa is sb)


def _dense_overlap(a, b):
    """PyTorch's ``get_overlap_status(a, b) != No``: only decided for
    non-overlapping-and-dense tensors ('too hard' otherwise -> False)."""
    if a.numel() == 0 or b.numel() == 0 or not _same_memory(a, b):
        return False
    if not a.is_non_overlapping_and_dense() or not b.is_non_overlapping_and_dense():
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    return a0 < b0 + b.numel() * b.element_size() and b0 < a0 + a.numel() * a.element_size()


def _may_share(a, b):
    """Conservative: whether the byte ranges of two tensors intersect."""
    if a.numel() == 0 or b.numel() == 0 or not _same_memory(a, b):
        return False

    def extent(t):
        lo = hi = t.data_ptr()
        for s, st in zip(t.shape, t.stride()):
            span = (s - 1) * st * t.element_size()
            if span < 0:
                lo += span
            else:
                hi += span
        return lo, hi + t.element_size()
    alo, ahi = extent(a)
    blo, bhi = extent(b)
    return alo < bhi and blo < ahi


_OVERLAP_MSG = ("unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")


def _masked_fill_dispatch(target, recorded, values):
    """PyTorch's ``canDispatchToMaskedFill``: one mask index and a one-element
    value -> ``masked_fill_``.  Returns True when done."""
    if values.numel() != 1 or not _in_host_memory(values) or len(recorded) != 1:
        return False
    dim, m = recorded[0]
    if not _is_mask(m) or m.device != target.device:
        return False
    for j in range(m.dim()):
        if m.shape[j] != target.shape[dim + j]:
            raise IndexError(
                f"The shape of the mask {_fmt(m.shape)} at index {j} does not match the shape of "
                f"the indexed tensor {_fmt(target.shape)} at index {dim + j}")
    mask = _plain(m)
    trailing = target.dim() - dim - m.dim()
    if trailing:
        mask = mask.reshape(tuple(mask.shape) + (1,) * trailing)
    target.masked_fill_(mask, values.item())
    return True


def _index_put_impl(target, recorded, values, accumulate):
    """``target[recorded] = values`` (or +=) with PyTorch's ``_index_put_impl_``
    order of checks: masked_fill dispatch, overlap, index expansion and
    broadcasting, value shape, value dtype, index bounds."""
    if not accumulate and _masked_fill_dispatch(target, recorded, values):
        return
    values = _plain(values)
    if _dense_overlap(target, values):
        raise RuntimeError(_OVERLAP_MSG)
    for s, st in zip(target.shape, target.stride()):
        if st == 0 and s > 1:
            warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the "
                          "tensor before performing this operation. This also applies to advanced "
                          "indexing e.g. tensor[indices] = tensor", UserWarning, stacklevel=4)
            break
    indices = _on_device(_expand_indices(target, recorded), target.device)
    bshape, shape, positions, adjacent = _index_shape(target.shape, indices)
    if _broadcast_two(shape, values.shape) != tuple(shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_fmt(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {_fmt(shape)}")
    if values.dtype is not target.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{_scalar_name(target.dtype)} for the destination and {_scalar_name(values.dtype)} "
            "for the source.")
    if _numel(shape) == 0:
        return
    _validate(target.shape, indices, positions)
    _check_same_device("index_put_", target, values, *[indices[d] for d in positions])
    if _may_share(target, values):
        values = values.clone()
    _cpu_kernel("index_put_", target.device, _index_put_cpu)(
        target, indices, values, accumulate, bshape, shape, positions, adjacent)


# ---------------------------------------------------------------------------
# the hooks
# ---------------------------------------------------------------------------
def scalar_tensors_as_ints(idx):
    """``idx`` with its 0-d integer tensors as ints (torch indexes with them
    as with ints: a view), or None when it has none."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(isinstance(o, _TensorBase) and o.dim() == 0 and not _is_mask(o)
               and not o.is_floating_point() and not o.is_complex() for o in items):
        return None
    items = tuple(int(o.item()) if isinstance(o, _TensorBase) and o.dim() == 0
                  and not _is_mask(o) and not o.is_floating_point() and not o.is_complex()
                  else o for o in items)
    return items if isinstance(idx, tuple) else items[0]


def _int_lists_as_tensors(items):
    """``items`` with each list of plain ints (not bools) as its int64 tensor
    (what the general path makes of it); None where a list holds anything
    else or is empty (the general path's rules and errors apply)."""
    out = []
    for o in items:
        if type(o) is list:
            if not o or not all(type(v) is int for v in o):
                return None
            try:
                o = _C.from_numpy(_np.array(o, dtype=_np.int64))
            except OverflowError:
                return None
        out.append(o)
    return tuple(out)


def getitem(self, idx):
    """``self[idx]`` when ``idx`` has an advanced (tensor/sequence) item."""
    if isinstance(idx, _TensorBase) and _in_host_memory(idx) and _in_host_memory(self) and self.dim() \
            and idx.dim():
        if idx.dtype is _C.int64:
            # rows at non-negative in-range positions of a 1-D index: index_select's one call
            r = _K.index_select_fast(self, 0, idx) if idx.dim() == 1 else None
            return r if r is not None else _take_rows(self, _plain(idx))
        if idx.dtype is _C.bool_ and idx.shape == self.shape \
                and self.dtype not in (_C.uint16, _C.uint32, _C.uint64):
            # a mask over every dim: the selected elements in C order, as
            # masked_select (the coordinates are never made; masked_select has
            # no kernel for the wide unsigned types, indexing does)
            return _masked_select_cpu(self, _plain(idx), tuple(self.shape))
    if type(idx) is tuple and _in_host_memory(self):
        # full slices and int64 index tensors (x[i, j], x[:, i], mask[b, k]): one call
        r = _K.index_tensors_fast(self, idx)
        if r is not None:
            return r
        if list in map(type, idx):
            # and lists of ints, as their int64 tensors (logits[:, [-1], :])
            items = _int_lists_as_tensors(idx)
            r = None if items is None else _K.index_tensors_fast(self, items)
            if r is not None:
                return r
    result, recorded = _apply_slicing(self, _items_of(idx))
    if not recorded:
        return result if result is not self else result.view(result.shape)
    return _index_get(result, _on_device(_expand_indices(result, recorded), result.device))


def _value_tensor(self, value):
    if isinstance(value, _TensorBase):
        return value
    # ``__setitem__`` has refused every other kind of value (lists, arrays,
    # non-int NumPy scalars), as PyTorch does
    t = _C._setitem_scalar(value, self.dtype)     # PyTorch's setitem scalar rules
    return t.to(self.device)


def setitem(self, idx, value):
    """``self[idx] = value`` when ``idx`` has an advanced item."""
    value = _value_tensor(self, value)
    result, recorded = _apply_slicing(self, _items_of(idx))
    if not recorded:
        result[...] = value
        self._bump_version()
        return
    # PyTorch drops leading size-1 dims of the value ("slicePrefix1sSize")
    v = _plain(value)
    k = 0
    while k < v.dim() and v.shape[k] == 1:
        k += 1
    if k:
        v = v.reshape(tuple(v.shape[k:]))
    _index_put_impl(result, recorded, v, False)
    self._bump_version()


def _check_index_list(indices, fname):
    if isinstance(indices, _TensorBase) or not isinstance(indices, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, _TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")


def index_put_(input, indices, values, accumulate=False):
    """``input[indices] = values`` in place (``accumulate`` adds, summing
    duplicates); ``values`` must have input's dtype."""
    if accumulate is not True and accumulate is not False:
        raise TypeError(f"index_put_(): argument 'accumulate' must be bool, not "
                        f"{'Tensor' if isinstance(accumulate, _TensorBase) else type(accumulate).__name__}")
    _check_index_list(indices, "index_put_")
    if not isinstance(values, _TensorBase):
        raise TypeError(f"index_put_(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if len(indices) > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} "
                         f"(got {len(indices)})")
    if len(indices) == 0:
        raise RuntimeError("index_put_(): expected at least one index tensor")
    target = _plain(input)
    recorded = []
    dim = 0
    for t in indices:
        recorded.append((dim, t))
        dim += t.dim() if _is_mask(t) else 1
    if dim > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} "
                         f"(got {dim})")
    _index_put_impl(target, recorded, values, accumulate)
    input._bump_version()
    return input


def index_put(input, indices, values, accumulate=False):
    """Out-of-place :func:`index_put_`."""
    return index_put_(input.clone(), indices, values, accumulate)


_C._set_indexing_hooks(getitem, setitem)
