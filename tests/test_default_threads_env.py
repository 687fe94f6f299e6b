"""The default CPU thread count reads the environment as torch's does (OMP_NUM_THREADS,
then MKL_NUM_THREADS, at most the CPUs there are), and ranks started by mpiexec split the
node's CPUs: ranks x all CPUs threads oversubscribed the node (examples/ddp_digits.py, 2
ranks on 2 cores, ran 30x slower, also under ptcore.distributed.run, which sets
OMP_NUM_THREADS=1 per rank as torchrun does)."""
import os
import subprocess
import sys

import pytest


def _threads(env_extra, lib="ptcore"):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PTCORE_NUM_THREADS",
                        "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", f"import {lib}; print({lib}.get_num_threads())"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout.split()[-1])


def _cpus():
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@pytest.mark.parametrize("env", [{}, {"OMP_NUM_THREADS": "1"}, {"MKL_NUM_THREADS": "1"},
                                 {"OMP_NUM_THREADS": "64"}, {"OMP_NUM_THREADS": "1,1"},
                                 {"OMP_NUM_THREADS": "0"}])
def test_default_threads_from_openmp_variables_as_torch(env):
    pytest.importorskip("torch")
    got, want = _threads(env), _threads(env, "torch")
    assert got == want, (env, got, want)


def test_ptcore_variable_wins_and_mpi_ranks_split_the_cpus():
    n = _cpus()
    assert _threads({"PTCORE_NUM_THREADS": "3", "OMP_NUM_THREADS": "1"}) == 3
    assert _threads({"MPI_LOCALNRANKS": "2"}) == max(n // 2, 1)
    assert _threads({"OMPI_COMM_WORLD_LOCAL_SIZE": str(4 * n)}) == 1
    assert _threads({"MPI_LOCALNRANKS": "1"}) == n
    # an explicit OpenMP setting is the user's choice, kept under MPI too
    assert _threads({"MPI_LOCALNRANKS": "2", "OMP_NUM_THREADS": "1"}) == 1
