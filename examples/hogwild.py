"""Hogwild: lock-free training in several processes
================================================

Hogwild: several processes train one shared model on the digits data.

Every process runs SGD on its own shard of the training set, writing the
*shared* parameters without locks (Recht et al., 2011).  The model's
parameters live in shared memory (``Module.share_memory()``), so every
update is seen by all processes.  The script trains the same model once in
a single process and once with ``--procs`` processes and prints both test
accuracies (they should agree within about a percent).

Usage: python examples/hogwild.py [--procs 2] [--epochs 30] [--start-method spawn]

Needs scikit-learn for ``sklearn.datasets.load_digits``.
"""
import argparse

import numpy as np

import ptcore
import ptcore.multiprocessing as mp
from ptcore import nn, optim
from ptcore.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(ptcore.relu(self.fc1(x)))


def load_data(seed=0):
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(x))
    x, y = x[perm], y[perm]
    n_train = int(0.8 * len(x))
    return (ptcore.from_numpy(x[:n_train]), ptcore.from_numpy(y[:n_train]),
            ptcore.from_numpy(x[n_train:]), ptcore.from_numpy(y[n_train:]))


def train(rank, model, x, y, epochs, lr, seed):
    """One Hogwild process: SGD over its shard, updating the shared parameters."""
    ptcore.manual_seed(seed + rank)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()


def accuracy(model, x, y):
    with ptcore.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--start-method", default="spawn")
    args = ap.parse_args()
    xtr, ytr, xte, yte = load_data()

    ptcore.manual_seed(0)
    single = Net()
    train(0, single, xtr, ytr, args.epochs, args.lr, seed=0)
    acc1 = accuracy(single, xte, yte)

    ptcore.manual_seed(0)
    model = Net()
    model.share_memory()          # parameters in shared memory: every process updates them
    ctx = mp.get_context(args.start_method)
    procs = []
    for rank in range(args.procs):
        shard = slice(rank, None, args.procs)   # each process sees its own part of the data
        p = ctx.Process(target=train, args=(rank, model, xtr[shard].contiguous(),
                                            ytr[shard].contiguous(), args.epochs * args.procs,
                                            args.lr, 0))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a training process failed (exit code {p.exitcode})")
    accn = accuracy(model, xte, yte)
    print(f"test accuracy, 1 process:          {acc1:.3f}")
    print(f"test accuracy, {args.procs} Hogwild processes: {accn:.3f}")
    return acc1, accn


if __name__ == "__main__":
    main()
