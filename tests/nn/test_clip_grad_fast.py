"""clip_grad_norm_'s one-pass path (CPU float tensors of one dtype, 2-norm:
ptcore/_ops/kernels/_reduce.pyx norm2_total/scale_all_) against the per-tensor
composite and torch: the total norm, the clipped gradients, no write when
nothing is clipped, non-finite norms, and the inputs that keep the composite."""
import math

import numpy as np
import pytest

import ptcore
from ptcore.nn.utils import clip_grad_norm_, get_total_norm

try:
    import torch
except ImportError:
    torch = None

SHAPES = [(128, 384), (384,), (7,), (3, 5, 2), (1,), (513, 129)]


def _grads(dt, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * scale).astype(dt) for s in SHAPES]


def _params(lib, grads):
    ps = []
    for g in grads:
        p = lib.zeros(g.shape, dtype=getattr(lib, str(g.dtype))).requires_grad_()
        p.grad = lib.from_numpy(g.copy())
        ps.append(p)
    return ps


@pytest.mark.parametrize("dt,tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_against_float64_reference(dt, tol, max_norm):
    gs = _grads(dt, 1)
    ps = _params(ptcore, gs)
    total = clip_grad_norm_(ps, max_norm)
    want = math.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in gs))
    assert total.dtype == ps[0].dtype and total.dim() == 0
    assert abs(total.item() - want) <= tol * want
    coef = min(1.0, max_norm / (want + 1e-6))
    for p, g in zip(ps, gs):
        np.testing.assert_allclose(p.grad.numpy(), g * coef, rtol=tol * 4, atol=0)


def test_no_write_when_not_clipped():
    gs = _grads(np.float32, 2)
    ps = _params(ptcore, gs)
    versions = [p.grad._version for p in ps]
    clip_grad_norm_(ps, 1e9)
    assert [p.grad._version for p in ps] == versions
    for p, g in zip(ps, gs):
        assert np.array_equal(p.grad.numpy(), g)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_matches_torch(dt):
    gs = _grads(dt, 3, scale=0.3)
    ps, ts = _params(ptcore, gs), _params(torch, gs)
    a = clip_grad_norm_(ps, 1.0)
    b = torch.nn.utils.clip_grad_norm_(ts, 1.0)
    tol = 1e-6 if dt == np.float32 else 1e-13
    assert abs(a.item() - b.item()) <= tol * b.item()
    for p, t in zip(ps, ts):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=tol * 4, atol=1e-30)


def test_non_finite():
    gs = _grads(np.float32, 4)
    gs[2][1] = np.nan
    ps = _params(ptcore, gs)
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_(ps, 1.0)
    assert math.isnan(total.item())
    assert all(np.isnan(p.grad.numpy()).all() for p in ps)      # as torch: scaled by NaN
    gs = _grads(np.float32, 5)
    gs[0][0, 0] = np.inf
    assert math.isinf(get_total_norm([ptcore.from_numpy(g) for g in gs]).item())


def test_mixed_and_strided_use_the_composite():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal(5)
    mixed = [ptcore.from_numpy(a), ptcore.from_numpy(b)]
    want = math.sqrt(float(np.linalg.norm(a)) ** 2 + float(np.linalg.norm(b)) ** 2)
    assert abs(get_total_norm(mixed).item() - want) < 1e-5 * want
    strided = [ptcore.from_numpy(a).t()]
    assert abs(get_total_norm(strided).item() - np.linalg.norm(a)) < 1e-5 * np.linalg.norm(a)
    p = ptcore.zeros(6, 4).requires_grad_()
    p.grad = ptcore.from_numpy(a.copy()).t()                   # non-contiguous gradient
    clip_grad_norm_([p], 0.1)
    np.testing.assert_allclose(p.grad.numpy(), a.T * (0.1 / (np.linalg.norm(a) + 1e-6)),
                               rtol=1e-5)
