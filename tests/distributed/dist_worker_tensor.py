"""Worker: ptcore.distributed.tensor (DTensor, distribute_tensor, local shapes) and the functional
collectives on 1 or 2 ranks; prints ``OK-DTENSOR rank=R world=W checks=N``."""
import ptcore
import ptcore.distributed as dist
import ptcore.distributed._functional_collectives as funcol
from ptcore.distributed.tensor import (DTensor, Partial, Replicate, Shard, distribute_tensor,
                                       init_device_mesh)
from ptcore.distributed.tensor._utils import compute_local_shape_and_global_offset
from ptcore._dispatch import torch_function
from ptcore.testing import assert_close

# the DTensor class (which transformers imports) takes part in __torch_function__ only once a
# DTensor exists: before, no class switches the protocol's layer on for every op
assert not torch_function._subclass_seen[0] and DTensor not in torch_function._overriding

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (world,))
checks = 0

# a replicated DTensor: ops give DTensors on the mesh, gradients flow through to_local
x = ptcore.arange(6.0).view(2, 3).requires_grad_()
d = DTensor.from_local(x, mesh, [Replicate()])
assert torch_function._subclass_seen[0] and DTensor in torch_function._overriding
y = d * 2 + 1
assert isinstance(y, DTensor) and y.placements == (Replicate(),) and y.device_mesh == mesh
s = y.sum()
assert isinstance(s, DTensor) and s.placements == (Replicate(),) and s.shape == ()
(y.to_local() * 3).sum().backward()
assert_close(x.grad, ptcore.full((2, 3), 6.0))
assert_close(d.full_tensor(), x)
checks += 1

# distribute_tensor sends rank 0's data; the result is a leaf that keeps requires_grad
src = ptcore.full((4, 2), float(rank + 1), requires_grad=True)
e = distribute_tensor(src, mesh, [Replicate()])
assert e.is_leaf and e.requires_grad and e.placements == (Replicate(),)
assert_close(e.to_local(), ptcore.ones(4, 2))
checks += 1

# this rank's piece of a (5, 4) tensor sharded on dim 0, and of a (1, 4) one (rank 1: empty)
shape, offset = compute_local_shape_and_global_offset((5, 4), mesh, [Shard(0)])
assert (shape, offset) == (((5, 4), (0, 0)) if world == 1 else
                           [((3, 4), (0, 0)), ((2, 4), (3, 0))][rank]), (shape, offset)
shape, offset = compute_local_shape_and_global_offset((1, 4), mesh, [Shard(0)])
assert (shape, offset) == (((1, 4), (0, 0)) if rank == 0 else ((0, 4), (1, 0))), (shape, offset)
checks += 1

if world == 1:
    # any placement of a one-rank mesh holds the whole tensor
    sh = DTensor.from_local(x, mesh, [Shard(1)])
    assert sh.shape == (2, 3) and (sh + 1).placements == (Shard(1),)
    assert sh.redistribute(mesh, [Partial()]).placements == (Partial("sum"),)
    checks += 1
else:
    # placements that split the data over several ranks are refused, not faked
    for fn in (lambda: DTensor.from_local(x, mesh, [Shard(0)]),
               lambda: distribute_tensor(x, mesh, [Shard(1)]),
               lambda: d.redistribute(mesh, [Partial()])):
        try:
            fn()
            raise AssertionError("expected NotImplementedError")
        except NotImplementedError as exc:
            assert "Shard" in str(exc) or "Partial" in str(exc), exc
    checks += 1

# functional collectives: new tensors, inputs untouched
t = ptcore.tensor([[1.0, 2.0], [3.0, 4.0]]) * (rank + 1)
before = t.clone()
r = funcol.wait_tensor(funcol.all_reduce(t, "sum", mesh))
assert_close(r, ptcore.tensor([[1.0, 2.0], [3.0, 4.0]]) * sum(range(1, world + 1)))
assert_close(t, before)
g0 = funcol.all_gather_tensor(t, 0, mesh)
g1 = funcol.all_gather_tensor(t, 1, (mesh, 0))
parts = [ptcore.tensor([[1.0, 2.0], [3.0, 4.0]]) * (i + 1) for i in range(world)]
assert_close(g0, ptcore.cat(parts, 0))
assert_close(g1, ptcore.cat(parts, 1))
big = ptcore.arange(4.0 * world).view(2 * world, 2) + rank
rs = funcol.reduce_scatter_tensor(big, "sum", 0, mesh)
full = sum(ptcore.arange(4.0 * world).view(2 * world, 2) + i for i in range(world))
assert_close(rs, full[2 * rank:2 * rank + 2])
rs1 = funcol.reduce_scatter_tensor(big.t().contiguous(), "sum", 1, mesh)
assert_close(rs1, full.t()[:, 2 * rank:2 * rank + 2])
b = funcol.broadcast(ptcore.tensor([float(rank + 7)]), 0, mesh)
assert b.item() == 7.0
checks += 1

# all_to_all_single with uneven splits, and its gradient
rows_out = [rank + 1 for _ in range(world)]            # rank r gets r+1 rows from each rank
rows_in = [i + 1 for i in range(world)]                 # and sends i+1 rows to rank i
inp = (ptcore.arange(float(sum(rows_in) * 2)).view(-1, 2) + 100 * rank).requires_grad_()
out = funcol.all_to_all_single_autograd(inp, rows_out, rows_in, mesh)
assert tuple(out.shape) == (sum(rows_out), 2)
expect = []
for i in range(world):
    theirs = ptcore.arange(float(sum(i2 + 1 for i2 in range(world)) * 2)).view(-1, 2) + 100 * i
    start = sum(j + 1 for j in range(rank))
    expect.append(theirs[start:start + rank + 1])
assert_close(out, ptcore.cat(expect))
w = ptcore.arange(float(out.numel())).view(out.shape) + rank
(out * w).sum().backward()
assert_close(inp.grad, funcol.all_to_all_single(w, rows_in, rows_out, mesh))
# all_gather's gradient is the sum over ranks of each one's gradient block
v = (ptcore.ones(2, 3) * (rank + 1)).requires_grad_()
ag = funcol.all_gather_tensor_autograd(v, 0, mesh)
wg = ptcore.arange(float(ag.numel())).view(ag.shape)
(ag * wg * (rank + 1)).sum().backward()
assert_close(v.grad, wg[2 * rank:2 * rank + 2] * sum(range(1, world + 1)))
checks += 1

print(f"OK-DTENSOR rank={rank} world={world} checks={checks}", flush=True)
dist.destroy_process_group()
