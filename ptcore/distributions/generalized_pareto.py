"""Generalized Pareto distribution (location, scale, shape ``concentration``)."""
import math
from numbers import Number

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration xi): survival function
    (1 + xi z) ** (-1 / xi) with z = (x - loc) / scale (exp(-z) at xi = 0).
    Exponential (loc 0, xi 0), Pareto (xi > 0, loc = scale / xi) and Uniform
    (xi = -1) are special cases; rsample is the inverse CDF of a uniform draw."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if isinstance(loc, Number) and isinstance(scale, Number) and isinstance(concentration, Number):
            batch_shape = ptcore.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = ptcore.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _split_xi(self):
        """(xi == 0 mask, xi with the zeros replaced by 1) so both branches stay finite."""
        xi = self.concentration
        at_zero = ptcore.isclose(xi, ptcore.zeros_like(xi))
        return at_zero, ptcore.where(at_zero, ptcore.ones_like(xi), xi)

    def rsample(self, sample_shape=ptcore.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ptcore.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._split_xi()
        y = 1 / xi + ptcore.ones_like(z)
        nonzero = ptcore.where(y == 0, y, y * ptcore.log1p(xi * z))
        return -self.scale.log() - ptcore.where(at_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._split_xi()
        return ptcore.where(at_zero, -z, -ptcore.log1p(xi * z) / xi)

    def log_cdf(self, value):
        return ptcore.log1p(-ptcore.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ptcore.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, xi = self._split_xi()
        log_u = ptcore.log1p(-value)
        return ptcore.where(at_zero, self.loc - self.scale * log_u,
                            self.loc + self.scale / xi * ptcore.expm1(-xi * log_u))

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = ptcore.where(valid, self.concentration, 0.5)
        return ptcore.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = ptcore.where(valid, self.concentration, 0.25)
        return ptcore.where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return ptcore.broadcast_to(ptcore.log(self.scale) + self.concentration + 1, self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ptcore.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
