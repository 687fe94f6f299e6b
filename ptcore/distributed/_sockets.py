"""The socket backend ("gloo"): process groups for processes that no MPI launcher started
(``torch.multiprocessing.spawn``, torchrun-style ``RANK``/``WORLD_SIZE`` variables,
``tcp://`` and ``file://`` rendezvous, an explicit ``store``).

The ranks meet through a :mod:`store <ptcore.distributed.store>`: each listens on a free
port, publishes its address there, then connects to every lower rank (a full mesh of TCP
connections, authenticated by a token the store hands out).  On top of the mesh, :class:`Comm`
implements the part of mpi4py's communicator interface that the collectives use
(``Iallreduce``, ``Ibcast``, ``Isend``/``Irecv`` with tags, ``Split``, ``Dup``...), over
contiguous tensors and NumPy arrays, so the same collectives code runs on MPI and on sockets.

A thread per peer reads its connection and files each message under (communicator, source,
tag); a thread per communicator runs its collectives one after the other, in the order they
were posted.  Reductions combine the contributions in rank order on every rank, so the
ranks' results agree bit for bit.  A peer that exits or crashes closes its connections: the
operations waiting on it fail with ``DistBackendError`` naming it.
"""
import collections
import itertools
import os
import queue
import socket
import struct
import threading
import time

import numpy as np

from ptcore.distributed._liveness import node_id
from ptcore.distributed.store import close_sockets, connect, recv_exact, recv_into_exact
from ptcore.distributed.work import DistBackendError

_HELLO = struct.Struct("!8s16sq")
_MAGIC = b"ptcgloo1"
_HEADER = struct.Struct("!HBqQ")            # context length, kind, tag, payload length
_P2P, _COLL = 0, 1


class SocketError(RuntimeError):
    """An operation that cannot complete as posted (mpi4py's ``MPI.Exception``)."""

    def Get_error_string(self):
        return str(self)


class _Sentinel:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


class _Op:
    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def __repr__(self):
        return f"<socket op {self.name}>"


class Status:
    """Source and size of a received message (``MPI.Status``)."""

    def __init__(self):
        self.source, self.nbytes = -1, 0

    def Get_source(self):
        return self.source

    def Get_count(self, datatype=None):
        return self.nbytes


class Request:
    """A posted operation (``MPI.Request``): done when its event is set."""

    def __init__(self, event=None):
        self._event = threading.Event() if event is None else event
        self._error = None
        self._finish = None            # run once, on the caller's thread, on completion
        self._status = None            # (source, nbytes) of a receive
        self._waiting = None           # the world rank whose message it waits for, if any

    def _complete(self, error=None):
        self._error = error
        self._event.set()

    def Test(self):
        if not self._event.is_set():
            return False
        if self._error is not None:
            raise self._error
        if self._finish is not None:
            fn, self._finish = self._finish, None
            try:
                fn()
            except BaseException as e:
                self._error = e
                raise
        return True

    def Wait(self):
        self._event.wait()
        return self.Test()

    def _idle(self, seconds):
        """Sleep until this request completes or ``seconds`` pass."""
        self._event.wait(seconds)

    @staticmethod
    def Testall(requests, statuses=None):
        if not all(r.Test() for r in requests):
            return False
        if statuses is not None:
            for r, s in zip(requests, statuses):
                if r._status is not None:
                    s.source, s.nbytes = r._status
        return True


def _done_request():
    r = Request()
    r._complete()
    return r


class _Namespace:
    """Attributes from keywords (hashable, unlike SimpleNamespace: tables are keyed by it)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


# the subset of mpi4py's ``MPI`` module the collectives use
MPI = _Namespace(
    IN_PLACE=_Sentinel("IN_PLACE"), COMM_NULL=_Sentinel("COMM_NULL"), ANY_SOURCE=-1,
    UNDEFINED=-32766, BYTE="byte", Status=Status, Request=Request, Exception=SocketError,
    SUM=_Op("SUM", np.add), PROD=_Op("PROD", np.multiply), MIN=_Op("MIN", np.minimum),
    MAX=_Op("MAX", np.maximum), BAND=_Op("BAND", np.bitwise_and),
    BOR=_Op("BOR", np.bitwise_or), BXOR=_Op("BXOR", np.bitwise_xor),
    LAND=_Op("LAND", np.logical_and), LOR=_Op("LOR", np.logical_or),
    LXOR=_Op("LXOR", np.logical_xor),
)


def _np(buf):
    """A flat, writable NumPy view of a contiguous tensor or array (None stays None)."""
    if buf is None or isinstance(buf, np.ndarray):
        return None if buf is None else buf.reshape(-1)
    return np.from_dlpack(buf).reshape(-1)


def _spec(spec):
    """``[buffer, (counts, displacements)]`` as (flat array, counts, displacements)."""
    buf, (counts, displs) = spec
    return _np(buf), [int(c) for c in counts], [int(d) for d in displs]


def _bytes(arr):
    return memoryview(np.ascontiguousarray(arr).view(np.uint8))


class _Slot:
    """A receive waiting for its message."""

    __slots__ = ("seq", "event", "payload", "source", "error")

    def __init__(self, seq):
        self.seq, self.event = seq, threading.Event()
        self.payload = self.source = self.error = None

    def fill(self, payload, source, error=None):
        self.payload, self.source, self.error = payload, source, error
        self.event.set()


class Transport:
    """The full mesh of connections of one world, and the matching of arriving messages
    to posted receives."""

    def __init__(self, rank, size, socks, timeout_s):
        self.rank, self.size, self.timeout_s = rank, size, timeout_s
        self.socks = socks                               # peer -> socket
        self.send_locks = {p: threading.Lock() for p in socks}
        self.lock = threading.Lock()
        self.unexpected = {}        # (ctx, src, kind, tag) -> deque of (arrival, payload)
        self.posted = {}            # (ctx, src or ANY_SOURCE, kind, tag) -> deque of slots
        self.dead = {}              # peer -> why its connection ended
        self.closed = False
        self._seq = itertools.count()
        for p, s in socks.items():
            threading.Thread(target=self._reader, args=(p, s), daemon=True,
                             name=f"ptcore-gloo-recv-{p}").start()

    # ------------------------------------------------------------------ receiving side
    def _reader(self, peer, sock):
        try:
            while True:
                clen, kind, tag, n = _HEADER.unpack(recv_exact(sock, _HEADER.size))
                ctx = recv_exact(sock, clen).decode()
                payload = recv_into_exact(sock, bytearray(n))
                self._deliver((ctx, peer, kind, tag), payload)
        except (OSError, ConnectionError, struct.error, UnicodeDecodeError) as e:
            why = ("the process group was destroyed" if self.closed else
                   f"its connection closed ({e}): the process exited or crashed")
            self._peer_lost(peer, why)

    def _deliver(self, key, payload):
        ctx, src, kind, tag = key
        with self.lock:
            mine = self.posted.get(key)
            anyq = self.posted.get((ctx, MPI.ANY_SOURCE, kind, tag)) if kind == _P2P else None
            q = None
            if mine and anyq:
                q = mine if mine[0].seq < anyq[0].seq else anyq
            else:
                q = mine or anyq
            if q:
                slot = q.popleft()
            else:
                self.unexpected.setdefault(key, collections.deque()).append(
                    (next(self._seq), payload))
                return
        slot.fill(payload, src)

    def _peer_lost(self, peer, why):
        with self.lock:
            self.dead.setdefault(peer, why)
            failed = []
            for key, q in self.posted.items():
                if key[1] == peer:
                    failed.extend(q)
                    q.clear()
        for slot in failed:
            slot.fill(None, peer, self._lost_error(peer))

    def _lost_error(self, peer):
        return DistBackendError(f"rank {self.rank} cannot receive from rank {peer}: "
                                f"{self.dead.get(peer, 'connection lost')}")

    def post(self, ctx, src, kind, tag):
        """A slot that receives the next message from ``src`` (a world rank, or
        ANY_SOURCE) with ``tag`` on communicator ``ctx``."""
        slot = _Slot(next(self._seq))
        with self.lock:
            if src == MPI.ANY_SOURCE:
                best = None
                for key, q in self.unexpected.items():
                    if q and key[0] == ctx and key[2] == kind and key[3] == tag and (
                            best is None or q[0][0] < self.unexpected[best][0][0]):
                        best = key
                key = best
            else:
                key = (ctx, src, kind, tag)
            q = self.unexpected.get(key) if key is not None else None
            if q:
                _, payload = q.popleft()
                if not q:
                    del self.unexpected[key]
                slot.fill(payload, key[1])
            elif src != MPI.ANY_SOURCE and src in self.dead:
                slot.fill(None, src, self._lost_error(src))
            else:
                self.posted.setdefault((ctx, src, kind, tag), collections.deque()).append(slot)
        return slot

    def wait(self, slot):
        """The payload of ``slot`` once it arrived (raises when its sender is lost)."""
        slot.event.wait()
        if slot.error is not None:
            raise slot.error
        return slot.payload

    # -------------------------------------------------------------------- sending side
    def send(self, dst, ctx, kind, tag, data):
        data = memoryview(data).cast("B")
        if dst == self.rank:
            self._deliver((ctx, dst, kind, tag), bytearray(data))
            return
        sock = self.socks.get(dst)
        if sock is None or dst in self.dead:
            raise DistBackendError(f"rank {self.rank} cannot send to rank {dst}: "
                                   f"{self.dead.get(dst, 'no connection')}")
        c = ctx.encode()
        try:
            with self.send_locks[dst]:
                sock.sendall(_HEADER.pack(len(c), kind, tag, len(data)) + c)
                if len(data):
                    sock.sendall(data)
        except OSError as e:
            raise DistBackendError(f"rank {self.rank} cannot send to rank {dst}: its "
                                   f"connection failed ({e}): the process exited or "
                                   "crashed") from None

    def close(self):
        self.closed = True
        close_sockets(self.socks.values())
        for p in list(self.socks):
            self._peer_lost(p, "the process group was destroyed")


class Comm:
    """A communicator over a :class:`Transport` (the part of ``mpi4py.MPI.Comm`` that the
    collectives use).  ``members``: the world ranks of the group, in group-rank order."""

    def __init__(self, transport, ctx, members):
        self._t = transport
        self._ctx = ctx
        self._members = list(members)
        self._rank = self._members.index(transport.rank)
        self._tag = itertools.count()      # one tag per collective, in posting order
        self._children = itertools.count()
        self._queue = None
        self._freed = False
        self._current = None               # the request its thread is running

    def Get_rank(self):
        return self._rank

    def Get_size(self):
        return len(self._members)

    def Free(self):
        if self._queue is not None and not self._freed:
            self._queue.put(None)
        self._freed = True

    def Dup(self):
        return Comm(self._t, f"{self._ctx}.d{next(self._children)}", self._members)

    def Split(self, color=0, key=0):
        """Collective: the communicator of the ranks that passed the same ``color``
        (ordered by ``key``, then rank); COMM_NULL for ``MPI.UNDEFINED``."""
        child = next(self._children)
        mine = np.array([color, key], dtype=np.int64)
        every = np.empty(2 * self.Get_size(), dtype=np.int64)
        req = self.Iallgather(mine, every)
        if not req._event.wait(self._t.timeout_s):
            raise DistBackendError(f"Split timed out after {self._t.timeout_s:g} s on rank "
                                   f"{self._t.rank}")
        req.Test()
        if color == MPI.UNDEFINED:
            return MPI.COMM_NULL
        pairs = every.reshape(-1, 2).tolist()
        group = sorted((k, r) for r, (c, k) in enumerate(pairs) if c == color)
        return Comm(self._t, f"{self._ctx}.s{child}c{color}",
                    [self._members[r] for _, r in group])

    # ----------------------------------------------------------------- the machinery
    def _post(self, fn):
        """Run ``fn(tag)`` on this communicator's thread, after the operations posted
        before it; a request completed when it returned."""
        if self._freed:
            raise DistBackendError("the communicator has been freed")
        if self._queue is None:
            self._queue = queue.SimpleQueue()
            threading.Thread(target=self._worker, args=(self._queue,), daemon=True,
                             name=f"ptcore-gloo-{self._ctx}").start()
        req = Request()
        self._queue.put((fn, next(self._tag), req))
        return req

    def _worker(self, q):
        while True:
            item = q.get()
            if item is None:
                return
            fn, tag, req = item
            self._current = req
            try:
                fn(tag)
            except BaseException as e:          # the error surfaces in Test()/wait()
                req._complete(e)
            else:
                req._complete()
            self._current = None

    def _send(self, to, tag, arr, kind=_COLL):
        self._t.send(self._members[to], self._ctx, kind, tag, _bytes(arr))

    def _recv(self, frm, tag, into=None, what="collective"):
        """The message of group rank ``frm`` as bytes, or copied into array ``into``
        (whose size it must have)."""
        req = self._current
        if req is not None:
            req._waiting = self._members[frm]
        payload = self._t.wait(self._t.post(self._ctx, self._members[frm], _COLL, tag))
        if req is not None:
            req._waiting = None
        if into is None:
            return payload
        if len(payload) != into.nbytes:
            raise SocketError(f"{what}: rank {self._members[frm]} sent {len(payload)} bytes, "
                              f"rank {self._t.rank} expected {into.nbytes}: the ranks passed "
                              "buffers of different sizes")
        into[...] = np.frombuffer(payload, dtype=into.dtype)
        return payload

    def _others(self):
        me = self._rank
        return [r for r in range(self.Get_size()) if r != me]

    def _reduce_into(self, out, mine, tag, op, what):
        """``out`` = the reduction of every rank's ``mine``, combined in rank order."""
        parts = []
        for r in range(self.Get_size()):
            if r == self._rank:
                parts.append(mine)
            else:
                parts.append(np.frombuffer(self._recv(r, tag), dtype=mine.dtype))
                if parts[-1].size != mine.size:
                    raise SocketError(f"{what}: rank {self._members[r]} sent {parts[-1].size} "
                                      f"elements, rank {self._t.rank} expected {mine.size}")
        acc = parts[0].copy()
        for p in parts[1:]:
            op.fn(acc, p, out=acc)
        out[...] = acc

    # ------------------------------------------------------------------- collectives
    def Ibarrier(self):
        def run(tag):
            empty = np.empty(0, np.uint8)
            for r in self._others():
                self._send(r, tag, empty)
            for r in self._others():
                self._recv(r, tag)
        return self._post(run)

    def Iallreduce(self, sendbuf, recvbuf, op):
        out = _np(recvbuf)
        src = out if sendbuf is MPI.IN_PLACE else _np(sendbuf)

        def run(tag):
            mine = src.copy()
            for r in self._others():
                self._send(r, tag, mine)
            self._reduce_into(out, mine, tag, op, "all_reduce")
        return self._post(run)

    def Ireduce(self, sendbuf, recvbuf, op, root=0):
        out = _np(recvbuf)
        src = out if sendbuf is MPI.IN_PLACE else _np(sendbuf)

        def run(tag):
            if self._rank != root:
                self._send(root, tag, src)
            else:
                self._reduce_into(out, src.copy(), tag, op, "reduce")
        return self._post(run)

    def Ibcast(self, buf, root=0):
        arr = _np(buf)

        def run(tag):
            if self._rank == root:
                for r in self._others():
                    self._send(r, tag, arr)
            else:
                self._recv(root, tag, arr, "broadcast")
        return self._post(run)

    def _gatherv(self, src, out, counts, displs, root, tag, what):
        if root is not None and self._rank != root:
            self._send(root, tag, src)
            return
        if root is None:
            for r in self._others():
                self._send(r, tag, src)
        for r in range(self.Get_size()):
            part = out[displs[r]:displs[r] + counts[r]]
            if r == self._rank:
                if src.size != part.size:
                    raise SocketError(f"{what}: rank {self._t.rank} contributes {src.size} "
                                      f"elements, its slot holds {part.size}")
                part[...] = src
            else:
                self._recv(r, tag, part, what)

    def _even(self, out, n):
        c = out.size // n
        return [c] * n, [i * c for i in range(n)]

    def Iallgather(self, sendbuf, recvbuf):
        src, out = _np(sendbuf), _np(recvbuf)
        counts, displs = self._even(out, self.Get_size())
        return self._post(lambda tag: self._gatherv(src, out, counts, displs, None, tag,
                                                    "all_gather"))

    def Iallgatherv(self, sendbuf, recvspec):
        src = _np(sendbuf)
        out, counts, displs = _spec(recvspec)
        return self._post(lambda tag: self._gatherv(src, out, counts, displs, None, tag,
                                                    "all_gather"))

    def Igather(self, sendbuf, recvbuf, root=0):
        src, out = _np(sendbuf), _np(recvbuf)
        counts, displs = self._even(out, self.Get_size()) if out is not None else (None, None)
        return self._post(lambda tag: self._gatherv(src, out, counts, displs, root, tag,
                                                    "gather"))

    def Igatherv(self, sendbuf, recvspec, root=0):
        src = _np(sendbuf)
        out, counts, displs = _spec(recvspec) if recvspec is not None else (None, None, None)
        return self._post(lambda tag: self._gatherv(src, out, counts, displs, root, tag,
                                                    "gather"))

    def Iscatter(self, sendbuf, recvbuf, root=0):
        src, out = _np(sendbuf), _np(recvbuf)

        def run(tag):
            if self._rank == root:
                c = out.size
                if src.size != c * self.Get_size():
                    raise SocketError(f"scatter: the source holds {src.size} elements, not "
                                      f"{self.Get_size()} x {c}")
                for r in self._others():
                    self._send(r, tag, src[r * c:(r + 1) * c])
                out[...] = src[root * c:(root + 1) * c]
            else:
                self._recv(root, tag, out, "scatter")
        return self._post(run)

    def Ireduce_scatter_block(self, sendbuf, recvbuf, op):
        out = _np(recvbuf)
        src = _np(sendbuf)

        def run(tag):
            c = out.size
            for r in self._others():
                self._send(r, tag, src[r * c:(r + 1) * c])
            me = self._rank
            self._reduce_into(out, src[me * c:(me + 1) * c].copy(), tag, op, "reduce_scatter")
        return self._post(run)

    def _alltoallv(self, src, sc, sd, out, rc, rd, tag):
        for r in self._others():
            self._send(r, tag, src[sd[r]:sd[r] + sc[r]])
        for r in range(self.Get_size()):
            part = out[rd[r]:rd[r] + rc[r]]
            if r == self._rank:
                if sc[r] != rc[r]:
                    raise SocketError(f"all_to_all: rank {self._t.rank} sends itself "
                                      f"{sc[r]} elements but expects {rc[r]}")
                part[...] = src[sd[r]:sd[r] + sc[r]]
            else:
                self._recv(r, tag, part, "all_to_all")

    def Ialltoall(self, sendbuf, recvbuf):
        src, out = _np(sendbuf), _np(recvbuf)
        n = self.Get_size()
        sc, sd = self._even(src, n)
        rc, rd = self._even(out, n)
        return self._post(lambda tag: self._alltoallv(src, sc, sd, out, rc, rd, tag))

    def Ialltoallv(self, sendspec, recvspec):
        src, sc, sd = _spec(sendspec)
        out, rc, rd = _spec(recvspec)
        return self._post(lambda tag: self._alltoallv(src, sc, sd, out, rc, rd, tag))

    # ---------------------------------------------------------------- point to point
    def Isend(self, buf, dest, tag=0):
        self._t.send(self._members[dest], self._ctx, _P2P, int(tag), _bytes(_np(buf)))
        return _done_request()

    def Irecv(self, buf, source=MPI.ANY_SOURCE, tag=0):
        arr = _np(buf)
        src = source if source == MPI.ANY_SOURCE else self._members[source]
        slot = self._t.post(self._ctx, src, _P2P, int(tag))
        req = Request(slot.event)
        req._waiting = None if src == MPI.ANY_SOURCE else src

        def finish():
            if slot.error is not None:
                raise slot.error
            payload = slot.payload
            if len(payload) > arr.nbytes:
                raise SocketError(f"recv: the message of rank {slot.source} holds "
                                  f"{len(payload)} bytes, more than the receive buffer's "
                                  f"{arr.nbytes} (message truncated)")
            raw = arr.view(np.uint8)
            raw[:len(payload)] = np.frombuffer(payload, dtype=np.uint8)
            req._status = (self._members.index(slot.source), len(payload))
        req._finish = finish
        return req


# ---------------------------------------------------------------------------- rendezvous
def _token(store, prefix, rank, seconds):
    key = prefix + "token"
    if rank == 0:
        store.set(key, os.urandom(16))
    store.wait([key], seconds)
    return store.get(key)


def _advertised_host(store):
    """The address the ranks on other machines connect to: the one this process reaches
    the TCPStore from, else the host's name (ranks on this machine use 127.0.0.1)."""
    while getattr(store, "_sock", None) is None and hasattr(store, "underlying_store"):
        store = store.underlying_store
    sock = getattr(store, "_sock", None)
    if sock is not None:
        return sock.getsockname()[0]
    return getattr(store, "host", None) or socket.gethostname()


def connect_world(store, rank, size, timeout_s, prefix):
    """Rendezvous through ``store``: connect every pair of the ``size`` ranks; the
    :class:`Transport` of this rank."""
    deadline = time.monotonic() + timeout_s
    listener = socket.create_server(("", 0), backlog=max(size, 16))
    try:
        node = node_id()
        token = _token(store, prefix, rank, timeout_s)
        if len(token) != 16:
            raise DistBackendError("init_process_group: the store holds a malformed token")
        store.set(f"{prefix}addr/{rank}",
                  f"{node}\n{_advertised_host(store)}\n{listener.getsockname()[1]}")
        socks = {}
        for peer in range(rank):                 # connect to the lower ranks
            left = max(deadline - time.monotonic(), 0.001)
            store.wait([f"{prefix}addr/{peer}"], left)
            pnode, host, port = store.get(f"{prefix}addr/{peer}").decode().split("\n")
            if pnode == node:
                host = "127.0.0.1"
            s = connect(host, int(port), max(deadline - time.monotonic(), 0.001),
                        f"rank {peer}")
            s.sendall(_HELLO.pack(_MAGIC, token, rank))
            socks[peer] = s
        while len(socks) < size - 1:            # accept the higher ranks
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(range(rank + 1, size)) - set(socks))
                raise DistBackendError(f"init_process_group: rank {rank} timed out after "
                                       f"{timeout_s:g} s waiting for rank(s) {missing} to "
                                       "connect")
            listener.settimeout(left)
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            try:
                conn.settimeout(max(min(left, 10.0), 0.5))
                magic, tok, peer = _HELLO.unpack(recv_exact(conn, _HELLO.size))
                conn.settimeout(None)
            except (OSError, ConnectionError, struct.error):
                conn.close()
                continue
            if magic != _MAGIC or tok != token or not rank < peer < size or peer in socks:
                conn.close()                       # not one of ours
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks[peer] = conn
    finally:
        listener.close()
    return Transport(rank, size, socks, timeout_s)
