"""Sorting and searching: ``sort``, ``argsort``, ``msort``, ``topk``,
``kthvalue``, ``unique``, ``unique_consecutive``, ``searchsorted``,
``bucketize``, ``histc``, ``histogram``, ``bincount``, ``isin``.

The public functions check arguments, promote dtypes, compute shapes and
allocate outputs, then call the CPU kernels (``ptcore._ops.kernels._sort``) through
``cpu_kernel`` (tensors on another device reach the kernels registered in
the operator table instead, through the dispatch point's device layer).

Ordering follows ``torch.sort``: NaN is larger than every number (last in
ascending order, first in descending order), -0.0 and 0.0 are equal.  Among equal
elements ``stable=True`` keeps their order; ``stable=False`` (and ``topk``) give
the order PyTorch's CPU kernels give (libstdc++'s std::sort / nth_element,
run step for step in ``ptcore._ops.kernels._sort``).  Complex tensors have no order: the ops reject them as PyTorch does.
"""
import math
import numbers
import operator
import warnings

from ptcore import _tensor as _C
from ptcore._dispatch.device import (check_same_device as _check_same_device,
                                     cpu_kernel as _cpu_kernel)
from ptcore._tensor import _TensorBase
from ptcore._scalar_args import bool_param, strict_symint_param
from ptcore._dtype_utils import _result_type, _cpp_name, _refuse_float8, _refuse_limited, _LIMITED
from ptcore._return_types import named, as_out
from ptcore._ops.kernels import _sort as _K
from ptcore._ops._out import resize_out, assert_no_overlap, check_written
from ptcore._ops.creation import linspace
from ptcore._dispatch.table import entry as _op_entry
from ptcore._dispatch.generate import method_form as _method_form

__all__ = [
    "sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
    "searchsorted", "bucketize", "histc", "histogram", "bincount", "isin",
]

# --------------------------------------------------------------------------
# named tuples (wired as ptcore.return_types by the package)
# --------------------------------------------------------------------------
_named = named


_sort_t = _named("sort", ["values", "indices"])
_topk_t = _named("topk", ["values", "indices"])
_kthvalue_t = _named("kthvalue", ["values", "indices"])
_histogram_t = _named("histogram", ["hist", "bin_edges"])

# --------------------------------------------------------------------------
# argument helpers
# --------------------------------------------------------------------------
def _sname(dt):
    """PyTorch's ScalarType name (NotImplementedError messages)."""
    return dt._legacy


def _not_impl(kname, dt):
    return NotImplementedError(f"\"{kname}\" not implemented for '{_sname(dt)}'")


def _typename(x):
    return type(x).__name__


def _tensor_arg(x, fname, argname="input", pos=1):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, "
                        f"not {_typename(x)}")
    return x.detach() if x._requires_grad else x


def _int_arg(v, fname, argname, pos=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        if isinstance(v, _TensorBase) and v.dim() == 0 and not v.dtype.is_floating_point \
                and not v.dtype.is_complex and v.dtype is not _C.bool_:
            return int(v.item())
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{fname}(): argument '{argname}'{where} must be int, not {_typename(v)}")
    return operator.index(v)


def _wrap_dim(dim, ndim):
    return _C._wrap_dim_py(dim, ndim)


def _empty(shape, dtype, device):
    return _C.empty(tuple(shape), dtype=dtype, device=device)


def _check_out_tensor(t, fname):
    if not isinstance(t, _TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {_typename(t)}")


def _write_out(out, result, fname, *inputs):
    """Copy a computed result into a user's ``out=`` tensor (resized as
    PyTorch does, dtype must match); once resized, ``out`` may be an input's
    own memory but not part of it (torch's overlap checks of the kernel or
    of its ``copy_`` into ``out``)."""
    _check_out_tensor(out, fname)
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(result.dtype)}, "
                           f"but got {_cpp_name(out.dtype)} instead")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to be on device {result.device}, but got "
                           f"{out.device} instead")
    resize_out(out, result.shape)
    check_written(out, *inputs)
    out.copy_(result)
    return out


def _write_outs(cls, out, results, fname, input=None):
    """``results`` written into the tensors of ``out``, as ``cls``'s
    ``<name>_out`` twin (torch's ``sort_out`` ...); the values (the first),
    once resized, may be ``input``'s own memory but not part of it."""
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"{fname}(): argument 'out' must be tuple of {len(results)} Tensors")
    for o, r in zip(out, results):
        _check_out_tensor(o, fname)
        if o.dtype is not r.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(r.dtype)}, "
                               f"but got {_cpp_name(o.dtype)} instead")
    inputs = [(input,)] + [()] * (len(results) - 1)
    return as_out(cls(*(_write_out(o, r, fname, *i) for o, r, i in zip(out, results, inputs))))


def _scalar_tensor(v, device):
    """A Python number as a 0-d tensor of its own (wrapped-number) dtype."""
    if isinstance(v, bool):
        dt = _C.bool_
    elif isinstance(v, numbers.Integral):
        dt = _C.int64
    elif isinstance(v, numbers.Real):
        dt = _C.float64
    elif isinstance(v, numbers.Complex):
        dt = _C.complex128
    else:
        raise TypeError(f"expected a Tensor or a Number, got {_typename(v)}")
    return _C.full((), v, dtype=dt, device=device)


def _flat(x):
    """x as a 1-D tensor (a view when possible)."""
    return x.reshape(-1)


# --------------------------------------------------------------------------
# CPU kernels
# --------------------------------------------------------------------------
def _ordered_key(x):
    """uint16/32/64 (no sorting kernels, as in PyTorch's limited types) as a
    signed tensor of the same order: widened, or uint64 with its top bit
    flipped and read as int64; ``_from_key`` maps back."""
    if x.dtype is _C.uint16:
        return x._to_dtype(_C.int32)
    if x.dtype is _C.uint32:
        return x._to_dtype(_C.int64)
    return x.contiguous().view(_C.int64) ^ -2 ** 63


def _from_key(k, dt):
    if dt is _C.uint64:
        return (k ^ -2 ** 63).view(_C.uint64)
    return k._to_dtype(dt)


_GRAIN_SIZE = 32768


def _sort_cpu(x, dim, descending, stable, values, indices):
    # torch's unstable sort is std::sort, except a long 1-D ascending integer sort, which
    # goes to fbgemm's (stable) radix sort
    if not stable and x.dim() == 1 and not descending and x.numel() >= _GRAIN_SIZE and \
            not (x.dtype.is_floating_point or x.dtype is _C.bool_):
        stable = True
    _refuse_float8("sort", x)
    if x.dtype in _LIMITED:
        k = _ordered_key(x)
        kv = _empty(k.shape, k.dtype, k.device) if values is not None else None
        _K.sort(k, dim, descending, stable, kv, indices)
        if values is not None:
            _TensorBase.copy_(values, _from_key(kv, x.dtype))
        return
    _K.sort(x, dim, descending, stable, values, indices)


def _topk_cpu(x, k, dim, largest, sorted_, values, indices):
    _refuse_limited("topk_cpu", x)
    _refuse_float8("topk_cpu", x)
    _K.topk(x, dim, k, largest, sorted_, values, indices)


def _kthvalue_cpu(x, k, dim, values, indices):
    _refuse_limited("kthvalue_cpu", x)
    _K.kthvalue(x, dim, k, values, indices)


def _searchsorted_cpu(boundaries, values, out, right, sorter):
    _refuse_limited("searchsorted_out_cpu", boundaries, values)
    _K.searchsorted(boundaries, values, out, right, sorter)


def _unique_cpu(x1, consecutive, return_inverse, return_counts):
    """Groups of a 1-D tensor -> (values, inverse or None, counts or None)."""
    _refuse_float8("unique", x1)
    if x1.dtype in _LIMITED:
        vals, inv, cnt = _unique_cpu(_ordered_key(x1), consecutive, return_inverse, return_counts)
        return _from_key(vals, x1.dtype), inv, cnt
    n = x1.shape[0]
    perm = _empty((n,), _C.int64, x1.device)
    gid = _empty((n,), _C.int64, x1.device)
    g = _K.unique_flat(x1, not consecutive, perm, gid)
    vals = _empty((g,), x1.dtype, x1.device)
    inv = _empty((n,), _C.int64, x1.device) if return_inverse else None
    cnt = _empty((g,), _C.int64, x1.device) if return_counts else None
    if n:
        isz = x1.element_size()
        _K.unique_finish(x1, isz, x1.stride(0) * isz, perm, gid, vals, inv, cnt)
    return vals, inv, cnt


def _unique_dim_cpu(mat, consecutive, return_inverse, return_counts):
    """Groups of the rows of a contiguous 2-D tensor -> (rows, inverse, counts)."""
    _refuse_float8("unique_dim", mat)
    if mat.dtype in _LIMITED:
        rows, inv, cnt = _unique_dim_cpu(_ordered_key(mat).contiguous(), consecutive,
                                         return_inverse, return_counts)
        return _from_key(rows, mat.dtype), inv, cnt
    s, r = mat.shape
    perm = _empty((s,), _C.int64, mat.device)
    gid = _empty((s,), _C.int64, mat.device)
    g = _K.unique_rows(mat, not consecutive, perm, gid)
    rows = _empty((g, r), mat.dtype, mat.device)
    inv = _empty((s,), _C.int64, mat.device) if return_inverse else None
    cnt = _empty((g,), _C.int64, mat.device) if return_counts else None
    if s:
        rsz = r * mat.element_size()
        _K.unique_finish(mat, rsz, rsz, perm, gid, rows, inv, cnt)
    return rows, inv, cnt


def _minmax_cpu(x1):
    _refuse_limited("aminmax_cpu", x1)
    return _K.minmax(x1)


def _histc_cpu(x1, hist, lo, hi):
    _refuse_limited("histc_cpu", x1)
    _K.histc(x1, hist, lo, hi)


def _bincount_cpu(x1, weights, out):
    _refuse_limited("bincount_cpu", x1)
    out.zero_()
    _K.bincount(x1, weights, out)


def _isin_cpu(elements1, test1, out1, invert):
    _refuse_limited("isin_default_cpu", elements1, test1)
    _K.isin(elements1, test1, out1, invert)


# --------------------------------------------------------------------------
# sort, argsort, msort
# --------------------------------------------------------------------------
_UNSET = object()


def _sort_args(fname, args, dim, descending, stable):
    """``(dim, descending, stable)`` of a sort/argsort call, read as torch's two
    overloads: ``(dim=-1, descending=False)`` positional or keyword, or, with
    ``stable`` (keyword only; ``None`` allowed by sort), all three keyword only."""
    if args:
        if stable is not _UNSET or len(args) > 2:
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                            f"(Tensor, {got}{', stable=...' if stable is not _UNSET else ''}): "
                            f"with 'stable', 'dim' and 'descending' are keyword-only")
        for name, given, v in zip(("dim", "descending"), (dim, descending), args):
            if given is not _UNSET:
                raise TypeError(f"{fname}() got multiple values for argument '{name}'")
        dim = args[0]
        if len(args) == 2:
            descending = args[1]
    if dim is _UNSET:
        dim = -1
    if descending is _UNSET:
        descending = False
    elif descending is not True and descending is not False:
        bool_param(descending, fname, "descending")
    if stable is _UNSET or (stable is None and fname == "sort"):
        stable = False
    elif stable is not True and stable is not False:
        bool_param(stable, fname, "stable")
    return dim, descending, stable


def _sort_common(x, dim, descending, stable, fname, want_values):
    d = _wrap_dim(_int_arg(dim, fname, "dim"), x.dim())
    if x.dtype.is_complex:
        raise RuntimeError("Sort does not support complex dtypes on CPU")
    # torch's sort meta: both outputs take the input's strides when it is dense and
    # non-overlapping, else dense strides in its dimension order
    st = _C._preserve_format_strides(x)
    values = _C.empty_strided(x.shape, st, dtype=x.dtype, device=x.device) \
        if want_values else None
    indices = _C.empty_strided(x.shape, st, dtype=_C.int64, device=x.device)
    if x.dim() == 0:
        if want_values:
            values.copy_(x)
        indices.zero_()
    elif x.numel() > 0:
        _cpu_kernel("sort", x.device, _sort_cpu)(x, d, bool(descending), bool(stable), values,
                                                   indices)
    return values, indices


def sort(input, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET, out=None):
    """Sort ``input`` along ``dim``; returns ``(values, indices)``.

    With ``stable=True`` equal elements keep their order; otherwise they come
    in the order of PyTorch's unstable CPU sort.  NaN sorts as the largest value.

    Parameters
    ----------
    input : Tensor
        A real tensor (complex raises RuntimeError, as PyTorch on CPU).
    dim : int, optional
        The dimension to sort along (default: the last).
    descending : bool, optional
        Largest first.
    stable : bool, optional
        Keep the order of equal elements (default: PyTorch's unstable order).
    out : tuple of two Tensors, optional
        ``(values, indices)`` outputs.

    Returns
    -------
    ptcore.return_types.sort
        ``values`` (input's dtype) and ``indices`` (int64).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.sort(ptcore.tensor([3., float('nan'), 1.])).indices
    tensor([2, 0, 1])
    """
    x = _tensor_arg(input, "sort")
    dim, descending, stable = _sort_args("sort", args, dim, descending, stable)
    values, indices = _sort_common(x, dim, descending, stable, "sort", True)
    if out is not None:
        return _write_outs(_sort_t, out, (values, indices), "sort", x)
    return _sort_t(values, indices)


def argsort(input, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET, out=None):
    """Indices (int64) that sort ``input`` along ``dim`` (NaN largest; ties as ``sort``).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.argsort(ptcore.tensor([2, 1, 2, 0]), descending=True)
    tensor([0, 2, 1, 3])
    """
    x = _tensor_arg(input, "argsort")
    if out is not None and stable is _UNSET:
        # torch: only the keyword-only overload (stable, dim, descending) takes out=
        raise TypeError("argsort() received an invalid combination of arguments - got out= "
                        "without stable=: only argsort(input, *, stable, dim, descending, out) "
                        "takes out=")
    dim, descending, stable = _sort_args("argsort", args, dim, descending, stable)
    indices = _sort_common(x, dim, descending, stable, "argsort", False)[1]
    if out is not None:
        indices = _write_out(out, indices, "argsort")
    return indices


def msort(input, *, out=None):
    """``input`` sorted along its first dimension (values only).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.msort(ptcore.tensor([[3, 1], [2, 4]]))
    tensor([[2, 1],
            [3, 4]])
    """
    x = _tensor_arg(input, "msort")
    values = _sort_common(x, 0, False, False, "msort", True)[0]
    if out is not None:
        values = _write_out(out, values, "msort", x)
    return values


# --------------------------------------------------------------------------
# topk, kthvalue
# --------------------------------------------------------------------------
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim``.

    With ``sorted`` the results are in order (largest first when ``largest``);
    without it, in the order PyTorch's CPU selection leaves them.  Among equal
    values the indices are the ones PyTorch's CPU kernel returns (the same
    selection algorithm).  NaN counts as the largest value.

    Returns
    -------
    ptcore.return_types.topk
        ``values`` (input's dtype) and ``indices`` (int64).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.topk(ptcore.tensor([1., 5., 3., 5.]), 2)
    ptcore.return_types.topk(
    values=tensor([5., 5.]),
    indices=tensor([1, 3]))
    """
    if out is None:
        # the common call (a CPU tensor, int k and dim, bool flags): the
        # kernel's own checks and allocation
        r = _K.topk_fast(input, k, dim, largest, sorted)
        if r is not None:
            return tuple.__new__(_topk_t, r)
    x = _tensor_arg(input, "topk")
    k = strict_symint_param(k, "topk", "k", 2)
    dim = _int_arg(dim, "topk", "dim", 3)
    for flag, name in ((largest, "largest"), (sorted, "sorted")):
        # torch's flags take a Python bool only (not 0/1, numpy.bool, a 0-d tensor); the
        # message is the keyword form (torch adds " (position 4)" when passed positionally)
        if type(flag) is not bool:
            t = type(flag)
            tname = _typename(flag) if t.__module__ == "builtins" or \
                isinstance(flag, _TensorBase) else f"{t.__module__}.{t.__name__}"
            raise TypeError(f"topk(): argument '{name}' must be bool, not {tname}")
    d = _wrap_dim(dim, x.dim())
    size = x.shape[d] if x.dim() > 0 else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if x.dtype.is_complex:
        raise RuntimeError("topk does not support complex dtypes on CPU")
    if x.dtype is _C.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if x.dim() == 0:
        values = _empty((), x.dtype, x.device)
        values.copy_(x)
        indices = _C.zeros((), dtype=_C.int64, device=x.device)
    else:
        shape = list(x.shape)
        shape[d] = k
        values = _empty(shape, x.dtype, x.device)
        indices = _empty(shape, _C.int64, x.device)
        if values.numel() > 0:
            _cpu_kernel("topk", x.device, _topk_cpu)(x, k, d, largest, sorted, values,
                                                       indices)
    if out is not None:
        return _write_outs(_topk_t, out, (values, indices), "topk", x)
    return _topk_t(values, indices)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index.

    Among equal values the index is the one PyTorch's CPU kernel returns
    (same selection algorithm).  NaN counts as the largest value.

    Returns
    -------
    ptcore.return_types.kthvalue
        ``values`` (input's dtype) and ``indices`` (int64).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.kthvalue(ptcore.tensor([4., 1., 3.]), 2)
    ptcore.return_types.kthvalue(
    values=tensor(3.),
    indices=tensor(2))
    """
    x = _tensor_arg(input, "kthvalue")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "kthvalue", "keepdim")
    k = strict_symint_param(k, "kthvalue", "k", 2)
    dim = _int_arg(dim, "kthvalue", "dim", 3)
    d = _wrap_dim(dim, x.dim())
    size = x.shape[d] if x.dim() > 0 else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    # (checked after k, as PyTorch; a 0-d input runs no kernel: any dtype is accepted)
    if (x.dtype is _C.bool_ or x.dtype.is_complex) and x.dim() > 0:
        raise _not_impl("kthvalue_cpu", x.dtype)
    if x.dim() == 0:
        values = _empty((), x.dtype, x.device)
        values.copy_(x)
        indices = _C.zeros((), dtype=_C.int64, device=x.device)
    else:
        shape = list(x.shape)
        shape[d] = 1
        values = _empty(shape, x.dtype, x.device)
        indices = _empty(shape, _C.int64, x.device)
        if values.numel() > 0:
            _cpu_kernel("kthvalue", x.device, _kthvalue_cpu)(x, k, d, values, indices)
        if not keepdim:
            values = values.squeeze(d)
            indices = indices.squeeze(d)
    if out is not None:
        if isinstance(out, (tuple, list)) and out and isinstance(out[0], _TensorBase):
            assert_no_overlap(out[0], x)        # torch's kthvalue_out: values may not alias self
        return _write_outs(_kthvalue_t, out, (values, indices), "kthvalue")
    return _kthvalue_t(values, indices)


# --------------------------------------------------------------------------
# unique, unique_consecutive
# --------------------------------------------------------------------------
def _unique_result(vals, inv, cnt, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return vals
    res = [vals]
    if return_inverse:
        res.append(inv)
    if return_counts:
        res.append(cnt)
    return tuple(res)


def _unique_impl(input, consecutive, return_inverse, return_counts, dim, fname):
    x = _tensor_arg(input, fname)
    for flag, name in ((return_inverse, "return_inverse"), (return_counts, "return_counts")):
        if flag is not False and flag is not True:
            bool_param(flag, fname if consecutive else "_unique2", name)
    if dim is None:
        if x.dtype.is_complex:
            raise _not_impl("unique", x.dtype)
        x1 = _flat(x)
        vals, inv, cnt = _cpu_kernel("unique", x.device, _unique_cpu)(
            x1, consecutive, bool(return_inverse), bool(return_counts))
        if inv is not None:
            inv = inv.view(x.shape)
        return _unique_result(vals, inv, cnt, return_inverse, return_counts)

    dim = _int_arg(dim, "unique_dim" if not consecutive else fname, "dim", 2)
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, x.dim())
    if x.dtype.is_complex:
        raise _not_impl("unique_dim" if not consecutive else "unique_consecutive", x.dtype)
    shape = list(x.shape)
    if x.numel() == 0:
        nzero = sum(1 for s in shape if s == 0)
        if nzero != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                               "cannot be applied ")
        if shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        vals = _empty(shape, x.dtype, x.device)
        inv = _empty((0,), _C.int64, x.device)
        cnt = _empty((0,), _C.int64, x.device)
        return _unique_result(vals, inv, cnt, return_inverse, return_counts)
    moved = x.movedim(d, 0)
    s = shape[d]
    r = x.numel() // s
    mat = moved.contiguous().view(s, r)
    rows, inv, cnt = _cpu_kernel("unique_dim", x.device, _unique_dim_cpu)(
        mat, consecutive, bool(return_inverse), bool(return_counts))
    vals = rows.view([rows.shape[0]] + list(moved.shape[1:])).movedim(0, d)
    return _unique_result(vals, inv, cnt, return_inverse, return_counts)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (or slices along ``dim``) of ``input``, sorted.

    NaNs are all distinct (as PyTorch); -0.0 and 0.0 are one value.  The
    result is sorted also for ``sorted=False`` (as PyTorch on CPU).

    Returns
    -------
    Tensor or tuple
        ``output``, then ``inverse_indices`` (input's shape, or
        ``input.size(dim)``) if ``return_inverse``, then ``counts`` if
        ``return_counts``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.unique(ptcore.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if sorted is not True and sorted is not False:
        bool_param(sorted, "_unique2", "sorted")
    return _unique_impl(input, False, return_inverse, return_counts, dim, "unique")


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.unique_consecutive(ptcore.tensor([1, 1, 2, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique_impl(input, True, return_inverse, return_counts, dim, "unique_consecutive")


# --------------------------------------------------------------------------
# searchsorted, bucketize
# --------------------------------------------------------------------------
# the dtypes of searchsorted/bucketize's fast path (kernels of their own, no limits)
def _search_impl(boundaries, values, out_int32, right, side, out, sorter, fname):
    is_scalar = not isinstance(values, _TensorBase)
    if is_scalar and (isinstance(values, (str, bytes)) or not isinstance(values, numbers.Number)):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor or Number, not "
                        f"{_typename(values)}")
    if not is_scalar and values._requires_grad:
        values = values.detach()
    if sorter is not None:
        sorter = _tensor_arg(sorter, fname, "sorter")
    _check_same_device(fname, boundaries, None if is_scalar else values, sorter)
    vdim = 0 if is_scalar else values.dim()
    vshape = () if is_scalar else tuple(values.shape)
    vnumel = 1 if is_scalar else values.numel()
    if sorter is not None:
        if tuple(sorter.shape) != tuple(boundaries.shape):
            raise RuntimeError(
                f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter.dtype is not _C.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {_sname(sorter.dtype)}")
    if not (vdim > 0 or (vnumel == 1 and boundaries.dim() == 1)):
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({boundaries.dim()}) and input "
            f"value's dim({vdim}) numel({vnumel})")
    if boundaries.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if boundaries.dim() != 1 and (boundaries.dim() != vdim or
                                  tuple(boundaries.shape[:-1]) != vshape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(boundaries.shape)} and input value tensor {list(vshape)}")
    out_dt = _C.int32 if out_int32 else _C.int64
    if out is not None:
        _check_out_tensor(out, fname)
        if out.dtype is not out_dt:
            raise RuntimeError(
                "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) "
                "or Long(int64) depending on whether out_int32 flag is True, but we got output "
                f"tensor's dtype {_sname(out.dtype)} and out_int32 flag is "
                f"{'True' if out_int32 else 'False'}")
    if out_int32 and boundaries.shape[-1] >= 2147483647:
        raise RuntimeError(
            "torch.searchsorted(): the size of boundaries' last dimension should be less than "
            f"2147483647, but we got {boundaries.shape[-1]}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               f"got side of {side} while right was True")
    is_right = (side == "right") if side is not None else bool(right)

    common = _result_type(boundaries, values)
    if (common is _C.bool_ or common.is_complex) and 0 not in tuple(vshape):
        raise _not_impl("searchsorted_out_cpu", common)
    bd = boundaries if boundaries.dtype is common else boundaries.to(common)
    if is_scalar:
        vals = _scalar_tensor(values, boundaries.device).to(common)
    else:
        vals = values if values.dtype is common else values.to(common)
    result = _empty(vshape, out_dt, boundaries.device)
    if result.numel() > 0:
        v1 = vals.view(1) if vdim == 0 else vals
        r1 = result.view(1) if vdim == 0 else result
        _cpu_kernel("searchsorted", bd.device, _searchsorted_cpu)(bd, v1, r1, is_right, sorter)
    elif sorter is not None and sorter.numel() > 0:
        # PyTorch validates the sorter even when there is nothing to search
        lo, hi = _cpu_kernel("sorting_minmax", sorter.device, _minmax_cpu)(_flat(sorter))
        if lo < 0 or hi >= sorter.shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if out is not None:
        result = _write_out(out, result, fname)
    return result


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None,
                 sorter=None):
    """Indices where the elements of ``input`` would be inserted into the
    innermost dimension of ``sorted_sequence`` to keep it sorted.

    ``sorted_sequence`` is 1-D or has ``input``'s leading dimensions;
    ``input`` may be a Python number (then ``sorted_sequence`` must be 1-D).
    Operands are promoted to their common dtype.  ``right``/``side='right'``
    return the last suitable index; ``sorter`` (int64) sorts an unsorted
    ``sorted_sequence``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.searchsorted(ptcore.tensor([1, 3, 5, 7]), ptcore.tensor([3, 6]))
    tensor([1, 3])
    """
    if out is None and sorter is None and side is None:
        # a 1-D CPU sequence, CPU values of one ordinary dtype, bool flags: no
        # check below can fail, the kernel at once
        r = _K.searchsorted_fast(sorted_sequence, input, out_int32, right)
        if r is not None:
            return r
    bd = _tensor_arg(sorted_sequence, "searchsorted", "sorted_sequence")
    _search_flags("searchsorted", out_int32, right)
    return _search_impl(bd, input, out_int32, right, side, out, sorter, "searchsorted")


def _search_flags(fname, out_int32, right):
    for flag, name in ((out_int32, "out_int32"), (right, "right")):
        if flag is not False and flag is not True:
            bool_param(flag, fname, name)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of every element of ``input`` given 1-D sorted ``boundaries``
    (``searchsorted(boundaries, input)``).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.bucketize(ptcore.tensor([1, 5, 9]), ptcore.tensor([1, 5, 7]), right=True)
    tensor([1, 2, 3])
    """
    if out is None:
        r = _K.searchsorted_fast(boundaries, input, out_int32, right)
        if r is not None:
            return r
    bd = _tensor_arg(boundaries, "bucketize", "boundaries", 2)
    _search_flags("bucketize", out_int32, right)
    if bd.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({bd.dim()})")
    return _search_impl(bd, input, out_int32, right, None, out, None, "bucketize")


# --------------------------------------------------------------------------
# histc, histogram
# --------------------------------------------------------------------------
def _real_arg(v, fname, argname):
    if isinstance(v, _TensorBase):
        v = v.item()
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        v = v.real
    if not isinstance(v, numbers.Real):
        raise TypeError(f"{fname}(): argument '{argname}' must be Number, not {_typename(v)}")
    return float(v)


def _fmt(v):
    return f"{v:g}" if v == v else "nan"


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``input`` with ``bins`` equal-width bins over [min, max].

    ``min == max`` uses the data's range (widened by 1 on each side when
    all elements are equal).  Elements outside the range and NaNs are
    ignored.  Floating inputs only; the result has the input's dtype.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.histc(ptcore.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    x = _tensor_arg(input, "histc")
    bins = _int_arg(bins, "histc", "bins")
    lo = _real_arg(min, "histc", "min")
    hi = _real_arg(max, "histc", "max")
    if out is not None:                          # (torch checks out= first)
        _check_out_tensor(out, "histc")
        if out.dtype is not x.dtype:
            raise RuntimeError(
                "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                f"input {_cpp_name(x.dtype)} and hist {_cpp_name(out.dtype)}")
    if x.dtype is _C.bool_:
        raise _not_impl("linspace_cpu", x.dtype)
    if bins <= 0:        # (before an integer input is refused, as torch)
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if lo == hi and x.numel() > 0:
        if not x.dtype.is_floating_point:
            raise _not_impl("aminmax_cpu" if x.dtype.is_complex else "histogram_cpu", x.dtype)
        lo, hi = _cpu_kernel("sorting_minmax", x.device, _minmax_cpu)(_flat(x))
    if lo == hi:
        lo -= 1
        hi += 1
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        import numpy as np
        info = np.iinfo(x.dtype._np)         # torch reads min/max as the input's dtype
        for v in (lo, hi):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {_cpp_name(x.dtype)} "
                                   "without overflow")
    if not all(v == v and abs(v) != float("inf") for v in (lo, hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not x.dtype.is_floating_point:
        raise _not_impl("histogram_cpu", x.dtype)
    hist = _empty((bins,), x.dtype, x.device)
    _cpu_kernel("histc", x.device, _histc_cpu)(_flat(x), hist, lo, hi)
    if out is not None:
        hist = _write_out(out, hist, "histc")
    return hist


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """Histogram of ``input`` (``torch.histogram``): ``bins`` equal-width
    bins (100 by default) over ``range`` (default: the data's range, [0, 1]
    for an empty input), or explicit increasing bin edges (a 1-D tensor).
    Returns ``(hist, bin_edges)``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.histogram(ptcore.tensor([1., 2., 1.]), bins=4, range=(0., 3.)).hist
    tensor([0., 2., 1., 0.])
    """
    x = _tensor_arg(input, "histogram")
    bool_param(density, "histogram", "density")
    if not x.dtype.is_floating_point:
        raise _not_impl("histogram_cpu", x.dtype)
    if weight is not None:
        weight = _tensor_arg(weight, "histogram", "weight")
        if weight.dtype is not x.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype")
        if weight.numel() != x.numel():          # torch flattens both
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as "
                f"the input tensor excluding its innermost dimension, but got input with shape "
                f"{list(x.shape) + [1]} and weight with shape {list(weight.shape)}")
    if isinstance(bins, _TensorBase):
        if range is not None:                 # torch's histogram.bin_ct takes range, .bins_tensor not
            raise TypeError("histogram() received an invalid combination of arguments - got "
                            "(Tensor, Tensor, range=tuple), but range goes with an int bins")
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, but "
                               f"got {bins.dim()} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not x.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               "same dtype")
        if bins.numel() < 1:
            raise RuntimeError("torch.histogramdd(): bins tensor should have at least 1 element, "
                               "but got 0 elements for dimension 0")
        if bins.numel() == 1:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        b = bins.detach()
        if b.numel() > 1 and bool((b[:-1] > b[1:]).any()):
            raise RuntimeError("torch.histogramdd(): bins tensor should be monotonically "
                               "increasing for dimension 0")
        edges_t = bins.detach().clone()
    else:
        nb = _int_arg(bins, "histogram", "bins", 2)
        if x.dtype in (_C.float16, _C.bfloat16):      # torch: only the edges' variant has these
            raise _not_impl("histogramdd", x.dtype)
        if nb <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {nb} for dimension 0")
        if range is not None:
            lo, hi = (float(v) for v in range)
        elif x.numel():
            lo, hi = (float(v) for v in _cpu_kernel("sorting_minmax", x.device, _minmax_cpu)(
                _flat(x.detach())))
        else:
            lo, hi = 0.0, 1.0              # torch's range for an empty input
        edges_t = _even_edges(lo, hi, nb, x)
    hist = _cpu_kernel("histogram", x.device, _histogram_cpu)(x, edges_t, weight, bool(density))
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("histogram(): argument 'out' must be tuple of 2 Tensors")
        return as_out(_histogram_t(_write_out(out[0], hist, "histogram"),
                                   _write_out(out[1], edges_t, "histogram")))
    return _histogram_t(hist, edges_t)


def _even_edges(lo, hi, nbins, x):
    """``nbins + 1`` equal-width bin edges over ``[lo, hi]`` (widened by 0.5 on each side
    when ``lo == hi``) in ``x``'s dtype and device: the edges of ``histogram`` and of each
    dimension of ``histogramdd``."""
    if not lo <= hi:
        raise RuntimeError(f"torch.histogramdd(): expected the range argument to be a "
                           f"sequence of min, max pairs with min <= max, but got {lo} > {hi}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd(): range [{lo}, {hi}] is not finite")
    if lo == hi:
        lo -= 0.5
        hi += 0.5
    return linspace(lo, hi, nbins + 1, dtype=x.dtype, device=x.device)


def _bin_positions(e64, v):
    """The bin of each value of ``v`` (all within ``[e64[0], e64[-1]]``) for the
    increasing edges ``e64``: ``searchsorted(side='right') - 1``, the last bin closed.
    Evenly spaced edges (``bins=int``) take torch's way: the bin computed from the
    value, then checked against its edges and moved by one where rounding put it
    next door; any value still outside its bin is searched."""
    import numpy as np
    nbins = e64.size - 1
    lo, hi = e64[0], e64[-1]
    width = (hi - lo) / nbins if nbins else 0.0
    if nbins < 2 or not width > 0 or v.size < 64 or \
            not np.allclose(np.diff(e64), width, rtol=1e-3, atol=0.0):
        pos = np.searchsorted(e64, v, side="right") - 1
        pos[pos == nbins] -= 1
        return pos
    pos = ((v - lo) * (nbins / (hi - lo))).astype(np.int64)
    np.clip(pos, 0, nbins - 1, out=pos)
    pos -= v < e64[pos]
    pos += (v >= e64[pos + 1]) & (pos < nbins - 1)
    bad = (v < e64[pos]) | ((v >= e64[pos + 1]) & (pos < nbins - 1))
    if bad.any():
        fix = np.searchsorted(e64, v[bad], side="right") - 1
        fix[fix == nbins] -= 1
        pos[bad] = fix
    return pos


def _histogram_cpu(x, edges_t, weight, density):
    """Counts (or weight sums) of ``x`` in the bins of the increasing
    ``edges_t`` (the last bin closed), in float64, then in ``x``'s dtype."""
    import numpy as np
    flat = _host_array(x).reshape(-1).astype(np.float64)
    e64 = _host_array(edges_t).astype(np.float64)
    ok = (flat >= e64[0]) & (flat <= e64[-1])
    pos = _bin_positions(e64, flat[ok])
    nbins = e64.size - 1
    if weight is None:
        counts = np.bincount(pos, minlength=nbins).astype(np.float64)
    else:
        w = _host_array(weight).reshape(-1).astype(np.float64)[ok]
        counts = np.bincount(pos, weights=w, minlength=nbins)
    if density:
        total = counts.sum()
        with np.errstate(invalid="ignore", divide="ignore"):    # 0/0 is torch's silent NaN
            counts = counts / total / np.diff(e64)
    return _C.from_numpy(np.ascontiguousarray(counts)).to(x.dtype)


def _host_array(t):
    """A NumPy copy of a (detached, CPU) tensor's values (float64 for the
    16-bit float types)."""
    import numpy as np
    t = t.detach() if t._requires_grad else t
    if t.dtype in (_C.float16, _C.bfloat16):
        t = t.to(_C.float64)
    return np.array(t.contiguous().numpy(), copy=True)


# --------------------------------------------------------------------------
# bincount, isin
# --------------------------------------------------------------------------
_BINCOUNT_INPUT = ("uint8", "int8", "int16", "int32", "int64")


def bincount(input, weights=None, minlength=0):
    """Number of occurrences of every value in a non-negative 1-D integer
    tensor (or the sum of ``weights`` per value).

    The result is int64 without weights, float32 for float32 weights and
    float64 for any other weights (as PyTorch); its length is
    ``max(input.max() + 1, minlength)``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.bincount(ptcore.tensor([0, 2, 2]))
    tensor([1, 0, 2])
    """
    x = _tensor_arg(input, "bincount")
    minlength = strict_symint_param(minlength, "bincount", "minlength")
    if weights is not None:
        weights = _tensor_arg(weights, "bincount", "weights", 2)
    _check_same_device("bincount", x, weights)
    if x.dtype._name not in _BINCOUNT_INPUT:
        raise _not_impl("bincount_cpu", x.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.dim() == 1 and x.numel() == 0:
        return _C.zeros(minlength, dtype=_C.int64, device=x.device)
    if x.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    lo, hi = _cpu_kernel("sorting_minmax", x.device, _minmax_cpu)(x)
    if lo < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = hi + 1 if hi + 1 > minlength else minlength
    if weights is None:
        out = _empty((n,), _C.int64, x.device)
    else:
        if weights.dtype is not _C.float32 and weights.dtype is not _C.float64:
            if weights.dtype.is_complex:
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=2)
            weights = weights.to(_C.float64)
        out = _empty((n,), weights.dtype, x.device)
    _cpu_kernel("bincount", x.device, _bincount_cpu)(x, weights, out)
    return out


def _isin_dtype(v):
    return v.dtype if isinstance(v, _TensorBase) else _scalar_tensor(v, "cpu").dtype


def isin(elements=None, test_elements=None, *, assume_unique=False, invert=False, out=None,
         element=None, test_element=None):
    """Whether every element of ``elements`` is in ``test_elements``
    (bool, ``elements``' shape).  Either argument may be a Python number.

    Operands are compared in their promoted dtype; NaN is in nothing and
    -0.0 equals 0.0.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.isin(ptcore.tensor([[1, 2], [3, 4]]), ptcore.tensor([2, 3]))
    tensor([[False,  True],
            [ True, False]])

    ``element=`` (a number) and ``test_element=`` name the number argument as
    torch's Scalar overloads do.
    """
    if element is not None or test_element is not None:
        if (element is not None and elements is not None) or (
                test_element is not None and test_elements is not None):
            raise TypeError("isin() got two values for one of its arguments")
        elements = elements if element is None else element
        test_elements = test_elements if test_element is None else test_element
    if elements is None or test_elements is None:
        raise TypeError('isin() missing 1 required positional arguments: "elements" or '
                        '"test_elements"')
    e_t = isinstance(elements, _TensorBase)
    t_t = isinstance(test_elements, _TensorBase)
    if not e_t and not t_t:
        raise TypeError(
            f"isin() received an invalid combination of arguments - got ({_typename(elements)}, "
            f"{_typename(test_elements)}), but expected one of: (Tensor elements, Tensor "
            "test_elements), (Number element, Tensor test_elements), (Tensor elements, Number "
            "test_element)")
    for v in (elements, test_elements):
        if not isinstance(v, (_TensorBase, numbers.Number)) or isinstance(v, (str, bytes)):
            raise TypeError(f"isin(): expected a Tensor or a Number, got {_typename(v)}")
    device = elements.device if e_t else test_elements.device
    _check_same_device("isin", elements if e_t else None, test_elements if t_t else None)
    for v in (elements, test_elements):
        dt = _isin_dtype(v)
        if dt is _C.bool_ or dt.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_sname(dt)}")
    if e_t and not t_t and elements.dtype in _LIMITED:
        # torch's isin.Tensor_Scalar is elements == test_element (or !=), which the limited
        # unsigned types have (its isin kernel does not)
        result = _op_entry("ne" if invert else "eq")(elements.detach(), test_elements)
        return result if out is None else _write_out(out, result, "isin")
    common = _result_type(elements, test_elements)

    def as_tensor(v):
        if isinstance(v, _TensorBase):
            v = v.detach() if v._requires_grad else v
        else:
            v = _scalar_tensor(v, device)
        return v if v.dtype is common else v.to(common)

    el = as_tensor(elements)
    te = as_tensor(test_elements)
    result = _empty(el.shape, _C.bool_, device)
    if result.numel() > 0:
        _cpu_kernel("isin", device, _isin_cpu)(_flat(el), _flat(te), result.view(-1), bool(invert))
    if out is not None:
        result = _write_out(out, result, "isin")
    return result


# --------------------------------------------------------------------------
# Tensor methods
# --------------------------------------------------------------------------
# The functions themselves: ptcore rebinds this module's names to their
# dispatch entries, and a method's entry has run the layers (and autograd)
# already, so its body calls the function, not the function's entry again.
_sort, _argsort, _msort, _topk, _kthvalue = sort, argsort, msort, topk, kthvalue
_unique, _unique_consecutive, _bincount, _histc, _histogram = (
    unique, unique_consecutive, bincount, histc, histogram)


def _method(name):
    """Mark the decorated function as ``Tensor.<name>`` (torch's method signature)."""
    def mark(f):
        f.__name__ = name
        f.__qualname__ = f"Tensor.{name}"
        f.__doc__ = f"See :func:`ptcore.{name}`."
        return _method_form(name, f)
    return mark


@_method("sort")
def _m_sort(self, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET):
    return _sort(self, *args, stable=stable, dim=dim, descending=descending)


@_method("argsort")
def _m_argsort(self, *args, stable=_UNSET, dim=_UNSET, descending=_UNSET):
    return _argsort(self, *args, stable=stable, dim=dim, descending=descending)


@_method("msort")
def _m_msort(self):
    return _msort(self)


@_method("topk")
def _m_topk(self, k, dim=-1, largest=True, sorted=True):
    return _topk(self, k, dim, largest, sorted)


@_method("kthvalue")
def _m_kthvalue(self, k, dim=-1, keepdim=False):
    return _kthvalue(self, k, dim, keepdim)


@_method("unique")
def _m_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return _unique(self, sorted, return_inverse, return_counts, dim)


@_method("unique_consecutive")
def _m_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return _unique_consecutive(self, return_inverse, return_counts, dim)


@_method("bincount")
def _m_bincount(self, weights=None, minlength=0):
    return _bincount(self, weights, minlength)


@_method("histc")
def _m_histc(self, bins=100, min=0, max=0):
    return _histc(self, bins, min, max)


@_method("histogram")
def _m_histogram(self, bins=100, *, range=None, weight=None, density=False):
    return _histogram(self, bins, range=range, weight=weight, density=density)


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "sorting")
del _bind_module
