"""Masked reductions and normalizations, and the ``MaskedTensor`` type
(``torch.masked``).

The functions (``sum``, ``amax``, ``mean``, ``softmax`` ...) take a plain
tensor and a boolean ``mask`` broadcastable to it and operate on the
masked-in elements only; a slice with no masked-in element gives the
operation's identity (0 for ``sum``, -inf for ``amax`` ...) or nan (``mean``,
``var``, ``std``, ``median``).  :class:`MaskedTensor` carries its mask along
through ordinary ptcore operations.
"""
from ptcore.masked._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax,
                                logaddexp, logsumexp, mean, median, norm, normalize, prod,
                                softmax, softmin, std, sum, var)
from ptcore.masked._tensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor
from ptcore.masked import _tensor_ops  # noqa: F401,E402  (registers MaskedTensor's semantics)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
