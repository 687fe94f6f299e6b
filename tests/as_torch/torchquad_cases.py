"""torchquad, run by tests/as_torch/test_torchquad.py with the real torch and under
``python -m ptcore.as_torch``: integrals of smooth functions over boxes in 1 to 3 dimensions by
the trapezoid, Simpson, Boole and Gauss-Legendre rules and by plain Monte Carlo, the latter with
sample points from NumPy (torchquad's own RNG draws from torch's generator, a stream ptcore does
not reproduce), and their gradients with respect to a parameter of the integrand and to the
integration domain.  torchquad dispatches through autoray by the arrays' backend.  Each case
writes what it computed to ``<out>/<case>.json``.
"""
import sys
import warnings

import numpy as np
import torch

from case_results import main

warnings.filterwarnings("ignore")


class NumpyUniform:
    """torchquad's RNG interface (``uniform(size, dtype)``) with NumPy's generator."""

    def __init__(self, seed):
        self._rng = np.random.default_rng(seed)

    def uniform(self, size, dtype):
        return torch.from_numpy(self._rng.random(size)).to(dtype)


def _integrand(a):
    return lambda x: torch.exp(-a * (x ** 2).sum(dim=1)) * torch.cos(x[:, 0] * a + 0.3)


def rules_case():
    """Deterministic rules in 1, 2 and 3 dimensions (float64): the integrals, and the
    gradients with respect to the integrand's parameter and the domain."""
    import torchquad
    torchquad.set_log_level("ERROR")
    res = {}
    for name, cls, n in [("trapezoid", torchquad.Trapezoid, 33),
                         ("simpson", torchquad.Simpson, 33),
                         ("boole", torchquad.Boole, 33),
                         ("gauss_legendre", torchquad.GaussLegendre, 12)]:
        out = {}
        for dim in (1, 2, 3):
            a = torch.tensor(0.8, dtype=torch.float64, requires_grad=True)
            domain = torch.tensor([[-1.0, 1.2]] * dim, dtype=torch.float64, requires_grad=True)
            n_dim = n ** dim if dim < 3 else (n // 2 + 1) ** 3
            val = cls().integrate(_integrand(a), dim=dim, N=n_dim, integration_domain=domain,
                                  backend="torch")
            val.backward()
            out[f"d{dim}"] = {"value": val.detach(), "a_grad": a.grad, "domain_grad": domain.grad}
        res[name] = out
    return res


def monte_carlo_case():
    """Plain Monte Carlo in 2 and 4 dimensions (float32) on NumPy sample points: the estimates
    and their gradients with respect to the integrand's parameter and the domain."""
    import torchquad
    torchquad.set_log_level("ERROR")
    res = {}
    for dim in (2, 4):
        a = torch.tensor(0.5, requires_grad=True)
        domain = torch.tensor([[0.0, 1.0]] * dim, requires_grad=True)
        val = torchquad.MonteCarlo().integrate(_integrand(a), dim=dim, N=4000,
                                               integration_domain=domain, backend="torch",
                                               rng=NumpyUniform(dim))
        val.backward()
        res[f"d{dim}"] = {"value": val.detach(), "a_grad": a.grad, "domain_grad": domain.grad}
    return res


CASES = {"rules": rules_case, "monte_carlo": monte_carlo_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
