"""Collectives of picklable Python objects (``broadcast_object_list``, ``all_gather_object``,
``gather_object``, ``scatter_object_list``).

As in torch, objects travel pickled and are unpickled on the receiving ranks.  Unpickling
runs code chosen by the sender, so these functions trust every rank of the job; they never
read data from anywhere else.
"""
import io
import pickle

import numpy as np

from ptcore import _config
from ptcore.distributed import _agreement
from ptcore.distributed.collectives import _group, _group_rank, _run

_MAX_BYTES = np.iinfo(np.int64).max


def _dumps(obj):
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    return np.frombuffer(f.getvalue(), dtype=np.uint8)


def _loads(buf):
    return pickle.Unpickler(io.BytesIO(buf.tobytes())).load()


def _call(pg, name, count=None, root=None):
    """The agreement check of an object collective's first exchange (the sizes)."""
    if not _config.DISTRIBUTED_CHECKS:
        return None
    return _agreement.call(pg, name, None if count is None else (count,),
                           _agreement.extra_of(root))


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None,
                          _name="broadcast_object_list"):
    """Replace ``object_list``'s entries on every rank by those of rank ``src``."""
    pg = _group(group, _name)
    if pg is None:
        return
    if not isinstance(object_list, list):
        raise TypeError(f"{_name}: object_list must be a list")
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src",
                       _name)
    me = pg.rank()
    n = len(object_list)
    sizes = np.zeros(n, dtype=np.int64)
    if me == root:
        payloads = [_dumps(o) for o in object_list]
        sizes[:] = [len(p) for p in payloads]
    _run(pg, _name, lambda: [pg._comm.Ibcast(sizes, root)], call=_call(pg, _name, n, root))
    data = np.concatenate(payloads) if me == root and n else np.empty(int(sizes.sum()), np.uint8)
    _run(pg, _name, lambda: [pg._comm.Ibcast(data, root)], check=False)
    if me != root:
        off = 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _loads(data[off:off + s])
            off += s


def _allgather_bytes(pg, name, payload):
    n = pg.size()
    sizes = np.zeros(n, dtype=np.int64)
    _run(pg, name, lambda: [pg._comm.Iallgather(np.array([len(payload)], np.int64), sizes)],
         call=_call(pg, name))
    recv = np.empty(int(sizes.sum()), np.uint8)
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    _run(pg, name, lambda: [pg._comm.Iallgatherv(payload, [recv, (sizes.tolist(),
                                                                  displs.tolist())])],
         check=False)
    return [recv[d:d + s] for d, s in zip(displs.tolist(), sizes.tolist())]


def all_gather_object(object_list, obj, group=None):
    """Fill ``object_list`` (one slot per rank) with ``obj`` of every rank."""
    pg = _group(group, "all_gather_object")
    if pg is None:
        return
    if not isinstance(object_list, list) or len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must be a list of {pg.size()} "
                         "entries (one per rank of the group)")
    parts = _allgather_bytes(pg, "all_gather_object", _dumps(obj))
    for i, p in enumerate(parts):
        object_list[i] = _loads(p)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather ``obj`` of every rank into ``object_gather_list`` on rank ``dst``."""
    pg = _group(group, "gather_object")
    if pg is None:
        return
    root = _group_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst, "dst",
                       "gather_object")
    me = pg.rank()
    if me == root and (not isinstance(object_gather_list, list)
                       or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: on the destination rank, object_gather_list must be "
                         f"a list of {pg.size()} entries")
    payload = _dumps(obj)
    sizes = np.zeros(pg.size(), dtype=np.int64)
    _run(pg, "gather_object", lambda: [pg._comm.Igather(np.array([len(payload)], np.int64),
                                                        sizes, root)],
         call=_call(pg, "gather_object", root=root))
    recv = np.empty(int(sizes.sum()), np.uint8) if me == root else None
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    rspec = [recv, (sizes.tolist(), displs.tolist())] if me == root else None
    _run(pg, "gather_object", lambda: [pg._comm.Igatherv(payload, rspec, root)], check=False)
    if me == root:
        for i, (d, s) in enumerate(zip(displs.tolist(), sizes.tolist())):
            object_gather_list[i] = _loads(recv[d:d + s])


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank ``i`` receives ``scatter_object_input_list[i]`` of rank ``src`` in
    ``scatter_object_output_list[0]``."""
    pg = _group(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a non-empty "
                         "list")
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src",
                       "scatter_object_list")
    me = pg.rank()
    objs = [None]
    if me == root:
        if (not isinstance(scatter_object_input_list, list)
                or len(scatter_object_input_list) != pg.size()):
            raise ValueError(f"scatter_object_list: on the source rank, the input list must "
                             f"have {pg.size()} entries")
        objs = list(scatter_object_input_list)
    box = [objs]
    broadcast_object_list(box, group_src=root, group=pg, _name="scatter_object_list")
    scatter_object_output_list[0] = box[0][me]
