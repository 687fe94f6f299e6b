"""Complex sgn (z / |z|, the backward of abs) against torch: zeros, infinities,
nan, huge and tiny moduli, both complex dtypes, contiguous and strided."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

INF, NAN = float("inf"), float("nan")
VALUES = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 3 + 4j, -3 - 4j, complex(INF, 0),
          complex(-INF, 0), complex(0, INF), complex(INF, INF), complex(NAN, 0), complex(0, NAN),
          complex(INF, NAN), 1e30 + 1e30j, 1e-30 - 1e-30j, 1e-45 + 0j, 3e38 + 3e38j, -2 + 0j,
          complex(0.5, -0.25)]


def _check(p, t, rtol):
    p, t = p.numpy(), t.numpy()
    for part in ("real", "imag"):
        a, b = getattr(p, part), getattr(t, part)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_special_values_as_torch(dtype):
    z = np.array(VALUES, dtype=dtype)
    # torch's vectorised kernel divides the parts by |z| one by one (inf + 0i ->
    # nan + 0i) and takes |z| in float32 (3e38 + 3e38i -> 0); its scalar
    # kernel (complex32, non-contiguous) divides as complex numbers (nan + nan i)
    # and ptcore does that everywhere, with |z| in double for complex64 (torch's
    # float32 |z|^2 also underflows: 1e-45 + 0i -> inf there)
    m = np.abs(z.astype(np.complex128))
    big = np.isinf(np.abs(z.astype(np.complex64))) | ((m > 0) & (m < 1e-19))
    _check(ptcore.from_numpy(z[~big].copy()).sgn(), torch.from_numpy(z[~big].copy()).sgn(),
           2e-7 if dtype == "complex64" else 1e-15)
    p = ptcore.from_numpy(z[big].copy()).sgn().numpy()
    fin = np.isfinite(z[big])
    assert np.isnan(p[~fin].real).all() and np.isnan(p[~fin].imag).all()
    np.testing.assert_allclose(p[fin], z[big][fin] / np.abs(z[big][fin].astype(np.complex128)),
                               rtol=2e-7)
    # the complex division of torch's scalar kernel (complex32 runs it)
    zc = ptcore.tensor([complex(INF, 0), complex(0, -INF)], dtype=ptcore.complex32).sgn()
    tc = torch.tensor([complex(INF, 0), complex(0, -INF)], dtype=torch.complex32).sgn()
    np.testing.assert_array_equal(np.isnan(torch.view_as_real(tc.to(torch.complex64)).numpy()),
                                  np.isnan(ptcore.view_as_real(zc.to(ptcore.complex64)).numpy()))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_random_contiguous_and_strided(dtype):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(4099) + 1j * rng.standard_normal(4099)) * np.exp(
        rng.uniform(-30, 30, 4099))
    z = z.astype(dtype)
    rtol = 2e-7 if dtype == "complex64" else 1e-15
    p = ptcore.from_numpy(z.copy())
    _check(p.sgn(), torch.from_numpy(z.copy()).sgn(), rtol)
    _check(p[::3].sgn(), torch.from_numpy(z.copy())[::3].sgn(), rtol)
    # |sgn| = 1 away from 0
    np.testing.assert_allclose(np.abs(p.sgn().numpy()), 1, rtol=3 * rtol)


def test_abs_backward_of_complex_uses_sgn():
    z = np.array([3 + 4j, 0j, -1 + 1j], np.complex64)
    pz = ptcore.from_numpy(z.copy()).requires_grad_()
    tz = torch.from_numpy(z.copy()).requires_grad_()
    pz.abs().sum().backward()
    tz.abs().sum().backward()
    np.testing.assert_allclose(pz.grad.numpy(), tz.grad.numpy(), rtol=1e-6)
