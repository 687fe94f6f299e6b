"""``torch.distributed.tensor.experimental``: :func:`implicit_replication`."""
from contextlib import contextmanager

__all__ = ["implicit_replication"]


@contextmanager
def implicit_replication():
    """Let operators mix :class:`~ptcore.distributed.tensor.DTensor` arguments with plain
    tensors, which count as replicated.  ptcore's DTensor always does (it holds the whole
    tensor on every rank), so inside the context nothing changes; libraries enter it around
    such mixed updates (Opacus' FSDP optimizers, torch's own optimizers over DTensors)."""
    yield
