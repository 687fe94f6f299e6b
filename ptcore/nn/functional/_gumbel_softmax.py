"""``gumbel_softmax``: differentiable samples from a categorical distribution."""
import warnings

import ptcore

__all__ = ["gumbel_softmax"]


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Sample from Gumbel-Softmax(``logits``, ``tau``), optionally discretized (``hard``).

    ``softmax((logits + g) / tau)`` with ``g = -log(Exp(1))`` Gumbel noise.  With
    ``hard=True`` the result is one-hot (the argmax) in the forward pass and has the soft
    sample's gradient (straight-through estimator), as torch.

    Parameters
    ----------
    logits : Tensor
        Unnormalized log-probabilities.
    tau : float
        Non-negative temperature.
    hard : bool
        Return one-hot samples with straight-through gradients.
    eps : float
        Deprecated, has no effect (torch warns when it is passed).
    dim : int
        The category dimension.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -ptcore.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = ptcore.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft
