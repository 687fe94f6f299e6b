"""Sparse-attention, structured-prediction and optimal-transport libraries on ptcore,
unmodified, against torch (``structured_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), weights and data from NumPy:
entmax (sparsemax, entmax15 with top-k, entmax_bisect with a learned per-row alpha, normmax,
their losses: custom autograd functions with gradients), pytorch-tabnet (TabNetClassifier
fitted three epochs through the library's trainer from weights set by a callback, with
sparsemax and entmax masks, predictions, explanations and feature importances; a TabNet
network with a categorical embedding and grouped features trained three Adam steps),
pytorch-crf (masked log-likelihood under each reduction, Viterbi decoding, an emission layer
trained with the CRF) and geomloss (Sinkhorn divergences, balanced, unbalanced and weighted,
energy/Gaussian/Laplacian MMDs, a point cloud moved by the Sinkhorn gradient).  All agree to
float32 rounding (rtol 1e-4), decoded paths exactly; none needed a change in ptcore.  Each
case skips where its library is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"entmax": "entmax", "tabnet": "pytorch_tabnet", "crf": "torchcrf",
        "geomloss": "geomloss"}
runs, test_structured_library = library_case_tests("structured_cases.py", LIBS, rtol=1e-4, atol=1e-5)
