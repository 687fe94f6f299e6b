"""torchsde on ptcore, unmodified, against torch (``torchsde_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch), weights and the
Brownian path from NumPy: a diagonal-noise neural SDE solved by ``sdeint`` with Euler-Maruyama,
Milstein, Heun, midpoint and reversible Heun, and by ``sdeint_adjoint`` (Euler, reversible Heun
with its adjoint), the solution paths and the gradients of a loss on them with respect to the
initial state and the parameters.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchsde")

NAMES = ["sdeint", "adjoint"]
runs, test_torchsde = case_tests("torchsde_cases.py", NAMES, rtol=1e-5, atol=2e-6)
