"""PyTorch-Ignite on ptcore, unmodified, against torch (``ignite_cases.py``, run with the real
torch and under ``python -m ptcore.as_torch`` in an environment without torch), on networks
and data from NumPy: ``create_supervised_trainer``/``evaluator`` with classification metrics
(accuracy, loss, precision/recall/F-beta, top-k, confusion matrix, IoU/mIoU, the
classification report), a running average, a cosine schedule with linear warm-up, early
stopping, ModelCheckpoint and Checkpoint with DiskSaver and ``load_objects``, a timer; a
custom Engine with gradient accumulation, custom and filtered events, regression metrics and
resumption from ``state_dict``; metrics on their own (PSNR, SSIM, multilabel, MetricsLambda,
averages, BLEU, ROUGE).  All agree to float32 rounding; Ignite needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("ignite")

NAMES = ["supervised", "custom_engine", "metrics"]
runs, test_ignite = case_tests("ignite_cases.py", NAMES)
