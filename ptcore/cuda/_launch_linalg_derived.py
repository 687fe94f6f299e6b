"""The ``ptcore.linalg`` functions derived from the factorisations, on CUDA
tensors: ``pinv``/``pinverse`` and ``matrix_rank`` (SVD or ``eigh`` with
PyTorch's tolerances, computed on the device), ``matrix_norm``/``norm``
(``svdvals`` for 'nuc'/2/-2, sums of ``|A|`` otherwise), ``matrix_power``,
``multi_dot`` (the CPU's cheapest parenthesisation over ``matmul``),
``cross`` and ``vecdot``.  Written with public ops, so they are
differentiable through their parts (``pinv`` also runs under its formula);
the argument checks and messages are the CPU front-ends'.  Registered by
:func:`ptcore.cuda._launch_linalg.register`.
"""
import builtins as _b
import math

from ptcore import _tensor as _C
from ptcore.cuda._launch_linalg import _F, _P, _check_A, eigh, svd

__all__ = ["pinv", "pinverse", "matrix_rank", "matrix_norm", "norm", "matrix_power", "multi_dot",
           "cross", "vecdot"]


def _tol(A, atol, rtol, smax):
    """max(atol, rtol * smax) on the device (PyTorch's defaults)."""
    P = _P()
    from ptcore._tensor import _TensorBase
    from ptcore._dtype_utils import finfo
    m, n = A.shape[-2:]
    rdt = A.dtype

    def t(x):
        if isinstance(x, _TensorBase):
            return x.to(device=A.device, dtype=rdt)
        return P.full((), float(x), dtype=rdt, device=A.device)
    if atol is None and rtol is None:
        return smax * (finfo(A.dtype).eps * _b.max(m, n))
    at = t(atol) if atol is not None else t(0.0)
    rt = t(rtol) if rtol is not None else t(0.0)
    return P.maximum(at, rt * smax)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None, out=None):
    F = _F()
    P = _P()
    if rcond is not None:
        rtol = rcond
    if hermitian:
        _check_A(A, "linalg.eigh")
        W, V = eigh(A)
        absw = W.abs()
        if W.shape[-1] == 0:
            return F._out(V.clone(), out, "pinv")
        tol = _tol(A, atol, rtol, absw.amax(-1)).unsqueeze(-1)
        winv = P.where(absw > tol, 1.0 / P.where(W == 0, 1.0, W), 0.0)
        return F._out((V * winv.unsqueeze(-2)) @ V.mH, out, "pinv")
    _check_A(A, "linalg.pinv", square=False)
    m, n = A.shape[-2:]
    if _b.min(m, n) == 0:
        return F._out(P.zeros(*A.shape[:-2], n, m, dtype=A.dtype, device=A.device), out, "pinv")
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tol(A, atol, rtol, S.narrow(-1, 0, 1).squeeze(-1)).unsqueeze(-1)
    sinv = P.where(S > tol, 1.0 / P.where(S == 0, 1.0, S), 0.0)
    return F._out((Vh.mH * sinv.unsqueeze(-2)) @ U.mH, out, "pinv")


def pinverse(input, rcond=1e-15):
    return _P().linalg.pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    F = _F()
    P = _P()
    from ptcore._tensor import _TensorBase
    if tol is not None:
        if rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments "
                            "- got both tol and rtol")
        atol, rtol = tol, 0.0
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_matrix_rank(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dtype not in F._FLOATS:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        _check_A(A, "linalg.eigh")
        s = P.linalg.eigvalsh(A).abs()
    else:
        _check_A(A, "linalg.svd", square=False)
        s = P.linalg.svdvals(A)
    if s.shape[-1] == 0:
        return F._out(P.zeros(*s.shape[:-1], dtype=_C.int64, device=A.device), out,
                      "matrix_rank")
    smax = s.amax(-1)
    t = _tol(A, atol, rtol, smax).unsqueeze(-1)
    return F._out((s > t).sum(-1).to(_C.int64), out, "matrix_rank")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The CPU front-end's checks, then the norm from device ops
    (vector_norm, svdvals, |A| sums)."""
    import numbers
    from ptcore._tensor import _TensorBase
    from ptcore.linalg import _norms as N
    P = _P()
    fn = "linalg.matrix_norm"
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_matrix_norm(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, numbers.Integral) or len(dim) != 2:
        got = dim if isinstance(dim, numbers.Integral) else " ".join(map(str, dim))
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {got}")
    ok = ord in ("fro", "nuc") if isinstance(ord, str) else \
        (isinstance(ord, numbers.Number) and float(ord) in (2.0, -2.0, 1.0, -1.0, math.inf,
                                                            -math.inf))
    if not ok:
        raise RuntimeError(f"{fn}: Order {ord} not supported.")
    cdt = N._result_dtype(A, dtype, fn)
    rdt = cdt.to_real() if cdt.is_complex else cdt
    d0, d1 = N._dims(dim, A.dim(), fn)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dim[0]}, {dim[1]})")
    src = A.to(cdt) if cdt is not A.dtype else A
    if ord == "fro":
        r = P.linalg.vector_norm(src, 2, (d0, d1), keepdim)
        return _F()._out(r, out, "matrix_norm")
    o = ord if isinstance(ord, str) else float(ord)
    if o in ("nuc", 2.0, -2.0):
        if A.dtype in (_C.float16, _C.bfloat16):
            raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. "
                               f"Got {A.dtype._legacy}")
        m = src.movedim((d0, d1), (-2, -1))
        if m.shape[-1] == 0 or m.shape[-2] == 0:
            if o == -2.0:
                raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
            r = P.zeros(tuple(m.shape[:-2]), dtype=rdt, device=A.device)
        else:
            s = P.linalg.svdvals(m)
            r = s.sum(-1) if o == "nuc" else (s.amax(-1) if o > 0 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return _F()._out(r, out, "matrix_norm")
    sum_dim, red_dim = (d0, d1) if abs(o) == 1.0 else (d1, d0)
    sums = src.abs().sum(sum_dim, keepdim=True)
    if sums.shape[red_dim] == 0:
        if o < 0:
            raise IndexError(f"amin(): Expected reduction dim {red_dim} to have non-zero size.")
        r = sums.sum(red_dim, keepdim=True)
    else:
        r = sums.amax(red_dim, keepdim=True) if o > 0 else sums.amin(red_dim, keepdim=True)
    if not keepdim:
        r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    if r.dtype is not rdt:
        r = r.to(rdt)
    return _F()._out(r, out, "matrix_norm")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """``linalg.norm``'s dispatch to the vector / matrix norms (their entries)."""
    import numbers
    from ptcore._tensor import _TensorBase
    P = _P()
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_norm(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if dim is not None:
        dl = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        if len(dl) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {dl}")
    else:
        dl = None
    if ord is not None and dl is None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    mn, vn = P.linalg.matrix_norm, P.linalg.vector_norm
    if isinstance(ord, str):
        return mn(A, ord, tuple(dl) if dl is not None else (-2, -1), keepdim, dtype=dtype, out=out)
    if dl is None:
        if ord is None:
            return vn(A, 2, None, keepdim, dtype=dtype, out=out)
        if A.dim() == 2:
            return mn(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
        return vn(A, ord, None, keepdim, dtype=dtype, out=out)
    if len(dl) == 2:
        return mn(A, "fro" if ord is None else ord, tuple(dl), keepdim, dtype=dtype, out=out)
    return vn(A, 2 if ord is None else ord, dl, keepdim, dtype=dtype, out=out)


def matrix_power(input, n, *, out=None):
    import numbers
    from ptcore._ops.linalg import _check_tensor, _finish
    P = _P()
    _check_tensor(input, "input", 1, "matrix_power")
    A = input
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    n = int(n)
    sz = A.shape[-1]
    if n == 0:
        eye = P.eye(sz, dtype=A.dtype, device=A.device)
        return _finish(eye.expand(*A.shape).contiguous(), out, "matrix_power")
    if n < 0:
        A = P.linalg.inv(A)
        n = -n
    if n == 1:
        return _finish(A.clone(), out, "matrix_power")
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else P.matmul(result, base)
        n >>= 1
        if n:
            base = P.matmul(base, base)
    if result is A:
        result = A.clone()
    return _finish(result, out, "matrix_power")


def multi_dot(tensors, *, out=None):
    from ptcore._ops import linalg as L
    P = _P()
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for t in tensors:
        L._check_tensor(t, "tensors", 1, "multi_dot")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    dt = first.dtype
    for i, t in enumerate(tensors):
        if t.dtype is not dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {L._cpp(dt)} and tensor {i} {L._cpp(t.dtype)}")
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               f"cannot be multiplied")
    split = L._chain_order([tuple(m.shape) for m in mats]) if n > 2 else None

    def go(i, j):
        if i == j:
            return mats[i]
        k = split[i][j] if split is not None else i
        return P.matmul(go(i, k), go(k + 1, j))
    r = go(0, n - 1)
    if first.dim() == 1 and last.dim() == 1:
        r = r.reshape(())
    elif first.dim() == 1:
        r = r.squeeze(0)
    elif last.dim() == 1:
        r = r.squeeze(1)
    return L._finish(r, out, "multi_dot")


def cross(input, other, *, dim=-1, out=None):
    """``linalg.cross`` from index_select'ed components (the CPU front-end's checks)."""
    from ptcore._tensor import _TensorBase
    from ptcore._ops.linalg import _broadcast_batch
    P = _P()
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
    if input.dtype is _C.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    i1 = P.tensor([1, 2, 0], device=input.device)
    i2 = P.tensor([2, 0, 1], device=input.device)
    r = (input.index_select(dim, i1) * other.index_select(dim, i2)
         - input.index_select(dim, i2) * other.index_select(dim, i1))
    return _F()._out(r, out, "cross")


def vecdot(x, y, *, dim=-1, out=None):
    P = _P()
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype._legacy} and y of type {y.dtype._legacy} instead")
    r = P.sum(x.conj() * y, dim)
    return r if out is None else out.copy_(r)
