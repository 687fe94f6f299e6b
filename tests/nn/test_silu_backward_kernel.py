"""SiLU's backward is one vectorised pass (ptcore._ops.kernels._nn_kernels.silu_backward,
as ATen's kernel) where nothing records it; compared with torch on float32 and
float64 including large, signed-zero and non-finite inputs, and the composite
formula still serves second derivatives."""
import numpy as np
import pytest

import ptcore
from ptcore._ops.kernels import _nn_kernels as K

torch = pytest.importorskip("torch")

X = np.concatenate([np.random.RandomState(0).randn(5000) * 6,
                    [0.0, -0.0, -90.0, 90.0, -1e4, 1e4, np.nan, np.inf, -np.inf]])
G = np.random.RandomState(1).randn(X.size)


@pytest.mark.parametrize("dt,tol", [("float32", 2e-6), ("float64", 1e-14)])
def test_matches_torch(dt, tol):
    x = ptcore.tensor(X, dtype=getattr(ptcore, dt), requires_grad=True)
    ptcore.nn.functional.silu(x).backward(ptcore.tensor(G, dtype=getattr(ptcore, dt)))
    tx = torch.tensor(X, dtype=getattr(torch, dt), requires_grad=True)
    torch.nn.functional.silu(tx).backward(torch.tensor(G, dtype=getattr(torch, dt)))
    a, b = x.grad.numpy(), tx.grad.numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(b)
    np.testing.assert_allclose(a[ok], b[ok], rtol=tol, atol=tol)


def test_kernel_serves_plain_backward_and_declines_what_it_cannot():
    x = ptcore.randn(3, 4)
    g = ptcore.randn(3, 4)
    r = K.silu_backward(g, x)
    s = x.sigmoid()
    assert ptcore.allclose(r, g * s * (1 + x * (1 - s)), atol=1e-6)
    assert K.silu_backward(g, x.to(ptcore.float16)) is None
    assert K.silu_backward(g.t(), x) is None          # not the same layout


def test_second_derivative_against_torch():
    out = []
    for L in (torch, ptcore):
        x = L.tensor(X[:50], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(L.nn.functional.silu(x).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        out.append(gg.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12, atol=1e-12)
