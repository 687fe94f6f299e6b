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


def test_old_tensor_package_name_and_implicit_replication():
    """``torch.distributed._tensor`` (the old name, which Opacus imports) holds the same
    objects as ``torch.distributed.tensor``: its ``experimental`` and ``device_mesh`` are the new
    package's modules and its ``placement_types`` has the same classes, as in torch;
    ``implicit_replication`` lets a DTensor op take a plain tensor and gives the values torch
    gives, in a world of one."""
    import importlib
    import numpy as np
    import ptcore
    import ptcore.distributed as dist
    torch = pytest.importorskip("torch")
    names = ["DTensor", "DeviceMesh", "Replicate", "Shard", "distribute_tensor"]
    res = []
    for lib, prefix in ((ptcore, "ptcore"), (torch, "torch")):
        old = importlib.import_module(f"{prefix}.distributed._tensor")
        new = importlib.import_module(f"{prefix}.distributed.tensor")
        assert all(getattr(old, n) is getattr(new, n) for n in names)
        for sub in ("experimental", "device_mesh"):
            assert importlib.import_module(f"{prefix}.distributed._tensor.{sub}") is \
                importlib.import_module(f"{prefix}.distributed.tensor.{sub}")
        old_types = importlib.import_module(f"{prefix}.distributed._tensor.placement_types")
        assert old_types.Shard is new.Shard and old_types.Replicate is new.Replicate
        exp = importlib.import_module(f"{prefix}.distributed._tensor.experimental")
        d = lib.distributed
        d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1)
        try:
            mesh = new.DeviceMesh("cpu", [0])
            x = new.distribute_tensor(lib.arange(6.0).reshape(2, 3), mesh, [new.Replicate()])
            with exp.implicit_replication():
                y = x + lib.ones(2, 3)
            res.append((type(y).__name__, y.full_tensor().numpy()))
        finally:
            d.destroy_process_group()
    assert res[0][0] == res[1][0] == "DTensor"
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert dist is ptcore.distributed


def test_protocol_layer_goes_off_when_the_last_dtensor_is_gone():
    """DTensor joins __torch_function__ on its first instance, before making it: the
    core counts every instance, so the layer can go off when they are gone (it stayed on
    for the rest of the process, and every later op scanned its arguments)."""
    import gc
    import ptcore
    import ptcore.distributed as d
    from ptcore.distributed import tensor as dt
    from ptcore._dispatch import torch_function as tf
    d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1)
    try:
        mesh = dt.DeviceMesh("cpu", [0])
        x = dt.distribute_tensor(ptcore.arange(4.0), mesh, [dt.Replicate()])
        y = x * 2
        assert tf._instances_may_live()
        assert y.full_tensor().tolist() == [0.0, 2.0, 4.0, 6.0]
    finally:
        d.destroy_process_group()
    del x, y
    gc.collect()
    assert not tf._instances_may_live()
