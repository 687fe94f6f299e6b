"""Worker: new_subgroups, new_subgroups_by_enumeration, all_gather_single and
send_object_list/recv_object_list on 2 or 4 ranks."""
import sys

import numpy as np

import ptcore
import ptcore.distributed as dist

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
checks = 0

cur, groups = dist.new_subgroups(group_size=2 if world % 2 == 0 else 1)
size = 2 if world % 2 == 0 else 1
assert len(groups) == world // size and dist.get_world_size(cur) == size
t = ptcore.tensor([float(rank)])
dist.all_reduce(t, group=cur)
first = rank - rank % size
assert t.item() == sum(range(first, first + size)), t
checks += 1

cur, groups = dist.new_subgroups_by_enumeration([[r] for r in range(world)])
assert dist.get_world_size(cur) == 1 and len(groups) == world
checks += 1

inp = ptcore.arange(2, dtype=ptcore.int64) + 1 + 2 * rank
out = ptcore.zeros(world * 2, dtype=ptcore.int64)
dist.all_gather_single(out, inp)
np.testing.assert_array_equal(out.numpy(), np.arange(1, 2 * world + 1))
out2 = ptcore.zeros(world, 2, dtype=ptcore.int64)
dist.all_gather_single(out2, inp)
np.testing.assert_array_equal(out2.numpy(), np.arange(1, 2 * world + 1).reshape(world, 2))
checks += 1

if rank == 0:
    dist.send_object_list([{"a": 1}, "text", [1, 2, 3]], dst=1)
elif rank == 1:
    objs = [None, None, None]
    src = dist.recv_object_list(objs, src=0)
    assert src == 0 and objs == [{"a": 1}, "text", [1, 2, 3]], objs
    checks += 1
    objs = [None]
    dist.send_object_list([("back", rank)], dst=0)
if rank == 0:
    objs = [None]
    assert dist.recv_object_list(objs) == 1 and objs == [("back", 1)], objs
    checks += 1

assert dist.is_backend_available("mpi") and not dist.is_backend_available("nccl")
assert dist.get_default_backend_for_device("cpu") == "mpi"
checks += 1
dist.barrier()
sys.stdout.write(f"OK-EXTRAS rank={rank} world={world} checks={checks}\n")
sys.stdout.flush()
dist.destroy_process_group()
