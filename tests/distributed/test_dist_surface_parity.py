"""ptcore.distributed's surface against torch.distributed 2.13 as training scripts use it:
the names, Backend and DebugLevel, the stores' queues/list_keys/barrier/clone, the submodules
scripts import (distributed_c10d, constants, elastic's @record), DistributedSampler, and one
script of process-group calls run in spawned processes under torch (gloo) and under ptcore,
whose outputs must agree (dist_surface_workers.py)."""
import datetime
import json
import multiprocessing
import os
import socket
import time

import pytest

torch = pytest.importorskip("torch")

import ptcore  # noqa: E402
import ptcore.distributed as dist  # noqa: E402
import dist_surface_workers as workers  # noqa: E402

tdist = torch.distributed
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::FutureWarning")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exc(fn):
    try:
        return fn()
    except Exception as e:
        return "EXC:" + type(e).__name__


# ------------------------------------------------------------------------------ the names
NAMES = ["AllreduceOptions", "Backend", "DebugLevel", "QueueEmptyError", "GroupMember",
         "all_gather_coalesced", "all_reduce_coalesced", "breakpoint", "get_backend_config",
         "get_debug_level", "get_pg_count", "is_ucc_available", "is_xccl_available",
         "set_debug_level", "set_debug_level_from_env", "supports_complex", "algorithms",
         "constants", "distributed_c10d"]


def test_torch_names_exist():
    missing = [n for n in NAMES if hasattr(tdist, n) and not hasattr(dist, n)
               and n != "AllreduceOptions"]
    assert missing == []
    for n in ("is_ucc_available", "is_xccl_available"):
        assert getattr(dist, n)() is False
    assert not dist.is_initialized() and dist.get_pg_count() == 0 == tdist.get_pg_count()


def test_backend_names_as_torch():
    for name in ("GLOO", "gloo", "Nccl", "mpi", "UCC", "xccl", "undefined", "custom_x",
                 "cpu:gloo,cuda:nccl"):
        got, want = dist.Backend(name), tdist.Backend(name)
        assert got == want and type(got) is type(want) is str, name
    assert _exc(lambda: dist.Backend(1)) == _exc(lambda: tdist.Backend(1)) == "EXC:ValueError"
    for attr in ("UNDEFINED", "GLOO", "NCCL", "XCCL", "UCC", "MPI", "FAKE", "backend_list",
                 "default_device_backend_map", "backend_capability"):
        want = getattr(tdist.Backend, attr)
        if attr == "default_device_backend_map":
            # torch's map gains {'hpu': 'fake'} once anything in the process imports its fake
            # process group (other tests may have): the built-in entries are compared
            want = {k: v for k, v in want.items() if v != "fake"}
        assert getattr(dist.Backend, attr) == want, attr


def test_register_backend_records_the_name_and_init_refuses_it():
    B = dist.Backend
    saved = (list(B.backend_list), dict(B.backend_capability),
             dict(B.default_device_backend_map))
    try:
        B.register_backend("ptcsurf", lambda *a: None, devices=["cpu"])
        assert B.PTCSURF == "ptcsurf" and "ptcsurf" in B.backend_list
        assert B.backend_capability["ptcsurf"] == ["cpu"]
        assert _exc(lambda: B.register_backend("ptcsurf", lambda *a: None)) == \
            "EXC:ValueError"
        with pytest.raises(NotImplementedError, match="ptcsurf"):
            dist.init_process_group("ptcsurf", store=dist.HashStore(), rank=0, world_size=1)
        assert not dist.is_initialized()
    finally:
        delattr(B, "PTCSURF")
        B._plugins.pop("PTCSURF", None)
        B.backend_list[:] = saved[0]
        B.backend_capability.clear()
        B.backend_capability.update(saved[1])
        B.default_device_backend_map.clear()
        B.default_device_backend_map.update(saved[2])


def test_debug_level(monkeypatch):
    D, TD = dist.DebugLevel, tdist.DebugLevel
    assert [(m, int(v)) for m, v in D.__members__.items()] == \
        [(m, int(v)) for m, v in TD.__members__.items()]
    assert str(D.DETAIL) == str(TD.DETAIL) and repr(D.INFO) == repr(TD.INFO)
    old = dist.get_debug_level()
    try:
        for value in ("INFO", "detail", "OFF"):
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
            dist.set_debug_level_from_env()
            tdist.set_debug_level_from_env()
            assert dist.get_debug_level().name == tdist.get_debug_level().name
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "bogus")
        assert _exc(dist.set_debug_level_from_env) == \
            _exc(tdist.set_debug_level_from_env) == "EXC:ValueError"
        dist.set_debug_level(D.DETAIL)
        assert dist.get_debug_level() is D.DETAIL
        assert _exc(lambda: dist.set_debug_level(2)) == "EXC:TypeError"
    finally:
        dist.set_debug_level(old)
        tdist.set_debug_level(TD.OFF)


def test_supports_complex():
    for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        assert dist.supports_complex(getattr(dist.ReduceOp, op)) == \
            tdist.supports_complex(getattr(tdist.ReduceOp, op)), op


def test_groupmember_non_group_member():
    assert dist.GroupMember.NON_GROUP_MEMBER == tdist.GroupMember.NON_GROUP_MEMBER == -100


# ----------------------------------------------------------------------------- the stores
def _store_script(d, s, tmo):
    """The queue/list_keys/barrier/clone calls, with their results or exception types."""
    s.set_timeout(tmo)
    r = [_exc(lambda: s.queue_push("q", "a")), _exc(lambda: s.queue_push("q", b"b")),
         _exc(lambda: s.queue_len("q")), _exc(lambda: s.queue_len("none")),
         _exc(lambda: s.queue_pop("q")), _exc(lambda: s.queue_pop("q", block=False)),
         _exc(lambda: s.queue_pop("q", block=False)), _exc(lambda: s.queue_pop("q")),
         _exc(lambda: s.check(["q"]))]
    s.set("k1", "v")
    # (torch's FileStore lists its own reference-count key "efcount/" too)
    r += [_exc(lambda: sorted(k for k in s.list_keys() if k != "efcount/")), _exc(lambda: s.clone().get("k1")),
          _exc(lambda: s.barrier("b", 1)), _exc(lambda: s.barrier("b2", 2, tmo)),
          _exc(lambda: s.add("k1", 1)), _exc(lambda: s.queue_push("k1", "x")),
          _exc(lambda: s.get("k1")), _exc(lambda: s.queue_len("k1"))]
    return r


@pytest.mark.parametrize("kind", ["hash", "prefix", "tcp", "file"])
def test_store_queues_keys_barrier_clone_match_torch(kind, tmp_path):
    tmo = datetime.timedelta(seconds=0.2)
    results = []
    for d, name in ((tdist, "torch"), (dist, "ptcore")):
        if kind == "hash":
            s = d.HashStore()
        elif kind == "prefix":
            s = d.PrefixStore("pre", d.HashStore())
        elif kind == "tcp":
            s = d.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=30))
        else:
            s = d.FileStore(str(tmp_path / f"fs_{name}"), 1)
        out = _store_script(d, s, tmo)
        if kind == "file" and name == "ptcore":
            # torch's FileStore times out with a RuntimeError; ptcore's DistStoreError is one
            assert issubclass(dist.DistStoreError, RuntimeError)
            out = ["EXC:RuntimeError" if v == "EXC:DistStoreError" else v for v in out]
        if kind == "tcp" and name == "torch":
            # torch's TCPStore server drops the connection on add() to a non-integer value
            # (and every later call fails): compare up to there
            out = out[:13]
        results.append(out)
    n = min(len(r) for r in results)
    assert results[0][:n] == results[1][:n]
    if kind == "tcp":
        assert results[1][13:] == ["EXC:ValueError", None, b"v", 1]
    assert isinstance(_store_script(dist, dist.HashStore(), tmo)[6], str)


def test_queue_empty_error_is_a_store_error():
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError)
    assert [c.__name__ for c in dist.QueueEmptyError.__mro__[:4]] == \
        [c.__name__ for c in tdist.QueueEmptyError.__mro__[:4]]


def test_blocking_queue_pop_wakes_on_push():
    import threading
    server = dist.TCPStore("127.0.0.1", 0, None, True,
                           timeout=datetime.timedelta(seconds=30))
    client = server.clone()
    threading.Timer(0.2, lambda: server.queue_push("jobs", "late")).start()
    assert client.queue_pop("jobs") == b"late"
    assert client.list_keys() == [] and server.queue_len("jobs") == 0


def test_prefixstore_waits_use_the_timeout_it_was_given():
    # set_timeout on a PrefixStore (stored in the store under it) bounds its get/queue_pop
    s = dist.PrefixStore("p", dist.HashStore())
    s.set_timeout(datetime.timedelta(seconds=0.1))
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError):
        s.get("missing")
    with pytest.raises(dist.DistStoreError):
        s.queue_pop("missing")
    assert time.monotonic() - start < 5


# ------------------------------------------------------------------------- the submodules
def test_submodules_scripts_import():
    from ptcore.distributed.distributed_c10d import (ProcessGroup, _get_default_group,
                                                     _rank_not_in_group, get_rank)
    from ptcore.distributed.constants import default_pg_timeout
    from ptcore.distributed.elastic.multiprocessing.errors import ChildFailedError, record
    from ptcore.distributed.algorithms.join import Join  # noqa: F401
    assert dist.distributed_c10d.get_rank is dist.get_rank is get_rank
    assert ProcessGroup is dist.ProcessGroup
    assert default_pg_timeout == tdist.constants.default_pg_timeout
    assert dist.constants.default_pg_nccl_timeout == tdist.constants.default_pg_nccl_timeout
    assert _exc(_get_default_group) == _exc(tdist.distributed_c10d._get_default_group) == \
        "EXC:ValueError"
    assert _rank_not_in_group(None) is False and _rank_not_in_group(-100) is True
    assert dist.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook is not None
    assert callable(record) and issubclass(ChildFailedError, Exception)
    with pytest.raises(AttributeError):
        dist.no_such_submodule


def test_default_group_in_distributed_c10d():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.distributed_c10d._get_default_group() is dist.group.WORLD
        assert dist.get_backend_config() == "cpu:gloo,cuda:gloo"
        assert dist.get_pg_count() == 1
        g = dist.new_group([0], backend="gloo")
        assert dist.get_pg_count() == 2 and dist.get_backend_config(g) == "cpu:gloo,cuda:gloo"
        g2 = dist.new_group([0], group_desc="mine")
        w = dist.group.WORLD
        # torch's: '0' 'default_pg' '1' 'undefined' '2' 'mine', and no bound device
        assert (w.group_name, w.group_desc, g.group_name, g.group_desc, g2.group_name,
                g2.group_desc) == ("0", "default_pg", "1", "undefined", "2", "mine")
        assert w.bound_device_id is None
    finally:
        dist.destroy_process_group()
    assert dist.get_pg_count() == 0


@pytest.mark.parametrize("backend", [None, "gloo", "cpu:gloo", "GLOO", "mpi"])
def test_backend_config_matches_torch(backend):
    if backend == "mpi" or (backend is None and dist.is_mpi_available()):
        # torch has no MPI here; ptcore's MPI transport is named in the config
        want = {"mpi": "cpu:mpi,cuda:mpi", None: None}[backend]
    else:
        tdist.init_process_group(backend, store=tdist.HashStore(), rank=0, world_size=1)
        try:
            want = tdist.get_backend_config()
        finally:
            tdist.destroy_process_group()
    if backend == "mpi" and not dist.is_mpi_available():
        pytest.skip("mpi4py is not installed")
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        got = dist.get_backend_config()
        with pytest.raises(ValueError):
            dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    assert want is None or got == want


def _record_run(errors_module, path, monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))

    @errors_module.record
    def main(x):
        if x == "exit0":
            raise SystemExit(0)
        if x == "exit3":
            raise SystemExit(3)
        if x == "fail":
            raise KeyError("boom")
        return x * 2
    res = [main(21), main("exit0")]
    with pytest.raises(SystemExit) as exit3:
        main("exit3")
    res += [exit3.value.code, os.path.exists(path), _exc(lambda: main("fail"))]
    with open(path) as f:
        data = json.load(f)
    return res, data


def test_elastic_record_matches_torch(tmp_path, monkeypatch):
    from torch.distributed.elastic.multiprocessing import errors as terrors
    from ptcore.distributed.elastic.multiprocessing import errors as perrors
    tres, tdata = _record_run(terrors, tmp_path / "t.json", monkeypatch)
    pres, pdata = _record_run(perrors, tmp_path / "p.json", monkeypatch)
    assert tres == pres == [42, None, 3, False, "EXC:KeyError"]
    assert tdata["message"]["message"] == pdata["message"]["message"] == "KeyError: 'boom'"
    assert set(tdata["message"]["extraInfo"]) == set(pdata["message"]["extraInfo"])
    assert "KeyError" in pdata["message"]["extraInfo"]["py_callstack"]
    # a launcher's ChildFailedError: @record copies the first failure's record upward
    child = tmp_path / "child.json"
    child.write_text(json.dumps(tdata))
    failure = perrors.ProcessFailure(local_rank=0, pid=123, exitcode=1, error_file=str(child))
    assert failure.message == "KeyError: 'boom'"
    err = perrors.ChildFailedError("train.py", {0: failure})
    assert err.get_first_failure() == (0, failure) and "train.py FAILED" in str(err)

    @perrors.record
    def launcher():
        raise err
    with pytest.raises(perrors.ChildFailedError):
        launcher()
    assert json.loads((tmp_path / "p.json").read_text())["message"]["errorCode"] == 1


# --------------------------------------------------------------------- DistributedSampler
def test_distributed_sampler_matches_torch():
    from ptcore.utils.data.distributed import DistributedSampler as P
    from torch.utils.data.distributed import DistributedSampler as T
    for n in (0, 1, 7, 10, 13, 64):
        data = list(range(n))
        for replicas in (1, 2, 3, 4):
            for shuffle in (True, False):
                for drop_last in (True, False):
                    for seed in (0, 17):
                        for rank in range(replicas):
                            kw = dict(num_replicas=replicas, rank=rank, shuffle=shuffle,
                                      seed=seed, drop_last=drop_last)
                            p, t = P(data, **kw), T(data, **kw)
                            for epoch in (0, 3):
                                p.set_epoch(epoch)
                                t.set_epoch(epoch)
                                assert list(p) == list(t) and len(p) == len(t), (n, kw)
    for bad in (-1, 2):
        assert _exc(lambda: P(list(range(4)), num_replicas=2, rank=bad)) == \
            _exc(lambda: T(list(range(4)), num_replicas=2, rank=bad)) == "EXC:ValueError"
    assert _exc(lambda: P(list(range(4)))) == _exc(lambda: T(list(range(4)))) == \
        "EXC:ValueError"                          # no process group


# ------------------------------------------------------- one script under torch and ptcore
def _run_world(lib, size, outdir, timeout=400):
    ctx = multiprocessing.get_context("spawn")
    ports = (_free_port(), _free_port(), _free_port())
    procs = [ctx.Process(target=workers.surface, args=(r, size, lib, ports, str(outdir)))
             for r in range(size)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            p.join(max(deadline - time.monotonic(), 0.1))
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(5)
    assert [p.exitcode for p in procs] == [0] * size, f"{lib}: {[p.exitcode for p in procs]}"
    out = []
    for r in range(size):
        with open(os.path.join(outdir, f"{lib}.{r}.json")) as f:
            out.append(json.load(f))
    return out


# torch quirks the script meets, not copied: torch's gloo refuses ReduceOp.AVG (ptcore's
# socket backend averages, as its MPI backend and NCCL do)
_NOT_COMPARED = {"all_reduce_AVG"}


def _oracle_failures(want, got):
    """The entries where torch's gloo raised RuntimeError and ptcore answered a value: the
    oracle's own transport failing (seen once in CI under load: 11 collectives of one run
    raised), not an answer to compare against."""
    return sorted({k for w, g in zip(want, got) for k in w if k not in _NOT_COMPARED
                   and w[k] == "EXC:RuntimeError" and not str(g.get(k, "")).startswith("EXC:")})


def test_script_in_spawned_processes_matches_torch(tmp_path):
    size = 2
    got = _run_world("ptcore", size, tmp_path)
    # torch's run is the oracle; a run in which its gloo transport failed is run again (up
    # to three runs), and a failure that persists is reported as the oracle's, by name
    for attempt in range(3):
        want = _run_world("torch", size, tmp_path)
        failed = _oracle_failures(want, got)
        if not failed:
            break
    assert not failed, f"torch's gloo raised RuntimeError in {failed} in three runs"
    for r in range(size):
        keys = set(want[r]) | set(got[r])
        diff = {k: (want[r].get(k, "MISSING"), got[r].get(k, "MISSING")) for k in sorted(keys)
                if k not in _NOT_COMPARED and want[r].get(k, "MISSING") != got[r].get(k)}
        assert diff == {}, f"rank {r}: (torch, ptcore) {diff}"
        assert got[r]["all_reduce_AVG"] == {"tensor": [1, 6], "dtype": "int64"}
    assert got[1]["non_member"] is True and got[1]["group_rank_size"] == [-1, -1]
