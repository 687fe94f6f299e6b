"""What a checkpoint's ``.metadata`` describes: for every flattened key, a tensor (dtype,
shape, where its bytes are) or a plain value (kept in the metadata itself)."""
import dataclasses

__all__ = ["BytesStorageMetadata", "ChunkStorageMetadata", "Metadata", "TensorProperties",
           "TensorStorageMetadata"]


@dataclasses.dataclass
class ChunkStorageMetadata:
    """One stored piece of a tensor: its offsets into the tensor and its sizes.  ptcore
    saves whole tensors, so each tensor has one chunk at offset 0."""
    offsets: tuple
    sizes: tuple


@dataclasses.dataclass
class TensorProperties:
    """The dtype (and, as torch, layout and ``requires_grad``) of a saved tensor."""
    dtype: object
    layout: object = None
    requires_grad: bool = False


@dataclasses.dataclass
class TensorStorageMetadata:
    """A saved tensor: its properties, its full size, and its stored chunks."""
    properties: TensorProperties
    size: object
    chunks: list


@dataclasses.dataclass
class BytesStorageMetadata:
    """A saved non-tensor value (ints, floats, strings, lists/tuples/dicts of those)."""


@dataclasses.dataclass
class Metadata:
    """A checkpoint's index: ``state_dict_metadata`` maps every flattened key to a
    :class:`TensorStorageMetadata` or :class:`BytesStorageMetadata`; ``storage_data`` is the
    storage layer's own record (for the file system: where each item lives)."""
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None
