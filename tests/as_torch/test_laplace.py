"""laplace-torch on ptcore, unmodified, against torch (``laplace_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), weights and
data from NumPy: Laplace approximations of small networks for regression (all weights with
diagonal GGN from BackPACK, Kronecker-factored from curvlinops and full from BackPACK;
last-layer Kronecker) and classification (diagonal, Kronecker), their log marginal
likelihoods, prior precisions optimised on it (20 Adam steps), GLM predictive means and
variances, probit and Laplace-bridge probabilities.  All agree to float32 rounding
(rtol 1e-4); laplace-torch (with curvlinops and BackPACK) needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("laplace", "curvlinops", "backpack")

NAMES = ["regression", "classification"]
runs, test_laplace = case_tests("laplace_cases.py", NAMES, rtol=1e-4, atol=1e-5)
