"""``ptcore._subclasses`` (``torch._subclasses``): the tensor subclasses torch's compiler
stack builds on: :mod:`.fake_tensor`'s fake tensors (metadata without data) and their
mode, built on ``__torch_dispatch__`` and ptcore's meta kernels."""
from ptcore._subclasses.fake_tensor import (DynamicOutputShapeException, FakeTensor,
                                             FakeTensorMode, UnsupportedFakeTensorException)

__all__ = ["DynamicOutputShapeException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException"]
