"""Differential fuzzing of the science modules (distributions, fft, linalg) against
torch 2.13: regression tests for the differences found."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("p, q", [
    (lambda L: L.distributions.Normal(0.0, 1.0),
     lambda L: L.distributions.Exponential(L.ones(3))),
    (lambda L: L.distributions.Gamma(L.ones(2, 1), L.ones(2, 1)),
     lambda L: L.distributions.Uniform(L.zeros(3), L.ones(3))),
    (lambda L: L.distributions.Laplace(L.zeros(3), 1.0),
     lambda L: L.distributions.ContinuousBernoulli(L.full((2, 3), 0.3))),
    (lambda L: L.distributions.Exponential(L.ones(3, dtype=L.float64)),
     lambda L: L.distributions.Pareto(L.ones(4, dtype=L.float64), 2.0)),
    (lambda L: L.distributions.Pareto(1.0, 3.0),
     lambda L: L.distributions.Beta(L.ones(4), L.ones(4))),
    (lambda L: L.distributions.Poisson(L.ones(2)),
     lambda L: L.distributions.Binomial(5, L.full((3, 2), 0.5))),
])
def test_infinite_kl_has_the_shape_and_dtype_of_p_as_torch(p, q):
    # torch's infinite KL pairs return full_like(one of p's parameters): q's batch
    # shape is not broadcast in (it was here), and mismatched shapes do not raise
    t = torch.distributions.kl_divergence(p(torch), q(torch))
    r = ptcore.distributions.kl_divergence(p(ptcore), q(ptcore))
    assert tuple(r.shape) == tuple(t.shape)
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert np.isinf(_np(r)).all()


@pytest.mark.parametrize("n", [-1, -2, -3, -4, -5, -6, 0, 1, 5])
def test_rfftfreq_negative_n_sizes_as_torch(n):
    # torch sizes rfftfreq's result n / 2 + 1 with C++'s truncating division
    try:
        t = torch.fft.rfftfreq(n, 2.0)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="negative dimension"):
            ptcore.fft.rfftfreq(n, 2.0)
        return
    r = ptcore.fft.rfftfreq(n, 2.0)
    assert tuple(r.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_np(r), t.numpy())
    assert np.array_equal(np.signbit(_np(r)), np.signbit(t.numpy()))


@pytest.mark.parametrize("fn", ["ihfft2", "ihfftn"])
def test_ihfftn_checks_dims_before_complex_input_as_torch(fn):
    x = ptcore.ones(3, 4, dtype=ptcore.complex64)
    with pytest.raises(IndexError):
        getattr(ptcore.fft, fn)(x, dim=3)
    with pytest.raises(RuntimeError, match="at least one axis"):
        ptcore.fft.ihfftn(x, dim=())
    with pytest.raises(RuntimeError):
        getattr(ptcore.fft, fn)(x)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("fn", ["cholesky", "cholesky_ex"])
def test_cholesky_upper_reads_the_upper_triangle_as_torch(fn, complex_):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3, 3)) + (1j * rng.normal(size=(2, 3, 3)) if complex_ else 0)
    A = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3)
    A[..., 0, 2] += 0.5        # not Hermitian: the two triangles give different factors
    A[..., 2, 1] -= 0.4
    for upper in (False, True):
        t = getattr(torch.linalg, fn)(torch.from_numpy(A.copy()), upper=upper)
        r = getattr(ptcore.linalg, fn)(ptcore.from_numpy(A.copy()), upper=upper)
        if fn == "cholesky_ex":
            np.testing.assert_array_equal(_np(r.info), t.info.numpy())
            t, r = t.L, r.L
        np.testing.assert_allclose(_np(r), t.numpy(), rtol=1e-12, atol=1e-12)
