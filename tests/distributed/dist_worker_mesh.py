"""Worker: init_device_mesh / DeviceMesh on 2 ranks (1-D) or 4 ranks (2 x 2)."""
import sys

import numpy as np

import ptcore
import ptcore.distributed as dist
from ptcore.distributed.device_mesh import DeviceMesh, init_device_mesh

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
checks = 0
if world == 4:
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    assert mesh.shape == (2, 2) and mesh.ndim == 2 and mesh.size() == 4 and mesh.size(1) == 2
    assert mesh.get_coordinate() == (rank // 2, rank % 2)
    assert mesh.get_local_rank("dp") == rank // 2 and mesh.get_local_rank(1) == rank % 2
    t = ptcore.tensor([float(rank)])
    dist.all_reduce(t, group=mesh.get_group("tp"))       # ranks {0,1} and {2,3}
    assert t.item() == (1.0 if rank < 2 else 5.0), t
    t = ptcore.tensor([float(rank)])
    dist.all_reduce(t, group=mesh.get_group("dp"))       # ranks {0,2} and {1,3}
    assert t.item() == (2.0 if rank % 2 == 0 else 4.0), t
    checks += 2
    sub = mesh["tp"]
    assert sub.ndim == 1 and sub.mesh_dim_names == ("tp",)
    np.testing.assert_array_equal(sub.mesh.numpy(), [rank - rank % 2, rank - rank % 2 + 1])
    assert sub.get_group() is mesh.get_group("tp") and sub.get_local_rank() == rank % 2
    checks += 1
    try:
        mesh.get_group()
        raise AssertionError("get_group() without a dim on a 2-D mesh must fail")
    except RuntimeError:
        checks += 1
else:
    mesh = init_device_mesh("cpu", (world,))
    t = ptcore.tensor([1.0])
    dist.all_reduce(t, group=mesh.get_group())
    assert t.item() == world and mesh.get_local_rank() == rank
    assert repr(mesh) == f"DeviceMesh('cpu', {list(range(world))})", repr(mesh)
    checks += 3
    m2 = DeviceMesh("cpu", list(range(world)), mesh_dim_names=("x",))
    assert m2.get_group("x") is not None and m2.get_local_rank("x") == rank
    checks += 1
try:
    init_device_mesh("cpu", (world + 1,))
    raise AssertionError("a mesh larger than the world must fail")
except RuntimeError:
    checks += 1
dist.barrier()
sys.stdout.write(f"OK-MESH rank={rank} world={world} checks={checks}\n")
sys.stdout.flush()
dist.destroy_process_group()
