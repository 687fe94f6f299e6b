"""DistributedSampler against torch.utils.data.distributed.DistributedSampler (no MPI needed)."""
import pytest

from ptcore.utils.data.distributed import DistributedSampler, torch_randperm

torch = pytest.importorskip("torch")
from torch.utils.data.distributed import DistributedSampler as TorchSampler  # noqa: E402


@pytest.mark.parametrize("n", [0, 1, 2, 10, 97, 1797])
@pytest.mark.parametrize("seed", [0, 3, -1, 2 ** 40 + 7])
def test_randperm_equals_torch(n, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    assert torch_randperm(n, seed) == torch.randperm(n, generator=g).tolist()


@pytest.mark.parametrize("length", [1, 7, 10, 12, 101])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_partitions_equal_torch(length, replicas, shuffle, drop_last):
    data = list(range(length))
    seen = []
    for rank in range(replicas):
        for seed, epoch in ((0, 0), (5, 3)):
            ours = DistributedSampler(data, replicas, rank, shuffle=shuffle, seed=seed,
                                      drop_last=drop_last)
            ref = TorchSampler(data, replicas, rank, shuffle=shuffle, seed=seed,
                               drop_last=drop_last)
            ours.set_epoch(epoch)
            ref.set_epoch(epoch)
            assert list(ours) == list(ref)
            assert len(ours) == len(ref) and ours.total_size == ref.total_size
            if (seed, epoch) == (0, 0):
                seen += list(ours)
    if not drop_last:
        assert set(seen) == set(data)          # padded: every sample is somebody's


def test_epochs_differ_and_invalid_rank():
    s = DistributedSampler(list(range(50)), 2, 0)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first
    for bad in (2, -1):
        with pytest.raises(ValueError, match=r"Invalid rank .*\[0, 1\]"):
            DistributedSampler(list(range(4)), 2, bad)
    with pytest.raises(ValueError, match="not been initialized"):
        DistributedSampler(list(range(4)))
