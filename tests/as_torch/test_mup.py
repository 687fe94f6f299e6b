"""mup on ptcore, unmodified, against torch (``mup_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), weights and data from NumPy:
base shapes of a width-8 MLP (delta width 16) set on a width-32 one (the infshape annotations
its parameters carry, width multipliers, MuReadout's scaled output), base shapes saved to a
file and loaded, muP initialisers' fan adjustments, and MuAdam, MuAdamW and MuSGD's per-group
scaled learning rates over three steps.  All agree to float32 rounding (rtol 1e-4); the
library needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("mup")

runs, test_mup = case_tests("mup_cases.py", ["mup"], rtol=1e-4, atol=1e-5)
