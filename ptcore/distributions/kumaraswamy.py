"""Kumaraswamy distribution on the unit interval: (1 - U ** (1 / b)) ** (1 / a)."""
import math

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.transformed_distribution import TransformedDistribution
from ptcore.distributions.transforms import AffineTransform, PowerTransform
from ptcore.distributions.uniform import Uniform
from ptcore.distributions.utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b) for X ~ Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    return b * ptcore.exp(ptcore.lgamma(arg1) + ptcore.lgamma(b) - ptcore.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1 = a, concentration0 = b): density
    a b x^(a-1) (1 - x^a)^(b-1) on (0, 1); rsample is differentiable."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(ptcore.zeros_like(self.concentration0), ptcore.ones_like(self.concentration0),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1)) ** (1 / a), in log space; undefined unless a, b >= 1
        log_mode = a.reciprocal() * ((a - 1).log() - (a * b - 1).log())
        return ptcore.where((a < 1) | (b < 1), math.nan, log_mode.exp())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        harmonic = ptcore.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * harmonic - ptcore.log(self.concentration1) - ptcore.log(self.concentration0)
