"""Worker (mpiexec -n N): DistributedDataParallel training equals one process on the
concatenated batch; no_sync, find_unused_parameters, broadcast_buffers, state_dict."""
import copy
import sys

import numpy as np

import ptcore
import ptcore.distributed as dist
from ptcore import nn
from ptcore.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS = 20
LOCAL = 4


def mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 3))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


def batches(kind, step):
    g = np.random.default_rng(1000 + step)
    shape = (n * LOCAL, 8) if kind == "mlp" else (n * LOCAL, 1, 8, 8)
    x = ptcore.from_numpy(g.standard_normal(shape).astype(np.float32))
    y = ptcore.from_numpy(g.integers(0, 3, n * LOCAL).astype(np.int64))
    return x, y


def check_same(ddp_model, ref, what, tol=2e-5):
    for (name, p), q in zip(ddp_model.module.named_parameters(), ref.parameters()):
        a, b = p.detach().numpy(), q.detach().numpy()
        if not np.allclose(a, b, rtol=tol, atol=tol):
            raise AssertionError(f"{what}: rank {rank}: parameter {name} differs from the "
                                 f"single-process run by {np.abs(a - b).max():.3g}")


def train(kind, **ddp_kwargs):
    ptcore.manual_seed(rank)                      # different initial weights on every rank
    model = mlp() if kind == "mlp" else cnn()
    ddp = DDP(model, **ddp_kwargs)                # broadcasts rank 0's weights
    ptcore.manual_seed(0)
    ref = mlp() if kind == "mlp" else cnn()       # rank 0's initial weights
    check_same(ddp, ref, f"{kind} after construction", tol=0)
    opt = ptcore.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ropt = ptcore.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    for step in range(STEPS):
        x, y = batches(kind, step)
        mine = slice(rank * LOCAL, (rank + 1) * LOCAL)
        opt.zero_grad()
        lossf(ddp(x[mine]), y[mine]).backward()
        opt.step()
        ropt.zero_grad()
        lossf(ref(x), y).backward()
        ropt.step()
        check_same(ddp, ref, f"{kind} {ddp_kwargs} step {step}")
    return ddp


for kind in ("mlp", "cnn"):
    train(kind)
    print(f"OK-DDP {kind} rank={rank}", flush=True)
# many small buckets, gradients as bucket views
d = train("mlp", bucket_cap_mb=0.0005, gradient_as_bucket_view=True)
assert len(d._buckets) > 2, len(d._buckets)
for p in d.module.parameters():
    b, i = d._where[id(p)]
    assert p.grad.data_ptr() == b.views[i].data_ptr(), "grad is not a view of its bucket"
train("cnn", bucket_cap_mb=0.001)
print(f"OK-DDP buckets rank={rank}", flush=True)

# state_dict and module as torch's: keys prefixed with "module."
sd = d.state_dict()
assert all(k.startswith("module.") for k in sd), list(sd)
assert set(k[len("module."):] for k in sd) == set(d.module.state_dict())

# no_sync: two micro-batches, the first without all-reduce == one step on the whole batch
ptcore.manual_seed(0)
model = mlp()
ref = copy.deepcopy(model)
ddp = DDP(model, bucket_cap_mb=0.001)
opt = ptcore.optim.SGD(ddp.parameters(), lr=0.05)
ropt = ptcore.optim.SGD(ref.parameters(), lr=0.05)
lossf = nn.CrossEntropyLoss()
for step in range(5):
    opt.zero_grad()
    ropt.zero_grad()
    for micro in range(2):
        x, y = batches("mlp", 100 * step + micro)
        mine = slice(rank * LOCAL, (rank + 1) * LOCAL)
        if micro == 0:
            with ddp.no_sync():
                lossf(ddp(x[mine]), y[mine]).backward()
            # inside no_sync the gradients stay local: they differ between ranks
            g = [None] * n
            dist.all_gather_object(g, next(ddp.parameters()).grad.numpy().copy())
            assert n == 1 or not np.allclose(g[0], g[1])
        else:
            lossf(ddp(x[mine]), y[mine]).backward()
        lossf(ref(x), y).backward()
    opt.step()
    ropt.step()
    check_same(ddp, ref, f"no_sync step {step}")
print(f"OK-DDP no_sync rank={rank}", flush=True)


# find_unused_parameters: a branch no rank uses, and one only rank 0 uses
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 3)
        self.never = nn.Linear(8, 3)
        self.sometimes = nn.Linear(8, 3)

    def forward(self, x, use):
        h = self.b(self.a(x).relu())
        return h + self.sometimes(x) if use else h


ptcore.manual_seed(0)
model = Branchy()
ref = copy.deepcopy(model)
ddp = DDP(model, find_unused_parameters=True, bucket_cap_mb=0.0002)
opt = ptcore.optim.SGD(ddp.parameters(), lr=0.1)
ropt = ptcore.optim.SGD(ref.parameters(), lr=0.1)
for step in range(4):
    x, y = batches("mlp", step)
    mine = slice(rank * LOCAL, (rank + 1) * LOCAL)
    opt.zero_grad()
    ropt.zero_grad()
    lossf(ddp(x[mine], rank == 0), y[mine]).backward()
    # the reference: rank r's shard through the branch rank r takes, averaged over ranks
    total = sum(lossf(ref(x[r * LOCAL:(r + 1) * LOCAL], r == 0), y[r * LOCAL:(r + 1) * LOCAL])
                for r in range(n)) / n
    total.backward()
    opt.step()
    ropt.step()
    check_same(ddp, ref, f"find_unused step {step}")
    assert ddp.module.never.weight.grad is None
    assert ddp.module.sometimes.weight.grad is not None
print(f"OK-DDP find_unused rank={rank}", flush=True)

# without find_unused_parameters an unused parameter stops the next iteration with an error
model = Branchy()
model.never.requires_grad_(False)        # DDP leaves frozen parameters alone
ddp = DDP(model)
x, y = batches("mlp", 0)
lossf(ddp(x[:LOCAL], True), y[:LOCAL]).backward()         # all used: fine
lossf(ddp(x[:LOCAL], False), y[:LOCAL]).backward()        # 'sometimes' unused
try:
    ddp(x[:LOCAL], True)
    raise AssertionError("no error for an unfinished reduction")
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e), e
print(f"OK-DDP unused-error rank={rank}", flush=True)


# broadcast_buffers: rank 0's buffers overwrite the others' at construction and every forward
class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("count", ptcore.full((3,), float(rank)))

    def forward(self, x):
        return self.lin(x) + self.count[:2]


ddp = DDP(WithBuffer())
assert ddp.module.count.tolist() == [0.0] * 3
ddp.module.count.fill_(float(rank + 5))
ddp(ptcore.ones(1, 2))
assert ddp.module.count.tolist() == [5.0] * 3, ddp.module.count
ddp2 = DDP(WithBuffer(), broadcast_buffers=False)
ddp2.module.count.fill_(float(rank + 5))
ddp2(ptcore.ones(1, 2))
assert ddp2.module.count.tolist() == [float(rank + 5)] * 3
print(f"OK-DDP buffers rank={rank}", flush=True)
dist.destroy_process_group()
