"""``DistributedSampler``: each rank's share of a dataset (``torch.utils.data.distributed``).

The shuffled order is the one torch's sampler gives for the same ``seed + epoch``: torch draws
it with ``torch.randperm`` from its CPU generator, a Mersenne Twister (mt19937), while
ptcore's generators are Philox.  So the permutation is computed here with torch's algorithm
(mt19937 seeded as torch seeds it, then the Fisher-Yates swaps of torch's CPU ``randperm``),
and a job can switch between torch and ptcore and see the same samples on every rank.
"""
import math

import numpy as np

import ptcore.distributed as dist
from ptcore.utils.data.sampler import Sampler, T_co

__all__ = ["DistributedSampler"]


def _mt19937_words(seed, n):
    """``n`` 32-bit outputs of mt19937 seeded like torch's CPU generator (``seed & 0xffffffff``
    through the reference ``init_genrand``)."""
    key = np.empty(624, dtype=np.uint64)
    key[0] = seed & 0xFFFFFFFF
    for i in range(1, 624):
        prev = int(key[i - 1])
        key[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    bitgen = np.random.MT19937()
    bitgen.state = {"bit_generator": "MT19937", "state": {"key": key.astype(np.uint32), "pos": 624}}
    return bitgen.random_raw(n) if n else np.empty(0, dtype=np.uint64)


def torch_randperm(n, seed):
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``."""
    if n >= (2 ** 32 - 1) // 20:
        raise ValueError(f"torch_randperm: n={n} is beyond torch's small-n randperm algorithm")
    draws = _mt19937_words(int(seed), max(n - 1, 0)).astype(np.int64)
    # torch: for i in 0..n-2: z = random() % (n - i); swap(r[i], r[i + z])
    z = (draws % np.arange(n, 1, -1, dtype=np.int64)).tolist()
    r = list(range(n))
    for i, k in enumerate(z):
        j = i + k
        r[i], r[j] = r[j], r[i]
    return r


class DistributedSampler(Sampler[T_co]):
    """Indices of the ``rank``-th of ``num_replicas`` equal shares of ``dataset``.

    Parameters
    ----------
    dataset : Dataset
        Sized dataset.
    num_replicas, rank : int, optional
        Default: the world size and rank of the default process group.
    shuffle : bool
        Permute the indices, differently for every ``seed + epoch`` (call ``set_epoch``).
    seed : int
        Must be the same on every rank.
    drop_last : bool
        Drop the tail so that shares are equal, instead of padding with indices from the start.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch: with ``shuffle``, every epoch gets its own order."""
        self.epoch = epoch
