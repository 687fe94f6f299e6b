"""The CUDA loops of the ``ptcore.linalg`` front-ends: the LAPACK-level
primitives on the driver's dense solver interface
(:meth:`ptcore.cuda.driver.interface.Driver.solver`: cuSOLVER on a GPU, LAPACK on the
emulated device).

Each loop has the signature of the CPU loop it stands for (the batched
LAPACK drivers of ``ptcore._ops.kernels._blas``: ``lu_into``, ``inv_into`` ...): it
reads 3-D ``(batch, rows, cols)`` tensors and writes the output tensors the
front-end allocated on the device.  The front-ends (ptcore.linalg._factor)
do every argument check, the batching, ``out=``, the ``_ex``/info handling
and autograd; they pick a loop with
``cpu_kernel(name, device, cpu_loop)``, and :func:`register` registers these
under the same names with ``register_loop``.

Every matrix handed to the solver is first copied into a fresh column-major
work buffer on the device (``A3.mT`` made contiguous: a ``(batch, n, m)``
tensor holds ``batch`` column-major ``m x n`` matrices), and results are
copied back through the outputs' strides.  Batches are strided loops of
single calls (the driver's ``batch``/``strides``).  float32, float64,
complex64 and complex128 run here (the solver types S, D, C, Z; other dtypes
raise NotImplementedError naming the loop); for the complex types the
adjoint is the conjugate transpose (cuBLAS's ``CUBLAS_OP_C``, :func:`_adj`)
and eigenvalues of ``syevd`` and singular values of ``gesvd`` are real.
"""
import builtins as _b

from ptcore import _tensor as _C
from ptcore._dispatch.device import register_loop
from ptcore.cuda.ops import launch as _launch
from ptcore.cuda.ops import tensors as _tensors
from ptcore.cuda.runtime import state as _runtime
import ptcore.linalg  # noqa: F401  (declares the linalg ops)

__all__ = ["register", "LOOPS"]


def _P():
    import ptcore
    return ptcore


# ---------------------------------------------------------------------------
# buffers and the solver call
# ---------------------------------------------------------------------------
def _empty(shape, dt, dev):
    return _tensors.empty([int(s) for s in shape], dt, dev)


def _zeros(shape, dt, dev):
    t = _empty(shape, dt, dev)
    t.zero_()
    return t


def _code(dt, fn):
    """The solver's type letter; other dtypes are refused."""
    code = {_C.float32: "S", _C.float64: "D", _C.complex64: "C", _C.complex128: "Z"}.get(dt)
    if code is None:
        raise NotImplementedError(f"{fn}: {dt} is not supported on CUDA (float32, float64, "
                                  f"complex64 and complex128 run through cuSOLVER)")
    return code


def _code_unless_empty(A, fn):
    """:func:`_code`'s refusal, except for an empty ``A`` (the loops call no solver
    routine then, and torch returns the empty or identity results of any dtype)."""
    if A.numel():
        _code(A.dtype, fn)


def _isz(dt):
    return dt.itemsize


def _real(dt):
    """The real dtype of ``dt`` (eigenvalues, singular values, residuals)."""
    return dt.to_real() if dt.is_complex else dt


def _adj(dt):
    """cuBLAS's operation code of the adjoint: ``CUBLAS_OP_C`` (2) for a
    complex, ``CUBLAS_OP_T`` (1) for a real type."""
    return 2 if dt.is_complex else 1


def _sq_abs(t):
    """``|t|^2`` elementwise, real (as PyTorch's residuals: ``t * conj(t)``'s
    real part for a complex ``t``)."""
    return (t * t.conj()).real if t.dtype.is_complex else t * t


def _colmajor(A3):
    """A fresh ``(nb, n, m)`` buffer holding each ``m x n`` matrix of ``A3``
    column-major (never aliasing ``A3``)."""
    nb, m, n = A3.shape
    buf = _empty((nb, n, m), A3.dtype, A3.device)
    if buf.numel():
        buf.copy_(A3.mT)
    return buf


def _solve(t, routine, batch=1, strides=None, **args):
    """Queue ``batch`` calls of ``routine`` on ``t``'s device and current stream
    (in the type of ``t``)."""
    idx = t.device.index
    drv = _runtime.lazy_init(f"cuSOLVER {routine}")
    drv.set_current(idx)
    drv.solver(idx, _runtime.current_stream_handle(idx), routine,
               _code(t.dtype, routine), batch=int(batch), strides=strides, **args)


def _getrf(A3, piv, info):
    """LU of ``A3`` into a column-major buffer (returned), ``piv``/``info``."""
    nb, m, n = A3.shape
    k = _b.min(m, n)
    buf = _colmajor(A3)
    if nb and k:
        _solve(A3, "getrf", nb, {"A": m * n * _isz(A3.dtype), "ipiv": 4 * k, "info": 4},
               m=m, n=n, A=buf.data_ptr(), lda=max(1, m), ipiv=piv.data_ptr(),
               info=info.data_ptr())
    return buf


def _getrs(buf, piv, B3, X):
    """``X`` (nb, n, k) = the solution with the LU factors of square ``buf``."""
    nb, n, k = B3.shape
    Xb = _colmajor(B3)
    if nb and n and k:
        info = _zeros((nb,), _C.int32, B3.device)
        isz = _isz(B3.dtype)
        _solve(B3, "getrs", nb, {"A": n * n * isz, "ipiv": 4 * n, "B": n * k * isz, "info": 4},
               trans=0, n=n, nrhs=k, A=buf.data_ptr(), lda=max(1, n), ipiv=piv.data_ptr(),
               B=Xb.data_ptr(), ldb=max(1, n), info=info.data_ptr())
    X.copy_(Xb.mT)


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


def _ormqr(buf, tau, Cb, side, trans, m, n, k, lda):
    """Apply the reflectors of the column-major ``buf`` to the column-major ``Cb``."""
    nb = Cb.shape[0]
    isz = _isz(Cb.dtype)
    info = _zeros((nb,), _C.int32, Cb.device)
    _solve(Cb, "ormqr", nb, {"A": buf.shape[1] * buf.shape[2] * isz,
                             "tau": tau.shape[1] * isz, "C": m * n * isz, "info": 4},
           side=side, trans=trans, m=m, n=n, k=k, A=buf.data_ptr(), lda=lda,
           tau=tau.data_ptr(), C=Cb.data_ptr(), ldc=m, info=info.data_ptr())


def _trsm(A3, buf, Cb, trans, m, n, lda):
    """Upper-triangular solve (R of the QR in ``buf``) on the column-major ``Cb``."""
    isz = _isz(Cb.dtype)
    _solve(A3, "trsm", Cb.shape[0], {"A": buf.shape[1] * buf.shape[2] * isz,
                                     "B": Cb.shape[1] * Cb.shape[2] * isz},
           side=0, uplo=1, trans=trans, diag=0, m=m, n=n, alpha=1.0, A=buf.data_ptr(),
           lda=lda, B=Cb.data_ptr(), ldb=Cb.shape[2])


# ---------------------------------------------------------------------------
# the loops (the CPU loops' signatures: ptcore/_ops/kernels/_lapack.pxi)
# ---------------------------------------------------------------------------
def lu_into(A, LU, piv, info):
    """getrf: LU factors into ``LU``, 1-based pivots, info."""
    _code_unless_empty(A, "getrf")
    buf = _getrf(A, piv, info)
    LU.copy_(buf.mT)


def inv_into(A, out, info):
    """getrf + getrs with identity right-hand sides."""
    _code_unless_empty(A, "getri")
    nb, n, _ = A.shape
    piv = _zeros((nb, n), _C.int32, A.device)
    buf = _getrf(A, piv, info)
    eye = _P().eye(n, dtype=A.dtype, device=A.device).expand(nb, n, n)
    _getrs(buf, piv, eye, out)


def solve_into(A, B, X, info):
    """gesv as getrf + getrs."""
    _code_unless_empty(A, "gesv")
    nb, n, _ = A.shape
    piv = _zeros((nb, n), _C.int32, A.device)
    buf = _getrf(A, piv, info)
    _getrs(buf, piv, B, X)


def cholesky_into(A, L, upper, info):
    """potrf of the lower triangle; ``L`` gets the factor (upper: its adjoint),
    zeros in the other triangle."""
    _code_unless_empty(A, "potrf")
    nb, n, _ = A.shape
    buf = _colmajor(A)
    if nb and n:
        _solve(A, "potrf", nb, {"A": n * n * _isz(A.dtype), "info": 4},
               uplo=0, n=n, A=buf.data_ptr(), lda=n, info=info.data_ptr())
    # buf.mT is the row-major matrix; only its lower triangle is the factor
    # (upper: its adjoint, buf itself conjugated)
    L.copy_(buf.triu().conj() if upper else buf.mT.tril())


def qr_into(A, Q, R, info):
    """geqrf (+ orgqr when ``Q`` is wanted); ``R`` (rr x n) gets triu."""
    _code_unless_empty(A, "geqrf_orgqr")
    nb, m, n = A.shape
    rr = R.shape[1]
    buf, tau = _geqrf(A)
    R.copy_(buf.mT.narrow(-2, 0, rr).triu())
    if Q is None:
        return
    qc = Q.shape[2]
    k = tau.shape[1]
    Qb = _zeros((nb, qc, m), A.dtype, A.device)
    c = _b.min(qc, n)
    if c:
        Qb.narrow(1, 0, c).copy_(buf.narrow(1, 0, c))
    if nb and m and qc:
        isz = _isz(A.dtype)
        oinfo = _zeros((nb,), _C.int32, A.device)
        _solve(A, "orgqr", nb, {"A": m * qc * isz, "tau": k * isz, "info": 4},
               m=m, n=qc, k=k, A=Qb.data_ptr(), lda=m, tau=tau.data_ptr(),
               info=oinfo.data_ptr())
    Q.copy_(Qb.mT)


def _flat3(t):
    batch = 1
    for n in t.shape[:-2]:
        batch *= n
    # (the batch counted, not -1: ambiguous when a matrix dim is 0)
    return t.reshape(batch, t.shape[-2], t.shape[-1])


def geqrf(A):
    """``(a, tau)`` of ``torch.geqrf``: R and the reflectors, row-major."""
    _code(A.dtype, "geqrf")
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    buf, tau = _geqrf(_flat3(A))
    return buf.mT.contiguous().reshape(*batch, m, n), tau.reshape(*batch, _b.min(m, n))


def orgqr(A, tau):
    """The first ``n`` columns of the product of the reflectors (m >= n >= k;
    ``ungqr`` for a complex type)."""
    _code(A.dtype, "orgqr")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    A3 = _flat3(A)
    nb = A3.shape[0]
    Qb = _colmajor(A3)                                  # (nb, n, m)
    if nb and m and n:
        isz = _isz(A.dtype)
        info = _zeros((nb,), _C.int32, A.device)
        _solve(A3, "orgqr", nb, {"A": m * n * isz, "tau": k * isz, "info": 4},
               m=m, n=n, k=k, A=Qb.data_ptr(), lda=m,
               tau=tau.reshape(nb, k).contiguous().data_ptr(), info=info.data_ptr())
    return Qb.mT.contiguous().reshape(A.shape)


def ormqr(input, tau, other, left, transpose):
    """``other`` times Q (or Q^H with ``transpose``) from the left or the right
    (``unmqr`` for a complex type)."""
    _code(input.dtype, "ormqr")
    mi, ki = input.shape[-2], tau.shape[-1]
    A3 = _flat3(input).narrow(-1, 0, ki)
    nb = A3.shape[0]
    Ab = _colmajor(A3)                                  # (nb, ki, mi)
    Cb = _colmajor(_flat3(other))
    m, n = other.shape[-2:]
    if nb and m and n and ki:
        isz = _isz(input.dtype)
        info = _zeros((nb,), _C.int32, input.device)
        _solve(input, "ormqr", nb, {"A": mi * ki * isz, "tau": ki * isz, "C": m * n * isz,
                                    "info": 4},
               side=0 if left else 1, trans=_adj(input.dtype) if transpose else 0, m=m, n=n, k=ki,
               A=Ab.data_ptr(), lda=max(1, mi), tau=tau.reshape(nb, ki).contiguous().data_ptr(),
               C=Cb.data_ptr(), ldc=max(1, m), info=info.data_ptr())
    return Cb.mT.contiguous().reshape(other.shape)


def svd_into(A, U, S, Vh, mode, info):
    """gesvd (m >= n; a wide matrix is factored through its transpose)."""
    _code_unless_empty(A, "gesvd")
    nb, m, n = A.shape
    k = _b.min(m, n)
    dt, dev = A.dtype, A.device
    tall = m >= n
    mm, nn = (m, n) if tall else (n, m)        # the matrix gesvd factors, mm >= nn
    buf = _colmajor(A) if tall else _colmajor(A.mT)
    uc = mm if mode == "A" else k              # columns of gesvd's U
    vr = nn if mode == "A" else k              # rows of gesvd's VT
    Sb = _zeros((nb, k), _real(dt), dev)
    Ub = _empty((nb, uc, mm), dt, dev) if mode != "N" else None
    Vb = _empty((nb, nn, vr), dt, dev) if mode != "N" else None
    isz = _isz(dt)
    strides = {"A": mm * nn * isz, "S": k * _isz(_real(dt)), "info": 4}
    if mode != "N":
        strides.update(U=mm * uc * isz, VT=vr * nn * isz)
    _solve(A, "gesvd", nb, strides, jobu=mode, jobvt=mode, m=mm, n=nn, A=buf.data_ptr(),
           lda=mm, S=Sb.data_ptr(), U=Ub.data_ptr() if Ub is not None else 0, ldu=mm,
           VT=Vb.data_ptr() if Vb is not None else 0, ldvt=max(1, vr), info=info.data_ptr())
    S.copy_(Sb)
    if mode != "N":
        # gesvd's U is Ub.mT (mm x uc), its VT is Vb.mT (vr x nn)
        if tall:
            U.copy_(Ub.mT)
            Vh.copy_(Vb.mT)
        else:                      # A = (U' S VT')^T = VT'^T S U'^T (complex too: the
            # transposes of unitary factors are unitary)
            U.copy_(Vb)
            Vh.copy_(Ub)


def eigh_into(A, W, V, uplo, info):
    """syevd (heevd): ascending real eigenvalues into ``W``, vectors into ``V``
    (or None)."""
    _code_unless_empty(A, "syevd")
    nb, n, _ = A.shape
    buf = _colmajor(A)
    if nb and n:
        isz = _isz(A.dtype)
        _solve(A, "syevd", nb, {"A": n * n * isz, "W": n * _isz(_real(A.dtype)), "info": 4},
               jobz=1 if V is not None else 0, uplo=0 if uplo == "L" else 1, n=n,
               A=buf.data_ptr(), lda=n, W=W.data_ptr(), info=info.data_ptr())
    if V is not None:
        V.copy_(buf.mT)


def _geev_complex(A, W, V, info):
    """geev of complex matrices: ``W`` and the vectors as they come."""
    nb, n, _ = A.shape
    isz = _isz(A.dtype)
    buf = _colmajor(A)
    want = V is not None
    VR = _zeros((nb, n, n), A.dtype, A.device) if want else None
    strides = {"A": n * n * isz, "W": n * isz, "info": 4}
    if want:
        strides["VR"] = n * n * isz
    _solve(A, "geev", nb, strides, jobvr=1 if want else 0, n=n, A=buf.data_ptr(),
           lda=n, W=W.data_ptr(), VR=VR.data_ptr() if want else 0, ldvr=n,
           info=info.data_ptr())
    if want:
        V.copy_(VR.mT)


def eig_into(A, W, V, info):
    """geev (right vectors); ``W`` (nb, n) and ``V`` (nb, n, n) are complex
    and contiguous, for a real ``A`` the vectors unpacked from LAPACK's real
    form."""
    if A.dtype.is_complex:
        if A.shape[0] and A.shape[1]:
            _geev_complex(A, W, V, info)
        return
    _code(A.dtype, "geev")
    P = _P()
    nb, n, _ = A.shape
    if not (nb and n):
        return
    dt, dev = A.dtype, A.device
    isz = _isz(dt)
    buf = _colmajor(A)
    Wb = _zeros((nb, n, 2), dt, dev)           # interleaved (re, im)
    want = V is not None
    VR = _zeros((nb, n, n), dt, dev) if want else None
    strides = {"A": n * n * isz, "W": 2 * n * isz, "info": 4}
    if want:
        strides["VR"] = n * n * isz
    _solve(A, "geev", nb, strides, jobvr=1 if want else 0, n=n, A=buf.data_ptr(), lda=n,
           W=Wb.data_ptr(), VR=VR.data_ptr() if want else 0, ldvr=n, info=info.data_ptr())
    W.copy_(P.complex(Wb[..., 0], Wb[..., 1]))
    if not want:
        return
    # column j of VR.mT: a real vector (wi[j] == 0), or the real part of a
    # pair (wi[j] > 0: VR[:, j] + i VR[:, j+1]; its partner j+1 the conjugate)
    vr = VR.mT                                  # (nb, n, n) row-major view
    wi = Wb[..., 1]                             # (nb, n)
    zero = P.zeros((nb, 1), dtype=dt, device=dev)
    nxt = P.cat([vr.narrow(-1, 1, n - 1), P.zeros((nb, n, 1), dtype=dt, device=dev)], -1)
    prv = P.cat([P.zeros((nb, n, 1), dtype=dt, device=dev), vr.narrow(-1, 0, n - 1)], -1)
    wi_prev = P.cat([zero, wi.narrow(-1, 0, n - 1)], -1)
    first = (wi > 0).unsqueeze(-2)              # the first column of a pair
    second = (wi_prev > 0).unsqueeze(-2) & ~first
    re = P.where(second, prv, vr)
    im = P.where(first, nxt, P.where(second, -vr, P.zeros_like(vr)))
    V.copy_(P.complex(re, im))


def lstsq_into(A, B, X, resid, rank, S, driver, rcond, info):
    """gels as PyTorch's CUDA backend: QR of A (m >= n) or of A^H (the
    minimum-norm solution when m < n); full rank assumed."""
    _code_unless_empty(A, "gels")
    if driver != "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on "
                           "CUDA")
    nb, m, n = A.shape
    k = B.shape[2]
    dt, dev = A.dtype, A.device
    if _b.min(m, n) == 0 or nb == 0 or k == 0:
        X.zero_()
        if resid is not None and k and nb:
            resid.copy_(_sq_abs(B).sum(-2))
        return
    if m >= n:
        buf, tau = _geqrf(A)                   # (nb, n, m): m x n column-major
        Cb = _colmajor(B)                      # (nb, k, m): m x k column-major
        _ormqr(buf, tau, Cb, 0, _adj(dt), m, k, n, m)
        _trsm(A, buf, Cb, 0, n, k, m)
        QtB = Cb.mT                            # (nb, m, k)
        X.copy_(QtB.narrow(-2, 0, n))
        if resid is not None and m > n:
            resid.copy_(_sq_abs(QtB.narrow(-2, n, m - n)).sum(-2))
    else:
        buf, tau = _geqrf(A.mH)                # A^H = Q R, buf: n x m column-major
        Cb = _zeros((nb, k, n), dt, dev)       # n x k column-major, rows m.. zero
        Cb.narrow(-1, 0, m).copy_(B.mT)
        _trsm(A, buf, Cb, _adj(dt), m, k, n)
        _ormqr(buf, tau, Cb, 0, 0, n, k, m, n)
        X.copy_(Cb.mT)


def ldl_factor(A, hermitian):
    """sytrf (Bunch-Kaufman, lower, as PyTorch's CUDA ``ldl_factor``):
    ``(LD, pivots, info)`` of ``A`` (..., n, n), ``LD``'s upper triangle
    zero, ``pivots`` LAPACK's.  cuSOLVER has no Hermitian factorisation
    (``?hetrf``): a complex ``A`` with ``hermitian`` is refused."""
    if hermitian and A.dtype.is_complex:
        raise NotImplementedError(
            "torch.linalg.ldl_factor: complex tensors with hermitian=True are not supported on "
            f"CUDA ({A.device}: cuSOLVER has no Hermitian Bunch-Kaufman factorisation); move "
            "the tensor to the CPU with .cpu() to run it there")
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    A3 = _flat3(A)
    nb = A3.shape[0]
    piv = _zeros((nb, n), _C.int32, A.device)
    info = _zeros((nb,), _C.int32, A.device)
    buf = _colmajor(A3)
    if nb and n:
        _solve(A3, "sytrf", nb, {"A": n * n * _isz(A.dtype), "ipiv": 4 * n, "info": 4},
               uplo=0, n=n, A=buf.data_ptr(), lda=n, ipiv=piv.data_ptr(), info=info.data_ptr())
    return (buf.mT.tril().contiguous().reshape(A.shape), piv.reshape(*batch, n),
            info.reshape(batch))


def ldl_solve(LD, pivots, B, hermitian):
    """sytrs (cuSOLVER's 64-bit ``Xsytrs``, as PyTorch's): ``X`` of
    ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)``, batch dims
    broadcast; a complex ``LD`` with ``hermitian`` raises as PyTorch's CUDA."""
    if hermitian and LD.dtype.is_complex:
        raise RuntimeError("torch.linalg.ldl_solve: complex tensors with hermitian=True flag are "
                           "not supported on CUDA.")
    P = _P()
    n, k = LD.shape[-1], B.shape[-1]
    batch = tuple(P.broadcast_shapes(tuple(B.shape[:-2]), tuple(LD.shape[:-2])))
    nb = 1
    for d in batch:
        nb *= d
    buf = _colmajor(LD.expand(*batch, n, n).reshape(nb, n, n))
    piv = pivots.expand(*batch, n).reshape(nb, n).to(_C.int64).contiguous()
    Xb = _colmajor(B.expand(*batch, n, k).reshape(nb, n, k))
    if nb and n and k:
        isz = _isz(LD.dtype)
        info = _zeros((nb,), _C.int32, LD.device)
        _solve(LD, "sytrs", nb, {"A": n * n * isz, "ipiv": 8 * n, "B": n * k * isz, "info": 4},
               uplo=0, n=n, nrhs=k, A=buf.data_ptr(), lda=n, ipiv=piv.data_ptr(),
               B=Xb.data_ptr(), ldb=n, info=info.data_ptr())
    return Xb.mT.contiguous().reshape(*batch, n, k)


def unpack_pivots(piv, m):
    """LAPACK's 1-based row interchanges ``piv`` (nb, k) -> the permutations
    (nb, m) int64 (``P[..., perm[i], i] = 1``): one kernel, a thread per
    matrix applying the interchanges in order (one op per interchange took
    0.8 s for k = 1,024 on the H200); the pivots' range checked first (a
    sync), RuntimeError as the CPU loop."""
    P = _P()
    nb, k = piv.shape
    perm = _empty((nb, m), _C.int64, piv.device)
    if nb == 0 or m == 0:
        return perm
    pv = piv.to(_C.int32).contiguous()
    if k:
        lo, hi = P.stack(P.aminmax(pv)).tolist()
        if lo < 1 or hi > m:
            raise RuntimeError(f"torch.lu_unpack: pivots out of range [1, {m}]")
    _launch._launch(piv.device.index, "ptc_index_unpack_pivots_c", nb,
                    [_launch._ll(nb), _launch._ll(m), _launch._ll(k), _launch._ptr(perm),
                     _launch._ptr(pv)])
    return perm


#: loop name -> the CUDA loop (the CPU loop of the same name is ``_blas().<fn>``)
LOOPS = {
    "getrf": lu_into, "getri": inv_into, "gesv": solve_into, "potrf": cholesky_into,
    "geqrf_orgqr": qr_into, "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
    "gesvd": svd_into, "syevd": eigh_into, "geev": eig_into,
    "gels": lstsq_into, "unpack_pivots": unpack_pivots, "sytrf": ldl_factor,
    "sytrs": ldl_solve,
}

_registered = [False]


def register():
    """Register the loops (once).  The linalg ops whose front-ends call them
    (through ``cpu_kernel``, or other ops) are declared ``device="frontend"``:
    those front-ends are their CUDA kernels, run by the device layer under the
    op's autograd body (:func:`ptcore._dispatch.device.register_frontends`);
    the ``*_composite`` front-ends (cholesky_solve, lu_unpack ...) pass the
    layer by themselves."""
    if _registered[0]:
        return
    for name, fn in LOOPS.items():
        register_loop(name, "cuda", fn)
    _registered[0] = True
