"""Reductions, scans, softmax and order statistics with PyTorch semantics.

``sum``/``mean``/``prod``/``nansum``/``nanmean``, ``max``/``min`` (value,
``(values, indices)`` along a dim, or the binary form), ``amax``/``amin``/
``aminmax``, ``argmax``/``argmin``, ``var``/``std`` (+ ``_mean``), ``norm``
and ``vector_norm``, ``logsumexp``, ``all``/``any``/``count_nonzero``, the
scans ``cumsum``/``cumprod``/``cummax``/``cummin``/``logcumsumexp``,
``softmax``/``log_softmax``, ``median``/``nanmedian``/``mode`` and
``quantile``/``nanquantile``.

This module does all argument checking, dtype rules and output allocation;
the CPU kernels live in ``ptcore._ops.kernels._reduce`` (mode's, a sort, in ``_sort``) and
are reached through ``_CPU_KERNELS`` (one per kernel name; tensors on another device reach the
kernels the operator table holds, through the dispatch point's device layer).

Result dtypes follow PyTorch: integer/bool sums and products give int64,
``mean`` of an integer tensor raises, ``var``/``std``/norms of complex
tensors are real, float16/bfloat16 accumulate in float32 (var/std and norms
in float64), float32 cumulative sums/products accumulate in float64.
"""
import builtins as _b
import math as _math
import numbers as _numbers
import operator as _operator

from ptcore._dispatch.device import in_host_memory as _in_host_memory
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import _refuse_complex32, _cpp_name, _FLOAT8, _LIMITED, can_cast as _can_cast
from ptcore._scalar_args import bool_param, dtype_param, int_param, number_arg, symint_param, \
    plain_number
from ptcore._dispatch.device import (check_same_device as _check_same_device,
                                     cpu_kernel as _cpu_kernel, in_host_memory as _in_host_memory,
                                     loop_for as _loop_for)
from ptcore._ops.kernels import _reduce as _K
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._ops.kernels import _sort as _S
from ptcore._ops._out import resize_out, copy_out_same_dtype, check_written, \
    assert_no_partial_overlap
from ptcore._dispatch.table import entries as _entries
from ptcore._dtype_utils import promote_types
from ptcore._warn import warn_at_caller
from ptcore._ops import pointwise as E
from ptcore._ops import pointwise as _elementwise
from ptcore._ops.creation import arange as _arange
from ptcore._ops.creation import tensor as _tensor_fn
from ptcore._ops.shape import cat as _cat
from ptcore._dispatch.generate import method_form as _method_form

_linalg = _entries("linalg")        # ptcore.linalg's ops (matrix norms), through the operator table

__all__ = []


def _export(fn, name=None):
    name = name or fn.__name__
    __all__.append(name)
    globals()[name] = fn
    return fn


# --------------------------------------------------------------------------
# named tuples (torch.return_types)
# --------------------------------------------------------------------------
from ptcore._return_types import named as _named, as_out  # noqa: E402


_max_t = _named("max")
_min_t = _named("min")
_aminmax_t = _named("aminmax", ("min", "max"))
_median_t = _named("median")
_nanmedian_t = _named("nanmedian")
_mode_t = _named("mode")
_cummax_t = _named("cummax")
_cummin_t = _named("cummin")


# --------------------------------------------------------------------------
# CPU kernels, registered once per op name
# --------------------------------------------------------------------------
def _reduce_kernel(code_of, complex32=False, limited=False):
    """kernel(x, dims, acc, out0, out1, keepdim, correction=, p=, take_sqrt=):
    reduce x over the sorted tuple ``dims`` computing in dtype ``acc`` into
    the preallocated outputs (result shape with or without keepdim; either
    may be None).  Its dtype support, as PyTorch's CPU kernel's (read by
    :func:`_reduce`): ``complex32``, it takes ComplexHalf (run here exactly on
    the complex64 values); ``limited``, it reads the limited unsigned types
    (as int64, or the floating accumulation type)."""
    def kernel(x, dims, acc, out0, out1, keepdim, correction=0.0, p=2.0, take_sqrt=False):
        _K.reduce(x, dims, code_of(p), acc.num, out0, out1, correction, p, take_sqrt, keepdim)
    kernel.complex32, kernel.limited = complex32, limited
    return kernel


def _norm_code(p):
    if p == _math.inf:
        return _K.OPS["norminf"]
    if p == -_math.inf:
        return _K.OPS["normninf"]
    if p == 0:
        return _K.OPS["norm0"]
    if p == 1:
        return _K.OPS["norm1"]
    if p == 2:
        return _K.OPS["norm2"]
    return _K.OPS["normp"]


# kernel name -> CPU kernel
_CPU_KERNELS = {}


def _reduction(name, code, complex32=False, limited=False):
    """Register the CPU reduction kernel ``name`` running the kernel op
    ``code`` (or ``code(p)``), with its dtype support (:func:`_reduce_kernel`)."""
    code_of = code if callable(code) else (lambda p, _c=_K.OPS[code]: _c)
    _CPU_KERNELS[name] = _reduce_kernel(code_of, complex32, limited)


_reduction("sum", "sum", limited=True)
_reduction("nansum", "nansum", limited=True)
_reduction("mean", "mean")
_reduction("nanmean", "nanmean")
_reduction("prod", "prod", limited=True)
_reduction("amax", "max")
_reduction("amin", "min")
_reduction("max.dim", "argmax")
_reduction("min.dim", "argmin")
_reduction("aminmax", "aminmax")
_reduction("all", "all", complex32=True, limited=True)
_reduction("any", "any", complex32=True, limited=True)
_reduction("var", "var", complex32=True)                # (std and var_mean too)
_reduction("logsumexp", "logsumexp", limited=True)
_reduction("count_nonzero", "sum", complex32=True)
_reduction("vector_norm", _norm_code, complex32=True)


def _line_kernel(opname):
    def kernel(x, dim, out0, out1=None):
        if x.dtype in _LIMITED:     # cumsum/cumprod reach here in int64 (below)
            raise NotImplementedError(f"\"{opname}_cpu\" not implemented for '{x.dtype._legacy}'")
        _K.lines(x, dim, opname, out0, out1)
    return kernel


for _name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "softmax", "log_softmax"):
    _CPU_KERNELS[_name] = _line_kernel(_name)


def _select_kernel(kind):
    if kind == "mode":
        def kernel(x2d, vals, idx):
            _refuse_limited_x(x2d, "mode_cpu")
            _S.mode_rows(x2d, vals, idx)
    else:       # rows of float32 / float64 / int64
        def kernel(x2d, vals, idx, _ignore=kind == "nanmedian"):
            _refuse_limited_x(x2d, f"{kind}_cpu")
            # (an all-NaN row's nanmedian index is where torch's std::nth_element leaves it)
            _K.median_rows(x2d, vals, idx, _ignore,
                           _S.nth_element_tie_index(x2d.shape[1]) if _ignore else 0)
    return kernel


def _refuse_limited_x(x, kname):
    if x.dtype in _LIMITED:
        raise NotImplementedError(f"\"{kname}\" not implemented for '{x.dtype._legacy}'")


for _name in ("median", "nanmedian", "mode"):
    _CPU_KERNELS[_name] = _select_kernel(_name)


def _quantile_cpu(x2d, q, out, interp, ignore_nan, single):
    _K.quantile_rows(x2d, q, out, interp, ignore_nan, single)


del _name


# --------------------------------------------------------------------------
# argument helpers
# --------------------------------------------------------------------------


_cpp = _cpp_name   # C++ type names PyTorch prints in out= dtype errors


def _lg(dt):
    return dt._legacy


def _is_int_like(dt):
    return dt._category <= 1


def _tensor_arg(x, fname):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _int_arg(d, fname, argname="dim", *, list_item=False):
    """An ``int`` dim (a 0-d integral tensor is read as torch's parser does); an
    item of an ``int[]`` dim list with ``list_item`` (any one-element integral
    tensor, bool included)."""
    if isinstance(d, _TensorBase):
        return (symint_param if list_item else int_param)(d, fname, argname)
    if isinstance(d, _b.bool) or (not list_item and type(d).__name__ == "ndarray"):
        # torch's int parameter takes a NumPy integer scalar, not a 0-d array
        raise TypeError(f"{fname}(): argument '{argname}' must be int, not {type(d).__name__}")
    try:
        return _operator.index(d)
    except TypeError:
        raise TypeError(f"{fname}(): argument '{argname}' must be int, not "
                        f"{type(d).__name__}") from None


def _wrap(d, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


_ALL_DIMS = [tuple(range(n)) for n in range(65)]


class _Unset:
    """Default of a reduction's ``dim``/``keepdim`` where torch's overloads tell
    "not given" from None: ``prod``/``max``/``min``/``median``/``nanmedian``
    reduce everything only without ``dim`` (``dim=None`` and a ``keepdim``
    without ``dim`` are TypeErrors there).  Falsy, as the False it stands for."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __bool__(self):
        return False

    def __repr__(self):
        return f"<no {self.name}>"


_NODIM = _Unset("dim")
_NOKEEP = _Unset("keepdim")


def _all_or_dim(dim, keepdim, fname):
    """(dim, keepdim) of a reduction whose all-elements overload takes neither:
    None for "reduce everything", a TypeError for an explicit ``dim=None`` or a
    ``keepdim`` given without ``dim`` (as torch's parser)."""
    if dim is _NODIM:
        if keepdim is not _NOKEEP:
            raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                            f"keepdim without dim: the reduction of all elements takes no keepdim")
        return None, False
    if dim is None:
        raise TypeError(f"{fname}(): argument 'dim' must be int, not NoneType")
    return dim, False if keepdim is _NOKEEP else keepdim


def _dim_optional(dim, keepdim, out, fname):
    """(dim, keepdim) of ``sum``/``mean``, whose all-elements overload takes no
    ``keepdim`` (nor, for sum, an ``out=``) but whose ``dim`` overload takes an
    explicit None: ``sum(x, keepdim=True)`` is torch's TypeError,
    ``sum(x, None, True)`` the (1, 1, ...) sum of everything."""
    if dim is _NODIM:
        if keepdim is not _NOKEEP or out is not None:
            given = "keepdim" if keepdim is not _NOKEEP else "out"
            raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                            f"{given} without dim: give dim (None for all dims) with {given}")
        return None, False
    return dim, False if keepdim is _NOKEEP else keepdim


def _dims(dim, ndim, fname, *, empty_is_all=True, int_dim=False):
    """``dim`` (None, int, or a sequence) -> sorted tuple of distinct wrapped
    dims (all dims for None and, by default, for an empty sequence).  A single
    tensor is read as torch reads an ``int[1]`` dim (any one-element integral
    tensor) or, with ``int_dim`` (prod, all, any), an ``int`` dim (0-d only)."""
    if dim is None:
        return _ALL_DIMS[ndim]
    if type(dim) is int:
        n = ndim if ndim > 0 else 1
        if -n <= dim < n:
            return (dim % n,) if ndim else ()
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim)) if empty_is_all else ()
        seen = []
        for d in dim:
            w = _wrap(_int_arg(d, fname, list_item=True), ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.append(w)
        return tuple(sorted(seen)) if ndim else ()
    w = _wrap(_int_arg(dim, fname, list_item=not int_dim), ndim)
    return (w,) if ndim else ()


def _one_dim(dim, ndim, fname):
    """A single int dim, wrapped (0-d tensors accept 0 and -1)."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'dim' must be int, not {type(dim).__name__}")
    return _wrap(_int_arg(dim, fname), ndim)


def _keep_shape(shape, dims):
    return [1 if i in dims else s for i, s in enumerate(shape)]


def _out_shape(shape, dims, keepdim):
    if keepdim:
        return _keep_shape(shape, dims)
    return [s for i, s in enumerate(shape) if i not in dims]


def _alloc_reduced(x, dims, keepdim, dt):
    """A new contiguous ``dt`` tensor of ``x``'s shape reduced over ``dims``, on ``x``'s device."""
    return _empty(_out_shape(x.shape, dims, keepdim), dt, x.device)


def _empty(shape, dt, dev):
    return _C.empty(shape, dtype=dt, device=dev)


def _squeeze_to(t, shape):
    return t if list(t.shape) == list(shape) else t.view(shape)


def _write_out(out, res, fname, *inputs):
    """Copy ``res`` into ``out`` (resized when its shape differs); once
    resized, ``out`` may be one of ``inputs``' own memory but not part of it
    (torch's overlap checks of the kernel writing ``out``)."""
    if not isinstance(out, _TensorBase):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _check_same_device(fname, res, out)
    resize_out(out, res.shape)
    check_written(out, *inputs)
    out.copy_(res)
    return out


def _named_out(cls, out, results, fname, input=None):
    """``results`` written into the tensors of ``out``, as ``cls``'s
    ``<name>_out`` twin (torch's ``max_out`` ...); the values (the first) may
    be ``input``'s own memory but not part of it."""
    inputs = [(input,)] + [()] * (len(results) - 1)
    return as_out(cls(*(_write_out(o, r, fname, *i) for o, r, i in zip(out, results, inputs))))


def _check_out_pair(out, fname):
    """torch's argument parser: the out= of a (values, indices) op is a
    tuple of two tensors."""
    if out is not None and not (isinstance(out, (tuple, list)) and len(out) == 2
                                and _b.all(isinstance(o, _TensorBase) for o in out)):
        raise TypeError(f"{fname}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")


def _check_out_dtype(out, dt, fname):
    if out is not None and isinstance(out, _TensorBase) and out.dtype is not dt:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(dt)}, but got "
                           f"{_cpp(out.dtype)} instead")


def _acc_of(dt):
    """Computation type of sum-like ops for result dtype ``dt``."""
    if _is_int_like(dt):
        return _C.int64
    if dt in (_C.float16, _C.bfloat16):
        return _C.float32
    return dt


def _ext_acc(dt):
    """Computation type of max/min/arg ops (inputs keep their order)."""
    if _is_int_like(dt):
        return _C.int64
    if dt in (_C.float16, _C.bfloat16):
        return _C.float32
    return dt


def _reduce(kname, x, dims, keepdim, acc, dt0, dt1=None, **params):
    """Run reduction kernel ``kname`` of x's device; returns (r0, r1)."""
    dev = x.device
    if x.dtype in _FLOAT8 and kname not in ("all", "any"):
        # PyTorch's float8 types: only all/any reduce them
        raise NotImplementedError(f"\"{kname}_cpu\" not implemented for '{x.dtype._legacy}'")
    if dt0 in _LIMITED or acc in _LIMITED:
        lim = dt0 if dt0 in _LIMITED else acc
        raise NotImplementedError(f"\"{kname}_cpu\" not implemented for '{lim._legacy}'")
    if x.dtype in _LIMITED:
        # PyTorch's limited unsigned types: these reductions read them as
        # int64 (or the floating accumulation type) into an int64/bool/float result
        if not _CPU_KERNELS[kname].limited:
            raise NotImplementedError(f"\"{kname}_cpu\" not implemented for '{x.dtype._legacy}'")
        x = x._to_dtype(acc if acc.is_floating_point else _C.int64)
    if x.dtype is _C.complex32:
        # PyTorch's CPU kernels take ComplexHalf only for these; they run
        # exactly on the complex64 values here
        if not _CPU_KERNELS[kname].complex32:
            raise NotImplementedError(f"\"{kname}_cpu\" not implemented for 'ComplexHalf'")
        x = x.to(_C.complex64)
        if acc is _C.complex32:
            acc = _C.complex64
    # the CPU kernel allocates its outputs in the layout it writes; another
    # device's outputs are plain contiguous tensors of the reduced shape
    alloc = _loop_for("alloc_reduced", dev, _K.alloc_reduced) or _alloc_reduced
    o0 = alloc(x, dims, keepdim, dt0) if dt0 is not None else None
    o1 = alloc(x, dims, keepdim, dt1) if dt1 is not None else None
    _cpu_kernel(kname, dev, _CPU_KERNELS[kname])(x, dims, acc, o0, o1, keepdim, **params)
    return o0, o1


# the common case (a CPU tensor of an ordinary dtype, all dims or one int dim,
# no dtype=/out=) is checked, allocated and reduced by one kernel call:
# _K.reduce_fast(x, dim, keepdim, op, kind) -> the result or None
_SUM, _MEAN, _MAX, _MIN = _K.OPS["sum"], _K.OPS["mean"], _K.OPS["max"], _K.OPS["min"]
_FAST_SUM, _FAST_MEAN, _FAST_EXT = 0, 1, 2
_NORM2 = _K.OPS["norm2"]
_reduce_fast = _K.reduce_fast


def _np_aliases(fn):
    """Accept NumPy's ``axis``/``keepdims`` spellings, as PyTorch does."""
    def wrapper(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                if "dim" in kwargs:
                    raise TypeError(f"{fn.__name__}() got both 'dim' and its alias 'axis'")
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


# --------------------------------------------------------------------------
# sum, nansum, mean, nanmean, prod
# --------------------------------------------------------------------------
def _cast_for_bool(x, rdt):
    """A bool result dtype casts the input to bool first (as PyTorch does:
    a bool sum is a logical or, a bool product a logical and)."""
    if rdt is _C.bool_ and x.dtype is not _C.bool_:
        return x._to_dtype(_C.bool_)
    return x


def _cast_to_result(x, rdt):
    """The input of a sum/prod whose result dtype ``rdt`` is a floating or complex dtype other
    than its own, cast to ``rdt`` first, as torch's make_reduction_from_out_ty (so a float64 sum
    into bfloat16 adds the bfloat16-rounded elements); a float16/bfloat16 input into float32 is
    upcast inside the kernel instead, as there."""
    dt = x.dtype
    if dt is rdt or not (rdt.is_floating_point or rdt.is_complex):
        return x
    if rdt is _C.float32 and (dt is _C.float16 or dt is _C.bfloat16):
        return x
    return x._to_dtype(rdt)


def _sum_like_dtype(x, dtype, out):
    if dtype is not None:
        dt = _C._as_dtype(dtype_param(dtype, "sum"))
        _check_out_dtype(out, dt, "sum")
        return dt
    if out is not None and isinstance(out, _TensorBase):
        return out.dtype
    return _C.int64 if _is_int_like(x.dtype) else x.dtype


@_np_aliases
def sum(input, dim=_NODIM, keepdim=_NOKEEP, *, dtype=None, out=None):
    """Sum of the elements over ``dim`` (all dims when None).

    Parameters
    ----------
    input : Tensor
    dim : int or tuple of ints, optional
    keepdim : bool
        Keep the reduced dims with size 1.
    dtype : ptcore.dtype, optional
        The input is cast to ``dtype`` before summing; also the result dtype.
    out : Tensor, optional

    Returns
    -------
    Tensor
        int64 for integer/bool inputs (without ``dtype``), else the input dtype.

    Examples
    --------
    >>> import ptcore
    >>> x = ptcore.arange(6).view(2, 3)
    >>> x.sum(dim=1).tolist()
    [3, 12]
    """
    dim, keepdim = _dim_optional(dim, keepdim, out, "sum")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "sum", "keepdim")
    if dtype is None and out is None:
        r = _reduce_fast(input, dim, keepdim, _SUM, _FAST_SUM)
        if r is not None:
            return r
    x = _tensor_arg(input, "sum")
    dims = _dims(dim, x.ndim, "sum")
    rdt = _sum_like_dtype(x, dtype, out)
    x = _cast_to_result(_cast_for_bool(x, rdt), rdt)
    r, _ = _reduce("sum", x, dims, keepdim, _acc_of(rdt), rdt)
    return r if out is None else _write_out(out, r, "sum")


@_np_aliases
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "nansum", "keepdim")
    x = _tensor_arg(input, "nansum")
    dims = _dims(dim, x.ndim, "nansum")
    if x.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    rdt = _sum_like_dtype(x, dtype, out)
    if rdt.is_complex and x.numel() and not _is_int_like(x.dtype):
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_lg(rdt)}\'')
    if dtype is None and x.dtype.is_floating_point and not rdt.is_floating_point and x.numel():
        # an integer out=: torch's NaN-skipping loop has no integer version
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_lg(rdt)}\'')
    x = _cast_for_bool(x, rdt)
    acc = _acc_of(rdt)
    kname = "nansum" if acc.is_floating_point else "sum"
    r, _ = _reduce(kname, x, dims, keepdim, acc, rdt)
    return r if out is None else _write_out(out, r, "nansum")


def _mean_dtype(x, dtype, out, fname):
    if fname == "nanmean" and not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_lg(x.dtype)}")
    if dtype is not None:
        dt = _C._as_dtype(dtype_param(dtype, fname))
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(f"{fname}(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {_lg(dt)}")
        _check_out_dtype(out, dt, fname)
        return dt
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex):
        if fname == "nanmean":
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                               f"but got {_lg(dt)}")
        raise RuntimeError(f"{fname}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_lg(dt)}")
    if out is not None and isinstance(out, _TensorBase) and out.dtype is not dt:
        if not (out.dtype.is_floating_point or out.dtype.is_complex) or (
                dt.is_complex and not out.dtype.is_complex):
            raise RuntimeError(f"result type {_lg(dt)} can't be cast to the desired output type "
                               f"{_lg(out.dtype)}")
        if out.dtype.is_complex or not dt.is_complex:
            return out.dtype         # PyTorch computes in the out= dtype
    return dt


@_np_aliases
def mean(input, dim=_NODIM, keepdim=_NOKEEP, *, dtype=None, out=None):
    """Arithmetic mean over ``dim``; floating point and complex inputs only.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([[1., 2.], [3., 5.]]).mean(0).tolist()
    [2.0, 3.5]
    """
    all_overload = dim is _NODIM        # torch's mean(Tensor, *, dtype, out) = mean.dtype_out
    dim, keepdim = _dim_optional(dim, keepdim, None, "mean")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "mean", "keepdim")
    if dtype is None and out is None:
        r = _reduce_fast(input, dim, keepdim, _MEAN, _FAST_MEAN)
        if r is not None:
            return r
    x = _tensor_arg(input, "mean")
    if dtype is None and isinstance(out, _TensorBase) and x.dtype.is_complex \
            and out.dtype.is_floating_point and all_overload:
        raise RuntimeError(f"mean.dtype_out(): input types can't be cast to the desired output "
                           f"type {_lg(out.dtype)}")
    if dtype is None and isinstance(out, _TensorBase) and x.dtype.is_complex \
            and out.dtype.is_floating_point:
        # torch sums into the real out=: the imaginary parts are dropped first
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=2)
        x = E.real(x)
    rdt = _mean_dtype(x, dtype, out, "mean")
    dims = _dims(dim, x.ndim, "mean")
    r, _ = _reduce("mean", x, dims, keepdim, _acc_of(rdt), rdt)
    return r if out is None else _write_out(out, r, "mean")


@_np_aliases
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements (NaN where all are NaN)."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "nanmean", "keepdim")
    x = _tensor_arg(input, "nanmean")
    if dtype is None and isinstance(out, _TensorBase) and x.dtype.is_floating_point and not (
            out.dtype.is_floating_point or out.dtype.is_complex) and x.numel():
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_lg(out.dtype)}\'')
    rdt = _mean_dtype(x, dtype, out, "nanmean")
    dims = _dims(dim, x.ndim, "nanmean")
    acc = _acc_of(rdt)
    if x.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if acc.is_complex and x.numel():
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_lg(rdt)}\'')
    if acc.is_complex:              # empty: PyTorch's nansum (0) / count (0) is nan+nanj
        r = _C.full(_out_shape(x.shape, dims, keepdim), complex(_math.nan, _math.nan), dtype=rdt)
    elif rdt is _C.float16 or rdt is _C.bfloat16:
        # PyTorch: nansum rounded to the 16-bit type, then divided by the count
        s, _ = _reduce("nansum", x, dims, keepdim, acc, rdt)
        cnt, _ = _reduce("sum", x == x, dims, keepdim, _C.int64, _C.int64)
        r = s / cnt
    else:
        r, _ = _reduce("nanmean", x, dims, keepdim, acc, rdt)
    return r if out is None else _write_out(out, r, "nanmean")


@_np_aliases
def prod(input, dim=_NODIM, keepdim=_NOKEEP, *, dtype=None, out=None):
    """Product of the elements (of all, or along the int ``dim``)."""
    dim, keepdim = _all_or_dim(dim, keepdim, "prod")
    if dim is None and out is not None:     # torch's prod(input, *, dtype) has no out=
        raise TypeError("prod() received an invalid combination of arguments - got out without "
                        "dim: the product of all elements takes no out=")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "prod", "keepdim")
    x = _tensor_arg(input, "prod")
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod(): argument 'dim' must be int, not " + type(dim).__name__)
    dims = _dims(dim, x.ndim, "prod", int_dim=True)
    rdt = _sum_like_dtype(x, dtype, out)
    x = _cast_to_result(_cast_for_bool(x, rdt), rdt)
    r, _ = _reduce("prod", x, dims, keepdim, _acc_of(rdt), rdt)
    return r if out is None else _write_out(out, r, "prod")


for _f in (sum, nansum, mean, nanmean, prod):
    _export(_f)


# --------------------------------------------------------------------------
# max / min / amax / amin / aminmax / argmax / argmin
# --------------------------------------------------------------------------
def _no_complex(x, kname):
    if x.dtype.is_complex:
        raise NotImplementedError(f'"{kname}" not implemented for \'{_lg(x.dtype)}\'')


def _check_nonempty(x, dims, fname, full):
    if x.numel() != 0:
        return
    if full:
        raise RuntimeError(f"{fname}(): Expected reduction dim to be specified for input.numel() == 0. "
                           f"Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{fname}(): Expected reduction dim {d} to have non-zero size.")


def _max_min(name, input, dim, keepdim, out, other_kw):
    fname = name
    if other_kw is not None or isinstance(dim, _TensorBase):
        other = other_kw if other_kw is not None else dim
        fn = _elementwise.maximum if name == "max" else _elementwise.minimum
        return fn(input, other) if out is None else fn(input, other, out=out)
    x = _tensor_arg(input, fname)
    if dim is None:
        if out is not None and not isinstance(out, _TensorBase):
            raise TypeError(f"{fname}() received an invalid combination of arguments: out= of the "
                            f"reduction of all elements must be a Tensor")
        if out is not None and not _can_cast(x.dtype, out.dtype):
            raise RuntimeError(f"Expected canCast(self.dtype(), out.dtype()) to be true, but got "
                               f"false ({_lg(x.dtype)} to {_lg(out.dtype)})")
        _check_nonempty(x, (), fname, True)
        _no_complex(x, f"{name}_all")
        dims = tuple(range(x.ndim))
        r, _ = _reduce("amax" if name == "max" else "amin", x, dims, False, _ext_acc(x.dtype), x.dtype)
        return r if out is None else _write_out(out, r, fname)   # (torch's max.unary_out)
    _check_out_pair(out, fname)
    d = _one_dim(dim, x.ndim, fname)
    dims = (d,) if x.ndim else ()
    _check_nonempty(x, dims, fname, False)
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname}(): does not support complex input")
    if out is not None:
        _check_out_dtype(out[0], x.dtype, fname)
        _check_out_dtype(out[1], _C.int64, fname)
        for o in out:                   # (torch's TensorIterator checks, max.dim_max's)
            assert_no_partial_overlap(o, x)
    v, i = _reduce("max.dim" if name == "max" else "min.dim", x, dims, keepdim, _ext_acc(x.dtype),
                   x.dtype, _C.int64)
    cls = _max_t if name == "max" else _min_t
    if out is not None:
        return _named_out(cls, out, (v, i), fname)
    return cls(v, i)


@_np_aliases
def max(input, dim=_NODIM, keepdim=_NOKEEP, *, out=None, other=None):
    """The maximum: of all elements (``max(x)``), ``(values, indices)`` along
    ``dim`` (first index of the maximum; NaN propagates), or the elementwise
    ``maximum(input, other)`` when the second argument is a tensor.

    Examples
    --------
    >>> import ptcore
    >>> v, i = ptcore.tensor([[1., 5., 5.], [7., 0., 2.]]).max(dim=1)
    >>> v.tolist(), i.tolist()
    ([5.0, 7.0], [1, 0])
    """
    if not isinstance(dim, _TensorBase) and other is None:
        dim, keepdim = _all_or_dim(dim, keepdim, "max")
    elif keepdim is _NOKEEP or dim is _NODIM:
        dim, keepdim = None if dim is _NODIM else dim, False
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "max", "keepdim")
    if dim is None and other is None and out is None:
        r = _reduce_fast(input, None, False, _MAX, _FAST_EXT)
        if r is not None:
            return r
    return _max_min("max", input, dim, keepdim, out, other)


@_np_aliases
def min(input, dim=_NODIM, keepdim=_NOKEEP, *, out=None, other=None):
    """The minimum; see :func:`max`."""
    if not isinstance(dim, _TensorBase) and other is None:
        dim, keepdim = _all_or_dim(dim, keepdim, "min")
    elif keepdim is _NOKEEP or dim is _NODIM:
        dim, keepdim = None if dim is _NODIM else dim, False
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "min", "keepdim")
    if dim is None and other is None and out is None:
        r = _reduce_fast(input, None, False, _MIN, _FAST_EXT)
        if r is not None:
            return r
    return _max_min("min", input, dim, keepdim, out, other)


def _amax_amin(name, input, dim, keepdim, out):
    if out is None:
        r = _reduce_fast(input, dim, keepdim, _MAX if name == "amax" else _MIN, _FAST_EXT)
        if r is not None:
            return r
    x = _tensor_arg(input, name)
    full = dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)
    dims = _dims(dim, x.ndim, name)
    if out is not None and isinstance(out, _TensorBase) and out.dtype is not x.dtype:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got {_lg(x.dtype)} "
                           f"for input's dtype and {_lg(out.dtype)} for out's dtype.")
    _check_nonempty(x, dims, name, full)
    if x.numel():                        # an empty result runs no kernel
        _no_complex(x, "max_values_cpu" if name == "amax" else "min_values_cpu")
    r, _ = _reduce(name, x, dims, keepdim, _ext_acc(x.dtype), x.dtype)
    return r if out is None else _write_out(out, r, name)


@_np_aliases
def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims when empty); NaN propagates."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "amax", "keepdim")
    return _amax_amin("amax", input, dim, keepdim, out)


@_np_aliases
def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims when empty); NaN propagates."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "amin", "keepdim")
    return _amax_amin("amin", input, dim, keepdim, out)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over ``dim`` (all elements when None) in one pass."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "aminmax", "keepdim")
    x = _tensor_arg(input, "aminmax")
    _check_out_pair(out, "aminmax")
    if dim is None:
        dims = tuple(range(x.ndim))
        if x.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
    else:
        d = _one_dim(dim, x.ndim, "aminmax")
        dims = (d,) if x.ndim else ()
        if x.numel() == 0 and x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
    _no_complex(x, "aminmax_cpu")
    mn, mx = _reduce("aminmax", x, dims, keepdim, _ext_acc(x.dtype), x.dtype, x.dtype)
    if out is not None:
        _check_out_dtype(out[0], x.dtype, "aminmax")
        _check_out_dtype(out[1], x.dtype, "aminmax")
        return _named_out(_aminmax_t, out, (mn, mx), "aminmax")
    return _aminmax_t(mn, mx)


def _argext(name, input, dim, keepdim, out):
    x = _tensor_arg(input, name)
    if isinstance(dim, (tuple, list)) or isinstance(dim, float):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}")
    if x.dtype is _C.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if x.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if x.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        dims = tuple(range(x.ndim))
    else:
        if isinstance(dim, (tuple, list)) or isinstance(dim, float):
            raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                            f"{type(dim).__name__}")
        d = _one_dim(dim, x.ndim, name)
        dims = (d,) if x.ndim else ()
        _check_nonempty(x, dims, name, False)
    if out is not None:
        _check_out_dtype(out, _C.int64, name)
    _, i = _reduce("max.dim" if name == "argmax" else "min.dim", x, dims, keepdim, _ext_acc(x.dtype),
                   None, _C.int64)
    return i if out is None else _write_out(out, i, name)


@_np_aliases
def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the first maximum (of the flattened input when ``dim`` is None).

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([[1., 9.], [9., 2.]]).argmax().item()
    1
    """
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "argmax", "keepdim")
    return _argext("argmax", input, dim, keepdim, out)


@_np_aliases
def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the first minimum; see :func:`argmax`."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "argmin", "keepdim")
    return _argext("argmin", input, dim, keepdim, out)


for _f in (max, min, amax, amin, aminmax, argmax, argmin):
    _export(_f)


# --------------------------------------------------------------------------
# var / std / var_mean / std_mean
# --------------------------------------------------------------------------
_NOUNBIASED = _Unset("unbiased")


def _var_args(fname, dim, unbiased, correction):
    if unbiased is None:        # (torch's unbiased is a bool: None is no "not given")
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"unbiased=None: 'unbiased' must be a bool (or leave it out)")
    if unbiased is _NOUNBIASED:
        unbiased = None
    if isinstance(dim, _b.bool):                 # var(x, unbiased)
        if unbiased is not None:
            raise TypeError(f"{fname}() received an invalid combination of arguments")
        unbiased, dim = dim, None
    if unbiased is not None and unbiased is not True and unbiased is not False:
        bool_param(unbiased, fname, "unbiased")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fname}() received an invalid combination of arguments: both "
                        f"'unbiased' and 'correction' given")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(correction, _TensorBase):
        correction = correction.item()
    return dim, float(correction)


def _var_impl(fname, input, dim, unbiased, keepdim, correction, out, take_sqrt, with_mean):
    x = _tensor_arg(input, fname)
    dim, corr = _var_args(fname, dim, unbiased, correction)
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(dim, x.ndim, fname)
    n = 1
    for d in dims:
        n *= x.shape[d]
    if n - corr <= 0:
        warn_at_caller(f"{'std' if take_sqrt else 'var'}(): degrees of freedom is <= 0. Correction "
                       f"should be strictly less than the reduction factor (input numel divided by "
                       f"output numel).")
    acc = _C.complex128 if dt.is_complex else _C.float64
    rdt = dt.to_real() if dt.is_complex else dt
    if out is not None and not with_mean and isinstance(out, _TensorBase) and out.dtype is not rdt:
        odt = out.dtype
        if not (odt.is_floating_point or odt.is_complex):
            raise RuntimeError(f"result type {_lg(rdt)} can't be cast to the desired output type "
                               f"{_lg(odt)}")
        if odt.is_complex and not dt.is_complex:
            if sorted(dims) != list(range(x.ndim)):
                raise NotImplementedError(f'"std_cpu" not implemented for \'{_lg(odt)}\'')
            # over all elements torch's std_var_all computes in the input's type and
            # converts into out=
            return _write_out(out, _var_impl(fname, x, dim, _NOUNBIASED, keepdim, corr, None,
                                             take_sqrt, False), fname)
        if odt.is_floating_point:
            rdt = odt                    # PyTorch computes in the out= dtype
        else:
            return _write_out(out, _var_impl(fname, x, dim, _NOUNBIASED, keepdim, corr, None,
                                             take_sqrt, False), fname)
    v, m = _reduce("var", x, dims, keepdim, acc, rdt, dt if with_mean else None,
                   correction=corr, take_sqrt=take_sqrt)
    if dt.is_complex and n - corr <= 0 and x.numel():
        # PyTorch divides the real and the imaginary parts' sums of squares by
        # 0 separately: a part without spread gives 0/0 = NaN, not inf
        vr, _ = _reduce("var", E.real(x), dims, keepdim, _C.float64, rdt, correction=corr)
        vi, _ = _reduce("var", E.imag(x), dims, keepdim, _C.float64, rdt, correction=corr)
        v = E.add(vr, vi)
        if take_sqrt:
            v = E.sqrt(v)
    if with_mean:
        return v, m
    if out is not None:
        _check_out_dtype(out, rdt, fname)
        return _write_out(out, v, fname)
    return v


@_np_aliases
def var(input, dim=None, unbiased=_NOUNBIASED, keepdim=False, *, correction=None,
        out=None):
    """Variance over ``dim`` with ``correction`` (default 1, Bessel's
    correction; the legacy ``unbiased=False`` means 0).  Complex inputs give
    the real variance ``E|x - mean|^2``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([1., 2., 3., 4.]).var().item()
    1.6666666269302368
    """
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "var", "keepdim")
    return _var_impl("var", input, dim, unbiased, keepdim, correction, out, False, False)


@_np_aliases
def std(input, dim=None, unbiased=_NOUNBIASED, keepdim=False, *, correction=None,
        out=None):
    """Standard deviation (square root of :func:`var`)."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "std", "keepdim")
    return _var_impl("std", input, dim, unbiased, keepdim, correction, out, True, False)


@_np_aliases
def var_mean(input, dim=None, unbiased=_NOUNBIASED, keepdim=False, *, correction=None,
             out=None):
    """``(var, mean)`` over ``dim`` in one call."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "var_mean", "keepdim")
    if out is not None:                  # (torch's var_mean has no out= variant)
        raise TypeError("var_mean() received an invalid combination of arguments - got an "
                        "unexpected keyword argument 'out'")
    return _var_impl("var_mean", input, dim, unbiased, keepdim, correction, None, False, True)


@_np_aliases
def std_mean(input, dim=None, unbiased=_NOUNBIASED, keepdim=False, *, correction=None,
             out=None):
    """``(std, mean)`` over ``dim`` in one call."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "std_mean", "keepdim")
    if out is not None:                  # (torch's std_mean has no out= variant)
        raise TypeError("std_mean() received an invalid combination of arguments - got an "
                        "unexpected keyword argument 'out'")
    return _var_impl("std_mean", input, dim, unbiased, keepdim, correction, None, True, True)


_export(var)
_export(std)
_export(var_mean)
_export(std_mean)


# --------------------------------------------------------------------------
# norms, logsumexp
# --------------------------------------------------------------------------
def _fmt_ord(o):
    if isinstance(o, float) and o.is_integer():
        return str(int(o))
    if isinstance(o, float) and _math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return str(o)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """``torch.linalg.vector_norm``: ``sum(|x|**ord)**(1/ord)`` over ``dim``
    (all dims when None); ``ord`` inf/-inf give max/min ``|x|``, 0 the count of
    non-zeros.  Accumulates in float64; the result is real.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.vector_norm(ptcore.tensor([3., 4.])).item()
    5.0
    """
    if dtype is None and out is None and (type(ord) is float or (
            type(ord) is int and -(1 << 53) < ord < 1 << 53)) \
            and (keepdim is False or keepdim is True) and isinstance(x, _TensorBase) \
            and (x.dtype is _C.float32 or x.dtype is _C.float64) and x.numel():
        # the common call (a real float tensor, a plain number order, no dtype=/out=):
        # none of the checks below can fail but _dims' (and for a 0-d x, the order's)
        if ord == 2:
            # the 2-norm over all dims or one int dim of a CPU tensor: checked,
            # allocated and reduced by one kernel call
            r = _reduce_fast(x, dim, keepdim, _NORM2, _FAST_SUM)
            if r is not None:
                return r
        return _reduce("vector_norm", x, _dims(dim, x.ndim, "linalg.vector_norm"), keepdim,
                       x.dtype, x.dtype, p=float(ord))[0]
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "linalg_vector_norm", "keepdim")
    fn = "linalg.vector_norm"
    if not isinstance(x, _TensorBase):
        raise TypeError(f"linalg_vector_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    ord = plain_number(number_arg(ord), "linalg_vector_norm", "ord", 2)
    if isinstance(ord, complex):
        raise RuntimeError(f"{fn}: Expected a non-complex scalar as the order of norm.")
    if isinstance(ord, str) or not isinstance(ord, _numbers.Real):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {_lg(dt)}")
    cdt = dt
    if dtype is not None:
        cdt = _C._as_dtype(dtype_param(dtype, fn))
        if not (cdt.is_floating_point or cdt.is_complex):
            raise RuntimeError(f"{fn}: dtype should be floating point or complex, but got {_lg(cdt)}")
        if cdt.is_complex != dt.is_complex:
            if dt.is_complex:
                raise RuntimeError(f"{fn}: dtype should be complex for complex inputs, but got "
                                   f"{_lg(cdt)}")
            raise RuntimeError(f"{fn}: dtype should be real for real inputs, but got {_lg(cdt)}")
    rdt = cdt.to_real() if cdt.is_complex else cdt
    dims = _dims(dim, x.ndim, fn)
    o = float(ord)
    if x.numel() == 0 and (o < 0 or _math.isinf(o)):
        if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
            raise RuntimeError(f"{fn} cannot compute the {_fmt_ord(ord)} norm on an empty tensor "
                               f"because the operation does not have an identity")
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(f"{fn} cannot compute the {_fmt_ord(ord)} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not "
                                   f"have an identity")
    if cdt is not dt:
        x = x._to_dtype(cdt)
    if out is not None:
        _check_out_dtype(out, rdt, "linalg_vector_norm")
    acc = {_C.float16: _C.float32, _C.bfloat16: _C.float32}.get(cdt, cdt)
    r, _ = _reduce("vector_norm", x, dims, keepdim, acc, rdt, p=o)
    return r if out is None else _write_out(out, r, "linalg_vector_norm")


_export(_vector_norm)
vector_norm = _export(_vector_norm, name="vector_norm")
_vector_norm_raw = _vector_norm      # unwrapped (ptcore.linalg.vector_norm calls it)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The legacy ``torch.norm``: 'fro' (or a number) gives a vector norm over
    ``dim`` (all dims when None); other strings ('nuc') a matrix norm through
    ``ptcore.linalg.matrix_norm``."""
    if (p == "fro" if type(p) is str else type(p) in (int, float) and p == 2) and dim is None and keepdim is False \
            and out is None and dtype is None and not _layers_on[0] \
            and isinstance(input, _TensorBase) and _in_host_memory(input) and not input._requires_grad:
        # the 2-norm of the flattened input, nothing to record, no layer on:
        # vector_norm's body (its CPU fast path) without a second entry
        return _vector_norm_raw(input)
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "norm", "keepdim")
    x = _tensor_arg(input, "norm")
    _dim = [dim] if isinstance(dim, _numbers.Integral) else dim
    if dtype is not None and (x.dtype.is_floating_point or x.dtype.is_complex):
        # torch.norm runs linalg.vector_norm/matrix_norm, whose dtype= may widen only
        d = _C._as_dtype(dtype_param(dtype, "norm"))
        if (d.is_floating_point or d.is_complex) and d.is_complex == x.dtype.is_complex \
                and promote_types(x.dtype, d) is not d:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_lg(x.dtype)}) should "
                               f"be convertible without narrowing to the specified dtype "
                               f"({_lg(d)})")
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, _numbers.Integral) or len(dim) <= 2):
            return _vector_norm(x, 2, _dim, keepdim, dtype=dtype, out=out)
        if _dim is None:
            _dim = list(range(x.ndim))
        if out is None:
            return _linalg.matrix_norm(x, p, _dim, keepdim, dtype=dtype)
        return _linalg.matrix_norm(x, p, _dim, keepdim, dtype=dtype, out=out)
    _p = 2.0 if p is None else p
    return _vector_norm(x, _p, _dim, keepdim, dtype=dtype, out=out)


@_method_form("norm")
def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "norm", "keepdim")
    return norm(self, p, dim, keepdim, dtype=dtype)


_norm_method.__name__ = "norm"     # Tensor.norm has no out (its 4th parameter is dtype)

_export(norm)


def _complex_lse(x, dims, keepdim, cumulative):
    """Complex logsumexp / logcumsumexp as PyTorch computes them: the max of
    the real parts (infinities replaced by 0) is shifted out."""
    if x.numel() == 0:
        if cumulative:
            return x.clone()
        return E.log(sum(E.exp(x), dims, keepdim))
    m = amax(E.real(x), dims, True)
    m = E.where(E.isinf(m), _C.zeros([], dtype=m.dtype, device=m.device), m)
    e = E.exp(E.sub(x, m))
    s = cumsum(e, dims[0]) if cumulative else sum(e, dims, True)
    r = E.add(E.log(s), m)
    if not keepdim and not cumulative:
        r = r.view(_out_shape(x.shape, dims, False))
    return r


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (max shifted
    out); integer inputs give the default float dtype."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "logsumexp", "keepdim")
    x = _tensor_arg(input, "logsumexp")
    if dim is None:                      # (torch's dim is an int[1] without a default)
        raise TypeError("logsumexp(): argument 'dim' (position 2) must be tuple of ints, not "
                        "NoneType")
    dims = _dims(dim, x.ndim, "logsumexp")
    dt = x.dtype
    if dt.is_complex:
        odt = out.dtype if isinstance(out, _TensorBase) else dt
        if odt is not dt and (odt.is_floating_point or odt.is_complex) and x.numel():
            # torch's composition: the sum goes straight into out's dtype (a real out=
            # takes the real parts of the exponentials)
            m = amax(E.real(x), dims, True)
            m = E.where(E.isinf(m), _C.zeros([], dtype=m.dtype, device=m.device), m)
            e = E.exp(E.sub(x, m))
            if not odt.is_complex:
                import warnings
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=2)
                e = E.real(e)
            r = E.add(E.log(sum(e, dims, keepdim, dtype=odt)), m if keepdim else m.squeeze(dims))
            return _write_out(out, r, "logsumexp")
        r = _complex_lse(x, dims, keepdim, cumulative=False)
        if out is not None:
            _check_out_dtype(out, dt, "logsumexp")
            return _write_out(out, r, "logsumexp")
        return r
    rdt = _C.get_default_dtype() if _is_int_like(dt) else dt
    acc = _C.float64 if rdt is _C.float64 else _C.float32
    odt = out.dtype if isinstance(out, _TensorBase) else rdt
    if out is not None and not (odt.is_floating_point or odt.is_complex):
        raise RuntimeError(f"logsumexp(): Expected floating point type for result tensor, but got: "
                           f"{_lg(odt)}")
    if rdt in (_C.float16, _C.bfloat16) or odt is not rdt:
        # PyTorch's composition (each step rounded to its dtype; the sum goes
        # straight into out's dtype): max, exp(x - max), sum, log, + max
        xr = x if x.dtype is rdt else x.to(rdt)
        if xr.numel() == 0:                       # log(0) = -inf per output
            r = sum(xr.exp(), dims, keepdim, dtype=odt).log()
            return r if out is None else _write_out(out, r, "logsumexp")
        m = amax(xr, dims, True)
        m = m.masked_fill(m.abs() == _math.inf, 0)
        r = sum(xr.sub(m).exp(), dims, keepdim, dtype=odt).log()
        r = r.add(m if keepdim else m.squeeze(dims))
        return r if out is None else _write_out(out, r, "logsumexp")
    if dims and rdt is dt and x.numel() and _all_size_one(x, dims):
        # (one element per output: max + log(exp(x - max)) is x + 0.0, inf and NaN
        # included -- -0.0 gives +0.0 -- torch's bits, one pass)
        r = E.add(x, 0.0)
        r = r if keepdim else r.squeeze(dims)
        return r if out is None else _write_out(out, r, "logsumexp")
    r, _ = _reduce("logsumexp", x, dims, keepdim, acc, rdt)
    return r if out is None else _write_out(out, r, "logsumexp")


def _all_size_one(x, dims):
    shape = x.shape
    for d in dims:
        if shape[d] != 1:
            return False
    return True


_export(_np_aliases(logsumexp), name="logsumexp")


# --------------------------------------------------------------------------
# all / any / count_nonzero
# --------------------------------------------------------------------------
def _all_any(name, input, dim, keepdim, out):
    x = _tensor_arg(input, name)
    dims = _dims(dim, x.ndim, name, empty_is_all=False, int_dim=True)   # all/any: dim=() reduces nothing
    rdt = _C.uint8 if x.dtype is _C.uint8 else _C.bool_
    if out is not None and isinstance(out, _TensorBase) and out.dtype is not rdt:
        if out.dtype is not _C.bool_ and out.dtype is not _C.uint8:
            raise RuntimeError(f"{name} only supports bool tensor for result, got: {_lg(out.dtype)}")
        rdt = out.dtype                  # torch: either of the two for any input
        if rdt is _C.uint8 and x.numel() != 1:
            # torch's loop reads the input as the uint8 result (0.5 -> 0); one element is
            # converted to bool instead
            x = x._to_dtype(_C.uint8)
    r, _ = _reduce(name, x, dims, keepdim, _C.bool_, rdt)
    return r if out is None else _write_out(out, r, name)


@_np_aliases
def all(input, dim=None, keepdim=False, *, out=None):
    """True where every element over ``dim`` is non-zero (uint8 in, uint8 out)."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "all", "keepdim")
    return _all_any("all", input, dim, keepdim, out)


@_np_aliases
def any(input, dim=None, keepdim=False, *, out=None):
    """True where some element over ``dim`` is non-zero (uint8 in, uint8 out)."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "any", "keepdim")
    return _all_any("any", input, dim, keepdim, out)


@_np_aliases
def count_nonzero(input, dim=None):
    """Number of non-zero elements over ``dim`` (int64)."""
    x = _tensor_arg(input, "count_nonzero")
    dims = _dims(dim, x.ndim, "count_nonzero")
    r, _ = _reduce("count_nonzero", x, dims, False, _C.bool_, _C.int64)
    return r


for _f in (all, any, count_nonzero):
    _export(_f)


# --------------------------------------------------------------------------
# scans
# --------------------------------------------------------------------------
def _scan_acc(dt):
    if _is_int_like(dt):
        return _C.int64
    if dt in (_C.float16, _C.bfloat16):
        return _C.float32
    if dt is _C.float32:
        return _C.float64          # PyTorch's CPU scans accumulate float in double
    if dt is _C.complex64:
        return _C.complex128
    return dt


def _run_lines(kname, x, dim, acc, rdt, want_idx=False):
    """Line kernel on x converted to ``acc``; result converted to ``rdt``."""
    dev = x.device
    if x.dtype in _FLOAT8 or rdt in _FLOAT8:
        f8 = x.dtype if x.dtype in _FLOAT8 else rdt
        kn = f"{kname}_out_cpu" if kname in ("cumsum", "cumprod", "logcumsumexp") else f"{kname}_cpu"
        raise NotImplementedError(f"\"{kn}\" not implemented for '{f8._legacy}'")
    if (x.dtype in _LIMITED and kname not in ("cumsum", "cumprod")) or rdt in _LIMITED:
        lim = rdt if rdt in _LIMITED else x.dtype       # PyTorch's limited unsigned types
        kn = f"{kname}_out_cpu" if kname in ("cumsum", "cumprod", "logcumsumexp") else f"{kname}_cpu"
        raise NotImplementedError(f"\"{kn}\" not implemented for '{lim._legacy}'")
    native = _loop_for("scan_native", dev, None) \
        if kname in _DEVICE_ACC_SCANS and x.dtype.is_floating_point and rdt is x.dtype else None
    if native is not None:
        # a device whose scan kernels read and write the float types themselves,
        # accumulating as the CPU's do (CUDA: float32 in double, the half types
        # in float): one kernel, no casts in and out
        acc = x.dtype
    xa = x if x.dtype is acc else x._to_dtype(acc)
    o = _empty(list(x.shape), acc, dev)
    oi = _empty(list(x.shape), _C.int64, dev) if want_idx else None
    if native is not None:
        native(kname, xa, dim, o, oi)
    else:
        _cpu_kernel(kname, dev, _CPU_KERNELS[kname])(xa, dim, o, oi)
    if rdt is not acc:
        o = o._to_dtype(rdt)
    return o, oi


_DEVICE_ACC_SCANS = frozenset(("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"))

# the float dtypes of the scans' fast path and the dtypes they accumulate in
# (as _scan_acc)
_SCAN_FAST = {_C.float32: _C.float64, _C.float64: _C.float64}


def _cum_fast(name, input, dim):
    """``cumsum``/``cumprod`` of a CPU float32/float64 tensor of at least one
    dim along the int ``dim`` (in range) with no ``dtype``/``out``: the line
    kernel straight away (every check of the general path passes); None for
    the others."""
    acc = _SCAN_FAST.get(getattr(input, "dtype", None))
    if acc is None or type(dim) is not int or not isinstance(input, _TensorBase) \
            or not _in_host_memory(input):
        return None
    nd = input.ndim
    if not (nd and -nd <= dim < nd):
        return None
    dt = input.dtype
    if dt is _C.float32 and input.is_contiguous():
        # (one pass accumulating in double, no float64 copies in and out)
        return _K.scan_f32(input, dim % nd, name)
    o = _C.empty(input.shape, dtype=acc)
    _K.lines(input if acc is dt else input._to_dtype(acc), dim % nd, name, o, None)
    return o if acc is dt else o._to_dtype(dt)


def _cum_sumprod(name, input, dim, dtype, out):
    x = _tensor_arg(input, name)
    d = _one_dim(dim, x.ndim, name)
    if dtype is not None:
        rdt = _C._as_dtype(dtype_param(dtype, name))
    elif out is not None and isinstance(out, _TensorBase):
        rdt = out.dtype
    else:
        rdt = _C.int64 if _is_int_like(x.dtype) else x.dtype
    if rdt is _C.bool_ and x.numel() and x.ndim:     # (torch copies a 0-d input)
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    if dtype is not None and rdt is not x.dtype:
        x = x._to_dtype(rdt)
    if out is not None:
        _check_out_dtype(out, rdt, name)
    if x.ndim == 0:             # the one element, converted straight to the result dtype
        r = x._to_dtype(rdt) if x.dtype is not rdt else x.clone()
    else:
        r, _ = _run_lines(name, x, d, _scan_acc(rdt), rdt)
    # (torch's kernel reads the input converted to out's dtype: a copy unless the same)
    return r if out is None else _write_out(out, r, name, *((x,) if x.dtype is rdt else ()))


def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim``.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([1, 2, 3]).cumsum(0).tolist()
    [1, 3, 6]
    """
    if dtype is None and out is None:
        r = _cum_fast("cumsum", input, dim)
        if r is not None:
            return r
    _refuse_complex32("cumsum_out_cpu", input)
    return _cum_sumprod("cumsum", input, dim, dtype, out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``."""
    if dtype is None and out is None:
        r = _cum_fast("cumprod", input, dim)
        if r is not None:
            return r
    return _cum_sumprod("cumprod", input, dim, dtype, out)


def _cum_inplace(name, self, dim, dtype):
    if dtype is not None and _C._as_dtype(dtype_param(dtype, name + "_")) is not self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_cpp(self.dtype)} and output "
                           f"tensor dtype {_cpp(_C._as_dtype(dtype))} should match")
    if self.dtype is _C.bool_:       # torch's out= kernel has no bool loop
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    r = _cum_sumprod(name, self, dim, None, None)
    self.copy_(r)
    return self


def cumsum_(self, dim, *, dtype=None):
    """In-place :func:`cumsum`."""
    return _cum_inplace("cumsum", self, dim, dtype)


def cumprod_(self, dim, *, dtype=None):
    """In-place :func:`cumprod`."""
    return _cum_inplace("cumprod", self, dim, dtype)


def _cum_ext(name, input, dim, out):
    x = _tensor_arg(input, name)
    _check_out_pair(out, name)
    if x.numel() == 0 and x.ndim and out is None:
        # torch returns an empty input's empty results before checking the dim
        cls = _cummax_t if name == "cummax" else _cummin_t
        return cls(x.clone(), _C.empty(tuple(x.shape), dtype=_C.int64, device=x.device))
    d = _one_dim(dim, x.ndim, name)
    if x.numel() and x.ndim:             # (a 0-d input is returned as it is)
        _no_complex(x, f"{name}_cpu")
    if x.ndim == 0 and x.dtype.is_complex:  # (the kernels have no complex loop)
        v, i = x.clone(), _C.zeros((), dtype=_C.int64, device=x.device)
    else:
        v, i = _run_lines(name, x, d, _ext_acc(x.dtype), x.dtype, want_idx=True)
    cls = _cummax_t if name == "cummax" else _cummin_t
    if out is not None:
        _check_out_dtype(out[0], x.dtype, name)
        _check_out_dtype(out[1], _C.int64, name)
        return _named_out(cls, out, (v, i), name)
    return cls(v, i)


def cummax(input, dim, *, out=None):
    """``(values, indices)`` of the running maximum along ``dim`` (ties take
    the later index; NaN propagates)."""
    return _cum_ext("cummax", input, dim, out)


def cummin(input, dim, *, out=None):
    """``(values, indices)`` of the running minimum along ``dim``."""
    return _cum_ext("cummin", input, dim, out)


def _complex_logcumsumexp(x, d):
    """Complex ``logcumsumexp`` on torch's branch of the logarithm.  torch
    scans ``c_i = log1p(exp(min - max)) + max`` (``max``: the one of ``x_i``,
    ``c_{i-1}`` with the larger real part; ``c_{-1} = -inf``), so each
    imaginary part stays within pi of the imaginary part of ``x_i`` where
    ``x_i`` is the max, else of ``c_{i-1}``: the principal values of the
    plain computation, unwrapped that way (a segmented cumulative sum)."""
    if x.numel() == 0:
        return x.clone()
    if x.ndim == 0:
        return _complex_logcumsumexp(x.reshape(1), 0).reshape(())
    xw = x._to_dtype(_C.complex128)                   # torch's accumulation type
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    pos = _arange(n, dtype=_C.int64, device=x.device).reshape(shape).expand(x.shape)
    # from a NaN on, the results are NaN; from a +inf (real part) on, that
    # element itself (exp(x - inf) = 0): both are taken out of the sums
    nan_at = E.logical_or(E.isnan(E.real(xw)), E.isnan(E.imag(xw)))
    inf_at = E.eq(E.real(xw), _math.inf)
    xw = E.where(E.logical_or(nan_at, inf_at), complex(-_math.inf, 0.0), xw)
    v = _complex_lse(xw, (d,), True, cumulative=True)
    vr, vi = E.real(v), E.imag(v)
    xr, xi = E.real(xw), E.imag(xw)
    # c_0 is x_0 exactly (-inf + 0j where real(x_0) is -inf): ties of the real
    # parts decide the branch, so no rounding of the plain computation there
    x0r, x0i = xr.narrow(d, 0, 1), xi.narrow(d, 0, 1)
    low = E.eq(x0r, -_math.inf)
    if n > 1:
        vr = _cat([x0r, vr.narrow(d, 1, n - 1)], d)
        vi = _cat([E.where(low, 0.0, x0i), vi.narrow(d, 1, n - 1)], d)
    else:
        vr, vi = x0r, E.where(low, 0.0, x0i)
    pad_shape = list(x.shape)
    pad_shape[d] = 1

    def shifted(t, first):            # t one step later along d, ``first`` in front
        head = _C.full(pad_shape, first, dtype=t.dtype, device=t.device)
        return _cat([head, t.narrow(d, 0, n - 1)], d)

    two_pi = 2 * _math.pi

    def wrap(t):                      # into (-pi, pi]
        return E.rsub(E.remainder(E.rsub(t, _math.pi), two_pi), _math.pi)

    prev_r = shifted(vr, -_math.inf)
    x_is_max = E.logical_not(E.lt(xr, prev_r))
    both_minus_inf = E.logical_and(E.eq(xr, -_math.inf), E.eq(prev_r, -_math.inf))
    reset = E.logical_and(x_is_max, E.logical_not(both_minus_inf))
    step = E.where(reset, 0.0, wrap(E.sub(vi, shifted(vi, 0.0))))
    run = cumsum(step, d)
    base = E.sub(E.add(xi, wrap(E.sub(vi, xi))), run)   # at resets: T_j - run_j
    last = cummax(E.where(reset, pos, -1), d).values
    start = E.where(E.ge(last, 0), base.gather(d, last.clamp(min=0)), 0.0)
    r = E.complex(vr, E.add(start, run))
    last_inf = cummax(E.where(inf_at, pos, -1), d).values
    r = E.where(E.ge(last_inf, 0), x._to_dtype(_C.complex128).gather(d, last_inf.clamp(min=0)), r)
    bad = E.gt(cumsum(nan_at, d), 0)
    r = E.where(bad, complex(_math.nan, _math.nan), r)    # torch: NaN in both parts
    return r._to_dtype(x.dtype)


def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably."""
    x = _tensor_arg(input, "logcumsumexp")
    d = _one_dim(dim, x.ndim, "logcumsumexp")
    if x.dtype.is_complex:
        r = _complex_logcumsumexp(x, d)
        if out is not None:
            _check_out_dtype(out, x.dtype, "logcumsumexp")
            return _write_out(out, r, "logcumsumexp", x)
        return r
    if out is not None:
        _check_out_dtype(out, x.dtype, "logcumsumexp")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{_lg(x.dtype)}\'')
    acc = _C.float64 if x.dtype is _C.float64 else _C.float32
    r, _ = _run_lines("logcumsumexp", x, d, acc, x.dtype)
    return r if out is None else _write_out(out, r, "logcumsumexp", x)


for _f in (cumsum, cumprod, cumsum_, cumprod_, cummax, cummin, logcumsumexp):
    _export(_f)


# --------------------------------------------------------------------------
# softmax / log_softmax
# --------------------------------------------------------------------------
def _softmax_impl(name, input, dim, dtype):
    if dtype is None:
        # the common case: float32/float64 CPU, computed in its own dtype
        o = _K.softmax_fast(input, dim, name)
        if o is not None:
            return o
    x = _tensor_arg(input, name)
    if dim is None:
        raise TypeError(f"{name}() missing required argument 'dim'")
    d = _one_dim(dim, x.ndim, name)
    if dtype is not None:
        dt = _C._as_dtype(dtype_param(dtype, name))
        if dt is not x.dtype:
            x = x._to_dtype(dt)
    dt = x.dtype
    if x.numel() == 0:
        return _empty(list(x.shape), dt, x.device)
    if not dt.is_floating_point:
        last = x.ndim == 0 or d == x.ndim - 1
        kname = "softmax_lastdim_kernel_impl" if last else "softmax_kernel_impl"
        if name == "log_softmax":
            kname = "log_" + kname
        raise NotImplementedError(f'"{kname}" not implemented for \'{_lg(dt)}\'')
    acc = _C.float64 if dt is _C.float64 else _C.float32
    r, _ = _run_lines(name, x, d, acc, dt)
    return r


def softmax(input, dim, dtype=None, *, out=None):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (float16/bfloat16
    computed in float32); ``dtype`` casts the input first.

    Examples
    --------
    >>> import ptcore
    >>> [round(v, 4) for v in ptcore.tensor([1., 2., 3.]).softmax(0).tolist()]
    [0.09, 0.2447, 0.6652]
    """
    if dtype is None and out is None:
        r = _K.softmax_fast(input, dim, "softmax")
        if r is not None:
            return r
    r = _softmax_impl("softmax", input, dim, dtype)
    return r if out is None else copy_out_same_dtype(out, r)


def log_softmax(input, dim, dtype=None, *, out=None):
    """``(x - max) - log(sum(exp(x - max)))`` along ``dim``."""
    if dtype is None and out is None:
        r = _K.softmax_fast(input, dim, "log_softmax")
        if r is not None:
            return r
    r = _softmax_impl("log_softmax", input, dim, dtype)
    return r if out is None else copy_out_same_dtype(out, r)


def _get_softmax_dim(name, ndim, stacklevel=3):
    """The legacy implicit dim of ``nn.functional.softmax(x)`` (with its warning)."""
    # at the user's line, as torch's _stacklevel=3 (the dispatch point adds frames here)
    warn_at_caller(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                   f"to include dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


_export(softmax)
_export(log_softmax)


# --------------------------------------------------------------------------
# median / nanmedian / mode / quantile
# --------------------------------------------------------------------------
def _rows(x, d, copy=False, sel=None):
    """x with dim d moved last, as a contiguous (M, n) tensor in the
    selection type ``sel`` (default float64 / int64); a private copy when ``copy``."""
    if sel is None:
        sel = _C.int64 if _is_int_like(x.dtype) else _C.float64
    n = x.shape[d] if x.ndim else 1
    xm = x.movedim(d, -1) if x.ndim else x.reshape(1)
    if xm.dtype is not sel:
        xm = xm._to_dtype(sel)
    xm = xm.contiguous()
    M = xm.numel() // n if n else 0
    rows = xm.reshape(M, n)
    if copy and rows.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        rows = rows.clone()
    return rows, M, n


def _select(kname, x, d, keepdim):
    """(values, indices) of the per-row selection along d."""
    dev = x.device
    sel = None
    if kname != "mode":
        # medians select on the values in the narrowest exact type (float32
        # for 16-bit floats)
        sel = (_C.int64 if _is_int_like(x.dtype) else
               _C.float64 if x.dtype is _C.float64 else _C.float32)
    rows, M, n = _rows(x, d, sel=sel)
    vals = _empty([M], rows.dtype, dev)
    idx = _empty([M], _C.int64, dev)
    _cpu_kernel(kname, dev, _CPU_KERNELS[kname])(rows, vals, idx)
    dims = (d,) if x.ndim else ()
    shape = _out_shape(x.shape, dims, keepdim)
    vals = vals.view(shape)
    idx = idx.view(shape)
    if vals.dtype is not x.dtype:
        vals = vals._to_dtype(x.dtype)
    return vals, idx


def _check_select_dtype(x, kname):
    if x.dtype is _C.bool_ or x.dtype.is_complex or x.dtype in _LIMITED:
        raise NotImplementedError(f'"{kname}" not implemented for \'{_lg(x.dtype)}\'')


def _median_all_cpu(x, ignore_nan):
    """Median of all elements: a value-only selection on a private copy in
    the narrowest exact type (float32 for 16-bit floats, int64 for ints)."""
    if _is_int_like(x.dtype):
        sel = _C.int64
    elif x.dtype is _C.float64:
        sel = _C.float64
    else:
        sel = _C.float32
    flat = x.reshape(-1)
    if flat.dtype is not sel:
        flat = flat._to_dtype(sel)
    if flat.dtype is x.dtype or not flat.is_contiguous():
        # reshape may give a (strided) view of x: the kernel reorders a dense copy in place
        flat = flat.clone(memory_format=_C.contiguous_format)
    _K.median_flat(flat, ignore_nan)
    v = flat[0].clone()
    return v if v.dtype is x.dtype else v._to_dtype(x.dtype)


def _median_impl(name, input, dim, keepdim, out):
    x = _tensor_arg(input, name)
    if dim is not None:
        _check_out_pair(out, name)
    if dim is None:
        if out is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments: the "
                            f"reduction of all elements takes no 'out' (give 'dim')")
        if x.numel() == 0:
            # torch fills the result with NaN cast to the dtype, whatever the dtype
            # (int32/int64: the minimum, 8/16-bit ints: 0, bool: True)
            return _C.full([], float("nan"), dtype=_C.float64, device=x.device)._to_dtype(x.dtype)
        _check_select_dtype(x, "median_cpu" if name == "median" else "nanmedian_cpu")
        median_all = _loop_for("median of all elements", x.device, _median_all_cpu)
        if median_all is not None:
            return median_all(x, name == "nanmedian")
        flat = x.reshape(-1)
        v, _ = _select(name, flat, 0, False)
        return v
    d = _one_dim(dim, x.ndim, name)
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    _check_select_dtype(x, "median_out")
    v, i = _select(name, x, d, keepdim)
    cls = _median_t if name == "median" else _nanmedian_t
    if out is not None:
        _check_out_dtype(out[0], x.dtype, name)
        _check_out_dtype(out[1], _C.int64, name)
        return _named_out(cls, out, (v, i), name)
    return cls(v, i)


def median(input, dim=_NODIM, keepdim=_NOKEEP, *, out=None):
    """The lower median (of all elements, or ``(values, indices)`` along
    ``dim``); NaN when the row holds a NaN.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([3., 1., 4., 2.]).median().item()
    2.0
    """
    dim, keepdim = _all_or_dim(dim, keepdim, "median")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "median", "keepdim")
    return _median_impl("median", input, dim, keepdim, out)


def nanmedian(input, dim=_NODIM, keepdim=_NOKEEP, *, out=None):
    """The lower median of the non-NaN elements."""
    dim, keepdim = _all_or_dim(dim, keepdim, "nanmedian")
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "nanmedian", "keepdim")
    return _median_impl("nanmedian", input, dim, keepdim, out)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """``(values, indices)``: the most frequent value along ``dim`` (the
    smallest among ties) and the index torch's CPU kernel returns for it: the
    last of its occurrences in the order of torch's (unstable) sort, which is
    its last occurrence along ``dim`` for rows of at most 16 elements."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "mode", "keepdim")
    x = _tensor_arg(input, "mode")
    _check_out_pair(out, "mode")
    if out is not None:                  # (torch checks out= first)
        if out[0].dtype is not x.dtype:
            raise RuntimeError(f"expected scalar type '{_lg(x.dtype)}' but got "
                               f"'{_lg(out[0].dtype)}' for values output")
        if out[1].dtype is not _C.int64:
            raise RuntimeError(f"expected scalar type 'Long' but got '{_lg(out[1].dtype)}' for "
                               f"indices output")
    d = _one_dim(dim, x.ndim, "mode")
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if (x.dtype.is_complex and x.numel() and x.ndim) or x.dtype in _LIMITED:
        raise NotImplementedError(f'"mode_cpu" not implemented for \'{_lg(x.dtype)}\'')
    if x.ndim == 0 and x.dtype.is_complex:  # (the kernels have no complex loop)
        v, i = x.clone(), _C.zeros((), dtype=_C.int64, device=x.device)
    else:
        v, i = _select("mode", x, d, keepdim)
    if out is not None:
        _check_out_dtype(out[0], x.dtype, "mode")
        _check_out_dtype(out[1], _C.int64, "mode")
        return _named_out(_mode_t, out, (v, i), "mode", x)
    return _mode_t(v, i)


_INTERP = {"linear": 0, "lower": 1, "higher": 2, "midpoint": 3, "nearest": 4}


def _quantile_impl(fname, input, q, dim, keepdim, interpolation, out, ignore_nan):
    x = _tensor_arg(input, fname)
    if x.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{fname}() input tensor must be either float or double dtype")
    dev = x.device
    if isinstance(q, _TensorBase):
        if q.dim() > 1:
            raise RuntimeError(f"{fname}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{fname}() q tensor must be same dtype as the input tensor")
        _check_same_device(fname, x, q)
        scalar_q = q.dim() == 0
        qv = [float(v) for v in q.reshape(-1).tolist()]
        for v in qv:
            if not 0 <= v <= 1:
                raise RuntimeError(f"{fname}() q values must be in the range [0, 1]")
    elif isinstance(q, _numbers.Real) and not isinstance(q, _b.bool):
        scalar_q = True
        qv = [float(q)]
        if not 0 <= qv[0] <= 1:
            raise RuntimeError(f"{fname}() q must be in the range [0, 1] but got {q}")
    else:
        raise TypeError(f"{fname}() received an invalid combination of arguments: q must be a "
                        f"float or a Tensor, not {type(q).__name__}")
    if x.numel() == 0:
        raise RuntimeError(f"{fname}() input tensor must be non-empty")
    if not isinstance(interpolation, str):
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"interpolation={type(interpolation).__name__}: it must be a str")
    if interpolation not in _INTERP:
        raise RuntimeError(f"{fname}() interpolation must be one of linear, lower, higher, midpoint "
                           f"or nearest, but got {interpolation}")
    if dim is None:
        src = x.reshape(-1)
        d = 0
        oshape = [1] * x.ndim if keepdim else []
    else:
        d = _one_dim(dim, x.ndim, fname)
        src = x
        oshape = _out_shape(x.shape, (d,) if x.ndim else (), keepdim)
    rows, M, n = _rows(src, d, copy=True)        # the kernel sorts the rows in place
    qt = _tensor_fn(qv, dtype=_C.float64, device=dev)
    res = _empty([len(qv), M], _C.float64, dev)
    _cpu_kernel(fname, dev, _quantile_cpu)(rows, qt, res, _INTERP[interpolation], ignore_nan,
                                            x.dtype is _C.float32)
    res = res.view([len(qv)] + oshape)
    if scalar_q:
        res = res.view(oshape)
    if res.dtype is not x.dtype:
        res = res._to_dtype(x.dtype)
    if out is not None:
        _check_out_dtype(out, x.dtype, fname)
        return _write_out(out, res, fname)
    return res


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (``q`` a float or a 0-/1-D tensor in [0, 1]) of
    all elements or along ``dim``; with a 1-D ``q`` the result gains a
    leading dim of len(q).  ``interpolation``: linear, lower, higher,
    midpoint or nearest.  Any NaN in a row gives NaN.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.tensor([1., 2., 3., 4.]).quantile(0.5).item()
    2.5
    """
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "quantile", "keepdim")
    return _quantile_impl("quantile", input, q, dim, keepdim, interpolation, out, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaNs (NaN where a row is all NaN)."""
    if keepdim is not False and keepdim is not True:
        bool_param(keepdim, "nanquantile", "keepdim")
    return _quantile_impl("nanquantile", input, q, dim, keepdim, interpolation, out, True)


for _f in (median, nanmedian, mode, quantile, nanquantile):
    _export(_f)

del _f


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "reduction")
del _bind_module
