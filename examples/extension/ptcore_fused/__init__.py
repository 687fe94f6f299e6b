"""ptcore_fused: a fused SiLU written in Cython against ptcore's C-level API.

``silu(x)`` is the op ``ptcore.ops.ptcore_fused.silu``, differentiable twice.
"""
from ptcore_fused import _kernels
from ptcore_fused.ops import register

silu, silu_backward = register(_kernels)

__all__ = ["silu", "silu_backward"]
