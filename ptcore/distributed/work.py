"""``Work``: the handle of a collective or point-to-point operation in flight.

Every operation is posted to MPI as a non-blocking request; ``wait`` polls it until it
completes or the process group's timeout passes.  Polling (rather than a blocking
``MPI_Wait``) is what lets a rank whose peer died or never joined raise an error instead of
hanging forever.
"""
import os
import time

from ptcore.distributed import _mpi, _p2p
from ptcore.futures import Future
from ptcore.distributed.store import DistError


class DistBackendError(DistError):
    """A collective or point-to-point operation failed or timed out
    (``torch.distributed.DistBackendError``)."""


# MPI moves the data of a non-blocking operation only while some call polls it (no progress
# thread), so ``wait`` polls without pause, as MPI's own blocking calls spin, but yields the
# CPU between polls so that an oversubscribed node still runs its other processes.  The
# socket backend's requests progress in threads of their own: ``wait`` sleeps on them.
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))
# while waiting, check this often whether the peers on this node are still running
_LIVENESS_SECONDS = 0.5


class Work:
    """Handle of an asynchronous operation (``torch.distributed.Work``).

    ``wait()`` blocks until the operation finished (raising on failure or timeout) and
    returns True; ``is_completed()`` tests without blocking.
    """

    def __init__(self, group, name, requests, finish=None, check=None, result=None, post=None):
        self._MPI = group._MPI
        self._threaded = group._MPI is not _mpi._MPI    # the socket backend's requests
        self._group = group
        self._peer = None              # global rank of a point-to-point operation's peer
        self._name = name
        self._requests = list(requests)
        self._check = check            # agreement check (test(), request), tested first
        self._finish = finish          # runs once after completion (copy back, AVG divide...)
        self._result = result
        self._done = False
        self._error = None
        self._start = time.monotonic()
        self._statuses = None          # MPI statuses of the requests, when asked for
        self._keep = None              # buffers MPI reads or writes until completion
        # ``post()`` returns the operation's requests: called once its agreement check has
        # passed, in call order (_post_in_order), never before: MPI fed collectives that
        # disagree may fail an internal assertion and abort the process
        self._post = post
        if post is not None:
            if check is None:            # (a message is not ordered with the collectives)
                self._post_now()
            else:
                group._unposted.append(self)
                _post_in_order(group)

    def _post_now(self):
        post, self._post = self._post, None
        try:
            self._requests = list(post())
        except self._MPI.Exception as e:
            self._error = DistBackendError(f"{self._name}: MPI error: {e.Get_error_string()}")
        except DistBackendError as e:        # the socket backend: a peer's connection is lost
            self._error = e
        if self._error is not None:
            self._group._mark_broken(str(self._error))

    def _test(self):
        try:
            if _p2p.active:
                _p2p.progress()                # post receives; a receiver's mismatch notice
            if self._group._unposted:
                _post_in_order(self._group)
            if self._error is not None:        # its check failed, seen by another Work
                raise self._error
            if self._post is not None:         # its check, or an earlier one, is pending
                return False
            if self._check is not None:
                if not self._check.test():     # raises when the ranks disagree
                    return False
                self._check = None
            reqs = self._requests
            if reqs and not (reqs[0].Test() if len(reqs) == 1 and self._statuses is None
                             else self._MPI.Request.Testall(reqs, self._statuses)):
                return False
            self._done = True
            self._keep = None
            if self._finish is not None:
                self._finish()
        except self._MPI.Exception as e:
            self._fail(DistBackendError(f"{self._name}: MPI error: {e.Get_error_string()}"))
        except BaseException as e:
            self._fail(e)
        return True

    def _fail(self, exc):
        self._error = exc
        self._group._mark_broken(str(exc))
        raise exc

    def is_completed(self):
        """True when the operation has finished (runs its completion step once)."""
        if self._error is not None:
            raise self._error
        return self._done or self._test()

    def is_success(self):
        return self._done and self._error is None

    def exception(self):
        return self._error

    def wait(self, timeout=None):
        """Block until the operation finished; raise ``DistBackendError`` after ``timeout``
        (a ``datetime.timedelta``; default: the process group's)."""
        if self._error is not None:
            raise self._error
        if self._done or self._test():
            return True
        limit = self._group._timeout_s if timeout is None else _seconds(timeout)
        next_check = time.monotonic() + _LIVENESS_SECONDS
        while not self._test():
            now = time.monotonic()
            if now > next_check:
                next_check = now + _LIVENESS_SECONDS
                dead = self._group._dead_peers(self._peer)
                if dead:
                    self._fail(DistBackendError(
                        f"{self._name} failed on rank {self._group._global_rank}: the process of "
                        f"rank{'s' if len(dead) > 1 else ''} {', '.join(map(str, dead))} "
                        "(same node) has ended, so the operation can never complete; the "
                        "process group can no longer be used"))
            if now - self._start > limit:
                self._fail(DistBackendError(
                    f"{self._name} timed out after {limit:g} s on rank {self._group._global_rank} "
                    f"of a group of {self._group.size()}{self._waiting_for()}: a peer rank "
                    "died, hangs, or did not call the same collective; the process group can "
                    "no longer be used"))
            self._pause()
        return True

    def _waiting_for(self):
        """Which rank the operation still waits for, when the backend knows (sockets)."""
        reqs = self._pending()
        peers = sorted({r._waiting for r in reqs if self._threaded and r._waiting is not None})
        return f" (waiting for rank {', '.join(map(str, peers))})" if peers else ""

    def _pending(self):
        req = self._check.request if self._check is not None else None
        return ([req] if req is not None else []) + self._requests

    def _pause(self):
        """Between two polls: sleep on a pending socket request, or yield the CPU (MPI)."""
        if not self._threaded:
            _yield()
            return
        event = next((r._event for r in self._pending() if not r._event.is_set()), None)
        if event is None:
            _yield()
        else:
            event.wait(0.05)

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        """A :class:`ptcore.futures.Future` of the operation's output tensors (a list: the
        reduced tensor of an ``all_reduce``), done once the operation is: waiting on it
        (or reading its value) waits on this work."""
        return _WorkFuture(self)

    def source_rank(self):
        return self._result

    def __repr__(self):
        state = "completed" if self._done else "pending"
        return f"<ptcore.distributed.Work {self._name} ({state})>"


def _post_in_order(group):
    """Post the operations of ``group`` whose agreement check has passed, in the order they
    were called (the same order on every rank, as MPI requires): the first one still
    checking holds back those after it.  A failed check's error goes to its own ``Work``;
    after it, the group is unusable and nothing more is posted."""
    q = group._unposted
    while q:
        w = q[0]
        if w._error is None and w._check is not None:
            try:
                if not w._check.test():
                    return
                w._check = None
            except group._MPI.Exception as e:
                w._error = DistBackendError(f"{w._name}: MPI error: {e.Get_error_string()}")
            except BaseException as e:
                w._error = e
            if w._error is not None:
                group._mark_broken(str(w._error))
        if w._error is None and group._broken is not None:
            w._error = RuntimeError(f"{w._name}: the process group is unusable after an "
                                    f"earlier failure: {group._broken}")
        q.popleft()
        if w._error is None:
            w._post_now()
        else:
            w._post = None


def _seconds(timeout):
    s = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    if not s > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return s


class _WorkFuture:
    """``Work.get_future()``: the work's outputs once it completed; ``then`` chains."""

    def __init__(self, work):
        self._work = work
        self._fut = None

    def _resolved(self):
        if self._fut is None:
            fut = Future()
            try:
                self._work.wait()
                fut.set_result(list(getattr(self._work, "_outputs", [])))
            except Exception as e:      # the future carries the failure, as torch's
                fut.set_exception(e)
            self._fut = fut
        return self._fut

    def done(self):
        return self._fut is not None or self._work.is_completed()

    def wait(self):
        return self._resolved().wait()

    def value(self):
        return self._resolved().value()

    def then(self, callback):
        """A future of ``callback(self)``, run when this one is waited on."""
        return _Chained(self, callback)


class _Chained(_WorkFuture):
    def __init__(self, parent, callback):
        self._parent, self._callback, self._fut = parent, callback, None

    def _resolved(self):
        if self._fut is None:
            fut = Future()
            try:
                self._parent.wait()
                fut.set_result(self._callback(self._parent))
            except Exception as e:
                fut.set_exception(e)
            self._fut = fut
        return self._fut

    def done(self):
        return self._fut is not None or self._parent.done()

