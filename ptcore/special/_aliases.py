"""The ``torch.special`` functions that are ptcore top-level ops under
another (or the same) name: thin forwards with ``torch.special``'s
signatures, looked up at call time so they follow the op table."""
import ptcore as _pt

__all__ = ["digamma", "psi", "polygamma", "multigammaln", "gammaln", "gammainc", "gammaincc",
           "erf", "erfc", "erfinv", "expit", "logit", "exp2", "expm1", "log1p", "i0", "sinc",
           "round", "xlogy", "logsumexp", "softmax", "log_softmax"]


def digamma(input, *, out=None):
    """Logarithmic derivative of the gamma function (``torch.special.digamma``)."""
    return _pt.digamma(input, out=out)


def psi(input, *, out=None):
    """Alias of :func:`digamma` (``torch.special.psi``)."""
    return _pt.digamma(input, out=out)


def polygamma(n, input, *, out=None):
    """``n``-th derivative of :func:`digamma` (``torch.special.polygamma``)."""
    return _pt.polygamma(n, input, out=out)


def multigammaln(input, p, *, out=None):
    """Log of the multivariate gamma function of dimension ``p``
    (``torch.special.multigammaln``)."""
    return _pt.mvlgamma(input, p, out=out)


def gammaln(input, *, out=None):
    """``log |Gamma(input)|`` (``torch.special.gammaln``)."""
    return _pt.lgamma(input, out=out)


def gammainc(input, other, *, out=None):
    """Regularized lower incomplete gamma function ``P(input, other)``
    (``torch.special.gammainc``)."""
    return _pt.igamma(input, other, out=out)


def gammaincc(input, other, *, out=None):
    """Regularized upper incomplete gamma function ``Q(input, other)``
    (``torch.special.gammaincc``)."""
    return _pt.igammac(input, other, out=out)


def erf(input, *, out=None):
    """Error function (``torch.special.erf``)."""
    return _pt.erf(input, out=out)


def erfc(input, *, out=None):
    """Complementary error function (``torch.special.erfc``)."""
    return _pt.erfc(input, out=out)


def erfinv(input, *, out=None):
    """Inverse error function (``torch.special.erfinv``)."""
    return _pt.erfinv(input, out=out)


def expit(input, *, out=None):
    """Logistic sigmoid ``1 / (1 + exp(-input))`` (``torch.special.expit``)."""
    return _pt.sigmoid(input, out=out)


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when given
    (``torch.special.logit``)."""
    return _pt.logit(input, eps, out=out)


def exp2(input, *, out=None):
    """``2 ** input`` (``torch.special.exp2``)."""
    return _pt.exp2(input, out=out)


def expm1(input, *, out=None):
    """``exp(input) - 1``, accurate near 0 (``torch.special.expm1``)."""
    return _pt.expm1(input, out=out)


def log1p(input, *, out=None):
    """``log(1 + input)``, accurate near 0 (``torch.special.log1p``)."""
    return _pt.log1p(input, out=out)


def i0(input, *, out=None):
    """Modified Bessel function of the first kind of order 0 (``torch.special.i0``)."""
    return _pt.i0(input, out=out)


def sinc(input, *, out=None):
    """Normalized sinc ``sin(pi x) / (pi x)`` (``torch.special.sinc``)."""
    return _pt.sinc(input, out=out)


def round(input, *, decimals=0, out=None):
    """Round half to even, to ``decimals`` places (``torch.special.round``)."""
    dt = getattr(input, "dtype", None)
    if dt is not None and not (dt.is_floating_point or dt.is_complex):
        # torch.special.round always takes the ``decimals`` overload, which has
        # no integer kernel (unlike torch.round); an out= of another dtype is
        # refused first
        if isinstance(out, _pt.Tensor) and out.dtype is not dt:
            raise RuntimeError(f"Found dtype {out.dtype._legacy} but expected {dt._legacy}")
        raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{dt._legacy}\'')
    return _pt.round(input, decimals=decimals, out=out)


def xlogy(input, other, *, out=None):
    """``input * log(other)``, 0 where ``input == 0`` (``torch.special.xlogy``)."""
    return _pt.xlogy(input, other, out=out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably (``torch.special.logsumexp``)."""
    return _pt.logsumexp(input, dim, keepdim, out=out)


def softmax(input, dim, dtype=None):
    """Softmax over ``dim`` (``torch.special.softmax``)."""
    return _pt.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax over ``dim`` (``torch.special.log_softmax``)."""
    return _pt.log_softmax(input, dim, dtype=dtype)
