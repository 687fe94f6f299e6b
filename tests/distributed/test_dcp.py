"""ptcore.distributed.checkpoint (DCP): save/load in one process (no process group, or
no_dist=True) and with 2 and 3 MPI ranks (dist_worker_dcp.py; skipped without mpiexec),
the 2-rank checkpoints loaded back in this single process, and the state-dict helpers
compared with torch's where torch is installed."""
import dataclasses
import json
import os
import re
import warnings

import numpy as np
import pytest

import ptcore
import ptcore.distributed.checkpoint as dcp
from ptcore import nn
from ptcore.distributed.checkpoint.state_dict import (
    StateDictOptions, get_model_state_dict, get_optimizer_state_dict, get_state_dict,
    set_model_state_dict, set_optimizer_state_dict, set_state_dict,
)
from dist_launch import run_mpi

pytestmark = pytest.mark.filterwarnings(
    "ignore:ptcore.distributed is unavailable or uninitialized:UserWarning",
    "ignore:Detected an existing checkpoint:UserWarning")


def _model(seed=0):
    ptcore.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


def _train(m, opt, steps, start):
    losses = []
    for s in range(start, start + steps):
        g = np.random.default_rng(s)
        x = ptcore.tensor(g.standard_normal((6, 5)), dtype=ptcore.float32)
        y = ptcore.tensor(g.standard_normal((6, 3)), dtype=ptcore.float32)
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _items(path):
    with open(os.path.join(path, ".metadata")) as f:
        return json.load(f)["items"]


# ------------------------------------------------------------------ multi-rank (mpiexec)
@pytest.mark.parametrize("n", [2, 3])
def test_multi_rank_save_load(n, tmp_path):
    p = run_mpi("dist_worker_dcp.py", n, tmp_path, timeout=120)
    assert p.returncode == 0, p.stdout
    for stage in ("plain", "ddp", "fsdp", "dedup", "errors", "broadcast"):
        got = sorted(int(r) for r in re.findall(rf"OK-DCP {stage} rank=(\d+)", p.stdout))
        assert got == list(range(n)), (stage, p.stdout)
    # the checkpoints of n ranks load into one process (replicated state)
    for tag in ("plain", "ddp", "fsdp"):
        path = tmp_path / tag
        expected = np.load(path / "expected_model.npz")
        m = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(),
                          nn.Linear(8, 3)).double()
        opt = ptcore.optim.Adam(m.parameters(), lr=0.3)
        msd, osd = get_state_dict(m, opt)
        state = {"model": msd, "optim": osd, "step": 0}
        dcp.load(state, checkpoint_id=path, no_dist=True)
        set_state_dict(m, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        assert state["step"] == 3 and opt.param_groups[0]["lr"] == 0.01
        assert sorted(expected.files) == sorted(m.state_dict())
        for k, v in m.state_dict().items():
            np.testing.assert_array_equal(v.numpy(), expected[k], err_msg=f"{tag} {k}")
        steps = {s["step"].item() for s in opt.state_dict()["state"].values()}
        assert steps == {3.0}, (tag, steps)


# ------------------------------------------------------------------ one process
def test_round_trip_nested_in_place(tmp_path):
    sd = {"a": ptcore.arange(6.0).reshape(2, 3),
          "n": {"b": ptcore.ones(2, dtype=ptcore.float64), "i": 3, "s": "x",
                "l": [ptcore.zeros(1), 5, {"q": 1.5}], 7: None},
          "f": 2.5, "plain": [1, [2, "z"]], "tup": (1, 2.0, None, True),
          "kinds": {"dt": ptcore.bfloat16, "size": ptcore.Size([2, 3]), "c": 1 + 2j,
                    "inf": float("inf"), "d": ({1: "one", (2, 3): [4.0]},)}}
    md = dcp.save(sd, checkpoint_id=tmp_path, no_dist=True)
    assert sorted(md.state_dict_metadata) == sorted(
        ["a", "n.b", "n.i", "n.s", "n.l.0", "n.l.1", "n.l.2.q", "n.7", "f", "plain", "tup",
         "kinds.dt", "kinds.size", "kinds.c", "kinds.inf", "kinds.d"])
    assert isinstance(md.state_dict_metadata["a"], dcp.TensorStorageMetadata)
    assert md.state_dict_metadata["a"].size == ptcore.Size([2, 3])
    assert md.state_dict_metadata["a"].properties.dtype == ptcore.float32
    assert isinstance(md.state_dict_metadata["n.i"], dcp.BytesStorageMetadata)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    assert os.path.getsize(tmp_path / "__0_0.distcp") == 6 * 4 + 2 * 8 + 4

    target = {"a": ptcore.zeros(2, 3, dtype=ptcore.float64),
              "n": {"b": ptcore.zeros(2, dtype=ptcore.float64), "i": 0, "s": "",
                    "l": [ptcore.ones(1), 0, {"q": 0.0}], 7: "x"},
              "f": 0.0, "plain": None, "tup": None,
              "kinds": {"dt": None, "size": None, "c": None, "inf": None, "d": None}}
    a, b, l0 = target["a"], target["n"]["b"], target["n"]["l"][0]
    inner = target["n"]
    dcp.load(target, checkpoint_id=tmp_path, no_dist=True)
    # tensors are filled in place (cast to the target's dtype), other values replaced
    assert target["a"] is a and target["n"] is inner and target["n"]["b"] is b
    assert target["n"]["l"][0] is l0 and a.dtype == ptcore.float64
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(b.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(l0.numpy(), [0.0])
    assert target["n"]["i"] == 3 and target["n"]["s"] == "x" and target["n"][7] is None
    assert target["n"]["l"][1:] == [5, {"q": 1.5}] and target["f"] == 2.5
    assert target["plain"] == [1, [2, "z"]] and target["tup"] == (1, 2.0, None, True)
    assert target["kinds"] == sd["kinds"]
    assert isinstance(target["kinds"]["size"], ptcore.Size)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int8", "uint8", "bool", "complex64"])
def test_dtypes_shapes_and_views(dtype, tmp_path):
    dt = getattr(ptcore, dtype)
    g = np.random.default_rng(0)
    base = ptcore.tensor(g.standard_normal((4, 3)) * 5).to(dt)
    sd = {"view": base.t(), "scalar": base[1, 2], "empty": base[:0], "slice": base[1:3, ::2]}
    dcp.save(sd, checkpoint_id=tmp_path, no_dist=True)
    target = {k: ptcore.zeros(v.shape, dtype=dt) for k, v in sd.items()}
    dcp.load(target, checkpoint_id=tmp_path, no_dist=True)
    for k, v in sd.items():
        assert target[k].shape == v.shape and target[k].dtype == dt
        assert bool((target[k] == v).all()), k


def test_model_and_adam_resume_identically(tmp_path):
    m = _model(0)
    opt = ptcore.optim.Adam(m.parameters(), lr=0.01)
    _train(m, opt, 3, 0)
    dcp.save({"model": m, "optim": opt}, checkpoint_id=tmp_path)   # Stateful objects
    ref = _train(m, opt, 3, 3)
    m2 = _model(1)
    opt2 = ptcore.optim.Adam(m2.parameters(), lr=0.5)
    _train(m2, opt2, 1, 0)                     # the optimizer has state to be replaced
    state = {"model": m2, "optim": opt2}
    dcp.load(state, checkpoint_id=tmp_path)
    assert state["model"] is m2 and state["optim"] is opt2
    assert opt2.param_groups[0]["lr"] == 0.01
    assert _train(m2, opt2, 3, 3) == ref


def test_state_dict_helpers_round_trip(tmp_path):
    m = _model(0)
    opt = ptcore.optim.Adam(m.parameters(), lr=0.01)
    _train(m, opt, 2, 0)
    msd, osd = get_state_dict(m, opt)
    assert list(msd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(osd["state"]) == list(msd) and osd["param_groups"][0]["params"] == list(msd)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=tmp_path)
    ref = _train(m, opt, 2, 2)
    m2 = _model(1)
    opt2 = ptcore.optim.Adam(m2.parameters(), lr=0.5)
    msd2, osd2 = get_state_dict(m2, opt2)
    weight = msd2["0.weight"]
    dcp.load({"model": msd2, "optim": osd2}, checkpoint_id=tmp_path)
    assert msd2["0.weight"] is weight
    keys = set_state_dict(m2, opt2, model_state_dict=msd2, optim_state_dict=osd2)
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    assert _train(m2, opt2, 2, 2) == ref


def test_flat_optimizer_state_dict_round_trip():
    m = _model(0)
    opt = ptcore.optim.Adam(m.parameters(), lr=0.03)
    _train(m, opt, 2, 0)
    flat_opts = StateDictOptions(flatten_optimizer_state_dict=True)
    flat = get_optimizer_state_dict(m, opt, options=flat_opts)
    assert "state.0.weight.exp_avg" in flat and flat["param_groups.2.bias.lr"] == 0.03
    m2 = _model(0)
    opt2 = ptcore.optim.Adam(m2.parameters())
    set_optimizer_state_dict(m2, opt2, flat, options=flat_opts)
    a, b = opt.state_dict(), opt2.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for i, s in a["state"].items():
        for k, v in s.items():
            assert bool((v == b["state"][i][k]).all()), (i, k)


def test_ddp_prefix_is_stripped_in_one_process():
    m = _model(0)
    wrapped = nn.DataParallel(m)
    msd = get_model_state_dict(wrapped)
    assert list(msd) == list(m.state_dict())
    target = _model(1)
    set_model_state_dict(nn.DataParallel(target), msd)
    for k, v in m.state_dict().items():
        assert bool((target.state_dict()[k] == v).all()), k


def test_dedup_and_file_layout_options(tmp_path):
    sd = {"w": ptcore.ones(4, 4), "b": ptcore.zeros(3), "n": 1}
    dcp.save(sd, storage_writer=dcp.FileSystemWriter(tmp_path, single_file_per_rank=False))
    items = _items(tmp_path)
    assert items["n"] == {"value": 1}
    assert {items[k]["tensor"]["file"] for k in ("w", "b")} == {"__0_0.distcp", "__0_1.distcp"}
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp", "__0_1.distcp"]
    # dedup as torch: the replicated item goes to the holder with the fewest bytes so far,
    # or to the lowest rank
    plans = [[("a", 100), ("b", 4)], [("a", 100), ("b", 4), ("c", None)], [("b", 4)]]
    assert dcp.DefaultSavePlanner()._assign(plans) == [{"a"}, {"b", "c"}, set()]
    assert dcp.DefaultSavePlanner(dedup_save_to_lowest_rank=True)._assign(plans) == \
        [{"a", "b"}, {"c"}, set()]


def test_dedup_matches_torch():
    pytest.importorskip("torch")
    from torch.distributed.checkpoint._dedup_save_plans import dedup_save_plans
    from torch.distributed.checkpoint.metadata import MetadataIndex
    from torch.distributed.checkpoint.planner import SavePlan, WriteItem, WriteItemType
    sizes = {"a": 100, "b": 4, "c": None, "d": 40, "e": 8}
    holders = [["a", "b", "d"], ["a", "b", "c", "e"], ["b", "d", "e"], ["a", "e"]]

    def item(k):
        return WriteItem(MetadataIndex(k), WriteItemType.BYTE_IO) if sizes[k] is None else \
            _torch_tensor_item(k, sizes[k])

    for lowest in (False, True):
        theirs = dedup_save_plans([SavePlan([item(k) for k in ks]) for ks in holders], lowest)
        mine = dcp.DefaultSavePlanner(dedup_save_to_lowest_rank=lowest)._assign(
            [[(k, sizes[k]) for k in ks] for ks in holders])
        assert mine == [{i.index.fqn for i in p.items} for p in theirs]


def _torch_tensor_item(key, nbytes):
    import torch
    from torch.distributed.checkpoint.metadata import (
        ChunkStorageMetadata, MetadataIndex, TensorProperties,
    )
    from torch.distributed.checkpoint.planner import TensorWriteData, WriteItem, WriteItemType
    n = nbytes // 4
    return WriteItem(MetadataIndex(key), WriteItemType.TENSOR, TensorWriteData(
        ChunkStorageMetadata(torch.Size([0]), torch.Size([n])),
        TensorProperties(dtype=torch.float32), torch.Size([n])))


def test_errors(tmp_path):
    sd = {"a": ptcore.zeros(2, 3), "i": 1}
    dcp.save(sd, checkpoint_id=tmp_path)
    assert not issubclass(dcp.CheckpointException, Exception)     # as torch

    def failure(target, path=tmp_path, **kw):
        with pytest.raises(dcp.CheckpointException) as info:
            dcp.load(target, checkpoint_id=path, **kw)
        assert list(info.value.failures) == [0]
        return info.value.failures[0][0]

    assert isinstance(failure({"a": ptcore.zeros(2, 3)}, tmp_path / "missing"),
                      FileNotFoundError)
    exc = failure({"zz": ptcore.zeros(1)})
    assert type(exc) is RuntimeError and "zz" in str(exc)
    assert type(failure({"a": ptcore.zeros(3, 2)})) is ValueError
    assert type(failure({"a": 5})) is ValueError
    with pytest.raises(RuntimeError, match="checkpoint_id"):
        dcp.save(sd)
    with pytest.raises(RuntimeError, match="checkpoint_id"):
        dcp.load(sd)
    with pytest.raises(dcp.CheckpointException) as info:       # never pickled
        dcp.save({"obj": object()}, checkpoint_id=tmp_path / "other")
    assert isinstance(info.value.failures[0][0], TypeError)
    with pytest.raises(dcp.CheckpointException) as info:
        dcp.save(sd, storage_writer=dcp.FileSystemWriter(tmp_path, overwrite=False))
    assert isinstance(info.value.failures[0][0], RuntimeError)
    with pytest.raises(NotImplementedError):
        dcp.DefaultSavePlanner(flatten_state_dict=False)
    with pytest.raises(ValueError, match="full_state_dict"):
        get_model_state_dict(_model(), options=StateDictOptions(broadcast_from_rank0=True))
    # a partial load leaves the missing keys alone
    part = {"a": ptcore.ones(2, 3), "zz": 7}
    dcp.load(part, checkpoint_id=tmp_path,
             planner=dcp.DefaultLoadPlanner(allow_partial_load=True))
    assert part["zz"] == 7 and float(part["a"].sum()) == 0.0


def test_corrupt_metadata_is_refused(tmp_path):
    dcp.save({"a": 1}, checkpoint_id=tmp_path)
    doc = json.loads((tmp_path / ".metadata").read_text())
    doc["items"]["a"] = {"value": {"os.system": "echo hi"}}
    (tmp_path / ".metadata").write_text(json.dumps(doc))
    with pytest.raises(dcp.CheckpointException) as info:
        dcp.load({"a": 0}, checkpoint_id=tmp_path)
    assert isinstance(info.value.failures[0][0], ValueError)
    (tmp_path / ".metadata").write_text('{"format": "other"}')
    with pytest.raises(dcp.CheckpointException):
        dcp.load({"a": 0}, checkpoint_id=tmp_path)


def test_no_process_group_warns_and_no_dist_does_not(tmp_path):
    import ptcore.distributed as dist
    if dist.is_initialized():
        pytest.skip("a process group is initialized in this process")
    with pytest.warns(UserWarning, match="single process"):
        dcp.save({"a": 1}, checkpoint_id=tmp_path / "x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dcp.save({"a": 1}, checkpoint_id=tmp_path / "y", no_dist=True)
        dcp.load({"a": 0}, checkpoint_id=tmp_path / "y", no_dist=True)


def test_async_save_returns_a_done_future(tmp_path):
    fut = dcp.async_save({"a": ptcore.ones(2)}, checkpoint_id=tmp_path, no_dist=True)
    assert fut.done() and isinstance(fut.result(), dcp.Metadata)
    target = {"a": ptcore.zeros(2)}
    dcp.load(target, checkpoint_id=tmp_path, no_dist=True)
    assert target["a"].tolist() == [1.0, 1.0]
    bad = dcp.async_save({"a": object()}, checkpoint_id=tmp_path / "b", no_dist=True)
    with pytest.raises(dcp.CheckpointException):
        bad.result()


def test_reader_writer_reset(tmp_path):
    writer = dcp.FileSystemWriter(tmp_path / "one")
    dcp.save({"a": 2}, storage_writer=writer, checkpoint_id=tmp_path / "two", no_dist=True)
    assert writer.path == os.fspath(tmp_path / "two")
    assert os.path.exists(tmp_path / "two" / ".metadata")
    assert not os.path.exists(tmp_path / "one")
    reader = dcp.FileSystemReader(tmp_path / "two")
    assert isinstance(reader.read_metadata().state_dict_metadata["a"],
                      dcp.BytesStorageMetadata)


# ------------------------------------------------------------------ against torch
def test_flattened_keys_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    import torch.distributed.checkpoint as tdcp

    def build(lib):
        return {"a": lib.ones(2), "n": {"b": lib.zeros(1), "i": 3,
                                        "l": [lib.ones(1), 5, {"q": 1.5}], "p": [1, 2]},
                "t": (1, 2), "e": {}}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = tdcp.save(build(torch), checkpoint_id=tmp_path / "torch", no_dist=True)
    mine = dcp.save(build(ptcore), checkpoint_id=tmp_path / "ptcore", no_dist=True)
    assert sorted(mine.state_dict_metadata) == sorted(theirs.state_dict_metadata)
    for k, v in theirs.state_dict_metadata.items():
        assert type(mine.state_dict_metadata[k]).__name__ == type(v).__name__, k


def _both(build):
    torch = pytest.importorskip("torch")
    import torch.distributed.checkpoint.state_dict as tsd
    import ptcore.distributed.checkpoint.state_dict as psd
    return build(torch, tsd), build(ptcore, psd)


def _same(a, b):
    if hasattr(a, "detach"):
        np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        return
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b, (a, b)


def test_state_dicts_match_torch():
    def build(lib, sd):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Linear(4, 2))
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1))
        m[0].bias.requires_grad_(False)
        opt = lib.optim.Adam(m.parameters(), lr=0.02)
        out = {"fresh": sd.get_state_dict(m, opt)}       # state created by a zero step
        x = lib.linspace(-2, 2, 15).reshape(5, 3)
        opt.zero_grad()
        (m(x) ** 2).sum().backward()
        opt.step()
        out["trained"] = sd.get_state_dict(m, opt)
        out["frozen"] = list(sd.get_model_state_dict(
            m, options=sd.StateDictOptions(ignore_frozen_params=True)))
        out["sub"] = list(sd.get_model_state_dict(
            m, submodules={m[1]}, options=sd.StateDictOptions(keep_submodule_prefixes=False)))
        out["flat"] = sd.get_optimizer_state_dict(
            m, opt, options=sd.StateDictOptions(flatten_optimizer_state_dict=True))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, mine = _both(build)
    for key in theirs:
        _same(theirs[key], mine[key])


def test_options_match_torch():
    pytest.importorskip("torch")
    from torch.distributed.checkpoint.state_dict import StateDictOptions as T
    theirs = {f.name: f.default for f in dataclasses.fields(T) if f.name != "dsd_fqn_modifiers"}
    assert {f.name: f.default for f in dataclasses.fields(StateDictOptions)} == theirs


def test_resume_matches_torch(tmp_path):
    """The same model and Adam in torch and ptcore: trained, checkpointed with each
    library's DCP through get_state_dict, restored into a fresh model, trained on: the same
    state after loading and the same losses."""
    def run(lib, dcp_mod, sd):
        def make(scale):
            m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
            with lib.no_grad():
                for i, p in enumerate(m.parameters()):
                    p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape) * scale * (i + 1))
            return m, lib.optim.Adam(m.parameters(), lr=0.05 * scale)

        def train(m, opt, start):
            out = []
            for s in range(start, start + 2):
                x = lib.linspace(-2, 2, 15).reshape(5, 3) * (s + 1)
                opt.zero_grad()
                loss = (m(x) ** 2).mean()
                loss.backward()
                opt.step()
                out.append(loss.item())
            return out

        m, opt = make(1.0)
        train(m, opt, 0)
        msd, osd = sd.get_state_dict(m, opt)
        path = tmp_path / lib.__name__
        dcp_mod.save({"model": msd, "optim": osd}, checkpoint_id=path, no_dist=True)
        m2, opt2 = make(0.5)
        msd2, osd2 = sd.get_state_dict(m2, opt2)
        dcp_mod.load({"model": msd2, "optim": osd2}, checkpoint_id=path, no_dist=True)
        sd.set_state_dict(m2, opt2, model_state_dict=msd2, optim_state_dict=osd2)
        return sd.get_state_dict(m2, opt2), train(m2, opt2, 2)

    torch = pytest.importorskip("torch")
    import torch.distributed.checkpoint as tdcp
    import torch.distributed.checkpoint.state_dict as tsd
    import ptcore.distributed.checkpoint.state_dict as psd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = run(torch, tdcp, tsd)
    mine = run(ptcore, dcp, psd)
    _same(theirs[0], mine[0])
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-5)
