"""The everyday PyTorch surface
============================

The everyday PyTorch surface, written as a PyTorch user writes it.

Picks the device through ``ptcore.accelerator`` (the CPU when there is no
accelerator), sets the usual backend switches, trains a small classifier
(in-place LeakyReLU, dropout, AdamW, a step schedule) on a synthetic
two-spirals problem, saves the *whole* model with ``ptcore.save(model)``,
reloads it in a fresh Python process with ``ptcore.load(...,
weights_only=False)`` and checks that the reloaded model predicts exactly
what the trained one does.  It ends with a ``utils.benchmark.Timer``
measurement of one inference batch, and writes TensorBoard scalars when the
optional ``tensorboardX`` package is installed.

    python examples/everyday.py [--epochs N] [--out DIR]

Expected: training accuracy >= 95 % in a few seconds, "reloaded in a fresh
process: predictions identical".
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import ptcore
from ptcore import nn
from ptcore.utils.data import DataLoader, TensorDataset


class SpiralNet(nn.Module):
    """2 -> 64 -> 64 -> 2 with in-place LeakyReLU and dropout."""

    def __init__(self, hidden=64):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(2, hidden), nn.LeakyReLU(0.1, inplace=True), nn.Dropout(0.05),
            nn.Linear(hidden, hidden), nn.LeakyReLU(0.1, inplace=True),
            nn.Linear(hidden, 2))

    def forward(self, x):
        return self.body(x)


def spirals(n, generator):
    """Two interleaved spirals, ``n`` points each, with a little noise."""
    t = ptcore.rand(n, generator=generator) * 3 * math.pi + 0.5
    pts = []
    for k in (0, 1):
        angle = t + k * math.pi
        xy = ptcore.stack([t * ptcore.cos(angle), t * ptcore.sin(angle)], dim=1) / 5
        pts.append(xy + 0.05 * ptcore.randn(n, 2, generator=generator))
    x = ptcore.cat(pts)
    y = ptcore.cat([ptcore.zeros(n, dtype=ptcore.int64), ptcore.ones(n, dtype=ptcore.int64)])
    return x, y


def pick_device():
    if ptcore.accelerator.is_available():
        return ptcore.accelerator.current_accelerator()
    return ptcore.device("cpu")


def train(args, device):
    ptcore.manual_seed(0)
    ptcore.backends.cudnn.benchmark = True          # kept for scripts; no effect on CPU
    ptcore.set_float32_matmul_precision("high")     # TF32 where the backend has it

    x, y = spirals(500, ptcore.Generator().manual_seed(1))
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = SpiralNet().to(device)
    opt = ptcore.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = ptcore.optim.lr_scheduler.StepLR(opt, step_size=max(args.epochs // 3, 1), gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    writer = _summary_writer(args.out)

    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        sched.step()
        acc = accuracy(model, x, y, device)
        if writer is not None:
            writer.add_scalar("loss", total / len(x), epoch)
            writer.add_scalar("accuracy", acc, epoch)
        if epoch % 10 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:3d}  loss {total / len(x):.4f}  accuracy {acc:.3f}  "
                  f"lr {sched.get_last_lr()[0]:.2e}")
    if writer is not None:
        writer.close()
        print(f"TensorBoard event files in {writer.log_dir}")
    return model, x, y


def accuracy(model, x, y, device):
    model.eval()
    with ptcore.no_grad():
        pred = model(x.to(device)).argmax(dim=1)
    return (pred.cpu() == y).float().mean().item()


def _summary_writer(out):
    try:
        from ptcore.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(os.path.join(out, "runs", "everyday"))


def reload_and_predict(model_path, data_path, pred_path):
    """The fresh process: load the whole model and the inputs, save predictions."""
    device = pick_device()
    model = ptcore.load(model_path, weights_only=False, map_location=device)
    assert isinstance(model, SpiralNet), type(model)
    x = ptcore.load(data_path)["x"]
    model.eval()
    with ptcore.no_grad():
        ptcore.save({"logits": model(x.to(device)).cpu()}, pred_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--out", default=None, help="output directory (a temporary one)")
    parser.add_argument("--reload", nargs=3, metavar=("MODEL", "DATA", "PRED"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reload:
        reload_and_predict(*args.reload)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        args.out = args.out or tmp
        device = pick_device()
        print(f"device: {device} (accelerator available: {ptcore.accelerator.is_available()}, "
              f"{ptcore.accelerator.device_count()} device(s))")
        model, x, y = train(args, device)
        acc = accuracy(model, x, y, device)
        print(f"training accuracy: {acc:.3f}")

        # whole-model checkpoint, reloaded by a fresh interpreter
        model_path = os.path.join(args.out, "spiralnet.pt")
        data_path = os.path.join(args.out, "inputs.pt")
        pred_path = os.path.join(args.out, "preds.pt")
        ptcore.save(model, model_path)
        ptcore.save({"x": x}, data_path)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--reload", model_path,
                        data_path, pred_path], check=True)
        with ptcore.no_grad():
            mine = model(x.to(device)).cpu()
        theirs = ptcore.load(pred_path)["logits"]
        same = ptcore.equal(mine, theirs)
        print("reloaded in a fresh process: predictions "
              + ("identical" if same else "DIFFERENT"))

        from ptcore.utils import benchmark
        timer = benchmark.Timer("model(xb)", globals={"model": model, "xb": x[:64].to(device)},
                                label="SpiralNet forward", description="batch 64")
        print(timer.blocked_autorange(min_run_time=0.1))
    return 0 if (same and acc >= 0.95) else 1


if __name__ == "__main__":
    sys.exit(main())
