"""fair-esm on ptcore, unmodified, against torch (``esm_cases.py``, run with the real torch and
under ``python -m ptcore.as_torch`` in an environment without torch), small models built
from arguments (no download) with weights from NumPy: ESM-2 (rotary attention, token
dropout's rescaling, padding), ESM-1b (learned positions) and the MSA Transformer (tied row
and column attention) trained a few masked-LM SGD steps, then their logits, chosen layers'
representations, attention maps and contact predictions; the alphabets' batch converters.
All agree to float32 rounding (rtol 1e-4); the library needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("esm")

NAMES = ["esm2", "esm1b", "msa"]
runs, test_esm = case_tests("esm_cases.py", NAMES, rtol=1e-4, atol=1e-5)
