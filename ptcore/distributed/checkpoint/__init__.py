"""``ptcore.distributed.checkpoint``: distributed checkpoints (``torch.distributed.checkpoint``,
"DCP") on ptcore's MPI process groups.

Every rank calls :func:`save` / :func:`load` with its own state dict.  A checkpoint is a
directory holding a JSON ``.metadata`` index and per-rank files of raw tensor bytes;
tensors that several ranks hold under the same key (replicated, as in DDP or a full FSDP
state dict) are written once, and any number of ranks can load the checkpoint back.
Loading copies into the given tensors in place and never runs code from the checkpoint.
:mod:`ptcore.distributed.checkpoint.state_dict` turns models (plain, DDP, FSDP) and
optimizers into state dicts keyed by parameter names and back.

Differences from torch: the on-disk format is ptcore's own (neither library reads the
other's checkpoints); non-tensor values are limited to JSON-able data; there are no
sharded tensors (DTensor / ShardedTensor), so every tensor is saved whole; planners are
the two default ones; :func:`async_save` saves synchronously.
"""
from ptcore.distributed.checkpoint import metadata, state_dict  # noqa: F401
from ptcore.distributed.checkpoint.api import CheckpointException
from ptcore.distributed.checkpoint.default_planner import DefaultLoadPlanner, DefaultSavePlanner
from ptcore.distributed.checkpoint.filesystem import FileSystemReader, FileSystemWriter
from ptcore.distributed.checkpoint.metadata import (
    BytesStorageMetadata, ChunkStorageMetadata, Metadata, TensorStorageMetadata,
)
from ptcore.distributed.checkpoint.state_dict_loader import load, load_state_dict
from ptcore.distributed.checkpoint.state_dict_saver import async_save, save, save_state_dict

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata",
           "DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "Metadata", "TensorStorageMetadata", "async_save", "load", "load_state_dict", "save",
           "save_state_dict"]
