"""Process groups on MPI communicators: ``init_process_group``, ``new_group`` and the queries.

Under ``mpirun``/``mpiexec``/``srun`` the ranks and the world size come from MPI's
``COMM_WORLD``.  The ``env://`` variables that torchrun (and ``ptcore.distributed.run``) set
are honoured: ``WORLD_SIZE`` must equal the MPI world's size, and ``RANK`` (when it differs
from the MPI rank) renumbers the ranks by splitting the world communicator with ``RANK`` as
key.  Processes are therefore always started by an MPI launcher; ``ptcore.distributed.run``
starts them through ``mpiexec`` and exports the torchrun variables to each.
"""
import atexit
import datetime
import os
import sys
import warnings

from ptcore.distributed import _mpi

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """Backend names (``torch.distributed.Backend``); ptcore has one, ``mpi``."""
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A set of ranks sharing two MPI communicators: one for the data, one for the
    shape/dtype agreement checks (so that a check never matches a data message)."""

    def __init__(self, comm, ranks, timeout_s, global_rank, node_peers=None):
        self._comm = comm                  # None on ranks outside the group
        self._backend_name = None          # the name it was created with (get_backend)
        self._meta = comm.Dup() if comm is not None else None
        self._ranks = list(ranks)          # global ranks, in group-rank order
        self._timeout_s = timeout_s
        self._global_rank = global_rank
        self._broken = None
        # global rank -> (pid, start time) of the other members running on this node
        members = set(self._ranks)
        self._node_peers = {r: v for r, v in (node_peers or {}).items()
                            if r in members and r != global_rank}

    def rank(self):
        return self._comm.Get_rank() if self._comm is not None else -1

    def size(self):
        return len(self._ranks)

    def name(self):
        return "mpi"

    def _dead_peers(self, peer=None):
        """Global ranks of the members on this node whose process has ended (only ``peer``,
        a global rank, when given: a point-to-point operation depends on no one else)."""
        from ptcore.distributed._liveness import alive
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


_state = {"world": None, "groups": [], "broken": False, "atexit": False, "node_peers": {}}


class _GroupNamespace:
    """``ptcore.distributed.group.WORLD`` as torch's ``group.WORLD``."""

    @property
    def WORLD(self):
        return _state["world"]


group = _GroupNamespace()
GroupMember = group


def is_available():
    """True when mpi4py (and so an MPI library) can be imported."""
    return _mpi.available()


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    return False


def is_nccl_available():
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
    """Create the default process group over MPI's ``COMM_WORLD``.

    Parameters
    ----------
    backend : str, optional
        ``"mpi"`` (default).  ``"gloo"``, ``"nccl"`` and ``"cpu:gloo,cuda:nccl"`` are accepted
        so that PyTorch scripts run unchanged; they are served by MPI.
    init_method : str, optional
        ``"env://"`` (default) or None.  Ranks always come from the MPI launcher.
    timeout : datetime.timedelta, optional
        How long a collective may wait for its peers before raising ``DistBackendError``
        (default 30 minutes, as torch's).  A peer on the same node whose process has ended
        (crashed, killed, exited) fails the wait at once, with an error naming its rank.
    world_size, rank : int, optional
        If given (or set as ``WORLD_SIZE``/``RANK``), they must agree with MPI: the world
        size must equal MPI's, and the ranks are renumbered so that this process is ``rank``.

    Raises
    ------
    RuntimeError
        When called twice, when mpi4py is missing, or when ``WORLD_SIZE`` disagrees with the
        number of MPI processes (the processes were not started by an MPI launcher).
    """
    if _state["world"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        b = str(backend).lower()
        names = {part.split(":")[-1] for part in b.split(",")}
        if not names <= {"mpi", "gloo", "nccl", "undefined"}:
            raise ValueError(f"Invalid backend: {backend!r}; ptcore.distributed runs on 'mpi'")
    if init_method is not None and not (isinstance(init_method, str) and init_method.split(
            "://", 1)[0] in ("env", "tcp", "file") and "://" in init_method):
        raise ValueError(f"init_method {init_method!r} is not supported: use 'env://', "
                         "'tcp://host:port' or 'file:///path'")
    # a tcp:// or file:// rendezvous point is not needed: the MPI launcher that started
    # the processes connects them (ranks and world size as it gives them)
    if store is not None:
        raise ValueError("store is not supported: ptcore.distributed rendezvous through MPI")
    from ptcore.distributed.work import _seconds
    timeout_s = _seconds(default_pg_timeout if timeout is None else timeout)
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    n = world.Get_size()
    want_size = world_size if world_size not in (None, -1) else _env_int("WORLD_SIZE")
    if want_size is not None and want_size != n:
        raise RuntimeError(
            f"init_process_group: world_size is {want_size} but MPI started {n} process(es); "
            "start the processes with an MPI launcher (mpirun -n N, srun, or "
            "python -m ptcore.distributed.run --nproc-per-node N), which sets both")
    want_rank = rank if rank not in (None, -1) else _env_int("RANK")
    if want_rank is not None and not 0 <= want_rank < n:
        raise ValueError(f"init_process_group: rank {want_rank} is out of range for a world "
                         f"of size {n}")
    key = world.Get_rank() if want_rank is None else want_rank
    from ptcore.distributed._liveness import identity
    me = identity()
    infos = world.allgather((key, me))
    keys = [k for k, _ in infos]
    if sorted(keys) != list(range(n)):
        raise RuntimeError(f"init_process_group: the RANK values of the processes {keys} are "
                           f"not a permutation of 0..{n - 1}")
    _state["node_peers"] = {k: (pid, start) for k, (node, pid, start) in infos
                            if node == me[0]}
    comm = world.Split(0, key)
    _state["world"] = ProcessGroup(comm, range(n), timeout_s, comm.Get_rank(),
                                   _state["node_peers"])
    # the name the script gave (served by MPI whatever it is): scripts branch on
    # get_backend() == "nccl"/"gloo" as under torch
    _state["world"]._backend_name = Backend(str(backend)) if backend is not None else Backend.MPI
    _state["groups"] = [_state["world"]]
    _state["broken"] = False
    if not _state["atexit"]:
        atexit.register(_abort_if_broken)
        _state["atexit"] = True


def _abort_if_broken():
    # a timed-out or failed collective leaves requests in flight that MPI_Finalize would wait
    # for forever: abort the job instead (the error has been raised and printed by now)
    if _state["broken"]:
        sys.stdout.flush()
        sys.stderr.flush()
        _mpi.mpi().COMM_WORLD.Abort(1)


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
        for g in _state["groups"]:
            g._free()
        _state["world"] = None
        _state["groups"] = []
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
    """The backend name the group was created with (``init_process_group``'s
    or ``new_group``'s ``backend``; "mpi" when none was given): ptcore serves
    every name by MPI."""
    pg = _resolve(group, "get_backend")
    return pg._backend_name or _state["world"]._backend_name


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

    Group ranks follow the order of the sorted global ranks, as in torch.  On ranks outside
    the group the returned group has no communicator (collectives on it raise)."""
    world = _world("new_group")
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range for a world of size {n}")
    from ptcore.distributed.work import _seconds
    timeout_s = world._timeout_s if timeout is None else _seconds(timeout)
    MPI = _mpi.mpi()
    me = world.rank()
    color = 0 if me in ranks else MPI.UNDEFINED
    comm = world._comm.Split(color, ranks.index(me) if me in ranks else 0)
    pg = ProcessGroup(comm if comm != MPI.COMM_NULL else None, ranks, timeout_s, me,
                      _state.get("node_peers"))
    if backend is not None:
        pg._backend_name = Backend(str(backend))
    _state["groups"].append(pg)
    return pg


def barrier(group=None, async_op=False, device_ids=None):
    """Block until every rank of ``group`` has entered the barrier."""
    pg = _resolve(group, "barrier")
    if pg._comm is None:
        return None
    pg._usable("barrier")
    from ptcore.distributed.work import Work
    w = Work(pg, "barrier", [pg._comm.Ibarrier()])
    if async_op:
        return w
    w.wait()
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises after ``timeout`` when a rank does not arrive."""
    pg = _resolve(group, "monitored_barrier")
    if pg._comm is None:
        return None
    from ptcore.distributed.work import Work
    Work(pg, "monitored_barrier", [pg._comm.Ibarrier()]).wait(timeout)
    return None


def _warn_not_member(opname):
    warnings.warn(f"{opname}: this rank is not part of the group; the call does nothing",
                  UserWarning, stacklevel=3)
