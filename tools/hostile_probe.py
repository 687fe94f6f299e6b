"""Run hostile-input cases in torch and in ptcore, each library in its own
subprocess, and report crashes (a signal exit) and mismatches (exception type
or values).

A case file is a Python module defining ``CASES``: a list of ``(id, code)``
where ``code`` runs with ``m`` bound to the library (``torch`` or ``ptcore``),
``np`` to NumPy, ``io`` to the io module and ``dev`` to a device name (``cpu``;
for ptcore the value of ``PROBE_DEV`` when set, e.g. ``cuda`` with
``PTCORE_CUDA_EMULATE=1``, so device cases compare with torch's CPU); it is a
block whose last line is an expression (its value is the case's result).  Usage::

    PYTHONPATH=$PWD python tools/hostile_probe.py CASEFILE [--only SUBSTR]

A child process runs cases in order, naming each in a trace file before it
runs; a crash restarts the child after the fatal case.
"""
import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HANG_S = float(os.environ.get('PROBE_HANG_S', '25'))


def _summary(v, depth=0):
    import numpy as np
    if depth > 3:
        return "..."
    tname = type(v).__name__
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "tolist") and not isinstance(v, np.ndarray):
        try:
            if getattr(v, "is_sparse", False):
                v = v.to_dense()
            n = v.numel()
            dt = str(v.dtype).split(".")[-1]
            if n <= 256:
                vals = v.detach().cpu().tolist()
            else:
                vals = ["numel", n]
            return {"T": [list(v.shape), dt, vals]}
        except Exception as e:
            return {"T?": type(e).__name__}
    if isinstance(v, (tuple, list)):
        return [_summary(x, depth + 1) for x in v[:32]]
    if isinstance(v, dict):
        return {str(k): _summary(x, depth + 1) for k, x in list(v.items())[:32]}
    if isinstance(v, (bool, int, str)) or v is None:
        return v if not isinstance(v, str) else v[:200]
    if isinstance(v, float):
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, complex):
        return [_summary(v.real), _summary(v.imag)]
    if isinstance(v, np.ndarray):
        return {"A": [list(v.shape), str(v.dtype), v.tolist() if v.size <= 256 else v.size]}
    if "Size" in tname:
        return list(v)
    return "<" + tname + ">"


def child(lib, casefile, start, trace, outpath):
    import io
    import signal
    import warnings
    import numpy as np
    import resource
    warnings.simplefilter("ignore")
    # huge allocations fail fast (in both libraries) instead of swapping the machine
    lim = int(float(os.environ.get("PROBE_MEM_GB", "3")) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    m = importlib.import_module(lib)
    dev = os.environ.get("PROBE_DEV", "cpu") if lib == "ptcore" else "cpu"
    spec = importlib.util.spec_from_file_location("cases", casefile)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cases = mod.CASES

    class _T(BaseException):
        pass

    def alarm(*a):
        raise _T()
    signal.signal(signal.SIGALRM, alarm)
    tr = open(trace, "a", buffering=1)
    out = open(outpath, "a", buffering=1)
    for i in range(start, len(cases)):
        cid, code = cases[i]
        tr.write(f"{i}\n")
        lines = code.strip("\n").split("\n")
        body, last = "\n".join(lines[:-1]), lines[-1]
        g = {"m": m, "np": np, "io": io, "tmp": tempfile.gettempdir(), "dev": dev}
        signal.setitimer(signal.ITIMER_REAL, 20)
        try:
            exec(body, g)
            r = eval(last, g)
            res = {"ok": _summary(r)}
        except _T:
            res = {"timeout": True}
        except BaseException as e:  # noqa
            res = {"exc": [c.__name__ for c in type(e).__mro__], "msg": str(e)[:300]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.write(json.dumps([i, cid, res], default=str) + "\n")
    tr.write("done\n")


def run_lib(lib, casefile, ncases, env):
    results = {}
    d = tempfile.mkdtemp()
    trace, outp = os.path.join(d, "trace"), os.path.join(d, "out")
    start = 0
    while start < ncases:
        errp = os.path.join(d, "err")
        with open(errp, "w") as err:
            proc = subprocess.Popen([sys.executable, __file__, "--child", lib, casefile, str(start), trace,
                                     outp], env=env, stdout=subprocess.DEVNULL, stderr=err)
            seen, since, hung = None, time.monotonic(), False
            while proc.poll() is None:
                time.sleep(0.2)
                lines = open(trace).read().split() if os.path.exists(trace) else []
                cur = lines[-1] if lines else None
                if cur != seen:
                    seen, since = cur, time.monotonic()
                elif time.monotonic() - since > HANG_S:
                    proc.kill()
                    proc.wait()
                    hung = True
        lines = open(trace).read().split() if os.path.exists(trace) else []
        if not lines:
            # the child died before its first case (the library failed to import)
            raise SystemExit(f"{lib}: the child exited with {proc.returncode} before any case:\n"
                             + open(errp).read()[-2000:])
        if lines[-1] == "done":
            break
        last = int(lines[-1]) if lines else start
        results[last] = {"timeout": True} if hung else {"crash": proc.returncode,
                                                        "stderr": open(errp).read()[-500:]}
        start = last + 1
    for line in open(outp):
        i, cid, res = json.loads(line)
        results[i] = res
    return results


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-4 * max(1.0, abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return _close(float(a), float(b))
    return a == b


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
        return
    p = argparse.ArgumentParser()
    p.add_argument("casefile")
    p.add_argument("--show-ok", action="store_true")
    p.add_argument("--only", help="run only the cases whose id contains this (comma-separated)")
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("cases", a.casefile)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cases = mod.CASES
    if a.only:
        # the children index the case list: they read a file of the chosen cases only
        keep = a.only.split(",")
        cases = [c for c in cases if any(k in c[0] for k in keep)]
        fd, a.casefile = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write("CASES = " + repr(cases) + "\n")
    env = dict(os.environ)
    rt = run_lib("torch", a.casefile, len(cases), env)
    rp = run_lib("ptcore", a.casefile, len(cases), env)
    bad = 0
    for i, (cid, code) in enumerate(cases):
        t, pc = rt.get(i), rp.get(i)
        verdict = None
        if pc is None or t is None:
            verdict = "MISSING"
        elif "crash" in pc:
            verdict = f"CRASH({pc['crash']}) {pc['stderr'][-200:]!r}"
        elif "timeout" in pc and "timeout" not in t:
            verdict = "PT-TIMEOUT"
        elif "exc" in t:
            if "exc" not in pc:
                verdict = f"torch raised {t['exc'][0]}: {t['msg'][:120]!r}; ptcore returned {str(pc.get('ok'))[:120]}"
            elif t["exc"][0] not in pc["exc"]:
                verdict = f"torch {t['exc'][0]}: {t['msg'][:100]!r} / ptcore {pc['exc'][0]}: {pc['msg'][:100]!r}"
        elif "crash" in t or "timeout" in t:
            verdict = None if "crash" in t else None
        elif "exc" in pc:
            verdict = f"torch returned {str(t['ok'])[:100]}; ptcore raised {pc['exc'][0]}: {pc['msg'][:150]!r}"
        elif not _close(t["ok"], pc["ok"]):
            verdict = f"VALUES torch {str(t['ok'])[:150]} / ptcore {str(pc['ok'])[:150]}"
        if verdict:
            bad += 1
            print(f"[{cid}] {verdict}")
        elif a.show_ok:
            print(f"[{cid}] ok {str(t)[:100]}")
    print(f"{bad} of {len(cases)} cases differ")


if __name__ == "__main__":
    main()
