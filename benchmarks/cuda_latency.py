"""Host-side overhead of one tiny CUDA op (issue 17).

Runs on the emulated device (``PTCORE_CUDA_EMULATE=1``) with kernel
execution stubbed out after warm-up: the emulated driver's ``launch`` and
``gemm`` become no-ops, so what is timed is ptcore's own Python work per op
(dispatch, autograd recording, allocator, argument packing, driver call).
Each op is called ``--calls`` times per loop; the figure is the median over
``--loops`` loops of 1-thread CPU time (``time.process_time``) per call, in
microseconds.

Usage::

    PTCORE_CUDA_EMULATE=1 python benchmarks/cuda_latency.py [--calls 5000] [--loops 7]

``--compare DIR`` runs the same cases with the ptcore found in ``DIR`` (a
checkout of another commit, e.g. the one before a change) in a child
process, alternating the two loop by loop, and prints both columns and
their ratio.

``--every-op`` times instead every row of ``cuda_check.py``'s every-op
list (each op with a CUDA kernel, float32, its contiguous, broadcast and
strided cases on (4, 4) operands) that makes no synchronising read (those
would read stubbed results), slowest first, and prints the median and how
many rows take over 20 and 40 us.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def cases(P):
    a = P.ones(16, device="cuda")
    b = P.ones(16, device="cuda")
    x = P.ones(4, 8, device="cuda")
    w = P.ones(8, 8, device="cuda")
    return [
        ("a+b", lambda: a + b),
        ("a*2", lambda: a * 2),
        ("2-a", lambda: 2 - a),
        ("a.sum()", lambda: a.sum()),
        ("relu(a)", lambda: P.relu(a)),
        ("exp(a)", lambda: P.exp(a)),
        ("a.mul_(1.0)", lambda: a.mul_(1.0)),
        ("a.add_(b, alpha=2)", lambda: a.add_(b, alpha=2)),
        ("softmax(x, 1)", lambda: P.softmax(x, 1)),
        ("w@w", lambda: w @ w),
    ]


def _stub(P):
    from ptcore.cuda.runtime import state as _runtime
    drv = _runtime.lazy_init("benchmark")
    P.cuda.synchronize()
    drv.launch = lambda *a, **k: None
    from ptcore.cuda.driver.fast_launch import null_launcher
    drv.launcher = null_launcher()
    drv.gemm = lambda *a, **k: None


def _loop(fn, calls):
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls * 1e6


def child(calls):
    """Line protocol on stdin/stdout: 'names' then one 'i' per loop of case i."""
    import gc
    import ptcore as P
    cs = cases(P)
    for _, f in cs:
        for _ in range(50):
            f()
    _stub(P)
    gc.disable()
    out = sys.stdout
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "names":
            out.write(json.dumps([n for n, _ in cs]) + "\n")
        else:
            out.write(json.dumps(_loop(cs[int(cmd)][1], calls)) + "\n")
        out.flush()


def every_op(calls, loops):
    """Per-call host time of each non-synchronising row of cuda_check.py's
    every-op list: [(us, op, case, kernels launched)], slowest first."""
    import gc
    import warnings
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cuda_check as cc
    warnings.simplefilter("ignore")
    ctx = cc.Ctx(True)
    P = ctx.ptcore
    todo = []
    for ns, name in cc._registered_cuda_ops(ctx):
        try:
            cases = cc._cases(ctx, ns, name, "float32", (4, 4))
        except Exception:
            continue
        for label, make in cases[:3]:
            try:
                fn = cc._ptcore_fn(ctx, ns, name)
                a, k = make("p")
                call = (lambda fn=fn, a=a, k=k: fn(*a, **k))
                call()
                launches, syncs = ctx.kernel_counts(call)
                if syncs == 0:
                    for _ in range(3):
                        call()
                    todo.append((f"{ns}.{name}", label, launches, call))
            except Exception:
                pass                    # a guessed signature that does not fit
            if label.startswith("generic"):
                break
    P.cuda.synchronize()
    _stub(P)
    gc.disable()
    rows = []
    for op, label, launches, call in todo:
        try:
            rows.append((statistics.median(_loop(call, calls) for _ in range(loops)), op, label,
                         launches))
        except Exception:
            continue
    return sorted(rows, reverse=True)


def _spawn(root, calls):
    env = dict(os.environ, PYTHONPATH=root, PTCORE_CUDA_EMULATE=os.environ.get("PTCORE_CUDA_EMULATE", "1"),
               OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", "--calls", str(calls)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=root)


def _ask(p, cmd):
    p.stdin.write(cmd + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--loops", type=int, default=7)
    ap.add_argument("--compare", metavar="DIR", help="ptcore checkout to compare against (the 'before')")
    ap.add_argument("--every-op", action="store_true",
                    help="every non-synchronising row of cuda_check.py's every-op list")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.calls)
    if args.every_op:
        os.environ.setdefault("PTCORE_CUDA_EMULATE", "1")
        rows = every_op(min(args.calls, 100), min(args.loops, 5))
        for us, op, label, launches in rows:
            print(f"{us:8.1f} us  {op:36s} {label:26s} kernels {launches}")
        us = [r[0] for r in rows]
        print(f"{len(us)} rows; median {statistics.median(us):.1f} us; over 20 us "
              f"{sum(u > 20 for u in us)}; over 40 us {sum(u > 40 for u in us)}")
        return 0
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [_spawn(args.compare, args.calls)] if args.compare else []
    procs.append(_spawn(here, args.calls))
    names = _ask(procs[-1], "names")
    rows = []
    for i, name in enumerate(names):
        ts = [[] for _ in procs]
        for _ in range(args.loops):
            for j, p in enumerate(procs):
                ts[j].append(_ask(p, str(i)))
        rows.append((name, [statistics.median(t) for t in ts]))
    for p in procs:
        p.stdin.close()
        p.wait()
    if args.compare:
        print(f"{'op':22s} {'before us':>10s} {'after us':>10s} {'after/before':>13s}")
        for name, (b, a) in rows:
            print(f"{name:22s} {b:10.1f} {a:10.1f} {a / b:13.2f}")
    else:
        print(f"{'op':22s} {'us/op':>10s}")
        for name, (a,) in rows:
            print(f"{name:22s} {a:10.1f}")


if __name__ == "__main__":
    main()
