"""``ptcore.utils.data``: datasets, samplers and the DataLoader (``torch.utils.data``)."""
from ptcore.utils.data.dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    random_split,
)
from ptcore.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
    WeightedRandomSampler,
)
from ptcore.utils.data._utils.worker import get_worker_info, WorkerInfo  # noqa: F401
from ptcore.utils.data._utils.collate import default_collate, default_convert
from ptcore.utils.data.dataloader import DataLoader, _DatasetKind  # noqa: F401

from ptcore.utils.data import distributed  # noqa: E402  (as torch: always importable)
from ptcore.utils.data.distributed import DistributedSampler  # noqa: E402

__all__ = ["BatchSampler", "ChainDataset", "DistributedSampler", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "_DatasetKind", "default_collate", "default_convert", "get_worker_info", "random_split"]
