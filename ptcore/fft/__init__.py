"""``ptcore.fft``: discrete Fourier transforms (``torch.fft``).

The transforms run in SciPy's pocketfft (``scipy.fft``) on the tensors'
memory, with ``ptcore.get_num_threads()`` worker threads; real input gives
complex64 (float32) or complex128 (float64), integer and bool input is
promoted to the default float dtype, float16/bfloat16 raise (as PyTorch on
CPU).  Every transform is differentiable, with PyTorch's backward formulas.
"""
from ptcore.fft._transforms import (  # noqa: F401
    fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn, hfft,
    ihfft, hfft2, ihfft2, hfftn, ihfftn,
)
from ptcore.fft._helpers import fftfreq, rfftfreq, fftshift, ifftshift  # noqa: F401

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

# entries of the dispatch point (__torch_function__, the tracer, the profiler see them)
from ptcore._dispatch.generate import bind_functions as _bind  # noqa: E402
_bind(globals(), __all__, "fft", namespace="fft")
del _bind
