"""Training a CNN on the digits data
=================================

Train a small CNN on scikit-learn's handwritten digits with ptcore.

The main job of the README: 1797 8x8 images (bundled with scikit-learn, no
download), a DataLoader over a TensorDataset, Adam with a OneCycle learning
rate schedule, a progress line per epoch, then a checkpoint saved with
``ptcore.save``, reloaded into a fresh model and re-evaluated, and a
loss/accuracy plot written as a PNG.

    python -m pip install ".[examples]" && python examples/digits.py

Expected: test accuracy >= 97 % in well under a minute on one CPU core.
"""
import argparse
import os
import sys
import time

import numpy as np

import ptcore
from ptcore import nn
from ptcore.nn import functional as F
from ptcore.utils.data import DataLoader, TensorDataset


class DigitsCNN(nn.Module):
    """conv(1->16) -> conv(16->32) -> maxpool -> linear(512->64) -> linear(64->10)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        x = self.drop(x.flatten(1))
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def load_digits_split(seed=0, test_fraction=0.25):
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("examples/digits.py needs scikit-learn: python -m pip install '.[examples]'")
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0 - 0.5) / 0.5     # [-1, 1]
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = perm[:n_test], perm[n_test:]
    to_t = ptcore.from_numpy
    return (to_t(np.ascontiguousarray(x[train][:, None])), to_t(y[train]),
            to_t(np.ascontiguousarray(x[test][:, None])), to_t(y[test]))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with ptcore.no_grad():
        for xb, yb in loader:
            out = model(xb)
            loss_sum += float(F.cross_entropy(out, yb, reduction="sum"))
            correct += int((out.argmax(1) == yb).sum())
            total += yb.shape[0]
    return loss_sum / total, correct / total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="digits_out", help="folder for the checkpoint and the plot")
    args = p.parse_args(argv)

    ptcore.manual_seed(args.seed)
    xtr, ytr, xte, yte = load_digits_split(args.seed)
    g = ptcore.Generator().manual_seed(args.seed)
    train_loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True,
                              generator=g)
    test_loader = DataLoader(TensorDataset(xte, yte), batch_size=256)
    print(f"digits: {len(xtr)} training and {len(xte)} test images, "
          f"{ptcore.get_num_threads()} thread(s)")

    model = DigitsCNN()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters")
    opt = ptcore.optim.Adam(model.parameters(), lr=args.lr)
    sched = ptcore.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                                 steps_per_epoch=len(train_loader))
    history = {"train_loss": [], "test_loss": [], "test_acc": []}
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        run_loss = 0.0
        n = 0
        for xb, yb in train_loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            run_loss += loss.item() * yb.shape[0]
            n += yb.shape[0]
        te_loss, te_acc = evaluate(model, test_loader)
        history["train_loss"].append(run_loss / n)
        history["test_loss"].append(te_loss)
        history["test_acc"].append(te_acc)
        print(f"epoch {epoch:2d}/{args.epochs}  train loss {run_loss / n:.4f}  "
              f"test loss {te_loss:.4f}  test acc {100 * te_acc:6.2f}%  "
              f"lr {sched.get_last_lr()[0]:.2e}  {time.perf_counter() - t0:5.1f} s")
    train_time = time.perf_counter() - t0

    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "digits_cnn.pt")
    ptcore.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                 "epoch": args.epochs, "history": history}, ckpt)
    state = ptcore.load(ckpt)
    fresh = DigitsCNN()
    fresh.load_state_dict(state["model"])
    re_loss, re_acc = evaluate(fresh, test_loader)
    print(f"checkpoint {ckpt}: reloaded model test acc {100 * re_acc:.2f}% "
          f"(before saving {100 * history['test_acc'][-1]:.2f}%)")
    if abs(re_acc - history["test_acc"][-1]) > 1e-12:
        sys.exit("reloaded model does not reproduce the accuracy")

    png = os.path.join(args.out, "digits_training.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ep = np.arange(1, args.epochs + 1)
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.5))
        a1.plot(ep, history["train_loss"], label="train")
        a1.plot(ep, history["test_loss"], label="test")
        a1.set_xlabel("epoch")
        a1.set_ylabel("cross-entropy")
        a1.legend()
        a2.plot(ep, 100 * np.array(history["test_acc"]))
        a2.set_xlabel("epoch")
        a2.set_ylabel("test accuracy (%)")
        fig.tight_layout()
        fig.savefig(png, dpi=100)
        print(f"plot: {png}")
    except ImportError:
        print("matplotlib not installed: no plot (python -m pip install '.[examples]')")
    final = history["test_acc"][-1]
    print(f"final test accuracy {100 * final:.2f}% after {train_time:.1f} s of training")
    return final


if __name__ == "__main__":
    acc = main()
    sys.exit(0 if acc >= 0.97 else 1)
