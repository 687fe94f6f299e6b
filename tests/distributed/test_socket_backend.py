"""ptcore.distributed without an MPI launcher: the stores (HashStore, FileStore, PrefixStore,
TCPStore) against torch's, and worlds of 2 and 3 processes started by
``ptcore.multiprocessing.spawn`` that rendezvous through ``env://``, torchrun variables,
``tcp://``, ``file://`` or ``store=`` and talk over sockets ("gloo"): the collectives,
point-to-point messages, sub-groups, failures (a dead peer, a timeout) and DDP training that
must end with torch's weights.

The workers live in dist_socket_workers.py; every spawn is bounded by a timeout and its
processes are killed when it fails.
"""
import datetime
import os
import socket
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ptcore  # noqa: E402
import ptcore.distributed as dist  # noqa: E402
import dist_socket_workers as workers  # noqa: E402
from ptcore.multiprocessing import spawn  # noqa: E402

tdist = torch.distributed
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(fn, size, how, where, outdir, timeout=400):
    """Run ``fn(rank, size, how, where, outdir)`` in ``size`` spawned processes; kill them
    if they do not all finish within ``timeout`` seconds."""
    ctx = spawn(fn, args=(size, how, where, str(outdir)), nprocs=size, join=False)
    deadline = time.monotonic() + timeout
    try:
        while not ctx.join(timeout=max(deadline - time.monotonic(), 0.01)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{fn.__name__}: the {size} processes did not finish "
                                   f"within {timeout} s")
    finally:
        for p in ctx.processes:
            if p.is_alive():
                p.kill()
            p.join(5)
        for f in ctx.error_files:
            if os.path.exists(f):
                os.unlink(f)


def _load(outdir, name, size):
    return [np.load(os.path.join(outdir, f"{name}.{r}.npy")) for r in range(size)]


# ----------------------------------------------------------------------------- the stores
def _store_script(s, timeout_error):
    """The same sequence of store calls on torch's and ptcore's stores: what they return,
    and the exception types they raise."""
    out = []
    s.set("a", "x")
    s.set("b", b"\x00\x01")
    out += [s.get("a"), s.get("b"), s.add("n", 3), s.add("n", -1), s.get("n")]
    out += [s.compare_set("a", "x", "y"), s.compare_set("a", "zz", "w"),
            s.compare_set("new", "", "v"), s.compare_set("new2", "q", "v"), s.check(["new2"])]
    out += [s.check(["a", "n"]), s.check(["a", "nope"]), s.delete_key("a"), s.delete_key("a")]
    s.append("ap", "1")
    s.append("ap", b"2")
    s.multi_set(["m1", "m2"], ["1", b"2"])
    out += [s.get("ap"), s.multi_get(["m1", "m2"]), s.timeout]
    s.set_timeout(datetime.timedelta(milliseconds=100))
    for call in (lambda: s.get("missing"), lambda: s.wait(["missing"]),
                 lambda: s.wait(["nope2"], datetime.timedelta(milliseconds=50))):
        with pytest.raises(timeout_error):
            call()
    out.append(s.timeout)
    s.wait(["b", "n"])
    return out


def test_hashstore_matches_torch():
    assert _store_script(dist.HashStore(), dist.DistStoreError) == \
        _store_script(tdist.HashStore(), tdist.DistStoreError)
    assert issubclass(dist.DistStoreError, RuntimeError)
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistStoreError, dist.DistError)


def test_prefixstore_and_num_keys():
    for mod in (dist, tdist):
        base = mod.HashStore()
        p = mod.PrefixStore("pre", base)
        p.set("k", "v")
        assert base.get("pre/k") == b"v" and p.get("k") == b"v"
        assert p.underlying_store is base
        assert p.add("c", 2) == 2 and base.get("pre/c") == b"2"
        assert base.num_keys() == 2
        assert p.check(["k"]) and not base.check(["k"])


def test_filestore_matches_torch(tmp_path):
    ours = dist.FileStore(str(tmp_path / "ours"), 1)
    theirs = tdist.FileStore(str(tmp_path / "theirs"), 1)
    # torch's FileStore times out with a plain RuntimeError (DistStoreError is one), and its
    # delete_key says True for a key that is not there (entry 13; against its documentation)
    got, want = _store_script(ours, RuntimeError), _store_script(theirs, RuntimeError)
    assert got[13] is False and want[13] is True
    assert got[:13] + got[14:] == want[:13] + want[14:]
    # a second store on the same file sees the keys (another process would too)
    other = dist.FileStore(str(tmp_path / "ours"), 1)
    assert other.get("b") == b"\x00\x01" and other.add("n", 10) == 12 and ours.get("n") == b"12"


def test_tcpstore_in_one_process():
    server = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                           timeout=datetime.timedelta(seconds=10))
    assert server.port > 0 and server.host == "127.0.0.1" and server.libuvBackend
    client = dist.TCPStore("127.0.0.1", server.port, timeout=datetime.timedelta(seconds=10))
    client.set("k", "v")
    assert server.get("k") == b"v"
    theirs = tdist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                            timeout=datetime.timedelta(seconds=10))
    assert _store_script(client, dist.DistStoreError) == \
        _store_script(theirs, tdist.DistStoreError)
    with pytest.raises(TypeError):
        client.set(1, "v")
    client._close()
    server._close()
    with pytest.raises(dist.DistNetworkError):
        dist.TCPStore("127.0.0.1", _free_port(), timeout=datetime.timedelta(seconds=0.3))


def test_tcpstore_across_processes(tmp_path):
    _spawn(workers.tcpstore, 2, "store", _free_port(), tmp_path)
    assert [int(a[0]) for a in _load(tmp_path, "store", 2)] == [0, 1]


# ------------------------------------------------------------------ process groups over sockets
@pytest.mark.parametrize("size,how", [(2, "env"), (3, "tcp")])
def test_collectives(size, how, tmp_path):
    _spawn(workers.collectives, size, how, _free_port(), tmp_path)
    bits = _load(tmp_path, "allreduce_bits", size)
    for b in bits[1:]:                       # identical on every rank, bit for bit
        assert b.tobytes() == bits[0].tobytes()
    want = sum(np.random.default_rng(r).standard_normal(1000).astype(np.float32) * 1e3
               for r in range(size))
    np.testing.assert_allclose(bits[0], want, rtol=1e-5, atol=1e-3)


def test_nn_functional_gradients(tmp_path):
    """ptcore.distributed.nn (torch.distributed.nn): all_gather, all_reduce, broadcast and
    reduce_scatter return new tensors and pass gradients back across ranks; each rank's
    input gradient is the sum over ranks of what its share of every result was weighed by."""
    size = 2
    _spawn(workers.nn_functional, size, "env", _free_port(), tmp_path)
    xs = [workers._nn_input(r) for r in range(size)]
    w = [[workers._nn_weights(r, i) for i in range(size + 3)] for r in range(size)]
    for got in _load(tmp_path, "nn_values", size):
        np.testing.assert_array_equal(got, np.stack(xs))
    for s, got in enumerate(_load(tmp_path, "nn_grad", size)):
        want = sum(w[r][s] + 2.0 * w[r][size] for r in range(size))
        if s == 0:
            want = want + sum(w[r][size + 1] for r in range(size))
        # reduce_scatter: rank r's share is the sum over ranks of input_list[r] = x * (r + 1)
        want = want + sum((r + 1.0) * w[r][size + 2] for r in range(size))
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nn_functional_world_of_one_matches_torch():
    """The same calls in a world of one, ptcore's and torch's: the values, the tuple of
    all_gather and the gradients agree, and the five calls torch deprecates warn as its do."""
    from ptcore.distributed import nn as dist_nn
    import torch.distributed.nn as tdist_nn
    x0 = np.arange(6.0).reshape(2, 3)
    res = []
    for lib, d, dnn in ((ptcore, dist, dist_nn), (torch, tdist, tdist_nn)):
        d.init_process_group("gloo", store=d.HashStore(), rank=0, world_size=1)
        try:
            x = lib.tensor(x0, requires_grad=True)
            with pytest.warns(FutureWarning, match="all_gather is deprecated"):
                outs = dnn.all_gather(x * 3.0)
            with pytest.warns(FutureWarning, match="all_reduce is deprecated"):
                y = dnn.all_reduce(x * x) + outs[0]
            with pytest.warns(FutureWarning, match="broadcast is deprecated"):
                y = y + dnn.broadcast(x, 0)
            assert len(dnn.gather(x)) == 1       # (not deprecated)
            y.sum().backward()
            res.append((type(outs).__name__, len(outs), y.detach().numpy(), x.grad.numpy()))
        finally:
            d.destroy_process_group()
    assert res[0][:2] == res[1][:2] == ("tuple", 1)
    np.testing.assert_allclose(res[0][2], res[1][2])
    np.testing.assert_allclose(res[0][3], res[1][3])


def _torch_ddp_reference(size, steps=3):
    """torch, in this process: DDP's averaged gradients are the mean of the ranks'."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.from_numpy(workers._init_weights(i, tuple(p.shape))))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        grads = []
        for r in range(size):
            model.zero_grad()
            model(torch.from_numpy(workers._batch(r, step))).pow(2).mean().backward()
            grads.append([p.grad.clone() for p in model.parameters()])
        for p, *gs in zip(model.parameters(), *grads):
            p.grad = sum(gs) / size
        opt.step()
    return np.concatenate([p.detach().numpy().reshape(-1) for p in model.parameters()])


@pytest.mark.parametrize("size,how", [(2, "torchrun"), (3, "file")])
def test_ddp_training_matches_torch(size, how, tmp_path):
    where = _free_port() if how != "file" else str(tmp_path / "rendezvous")
    _spawn(workers.ddp, size, how, where, tmp_path)
    got = _load(tmp_path, "ddp", size)
    for g in got[1:]:
        assert g.tobytes() == got[0].tobytes()
    np.testing.assert_allclose(got[0], _torch_ddp_reference(size), rtol=1e-5, atol=1e-6)
    assert not os.path.exists(tmp_path / "rendezvous")     # the FileStore removed its file


def test_dead_peer_raises_instead_of_hanging(tmp_path):
    _spawn(workers.dead_peer, 3, "store", _free_port(), tmp_path)
    assert [int(a[0]) for a in _load(tmp_path, "dead", 2)] == [0, 1]


def test_timeout_raises(tmp_path):
    _spawn(workers.timeout, 2, "env", _free_port(), tmp_path)
    assert [int(a[0]) for a in _load(tmp_path, "timeout", 2)] == [0, 1]


@pytest.mark.parametrize("size", [2, 3])
def test_ranks_that_disagree_all_raise(size, tmp_path):
    # every case of dist_agreement_cases.py: mismatched collectives, all-to-all splits,
    # messages and new_group members raise on every rank involved, over sockets as on MPI
    _spawn(workers.agreement, size, "store", _free_port(), tmp_path)
    cases = workers.dist_agreement_cases
    results = {r: cases.load(tmp_path / f"agreement.{r}.npy") for r in range(size)}
    bad = cases.check(results, size, cases.collective_names() + [cases.LAST[0]])
    assert not bad, "\n".join(bad)


def test_init_errors_without_rendezvous(monkeypatch):
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    # torch raises ValueError for a missing env:// variable, rank or world size
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        dist.init_process_group("gloo", rank=0, world_size=2)
    with pytest.raises(ValueError):
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=2)
    with pytest.raises(AssertionError, match="world_size must be positive"):    # (torch's)
        dist.init_process_group("gloo", store=dist.HashStore())
    with pytest.raises(ValueError):
        dist.init_process_group("gloo", store=dist.HashStore(), init_method="env://", rank=0,
                                world_size=1)
    assert not dist.is_initialized() and dist.is_gloo_available()


def test_world_of_one_over_a_store():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.get_backend() == "gloo" and dist.get_world_size() == 1
        t = ptcore.tensor([1.0, 2.0])
        dist.all_reduce(t)
        dist.broadcast(t, 0)
        out = [ptcore.zeros(2)]
        dist.all_gather(out, t)
        assert t.tolist() == out[0].tolist() == [1.0, 2.0]
        dist.barrier()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


# ------------------------------------------------------- the socket communicator, in threads
def test_socket_comm_in_threads():
    """Three ranks as threads of this process, meeting through a HashStore: the
    mpi4py-like communicator the collectives run on (fast; no process start)."""
    import threading
    from ptcore.distributed import _sockets as S
    n, store, res, errors = 3, dist.HashStore(), {}, []

    def run(rank):
        try:
            t = S.connect_world(store, rank, n, 30, "t/")
            c = S.Comm(t, "w", range(n))
            a = np.arange(5, dtype=np.float64) * (rank + 1)
            c.Iallreduce(S.MPI.IN_PLACE, a, S.MPI.SUM).Wait()
            b = np.zeros(3 * n, np.int64)
            c.Iallgather(np.full(3, rank, np.int64), b).Wait()
            # a split with reversed keys: rank 1 becomes rank 0 of {0, 1}
            sub = c.Split(0 if rank < 2 else S.MPI.UNDEFINED, -rank)
            s = None
            if sub is not S.MPI.COMM_NULL:
                x = np.array([rank * 1.0])
                sub.Iallreduce(S.MPI.IN_PLACE, x, S.MPI.MAX).Wait()
                s = (sub.Get_rank(), x[0])
            srcs = None
            if rank == 0:
                reqs = [c.Irecv(np.zeros(2), S.MPI.ANY_SOURCE, 5) for _ in range(n - 1)]
                statuses = [S.Status() for _ in reqs]
                while not S.Request.Testall(reqs, statuses):
                    time.sleep(0.001)
                srcs = sorted(st.Get_source() for st in statuses)
                assert all(st.Get_count(S.MPI.BYTE) == 16 for st in statuses)
            else:
                c.Isend(np.array([rank, 5.0]), 0, 5).Wait()
            c.Ibarrier().Wait()
            res[rank] = (a.tolist(), b.tolist(), s, srcs)
            t.close()
        except BaseException as e:      # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors, errors
    summed = (np.arange(5) * 6.0).tolist()
    gathered = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert res == {0: (summed, gathered, (1, 1.0), [1, 2]), 1: (summed, gathered, (0, 1.0), None),
                   2: (summed, gathered, None, None)}
