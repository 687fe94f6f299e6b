"""KL divergence KL(p || q) between distributions, dispatched on the pair of
types; new pairs are added with :func:`register_kl`."""
import math
import warnings
from functools import total_ordering

import ptcore
import ptcore.nn.functional as F
from ptcore.distributions.bernoulli import Bernoulli
from ptcore.distributions.beta import Beta
from ptcore.distributions.binomial import Binomial
from ptcore.distributions.categorical import Categorical
from ptcore.distributions.continuous_bernoulli import ContinuousBernoulli
from ptcore.distributions.cauchy import Cauchy
from ptcore.distributions.dirichlet import Dirichlet
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.exp_family import ExponentialFamily
from ptcore.distributions.exponential import Exponential
from ptcore.distributions.gamma import Gamma
from ptcore.distributions.geometric import Geometric
from ptcore.distributions.gumbel import Gumbel
from ptcore.distributions.half_normal import HalfNormal
from ptcore.distributions.independent import Independent
from ptcore.distributions.laplace import Laplace
from ptcore.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ptcore.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from ptcore.distributions.normal import Normal
from ptcore.distributions.one_hot_categorical import OneHotCategorical
from ptcore.distributions.pareto import Pareto
from ptcore.distributions.poisson import Poisson
from ptcore.distributions.transformed_distribution import TransformedDistribution
from ptcore.distributions.uniform import Uniform
from ptcore.distributions.utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> function
_KL_MEMOIZE = {}   # (type_p, type_q) -> the most specific registered function


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for the pair of types.

    Lookup picks the most specific registered pair by the classes' MROs; when two
    registrations are equally specific a RuntimeWarning names them (register the
    exact pair to resolve it).
    """
    # torch refuses what is not a class and accepts every class: libraries register pairs of
    # their own base classes (Pyro's Distribution is a mixin base, not torch's subclass)
    for name, typ in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(typ, type):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {typ}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=2)
    return left_fun


def _infinite_like(tensor):
    return ptcore.full_like(tensor, math.inf)


def _x_log_x(tensor):
    return ptcore.special.xlogy(tensor, tensor)  # 0 at x = 0, as torch


def _batch_trace_XXT(bmat):
    """Trace of X X^T for a batch of matrices X."""
    n = bmat.size(-1)
    m = bmat.size(-2)
    flat_trace = bmat.reshape(-1, m * n).pow(2).sum(-1)
    return flat_trace.reshape(bmat.shape[:-2])


def kl_divergence(p, q):
    r"""KL(p || q) = E_p[log p(x) - log q(x)], batched over the batch shape.

    Raises NotImplementedError when no registered pair covers ``type(p), type(q)``.
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


# ---- same-family pairs -----------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = ptcore.where(q.probs == 0, math.inf, t1)
    t1 = ptcore.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = ptcore.where(q.probs == 1, math.inf, t2)
    t2 = ptcore.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * ptcore.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ptcore.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * ptcore.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return ptcore.where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = ptcore.where((q.probs == 0).expand_as(t), math.inf, t)
    t = ptcore.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = sum_p_concentration.lgamma() - sum_q_concentration.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p_concentration.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "be computed using Bregman divergences")
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = ptcore.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        term = (qnp - pnp) * g
        result = result - _sum_rightmost(term, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ptcore.log(p.rate / q.rate)
    t2 = ptcore.lgamma(q.concentration) - ptcore.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ptcore.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = ptcore.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ptcore.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * ptcore.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _kl_gaussian_gaussian(p, q):
    """KL between (low-rank) multivariate normals through their Cholesky factors."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes "
                         "cannot be computed")
    p_tril = p._unbroadcasted_scale_tril if isinstance(p, MultivariateNormal) else p.scale_tril
    q_tril = q._unbroadcasted_scale_tril if isinstance(q, MultivariateNormal) else q.scale_tril
    half_term1 = (q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    combined_batch_shape = ptcore.broadcast_shapes(q_tril.shape[:-2], p_tril.shape[:-2])
    n = p.event_shape[0]
    q_scale_tril = q_tril.expand(combined_batch_shape + (n, n))
    p_scale_tril = p_tril.expand(combined_batch_shape + (n, n))
    term2 = _batch_trace_XXT(ptcore.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False))
    term3 = _batch_mahalanobis(q_tril, (q.loc - p.loc))
    return half_term1 + 0.5 * (term2 + term3 - n)


for _tp in (MultivariateNormal, LowRankMultivariateNormal):
    for _tq in (MultivariateNormal, LowRankMultivariateNormal):
        register_kl(_tp, _tq)(_kl_gaussian_gaussian)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return ptcore.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


# ---- cross-family pairs: KL = -H(p) - E_p[log q(x)] from p's moments -------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _kl_to_normal(p, q):
    """Any p with mean/variance against a Normal q."""
    var_normal = q.scale.pow(2)
    return (-p.entropy() + (q.scale * math.sqrt(2 * math.pi)).log()
            + (p.variance + (p.mean - q.loc).pow(2)) / (2 * var_normal))


for _tp in (Beta, Exponential, Gamma, Gumbel, Laplace, Uniform):
    register_kl(_tp, Normal)(_kl_to_normal)


def _log_moment_beta(p):
    return ptcore.digamma(p.concentration1) - ptcore.digamma(p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * _log_moment_beta(p)
    t4 = q.rate * p.mean
    return t1 + t2 - t3 + t4


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ptcore.where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound), math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ptcore.log(ratio)
    return t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant - (1 + euler_constant)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = ptcore.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma() - p.concentration
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = ptcore.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return _kl_to_normal(p, q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return _kl_to_normal(p, q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = ptcore.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = ptcore.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * ptcore.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * ptcore.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = ptcore.log(common_term)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term) / common_term
    t4 = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = t3 + t4 - t1 - t2
    return ptcore.where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound), math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return ptcore.where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return ptcore.where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (ptcore.exp(-high_loc_diff) - ptcore.exp(-low_loc_diff))
    return t1 - t2


# ---- pairs whose KL is infinite (p's support not inside q's) ---------------------------

# torch's infinite KL is full_like one of p's parameters: p's batch shape (not broadcast
# with q's), dtype and device
_INFINITE_LIKE = {Beta: "concentration1", ContinuousBernoulli: "probs", Exponential: "rate",
                  Gamma: "concentration", Gumbel: "loc", Laplace: "loc", Normal: "loc",
                  Pareto: "scale", Poisson: "rate"}


def _kl_infinite_batch(p, q):
    name = next(_INFINITE_LIKE[c] for c in type(p).__mro__ if c in _INFINITE_LIKE)
    return _infinite_like(getattr(p, name))


for _tp, _tq in [(Normal, Beta), (Normal, Exponential), (Normal, Gamma), (Normal, Uniform),
                 (Laplace, Beta), (Laplace, Exponential), (Laplace, Gamma), (Laplace, Uniform),
                 (Gumbel, Beta), (Gumbel, Exponential), (Gumbel, Gamma), (Gumbel, Uniform),
                 (Exponential, Beta), (Exponential, Uniform), (Gamma, Beta), (Gamma, Uniform)]:
    register_kl(_tp, _tq)(_kl_infinite_batch)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


# ---- Pareto ------------------------------------------------------------------------------

@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return ptcore.where(p.support.lower_bound < q.support.lower_bound, math.inf, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    result = ((p.alpha / scale_rate_prod).log() - p.alpha.reciprocal()
              + p.alpha * scale_rate_prod / (p.alpha - 1) - 1)
    return ptcore.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return ptcore.where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return ptcore.where(p.alpha <= 2, math.inf, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return ptcore.where(p.low < q.support.lower_bound, math.inf, t2 * (q.alpha + 1) - t1)


for _tp, _tq in [(Pareto, Beta), (Pareto, Uniform), (Beta, Pareto), (Exponential, Pareto), (Gamma, Pareto),
                 (Gumbel, Pareto), (Laplace, Pareto), (Normal, Pareto)]:
    register_kl(_tp, _tq)(_kl_infinite_batch)
del _tp, _tq


# ---- ContinuousBernoulli -----------------------------------------------------------------

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ptcore.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ptcore.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - ptcore.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + ptcore.log(q.scale)
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # infinite unless [0, 1] lies strictly inside (low, high)
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return ptcore.where(outside, math.inf, result)


def _cross_continuous_bernoulli(p, q):
    """-H(p) - E_p[log q], q a continuous Bernoulli."""
    return -p.entropy() - p.mean * q.logits - ptcore.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _cross_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _cross_continuous_bernoulli(p, q)
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return ptcore.where(outside, math.inf, result)


for _tp, _tq in [(ContinuousBernoulli, Pareto), (Exponential, ContinuousBernoulli),
                 (Gamma, ContinuousBernoulli), (Gumbel, ContinuousBernoulli), (Laplace, ContinuousBernoulli),
                 (Normal, ContinuousBernoulli), (Pareto, ContinuousBernoulli)]:
    register_kl(_tp, _tq)(_kl_infinite_batch)
del _tp, _tq
