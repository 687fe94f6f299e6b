"""GluonTS's PyTorch models on ptcore, unmodified, against torch (``gluonts_cases.py``, run
with the real torch and under ``python -m ptcore.as_torch`` in an environment without torch),
data and weights from NumPy, dropout 0: SimpleFeedForward with Student-t and normal outputs
(distribution parameters, mean scaling, means, variances, log-probabilities, the masked
negative log-likelihood and its gradients, three Adam steps) and DeepAR (lagged two-layer LSTM
with a static categorical embedding: loss, gradients, the lagged-RNN unroll's distribution
parameters and Adam steps).  All agree to float32 rounding; none needed a change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("gluonts", "lightning")

NAMES = ["feedforward", "deepar"]
runs, test_gluonts = case_tests("gluonts_cases.py", NAMES, rtol=1e-4, atol=1e-5)
