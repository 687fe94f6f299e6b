"""BackPACK on ptcore, unmodified, against torch (``backpack_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), weights and
data from NumPy: first-order quantities of a conv net (individual gradients, their squared
norms, gradient variance, sum of squared gradients) and exact curvature of MLPs and a 1-d conv
net (DiagGGNExact, DiagHessian, KFLR, KFRA) under MSE and cross-entropy, all computed by
BackPACK's extended backward pass through module hooks.  All agree to float32 rounding
(rtol 1e-4); the library (with unfoldNd) needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("backpack")

NAMES = ["first_order", "second_order"]
runs, test_backpack = case_tests("backpack_cases.py", NAMES, rtol=1e-4, atol=1e-5)
