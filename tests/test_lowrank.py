"""svd_lowrank / pca_lowrank: torch's algorithm (with torch's random test matrix the results
equal torch's), accuracy on low-rank data, batching, gradients and argument errors."""
import numpy as np
import pytest

import ptcore
from ptcore._ops import lowrank as _lowrank

torch = pytest.importorskip("torch")


def _lowrank_data(shape, rank, seed=0):
    rng = np.random.default_rng(seed)
    *b, m, n = shape
    return rng.standard_normal((*b, m, rank)) @ rng.standard_normal((*b, rank, n))


@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (3, 12, 9)])
def test_svd_lowrank_same_random_matrix_as_torch(shape, monkeypatch):
    a = _lowrank_data(shape, 3)
    torch.manual_seed(0)
    tu, ts, tv = torch.svd_lowrank(torch.tensor(a), q=4, niter=2)
    # replay torch's Gaussian test matrix through ptcore's algorithm
    torch.manual_seed(0)
    m, n = shape[-2:]
    r = torch.randn(min(m, n), 4, dtype=torch.float64).numpy()
    monkeypatch.setattr(_lowrank.ptcore, "randn", lambda *s, **k: ptcore.tensor(r))
    pu, ps, pv = _lowrank.svd_lowrank(ptcore.tensor(a), q=4, niter=2)
    np.testing.assert_allclose(ps.numpy(), ts.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.abs(pu.numpy()[..., :3]), np.abs(tu.numpy()[..., :3]),
                               atol=1e-8)
    np.testing.assert_allclose(np.abs(pv.numpy()[..., :3]), np.abs(tv.numpy()[..., :3]),
                               atol=1e-8)


def test_svd_lowrank_reconstructs_low_rank():
    a = _lowrank_data((30, 15), 4, seed=3)
    u, s, v = ptcore.svd_lowrank(ptcore.tensor(a), q=6)
    rec = u.numpy() @ np.diag(s.numpy()) @ v.numpy().T
    np.testing.assert_allclose(rec, a, atol=1e-8)
    np.testing.assert_allclose(s.numpy()[:4], np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-9)


def test_pca_lowrank_matches_numpy_pca():
    rng = np.random.default_rng(4)
    a = _lowrank_data((40, 10), 3, seed=5) + rng.standard_normal(10)
    u, s, v = ptcore.pca_lowrank(ptcore.tensor(a), q=3)
    ref = np.linalg.svd(a - a.mean(0), compute_uv=False)[:3]
    np.testing.assert_allclose(s.numpy(), ref, rtol=1e-8)
    tu, ts, tv = torch.pca_lowrank(torch.tensor(a), q=3)
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-8)
    assert tuple(u.shape) == (40, 3) and tuple(v.shape) == (10, 3)
    b = _lowrank_data((40, 10), 3, seed=6)  # uncentred but exactly rank 3
    s2 = ptcore.pca_lowrank(ptcore.tensor(b), q=3, center=False)[1]
    np.testing.assert_allclose(s2.numpy(), torch.pca_lowrank(torch.tensor(b), q=3,
                                                             center=False)[1].numpy(), rtol=1e-8)


def test_pca_lowrank_errors_and_defaults():
    a = ptcore.randn(5, 4)
    assert ptcore.pca_lowrank(a)[1].shape[0] == 4          # q = min(6, m, n)
    with pytest.raises(ValueError):
        torch.pca_lowrank(torch.randn(5, 4), q=5)
    with pytest.raises(ValueError, match="q\\(=5\\)"):
        ptcore.pca_lowrank(a, q=5)
    with pytest.raises(ValueError, match="niter"):
        ptcore.pca_lowrank(a, niter=-1)


def test_svd_lowrank_is_differentiable():
    a = ptcore.tensor(_lowrank_data((12, 6), 2, seed=7), requires_grad=True)
    u, s, v = ptcore.svd_lowrank(a, q=2)
    s.sum().backward()
    assert a.grad is not None and a.grad.shape == a.shape
    assert np.isfinite(a.grad.numpy()).all()
