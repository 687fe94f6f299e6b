"""Tensor-core benchmarks: per-call overhead of creation, views, indexing and
``item()``, and large allocating copies (the host allocator's reuse of freed
blocks and lazy zero-fill).  ptcore vs PyTorch vs NumPy, same process.

Usage: python benchmarks/core.py [--threads N]   (default: 1 thread for all three)
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch = try_import_torch()
    ptcore.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)

    a = ptcore.zeros(4, 4)
    b = torch.zeros(4, 4) if torch else None
    c = np.zeros((4, 4), np.float32)
    cases = [
        ("zeros(1)", lambda: ptcore.zeros(1), lambda: torch.zeros(1), lambda: np.zeros(1, np.float32)),
        ("a[0]", lambda: a[0], lambda: b[0], lambda: c[0]),
        ("a[0, 0]", lambda: a[0, 0], lambda: b[0, 0], lambda: c[0, 0]),
        ("a[1:3, ::2]", lambda: a[1:3, ::2], lambda: b[1:3, ::2], lambda: c[1:3, ::2]),
        ("view(16)", lambda: a.view(16), lambda: b.view(16), lambda: c.reshape(16)),
        (".T", lambda: a.T, lambda: b.T, lambda: c.T),
        ("transpose(0, 1)", lambda: a.transpose(0, 1), lambda: b.transpose(0, 1), lambda: c.swapaxes(0, 1)),
        ("unsqueeze(0)", lambda: a.unsqueeze(0), lambda: b.unsqueeze(0), lambda: c[None]),
        ("item()", lambda: a[1, 1].item(), lambda: b[1, 1].item(), lambda: c[1, 1].item()),
        ("shape", lambda: a.shape, lambda: b.shape, lambda: c.shape),
    ]
    rows = []
    for name, fp, ft, fn in cases:
        rows.append((name, *paired_median_times([fp, ft if torch else None, fn])))
    print_table(f"per-call overhead (4x4 float32, {args.threads} thread(s))", rows)

    n = 16 * 1024 * 1024  # 64 MiB of float32
    xp = ptcore.ones(n)
    xt = torch.ones(n) if torch else None
    xn = np.ones(n, np.float32)
    big = [
        ("clone 64 MiB", lambda: xp.clone(), lambda: xt.clone(), lambda: xn.copy()),
        ("full 64 MiB", lambda: ptcore.full((n,), 2.0), lambda: torch.full((n,), 2.0),
         lambda: np.full(n, 2.0, np.float32)),
        ("zeros 64 MiB (untouched)", lambda: ptcore.zeros(n), lambda: torch.zeros(n),
         lambda: np.zeros(n, np.float32)),
        ("float32->float64 1e6", lambda: xp[:1_000_000].double(), lambda: xt[:1_000_000].double(),
         lambda: xn[:1_000_000].astype(np.float64)),
    ]
    m = ptcore.ones(4096, 4096)
    mt = torch.ones(4096, 4096) if torch else None
    mn = np.ones((4096, 4096), np.float32)
    big.append(("contiguous() of 4096^2 .T", lambda: m.T.contiguous(), lambda: mt.T.contiguous(),
                lambda: np.ascontiguousarray(mn.T)))
    rows = []
    for name, fp, ft, fn in big:
        rows.append((name, *paired_median_times([fp, ft if torch else None, fn], repeat=9)))
    print_table(f"large copies and allocation ({args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
