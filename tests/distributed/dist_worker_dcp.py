"""Worker (mpiexec -n N): ptcore.distributed.checkpoint with N ranks.

``python dist_worker_dcp.py DIR`` saves and loads checkpoints under DIR: a plain model
with Adam (training resumes exactly as without the checkpoint), DDP and FSDP models via
get_state_dict / set_state_dict, deduplication of replicated tensors (each written once),
rank-specific keys, errors reported on every rank.  It leaves ``DIR/plain`` and
``DIR/fsdp`` with ``expected_*.npz`` for the test to load in a single process."""
import functools
import json
import os
import sys
import warnings

import numpy as np

import ptcore
import ptcore.distributed as dist
import ptcore.distributed.checkpoint as dcp
from ptcore import nn
from ptcore.distributed.checkpoint.state_dict import (
    StateDictOptions, get_state_dict, set_state_dict,
)
from ptcore.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy
from ptcore.distributed.fsdp.wrap import ModuleWrapPolicy

warnings.simplefilter("ignore", DeprecationWarning)
dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
ROOT = sys.argv[1]
ptcore.set_default_dtype(ptcore.float64)


def ok(stage):
    print(f"OK-DCP {stage} rank={rank}", flush=True)


def model(seed):
    ptcore.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(),
                         nn.Linear(8, 3))


def batch(step, local):
    g = np.random.default_rng(100 + step)
    x, y = g.standard_normal((4 * world, 5)), g.standard_normal((4 * world, 3))
    if local:  # this rank's part of the global batch
        x, y = x[4 * rank:4 * rank + 4], y[4 * rank:4 * rank + 4]
    return ptcore.tensor(x), ptcore.tensor(y)


def train(m, opt, steps, start, local=False):
    losses = []
    for s in range(start, start + steps):
        x, y = batch(s, local)
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def save_expected(path, sd):
    if rank == 0:
        np.savez(os.path.join(path, "expected_model.npz"),
                 **{k: v.detach().numpy() for k, v in sd.items()})
    dist.barrier()


def resume_case(tag, wrap, local):
    """Train, checkpoint, train on; a fresh (differently initialized) model restored from
    the checkpoint trains on with exactly the same losses."""
    path = os.path.join(ROOT, tag)
    m = wrap(model(0))
    opt = ptcore.optim.Adam(m.parameters(), lr=0.01)
    train(m, opt, 3, 0, local)
    msd, osd = get_state_dict(m, opt)
    assert all(not k.startswith(("module.", "_fsdp")) for k in msd), list(msd)
    assert sorted(msd) == sorted(model(0).state_dict()), list(msd)
    assert sorted(osd["state"]) == sorted(msd), list(osd["state"])
    dcp.save({"model": msd, "optim": osd, "step": 3}, checkpoint_id=path)
    save_expected(path, msd)
    ref = train(m, opt, 3, 3, local)

    m2 = wrap(model(1))
    opt2 = ptcore.optim.Adam(m2.parameters(), lr=0.5)
    msd2, osd2 = get_state_dict(m2, opt2)
    state = {"model": msd2, "optim": osd2, "step": 0}
    dcp.load(state, checkpoint_id=path)
    assert state["step"] == 3 and state["optim"]["param_groups"][0]["lr"] == 0.01
    keys = set_state_dict(m2, opt2, model_state_dict=state["model"],
                          optim_state_dict=state["optim"])
    assert not keys.missing_keys and not keys.unexpected_keys, keys
    got = train(m2, opt2, 3, 3, local)
    assert got == ref, (tag, got, ref)
    ok(tag)


def index(path):
    with open(os.path.join(path, ".metadata")) as f:
        return json.load(f)["items"]


def dedup_case():
    """Replicated tensors are written once (default: balanced over the ranks; or all by
    the lowest rank); a rank's own keys by that rank."""
    m = model(0)
    sd = dict(m.state_dict())
    sd[f"own{rank}"] = ptcore.full((3,), float(rank))
    for lowest in (False, True):
        path = os.path.join(ROOT, f"dedup{int(lowest)}")
        planner = dcp.DefaultSavePlanner(dedup_save_to_lowest_rank=lowest)
        md = dcp.save(sd, checkpoint_id=path, planner=planner)
        items = index(path)
        assert sorted(items) == sorted(set(m.state_dict()) | {f"own{r}" for r in range(world)})
        assert sorted(md.state_dict_metadata) == sorted(items)
        files = {}
        for key, item in items.items():
            rec = item["tensor"]
            files.setdefault(rec["file"], []).append(rec)
            t = m.state_dict().get(key, ptcore.empty(3))
            assert rec["nbytes"] == t.numel() * 8 and rec["shape"] == list(t.shape)
        for name, recs in files.items():  # each file holds exactly its tensors, once
            assert os.path.getsize(os.path.join(path, name)) == sum(r["nbytes"] for r in recs)
            spans = sorted((r["offset"], r["offset"] + r["nbytes"]) for r in recs)
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
        for r in range(world):
            assert items[f"own{r}"]["tensor"]["file"] == f"__{r}_0.distcp"
        writers = {item["tensor"]["file"] for k, item in items.items() if not k.startswith("own")}
        assert writers == ({"__0_0.distcp"} if lowest or world == 1 else
                           {f"__{r}_0.distcp" for r in range(world)}), writers
        back = {k: ptcore.zeros_like(v) for k, v in sd.items()}
        objs = dict(back)
        dcp.load(back, checkpoint_id=path)
        for k, v in sd.items():
            assert back[k] is objs[k] and bool((back[k] == v).all()), k
    ok("dedup")


def errors_case():
    path = os.path.join(ROOT, "plain")
    # a key missing on every rank
    try:
        dcp.load({"nope": ptcore.zeros(1)}, checkpoint_id=path)
        raise AssertionError("no error")
    except dcp.CheckpointException as e:
        assert sorted(e.failures) == list(range(world)), e.failures
        assert all(isinstance(exc, RuntimeError) for exc, _ in e.failures.values())
    # a failure on the last rank only is raised on every rank
    sd = {"step": 0} if rank != world - 1 else {"step": 0, "nope": ptcore.zeros(1)}
    try:
        dcp.load(sd, checkpoint_id=path, planner=dcp.DefaultLoadPlanner())
        raise AssertionError("no error")
    except dcp.CheckpointException as e:
        assert sorted(e.failures) == [world - 1], e.failures
    # a shape mismatch
    try:
        dcp.load({"model": {"0.weight": ptcore.zeros(2, 2)}}, checkpoint_id=path)
        raise AssertionError("no error")
    except dcp.CheckpointException as e:
        assert all(isinstance(exc, ValueError) for exc, _ in e.failures.values())
    # an existing checkpoint with overwrite=False
    try:
        dcp.save({"x": 1}, storage_writer=dcp.FileSystemWriter(path, overwrite=False))
        raise AssertionError("no error")
    except dcp.CheckpointException as e:
        assert all(isinstance(exc, RuntimeError) for exc, _ in e.failures.values())
    # a partial load is allowed with allow_partial_load
    part = {"step": 0, "nope": 5}
    dcp.load(part, checkpoint_id=path, planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    assert part == {"step": 3, "nope": 5}
    ok("errors")


def broadcast_case():
    """broadcast_from_rank0: rank 0 alone holds the state dicts; every rank gets them."""
    src = model(0)
    opt = ptcore.optim.Adam(src.parameters(), lr=0.02)
    train(src, opt, 2, 0)
    opts = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    # full + cpu_offload: rank 0 alone gets the state dicts (as torch)
    msd, osd = get_state_dict(src, opt,
                              options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    assert (msd == {} and osd == {}) if rank else (len(msd) == 6 and len(osd["state"]) == 6)
    m = model(rank + 5)
    o = ptcore.optim.Adam(m.parameters(), lr=0.3)
    set_state_dict(m, o, model_state_dict=msd, optim_state_dict=osd, options=opts)
    for (k, a), b in zip(src.state_dict().items(), m.state_dict().values()):
        assert bool((a == b).all()), k
    assert o.param_groups[0]["lr"] == 0.02
    assert train(m, o, 2, 2) == train(src, opt, 2, 2)
    ok("broadcast")


def ddp(m):
    return nn.parallel.DistributedDataParallel(m)


fsdp = functools.partial(FSDP, sharding_strategy=ShardingStrategy.FULL_SHARD,
                         auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))

resume_case("plain", lambda m: m, local=False)
resume_case("ddp", ddp, local=True)
resume_case("fsdp", fsdp, local=True)
dedup_case()
errors_case()
broadcast_case()
dist.barrier()
