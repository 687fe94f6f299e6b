"""``ptcore.compile`` against ptcore eager, torch eager and ``torch.compile``:
training steps of the GPT, the TransformerEncoder tagger and the MLP of
``benchmarks/workloads.py``, all four in the same run (issue 63, item 3).

    python benchmarks/compile.py [--only NAME ...] [--budget S] [--threads N] [--clock wall|cpu]
                                 [--no-torch-compile] [--opt]

For each workload four states are built with the same seed (torch's
parameters copied from ptcore's through NumPy); in two of them the model is
replaced by ``lib.compile(model)``.  Before timing, the compiled ptcore state
and the eager one run the same steps and their losses are compared (they must
agree to float rounding: relative 1e-4), and so are torch's.  Compile time is
the wall time of the first three compiled steps minus three median steps of
the same state, measured after one eager step of each library (so that
one-time costs such as lazy imports are not counted as compilation) (torch compiles forward and backward on its first call;
ptcore captures and compiles on its first call, its backward at compile time
too).  Step times are medians of alternating samples (``paired_step_times``):
on a shared machine report the medians and say so; ``--clock cpu`` times the
steps in CPU time of the process (at one thread, robust to other programs
taking the CPU; compile times too, where torch.compile's worker processes are not
counted).

With ``--opt`` two more states compile the optimizer's step too, as torch's
"compiled optimizer" tutorial does (``opt.step = lib.compile(opt.step)``, the
same code for both libraries, on top of the compiled model): the rows
``+opt`` give their step times against the same ptcore eager state, and their
compile time is that of the whole first three steps again (ptcore plans the
step on its second call: the first one makes the optimizer's state eagerly).

Targets: compiled <= 0.9x ptcore eager's step time, compile time under
torch.compile's.
"""
import argparse
import importlib.util
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_ptcore_bench_{name}",
                                                  os.path.join(_HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _workloads(wmod):
    by_name = {w.name: w for w in wmod.all_workloads()}
    return [("gpt", by_name["gpt-masked"]), ("gpt-sdpa", by_name["gpt-sdpa"]),
            ("encoder", by_name["transformer-encoder"]),
            ("mlp", by_name["mlp_784_512_256_10_b128_sgdm"])]


def _compiled_time(wl, state, clock, n=3):
    """Seconds (of ``clock``) of the first ``n`` steps of ``state`` (compilation included)."""
    t0 = clock()
    for i in range(n):
        wl.step(state, i)
    return clock() - t0


def _compile_state(lib, state, opt, clock, wl, enabled=True):
    """Compile ``state``'s model (and its optimizer's step when ``opt``) and run
    its first three steps: their seconds of ``clock``."""
    if not enabled:
        for i in range(3):
            wl.step(state, i)
        return float("nan")
    state["model"] = lib.compile(state["model"])
    if opt:
        state["opt"].step = lib.compile(state["opt"].step)
    return _compiled_time(wl, state, clock)


def run(args):
    import ptcore
    import torch
    wmod = _load("workloads")
    ptcore.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rows = []
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for short, wl in _workloads(wmod):
        if args.only and short not in args.only:
            continue
        pe, te = wmod.build_pair(wl, ptcore, torch, seed=0)
        # compiled model (and, with --opt, compiled model and optimizer step)
        variants = [(False, *wmod.build_pair(wl, ptcore, torch, seed=0))]
        if args.opt:
            variants.append((True, *wmod.build_pair(wl, ptcore, torch, seed=0)))
        # one eager step of each library first: its one-time costs (lazy imports,
        # first allocations) are not compile time
        wl.step(pe, 0)
        wl.step(te, 0)
        first = []
        for opt, pc, tc in variants:
            first.append((_compile_state(ptcore, pc, opt, clock, wl),
                          _compile_state(torch, tc, opt, clock, wl, args.torch_compile)))
        # the states ran 3 steps: bring the eager ones to the same point, then compare
        for i in range(1, 3):
            wl.step(pe, i)
            wl.step(te, i)
        worst = [[0.0, 0.0] for _ in variants]
        for i in range(3, 3 + args.agree):
            b, d = wl.step(pe, i), wl.step(te, i)
            for k, (_, pc, tc) in enumerate(variants):
                a, c = wl.step(pc, i), wl.step(tc, i)
                worst[k][0] = max(worst[k][0], abs(a - b) / max(abs(b), 1e-12))
                worst[k][1] = max(worst[k][1], abs(c - d) / max(abs(d), 1e-12))
        fns = list(wmod.step_fns(wl, pe, te))
        for _, pc, tc in variants:
            fns += list(wmod.step_fns(wl, pc, tc))
        times = wmod.paired_step_times(fns, args.budget, clock=clock)
        t_pe, t_te = times[0], times[1]
        for k, (opt, _, _) in enumerate(variants):
            t_pc, t_tc = times[2 + 2 * k], times[3 + 2 * k]
            ct_pt = max(first[k][0] - 3 * t_pc, 0.0)
            ct_t = max(first[k][1] - 3 * t_tc, 0.0) if args.torch_compile else float("nan")
            worst_pt, worst_t = worst[k]
            ok = worst_pt <= 1e-4
            name = short + ("+opt" if opt else "")
            rows.append((name, t_pe, t_pc, t_te, t_tc, ct_pt, ct_t, worst_pt, worst_t, ok))
            print(f"{name}: ptcore eager {t_pe * 1e3:.2f} ms, compiled {t_pc * 1e3:.2f} ms "
                  f"({t_pc / t_pe:.2f}x), torch eager {t_te * 1e3:.2f} ms, torch.compile "
                  f"{t_tc * 1e3:.2f} ms; compile {ct_pt:.2f} s vs torch {ct_t:.2f} s; "
                  f"loss rel diff compiled/eager {worst_pt:.1e} (torch {worst_t:.1e})",
                  flush=True)
    print()
    print(f"threads {args.threads}; medians of alternating samples, {args.budget:.0f} s budget each, "
          f"{'CPU' if args.clock == 'cpu' else 'wall'} time; '+opt': the optimizer's step "
          "compiled too")
    hdr = ("workload", "pt eager ms", "pt compile ms", "ratio", "torch eager ms",
           "torch.compile ms", "pt compile s", "torch compile s", "loss diff")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for (short, t_pe, t_pc, t_te, t_tc, ct_pt, ct_t, wpt, wt, ok) in rows:
        print(f"| {short} | {t_pe * 1e3:.2f} | {t_pc * 1e3:.2f} | {t_pc / t_pe:.2f}x | "
              f"{t_te * 1e3:.2f} | {t_tc * 1e3:.2f} | {ct_pt:.2f} | {ct_t:.2f} | "
              f"{wpt:.1e}{'' if ok else ' FAIL'} |")
    return 0 if all(r[-1] for r in rows) else 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", choices=("gpt", "gpt-sdpa", "encoder", "mlp"))
    p.add_argument("--budget", type=float, default=3.0, help="seconds of timing per state")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="step times in wall time or CPU time of the process")
    p.add_argument("--agree", type=int, default=5, help="steps compared compiled vs eager")
    p.add_argument("--no-torch-compile", dest="torch_compile", action="store_false")
    p.add_argument("--opt", action="store_true",
                   help="also compile the optimizer's step (rows '+opt')")
    args = p.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
