"""``ptcore.linalg`` on CUDA tensors: the factorisations on the driver's
dense solver interface (:meth:`ptcore.cuda._driver.Driver.solver`:
cuSOLVER on a GPU, LAPACK on the emulated device), and the CUDA kernels of
the linalg ops in the operator table (those derived from the factorisations,
pinv/matrix_rank/norms/matrix_power/multi_dot, are in
:mod:`ptcore.cuda._launch_linalg_derived`).

Every matrix handed to the solver is first copied into a fresh
column-major work buffer on the device (``A3.mT`` made contiguous: a
``(batch, n, m)`` tensor holds ``batch`` column-major ``m x n`` matrices);
results are copied back to row-major tensors.  Batches are strided loops
of single calls (the driver's ``batch``/``strides``).  Only float32 and
float64 run here (complex dtypes raise NotImplementedError).

As on PyTorch's CUDA backend, the functions that must report a singular or
non-positive-definite input (``inv``, ``solve``, ``cholesky``,
``lu_factor``, ``eigh``, ``svd`` ...) read the ``info`` array back, which
synchronises with the device; the ``_ex`` variants return ``info`` as a
device tensor without synchronising (unless ``check_errors=True``).

The kernels keep the CPU front-ends' argument checks and error messages
(shared helpers of :mod:`ptcore.linalg._factor` / ``_extra``).  Those with
an autograd formula (inv, det, slogdet, logdet, solve, cholesky, qr, eigh,
eigvalsh, svd, svdvals, pinv, lstsq) run under it (the op's body factory);
the others are differentiable through the ops they are written with, and
``solve_triangular`` through its own Function.
"""
import builtins as _b
import math

from ptcore import _tensor as _C
from ptcore.cuda import _runtime

__all__ = ["register"]


def _P():
    import ptcore
    return ptcore


def _F():
    from ptcore.linalg import _factor
    return _factor


# ---------------------------------------------------------------------------
# buffers and the solver call
# ---------------------------------------------------------------------------
def _empty(shape, dt, dev):
    from ptcore.cuda import _tensors
    return _tensors.empty([int(s) for s in shape], dt, dev)


def _zeros(shape, dt, dev):
    t = _empty(shape, dt, dev)
    t.zero_()
    return t


def _code(dt, fn):
    """The solver's type letter; complex and other dtypes are refused."""
    if dt is _C.float32:
        return "S"
    if dt is _C.float64:
        return "D"
    raise NotImplementedError(f"{fn}: {dt} is not supported on CUDA yet (float32 and float64 "
                              f"run through cuSOLVER)")


def _isz(dt):
    return 4 if dt is _C.float32 else 8


def _colmajor(A3):
    """A fresh ``(nb, n, m)`` buffer holding each ``m x n`` matrix of ``A3``
    column-major (never aliasing ``A3``)."""
    nb, m, n = A3.shape
    buf = _empty((nb, n, m), A3.dtype, A3.device)
    if buf.numel():
        buf.copy_(A3.mT)
    return buf


def _rowmajor(buf):
    """The ``(nb, m, n)`` row-major tensor of a column-major buffer."""
    return buf.mT.contiguous()


def _solve(t, routine, batch=1, strides=None, **args):
    """Queue ``batch`` calls of ``routine`` on ``t``'s device and current stream."""
    idx = t.device.index
    drv = _runtime.lazy_init(f"cuSOLVER {routine}")
    drv.set_current(idx)
    drv.solver(idx, _runtime.current_stream_handle(idx), routine, _code(t.dtype, routine),
               batch=int(batch), strides=strides, **args)


def _sync_check(info, fn, batched, message, negative_ok=False):
    """Read ``info`` back (synchronises) and raise as the CPU path does."""
    if info.numel() == 0:
        return
    _F()._check_info(info.cpu(), fn, batched, message, negative_ok)


def _check_A(A, fn, square=True, name="A"):
    """The CPU front-ends' checks (type, dims, square, dtype), on a CUDA tensor."""
    from ptcore._tensor import _TensorBase
    if not isinstance(A, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _F()._check_float(A, fn)
    _code(A.dtype, fn)


def _flat(A):
    batch = tuple(A.shape[:-2])
    return A.reshape(math.prod(batch), A.shape[-2], A.shape[-1]), batch


def _eye_batch(nb, m, n, dt, dev):
    P = _P()
    return P.eye(m, n, dtype=dt, device=dev).expand(nb, m, n)


# ---------------------------------------------------------------------------
# LU: getrf / getrs
# ---------------------------------------------------------------------------
def _getrf(A3):
    """(column-major LU buffer, pivots (nb, k) int32, info (nb,) int32)."""
    nb, m, n = A3.shape
    k = _b.min(m, n)
    buf = _colmajor(A3)
    piv = _zeros((nb, k), _C.int32, A3.device)
    info = _zeros((nb,), _C.int32, A3.device)
    if nb and k:
        _solve(A3, "getrf", nb, {"A": m * n * _isz(A3.dtype), "ipiv": 4 * k, "info": 4},
               m=m, n=n, A=buf.data_ptr(), lda=max(1, m), ipiv=piv.data_ptr(),
               info=info.data_ptr())
    return buf, piv, info


def _getrs(buf, piv, B3, trans=0):
    """Solve with the LU factors of square ``buf`` for ``B3`` (nb, n, k); a
    fresh (nb, n, k) result."""
    nb, n, k = B3.shape
    X = _colmajor(B3)
    if nb and n and k:
        info = _zeros((nb,), _C.int32, B3.device)
        isz = _isz(B3.dtype)
        _solve(B3, "getrs", nb, {"A": n * n * isz, "ipiv": 4 * n, "B": n * k * isz, "info": 4},
               trans=trans, n=n, nrhs=k, A=buf.data_ptr(), lda=max(1, n), ipiv=piv.data_ptr(),
               B=X.data_ptr(), ldb=max(1, n), info=info.data_ptr())
    return _rowmajor(X)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    F = _F()
    _check_A(A, "linalg.lu_factor", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on CUDA")
    A3, batch = _flat(A)
    m, n = A.shape[-2:]
    buf, piv, info = _getrf(A3)
    res = F.LUFactorExResult(_rowmajor(buf).reshape(*batch, m, n),
                             piv.reshape(*batch, _b.min(m, n)), info.reshape(batch))
    if check_errors:
        _sync_check(info, "torch.linalg.lu_factor_ex", A.dim() > 2, _lu_msg)
    return F._out(res, out, "lu_factor_ex")


def _lu_msg(c):
    return (f"U[{c},{c}] is zero and using it on lu_solve would result in a division by zero. "
            f"If you still want to perform the factorization, consider calling linalg.lu(A, "
            f"pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    F = _F()
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    _sync_check(info, "torch.linalg.lu_factor", A.dim() > 2, _lu_msg)
    return F._out(F.LUFactorResult(LU, piv), out, "lu_factor")


def _solve_impl(A, B, left, fn):
    """The CPU ``_solve_impl`` on the device: (X, info)."""
    from ptcore._tensor import _TensorBase
    from ptcore._ops.linalg import _broadcast_batch
    _check_A(A, "linalg.solve")
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
        return X.mT.contiguous(), info
    if Bm.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    batch = _broadcast_batch(Bm.shape[:-2], A.shape[:-2])
    nb = math.prod(batch)
    k = Bm.shape[-1]
    A3 = A.expand(*batch, n, n).reshape(nb, n, n)
    B3 = Bm.expand(*batch, n, k).reshape(nb, n, k)
    buf, piv, info = _getrf(A3)
    X = _getrs(buf, piv, B3).reshape(*batch, n, k)
    if vector:
        X = X.squeeze(-1)
    return X, info.reshape(batch)


def _solve_msg(code):
    return "The solver failed because the input matrix is singular."


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    F = _F()
    X, info = _solve_impl(A, B, left, "linalg.solve_ex")
    if check_errors:
        _sync_check(info, "torch.linalg.solve_ex", info.dim() > 0, _solve_msg)
    return F._out(F.SolveExResult(X, info), out, "solve_ex")


def solve(A, B, *, left=True, out=None):
    F = _F()
    X, info = _solve_impl(A, B, left, "linalg.solve")
    _sync_check(info, "torch.linalg.solve", info.dim() > 0, _solve_msg)
    return F._out(X, out, "solve")


def inv_ex(A, *, check_errors=False, out=None):
    F = _F()
    _check_A(A, "linalg.inv")
    A3, batch = _flat(A)
    nb, n, _ = A3.shape
    buf, piv, info = _getrf(A3)
    res = _getrs(buf, piv, _eye_batch(nb, n, n, A.dtype, A.device))
    if check_errors:
        _sync_check(info, "linalg.inv", A.dim() > 2, F._inv_msg)
    return F._out(F.InvExResult(res.reshape(*batch, n, n), info.reshape(batch)), out, "inv_ex")


def inv(A, *, out=None):
    F = _F()
    res, info = inv_ex(A)
    _sync_check(info, "linalg.inv", A.dim() > 2, F._inv_msg)
    return F._out(res, out, "inv")


def inverse(input, *, out=None):
    return inv(input, out=out)


def _det_parts(A, fn):
    """(diagonal of U (nb, n), permutation sign (nb,) in A's dtype, batch)."""
    _check_A(A, fn)
    A3, batch = _flat(A)
    buf, piv, _info = _getrf(A3)
    n = A.shape[-1]
    d = buf.diagonal(0, -2, -1)
    P = _P()
    swaps = (piv != P.arange(1, n + 1, dtype=_C.int32, device=A.device)).sum(-1)
    sign = 1 - 2 * (swaps % 2).to(A.dtype)
    return d, sign, batch


def det(A, *, out=None):
    d, sign, batch = _det_parts(A, "linalg.det")
    return _F()._out((d.prod(-1) * sign).reshape(batch), out, "det")


def _slogdet(A, fn):
    d, sign, batch = _det_parts(A, fn)
    s = d.sign().prod(-1) * sign
    la = d.abs().log().sum(-1)
    return s.reshape(batch), la.reshape(batch)


def slogdet(A, *, out=None):
    F = _F()
    s, la = _slogdet(A, "linalg.slogdet")
    return F._out(F.SlogdetResult(s, la), out, "slogdet")


def torch_slogdet(input):
    F = _F()
    s, la = _slogdet(input, "linalg.slogdet")
    return F.SlogdetResult(s, la)


def logdet(input):
    s, la = _slogdet(input, "linalg.slogdet")
    P = _P()
    return P.where(s < 0, P.full((), math.nan, dtype=la.dtype, device=la.device), la)


# ---------------------------------------------------------------------------
# Cholesky: potrf / potrs
# ---------------------------------------------------------------------------
def _potrf(A3):
    """(column-major buffer with the lower factor in its lower triangle, info)."""
    nb, n, _ = A3.shape
    buf = _colmajor(A3)
    info = _zeros((nb,), _C.int32, A3.device)
    if nb and n:
        _solve(A3, "potrf", nb, {"A": n * n * _isz(A3.dtype), "info": 4},
               uplo=0, n=n, A=buf.data_ptr(), lda=n, info=info.data_ptr())
    return buf, info


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    F = _F()
    _check_A(A, "linalg.cholesky")
    A3, batch = _flat(A)
    n = A.shape[-1]
    buf, info = _potrf(A3)
    # buf.mT is the row-major matrix; only its lower triangle is the factor
    L = buf.mT.tril() if not upper else buf.triu()
    L = L.contiguous().reshape(*batch, n, n)
    if check_errors:
        _sync_check(info, "linalg.cholesky", A.dim() > 2, F._chol_msg)
    return F._out(F.CholeskyExResult(L, info.reshape(batch)), out, "cholesky_ex")


def cholesky(A, *, upper=False, out=None):
    F = _F()
    L, info = cholesky_ex(A, upper=upper)
    _sync_check(info, "linalg.cholesky", A.dim() > 2, F._chol_msg)
    return F._out(L, out, "cholesky")


def _potrs(L, B, upper):
    """``A^-1 B`` from the Cholesky factor ``L`` (lower, or upper with
    ``upper``) for broadcast batches."""
    P = _P()
    batch = P.broadcast_shapes(tuple(B.shape[:-2]), tuple(L.shape[:-2]))
    n, k = B.shape[-2], B.shape[-1]
    nb = math.prod(batch)
    L3 = L.expand(*batch, n, n).reshape(nb, n, n)
    B3 = B.expand(*batch, n, k).reshape(nb, n, k)
    Lb = _colmajor(L3)
    X = _colmajor(B3)
    if nb and n and k:
        isz = _isz(B.dtype)
        info = _zeros((nb,), _C.int32, B.device)
        _solve(B3, "potrs", nb, {"A": n * n * isz, "B": n * k * isz, "info": 4},
               uplo=1 if upper else 0, n=n, nrhs=k, A=Lb.data_ptr(), lda=n, B=X.data_ptr(),
               ldb=n, info=info.data_ptr())
    return _rowmajor(X).reshape(*batch, n, k)


def _needs_grad(*ts):
    from ptcore.cuda import _tensors
    return _tensors._grad_enabled() and any(getattr(t, "requires_grad", False) for t in ts)


def _composite(name):
    from ptcore._dispatch.table import lookup
    return lookup(name).raw


def cholesky_solve(B, L, upper=False, *, out=None):
    """potrs; the composite front-end (two solves) when a gradient is wanted."""
    if _needs_grad(B, L):
        return _composite("cholesky_solve")(B, L, upper, out=out)
    from ptcore._ops import linalg_composite as LC
    from ptcore._ops._composite_common import _check_tensor, _write_out, _is_int_dtype, _tname
    _check_tensor(B, "cholesky_solve", "input", 1)
    _check_tensor(L, "cholesky_solve", "input2", 2)
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions "
                           "instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} dimensions "
                           "instead")
    LC._check_linear_solve(B, L, "cholesky_solve")
    if _is_int_dtype(B.dtype):
        raise NotImplementedError(f"\"cholesky_solve_cuda\" not implemented for "
                                  f"'{_tname(B.dtype)}'")
    _code(B.dtype, "cholesky_solve")
    return _write_out(_potrs(L, B, bool(upper)), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """potrs with identity right-hand sides; composite when a gradient is wanted."""
    if _needs_grad(L):
        return _composite("cholesky_inverse")(L, upper, out=out)
    from ptcore._ops import linalg_composite as LC
    from ptcore._ops._composite_common import _check_tensor, _write_out
    _check_tensor(L, "cholesky_inverse", "input", 1)
    LC._square_check(L, "cholesky_inverse")
    _code(L.dtype, "cholesky_inverse")
    n = L.shape[-1]
    eye = _P().eye(n, dtype=L.dtype, device=L.device)
    return _write_out(_potrs(L, eye, bool(upper)), out)


# ---------------------------------------------------------------------------
# QR: geqrf / orgqr / ormqr
# ---------------------------------------------------------------------------
def _geqrf(A3):
    """(column-major buffer with R and the reflectors, tau (nb, k))."""
    nb, m, n = A3.shape
    k = _b.min(m, n)
    buf = _colmajor(A3)
    tau = _zeros((nb, k), A3.dtype, A3.device)
    if nb and k:
        isz = _isz(A3.dtype)
        info = _zeros((nb,), _C.int32, A3.device)
        _solve(A3, "geqrf", nb, {"A": m * n * isz, "tau": k * isz, "info": 4},
               m=m, n=n, A=buf.data_ptr(), lda=m, tau=tau.data_ptr(), info=info.data_ptr())
    return buf, tau


def _orgqr(refl, tau, m, qc):
    """Q (nb, m, qc) row-major from column-major reflectors ``refl`` (nb, c, m)
    (c >= k columns used) and ``tau`` (nb, k)."""
    nb, k = tau.shape
    dt, dev = tau.dtype, tau.device
    Qb = _zeros((nb, qc, m), dt, dev)
    c = _b.min(qc, refl.shape[1])
    if c:
        Qb.narrow(1, 0, c).copy_(refl.narrow(1, 0, c))
    if nb and m and qc:
        isz = _isz(dt)
        info = _zeros((nb,), _C.int32, dev)
        _solve(tau, "orgqr", nb, {"A": m * qc * isz, "tau": k * isz, "info": 4},
               m=m, n=qc, k=k, A=Qb.data_ptr(), lda=m, tau=tau.data_ptr(), info=info.data_ptr())
    return _rowmajor(Qb)


def qr(A, mode="reduced", *, out=None):
    F = _F()
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _check_A(A, "linalg.qr", square=False)
    A3, batch = _flat(A)
    nb, m, n = A3.shape
    k = _b.min(m, n)
    rr = m if mode == "complete" else k
    buf, tau = _geqrf(A3)
    R = _rowmajor(buf).narrow(-2, 0, rr).triu().contiguous().reshape(*batch, rr, n)
    if mode == "r":
        Q = _empty((0,), A.dtype, A.device)
    else:
        qc = m if mode == "complete" else k
        Q = _orgqr(buf, tau, m, qc).reshape(*batch, m, qc)
    return F._out(F.QRResult(Q, R), out, "qr")


def torch_qr(input, some=True, *, out=None):
    F = _F()
    Q, R = qr(input, "reduced" if some else "complete")
    return F.TorchQRResult(Q, R)


def geqrf(input, *, out=None):
    from ptcore.linalg import _extra as E
    E._tensor_arg(input, "geqrf", "input")
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    E._lapack_dtype(input.dtype, "geqrf_cuda")
    _code(input.dtype, "geqrf")
    A3, batch = _flat(input)
    m, n = input.shape[-2:]
    buf, tau = _geqrf(A3)
    a = _rowmajor(buf).reshape(*batch, m, n)
    return E._out(E.GeqrfResult(a, tau.reshape(*batch, _b.min(m, n))), out, "geqrf")


def householder_product(A, tau, *, out=None):
    """orgqr; the composite front-end when a gradient is wanted (and for the
    argument checks, which it runs first on a 0-batch view)."""
    if _needs_grad(A, tau):
        return _composite_linalg("householder_product")(A, tau, out=out)
    from ptcore.linalg import _extra as E
    _householder_checks(A, tau)
    _code(A.dtype, "linalg.householder_product")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    A3, batch = _flat(A)
    nb = A3.shape[0]
    Q = _orgqr(_colmajor(A3), tau.reshape(nb, k).contiguous(), m, n)
    return E._out(Q.reshape(*batch, m, n), out, "linalg_householder_product")


def _householder_checks(A, tau):
    """The composite's checks without its computation (it raises before
    touching values when the arguments are bad)."""
    from ptcore.linalg import _extra as E
    fn = "torch.linalg.householder_product"
    E._tensor_arg(A, "linalg_householder_product", "input")
    E._tensor_arg(tau, "linalg_householder_product", "tau")
    if A.dim() < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {E._shape_str(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{fn}: tau dtype {tau.dtype._legacy} does not match input dtype "
                           f"{A.dtype._legacy}")
    E._lapack_dtype(A.dtype, "orgqr_cuda")


def orgqr(input, tau, *, out=None):
    return householder_product(input, tau, out=out)


def _composite_linalg(name):
    from ptcore._dispatch.table import lookup
    return lookup(name, "linalg").raw


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """cuSOLVER ormqr after the composite's checks (run on empty slices)."""
    from ptcore.linalg import _extra as E
    if _needs_grad(input, tau, other):
        return _composite("ormqr")(input, tau, other, left, transpose, out=out)
    _ormqr_checks(input, tau, other, left)
    _code(input.dtype, "ormqr")
    batch = tuple(input.shape[:-2])
    nb = math.prod(batch)
    mi, ki = input.shape[-2], tau.shape[-1]
    A3 = input.reshape(nb, mi, input.shape[-1]).narrow(-1, 0, ki)
    Ab = _colmajor(A3)
    C3 = other.reshape(nb, other.shape[-2], other.shape[-1])
    Cb = _colmajor(C3)
    m, n = C3.shape[1], C3.shape[2]
    if nb and m and n and ki:
        isz = _isz(input.dtype)
        info = _zeros((nb,), _C.int32, input.device)
        _solve(input, "ormqr", nb, {"A": mi * ki * isz, "tau": ki * isz, "C": m * n * isz,
                                    "info": 4},
               side=0 if left else 1, trans=1 if transpose else 0, m=m, n=n, k=ki,
               A=Ab.data_ptr(), lda=max(1, mi), tau=tau.reshape(nb, ki).contiguous().data_ptr(),
               C=Cb.data_ptr(), ldc=max(1, m), info=info.data_ptr())
    return E._out(_rowmajor(Cb).reshape(other.shape), out, "ormqr")


def _ormqr_checks(input, tau, other, left):
    from ptcore.linalg import _extra as E
    fn = "torch.ormqr"
    E._tensor_arg(input, "ormqr", "input")
    E._tensor_arg(tau, "ormqr", "input2")
    E._tensor_arg(other, "ormqr", "input3")
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
                               f"input.shape[:-2], but got {E._shape_str(tau.shape[:-1])}")
        if tuple(other.shape[:-2]) != tuple(input.shape[:-2]):
            raise RuntimeError(f"{fn}: Expected batch dimensions of other to be equal to "
                               f"input.shape[:-2], but got {E._shape_str(other.shape[:-2])}")
    if tau.dtype is not input.dtype or other.dtype is not input.dtype:
        raise RuntimeError(f"{fn}: Expected input, tau and other to have the same dtype, but got "
                           f"{input.dtype._legacy}, {tau.dtype._legacy} and "
                           f"{other.dtype._legacy}")
    E._lapack_dtype(input.dtype, "ormqr_cuda")


# ---------------------------------------------------------------------------
# triangular solve: cuBLAS trsm
# ---------------------------------------------------------------------------
def _trsm(A3, B3, upper, left, unit, trans=0):
    """Solve op(T) X = B (left) or X op(T) = B for fresh (nb, r, c) ``X``;
    ``A3`` (nb, n, n) triangular (only its ``upper``/lower triangle read)."""
    nb, r, c = B3.shape
    n = A3.shape[-1]
    Ab = _colmajor(A3)
    X = _colmajor(B3)
    if nb and r and c:
        isz = _isz(A3.dtype)
        _solve(A3, "trsm", nb, {"A": n * n * isz, "B": r * c * isz},
               side=0 if left else 1, uplo=1 if upper else 0, trans=trans, diag=1 if unit else 0,
               m=r, n=c, alpha=1.0, A=Ab.data_ptr(), lda=max(1, n), B=X.data_ptr(),
               ldb=max(1, r))
    return _rowmajor(X)


def _solve_triangular_forward(A, B, upper, left, unitriangular):
    from ptcore._ops.linalg import _broadcast_batch
    n = A.shape[-1]
    batch = _broadcast_batch(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    nb = math.prod(batch)
    r, c = B.shape[-2:]
    A3 = A.expand(*batch, n, n).reshape(nb, n, n)
    B3 = B.expand(*batch, r, c).reshape(nb, r, c)
    return _trsm(A3, B3, upper, left, unitriangular).reshape(*batch, r, c)


_TRI_FN = []


def _tri_function():
    if _TRI_FN:
        return _TRI_FN[0]
    from ptcore.autograd import Function

    class SolveTriangularCuda(Function):
        """``X = A^-1 B`` (``B A^-1`` when not left) for triangular ``A``;
        PyTorch's linalg_solve_triangular backward."""

        @staticmethod
        def forward(ctx, A, B, upper, left, unitriangular):
            X = _solve_triangular_forward(A, B, upper, left, unitriangular)
            ctx.save_for_backward(A, X)
            ctx.flags = (upper, left, unitriangular)
            ctx.b_shape = tuple(B.shape)
            return X

        @staticmethod
        def backward(ctx, g):
            A, X = ctx.saved_tensors
            upper, left, unit = ctx.flags
            P = _P()
            gA = gB = None
            need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
            if need_a or need_b:
                gB = P.linalg.solve_triangular(A.mH, g, upper=not upper, left=left,
                                               unitriangular=unit)
            if need_a:
                gA = -gB @ X.mH if left else -X.mH @ gB
                gA = gA.triu(1 if unit else 0) if upper else gA.tril(-1 if unit else 0)
                gA = _unbroadcast(gA, A.shape)
            if need_b:
                gB = _unbroadcast(gB, ctx.b_shape)
            return gA, gB, None, None, None

    _TRI_FN.append(SolveTriangularCuda)
    return SolveTriangularCuda


def _unbroadcast(g, shape):
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and
                                g.shape[lead + i] != 1]
    r = g.sum(dims, keepdim=True) if dims else g
    return r.reshape(shape)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    from ptcore.linalg import _extra as E
    from ptcore._ops.linalg import _broadcast_batch
    fn = "linalg.solve_triangular"
    E._tensor_arg(A, "linalg_solve_triangular", "input")
    E._tensor_arg(B, "linalg_solve_triangular", "B")
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
    P = _P()
    dt = P.promote_types(A.dtype, B.dtype)
    E._lapack_dtype(dt, "triangular_solve_cuda")
    _code(dt, fn)
    _broadcast_batch(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    if A.dtype is not dt:
        A = A.to(dt)
    if B.dtype is not dt:
        B = B.to(dt)
    if _needs_grad(A, B):
        X = _tri_function().apply(A, B, bool(upper), bool(left), bool(unitriangular))
    else:
        X = _solve_triangular_forward(A, B, bool(upper), bool(left), bool(unitriangular))
    return E._out(X, out, "linalg_solve_triangular")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The legacy ``torch.triangular_solve`` on trsm (composite when a
    gradient is wanted)."""
    if _needs_grad(b, A):
        return _composite("triangular_solve")(b, A, upper, transpose, unitriangular, out=out)
    import warnings
    from ptcore._ops import linalg_composite as LC
    from ptcore._ops._composite_common import _check_tensor, _write_out, _fresh
    warnings.warn("torch.triangular_solve is deprecated in favor of "
                  "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                  "release.\ntorch.linalg.solve_triangular has its arguments reversed and does "
                  "not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
                  "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
                  UserWarning, stacklevel=2)
    _check_tensor(b, "triangular_solve", "input", 1)
    _check_tensor(A, "triangular_solve", "A", 2)
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.dim()} dimensions instead")
    LC._check_linear_solve(b, A, "triangular_solve")
    _code(A.dtype, "triangular_solve")
    bb, AA = LC._broadcast_mats(b, A)
    nb = math.prod(bb.shape[:-2])
    n, k = bb.shape[-2:]
    X = _trsm(AA.reshape(nb, n, n), bb.reshape(nb, n, k), bool(upper), True, bool(unitriangular),
              trans=1 if transpose else 0).reshape(bb.shape)
    coef = _fresh(AA)
    if out is not None:
        return LC.TriangularSolveResult(_write_out(X, out[0]), _write_out(coef, out[1]))
    return LC.TriangularSolveResult(X, coef)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """The composite's checks and L/U; P built on the device from the pivots
    (one pass of row swaps per pivot column)."""
    from ptcore._ops import linalg_composite as LC
    from ptcore._ops._composite_common import _check_tensor, _write_out
    P = _P()
    _check_tensor(LU_data, "lu_unpack", "LU_data", 1)
    _check_tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    if LU_data.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2:]
    k = _b.min(m, n)
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
    dt, dev = LU_data.dtype, LU_data.device
    empty = P.empty(0, dtype=dt, device=dev)
    if unpack_data:
        L = P.tril(LU_data, -1).narrow(-1, 0, k) + P.eye(m, k, dtype=dt, device=dev)
        U = P.triu(LU_data.narrow(-2, 0, k))
    else:
        L = U = empty
    if unpack_pivots:
        Pm = _perm_matrix(LU_pivots, m, dt)
    else:
        Pm = empty
    if out is not None:
        return LC.LUUnpackResult(_write_out(Pm, out[0]), _write_out(L, out[1]),
                                 _write_out(U, out[2]))
    return LC.LUUnpackResult(Pm, L, U)


def _perm_matrix(piv, m, dt):
    """P with ``P @ L @ U == A`` from LAPACK's 1-based interchanges, on the device."""
    P = _P()
    batch = tuple(piv.shape[:-1])
    k = piv.shape[-1]
    nb = math.prod(batch)
    dev = piv.device
    p = piv.reshape(nb, k).to(_C.int64) - 1
    perm = P.arange(m, dtype=_C.int64, device=dev).expand(nb, m).contiguous()
    for i in range(k):
        j = p.narrow(1, i, 1)                          # (nb, 1)
        a = perm.narrow(1, i, 1).clone()
        b = perm.gather(1, j)
        perm.narrow(1, i, 1).copy_(b)
        perm.scatter_(1, j, a)
    Pm = P.zeros(nb, m, m, dtype=dt, device=dev)
    if nb and m:
        Pm.scatter_(1, perm.unsqueeze(1), P.ones(nb, 1, m, dtype=dt, device=dev))
    return Pm.reshape(*batch, m, m)


# ---------------------------------------------------------------------------
# symmetric eigenproblem: syevd
# ---------------------------------------------------------------------------
def _eigh_impl(A, UPLO, want_v, fn):
    F = _F()
    _check_A(A, fn)
    uplo = F._check_uplo(UPLO)
    A3, batch = _flat(A)
    nb, n, _ = A3.shape
    buf = _colmajor(A3)
    W = _zeros((nb, n), A.dtype, A.device)
    info = _zeros((nb,), _C.int32, A.device)
    if nb and n:
        isz = _isz(A.dtype)
        _solve(A3, "syevd", nb, {"A": n * n * isz, "W": n * isz, "info": 4},
               jobz=1 if want_v else 0, uplo=0 if uplo == "L" else 1, n=n, A=buf.data_ptr(),
               lda=n, W=W.data_ptr(), info=info.data_ptr())
    _sync_check(info, fn, A.dim() > 2, F._eigh_msg)
    V = _rowmajor(buf).reshape(*batch, n, n) if want_v else None
    return W.reshape(*batch, n), V


def eigh(A, UPLO="L", *, out=None):
    F = _F()
    W, V = _eigh_impl(A, UPLO, True, "linalg.eigh")
    return F._out(F.EighResult(W, V), out, "eigh")


def eigvalsh(A, UPLO="L", *, out=None):
    return _F()._out(_eigh_impl(A, UPLO, False, "linalg.eigvalsh")[0], out, "eigvalsh")


def _eig_unsupported(A, *args, **kwargs):
    raise NotImplementedError(
        "linalg.eig/eigvals: no CUDA kernel yet (cuSOLVER's geev is only in its 64-bit "
        "cusolverDnXgeev API, not wired in ptcore); move the tensor to the CPU with .cpu()")


# ---------------------------------------------------------------------------
# SVD: gesvd (m >= n; a wide matrix is factored through its transpose)
# ---------------------------------------------------------------------------
def _svd_impl(A, mode, fn):
    F = _F()
    P = _P()
    _check_A(A, fn, square=False)
    A3, batch = _flat(A)
    nb, m, n = A3.shape
    k = _b.min(m, n)
    dt, dev = A.dtype, A.device
    ucols = k if mode == "S" else m
    vrows = k if mode == "S" else n
    if k == 0 or nb == 0:
        S = _zeros((nb, k), dt, dev)
        U = Vh = None
        if mode != "N":
            U = _eye_batch(nb, m, ucols, dt, dev).contiguous()
            Vh = _eye_batch(nb, vrows, n, dt, dev).contiguous()
    else:
        bad = ~P.isfinite(A3).reshape(nb, -1).all(-1)
        if bool(bad.any()):
            info = P.where(bad, -4, 0).to(_C.int32)
            _sync_check(info, fn, A.dim() > 2, F._svd_msg, negative_ok=True)
        tall = m >= n
        # the matrix gesvd factors (mm x nn, mm >= nn), column-major
        mm, nn = (m, n) if tall else (n, m)
        buf = _colmajor(A3) if tall else _colmajor(A3.mT)
        jb = {"A": "A", "S": "S", "N": "N"}[mode]
        uc = mm if mode == "A" else k          # columns of gesvd's U
        vr = nn if mode == "A" else k          # rows of gesvd's VT
        S = _zeros((nb, k), dt, dev)
        Ub = _empty((nb, uc, mm), dt, dev) if mode != "N" else None
        Vb = _empty((nb, nn, vr), dt, dev) if mode != "N" else None
        info = _zeros((nb,), _C.int32, dev)
        isz = _isz(dt)
        strides = {"A": mm * nn * isz, "S": k * isz, "info": 4}
        if mode != "N":
            strides.update(U=mm * uc * isz, VT=vr * nn * isz)
        _solve(A3, "gesvd", nb, strides, jobu=jb, jobvt=jb, m=mm, n=nn, A=buf.data_ptr(),
               lda=mm, S=S.data_ptr(), U=Ub.data_ptr() if Ub is not None else 0, ldu=mm,
               VT=Vb.data_ptr() if Vb is not None else 0, ldvt=max(1, vr),
               info=info.data_ptr())
        _sync_check(info, fn, A.dim() > 2, F._svd_msg, negative_ok=True)
        U = Vh = None
        if mode != "N":
            # gesvd's U is Ub.mT (mm x uc), its VT is Vb.mT (vr x nn)
            if tall:
                U, Vh = Ub.mT.contiguous(), Vb.mT.contiguous()
            else:                  # A = (U' S VT')^T = VT'^T S U'^T
                U, Vh = Vb, Ub
    S = S.reshape(*batch, k)
    if mode != "N":
        U = U.reshape(*batch, m, ucols)
        Vh = Vh.reshape(*batch, vrows, n)
    return U, S, Vh


def _check_svd_driver(driver):
    """PyTorch's CUDA drivers (all computed with gesvd here)."""
    if driver not in (None, "gesvd", "gesvdj", "gesvda"):
        raise RuntimeError(f"torch.linalg.svd: unknown svd driver {driver} in svd_cusolver "
                           f"computation. Check doc at "
                           f"https://pytorch.org/docs/stable/generated/torch.linalg.svd.html")


def svd(A, full_matrices=True, *, driver=None, out=None):
    F = _F()
    _check_svd_driver(driver)
    U, S, Vh = _svd_impl(A, "A" if full_matrices else "S", "linalg.svd")
    return F._out(F.SVDResult(U, S, Vh), out, "svd")


def svdvals(A, *, driver=None, out=None):
    _check_svd_driver(driver)
    return _F()._out(_svd_impl(A, "N", "linalg.svd")[1], out, "svdvals")


def torch_svd(input, some=True, compute_uv=True, *, out=None):
    F = _F()
    P = _P()
    if not compute_uv:
        _check_A(input, "linalg.svd", square=False)
        S = P.linalg.svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        k = _b.min(m, n)
        U = P.zeros(*batch, m, k if some else m, dtype=input.dtype, device=input.device)
        V = P.zeros(*batch, n, k if some else n, dtype=input.dtype, device=input.device)
        return F.TorchSVDResult(U, S, V)
    U, S, Vh = P.linalg.svd(input, full_matrices=not some)
    return F.TorchSVDResult(U, S, Vh.mT)


# ---------------------------------------------------------------------------
# least squares (QR), pseudo-inverse, rank, norms, powers, products
# ---------------------------------------------------------------------------
def lstsq(A, B, rcond=None, *, driver=None):
    """``gels`` as PyTorch's CUDA backend: QR of A (m >= n) or of A^H
    (minimum-norm solution when m < n); full rank assumed."""
    F = _F()
    from ptcore._tensor import _TensorBase
    from ptcore._ops.linalg import _broadcast_batch
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
    if A.dtype not in F._FLOATS:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if driver is None:
        driver = "gels"
    if driver not in F._DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    if driver != "gels":
        raise RuntimeError(f"{fn}: `driver` other than `gels` is not supported on CUDA")
    _code(A.dtype, fn)
    diff = A.dim() - B.dim()
    if not 0 <= diff <= 1:
        raise RuntimeError(f"{fn}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    vector = diff == 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    if vector:
        batch = _broadcast_batch(A.shape[:-2], B.shape[:-1])
        if Bm.shape[-2] != m:
            raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-1)")
    else:
        if Bm.shape[-2] != m:
            raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
        batch = _broadcast_batch(A.shape[:-2], Bm.shape[:-2])
    nb = math.prod(batch)
    k = Bm.shape[-1]
    A3 = A.expand(*batch, m, n).reshape(nb, m, n)
    B3 = Bm.expand(*batch, m, k).reshape(nb, m, k)
    dt, dev = A.dtype, A.device
    isz = _isz(dt)
    resid = None
    if _b.min(m, n) == 0 or nb == 0 or k == 0:
        X = _zeros((nb, n, k), dt, dev)
        if m > n and k and nb:
            resid = (B3 * B3).sum(-2)
    elif m >= n:
        buf, tau = _geqrf(A3)
        Cb = _colmajor(B3)                     # (nb, k, m): m x k column-major
        info = _zeros((nb,), _C.int32, dev)
        _solve(A3, "ormqr", nb, {"A": m * n * isz, "tau": n * isz, "C": m * k * isz, "info": 4},
               side=0, trans=1, m=m, n=k, k=n, A=buf.data_ptr(), lda=m, tau=tau.data_ptr(),
               C=Cb.data_ptr(), ldc=m, info=info.data_ptr())
        _solve(A3, "trsm", nb, {"A": m * n * isz, "B": m * k * isz},
               side=0, uplo=1, trans=0, diag=0, m=n, n=k, alpha=1.0, A=buf.data_ptr(), lda=m,
               B=Cb.data_ptr(), ldb=m)
        QtB = _rowmajor(Cb)                    # (nb, m, k)
        X = QtB.narrow(-2, 0, n).contiguous()
        if m > n:
            tail = QtB.narrow(-2, n, m - n)
            resid = (tail * tail).sum(-2)
    else:
        buf, tau = _geqrf(A3.mT)               # A^T = Q R, buf: n x m column-major
        Cb = _zeros((nb, k, n), dt, dev)       # n x k column-major, rows m.. zero
        Cb.narrow(-1, 0, m).copy_(B3.mT)
        _solve(A3, "trsm", nb, {"A": m * n * isz, "B": n * k * isz},
               side=0, uplo=1, trans=1, diag=0, m=m, n=k, alpha=1.0, A=buf.data_ptr(), lda=n,
               B=Cb.data_ptr(), ldb=n)
        info = _zeros((nb,), _C.int32, dev)
        _solve(A3, "ormqr", nb, {"A": m * n * isz, "tau": m * isz, "C": n * k * isz, "info": 4},
               side=0, trans=0, m=n, n=k, k=m, A=buf.data_ptr(), lda=n, tau=tau.data_ptr(),
               C=Cb.data_ptr(), ldc=n, info=info.data_ptr())
        X = _rowmajor(Cb)
    X = X.reshape(*batch, n, k)
    if vector:
        X = X.squeeze(-1)
    empty = _empty((0,), dt, dev)
    resid = resid.reshape(*batch, k) if resid is not None else empty
    return F.LstsqResult(X, resid, _empty((0,), _C.int64, dev), empty)


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------
_registered = [False]

# (op name, namespaces, kernel)
_LA = ("linalg",)
_TOP = ("ptcore", "Tensor")


def _front_end(name, ns="linalg"):
    """A front-end that is written with public ops only (device-generic): its
    own CUDA kernel."""
    from ptcore._dispatch.table import lookup
    return lookup(name, ns).raw


def register():
    """Register the linalg kernels in the operator table (once)."""
    if _registered[0]:
        return
    from ptcore._dispatch.device import register_kernel
    import ptcore.linalg  # noqa: F401  (declares the linalg ops)
    from ptcore.cuda._launch_linalg_derived import (
        cross, matrix_norm, matrix_power, matrix_rank, multi_dot, norm, pinv, pinverse, vecdot)
    table = [
        ("linalg_inv", _LA, inv), ("linalg_inv_ex", _LA, inv_ex), ("linalg_det", _LA, det),
        ("linalg_slogdet", _LA, slogdet), ("linalg_solve", _LA, solve),
        ("linalg_solve_ex", _LA, solve_ex), ("linalg_cholesky", _LA, cholesky),
        ("linalg_cholesky_ex", _LA, cholesky_ex), ("linalg_eigh", _LA, eigh),
        ("linalg_eigvalsh", _LA, eigvalsh), ("linalg_svd", _LA, svd),
        ("linalg_svdvals", _LA, svdvals), ("linalg_qr", _LA, qr),
        ("linalg_lu_factor", _LA, lu_factor), ("linalg_lu_factor_ex", _LA, lu_factor_ex),
        ("linalg_lstsq", _LA, lstsq), ("linalg_pinv", _LA, pinv),
        ("matrix_rank", _LA, matrix_rank), ("matrix_norm", _LA, matrix_norm), ("norm", _LA, norm),
        ("matrix_power", _LA, matrix_power), ("multi_dot", _LA, multi_dot),
        ("solve_triangular", _LA, solve_triangular),
        ("householder_product", _LA, householder_product), ("vecdot", _LA, vecdot),
        ("linalg_cross", _LA, cross),
        ("linalg_eig", _LA, _eig_unsupported), ("linalg_eigvals", _LA, _eig_unsupported),
        # top-level and Tensor forms
        ("det", _TOP, det), ("slogdet", _TOP, torch_slogdet), ("logdet", _TOP, logdet),
        ("inverse", _TOP, inverse), ("cholesky", _TOP, cholesky), ("svd", _TOP, torch_svd),
        ("qr", _TOP, torch_qr), ("pinverse", _TOP, pinverse),
        # (Tensor.geqrf/orgqr/ormqr are core methods calling these: a kernel on a core
        # op would make every core method an entry)
        ("matrix_power", _TOP, matrix_power), ("geqrf", ("ptcore",), geqrf),
        ("orgqr", ("ptcore",), orgqr), ("ormqr", ("ptcore",), ormqr),
        ("cholesky_solve", _TOP, cholesky_solve),
        ("cholesky_inverse", _TOP, cholesky_inverse),
        ("triangular_solve", _TOP, triangular_solve), ("lu_unpack", _TOP, lu_unpack),
    ]
    for name, ns, k in table:
        register_kernel(name, "cuda", k, namespaces=ns, optional=True)
    # front-ends written with public ops only: their own CUDA kernels
    for name in ("lu", "lu_solve", "cond", "tensorinv", "tensorsolve", "vander"):
        register_kernel(name, "cuda", _front_end(name), namespaces=_LA, optional=True)
    _registered[0] = True
