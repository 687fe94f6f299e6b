"""Worker (mpiexec -n 2): DistributedDataParallel with communication hooks: torch's
allreduce_hook gives the built-in average bit for bit, the fp16/bf16 compression hooks
and wrappers the average within their rounding, a user hook returning a completed
future of the local bucket leaves each rank its own gradients; GradBucket's API."""
import numpy as np

import ptcore
import ptcore.distributed as dist
from ptcore import nn
from ptcore.distributed.algorithms.ddp_comm_hooks import default_hooks as H
from ptcore.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, n = dist.get_rank(), dist.get_world_size()


def grads(hook=None, state=None):
    ptcore.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)), bucket_cap_mb=0.0002)
    if hook is not None:
        model.register_comm_hook(state, hook)
    g = np.random.default_rng(7 + rank)
    x = ptcore.from_numpy(g.standard_normal((4, 8)).astype(np.float32))
    model(x).pow(2).sum().backward()
    return [p.grad.clone() for p in model.module.parameters()], model


base, _ = grads()
same, _ = grads(H.allreduce_hook)
assert all(ptcore.equal(a, b) for a, b in zip(base, same)), "allreduce_hook"
for hook, tol in ((H.fp16_compress_hook, 2e-3), (H.bf16_compress_hook, 2e-2),
                  (H.fp16_compress_wrapper(H.allreduce_hook), 2e-3),
                  (H.bf16_compress_wrapper(H.allreduce_hook), 2e-2)):
    got, _ = grads(hook)
    for a, b in zip(base, got):
        assert np.allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol), hook


seen = []


def local_only(state, bucket):
    seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()),
                 [tuple(t.shape) for t in bucket.gradients()], bucket.buffer().numel()))
    fut = ptcore.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


local, model = grads(local_only, state=None)
ptcore.manual_seed(0)
ref = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
g = np.random.default_rng(7 + rank)
ref(ptcore.from_numpy(g.standard_normal((4, 8)).astype(np.float32))).pow(2).sum().backward()
for a, p in zip(local, ref.parameters()):
    assert np.allclose(a.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-7), "local hook"
assert len(seen) > 1 and seen[-1][1] and not seen[0][1], seen
assert sum(s[2] for s in seen) == 4 and all(sum(int(np.prod(sh)) for sh in s[3]) == s[4]
                                            for s in seen), seen
try:
    model.register_comm_hook(None, H.allreduce_hook)
except RuntimeError as e:
    assert "only be called once" in str(e)
else:
    raise AssertionError("a second register_comm_hook did not raise")
dist.barrier()
print(f"rank {rank} OK")
dist.destroy_process_group()
