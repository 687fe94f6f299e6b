"""``ptcore.backends``: switches for the compute backends, as ``torch.backends``.

ptcore runs on its own CPU kernels (and CUDA when present); the flags of
backends it does not use (cuDNN, MPS, oneDNN, opt_einsum) are kept and
returned so that scripts setting them run unchanged, and the availability
queries answer what is true for ptcore.
"""
from ptcore.backends import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
