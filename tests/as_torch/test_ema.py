"""EMA libraries on ptcore, unmodified, against torch (``ema_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), weights and
data from NumPy: ema-pytorch's EMA (warmup decay, update_after_step, update_every, forward of
the averaged copy, copying back) and KarrasEMA, and torch-ema's ExponentialMovingAverage
(num_updates warmup, average_parameters, store/restore, state_dict round trip) over a model
with batch norm trained with SGD.  All agree to float32 rounding; neither library needed a
change in ptcore.  Each test skips where its library is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"ema_pytorch": "ema_pytorch", "torch_ema": "torch_ema"}
runs, test_ema = library_case_tests("ema_cases.py", LIBS, rtol=1e-4, atol=1e-5)
