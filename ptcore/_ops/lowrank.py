"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``):
Algorithm 5.1 of Halko, Martinsson and Tropp (2009) with ``niter`` subspace iterations, in
differentiable ptcore ops, as torch computes them (a sparse ``A`` stays sparse; centring
it goes through a dense rank-one ``M``).
The random test matrix comes from ptcore's generator (``ptcore.manual_seed``)."""
import ptcore

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    if A.dtype in (ptcore.float16, ptcore.bfloat16, ptcore.float32, ptcore.float64):
        return A.dtype
    return ptcore.float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An ``(m, q)`` matrix with orthonormal columns whose range approximates ``A - M``'s."""
    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A) if not A.is_complex() else A.dtype
    R = ptcore.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = ptcore.matmul(A, R)
    if M is not None:
        X = X - ptcore.matmul(M, R)
    Q = ptcore.linalg.qr(X).Q
    for _ in range(niter):
        X = ptcore.matmul(A.mH, Q)
        if M is not None:
            X = X - ptcore.matmul(M.mH, Q)
        Q = ptcore.linalg.qr(X).Q
        X = ptcore.matmul(A, Q)
        if M is not None:
            X = X - ptcore.matmul(M, Q)
        Q = ptcore.linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` of a rank-``q`` approximation of ``A - M`` (``A ~ U diag(S) V^H``)."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # work on the tall matrix
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = ptcore.matmul(Q.mH, A)
    if M is not None:
        B = B - ptcore.matmul(Q.mH, M)
    U, S, Vh = ptcore.linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)`` of a rank-``q`` PCA of the rows of ``A`` (centred unless ``center=False``;
    ``q`` defaults to ``min(6, m, n)``)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    if getattr(A, "is_sparse", False):
        # torch's sparse branch: the column means as a rank-one dense M, A left sparse
        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        dtype = _floating_dtype(A)
        c = ptcore.sparse.sum(A, dim=(-2,)) / m
        cols = c.indices()[0]
        idx = ptcore.zeros(2, len(cols), dtype=cols.dtype, device=cols.device)
        idx[0] = cols
        C_t = ptcore.sparse_coo_tensor(idx, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones = ptcore.ones(tuple(A.shape[:-2]) + (1, m), dtype=dtype, device=A.device)
        return svd_lowrank(A, q, niter=niter, M=ptcore.sparse.mm(C_t, ones).mT)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
