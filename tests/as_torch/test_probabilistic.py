"""Pyro and GPyTorch beyond test_science_libraries, on ptcore, unmodified, against torch
(``probabilistic_cases.py``, run with the real torch and under ``python -m ptcore.as_torch``
in an environment without torch), data from NumPy: Pyro's effect handlers (condition, trace,
replay, block, scale, mask inside a plate) with the log joint's gradient; a Gaussian mixture's
assignments enumerated out by TraceEnum_ELBO with an AutoDelta guide (15 deterministic SVI
steps) and the posterior assignment marginals; Pyro-only distributions (zero-inflated,
von Mises, asymmetric/soft Laplace, gamma-Poisson, beta-binomial, multivariate Student-t,
LKJ Cholesky) and transforms (spline with its inverse, planar, softplus, correlation
Cholesky) with log-determinants; GPyTorch's SVGP (learned inducing points, variational
ELBO) and an exact multitask GP (ICM kernel) trained by Adam with their predictions, and
six kernels' covariances.  All agree to float32 rounding; the SVGP's inducing points and
predictive means after six Adam steps to 3e-4 of their largest value (float32 Cholesky
rounding through the steps: the RBF kernel's float32 exp, within 1 ulp in both libraries
but not the same bits since ptcore's runs in float lanes, moved one inducing point by
1.1e-4 of 0.82 on an AVX2 machine).  None needed a change in ptcore."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("pyro", "gpytorch")

NAMES = ["handlers", "enum", "pyro_dists", "svgp", "multitask"]
_SVGP = {"atol": 3e-4}
runs, test_probabilistic = case_tests("probabilistic_cases.py", NAMES, rtol=1e-4, atol=1e-5,
                                      per_case={"svgp": {"mean": _SVGP, "inducing": _SVGP}})
