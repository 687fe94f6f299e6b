"""Run inside each process that ``ptcore.distributed.run`` starts through ``mpiexec``: export
the torchrun variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``) from
the MPI launcher's own, then run the user's script or module as ``__main__``.

``python -m ptcore.distributed._bootstrap [-m] TARGET ARGS...``
"""
import os
import runpy
import sys
import traceback

from ptcore.distributed import _mpi


def _export():
    rank = _mpi.launcher_env(_mpi._RANK_VARS)
    size = _mpi.launcher_env(_mpi._SIZE_VARS)
    local = _mpi.launcher_env(_mpi._LOCAL_RANK_VARS)
    local_size = _mpi.launcher_env(_mpi._LOCAL_SIZE_VARS)
    if rank is None or size is None:
        # an MPI launcher we do not know: ask MPI itself
        MPI = _mpi.mpi()
        w = MPI.COMM_WORLD
        node = w.Split_type(MPI.COMM_TYPE_SHARED)
        rank, size, local, local_size = w.Get_rank(), w.Get_size(), node.Get_rank(), node.Get_size()
        node.Free()
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(size)
    os.environ["LOCAL_RANK"] = str(rank if local is None else local)
    os.environ["LOCAL_WORLD_SIZE"] = str(size if local_size is None else local_size)
    os.environ["GROUP_RANK"] = os.environ.get("GROUP_RANK", "0")


def _abort_job(code):
    """End every rank of the job now, as torchrun's agent stops the other workers when one
    fails: a rank leaving with an error while the others wait in a collective would
    otherwise hang the job (its own MPI_Finalize at exit waits on them too)."""
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized() \
            or MPI.COMM_WORLD.Get_size() < 2:
        return                      # nothing to wait on: the interpreter exits as usual
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:               # a closed stream must not stop the abort
        pass
    MPI.COMM_WORLD.Abort(code)


def _run(argv):
    try:
        _target(argv)
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            raise
        if not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
            code = 1
        _abort_job(code)
        raise
    except BaseException:           # KeyboardInterrupt included: the job stops either way
        traceback.print_exc()
        _abort_job(1)
        raise


def main(argv):
    if not argv:
        raise SystemExit("usage: python -m ptcore.distributed._bootstrap [-m] TARGET ARGS...")
    _export()
    _run(argv)


def _target(argv):
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
