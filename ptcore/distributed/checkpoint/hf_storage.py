"""``torch.distributed.checkpoint.hf_storage``: distributed checkpoints stored as Hugging Face
safetensors files.  Not implemented in ptcore, whose distributed checkpoints use its own
format (:class:`~ptcore.distributed.checkpoint.FileSystemWriter`); the classes exist so that
code importing them loads, and raise :class:`NotImplementedError` when made.
"""
__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


def _refuse(cls):
    raise NotImplementedError(
        f"{cls}: distributed checkpoints in Hugging Face safetensors files are not implemented "
        "in ptcore; use ptcore.distributed.checkpoint.FileSystemWriter/FileSystemReader, or "
        "save a full state dict with safetensors (model.save_pretrained)")


class HuggingFaceStorageWriter:
    """Not implemented in ptcore: raises :class:`NotImplementedError`."""

    def __init__(self, path, fqn_to_index_mapping=None, thread_count=1, save_distributed=False,
                 enable_consolidation=False, thread_count_consolidation=1):
        _refuse("HuggingFaceStorageWriter")


class HuggingFaceStorageReader:
    """Not implemented in ptcore: raises :class:`NotImplementedError`."""

    def __init__(self, path, thread_count=1):
        _refuse("HuggingFaceStorageReader")
