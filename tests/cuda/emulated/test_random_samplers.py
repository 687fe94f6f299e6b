"""poisson and binomial on CUDA tensors (emulated device): the CPU front-end's
checks and dtypes, the device's rejection samplers (one Philox stream per
element), determinism for a seed, moments of 10^5 samples within 5 sigma of
the exact ones, gradients as PyTorch, and the distributions that sample
with them."""
import math

import numpy as np
import pytest

import ptcore

N = 100_000
FLOATS = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


def _moments_ok(x, mean, var, mu4):
    """Sample mean and variance of ``x`` within 5 sigma of ``mean``/``var``
    (``mu4`` the fourth central moment: Var(s^2) ~ (mu4 - var^2) / n)."""
    n = x.size
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / n) + 1e-12, (x.mean(), mean)
    assert abs(x.var(ddof=1) - var) <= 5 * math.sqrt(max(mu4 - var * var, 0.0) / n) + 1e-12, (x.var(), var)


@pytest.mark.parametrize("lam", [0.0, 0.5, 5.0, 100.0, 1e4])
def test_poisson_moments(lam):
    ptcore.manual_seed(1)
    x = ptcore.poisson(ptcore.full((N,), lam, dtype=ptcore.float64, device="cuda"))
    assert x.device.type == "cuda" and x.dtype == ptcore.float64
    x = x.cpu().numpy()
    assert np.all(x == np.round(x)) and np.all(x >= 0)
    _moments_ok(x, lam, lam, lam * (1 + 3 * lam))


@pytest.mark.parametrize("n,p", [(5, 0.1), (10, 0.5), (3, 0.8), (40, 0.97), (1000, 0.3), (10 ** 6, 0.5),
                                 (200, 0.95), (7, 0.0), (7, 1.0)])
def test_binomial_moments(n, p):
    """Inversion (n * min(p, 1 - p) < 10) and BTRS (>= 10), both sides of p = 1/2."""
    ptcore.manual_seed(2)
    x = ptcore.binomial(ptcore.full((N,), float(n), dtype=ptcore.float64, device="cuda"),
                        ptcore.full((N,), p, dtype=ptcore.float64, device="cuda")).cpu().numpy()
    assert np.all((x >= 0) & (x <= n)) and np.all(x == np.round(x))
    q = 1 - p
    var = n * p * q
    _moments_ok(x, n * p, var, var * (1 + 3 * (n - 2) * p * q))


def test_poisson_pmf_chi_square():
    """PTRS (rate >= 10) and multiplication (below) give Poisson's pmf."""
    stats = pytest.importorskip("scipy.stats")
    ptcore.manual_seed(3)
    for lam in (3.0, 25.0):
        x = ptcore.poisson(ptcore.full((N,), lam, device="cuda")).cpu().numpy()
        ks = np.arange(0, int(lam + 6 * math.sqrt(lam)))
        obs = np.array([(x == k).sum() for k in ks] + [(x >= ks[-1] + 1).sum()])
        exp = np.append(stats.poisson.pmf(ks, lam), stats.poisson.sf(ks[-1], lam)) * N
        keep = exp > 5
        obs = np.append(obs[keep], obs[~keep].sum())
        exp = np.append(exp[keep], exp[~keep].sum())
        assert stats.chisquare(obs, exp).pvalue > 1e-4, lam


@pytest.mark.parametrize("dtype", FLOATS)
def test_shapes_dtypes_and_special_values(dtype):
    rates = ptcore.tensor([[0.0, 2.0, 7.5], [30.0, float("inf"), 0.25]], dtype=dtype, device="cuda")
    out = ptcore.poisson(rates.t())                  # non-contiguous input
    assert out.dtype == dtype and out.device == rates.device and tuple(out.shape) == (3, 2)
    got = out.cpu().float()
    assert got[0, 0].item() == 0.0 and got[1, 1].item() == math.inf
    assert bool(ptcore.all(got == got.round()).item())
    c = ptcore.tensor([[-3.0], [2.7], [50.0]], dtype=dtype, device="cuda")
    p = ptcore.tensor([0.0, 0.4, 1.0, 1.5, -0.5], dtype=dtype, device="cuda")
    b = ptcore.binomial(c, p)                        # broadcast (3, 1) x (5,)
    assert b.dtype == dtype and tuple(b.shape) == (3, 5)
    got = b.cpu().float()
    assert got[0].tolist() == [0.0] * 5                           # negative counts give 0
    assert got[:, 0].tolist() == [0.0] * 3 and got[:, 4].tolist() == [0.0] * 3       # p <= 0
    whole = c[1:, 0].cpu().float().tolist()                        # p >= 1: the count itself,
    assert got[1:, 2].tolist() == whole and got[1:, 3].tolist() == whole  # as torch (not truncated)
    assert bool(ptcore.all((got >= 0) & (got <= c.cpu().float().clamp(min=0))).item())
    mixed = ptcore.binomial(ptcore.tensor(4.0, dtype=dtype), p)    # a 0-d CPU count
    assert mixed.device == p.device and mixed.cpu().float().tolist()[2:4] == [4.0, 4.0]
    assert ptcore.poisson(ptcore.empty(0, 3, dtype=dtype, device="cuda")).shape == (0, 3)
    assert ptcore.binomial(ptcore.empty(0, dtype=dtype, device="cuda"),
                           ptcore.empty(0, dtype=dtype, device="cuda")).shape == (0,)


def test_determinism_and_generators():
    rates = ptcore.tensor([0.5, 3.0, 50.0, 1e4] * 8, device="cuda")
    count = ptcore.full((32,), 30.0, device="cuda")
    prob = ptcore.linspace(0.01, 0.99, 32, device="cuda")
    ptcore.manual_seed(7)
    a, b = ptcore.poisson(rates), ptcore.binomial(count, prob)
    a2 = ptcore.poisson(rates)                       # the offset advanced: new values
    ptcore.manual_seed(7)
    assert ptcore.equal(ptcore.poisson(rates), a) and ptcore.equal(ptcore.binomial(count, prob), b)
    assert not ptcore.equal(a2, a)
    g = ptcore.Generator("cuda").manual_seed(11)
    c = ptcore.poisson(rates, generator=g)
    d = ptcore.binomial(count, prob, generator=g)
    g.manual_seed(11)
    assert ptcore.equal(ptcore.poisson(rates, g), c) and ptcore.equal(ptcore.binomial(count, prob, g), d)
    # element i reads stream i: a prefix of the rates gives a prefix of the samples
    g.manual_seed(11)
    assert ptcore.equal(ptcore.poisson(rates[:5].contiguous(), g), c[:5])
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        ptcore.poisson(rates, generator=ptcore.Generator())


def test_errors_as_the_cpu_front_end():
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        ptcore.poisson(ptcore.tensor([1.0, -1.0], device="cuda"))
    with pytest.raises(RuntimeError, match="non-negative"):
        ptcore.poisson(ptcore.tensor([float("nan")], device="cuda"))
    with pytest.raises(NotImplementedError, match="\"poisson_cuda\" not implemented for 'Long'"):
        ptcore.poisson(ptcore.tensor([1, 2], device="cuda"))
    with pytest.raises(RuntimeError, match="must not be NaN"):
        ptcore.binomial(ptcore.tensor([3.0], device="cuda"), ptcore.tensor([float("nan")], device="cuda"))
    with pytest.raises(ValueError, match="floating-point dtypes for count"):
        ptcore.binomial(ptcore.tensor([3], device="cuda"), ptcore.tensor([0.5], device="cuda"))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        ptcore.binomial(ptcore.tensor([3.0], device="cuda"),
                        ptcore.tensor([0.5], dtype=ptcore.float64, device="cuda"))
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.binomial(ptcore.tensor([3.0, 4.0], device="cuda"), ptcore.tensor([0.5, 0.5]))


def test_gradients_as_torch():
    torch = pytest.importorskip("torch")
    r = ptcore.tensor([1.0, 20.0], device="cuda", requires_grad=True)
    s = ptcore.poisson(r)
    tr = torch.tensor([1.0, 20.0], requires_grad=True)
    ts = torch.poisson(tr)
    assert s.requires_grad == ts.requires_grad
    s.sum().backward()
    ts.sum().backward()
    assert r.grad.device.type == "cuda" and r.grad.cpu().tolist() == tr.grad.tolist() == [0.0, 0.0]
    plain = ptcore.poisson(ptcore.tensor([1.0], device="cuda"))
    assert not plain.requires_grad and plain.grad_fn is None
    assert torch.poisson(torch.tensor([1.0])).grad_fn is None
    c = ptcore.tensor([5.0], device="cuda", requires_grad=True)
    b = ptcore.binomial(c, ptcore.tensor([0.5], device="cuda"))
    assert b.requires_grad == torch.binomial(torch.tensor([5.0], requires_grad=True),
                                             torch.tensor([0.5])).requires_grad
    assert not ptcore.binomial(c.detach(), ptcore.tensor([0.5], device="cuda")).requires_grad


def test_distributions_sample_on_cuda():
    D = ptcore.distributions
    ptcore.manual_seed(4)
    x = D.Poisson(ptcore.tensor([2.0, 40.0], device="cuda")).sample((20000,))
    assert x.device.type == "cuda" and tuple(x.shape) == (20000, 2)
    m = x.cpu().double().mean(0)
    assert abs(m[0].item() - 2.0) < 5 * math.sqrt(2.0 / 20000)
    assert abs(m[1].item() - 40.0) < 5 * math.sqrt(40.0 / 20000)
    y = D.Binomial(total_count=ptcore.tensor([10.0, 500.0], device="cuda"),
                   probs=ptcore.tensor([0.3, 0.6], device="cuda")).sample((20000,))
    assert y.device.type == "cuda"
    m = y.cpu().double().mean(0)
    assert abs(m[0].item() - 3.0) < 5 * math.sqrt(2.1 / 20000)
    assert abs(m[1].item() - 300.0) < 5 * math.sqrt(120.0 / 20000)
