"""Worker functions for test_socket_backend.py, run by ``ptcore.multiprocessing.spawn`` in
processes that no MPI launcher started (so the process group runs on the socket backend).

Each worker checks its results against NumPy itself (every rank can compute every rank's
input) and writes what the test compares across ranks to ``<outdir>/<name>.<rank>.npy``.
Nothing here imports torch: the children start fast.
"""
import datetime
import os
import time

import numpy as np

import dist_agreement_cases

TIMEOUT = datetime.timedelta(seconds=300)     # generous: a loaded machine starts slowly


def _init(rank, size, how, where):
    import ptcore.distributed as dist
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        os.environ.pop(var, None)
    for var in [v for v in os.environ if v.startswith(("PMI_", "OMPI_", "PMIX_", "SLURM_"))]:
        del os.environ[var]
    if how == "env":
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(where)
        dist.init_process_group("gloo", rank=rank, world_size=size, timeout=TIMEOUT)
    elif how == "torchrun":
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(size), MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(where))
        dist.init_process_group(timeout=TIMEOUT)
    elif how == "tcp":
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{where}", rank=rank,
                                world_size=size, timeout=TIMEOUT)
    elif how == "file":
        dist.init_process_group("gloo", init_method=f"file://{where}", rank=rank,
                                world_size=size, timeout=TIMEOUT)
    elif how == "store":
        store = dist.TCPStore("127.0.0.1", where, size, rank == 0, timeout=TIMEOUT)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=size,
                                timeout=TIMEOUT)
    else:
        raise ValueError(how)
    assert dist.is_initialized() and dist.get_backend() == "gloo", dist.get_backend()
    assert dist.get_rank() == rank and dist.get_world_size() == size
    return dist


def _save(outdir, name, rank, arr):
    np.save(os.path.join(outdir, f"{name}.{rank}.npy"), np.asarray(arr))


def collectives(rank, size, how, where, outdir):
    import ptcore
    dist = _init(rank, size, how, where)
    R = dist.ReduceOp
    n = size

    def inp(r, dtype=np.float64):
        return (np.arange(6, dtype=np.float64).reshape(2, 3) * (r + 1) + r).astype(dtype)

    # all_reduce: every op, float and int
    for op, fn in ((R.SUM, np.sum), (R.PRODUCT, np.prod), (R.MIN, np.min), (R.MAX, np.max),
                   (R.AVG, np.mean)):
        t = ptcore.from_numpy(inp(rank))
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), fn([inp(r) for r in range(n)], axis=0))
    ints = [np.array([5, 12, 7], np.int64) + r * np.array([1, 2, 4]) for r in range(n)]
    for op, fn in ((R.BAND, np.bitwise_and), (R.BOR, np.bitwise_or), (R.BXOR, np.bitwise_xor)):
        t = ptcore.tensor(ints[rank].tolist())
        dist.all_reduce(t, op=op)
        assert t.tolist() == fn.reduce(ints).tolist(), (op, t.tolist())
    b = ptcore.tensor([rank == 0, True, False])
    dist.all_reduce(b, op=R.MIN)                                   # logical AND for bools
    assert b.tolist() == [n == 1, True, False]
    h = ptcore.ones(4, dtype=ptcore.bfloat16) * (rank + 1)
    dist.all_reduce(h)
    assert h.dtype == ptcore.bfloat16 and h.float().tolist() == [n * (n + 1) / 2] * 4
    # floats agree bit for bit on every rank
    rng = np.random.default_rng(rank)
    f = ptcore.from_numpy(rng.standard_normal(1000).astype(np.float32) * 1e3)
    dist.all_reduce(f)
    _save(outdir, "allreduce_bits", rank, f.numpy())
    # async all_reduce of a big tensor
    big = ptcore.full((300_000,), float(rank + 1))
    w = dist.all_reduce(big, async_op=True)
    assert w.wait() and big[0].item() == big[-1].item() == n * (n + 1) / 2
    # broadcast from every root
    for root in range(n):
        t = ptcore.from_numpy(inp(rank))
        dist.broadcast(t, src=root)
        np.testing.assert_array_equal(t.numpy(), inp(root))
    # reduce
    t = ptcore.from_numpy(inp(rank))
    dist.reduce(t, dst=n - 1)
    if rank == n - 1:
        np.testing.assert_allclose(t.numpy(), sum(inp(r) for r in range(n)))
    # all_gather, all_gather_into_tensor
    outs = [ptcore.zeros(2, 3, dtype=ptcore.float64) for _ in range(n)]
    dist.all_gather(outs, ptcore.from_numpy(inp(rank)))
    for r in range(n):
        np.testing.assert_array_equal(outs[r].numpy(), inp(r))
    big_out = ptcore.zeros(2 * n, 3, dtype=ptcore.float64)
    dist.all_gather_into_tensor(big_out, ptcore.from_numpy(inp(rank)))
    np.testing.assert_array_equal(big_out.numpy(), np.concatenate([inp(r) for r in range(n)]))
    # reduce_scatter, reduce_scatter_tensor
    chunks = [ptcore.full((3,), float(rank * 10 + i)) for i in range(n)]
    out = ptcore.zeros(3)
    dist.reduce_scatter(out, chunks)
    assert out.tolist() == [float(sum(r * 10 + rank for r in range(n)))] * 3
    whole = ptcore.arange(2.0 * n) + rank
    out = ptcore.zeros(2)
    dist.reduce_scatter_tensor(out, whole, op=R.MAX)
    assert out.tolist() == [2.0 * rank + n - 1, 2.0 * rank + n]
    # gather, scatter
    glist = [ptcore.zeros(2, 3, dtype=ptcore.float64) for _ in range(n)] if rank == 1 else None
    dist.gather(ptcore.from_numpy(inp(rank)), glist, dst=1)
    if rank == 1:
        for r in range(n):
            np.testing.assert_array_equal(glist[r].numpy(), inp(r))
    slist = [ptcore.full((2,), float(100 + r)) for r in range(n)] if rank == 0 else None
    got = ptcore.zeros(2)
    dist.scatter(got, slist, src=0)
    assert got.tolist() == [100.0 + rank] * 2
    # all_to_all_single with uneven splits, all_to_all
    ins = [r * 100 + rank * 10 + np.arange(r + 1) for r in range(n)]        # to rank r: r+1
    send = ptcore.from_numpy(np.concatenate(ins).astype(np.float64))
    recv = ptcore.zeros(n * (rank + 1), dtype=ptcore.float64)
    dist.all_to_all_single(recv, send, [rank + 1] * n, [r + 1 for r in range(n)])
    want = np.concatenate([rank * 100 + s * 10 + np.arange(rank + 1) for s in range(n)])
    np.testing.assert_array_equal(recv.numpy(), want)
    outl = [ptcore.zeros(1) for _ in range(n)]
    dist.all_to_all(outl, [ptcore.tensor([float(rank * n + r)]) for r in range(n)])
    assert [t.item() for t in outl] == [float(s * n + rank) for s in range(n)]
    # point to point: a ring with tags, isend/irecv, recv from any source
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    reqs = [dist.isend(ptcore.tensor([float(rank), float(tag)]), nxt, tag=tag)
            for tag in (7, 3)]
    got3, got7 = ptcore.zeros(2), ptcore.zeros(2)
    dist.recv(got3, prv, tag=3)                 # tags match out of posting order
    dist.irecv(got7, prv, tag=7).wait()
    for r in reqs:
        r.wait()
    assert got3.tolist() == [float(prv), 3.0] and got7.tolist() == [float(prv), 7.0]
    if rank == 0:
        senders = set()
        for _ in range(n - 1):
            t = ptcore.zeros(1)
            sender = dist.recv(t)                 # from any source
            assert t.item() == 1000.0 + sender, (t.item(), sender)
            senders.add(sender)
        assert senders == set(range(1, n)), senders
    else:
        dist.send(ptcore.tensor([1000.0 + rank]), 0)
    dist.barrier()
    # objects
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "s": "x" * rank})
    assert objs == [{"rank": r, "s": "x" * r} for r in range(n)]
    lst = [rank, "a"] if rank == n - 1 else [None, None]
    dist.broadcast_object_list(lst, src=n - 1)
    assert lst == [n - 1, "a"]
    # a sub-group of ranks 0 and 1, and one without rank 0
    g = dist.new_group([0, 1])
    g2 = dist.new_group(list(range(1, n))) if n > 2 else None
    if rank in (0, 1):
        t = ptcore.tensor([float(rank + 1)])
        dist.all_reduce(t, group=g)
        assert t.item() == 3.0 and dist.get_rank(g) == rank and dist.get_world_size(g) == 2
    if g2 is not None and rank >= 1:
        t = ptcore.tensor([float(rank)])
        dist.broadcast(t, src=n - 1, group=g2)
        assert t.item() == float(n - 1)
    # a collective called with different shapes raises on every rank
    try:
        dist.all_reduce(ptcore.zeros(2 + rank))
    except ValueError as e:
        assert "disagree" in str(e), e
    else:
        raise AssertionError("mismatched all_reduce did not raise")
    dist.destroy_process_group()
    assert not dist.is_initialized()
    _save(outdir, "done", rank, np.array([rank]))


def ddp(rank, size, how, where, outdir, steps=3):
    import ptcore
    from ptcore import nn
    dist = _init(rank, size, how, where)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    with ptcore.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(ptcore.from_numpy(_init_weights(i, tuple(p.shape))))
    ddp_model = nn.parallel.DistributedDataParallel(model)
    opt = ptcore.optim.SGD(ddp_model.parameters(), lr=0.1, momentum=0.9)
    for step in range(steps):
        x = ptcore.from_numpy(_batch(rank, step))
        loss = ddp_model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    flat = np.concatenate([p.detach().numpy().reshape(-1) for p in model.parameters()])
    _save(outdir, "ddp", rank, flat)
    dist.destroy_process_group()


def _nn_input(rank):
    return np.random.default_rng(100 + rank).standard_normal((2, 3))


def _nn_weights(rank, i):
    return np.random.default_rng(200 + 10 * rank + i).standard_normal((2, 3))


def nn_functional(rank, size, how, where, outdir):
    """ptcore.distributed.nn's collectives under autograd: each rank's loss weighs what
    all_gather, all_reduce, broadcast and reduce_scatter gave it by weights of its own; the
    gradients of the ranks' inputs (saved) are what the test computes with NumPy."""
    import ptcore
    from ptcore.distributed import nn as dist_nn
    _init(rank, size, how, where)
    x = ptcore.tensor(_nn_input(rank), requires_grad=True)
    w = [ptcore.tensor(_nn_weights(rank, i)) for i in range(size + 3)]
    gathered = dist_nn.all_gather(x * 1.0)
    loss = sum((g * w[i]).sum() for i, g in enumerate(gathered))
    loss = loss + (dist_nn.all_reduce(x * 2.0) * w[size]).sum()
    loss = loss + (dist_nn.broadcast(x * 1.0, 0) * w[size + 1]).sum()
    scattered = dist_nn.reduce_scatter(ptcore.zeros(2, 3, dtype=ptcore.float64),
                                       [x * (j + 1.0) for j in range(size)])
    loss = loss + (scattered * w[size + 2]).sum()
    loss.backward()
    _save(outdir, "nn_values", rank, np.stack([g.detach().numpy() for g in gathered]))
    _save(outdir, "nn_grad", rank, x.grad.numpy())


def _init_weights(i, shape):
    return (np.random.default_rng(100 + i).standard_normal(shape) * 0.5).astype(np.float32)


def _batch(rank, step):
    return (np.random.default_rng(rank * 1000 + step).standard_normal((5, 4))).astype(np.float32)


def tcpstore(rank, size, how, port, outdir):
    import ptcore.distributed as dist
    store = dist.TCPStore("127.0.0.1", port, size, rank == 0, timeout=TIMEOUT)
    if rank == 1:
        store.set("from1", "hello")
        store.set("bytes", b"\x00\xff")
    assert store.get("from1") == b"hello"            # rank 0 blocks until rank 1 set it
    assert store.get("bytes") == b"\x00\xff"
    total = store.add("counter", rank + 1)
    store.wait(["counter"])
    assert 1 <= total <= size * (size + 1) // 2
    store.append("log", f"{rank};")
    store.set(f"done{rank}", "1")
    store.wait([f"done{r}" for r in range(size)])
    assert int(store.get("counter")) == size * (size + 1) // 2
    assert sorted(store.get("log").decode().rstrip(";").split(";")) == \
        [str(r) for r in range(size)]
    store.set_timeout(datetime.timedelta(seconds=0.3))
    try:
        store.get("never")
    except dist.DistStoreError as e:
        assert "never" in str(e)
    else:
        raise AssertionError("get of a missing key did not time out")
    store.set(f"exit{rank}", "1")
    store.set_timeout(TIMEOUT)
    if rank == 0:                                   # the server outlives the clients
        store.wait([f"exit{r}" for r in range(size)])
    _save(outdir, "store", rank, np.array([rank]))


def dead_peer(rank, size, how, where, outdir):
    """The last rank exits right after the rendezvous; the others' collective must fail
    with an error naming it, well before the 60 s timeout."""
    import ptcore
    dist = _init(rank, size, how, where)
    if rank == size - 1:
        os._exit(0)
    t0 = time.monotonic()
    try:
        dist.all_reduce(ptcore.ones(3))
    except dist.DistBackendError as e:
        msg = str(e)
    else:
        raise AssertionError("all_reduce with a dead peer did not raise")
    assert f"rank {size - 1}" in msg, msg
    assert time.monotonic() - t0 < 30
    try:                                   # the group is unusable afterwards
        dist.barrier()
    except RuntimeError as e:
        assert "unusable" in str(e), e
    else:
        raise AssertionError("barrier on a broken group did not raise")
    _save(outdir, "dead", rank, np.array([rank]))


def timeout(rank, size, how, where, outdir):
    """Rank 1 does not join the collective: rank 0's times out after its 1 s timeout."""
    import ptcore
    dist = _init(rank, size, how, where)
    if rank == 0:
        try:
            dist.all_reduce(ptcore.ones(2), async_op=True).wait(datetime.timedelta(seconds=1))
        except dist.DistBackendError as e:
            assert "timed out after 1 s" in str(e) and "waiting for rank 1" in str(e), e
        else:
            raise AssertionError("the collective did not time out")
        open(os.path.join(outdir, "released"), "w").close()
    else:
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(outdir, "released")):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    _save(outdir, "timeout", rank, np.array([rank]))


def agreement(rank, size, how, where, outdir):
    """The disagreement cases of dist_agreement_cases.py (and new_group's, last)."""
    cases = dist_agreement_cases
    dist = _init(rank, size, how, where)
    names = cases.collective_names() + [cases.LAST[0]]
    cases.save(os.path.join(outdir, f"agreement.{rank}.npy"), cases.run(dist, rank, size, names))
