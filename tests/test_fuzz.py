"""CI run of the crash fuzzer (tests/fuzz_harness.py): a fixed number of
random calls of public ptcore functions and Tensor methods, in a subprocess,
must each return or raise a Python exception.  A crash fails with the op and
arguments that caused it.  Longer runs: see the harness's docstring, or set
PTCORE_FUZZ_EXAMPLES (and PTCORE_FUZZ_SEED) for this test.
"""
import os
import subprocess
import sys

import pytest

import ptcore

HERE = os.path.dirname(os.path.abspath(__file__))
# the directory holding the ptcore this test imported (the source tree with its
# compiled modules, or site-packages after `pip install .`): subprocesses import the same
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))

EXAMPLES = int(os.environ.get("PTCORE_FUZZ_EXAMPLES", "1500"))
SEEDS = [int(s) for s in os.environ.get("PTCORE_FUZZ_SEED", "0,1").split(",")]


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_no_crash(seed, tmp_path):
    trace = tmp_path / "fuzz.trace"
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_harness.py"),
                            "--examples", str(EXAMPLES), "--seed", str(seed), "--trace", str(trace)],
                           capture_output=True, text=True, env=env, timeout=900)
    except subprocess.TimeoutExpired:
        lines = trace.read_text().splitlines() if trace.exists() else ["<no trace>"]
        pytest.fail(f"fuzz seed {seed} hung in: {lines[-1]}")
    lines = trace.read_text().splitlines() if trace.exists() else []
    assert r.returncode == 0, (
        f"fuzz seed {seed} crashed the interpreter (exit status {r.returncode}) in:\n"
        f"{lines[-1] if lines else '<no trace>'}\n{r.stderr[-3000:]}")
    assert lines and lines[-1].startswith(f"done {EXAMPLES}"), lines[-1:]
    # the harness really exercised ops (it did not fail while building arguments)
    ok = int(lines[-1].split("ok=")[1].split()[0])
    raised = int(lines[-1].split("raised=")[1].split()[0])
    assert ok > EXAMPLES // 50 and ok + raised > EXAMPLES // 2, lines[-1]
