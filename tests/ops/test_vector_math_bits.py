"""The float32 vector exp family (ptc_math.h) against its scalar path: a
contiguous tensor runs the AVX-512 / AVX2 clones, a strided view of the same
values the scalar loop.  exp and tanh give the scalar bits; sigmoid and silu,
whose strided loops use libm's expf, agree within an ulp.  Arguments span
the whole range, including overflow, results that are subnormal or round to
zero, infinities and NaN."""
import numpy as np
import pytest

import ptcore


def _values():
    rng = np.random.default_rng(0)
    parts = [rng.uniform(-110.0, 95.0, 20000), rng.standard_normal(20000) * 4,
             np.linspace(-104.5, -85.0, 4001), np.linspace(85.0, 89.5, 1001),
             np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.7228394, 88.72284,
                       -103.972084, -103.97209, 1e-30, -1e-30, 0.625, -0.625])]
    return np.concatenate(parts).astype(np.float32)


def _silu(x):
    return ptcore.nn.functional.silu(x)


def _both(fn):
    x = _values()
    contiguous = fn(ptcore.from_numpy(x)).numpy()
    spread = np.zeros(2 * x.size, dtype=np.float32)
    spread[::2] = x
    return contiguous, fn(ptcore.from_numpy(spread)[::2]).numpy()


@pytest.mark.parametrize("fn", [ptcore.exp, ptcore.tanh], ids=["exp", "tanh"])
def test_vector_and_scalar_paths_same_bits(fn):
    contiguous, strided = _both(fn)
    assert np.array_equal(contiguous.view(np.uint32), strided.view(np.uint32))


@pytest.mark.parametrize("fn", [ptcore.sigmoid, _silu], ids=["sigmoid", "silu"])
def test_vector_and_strided_paths_within_an_ulp(fn):
    contiguous, strided = _both(fn)
    assert np.array_equal(np.isnan(contiguous), np.isnan(strided))
    ok = ~np.isnan(contiguous)
    np.testing.assert_array_max_ulp(contiguous[ok], strided[ok], maxulp=1)


def test_softmax_rows_match_float64():
    """The softmax kernels' exp against float64 softmax, rows wide and narrow."""
    rng = np.random.default_rng(1)
    for cols in (3, 16, 64, 1000):
        x = (rng.standard_normal((37, cols)) * 20).astype(np.float32)
        got = ptcore.softmax(ptcore.from_numpy(x), -1).numpy()
        e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
        np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_softmax_logsumexp_every_tail_width():
    """Rows of every length up to past two AVX-512 vectors (the last partial
    vector is computed as the row's last full one): softmax, log_softmax and
    logsumexp against float64."""
    rng = np.random.default_rng(2)
    for cols in list(range(1, 50)) + [100, 1001]:
        x = (rng.standard_normal((5, cols)) * 10).astype(np.float32)
        t = ptcore.from_numpy(x)
        x64 = x.astype(np.float64)
        m = x64.max(-1, keepdims=True)
        e = np.exp(x64 - m)
        lse = np.log(e.sum(-1, keepdims=True)) + m
        np.testing.assert_allclose(ptcore.softmax(t, -1).numpy(), e / e.sum(-1, keepdims=True),
                                   rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(ptcore.log_softmax(t, -1).numpy(), x64 - lse,
                                   rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(ptcore.logsumexp(t, -1).numpy(), lse[:, 0], rtol=2e-6)
