"""torch's module of this name holds the chunked kernels of ``linear_cross_entropy``;
ptcore computes the loss in one piece (``ptcore.nn.functional.linear_cross_entropy``), so
this module exports nothing, as torch's; ``LinearCrossEntropyLoss`` is in
:mod:`ptcore.nn.modules.loss`, where torch defines it, and its
:class:`LinearCrossEntropyOptions` are accepted and change nothing but memory use in
torch."""

__all__ = []
