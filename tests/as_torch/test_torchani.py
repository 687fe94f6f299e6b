"""TorchANI on ptcore, unmodified, against torch (``torchani_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): ANI models assembled
by ``torchani.arch.simple_ani`` from torchani's constants (no downloads or pretrained files),
network weights from NumPy: AEVs, energies, per-atom energies and forces (autograd) of three
small molecules with and without xTB repulsion and D3 dispersion, energies and forces in a
periodic box, and three Adam steps on an energy loss.  All agree to float32 rounding; the
periodic forces (sums over many periodic images) to 2e-5 of their largest value: torch's own
float32 forces there are 2.9e-5 off its float64 ones, ptcore's 4.5e-5, and in float64 the two
agree to 6e-14.  TorchANI needed no change in ptcore.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchani", "h5py")

NAMES = ["ani", "train"]
runs, test_torchani = case_tests("torchani_cases.py", NAMES, rtol=1e-5, atol=2e-6,
                                   per_case={"train": {"forces_pbc": {"atol": 2e-5}}})
