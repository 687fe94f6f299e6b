"""Run inside each process that ``ptcore.distributed.run`` starts through ``mpiexec``: export
the torchrun variables (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``) from
the MPI launcher's own, then run the user's script or module as ``__main__``.

``python -m ptcore.distributed._bootstrap [-m] TARGET ARGS...``
"""
import fcntl
import os
import runpy
import stat
import struct
import sys
import termios
import time
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
    _wait_forwarded((1, 2))
    MPI.COMM_WORLD.Abort(code)


def _unread(fd):
    """Bytes written to pipe ``fd`` that its reader has not read yet (0 for
    what is not a pipe, or when the pipe cannot be asked)."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except (OSError, ValueError):
        return 0


def _wait_forwarded(fds, limit=5.0):
    """Wait (at most ``limit`` seconds) until the MPI launcher's proxy has read
    what this rank wrote to the pipes ``fds`` (its stdout and stderr): MPI_Abort
    makes the proxy kill the job and exit, and output still in a pipe then is
    lost -- a failing rank's traceback cut after its first line, seen on a
    loaded machine."""
    deadline = time.monotonic() + limit
    while any(_unread(fd) for fd in fds) and time.monotonic() < deadline:
        time.sleep(0.005)


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
        # the whole traceback in one write: it reaches the launcher as one piece
        text = traceback.format_exc()
        try:
            sys.stderr.flush()
            data = text.encode(sys.stderr.encoding or "utf-8", "backslashreplace")
            while data:
                data = data[os.write(sys.stderr.fileno(), data):]
        except (OSError, ValueError, AttributeError):   # no usable stderr: as print_exc
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
