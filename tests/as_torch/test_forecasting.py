"""pytorch-forecasting on ptcore, unmodified, against torch (``forecasting_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch): a
TimeSeriesDataSet from a pandas frame (static and known categoricals, known and unknown reals),
a Temporal Fusion Transformer with the quantile loss and an N-BEATS model built from it, their
predictions on one batch before and after two epochs of Lightning training (gradient clipping,
unshuffled batches), and the epoch loss; weights from NumPy, dropout 0.  All agree to float32
rounding (rtol 1e-4).

What it took: ``torch.DeviceObjType`` (annotated at import as ``str | torch.DeviceObjType``).
It imports Lightning (the ``lightning`` package) and, through it, torchvision.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("pytorch_forecasting", "lightning", "torchvision")

NAMES = ["tft", "nbeats"]
runs, test_forecasting = case_tests("forecasting_cases.py", NAMES, rtol=1e-4, atol=1e-5)
