"""Every op, each tensor operand in turn with its storage shrunk below the
tensor's extent, raises RuntimeError: no crash, no silent read or write past the
storage (the sweep behind tests/test_storage_shrink.py's hand-picked cases).

tests/storage_shrink_probe.py builds each op's sample arguments from its schema
(ptcore's aten overloads, their ``out=`` and in-place forms and ``Tensor``
method forms, and the declared ops no aten op names), then shrinks one operand
(an ``out=`` tensor and an in-place ``self`` included) to one byte short of its
extent, to half of it and to 0 bytes, in reversed memory order, and aliased by
a read operand, and calls the op.  The probes run in subprocesses, in two
batches side by side; a probe that kills its interpreter (or hangs) fails as
itself (op, overload, operand, storage size) and the batch resumes after it.
A probe whose C code printed and dropped an exception (a ``noexcept`` Cython
helper that raised) fails too.
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import ptcore

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
PROBE = os.path.join(HERE, "storage_shrink_probe.py")
BATCHES = 2
# a batch stops after this many dead probes (the first ones name the hole)
MAX_DEAD = 6


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    return env


def _count_cases():
    code = ("import sys; sys.path.insert(0, %r)\nimport storage_shrink_probe as p\n"
            "print(len(p.cases()))" % HERE)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def run_range(first, last, timeout=600):
    """The probe's result lines of cases [first, last), and the probes that crashed or
    hung the interpreter (each then skipped, the rest of the range run on)."""
    lines, dead = [], []
    skip = 0
    while first < last:
        try:
            r = subprocess.run([sys.executable, PROBE, str(first), str(last), str(skip)],
                               capture_output=True, text=True, env=_env(), timeout=timeout)
            out, rc, err = r.stdout, r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = "timeout", ""
        got = out.splitlines()
        lines += [g for g in got if g.startswith("R ")]
        if rc == 0 and got and got[-1] == "done":
            break
        begun = [g for g in got if g.startswith("B ")]
        if not begun:
            dead.append(f"cases [{first}, {last}): no probe started (rc {rc}): {err[-1500:]}")
            break
        last_begun = begun[-1].split()
        dead.append(f"{' '.join(last_begun[1:])}: rc {rc}: {err[-600:]}")
        if len(dead) >= MAX_DEAD:
            dead.append(f"(stopped after {MAX_DEAD} in cases [{first}, {last}))")
            break
        first = int(last_begun[1])
        if last_begun[-1] == "sample":
            first, skip = first + 1, 0
        else:
            skip = int(last_begun[3]) + 1
    return lines, dead


def test_every_op_refuses_a_shrunk_operand():
    n = _count_cases()
    bounds = [n * i // BATCHES for i in range(BATCHES + 1)]
    with ThreadPoolExecutor(BATCHES) as pool:
        parts = list(pool.map(lambda i: run_range(bounds[i], bounds[i + 1]), range(BATCHES)))
    lines = [ln for got, _ in parts for ln in got]
    dead = [d for _, ds in parts for d in ds]
    probes = [ln.split(None, 7) for ln in lines if " sample " not in ln]
    sampled = sum(1 for ln in lines if " sample " in ln and not ln.endswith(" none"))
    bad = [" ".join(p[1:]) for p in probes if p[6] in ("SILENT", "OTHER", "UNRAISABLE")]
    assert not dead, "probes that killed the interpreter:\n" + "\n".join(dead)
    assert not bad, f"{len(bad)} probes did not raise the storage error:\n" + "\n".join(bad[:60])
    # the sweep really ran: thousands of op forms, each operand three times
    assert sampled > 2000 and len(probes) > 9000, (sampled, len(probes))
    assert sum(p[6] == "raised" for p in probes) > 9000
