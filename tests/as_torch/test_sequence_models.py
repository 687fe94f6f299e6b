"""Continuous-time sequence models on ptcore, unmodified, against torch
(``sequence_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), weights and data from NumPy: torchcde's natural cubic, Hermite
(backward differences) and linear interpolations with missing values, evaluated with their
derivatives and the data's gradient, and a neural CDE classifier through cdeint (rk4 and the
adjoint method with parameter gradients, dopri5's logits, three Adam steps); ncps' LTC
(AutoNCP and fully connected wirings) and CfC cells (default, pure and no-gate modes, mixed
memory, an AutoNCP-wired CfC) over sequences with three Adam steps each.  All agree to
float32 rounding (dopri5's logits to 1e-4 of their largest value); none needed a change in
ptcore.  Not compared: dopri5's parameter gradients (up to 20% apart from torch's with the
same accepted steps and logits within 3e-5; the gradient runs through the time grid from
the initial step size: open)."""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchcde", "ncps")

NAMES = ["interpolation", "cde", "liquid"]
# dopri5's logits to 1e-4 of their largest value: its error estimates are differences of
# nearly equal float32 numbers, and the step sizes carry their rounding
runs, test_sequence_models = case_tests("sequence_cases.py", NAMES, rtol=1e-4, atol=1e-5,
                                        per_case={"cde": {"dopri5": {"atol": 1e-4}}})
