"""``ptcore.distributed.elastic.multiprocessing.errors``
(``torch.distributed.elastic.multiprocessing.errors``): the ``@record`` decorator that
torchrun scripts put on their entry point.

``record(main)`` runs ``main``; an exception it raises is written, as torchelastic's JSON
error record (message, Python call stack, timestamp), to the file named by the
``TORCHELASTIC_ERROR_FILE`` environment variable when a launcher sets it, then raised again.
``SystemExit(0)`` returns ``None``; other exits pass through.
"""
import faulthandler
import functools
import json
import os
import time
import traceback
import warnings

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler",
           "record"]

_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """Writes an exception as a JSON error record to ``TORCHELASTIC_ERROR_FILE`` (nothing
    when the variable is unset).  Subclasses override ``initialize`` and
    ``record_exception``."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def initialize(self):
        """Enable ``faulthandler`` (tracebacks of every thread on a fatal signal)."""
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}",
                          stacklevel=2)

    def record_exception(self, e):
        path = self._get_error_file_path()
        if not path:
            return
        record = {"message": {"message": f"{type(e).__name__}: {e}",
                              "extraInfo": {"py_callstack": traceback.format_exc(),
                                            "timestamp": str(int(time.time()))}}}
        with open(path, "w") as fp:
            json.dump(record, fp)

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copy a child's error record into this process's error file, with ``error_code``
        as its ``errorCode`` (a child killed by a signal could not write it)."""
        with open(rootcause_error_file) as fp:
            record = json.load(fp)
        if error_code and isinstance(record.get("message"), dict):
            record["message"]["errorCode"] = error_code
        path = self._get_error_file_path()
        if path:
            if os.path.isfile(path):
                os.remove(path)
            with open(path, "w") as fp:
                json.dump(record, fp)


def get_error_handler():
    return ErrorHandler()


class ProcessFailure:
    """A failed worker: ``local_rank``, ``pid``, ``exitcode`` and the ``error_file`` it may
    have written (its ``message`` and ``timestamp`` are read from it when it exists)."""

    def __init__(self, local_rank, pid, exitcode, error_file):
        self.local_rank = local_rank
        self.pid = pid
        self.exitcode = exitcode
        self.error_file = error_file
        self.error_file_data = {}
        self.message = ""
        self.timestamp = int(time.time())
        if error_file and os.path.isfile(error_file):
            try:
                with open(error_file) as fp:
                    self.error_file_data = json.load(fp)
                msg = self.error_file_data.get("message", {})
                if isinstance(msg, dict):
                    self.message = msg.get("message", "")
                    self.timestamp = int(msg.get("extraInfo", {}).get("timestamp",
                                                                      self.timestamp))
                else:
                    self.message = str(msg)
            except (OSError, ValueError):
                pass
        if not self.message:
            self.message = (f"Signal {-exitcode}" if exitcode is not None and exitcode < 0
                            else "To enable traceback see: "
                                 "https://pytorch.org/docs/stable/elastic/errors.html")

    def __repr__(self):
        return (f"ProcessFailure(local_rank={self.local_rank}, pid={self.pid}, "
                f"exitcode={self.exitcode}, error_file={self.error_file!r})")


class ChildFailedError(Exception):
    """Raised by a launcher whose workers failed: ``failures`` maps global ranks to
    :class:`ProcessFailure`; ``@record`` copies the first failure's error record upward."""

    def __init__(self, name, failures):
        if not failures:
            raise AssertionError("ChildFailedError needs at least one failure")
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        root, _ = self.get_first_failure()
        lines = [f"{self.name} FAILED"]
        for rank, f in self.failures.items():
            tag = "Root Cause (first observed failure)" if rank == root else "Failure"
            lines.append(f"{tag}: rank {rank} (local_rank {f.local_rank}), exitcode "
                         f"{f.exitcode}, pid {f.pid}, error_file {f.error_file}: {f.message}")
        width = max(len(s) for s in lines)
        return "\n".join([boarder_delim * width] + lines + [boarder_delim * width])


def record(fn, error_handler=None):
    """Decorate a worker's entry point so that the exception ending it is recorded (see the
    module's description) and raised again."""
    handler = error_handler if error_handler is not None else get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as e:
            if e.code == 0:
                return None
            raise
        except ChildFailedError as e:
            _, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE and failure.error_file:
                handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as e:
            handler.record_exception(e)
            raise
    return wrapper
