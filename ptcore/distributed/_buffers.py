"""Tensors as MPI buffers.

A contiguous CPU tensor goes to MPI as itself (mpi4py reads it through DLPack: zero copy).
Anything else is staged through a contiguous CPU tensor that is copied back into the
original when the operation completes: non-contiguous tensors, tensors on a GPU (the MPI
library is not assumed CUDA-aware), bfloat16 (no MPI type: moved as int16 bits, reduced
in float32) and float16 reductions (reduced in float32, which every MPI supports).
"""
import numpy as np

import ptcore
from ptcore.autograd.grad_mode import no_grad

_REDUCE_IN_FLOAT32 = (ptcore.float16, ptcore.bfloat16)
_SPECIAL = frozenset(_REDUCE_IN_FLOAT32)        # dtypes that may need staging


class Buffer:
    """The MPI-side view of one tensor; ``done()`` writes staged results back."""

    __slots__ = ("tensor", "mpi", "_writeback")

    def __init__(self, tensor, reduce=False, writeback=True):
        if not isinstance(tensor, ptcore.Tensor):
            raise TypeError(f"expected a ptcore.Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        dt = tensor.dtype
        if (dt not in _SPECIAL and tensor.is_cpu and not tensor.requires_grad
                and tensor.is_contiguous()):
            self.mpi, self._writeback = tensor, False      # the common case: MPI uses it as is
            return
        t = tensor.detach() if tensor.requires_grad else tensor
        staged = False
        if t.device.type != "cpu":
            t = t.cpu()
            staged = True
        if reduce and t.dtype in _REDUCE_IN_FLOAT32:
            t = t.to(ptcore.float32)
            staged = True
        elif t.dtype == ptcore.bfloat16:
            t = (t if t.is_contiguous() else t.contiguous()).view(ptcore.int16)
            staged = staged or not tensor.is_contiguous()
            if not staged:
                self.mpi, self._writeback = t, None
                return
            staged = True
        if not t.is_contiguous():
            t = t.contiguous()
            staged = True
        self.mpi = t
        self._writeback = staged and writeback

    def done(self):
        if self._writeback:
            src = self.mpi
            if self.tensor.dtype == ptcore.bfloat16 and src.dtype == ptcore.int16:
                src = src.view(ptcore.bfloat16)
            with no_grad():
                self.tensor.copy_(src.view(self.tensor.shape))


def check_tensor(name, t, what="tensor"):
    if not isinstance(t, ptcore.Tensor):
        raise TypeError(f"{name}: {what} must be a ptcore.Tensor, got {type(t).__name__}")


_DTYPE_CODES = {}


def dtype_code(dt):
    code = _DTYPE_CODES.get(dt)
    if code is None:
        code = _DTYPE_CODES[dt] = sum(ord(c) * 131 ** i for i, c in enumerate(str(dt))) % (1 << 40)
    return code


def dtype_name(code):
    """The name of the dtype whose ``dtype_code`` is ``code`` (for error messages)."""
    if code == 0:
        return "no dtype"
    for v in vars(ptcore).values():
        if isinstance(v, ptcore.dtype) and dtype_code(v) == code:
            return str(v)
    return f"dtype #{code}"
