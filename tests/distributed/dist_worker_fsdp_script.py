"""A PyTorch FSDP training script as users write it (torchrun-style environment, gloo,
DistributedSampler, auto-wrap policy, clip_grad_norm_, LR scheduler, a rank-0 full state
dict).  test_fsdp.py runs it with torch and, with its imports changed to
``import ptcore as torch``, with ptcore, and compares what rank 0 prints."""
import functools
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import FullStateDictConfig, ShardingStrategy, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, d=12, classes=4):
        super().__init__()
        self.inp = nn.Linear(6, d)
        self.blocks = nn.Sequential(Block(d), Block(d), Block(d))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    model = Net()
    with torch.no_grad():                       # the same weights for both libraries
        for p in model.parameters():
            p.copy_(torch.from_numpy((0.2 * rng.standard_normal(tuple(p.shape)))
                                     .astype(np.float32)))
    x = torch.from_numpy(rng.standard_normal((48, 6)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 4, 48))
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=False)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    model = FSDP(model, auto_wrap_policy=policy, sharding_strategy=ShardingStrategy.FULL_SHARD,
                 device_id=torch.device("cpu"))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2)
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            norm = model.clip_grad_norm_(1.0)
            opt.step()
            total[0] += loss.item() * len(xb)
            total[1] += len(xb)
        sched.step()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} loss {(total[0] / total[1]).item():.6f} "
                  f"norm {norm.item():.6f}", flush=True)
    cfg = FullStateDictConfig(rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        state = model.state_dict()
    model.eval()
    with torch.no_grad():
        acc = (model(x[rank::world]).argmax(1) == y[rank::world]).float().mean()
    if rank == 0:
        print(f"accuracy {acc.item():.6f}", flush=True)
        for k, v in state.items():
            print(f"param {k} {tuple(v.shape)} {v.double().sum().item():.6f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    if torch.__name__ == "torch":
        # torch's gloo threads can abort the interpreter's teardown ("terminate called
        # without an active exception"); everything is printed and the group destroyed
        sys.stdout.flush()
        os._exit(0)
