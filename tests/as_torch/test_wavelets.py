"""ptwt (wavelet transforms over PyWavelets' filters) on ptcore, unmodified, against torch
(``wavelet_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), data from NumPy: the fast wavelet transform by convolutions in
one, two and three dimensions (four wavelets, five boundary modes, reconstructions, the
gradient of the approximation's energy), the separable and stationary transforms; the
sparse-matrix transforms with boundary wavelets orthogonalized by Gram-Schmidt, and their
operators; 1-d and 2-d wavelet packets; the continuous transform with Morlet and complex
Morlet wavelets and with a differentiable Shannon wavelet (gradients to its parameters).
All agree to float64 rounding (rtol 1e-7).

What ptwt took: sparse COO indices of a floating dtype converted to int64 (as torch, instead of
a RuntimeError), ``s += t`` on a sparse ``s`` (it went to the dense in-place add: a sparse tensor
is a Tensor), ``select`` on a sparse tensor with a 0-d tensor index.  Not compared: QR
orthogonalization of the boundary filters, where a zero pivot leaves a column's sign of Q to the
LAPACK build (torch's and SciPy's differ).
"""
import pytest

from case_results import case_tests, skip_unless_found  # (tests/as_torch)

torch = pytest.importorskip("torch")
skip_unless_found("ptwt", "pywt")

NAMES = ["conv", "matrix", "packets"]
runs, test_ptwt = case_tests("wavelet_cases.py", NAMES, rtol=1e-7, atol=1e-9)
