"""ptcore.lobpcg against numpy.linalg.eigh / scipy.linalg.eigh (and torch.lobpcg)."""
import numpy as np
import pytest
import scipy.linalg

import ptcore


def _spd(m, seed, lo=1.0):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    return (Q * np.linspace(lo, lo + m - 1, m)) @ Q.T


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_lobpcg_standard_problem(method, largest, k):
    A = _spd(40, 0)
    w, v = np.linalg.eigh(A)
    E, X = ptcore.lobpcg(ptcore.tensor(A), k=k, largest=largest, method=method)
    exp = w[::-1][:k] if largest else w[:k]
    assert tuple(E.shape) == (k,) and tuple(X.shape) == (40, k) and E.dtype is ptcore.float64
    np.testing.assert_allclose(E.numpy(), exp, rtol=1e-6)
    Xn = X.numpy()
    np.testing.assert_allclose(A @ Xn, Xn * E.numpy(), atol=1e-5)
    np.testing.assert_allclose(Xn.T @ Xn, np.eye(k), atol=1e-6)


@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_lobpcg_generalized_problem_with_initial_block(method):
    A, B = _spd(30, 1), _spd(30, 2, lo=2.0)
    w = scipy.linalg.eigh(A, B, eigvals_only=True)
    X0 = ptcore.tensor(np.random.default_rng(3).standard_normal((30, 2)))
    E, X = ptcore.lobpcg(ptcore.tensor(A), B=ptcore.tensor(B), X=X0, method=method)
    np.testing.assert_allclose(E.numpy(), w[::-1][:2], rtol=1e-6)
    Xn = X.numpy()
    np.testing.assert_allclose(Xn.T @ B @ Xn, np.eye(2), atol=1e-6)


def test_lobpcg_matches_scipy_lobpcg():
    sla = pytest.importorskip("scipy.sparse.linalg")
    A = _spd(50, 4)
    X0 = np.random.default_rng(5).standard_normal((50, 3))
    ws, _ = sla.lobpcg(A, X0.copy(), largest=True, tol=1e-10, maxiter=500)
    E, _ = ptcore.lobpcg(ptcore.tensor(A), X=ptcore.tensor(X0), k=3, largest=True)
    np.testing.assert_allclose(np.sort(E.numpy()), np.sort(ws), rtol=1e-6)


def test_lobpcg_batch_float32_sparse_and_preconditioner():
    A = np.stack([_spd(24, 6), _spd(24, 7)])
    ptcore.manual_seed(0)
    E, X = ptcore.lobpcg(ptcore.tensor(A), k=2)
    assert tuple(E.shape) == (2, 2) and tuple(X.shape) == (2, 24, 2)
    for b in range(2):
        np.testing.assert_allclose(E[b].numpy(), np.linalg.eigh(A[b])[0][::-1][:2], rtol=1e-6)
    A32 = ptcore.tensor(_spd(24, 8), dtype=ptcore.float32)
    E32, _ = ptcore.lobpcg(A32, k=2)
    assert E32.dtype is ptcore.float32
    np.testing.assert_allclose(E32.numpy(), [24.0, 23.0], rtol=1e-4)
    As = ptcore.tensor(_spd(24, 9)).to_sparse()
    Es, _ = ptcore.lobpcg(As, k=2, largest=False)
    np.testing.assert_allclose(Es.numpy(), [1.0, 2.0], rtol=1e-6)
    Ad = _spd(24, 10)
    iK = ptcore.tensor(np.linalg.inv(np.diag(np.diag(Ad))))
    Ep, _ = ptcore.lobpcg(ptcore.tensor(Ad), k=2, iK=iK)
    np.testing.assert_allclose(Ep.numpy(), [24.0, 23.0], rtol=1e-6)


def test_lobpcg_tracker_and_niter():
    seen = []

    def tracker(worker):
        seen.append(worker.ivars["istep"])
        if worker.ivars["istep"] >= 2:
            worker.bvars["force_stop"] = True
    ptcore.lobpcg(ptcore.tensor(_spd(30, 11)), k=2, tracker=tracker)
    assert seen == [1, 2]
    steps = []
    ptcore.lobpcg(ptcore.tensor(_spd(30, 11)), k=2, niter=3,
                  tracker=lambda w: steps.append(w.ivars["istep"]), tol=1e-300)
    assert steps == [1, 2, 3]


def test_lobpcg_errors():
    with pytest.raises(ValueError):
        ptcore.lobpcg(ptcore.tensor(_spd(8, 12)), k=3)
    with pytest.raises(AssertionError):
        ptcore.lobpcg(ptcore.ones(4, 5), k=1)


def test_lobpcg_against_torch_and_eigenvalue_gradient():
    torch = pytest.importorskip("torch")
    A = _spd(30, 13)
    X0 = np.random.default_rng(14).standard_normal((30, 2))
    tA = torch.tensor(A, requires_grad=True)
    tE, _ = torch.lobpcg(tA, X=torch.tensor(X0), k=2)
    pA = ptcore.tensor(A, requires_grad=True)
    pE, _ = ptcore.lobpcg(pA, X=ptcore.tensor(X0), k=2)
    np.testing.assert_allclose(pE.detach().numpy(), tE.detach().numpy(), rtol=1e-8)
    tE.sum().backward()
    pE.sum().backward()
    np.testing.assert_allclose(pA.grad.numpy(), tA.grad.numpy(), atol=1e-6)
