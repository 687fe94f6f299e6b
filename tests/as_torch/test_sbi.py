"""sbi on ptcore, unmodified, against torch (``sbi_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), simulations and weights from
NumPy: NPE (nflows' MAF and NSF, sbi's MDN, zuko's MAF) and NLE (MAF, NSF) trained three epochs
by sbi's training loop (a sequential sampler in place of its random split and shuffling), their
losses, the estimators' log-densities, the posterior's unnormalized log_prob and the NLE
potential with its gradient on fixed points.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("sbi", "nflows", "zuko")

NAMES = ["npe", "nle"]
runs, test_sbi = case_tests("sbi_cases.py", NAMES, rtol=1e-5, atol=2e-6)
