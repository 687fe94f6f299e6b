"""lightly (self-supervised learning) on ptcore, unmodified, against torch (``lightly_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), embeddings and weights from NumPy: fifteen losses with their gradients (NT-Xent with
and without a memory bank, DCL/DCLW, Barlow Twins, VICReg, negative cosine similarity, TiCo,
MACL, FroSSL, EMP-SSL, KoLeo, MMCR's nuclear norms, DINO's teacher centering, SwaV's
Sinkhorn-Knopp) and SimCLR/BYOL/SimSiam heads trained three SGD steps with a momentum teacher
(``update_momentum`` on a cosine schedule, ``deactivate_requires_grad``).  All agree to
float32 rounding; none needed a change in ptcore.  lightly imports torchvision.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("lightly", "torchvision")

NAMES = ["losses", "heads"]
runs, test_lightly = case_tests("lightly_cases.py", NAMES, rtol=1e-4, atol=1e-5)
