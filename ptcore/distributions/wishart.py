"""Wishart distribution over positive-definite matrices, sampled by the
Bartlett decomposition (rsample differentiable through the chi-squared draws)."""
import math
import warnings
from numbers import Number

import ptcore
import ptcore.distributions.constraints as constraints
from ptcore.distributions.chi2 import Chi2
from ptcore.distributions.exp_family import ExponentialFamily
from ptcore.distributions.multivariate_normal import _precision_to_scale_tril
from ptcore.distributions.utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """Multivariate digamma: sum_{i < p} digamma(x - i / 2)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return ptcore.digamma(x.unsqueeze(-1) - ptcore.arange(p, dtype=x.dtype, device=x.device).div(2)).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma): the distribution of sum_{k < df} x_k x_k^T with
    x_k ~ N(0, Sigma), for real df > dim - 1.  Give exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = ptcore.Size(param.shape[:-2])
            self.df = ptcore.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ptcore.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ptcore.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        # the i-th diagonal of the Bartlett factor is sqrt(Chi2(df - i))
        p = self._event_shape[-1]
        offsets = ptcore.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                                device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - offsets.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ptcore.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = ptcore.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return ptcore.cholesky_solve(identity, L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ptcore.where(factor <= 0, math.nan, factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ptcore.Size()):
        p = self._event_shape[-1]
        eps = ptcore.finfo(self._unbroadcasted_scale_tril.dtype).eps
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        n_off = p * (p - 1) // 2
        lower = ptcore.randn(ptcore.Size(sample_shape) + self._batch_shape + (n_off,), dtype=diag.dtype,
                             device=diag.device)
        i, j = ptcore.tril_indices(p, p, offset=-1)
        off = ptcore.zeros(lower.shape[:-1] + (p, p), dtype=diag.dtype, device=diag.device)
        off[..., i, j] = lower
        chol = self._unbroadcasted_scale_tril @ (off + ptcore.diag_embed(diag))
        return chol @ chol.mT

    def rsample(self, sample_shape=ptcore.Size(), max_try_correction=None):
        """Bartlett-decomposition draws; singular draws (possible for
        dim - 1 < df < dim) are redrawn up to ``max_try_correction`` (10) times."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = ptcore.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        for _ in range(max_try_correction):
            is_singular = ~self.support.check(sample)
            if self._batch_shape:
                is_singular = is_singular.amax(self._batch_dims)
            if not bool(is_singular.any()):
                break
            warnings.warn("Singular sample detected.", stacklevel=2)
            redraw = self._bartlett_sampling(sample_shape)
            mask = is_singular.reshape(is_singular.shape + (1,) * (sample.dim() - is_singular.dim()))
            sample = ptcore.where(mask, redraw, sample)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_L = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # L broadcast to value's batch explicitly (and contiguous): ptcore's cholesky_solve
        # gradient w.r.t. a factor that it broadcasts itself is wrong (reported)
        batch = ptcore.broadcast_shapes(value.shape[:-2], L.shape[:-2])
        L_b = L.expand(batch + L.shape[-2:]).contiguous()
        trace = ptcore.cholesky_solve(value, L_b).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_L) - ptcore.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ptcore.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_L = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_L) + ptcore.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ptcore.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + ptcore.mvlgamma(y + (p + 1) / 2, p=p))
