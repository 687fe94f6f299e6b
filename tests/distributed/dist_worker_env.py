"""Worker for the launcher test: torchrun's variables are set before init_process_group."""
import os
import sys

import ptcore
import ptcore.distributed as dist

env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                      "MASTER_ADDR", "MASTER_PORT")}
dist.init_process_group(backend="gloo")          # torch scripts' backend name is accepted
assert dist.get_backend() == "gloo", dist.get_backend()    # and reported back, as torch's
members = [0, 1] if dist.get_world_size() > 1 else [0]
g = dist.new_group(members, backend="nccl")
if dist.get_rank() in members:
    assert dist.get_backend(g) == "nccl"
else:                       # torch's answer on a rank outside the group
    assert g is dist.GroupMember.NON_GROUP_MEMBER, g
    try:
        dist.get_backend(g)
        raise AssertionError("get_backend of a group this rank is not in")
    except ValueError:
        pass
assert dist.get_backend(dist.new_group()) == "gloo"
assert dist.get_rank() == int(env["RANK"]) and dist.get_world_size() == int(env["WORLD_SIZE"])
t = ptcore.tensor([float(dist.get_rank())])
dist.all_reduce(t)
sys.stdout.write(f"ENV rank={env['RANK']} local={env['LOCAL_RANK']} world={env['WORLD_SIZE']} "
                 f"local_world={env['LOCAL_WORLD_SIZE']} master={env['MASTER_ADDR']}:"
                 f"{env['MASTER_PORT']} sum={t.item():g} argv={sys.argv[1:]}\n")
sys.stdout.flush()
dist.destroy_process_group()
