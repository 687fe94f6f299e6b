"""Every ``PTCORE_*`` environment variable is read here, once, at import."""
import os


def _int_env(name, default):
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {v!r}") from None


# Threads used by ptcore's CPU kernels (default chosen in ptcore._threads).
NUM_THREADS = _int_env("PTCORE_NUM_THREADS", 0)


def _omp_threads():
    """The thread count OMP_NUM_THREADS (else MKL_NUM_THREADS) asks for, as torch's
    default intra-op thread count reads them (the first entry of a nested list such as
    "4,2"); 0 when unset or not a positive integer.  MPI/torchrun-style launchers set
    OMP_NUM_THREADS=1 per rank so that ranks do not oversubscribe the node's cores."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        v = os.environ.get(name, "").split(",")[0].strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    return 0


OMP_THREADS = _omp_threads()


def _mpi_local_ranks():
    """How many ranks an MPI launcher started on this node (MPICH/Hydra's MPI_LOCALNRANKS,
    Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE); 0 outside one.  (SLURM's srun restricts each
    task's CPU set itself, which the default thread count already reads.)"""
    for name in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"):
        v = os.environ.get(name, "").strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    return 0


MPI_LOCAL_RANKS = _mpi_local_ranks()
# 1 (default): the parallel kernels run fewer threads than ptcore.get_num_threads() while
# the process does not get the CPUs for them (other programs keeping cores busy; see
# ptcore/_ops/kernels/include/ptc_team.h); 0: always that many.
ADAPTIVE_THREADS = _int_env("PTCORE_ADAPTIVE_THREADS", 1)
# ptcore.as_torch: set (to 1) by the launcher so that child interpreters (spawn workers,
# torchrun/mpiexec ranks) resolve ``import torch`` to ptcore too.  Its sitecustomize.py
# reads it itself (the one exception to this module's rule: it runs at interpreter start-up,
# before ptcore is imported, and must not import ptcore when the variable is unset).
# Upper bound on freed large host blocks kept for reuse, in MiB.
CPU_ALLOCATOR_CACHE_MB = _int_env("PTCORE_CPU_ALLOCATOR_CACHE_MB", 1024)
# Directory for compiled GPU kernels (used by ptcore.cuda).
CACHE_DIR = os.environ.get("PTCORE_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "ptcore")
# ptcore.distributed: check that ranks agree on each collective's shapes/dtypes (1) or not (0).
DISTRIBUTED_CHECKS = _int_env("PTCORE_DISTRIBUTED_CHECKS", 1)

# float32 GEMM kernels (ptcore/_ops/kernels/include/ptc_sgemm.h): "blas" uses the BLAS's
# sgemm, "avx2" / "avx512" force that micro-kernel; unset: the CPU's best
_SGEMM_CHOICES = {"": -1, "blas": 0, "avx2": 1, "avx512": 2}
_sgemm = os.environ.get("PTCORE_SGEMM", "").strip().lower()
if _sgemm not in _SGEMM_CHOICES:
    raise ValueError(f"environment variable PTCORE_SGEMM must be one of blas, avx2, avx512, "
                     f"got {_sgemm!r}")
SGEMM_ISA = _SGEMM_CHOICES[_sgemm]
