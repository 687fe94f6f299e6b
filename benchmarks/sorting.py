"""Sorting benchmarks: sort / argsort / topk / unique of 1e6 float32 values
(plus row-wise cases), ptcore vs PyTorch vs NumPy in the same process.

Usage: python benchmarks/sorting.py [--threads N] [--n 1000000] [--all]
(default: 1 thread for all three; --all adds the secondary cases).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402


def _np_topk(a, k):
    part = np.argpartition(-a, k - 1)[:k]
    return part[np.argsort(-a[part], kind="stable")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--all", action="store_true", help="also the secondary cases")
    args = ap.parse_args()
    torch = try_import_torch()
    ptcore.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)

    n = args.n
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    ai = rng.integers(0, 1000, n).astype(np.int64)
    x, xi = ptcore.from_numpy(a), ptcore.from_numpy(ai)
    t = torch.from_numpy(a) if torch is not None else None
    ti = torch.from_numpy(ai) if torch is not None else None

    def case(name, fp, ft, fn):
        return (name, fp, ft if torch is not None else None, fn)

    cases = [
        case("sort (stable)", lambda: x.sort(stable=True), lambda: t.sort(stable=True),
             lambda: np.sort(a, kind="stable")),
        case("sort", lambda: x.sort(), lambda: t.sort(), lambda: np.sort(a)),
        case("argsort (stable)", lambda: x.argsort(stable=True), lambda: t.argsort(stable=True),
             lambda: np.argsort(a, kind="stable")),
        case("sort descending", lambda: x.sort(descending=True),
             lambda: t.sort(descending=True), lambda: np.sort(a)[::-1]),
        case("topk(10)", lambda: x.topk(10), lambda: t.topk(10), lambda: _np_topk(a, 10)),
        case("topk(1000)", lambda: x.topk(1000), lambda: t.topk(1000), lambda: _np_topk(a, 1000)),
        case("unique (float32)", lambda: x.unique(), lambda: t.unique(), lambda: np.unique(a)),
        case("unique int64 (1000 values)", lambda: xi.unique(), lambda: ti.unique(),
             lambda: np.unique(ai)),
    ]
    if args.all:
        m = a.reshape(1000, n // 1000)
        xm = ptcore.from_numpy(m)
        tm = torch.from_numpy(m) if torch is not None else None
        cases += [
            case("unique int64 + inverse + counts", lambda: xi.unique(return_inverse=True,
                                                                     return_counts=True),
                 lambda: ti.unique(return_inverse=True, return_counts=True),
                 lambda: np.unique(ai, return_inverse=True, return_counts=True)),
            case("sort int64", lambda: xi.sort(), lambda: ti.sort(), lambda: np.sort(ai)),
            case("sort rows (1000 x 1000, dim=1)", lambda: xm.sort(1), lambda: tm.sort(1),
                 lambda: np.sort(m, 1)),
            case("sort cols (1000 x 1000, dim=0)", lambda: xm.sort(0), lambda: tm.sort(0),
                 lambda: np.sort(m, 0)),
            case("topk(5, dim=1) rows", lambda: xm.topk(5, 1), lambda: tm.topk(5, 1), None),
            case("kthvalue(500, dim=1)", lambda: xm.kthvalue(500, 1), lambda: tm.kthvalue(500, 1),
                 lambda: np.partition(m, 499, 1)[:, 499]),
            case("median()", lambda: x.median(), lambda: t.median(), lambda: np.median(a)),
            case("searchsorted 1e6 in 1e4", lambda: ptcore.searchsorted(xs, x),
                 lambda: torch.searchsorted(ts, t), lambda: np.searchsorted(s, a)),
            case("histc(100)", lambda: x.histc(100, -4, 4), lambda: t.histc(100, -4, 4),
                 lambda: np.histogram(a, 100, (-4, 4))),
        ]
        s = np.sort(rng.standard_normal(10_000).astype(np.float32))
        xs = ptcore.from_numpy(s)
        ts = torch.from_numpy(s) if torch is not None else None
    rows = []
    for name, fp, ft, fn in cases:
        rows.append((name, *paired_median_times([fp, ft, fn], repeat=7)))
    print_table(f"sorting ({n} float32, {args.threads} thread(s))", rows)


if __name__ == "__main__":
    main()
