"""poisson, binomial and Tensor.bernoulli/multinomial/log_normal_/cauchy_/geometric_:
distributions (moments with fixed seeds), determinism under manual_seed, errors vs PyTorch."""
import math

import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

N = 200_000


def _same_error(fp, ft):
    with pytest.raises(Exception) as ep:
        fp()
    with pytest.raises(Exception) as et:
        ft()
    assert type(ep.value) is type(et.value), (ep.value, et.value)
    assert str(ep.value) == str(et.value), (ep.value, et.value)


@pytest.mark.parametrize("lam", [0.0, 0.7, 4.0, 30.0, 1e4])
def test_poisson_moments(lam):
    ptcore.manual_seed(1)
    x = ptcore.poisson(ptcore.full((N,), lam, dtype=ptcore.float64)).numpy()
    assert np.all(x == np.round(x)) and np.all(x >= 0)
    sd = math.sqrt(lam / N) if lam else 0
    assert abs(x.mean() - lam) <= 6 * sd + 1e-12
    assert abs(x.var() - lam) <= 0.05 * lam + 1e-12


def test_poisson_determinism_dtype_grad():
    rates = ptcore.tensor([0.5, 3.0, 50.0])
    ptcore.manual_seed(7)
    a = ptcore.poisson(rates)
    ptcore.manual_seed(7)
    b = ptcore.poisson(rates)
    assert a.dtype == ptcore.float32 and bool((a == b).all())
    g = ptcore.Generator().manual_seed(7)
    c = ptcore.poisson(rates, generator=g)
    g.manual_seed(7)
    assert bool((ptcore.poisson(rates, g) == c).all())
    r = ptcore.tensor([1.0, 2.0], requires_grad=True)
    s = ptcore.poisson(r)
    assert s.requires_grad
    s.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]


@needs_torch
def test_poisson_errors():
    _same_error(lambda: ptcore.poisson(ptcore.tensor([-1.0])),
                lambda: torch.poisson(torch.tensor([-1.0])))
    _same_error(lambda: ptcore.poisson(ptcore.tensor([1, 2])),
                lambda: torch.poisson(torch.tensor([1, 2])))
    _same_error(lambda: ptcore.poisson(ptcore.tensor([float("nan")])),
                lambda: torch.poisson(torch.tensor([float("nan")])))


@pytest.mark.parametrize("n,p", [(10, 0.5), (5, 0.1), (1000, 0.3), (40, 0.97), (7, 0.0), (7, 1.0)])
def test_binomial_moments(n, p):
    ptcore.manual_seed(2)
    x = ptcore.binomial(ptcore.full((N,), float(n), dtype=ptcore.float64),
                        ptcore.full((N,), p, dtype=ptcore.float64)).numpy()
    assert np.all((x >= 0) & (x <= n)) and np.all(x == np.round(x))
    var = n * p * (1 - p)
    assert abs(x.mean() - n * p) <= 6 * math.sqrt(var / N) + 1e-12
    assert abs(x.var() - var) <= 0.05 * var + 1e-12


@needs_torch
def test_binomial_broadcast_and_errors():
    out = ptcore.binomial(ptcore.tensor([10.0, 5.0]), ptcore.tensor([0.5]))
    assert tuple(out.shape) == tuple(torch.binomial(torch.tensor([10.0, 5.0]),
                                                    torch.tensor([0.5])).shape)
    _same_error(lambda: ptcore.binomial(ptcore.tensor([10, 5]), ptcore.tensor([0.5, 0.1])),
                lambda: torch.binomial(torch.tensor([10, 5]), torch.tensor([0.5, 0.1])))
    _same_error(lambda: ptcore.binomial(ptcore.tensor([10.0]), ptcore.tensor([0.5],
                                                                          dtype=ptcore.float64)),
                lambda: torch.binomial(torch.tensor([10.0]), torch.tensor([0.5],
                                                                          dtype=torch.float64)))
    # 0-d count and prob: a 0-d sample (NumPy's Python-int draw used to break it)
    for p in (0.0, 0.4, 1.0):
        r = ptcore.binomial(ptcore.tensor(7.0), ptcore.tensor(p))
        t = torch.binomial(torch.tensor(7.0), torch.tensor(p))
        assert tuple(r.shape) == tuple(t.shape) == () and r.dtype == ptcore.float32
        assert 0.0 <= float(r) <= 7.0 and (p not in (0.0, 1.0) or float(r) == 7.0 * p)


def test_bernoulli_method():
    ptcore.manual_seed(3)
    probs = ptcore.full((N,), 0.3, dtype=ptcore.float64)
    x = probs.bernoulli().numpy()
    assert set(np.unique(x)) <= {0.0, 1.0} and abs(x.mean() - 0.3) < 0.005
    y = probs.bernoulli(0.8)
    assert y.dtype == ptcore.float64 and abs(y.numpy().mean() - 0.8) < 0.005
    z = probs.bernoulli(p=0.1).numpy()
    assert abs(z.mean() - 0.1) < 0.005
    g = ptcore.Generator().manual_seed(5)
    a = probs.bernoulli(generator=g)
    g.manual_seed(5)
    assert bool((probs.bernoulli(generator=g) == a).all())


def test_multinomial_method():
    ptcore.manual_seed(4)
    w = ptcore.tensor([1.0, 2.0, 7.0], dtype=ptcore.float64)
    s = w.multinomial(N, replacement=True).numpy()
    freq = np.bincount(s, minlength=3) / N
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.006)
    t = ptcore.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]).multinomial(2)
    assert sorted(t[0].tolist()) == [1, 2] and sorted(t[1].tolist()) == [0, 1]
    g = ptcore.Generator().manual_seed(5)
    a = w.multinomial(20, True, generator=g)
    g.manual_seed(5)
    assert bool((w.multinomial(20, True, generator=g) == a).all())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_log_normal_(dt):
    ptcore.manual_seed(5)
    t = ptcore.empty(N, dtype=getattr(ptcore, dt))
    assert t.log_normal_(0.5, 0.4) is t
    logs = np.log(t.numpy().astype(np.float64))
    assert abs(logs.mean() - 0.5) < 0.005 and abs(logs.std() - 0.4) < 0.005
    d = ptcore.empty(N).log_normal_().numpy()   # defaults mean=1, std=2
    assert abs(np.log(d).mean() - 1) < 0.03 and abs(np.log(d).std() - 2) < 0.03


def test_cauchy_():
    ptcore.manual_seed(6)
    t = ptcore.empty(N, dtype=ptcore.float64)
    assert t.cauchy_(2.0, 0.5) is t
    x = t.numpy()
    q25, q50, q75 = np.quantile(x, [0.25, 0.5, 0.75])
    assert abs(q50 - 2.0) < 0.01 and abs((q75 - q25) / 2 - 0.5) < 0.01
    h = ptcore.empty(1000, dtype=ptcore.float16).cauchy_()
    assert h.dtype == ptcore.float16


@pytest.mark.parametrize("dt", ["float64", "int64", "float32"])
def test_geometric_(dt):
    ptcore.manual_seed(7)
    p = 0.3
    t = ptcore.empty(N, dtype=getattr(ptcore, dt))
    assert t.geometric_(p) is t
    x = t.numpy().astype(np.float64)
    assert x.min() >= 1 and np.all(x == np.round(x))
    assert abs(x.mean() - 1 / p) < 0.03
    assert abs(x.var() - (1 - p) / p ** 2) < 0.05 * (1 - p) / p ** 2
    assert abs((x == 1).mean() - p) < 0.005


def test_inplace_determinism():
    for name, args in (("log_normal_", ()), ("cauchy_", ()), ("geometric_", (0.4,))):
        g = ptcore.Generator().manual_seed(11)
        a = getattr(ptcore.empty(50), name)(*args, generator=g)
        g.manual_seed(11)
        b = getattr(ptcore.empty(50), name)(*args, generator=g)
        assert bool((a == b).all()), name
        ptcore.manual_seed(12)
        c = getattr(ptcore.empty(50), name)(*args)
        ptcore.manual_seed(12)
        assert bool((getattr(ptcore.empty(50), name)(*args) == c).all()), name


@needs_torch
def test_inplace_errors():
    for p in (0, 1, 1.5):
        _same_error(lambda: ptcore.zeros(3).geometric_(p), lambda: torch.zeros(3).geometric_(p))
    _same_error(lambda: ptcore.zeros(3, dtype=ptcore.bool).geometric_(0.5),
                lambda: torch.zeros(3, dtype=torch.bool).geometric_(0.5))
    for s in (0, -1):
        _same_error(lambda: ptcore.zeros(3).log_normal_(1, s),
                    lambda: torch.zeros(3).log_normal_(1, s))
        _same_error(lambda: ptcore.zeros(3).cauchy_(0, s), lambda: torch.zeros(3).cauchy_(0, s))
    _same_error(lambda: ptcore.zeros(3, dtype=ptcore.int64).log_normal_(),
                lambda: torch.zeros(3, dtype=torch.int64).log_normal_())
    _same_error(lambda: ptcore.zeros(3, dtype=ptcore.int64).cauchy_(),
                lambda: torch.zeros(3, dtype=torch.int64).cauchy_())


def test_binomial_prob_one_gives_the_count_itself_as_torch():
    torch = pytest.importorskip("torch")
    c = [2.5, 3.0, -1.0, 7.9, 0.0]
    p = [1.0, 0.0, 1.0, 1.0, 1.0]
    got = ptcore.binomial(ptcore.tensor(c), ptcore.tensor(p))
    want = torch.binomial(torch.tensor(c), torch.tensor(p))
    assert got.tolist() == want.tolist()
