"""Continuous-time sequence models on ptcore, unmodified, against torch
(``sequence_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), weights and data from NumPy: torchcde's natural cubic, Hermite
(backward differences) and linear interpolations with missing values, evaluated with their
derivatives and the data's gradient, and a neural CDE classifier through cdeint (rk4, the
adjoint method and dopri5 in float64, with parameter gradients; three Adam steps); ncps' LTC
(AutoNCP and fully connected wirings) and CfC cells (default, pure and no-gate modes, mixed
memory, an AutoNCP-wired CfC) over sequences with three Adam steps each.  All agree to
float32 (dopri5: float64) rounding; none needed a change in ptcore.  dopri5 runs in float64
because its float32 parameter gradients are rounding noise in torch as in ptcore (they run
through the time grid from the initial step size, and the error estimates cancel): the two
differed by up to 20%, and each as much from the float64 gradients; in float64 the two
agree to 1e-9."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchcde", "ncps")

NAMES = ["interpolation", "cde", "liquid"]
runs, test_sequence_models = case_tests("sequence_cases.py", NAMES, rtol=1e-4, atol=1e-5)
