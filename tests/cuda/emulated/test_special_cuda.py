"""``ptcore.special`` functions on CUDA tensors (emulated device): every
result is compared with the same function on the CPU (SciPy/NumPy kernels)
over wide ranges (0, tails, +-1, +-inf, nan), float32 and float64, broadcast
and strided operands, the dtype rules, ``out=`` and grad behaviour; a few
values are checked against torch directly."""
import math

import numpy as np
import pytest

import ptcore

POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
         "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
         "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

X = [-math.inf, -30.0, -5.0, -2.0, -1.0, -0.999, -0.75, -0.5, -1e-3, -0.0, 0.0, 1e-3, 0.25, 0.3, 0.5,
     0.75, 0.9, 0.999, 1.0, 1.5, 3.0, 10.0, math.inf, math.nan]
N = [-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0, 9.0, 12.0, 20.0, 50.0, 2.7, -0.5,
     math.nan, math.inf, -math.inf, 1e30]


def _tol(dt):
    return dict(rtol=2e-6, atol=1e-6) if dt is ptcore.float32 else dict(rtol=1e-12, atol=1e-13)


def _close(dev, cpu, dt):
    assert dev.device.type == "cuda"
    assert dev.dtype is cpu.dtype, (dev.dtype, cpu.dtype)
    assert tuple(dev.shape) == tuple(cpu.shape)
    a, b = dev.cpu().numpy(), cpu.numpy()
    np.testing.assert_allclose(a, b, equal_nan=True, **_tol(dt))
    # infinities and signs exactly where the CPU has them
    assert np.array_equal(np.isinf(a), np.isinf(b)) and np.array_equal(np.isnan(a), np.isnan(b))


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", POLYS)
def test_polynomial_grid_matches_cpu(name, dt):
    fn = getattr(ptcore.special, name)
    x = ptcore.tensor(X, dtype=dt).reshape(-1, 1)
    n = ptcore.tensor(N, dtype=dt).reshape(1, -1)
    _close(fn(x.cuda(), n.cuda()), fn(x, n), dt)


@pytest.mark.parametrize("dt", [ptcore.float32, ptcore.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "legendre_polynomial_p", "laguerre_polynomial_l"])
def test_polynomial_dense_interval_and_scalar_degree(name, dt):
    fn = getattr(ptcore.special, name)
    g = np.random.default_rng(0)
    x = ptcore.tensor(np.concatenate([g.uniform(-1, 1, 200), np.linspace(-1, 1, 41)]), dtype=dt)
    for n in (0, 1, 4, 8, 9, 15, 33, 100):
        _close(fn(x.cuda(), n), fn(x, n), dt)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_matches_torch(name):
    torch = pytest.importorskip("torch")
    xs = [-1.0, -0.6, 0.0, 0.2, 0.7, 1.0, 1.7, -3.0]
    ns = [0, 1, 2, 3, 7, 10]
    x = ptcore.tensor(xs, dtype=ptcore.float64).reshape(-1, 1).cuda()
    n = ptcore.tensor(ns, dtype=ptcore.float64).reshape(1, -1).cuda()
    r = getattr(ptcore.special, name)(x, n).cpu().numpy()
    e = getattr(torch.special, name)(torch.tensor(xs, dtype=torch.float64).reshape(-1, 1),
                                     torch.tensor(ns, dtype=torch.float64).reshape(1, -1)).numpy()
    np.testing.assert_allclose(r, e, rtol=1e-12, atol=1e-12)


def test_polynomial_strided_scalar_input_and_out():
    fn = ptcore.special.chebyshev_polynomial_t
    base = ptcore.linspace(-1.2, 1.2, 60, dtype=ptcore.float64).reshape(6, 10)
    xs = base.cuda().t()                          # non-contiguous operand
    n = ptcore.tensor([[3.0], [9.0], [0.0], [12.0], [-2.0], [1.0], [7.0], [2.0], [5.0], [40.0]],
                      dtype=ptcore.float64).cuda()
    _close(fn(xs, n), fn(base.t(), n.cpu()), ptcore.float64)
    # a number as input (torch's Scalar overload) and as the degree
    _close(fn(0.3, n), fn(0.3, n.cpu()), ptcore.float64)
    out = ptcore.empty(10, 6, dtype=ptcore.float64, device="cuda")
    r = fn(xs, 4, out=out)
    assert r is out and tuple(out.shape) == (10, 6)
    _close(out, fn(base.t(), 4), ptcore.float64)


def test_polynomial_dtype_rules():
    fn = ptcore.special.hermite_polynomial_he
    xi = ptcore.tensor([0, 1, 2, 3], dtype=ptcore.int64)
    r = fn(xi.cuda(), 3)
    assert r.dtype is ptcore.get_default_dtype()
    _close(r, fn(xi, 3), r.dtype)
    # float32 input with a float64 degree tensor promotes as on the CPU
    x = ptcore.tensor([0.5, 2.0], dtype=ptcore.float32)
    n = ptcore.tensor([3.0, 4.0], dtype=ptcore.float64)
    _close(fn(x.cuda(), n.cuda()), fn(x, n), fn(x, n).dtype)
    with pytest.raises(NotImplementedError, match="hermite_polynomial_he"):
        fn(x.cuda().to(ptcore.float16), 3)
    with pytest.raises(NotImplementedError):
        fn(x.cuda().to(ptcore.bfloat16), 3)
    with pytest.raises(NotImplementedError):
        fn(x.cuda().to(ptcore.complex64), 3)
    with pytest.raises(TypeError):
        fn(x.cuda(), "3")
    with pytest.raises(RuntimeError, match="size"):
        fn(ptcore.zeros(3, device="cuda"), ptcore.zeros(4, device="cuda"))


def test_polynomial_results_do_not_require_grad():
    x = ptcore.tensor([0.2, 0.4], device="cuda", requires_grad=True)
    r = ptcore.special.legendre_polynomial_p(x, 3)
    assert not r.requires_grad
    np.testing.assert_allclose(r.cpu().numpy(), ptcore.special.legendre_polynomial_p(x.detach().cpu(), 3)
                               .numpy(), rtol=1e-6)


def test_polynomial_huge_degree_terminates():
    # beyond overflow the recurrence is NaN for good: the kernel stops there (same value as the CPU)
    x = ptcore.tensor([3.0, -7.0], dtype=ptcore.float32)
    for name in ("chebyshev_polynomial_t", "hermite_polynomial_h", "legendre_polynomial_p"):
        fn = getattr(ptcore.special, name)
        _close(fn(x.cuda(), 2000), fn(x, 2000), ptcore.float32)
