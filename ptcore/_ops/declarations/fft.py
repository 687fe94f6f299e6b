"""Declarations of the ``ptcore.fft`` group.

One ``op(name, variants, **facts)`` per op; the facts are described in
:mod:`ptcore._dispatch.declarations`.
"""
from ptcore._dispatch.declarations import family

op = family("fft", group="fft")

op("fft", "function out")
op("fft2", "function out")
op("fftfreq", "function out", default_device=True)
op("fftn", "function out")
op("fftshift", "function", device="through")
op("hfft", "function out")
op("hfft2", "function out")
op("hfftn", "function out")
op("ifft", "function out")
op("ifft2", "function out")
op("ifftn", "function out")
op("ifftshift", "function", device="through")
op("ihfft", "function out")
op("ihfft2", "function out")
op("ihfftn", "function out")
op("irfft", "function out")
op("irfft2", "function out")
op("irfftn", "function out")
op("rfft", "function out")
op("rfft2", "function out")
op("rfftfreq", "function out", default_device=True)
op("rfftn", "function out")
