"""LKJ distribution over Cholesky factors of correlation matrices."""
import math

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.beta import Beta
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(dim, concentration) on lower-Cholesky factors L of correlation
    matrices: density proportional to det(L L^T) ** (concentration - 1) times
    the Jacobian of L -> L L^T.  Sampled with the onion method (Lewandowski,
    Kurowicka & Joe, 2009), vectorized over rows."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = ptcore.Size((dim, dim))
        # row i's squared norm below the diagonal is Beta(i / 2, eta + (dim - 2) / 2 - (i - 1) / 2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = ptcore.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = ptcore.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ptcore.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ptcore.Size()):
        with ptcore.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = ptcore.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            norms = u.norm(dim=-1, keepdim=True)
            # row 0 has no off-diagonal part (0 / 0): a zero direction
            direction = ptcore.where(norms > 0, u / ptcore.where(norms > 0, norms, ptcore.ones_like(norms)), 0.0)
            w = ptcore.sqrt(y) * direction
            tiny = ptcore.finfo(w.dtype).tiny
            diag = ptcore.clamp(1 - ptcore.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + ptcore.diag_embed(diag)

    def log_prob(self, value):
        # density of L: prod_i L_ii ** (2 (eta - 1) + dim - i) for i = 2..dim, over the
        # normalizing constant of the LKJ density (Lewandowski et al., p. 1999)
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ptcore.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = ptcore.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ptcore.lgamma(alpha) * dm1
        numerator = ptcore.mvlgamma(alpha - 0.5, dm1)
        # multigammaln's pi term is (D - 1)(D - 2)/4 log(pi); the LKJ constant needs D(D - 1)/4 log(pi)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
