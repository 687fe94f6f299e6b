"""Weibull distribution: scale * Exponential(1) ** (1 / concentration)."""
import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.exponential import Exponential
from ptcore.distributions.utils import broadcast_all, euler_constant
from ptcore.distributions.transformed_distribution import TransformedDistribution
from ptcore.distributions.transforms import AffineTransform, PowerTransform

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration) on [0, inf)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ptcore.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * ptcore.exp(ptcore.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (ptcore.exp(ptcore.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - ptcore.exp(2 * ptcore.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (euler_constant * (1 - self.concentration_reciprocal)
                + ptcore.log(self.scale * self.concentration_reciprocal) + 1)
