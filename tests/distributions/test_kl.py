"""kl_divergence against torch.distributions.kl_divergence for every pair of
the families below (torch's registered pairs give values, the others must
raise NotImplementedError in both), and register_kl's dispatch."""
import numpy as np
import pytest

import ptcore
import ptcore.distributions as D

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(7)


def _u(low, high, n=3):
    return _rng.uniform(low, high, size=n)


# univariate families, batch shape (3,), two parameter sets each (p and q)
def _families():
    fams = {
        "Normal": lambda: dict(loc=_u(-1, 1), scale=_u(0.5, 2)),
        "Laplace": lambda: dict(loc=_u(-1, 1), scale=_u(0.5, 2)),
        "Cauchy": lambda: dict(loc=_u(-1, 1), scale=_u(0.5, 2)),
        "Gumbel": lambda: dict(loc=_u(-1, 1), scale=_u(0.5, 2)),
        "HalfNormal": lambda: dict(scale=_u(0.5, 2)),
        "Exponential": lambda: dict(rate=_u(0.5, 2)),
        "Gamma": lambda: dict(concentration=_u(0.5, 3), rate=_u(0.5, 2)),
        "Beta": lambda: dict(concentration1=_u(0.5, 3), concentration0=_u(0.5, 3)),
        "Uniform": lambda: dict(low=_u(0.1, 0.3), high=_u(0.6, 0.9)),
        "Pareto": lambda: dict(scale=_u(0.5, 2), alpha=_u(0.5, 4)),
        "Bernoulli": lambda: dict(probs=_u(0.1, 0.9)),
        "Geometric": lambda: dict(probs=_u(0.1, 0.9)),
        "Poisson": lambda: dict(rate=_u(0.5, 4)),
        "Binomial": lambda: dict(total_count=np.full(3, 7.0), probs=_u(0.1, 0.9)),
        "LogNormal": lambda: dict(loc=_u(-1, 1), scale=_u(0.5, 2)),
        "StudentT": lambda: dict(df=_u(2, 5), loc=_u(-1, 1), scale=_u(0.5, 2)),
        "Chi2": lambda: dict(df=_u(1, 5)),
        "ContinuousBernoulli": lambda: dict(probs=_u(0.1, 0.9)),
    }
    return {k: v for k, v in fams.items() if v is not None}


FAMS = _families()
PARAMS = {name: (make(), make()) for name, make in sorted(FAMS.items())}
PAIRS = [(a, b) for a in sorted(FAMS) for b in sorted(FAMS)]


def _make(mod, name, kw):
    conv = ptcore.tensor if mod is D else torch.tensor
    return getattr(mod, name)(**{k: conv(v) for k, v in kw.items()})


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_kl_univariate_pairs(pair):
    a, b = pair
    pp, tp = _make(D, a, PARAMS[a][0]), _make(torch.distributions, a, PARAMS[a][0])
    pq, tq = _make(D, b, PARAMS[b][1]), _make(torch.distributions, b, PARAMS[b][1])
    try:
        expected = torch.distributions.kl_divergence(tp, tq)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            D.kl_divergence(pp, pq)
        return
    got = D.kl_divergence(pp, pq)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.dtype == ptcore.float64
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7, atol=1e-10)


def _spd(n, batch=()):
    a = _rng.normal(size=batch + (n, n)) * 0.4
    return a @ np.swapaxes(a, -1, -2) + np.eye(n)


def _simplex(*shape):
    x = _rng.uniform(0.1, 1.0, size=shape)
    return x / x.sum(-1, keepdims=True)


def _multi_cases():
    mvn = lambda: dict(loc=_rng.normal(size=(2, 3)), covariance_matrix=_spd(3, (2,)))  # noqa: E731
    lr = lambda: dict(loc=_rng.normal(size=(2, 3)), cov_factor=_rng.normal(size=(2, 3, 2)) * 0.5,  # noqa: E731
                      cov_diag=_rng.uniform(0.5, 1.5, size=(2, 3)))
    return [
        (("MultivariateNormal", mvn()), ("MultivariateNormal", mvn())),
        (("LowRankMultivariateNormal", lr()), ("LowRankMultivariateNormal", lr())),
        (("LowRankMultivariateNormal", lr()), ("MultivariateNormal", mvn())),
        (("MultivariateNormal", mvn()), ("LowRankMultivariateNormal", lr())),
        (("Dirichlet", dict(concentration=_rng.uniform(0.5, 3, (2, 4)))),
         ("Dirichlet", dict(concentration=_rng.uniform(0.5, 3, (2, 4))))),
        (("Categorical", dict(probs=_simplex(2, 5))), ("Categorical", dict(logits=_rng.normal(size=(2, 5))))),
        (("OneHotCategorical", dict(probs=_simplex(2, 5))), ("OneHotCategorical", dict(probs=_simplex(2, 5)))),
    ]


MULTI = _multi_cases()


@pytest.mark.parametrize("case", MULTI, ids=[f"{p[0]}-{q[0]}" for p, q in MULTI])
def test_kl_multivariate_pairs(case):
    (a, ka), (b, kb) = case
    got = D.kl_divergence(_make(D, a, ka), _make(D, b, kb))
    expected = torch.distributions.kl_divergence(_make(torch.distributions, a, ka),
                                                 _make(torch.distributions, b, kb))
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-7, atol=1e-10)


def test_kl_independent_transformed_and_gradients():
    loc = np.array([[0.3, -0.2], [1.0, 0.5]])
    scale = np.array([[1.2, 0.7], [0.4, 2.0]])
    lp = ptcore.tensor(loc, requires_grad=True)
    lt = torch.tensor(loc, requires_grad=True)
    p = D.Independent(D.Normal(lp, ptcore.tensor(scale)), 1)
    q = D.Independent(D.Normal(ptcore.tensor(scale), ptcore.tensor(scale)), 1)
    tp = torch.distributions.Independent(torch.distributions.Normal(lt, torch.tensor(scale)), 1)
    tq = torch.distributions.Independent(torch.distributions.Normal(torch.tensor(scale), torch.tensor(scale)), 1)
    got, expected = D.kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(lp.grad.numpy(), lt.grad.numpy(), rtol=1e-12)

    # TransformedDistribution pairs with equal transforms reduce to the base KL
    tp2 = D.TransformedDistribution(D.Normal(ptcore.tensor(loc), ptcore.tensor(scale)), [D.ExpTransform()])
    tq2 = D.TransformedDistribution(D.Normal(ptcore.tensor(scale), ptcore.tensor(scale)), [D.ExpTransform()])
    np.testing.assert_allclose(D.kl_divergence(tp2, tq2).numpy(),
                               D.kl_divergence(D.Normal(ptcore.tensor(loc), ptcore.tensor(scale)),
                                               D.Normal(ptcore.tensor(scale), ptcore.tensor(scale))).numpy())


def test_kl_unregistered_pair_raises():
    p = D.VonMises(ptcore.tensor([0.0]), ptcore.tensor([1.0]))
    q = D.Normal(ptcore.tensor([0.0]), ptcore.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="VonMises"):
        D.kl_divergence(p, q)


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    p = MyNormal(ptcore.tensor([0.0]), ptcore.tensor([1.0]))
    q = D.Normal(ptcore.tensor([1.0]), ptcore.tensor([2.0]))
    # a subclass falls back to the parent's registration
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(),
                               D.kl_divergence(D.Normal(ptcore.tensor([0.0]), ptcore.tensor([1.0])), q).numpy())

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return ptcore.full(p.batch_shape, 42.0)

    assert D.kl_divergence(p, q).tolist() == [42.0]
    # as torch: what is not a class is refused, any class accepted (Pyro registers pairs of
    # its own base classes, which are not torch's Distribution subclasses)
    with pytest.raises(TypeError):
        D.register_kl(3, D.Normal)
    with pytest.raises(TypeError):
        D.register_kl(D.Normal, "Normal")
    D.register_kl(int, D.Normal)(_kl_mine)
    D.kl._KL_REGISTRY.pop((int, D.Normal))
    D.kl._KL_MEMOIZE.clear()
