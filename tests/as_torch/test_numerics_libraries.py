"""Optimization, clustering, invertible-network and tabular libraries on ptcore, unmodified,
against torch (``numerics_cases.py``, run with the real torch and under
``python -m ptcore.as_torch`` in an environment without torch), weights and data from NumPy:
pytorch-minimize (BFGS, L-BFGS, CG, Newton-CG, exact Newton, trust-NCG, trust-exact and
dogleg on Rosenbrock's and a convex function, its LinAlgError where the Hessian is
indefinite, trust-region-reflective least squares by LSMR and exactly, the Minimizer optimizer
on a module), fast-pytorch-kmeans (Euclidean and cosine k-means, batched MultiKMeans), FrEIA
(six coupling blocks with permutations: outputs, log-Jacobian determinants, inverses, a
likelihood step; a conditional GraphINN with ActNorm) and rtdl-revisiting-models (MLP, ResNet,
FT-Transformer with its parameter groups, trained three steps).  All agree to float32
rounding (rtol 1e-4).  Each case skips where its library is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"minimize": "torchmin", "kmeans": "fast_pytorch_kmeans", "freia": "FrEIA",
        "rtdl": "rtdl_revisiting_models"}
runs, test_numerics_library = library_case_tests("numerics_cases.py", LIBS, rtol=1e-4,
                                                 atol=1e-5)
