"""Point-to-point messages that say what they hold (``isend``/``irecv`` with the agreement
checks on, ``PTCORE_DISTRIBUTED_CHECKS`` unset or 1).

``isend`` sends a 24-byte header (dtype, number of elements, bytes) on the group's check
communicator, with the same tag, ahead of the data (as bytes) on the data communicator.  ``irecv``
receives the header, compares it with its own tensor and, when they differ, raises
``ValueError`` naming both and sends a notice to the sender on the world's notice
communicator.  The sender raises the same error in its next wait on any operation: a send
does not wait for its receiver (as in torch), so that two ranks may each send before they
receive.

Order.  Messages between two ranks on one communicator and tag are received in the order
they were sent, on the check communicator as on the data one; so the n-th header and the
n-th data message from a rank belong together when the data receives are posted in the
order their headers were matched.  A receive from a known source posts its data receive at
once, unless an earlier receive of the same tag that may match the same sender (from any
source, header not yet in) has not posted its own; a receive from any source learns its
sender from the header and posts then.  ``progress()``, called by every wait, posts what
has become postable, so a sender's rendezvous never waits on a receive nobody polls.  A
header that does not match is followed by its data all the same, received into a scratch
buffer of the size the sender announced, so later messages still pair up.
"""
import numpy as np

from ptcore.distributed._buffers import dtype_code, dtype_name

_HEADER = 3                     # dtype code, number of elements, number of bytes
_NOTICE = 7                     # tag, sent dtype/numel, expected dtype/numel, receiver, sender

# the world's notice communicator and the receive waiting on it; the groups holding
# receives whose data receive is not posted yet; notices this rank sent, in flight
_state = {"comm": None, "MPI": None, "req": None, "buf": None, "groups": [], "sends": []}
active = False                  # anything for progress() to do (read by Work._test)


def _refresh():
    global active
    active = bool(_state["req"] is not None or _state["groups"] or _state["sends"])


def open_world(world):
    """Create the world's notice communicator (collective: every rank, at init)."""
    _state.update(comm=world._comm.Dup(), MPI=world._MPI, req=None, buf=None, groups=[],
                  sends=[])
    _refresh()


def close_world():
    req, comm = _state["req"], _state["comm"]
    if req is not None and hasattr(req, "Cancel"):
        try:
            req.Cancel()
            req.Wait()
        except Exception:
            pass
    if comm is not None:
        try:
            comm.Free()
        except Exception:
            pass
    _state.update(comm=None, MPI=None, req=None, buf=None, groups=[], sends=[])
    _refresh()


def header(t):
    return np.array([dtype_code(t.dtype), t.numel(), t.numel() * t.element_size()],
                    dtype=np.int64)


def _raw(t):
    """The bytes of contiguous CPU tensor ``t``, as a NumPy array: messages travel as bytes
    (MPI then never unpacks a message into elements of another size; the header says what
    they are)."""
    return np.from_dlpack(t).reshape(-1).view(np.uint8)


def post_send(pg, data, peer, tag, hdr):
    """The requests of a send of contiguous ``data`` (``hdr``: its tensor's ``header``) to
    group rank ``peer``."""
    reqs = [pg._meta.Isend(hdr, peer, tag), pg._comm.Isend(_raw(data), peer, tag)]
    if _state["req"] is None and _state["comm"] is not None:
        _state["buf"] = np.empty(_NOTICE, dtype=np.int64)      # hear about mismatches
        _state["req"] = _state["comm"].Irecv(_state["buf"], _state["MPI"].ANY_SOURCE, 0)
        _refresh()
    return reqs


class Receive:
    """An ``irecv`` in flight: the agreement check of its ``Work`` (``test()``, ``request``).

    ``source`` is the sender's group rank once known; ``status`` the data's."""

    def __init__(self, pg, data, tensor, src, tag):
        self.pg, self.data, self.tensor, self.tag = pg, _raw(data), tensor, tag
        self.source = src
        self.header = np.zeros(_HEADER, dtype=np.int64)
        self._hstatus = pg._MPI.Status()
        self.status = pg._MPI.Status()
        self.header_req = pg._meta.Irecv(self.header, pg._MPI.ANY_SOURCE if src is None else src,
                                         tag)
        self.header_done = False
        self.data_req = None
        self.scratch = None
        self.request = self.header_req
        q = getattr(pg, "_recvq", None)
        if q is None:
            q = pg._recvq = []
        q.append(self)
        if pg not in _state["groups"]:
            _state["groups"].append(pg)
            _refresh()
        _pump(pg)

    def _poll_header(self):
        if not self.header_done and self.pg._MPI.Request.Testall([self.header_req],
                                                                 [self._hstatus]):
            self.header_done = True
            if self.source is None:
                self.source = self._hstatus.Get_source()
        return self.header_done

    def _matches(self):
        return (int(self.header[0]) == dtype_code(self.tensor.dtype)
                and int(self.header[1]) == self.tensor.numel())

    def test(self):
        progress()
        if not self._poll_header():
            return False
        if not self._matches():
            self._mismatch()
        if self.data_req is None:
            _pump(self.pg)
            if self.data_req is None:
                return False
        self.request = self.data_req
        return self.pg._MPI.Request.Testall([self.data_req], [self.status])

    def _mismatch(self):
        pg = self.pg
        _pump(pg)                       # its data goes to the scratch buffer, in order
        src = pg._ranks[self.source]
        sdt, sn = dtype_name(int(self.header[0])), int(self.header[1])
        me = pg._global_rank
        if _state["comm"] is not None:
            notice = np.array([self.tag, self.header[0], sn, dtype_code(self.tensor.dtype),
                               self.tensor.numel(), me, src], dtype=np.int64)
            _state["sends"].append((_state["comm"].Isend(notice, src, 0), notice))
            _refresh()
        raise ValueError(
            f"recv: received {sn} elements of dtype {sdt} from rank {src} (tag {self.tag}) "
            f"but the tensor of shape {tuple(self.tensor.shape)} holds {self.tensor.numel()} "
            f"elements of dtype {self.tensor.dtype} (this is rank {me}); the send and the "
            "receive must agree on the dtype and the number of elements")


def _pump(pg):
    """Post the data receives of ``pg`` that may be posted now, in posting order."""
    keep, blocked = [], []
    for r in pg._recvq:
        if r.source is None or not r.header_done:
            r._poll_header()
        s = r.source
        if s is not None and not any(t == r.tag and (b is None or b == s) for t, b in blocked):
            if r.header_done and not r._matches():
                r.scratch = np.empty(max(int(r.header[2]), 0), dtype=np.uint8)
                r.data_req = pg._comm.Irecv(r.scratch, s, r.tag)
            else:
                r.data_req = pg._comm.Irecv(r.data, s, r.tag)
        else:
            blocked.append((r.tag, s))
            keep.append(r)
    pg._recvq = keep
    if not keep and pg in _state["groups"]:
        _state["groups"].remove(pg)
        _refresh()


def progress():
    """Post the data receives that have become postable; raise a notice's error."""
    if not active:
        return
    for pg in list(_state["groups"]):
        _pump(pg)
    if _state["sends"]:
        _state["sends"] = [(r, a) for r, a in _state["sends"] if not r.Test()]
        _refresh()
    req = _state["req"]
    if req is not None and req.Test():
        tag, sdt, sn, rdt, rn, receiver, sender = (int(v) for v in _state["buf"])
        _state["buf"] = np.empty(_NOTICE, dtype=np.int64)
        _state["req"] = _state["comm"].Irecv(_state["buf"], _state["MPI"].ANY_SOURCE, 0)
        raise ValueError(
            f"send: rank {receiver} received the message this rank sent it (tag {tag}: "
            f"{sn} elements of dtype {dtype_name(sdt)}) into a tensor of {rn} elements of "
            f"dtype {dtype_name(rdt)} (this is rank {sender}); the send and the receive must "
            "agree on the dtype and the number of elements")

