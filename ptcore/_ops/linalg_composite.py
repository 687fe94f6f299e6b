"""Linear-algebra functions composed of differentiable ptcore ops: ``cross``,
``matrix_exp``, ``cholesky_solve``/``cholesky_inverse``, ``lu``/``lu_unpack``/``lu_solve``,
``triangular_solve`` and the legacy ``frobenius_norm``/``nuclear_norm``."""
import builtins
import math
import warnings

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel
from ptcore._dispatch.generate import method_form as _method_form
from ptcore._ops._composite_common import _is_int_dtype, _tname, _check_tensor, _write_out, _named, _fresh
from ptcore._return_types import as_out
from ptcore._ops._out import copy_out_exact, check_out_overlaps, check_out_arg
from ptcore._scalar_args import int_param, bool_param as _bool_param
from ptcore._ops.linalg import _finish, _finish_castable, _refuse_grad_out

__all__ = [
    "cross", "matrix_exp", "cholesky_solve", "cholesky_inverse", "lu", "lu_unpack", "lu_solve",
    "frobenius_norm", "nuclear_norm", "triangular_solve",
]


def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (``torch.cross``).

    With ``dim=None`` (deprecated) the first dimension of ``input`` of size 3
    is used, as torch does; prefer :func:`ptcore.linalg.cross`.
    """
    _check_tensor(input, "cross", "input", 1)
    _check_tensor(other, "cross", "other", 2)
    dim = int_param(dim, "cross", "dim")
    _refuse_grad_out(out, "linalg_cross", input, other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of linalg.cross "
                      "in a future release.", UserWarning, stacklevel=2)
        for i, s in enumerate(input.shape):
            if s == 3:
                dim = i
                break
        else:
            raise RuntimeError("no dimension of size 3 in input")
    r = ptcore.linalg.cross(input, other, dim=dim)
    if isinstance(out, _TensorBase) and out.dtype is r.dtype:
        check_out_overlaps(out, (input, other))     # (as linalg.cross: none of the inputs)
    return _finish(r, out, "cross")


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)


_THETA13 = 5.371920351148152


def _square_check(A, fn):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def matrix_exp(input):
    """Matrix exponential of (batches of) square matrices (``torch.matrix_exp``):
    scaling and squaring with the degree-13 Pade approximant (Higham 2005),
    computed in double precision."""
    A = input
    _check_tensor(A, "matrix_exp", "input", 1)
    _square_check(A, "linalg.matrix_exp")
    if not (A.dtype.is_floating_point or A.is_complex()):
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(A.dtype)}")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return ptcore.exp(A)
    wdt = _C.complex128 if A.is_complex() else _C.float64
    X = A.to(wdt) if A.dtype is not wdt else A
    with ptcore.no_grad():
        norm1 = ptcore.abs(X.detach()).sum(-2).amax(-1)          # 1-norm per matrix
        ratio = ptcore.where(ptcore.isfinite(norm1), norm1, ptcore.zeros_like(norm1)) / _THETA13
        s = ptcore.clamp(ptcore.ceil(ptcore.log2(ratio)), min=0)
        s = ptcore.where(ratio > 0, s, ptcore.zeros_like(s))
        smax = builtins.int(s.max().item()) if s.numel() else 0
    scale = ptcore.pow(2.0, -s).to(X.dtype).unsqueeze(-1).unsqueeze(-1)
    X = X * scale
    eye = ptcore.eye(n, dtype=wdt, device=A.device)
    b = _PADE13
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 +
             b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + \
        b[0] * eye
    R = ptcore.linalg.solve(V - U, V + U)
    for k in builtins.range(smax):
        sq = R @ R
        R = ptcore.where((s > k).unsqueeze(-1).unsqueeze(-1), sq, R)
    return R.to(A.dtype) if R.dtype is not A.dtype else R


def _broadcast_mats(B, A):
    batch = ptcore.broadcast_shapes(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    return (B.expand(*batch, *B.shape[-2:]), A.expand(*batch, *A.shape[-2:]))


def _check_linear_solve(b, A, name):
    """PyTorch's linearSolveCheckInputs: same dtype, square A, matching rows."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(b.dtype)} and A of type {_tname(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")


def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve ``A X = B`` given the Cholesky factor of ``A`` (``torch.cholesky_solve``)."""
    B, L = input, input2
    _check_tensor(B, "cholesky_solve", "input", 1)
    _check_tensor(L, "cholesky_solve", "input2", 2)
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions "
                           "instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions "
                           "instead")
    _check_linear_solve(B, L, "cholesky_solve")
    _refuse_grad_out(out, "cholesky_solve", B, L)
    if _is_int_dtype(B.dtype):
        raise NotImplementedError(f"\"cholesky_solve_cpu\" not implemented for '{_tname(B.dtype)}'")
    B, L = _broadcast_mats(B, L)
    L = _factor_triangle(L, upper)
    if upper:
        L = L.mH
    if L.requires_grad and ptcore.is_grad_enabled():
        # general solves: torch's backward gives all of L a gradient (solve_triangular's
        # only the triangle); solve_ex does not raise on a singular factor
        y = ptcore.linalg.solve_ex(L, B)[0]
        return _finish_castable(ptcore.linalg.solve_ex(L.mH, y)[0], out, "cholesky_solve")
    # triangular solves: a zero on L's diagonal gives infs/nans as torch's potrs, no error
    y = ptcore.linalg.solve_triangular(L, B, upper=False)
    return _finish_castable(ptcore.linalg.solve_triangular(L.mH, y, upper=True), out,
                            "cholesky_solve")


def _factor_triangle(L, upper):
    """The triangle of a Cholesky factor that torch's LAPACK calls (potrs, potri) read:
    what the other triangle holds is ignored.  Gradients still reach all of ``L``, as
    torch's backward formulas give them."""
    tri = L.triu() if upper else L.tril()
    return L + (tri - L).detach() if L.requires_grad else tri


def cholesky_inverse(input, upper=False, *, out=None):
    """Inverse of ``A`` from its Cholesky factor (``torch.cholesky_inverse``)."""
    L = input
    _check_tensor(L, "cholesky_inverse", "input", 1)
    _square_check(L, "cholesky_inverse")
    _refuse_grad_out(out, "cholesky_inverse", L)
    if L.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise NotImplementedError(
            f"\"cholesky_inverse_out_cpu\" not implemented for '{_tname(L.dtype)}'")
    Li = ptcore.linalg.inv(_factor_triangle(L, upper))
    r = Li @ Li.mH if upper else Li.mH @ Li
    return _finish_castable(r, out, "cholesky_inverse")


LUWithInfo = _named("_lu_with_info", ["LU", "pivots", "info"], out_twin=False)


LUUnpackResult = _named("lu_unpack", ["P", "L", "U"])


def lu(A, pivot=True, get_infos=False, out=None):
    """LU factorisation, legacy API (``torch.lu``): ``(LU, pivots)`` or
    ``(LU, pivots, infos)``; prefer :func:`ptcore.linalg.lu_factor`."""
    _check_tensor(A, "lu", "A", 1)
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", UserWarning, stacklevel=2)
    if A.dim() < 2:
        raise RuntimeError("torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    LU, piv, info = ptcore.linalg.lu_factor_ex(A, pivot=pivot)
    if out is not None:
        res = [_write_out(LU, out[0]), _write_out(piv, out[1])]
        if get_infos:
            res.append(_write_out(info, out[2]))
        return tuple(res)
    if get_infos:
        return LUWithInfo(LU, piv, info)
    return LU, piv


def _unpack_pivots_cpu(piv, m):
    """The CPU loop ``unpack_pivots``: LAPACK's 1-based row interchanges
    ``piv`` (nb, k) -> the permutations (nb, m) int64 with
    ``P[..., perm[i], i] = 1``."""
    import numpy as np
    p = np.asarray(piv.numpy()).astype(np.int64) - 1
    nb, k = p.shape
    if ((p < 0) | (p >= m)).any():
        raise RuntimeError(f"torch.lu_unpack: pivots out of range [1, {m}]")
    perm = np.tile(np.arange(m, dtype=np.int64), (nb, 1))
    rows = np.arange(nb)
    for i in builtins.range(k):
        j = p[:, i]
        a = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = a
    return _C.from_numpy(perm)


def _perm_from_pivots(piv, m, dt):
    """The permutation matrices ``P`` (dtype ``dt``, on the pivots' device)
    with ``P @ L @ U == A`` from LAPACK's 1-based row interchanges (the
    device's loop ``unpack_pivots``, as ATen's)."""
    batch = tuple(piv.shape[:-1])
    k = piv.shape[-1]
    nb = math.prod(batch)
    dev = piv.device
    perm = _cpu_kernel("unpack_pivots", dev, _unpack_pivots_cpu)(piv.detach().reshape(nb, k), m)
    P = _C.zeros(nb, m, m, dtype=dt, device=dev)
    if nb and m:
        P.scatter_(1, perm.unsqueeze(1), _C.ones(nb, 1, m, dtype=dt, device=dev))
    return P.reshape(*batch, m, m)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """Unpack ``(LU, pivots)`` from :func:`lu` into ``P, L, U`` with ``A = P L U``
    (``torch.lu_unpack``)."""
    _check_tensor(LU_data, "lu_unpack", "LU_data", 1)
    _check_tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if LU_data.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = builtins.min(m, n)
    if unpack_pivots:
        if LU_pivots.dtype is not _C.int32:
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by "
                "torch.linalg.lu_factor")
        if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
            raise RuntimeError(
                "torch.lu_unpack: Expected LU_pivots.size(-1) == min(LU_data.size(-1), "
                f"LU_data.size(-2)), but got {LU_pivots.shape[-1] if LU_pivots.dim() else 0}")
    dt = LU_data.dtype
    empty = ptcore.empty(0, dtype=dt, device=LU_data.device)
    if unpack_data:
        Lfull = ptcore.tril(LU_data, -1).narrow(-1, 0, k)
        L = Lfull + ptcore.eye(m, k, dtype=dt, device=LU_data.device)
        U = ptcore.triu(LU_data.narrow(-2, 0, k))
    else:
        L = U = empty
    if unpack_pivots:
        P = _perm_from_pivots(LU_pivots, m, dt)
    else:
        P = empty
    if out is not None:
        return as_out(LUUnpackResult(copy_out_exact(out[0], P), copy_out_exact(out[1], L),
                                     copy_out_exact(out[2], U)))
    return LUUnpackResult(P, L, U)


def lu_solve(input, LU_data, LU_pivots, *, out=None):
    """Solve ``A x = b`` from ``A``'s LU factorisation (``torch.lu_solve``)."""
    b = input
    _check_tensor(b, "lu_solve", "input", 1)
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                  "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                  "with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    if b.dim() < 2:
        raise RuntimeError(f"linalg.lu_solve: Expected B to have at least 2 dimensions, but it "
                           f"has {b.dim()} dimensions instead")
    _square_check(LU_data, "linalg.lu_solve")
    _refuse_grad_out(out, "linalg_lu_solve", b, LU_data)
    if b.shape[-2] != LU_data.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({LU_data.shape[-2]}x{LU_data.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    if b.dtype is not LU_data.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_tname(LU_data.dtype)} and B of type "
                           f"{_tname(b.dtype)} instead")
    P, L, U = lu_unpack(LU_data, LU_pivots)
    b, P = _broadcast_mats(b, P)
    b, L = _broadcast_mats(b, L)
    b, U = _broadcast_mats(b, U)
    y = ptcore.linalg.solve(L, P.mT @ b)
    return _finish(ptcore.linalg.solve(U, y), out, "lu_solve")


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated; ``linalg.vector_norm(input, 2, dim, keepdim)`` (``torch.frobenius_norm``)."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2)
    return _write_out(ptcore.linalg.vector_norm(input, 2., dim, keepdim), out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated; ``linalg.matrix_norm(input, 'nuc', dim, keepdim)`` (``torch.nuclear_norm``)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
                  "will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.dim()} dimensions instead.")
        dim = (0, 1)
    return _write_out(ptcore.linalg.matrix_norm(input, "nuc", tuple(dim), keepdim), out)


TriangularSolveResult = _named("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Solve a triangular system, legacy API (``torch.triangular_solve``):
    returns ``(solution, cloned_coefficient)``."""
    check_out_arg(out, "triangular_solve", 2)
    b = input
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                  "release.\ntorch.linalg.solve_triangular has its arguments reversed and does "
                  "not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
                  "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
                  UserWarning, stacklevel=2)
    for pos, (name, flag) in enumerate((("upper", upper), ("transpose", transpose),
                                        ("unitriangular", unitriangular)), 3):
        _bool_param(flag, "triangular_solve", name, pos)
    _check_tensor(b, "triangular_solve", "input", 1)
    _check_tensor(A, "triangular_solve", "A", 2)
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.dim()} dimensions instead")
    _check_linear_solve(b, A, "triangular_solve")
    T = ptcore.triu(A) if upper else ptcore.tril(A)
    if unitriangular:
        n = A.shape[-1]
        eye = ptcore.eye(n, dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    if transpose:
        T = T.mT
    bb, TT = _broadcast_mats(b, T)
    # a zero on the diagonal gives infs/nans as torch's trtrs, no error
    sol = ptcore.linalg.solve_triangular(TT, bb, upper=upper != transpose)
    coef = _fresh(_broadcast_mats(b, A)[1])
    if out is not None:
        return as_out(TriangularSolveResult(copy_out_exact(out[0], sol), copy_out_exact(out[1], coef)))
    return TriangularSolveResult(sol, coef)


# Tensor.lu gives a plain tuple (torch.lu's named one is the function's)
_method_form("lu", lambda self, pivot=True, get_infos=False: tuple(lu(self, pivot, get_infos)))


# every public function and method above becomes an entry of the dispatch point
from ptcore._dispatch.generate import bind_module as _bind_module  # noqa: E402
_bind_module(globals(), "linalg")
del _bind_module
