"""Gamma distribution (shape ``concentration``, inverse scale ``rate``)."""
from numbers import Number

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions._gamma_sampler import _standard_gamma
from ptcore.distributions.exp_family import ExponentialFamily
from ptcore.distributions.utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate); rsample is differentiable in both
    parameters (implicit reparameterization for the concentration)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = ptcore.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = ptcore.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=ptcore.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # tiny draws of a small concentration must stay in the support
        tiny = ptcore.finfo(value.dtype).tiny
        return ptcore.where(value.detach() < tiny, value + (tiny - value.detach()), value)

    def log_prob(self, value):
        value = ptcore.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ptcore.xlogy(self.concentration, self.rate) + ptcore.xlogy(self.concentration - 1, value)
                - self.rate * value - ptcore.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - ptcore.log(self.rate) + ptcore.lgamma(self.concentration)
                + (1.0 - self.concentration) * ptcore.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ptcore.lgamma(x + 1) + (x + 1) * ptcore.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ptcore.igamma(self.concentration, self.rate * value)
