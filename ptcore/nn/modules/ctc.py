"""``CTCLoss``."""
from ptcore.nn.functional._ctc import ctc_loss
from ptcore.nn.modules.module import Module

__all__ = ["CTCLoss"]


def _legacy_reduction(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


class CTCLoss(Module):
    r"""The Connectionist Temporal Classification loss (``torch.nn.CTCLoss``).

    Parameters
    ----------
    blank : int
        The blank label (default 0).
    reduction : {'mean', 'sum', 'none'}
        ``'mean'``: each loss is divided by its target length, then averaged.
    zero_infinity : bool
        Zero infinite losses and their gradients.

    ``forward(log_probs, targets, input_lengths, target_lengths)`` as
    :func:`ptcore.nn.functional.ctc_loss`.
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False, size_average=None,
                 reduce=None):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
