"""Image-quality, einsum-notation, unfold and flow libraries on ptcore, unmodified, against
torch (``image_signal_cases.py``, run with the real torch and under ``python -m
ptcore.as_torch`` in an environment without torch), on NumPy data: piq (PSNR, SSIM, MS-SSIM,
GMSD and its multi-scale chromatic form, FSIM, VIF, HaarPSI, MDSI, SR-SIM, DSS, IW-SSIM, total
variation, each with its gradient), einx (rearrange, bracketed reductions, dot, broadcasting
elementwise ops, softmax, get_at, where, flip), unfoldNd (1-d and 3-d unfold, 3-d fold, 2-d
unfold next to ``F.unfold``) and nflows (a masked autoregressive flow's log-probability, Adam
steps and inverse).  All agree to float32 rounding; none needed a change in ptcore.  Each case
skips where its library is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"piq": "piq", "einx": "einx", "unfold": "unfoldNd", "nflows": "nflows"}
runs, test_image_signal_library = library_case_tests("image_signal_cases.py", LIBS, rtol=1e-4,
                                                     atol=1e-5)
