"""neuraloperator on ptcore, unmodified, against torch (``neuralop_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), data and weights
from NumPy: a dense 2-D FNO, a Tucker-factorized TFNO (tensorly's torch backend) and a 1-D FNO,
their outputs, gradients of the relative L2 loss and a few Adam steps on the H1 and L2 losses.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("neuralop", "tensorly", "tltorch")

NAMES = ["fno", "fno1d"]
runs, test_neuralop = case_tests("neuralop_cases.py", NAMES, rtol=1e-5, atol=2e-6)
