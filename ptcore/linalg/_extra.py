"""Composite ``torch.linalg`` functions built from other ptcore ops.

``solve_triangular``, ``lu``, ``lu_solve``, ``cond``,
``householder_product``, ``tensorinv``, ``tensorsolve``, ``vander`` and the
top-level ``geqrf``/``orgqr``/``ormqr``.  They are compositions of
differentiable ptcore ops (so gradients flow through their parts), except
``lu`` (a custom autograd Function with PyTorch's formula) and ``geqrf``
(whose derivative PyTorch does not implement either).
"""
import builtins as _b
import math as _math

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel
from ptcore._ops.linalg import _broadcast_batch, _refuse_grad_out
from ptcore._ops._out import check_out_arg
from ptcore.linalg._factor import _nt, _out, _FLOATS, LinAlgError, _bools  # noqa: F401

__all__ = ["solve_triangular", "lu", "lu_solve", "cond", "householder_product", "tensorinv",
           "tensorsolve", "vander", "geqrf", "orgqr", "ormqr", "common_notes", "ldl_factor",
           "ldl_factor_ex", "ldl_solve"]

LUResult = _nt("linalg_lu", ["P", "L", "U"])
GeqrfResult = _nt("geqrf", ["a", "tau"])

common_notes = {
    "experimental_warning": """This function is "experimental" and it may change in a future PyTorch release.""",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with "
                 "the CPU.",
    "sync_note_ex": r"When the inputs are on a CUDA device, this function synchronizes only when "
                    r":attr:`check_errors`\ `= True`.",
    "sync_note_has_ex": ("When inputs are on a CUDA device, this function synchronizes that "
                         "device with the CPU. For a version of this function that does not "
                         "synchronize, see :func:`{}`."),
}


def _tensor_arg(x, fn, name):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def _lapack_dtype(dt, kernel):
    """PyTorch's dispatch error for dtypes its LAPACK kernel lacks."""
    if dt not in _FLOATS:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt._legacy}'")


def _shape_str(s):
    return "[" + ", ".join(str(int(v)) for v in s) + "]"


# ---------------------------------------------------------------------------
# triangular solve
# ---------------------------------------------------------------------------
def _tri(A, upper, unitriangular):
    """The used triangle of ``A`` (unit diagonal substituted when asked)."""
    if unitriangular:
        n = A.shape[-1]
        T = ptcore.triu(A, 1) if upper else ptcore.tril(A, -1)
        return T + ptcore.eye(n, dtype=A.dtype, device=A.device)
    return ptcore.triu(A) if upper else ptcore.tril(A)


def _substitute(T, B, upper):
    """Row-by-row forward/back substitution for ``T X = B``."""
    n = T.shape[-1]
    batch = _broadcast_batch(tuple(B.shape[:-2]), tuple(T.shape[:-2]))
    T = T.expand(*batch, n, n)
    B = B.expand(*batch, n, B.shape[-1])
    rows = [None] * n
    for i in (reversed(range(n)) if upper else range(n)):
        acc = B[..., i, :]
        for j in (range(i + 1, n) if upper else range(i)):
            acc = acc - T[..., i, j].unsqueeze(-1) * rows[j]
        rows[i] = acc / T[..., i, i].unsqueeze(-1)
    return ptcore.stack(rows, -2)


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``
    (``torch.linalg.solve_triangular``).

    Only the ``upper`` (or lower) triangle of ``A`` is read; with
    ``unitriangular`` its diagonal is taken to be ones.  Batch dimensions
    broadcast; the result has ``A``'s dtype (``B`` is cast to it, as torch),
    unless ``B`` is complex and ``A`` real (then promoted).

    Parameters
    ----------
    A : Tensor
        ``(*, n, n)`` triangular matrices.
    B : Tensor
        ``(*, n, k)`` (``(*, k, n)`` when ``left=False``) right-hand sides.
    upper : bool
        Whether ``A`` is upper (True) or lower (False) triangular.

    Returns
    -------
    Tensor
        The solution ``X``.
    """
    check_out_arg(out, "linalg_solve_triangular")
    _bools("linalg_solve_triangular", upper=upper, left=left, unitriangular=unitriangular)
    A = input
    fn = "linalg.solve_triangular"
    _tensor_arg(A, "linalg_solve_triangular", "input")
    _tensor_arg(B, "linalg_solve_triangular", "B")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if B.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    if A.shape[-2] != n:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {n} matrices")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    # as torch: the solve runs in A's dtype (B is cast to it: an int/half A is
    # refused whatever B; float32 A with float64 B gives float32); only a complex
    # B with a real A promotes (torch would drop B's imaginary part)
    dt = ptcore.promote_types(A.dtype, B.dtype) if B.dtype.is_complex and not A.dtype.is_complex \
        else A.dtype
    _lapack_dtype(A.dtype, "triangular_solve_cpu")
    _refuse_grad_out(out, "linalg_solve_triangular", A, B)
    _broadcast_batch(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    if A.dtype is not dt:
        A = A.to(dt)
    if B.dtype is not dt:
        B = B.to(dt)
    T = _tri(A, upper, unitriangular)
    if B.dim() < A.dim():       # never let solve read B as a batch of vectors
        B = B.reshape((1,) * (A.dim() - B.dim()) + tuple(B.shape))
    if n and not unitriangular and bool((T.diagonal(dim1=-2, dim2=-1) == 0).any()):
        # singular: plain substitution, giving PyTorch's infs/nans (no error)
        if left:
            X = _substitute(T, B, upper)
        else:
            X = _substitute(T.mT, B.mT, not upper).mT
    else:
        X = ptcore.linalg.solve_ex(T, B, left=left)[0]
    return _out(X, out, "linalg_solve_triangular")


# ---------------------------------------------------------------------------
# LU
# ---------------------------------------------------------------------------
def _lu_backward(gL, gU, P, L, U):
    """PyTorch's ``linalg_lu_backward`` (square, wide and tall cases)."""
    m, n = L.shape[-2], U.shape[-1]
    k = _b.min(m, n)
    if m == n:
        gA = L.mH @ gL
        gA = ptcore.tril(gA, -1) + ptcore.triu(gU @ U.mH)
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = L.mH @ gL - ptcore.triu(gU) @ U.mH
        gA = solve_triangular(U1.mH, ptcore.tril(gA, -1), upper=False, left=False)
        gA = ptcore.cat([gA + ptcore.triu(gU.narrow(-1, 0, k)), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
    else:
        L1 = L.narrow(-2, 0, k)
        gA = gU @ U.mH - L.mH @ ptcore.tril(gL, -1)
        gA = solve_triangular(L1.mH, ptcore.triu(gA), upper=True, unitriangular=True)
        gA = ptcore.cat([gA + ptcore.tril(gL.narrow(-2, 0, k), -1), gL.narrow(-2, k, m - k)],
                        -2)
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
    return P @ gA


# name -> the autograd.Function of lu / geqrf / ldl_factor_ex / ldl_solve:
# supplied by the autograd layer (ptcore.autograd._composite_functions, with
# the forwards below and _lu_backward) when autograd installs
FUNCTIONS = {}


def _lu_forward(A):
    """(P, L, U) of ``A`` (no recording)."""
    LU, piv, _ = ptcore.linalg.lu_factor_ex(A)
    if piv.shape[-1] == 0:      # k = 0: nothing to factor
        m, n = A.shape[-2:]
        batch = tuple(A.shape[:-2])
        P = ptcore.eye(m, dtype=A.dtype, device=A.device).expand(*batch, m, m).clone()
        L = ptcore.zeros(batch + (m, 0), dtype=A.dtype, device=A.device)
        U = ptcore.zeros(batch + (0, n), dtype=A.dtype, device=A.device)
    else:
        P, L, U = ptcore.lu_unpack(LU, piv)
    return P, L, U


def lu(A, *, pivot=True, out=None):
    """LU decomposition with partial pivoting ``A = P L U``
    (``torch.linalg.lu``).

    Parameters
    ----------
    A : Tensor
        ``(*, m, n)`` matrices (float or complex).
    pivot : bool
        Must be True on the CPU (as PyTorch).

    Returns
    -------
    (P, L, U) : named tuple ``linalg_lu``
        ``P`` ``(*, m, m)`` permutation, ``L`` ``(*, m, k)`` unit lower
        triangular, ``U`` ``(*, k, n)`` upper triangular, ``k = min(m, n)``.
    """
    check_out_arg(out, "linalg_lu", 3)
    _bools("linalg_lu", pivot=pivot)
    _tensor_arg(A, "linalg_lu", "A")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_shape_str(A.shape)} instead")
    if not pivot:
        # the same dtype checks as lu_factor first, then its pivot error (none
        # for no elements, where torch's P is an empty 1-d tensor)
        ptcore.linalg.lu_factor_ex(A.detach(), pivot=False)
        _, L, U = FUNCTIONS["lu"].apply(A)
        return _out(LUResult(ptcore.empty(0, dtype=A.dtype, device=A.device), L, U), out,
                    "linalg_lu")
    return _out(LUResult(*FUNCTIONS["lu"].apply(A)), out, "linalg_lu")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve ``A X = B`` from ``A``'s LU factorisation
    (``torch.linalg.lu_solve``); ``adjoint`` solves ``A^H X = B``,
    ``left=False`` solves ``X A = B``.  Batch dims of ``LU`` and ``B``
    broadcast.

    Parameters
    ----------
    LU, pivots : Tensor
        As returned by :func:`ptcore.linalg.lu_factor`.
    B : Tensor
        ``(*, n, k)`` right-hand sides (``(*, k, n)`` with ``left=False``).
    """
    check_out_arg(out, "linalg_lu_solve")
    fn = "linalg.lu_solve"
    _bools("linalg_lu_solve", left=left, adjoint=adjoint)
    for x, nm in ((LU, "LU"), (pivots, "pivots"), (B, "B")):
        _tensor_arg(x, "linalg_lu_solve", nm)
    if LU.dim() < 2:
        raise RuntimeError(f"torch.{fn}: The input tensor A must have at least 2 dimensions.")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"torch.{fn}: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {n} matrices")
    if B.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    dt = LU.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"torch.{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {dt._legacy}")
    if B.dtype is not dt:
        raise RuntimeError(f"{fn}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {dt._legacy} and B of type {B.dtype._legacy} instead")
    if pivots.dtype is not _C.int32:
        raise RuntimeError(f"{fn}: pivots should be a Tensor of scalar type torch.int32")
    if pivots.dim() < 1 or pivots.shape[-1] != n:
        raise RuntimeError(f"{fn}: Number of pivots per batch should be same as the dimension "
                           f"of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{fn}: Expected LU.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {_shape_str(pivots.shape)} instead")
    _lapack_dtype(dt, "lu_solve_cpu")
    if n == 0:
        P = ptcore.zeros(tuple(LU.shape[:-2]) + (0, 0), dtype=dt, device=LU.device)
    else:
        P = ptcore.lu_unpack(LU.detach(), pivots, unpack_data=False).P
    if P.dtype is not dt:
        P = P.to(dt)

    def sl(T, X, upper, unit, lft):
        return solve_triangular(T, X, upper=upper, unitriangular=unit, left=lft)
    if left and not adjoint:        # X = U^-1 L^-1 P^T B
        X = sl(LU, sl(LU, P.mT @ B, False, True, True), True, False, True)
    elif left:                      # X = P L^-H U^-H B
        X = P @ sl(LU.mH, sl(LU.mH, B, False, False, True), True, True, True)
    elif not adjoint:               # X = B U^-1 L^-1 P^T
        X = sl(LU, sl(LU, B, True, False, False), False, True, False) @ P.mT
    else:                           # X = B P L^-H U^-H
        X = sl(LU.mH, sl(LU.mH, B @ P, True, True, False), False, False, False)
    return _out(X, out, "linalg_lu_solve")


# ---------------------------------------------------------------------------
# condition number
# ---------------------------------------------------------------------------
def cond(input, p=None, *, out=None):
    """Condition number of matrices in the norm ``p`` (``torch.linalg.cond``).

    ``p`` in (None, 2, -2) uses the singular values (any shape); 'nuc' is
    ``sum(s) * sum(1 / s)``; 'fro', inf, -inf, 1 and -1 use
    ``norm(A, p) * norm(inv(A), p)`` (square matrices; ``inf`` for singular
    ones).  Empty matrices give 0.  The result is real.  Unlike PyTorch
    (whose backward fails on an in-place update), the latter norms are
    differentiable.
    """
    check_out_arg(out, "linalg_cond")
    A = input
    _tensor_arg(A, "linalg_cond", "input")
    is_str = isinstance(p, str)
    valid = (p is None or (is_str and p in ("fro", "nuc")) or (
        not is_str and not isinstance(p, bool) and p in (2, -2, 1, -1, _math.inf, -_math.inf)))
    if is_str:
        if A.dim() < 2:
            raise RuntimeError(f"linalg.cond(ord={p}): The input tensor A must have at least 2 "
                               f"dimensions.")
        if A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, "
                               f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    elif A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if not valid:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    dt = A.dtype
    rdt = dt.to_real() if dt.is_complex else dt
    batch = tuple(A.shape[:-2])
    if A.numel() == 0:
        return _out(ptcore.zeros(batch, dtype=rdt, device=A.device), out, "linalg_cond", castable=True)
    svd_p = p is None or p == "nuc" or (not is_str and p in (2, -2))
    if svd_p:
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as "
                               f"input. Got {dt._legacy}")
        if dt not in _FLOATS:
            raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{dt._legacy}'")
        s = ptcore.linalg.svdvals(A)
        if p == "nuc":
            return _out(s.sum(-1) * (1 / s).sum(-1), out, "linalg_cond", castable=True)
        smax = s.narrow(-1, 0, 1).squeeze(-1)
        smin = s.narrow(-1, s.shape[-1] - 1, 1).squeeze(-1)
        r = smin / smax if (p is not None and p == -2) else smax / smin
        return _out(r, out, "linalg_cond", castable=True)
    if A.shape[-1] != A.shape[-2]:
        ps = str(int(p)) if abs(p) == 1 else ("inf" if p > 0 else "-inf")
        raise RuntimeError(f"linalg.cond(ord={ps}): A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"linalg.inv: Expected a floating point or complex tensor as input. "
                           f"Got {dt._legacy}")
    if dt not in _FLOATS:
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {dt._legacy}")
    Ainv, info = ptcore.linalg.inv_ex(A)
    r = ptcore.linalg.matrix_norm(A, p) * ptcore.linalg.matrix_norm(Ainv, p)
    bad = info > 0
    if bool(bad.any()):
        r = ptcore.where(bad, ptcore.full((), _math.inf, dtype=rdt), r)
    # as torch (for NumPy): a NaN product (0 * inf, a NaN input) is inf
    r = r.nan_to_num(_math.inf, _math.inf, -_math.inf)
    return _out(r, out, "linalg_cond", castable=True)


# ---------------------------------------------------------------------------
# Householder reflectors: geqrf, householder_product (orgqr), ormqr
# ---------------------------------------------------------------------------
def _reflector(A, i):
    """v_i of the compact form: 1 at row i, A[i+1:, i] below (rows i: only)."""
    tail = A[..., i + 1:, i]
    one = ptcore.ones(tuple(A.shape[:-2]) + (1,), dtype=A.dtype, device=A.device)
    return ptcore.cat([one, tail], -1)


def _apply_left(C, v, t, i):
    """Rows i: of ``(I - t v v^H) C``; ``t`` of shape (*,)."""
    Ci = C[..., i:, :]
    w = v.conj().unsqueeze(-2) @ Ci                      # (*, 1, p)
    Ci = Ci - (t.unsqueeze(-1) * v).unsqueeze(-1) * w
    return ptcore.cat([C[..., :i, :], Ci], -2) if i else Ci


def _apply_right(C, v, t, i):
    """Columns i: of ``C (I - t v v^H)``."""
    Ci = C[..., :, i:]
    w = Ci @ v.unsqueeze(-1)                             # (*, p, 1)
    Ci = Ci - w * (t.unsqueeze(-1) * v.conj()).unsqueeze(-2)
    return ptcore.cat([C[..., :, :i], Ci], -1) if i else Ci


def householder_product(input, tau, *, out=None):
    """The first ``n`` columns of the product of the Householder reflectors
    ``H_i = I - tau_i v_i v_i^H`` (``torch.linalg.householder_product``;
    LAPACK's ``orgqr``), ``v_i`` stored below the diagonal of column ``i`` of
    ``A`` (implicit 1 on the diagonal), as :func:`ptcore.geqrf` returns.

    Parameters
    ----------
    A : Tensor
        ``(*, m, n)`` with ``m >= n``.
    tau : Tensor
        ``(*, k)`` with ``k <= n``, the same batch shape and dtype as ``A``.
    """
    check_out_arg(out, "linalg_householder_product")
    A = input
    fn = "torch.linalg.householder_product"
    _tensor_arg(A, "linalg_householder_product", "input")
    _tensor_arg(tau, "linalg_householder_product", "tau")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    k = tau.shape[-1]
    if n < k:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {_shape_str(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{fn}: tau dtype {tau.dtype._legacy} does not match input dtype "
                           f"{A.dtype._legacy}")
    _lapack_dtype(A.dtype, "orgqr_cpu")
    _refuse_grad_out(out, "linalg_householder_product", A, tau)
    return _out(_loop_unless_recording("orgqr", _orgqr, A, tau)(A, tau), out,
                "linalg_householder_product", castable=True)


def _records(*ts):
    """Whether autograd records a graph through ``ts``."""
    return ptcore.is_grad_enabled() and any(t.requires_grad for t in ts)


def _loop_unless_recording(name, composite, *ts):
    """The device's loop ``name``; the composite (differentiable through its
    ops, on any device) when a gradient is recorded.  On the CPU the loop is
    the composite."""
    if _records(*ts):
        return composite
    return _cpu_kernel(name, ts[0].device, composite)


def _orgqr(A, tau):
    """The reflectors applied one at a time (the CPU loop ``orgqr``)."""
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    batch = tuple(A.shape[:-2])
    Q = ptcore.eye(m, n, dtype=A.dtype, device=A.device).expand(*batch, m, n)
    if k == 0 or A.numel() == 0:
        # no reflector, or an empty batch: the identity's columns; torch still
        # records a node (its gradients None, its tangent zeros)
        return FUNCTIONS["orgqr_no_reflectors"].apply(A, tau, Q)
    for i in reversed(range(k)):
        Q = _apply_left(Q, _reflector(A, i), tau[..., i], i)
    return Q


def orgqr(input, input2, *, out=None):
    """Alias of :func:`ptcore.linalg.householder_product` (``torch.orgqr``)."""
    check_out_arg(out, "orgqr")
    return householder_product(input, input2, out=out)


def _geqrf_impl(A):
    """(a, tau) of ``geqrf``: the device's loop ``geqrf``."""
    return _cpu_kernel("geqrf", A.device, _geqrf_cpu)(A)


def _geqrf_cpu(A):
    """Householder QR one column at a time (the CPU loop ``geqrf``)."""
    m, n = A.shape[-2:]
    k = _b.min(m, n)
    batch = tuple(A.shape[:-2])
    a = A.clone()
    tau = ptcore.zeros(batch + (k,), dtype=A.dtype, device=A.device)
    cplx = A.dtype.is_complex
    for i in range(k):
        alpha = a[..., i, i]
        x = a[..., i + 1:, i]
        xnorm = ptcore.linalg.vector_norm(x, dim=-1)
        ar = alpha.real if cplx else alpha
        ai2 = alpha.imag ** 2 if cplx else 0.0
        nrm = ptcore.sqrt(ar * ar + ai2 + xnorm * xnorm)
        beta = -ptcore.copysign(nrm, ar)
        keep = (xnorm == 0) & (alpha.imag == 0) if cplx else (xnorm == 0)
        beta_safe = ptcore.where(keep, ptcore.ones_like(beta), beta)
        t = (beta_safe - alpha) / beta_safe
        t = ptcore.where(keep, ptcore.zeros_like(t), t)
        denom = alpha - beta_safe
        denom = ptcore.where(keep, ptcore.ones_like(denom), denom)
        v_tail = x / denom.unsqueeze(-1)
        a[..., i + 1:, i] = v_tail
        a[..., i, i] = ptcore.where(keep, alpha, beta.to(A.dtype) if cplx else beta)
        tau[..., i] = t
        if i + 1 < n:
            v = ptcore.cat([ptcore.ones(batch + (1,), dtype=A.dtype, device=A.device), v_tail], -1)
            C = a[..., i:, i + 1:]
            w = v.conj().unsqueeze(-2) @ C
            C.sub_((t.conj().unsqueeze(-1) * v).unsqueeze(-1) * w)
    return a, tau


def geqrf(input, *, out=None):
    """QR decomposition in LAPACK's compact Householder form (``torch.geqrf``).

    ``R`` is on and above the diagonal of ``a``, the
    reflectors ``v_i`` (implicit leading 1) below it, and their scalars
    ``tau``; ``Q = H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``.  Not
    differentiable (as PyTorch).

    Returns
    -------
    (a, tau) : named tuple ``geqrf``
    """
    check_out_arg(out, "geqrf", 2)
    _tensor_arg(input, "geqrf", "input")
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _lapack_dtype(input.dtype, "geqrf_cpu")
    if input.dtype.is_complex and input.requires_grad and ptcore.is_grad_enabled():
        raise RuntimeError("geqrf does not support automatic differentiation for outputs "
                           "with complex dtype.")      # (torch: at the call)
    a, tau = FUNCTIONS["geqrf"].apply(input)
    return _out(GeqrfResult(a, tau), out, "torch.geqrf", castable=True)   # (torch copies into out)


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Multiply ``other`` (``input3``) by ``Q`` (or ``Q^H`` with ``transpose``)
    from the left (or the right with ``left=False``), ``Q`` given by the
    Householder reflectors in ``(input, tau)`` (``tau`` is ``input2``) as
    :func:`geqrf` returns them (``torch.ormqr``)."""
    check_out_arg(out, "ormqr")
    tau, other = input2, input3
    fn = "torch.ormqr"
    _tensor_arg(input, "ormqr", "input")
    _tensor_arg(tau, "ormqr", "input2")
    _tensor_arg(other, "ormqr", "input3")
    if input.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError(f"{fn}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{fn}: other.shape[{side}] must be equal to input.shape[-2]")
    k = tau.shape[-1] if tau.dim() else 1
    if tau.dim() == 0 or k != _b.min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{fn}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{input.dim()}")
    if input.dim() != other.dim():
        raise RuntimeError(f"{fn}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.dim()} and input.ndim is "
                           f"equal to {input.dim()}")
    if input.dim() > 2:
        if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
            raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                               f"input.shape[:-2], but got {_shape_str(tau.shape[:-1])}")
        if tuple(other.shape[:-2]) != tuple(input.shape[:-2]):
            raise RuntimeError(f"{fn}: Expected batch dimensions of other to be equal to "
                               f"input.shape[:-2], but got {_shape_str(other.shape[:-2])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{fn}: Expected input and tau to have the same dtype, but input has "
                           f"dtype{input.dtype._legacy} and tau has dtype {tau.dtype._legacy}")
    if other.dtype is not input.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but input "
                           f"has dtype{input.dtype._legacy} and other has dtype "
                           f"{other.dtype._legacy}")
    _lapack_dtype(input.dtype, "ormqr_cpu")
    C = _loop_unless_recording("ormqr", _ormqr, input, tau, other)(input, tau, other,
                                                                   bool(left), bool(transpose))
    return _out(C, out, "ormqr")


def _ormqr(input, tau, other, left, transpose):
    """The reflectors applied one at a time (the CPU loop ``ormqr``)."""
    k = tau.shape[-1]
    if k == 0 or input.numel() == 0:
        # no reflector, or an empty batch: ``other`` itself (as torch, gradients
        # for ``other`` only)
        return other.clone()
    # Q = H_1 ... H_k; Q^H = H_k^H ... H_1^H with H_i^H = I - conj(tau_i) v v^H
    forward_order = left == bool(transpose)
    order = range(k) if forward_order else reversed(range(k))
    C = other
    for i in order:
        t = tau[..., i]
        if transpose:
            t = t.conj()
        v = _reflector(input, i)
        C = _apply_left(C, v, t, i) if left else _apply_right(C, v, t, i)
    return C


# ---------------------------------------------------------------------------
# tensor inverse / solve, Vandermonde
# ---------------------------------------------------------------------------
def tensorinv(input, ind=2, *, out=None):
    """Inverse of ``A`` seen as a linear map from the tensors of shape
    ``A.shape[ind:]`` to those of shape ``A.shape[:ind]``
    (``torch.linalg.tensorinv``); the result has shape
    ``A.shape[ind:] + A.shape[:ind]``."""
    check_out_arg(out, "linalg_tensorinv")
    A = input
    _tensor_arg(A, "linalg_tensorinv", "input")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.dim():       # (torch slices the shape at ind first)
        raise RuntimeError(f"linalg.tensorinv: ind={ind} is more than the {A.dim()} dimensions "
                           f"of the input (ArrayRef: invalid slice, N = {ind}; size = {A.dim()})")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    ph, pt = _math.prod(head), _math.prod(tail)
    if ph != pt:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pt} != {ph}")
    r = ptcore.linalg.inv(A.reshape(ph, pt)).reshape(*tail, *head)
    return _out(r, out, "linalg_tensorinv", castable=True)


def tensorsolve(input, other, dims=None, *, out=None):
    """Solve ``tensordot(A, X, X.ndim) = B`` for ``X`` of shape
    ``A.shape[B.ndim:]`` (``torch.linalg.tensorsolve``); ``dims`` are moved
    to the end of ``A`` first."""
    check_out_arg(out, "linalg_tensorsolve")
    A, B = input, other
    _tensor_arg(A, "linalg_tensorsolve", "input")
    _tensor_arg(B, "linalg_tensorsolve", "other")
    if dims is not None:
        nd = A.dim()
        dims = [int(d) % nd if nd else int(d) for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        A = A.permute(*rest, *dims)
    res_shape = tuple(A.shape[B.dim():])
    pr = _math.prod(res_shape)
    po = _math.prod(A.shape[:B.dim()])
    if pr != po:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {pr} != {po}")
    X = ptcore.linalg.solve(A.reshape(po, pr), B.flatten())
    return _out(X.reshape(res_shape), out, "linalg_tensorsolve", castable=True)


def vander(x, *, N=None):
    """Vandermonde matrix ``[x^0, x^1, ..., x^(N-1)]`` along a new last
    dimension (``torch.linalg.vander``; ``N`` defaults to ``x.shape[-1]``).
    Integer inputs give int64 results (as ``cumprod``)."""
    _tensor_arg(x, "linalg_vander", "x")
    dt = x.dtype
    if not (dt in _FLOATS or (not dt.is_floating_point and not dt.is_complex
                              and dt is not ptcore.bool)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {dt._legacy}")
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = tuple(x_.shape)
    if N is not None and (isinstance(N, (bool, float, ptcore.Tensor)) or not hasattr(N, "__index__")):
        raise TypeError(f"linalg_vander(): argument 'N' must be int, not {type(N).__name__}")
    n = shape[-1] if N is None else N.__index__()
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    r = ptcore.cumprod(x_.unsqueeze(-1).expand(*shape, n - 1), -1)
    ones = ptcore.ones(shape + (1,), dtype=r.dtype, device=x.device)
    return ptcore.cat([ones, r], -1)


# ---------------------------------------------------------------------------
# LDL (Bunch-Kaufman), computed with NumPy matrix by matrix: PyTorch does not
# differentiate these either
# ---------------------------------------------------------------------------
import numpy as _np  # noqa: E402

LDLFactorResult = _nt("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = _nt("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_BK_ALPHA = (1 + _math.sqrt(17)) / 8


def _sytf2_lower(A, herm=False):
    """LAPACK's unblocked Bunch-Kaufman ``?sytf2``/``?hetf2`` (lower) on one matrix."""
    a = _np.array(A, dtype=A.dtype, copy=True)
    n = a.shape[0]
    cplx = _np.iscomplexobj(a)
    cabs1 = (lambda z: _np.abs(z.real) + _np.abs(z.imag)) if cplx else _np.abs
    piv = _np.zeros(n, _np.int32); info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else cabs1(a[k, k])
        if k < n - 1:
            col = cabs1(a[k+1:, k]); imax = k + 1 + int(_np.argmax(col)); colmax = col.max()
        else:
            colmax = 0.0; imax = k
        if max(absakk, colmax) == 0 or _np.isnan(absakk):
            if info == 0: info = k + 1
            kp = k
        else:
            if absakk >= _BK_ALPHA * colmax:
                kp = k
            else:
                row = cabs1(a[imax, k:imax]); jmax = k + int(_np.argmax(row)); rowmax = row.max()
                if imax < n - 1:
                    c2 = cabs1(a[imax+1:, imax]); rowmax = max(rowmax, c2.max())
                aii = abs(a[imax, imax].real) if herm else cabs1(a[imax, imax])
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aii >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp = imax; kstep = 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    t = a[kp+1:, kk].copy(); a[kp+1:, kk] = a[kp+1:, kp]; a[kp+1:, kp] = t
                t = a[kk+1:kp, kk].copy()
                if herm:
                    a[kk+1:kp, kk] = _np.conj(a[kp, kk+1:kp]); a[kp, kk+1:kp] = _np.conj(t)
                    a[kp, kk] = _np.conj(a[kp, kk])
                else:
                    a[kk+1:kp, kk] = a[kp, kk+1:kp]; a[kp, kk+1:kp] = t
                t = a[kk, kk]; a[kk, kk] = a[kp, kp]; a[kp, kp] = t
                if kstep == 2:
                    t = a[k+1, k]; a[k+1, k] = a[kp, k]; a[kp, k] = t
            if kstep == 1:
                if herm: a[k, k] = a[k, k].real
                if k < n - 1:
                    x = a[k+1:, k].copy()
                    if herm:
                        r1 = 1.0 / a[k, k].real
                        a[k+1:, k+1:] -= _np.tril(r1 * _np.outer(x, _np.conj(x)))
                        a[k+1:, k] = x * r1
                    else:
                        r1 = 1.0 / a[k, k]
                        a[k+1:, k+1:] -= _np.tril(r1 * _np.outer(x, x))
                        a[k+1:, k] = x * r1
            else:
                if k < n - 2:
                    if herm:
                        d = abs(a[k+1, k])
                        d11 = a[k+1, k+1].real / d
                        d22 = a[k, k].real / d
                        tt = 1.0 / (d11 * d22 - 1)
                        d21 = a[k+1, k] / d
                        d = tt / d
                        for j in range(k+2, n):
                            wk = d * (d11 * a[j, k] - d21 * a[j, k+1])
                            wkp1 = d * (d22 * a[j, k+1] - _np.conj(d21) * a[j, k])
                            a[j:, j] -= a[j:, k] * _np.conj(wk) + a[j:, k+1] * _np.conj(wkp1)
                            a[j, k] = wk; a[j, k+1] = wkp1
                            a[j, j] = a[j, j].real
                    else:
                        d21 = a[k+1, k]
                        d11 = a[k+1, k+1] / d21
                        d22 = a[k, k] / d21
                        tt = 1.0 / (d11 * d22 - 1)
                        d21 = tt / d21
                        for j in range(k+2, n):
                            wk = d21 * (d11 * a[j, k] - a[j, k+1])
                            wkp1 = d21 * (d22 * a[j, k+1] - a[j, k])
                            a[j:, j] -= a[j:, k] * wk + a[j:, k+1] * wkp1
                            a[j, k] = wk; a[j, k+1] = wkp1
                if herm:
                    a[k, k] = a[k, k].real; a[k+1, k+1] = a[k+1, k+1].real
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = -(kp + 1); piv[k+1] = -(kp + 1)
        k += kstep
    return _np.tril(a), piv, info


def _sytrs_lower(a, piv, b, herm):
    """LAPACK's ``?sytrs``/``?hetrs`` (lower) for one matrix: solves in place."""
    n = a.shape[0]
    cj = _np.conj if herm else (lambda z: z)
    k = 0
    while k < n:
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= _np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] / (a[k, k].real if herm else a[k, k])
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= _np.outer(a[k + 2:, k], b[k])
                b[k + 2:] -= _np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / cj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = b[k] / cj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:
        if piv[k] > 0:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= cj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _np_of(t):
    return t.detach().resolve_conj().numpy()


def _square_checks(A, fn):
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{dt._legacy}")


def _ldl_factor_forward(A, hermitian):
    """(LD, pivots, info) of ``A`` (no recording): the device's loop ``sytrf``."""
    return _cpu_kernel("sytrf", A.device, _ldl_factor_cpu)(A, hermitian)


def _ldl_factor_cpu(A, hermitian):
    """The CPU loop ``sytrf``: :func:`_sytf2_lower` matrix by matrix."""
    a = _np_of(A)
    n = a.shape[-1]
    batch = a.shape[:-2]
    a2 = a.reshape(_math.prod(batch), n, n)       # (-1 fails for n == 0)
    LD = _np.zeros_like(a2)
    piv = _np.zeros((a2.shape[0], n), _np.int32)
    info = _np.zeros(a2.shape[0], _np.int32)
    for i in range(a2.shape[0]):
        LD[i], piv[i], info[i] = _sytf2_lower(a2[i], hermitian and a.dtype.kind == "c")
    return (ptcore.from_numpy(LD.reshape(a.shape)), ptcore.from_numpy(piv.reshape(
        batch + (n,))), ptcore.from_numpy(info.reshape(batch)))


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """Bunch-Kaufman factorisation ``A = P L D L^T P^T`` (``L^H`` with
    ``hermitian``) of symmetric/Hermitian matrices, LAPACK's compact form
    (``torch.linalg.ldl_factor_ex``): ``LD`` holds ``L`` (unit diagonal
    implied) and the 1x1/2x2 blocks of ``D``; ``pivots`` as ``?sytrf``;
    ``info`` > 0 where ``D`` is exactly singular.  Only the lower triangle
    is read.  Not differentiable (as PyTorch)."""
    check_out_arg(out, "linalg_ldl_factor_ex", 3)
    A = input
    fn = "torch.linalg.ldl_factor_ex"
    _bools("linalg_ldl_factor_ex", hermitian=hermitian, check_errors=check_errors)
    _tensor_arg(A, "linalg_ldl_factor_ex", "self")
    _square_checks(A, fn)
    if A.dtype not in _FLOATS:
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{A.dtype._legacy}'")
    LD, piv, info = FUNCTIONS["ldl_factor_ex"].apply(A, bool(hermitian))
    if check_errors:
        _ldl_check(info, fn)
    return _out(LDLFactorExResult(LD, piv, info), out, "linalg_ldl_factor_ex")


def _ldl_check(info, fn):
    bad = info.reshape(-1)
    nz = [int(v) for v in bad.tolist() if v != 0]
    if nz:
        raise RuntimeError(f"{fn}: Unknown error code: {nz[0]}.")


def ldl_factor(input, *, hermitian=False, out=None):
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; raises when ``D`` is
    singular (``torch.linalg.ldl_factor``)."""
    check_out_arg(out, "linalg_ldl_factor", 2)
    A = input
    _bools("linalg_ldl_factor", hermitian=hermitian)
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _ldl_check(info, "torch.linalg.ldl_factor")
    return _out(LDLFactorResult(LD, piv), out, "linalg_ldl_factor")


def _ldl_solve_forward(LD, pivots, B, hermitian):
    """X of ``A X = B`` from the factorisation (no recording): the device's
    loop ``sytrs``."""
    return _cpu_kernel("sytrs", LD.device, _ldl_solve_cpu)(LD, pivots, B, hermitian)


def _ldl_solve_cpu(LD, pivots, B, hermitian):
    """The CPU loop ``sytrs``: :func:`_sytrs_lower` matrix by matrix."""
    n = LD.shape[-1]
    batch = tuple(_broadcast_batch(tuple(B.shape[:-2]), tuple(LD.shape[:-2])))
    nb = _math.prod(batch)                         # (-1 fails for empty matrices)
    ld = _np.broadcast_to(_np_of(LD), batch + (n, n)).reshape(nb, n, n)
    pv = _np.broadcast_to(_np_of(pivots).astype(_np.int64), batch + (n,)).reshape(nb, n)
    b = _np.array(_np.broadcast_to(_np_of(B), batch + tuple(B.shape[-2:])))
    b2 = b.reshape((nb,) + tuple(B.shape[-2:]))
    herm = hermitian and ld.dtype.kind == "c"
    for i in range(b2.shape[0]):
        _sytrs_lower(ld[i], pv[i], b2[i], herm)
    return ptcore.from_numpy(_np.ascontiguousarray(b2.reshape(b.shape)))


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)``
    (``torch.linalg.ldl_solve``); batch dims broadcast.  Not differentiable
    (as PyTorch)."""
    check_out_arg(out, "linalg_ldl_solve")
    fn = "torch.linalg.ldl_solve"
    _bools("linalg_ldl_solve", hermitian=hermitian)
    for x, nm in ((LD, "LD"), (pivots, "pivots"), (B, "B")):
        _tensor_arg(x, "linalg_ldl_solve", nm)
    _square_checks(LD, fn)
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{_b.max(B.dim(), 1)}, {_b.max(B.dim(), 1) - 1}], but got -2)")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{fn}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {_shape_str(pivots.shape)} instead")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype._legacy} and A of type {LD.dtype._legacy} instead.")
    _lapack_dtype(LD.dtype, "ldl_solve_cpu")
    if pivots.numel():
        # (the solve indexes rows by them: one out of range read another row, or raised
        # NumPy's IndexError)
        ap = pivots.detach().to(device="cpu", dtype=_C.int64).abs()
        if ap.max().item() > n:
            raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= "
                               "LD.size(-2). Did you properly pass the result of ldl_factor?")
        if ap.min().item() < 1:
            raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. "
                               "Did you properly pass the result of ldl_factor?")
    return _out(FUNCTIONS["ldl_solve"].apply(LD, pivots, B, bool(hermitian)), out,
                "linalg_ldl_solve")
