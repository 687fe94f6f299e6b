"""Crash fuzzer for ptcore's public functions and Tensor methods (issue 15).

Calls random public ``ptcore.*`` functions, ``Tensor`` methods and the ops of
the operator table's other namespaces (``nn.functional``, ``linalg``, ``fft``,
``special``) with random arguments: tensors of random dtype (uint16/32/64
included) and shape (sizes 0, 1, small; expanded
views with huge sizes; transposed and sliced strides), ints (negative, 0,
small, 2**31, 2**62, 2**63 - 1), floats (nan, inf), dims, tuples and None.
Each call must return or raise a Python exception; a crash of the
interpreter is the only failure.  Before each call the harness writes the op
and a description of its arguments to the trace file (flushed), so the
parent process (tests/test_fuzz.py) can name the call that crashed.

Run by hand for longer::

    PYTHONPATH=$PWD python tests/fuzz_harness.py --examples 200000 --seed 1 --trace /tmp/fuzz.trace

(``--seed`` makes a run reproducible; a crash leaves the fatal call as the
last line of the trace.)
"""
import argparse
import importlib
import inspect
import math
import os
import random
import signal
import sys
import warnings

import ptcore

# functions that change process-wide state, touch files or the network, or
# block: never called
_SKIP_PREFIXES = ("set_", "save", "load", "use_deterministic", "manual_seed", "seed", "initial_seed",
                  "get_rng_state", "compile", "from_file", "printoptions", "typename",
                  "share_memory", "pin_memory", "cuda", "to_sparse", "register", "backward",
                  "retain_grad", "requires_grad_", "apply_", "map_", "map2_", "tolist", "numpy",
                  "record_stream", "untyped_storage", "storage", "data_ptr", "__", "random_",
                  "frombuffer", "from_dlpack", "asarray", "as_tensor", "from_numpy")
_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
           "bool", "complex64", "complex128", "uint16", "uint32", "uint64"]
_HUGE = [2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63 - 1, -2 ** 63, -2 ** 62]


def _ops():
    fns = []
    for name in sorted(dir(ptcore)):
        obj = getattr(ptcore, name, None)
        if name.startswith("_") or name.startswith(_SKIP_PREFIXES) or inspect.isclass(obj) \
                or inspect.ismodule(obj) or not callable(obj):
            continue
        fns.append(("ptcore." + name, obj))
    for name in sorted(dir(ptcore.Tensor)):
        if name.startswith("_") or name.startswith(_SKIP_PREFIXES):
            continue
        attr = getattr(ptcore.Tensor, name, None)
        if callable(attr) and not isinstance(attr, property):
            fns.append(("Tensor." + name, name))
    # the other namespaces of the operator table (nn.functional, linalg, fft, special)
    from ptcore._dispatch.table import OPS
    mods = {ns: importlib.import_module("ptcore." + ns)
            for ns in ("nn.functional", "linalg", "fft", "special")}
    seen = {fn for _, fn in fns}
    for (ns, name), d in sorted(OPS.items(), key=lambda kv: kv[0]):
        if ns not in mods or name.startswith("_") or name.startswith(_SKIP_PREFIXES):
            continue
        fn = getattr(mods[ns], name, None)
        if callable(fn) and fn not in seen:
            fns.append((f"ptcore.{ns}.{name}", fn))
    return fns


class _Timeout(BaseException):
    """A call ran past its time limit (only Python-level work is interrupted)."""


def _on_alarm(signum, frame):
    raise _Timeout()


class _Gen:
    def __init__(self, rng, huge=True):
        self.r = rng
        self.huge = huge

    def size(self):
        r = self.r.random()
        if r < 0.15:
            return 0
        if r < 0.4:
            return 1
        return self.r.randint(2, 5)

    def tensor(self):
        r = self.r
        nd = r.choice([0, 1, 1, 2, 2, 3, 4])
        shape = [self.size() for _ in range(nd)]
        dt = getattr(ptcore, r.choice(_DTYPES))
        desc = f"tensor{shape}:{dt}"
        if dt.is_floating_point or dt.is_complex:
            t = ptcore.randn(shape, dtype=dt)
            if r.random() < 0.1 and t.numel():
                t.view(-1)[0] = r.choice([math.nan, math.inf, -math.inf])
        elif dt == ptcore.bool:
            t = ptcore.randint(0, 2, shape).bool()
        else:
            t = ptcore.randint(-3 if dt.is_signed else 0, 5, shape, dtype=dt)
        k = r.random()
        if k < 0.1 and nd >= 2:
            t = t.transpose(0, 1)
            desc += ".T"
        elif k < 0.2 and nd >= 1 and t.shape[0] > 1:
            t = t[::2]
            desc += "[::2]"
        elif k < 0.27 and nd >= 2 and self.huge:
            # two huge dims: the element count overflows int64, so any op
            # that would loop over it must raise instead (it cannot finish)
            big = r.choice([2 ** 32, 2 ** 40, 2 ** 62])
            t = t.new_zeros([1] * nd).expand([big, big] + [1] * (nd - 2))
            desc = f"zeros{[1] * nd}:{dt}.expand({big}, {big}, ...)"
        elif k < 0.32:
            t = t.requires_grad_(True) if (dt.is_floating_point or dt.is_complex) else t
            desc += ".rg"
        return t, desc

    def int_(self):
        r = self.r.random()
        if r < 0.1:
            v = self.r.choice(_HUGE)
        elif r < 0.3:
            v = self.r.randint(-4, -1)
        else:
            v = self.r.randint(0, 4)
        return v, repr(v)

    def arg(self, depth=0):
        r = self.r.random()
        if r < 0.45:
            return self.tensor()
        if r < 0.7:
            return self.int_()
        if r < 0.78:
            v = self.r.choice([0.5, -1.5, 0.0, math.nan, math.inf, 1e300])
            return v, repr(v)
        if r < 0.86 and depth == 0:
            n = self.r.randint(0, 3)
            items = [self.int_() if self.r.random() < 0.8 else self.tensor() for _ in range(n)]
            return tuple(v for v, _ in items), "(" + ", ".join(d for _, d in items) + ")"
        if r < 0.9:
            return None, "None"
        if r < 0.94:
            v = self.r.choice([True, False])
            return v, repr(v)
        if r < 0.97:
            dt = getattr(ptcore, self.r.choice(_DTYPES))
            return dt, str(dt)
        v = self.r.choice(["mean", "sum", "none", "fro", "constant", "reflect", ""])
        return v, repr(v)


def run(examples, seed, trace_path, call_limit=2.0):
    warnings.simplefilter("ignore")
    ops = _ops()
    rng = random.Random(seed)
    gen = _Gen(rng)
    ptcore.manual_seed(seed)
    trace = open(trace_path, "w", buffering=1) if trace_path else None
    ok = raised = timeouts = 0
    signal.signal(signal.SIGALRM, _on_alarm)
    for i in range(examples):
        name, fn = rng.choice(ops)
        nargs = rng.choice([0, 1, 1, 2, 2, 3, 4])
        args, descs = [], []
        try:
            if name.startswith("Tensor."):
                self_t, d0 = gen.tensor()
                fn = getattr(self_t, fn)
                descs.append("self=" + d0)
            for _ in range(nargs):
                v, d = gen.arg()
                args.append(v)
                descs.append(d)
        except Exception as e:   # building arguments failed (e.g. an unsupported dtype)
            continue
        if trace is not None:
            trace.write(f"{i} {name}({', '.join(descs)})\n")
        signal.setitimer(signal.ITIMER_REAL, call_limit)
        try:
            fn(*args)
            ok += 1
        except _Timeout:
            timeouts += 1
        except (Exception, RecursionError):
            raised += 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    if trace is not None:
        trace.write(f"done {examples} ok={ok} raised={raised} timeouts={timeouts}\n")
        trace.close()
    return ok, raised, timeouts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trace", default=None, help="file that names each call before it runs")
    p.add_argument("--call-limit", type=float, default=2.0,
                   help="seconds after which a call's Python-level work is interrupted")
    a = p.parse_args(argv)
    ok, raised, timeouts = run(a.examples, a.seed, a.trace, a.call_limit)
    print(f"fuzz: {a.examples} examples, seed {a.seed}: {ok} returned, {raised} raised, "
          f"{timeouts} stopped after {a.call_limit} s")


if __name__ == "__main__":
    sys.setrecursionlimit(5000)
    main()
