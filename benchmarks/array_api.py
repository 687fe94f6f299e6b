"""Per-call overhead of the array API namespace: ``ptcore.array_api.X`` vs the same ``ptcore.X`` call
on small tensors (where the Python layer dominates), and array-api-compat's torch wrapper vs bare torch
for scale.

Usage: python benchmarks/array_api.py [--n 16]
Target: the namespace adds at most 1 us per call.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import fmt_time, paired_median_times  # noqa: E402

import ptcore  # noqa: E402
import ptcore.array_api as xp  # noqa: E402


def cases(x, y, i):
    """(name, namespace call, the ptcore call it stands for)."""
    return [
        ("add (same dtype)", lambda: xp.add(x, y), lambda: ptcore.add(x, y)),
        ("add (python scalar)", lambda: xp.add(x, 2.0), lambda: ptcore.add(x, 2.0)),
        ("multiply (0-D operand)", lambda: xp.multiply(x, y[0]), lambda: ptcore.mul(x, y[0])),
        ("exp (alias)", lambda: xp.exp(x), lambda: ptcore.exp(x)),
        ("sum axis=0", lambda: xp.sum(x, axis=0), lambda: ptcore.sum(x, dim=0)),
        ("max axis=None", lambda: xp.max(x), lambda: ptcore.amax(x)),
        ("mean axis=(0,1) keepdims", lambda: xp.mean(x, axis=(0, 1), keepdims=True),
         lambda: ptcore.mean(x, dim=(0, 1), keepdim=True)),
        ("permute_dims", lambda: xp.permute_dims(x, (1, 0)), lambda: ptcore.permute(x, (1, 0))),
        ("matmul", lambda: xp.matmul(x, y), lambda: ptcore.matmul(x, y)),
        ("take (axis=0)", lambda: xp.take(x, i, axis=0), lambda: ptcore.index_select(x, 0, i)),
        ("astype float64", lambda: xp.astype(x, xp.float64), lambda: x.to(ptcore.float64, copy=True)),
        ("where", lambda: xp.where(x > 0, x, y), lambda: ptcore.where(x > 0, x, y)),
        ("zeros", lambda: xp.zeros((4, 4)), lambda: ptcore.zeros((4, 4))),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16)
    args = ap.parse_args()
    ptcore.set_num_threads(1)
    x = ptcore.randn(args.n, args.n)
    y = ptcore.randn(args.n, args.n)
    i = ptcore.tensor([0, 2, 1])
    print(f"\n## array API namespace overhead ({args.n}x{args.n} float32, 1 thread)\n")
    print("| call | ptcore.array_api | ptcore | overhead |")
    print("|---|---:|---:|---:|")
    worst = 0.0
    for name, ns_call, pt_call in cases(x, y, i):
        t_ns, t_pt = paired_median_times([ns_call, pt_call], repeat=9, min_time=0.02)
        worst = max(worst, t_ns - t_pt)
        print(f"| {name} | {fmt_time(t_ns)} | {fmt_time(t_pt)} | {(t_ns - t_pt) * 1e9:+.0f} ns |")
    print(f"\nlargest overhead: {worst * 1e9:.0f} ns (target <= 1000 ns)")


if __name__ == "__main__":
    main()
