"""ptcore.linalg on complex64/complex128 CUDA tensors (cuSOLVER's C/Z
routines, ``ungqr``/``unmqr``/``heevd`` and cuBLAS's ``trsm`` with the
conjugate transpose; on the emulated device SciPy's c*/z* LAPACK) against
torch on the CPU: values where the op defines them uniquely, invariants
(reconstruction, unitarity, eigen-equations) where vectors are defined only
up to phases, and gradients of real losses."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

DTYPES = ["complex64", "complex128"]
TOL = {"complex64": 2e-4, "complex128": 1e-9}


def _c(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hpd(shape, seed=0):
    """Hermitian positive-definite matrices."""
    a = _c(shape, seed)
    n = shape[-1]
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


def _herm(shape, seed=0):
    a = _c(shape, seed)
    return a + np.conj(np.swapaxes(a, -1, -2))


def _tri(shape, upper, seed=0):
    a = _c(shape, seed) + 3 * np.eye(shape[-1])
    return np.triu(a) if upper else np.tril(a)


def _pt(x, dtype):
    return ptcore.from_numpy(np.ascontiguousarray(x)).to(getattr(ptcore, dtype)).cuda()


def _th(x, dtype):
    return torch.from_numpy(np.ascontiguousarray(x)).to(getattr(torch, dtype))


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [z for y in x for z in _flatten(y)]
    return [x]


def _np(t):
    if isinstance(t, ptcore.Tensor):
        assert t.device.type == "cuda", t.device
        return t.detach().cpu().resolve_conj().numpy()
    return t.detach().resolve_conj().numpy()


def _close(got, want, tol):
    got, want = _flatten(got), _flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if not isinstance(w, torch.Tensor):
            assert g == w
            continue
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], (g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
        gn, wn = _np(g), _np(w)
        if wn.size:
            scale = max(1.0, float(np.abs(wn).max()))
            np.testing.assert_allclose(gn, wn, rtol=tol, atol=tol * scale)


def _run(fn, build, kw, dtype):
    arrays = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fn(ptcore, *[_pt(a, dtype) if isinstance(a, np.ndarray) else a for a in arrays],
                 **kw)
        want = fn(torch, *[_th(a, dtype) if isinstance(a, np.ndarray) else a for a in arrays],
                  **kw)
    return got, want


def _lu_solve(M, a, b, **kw):
    return M.linalg.lu_solve(*M.linalg.lu_factor(a), b, **kw)


def _ormqr(M, a, c, **kw):
    return M.ormqr(*M.geqrf(a), c, **kw)


# name -> (fn(module, *args, **kw), build() -> args, kw): the same call on
# ptcore (CUDA) and torch (CPU), values compared
CASES = {
    "inv": (lambda M, a: M.linalg.inv(a), lambda: [_c((2, 4, 4))], {}),
    "inv_ex": (lambda M, a: M.linalg.inv_ex(a), lambda: [_c((3, 3), 1)], {}),
    "det": (lambda M, a: M.linalg.det(a), lambda: [_c((2, 3, 4, 4))], {}),
    "slogdet": (lambda M, a: M.linalg.slogdet(a), lambda: [_c((3, 4, 4), 3)], {}),
    "logdet": (lambda M, a: M.logdet(a), lambda: [_hpd((2, 3, 3))], {}),
    "solve": (lambda M, a, b: M.linalg.solve(a, b), lambda: [_c((2, 1, 4, 4)), _c((3, 4, 2))],
              {}),
    "solve_right": (lambda M, a, b: M.linalg.solve(a, b, left=False),
                    lambda: [_c((2, 3, 3)), _c((2, 5, 3), 1)], {}),
    "cholesky": (lambda M, a: M.linalg.cholesky(a), lambda: [_hpd((2, 4, 4))], {}),
    "cholesky_upper": (lambda M, a: M.linalg.cholesky(a, upper=True), lambda: [_hpd((4, 4))],
                       {}),
    "cholesky_ex": (lambda M, a: M.linalg.cholesky_ex(a), lambda: [_hpd((3, 3))], {}),
    "cholesky_not_pd_info": (lambda M, a: M.linalg.cholesky_ex(a).info,
                             lambda: [_herm((2, 4, 4)) - 20 * np.eye(4)], {}),
    "cholesky_solve_upper": (
        lambda M, a, b: M.cholesky_solve(b, M.linalg.cholesky(a, upper=True), upper=True),
        lambda: [_hpd((4, 4)), _c((2, 4, 3))], {}),
    "cholesky_inverse": (lambda M, a: M.cholesky_inverse(M.linalg.cholesky(a)),
                         lambda: [_hpd((2, 4, 4))], {}),
    "lu_factor": (lambda M, a: M.linalg.lu_factor(a), lambda: [_c((2, 4, 4))], {}),
    "lu_wide": (lambda M, a: M.linalg.lu(a), lambda: [_c((3, 5))], {}),
    "lu_tall": (lambda M, a: M.linalg.lu(a), lambda: [_c((2, 5, 3))], {}),
    "lu_solve_adjoint": (_lu_solve, lambda: [_c((4, 4)), _c((4, 3), 1)], {"adjoint": True}),
    "lu_solve_right": (_lu_solve, lambda: [_c((4, 4)), _c((3, 4), 1)], {"left": False}),
    "qr": (lambda M, a: M.linalg.qr(a), lambda: [_c((2, 5, 3))], {}),
    "qr_wide": (lambda M, a: M.linalg.qr(a), lambda: [_c((3, 5))], {}),
    "qr_complete": (lambda M, a: M.linalg.qr(a, mode="complete"), lambda: [_c((5, 3))], {}),
    "geqrf": (lambda M, a: M.geqrf(a), lambda: [_c((2, 5, 3))], {}),
    "householder_product": (lambda M, a: M.linalg.householder_product(*M.geqrf(a)),
                            lambda: [_c((2, 5, 3))], {}),
    "ormqr_adjoint": (_ormqr, lambda: [_c((4, 3)), _c((4, 2), 1)], {"transpose": True}),
    "ormqr_right": (_ormqr, lambda: [_c((3, 4, 4)), _c((3, 2, 4), 1)], {"left": False}),
    "ormqr_right_adjoint": (_ormqr, lambda: [_c((4, 4)), _c((2, 4), 1)],
                            {"left": False, "transpose": True}),
    "eigvalsh": (lambda M, a: M.linalg.eigvalsh(a), lambda: [_herm((2, 5, 5))], {}),
    "eigvalsh_U": (lambda M, a: M.linalg.eigvalsh(a, UPLO="U"), lambda: [_c((4, 4))], {}),
    "svdvals_tall": (lambda M, a: M.linalg.svdvals(a), lambda: [_c((2, 5, 3))], {}),
    "svdvals_wide": (lambda M, a: M.linalg.svdvals(a), lambda: [_c((3, 6))], {}),
    "matrix_norm_nuc": (lambda M, a: M.linalg.matrix_norm(a, ord="nuc"),
                        lambda: [_c((2, 4, 3))], {}),
    "cond": (lambda M, a: M.linalg.cond(a), lambda: [_hpd((2, 3, 3))], {}),
    "matrix_rank": (lambda M, a, b: M.linalg.matrix_rank(a @ b),
                    lambda: [_c((2, 5, 2)), _c((2, 4), 1)], {}),
    "matrix_rank_hermitian": (lambda M, a: M.linalg.matrix_rank(a, hermitian=True, atol=4.5),
                              lambda: [_hpd((4, 4))], {}),
    "pinv_wide": (lambda M, a: M.linalg.pinv(a), lambda: [_c((3, 5))], {}),
    "pinv_hermitian": (lambda M, a: M.linalg.pinv(a, hermitian=True), lambda: [_herm((3, 3))],
                       {}),
    "lstsq_tall": (lambda M, a, b: M.linalg.lstsq(a, b, driver="gels")[:2],
                   lambda: [_c((2, 6, 3)), _c((1, 6, 2), 1)], {}),
    "lstsq_wide": (lambda M, a, b: M.linalg.lstsq(a, b, driver="gels")[0],
                   lambda: [_c((2, 3, 5)), _c((2, 3, 2), 1)], {}),
    "matrix_power_-2": (lambda M, a: M.linalg.matrix_power(a, -2), lambda: [_hpd((3, 3))], {}),
    "matrix_exp": (lambda M, a: M.linalg.matrix_exp(a), lambda: [0.3 * _c((2, 3, 3))], {}),
    "solve_triangular": (lambda M, a, b: M.linalg.solve_triangular(a, b, upper=True),
                         lambda: [_tri((2, 4, 4), True), _c((4, 3), 1)], {}),
    "triangular_solve_transpose": (
        lambda M, b, a: M.triangular_solve(b, a, upper=False, transpose=True),
        lambda: [_c((2, 4, 3)), _tri((4, 4), False, 1)], {}),
    "tensorinv": (lambda M, a: M.linalg.tensorinv(a.reshape(6, 2, 3), ind=1),
                  lambda: [_hpd((6, 6))], {}),
    # LDL of complex symmetric matrices (sytrf; a small diagonal: 2x2 pivot blocks)
    "ldl_factor_ex": (lambda M, a: M.linalg.ldl_factor_ex(a), lambda: [_sym((2, 5, 5))], {}),
    "ldl_solve": (lambda M, a, b: M.linalg.ldl_solve(*M.linalg.ldl_factor(a), b),
                  lambda: [_sym((2, 5, 5), 1), _c((2, 5, 3), 2)], {}),
}


def _sym(shape, seed=0):
    """Complex symmetric (not Hermitian) matrices with a small diagonal."""
    a = _c(shape, seed)
    a = a + np.swapaxes(a, -1, -2)
    return a - (1 - 1e-3) * np.diagonal(a, 0, -2, -1)[..., None] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_matches_torch(name, dtype):
    fn, build, kw = CASES[name]
    got, want = _run(fn, build, kw, dtype)
    _close(got, want, TOL[dtype])


def test_ldl_cases_have_2x2_pivot_blocks():
    for seed in (0, 1):
        piv = torch.linalg.ldl_factor(_th(_sym((2, 5, 5), seed), "complex128"))[1]
        assert bool((piv < 0).any())


@pytest.mark.parametrize("dtype", DTYPES)
def test_hermitian_ldl_on_cuda(dtype):
    """cuSOLVER has no Hermitian Bunch-Kaufman (?hetrf): refused naming op and
    device; ldl_solve's refusal is PyTorch's CUDA one."""
    a = _pt(_hpd((4, 4)), dtype)
    with pytest.raises(NotImplementedError, match=r"ldl_factor.*hermitian=True.*cuda:0"):
        ptcore.linalg.ldl_factor(a, hermitian=True)
    LD, piv = ptcore.linalg.ldl_factor(a)
    with pytest.raises(RuntimeError, match="complex tensors with hermitian=True flag are not "
                                           "supported on CUDA"):
        ptcore.linalg.ldl_solve(LD, piv, a, hermitian=True)


def _eye(n, dtype):
    return np.eye(n, dtype=getattr(np, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_eigenpairs(dtype, uplo):
    """Eigenvalues as torch's (real, ascending); vectors unitary and solving
    ``A v = w v`` (the Hermitian matrix of the ``uplo`` triangle)."""
    a = _c((2, 5, 5), 4)
    w, v = ptcore.linalg.eigh(_pt(a, dtype), UPLO=uplo)
    tw = torch.linalg.eigh(_th(a, dtype), UPLO=uplo)[0]
    _close(w, tw, TOL[dtype])
    h = np.tril(a) if uplo == "L" else np.triu(a)
    h = h + np.conj(np.swapaxes(h, -1, -2)) - np.real(np.diagonal(h, 0, -2, -1))[..., None] \
        * np.eye(5)
    tol = 10 * TOL[dtype]
    V, W = _np(v), _np(w)
    np.testing.assert_allclose(h @ V, V * W[..., None, :], atol=tol * 10)
    np.testing.assert_allclose(np.conj(np.swapaxes(V, -1, -2)) @ V,
                               np.broadcast_to(_eye(5, dtype), V.shape), atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,full", [((2, 5, 3), False), ((3, 6), True), ((4, 2, 5), False),
                                        ((5, 4), True)])
def test_svd_factors(dtype, shape, full):
    """S as torch's (real, descending); ``U diag(S) Vh`` rebuilds A; U and Vh
    have orthonormal columns/rows."""
    a = _c(shape, 5)
    u, s, vh = ptcore.linalg.svd(_pt(a, dtype), full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(_th(a, dtype), full_matrices=full)
    _close(s, ts, TOL[dtype])
    assert tuple(u.shape) == tuple(tu.shape) and tuple(vh.shape) == tuple(tvh.shape)
    assert u.dtype == getattr(ptcore, dtype) and s.dtype == getattr(ptcore, dtype).to_real()
    U, S, Vh = _np(u), _np(s), _np(vh)
    k = S.shape[-1]
    tol = 10 * TOL[dtype]
    np.testing.assert_allclose((U[..., :k] * S[..., None, :]) @ Vh[..., :k, :], a, atol=tol * 10)
    for q in (np.conj(np.swapaxes(U, -1, -2)) @ U, Vh @ np.conj(np.swapaxes(Vh, -1, -2))):
        np.testing.assert_allclose(q, np.broadcast_to(_eye(q.shape[-1], dtype), q.shape),
                                   atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_of_complex_matrices(dtype):
    a = _c((2, 4, 4), 6)
    w, v = ptcore.linalg.eig(_pt(a, dtype))
    tw = torch.linalg.eigvals(_th(a, dtype))
    W, V = _np(w), _np(v)
    TW = tw.numpy()
    np.testing.assert_allclose(np.sort_complex(W.reshape(-1)), np.sort_complex(TW.reshape(-1)),
                               rtol=10 * TOL[dtype], atol=10 * TOL[dtype])
    np.testing.assert_allclose(a @ V, V * W[..., None, :], atol=100 * TOL[dtype])


# gradients of real losses of complex results: ptcore on CUDA against torch on the CPU
def _loss(M, out):
    total = 0
    for t in _flatten(out):
        if t.dtype.is_complex:
            total = total + (t.real * 0.5 + t.imag * 1.5).sum()
        elif t.dtype.is_floating_point:
            total = total + t.sum()
    return total


GRADS = {
    "inv": (lambda M, a: M.linalg.inv(a), lambda: [_c((2, 3, 3))]),
    "det": (lambda M, a: M.linalg.det(a), lambda: [_c((3, 3))]),
    "slogdet": (lambda M, a: M.linalg.slogdet(a), lambda: [_c((2, 3, 3), 1)]),
    "solve": (lambda M, a, b: M.linalg.solve(a, b), lambda: [_c((3, 3)), _c((3, 2), 1)]),
    "cholesky": (lambda M, a: M.linalg.cholesky(a), lambda: [_hpd((3, 3))]),
    "eigvalsh": (lambda M, a: M.linalg.eigvalsh(a), lambda: [_herm((4, 4))]),
    "svdvals": (lambda M, a: M.linalg.svdvals(a), lambda: [_c((4, 3))]),
    "qr": (lambda M, a: M.linalg.qr(a), lambda: [_c((4, 3))]),
    "lstsq": (lambda M, a, b: M.linalg.lstsq(a, b, driver="gels").solution,
              lambda: [_c((5, 3)), _c((5, 2), 1)]),
    "lu": (lambda M, a: M.linalg.lu(a)[1:], lambda: [_c((3, 3))]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_complex128_gradients_match_torch(name):
    fn, build = GRADS[name]
    arrays = build()
    pa = [_pt(a, "complex128").requires_grad_() for a in arrays]
    ta = [_th(a, "complex128").requires_grad_() for a in arrays]
    pg = ptcore.autograd.grad(_loss(ptcore, fn(ptcore, *pa)), pa)
    tg = torch.autograd.grad(_loss(torch, fn(torch, *ta)), ta)
    _close(list(pg), list(tg), 1e-8)
