"""The exception a failed checkpoint save or load raises on every rank."""
import traceback

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """Raised on every rank when a checkpoint save or load failed on one or more ranks.

    As torch's, it derives from :class:`BaseException` (not :class:`Exception`), so
    ``except Exception`` does not catch it.  :attr:`failures` maps each failed rank to
    ``(exception, traceback summary)``."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        """``{rank: (exception, traceback.StackSummary or None)}`` of the ranks that failed."""
        return self._failures

    def __str__(self):
        lines = [f"CheckpointException ranks:{self._failures.keys()}\n"]
        for rank, (exc, trace) in self._failures.items():
            lines.append(f"Traceback (most recent call last): (RANK {rank})\n")
            if trace is not None:
                lines.extend(traceback.format_list(trace))
            lines.extend(traceback.format_exception_only(type(exc), exc))
        return "".join(lines)
