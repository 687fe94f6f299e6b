"""Worker (mpiexec -n N): ptcore's FSDP against torch's FSDP (gloo, CPU) in the same
processes: the same model and batches give the same local flat-parameter shards, losses,
gradients, gradient norms, full state dicts, optimizer state dicts and reprs (float32:
torch's FSDP clip_grad_norm_ refuses float64), for FULL_SHARD / SHARD_GRAD_OP / NO_SHARD
with SGD and Adam, nested units from a wrap policy, with and without use_orig_params, and
bfloat16 mixed precision (to 2e-2)."""
import os
import socket
import sys
import warnings

import numpy as np

import ptcore
import ptcore.distributed as pdist
import torch
import torch.distributed as tdist
from torch.distributed.fsdp import FullyShardedDataParallel as TFSDP
from torch.distributed.fsdp import MixedPrecision as TMixed
from torch.distributed.fsdp import ShardingStrategy as TStrategy
from torch.distributed.fsdp.wrap import ModuleWrapPolicy as TPolicy
from ptcore.distributed.fsdp import FullyShardedDataParallel as PFSDP
from ptcore.distributed.fsdp import MixedPrecision as PMixed
from ptcore.distributed.fsdp import ShardingStrategy as PStrategy
from ptcore.distributed.fsdp.wrap import ModuleWrapPolicy as PPolicy

warnings.filterwarnings("ignore")
pdist.init_process_group()
rank, n = pdist.get_rank(), pdist.get_world_size()
port = [None]
if rank == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port[0] = s.getsockname()[1]
pdist.broadcast_object_list(port, src=0)
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port[0]))
tdist.init_process_group("gloo", rank=rank, world_size=n)
torch.set_num_threads(1)
LOCAL, D, STEPS = 3, 6, 5


def build(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(D)
            self.ff = nn.Sequential(nn.Linear(D, 2 * D), nn.Tanh(), nn.Linear(2 * D, D))

        def forward(self, x):
            return x + self.ff(self.ln(x))

    model = nn.Sequential(nn.Linear(5, D), Block(), nn.ReLU(), Block(), nn.Linear(D, 3))
    return model, Block


def copy_weights(tmodel, pmodel):
    with ptcore.no_grad():
        for (tn, t), (pn, p) in zip(tmodel.state_dict().items(), pmodel.state_dict().items()):
            assert tn == pn, (tn, pn)
            p.copy_(ptcore.from_numpy(t.numpy().copy()))


def close(a, b, what, tol=2e-5):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
        raise AssertionError(f"rank {rank}: {what}: ptcore {a} vs torch {b}")


def run(strategy, optim, use_orig=False, mp=False):
    torch.manual_seed(0)
    tmodel, tblock = build(torch)
    tmodel = tmodel.float()
    pmodel, pblock = build(ptcore)
    pmodel = pmodel.float()
    copy_weights(tmodel, pmodel)
    tmp = TMixed(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if mp else None
    pmp = PMixed(param_dtype=ptcore.bfloat16, reduce_dtype=ptcore.float32) if mp else None
    tf = TFSDP(tmodel, sharding_strategy=getattr(TStrategy, strategy),
               auto_wrap_policy=TPolicy({tblock}), device_id=torch.device("cpu"),
               use_orig_params=use_orig, mixed_precision=tmp)
    pf = PFSDP(pmodel, sharding_strategy=getattr(PStrategy, strategy),
               auto_wrap_policy=PPolicy({pblock}), use_orig_params=use_orig,
               mixed_precision=pmp)
    tag = f"{strategy} {optim}" + (" orig" if use_orig else "") + (" bf16" if mp else "")
    tol = 2e-2 if mp else 2e-5
    tparams = dict(tf.named_parameters())
    pparams = dict(pf.named_parameters())
    assert list(tparams) == list(pparams), (list(tparams), list(pparams))
    for k in tparams:
        close(pparams[k].detach().numpy(), tparams[k].detach().numpy(), f"{tag} shard {k}")
    if optim == "sgd":
        topt = torch.optim.SGD(tf.parameters(), lr=0.1, momentum=0.9)
        popt = ptcore.optim.SGD(pf.parameters(), lr=0.1, momentum=0.9)
    else:
        topt = torch.optim.Adam(tf.parameters(), lr=0.01)
        popt = ptcore.optim.Adam(pf.parameters(), lr=0.01)
    for step in range(STEPS):
        g = np.random.default_rng(step)
        x = g.standard_normal((n * LOCAL, 5)).astype(np.float32)[rank * LOCAL:(rank + 1) * LOCAL]
        y = g.integers(0, 3, n * LOCAL)[rank * LOCAL:(rank + 1) * LOCAL]
        topt.zero_grad()
        popt.zero_grad()
        tl = torch.nn.functional.cross_entropy(tf(torch.from_numpy(x)).float(),
                                               torch.from_numpy(y))
        pl = ptcore.nn.functional.cross_entropy(pf(ptcore.from_numpy(x)).float(),
                                                ptcore.from_numpy(y))
        tl.backward()
        pl.backward()
        close(pl.item(), tl.item(), f"{tag} loss {step}", tol)
        for k in tparams:
            tg, pg = tparams[k].grad, pparams[k].grad
            assert (tg is None) == (pg is None), (tag, k, tg, pg)
            if tg is not None:
                close(pg.numpy(), tg.numpy(), f"{tag} grad {k} {step}", tol)
        tn = tf.clip_grad_norm_(0.5)
        pn = pf.clip_grad_norm_(0.5)
        close(pn.item(), tn.item(), f"{tag} grad norm {step}", tol)
        topt.step()
        popt.step()
    tsd, psd = tf.state_dict(), pf.state_dict()
    assert list(tsd) == list(psd), (list(tsd), list(psd))
    for k in tsd:
        close(psd[k].numpy(), tsd[k].numpy(), f"{tag} state_dict {k}", tol)
    if use_orig:
        print(f"OK-TORCH {tag} rank={rank}", flush=True)
        return
    tosd, posd = TFSDP.optim_state_dict(tf, topt), PFSDP.optim_state_dict(pf, popt)
    assert list(tosd["state"]) == list(posd["state"]), (list(tosd["state"]), list(posd["state"]))
    assert tosd["param_groups"][0]["params"] == posd["param_groups"][0]["params"]
    for name, st in tosd["state"].items():
        assert sorted(st) == sorted(posd["state"][name]), (st.keys(), posd["state"][name].keys())
        for k, v in st.items():
            close(posd["state"][name][k].numpy(), v.numpy(), f"{tag} {name} {k}", tol)
    assert repr(pf) == repr(tf), (repr(pf), repr(tf))
    print(f"OK-TORCH {tag} rank={rank}", flush=True)


for strategy, optim in (("FULL_SHARD", "sgd"), ("FULL_SHARD", "adam"),
                        ("SHARD_GRAD_OP", "adam"), ("NO_SHARD", "sgd")):
    run(strategy, optim)
run("FULL_SHARD", "adam", use_orig=True)
run("NO_SHARD", "sgd", use_orig=True)
run("FULL_SHARD", "adam", mp=True)
tdist.barrier()
tdist.destroy_process_group()
pdist.barrier()           # no rank leaves while another still tears gloo down
pdist.destroy_process_group()
# torch's gloo threads can abort the interpreter's teardown ("terminate called without an
# active exception"): everything is printed and both groups destroyed, so leave at once
sys.stdout.flush()
os._exit(0)
