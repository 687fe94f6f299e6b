"""MACE on ptcore, unmodified, against torch (``mace_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), weights and structures from
NumPy: tiny MACE and ScaleShiftMACE models built from ``mace.modules`` (with e3nn's irreps,
symmetric contractions and fx-generated tensor products) on water and hydroxyl graphs from
ASE, batched by MACE's loader: energies, per-atom energies and forces by autograd, and three
Adam steps of MACE's weighted energy-forces loss.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("mace", "e3nn", "ase", "matscipy")

NAMES = ["mace", "train"]
runs, test_mace = case_tests("mace_cases.py", NAMES, rtol=1e-5, atol=2e-6)
