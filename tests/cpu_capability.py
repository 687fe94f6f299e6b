"""Running a check on another CPU path: a child process under
ATEN_CPU_CAPABILITY (the variable every kernel's dispatch reads)."""
import os
import subprocess
import sys

import pytest


def skip_unless_runnable(cap):
    """Skip when this CPU cannot run the capability ``cap`` ("avx2",
    "default") or when it is the one this process already runs."""
    from ptcore._cpu_features import detect_cpu_capability
    have = detect_cpu_capability()
    if cap == "avx2" and have == "DEFAULT":
        pytest.skip("this CPU has no AVX2/FMA")
    if cap == have.lower():
        pytest.skip("the capability this process runs")


def run_child(cap, code, *args):
    """``python -c code args...`` with ATEN_CPU_CAPABILITY=cap (600 s at most)."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
    subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, check=True,
                   timeout=600)
