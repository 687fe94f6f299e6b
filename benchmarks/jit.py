"""ptcore.jit against eager ptcore and torch (eager and torch.jit.trace + freeze),
one thread, same run.

Cases: an 8-op elementwise chain on 1.6e7 float32, the traced MLP forward and a
GELU/LayerNorm Transformer block forward.  The traced graph runs in the
interpreter with its elementwise chains fused (ptcore.jit._fusion: one
cache-resident pass of the fused kernel per chain); the GEMMs, softmax and
reductions are the eager kernels.

Usage: python benchmarks/jit.py [--cpu-time] [--only chain]
(--cpu-time times the calling thread's CPU time instead of the wall clock, for
these 1-thread runs on a loaded machine; --only chain runs the elementwise
chain alone)
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import fmt_time, paired_median_times, print_cpu, try_import_torch  # noqa: E402

import ptcore  # noqa: E402


def chain(lib):
    def f(x):
        y = x * 1.5 + 0.5
        y = lib.tanh(y) * y
        y = lib.sigmoid(y) - 0.25
        return y * y
    return f


def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512),
                             lib.nn.ReLU(), lib.nn.Linear(512, 10)).eval()


def block(lib):
    lib.manual_seed(0)
    return lib.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu",
                                          batch_first=True).eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--only", choices=["chain"])
    args = ap.parse_args()
    clock = time.thread_time if args.cpu_time else None
    torch = try_import_torch()
    ptcore.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print_cpu()
    rows = []
    specs = [("8-op elementwise chain, 1.6e7 float32", lambda L: chain(L), (16_000_000,), 5),
             ("MLP 784-512-512-10 forward, batch 128", mlp, (128, 784), 15),
             ("Transformer block (d=256, GELU, LayerNorm) forward, 8x64", block, (8, 64, 256),
              9)]
    if args.only == "chain":
        specs = specs[:1]
    for name, make, shape, rep in specs:
        pf = make(ptcore)
        px = ptcore.randn(*shape)
        with ptcore.no_grad():
            pj = ptcore.jit.trace(pf, px)
            if isinstance(pf, ptcore.nn.Module):
                pj = ptcore.jit.optimize_for_inference(pj)
        fns = [lambda: pf(px), lambda: pj(px)]
        if torch is not None:
            tf = make(torch)
            tx = torch.randn(*shape)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with torch.no_grad():
                    tj = torch.jit.trace(tf, tx, check_trace=False)
                    if isinstance(tf, torch.nn.Module):
                        tj = torch.jit.freeze(tj)
            fns += [lambda: tf(tx), lambda: tj(tx)]
        else:
            fns += [None, None]
        with ptcore.no_grad():
            if torch is not None:
                with torch.no_grad():
                    t = paired_median_times(fns, repeat=rep, min_time=0.2, clock=clock)
            else:
                t = paired_median_times(fns, repeat=rep, min_time=0.2, clock=clock)
        rows.append((name, t))
    print(f"\n## ptcore.jit (1 thread{', CPU time' if args.cpu_time else ''})\n")
    print("| case | ptcore eager | ptcore traced | torch eager | torch trace+freeze | "
          "traced/ptcore eager | traced/torch eager | traced/torch jit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (pe, pt, te, tj) in rows:
        r = (lambda a, b: f"{a / b:.2f}" if a and b else "-")
        print(f"| {name} | {fmt_time(pe)} | {fmt_time(pt)} | {fmt_time(te) if te else '-'} | "
              f"{fmt_time(tj) if tj else '-'} | {r(pt, pe)} | {r(pt, te)} | {r(pt, tj)} |")


if __name__ == "__main__":
    main()
