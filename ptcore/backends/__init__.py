"""``ptcore.backends``: switches for the compute backends, as ``torch.backends``.

ptcore runs on its own CPU kernels (and CUDA when present); the flags of
backends it does not use (cuDNN, MPS, oneDNN, opt_einsum) are kept and
returned so that scripts setting them run unchanged, and the availability
queries answer what is true for ptcore.
"""
import contextlib
import sys
import types

from ptcore.backends import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401
from ptcore.backends import _fp32_precision

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "flags"]


@contextlib.contextmanager
def flags(fp32_precision="none"):
    """Set the generic ``fp32_precision`` for a block (restored after)."""
    old = _fp32_precision.get("generic", "all")
    _fp32_precision.set("generic", "all", fp32_precision)
    try:
        yield
    finally:
        _fp32_precision.set("generic", "all", old)


class _BackendsModule(types.ModuleType):
    fp32_precision = _fp32_precision.module_property(
        "generic", "all", 'The generic float32 precision every backend\'s "none" defers to.')


sys.modules[__name__].__class__ = _BackendsModule
