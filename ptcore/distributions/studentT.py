"""Student's t distribution."""
import math

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.chi2 import Chi2
from ptcore.distributions._gamma_sampler import _standard_gamma
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone(memory_format=ptcore.contiguous_format)
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone(memory_format=ptcore.contiguous_format)
        m[self.df > 2] = (self.scale[self.df > 2].pow(2) * self.df[self.df > 2] / (self.df[self.df > 2] - 2))
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        # as torch: the Chi2 is built with the default validation, so df <= 0 or
        # NaN raises its ValueError even with validate_args=False
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = ptcore.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=ptcore.Size()):
        # X ~ Normal(0, 1), Z ~ Chi2(df), Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = 2.0 * _standard_gamma(0.5 * self.df.expand(shape))
        Y = X * ptcore.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + ptcore.lgamma(0.5 * self.df) - ptcore.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ptcore.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = ptcore.lgamma(0.5 * self.df) + math.lgamma(0.5) - ptcore.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ptcore.digamma(0.5 * (self.df + 1)) - ptcore.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
