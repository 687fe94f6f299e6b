"""Dispatch overhead: what every op call pays at the one dispatch point.

The cases issue 14 names as "no slower than before the change": a
one-element add (operator and function), a view, ``a[0, 0]``, a 100-op
autograd chain with backward, and the MLP train step; the per-call cost of
common ops on small tensors (cat/stack, full and per-dim reductions, unary
ops, softmax, a small matmul: 16 elements / 64x64 float32, 1-thread CPU
time); plus a call of an op through the table with every interception layer off, and the same call with
a ``TorchFunctionMode`` and the profiler on (what a layer costs when it is
used).  ptcore vs PyTorch vs NumPy in one run; ratio = ptcore / PyTorch.

With ``--device-layer`` it also times ptcore's cases before and after the
CUDA runtime initialises (the emulated device when there is no GPU): the
device layer is then on, and an all-CPU call should cost what it did.

With ``--sparse-alive`` a small sparse tensor of each library lives while the cases run
(a program holding a sparse matrix: its dense ops should cost what they cost without).

Usage: python benchmarks/dispatch.py [--threads N] [--device-layer] [--small-ops-only]
       [--sparse-alive]
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (keep_sparse_alive, paired_median_times, print_cpu, print_table,  # noqa: E402
                      try_import_torch)
from autograd import chain_tensor  # noqa: E402
from nn_train import make  # noqa: E402

import ptcore  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device-layer", action="store_true",
                    help="also time the cases with CUDA initialised (device layer on)")
    ap.add_argument("--small-ops-only", action="store_true",
                    help="only the table of small-tensor ops")
    ap.add_argument("--sparse-alive", action="store_true",
                    help="keep a small sparse tensor of each library alive")
    args = ap.parse_args()
    torch = try_import_torch()
    kept = keep_sparse_alive(ptcore, torch) if args.sparse_alive else []  # noqa: F841
    ptcore.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print_cpu()
    if args.small_ops_only:
        print_table(SMALL_TITLE, small_op_rows(torch))
        return

    def pair(lib):
        if lib is None:
            return None
        a, b = lib.ones(1), lib.ones(1)
        m = lib.zeros(4, 4)
        x = lib.ones(1, requires_grad=True)
        w = lib.full((1,), 0.999, requires_grad=True)
        return a, b, m, x, w

    P, T = pair(ptcore), pair(torch)
    na, nb, nm = np.ones(1, np.float32), np.ones(1, np.float32), np.zeros((4, 4), np.float32)
    cases = [
        ("a + b (1 element)", lambda: P[0] + P[1], T and (lambda: T[0] + T[1]), lambda: na + nb),
        ("add(a, b) (1 element)", lambda: ptcore.add(P[0], P[1]),
         T and (lambda: torch.add(T[0], T[1])), lambda: np.add(na, nb)),
        ("exp(a) (1 element)", lambda: ptcore.exp(P[0]), T and (lambda: torch.exp(T[0])),
         lambda: np.exp(na)),
        ("a.sum() (1 element)", lambda: P[0].sum(), T and (lambda: T[0].sum()), lambda: na.sum()),
        ("view(16)", lambda: P[2].view(16), T and (lambda: T[2].view(16)), lambda: nm.reshape(16)),
        ("a[0, 0]", lambda: P[2][0, 0], T and (lambda: T[2][0, 0]), lambda: nm[0, 0]),
        ("100-op autograd chain + backward", lambda: chain_tensor(ptcore, P[3], P[4]).backward(),
         T and (lambda: chain_tensor(torch, T[3], T[4]).backward()), None),
    ]
    rows = [(name, *paired_median_times([fp, ft, fn])) for name, fp, ft, fn in cases]
    sp, _ = make(ptcore)
    st = make(torch)[0] if torch else None
    rows.append(("MLP 784-512-512-10 b128 Adam step",
                 *paired_median_times([sp, st, None], repeat=9, min_time=0.2)))
    print_table(f"dispatch overhead ({args.threads} thread(s))", rows)
    print_table(SMALL_TITLE, small_op_rows(torch))
    if args.device_layer:
        device_layer_rows(cases, sp)

    # what a layer costs when it is on
    overrides = getattr(ptcore, "overrides", None)
    if overrides is None or torch is None:
        return
    import torch.overrides as tov

    class _PtNull(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class _TNull(tov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    def in_mode(mode, fn):
        def run():
            with mode():
                for _ in range(20):
                    fn()
        return run
    rows = [("20 x add(a, b) under a pass-through TorchFunctionMode",
             *paired_median_times([in_mode(_PtNull, lambda: ptcore.add(P[0], P[1])),
                                   in_mode(_TNull, lambda: torch.add(T[0], T[1])), None]))]
    import ptcore.profiler as pprof

    def prof(lib, mod, x, y):
        def run():
            with mod.profile():
                for _ in range(20):
                    lib.add(x, y)
        return run
    rows.append(("20 x add(a, b) under profiler.profile()",
                 *paired_median_times([prof(ptcore, pprof, P[0], P[1]),
                                       prof(torch, torch.profiler, T[0], T[1]), None],
                                      repeat=7)))
    print_table("layers switched on", rows)


SMALL_TITLE = "small-tensor ops, per call (process CPU time; a: 16, b: 64x64 float32)"


def small_op_rows(torch):
    """Front-end cost of common ops on small tensors: what a call pays
    beyond its (tiny) kernel."""
    def inputs(lib):
        if lib is None:
            return None
        g = lib.Generator().manual_seed(0) if lib is not np else None
        if g is None:
            return np.random.default_rng(0).random(16, np.float32), \
                np.random.default_rng(1).random((64, 64), np.float32)
        return lib.rand(16, generator=g), lib.rand(64, 64, generator=g)
    (pa, pb), T, (na, nb) = inputs(ptcore), inputs(torch), inputs(np)

    def both(f):
        return lambda: f(ptcore, pa, pb), T and (lambda: f(torch, *T))

    def softmax_np(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    cases = [
        ("cat([a, a])", lambda L, a, b: L.cat([a, a]), lambda: np.concatenate([na, na])),
        ("stack([a, a])", lambda L, a, b: L.stack([a, a]), lambda: np.stack([na, na])),
        ("a.max()", lambda L, a, b: a.max(), lambda: na.max()),
        ("a.sum()", lambda L, a, b: a.sum(), lambda: na.sum()),
        ("a.mean()", lambda L, a, b: a.mean(), lambda: na.mean()),
        ("a.amax()", lambda L, a, b: a.amax(), lambda: na.max()),
        ("a.exp()", lambda L, a, b: a.exp(), lambda: np.exp(na)),
        ("relu(a)", lambda L, a, b: L.relu(a), lambda: np.maximum(na, 0)),
        ("b.sum(1)", lambda L, a, b: b.sum(1), lambda: nb.sum(1)),
        ("b.mean(1)", lambda L, a, b: b.mean(1), lambda: nb.mean(1)),
        ("b.amax(1)", lambda L, a, b: b.amax(1), lambda: nb.max(1)),
        ("softmax(b, -1)", lambda L, a, b: L.softmax(b, -1), lambda: softmax_np(nb)),
        ("b.t() @ b", lambda L, a, b: b.t() @ b, lambda: nb.T @ nb),
    ]
    return [(name, *paired_median_times([*both(f), fn], repeat=9, min_time=0.02,
                                        clock=time.process_time))
            for name, f, fn in cases]


def device_layer_rows(cases, mlp_step, repeat=9):
    """ptcore's cases with the device layer off and on (CUDA initialised),
    in alternating blocks; ratio = on / off."""
    import os
    import statistics
    import time
    from ptcore._dispatch import device as device_layer
    if not ptcore.cuda.is_available():
        from ptcore.cuda.runtime import state as _runtime
        os.environ["PTCORE_CUDA_EMULATE"] = "1"      # the emulated device
        _runtime.reset()
    ptcore.cuda.init()
    keep = ptcore.ones(2).cuda()        # a live device tensor while timing
    print(f"\ndevice layer off / on (CUDA initialised, {repeat} alternating blocks)")
    print(f"{'case':40s} {'off':>12s} {'on':>12s} {'on/off':>7s}")
    rows = [(c[0], c[1]) for c in cases] + [("MLP 784-512-512-10 b128 Adam step", mlp_step)]
    for name, fn in rows:
        fn()
        t0 = time.perf_counter()
        fn()
        n = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
        off, on = [], []
        for _ in range(repeat):
            for flag, acc in ((False, off), (True, on)):
                device_layer.enable(flag)
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                acc.append((time.perf_counter() - t0) / n)
        device_layer.enable(True)
        mo, mn = statistics.median(off), statistics.median(on)
        print(f"{name:40s} {mo * 1e6:10.2f}us {mn * 1e6:10.2f}us {mn / mo:7.2f}")
    del keep


if __name__ == "__main__":
    main()
