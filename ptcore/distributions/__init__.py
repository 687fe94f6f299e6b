"""ptcore.distributions: probability distributions with sampling, reparameterized
sampling and differentiable log-densities, as torch.distributions.

Sampling draws from ptcore's generator (``ptcore.manual_seed``).  ``rsample``
is differentiable w.r.t. the parameters: location-scale families by the
reparameterization trick, Gamma, Beta, Dirichlet, Chi2 and StudentT by
implicit reparameterization of the gamma draws.
"""
from ptcore.distributions import constraints, transforms  # noqa: F401
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.exp_family import ExponentialFamily
from ptcore.distributions.bernoulli import Bernoulli
from ptcore.distributions.beta import Beta
from ptcore.distributions.binomial import Binomial
from ptcore.distributions.categorical import Categorical
from ptcore.distributions.cauchy import Cauchy
from ptcore.distributions.chi2 import Chi2
from ptcore.distributions.constraint_registry import biject_to, transform_to
from ptcore.distributions.continuous_bernoulli import ContinuousBernoulli
from ptcore.distributions.dirichlet import Dirichlet
from ptcore.distributions.exponential import Exponential
from ptcore.distributions.fishersnedecor import FisherSnedecor
from ptcore.distributions.gamma import Gamma
from ptcore.distributions.generalized_pareto import GeneralizedPareto
from ptcore.distributions.geometric import Geometric
from ptcore.distributions.gumbel import Gumbel
from ptcore.distributions.half_cauchy import HalfCauchy
from ptcore.distributions.half_normal import HalfNormal
from ptcore.distributions.independent import Independent
from ptcore.distributions.inverse_gamma import InverseGamma
from ptcore.distributions.kumaraswamy import Kumaraswamy
from ptcore.distributions.laplace import Laplace
from ptcore.distributions.lkj_cholesky import LKJCholesky
from ptcore.distributions.log_normal import LogNormal
from ptcore.distributions.logistic_normal import LogisticNormal
from ptcore.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ptcore.distributions.mixture_same_family import MixtureSameFamily
from ptcore.distributions.multinomial import Multinomial
from ptcore.distributions.multivariate_normal import MultivariateNormal
from ptcore.distributions.negative_binomial import NegativeBinomial
from ptcore.distributions.normal import Normal
from ptcore.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from ptcore.distributions.pareto import Pareto
from ptcore.distributions.poisson import Poisson
# (LogitRelaxedBernoulli / ExpRelaxedCategorical stay in their modules, as torch's)
from ptcore.distributions.relaxed_bernoulli import RelaxedBernoulli
from ptcore.distributions.relaxed_categorical import RelaxedOneHotCategorical
from ptcore.distributions.studentT import StudentT
from ptcore.distributions.transformed_distribution import TransformedDistribution
from ptcore.distributions.transforms import *  # noqa: F401,F403
from ptcore.distributions.uniform import Uniform
from ptcore.distributions.von_mises import VonMises
from ptcore.distributions.weibull import Weibull
from ptcore.distributions.wishart import Wishart
from ptcore.distributions.kl import kl_divergence, register_kl

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
    "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "Independent", "Laplace", "LogNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises",
    "biject_to", "kl_divergence", "register_kl", "transform_to",
    "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto", "InverseGamma", "Kumaraswamy", "LKJCholesky",
    "LogisticNormal",
    "NegativeBinomial", "Pareto", "Weibull", "Wishart",
]
__all__.extend(transforms.__all__)
