"""Von Mises (circular normal) distribution."""
import math

import numpy as np

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions._gamma_sampler import _draw, _host64, _like
from ptcore.distributions.distribution import Distribution
from ptcore.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of I0 and I1,
# for x <= 3.75 in t = (x / 3.75) ** 2 and for x > 3.75 in 3.75 / x.
_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
             -0.01647633, 0.00392377]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
             0.01787654, -0.00420059]


def _horner(y, coefs):
    result = coefs[-1]
    for c in reversed(coefs[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x >= 0, order 0 or 1 (differentiable in x)."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    y = y * y
    small = _horner(y, _I0_SMALL if order == 0 else _I1_SMALL)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _horner(y, _I0_LARGE if order == 0 else _I1_LARGE).log()
    return ptcore.where(x < 3.75, small, large)


def _von_mises_sample(loc, concentration, proposal_r, generator=None, device=None):
    """Best & Fisher (1979) rejection sampler, on float64 numpy over ptcore's uniform draws."""
    k = concentration.reshape(-1)
    r = proposal_r.reshape(-1)
    out = np.empty_like(k)
    todo = np.arange(k.size)
    while todo.size:
        u = _draw("uniform", 3 * todo.size, generator, device).reshape(3, todo.size)
        z = np.cos(math.pi * u[0])
        f = (1 + r[todo] * z) / (r[todo] + z)
        c = k[todo] * (r[todo] - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = (c * (2 - c) - u[1] > 0) | (np.log(c / u[1]) + 1 - c >= 0)
        out[todo[accept]] = np.sign(u[2][accept] - 0.5) * np.arccos(np.clip(f[accept], -1, 1))
        todo = todo[~accept]
    out = out.reshape(concentration.shape)
    return np.remainder(out + loc + math.pi, 2 * math.pi) - math.pi


class VonMises(Distribution):
    """Circular distribution on [-pi, pi) with mean direction ``loc`` and concentration ``concentration``."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        event_shape = ptcore.Size()
        super().__init__(batch_shape, event_shape, validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ptcore.cos(value - self.loc)
        log_prob = log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        return log_prob

    @lazy_property
    def _proposal_r(self):
        kappa = _host64(self.concentration)
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
            rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
            proposal_r = (1 + rho ** 2) / (2 * rho)
            proposal_r_taylor = 1 / kappa + kappa  # stable for tiny kappa
        return np.where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape=ptcore.Size()):
        """Draws in [-pi, pi); the sampler works in double precision."""
        shape = self._extended_shape(sample_shape)
        loc = np.broadcast_to(_host64(self.loc), shape)
        kappa = np.broadcast_to(_host64(self.concentration), shape)
        r = np.broadcast_to(self._proposal_r, shape)
        x = _von_mises_sample(loc, np.ascontiguousarray(kappa), np.ascontiguousarray(r), device=self.loc.device)
        # (np.ascontiguousarray makes a 0-d array 1-d: the sample keeps the batch shape)
        return _like(np.ascontiguousarray(x).reshape(shape), self.loc)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean (not the linear mean of the draws)."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(k) / I0(k)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
