"""The Cython kernels' Python-callable functions refuse None for a tensor or
dtype argument with an exception (they once dereferenced it and crashed);
runs tests/kernel_none_probe.py in a subprocess, which names the fatal call."""
import os
import subprocess
import sys

import ptcore

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))


def test_kernel_functions_refuse_none():
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, os.path.join(HERE, "kernel_none_probe.py")],
                       capture_output=True, text=True, env=env, timeout=600)
    lines = r.stdout.splitlines()
    assert r.returncode == 0, (f"crashed (exit status {r.returncode}) in: "
                               f"{lines[-1] if lines else '<nothing run>'}\n{r.stderr[-2000:]}")
    assert lines and lines[-1].startswith("done")
    assert int(lines[-1].split()[1]) > 100        # it really probed the kernel modules
