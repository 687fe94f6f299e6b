"""torchquad on ptcore, unmodified, against torch (``torchquad_cases.py``, run with the real torch
and under ``python -m ptcore.as_torch`` in an environment without torch): integrals in 1 to 4
dimensions by the trapezoid, Simpson, Boole and Gauss-Legendre rules (float64) and by Monte
Carlo on NumPy sample points (float32), with their gradients with respect to a parameter of the
integrand and to the integration domain.

torchquad needed autoray (its array dispatcher) to take its torch backend for ptcore's tensors:
autoray, like opt_einsum, names the backend by the top-level module of the array's class, which
was "ptcore" (under the launcher ``Tensor.__module__`` is now "torch", as torch's).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("torchquad", "autoray")

NAMES = ["rules", "monte_carlo"]
runs, test_torchquad = case_tests("torchquad_cases.py", NAMES, rtol=1e-5, atol=2e-6)
