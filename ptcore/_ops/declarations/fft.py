"""Declarations of the ``ptcore.fft`` group.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("fft", group="fft")

# The transforms are device="frontend": their front-ends run on every device,
# reaching the device's FFT through ptcore.fft._primitives.DEVICE_IMPLS (cuFFT
# for CUDA tensors, ptcore.cuda.ops.fft).

op("fft", "function out", device="frontend")
op("fft2", "function out", device="frontend")
op("fftfreq", "function out", default_device=True)
op("fftn", "function out", device="frontend")
op("fftshift", "function", device="through")
op("hfft", "function out", device="frontend")
op("hfft2", "function out", device="frontend")
op("hfftn", "function out", device="frontend")
op("ifft", "function out", device="frontend")
op("ifft2", "function out", device="frontend")
op("ifftn", "function out", device="frontend")
op("ifftshift", "function", device="through")
op("ihfft", "function out", device="frontend")
op("ihfft2", "function out", device="frontend")
op("ihfftn", "function out", device="frontend")
op("irfft", "function out", device="frontend")
op("irfft2", "function out", device="frontend")
op("irfftn", "function out", device="frontend")
op("rfft", "function out", device="frontend")
op("rfft2", "function out", device="frontend")
op("rfftfreq", "function out", default_device=True)
op("rfftn", "function out", device="frontend")
