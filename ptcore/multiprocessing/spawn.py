"""``ptcore.multiprocessing.spawn``: start ``nprocs`` processes running ``fn(i, *args)``."""
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import traceback
import pickle

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext",
           "ProcessRaisedException", "ProcessExitedException", "ProcessException"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """Raised when a process failed with an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """Raised when a process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                             self.signal_name))


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


class ProcessContext:
    """The processes started by :func:`start_processes`; ``join()`` them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True when all finished successfully.

        Raises ``ProcessRaisedException``/``ProcessExitedException`` (after
        terminating the others) when one fails.
        """
        if len(self.sentinels) == 0:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        failed = self.processes[error_index]
        if not os.path.exists(self.error_files[error_index]) or \
                os.path.getsize(self.error_files[error_index]) == 0:
            exitcode = failed.exitcode
            if exitcode < 0:
                name = signal.Signals(-exitcode).name
                raise ProcessExitedException(
                    f"process {error_index} terminated with signal {name}",
                    error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                    signal_name=name)
            raise ProcessExitedException(
                f"process {error_index} terminated with exit code {exitcode}",
                error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{original_trace}"
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    pass


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        tf = tempfile.NamedTemporaryFile(prefix="ptcore-errorfile-", suffix=".pickle", delete=False)
        tf.close()
        os.unlink(tf.name)
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        error_files.append(tf.name)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    finally:
        for f in error_files:
            try:
                os.unlink(f)
            except OSError:
                pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawn ``nprocs`` processes running ``fn(i, *args)`` (``torch.multiprocessing.spawn``).

    Parameters
    ----------
    fn : callable
        Called as ``fn(i, *args)`` in process ``i``; must be picklable
        (defined at module level) for the spawn start method.
    args : tuple
        Arguments after the process index.
    nprocs : int
        Number of processes.
    join : bool
        Wait for all of them (re-raising the first failure) or return a
        :class:`ProcessContext`.
    daemon : bool
        Start them as daemonic processes.
    start_method : str
        ``"spawn"`` (default), ``"fork"`` or ``"forkserver"``.
    """
    if start_method != "spawn":
        import warnings
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " ptcore.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")

