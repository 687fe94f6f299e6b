"""Standard-gamma and Dirichlet sampling on ptcore's generator, with the
implicit reparameterization gradient of a gamma draw w.r.t. its shape.

Gamma(alpha, 1) draws use Marsaglia & Tsang's squeeze/rejection method (2000)
over ptcore's normal and uniform streams; alpha < 1 is boosted as
Gamma(alpha + 1) * U ** (1 / alpha).  The gradient of a draw x w.r.t. alpha
holds the CDF fixed: dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha), with P
the regularized lower incomplete gamma function (scipy.special.gammainc),
its alpha-derivative taken by a central difference in double precision.
Dirichlet (and Beta) draws are normalized gamma draws; their gradient is
torch's: each coordinate's Beta-marginal implicit derivative (the regularized
incomplete beta function, scipy.special.betainc) times the simplex projection
of the incoming gradient.
"""
import numpy as np
from scipy import special as _sp

import ptcore

__all__ = []


def _host64(t):
    """``t`` as a float64 numpy array on the host (a CUDA tensor is copied over)."""
    return t.detach().to(device="cpu", dtype=ptcore.float64).numpy()


def _like(arr, t):
    """The numpy array ``arr`` as a tensor with ``t``'s dtype on ``t``'s device."""
    # (np.array, not np.ascontiguousarray, which makes a 0-d array 1-d)
    return ptcore.from_numpy(np.array(arr, order="C")).to(device=t.device, dtype=t.dtype)


def _draw(kind, n, generator, device=None):
    """n float64 normal/uniform draws as numpy: from ``generator``, else from the default
    generator of ``device`` (a CUDA parameter's draws follow ptcore.cuda.manual_seed as torch's)."""
    if generator is not None:
        device = generator.device
    if device is not None and device.type == "cpu":
        device = None
    fn = ptcore.randn if kind == "normal" else ptcore.rand
    return fn(n, dtype=ptcore.float64, generator=generator, device=device).cpu().numpy()


def _marsaglia_tsang(alpha, generator, device=None):
    """Gamma(alpha, 1) draws for a flat float64 array ``alpha`` (all > 0)."""
    out = np.empty_like(alpha)
    boost = alpha < 1.0
    a = np.where(boost, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    todo = np.flatnonzero(np.isfinite(alpha) & (alpha > 0))
    out[:] = np.nan
    while todo.size:
        z = _draw("normal", todo.size, generator, device)
        u = _draw("uniform", todo.size, generator, device)
        v = (1.0 + c[todo] * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (v > 0) & ((u < 1.0 - 0.0331 * z ** 4)
                            | (np.log(u) < 0.5 * z * z + d[todo] * (1.0 - v + np.log(v))))
        out[todo[ok]] = d[todo[ok]] * v[ok]
        todo = todo[~ok]
    idx = np.flatnonzero(boost)
    if idx.size:
        u = _draw("uniform", idx.size, generator, device)
        with np.errstate(divide="ignore"):
            out[idx] = np.exp(np.log(out[idx]) + np.log(u) / alpha[idx])
    return out


def _standard_gamma_sample(concentration, generator=None):
    """Gamma(concentration, 1) draws, same shape/dtype as ``concentration`` (no graph)."""
    if concentration.device.type == "meta":     # shape and dtype only, as torch's meta kernel
        return ptcore.empty_like(concentration)
    alpha = _host64(concentration).reshape(-1)
    x = _marsaglia_tsang(alpha, generator, concentration.device)
    # as torch's _standard_gamma: at least the smallest normal number of the dtype (a draw
    # that underflows there would make Chi2 / StudentT / FisherSnedecor draws 0 or inf)
    out = _like(x.reshape(tuple(concentration.shape)), concentration)
    return out.clamp_(min=ptcore.finfo(out.dtype).tiny)


def _standard_gamma_grad(concentration, x):
    """dx/dalpha of a standard-gamma draw ``x`` holding its CDF fixed."""
    a, xv = np.broadcast_arrays(_host64(concentration), _host64(x))
    h = 1e-5 * np.maximum(a, 1e-3)
    with np.errstate(all="ignore"):
        lower = _sp.gammainc(a, xv) < 0.5
        dp = np.where(lower,
                      _sp.gammainc(a + h, xv) - _sp.gammainc(a - h, xv),
                      _sp.gammaincc(a - h, xv) - _sp.gammaincc(a + h, xv)) / (2 * h)
        log_pdf = (a - 1) * np.log(xv) - xv - _sp.gammaln(a)
        grad = -dp * np.exp(-log_pdf)
    grad = np.where(np.isfinite(grad), grad, 0.0)
    return _like(grad, x)


class _StandardGamma(ptcore.autograd.Function):
    @staticmethod
    def forward(ctx, concentration, generator=None):
        x = _standard_gamma_sample(concentration, generator)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        concentration, x = ctx.saved_tensors
        return grad_output * _standard_gamma_grad(concentration, x), None


def _standard_gamma(concentration, generator=None):
    """Standard-gamma draws; differentiable w.r.t. ``concentration`` (implicit reparameterization)."""
    if concentration.requires_grad and ptcore.is_grad_enabled():
        return _StandardGamma.apply(concentration, generator)
    return _standard_gamma_sample(concentration, generator)


def _dirichlet_sample(concentration, generator=None):
    """Dirichlet draws (no graph) as normalized standard-gamma draws along the last dim."""
    # as torch's _sample_dirichlet: gamma draws and their normalization in double (no
    # underflow of small concentrations), then cast into [tiny, 1) of the dtype, so a
    # draw is never exactly 0 or 1 (Beta's log_prob of it stays finite)
    alpha = _host64(concentration)
    g = np.maximum(_marsaglia_tsang(alpha.reshape(-1), generator, concentration.device).reshape(alpha.shape),
                   np.finfo(np.float64).tiny)
    x = _like(g / g.sum(-1, keepdims=True), concentration)
    fi = ptcore.finfo(x.dtype)
    return x.clamp_(min=fi.tiny, max=1.0 - fi.eps / 2)


def _dirichlet_grad(x, concentration):
    """torch's ``_dirichlet_grad``: dx_i/dalpha_i / (1 - x_i) of each coordinate's
    Beta(alpha_i, total - alpha_i) marginal, holding its CDF fixed."""
    a, xv = np.broadcast_arrays(_host64(concentration), _host64(x))
    total = a.sum(-1, keepdims=True)
    b = total - a
    h = 1e-5 * np.maximum(a, 1e-3)
    with np.errstate(all="ignore"):
        # dx/dalpha of the Beta(alpha, total - alpha) marginal with the other
        # coordinates' mass fixed, divided by 1 - x: the backward multiplies by
        # (g_i - sum_j x_j g_j), whose own-coordinate factor is 1 - x_i
        lower = _sp.betainc(a, b, xv) < 0.5
        dp = np.where(lower,
                      _sp.betainc(a + h, b, xv) - _sp.betainc(a - h, b, xv),
                      _sp.betainc(b, a - h, 1.0 - xv) - _sp.betainc(b, a + h, 1.0 - xv)) / (2 * h)
        log_pdf = (a - 1) * np.log(xv) + b * np.log1p(-xv) - _sp.betaln(a, b)
        grad = -dp * np.exp(-log_pdf)
    grad = np.where(np.isfinite(grad), grad, 0.0)
    return _like(grad, x)


class _Dirichlet(ptcore.autograd.Function):
    @staticmethod
    def forward(ctx, concentration, generator=None):
        x = _dirichlet_sample(concentration, generator)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        grad = _dirichlet_grad(x, concentration)
        return grad * (grad_output - (x * grad_output).sum(-1, keepdim=True)), None


def _sample_dirichlet(concentration, generator=None):
    """Dirichlet draws along the last dim; differentiable w.r.t. ``concentration``
    with torch's implicit reparameterization gradient (``_Dirichlet.backward``)."""
    if concentration.requires_grad and ptcore.is_grad_enabled():
        return _Dirichlet.apply(concentration, generator)
    return _dirichlet_sample(concentration, generator)
