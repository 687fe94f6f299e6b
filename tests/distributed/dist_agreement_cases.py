"""Ranks that disagree on a call, one case each, for test_agreement.py: run under MPI by
dist_worker_agreement.py and over sockets by dist_socket_workers.agreement.

Each case runs on a fresh group of every rank (a case that fails breaks only its own group),
and every rank records what it raised: ``(exception type, message)``, or ``("NONE", "")``.
``EXPECTED[name]`` says which exception every involved rank must raise, with words its
message must hold; ``involved(n)`` which ranks take part (the others do nothing).
"""
import datetime

import numpy as np

CASE_TIMEOUT = datetime.timedelta(seconds=90)    # a rank that hangs fails with a timeout


def _all(n):
    return list(range(n))


def _pair(n):
    return [0, 1]


CASES = {}


def case(exc, *words, involved=_all):
    def deco(fn):
        CASES[fn.__name__] = (fn, exc, words, involved)
        return fn
    return deco


# ------------------------------------------------------------------------ collectives
@case("ValueError", "all_reduce", "shape", "(2, 3)", "(2, 4)")
def all_reduce_shape(dist, T, g, r, n):
    dist.all_reduce(T.ones(2, 3 + (r == 1)), group=g)


@case("ValueError", "all_reduce", "reduction op", "SUM", "MAX")
def all_reduce_op(dist, T, g, r, n):
    dist.all_reduce(T.ones(3), op=dist.ReduceOp.MAX if r == 1 else dist.ReduceOp.SUM, group=g)


@case("ValueError", "broadcast", "dtype", "float32", "float64")
def broadcast_dtype(dist, T, g, r, n):
    dist.broadcast(T.ones(4, dtype=T.float64 if r == 1 else T.float32), 0, group=g)


@case("ValueError", "broadcast", "src rank", "src 0", "src 1")
def broadcast_src(dist, T, g, r, n):
    dist.broadcast(T.ones(4), 1 if r == 1 else 0, group=g)


@case("ValueError", "reduce", "dst rank", "dst 0", "dst 1")
def reduce_dst(dist, T, g, r, n):
    dist.reduce(T.ones(4), 1 if r == 1 else 0, group=g)


@case("ValueError", "all_gather", "shape", "(3,)", "(5,)")
def all_gather_shape(dist, T, g, r, n):
    k = 5 if r == 1 else 3
    dist.all_gather([T.zeros(k) for _ in range(n)], T.ones(k), group=g)


@case("ValueError", "all_gather_into_tensor", "dtype", "int64", "float32")
def all_gather_into_tensor_dtype(dist, T, g, r, n):
    dt = T.int64 if r == 1 else T.float32
    dist.all_gather_into_tensor(T.zeros(2 * n, dtype=dt), T.ones(2, dtype=dt), group=g)


@case("ValueError", "gather", "dst rank")
def gather_dst(dist, T, g, r, n):
    dst = 1 if r == 1 else 0
    dist.gather(T.ones(2), [T.zeros(2) for _ in range(n)] if r == dst else None, dst, group=g)


@case("ValueError", "scatter", "shape", "(2,)", "(3,)")
def scatter_shape(dist, T, g, r, n):
    k = 3 if r == 1 else 2
    dist.scatter(T.zeros(k), [T.ones(k) for _ in range(n)] if r == 0 else None, 0, group=g)


@case("ValueError", "reduce_scatter", "reduction op", "MIN", "SUM")
def reduce_scatter_op(dist, T, g, r, n):
    op = dist.ReduceOp.MIN if r == 1 else dist.ReduceOp.SUM
    dist.reduce_scatter(T.zeros(2), [T.ones(2) for _ in range(n)], op, group=g)


@case("ValueError", "reduce_scatter_tensor", "shape", "(2,)", "(4,)")
def reduce_scatter_tensor_shape(dist, T, g, r, n):
    k = 4 if r == 1 else 2
    dist.reduce_scatter_tensor(T.zeros(k), T.ones(k * n), group=g)


@case("ValueError", "all_to_all_single", "split sizes", "rank 0 sends 2 rows", "expects 3 rows")
def all_to_all_single_splits(dist, T, g, r, n):
    # the case: rank 1 expects 3 rows from rank 0 and 1 from itself; MPI alone
    # would truncate or pad in silence
    out_splits = [3, 1] + [2] * (n - 2) if r == 1 else [2] * n
    x = T.arange(float(2 * n * 4)).reshape(2 * n, 4)
    dist.all_to_all_single(T.zeros(2 * n, 4), x, out_splits, [2] * n, group=g)


@case("ValueError", "all_to_all_single", "split sizes", "rank 1 sends 2 rows", "expects 1 row")
def all_to_all_single_equal_parts(dist, T, g, r, n):
    k = 2 * n if r == 1 else n
    dist.all_to_all_single(T.zeros(k), T.ones(k), group=g)


@case("ValueError", "all_to_all", "input_tensor_list[1] has 2 elements",
      "output_tensor_list[0] has 3")
def all_to_all_numel(dist, T, g, r, n):
    outs = [T.zeros(3 if (r == 1 and j == 0) else 2) for j in range(n)]
    dist.all_to_all(outs, [T.ones(2) for _ in range(n)], group=g)


@case("ValueError", "all_to_all_single", "dtype", "float64", "float32")
def all_to_all_single_dtype(dist, T, g, r, n):
    dt = T.float64 if r == 1 else T.float32
    dist.all_to_all_single(T.zeros(n, dtype=dt), T.ones(n, dtype=dt), group=g)


@case("ValueError", "different operations", "all_reduce", "broadcast")
def different_collectives(dist, T, g, r, n):
    if r == 1:
        dist.broadcast(T.ones(3), 0, group=g)
    else:
        dist.all_reduce(T.ones(3), group=g)


@case("ValueError", "different operations", "barrier", "all_reduce")
def barrier_against_all_reduce(dist, T, g, r, n):
    if r == 1:
        dist.barrier(group=g)
    else:
        dist.all_reduce(T.ones(3), group=g)


@case("ValueError", "different operations", "monitored_barrier", "barrier")
def monitored_barrier_against_barrier(dist, T, g, r, n):
    if r == 1:
        dist.monitored_barrier(group=g)
    else:
        dist.barrier(group=g)


@case("ValueError", "broadcast_object_list", "number of objects", "2 objects", "3 objects")
def broadcast_object_list_length(dist, T, g, r, n):
    dist.broadcast_object_list([None] * (3 if r == 1 else 2), 0, group=g)


@case("ValueError", "gather_object", "dst rank")
def gather_object_dst(dist, T, g, r, n):
    dst = 1 if r == 1 else 0
    dist.gather_object(r, [None] * n if r == dst else None, dst, group=g)


@case("ValueError", "different operations", "all_gather_object", "scatter_object_list")
def object_collectives_differ(dist, T, g, r, n):
    if r == 1:
        out = [None]
        dist.scatter_object_list(out, list(range(n)) if r == 0 else None, 0, group=g)
    else:
        dist.all_gather_object([None] * n, r, group=g)


# ------------------------------------------------------------------- point to point
def _then_wait(dist, g):
    # the sender learns of the mismatch in its next wait: this barrier can never complete
    # (the receiver has left the group), so the notice is what ends it
    dist.barrier(group=g)


@case("ValueError", "float32", "int32", "4 elements", involved=_pair)
def send_recv_dtype(dist, T, g, r, n):
    if r == 0:
        dist.send(T.ones(4), 1, group=g)
        _then_wait(dist, g)
    elif r == 1:
        dist.recv(T.zeros(4, dtype=T.int32), 0, group=g)


@case("ValueError", "3 elements", "5 elements", involved=_pair)
def send_recv_numel(dist, T, g, r, n):
    if r == 0:
        dist.send(T.ones(3), 1, group=g)
        _then_wait(dist, g)
    elif r == 1:
        dist.recv(T.zeros(5), 0, group=g)


@case("ValueError", "6 elements", "2 elements", involved=_pair)
def send_more_than_recv_holds(dist, T, g, r, n):
    if r == 0:
        dist.send(T.ones(2, 3), 1, group=g)
        _then_wait(dist, g)
    elif r == 1:
        dist.recv(T.zeros(2), 0, group=g)


@case("ValueError", "float64", "float32", involved=_pair)
def recv_from_any_source_dtype(dist, T, g, r, n):
    if r == 0:
        dist.isend(T.ones(3, dtype=T.float64), 1, group=g).wait()
        _then_wait(dist, g)
    elif r == 1:
        dist.recv(T.zeros(3), group=g)


@case("ValueError", "int64", "float32", involved=_pair)
def batch_isend_irecv_dtype(dist, T, g, r, n):
    if r > 1:
        return
    peer = 1 - r
    dt = T.int64 if r == 1 else T.float32
    ops = [dist.P2POp(dist.isend, T.ones(3), peer, g),
           dist.P2POp(dist.irecv, T.zeros(3, dtype=dt), peer, g)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    _then_wait(dist, g)


@case("ValueError", "Invalid destination rank")
def send_to_self(dist, T, g, r, n):
    dist.send(T.ones(2), r, group=g)


@case("RuntimeError", "isend", "own rank")
def isend_to_self(dist, T, g, r, n):
    dist.isend(T.ones(2), r, group=g)


@case("RuntimeError", "irecv", "own rank")
def recv_from_self(dist, T, g, r, n):
    dist.recv(T.ones(2), r, group=g)


# ------------------------------------------------- last: these break the default group
@case("ValueError", "new_group", "member list", "[0] (1 rank)")
def new_group_members(dist, T, g, r, n):
    # the case: rank 0 asks for a group of itself, the others for everyone
    dist.new_group([0] if r == 0 else list(range(n)))


@case("ValueError", "new_group", "member list")
def new_subgroups_sizes(dist, T, g, r, n):
    dist.new_subgroups(1 if r == 0 else n)


LAST = ("new_group_members", "new_subgroups_sizes")


def run(dist, rank, n, names):
    """Run the cases ``names`` in order; {name: (exception type, message)}."""
    import ptcore
    out = {}
    for name in names:
        fn = CASES[name][0]
        g = dist.new_group(list(range(n)), timeout=CASE_TIMEOUT)
        try:
            fn(dist, ptcore, g, rank, n)
        except Exception as e:
            out[name] = (type(e).__name__, str(e).replace("\n", " "))
        else:
            out[name] = ("NONE", "")
    return out


def collective_names():
    return [k for k in CASES if k not in LAST]


def check(results, n, names):
    """The problems in ``results`` ({rank: {case: (type, message)}}), as strings."""
    bad = []
    for name in names:
        _, exc, words, involved = CASES[name]
        inv = involved(n)
        for r in range(n):
            got = results[r].get(name)
            if got is None:
                bad.append(f"{name}: rank {r} did not report")
                continue
            if r not in inv:
                if got[0] != "NONE":
                    bad.append(f"{name}: rank {r} is not involved but raised {got}")
                continue
            if got[0] != exc:
                bad.append(f"{name}: rank {r} raised {got[0]} ({got[1]}), expected {exc}")
            missing = [w for w in words if w not in got[1]]
            if missing:
                bad.append(f"{name}: rank {r}'s message lacks {missing}: {got[1]}")
    return bad


def save(path, results):
    np.save(path, np.array(repr(results)))


def load(path):
    import ast
    return ast.literal_eval(str(np.load(path)))
