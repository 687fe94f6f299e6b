"""Worker for test_dist_surface_parity.py: the same script of torch.distributed calls run in
a world of processes under torch (gloo) and under ptcore (its socket "gloo" backend); each
rank writes what it saw to ``<outdir>/<lib>.<rank>.json`` and the test compares the two.

Values are recorded as plain Python (tensors as lists), exceptions by their type's name.
"""
import datetime
import json
import os
import warnings

TIMEOUT = datetime.timedelta(seconds=120)


def _lib(name):
    if name == "torch":
        import torch
        return torch
    import ptcore
    return ptcore


def _plain(v):
    if hasattr(v, "tolist") and hasattr(v, "dtype"):
        return {"tensor": v.tolist(), "dtype": str(v.dtype).split(".")[-1]}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return type(v).__name__


def surface(rank, size, lib, ports, outdir):
    """Run the script on ``rank`` of ``size``; ``lib`` is "torch" or "ptcore"."""
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        os.environ.pop(var, None)
    for var in [v for v in os.environ if v.startswith(("PMI_", "OMPI_", "PMIX_", "SLURM_"))]:
        del os.environ[var]
    warnings.simplefilter("ignore")
    T = _lib(lib)
    dist = T.distributed
    out = {}

    def rec(name, fn):
        try:
            out[name] = _plain(fn())
        except Exception as e:          # the type is what must agree
            out[name] = "EXC:" + type(e).__name__

    # torchrun's variables
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(size), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(ports[0]), LOCAL_RANK=str(rank))
    dist.init_process_group("gloo", timeout=TIMEOUT)
    rec("backend", lambda: (dist.get_backend(), dist.get_backend_config()))
    rec("initialized", dist.is_initialized)
    rec("init_twice", lambda: dist.init_process_group("gloo", timeout=TIMEOUT))
    rec("rank_size", lambda: (dist.get_rank(), dist.get_world_size()))
    rec("node_local_rank", dist.get_node_local_rank)
    rec("pg_count", dist.get_pg_count)
    rec("world_ranks", lambda: dist.get_process_group_ranks(dist.group.WORLD))

    # groups: a member and a non-member rank
    g = dist.new_group([0], backend="gloo")
    rec("pg_count_2", dist.get_pg_count)
    rec("non_member", lambda: g is dist.GroupMember.NON_GROUP_MEMBER)
    rec("group_rank_size", lambda: (dist.get_rank(g), dist.get_world_size(g)))
    rec("group_backend", lambda: dist.get_backend(g) if rank == 0 else None)
    rec("group_backend_config", lambda: dist.get_backend_config(g) if rank == 0 else None)
    rec("group_ranks", lambda: dist.get_process_group_ranks(g) if rank == 0 else None)
    rec("global_rank", lambda: dist.get_global_rank(g, 0) if rank == 0 else None)
    rec("global_rank_bad", lambda: dist.get_global_rank(g, 5) if rank == 0 else None)
    rec("group_rank_bad", lambda: dist.get_group_rank(g, 1) if rank == 0 else None)
    rec("group_allreduce", lambda: (lambda t: (dist.all_reduce(t, group=g), t)[1])(
        T.ones(2) * (rank + 1)))
    g01 = dist.new_group([1, 0])
    rec("g01", lambda: (dist.get_rank(g01), dist.get_group_rank(g01, 1),
                        dist.get_process_group_ranks(g01)))

    # coalesced collectives (deprecated in torch)
    ts = [T.full((2,), float(rank + 1)), T.arange(3, dtype=T.float32) * (rank + 1)]
    rec("all_reduce_coalesced", lambda: (dist.all_reduce_coalesced(ts), ts)[1])
    outs = [[T.zeros(2), T.zeros(3)] for _ in range(size)]
    rec("all_gather_coalesced", lambda: (dist.all_gather_coalesced(
        outs, [T.full((2,), float(rank)), T.arange(3.0) + 10 * rank]), outs)[1])
    rec("all_reduce_coalesced_mixed", lambda: dist.all_reduce_coalesced(
        [T.ones(1), T.ones(1, dtype=T.float64)]))
    fut_t = [T.ones(2) * (rank + 1)]
    rec("all_reduce_coalesced_async", lambda: type(dist.all_reduce_coalesced(
        fut_t, async_op=True)).__name__ in ("Future", "_Future", "_WorkFuture"))

    # reductions the gloo backend takes or refuses
    R = dist.ReduceOp
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG"):
        t = T.tensor([rank + 1, 6], dtype=T.int64)
        rec(f"all_reduce_{op}", lambda: (dist.all_reduce(t, op=getattr(R, op)), t)[1])
    rec("supports_complex", lambda: [dist.supports_complex(getattr(R, o)) for o in
                                     ("SUM", "AVG", "MAX", "BAND", "PRODUCT")])

    # async work
    t = T.ones(3) * (rank + 1)
    w = dist.all_reduce(t, async_op=True)
    rec("work_wait", w.wait)
    rec("work_completed", lambda: (w.is_completed(), w.is_success()))
    rec("work_future", lambda: w.get_future().wait())
    rec("barrier_async", lambda: dist.barrier(async_op=True).wait())

    # tensor collectives with uneven splits
    n = size
    inp = T.arange(sum(range(1, n + 1)), dtype=T.float32) + 100 * rank
    outp = T.zeros(n * (rank + 1))
    rec("all_to_all_single_splits", lambda: (dist.all_to_all_single(
        outp, inp, [rank + 1] * n, list(range(1, n + 1))), outp)[1])
    big = T.zeros(n * 2)
    rec("all_gather_into_tensor", lambda: (dist.all_gather_into_tensor(
        big, T.full((2,), float(rank))), big)[1])
    small = T.zeros(2)
    rec("reduce_scatter_tensor", lambda: (dist.reduce_scatter_tensor(
        small, T.arange(2.0 * n) * (rank + 1)), small)[1])
    outl = [T.zeros(1) for _ in range(n)]
    rec("all_to_all", lambda: (dist.all_to_all(
        outl, [T.full((1,), float(10 * rank + j)) for j in range(n)]), outl)[1])
    rec("reduce_scatter_tensor_bad", lambda: dist.reduce_scatter_tensor(T.zeros(3), T.zeros(4)))
    rec("all_gather_into_tensor_bad", lambda: dist.all_gather_into_tensor(T.zeros(3),
                                                                          T.zeros(2)))

    # point to point
    peer = (rank + 1) % n
    src = (rank - 1) % n
    got = T.zeros(2)
    ops = [dist.P2POp(dist.isend, T.full((2,), float(rank)), peer),
           dist.P2POp(dist.irecv, got, src)]
    rec("batch_isend_irecv", lambda: ([r.wait() for r in dist.batch_isend_irecv(ops)], got)[1])

    # object collectives
    obj = {"rank": rank, "s": "x" * rank}
    gathered = [None] * n
    rec("all_gather_object", lambda: (dist.all_gather_object(gathered, obj), gathered)[1])
    lst = [rank, "a"] if rank == 0 else [None, None]
    rec("broadcast_object_list", lambda: (dist.broadcast_object_list(lst, src=0), lst)[1])
    glist = [None] * n if rank == 0 else None
    rec("gather_object", lambda: (dist.gather_object(obj, glist, dst=0), glist)[1])
    sout = [None]
    rec("scatter_object_list", lambda: (dist.scatter_object_list(
        sout, [{"to": r} for r in range(n)] if rank == 0 else None, src=0), sout)[1])
    if rank == 0:
        rec("send_object_list", lambda: dist.send_object_list([{"hi": 1}, [2, 3]], dst=1))
    elif rank == 1:
        box = [None, None]
        rec("recv_object_list", lambda: (dist.recv_object_list(box, src=0), box)[1])

    # the store behind env://: queues and a barrier across the processes
    store = dist.TCPStore("127.0.0.1", ports[1], n, rank == 0, timeout=TIMEOUT)
    if rank == 0:
        store.queue_push("jobs", "a")
        store.queue_push("jobs", b"b")
    store.barrier("b1", n)
    rec("queue_len", lambda: store.queue_len("jobs"))
    store.barrier("b2", n)
    if rank == 1:
        rec("queue_pop", lambda: [store.queue_pop("jobs"), store.queue_pop("jobs")])
    store.barrier("b3", n)
    rec("queue_pop_empty", lambda: store.queue_pop("jobs", block=False))
    store.barrier("b4", n)
    if rank == 0:
        store.set("k", "v")
    store.barrier("b5", n)
    rec("clone_get", lambda: store.clone().get("k"))

    dist.destroy_process_group()
    rec("after_destroy", dist.is_initialized)
    rec("get_rank_after_destroy", dist.get_rank)
    rec("pg_count_after_destroy", dist.get_pg_count)
    # again, with the rendezvous in the arguments and no backend (gloo on the CPU)
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        os.environ.pop(var, None)
    dist.init_process_group(init_method=f"tcp://127.0.0.1:{ports[2]}", rank=rank,
                            world_size=size, timeout=TIMEOUT)
    rec("reinit", lambda: (dist.get_rank(), dist.get_world_size(), dist.get_pg_count()))
    t = T.ones(2) * (rank + 1)
    rec("reinit_all_reduce", lambda: (dist.all_reduce(t), t)[1])
    dist.destroy_process_group()
    with open(os.path.join(outdir, f"{lib}.{rank}.json"), "w") as f:
        json.dump(out, f)
