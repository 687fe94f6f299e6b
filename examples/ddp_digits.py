"""Data-parallel training over MPI
===============================

Train the digits CNN of ``examples/digits.py`` data-parallel over MPI processes.

Each rank trains on its own share of every epoch (``DistributedSampler``), gradients are
averaged by ``DistributedDataParallel`` during backward, and every rank prints its progress.

    mpirun -n 2 python examples/ddp_digits.py
    python -m ptcore.distributed.run --nproc-per-node 2 examples/ddp_digits.py

(``pip install ".[mpi,examples]"`` gives mpi4py, an MPI and scikit-learn.)
Expected: test accuracy >= 97 % on every rank, all ranks holding identical weights.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ptcore  # noqa: E402
import ptcore.distributed as dist  # noqa: E402
from ptcore.nn import functional as F  # noqa: E402
from ptcore.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from ptcore.utils.data import DataLoader, TensorDataset  # noqa: E402
from ptcore.utils.data.distributed import DistributedSampler  # noqa: E402

from digits import DigitsCNN, evaluate, load_digits_split  # noqa: E402


def say(line):
    """Print one line in one write, so that the ranks' lines do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32, help="global batch (split over ranks)")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    tag = f"[rank {rank}/{world}]"
    ptcore.manual_seed(args.seed + rank)       # DDP makes rank 0's initial weights everyone's
    xtr, ytr, xte, yte = load_digits_split(args.seed)
    train_set = TensorDataset(xtr, ytr)
    sampler = DistributedSampler(train_set, seed=args.seed)
    local_batch = max(1, args.batch_size // world)
    train_loader = DataLoader(train_set, batch_size=local_batch, sampler=sampler)
    test_loader = DataLoader(TensorDataset(xte, yte), batch_size=256)
    say(f"{tag} {len(sampler)} of {len(train_set)} training images per epoch, batch "
          f"{local_batch}, {ptcore.get_num_threads()} thread(s)")

    model = DDP(DigitsCNN())
    opt = ptcore.optim.Adam(model.parameters(), lr=args.lr)
    sched = ptcore.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                                 steps_per_epoch=len(train_loader))
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        stats = ptcore.zeros(2, dtype=ptcore.float64)      # loss sum, samples
        for xb, yb in train_loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            stats += ptcore.tensor([loss.item() * yb.shape[0], yb.shape[0]],
                                   dtype=ptcore.float64)
        local = float(stats[0] / stats[1])
        dist.all_reduce(stats)
        # the batch-norm running statistics are rank 0's as of each forward (DDP broadcasts
        # buffers then), each rank's last forward updated its own: evaluate with rank 0's
        for b in model.module.buffers():
            dist.broadcast(b, 0)
        te_loss, te_acc = evaluate(model.module, test_loader)
        say(f"{tag} epoch {epoch:2d}/{args.epochs}  local train loss {local:.4f}  "
              f"global train loss {float(stats[0] / stats[1]):.4f}  test acc "
              f"{100 * te_acc:6.2f}%  {time.perf_counter() - t0:5.1f} s")

    # every rank holds the same weights: compare a checksum
    check = ptcore.stack([p.detach().double().sum() for p in model.parameters()]).sum()
    sums = [None] * world
    dist.all_gather_object(sums, float(check))
    same = max(sums) - min(sums) <= 1e-9 * max(1.0, abs(sums[0]))
    say(f"{tag} final test accuracy {100 * te_acc:.2f}%, weights identical on all ranks: "
          f"{same}")
    dist.destroy_process_group()
    return te_acc >= 0.97 and same


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
