"""jit.script fuses the pointwise chains jit.trace fuses: a scripted graph (no shapes
known when scripted) is planned per input signature from a profiling run, its generic
operators on tensors become the Tensor's operator methods, and the chains become fused
groups; results against eager ptcore and torch.jit.script."""
import numpy as np
import pytest

import ptcore
from ptcore.jit._fusion import FusedGroup

torch = pytest.importorskip("torch")


def chain(x, y):
    z = x * y + 1.0
    z = z.relu() * 0.5
    z = z.sigmoid() + x
    z = z * z - y
    z = 2.0 * z.tanh()
    return z.exp() * y - x


def _plans(sf):
    return sf.graph.__dict__.get("_plans", {})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_script_fuses_what_trace_fuses(dtype):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((4, 33)).astype(dtype)
    ya = rng.standard_normal((33,)).astype(dtype)
    x, y = ptcore.from_numpy(xa), ptcore.from_numpy(ya)
    sf = ptcore.jit.script(chain)
    tf = ptcore.jit.trace(chain, (x, y))
    want = chain(x, y)
    ref = torch.jit.script(chain)(torch.from_numpy(xa), torch.from_numpy(ya)).numpy()
    tol = 1e-5 if dtype == "float32" else 1e-12
    for _ in range(3):              # the profiling run, then the fused plan
        got = sf(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(got.numpy(), tf(x, y).numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(got.numpy(), ref, rtol=tol, atol=tol)
    (steps, _), = _plans(sf).values()
    groups = [s for s in steps if isinstance(s, FusedGroup)]
    assert len(groups) >= 1 and sum(len(g.nodes) for g in groups) >= 8


def test_script_plan_per_signature_and_autograd():
    sf = ptcore.jit.script(chain)
    a, b = ptcore.randn(5), ptcore.randn(5)
    sf(a, b)
    sf(a, b)
    c, d = ptcore.randn(2, 3, dtype=ptcore.float64), ptcore.randn(3, dtype=ptcore.float64)
    np.testing.assert_allclose(sf(c, d).numpy(), chain(c, d).numpy(), rtol=1e-12)
    assert len(_plans(sf)) == 2
    # a fused group under autograd runs its nodes one by one: gradients as eager
    xg = ptcore.randn(5, requires_grad=True)
    sf(xg, b).sum().backward()
    g1 = xg.grad.clone()
    xg.grad = None
    chain(xg, b).sum().backward()
    np.testing.assert_allclose(g1.numpy(), xg.grad.numpy(), rtol=1e-5)
