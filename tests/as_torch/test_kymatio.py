"""kymatio's torch frontend on ptcore, unmodified, against torch (``kymatio_cases.py``, run with
the real torch and under ``python -m ptcore.as_torch`` in an environment without torch), inputs
and weights from NumPy: 1-D (second and first order) and 2-D scattering coefficients with their
input gradients, and a scattering front end with a linear classifier trained three Adam steps.
The 3-D solid harmonic scattering is left out: kymatio 0.3.0 imports ``scipy.special.sph_harm``
for it, which SciPy 1.17 removed, so it fails to import with the real torch too.
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("kymatio")

NAMES = ["scattering", "classifier"]
runs, test_kymatio = case_tests("kymatio_cases.py", NAMES, rtol=1e-5, atol=2e-6)
