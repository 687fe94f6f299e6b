"""Shared timing harness for ptcore's benchmarks.

Every case runs ptcore, PyTorch and NumPy on the same inputs in the same
process; the table reports medians and the ratio ptcore / PyTorch (lower is
better for times).  PyTorch is optional: without it the ratio column is empty.
"""
import gc
import os
import signal
import statistics
import subprocess
import sys
import time


def median_time(fn, *, repeat=15, min_time=0.05, warmup=2):
    """Median seconds per call of ``fn`` (calls batched to reach ``min_time``)."""
    for _ in range(warmup):
        fn()
    number = _calibrate(fn, min_time)
    times = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - t0) / number)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(times)


def _calibrate(fn, min_time):
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= 1 << 20:
            return number
        number *= 2 if dt == 0 else max(2, int(min_time / dt * 1.2))


def paired_median_times(fns, *, repeat=15, min_time=0.05, warmup=2, clock=None):
    """Median seconds per call of each of ``fns``, timed in alternation
    (round r times every function once) so that a machine whose load drifts
    during the run biases none of them: the ratios come from the same
    moments.  ``None`` entries give ``None``.  ``clock`` replaces
    ``time.perf_counter`` (``time.thread_time`` measures the calling
    thread's CPU time: single-threaded runs on a loaded machine, where the
    wall time of long calls includes the time slices other processes get)."""
    clock = clock or time.perf_counter
    live = [f for f in fns if f is not None]
    for f in live:
        for _ in range(warmup):
            f()
    numbers = {id(f): _calibrate(f, min_time) for f in live}
    times = {id(f): [] for f in live}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for f in live:
                n = numbers[id(f)]
                t0 = clock()
                for _ in range(n):
                    f()
                times[id(f)].append((clock() - t0) / n)
    finally:
        if gc_was:
            gc.enable()
    return [None if f is None else statistics.median(times[id(f)]) for f in fns]


def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def print_table(title, rows):
    """rows: (case, ptcore_s, torch_s, numpy_s)."""
    print(f"\n## {title}\n")
    print(f"| case | ptcore | torch | numpy | ptcore/torch | ptcore/numpy |")
    print(f"|---|---:|---:|---:|---:|---:|")
    for case, p, t, n in rows:
        rt = f"{p / t:.2f}" if (p and t) else "-"
        rn = f"{p / n:.2f}" if (p and n) else "-"
        print(f"| {case} | {fmt_time(p)} | {fmt_time(t)} | {fmt_time(n)} | {rt} | {rn} |")


def parse_bench_args(doc):
    """The options ``--threads N`` (default 1), ``--quick`` and ``--only
    SUBSTRING`` of a benchmark whose docstring is ``doc``; sets the BLAS and
    OpenMP thread variables to N, so call it before importing NumPy or torch."""
    import argparse
    import os
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    args = ap.parse_args()
    for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[v] = str(args.threads)
    return args


def keep_sparse_alive(*libs):
    """A small sparse COO tensor of each library (None skipped), for the caller to keep
    alive: what a dense op costs while a program holds one (a GNN's adjacency)."""
    return [lib.randn(4, 4).relu().to_sparse() for lib in libs if lib is not None]


def try_import_torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def torch_with_threads(threads):
    """torch (None when not installed) with ptcore and torch both set to ``threads``."""
    import ptcore
    torch = try_import_torch()
    ptcore.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    return torch


def print_cpu():
    """Print the CPU model and its vector extensions (``lscpu``), so that a
    table is read against the machine it was measured on."""
    import platform
    import subprocess
    model, flags = platform.processor() or platform.machine(), ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        key, _, val = line.partition(":")
        if key.strip() == "Model name":
            model = val.strip()
        elif key.strip() == "Flags":
            wanted = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_bf16",
                      "avx512_fp16", "amx_tile", "neon", "asimd", "sve")
            have = val.split()
            flags = " ".join(f for f in wanted if f in have)
    print(f"CPU: {model}; vector flags: {flags or '-'}")


def compare_calls(pc, tc, title):
    """Paired per-call times of ``pc[k]`` (ptcore) and ``tc[k]`` (torch), each
    a ``(fn, n)`` pair whose ``fn`` is timed ``n`` times per sample (1 thread,
    thread CPU time), printed as a table sorted by ratio (worst first)."""
    rows = []
    for k, (f, n) in pc.items():
        g = tc[k][0]

        def rep(fn, n=n):
            def run():
                for _ in range(n):
                    fn()
            return run
        p, t = paired_median_times([rep(f), rep(g)], repeat=7, min_time=0.02,
                                   clock=time.thread_time)
        rows.append((p / t, k, p / n * 1e6, t / n * 1e6))
    print(f"| {title} | ptcore us | torch us | ptcore/torch |\n|---|---:|---:|---:|")
    for r, k, p, t in sorted(rows, reverse=True):
        print(f"| {k} | {p:.2f} | {t:.2f} | {r:.2f} |")


def compare_main(cases, title, wrap=None):
    """The ``main`` of a per-call comparison script: 1 thread in both
    libraries, ``cases(lib)`` -> ``{name: (fn, n)}`` (``wrap`` applied to each
    fn), the table of :func:`compare_calls`; 1 without torch."""
    import ptcore
    torch = try_import_torch()
    if torch is None:
        print("needs torch for the comparison")
        return 1
    print_cpu()
    ptcore.set_num_threads(1)
    torch.set_num_threads(1)

    def built(lib):
        return {k: ((wrap(f) if wrap else f), n) for k, (f, n) in cases(lib).items()}
    compare_calls(built(ptcore), built(torch), title)
    return 0


class BusyCore:
    """A competing program: a subprocess running a pure busy loop (one core's
    worth of work), resumed and paused by the caller (SIGCONT/SIGSTOP, so a
    paused one takes no CPU at all), for timings on a machine shared with
    another job.  Close it (or use it as a context manager) when done."""

    def __init__(self):
        if not hasattr(signal, "SIGSTOP"):
            raise RuntimeError("BusyCore pauses its process with SIGSTOP (POSIX only)")
        self._proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        self.busy = True
        self.pause()

    def resume(self):
        os.kill(self._proc.pid, signal.SIGCONT)
        self.busy = True

    def pause(self):
        os.kill(self._proc.pid, signal.SIGSTOP)
        self.busy = False

    def close(self):
        self._proc.kill()
        self._proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def machine_load():
    """``(load averages (1, 5, 15 min), runnable tasks now)`` from /proc/loadavg
    (the runnable count includes the caller); ``None`` where it cannot be read."""
    try:
        with open("/proc/loadavg") as f:
            parts = f.read().split()
        return tuple(float(v) for v in parts[:3]), int(parts[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None
