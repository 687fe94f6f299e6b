"""``LinearCrossEntropyOptions``: torch's tuning options of the chunked
``linear_cross_entropy`` (``torch.nn.LinearCrossEntropyOptions``); ptcore accepts them and
computes the loss in one piece."""
import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """torch's chunking options of ``linear_cross_entropy`` (memory tuning only)."""

    allow_retain_graph: bool = False
    batch_chunk_size: "int | None" = None
    chunking_method: "str | None" = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None
