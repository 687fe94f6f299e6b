"""Process groups: ``init_process_group``, ``new_group`` and the queries.

Two backends serve them.  Under ``mpirun``/``mpiexec``/``srun`` (and
``ptcore.distributed.run``, which starts the processes through ``mpiexec``) the ranks and the
world size come from MPI's ``COMM_WORLD``; the ``env://`` variables that torchrun sets are
honoured: ``WORLD_SIZE`` must equal the MPI world's size, and ``RANK`` (when it differs from
the MPI rank) renumbers the ranks by splitting the world communicator with ``RANK`` as key.

Processes that no MPI launcher started (``torch.multiprocessing.spawn``, torchrun-style
``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``, ``tcp://``/``file://`` init methods,
an explicit ``store``) meet through a store and talk over TCP sockets
(:mod:`ptcore.distributed._sockets`, reported as the ``"gloo"`` backend).
"""
import atexit
import collections
import datetime
import enum
import os
import sys
import warnings

from ptcore import _config, cuda
from ptcore._tensor import device as _device
from ptcore.distributed import _agreement, _mpi, _p2p, _sockets
from ptcore.distributed._liveness import alive, identity
from ptcore.distributed.reduce_op import ReduceOp, _TorchEnum
from ptcore.distributed.store import FileStore, PrefixStore, Store, TCPStore
from ptcore.distributed.work import Work, _seconds

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """Backend names (``torch.distributed.Backend``): ptcore runs ``mpi`` and, over sockets,
    ``gloo``; ``nccl`` is accepted and served by whichever of them the processes use.

    As torch's, ``Backend(name)`` returns the lower-case name as a plain ``str``."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    XCCL = "xccl"
    UCC = "ucc"
    MPI = "mpi"
    FAKE = "fake"

    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}
    backend_capability = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], XCCL: ["xpu"],
                          UCC: ["cpu", "cuda"], MPI: ["cpu", "cuda"],
                          FAKE: ["cpu", "cuda", "hpu", "xpu"]}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED or not isinstance(value, str):
            value = name.lower()
        return value

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        """Record a third-party backend's name (``Backend.NAME``, ``backend_list``,
        ``backend_capability``) as torch does.  ptcore's process groups run on its own
        transports only: ``init_process_group`` refuses a registered backend's name with
        ``NotImplementedError``."""
        if hasattr(Backend, name.upper()):
            raise ValueError(f"{name.upper()} c10d backend already exist")
        if name.upper() in Backend._plugins:
            raise ValueError(f"{name.upper()} c10d backend creator function already exist")
        setattr(Backend, name.upper(), name.lower())
        Backend.backend_list.append(name.lower())
        if devices is not None:
            for device in ([devices] if isinstance(devices, str) else devices):
                if device not in ("cpu", "cuda"):
                    Backend.default_device_backend_map[device] = name.lower()
            Backend.backend_capability[name.lower()] = (
                [devices] if isinstance(devices, str) else list(devices))
        else:
            Backend.backend_capability[name.lower()] = ["cpu", "cuda"]
        Backend._plugins[name.upper()] = (func, extended_api)


Backend._plugins = {}


class DebugLevel(_TorchEnum, enum.IntEnum):
    """``torch.distributed.DebugLevel``: how much ``TORCH_DISTRIBUTED_DEBUG`` asks the
    package to check and log (ptcore records the level; its checks do not depend on it)."""
    OFF = 0
    INFO = 1
    DETAIL = 2


_debug = {"level": None}           # read from TORCH_DISTRIBUTED_DEBUG on first use


def get_debug_level():
    if _debug["level"] is None:
        set_debug_level_from_env()
    return _debug["level"]


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError(f"set_debug_level: expected a DebugLevel, got {type(level).__name__}")
    _debug["level"] = level


def set_debug_level_from_env():
    """Set the debug level from ``TORCH_DISTRIBUTED_DEBUG`` (``OFF``, ``INFO`` or ``DETAIL``;
    unset is ``OFF``)."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug["level"] = DebugLevel[value]


class ProcessGroup:
    """A set of ranks sharing two MPI communicators: one for the data, one for the
    shape/dtype agreement checks (so that a check never matches a data message)."""

    def __init__(self, comm, ranks, timeout_s, global_rank, node_peers=None, mpi_module=None):
        self._MPI = mpi_module if mpi_module is not None else _mpi.mpi()   # or the sockets'
        self._comm = comm                  # None on ranks outside the group
        self._backend_name = None          # the name it was created with (get_backend)
        self._backend_config = None        # get_backend_config
        self._group_name = ""              # torch's names: "0" for the default group, ...
        self._group_desc = "undefined"
        self._meta = comm.Dup() if comm is not None else None
        self._ranks = list(ranks)          # global ranks, in group-rank order
        self._timeout_s = timeout_s
        self._global_rank = global_rank
        self._broken = None
        self._unposted = collections.deque()   # Works waiting for their agreement check
        self._calls = {}                       # the agreement check's words, by call
        # global rank -> (pid, start time) of the other members running on this node
        members = set(self._ranks)
        self._node_peers = {r: v for r, v in (node_peers or {}).items()
                            if r in members and r != global_rank}

    def rank(self):
        return self._comm.Get_rank() if self._comm is not None else -1

    def size(self):
        return len(self._ranks)

    def name(self):
        return "mpi" if self._MPI is _mpi._MPI else "gloo"

    @property
    def group_name(self):
        """The group's name as torch numbers them: "0" for the default group, then "1",
        "2"... in the order ``new_group`` created them."""
        return self._group_name

    @property
    def group_desc(self):
        """``"default_pg"`` for the default group, else ``new_group``'s ``group_desc``."""
        return self._group_desc

    @property
    def bound_device_id(self):
        """``init_process_group``'s ``device_id`` (None: not bound to a device)."""
        return getattr(self, "_device_id", None)

    def _dead_peers(self, peer=None):
        """Global ranks of the members on this node whose process has ended (only ``peer``,
        a global rank, when given: a point-to-point operation depends on no one else)."""
        return [r for r, (pid, start) in self._node_peers.items()
                if (peer is None or r == peer) and not alive(pid, start)]

    def _mark_broken(self, why):
        if self._broken is None:
            self._broken = why
        _state["broken"] = True

    def _usable(self, opname):
        if self._broken is not None:
            raise RuntimeError(f"{opname}: the process group is unusable after an earlier "
                               f"failure: {self._broken}")

    def _free(self):
        for c in (self._comm, self._meta):
            if c is not None:
                try:
                    c.Free()
                except Exception:
                    pass
        self._comm = self._meta = None

    def __repr__(self):
        return f"<ptcore.distributed.ProcessGroup ranks={self._ranks}>"


_state = {"world": None, "groups": [], "broken": False, "atexit": False, "node_peers": {},
          "transport": None, "store": None, "generation": 0}


class _GroupNamespace:
    """``ptcore.distributed.group.WORLD`` as torch's ``group.WORLD``;
    ``NON_GROUP_MEMBER`` is torch's marker value (-100) for a rank outside a group."""

    NON_GROUP_MEMBER = -100

    @property
    def WORLD(self):
        return _state["world"]


group = _GroupNamespace()
GroupMember = group


def is_available():
    """True when mpi4py (and so an MPI library) can be imported.  (The socket backend
    needs nothing more, but tests/distributed/test_distributed.py still pins this.)"""
    return _mpi.available()


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    """True: the socket backend (reported as "gloo") needs nothing beyond the standard
    library."""
    return True


def is_nccl_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_initialized():
    """True once ``init_process_group`` has run (and ``destroy_process_group`` has not)."""
    return _state["world"] is not None


def is_torchelastic_launched():
    return "TORCHELASTIC_RUN_ID" in os.environ


def _env_int(name):
    v = os.environ.get(name)
    if v in (None, ""):
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {v!r}") from None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Create the default process group.

    Parameters
    ----------
    backend : str, optional
        ``"gloo"``, ``"nccl"``, ``"mpi"`` or a ``"cpu:gloo,cuda:nccl"`` list: the same
        transport serves them all (MPI when an MPI launcher started the processes, TCP
        sockets otherwise); ``get_backend()`` reports the name given.
    init_method : str, optional
        ``"env://"`` (default: ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``),
        ``"tcp://host:port"`` (rank 0 serves a ``TCPStore`` there) or ``"file:///path"``
        (a ``FileStore``).  Under an MPI launcher the ranks come from MPI and the
        rendezvous point is not needed.
    timeout : datetime.timedelta, optional
        How long a collective (and the rendezvous) may wait for its peers before raising
        ``DistBackendError`` (default 30 minutes, as torch's).  A peer whose process ended
        fails the wait at once, with an error naming its rank.
    world_size, rank : int, optional
        Default ``WORLD_SIZE``/``RANK``.  Under MPI they must agree with MPI's world (the
        ranks are renumbered so that this process is ``rank``).
    store : Store, optional
        A store shared by the processes for the rendezvous (with ``rank`` and
        ``world_size``), instead of ``init_method``.

    Raises
    ------
    ValueError
        When called twice, or when the rank, world size or rendezvous address is missing.
    RuntimeError
        Under an MPI launcher of several processes, when ``WORLD_SIZE`` disagrees with the
        number of MPI processes.
    """
    if _state["world"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        b = str(backend).lower()
        names = {part.split(":")[-1] for part in b.split(",")}
        plugins = names & {n.lower() for n in Backend._plugins}
        if plugins:
            raise NotImplementedError(f"init_process_group: {sorted(plugins)[0]!r} is a "
                                      "registered third-party backend; ptcore.distributed runs "
                                      "its own 'gloo' (sockets) and 'mpi' transports only")
        if not names <= {"mpi", "gloo", "nccl", "undefined"}:
            # (torch's type: its backend registry asserts)
            raise AssertionError(f"Unknown backend type {backend}: ptcore.distributed runs "
                                 "'gloo' and 'mpi' (and serves 'nccl' by them)")
    if init_method is not None and not (isinstance(init_method, str) and init_method.split(
            "://", 1)[0] in ("env", "tcp", "file") and "://" in init_method):
        raise ValueError(f"init_method {init_method!r} is not supported: use 'env://', "
                         "'tcp://host:port' or 'file:///path'")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    timeout_s = _seconds(default_pg_timeout if timeout is None else timeout)
    want_size = world_size if world_size not in (None, -1) else _env_int("WORLD_SIZE")
    want_rank = rank if rank not in (None, -1) else _env_int("RANK")
    if _use_mpi(init_method, store, want_size):
        world = _init_mpi(timeout_s, want_size, want_rank)
    else:
        world = _init_sockets(init_method, store, timeout_s, want_size, want_rank)
    # the name the script gave (served by MPI or the sockets whatever it is): scripts branch
    # on get_backend() == "nccl"/"gloo" as under torch
    world._backend_name = (Backend(str(backend)) if backend is not None else
                           Backend(world.name()))
    world._backend_config = _backend_config(backend, world.name())
    world._group_name, world._group_desc = "0", "default_pg"
    if device_id is not None:
        world._device_id = _device(device_id) if isinstance(device_id, str) else device_id
    _p2p.open_world(world)
    _state["world"] = world
    _state["groups"] = [world]
    _state["pg_count"] = 1
    _state["broken"] = False
    if not _state["atexit"]:
        atexit.register(_at_exit)
        _state["atexit"] = True


def _backend_config(backend, transport):
    """``get_backend_config``'s string, as torch builds it: ``"device:backend,..."``."""
    if backend is None:
        return f"cpu:{transport}" + (",cuda:nccl" if cuda.is_available() else "")
    b = str(backend).lower()
    if ":" in b:
        return ",".join(p.strip() for p in b.split(","))
    if b == Backend.UNDEFINED:
        return ",".join(f"{d}:{n}" for d, n in Backend.default_device_backend_map.items()
                        if d in ("cpu", "cuda"))
    return ",".join(f"{d}:{b}" for d in Backend.backend_capability.get(b, ["cpu", "cuda"]))


def _use_mpi(init_method, store, want_size):
    """MPI when an MPI launcher started several processes, or for a lone process without a
    rendezvous point; the sockets for the rest (``mp.spawn``, torchrun-style variables,
    ``store=``, ``tcp://``/``file://``)."""
    if store is not None or not _mpi.available():
        return False
    if _mpi.launcher_env(_mpi._RANK_VARS) is not None:
        launched = _mpi.launcher_env(_mpi._SIZE_VARS)
        if launched is None or launched > 1 or want_size in (None, 1):
            return True
    rendezvous = init_method is not None and not init_method.startswith("env://")
    return want_size in (None, 1) and not rendezvous


def _init_mpi(timeout_s, want_size, want_rank):
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    n = world.Get_size()
    if want_size is not None and want_size != n:
        raise RuntimeError(
            f"init_process_group: world_size is {want_size} but MPI started {n} process(es); "
            "start the processes with an MPI launcher (mpirun -n N, srun, or "
            "python -m ptcore.distributed.run --nproc-per-node N), which sets both")
    if want_rank is not None and not 0 <= want_rank < n:
        raise ValueError(f"init_process_group: rank {want_rank} is out of range for a world "
                         f"of size {n}")
    key = world.Get_rank() if want_rank is None else want_rank
    me = identity()
    infos = world.allgather((key, me))
    keys = [k for k, _ in infos]
    if sorted(keys) != list(range(n)):
        raise RuntimeError(f"init_process_group: the RANK values of the processes {keys} are "
                           f"not a permutation of 0..{n - 1}")
    _state["node_peers"] = {k: (pid, start) for k, (node, pid, start) in infos
                            if node == me[0]}
    comm = world.Split(0, key)
    return ProcessGroup(comm, range(n), timeout_s, comm.Get_rank(), _state["node_peers"])


def _rendezvous_store(init_method, timeout_s, size, rank):
    """The store that ``init_method`` names (rank 0 serves a TCPStore), and the rank and
    world size a ``tcp://``/``file://`` address may carry as ``?rank=&world_size=``."""
    import datetime as _dt
    from urllib.parse import parse_qs, urlparse
    method = init_method or "env://"
    url = urlparse(method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    rank = int(query["rank"]) if rank is None and "rank" in query else rank
    size = int(query["world_size"]) if size is None and "world_size" in query else size
    what = f"Error initializing torch.distributed using {url.scheme}:// rendezvous: "
    for name, v in (("rank", rank), ("world size", size)):
        if v is None:
            var = "RANK" if name == "rank" else "WORLD_SIZE"
            raise ValueError(f"{what}{name} parameter missing (pass {name.replace(' ', '_')}= "
                             f"or set the environment variable {var})")
    if not 0 <= rank < size:
        raise ValueError(f"init_process_group: rank {rank} is out of range for a world of size "
                         f"{size}")
    if url.scheme == "file":
        path = url.path or url.netloc
        return FileStore(path, size), rank, size
    if url.scheme == "tcp":
        host, port = url.hostname, url.port
        if not host or port is None:
            raise ValueError(f"{what}the address {method!r} needs a host and a port")
    else:
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        for var, v in (("MASTER_ADDR", host), ("MASTER_PORT", port)):
            if not v:
                raise ValueError(f"{what}environment variable {var} expected, but not set")
        port = int(port)
    return (TCPStore(host, port, size, rank == 0, timeout=_dt.timedelta(seconds=timeout_s)),
            rank, size)


def _init_sockets(init_method, store, timeout_s, size, rank):
    own = store is None
    if own:
        store, rank, size = _rendezvous_store(init_method, timeout_s, size, rank)
    else:
        if not isinstance(store, Store):
            raise TypeError(f"init_process_group: store must be a ptcore.distributed.Store, "
                            f"got {type(store).__name__}")
        # (torch's types: its assertions, then gloo's enforce, a RuntimeError)
        if size is None or size < 1:
            raise AssertionError("world_size must be positive if using store")
        if rank is None or rank < 0:
            raise AssertionError("rank must be non-negative if using store")
        if rank >= size:
            raise RuntimeError(f"init_process_group: rank {rank} is out of range for a world "
                               f"of size {size} (rank < size)")
    gen = _state["generation"]
    _state["generation"] += 1
    try:
        transport = _sockets.connect_world(PrefixStore(f"ptcore_pg/{gen}", store), rank, size,
                                           timeout_s, "")
    except BaseException:
        if own:
            store._close()
        raise
    _state["transport"] = transport
    _state["store"] = store if own else None
    _state["node_peers"] = {}
    comm = _sockets.Comm(transport, "w", range(size))
    return ProcessGroup(comm, range(size), timeout_s, rank, mpi_module=_sockets.MPI)


def _at_exit():
    # a timed-out or failed collective leaves requests in flight that MPI_Finalize would wait
    # for forever: abort the job instead (the error has been raised and printed by now)
    if _state["broken"] and _mpi._MPI is not None and (
            _state["world"] is None or _state["world"]._MPI is _mpi._MPI):
        sys.stdout.flush()
        sys.stderr.flush()
        _mpi.mpi().COMM_WORLD.Abort(1)
    _p2p.close_world()          # the receive that waits for mismatch notices


def _world(opname="this operation"):
    pg = _state["world"]
    if pg is None:
        raise ValueError(f"{opname}: Default process group has not been initialized, please "
                           "make sure to call init_process_group.")
    return pg


def _resolve(group, opname):
    pg = _world(opname)
    if group is None:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER or (
            type(group) is int and group == GroupMember.NON_GROUP_MEMBER):
        # what new_group gave a rank outside the group: it is a member of nothing
        if _state.get("non_member") is None:
            _state["non_member"] = ProcessGroup(None, [], pg._timeout_s, pg._global_rank,
                                                mpi_module=pg._MPI)
        return _state["non_member"]
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{opname}: group must be a ProcessGroup or None, got "
                        f"{type(group).__name__}")
    if group._comm is None and group._ranks and group not in _state["groups"]:
        raise RuntimeError(f"{opname}: the process group has been destroyed")
    return group


def destroy_process_group(group=None):
    """Free the communicators of ``group`` (default: every group and the default group).

    MPI itself stays initialised (it cannot be restarted), so ``init_process_group`` may be
    called again afterwards."""
    if group is None and _state["world"] is None:
        raise AssertionError("Process group cannot be None")      # (before init, as torch)
    if group is None or group is _state["world"]:
        _p2p.close_world()
        for g in _state["groups"]:
            g._free()
        _state["world"] = None
        _state["groups"] = []
        _state["pg_count"] = 0
        _state["non_member"] = None
        transport, store = _state["transport"], _state["store"]
        _state["transport"] = _state["store"] = None
        if transport is not None:
            transport.close()
        if store is not None:
            store._close()
    elif type(group) is int and group == GroupMember.NON_GROUP_MEMBER:
        return                          # a rank outside the group holds nothing to free
    else:
        group._free()
        if group in _state["groups"]:
            _state["groups"].remove(group)


def get_rank(group=None):
    """This process's rank in ``group`` (default: the world); -1 if it is not a member."""
    pg = _resolve(group, "get_rank")
    if pg is _state["world"]:
        return pg.rank()
    return pg._ranks.index(get_rank()) if get_rank() in pg._ranks else -1


def get_world_size(group=None):
    """Number of ranks in ``group`` (default: the world); -1 if this rank is not a member."""
    pg = _resolve(group, "get_world_size")
    return pg.size() if pg._comm is not None else -1


def get_backend(group=None):
    """The backend name the group was created with (``init_process_group``'s or
    ``new_group``'s ``backend``); when none was given, the transport's: "mpi" under an MPI
    launcher, "gloo" over sockets."""
    pg = _resolve(group, "get_backend")
    if pg is _state.get("non_member"):
        # as torch: this rank is outside the group new_group was asked for
        raise ValueError("Invalid process group specified")
    return pg._backend_name or _state["world"]._backend_name


def get_backend_config(group=None):
    """The group's backend configuration as torch writes it, e.g. ``"cpu:gloo,cuda:gloo"``."""
    pg = _resolve(group, "get_backend_config")
    if pg._comm is None:
        raise ValueError("Invalid process group specified")
    return pg._backend_config


def get_pg_count():
    """The number of process groups created since ``init_process_group`` (the default group
    included)."""
    return _state.get("pg_count", 0) if _state["world"] is not None else 0


def supports_complex(reduceOp):
    """False for the reductions that have no meaning on complex numbers."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND,
                            ReduceOp.BOR, ReduceOp.BXOR)


def get_global_rank(group, group_rank):
    pg = _resolve(group, "get_global_rank")
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg._ranks}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _resolve(group, "get_group_rank")
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg._ranks}")
    return pg._ranks.index(global_rank)


def get_process_group_ranks(group):
    return list(_resolve(group, "get_process_group_ranks")._ranks)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of the global ``ranks`` (default: all); every rank of the world must call it.

    Group ranks follow the order of the sorted global ranks, as in torch.  Ranks outside the
    group get ``GroupMember.NON_GROUP_MEMBER`` (as torch's): passed as a group, it gives
    rank and size -1 and collectives on it warn and do nothing."""
    world = _world("new_group")
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range for a world of size {n}")
    # every rank must pass the same members: else MPI would put ranks that believe they are
    # in different groups in one communicator
    _agree(world, "new_group", members=ranks)
    timeout_s = world._timeout_s if timeout is None else _seconds(timeout)
    MPI = world._MPI
    me = world.rank()
    color = 0 if me in ranks else MPI.UNDEFINED
    comm = world._comm.Split(color, ranks.index(me) if me in ranks else 0)
    pg = ProcessGroup(comm if comm != MPI.COMM_NULL else None, ranks, timeout_s, me,
                      _state.get("node_peers"), mpi_module=MPI)
    if backend is not None:
        pg._backend_name = Backend(str(backend))
    pg._backend_config = (_backend_config(backend, world.name()) if backend is not None
                          else world._backend_config)
    _state["groups"].append(pg)
    pg._group_name = str(_state.get("pg_count", 0))
    pg._group_desc = "undefined" if group_desc is None else str(group_desc)
    _state["pg_count"] = _state.get("pg_count", 0) + 1
    # as torch's: a rank outside ``ranks`` gets GroupMember.NON_GROUP_MEMBER, which every
    # function taking a group accepts (get_rank/get_world_size give -1, collectives do nothing)
    return pg if pg._comm is not None else GroupMember.NON_GROUP_MEMBER


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of ``group`` has entered the barrier."""
    pg = _resolve(group, "barrier")
    if pg._comm is None:
        return None
    pg._usable("barrier")
    # the agreement check is itself a barrier (an all-reduce): with it, no MPI barrier
    w = (Work(pg, "barrier", [], check=_check(pg, "barrier")) if _config.DISTRIBUTED_CHECKS
         else Work(pg, "barrier", [pg._comm.Ibarrier()]))
    if async_op:
        return w
    w.wait()
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises after ``timeout`` when a rank does not arrive."""
    pg = _resolve(group, "monitored_barrier")
    if pg._comm is None:
        return None
    pg._usable("monitored_barrier")
    if _config.DISTRIBUTED_CHECKS:
        Work(pg, "monitored_barrier", [], check=_check(pg, "monitored_barrier")).wait(timeout)
    else:
        Work(pg, "monitored_barrier", [pg._comm.Ibarrier()]).wait(timeout)
    return None


def _check(pg, name, **kw):
    call = _agreement.call(pg, name, **kw) if kw else _agreement.tensor_call(pg, name)
    return _agreement.Check(pg, name, *call)


def _agree(pg, name, **kw):
    """Wait (under the group's timeout) until every rank of ``pg`` has made the same call
    ``name`` (``_agreement.describe``'s arguments); ``ValueError`` on every rank if not."""
    if _config.DISTRIBUTED_CHECKS:
        pg._usable(name)
        Work(pg, name, [], check=_check(pg, name, **kw)).wait()


def _warn_not_member(opname):
    warnings.warn(f"{opname}: this rank is not part of the group; the call does nothing",
                  UserWarning, stacklevel=3)
