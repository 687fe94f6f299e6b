"""Worker (mpiexec -n N): ZeroRedundancyOptimizer equals one optimizer over all parameters
(SGD with momentum, Adam; bucket views on and off; LR scheduler; DDP gradients), its
partition equals torch's greedy algorithm, state_dict / load_state_dict as a single
optimizer's; Join with uneven inputs."""
import copy

import numpy as np

import ptcore
import ptcore.distributed as dist
from ptcore import nn
from ptcore.distributed.algorithms.join import Join, Joinable, JoinHook
from ptcore.distributed.optim import ZeroRedundancyOptimizer as ZeRO
from ptcore.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
rank, n = dist.get_rank(), dist.get_world_size()
BATCH = 12
lossf = nn.MSELoss()


def mlp():
    ptcore.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 7), nn.Tanh(),
                         nn.Linear(7, 3))


def batch(step):
    g = np.random.default_rng(500 + step)
    x = ptcore.from_numpy(g.standard_normal((BATCH, 6)).astype(np.float32))
    y = ptcore.from_numpy(g.standard_normal((BATCH, 3)).astype(np.float32))
    return x, y


def check_same(model, ref, what, tol=1e-6):
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        a, b = p.detach().numpy(), q.detach().numpy()
        if not np.allclose(a, b, rtol=tol, atol=tol):
            raise AssertionError(f"{what}: rank {rank}: parameter {name} differs from the "
                                 f"single-process optimizer by {np.abs(a - b).max():.3g}")


def check_all_ranks_equal(model, what):
    mine = [p.detach().numpy().copy() for p in model.parameters()]
    every = [None] * n
    dist.all_gather_object(every, mine)
    for r in range(n):
        for a, b in zip(every[r], mine):
            assert np.array_equal(a, b), f"{what}: rank {r} and rank {rank} differ"


def torch_partition(groups, world):
    """torch's _partition_parameters, rewritten: per group, largest first (stable), to the
    first rank with the smallest running total."""
    sizes = [0] * world
    out = [[] for _ in range(world)]
    for params in groups:
        per = [[] for _ in range(world)]
        for p in sorted(params, key=lambda t: t.numel(), reverse=True):
            r = sizes.index(min(sizes))
            per[r].append(id(p))
            sizes[r] += p.numel()
        for r in range(world):
            out[r].append(per[r])
    return out


def got_partition(zero):
    return [[[id(p) for p in g["params"]] for g in groups]
            for groups in zero._partition_parameters()]


# ------------------------------------------------------------------ partition
shapes = [(3, 4), (5,), (12,), (2, 2), (4,), (7, 1), (1,), (6, 2), (4,)]
ts = [ptcore.zeros(s, requires_grad=True) for s in shapes]
z = ZeRO(ts, ptcore.optim.SGD, lr=0.1)
assert got_partition(z) == torch_partition([ts], n)
# the local optimizer holds exactly this rank's shard
assert [id(p) for p in z.optim.param_groups[0]["params"]] == got_partition(z)[rank][0]
z = ZeRO([{"params": ts[:4]}, {"params": ts[4:], "lr": 0.5}], ptcore.optim.SGD, lr=0.1)
assert got_partition(z) == torch_partition([ts[:4], ts[4:]], n)
assert z.param_groups[1]["lr"] == 0.5 and z.optim.param_groups[1]["lr"] == 0.5
# add_param_group: the new group is partitioned after the old ones, which keep their owners
z = ZeRO(ts[:5], ptcore.optim.SGD, lr=0.1)
before = got_partition(z)
z.add_param_group({"params": ts[5:], "lr": 0.01})
assert got_partition(z) == torch_partition([ts[:5], ts[5:]], n)
assert [g[0] for g in got_partition(z)] == [g[0] for g in before]
assert len(z.optim.param_groups) == 2 and z.optim.param_groups[1]["lr"] == 0.01
# a manual partition
zz = ZeRO(ts, ptcore.optim.SGD, lr=0.1)
zz._clear_cache()
manual = [ts[r::n] for r in range(n)]
zz._partition_parameters(manual)
assert got_partition(zz) == [[[id(p) for p in m]] for m in manual]
print(f"OK-ZERO partition rank={rank}", flush=True)


# ------------------------------------------------------------------ training
def train(opt_class, bucket_view, steps=5, scheduler=False, use_ddp=False, **kw):
    model, ref = mlp(), mlp()
    net = DDP(model) if use_ddp else model
    zero = ZeRO(model.parameters(), opt_class, parameters_as_bucket_view=bucket_view, **kw)
    ropt = opt_class(ref.parameters(), **kw)
    scheds = ()
    if scheduler:
        scheds = (ptcore.optim.lr_scheduler.StepLR(zero, step_size=2, gamma=0.1),
                  ptcore.optim.lr_scheduler.StepLR(ropt, step_size=2, gamma=0.1))
    for step in range(steps):
        x, y = batch(step)
        zero.zero_grad()
        ropt.zero_grad()
        if use_ddp:                 # each rank its part, DDP averages the gradients
            part = np.array_split(np.arange(BATCH), n)[rank]
            lossf(net(x[int(part[0]):int(part[-1]) + 1]),
                  y[int(part[0]):int(part[-1]) + 1]).backward()
            # the reference: the mean of the ranks' losses
            parts = np.array_split(np.arange(BATCH), n)
            (sum(lossf(ref(x[int(q[0]):int(q[-1]) + 1]), y[int(q[0]):int(q[-1]) + 1])
                 for q in parts) / n).backward()
        else:                       # the same full batch on every rank
            lossf(model(x), y).backward()
            lossf(ref(x), y).backward()
        zero.step()
        ropt.step()
        for s in scheds:
            s.step()
        if scheduler:
            # the scheduler sets ZeRO's param_groups; the local optimizer follows at step()
            assert zero.param_groups[0]["lr"] == ropt.param_groups[0]["lr"]
        check_same(model, ref, f"{opt_class.__name__} bucket_view={bucket_view} step {step}",
                   tol=2e-5 if use_ddp else 1e-6)
    check_all_ranks_equal(model, f"{opt_class.__name__} bucket_view={bucket_view}")
    return model, ref, zero, ropt


finals = {}
for cls, kw in ((ptcore.optim.SGD, dict(lr=0.1, momentum=0.9)),
                (ptcore.optim.Adam, dict(lr=0.01))):
    for bv in (False, True):
        model, ref, zero, ropt = train(cls, bv, **kw)
        finals[cls.__name__, bv] = [p.detach().numpy().copy() for p in model.parameters()]
        if bv:
            # every trainable parameter is a view of its owner's flat bucket
            for r in range(n):
                b = zero._buckets[r]
                lo = b.data_ptr()
                hi = lo + b.numel() * b.element_size()
                for p in zero._params_of_rank(r):
                    assert lo <= p.data_ptr() < hi
    for a, b in zip(finals[cls.__name__, False], finals[cls.__name__, True]):
        assert np.array_equal(a, b), "bucket views change the result"
print(f"OK-ZERO train rank={rank}", flush=True)

# the learning rate follows param_groups (set by a scheduler or by hand)
train(ptcore.optim.SGD, False, steps=5, scheduler=True, lr=0.1, momentum=0.9)
train(ptcore.optim.Adam, True, steps=5, scheduler=True, lr=0.01)
model = mlp()
zero = ZeRO(model.parameters(), ptcore.optim.SGD, lr=0.1)
zero.param_groups[0]["lr"] = 0.0
x, y = batch(0)
lossf(model(x), y).backward()
w0 = [p.detach().numpy().copy() for p in model.parameters()]
zero.step()
assert all(np.array_equal(a, p.detach().numpy()) for a, p in zip(w0, model.parameters()))
print(f"OK-ZERO lr rank={rank}", flush=True)

# gradients averaged by DDP
train(ptcore.optim.SGD, False, use_ddp=True, lr=0.1, momentum=0.9)
train(ptcore.optim.Adam, True, use_ddp=True, lr=0.01)
print(f"OK-ZERO ddp rank={rank}", flush=True)


# ------------------------------------------------------------------ state dicts
def same_state_dict(a, b, what):
    assert sorted(a["state"]) == sorted(b["state"]), (what, sorted(a["state"]), sorted(b["state"]))
    for k in a["state"]:
        sa, sb = a["state"][k], b["state"][k]
        assert sorted(sa) == sorted(sb), (what, k, sorted(sa), sorted(sb))
        for name in sa:
            va, vb = sa[name], sb[name]
            if isinstance(va, ptcore.Tensor):
                assert isinstance(vb, ptcore.Tensor) and va.shape == vb.shape, (what, k, name)
                assert va.dtype == vb.dtype, (what, k, name, va.dtype, vb.dtype)
                assert np.allclose(va.numpy(), vb.numpy(), rtol=1e-6, atol=1e-7), (what, k, name)
            else:
                assert va == vb, (what, k, name, va, vb)
    assert a["param_groups"] == b["param_groups"], (what, a["param_groups"], b["param_groups"])


for cls, kw in ((ptcore.optim.SGD, dict(lr=0.1, momentum=0.9)),
                (ptcore.optim.Adam, dict(lr=0.01, weight_decay=0.01))):
    model, ref, zero, ropt = train(cls, False, steps=3, scheduler=True, **kw)
    try:
        zero.state_dict()
        raise AssertionError("state_dict before consolidate_state_dict did not raise")
    except RuntimeError:
        pass
    to = n - 1
    zero.consolidate_state_dict(to=to)
    if rank == to:
        sd = zero.state_dict()
        same_state_dict(sd, ropt.state_dict(), cls.__name__)
    else:
        sd = None
        try:
            zero.state_dict()
            raise AssertionError("state_dict on a rank without the consolidated state")
        except RuntimeError:
            pass
    box = [sd]
    dist.broadcast_object_list(box, src=to)
    sd = box[0]
    # a fresh ZeRO over a copy of the model, loaded, continues exactly as the original
    model2 = copy.deepcopy(model)
    zero2 = ZeRO(model2.parameters(), cls, parameters_as_bucket_view=True, **kw)
    zero2.load_state_dict(sd)
    assert zero2.param_groups[0]["lr"] == zero.param_groups[0]["lr"]
    assert zero2.optim.param_groups[0]["lr"] == zero.param_groups[0]["lr"]
    for step in range(3, 6):
        x, y = batch(step)
        for m, o in ((model, zero), (model2, zero2), (ref, ropt)):
            o.zero_grad()
            lossf(m(x), y).backward()
            o.step()
        check_same(model2, model, f"{cls.__name__} after load_state_dict step {step}", tol=0)
        check_same(model, ref, f"{cls.__name__} continued step {step}")
    zero2.consolidate_state_dict(to=0)
    if rank == 0:
        same_state_dict(zero2.state_dict(), ropt.state_dict(), cls.__name__ + " reloaded")
print(f"OK-ZERO state_dict rank={rank}", flush=True)


# ------------------------------------------------------------------ Join
class GradAverager(Joinable):
    """Averages the gradients over the ranks by hand (one flat all-reduce); its join hook
    all-reduces zeros in their place on a rank that ran out of inputs."""

    def __init__(self, params):
        super().__init__()
        self.params = list(params)
        self.last_joiner = None

    def _flat_allreduce(self, flat):
        dist.all_reduce(flat)
        flat /= n
        off = 0
        for p in self.params:
            p.grad = flat[off:off + p.numel()].view(tuple(p.shape)).clone()
            off += p.numel()

    def sync(self):
        work = Join.notify_join_context(self)
        if work is not None:
            work.wait()
        self._flat_allreduce(ptcore.cat([p.grad.reshape(-1) for p in self.params]))

    def join_hook(self, **kwargs):
        owner = self

        class Hook(JoinHook):
            def main_hook(self):
                owner._flat_allreduce(ptcore.zeros(sum(p.numel() for p in owner.params)))

            def post_hook(self, is_last_joiner):
                owner.last_joiner = is_last_joiner
        return Hook()

    @property
    def join_device(self):
        return self.params[0].device

    @property
    def join_process_group(self):
        return dist.group.WORLD


def my_batches(r):
    return 2 + (n - 1 - r)            # uneven: rank 0 has the most, the last rank 2 batches


MOST = my_batches(0)


def train_uneven_oracle(ref, ropt):
    """One process: step k averages (over all n ranks) the losses of the ranks that still
    had a batch k."""
    for step in range(MOST):
        ropt.zero_grad()
        total = sum(lossf(ref(batch(100 * step + r)[0]), batch(100 * step + r)[1])
                    for r in range(n) if step < my_batches(r))
        (total / n).backward()
        ropt.step()


for cls, kw in ((ptcore.optim.SGD, dict(lr=0.1, momentum=0.9)),
                (ptcore.optim.Adam, dict(lr=0.01))):
    model, ref = mlp(), mlp()
    zero = ZeRO(model.parameters(), cls, parameters_as_bucket_view=cls is ptcore.optim.Adam,
                **kw)
    ropt = cls(ref.parameters(), **kw)
    avg = GradAverager(model.parameters())
    with Join([avg, zero]):
        for step in range(my_batches(rank)):
            x, y = batch(100 * step + rank)
            zero.zero_grad()
            lossf(model(x), y).backward()
            avg.sync()
            zero.step()
    train_uneven_oracle(ref, ropt)
    check_same(model, ref, f"Join {cls.__name__}", tol=2e-6)
    check_all_ranks_equal(model, f"Join {cls.__name__}")
    assert avg.last_joiner == (rank == 0), (rank, avg.last_joiner)

# ZeRO as the only joinable: the ranks that finish early shadow its step's broadcasts
model = mlp()
zero = ZeRO(model.parameters(), ptcore.optim.SGD, lr=0.1)
with Join([zero]):
    for step in range(my_batches(rank)):
        x, y = batch(0)               # the same batch everywhere
        zero.zero_grad()
        lossf(model(x), y).backward()
        zero.step()
check_all_ranks_equal(model, "Join ZeRO alone")

# throw_on_early_termination: every rank raises once one has run out of inputs
model = mlp()
zero = ZeRO(model.parameters(), ptcore.optim.SGD, lr=0.1)
avg = GradAverager(model.parameters())
caught = None
try:
    with Join([avg, zero], throw_on_early_termination=True):
        for step in range(my_batches(rank)):
            x, y = batch(step)
            zero.zero_grad()
            lossf(model(x), y).backward()
            avg.sync()
            zero.step()
except RuntimeError as e:
    caught = str(e)
assert caught is not None, f"rank {rank}: no RuntimeError on early termination"
assert ("exhausted" in caught), caught
# the ranks still agree, and collectives still match afterwards
check_all_ranks_equal(model, "after early termination")

# enable=False: a no-op context (even inputs)
model = mlp()
zero = ZeRO(model.parameters(), ptcore.optim.SGD, lr=0.1)
with Join([zero], enable=False):
    for step in range(2):
        zero.zero_grad()
        lossf(model(batch(0)[0]), batch(0)[1]).backward()
        zero.step()
check_all_ranks_equal(model, "Join enable=False")
print(f"OK-ZERO join rank={rank}", flush=True)


# ------------------------------------------------------------------ DDP under Join
def ddp_join_run(cls, kw, with_zero, **ddp_kw):
    model, ref = mlp(), mlp()
    ddp = DDP(model, **ddp_kw)
    if with_zero:
        opt = ZeRO(ddp.parameters(), cls, **kw)
        ctx = Join([ddp, opt])
    else:
        opt = cls(ddp.parameters(), **kw)
        ctx = ddp.join()
    ropt = cls(ref.parameters(), **kw)
    with ctx:
        for step in range(my_batches(rank)):
            x, y = batch(100 * step + rank)
            opt.zero_grad()
            lossf(ddp(x), y).backward()
            opt.step()
    train_uneven_oracle(ref, ropt)
    check_same(model, ref, f"DDP join {cls.__name__} zero={with_zero} {ddp_kw}", tol=2e-5)
    check_all_ranks_equal(model, f"DDP join {cls.__name__} zero={with_zero}")


assert isinstance(DDP(mlp()), Joinable)
ddp_join_run(ptcore.optim.SGD, dict(lr=0.1, momentum=0.9), False)
ddp_join_run(ptcore.optim.Adam, dict(lr=0.01), True)
ddp_join_run(ptcore.optim.SGD, dict(lr=0.1), True, bucket_cap_mb=0.0002,
             gradient_as_bucket_view=True)
ddp_join_run(ptcore.optim.SGD, dict(lr=0.1), False, find_unused_parameters=True)


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)
        self.register_buffer("count", ptcore.zeros(()))

    def forward(self, x):
        self.count += 1
        return self.lin(x)


# buffers come from the highest rank still training, and from a last joiner at the end
model = WithBuffer()
ddp = DDP(model)
opt = ptcore.optim.SGD(ddp.parameters(), lr=0.1)
with ddp.join():
    for step in range(my_batches(rank)):
        x, y = batch(step)
        opt.zero_grad()
        lossf(ddp(x), y).backward()
        opt.step()
assert float(model.count) == MOST, (rank, float(model.count))
check_all_ranks_equal(model, "DDP join with buffers")
print(f"OK-ZERO ddp-join rank={rank}", flush=True)
dist.destroy_process_group()
