"""Signal and image-quality libraries on ptcore, unmodified, against torch
(``signal_cases.py``, run with the real torch and under ``python -m ptcore.as_torch`` in an
environment without torch), inputs and weights from NumPy: julius (fractional resampling with
a gradient, low/high/band-pass filters direct and by FFT, FFT convolution against conv1d,
band splitting), auraloss (multi-resolution, linear/phase and sum-and-difference STFT losses,
SI-SDR, SD-SDR, SNR, ESR, DC and log-cosh with their gradients, a conv net trained on the
STFT loss), pytorch-msssim (SSIM, MS-SSIM with weights, modules, SSIM as a training loss) and
torchkbnufft (complex NUFFT and its adjoint, density compensation, the Toeplitz normal
operator, gradients through the complex forward transform).  All agree to float32 rounding
(rtol 1e-4); none of the four needed a change in ptcore.  Each case skips where its library
is absent.
"""
import pytest

from case_results import library_case_tests  # (tests/as_torch)

torch = pytest.importorskip("torch")

LIBS = {"julius": "julius", "auraloss": "auraloss", "msssim": "pytorch_msssim",
        "kbnufft": "torchkbnufft"}
runs, test_signal_library = library_case_tests("signal_cases.py", LIBS, rtol=1e-4, atol=1e-5)
