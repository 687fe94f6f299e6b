"""Key-value stores for the rendezvous of a process group (``torch.distributed``'s
``Store``, ``TCPStore``, ``FileStore``, ``HashStore`` and ``PrefixStore``).

Keys are strings, values bytes (a ``str`` value is stored UTF-8 encoded).  ``get`` and
``wait`` block until the keys exist or the store's timeout passes, then raise
``DistStoreError``.

``TCPStore``'s master runs the server in a thread of its own process; the other processes
connect to it.  Its wire format is length-prefixed byte fields (no pickles), so a process that
connects to the port can read and write keys but cannot run code in the server.
"""
import datetime
import os
import socket
import struct
import threading
import time

__all__ = ["DistError", "DistStoreError", "DistNetworkError", "QueueEmptyError", "Store",
           "HashStore", "FileStore", "TCPStore", "PrefixStore"]


class DistError(RuntimeError):
    """Base of the errors of ``ptcore.distributed`` (``torch.distributed.DistError``)."""


class DistStoreError(DistError):
    """A store operation failed or timed out (``torch.distributed.DistStoreError``)."""


class DistNetworkError(DistError):
    """A network failure, e.g. a store that cannot be reached
    (``torch.distributed.DistNetworkError``)."""


class QueueEmptyError(DistStoreError):
    """A non-blocking ``queue_pop`` found the queue empty (``torch.distributed.QueueEmptyError``)."""


_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _key(key):
    if not isinstance(key, str):
        raise TypeError(f"store keys must be str, got {type(key).__name__}")
    return key


def _value(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(value)
    raise TypeError(f"store values must be str or bytes, got {type(value).__name__}")


def _seconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _timeout_error(keys, seconds):
    return DistStoreError(f"wait timeout after {int(seconds * 1000)}ms, keys: "
                          f"{', '.join('/' + k for k in keys)}")


class _KV:
    """The key-value table of a ``HashStore`` and of a ``TCPStore`` server: thread-safe,
    with blocking reads."""

    def __init__(self):
        self.data = {}
        self.queues = {}                   # queue_push/queue_pop: a namespace of their own
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def wait(self, keys, seconds):
        deadline = time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timeout_error([k for k in keys if k not in self.data], seconds)
                self.cond.wait(min(left, 1.0))

    def get(self, keys, seconds):
        self.wait(keys, seconds)
        with self.cond:
            return [self.data[k] for k in keys]

    def add(self, key, amount):
        with self.cond:
            old = self.data.get(key, b"0")
            try:
                new = int(old) + int(amount)
            except ValueError:
                raise ValueError(f"add: the value of key {key!r} is not an integer: "
                                 f"{old!r}") from None
            self.data[key] = str(new).encode()
            self.cond.notify_all()
            return new

    def compare_set(self, key, expected, desired):
        with self.cond:
            cur = self.data.get(key)
            if cur is None:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if cur == expected:
                self.data[key] = desired
                self.cond.notify_all()
                return desired
            return cur

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self.cond.notify_all()

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)

    def multi_set(self, keys, values):
        with self.cond:
            self.data.update(zip(keys, values))
            self.cond.notify_all()

    def list_keys(self):
        with self.cond:
            return list(self.data)

    def queue_push(self, key, value):
        with self.cond:
            self.queues.setdefault(key, []).append(value)
            self.cond.notify_all()

    def queue_pop(self, key, block, seconds):
        deadline = time.monotonic() + seconds
        with self.cond:
            while not self.queues.get(key):
                left = deadline - time.monotonic()
                if not block:
                    raise QueueEmptyError("queue is empty")
                if left <= 0:
                    raise _timeout_error([key], seconds)
                self.cond.wait(min(left, 1.0))
            q = self.queues[key]
            value = q.pop(0)
            if not q:
                del self.queues[key]
            return value

    def queue_len(self, key):
        with self.cond:
            return len(self.queues.get(key, ()))


class Store:
    """Base class of the stores (``torch.distributed.Store``)."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    # the operations each store implements on raw keys and byte values
    def _op(self, name, *args):
        raise NotImplementedError(f"{type(self).__name__} does not implement {name}")

    @property
    def timeout(self):
        """How long ``get``/``wait`` block before raising ``DistStoreError``."""
        return self._timeout

    def set_timeout(self, timeout):
        if not isinstance(timeout, datetime.timedelta):
            raise TypeError(f"set_timeout: expected a datetime.timedelta, got "
                            f"{type(timeout).__name__}")
        self._timeout = timeout

    def set(self, key, value):
        self._op("set", _key(key), _value(value))

    def get(self, key):
        """The value of ``key`` (bytes), waiting for it up to the store's timeout."""
        return self._op("get", [_key(key)], _seconds(self.timeout))[0]

    def multi_get(self, keys):
        return self._op("get", [_key(k) for k in keys], _seconds(self.timeout))

    def multi_set(self, keys, values):
        keys, values = [_key(k) for k in keys], [_value(v) for v in values]
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        self._op("multi_set", keys, values)

    def add(self, key, amount):
        """Add ``amount`` to the integer value of ``key`` (0 when missing); the new value."""
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TypeError(f"add: amount must be an int, got {type(amount).__name__}")
        return self._op("add", _key(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        """Set ``key`` to ``desired_value`` if its value is ``expected_value`` (or it is
        missing and ``expected_value`` is empty); the value it has afterwards."""
        return self._op("compare_set", _key(key), _value(expected_value), _value(desired_value))

    def append(self, key, value):
        self._op("append", _key(key), _value(value))

    def wait(self, keys, timeout=None):
        """Block until every key of ``keys`` exists (``DistStoreError`` after ``timeout``,
        default the store's)."""
        self._op("wait", [_key(k) for k in keys],
                 _seconds(self.timeout if timeout is None else timeout))

    def check(self, keys):
        """True when every key of ``keys`` exists (does not wait)."""
        return self._op("check", [_key(k) for k in keys])

    def delete_key(self, key):
        """Remove ``key``; True when it existed."""
        return self._op("delete", _key(key))

    def num_keys(self):
        return self._op("num_keys")

    def list_keys(self):
        """The keys the store holds (the queues of ``queue_push`` are not keys)."""
        return self._op("list_keys")

    def queue_push(self, key, value):
        """Append ``value`` to the queue ``key`` (queues are apart from the keys of
        ``set``/``get``)."""
        self._op("queue_push", _key(key), _value(value))

    def queue_pop(self, key, block=True):
        """Remove and return the first value of the queue ``key``; with ``block`` wait for one
        up to the store's timeout (then ``DistStoreError``), else raise ``QueueEmptyError``
        when the queue is empty."""
        return self._op("queue_pop", _key(key), bool(block), _seconds(self.timeout))

    def queue_len(self, key):
        """The number of values in the queue ``key`` (0 when there is none)."""
        return self._op("queue_len", _key(key))

    def barrier(self, key, world_size, timeout=None):
        """Block until ``world_size`` callers have entered the barrier named ``key``
        (``DistStoreError`` after ``timeout``, default the store's)."""
        world_size = int(world_size)
        if self.add(f"{key}/num_members", 1) == world_size:
            self.set(f"{key}/last_member", "1")
        self.wait([f"{key}/last_member"], timeout)

    def clone(self):
        """Another handle on the same store (for use from another thread)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement clone")

    def has_extended_api(self):
        return True

    def _close(self):
        """Release what the store holds (sockets, server); used by destroy_process_group."""


class HashStore(Store):
    """A store in this process's memory (for threads of one process)."""

    def __init__(self):
        super().__init__()
        self._kv = _KV()

    def _op(self, name, *args):
        return getattr(self._kv, name)(*args)

    def clone(self):
        c = HashStore()
        c._kv = self._kv
        c._timeout = self._timeout
        return c


class PrefixStore(Store):
    """``store`` with every key prefixed by ``prefix + "/"``."""

    def __init__(self, prefix, store):
        super().__init__()
        if not isinstance(store, Store):
            raise TypeError(f"PrefixStore: store must be a Store, got {type(store).__name__}")
        self._prefix = str(prefix)
        self._store = store

    @property
    def underlying_store(self):
        return self._store

    @property
    def timeout(self):
        return self._store.timeout

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)

    def clone(self):
        return PrefixStore(self._prefix, self._store.clone())

    def _op(self, name, *args):
        p = self._prefix + "/"
        if name == "num_keys":
            return self._store._op(name)
        if name == "list_keys":
            return [k[len(p):] for k in self._store._op(name) if k.startswith(p)]
        if args and isinstance(args[0], list):
            args = ([p + k for k in args[0]],) + args[1:]
        elif args:
            args = (p + args[0],) + args[1:]
        return self._store._op(name, *args)

    def _close(self):
        self._store._close()


# ----------------------------------------------------------------------------- FileStore
def _encode_table(data):
    out = [struct.pack("!Q", len(data))]
    for k, v in data.items():
        kb = k.encode()
        out += [struct.pack("!QQ", len(kb), len(v)), kb, v]
    return b"".join(out)


def _decode_table(raw):
    data = {}
    if not raw:
        return data
    (n,), off = struct.unpack_from("!Q", raw), 8
    for _ in range(n):
        kl, vl = struct.unpack_from("!QQ", raw, off)
        off += 16
        data[raw[off:off + kl].decode()] = bytes(raw[off + kl:off + kl + vl])
        off += kl + vl
    return data


class FileStore(Store):
    """A store in a file that every process can open (a local or shared file system).

    ``world_size`` processes share it; when the last of them closes it (at
    ``destroy_process_group``) the file is removed."""

    _REFS = "__ptcore_filestore_refs__"

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        import fcntl                       # POSIX only, as torch's
        self._fcntl = fcntl
        self.path = str(file_name)
        self._world_size = int(world_size)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        self._closed = False
        self._op("add", self._REFS, 1)

    def _locked(self, fn):
        fcntl = self._fcntl
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            os.lseek(self._fd, 0, os.SEEK_SET)
            chunks = []
            while True:
                b = os.read(self._fd, 1 << 20)
                if not b:
                    break
                chunks.append(b)
            data = _decode_table(b"".join(chunks))
            result, changed = fn(data)
            if changed:
                raw = _encode_table(data)
                os.lseek(self._fd, 0, os.SEEK_SET)
                os.ftruncate(self._fd, 0)
                view = memoryview(raw)
                while view:
                    view = view[os.write(self._fd, view):]
            return result
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def clone(self):
        c = FileStore(self.path, self._world_size)
        c._timeout = self._timeout
        return c

    def _op(self, name, *args):
        if self._closed:
            raise DistStoreError(f"FileStore {self.path} is closed")
        if name.startswith("queue_"):
            raise NotImplementedError("queue support is not implemented.")   # as torch's
        if name == "list_keys":
            return [k for k in self._locked(lambda d: (list(d), False)) if k != self._REFS]
        if name in ("get", "wait"):
            keys, seconds = args
            deadline = time.monotonic() + seconds
            pause = 0.001
            while True:
                got = self._locked(lambda d: ([d.get(k) for k in keys], False))
                if all(v is not None for v in got):
                    return got if name == "get" else None
                if time.monotonic() > deadline:
                    raise _timeout_error([k for k, v in zip(keys, got) if v is None], seconds)
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        kv = _KV()

        def apply(d):
            kv.data = d
            if name == "delete":
                had = kv.delete(*args)
                return had, had
            if name in ("check", "num_keys"):
                return getattr(kv, name)(*args), False
            before = dict(d) if name == "compare_set" else None
            r = getattr(kv, name)(*args)
            return r, before is None or before != d
        return self._locked(apply)

    def _close(self):
        if self._closed:
            return
        try:
            left = self._op("add", self._REFS, -1)
            if self._world_size > 0 and left <= 0:
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
        finally:
            self._closed = True
            os.close(self._fd)


# ------------------------------------------------------------------------------ TCPStore
def send_fields(sock, fields):
    """Send a message of byte fields: count, then each field length-prefixed."""
    parts = [struct.pack("!I", len(fields))]
    for f in fields:
        parts += [struct.pack("!Q", len(f)), f]
    sock.sendall(b"".join(parts))


def recv_into_exact(sock, buf):
    """Fill the writable buffer ``buf`` from ``sock`` (ConnectionError when the peer closes first)."""
    view = memoryview(buf)
    while view:
        got = sock.recv_into(view)
        if not got:
            raise ConnectionError("connection closed by the peer")
        view = view[got:]
    return buf


def recv_exact(sock, n):
    return bytes(recv_into_exact(sock, bytearray(n)))


def recv_fields(sock, max_fields=1 << 20):
    (count,) = struct.unpack("!I", recv_exact(sock, 4))
    if count > max_fields:
        raise ConnectionError("malformed message")
    out = []
    for _ in range(count):
        (n,) = struct.unpack("!Q", recv_exact(sock, 8))
        out.append(recv_exact(sock, n))
    return out


def _ints(fields):
    return [int(f) for f in fields]


class _Server:
    """The TCPStore server: a listening socket and a thread per client."""

    def __init__(self, listener):
        self.kv = _KV()
        self.listener = listener
        self.port = listener.getsockname()[1]
        self.clients = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="ptcore-tcpstore").start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.clients.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="ptcore-tcpstore-client").start()

    def _serve(self, conn):
        try:
            while True:
                fields = recv_fields(conn)
                if not fields:
                    return
                try:
                    reply = [b"ok"] + self.handle(fields[0].decode(), fields[1:])
                except QueueEmptyError as e:
                    reply = [b"error", str(e).encode(), b"queue_empty"]
                except DistStoreError as e:
                    reply = [b"error", str(e).encode()]
                except (UnicodeDecodeError, IndexError) as e:
                    reply = [b"error", f"malformed store request: {e}".encode()]
                except ValueError as e:
                    reply = [b"error", str(e).encode(), b"value"]
                send_fields(conn, reply)
        except (OSError, ConnectionError, struct.error):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def handle(self, cmd, f):
        kv = self.kv
        if cmd == "set":
            kv.set(f[0].decode(), f[1])
            return []
        if cmd in ("get", "wait"):
            seconds = float(f[0])
            keys = [k.decode() for k in f[1:]]
            got = kv.get(keys, seconds)
            return got if cmd == "get" else []
        if cmd == "add":
            return [str(kv.add(f[0].decode(), int(f[1]))).encode()]
        if cmd == "compare_set":
            return [kv.compare_set(f[0].decode(), f[1], f[2])]
        if cmd == "append":
            kv.append(f[0].decode(), f[1])
            return []
        if cmd == "check":
            return [b"1" if kv.check([k.decode() for k in f]) else b"0"]
        if cmd == "delete":
            return [b"1" if kv.delete(f[0].decode()) else b"0"]
        if cmd == "num_keys":
            return [str(kv.num_keys()).encode()]
        if cmd == "multi_set":
            half = len(f) // 2
            kv.multi_set([k.decode() for k in f[:half]], f[half:])
            return []
        if cmd == "list_keys":
            return [k.encode() for k in kv.list_keys() if k != TCPStore._INIT_KEY]
        if cmd == "queue_push":
            kv.queue_push(f[0].decode(), f[1])
            return []
        if cmd == "queue_pop":
            return [kv.queue_pop(f[0].decode(), f[1] == b"1", float(f[2]))]
        if cmd == "queue_len":
            return [str(kv.queue_len(f[0].decode())).encode()]
        raise ValueError(f"unknown command {cmd!r}")

    def close(self):
        self.closed = True
        close_sockets([self.listener] + self.clients)


def close_sockets(socks):
    """Shut down and close ``socks``, ignoring the ones already closed."""
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


def connect(host, port, seconds, what):
    """A TCP connection to ``host:port``, retried until ``seconds`` pass (the server may
    not be listening yet)."""
    deadline = time.monotonic() + seconds
    pause = 0.01
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=max(1.0, min(seconds, 30.0)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(None)
            return sock
        except socket.gaierror as e:
            raise DistNetworkError(f"cannot resolve the host {host!r} of {what}: {e}") from None
        except OSError as e:
            if time.monotonic() + pause > deadline:
                raise DistNetworkError(f"timed out after {seconds:g} s trying to connect to "
                                       f"{what} at {host}:{port} ({e})") from None
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


class TCPStore(Store):
    """A store served over TCP by the master process (``is_master=True``), which listens on
    ``port`` (0: a free port, see ``.port``); the other processes connect to
    ``host_name:port``.  With ``world_size`` given and ``wait_for_workers``, the master's
    constructor waits until ``world_size`` stores (its own included) have connected."""

    _INIT_KEY = "init/"

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__()
        if not isinstance(timeout, datetime.timedelta):
            raise TypeError("TCPStore: timeout must be a datetime.timedelta")
        self._timeout = timeout
        self._host = str(host_name)
        self._server = None
        self._sock = None
        self._lock = threading.Lock()
        self._use_libuv = bool(use_libuv)
        seconds = _seconds(timeout)
        port = int(port)
        if is_master:
            if master_listen_fd is not None:
                listener = socket.socket(fileno=int(master_listen_fd))
            else:
                try:
                    listener = socket.create_server(("", port), backlog=128)
                except OSError as e:
                    raise DistNetworkError(
                        f"TCPStore: the server socket cannot listen on port {port}: "
                        f"{e.strerror or e}") from None
            self._server = _Server(listener)
            port = self._server.port
        self._port = port
        if self._server is None:
            self._sock = connect(self._host, port, seconds, "the TCPStore")
        if world_size is not None and world_size > 0:
            self.add(self._INIT_KEY, 1)
            if is_master and wait_for_workers:
                deadline = time.monotonic() + seconds
                while int(self._op("get", [self._INIT_KEY], seconds)[0]) < world_size:
                    if time.monotonic() > deadline:
                        raise DistStoreError(
                            f"TCPStore: timed out after {seconds:g} s waiting for "
                            f"{world_size} workers to connect")
                    time.sleep(0.005)

    @property
    def host(self):
        return self._host

    @property
    def libuvBackend(self):
        """Whether ``use_libuv`` was asked for (torch's server flavour; ptcore's server is a
        thread per client either way)."""
        return self._use_libuv

    @property
    def port(self):
        return self._port

    def clone(self):
        """A new client connection to the same server (``torch.distributed.TCPStore.clone``)."""
        return TCPStore(self._host, self._port, None, False, self._timeout)

    def _op(self, name, *args):
        if self._server is not None:
            if self._server.closed:
                raise DistStoreError("TCPStore: the store has been closed")
            if name == "list_keys":
                return [k for k in self._server.kv.list_keys() if k != self._INIT_KEY]
            return getattr(self._server.kv, name)(*args)
        if self._sock is None:
            raise DistStoreError("TCPStore: the store has been closed")
        if name in ("get", "wait"):
            keys, seconds = args
            fields = [str(seconds).encode()] + [k.encode() for k in keys]
        elif name == "set" or name == "append":
            fields = [args[0].encode(), args[1]]
        elif name == "add":
            fields = [args[0].encode(), str(args[1]).encode()]
        elif name == "compare_set":
            fields = [args[0].encode(), args[1], args[2]]
        elif name == "check":
            fields = [k.encode() for k in args[0]]
        elif name == "delete":
            fields = [args[0].encode()]
        elif name in ("num_keys", "list_keys"):
            fields = []
        elif name == "queue_push":
            fields = [args[0].encode(), args[1]]
        elif name == "queue_pop":
            fields = [args[0].encode(), b"1" if args[1] else b"0", str(args[2]).encode()]
        elif name == "queue_len":
            fields = [args[0].encode()]
        elif name == "multi_set":
            fields = [k.encode() for k in args[0]] + list(args[1])
        else:
            raise NotImplementedError(name)
        with self._lock:
            try:
                send_fields(self._sock, [name.encode()] + fields)
                reply = recv_fields(self._sock)
            except (OSError, ConnectionError, struct.error) as e:
                raise DistStoreError(f"TCPStore: lost the connection to the server at "
                                     f"{self._host}:{self._port}: {e}") from None
        if reply[0] == b"error":
            kind = reply[2] if len(reply) > 2 else b""
            cls = {b"queue_empty": QueueEmptyError, b"value": ValueError}.get(kind, DistStoreError)
            raise cls(reply[1].decode())
        out = reply[1:]
        if name in ("add", "queue_len"):
            return int(out[0])
        if name == "list_keys":
            return [k.decode() for k in out]
        if name == "queue_pop":
            return out[0]
        if name == "compare_set":
            return out[0]
        if name in ("check", "delete"):
            return out[0] == b"1"
        if name == "num_keys":
            return int(out[0])
        if name == "get":
            return out
        return None

    def _close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None
        if self._server is not None:
            self._server.close()

    def __repr__(self):
        role = "server" if self._server is not None else "client"
        return f"TCPStore({role}, {self._host}:{self._port})"
