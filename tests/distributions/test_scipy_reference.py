"""log_prob, cdf, icdf, entropy, mean and variance against scipy.stats on a
grid of values, and seeded sample moments / Kolmogorov-Smirnov distances of
draws (thresholds many standard errors wide with a fixed seed, so they cannot
flake)."""
import numpy as np
import pytest
from scipy import stats

import ptcore
import ptcore.distributions as D



def T(x):
    return ptcore.tensor(x, dtype=ptcore.float64)

# name -> (ptcore distribution, frozen scipy distribution, values inside the support)
CONT = {
    "Normal": (lambda: D.Normal(T([0.3, -1.0]), T([1.5, 0.2])),
               stats.norm([0.3, -1.0], [1.5, 0.2]), np.linspace(-3, 3, 13)),
    "LogNormal": (lambda: D.LogNormal(T([0.3, -1.0]), T([0.5, 0.9])),
                  stats.lognorm([0.5, 0.9], scale=np.exp([0.3, -1.0])), np.linspace(0.05, 5, 13)),
    "HalfNormal": (lambda: D.HalfNormal(T([0.7, 2.0])), stats.halfnorm(scale=[0.7, 2.0]), np.linspace(0, 4, 13)),
    "Uniform": (lambda: D.Uniform(T([-1.0, 0.0]), T([2.0, 0.5])),
                stats.uniform([-1.0, 0.0], [3.0, 0.5]), np.linspace(0.01, 0.49, 13)),
    "Exponential": (lambda: D.Exponential(T([0.5, 3.0])), stats.expon(scale=1 / np.array([0.5, 3.0])),
                    np.linspace(0, 6, 13)),
    "Laplace": (lambda: D.Laplace(T([0.0, 1.0]), T([1.0, 0.3])), stats.laplace([0.0, 1.0], [1.0, 0.3]),
                np.linspace(-3, 3, 13)),
    "Cauchy": (lambda: D.Cauchy(T([0.0, 1.0]), T([1.0, 0.3])), stats.cauchy([0.0, 1.0], [1.0, 0.3]),
               np.linspace(-5, 5, 13)),
    "HalfCauchy": (lambda: D.HalfCauchy(T([1.0, 0.3])), stats.halfcauchy(scale=[1.0, 0.3]), np.linspace(0, 5, 13)),
    "Gumbel": (lambda: D.Gumbel(T([0.0, 1.0]), T([1.0, 0.5])), stats.gumbel_r([0.0, 1.0], [1.0, 0.5]),
               np.linspace(-2, 4, 13)),
    "Gamma": (lambda: D.Gamma(T([0.4, 3.0]), T([2.0, 0.7])), stats.gamma([0.4, 3.0], scale=1 / np.array([2.0, 0.7])),
              np.linspace(0.05, 8, 13)),
    "Chi2": (lambda: D.Chi2(T([1.5, 6.0])), stats.chi2([1.5, 6.0]), np.linspace(0.05, 12, 13)),
    "Beta": (lambda: D.Beta(T([0.6, 2.5]), T([1.5, 4.0])), stats.beta([0.6, 2.5], [1.5, 4.0]),
             np.linspace(0.02, 0.98, 13)),
    "StudentT": (lambda: D.StudentT(T([2.5, 9.0]), T([0.0, 1.0]), T([1.0, 2.0])),
                 stats.t([2.5, 9.0], [0.0, 1.0], [1.0, 2.0]), np.linspace(-6, 6, 13)),
    "VonMises": (lambda: D.VonMises(T([0.5, -2.0]), T([0.8, 4.0])), stats.vonmises([0.8, 4.0], [0.5, -2.0]),
                 np.linspace(-3.1, 3.1, 13)),
    "Pareto": (lambda: D.Pareto(T([1.0, 0.5]), T([2.5, 5.0])), stats.pareto([2.5, 5.0], scale=[1.0, 0.5]),
               np.linspace(1.0, 6, 13)),
    "Weibull": (lambda: D.Weibull(T([1.0, 2.0]), T([0.7, 3.0])), stats.weibull_min([0.7, 3.0], scale=[1.0, 2.0]),
                np.linspace(0.05, 5, 13)),
    "InverseGamma": (lambda: D.InverseGamma(T([2.5, 4.0]), T([1.0, 3.0])),
                     stats.invgamma([2.5, 4.0], scale=[1.0, 3.0]), np.linspace(0.05, 5, 13)),
    "FisherSnedecor": (lambda: D.FisherSnedecor(T([3.0, 8.0]), T([5.0, 12.0])), stats.f([3.0, 8.0], [5.0, 12.0]),
                       np.linspace(0.05, 5, 13)),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(T([0.5, -1.0]), T([1.5, 0.7]), T([0.3, -0.4])),
                          stats.genpareto([0.3, -0.4], [0.5, -1.0], [1.5, 0.7]), np.linspace(0.5, 0.7, 13)),
}
HAS_CDF = {"Normal", "LogNormal", "HalfNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfCauchy",
           "Gamma", "Chi2", "GeneralizedPareto"}
HAS_ICDF = HAS_CDF - {"Gamma", "Chi2"}
# scipy's von Mises entropy is numerical integration (checked separately); torch has no F entropy
NO_ENTROPY = {"VonMises", "FisherSnedecor"}


def _grid(x):
    return np.broadcast_to(x[:, None], (len(x), 2)).copy()


@pytest.mark.parametrize("name", sorted(CONT))
def test_continuous_against_scipy(name):
    make, ref, xs = CONT[name]
    d = make()
    x = _grid(xs)
    # torch's (and ptcore's) von Mises normalizer uses a polynomial Bessel approximation
    rtol = 1e-6 if name == "VonMises" else 1e-9
    np.testing.assert_allclose(d.log_prob(T(x)).numpy(), ref.logpdf(x), rtol=rtol, atol=1e-12)
    if name in HAS_CDF:
        np.testing.assert_allclose(d.cdf(T(x)).numpy(), ref.cdf(x), rtol=1e-9, atol=1e-13)
    if name in HAS_ICDF:
        q = _grid(np.linspace(0.01, 0.99, 11))
        np.testing.assert_allclose(d.icdf(T(q)).numpy(), ref.ppf(q), rtol=1e-9, atol=1e-12)
    if name not in NO_ENTROPY:
        np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-9)
    mean, var = ref.mean(), ref.var()
    if name in ("Cauchy", "HalfCauchy"):
        assert np.isnan(d.mean.numpy()).all() or np.isinf(d.mean.numpy()).all()
        assert np.isinf(d.variance.numpy()).all() or np.isnan(d.variance.numpy()).all()
    elif name == "VonMises":
        # scipy's mean is the circular location; the variance is 1 - I1(k)/I0(k)
        np.testing.assert_allclose(d.mean.numpy(), [0.5, -2.0])
        from scipy.special import i0e, i1e
        np.testing.assert_allclose(d.variance.numpy(), 1 - i1e([0.8, 4.0]) / i0e([0.8, 4.0]), rtol=1e-6)
    else:
        np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-9)
        np.testing.assert_allclose(d.variance.numpy(), var, rtol=1e-9)


def test_von_mises_has_no_entropy_like_torch():
    with pytest.raises(NotImplementedError):
        D.VonMises(T([0.5]), T([4.0])).entropy()


DISC = {
    "Bernoulli": (lambda: D.Bernoulli(T([0.2, 0.7])), stats.bernoulli([0.2, 0.7]), np.arange(2)),
    "Binomial": (lambda: D.Binomial(T([6.0, 6.0]), T([0.3, 0.8])), stats.binom(6, [0.3, 0.8]), np.arange(7)),
    "Poisson": (lambda: D.Poisson(T([0.5, 6.0])), stats.poisson([0.5, 6.0]), np.arange(15)),
    "Geometric": (lambda: D.Geometric(T([0.3, 0.8])), stats.geom([0.3, 0.8], loc=-1), np.arange(12)),
    # torch counts successes (probability probs) before total_count failures
    "NegativeBinomial": (lambda: D.NegativeBinomial(T([3.0, 2.5]), T([0.4, 0.7])), stats.nbinom([3.0, 2.5], [0.6, 0.3]),
                         np.arange(20)),
}


@pytest.mark.parametrize("name", sorted(DISC))
def test_discrete_against_scipy(name):
    make, ref, ks = DISC[name]
    d = make()
    k = _grid(ks.astype(np.float64))
    np.testing.assert_allclose(d.log_prob(T(k)).numpy(), ref.logpmf(k), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-9)
    np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-9)
    if name not in ("Poisson", "NegativeBinomial"):  # torch has no entropy for these
        np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-9)


def test_multivariate_against_scipy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    loc = np.array([0.1, -0.5, 2.0])
    x = rng.normal(size=(6, 3))
    d = D.MultivariateNormal(T(loc), covariance_matrix=T(cov))
    ref = stats.multivariate_normal(loc, cov)
    np.testing.assert_allclose(d.log_prob(T(x)).numpy(), ref.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-10)

    alpha = np.array([0.7, 2.0, 3.5])
    p = rng.dirichlet(alpha, size=5)
    dd = D.Dirichlet(T(alpha))
    np.testing.assert_allclose(dd.log_prob(T(p)).numpy(), [stats.dirichlet(alpha).logpdf(v) for v in p], rtol=1e-10)
    np.testing.assert_allclose(dd.entropy().numpy(), stats.dirichlet(alpha).entropy(), rtol=1e-10)
    np.testing.assert_allclose(dd.variance.numpy(), stats.dirichlet(alpha).var(), rtol=1e-10)

    probs = np.array([0.2, 0.5, 0.3])
    counts = np.array([[0.0, 4.0, 1.0], [5.0, 0.0, 0.0], [2.0, 2.0, 1.0]])
    m = D.Multinomial(5, T(probs))
    np.testing.assert_allclose(m.log_prob(T(counts)).numpy(), stats.multinomial(5, probs).logpmf(counts), rtol=1e-10)
    c = D.Categorical(T(probs))
    np.testing.assert_allclose(c.entropy().numpy(), stats.entropy(probs), rtol=1e-12)


# ---------------------------------------------------------------- sampling

N = 40000
SAMPLED = ["Normal", "LogNormal", "HalfNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfCauchy",
           "Gumbel", "Gamma", "Chi2", "Beta", "StudentT", "VonMises", "Pareto", "Weibull", "InverseGamma",
           "FisherSnedecor", "GeneralizedPareto"]


@pytest.mark.parametrize("name", SAMPLED)
def test_continuous_samples_follow_scipy(name):
    make, ref, _ = CONT[name]
    ptcore.manual_seed(12345)
    d = make()
    s = d.sample((N,))
    assert tuple(s.shape) == (N, 2) and s.dtype == ptcore.float64
    s = s.numpy()
    assert np.isfinite(s).all()
    # KS distance per batch element: 2.0/sqrt(N) is the 0.1% critical value (~1.95)
    if name == "VonMises":
        assert (s >= -np.pi).all() and (s < np.pi).all()
        # scipy's von Mises lives on [loc - pi, loc + pi): wrap the draws there
        loc = np.array([0.5, -2.0])
        s = np.remainder(s - loc + np.pi, 2 * np.pi) - np.pi + loc
    for j in range(2):
        frozen = getattr(stats, ref.dist.name)(*[np.asarray(a)[j] if np.ndim(a) else a for a in ref.args],
                                               **{k: np.asarray(v)[j] for k, v in ref.kwds.items()})
        dist = stats.kstest(s[:, j], frozen.cdf).statistic
        assert dist < 2.0 / np.sqrt(N), (j, dist)
    if name not in ("Cauchy", "HalfCauchy", "VonMises"):
        se = np.sqrt(ref.var() / N)
        assert (np.abs(s.mean(0) - ref.mean()) < 6 * se).all()


@pytest.mark.parametrize("name", sorted(DISC))
def test_discrete_samples_follow_scipy(name):
    make, ref, ks = DISC[name]
    ptcore.manual_seed(321)
    s = make().sample((N,)).numpy()
    assert set(np.unique(s)).issubset(set(range(200)))
    se = np.sqrt(ref.var() / N)
    assert (np.abs(s.mean(0) - ref.mean()) < 6 * se).all()
    # each probability within 6 binomial standard errors
    for k in range(4):
        p = ref.pmf(k)
        freq = (s == k).mean(0)
        assert (np.abs(freq - p) <= 6 * np.sqrt(p * (1 - p) / N) + 1e-12).all(), (k, freq, p)


def test_multivariate_sample_moments():
    ptcore.manual_seed(7)
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    loc = np.array([1.0, -2.0, 0.5])
    s = D.MultivariateNormal(T(loc), covariance_matrix=T(cov)).sample((N,)).numpy()
    assert np.abs(s.mean(0) - loc).max() < 6 * np.sqrt(2.0 / N)
    assert np.abs(np.cov(s.T) - cov).max() < 0.06
    alpha = np.array([0.4, 1.0, 3.0])
    s = D.Dirichlet(T(alpha)).sample((N,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    ref = stats.dirichlet(alpha)
    assert (np.abs(s.mean(0) - ref.mean()) < 6 * np.sqrt(ref.var() / N)).all()
    probs = np.array([0.1, 0.6, 0.3])
    s = D.Multinomial(10, T(probs)).sample((N,)).numpy()
    assert (s.sum(-1) == 10).all()
    assert (np.abs(s.mean(0) - 10 * probs) < 6 * np.sqrt(10 * probs * (1 - probs) / N)).all()
    s = D.Categorical(T(probs)).sample((N,)).numpy()
    assert (np.abs(np.bincount(s, minlength=3) / N - probs) < 6 * np.sqrt(probs * (1 - probs) / N)).all()


def test_sampling_is_seeded():
    d = D.Gamma(T([0.3, 2.0]), T([1.0, 1.0]))
    ptcore.manual_seed(5)
    a = d.sample((100,))
    ptcore.manual_seed(5)
    b = d.sample((100,))
    assert ptcore.equal(a, b)
    assert not ptcore.equal(a, d.sample((100,)))


def test_kumaraswamy_and_logistic_normal_samples():
    a, b = np.array([0.7, 2.0, 5.0]), np.array([1.5, 3.0, 0.8])
    ptcore.manual_seed(9)
    d = D.Kumaraswamy(T(a), T(b))
    s = d.sample((N,)).numpy()
    assert ((s > 0) & (s < 1)).all()
    # the CDF 1 - (1 - x^a)^b evaluated at the draws is uniform: KS against U(0, 1)
    for j in range(3):
        u = 1 - (1 - s[:, j] ** a[j]) ** b[j]
        assert stats.kstest(u, "uniform").statistic < 2.0 / np.sqrt(N)
    se = np.sqrt(d.variance.numpy() / N)
    assert (np.abs(s.mean(0) - d.mean.numpy()) < 6 * se).all()
    # logistic normal: the stick-breaking inverse of the draws is Normal(loc, scale)
    loc, scale = np.array([0.3, -0.5]), np.array([1.0, 0.4])
    ln = D.LogisticNormal(T(loc), T(scale))
    x = ln.sample((N,))
    assert tuple(x.shape) == (N, 3)
    np.testing.assert_allclose(x.sum(-1).numpy(), 1.0, rtol=1e-12)
    y = D.StickBreakingTransform().inv(x).numpy()
    for j in range(2):
        assert stats.kstest(y[:, j], stats.norm(loc[j], scale[j]).cdf).statistic < 2.0 / np.sqrt(N)
