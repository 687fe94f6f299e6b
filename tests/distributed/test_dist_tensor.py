"""ptcore.distributed.tensor (DTensor, placements, local shapes), the functional collectives
and the FSDP2/hf_storage names, against torch where it can answer in one process."""
import dataclasses
import random
import re

import pytest

from dist_launch import run_mpi

import ptcore.distributed.tensor as pdt
from ptcore.distributed import fsdp
from ptcore.distributed._composable import fsdp as composable_fsdp
from ptcore.distributed.checkpoint import hf_storage
from ptcore.distributed.tensor._utils import _compute_local_shape_and_global_offset
from ptcore.distributed.tensor.placement_types import _StridedShard


@pytest.mark.parametrize("n", [1, 2])
def test_dtensor_and_functional_collectives_on_ranks(n):
    p = run_mpi("dist_worker_tensor.py", n)
    assert p.returncode == 0, p.stdout
    ranks = sorted(int(m) for m in re.findall(rf"OK-DTENSOR rank=(\d+) world={n} checks=6",
                                              p.stdout))
    assert ranks == list(range(n)), p.stdout


def test_placements_as_torch():
    tdt = pytest.importorskip("torch.distributed.tensor")
    from torch.distributed.tensor.placement_types import _StridedShard as TStrided
    pairs = [(pdt.Shard(0), tdt.Shard(0)), (pdt.Shard(2), tdt.Shard(2)),
             (pdt.Replicate(), tdt.Replicate()), (pdt.Partial(), tdt.Partial()),
             (pdt.Partial("max"), tdt.Partial("max")),
             (_StridedShard(1, split_factor=2), TStrided(1, split_factor=2))]
    for mine, theirs in pairs:
        assert (repr(mine), str(mine)) == (repr(theirs), str(theirs))
        assert (mine.is_shard(), mine.is_shard(0), mine.is_replicate(), mine.is_partial()) == \
            (theirs.is_shard(), theirs.is_shard(0), theirs.is_replicate(), theirs.is_partial())
    for (a, ta) in pairs:
        for (b, tb) in pairs:
            assert (a == b) == (ta == tb), (a, b)
            if a == b:
                assert hash(a) == hash(b)
    assert pdt.Partial().reduce_op == tdt.Partial().reduce_op == "sum"
    assert pdt.Shard(1).dim == 1
    with pytest.raises(AttributeError):
        pdt.Shard(0).dim = 1


def test_local_shape_and_offset_as_torch():
    pytest.importorskip("torch.distributed.tensor")
    import torch.distributed.tensor as tdt
    from torch.distributed.tensor._utils import _compute_local_shape_and_global_offset as ref
    rng = random.Random(0)
    for _ in range(500):
        nd = rng.randint(1, 3)
        shape = [rng.randint(0, 9) for _ in range(nd)]
        mesh = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        coord = [rng.randrange(m) for m in mesh]
        kinds = [(rng.choice("SSRP"), rng.randrange(nd)) for _ in mesh]
        mine = [pdt.Shard(d) if k == "S" else pdt.Replicate() if k == "R" else pdt.Partial()
                for k, d in kinds]
        theirs = [tdt.Shard(d) if k == "S" else tdt.Replicate() if k == "R" else tdt.Partial()
                  for k, d in kinds]
        want = ref(shape, mesh, coord, theirs)
        assert _compute_local_shape_and_global_offset(shape, mesh, coord, mine) == \
            (tuple(want[0]), tuple(want[1])), (shape, mesh, coord, kinds)
    with pytest.raises(NotImplementedError, match="_StridedShard"):
        _compute_local_shape_and_global_offset([4], [2], [0], [_StridedShard(0, split_factor=2)])


def test_fsdp2_names_and_hf_storage():
    tfsdp = pytest.importorskip("torch.distributed.fsdp")
    for name in ("MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy"):
        mine, theirs = getattr(fsdp, name), getattr(tfsdp, name)
        assert [(f.name, f.default) for f in dataclasses.fields(mine)] == \
            [(f.name, f.default) for f in dataclasses.fields(theirs)]
        assert mine.__dataclass_params__.frozen == theirs.__dataclass_params__.frozen
    assert issubclass(fsdp.CPUOffloadPolicy, fsdp.OffloadPolicy)
    assert composable_fsdp.fully_shard is fsdp.fully_shard
    import ptcore
    with pytest.raises(NotImplementedError, match="FullyShardedDataParallel"):
        fsdp.fully_shard(ptcore.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="safetensors"):
        hf_storage.HuggingFaceStorageWriter("/nonexistent")
    with pytest.raises(NotImplementedError, match="safetensors"):
        hf_storage.HuggingFaceStorageReader("/nonexistent")
