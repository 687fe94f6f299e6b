"""Matrix-product benchmark: ptcore vs PyTorch vs NumPy, one thread.

    python benchmarks/matmul.py [--threads N]

Cases: matmul float32 256/1024/2048, float64 1024, bmm 64 x 128^3 float32,
plus a few small/strided shapes that exercise the no-copy BLAS paths.
Reports the median time and GFLOP/s (2*M*N*K per product) of each library
and the ratio ptcore/torch of GFLOP/s (higher is better; target >= 0.9 for
float32 1024/2048).  ptcore runs float32 products of >= 64**3 multiply-adds
through its own GEMM (ptcore/_ops/kernels/include/ptc_sgemm.h), the rest through SciPy's
OpenBLAS; PyTorch uses its own BLAS (MKL on x86 wheels), NumPy its bundled
OpenBLAS.  A second table times ``F.linear`` on the shapes of the training
workloads with ptcore's own kernels and with the BLAS (PTCORE_SGEMM=blas),
against torch, in the same run.  A third table times bfloat16 products
(``F.linear`` with a bias on those shapes, square matmuls, a batch) with
ptcore's AVX512-BF16 kernel (ptcore/_ops/kernels/include/ptc_bgemm.h, where
the CPU has the instruction) and with the float32 path it replaced, against
torch's oneDNN.
"""
import argparse
import os
import sys

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--threads", type=int, default=1)
_ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
_args = _ap.parse_args()
# thread counts of every BLAS in the process, before any of them loads
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ[_v] = str(_args.threads)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import ptcore  # noqa: E402
from ptcore._ops import linalg as _linalg_ops  # noqa: E402
from _harness import paired_median_times, fmt_time, try_import_torch  # noqa: E402


def main():
    torch = try_import_torch()
    ptcore.set_num_threads(_args.threads)
    _linalg_ops._set_blas_threads(_args.threads)
    if torch is not None:
        torch.set_num_threads(_args.threads)
    repeat = 3 if _args.quick else 11
    rng = np.random.default_rng(0)
    cases = [
        ("matmul f32 256", (256, 256), (256, 256), np.float32, None),
        ("matmul f32 1024", (1024, 1024), (1024, 1024), np.float32, None),
        ("matmul f32 2048", (2048, 2048), (2048, 2048), np.float32, None),
        ("matmul f64 1024", (1024, 1024), (1024, 1024), np.float64, None),
        ("bmm f32 64x128^3", (64, 128, 128), (64, 128, 128), np.float32, None),
        ("matmul f32 1024 A^T", (1024, 1024), (1024, 1024), np.float32, "ta"),
        ("matmul f32 64", (64, 64), (64, 64), np.float32, None),
        ("mv f32 2048", (2048, 2048), (2048,), np.float32, None),
        ("bmm f32 512x16^3", (512, 16, 16), (512, 16, 16), np.float32, None),
    ]
    print(f"\n## matrix products, {_args.threads} thread(s)\n")
    print("| case | ptcore | torch | numpy | ptcore GFLOP/s | torch GFLOP/s | numpy GFLOP/s "
          "| ptcore/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, sa, sb, dt, variant in cases:
        a = rng.standard_normal(sa).astype(dt)
        b = rng.standard_normal(sb).astype(dt)
        if variant == "ta":
            a = np.ascontiguousarray(a.T).T        # column-major storage, same values
        pa, pb = ptcore.from_numpy(np.ascontiguousarray(a)), ptcore.from_numpy(b)
        if variant == "ta":
            pa = ptcore.from_numpy(np.ascontiguousarray(a.T)).T
        m, k = sa[-2], sa[-1]
        n = sb[-1] if len(sb) > 1 else 1
        batch = int(np.prod(sa[:-2])) if len(sa) > 2 else 1
        flops = 2.0 * m * n * k * batch
        tfn = None
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)

            def tfn():
                torch.matmul(ta, tb)
        tp, tt, tn = paired_median_times(
            [lambda: ptcore.matmul(pa, pb), tfn, lambda: np.matmul(a, b)], repeat=repeat)
        gp, gn = flops / tp / 1e9, flops / tn / 1e9
        gt = flops / tt / 1e9 if tt else None
        ratio = f"{gp / gt:.2f}" if gt else "-"
        print(f"| {name} | {fmt_time(tp)} | {fmt_time(tt)} | {fmt_time(tn)} | {gp:.1f} | "
              f"{gt:.1f} | {gn:.1f} | {ratio} |" if gt else
              f"| {name} | {fmt_time(tp)} | - | {fmt_time(tn)} | {gp:.1f} | - | {gn:.1f} | - |")
    linear_table(torch, repeat)
    bf16_table(torch, repeat)


# F.linear (M x K input, N x K weight) on the shapes of benchmarks/workloads*.py
LINEAR_SHAPES = [
    ("GPT qkv", 768, 128, 384), ("GPT fc", 768, 128, 512), ("GPT proj", 768, 512, 128),
    ("GPT head", 768, 128, 65), ("GPT fc dW", 512, 768, 128), ("MLP 1", 128, 784, 512),
    ("MLP 2", 128, 512, 256), ("LSTM step", 20, 256, 1024), ("LSTM input", 700, 256, 1024),
]


def linear_table(torch, repeat):
    F = ptcore.nn.functional
    own = _linalg_ops._set_sgemm_isa(-1)
    name = {0: "none (BLAS)", 1: "AVX2+FMA", 2: "AVX-512F"}[own]
    print(f"\n## F.linear float32, {_args.threads} thread(s): own GEMM kernels ({name}) "
          f"vs the BLAS vs torch\n")
    print("| case (M x K x N) | own | BLAS | torch | own GFLOP/s | own/torch | BLAS/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(1)
    for label, m, k, n in LINEAR_SHAPES:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        px, pw = ptcore.from_numpy(x), ptcore.from_numpy(w)

        def run_own():
            _linalg_ops._set_sgemm_isa(-1)
            F.linear(px, pw)

        def run_blas():
            _linalg_ops._set_sgemm_isa(0)
            F.linear(px, pw)
        tfn = None
        if torch is not None:
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)

            def tfn():
                torch.nn.functional.linear(tx, tw)
        to, tb, tt = paired_median_times([run_own, run_blas, tfn], repeat=repeat)
        _linalg_ops._set_sgemm_isa(-1)
        g = 2.0 * m * n * k / to / 1e9
        r1 = f"{to / tt:.2f}" if tt else "-"
        r2 = f"{tb / tt:.2f}" if tt else "-"
        print(f"| {label} {m}x{k}x{n} | {fmt_time(to)} | {fmt_time(tb)} | {fmt_time(tt)} | "
              f"{g:.1f} | {r1} | {r2} |")


def bf16_table(torch, repeat):
    from ptcore._ops.kernels import _blas
    F = ptcore.nn.functional
    have = _blas.bgemm_available()
    print(f"\n## bfloat16 products, {_args.threads} thread(s): the AVX512-BF16 kernel "
          f"({'on this CPU' if have else 'not on this CPU: both columns float32'}) "
          f"vs the float32 path vs torch\n")
    print("| case (M x K x N) | kernel | float32 path | torch | kernel GFLOP/s "
          "| kernel/torch | float32/torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(2)
    cases = [(f"linear {label}", m, k, n, "linear") for label, m, k, n in LINEAR_SHAPES]
    cases += [("matmul 256", 256, 256, 256, "mm"), ("matmul 1024", 1024, 1024, 1024, "mm"),
              ("bmm 48 x 64x32x64", 64, 32, 64, "bmm")]
    for label, m, k, n, kind in cases:
        if kind == "linear":
            shapes = [(m, k), (n, k), (n,)]
        elif kind == "mm":
            shapes = [(m, k), (k, n)]
        else:
            shapes = [(48, m, k), (48, k, n)]
        arrs = [rng.standard_normal(s_).astype(np.float32) for s_ in shapes]
        ps = [ptcore.from_numpy(x).bfloat16() for x in arrs]

        def call(lib, xs, kind=kind):
            if kind == "linear":
                return lib.nn.functional.linear(*xs)
            return lib.matmul(*xs)

        def run_kernel():
            _blas._set_bgemm_isa(-1)
            call(ptcore, ps)

        def run_f32():
            _blas._set_bgemm_isa(0)
            call(ptcore, ps)
        tfn = None
        if torch is not None:
            ts = [torch.from_numpy(x).bfloat16() for x in arrs]

            def tfn():
                call(torch, ts)
        tk, tf, tt = paired_median_times([run_kernel, run_f32, tfn], repeat=repeat)
        _blas._set_bgemm_isa(-1)
        g = 2.0 * m * n * k * (48 if kind == "bmm" else 1) / tk / 1e9
        r1 = f"{tk / tt:.2f}" if tt else "-"
        r2 = f"{tf / tt:.2f}" if tt else "-"
        print(f"| {label} {m}x{k}x{n} | {fmt_time(tk)} | {fmt_time(tf)} | {fmt_time(tt)} | "
              f"{g:.1f} | {r1} | {r2} |")
    del F


if __name__ == "__main__":
    main()
