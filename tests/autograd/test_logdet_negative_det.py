"""logdet of a matrix with a negative determinant is NaN and, as torch's
``where(sign == -1, nan, logabsdet)``, passes no gradient to it (found by a gradient fuzz)."""
import numpy as np
import pytest

import ptcore


def test_logdet_negative_determinant_gradient_is_zero():
    A = np.array([[[1.0, 4.0], [2.0, 3.0]], [[2.0, 1.0], [1.0, 2.0]]])
    x = ptcore.tensor(A, requires_grad=True)
    y = ptcore.logdet(x)
    assert np.isnan(y[0].item()) and y[1].item() == pytest.approx(np.log(3.0))
    y.sum().backward()
    g = x.grad.numpy()
    np.testing.assert_array_equal(g[0], np.zeros((2, 2)))
    assert not np.signbit(g[0]).any()
    np.testing.assert_allclose(g[1], np.linalg.inv(A[1]).T)


def test_logdet_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    A = np.random.default_rng(0).standard_normal((4, 3, 3))
    grads = []
    for lib in (torch, ptcore):
        x = lib.tensor(A, requires_grad=True)
        lib.logdet(x).nan_to_num(0.0).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
