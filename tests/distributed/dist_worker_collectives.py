"""Worker (run under mpiexec -n N): every collective of ptcore.distributed against NumPy."""
import sys

import numpy as np

import ptcore
import ptcore.distributed as dist

dist.init_process_group("mpi")
rank, n = dist.get_rank(), dist.get_world_size()
R = dist.ReduceOp


def data(r, shape=(3, 4), dtype=np.float32, seed=0):
    g = np.random.default_rng(seed * 101 + r)
    if dtype == np.bool_:
        return g.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return g.integers(-5, 6, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (g.standard_normal(shape) + 1j * g.standard_normal(shape)).astype(dtype)
    return g.standard_normal(shape).astype(dtype)


def T(a, dtype=None):
    t = ptcore.from_numpy(np.ascontiguousarray(a).copy())
    return t if dtype is None else t.to(dtype)


def close(t, ref, what, tol=1e-5):
    got = t.to(ptcore.float64).numpy() if t.dtype in (ptcore.bfloat16, ptcore.float16) else t.numpy()
    ref = np.asarray(ref)
    if got.shape != ref.shape or not np.allclose(got, ref, rtol=tol, atol=tol):
        raise AssertionError(f"{what}: rank {rank} got {got} expected {ref}")


NP = {R.SUM: lambda s: np.sum(s, 0), R.PRODUCT: lambda s: np.prod(s, 0),
      R.MIN: lambda s: np.min(s, 0), R.MAX: lambda s: np.max(s, 0)}
checks = 0

# all_reduce: every op x dtype
for dt in (np.float32, np.float64, np.int64, np.int32, np.complex64):
    for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG):
        if np.issubdtype(dt, np.complexfloating) and op in (R.MIN, R.MAX):
            continue
        t = T(data(rank, dtype=dt))
        dist.all_reduce(t, op=op)
        stack = np.stack([data(r, dtype=dt) for r in range(n)])
        if op == R.AVG:
            ref = (np.trunc(stack.sum(0) / n).astype(dt) if np.issubdtype(dt, np.integer)
                   else stack.sum(0) / n)
        else:
            ref = NP[op](stack)
        close(t, ref, f"all_reduce {op} {dt}")
        checks += 1
for op, ref in ((R.SUM, np.any), (R.MAX, np.any), (R.MIN, np.all), (R.PRODUCT, np.all)):
    t = T(data(rank, dtype=np.bool_))
    dist.all_reduce(t, op=op)
    close(t, ref(np.stack([data(r, dtype=np.bool_) for r in range(n)]), 0), f"bool {op}")
    checks += 1
for op in (R.BAND, R.BOR, R.BXOR):
    t = T(data(rank, dtype=np.int64))
    dist.all_reduce(t, op=op)
    f = {R.BAND: np.bitwise_and, R.BOR: np.bitwise_or, R.BXOR: np.bitwise_xor}[op]
    close(t, f.reduce(np.stack([data(r, dtype=np.int64) for r in range(n)]), 0), f"int {op}")
    checks += 1
for dt in (ptcore.float16, ptcore.bfloat16):
    t = T(data(rank)).to(dt)
    dist.all_reduce(t)
    ref = sum(T(data(r)).to(dt).to(ptcore.float64).numpy() for r in range(n))
    close(t, ref, f"all_reduce {dt}", tol=3e-2)
    checks += 1
# non-contiguous (transposed and strided) tensors are staged and written back
base = T(data(rank, (4, 6)))
view = base.t()[::2]
dist.all_reduce(view)
full = np.stack([data(r, (4, 6)) for r in range(n)])
close(view, full.sum(0).T[::2], "non-contiguous all_reduce")
untouched = data(rank, (4, 6)).T.copy()
untouched[::2] = full.sum(0).T[::2]
close(base.t(), untouched, "non-contiguous all_reduce leaves the rest alone")
# a tensor that requires grad
p = T(data(rank)).requires_grad_()
dist.all_reduce(p)
close(p.detach(), sum(data(r) for r in range(n)), "requires_grad all_reduce")
checks += 3

# broadcast from every root, float and bfloat16
for src in range(n):
    t = T(data(rank, seed=src))
    dist.broadcast(t, src=src)
    close(t, data(src, seed=src), f"broadcast src={src}")
    b = T(data(rank, seed=src)).to(ptcore.bfloat16)
    dist.broadcast(b, src)
    close(b, T(data(src, seed=src)).to(ptcore.bfloat16).to(ptcore.float64).numpy(), "bf16 bcast")
    checks += 2
# reduce to every root
for dst in range(n):
    for op in (R.SUM, R.MAX, R.AVG):
        t = T(data(rank))
        dist.reduce(t, dst=dst, op=op)
        stack = np.stack([data(r) for r in range(n)])
        if rank == dst:
            close(t, stack.sum(0) / n if op == R.AVG else NP[op](stack), f"reduce {op} dst={dst}")
        checks += 1
# all_gather / all_gather_into_tensor
out = [ptcore.zeros(3, 4) for _ in range(n)]
dist.all_gather(out, T(data(rank)))
for r in range(n):
    close(out[r], data(r), "all_gather")
big = ptcore.zeros(n * 3, 4)
dist.all_gather_into_tensor(big, T(data(rank)))
close(big, np.concatenate([data(r) for r in range(n)]), "all_gather_into_tensor")
stacked = ptcore.zeros(n, 3, 4)
dist.all_gather_into_tensor(stacked, T(data(rank)))
close(stacked, np.stack([data(r) for r in range(n)]), "all_gather_into_tensor stacked")
checks += 3
# gather / scatter at every root
for root in range(n):
    gl = [ptcore.zeros(3, 4) for _ in range(n)] if rank == root else None
    dist.gather(T(data(rank)), gl, dst=root)
    if rank == root:
        for r in range(n):
            close(gl[r], data(r), f"gather dst={root}")
    sl = [T(data(r, seed=7)) for r in range(n)] if rank == root else None
    t = ptcore.zeros(3, 4)
    dist.scatter(t, sl, src=root)
    close(t, data(rank, seed=7), f"scatter src={root}")
    checks += 2
# reduce_scatter / reduce_scatter_tensor
inp = [T(data(rank, seed=10 + j)) for j in range(n)]
o = ptcore.zeros(3, 4)
dist.reduce_scatter(o, inp)
close(o, sum(data(r, seed=10 + rank) for r in range(n)), "reduce_scatter")
o = ptcore.zeros(2, 4)
dist.reduce_scatter_tensor(o, T(data(rank, (2 * n, 4))), op=R.MAX)
close(o, np.max(np.stack([data(r, (2 * n, 4)) for r in range(n)]), 0)[2 * rank:2 * rank + 2],
      "reduce_scatter_tensor")
checks += 2
# all_to_all_single, equal and uneven splits; all_to_all
x = T(data(rank, (2 * n, 3)))
y = ptcore.zeros(2 * n, 3)
dist.all_to_all_single(y, x)
close(y, np.concatenate([data(r, (2 * n, 3))[2 * rank:2 * rank + 2] for r in range(n)]),
      "all_to_all_single")
# rank r sends (j + 1) rows to rank j; so rank j receives j + 1 rows from every rank
insplit = [j + 1 for j in range(n)]
x = T(data(rank, (sum(insplit), 2)))
y = ptcore.zeros((rank + 1) * n, 2)
dist.all_to_all_single(y, x, output_split_sizes=[rank + 1] * n, input_split_sizes=insplit)
start = sum(insplit[:rank])
close(y, np.concatenate([data(r, (sum(insplit), 2))[start:start + rank + 1] for r in range(n)]),
      "all_to_all_single uneven")
outs = [ptcore.zeros(2) for _ in range(n)]
dist.all_to_all(outs, [T(np.full(2, 10.0 * rank + j, np.float32)) for j in range(n)])
for j in range(n):
    close(outs[j], np.full(2, 10.0 * j + rank), "all_to_all")
checks += 3

# point to point: a ring, blocking and non-blocking, and any-source receive
right, left = (rank + 1) % n, (rank - 1) % n
buf = ptcore.zeros(5)
sw = dist.isend(T(np.full(5, rank, np.float32)), right)
rw = dist.irecv(buf, left)
sw.wait(); rw.wait()
close(buf, np.full(5, left), "isend/irecv ring")
if rank == 0:
    got = set()
    for _ in range(n - 1):
        b = ptcore.zeros(2)
        got.add(dist.recv(b, tag=3))
        close(b, np.full(2, float(b[0].item())), "recv any")
    assert got == set(range(1, n)), got
else:
    dist.send(ptcore.full((2,), float(rank)), 0, tag=3)
ops = [dist.P2POp(dist.isend, T(np.full(3, rank, np.float32)), right),
       dist.P2POp(dist.irecv, buf2 := ptcore.zeros(3), left)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
close(buf2, np.full(3, left), "batch_isend_irecv")
checks += 3

# a receive from any source, then one from rank 1, same tag, waited in reverse order: each
# gets the message it matched (the first learns its sender from the message's header and
# only then posts its data receive, which the second must not take).  1 MB messages, past
# MPI's eager limit: a send completes only once its receive is posted
big = 1 << 18
if rank == 0:
    first, second = ptcore.zeros(big), ptcore.zeros(big)
    w_any = dist.irecv(first, tag=5)
    w_one = dist.irecv(second, 1, tag=5)
    w_one.wait()
    w_any.wait()
    assert w_any._result == 1
    close(first, np.zeros(big), "any-source receive of the first message")
    close(second, np.ones(big), "known-source receive of the second message")
    # a receive from any source pending while this rank waits in a collective: the
    # collective's wait posts its data receive, which rank 1's blocking send waits for
    third = ptcore.zeros(big)
    w3 = dist.irecv(third, tag=6)
    dist.all_reduce(ptcore.ones(2))
    w3.wait()
    close(third, np.full(big, 2.0), "any-source receive completed during a collective")
elif rank == 1:
    ws = [dist.isend(ptcore.full((big,), float(k)), 0, tag=5) for k in range(2)]
    for w in ws:
        w.wait()
    dist.send(ptcore.full((big,), 2.0), 0, tag=6)
    dist.all_reduce(ptcore.ones(2))
else:
    dist.all_reduce(ptcore.ones(2))
checks += 3

# async: several collectives in flight at once, completed out of order
ts = [T(data(rank, seed=s)) for s in range(4)]
works = [dist.all_reduce(t, async_op=True) for t in ts]
for w in reversed(works):
    assert w.wait() is True and w.is_completed()
for s, t in enumerate(ts):
    close(t, sum(data(r, seed=s) for r in range(n)), f"async all_reduce {s}")
w = dist.broadcast(bt := T(data(rank)), 0, async_op=True)
while not w.is_completed():
    pass
close(bt, data(0), "async broadcast polled with is_completed")
assert dist.barrier(async_op=True).wait()
checks += 3

# groups: the even ranks, and a group without rank 0
evens = [r for r in range(n) if r % 2 == 0]
ge = dist.new_group(evens)
gt = dist.new_group(list(range(1, n)))
if rank in evens:
    assert dist.get_rank(ge) == evens.index(rank) and dist.get_world_size(ge) == len(evens)
    t = T(data(rank))
    dist.all_reduce(t, group=ge)
    close(t, sum(data(r) for r in evens), "group all_reduce")
    t = T(data(rank))
    dist.broadcast(t, src=evens[-1], group=ge)
    close(t, data(evens[-1]), "group broadcast (global src rank)")
else:
    assert dist.get_rank(ge) == -1
if rank >= 1:
    t = T(data(rank))
    dist.all_reduce(t, op=R.MAX, group=gt)
    close(t, np.max(np.stack([data(r) for r in range(1, n)]), 0), "group without rank 0")
    assert dist.get_process_group_ranks(gt) == list(range(1, n))
checks += 2

# objects (pickled)
objs = [None] * n
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}", "arr": list(range(rank))})
assert objs == [{"rank": r, "name": f"r{r}", "arr": list(range(r))} for r in range(n)], objs
lst = [("hello", 1), {"x": [1, 2]}, None] if rank == n - 1 else [0, 0, 0]
dist.broadcast_object_list(lst, src=n - 1)
assert lst == [("hello", 1), {"x": [1, 2]}, None], lst
g = [None] * n if rank == 0 else None
dist.gather_object(rank * 10, g, dst=0)
assert rank != 0 or g == [r * 10 for r in range(n)], g
out = [None]
dist.scatter_object_list(out, [f"to{r}" for r in range(n)] if rank == 0 else None, src=0)
assert out == [f"to{rank}"], out
checks += 4

dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"OK rank={rank} world={n} checks={checks}", flush=True)
