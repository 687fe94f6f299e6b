"""``ptcore.special``: the special functions of ``torch.special``.

The ones ptcore's top level already has (``erf``, ``digamma``, ``i0``,
``softmax`` ...) are forwarded to it; the others (Bessel and Airy
functions, ``ndtr``/``ndtri``/``log_ndtr``, ``erfcx``, ``entr``,
``xlog1py``, ``zeta``, the orthogonal polynomials) run ``scipy.special``'s
kernels on the tensors' memory.  Dtypes follow PyTorch on CPU: integer and
bool inputs give the default float dtype, float16/bfloat16 are computed
where PyTorch computes them and raise ``NotImplementedError`` where it does
not; derivatives are PyTorch's (none for the Bessel functions and the
polynomials, whose results do not require grad).

Each front-end (argument checks, dtype rules, ``out=``, the derivative
formula written with public ops) serves every device: it runs the element
loop of its tensors' device (``ptcore._dispatch.device.cpu_kernel`` under
``ptcore.special._kernels.loop_name(op)``; CUDA's are in
``ptcore.cuda.ops.special``).
"""
from ptcore.special._aliases import (  # noqa: F401
    digamma, psi, polygamma, multigammaln, gammaln, gammainc, gammaincc, erf, erfc, erfinv,
    expit, logit, exp2, expm1, log1p, i0, sinc, round, xlogy, logsumexp, softmax, log_softmax,
)
from ptcore.special._functions import (  # noqa: F401
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0, modified_bessel_i1,
    modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
    spherical_bessel_j0, entr, erfcx, i0e, i1, i1e, ndtr, ndtri, log_ndtr, xlog1py, zeta,
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, hermite_polynomial_h,
    hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
)

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]

# entries of the dispatch point (__torch_function__, the tracer, the profiler see them)
from ptcore._dispatch.generate import bind_functions as _bind  # noqa: E402
_bind(globals(), __all__, "special", namespace="special")
del _bind
