"""Shared parameter sets: each case builds the same distribution in ptcore and
torch from float64 NumPy parameters."""
import numpy as np

rng = np.random.default_rng(1234)


def _pos(*shape, low=0.5, high=3.0):
    return rng.uniform(low, high, size=shape)


def _real(*shape):
    return rng.normal(size=shape)


def _simplex(*shape):
    x = rng.uniform(0.1, 1.0, size=shape)
    return x / x.sum(-1, keepdims=True)


def _tril(n, batch=()):
    a = rng.normal(size=batch + (n, n)) * 0.3
    a = np.tril(a, -1) + np.eye(n) * rng.uniform(0.5, 1.5, size=batch + (n,))[..., None]
    return a


def _spd(n, batch=()):
    L = _tril(n, batch)
    return L @ np.swapaxes(L, -1, -2)


# (name, kwargs, extra) -- extra marks what the distribution supports
CASES = [
    ("Normal", dict(loc=_real(4), scale=_pos(4))),
    ("Normal", dict(loc=_real(2, 3), scale=_pos(1, 3))),
    ("LogNormal", dict(loc=_real(4) * 0.3, scale=_pos(4, high=1.0))),
    ("HalfNormal", dict(scale=_pos(3))),
    ("Uniform", dict(low=_real(3) - 2, high=_real(3) + 2.5)),
    ("Exponential", dict(rate=_pos(4))),
    ("Laplace", dict(loc=_real(3), scale=_pos(3))),
    ("Cauchy", dict(loc=_real(3), scale=_pos(3))),
    ("HalfCauchy", dict(scale=_pos(3))),
    ("Gumbel", dict(loc=_real(3), scale=_pos(3))),
    ("Gamma", dict(concentration=_pos(4, low=0.3), rate=_pos(4))),
    ("Chi2", dict(df=_pos(4, low=1.0, high=6.0))),
    ("Beta", dict(concentration1=_pos(4, low=0.6), concentration0=_pos(4, low=0.6))),
    ("Dirichlet", dict(concentration=_pos(2, 4, low=0.6))),
    ("StudentT", dict(df=_pos(4, low=2.5, high=8.0), loc=_real(4), scale=_pos(4))),
    ("VonMises", dict(loc=_real(3), concentration=_pos(3, low=0.5, high=6.0))),
    ("Bernoulli", dict(probs=rng.uniform(0.1, 0.9, size=4))),
    ("Bernoulli", dict(logits=_real(2, 3))),
    ("Binomial", dict(total_count=np.array([10.0, 10.0, 10.0]), probs=rng.uniform(0.1, 0.9, size=3))),
    ("Binomial", dict(total_count=np.array([5.0, 8.0]), logits=_real(2))),
    ("Categorical", dict(probs=_simplex(3, 5))),
    ("Categorical", dict(logits=_real(2, 4))),
    ("OneHotCategorical", dict(probs=_simplex(3, 4))),
    ("Multinomial", dict(total_count=6, probs=_simplex(2, 3))),
    ("Poisson", dict(rate=_pos(4, high=8.0))),
    ("Geometric", dict(probs=rng.uniform(0.2, 0.8, size=4))),
    ("MultivariateNormal", dict(loc=_real(2, 3), covariance_matrix=_spd(3, (2,)))),
    ("MultivariateNormal", dict(loc=_real(3), scale_tril=_tril(3))),
    ("MultivariateNormal", dict(loc=_real(3), precision_matrix=_spd(3))),
    ("LowRankMultivariateNormal", dict(loc=_real(2, 3), cov_factor=_real(2, 3, 2) * 0.5,
                                       cov_diag=_pos(2, 3))),
    ("Pareto", dict(scale=_pos(3), alpha=_pos(3, low=2.5, high=5.0))),
    ("Weibull", dict(scale=_pos(3), concentration=_pos(3, low=0.6))),
    ("InverseGamma", dict(concentration=_pos(3, low=2.5), rate=_pos(3))),
    ("NegativeBinomial", dict(total_count=_pos(3, low=1.0, high=6.0), probs=rng.uniform(0.1, 0.8, size=3))),
    ("NegativeBinomial", dict(total_count=np.array([2.0, 4.0]), logits=_real(2))),
    ("FisherSnedecor", dict(df1=_pos(3, low=2.5, high=8.0), df2=_pos(3, low=4.5, high=9.0))),
    ("Kumaraswamy", dict(concentration1=_pos(3, low=1.2), concentration0=_pos(3, low=1.2))),
    ("LogisticNormal", dict(loc=_real(2, 3), scale=_pos(2, 3))),
    ("ContinuousBernoulli", dict(probs=np.array([0.2, 0.4995, 0.8]))),
    ("ContinuousBernoulli", dict(logits=_real(2, 3))),
    ("RelaxedBernoulli", dict(temperature=np.array(0.7), probs=rng.uniform(0.2, 0.8, size=3))),
    ("RelaxedOneHotCategorical", dict(temperature=np.array(0.8), probs=_simplex(2, 3))),
]

# continuous, with cdf/icdf in torch
HAS_CDF = {"Normal", "LogNormal", "HalfNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfCauchy",
           "Gamma", "Chi2", "ContinuousBernoulli"}
HAS_ICDF = {"Normal", "LogNormal", "HalfNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "HalfCauchy",
            "ContinuousBernoulli"}


def case_id(case):
    name, kwargs = case
    return name + "-" + "-".join(sorted(kwargs))


def to_pt(x, requires_grad=False):
    import ptcore
    if isinstance(x, np.ndarray):
        t = ptcore.tensor(x)
        if requires_grad and t.is_floating_point():
            t.requires_grad_(True)
        return t
    return x


def to_torch(x, requires_grad=False):
    import torch
    if isinstance(x, np.ndarray):
        t = torch.tensor(x)
        if requires_grad and t.is_floating_point():
            t.requires_grad_(True)
        return t
    return x


def as_np(t):
    if hasattr(t, "detach"):
        return t.detach().numpy()
    return np.asarray(t)


def build_pair(name, kwargs, requires_grad=False):
    """The same distribution in ptcore and torch, and the two parameter dicts."""
    import torch
    import ptcore.distributions as D
    pk = {k: to_pt(v, requires_grad) for k, v in kwargs.items()}
    tk = {k: to_torch(v, requires_grad) for k, v in kwargs.items()}
    return getattr(D, name)(**pk), getattr(torch.distributions, name)(**tk), pk, tk
