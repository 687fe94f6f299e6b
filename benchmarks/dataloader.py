"""DataLoader benchmark: batches/s of ptcore's DataLoader against PyTorch's on the same data.

Cases: a TensorDataset (rows of a float32 matrix + int64 labels) and a
map-style dataset doing per-item NumPy work (normalise a row, return a NumPy
array and an int), batch 64, num_workers 0 and 2.  Workers are persistent,
the first epoch is a warm-up, then epochs alternate between the two loaders
and the median epoch time is reported as time per batch (lower is better)
and batches/s.

Usage: python benchmarks/dataloader.py [--n 16384] [--dim 256] [--epochs 5]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402
from ptcore.utils.data import DataLoader, TensorDataset  # noqa: E402


class NumpyWorkDataset:
    """Map-style dataset doing NumPy work per item (same class for both libraries)."""

    def __init__(self, data, labels):
        self.data = data
        self.labels = labels

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        a = self.data[i]
        a = (a - a.mean()) / (a.std() + 1e-6)
        return np.tanh(a).astype(np.float32), int(self.labels[i])


def _one_epoch(loader):
    t0 = time.perf_counter()
    n = 0
    for _ in loader:
        n += 1
    return time.perf_counter() - t0, n


def epoch_times(loaders, epochs):
    """Median seconds per batch of each loader; epochs alternate between the loaders
    (the load of a shared machine hits both alike)."""
    n = [_one_epoch(ld)[1] for ld in loaders]  # warm-up epoch (starts persistent workers)
    times = [[] for _ in loaders]
    for _ in range(epochs):
        for i, ld in enumerate(loaders):
            times[i].append(_one_epoch(ld)[0])
    return [statistics.median(t) / k for t, k in zip(times, n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    torch = try_import_torch()
    ptcore.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
        import torch.utils.data as tud

    rng = np.random.default_rng(0)
    data = rng.standard_normal((args.n, args.dim)).astype(np.float32)
    labels = rng.integers(0, 10, args.n).astype(np.int64)

    rows = []
    rates = []
    for name, make_p, make_t in [
        ("TensorDataset",
         lambda: TensorDataset(ptcore.from_numpy(data), ptcore.from_numpy(labels)),
         lambda: tud.TensorDataset(torch.from_numpy(data), torch.from_numpy(labels))),
        ("NumPy per-item dataset",
         lambda: NumpyWorkDataset(data, labels),
         lambda: NumpyWorkDataset(data, labels)),
    ]:
        for nw in (0, 2):
            kw = dict(batch_size=args.batch, shuffle=True, num_workers=nw,
                      persistent_workers=nw > 0)
            loaders = [DataLoader(make_p(), **kw)]
            if torch is not None:
                loaders.append(tud.DataLoader(make_t(), **kw))
            res = epoch_times(loaders, args.epochs)
            del loaders
            tp, tt = res[0], (res[1] if torch is not None else None)
            case = f"{name}, batch {args.batch}, num_workers={nw}"
            rows.append((case, tp, tt, None))
            rates.append((case, 1 / tp, 1 / tt if tt else None))

    print_table(f"DataLoader: time per batch ({args.n} samples of {args.dim} float32)", rows)
    print("\n| case | ptcore batches/s | torch batches/s | ptcore/torch speed |")
    print("|---|---:|---:|---:|")
    for case, rp, rt in rates:
        sp = f"{rp / rt:.2f}x" if rt else "-"
        print(f"| {case} | {rp:.0f} | {rt:.0f} | {sp} |" if rt else f"| {case} | {rp:.0f} | - | - |")


if __name__ == "__main__":
    main()
