"""``ptcore.lobpcg``: the k largest (or smallest) eigenpairs of a symmetric (generalized)
eigenproblem ``A x = lambda B x`` by the Locally Optimal Block Preconditioned Conjugate
Gradient method, as ``torch.lobpcg``.

``method="basic"`` is Knyazev's LOBPCG (Knyazev 2001), ``method="ortho"`` (the default)
selects B-orthonormal bases by the SVQB procedure of Stathopoulos and Wu (2002) with the
robust convergence test of Duersch et al. (2018, Sec. 4.3): the same iteration, parameters
and stopping rules as torch's ``torch/_lobpcg.py``, written with ptcore ops.  ``A`` may be
dense (a batch too) or a sparse COO matrix.

Gradients: when ``A`` requires grad, the eigenvalues returned are the Rayleigh quotients
``x^T A_sym x`` of the converged (B-normalised) vectors with ``A_sym = (A + A^T) / 2``, whose
gradient is the eigenvalue derivative ``x x^T``; the eigenvectors are returned without a
gradient (torch differentiates them too).
"""
import ptcore

__all__ = ["lobpcg", "LOBPCG"]

_FEPS = {ptcore.float32: 1.2e-07, ptcore.float64: 2.23e-16}


def _floating_dtype(A):
    return A.dtype if A.dtype in (ptcore.float16, ptcore.float32, ptcore.float64) \
        else ptcore.float32


def _mm(A, X):
    """``A @ X``; ``A`` None is the identity, ``A`` may be sparse."""
    if A is None:
        return X
    if A.layout != ptcore.strided:
        return ptcore.sparse.mm(A, X)
    return ptcore.matmul(A, X)


def _qform(A, S):
    """``S^T A S``."""
    return ptcore.matmul(S.mT, _mm(A, S))


def _symeig(A, largest=False):
    E, Z = ptcore.linalg.eigh(A, UPLO="U")
    if largest:
        E, Z = ptcore.flip(E, dims=(-1,)), ptcore.flip(Z, dims=(-1,))
    return E, Z


def _basis(A):
    return ptcore.linalg.qr(A).Q


class LOBPCG:
    """The iteration state of one LOBPCG run (``torch._lobpcg.LOBPCG``): ``iparams``,
    ``fparams``, ``bparams`` (parameters), ``ivars``, ``fvars``, ``bvars``, ``tvars``
    (iteration variables), ``A``, ``B``, ``iK`` and ``E``, ``X``, ``S``, ``R``."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = ptcore.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = ptcore.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = ptcore.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def update(self):
        """Set up (first step) and advance the iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(ptcore.linalg.norm(self.X))
            iX_norm = X_norm ** -1
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(ptcore.linalg.norm(_mm(self.A, self.X))) * iX_norm
            self.fvars["B_norm"] = float(ptcore.linalg.norm(_mm(self.B, self.X))) * iX_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        """``R = A X - B X diag(E)``."""
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of leading converged eigenpairs (backward-stable criterion)."""
        prev = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        rerr = ptcore.linalg.vector_norm(R, 2, dim=0) / (
            ptcore.linalg.vector_norm(X, 2, dim=0) *
            (self.fvars["A_norm"] + E[:X.shape[-1]].abs() * self.fvars["B_norm"]))
        count = 0
        for ok in (rerr < self.fparams["tol"]).tolist():
            if not ok:
                break
            count += 1
        if count < prev:
            raise AssertionError(f"the number of converged eigenpairs (was {prev}, got {count}) "
                                 f"cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """True once ``k`` pairs converged, ``niter`` steps ran, or a tracker set
        ``bvars["force_stop"]``."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Iterate until :meth:`stop_iteration`."""
        self.update()
        self.call_tracker()
        while not self.stop_iteration():
            self.update()
            self.call_tracker()

    def call_tracker(self):
        if self.tracker is not None:
            self.tracker(self)

    def _finish_step(self, n, np_, W_source):
        self.S[:, n + np_:n + np_ + W_source.shape[-1]] = W_source
        self.ivars["converged_end"] = n + np_ + W_source.shape[-1]

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = ptcore.matmul(self.X, ptcore.matmul(Ri, Z))
            self.E = E.clone()
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self._finish_step(n, np_, _mm(self.iK, self.R))
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = ptcore.matmul(S_, ptcore.matmul(Ri, Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = ptcore.matmul(S_, ptcore.matmul(Ri, Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            self._finish_step(n, np_, _mm(self.iK, self.R[:, nc:]))

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            _, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = ptcore.matmul(self.X, ptcore.matmul(Ri, Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self._finish_step(n, np_, self._get_ortho(self.R, self.X))
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = _symeig(_qform(self.A, S_), largest)
            self.X[:, nc:] = ptcore.matmul(S_, Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = ptcore.matmul(S_, ptcore.matmul(Z[:, n - nc:], _basis(Z[:n - nc, n - nc:].mT)))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            self._finish_step(n, np_, self._get_ortho(self.R[:, nc:], self.S[:, :n + np_]))

    def _get_rayleigh_ritz_transform(self, S):
        """The upper-triangular ``Ri`` reducing ``(S^T A S) C = (S^T B S) C E`` to the
        standard problem ``(Ri^T S^T A S Ri) Z = Z E`` (``C = Ri Z``)."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = ptcore.linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return ptcore.linalg.solve_triangular(R, ptcore.diag_embed(d_row), upper=True,
                                              left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal columns spanning ``U``'s (dropping the negligible ones when
        ``drop``)."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = (d.abs() != 0.0).nonzero(as_tuple=True)[0]
        if nz.numel() < d.numel():
            U = U[:, nz]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        E, Z = _symeig((UBU * d_col) * d_col.mT)
        t = tau * float(E.abs().max())
        if drop:
            keep = (E > t).nonzero(as_tuple=True)[0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E = E.clamp_min(t)
        return ptcore.matmul(U * d_col.mT, Z * E ** -0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal columns from ``U``, B-orthogonal to the B-orthonormal ``V``
        (empty when all of ``U`` lies in ``V``'s span)."""
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = ptcore.linalg.norm(_mm(self.B, V))
        BU = _mm(self.B, U)
        VBU = ptcore.matmul(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - ptcore.matmul(V, VBU)
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = ptcore.matmul(U.mT, BU)
                R = UBU - ptcore.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                rerr = float(ptcore.linalg.norm(R)) * float(
                    ptcore.linalg.norm(BU) * ptcore.linalg.norm(U)) ** -1
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = ptcore.matmul(V.mT, BU)
            rerr = float(ptcore.linalg.norm(VBU)) * float(BV_norm * ptcore.linalg.norm(U)) ** -1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                cols = m if self.B is None else self.B.shape[-1]
                raise ValueError(f"Overdetermined shape of U: #B-cols(={cols}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (``largest=True``, the default) or smallest eigenpairs of the
    symmetric positive definite generalized problem ``A x = lambda B x`` (``torch.lobpcg``).

    Parameters
    ----------
    A : Tensor
        ``(*, m, m)`` symmetric (dense, or a sparse COO matrix).
    k : int, optional
        Eigenpairs wanted (default: ``X``'s columns, else 1).
    B : Tensor, optional
        ``(*, m, m)``; the identity when None.
    X : Tensor, optional
        ``(*, m, n)`` initial vectors (random ``(m, n)`` when None).
    n : int, optional
        Size of the random initial block when ``X`` is None (default ``k``).
    iK : Tensor, optional
        ``(m, m)`` preconditioner.
    niter : int, optional
        Maximum iterations (default 1000; ``-1``: until convergence).
    tol : float, optional
        Residual tolerance (default ``sqrt(eps)`` of the dtype).
    largest : bool, optional
    method : {'ortho', 'basic'}, optional
    tracker : callable, optional
        Called with the :class:`LOBPCG` state after each iteration.
    ortho_iparams, ortho_fparams, ortho_bparams : dict, optional
        Parameters of the ``'ortho'`` method (``ortho_i_max``, ``ortho_tol`` ...).

    Returns
    -------
    (Tensor, Tensor)
        ``E (*, k)`` and ``X (*, m, k)``.
    """
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        with ptcore.no_grad():
            E, V = _lobpcg(A_sym.detach(), k, None if B_sym is None else B_sym.detach(), X, n,
                           iK, niter, tol, largest, method, tracker, ortho_iparams,
                           ortho_fparams, ortho_bparams)
        num = (V * ptcore.matmul(A_sym, V)).sum(-2)
        if B_sym is not None:
            num = num / (V * ptcore.matmul(B_sym, V)).sum(-2)
        return num, V
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype, device = _floating_dtype(A), A.device
    if tol is None:
        tol = _FEPS[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve(A_, B_, X_):
        X_ = ptcore.randn((m, n), dtype=dtype, device=device) if X_ is None else X_
        if not (X_.dim() == 2 and tuple(X_.shape) == (m, n)):
            raise AssertionError(f"X shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if A.dim() > 2:
        batch = tuple(A.shape[:-2])
        N = 1
        for s in batch:
            N *= s
        bA = A.reshape((N, m, m))
        bB = B.reshape((N, m, m)) if B is not None else None
        bX = X.reshape((N,) + tuple(X.shape[-2:])) if X is not None else None
        Es, Xs = [], []
        for i in range(N):
            iparams["batch_index"] = i
            E_, X_ = solve(bA[i], None if bB is None else bB[i], None if bX is None else bX[i])
            Es.append(E_)
            Xs.append(X_)
        return (ptcore.stack(Es).reshape(batch + (k,)),
                ptcore.stack(Xs).reshape(batch + (m, k)))
    return solve(A, B, X)
