"""pykan and perceiver-pytorch on ptcore, unmodified, against torch (``kan_perceiver_cases.py``,
run with the real torch and under ``python -m ptcore.as_torch`` in an environment without
torch), weights and data from NumPy: a Kolmogorov-Arnold network in float64 (B-spline
activations, grid update from samples by least squares, two steps of its own LBFGS with
sparsity and entropy regularisation, grid refinement, attribution scores, pruning) and
Perceiver / Perceiver IO (Fourier features, latent cross/self-attention, masked inputs,
output queries) trained three Adam steps.  All agree to float32 rounding (rtol 1e-4; KAN to
1e-6 in float64: in float32 its 20 line-search iterations a step to tolerances of 1e-32
carry rounding up to 1e-3 in both libraries' runs alike).  Each case skips where its library
is absent; neither needed a change in ptcore.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"kan": "kan", "perceiver": "perceiver_pytorch"}
runs, test_kan_perceiver = library_case_tests("kan_perceiver_cases.py", LIBS, rtol=1e-4,
                                              atol=1e-5)
