"""Vector and matrix norms, cross products (``torch.linalg`` semantics).

Written with ptcore ops, so they run on every device (float16/bfloat16 sums
of ``|A|`` in float32, rounded once at the end, as PyTorch accumulates);
spectral and nuclear norms use ``svdvals`` (the device's SVD loop).
"""
import builtins as _b
import math as _math
import numbers as _numbers
import sys as _sys

from ptcore._dispatch.device import in_host_memory as _in_host_memory
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import promote_types
from ptcore._ops.linalg import _broadcast_batch
from ptcore._scalar_args import number_arg
from ptcore.linalg._factor import _out
from ptcore._ops._out import check_out_arg, check_out_overlaps
from ptcore._ops import reduction as _reductions
from ptcore._ops.kernels._reduce import vector_norm2_fast as _vector_norm2_fast
from ptcore._dispatch.dispatcher import on as _layers_on
from ptcore._ops.shape import cat
from ptcore._ops.kernels._cross import fast_cross as _fast_cross


def _la():
    """The public namespace ``ptcore.linalg``: the norms call its entries, so
    that they record and meet the dispatch layers (a matrix norm that
    requires grad is differentiated through its parts)."""
    return _sys.modules["ptcore.linalg"]


def _fmt_ord(o):
    if isinstance(o, float) and o.is_integer():
        return str(int(o))
    if isinstance(o, float) and _math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return str(o)


def _as_float(x):
    """``x`` in a type the sums run in (f16/bf16 -> f32)."""
    if x.dtype in (_C.float16, _C.bfloat16):
        return x._to_dtype(_C.float32)
    return x


def _dims(dim, ndim, fn):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, _numbers.Integral):
        dim = (dim,)
    out = []
    for d in dim:
        d = _b.int(d)
        n = ndim if ndim else 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                             f" but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out) if ndim else ()


def _result_dtype(x, dtype, fn):
    dt = x.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{dt._legacy}")
    if dtype is not None:
        dtype = _C._as_dtype(dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"{fn}: dtype should be floating point or complex, but got "
                               f"{dtype._legacy}")
        if dtype.is_complex != dt.is_complex:
            if dt.is_complex:
                raise RuntimeError(f"{fn}: dtype should be complex for complex inputs, but got "
                                   f"{dtype._legacy}")
            raise RuntimeError(f"{fn}: dtype should be real for real inputs, but got "
                               f"{dtype._legacy}")
        _check_narrowing(dt, dtype, fn)
        return dtype
    return dt


def _check_narrowing(dt, dtype, fn):
    """torch: the input's dtype must promote to ``dtype`` (float64 -> float32 raises)."""
    if promote_types(dt, dtype) is not dtype:
        raise RuntimeError(f"{fn}: the dtype of the input ({dt._legacy}) should be convertible "
                           f"without narrowing to the specified dtype ({dtype._legacy})")


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector norm over ``dim`` (all dims when None or empty) (``torch.linalg.vector_norm``):
    ``ord`` inf/-inf (max/min ``|x|``), 0 (count of non-zeros), else
    ``sum(|x|**ord)**(1/ord)``.  The result is real.  Runs the vectorised
    reduction kernels of ``ptcore._ops.reduction``."""
    if dtype is None and out is None:
        # the 2-norm of a float CPU tensor over all dims or one: one kernel call
        r = _vector_norm2_fast(input, ord, dim, keepdim)
        if r is not None:
            return r
    check_out_arg(out, "linalg_vector_norm")
    x = input
    if dtype is not None and isinstance(x, _TensorBase) and (x.dtype.is_floating_point
                                                             or x.dtype.is_complex):
        d = _C._as_dtype(dtype)
        if (d.is_floating_point or d.is_complex) and d.is_complex == x.dtype.is_complex:
            _check_narrowing(x.dtype, d, "linalg.vector_norm")
    return _reductions._vector_norm_raw(x, ord, dim, keepdim, dtype=dtype, out=out)


_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, _math.inf, -_math.inf)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims ``dim`` (``torch.linalg.matrix_norm``):
    'fro', 'nuc', 2/-2 (largest/smallest singular value), 1/-1 (max/min
    column sum of ``|A|``), inf/-inf (max/min row sum)."""
    check_out_arg(out, "linalg_matrix_norm")
    A = input
    fn = "linalg.matrix_norm"
    ord = number_arg(ord)
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_matrix_norm(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, _numbers.Integral) or len(dim) != 2:
        got = dim if isinstance(dim, _numbers.Integral) else " ".join(map(str, dim))
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {got}")
    ok = ord in ("fro", "nuc") if isinstance(ord, str) else \
        (isinstance(ord, _numbers.Number) and float(ord) in (2.0, -2.0, 1.0, -1.0, _math.inf,
                                                             -_math.inf))
    if not ok:
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    cdt = _result_dtype(A, dtype, fn)
    rdt = cdt.to_real() if cdt.is_complex else cdt
    d0, d1 = _dims(dim, A.dim(), fn)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    src = A._to_dtype(cdt) if cdt is not A.dtype else A
    if ord == "fro":
        return _out(_la().vector_norm(src, 2, (d0, d1), keepdim), out, "matrix_norm")
    o = ord if isinstance(ord, str) else float(ord)
    if o in ("nuc", 2.0, -2.0):
        if A.dtype in (_C.float16, _C.bfloat16):   # (checked on the input, as PyTorch)
            raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. "
                               f"Got {A.dtype._legacy}")
        perm = [d for d in range(A.dim()) if d not in (d0, d1)] + [d0, d1]
        m = src.permute(*perm)
        if m.shape[-1] == 0 or m.shape[-2] == 0:
            if o == -2.0:
                raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
            s = _C.zeros(*m.shape[:-2], 0, dtype=rdt, device=A.device)
        else:
            s = _la().svdvals(m)
        if o == "nuc":
            r = s.sum(-1)
        elif o == 2.0:
            r = s.amax(-1) if s.shape[-1] else _C.zeros(tuple(s.shape[:-1]), dtype=s.dtype,
                                                        device=s.device)
        else:
            r = s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return _out(r, out, "matrix_norm")
    a = _as_float(src).abs()
    # 1/-1: reduce over rows (d0) then max/min over columns; inf/-inf: the opposite
    sum_dim, red_dim = (d0, d1) if abs(o) == 1.0 else (d1, d0)
    sums = a.sum(sum_dim, keepdim=True)
    if sums.shape[red_dim] == 0:
        if o < 0:
            raise IndexError(f"amin(): Expected reduction dim {red_dim} to have non-zero size.")
        r = sums.sum(red_dim, keepdim=True)      # zeros, as PyTorch
    elif o > 0:
        r = sums.amax(red_dim, keepdim=True)
    else:
        r = sums.amin(red_dim, keepdim=True)
    if not keepdim:
        r = r.squeeze(_b.max(d0, d1)).squeeze(_b.min(d0, d1))
    if r.dtype is not rdt:
        r = r._to_dtype(rdt)
    return _out(r, out, "matrix_norm")


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm (``torch.linalg.norm``): with ``dim`` an int (or
    ``dim=None``, ``ord=None``) a vector norm, with a 2-tuple (or a 2-D input
    and a given ``ord``) a matrix norm."""
    if ord is None and dim is None and out is None and dtype is None and keepdim is False \
            and not _layers_on[0] and isinstance(input, _TensorBase) and _in_host_memory(input) \
            and not input._requires_grad:
        # the 2-norm of the flattened input: with no layer on and nothing to
        # record, vector_norm's body (its CPU fast path) without its entry
        return _reductions._vector_norm_raw(input)
    check_out_arg(out, "linalg_norm")
    A = input
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_norm(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    ord = number_arg(ord)
    if dim is not None:
        dl = [dim] if isinstance(dim, _numbers.Integral) else list(dim)
        if len(dl) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {dl}")
    else:
        dl = None
    if ord is not None and dl is None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    if isinstance(ord, str):
        return _out(_la().matrix_norm(A, ord, tuple(dl) if dl is not None else (-2, -1), keepdim,
                                dtype=dtype), out, "linalg_norm")
    if dl is None:
        if ord is None:
            return _out(_la().vector_norm(A, 2, None, keepdim, dtype=dtype), out, "linalg_norm")
        if A.dim() == 2:
            return _out(_la().matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype), out,
                        "linalg_norm")
        return _out(_la().vector_norm(A, ord, None, keepdim, dtype=dtype), out, "linalg_norm")
    if len(dl) == 2:
        return _out(_la().matrix_norm(A, "fro" if ord is None else ord, tuple(dl), keepdim,
                                dtype=dtype), out, "linalg_norm")
    # (out= written here: torch's linalg.norm takes an out with inputs that require grad)
    return _out(_la().vector_norm(A, 2 if ord is None else ord, dl, keepdim, dtype=dtype), out,
                "linalg_norm")


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim``; batch dims broadcast
    (``torch.linalg.cross``)."""
    if out is None and type(dim) is int:
        # contiguous float32/float64 CPU tensors of one shape (arguments that
        # pass every check below): one kernel instead of nine ops and a cat
        r = _fast_cross(input, other, dim)
        if r is not None:
            return r
    check_out_arg(out, "linalg_cross")
    for x, name in ((input, "input"), (other, "other")):
        if not isinstance(x, _TensorBase):
            raise TypeError(f"linalg_cross(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    n = input.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    _broadcast_batch(input.shape, other.shape)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                           f"{other.dtype._legacy}")
    dt = input.dtype
    if dt is _C.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    a = _as_float(input)
    b = _as_float(other)
    x = [a.narrow(dim, i, 1) for i in range(3)]
    y = [b.narrow(dim, i, 1) for i in range(3)]
    r = cat([x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]],
            dim)
    if r.dtype is not dt:
        r = r._to_dtype(dt)
    if isinstance(out, _TensorBase) and out.dtype is r.dtype:
        # torch's linalg_cross, after its out's dtype check: out shares no memory with an input
        check_out_overlaps(out, (input, other))
    return _out(r, out, "cross")
