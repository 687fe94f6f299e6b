"""Dense factorisations and solvers on batches of matrices (LAPACK).

These are the front-ends of every device: argument checks, dtypes, shapes,
batching, ``out=``, the ``_ex``/info handling, and the post-processing
(determinant products, thresholds of singular values), written with ptcore
ops.  Inputs are reshaped to ``(batch, m, n)`` and handed to the device's
LAPACK-level loop (``cpu_kernel(name, device, cpu_loop)``, see
:data:`_CPU_LOOPS`): on the CPU the batched LAPACK drivers of
``ptcore._ops.kernels._blas``, which copy each matrix into a column-major work
buffer; on CUDA the cuSOLVER loops of ``ptcore.cuda.ops.linalg``.
"""
import builtins as _b
import math as _math

import numpy as _np

from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._dtype_utils import finfo as _finfo
from ptcore._dispatch.device import cpu_kernel as _cpu_kernel, has_loop as _has_loop, svd_takes_driver as _svd_takes_driver
from ptcore._scalar_args import bool_param as _bool_param
from ptcore._ops.linalg import _blas, _broadcast_batch, _finish, _finish_castable
from ptcore._ops._out import check_out_arg


class LinAlgError(RuntimeError):
    """A matrix was singular, not positive-definite, or a LAPACK routine did
    not converge (``torch.linalg.LinAlgError``)."""


# torch's class is torch._C._LinAlgError (torch.linalg.LinAlgError is that class):
# its name is what tracebacks and type(e).__name__ show; ptcore.linalg._LinAlgError
# is the same class, so exceptions pickle (DataLoader workers) under that name
LinAlgError.__module__ = "ptcore.linalg"
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"

from ptcore._return_types import named as _named, as_out  # noqa: E402


def _nt(name, fields):
    return _named(name, fields)


SlogdetResult = _nt("linalg_slogdet", ["sign", "logabsdet"])
InvExResult = _nt("linalg_inv_ex", ["inverse", "info"])
SolveExResult = _nt("linalg_solve_ex", ["result", "info"])
CholeskyExResult = _nt("linalg_cholesky_ex", ["L", "info"])
QRResult = _nt("linalg_qr", ["Q", "R"])
SVDResult = _nt("linalg_svd", ["U", "S", "Vh"])
EighResult = _nt("linalg_eigh", ["eigenvalues", "eigenvectors"])
EigResult = _nt("linalg_eig", ["eigenvalues", "eigenvectors"])
LstsqResult = _nt("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
LUFactorResult = _nt("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = _nt("linalg_lu_factor_ex", ["LU", "pivots", "info"])
TorchSVDResult = _nt("svd", ["U", "S", "V"])
TorchQRResult = _nt("qr", ["Q", "R"])
TorchSlogdetResult = _nt("slogdet", ["sign", "logabsdet"])

_FLOATS = (_C.float32, _C.float64, _C.complex64, _C.complex128)


# ---------------------------------------------------------------------------
# the LAPACK-level loops: name -> the CPU loop (a batched driver of
# ptcore._ops.kernels._blas, ptcore/_ops/kernels/_lapack.pxi); other devices register theirs
# under the same names with the same signatures (register_loop)
# ---------------------------------------------------------------------------
_CPU_LOOPS = {"getrf": "lu_into", "getri": "inv_into", "gesv": "solve_into",
              "potrf": "cholesky_into", "geqrf_orgqr": "qr_into", "gesvd": "svd_into",
              "syevd": "eigh_into", "geev": "eig_into", "gels": "lstsq_into"}


def _cpu_loop(name):
    attr = _CPU_LOOPS[name]

    def run(*args):
        return getattr(_blas(), attr)(*args)
    run.__name__ = attr
    return run


_CPU = {name: _cpu_loop(name) for name in _CPU_LOOPS}


def _loop(name, t):
    """The loop ``name`` for the device of tensor ``t``."""
    return _cpu_kernel(name, t.device, _CPU[name])


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _check_A(A, fn, square=True, name="A", check_dtype=True):
    if not isinstance(A, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if check_dtype:
        _check_float(A, fn)


# PyTorch lets these dtypes reach the LAPACK kernel's dispatch, which raises
# NotImplementedError naming the kernel (the other functions check first)
_KERNEL_OF = {"linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.lu_factor": "lu_cpu",
              "linalg.svd": "linalg_svd_cpu", "linalg.qr": "geqrf_cpu",
              "linalg.eigh": "linalg_eigh_cpu", "linalg.eigvalsh": "linalg_eigh_cpu",
              "linalg.eig": "linalg_eig_out_cpu", "linalg.eigvals": "linalg_eig_out_cpu",
              "linalg.cholesky": "cholesky_cpu"}
_KERNEL_OF_INT = ("linalg.lu_factor", "linalg.eigh", "linalg.eigvalsh")


def _check_float(A, fn):
    dt = A.dtype
    if not (dt.is_floating_point or dt.is_complex):
        if fn in _KERNEL_OF_INT:
            raise NotImplementedError(f"\"{_KERNEL_OF[fn]}\" not implemented for '{dt._legacy}'")
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{dt._legacy}")
    if dt not in _FLOATS:
        if fn in _KERNEL_OF:
            raise NotImplementedError(f"\"{_KERNEL_OF[fn]}\" not implemented for '{dt._legacy}'")
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {dt._legacy}")


def _real(dt):
    return dt.to_real() if dt.is_complex else dt


def _flat(A):
    """``A`` as a (batch, m, n) tensor (a view when possible) + batch shape."""
    batch = tuple(A.shape[:-2])
    nb = _math.prod(batch)
    return A.reshape(nb, A.shape[-2], A.shape[-1]), batch


def _empty(shape, dt, dev=None):
    return _C.empty(tuple(shape), dtype=dt, device=dev)


def _tonp(t):
    return t.numpy(force=True)


def _info(nb, dev=None):
    return _C.zeros(nb, dtype=_C.int32, device=dev)


def _check_info(info, fn, batched, message, negative_ok=False, error=None):
    """Raise LinAlgError (or ``error``) for the first failed batch element (PyTorch's
    wording); reads ``info`` back from its device (synchronises, as PyTorch)."""
    arr = _tonp(info.cpu()).reshape(-1)
    bad = _np.nonzero(arr)[0]
    if bad.size == 0:
        return
    i = _b.int(bad[0])
    code = _b.int(arr[i])
    if code < 0 and not negative_ok:
        raise RuntimeError(f"{fn}: LAPACK reported an illegal value in argument {-code} "
                           f"(internal error)")
    prefix = f"(Batch element {i}): " if batched else ""
    raise (error or LinAlgError)(f"{fn}: {prefix}{message(code)}")


def _eye(n, dt, dev=None):
    e = _C.zeros(n, n, dtype=dt, device=dev)
    if n:
        e.diagonal().fill_(1)
    return e


def _out(result, out, fn, castable=False):
    """``result``, or written into ``out``: of ``result``'s dtype, or (``castable``: torch's
    composites, which copy into ``out``) any dtype it safely casts to."""
    if out is None:
        return result
    fin = _finish_castable if castable else _finish
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{fn}(): out must be a tuple of {len(result)} tensors")
        return as_out(type(result)(*[fin(r, o, fn) for r, o in zip(result, out)]))
    return fin(result, out, fn)


# ---------------------------------------------------------------------------
# inverse, solve
# ---------------------------------------------------------------------------
def _inv_msg(code):
    return (f"The diagonal element {code} is zero, the inversion could not be completed "
            f"because the input matrix is singular.")


def _bools(fn, **kw):
    """torch's argument parser: each of ``kw`` must be a Python bool (0/1,
    None or a tensor is a TypeError naming the binding ``fn``)."""
    for name, v in kw.items():
        _bool_param(v, fn, name)


def _str_arg(v, fn, name):
    if not isinstance(v, str):
        raise TypeError(f"{fn}(): argument '{name}' must be str, not {type(v).__name__}")


def inv_ex(A, *, check_errors=False, out=None):
    """Inverse and LAPACK's info per matrix (``torch.linalg.inv_ex``)."""
    check_out_arg(out, "linalg_inv_ex", 2)
    _bools("linalg_inv_ex", check_errors=check_errors)
    _check_A(A, "linalg.inv")
    A3, batch = _flat(A)
    n = A.shape[-1]
    res = _empty(A3.shape, A.dtype, A.device)
    info = _info(A3.shape[0], A.device)
    _loop("getri", A)(A3, res, info)
    if check_errors:
        _check_info(info, "linalg.inv_ex", A.dim() > 2, _inv_msg)
    return _out(InvExResult(res.reshape(*batch, n, n), info.reshape(batch)), out, "inv_ex")


def inv(A, *, out=None):
    """Inverse of square matrices (``torch.linalg.inv``).

    Raises
    ------
    LinAlgError
        If a matrix is singular.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.linalg.inv(ptcore.tensor([[2.0, 1.0], [0.0, 4.0]])).diagonal()
    tensor([0.5000, 0.2500])
    """
    check_out_arg(out, "linalg_inv")
    res, info = inv_ex(A)
    _check_info(info, "linalg.inv", A.dim() > 2, _inv_msg)
    return _out(res, out, "inv")


def _solve_impl(A, B, left, fn):
    _check_A(A, "linalg.solve", check_dtype=False)
    if not isinstance(B, _TensorBase):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype._legacy} and B of type {B.dtype._legacy} instead")
    n = A.shape[-1]
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    eq = "AX = B" if left else "XA = B"
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.dim() < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if not left:
        if vector or Bm.shape[-1] != n:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"{eq} ({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
        X, info = _solve_impl(A.mT, Bm.mT, True, fn)
        return X.mT, info
    if Bm.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    _check_float(A, "linalg.solve")         # after the shape checks, as torch
    batch = _broadcast_batch(Bm.shape[:-2], A.shape[:-2])
    nb = _math.prod(batch)
    k = Bm.shape[-1]
    A3 = A.expand(*batch, n, n).reshape(nb, n, n)
    B3 = Bm.expand(*batch, n, k).reshape(nb, n, k)
    X = _empty((nb, n, k), A.dtype, A.device)
    info = _info(nb, A.device)
    _loop("gesv", A)(A3, B3, X, info)
    X = X.reshape(*batch, n, k)
    if vector:
        X = X.squeeze(-1)
    # info has A's batch shape (as torch): B's extra batch dims repeat A's factorisation
    info = info.reshape(batch)
    abatch = tuple(A.shape[:-2])
    if abatch != tuple(batch):
        info = info[(0,) * (len(batch) - len(abatch))]
        for i, s in enumerate(abatch):
            if s == 1:
                info = info.narrow(i, 0, 1)
        info = info.contiguous()
    return X, info


def _solve_msg(code):
    return "The solver failed because the input matrix is singular."


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Solution of ``A X = B`` and LAPACK's info (``torch.linalg.solve_ex``)."""
    check_out_arg(out, "linalg_solve_ex", 2)
    _bools("linalg_solve_ex", left=left, check_errors=check_errors)
    X, info = _solve_impl(A, B, left, "linalg.solve_ex")
    if check_errors:
        _check_info(info, "torch.linalg.solve_ex", info.dim() > 0, _solve_msg)
    return _out(SolveExResult(X, info), out, "solve_ex")


def solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``) for square,
    invertible ``A``; batch dims broadcast, ``B`` may be a (batch of)
    vector(s) (``torch.linalg.solve``)."""
    check_out_arg(out, "linalg_solve")
    _bools("linalg_solve", left=left)
    X, info = _solve_impl(A, B, left, "linalg.solve")
    _check_info(info, "torch.linalg.solve", info.dim() > 0, _solve_msg)
    return _out(X, out, "solve")


# ---------------------------------------------------------------------------
# determinants, LU
# ---------------------------------------------------------------------------
def _lu(A, fn):
    A3, batch = _flat(A)
    nb, m, n = A3.shape
    k = _b.min(m, n)
    LU = _empty((nb, m, n), A.dtype, A.device)
    piv = _C.zeros(nb, k, dtype=_C.int32, device=A.device)
    info = _info(nb, A.device)
    _loop("getrf", A)(A3, LU, piv, info)
    return LU, piv, info, batch


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU factorisation with partial pivoting (``torch.linalg.lu_factor_ex``):
    ``LU`` packs L (unit diagonal) and U; ``pivots`` are 1-based (LAPACK)."""
    check_out_arg(out, "linalg_lu_factor_ex", 3)
    _bools("linalg_lu_factor_ex", pivot=pivot, check_errors=check_errors)
    _check_A(A, "linalg.lu_factor", square=False)
    if not pivot and A.numel() != 0:    # (torch returns before its kernel for no elements)
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info, batch = _lu(A, "linalg.lu_factor")
    m, n = A.shape[-2:]
    res = LUFactorExResult(LU.reshape(*batch, m, n), piv.reshape(*batch, _b.min(m, n)),
                           info.reshape(batch))
    if check_errors:
        _check_info(info, "torch.linalg.lu_factor_ex", A.dim() > 2,
                    lambda c: f"U[{c},{c}] is zero and using it on lu_solve would result in a "
                              f"division by zero. If you still want to perform the factorization, "
                              f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                              f"pivot)", error=RuntimeError)  # torch: not a LinAlgError
    return _out(res, out, "lu_factor_ex")


def lu_factor(A, *, pivot=True, out=None):
    """LU factorisation (``torch.linalg.lu_factor``); raises on singular input."""
    check_out_arg(out, "linalg_lu_factor", 2)
    _bools("linalg_lu_factor", pivot=pivot)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    _check_info(info, "torch.linalg.lu_factor", A.dim() > 2,
                lambda c: f"U[{c},{c}] is zero and using it on lu_solve would result in a "
                          f"division by zero. If you still want to perform the factorization, "
                          f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
                error=RuntimeError)  # torch: not a LinAlgError
    return _out(LUFactorResult(LU, piv), out, "lu_factor")


def _det_parts(A, fn):
    """(diagonal of U (nb, n) with the sign of each row interchange folded in
    (a negated entry where ``pivots[i] != i + 1``), batch): its product is
    the determinant."""
    _check_A(A, fn)
    # as torch: a contiguous real A is factored as A^T (its memory is then
    # already column-major; det(A^T) = det(A)), so the rounding is torch's
    LU, piv, info, batch = _lu(A.mT if A.is_contiguous() and not A.dtype.is_complex else A, fn)
    n = A.shape[-1]
    d = LU.diagonal(0, -2, -1)
    rows = _C.from_numpy(_np.arange(1, n + 1, dtype=_np.int32)).to(piv.device)
    return d.where(piv == rows, -d), batch


def det(A, *, out=None):
    """Determinant of square matrices (``torch.linalg.det``)."""
    if out is None:
        # a contiguous float32/float64 CPU matrix: factor and product in one call
        r = _blas().det_fast(A)
        if r is not None:
            return r
    check_out_arg(out, "linalg_det")
    d, batch = _det_parts(A, "linalg.det")
    return _out(d.prod(-1).reshape(batch), out, "det")


def _slogdet_t(A, fn):
    d, batch = _det_parts(A, fn)
    absd = d.abs()
    logabs = absd.log().sum(-1)
    if A.dtype.is_complex:
        zero = absd == 0
        s = (d / absd.masked_fill(zero, 1)).masked_fill(zero, 0).prod(-1)
    else:
        s = d.sign().prod(-1)
    return s.reshape(batch), logabs.reshape(batch)


def slogdet(A, *, out=None):
    """Sign (phase for complex) and log of the absolute value of the
    determinant (``torch.linalg.slogdet``)."""
    check_out_arg(out, "linalg_slogdet", 2)
    s, la = _slogdet_t(A, "linalg.slogdet")
    return _out(SlogdetResult(s, la), out, "slogdet")


def _torch_slogdet(A, out=None):
    """``torch.slogdet``: :func:`slogdet` as torch's own ``slogdet`` result type."""
    check_out_arg(out, "slogdet", 2)
    s, la = _slogdet_t(A, "linalg.slogdet")
    return _out(TorchSlogdetResult(s, la), out, "slogdet")


def _logdet(A):
    s, la = _slogdet_t(A, "linalg.slogdet")
    if A.dtype.is_complex:
        return s.log() + la
    return la.masked_fill(s < 0, _math.nan)


# ---------------------------------------------------------------------------
# Cholesky, QR
# ---------------------------------------------------------------------------
def _chol_msg(code):
    return (f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {code} is not positive-definite).")


def cholesky_ex(input, *, upper=False, check_errors=False, out=None):
    """Cholesky factor and LAPACK's info (``torch.linalg.cholesky_ex``)."""
    check_out_arg(out, "linalg_cholesky_ex", 2)
    _bools("linalg_cholesky_ex", upper=upper, check_errors=check_errors)
    A = input
    _check_A(A, "linalg.cholesky")
    # torch reads the lower triangle of A, and with upper=True the upper one: the
    # lower triangle of A^H (the kernel reads the lower triangle and writes L^H)
    A3, batch = _flat(A.mH if upper else A)
    n = A.shape[-1]
    # the result is allocated in its final shape (the kernel writes a 3-d view
    # of it), so the tensor returned is not a view: autograd treats it as a base
    L = _empty((*batch, n, n), A.dtype, A.device)
    info = _info(A3.shape[0], A.device)
    _loop("potrf", A)(A3, L.reshape(A3.shape), bool(upper), info)
    if check_errors:
        _check_info(info, "linalg.cholesky_ex", A.dim() > 2, _chol_msg)
    return _out(CholeskyExResult(L, info.reshape(batch)), out, "cholesky_ex")


def cholesky(input, *, upper=False, out=None):
    """Cholesky factor ``L`` with ``A = L L^H`` (``U^H U`` with ``upper=True``)
    of Hermitian positive-definite matrices; only the lower triangle of ``A``
    is read (the upper one with ``upper=True``) (``torch.linalg.cholesky``)."""
    check_out_arg(out, "linalg_cholesky")
    _bools("linalg_cholesky", upper=upper)
    A = input
    L, info = cholesky_ex(A, upper=upper)
    _check_info(info, "linalg.cholesky", A.dim() > 2, _chol_msg)
    return _out(L, out, "cholesky")


def qr(A, mode="reduced", *, out=None):
    """QR decomposition (``torch.linalg.qr``): ``mode`` 'reduced' (Q m x k,
    R k x n, k = min(m, n)), 'complete' (Q m x m, R m x n) or 'r' (R only,
    Q empty)."""
    check_out_arg(out, "linalg_qr", 2)
    _str_arg(mode, "linalg_qr", "mode")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _check_A(A, "linalg.qr", square=False)
    A3, batch = _flat(A)
    nb, m, n = A3.shape
    k = _b.min(m, n)
    rr = m if mode == "complete" else k
    qc = m if mode == "complete" else k
    R = _empty((nb, rr, n), A.dtype, A.device)
    Q = _empty((nb, m, qc), A.dtype, A.device) if mode != "r" else None
    info = _info(nb, A.device)
    _loop("geqrf_orgqr", A)(A3, Q, R, info)
    Rr = R.reshape(*batch, rr, n)
    Qr = Q.reshape(*batch, m, qc) if Q is not None else _C.empty(0, dtype=A.dtype,
                                                                 device=A.device)
    return _out(QRResult(Qr, Rr), out, "qr")


def _torch_qr(A, some=True, out=None):
    check_out_arg(out, "qr", 2)
    Q, R = qr(A, "reduced" if some else "complete")
    return _out(TorchQRResult(Q, R), out, "qr")


# ---------------------------------------------------------------------------
# SVD and eigenproblems
# ---------------------------------------------------------------------------
def _svd_msg(code):
    if code == -4:
        return ("The algorithm failed to converge because the input matrix contained "
                "non-finite values.")
    return (f"The algorithm failed to converge because the input matrix is ill-conditioned or "
            f"has too many repeated singular values (error code: {code}).")


def _svd_impl(A, mode, fn):
    """mode 'N' (values), 'S' (reduced), 'A' (full) -> (U, S, Vh) tensors."""
    _check_A(A, fn, square=False)
    A3, batch = _flat(A)
    nb, m, n = A3.shape
    k = _b.min(m, n)
    rdt = _real(A.dtype)
    dev = A.device
    S = _C.zeros(nb, k, dtype=rdt, device=dev)
    ucols = k if mode == "S" else m
    vrows = k if mode == "S" else n
    U = Vh = None
    if mode != "N":
        U = _empty((nb, m, ucols), A.dtype, dev)
        Vh = _empty((nb, vrows, n), A.dtype, dev)
    if k == 0:
        # empty matrices: identity blocks for the full factors
        if mode != "N":
            U = _eye(m, A.dtype, dev).narrow(1, 0, ucols).expand(nb, m, ucols).contiguous()
            Vh = _eye(n, A.dtype, dev).narrow(0, 0, vrows).expand(nb, vrows, n).contiguous()
    elif nb > 0:
        if not bool(A3.isfinite().all()):
            bad = ~A3.isfinite().reshape(nb, -1).all(-1)
            _check_info(bad.to(_C.int32) * -4, fn, A.dim() > 2, _svd_msg, negative_ok=True)
        info = _info(nb, dev)
        _loop("gesvd", A)(A3, U, S, Vh, mode, info)
        _check_info(info, fn, A.dim() > 2, _svd_msg, negative_ok=True)
    S = S.reshape(*batch, k)
    if mode != "N":
        U = U.reshape(*batch, m, ucols)
        Vh = Vh.reshape(*batch, vrows, n)
    return U, S, Vh


def _check_svd_driver(driver, A):
    """PyTorch's CUDA drivers (the loop picks its own); as torch, a CPU input
    takes no driver."""
    if driver is not None and isinstance(A, _TensorBase) and not _svd_takes_driver(A.device):
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    if driver not in (None, "gesvd", "gesvdj", "gesvda"):
        raise RuntimeError(f"torch.linalg.svd: unknown svd driver {driver} in svd_cusolver "
                           f"computation. Check doc at "
                           f"https://pytorch.org/docs/stable/generated/torch.linalg.svd.html")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition ``A = U diag(S) Vh`` (``torch.linalg.svd``);
    singular values descending.  LAPACK ``gesdd`` on the CPU, ``gesvd`` on CUDA."""
    if out is None and driver is None and (full_matrices is True or full_matrices is False):
        # a finite float32/float64 CPU matrix: allocation, checks and gesdd in one call
        r = _blas().svd_fast(A, full_matrices)
        if r is not None:
            return SVDResult(*r)
    check_out_arg(out, "linalg_svd", 3)
    _bools("linalg_svd", full_matrices=full_matrices)
    _check_svd_driver(driver, A)
    U, S, Vh = _svd_impl(A, "A" if full_matrices else "S", "linalg.svd")
    return _out(SVDResult(U, S, Vh), out, "svd")


def svdvals(A, *, driver=None, out=None):
    """Singular values, descending (``torch.linalg.svdvals``)."""
    check_out_arg(out, "linalg_svdvals")
    _check_svd_driver(driver, A)
    return _out(_svd_impl(A, "N", "linalg.svd")[1], out, "svdvals")


def _conj_t(t):
    """Conjugate transpose of the last two dims (a copy for complex)."""
    if not t.dtype.is_complex:
        return t.mT
    return t.mT.conj().resolve_conj().contiguous()


def _torch_svd(A, some=True, compute_uv=True, out=None):
    check_out_arg(out, "svd", 3)
    return _out(_torch_svd_result(A, some, compute_uv), out, "svd")


def _torch_svd_result(A, some, compute_uv):
    if not compute_uv:
        _check_A(A, "linalg.svd", square=False)
        S = svdvals(A)
        m, n = A.shape[-2:]
        batch = tuple(A.shape[:-2])
        # as torch: zero-filled (m, m) and (n, n) whatever ``some`` says
        U = _C.zeros(*batch, m, m, dtype=A.dtype, device=A.device)
        V = _C.zeros(*batch, n, n, dtype=A.dtype, device=A.device)
        return TorchSVDResult(U, S, V)
    U, S, Vh = svd(A, full_matrices=not some)
    return TorchSVDResult(U, S, _conj_t(Vh))


def _check_uplo(UPLO):
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U") or len(UPLO) != 1:
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def _eigh_msg(code):
    return (f"The algorithm failed to converge because the input matrix is ill-conditioned or "
            f"has too many repeated eigenvalues (error code: {code}).")


def _eigh_impl(A, UPLO, want_v, fn):
    _check_A(A, fn)
    uplo = _check_uplo(UPLO)
    A3, batch = _flat(A)
    nb, n, _ = A3.shape
    W = _C.zeros(nb, n, dtype=_real(A.dtype), device=A.device)
    V = _empty((nb, n, n), A.dtype, A.device) if want_v else None
    info = _info(nb, A.device)
    _loop("syevd", A)(A3, W, V, uplo, info)
    _check_info(info, fn, A.dim() > 2, _eigh_msg)
    W = W.reshape(*batch, n)
    if want_v:
        V = V.reshape(*batch, n, n)
    return W, V


def eigh(input, UPLO="L", *, out=None):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors (columns)
    of Hermitian matrices (``torch.linalg.eigh``); only the ``UPLO``
    triangle is read."""
    check_out_arg(out, "linalg_eigh", 2)
    A = input
    _str_arg(UPLO, "linalg_eigh", "UPLO")
    W, V = _eigh_impl(A, UPLO, True, "linalg.eigh")
    return _out(EighResult(W, V), out, "eigh")


def eigvalsh(input, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of Hermitian matrices (``torch.linalg.eigvalsh``)."""
    check_out_arg(out, "linalg_eigvalsh")
    A = input
    _str_arg(UPLO, "linalg_eigvalsh", "UPLO")
    return _out(_eigh_impl(A, UPLO, False, "linalg.eigvalsh")[0], out, "eigvalsh")


def _eig_impl(A, want_v, fn):
    _check_A(A, fn)
    A3, batch = _flat(A)
    nb, n, _ = A3.shape
    if nb and n:
        if not bool(A3.isfinite().all()):
            raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    cdt = A.dtype if A.dtype.is_complex else A.dtype.to_complex()
    W = _C.zeros(nb, n, dtype=cdt, device=A.device)
    V = _C.zeros(nb, n, n, dtype=cdt, device=A.device) if want_v else None
    info = _info(nb, A.device)
    _loop("geev", A)(A3, W, V, info)
    _check_info(info, "linalg.eig", A.dim() > 2,
                lambda c: f"The algorithm failed to converge because the input matrix is "
                          f"ill-conditioned or has too many repeated eigenvalues (error code: "
                          f"{c}).")
    W = W.reshape(*batch, n)
    if want_v:
        V = V.reshape(*batch, n, n)
    return W, V


def eig(input, *, out=None):
    """Eigenvalues and right eigenvectors (unit 2-norm columns) of general
    square matrices, always complex (``torch.linalg.eig``)."""
    check_out_arg(out, "linalg_eig", 2)
    A = input
    W, V = _eig_impl(A, True, "linalg.eig")
    return _out(EigResult(W, V), out, "torch.linalg.eig", castable=True)   # (torch copies into out)


def eigvals(input, *, out=None):
    """Eigenvalues of general square matrices, complex (``torch.linalg.eigvals``)."""
    check_out_arg(out, "linalg_eigvals")
    A = input
    return _out(_eig_impl(A, False, "linalg.eigvals")[0], out, "torch.linalg.eigvals", castable=True)


# ---------------------------------------------------------------------------
# least squares, pseudo-inverse, rank
# ---------------------------------------------------------------------------
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(input, b, rcond=None, *, driver=None, out=None):
    """Least-squares solution of ``A X = B`` (``torch.linalg.lstsq``).

    Returns a named tuple ``(solution, residuals, rank, singular_values)``.
    ``driver``: 'gelsy' (default: QR with column pivoting), 'gelsd'
    (divide-and-conquer SVD), 'gelss' (SVD) or 'gels' (QR, full rank only).
    ``residuals`` (squared column norms of ``A X - B``) are computed when
    m > n, every matrix has full rank and the driver is not 'gelsy'; ``rank``
    for every driver but 'gels'; ``singular_values`` for 'gelsd'/'gelss'.
    """
    check_out_arg(out, "linalg_lstsq", 4)
    A, B = input, b
    fn = "torch.linalg.lstsq"
    for x, name in ((A, "input"), (B, "other")):
        if not isinstance(x, _TensorBase):
            raise TypeError(f"linalg_lstsq(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError(f"{fn}: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype._legacy} and other's dtype "
                           f"{B.dtype._legacy}")
    if A.dtype not in _FLOATS:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if driver is None:
        # PyTorch's default: gelsy where the device's loop has it (the CPU), else gels
        driver = "gelsy" if _has_loop("lstsq_gelsy", A.device.type) else "gels"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    diff = A.dim() - B.dim()
    if not 0 <= diff <= 1:
        raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    # torch's linalg_solve_is_vector_rhs: a vector only where B's shape is A's without
    # its last dim (B (4, 5) for A (1, 5, 3) is a matrix, whose rows do not match)
    vector = B.dim() == 1 or (diff == 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    if vector:
        batch = _broadcast_batch(A.shape[:-2], B.shape[:-1])
        if Bm.shape[-2] != m:
            raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-1)")
    else:
        if Bm.shape[-2] != m:
            raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
        # (torch broadcasts a matrix B of one dim less than A as if it were a batch of
        # vectors: B.shape[:-1] against A's batch)
        batch = _broadcast_batch(A.shape[:-2], Bm.shape[:-1] if diff else Bm.shape[:-2])
    nb = _math.prod(batch)
    k = Bm.shape[-1]
    A3 = A.expand(*batch, m, n).reshape(nb, m, n)
    B3 = Bm.expand(*batch, m, k).reshape(nb, m, k)
    if rcond is None:
        rcond = _finfo(A.dtype).eps * _b.max(m, n)
    rdt = _real(A.dtype)
    dev = A.device
    X = _empty((nb, n, k), A.dtype, dev)
    resid = _C.zeros(nb, k, dtype=rdt, device=dev) if (m > n and driver != "gelsy") else None
    rank = _C.zeros(nb, dtype=_C.int64, device=dev) if driver != "gels" else None
    S = _C.zeros(nb, _b.min(m, n), dtype=rdt, device=dev) if driver in ("gelsd", "gelss") \
        else None
    info = _info(nb, dev)
    _loop("gels", A)(A3, B3, X, resid, rank, S, driver, float(rcond), info)
    _check_info(info, fn, False,
                lambda c: f"The least squares solution could not be computed because the input "
                          f"matrix does not have full rank (error code: {c}).")
    X = X.reshape(*batch, n, k)
    if vector:
        X = X.squeeze(-1)
    empty_real = _C.empty(0, dtype=rdt, device=dev)
    if resid is not None and rank is not None and not bool((rank == n).all()):
        resid = None
    if resid is not None:
        resid = resid.reshape(*batch, k)
    abatch = tuple(A.shape[:-2])
    rank_t = _a_batch(rank.reshape(batch), batch, abatch, 0) if rank is not None else \
        _C.empty(0, dtype=_C.int64, device=dev)
    # (a second empty tensor: the residuals' one becomes differentiable under autograd)
    S_t = _a_batch(S.reshape(*batch, _b.min(m, n)), batch, abatch, 1) if S is not None else \
        _C.empty(0, dtype=rdt, device=dev)
    return _out(LstsqResult(X, resid if resid is not None else empty_real, rank_t, S_t), out,
                "torch.linalg.lstsq", castable=True)      # (torch copies into out)


def _a_batch(t, batch, abatch, trailing):
    """Results that depend on A alone (rank, singular values), cut from the
    broadcast ``batch`` back to A's own batch shape (as PyTorch returns them)."""
    if tuple(batch) == tuple(abatch):
        return t
    lead = len(batch) - len(abatch)
    for d in range(len(batch)):
        if d < lead or abatch[d - lead] == 1:
            t = t.narrow(d, 0, 1)
    return t.reshape(*abatch, *t.shape[len(batch):]).contiguous()


def _tolerances(A, atol, rtol, fn, smax):
    """PyTorch's rule: tol = max(atol, rtol * smax) (shape ``(*batch, 1)``);
    rtol defaults to eps * max(m, n) when neither is given, to 0 when only
    atol is."""
    eps = _finfo(A.dtype).eps
    m, n = A.shape[-2:]

    def t(x):
        if isinstance(x, _TensorBase):
            return x.to(device=smax.device, dtype=_C.float64 if not x.dtype.is_complex
                        else x.dtype)
        return smax.new_full((), float(x))
    if atol is None and rtol is None:
        return (smax * (eps * _b.max(m, n))).unsqueeze(-1)
    at = t(atol) if atol is not None else t(0.0)
    rt = t(rtol) if rtol is not None else t(0.0)
    return at.maximum(rt * smax).unsqueeze(-1)


def _list(shape):
    return "{[" + ", ".join(str(int(v)) for v in shape) + "]}"


def _smax(s, reduce_max):
    """The largest of the last dim of ``s`` (zeros for an empty last dim)."""
    if s.shape[-1] == 0:
        return s.new_zeros(tuple(s.shape[:-1]))
    return s.amax(-1) if reduce_max else s.select(-1, 0)


def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Moore-Penrose pseudo-inverse via the SVD (or ``eigh`` when
    ``hermitian``); singular values below ``max(atol, rtol * s_max)`` are
    treated as zero (``torch.linalg.pinv``; ``rcond`` is ``rtol``, as
    torch's positional overload ``pinv(A, rcond, hermitian)``)."""
    check_out_arg(out, "linalg_pinv")
    _bools("linalg_pinv", hermitian=hermitian)
    A = input
    if rcond is not None:
        if atol is not None or rtol is not None:    # (torch's two overloads)
            raise TypeError("linalg_pinv() received an invalid combination of arguments - got "
                            "rcond together with atol/rtol: pass rcond (= rtol) or atol and rtol")
        rtol = rcond
    if isinstance(A, _TensorBase) and A.dtype not in _FLOATS:     # (before hermitian's eigh)
        raise RuntimeError(f"linalg.pinv({A.dtype._legacy}{_list(A.shape)}): expected a tensor "
                           f"with 2 or more dimensions of float, double, cfloat or cdouble types")
    if isinstance(A, _TensorBase) and A.dim() >= 2 and A.numel() == 0:
        # as torch: no elements, an empty (*, n, m) result, before hermitian's
        # square check and whatever the tolerances
        return _out(_empty((*A.shape[:-2], A.shape[-1], A.shape[-2]), A.dtype, A.device), out,
                    "pinv", castable=True)
    if hermitian:
        _check_A(A, "linalg.eigh")
        W, V = eigh(A)
        absw = W.abs()
        tol = _tolerances(A, atol, rtol, "linalg.pinv", _smax(absw, True))
        winv = W.reciprocal().where(absw > tol, 0.0)      # (as PyTorch)
        r = (V * winv.unsqueeze(-2)) @ V.mH
        return _out(r, out, "pinv", castable=True)
    _check_A(A, "linalg.pinv", square=False)
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerances(A, atol, rtol, "linalg.pinv", _smax(S, False))
    sinv = S.reciprocal().where(S > tol, 0.0)             # (as PyTorch)
    r = (Vh.mH * sinv.unsqueeze(-2)) @ U.mH
    return _out(r, out, "pinv", castable=True)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Numerical rank: the number of singular values (``|eigenvalues|`` when
    ``hermitian``) above ``max(atol, rtol * s_max)`` (``torch.linalg.matrix_rank``;
    ``tol`` is ``atol`` with ``rtol=0``, as torch's positional overload
    ``matrix_rank(A, tol, hermitian)``)."""
    check_out_arg(out, "linalg_matrix_rank")
    _bools("linalg_matrix_rank", hermitian=hermitian)
    A = input
    if tol is not None:
        if rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments "
                            "- got both tol and rtol")
        atol, rtol = tol, 0.0
    if not isinstance(A, _TensorBase):
        raise TypeError(f"linalg_matrix_rank(): argument 'input' must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dtype not in _FLOATS:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dim() >= 2 and A.numel() == 0:
        # as torch: rank 0 for matrices without elements, before hermitian's
        # square check and whatever the tolerances
        return _out(_C.zeros(tuple(A.shape[:-2]), dtype=_C.int64, device=A.device), out,
                    "matrix_rank", castable=True)
    if hermitian:
        _check_A(A, "linalg.eigh")
        s = eigvalsh(A).abs()
        smax = _smax(s, True)
    else:
        _check_A(A, "linalg.svd", square=False)
        s = svdvals(A)
        smax = _smax(s, False)
    t = _tolerances(A, atol, rtol, "linalg.matrix_rank", smax)
    return _out((s > t).sum(-1).to(_C.int64), out, "matrix_rank", castable=True)
