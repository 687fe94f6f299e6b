"""Datasets for tests/utils/test_data.py (importable by spawned workers)."""
import os
import random
import signal
import time

import numpy as np

import ptcore
from ptcore.utils.data import Dataset, IterableDataset, Subset, get_worker_info


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": ptcore.full((2,), float(i)), "y": i * i, "name": f"s{i}"}


class RangeIterable(IterableDataset):
    """The PyTorch docs' example: each worker yields its share of [start, end)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return self._iter(get_worker_info())

    def _iter(self, info):
        if info is None:
            lo, hi = self.start, self.end
        else:
            per = int(np.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))


class Failing(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return i


class Killing(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(30)
        return i


class WorkerIds(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return (info.id, info.num_workers, info.seed, random.random(),
                float(ptcore.rand(())), float(np.random.rand()))


def init_fn(worker_id):
    info = get_worker_info()
    assert info.id == worker_id
    info.dataset.init_called = worker_id


class EvenSubset(Subset[int]):
    """A user subclass of a subscripted generic dataset (pickled to spawned workers)."""

    def __init__(self, dataset):
        super().__init__(dataset, list(range(0, len(dataset), 2)))


class IntStream(IterableDataset[int]):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        k, m = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(k, self.n, m))


try:
    import torch.utils.data as _TD

    class TorchRangeIterable(_TD.IterableDataset):
        __init__ = RangeIterable.__init__
        _iter = RangeIterable._iter

        def __iter__(self):
            return self._iter(_TD.get_worker_info())
except ImportError:
    TorchRangeIterable = None
