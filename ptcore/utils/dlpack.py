"""``ptcore.utils.dlpack``: exchange tensors with other libraries through
DLPack, without copying (``torch.utils.dlpack``)."""
from ptcore._dlpack import from_dlpack, to_dlpack  # noqa: F401

__all__ = ["from_dlpack", "to_dlpack"]
