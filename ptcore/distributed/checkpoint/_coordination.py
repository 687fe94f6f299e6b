"""The ranks taking part in a checkpoint: gathering objects and failures among them (or a
single process when there is no process group)."""
import pickle
import traceback

import ptcore.distributed as dist
from ptcore.distributed.checkpoint.api import CheckpointException


class Coordinator:
    """Rank, world size and collectives of ``group`` (the default group when None); with
    ``no_dist`` one process, rank 0 of 1, and no communication."""

    def __init__(self, group, no_dist):
        self.no_dist = no_dist
        self.group = group
        if no_dist:
            self.rank, self.world_size = 0, 1
        else:
            self.rank = dist.get_rank(group)
            self.world_size = dist.get_world_size(group)

    @property
    def is_coordinator(self):
        """Rank 0 writes the checkpoint's metadata, as torch's coordinator."""
        return self.rank == 0

    def all_gather(self, obj):
        """``[obj of rank 0, obj of rank 1, ...]`` on every rank."""
        if self.no_dist:
            return [obj]
        out = [None] * self.world_size
        dist.all_gather_object(out, obj, group=self.group)
        return out

    def run(self, step, gather=False):
        """``step()`` on every rank; when it raised on any rank, every rank raises a
        :class:`CheckpointException` naming the failed ranks.  Returns the local result,
        or with ``gather`` the list of every rank's result."""
        result, failure = None, None
        try:
            result = step()
        except Exception as exc:  # reported to every rank below
            failure = _portable(exc)
        gathered = self.all_gather((failure, result if gather else None))
        failures = {r: f for r, (f, _) in enumerate(gathered) if f is not None}
        if failures:
            raise CheckpointException(f"CheckpointException ranks:{failures.keys()}",
                                      failures)
        return [r for _, r in gathered] if gather else result


def _portable(exc):
    """``(exception, stack summary)`` that survives pickling to the other ranks."""
    trace = traceback.extract_tb(exc.__traceback__)
    try:
        pickle.loads(pickle.dumps((exc, trace)))
        return exc, trace
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}"), trace
