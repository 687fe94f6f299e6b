"""Small-matrix ``ptcore.linalg`` calls, ptcore vs PyTorch (and NumPy) in the
same process: the per-call cost of the front-ends' checks, the LAPACK loop
and the post-processing written with ptcore ops (det/slogdet from the LU
factors, pinv/matrix_rank thresholds, matrix norms, cross, lu_unpack).  The
ratio column is ptcore / torch measured in this run (lower is better).

Usage: python benchmarks/linalg_small.py [--cpu-time]
(1 thread for every library; --cpu-time times the calling thread's CPU time
instead of the wall clock, for runs on a loaded machine).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import paired_median_times, print_table, try_import_torch  # noqa: E402

import ptcore  # noqa: E402
from ptcore._ops import linalg as _linalg_ops  # noqa: E402


def cases():
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape)
    a4, b8, a64, r64, v = arr(4, 4), arr(64, 8, 8), arr(6, 4), arr(32, 16, 16), arr(1000, 3)
    w = arr(1000, 3)
    return [
        ("det 4x4", "det", (a4,), {}, np.linalg.det),
        ("det 64x8x8", "det", (b8,), {}, np.linalg.det),
        ("slogdet 4x4", "slogdet", (a4,), {}, np.linalg.slogdet),
        ("pinv 6x4", "pinv", (a64,), {}, np.linalg.pinv),
        ("matrix_rank 6x4", "matrix_rank", (a64,), {}, np.linalg.matrix_rank),
        ("matrix_norm ord=1 32x16x16", "matrix_norm", (r64,), {"ord": 1},
         lambda x: np.linalg.norm(x, 1, axis=(-2, -1))),
        ("matrix_norm ord=2 4x4", "matrix_norm", (a4,), {"ord": 2},
         lambda x: np.linalg.norm(x, 2)),
        ("cross 1000x3", "cross", (v, w), {}, lambda x, y: np.cross(x, y)),
        ("svdvals 4x4", "svdvals", (a4,), {}, lambda x: np.linalg.svd(x, compute_uv=False)),
        ("eigvals 4x4", "eigvals", (a4,), {}, np.linalg.eigvals),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    clock = time.thread_time if args.cpu_time else None
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(1)
    _linalg_ops._set_blas_threads(1)
    rows = []
    for case, name, xs, kw, npf in cases():
        px = [ptcore.from_numpy(x) for x in xs]
        tx = [torch.from_numpy(x) for x in xs] if torch is not None else None
        pf = getattr(ptcore.linalg, name)
        tf = getattr(torch.linalg, name) if torch is not None else None
        fns = [lambda: pf(*px, **kw),
               (lambda: tf(*tx, **kw)) if tf is not None else None,
               lambda: npf(*xs)]
        p, t, n = paired_median_times(fns, repeat=args.repeat, min_time=0.02, clock=clock)
        rows.append((case, p, t, n))
    print_table("ptcore.linalg on small matrices (1 thread)", rows)


if __name__ == "__main__":
    main()
