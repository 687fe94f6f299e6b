"""Continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem & Cunningham, 2019).

Its normalizing constant, mean and variance have a removable singularity at
probs = 1/2; inside ``lims`` they are replaced by Taylor expansions (as torch).
"""
import math
from numbers import Number

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.exp_family import ExponentialFamily
from ptcore.distributions.utils import (broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                                        probs_to_logits)
from ptcore.nn.functional import binary_cross_entropy_with_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1]; rsample is the inverse CDF of a
    uniform draw (differentiable)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # checked before the clamp below would hide invalid values
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError(f"The parameter probs has invalid values (expected values in [0, 1]):\n"
                                 f"{self.probs}")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = ptcore.Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = ptcore.Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _stable(self):
        """True where probs is outside the Taylor window ``lims``."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return ptcore.where(self._stable(), self.probs, self._lims[0] * ptcore.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p), the log normalizing constant as a function of probs."""
        p = self._cut_probs()
        below = ptcore.where(p <= 0.5, p, ptcore.zeros_like(p))
        above = ptcore.where(p >= 0.5, p, ptcore.ones_like(p))
        log_norm = (ptcore.log(ptcore.abs(ptcore.log1p(-p) - ptcore.log(p)))
                    - ptcore.where(p <= 0.5, ptcore.log1p(-2.0 * below), ptcore.log(2.0 * above - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ptcore.where(self._stable(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (ptcore.log1p(-p) - ptcore.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ptcore.where(self._stable(), mus, taylor)

    @property
    def stddev(self):
        return ptcore.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        var = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (ptcore.log1p(-p) - ptcore.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ptcore.where(self._stable(), var, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=ptcore.Size()):
        shape = self._extended_shape(sample_shape)
        u = ptcore.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with ptcore.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=ptcore.Size()):
        shape = self._extended_shape(sample_shape)
        u = ptcore.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (ptcore.pow(p, value) * ptcore.pow(1.0 - p, 1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inner = ptcore.where(self._stable(), cdfs, value)
        return ptcore.where(value <= 0.0, ptcore.zeros_like(value),
                            ptcore.where(value >= 1.0, ptcore.ones_like(value), inner))

    def icdf(self, value):
        p = self._cut_probs()
        return ptcore.where(self._stable(),
                            (ptcore.log1p(-p + value * (2.0 * p - 1.0)) - ptcore.log1p(-p))
                            / (ptcore.log(p) - ptcore.log1p(-p)),
                            value)

    def entropy(self):
        log_probs0 = ptcore.log1p(-self.probs)
        log_probs1 = ptcore.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logits)."""
        stable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ptcore.where(stable, x, (self._lims[0] - 0.5) * ptcore.ones_like(x))
        log_norm = ptcore.log(ptcore.abs(ptcore.expm1(cut))) - ptcore.log(ptcore.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ptcore.where(stable, log_norm, taylor)
