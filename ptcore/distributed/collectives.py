"""Tensor collectives and point-to-point operations (``torch.distributed``'s functions).

Each call posts one non-blocking MPI operation on the group's communicator and returns a
``Work`` (``async_op=True``) or waits for it.  Unless ``PTCORE_DISTRIBUTED_CHECKS=0`` (which
must then be set on every rank), the ranks check that they agree on the call: a one-word
all-reduce runs concurrently on a second communicator (:mod:`._agreement`), and a send
carries a small header that its receive checks (:mod:`._p2p`), so that ranks that disagree
on the operation, shapes, dtypes, roots or split sizes get a ``ValueError`` naming what each
passed instead of wrong data or a hang.
"""
import itertools

import ptcore
from ptcore import _config
from ptcore.autograd.grad_mode import no_grad
from ptcore.distributed import _agreement, _p2p
from ptcore.distributed._buffers import Buffer, check_tensor
from ptcore.distributed.process_group import _resolve, _warn_not_member
from ptcore.distributed.reduce_op import ReduceOp, _mpi_op
from ptcore.distributed.work import Work


def _run(pg, name, start, finish=None, sig_tensor=None, extra=0, async_op=False, result=None,
         keep=None, check=True, peer=None, call=None):
    """Post ``start()``'s requests as one ``Work``, with the agreement check of the call:
    ``call`` (a descriptor and the counts of an all-to-all), else the descriptor of
    ``name`` on ``sig_tensor`` and ``extra`` (``check=False``: none)."""
    pg._usable(name)
    chk = None
    if check and _config.DISTRIBUTED_CHECKS:
        if call is None:
            desc, word = _agreement.tensor_call(pg, name, sig_tensor, extra)
            chk = _agreement.Check(pg, name, desc, word)
        else:
            chk = _agreement.Check(pg, name, *call)
    w = Work(pg, name, [], finish, chk, result, post=start)
    if w._error is not None:             # posting it failed at once
        raise w._error
    w._keep = keep
    w._outputs = [sig_tensor] if sig_tensor is not None else []   # get_future()'s value
    if peer is not None:
        w._peer = pg._ranks[peer]
    if async_op:
        return w
    w.wait()
    return w._result


def _group(group, name):
    pg = _resolve(group, name)
    if pg._comm is None:
        _warn_not_member(name)
        return None
    return pg


def _group_rank(pg, rank, group_rank, what, name):
    if group_rank is not None:
        if rank is not None and rank != pg._ranks[group_rank]:
            raise ValueError(f"{name}: both {what} and group_{what} given and they disagree")
        r = group_rank
    else:
        if rank not in pg._ranks:
            raise ValueError(f"{name}: {what} rank {rank} is not part of the group "
                             f"{pg._ranks}")
        r = pg._ranks.index(rank)
    if not 0 <= r < pg.size():
        raise ValueError(f"{name}: group {what} rank {r} is out of range for a group of "
                         f"size {pg.size()}")
    return r


def _avg(buf, n):
    t = buf.mpi
    with no_grad():
        if t.dtype.is_floating_point or t.dtype.is_complex:
            t.div_(n)
        elif t.dtype == ptcore.bool:
            raise TypeError("ReduceOp.AVG is not supported for bool tensors")
        else:
            t.copy_(ptcore.div(t, n, rounding_mode="trunc"))


def _reduce_op(pg, op, t, name):
    if op == ReduceOp.AVG and t.dtype == ptcore.bool:
        raise TypeError(f"{name}: ReduceOp.AVG is not supported for bool tensors")
    return _mpi_op(pg._MPI, op, t.dtype == ptcore.bool)


def _same(name, ref, others, what):
    for i, o in enumerate(others):
        check_tensor(name, o, f"{what}[{i}]")
        if o.dtype != ref.dtype:
            raise TypeError(f"{name}: {what}[{i}] has dtype {o.dtype}, expected {ref.dtype}")
        if o.numel() != ref.numel():
            raise ValueError(f"{name}: {what}[{i}] has shape {tuple(o.shape)}, expected "
                             f"{ref.numel()} elements like shape {tuple(ref.shape)}")


def _cat(tensors, dtype):
    """One contiguous CPU tensor holding ``tensors`` back to back (a staging buffer)."""
    flat = [Buffer(t, writeback=False).mpi.reshape(-1) for t in tensors]
    return ptcore.cat(flat) if flat else ptcore.empty(0, dtype=dtype)


# ---------------------------------------------------------------------------- collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every rank of ``group`` in place."""
    check_tensor("all_reduce", tensor)
    pg = _group(group, "all_reduce")
    if pg is None:
        return None
    mop = _reduce_op(pg, op, tensor, "all_reduce")
    buf = Buffer(tensor, reduce=True)
    MPI = pg._MPI

    def finish():
        if op == ReduceOp.AVG:
            _avg(buf, pg.size())
        buf.done()
    return _run(pg, "all_reduce", lambda: [pg._comm.Iallreduce(MPI.IN_PLACE, buf.mpi, mop)],
                finish, tensor, op.value, async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank."""
    check_tensor("broadcast", tensor)
    pg = _group(group, "broadcast")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "src", "broadcast")
    buf = Buffer(tensor)
    return _run(pg, "broadcast", lambda: [pg._comm.Ibcast(buf.mpi, root)], buf.done, tensor,
                _agreement.extra_of(root), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor``."""
    check_tensor("reduce", tensor)
    pg = _group(group, "reduce")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "dst", "reduce")
    mop = _reduce_op(pg, op, tensor, "reduce")
    buf = Buffer(tensor, reduce=True)
    MPI = pg._MPI
    me = pg.rank()

    def start():
        if me == root:
            return [pg._comm.Ireduce(MPI.IN_PLACE, buf.mpi, mop, root)]
        return [pg._comm.Ireduce(buf.mpi, None, mop, root)]

    def finish():
        if me == root:
            if op == ReduceOp.AVG:
                _avg(buf, pg.size())
            buf.done()
    return _run(pg, "reduce", start, finish, tensor, _agreement.extra_of(root, op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather ``tensor`` of every rank into ``tensor_list`` (one tensor per rank)."""
    check_tensor("all_gather", tensor)
    pg = _group(group, "all_gather")
    if pg is None:
        return None
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list must be a list of {pg.size()} tensors "
                         "(one per rank of the group)")
    _same("all_gather", tensor, tensor_list, "tensor_list")
    src = Buffer(tensor, writeback=False)
    out = ptcore.empty((pg.size(), tensor.numel()), dtype=src.mpi.dtype)

    def finish():
        with no_grad():
            for i, t in enumerate(tensor_list):
                t.copy_(_back(out[i], t))
    return _run(pg, "all_gather", lambda: [pg._comm.Iallgather(src.mpi, out)], finish,
                tensor, 0, async_op, keep=(src, out))


def _back(flat, like):
    """``flat`` (staging dtype) reshaped and re-typed as ``like``."""
    if like.dtype == ptcore.bfloat16 and flat.dtype == ptcore.int16:
        flat = flat.view(ptcore.bfloat16)
    return flat.reshape(tuple(like.shape))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` of every rank into ``output_tensor`` (concatenated on dim 0,
    or stacked: ``output_tensor`` needs ``world_size`` times the elements)."""
    check_tensor("all_gather_into_tensor", output_tensor, "output_tensor")
    check_tensor("all_gather_into_tensor", input_tensor, "input_tensor")
    pg = _group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    _expect_sizes("all_gather_into_tensor", output_tensor, input_tensor, pg.size(), 1)
    src = Buffer(input_tensor, writeback=False)
    out = Buffer(output_tensor)
    return _run(pg, "all_gather_into_tensor", lambda: [pg._comm.Iallgather(src.mpi, out.mpi)],
                out.done, input_tensor, 0, async_op, keep=src)


def _expect_sizes(name, big, small, n, direction):
    if big.dtype != small.dtype:
        raise TypeError(f"{name}: output and input dtypes differ: {big.dtype} and {small.dtype}")
    if big.numel() != n * small.numel():
        what = "output" if direction == 1 else "input"
        raise RuntimeError(f"{name}: the {what} tensor of shape {tuple(big.shape)} must have "
                         f"world_size ({n}) times the elements of the other tensor, of shape "
                         f"{tuple(small.shape)}")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Gather ``tensor`` of every rank into ``gather_list`` on rank ``dst``."""
    check_tensor("gather", tensor)
    pg = _group(group, "gather")
    if pg is None:
        return None
    root = _group_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst, "dst",
                       "gather")
    me = pg.rank()
    if me == root:
        if not isinstance(gather_list, (list, tuple)) or len(gather_list) != pg.size():
            raise ValueError(f"gather: on the destination rank, gather_list must be a list of "
                             f"{pg.size()} tensors")
        _same("gather", tensor, gather_list, "gather_list")
    elif gather_list:
        raise ValueError("gather: gather_list must be empty on non-destination ranks")
    src = Buffer(tensor, writeback=False)
    out = ptcore.empty((pg.size(), tensor.numel()), dtype=src.mpi.dtype) if me == root else None

    def finish():
        if me == root:
            with no_grad():
                for i, t in enumerate(gather_list):
                    t.copy_(_back(out[i], t))
    return _run(pg, "gather", lambda: [pg._comm.Igather(src.mpi, out, root)], finish, tensor,
                _agreement.extra_of(root), async_op, keep=(src, out))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Scatter ``scatter_list`` of rank ``src`` (one tensor per rank) into ``tensor``."""
    check_tensor("scatter", tensor)
    pg = _group(group, "scatter")
    if pg is None:
        return None
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src",
                       "scatter")
    me = pg.rank()
    if me == root:
        if not isinstance(scatter_list, (list, tuple)) or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: on the source rank, scatter_list must be a list of "
                             f"{pg.size()} tensors")
        _same("scatter", tensor, scatter_list, "scatter_list")
        send = _cat(scatter_list, tensor.dtype)
    elif scatter_list:
        raise ValueError("scatter: scatter_list must be empty on non-source ranks")
    else:
        send = None
    out = Buffer(tensor)
    return _run(pg, "scatter", lambda: [pg._comm.Iscatter(send, out.mpi, root)], out.done,
                tensor, _agreement.extra_of(root), async_op, keep=send)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list`` over the ranks; rank ``i`` receives the reduction of entry ``i``."""
    check_tensor("reduce_scatter", output, "output")
    pg = _group(group, "reduce_scatter")
    if pg is None:
        return None
    if not isinstance(input_list, (list, tuple)) or len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must be a list of {pg.size()} tensors")
    _same("reduce_scatter", output, input_list, "input_list")
    send = _cat([t.to(ptcore.float32) if t.dtype in (ptcore.float16, ptcore.bfloat16) else t
                 for t in input_list], output.dtype)
    return _reduce_scatter(pg, "reduce_scatter", output, send, op, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world_size`` chunks) over the ranks; rank ``i`` gets chunk ``i``."""
    check_tensor("reduce_scatter_tensor", output, "output")
    check_tensor("reduce_scatter_tensor", input, "input")
    pg = _group(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    _expect_sizes("reduce_scatter_tensor", input, output, pg.size(), 0)
    send = Buffer(input, reduce=True, writeback=False).mpi
    return _reduce_scatter(pg, "reduce_scatter_tensor", output, send, op, async_op)


def _reduce_scatter(pg, name, output, send, op, async_op):
    mop = _reduce_op(pg, op, output, name)
    out = Buffer(output, reduce=True)

    def finish():
        if op == ReduceOp.AVG:
            _avg(out, pg.size())
        out.done()
    return _run(pg, name, lambda: [pg._comm.Ireduce_scatter_block(send, out.mpi, mop)], finish,
                output, op.value, async_op, keep=send)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Split ``input`` on dim 0 and send part ``i`` to rank ``i``; ``output`` receives the
    parts of every rank in rank order.  Split sizes (rows of dim 0) default to equal parts."""
    check_tensor("all_to_all_single", output, "output")
    check_tensor("all_to_all_single", input, "input")
    pg = _group(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise TypeError(f"all_to_all_single: output and input dtypes differ: {output.dtype} "
                        f"and {input.dtype}")
    send = Buffer(input, writeback=False)
    out = Buffer(output)
    if output_split_sizes is None and input_split_sizes is None:
        if input.numel() % n or output.numel() != input.numel():
            raise ValueError(f"all_to_all_single: without split sizes, input (shape "
                             f"{tuple(input.shape)}) and output (shape {tuple(output.shape)}) "
                             f"must have the same number of elements, divisible by {n}")
        sc, rc = [input.numel() // n] * n, [output.numel() // n] * n
        call = _pair_call(pg, "all_to_all_single", input.dtype, sc, rc,
                          (_per_row(input), _per_row(output)))
        return _run(pg, "all_to_all_single", lambda: [pg._comm.Ialltoall(send.mpi, out.mpi)],
                    out.done, None, 0, async_op, keep=send, call=call)
    sc = _counts("input", input, input_split_sizes, n)
    rc = _counts("output", output, output_split_sizes, n)
    call = _pair_call(pg, "all_to_all_single", input.dtype, sc, rc,
                      (_per_row(input), _per_row(output)))
    return _alltoallv(pg, "all_to_all_single", send.mpi, sc, out.mpi, rc, out.done, async_op,
                      send, call)


def _per_row(t):
    rows = t.shape[0] if t.dim() else 1
    return t.numel() // rows if rows else 0


def _pair_call(pg, name, dtype, sent, expected, rows=(1, 1)):
    if not _config.DISTRIBUTED_CHECKS:
        return None
    return _agreement.pair_call(pg, name, dtype, sent, expected, rows)


def _counts(what, t, splits, n):
    rows = t.shape[0] if t.dim() else 1
    per_row = _per_row(t)
    if splits is None:
        if rows % n:
            raise ValueError(f"all_to_all_single: {what} dim 0 ({rows}) is not divisible by "
                             f"the group size {n}")
        splits = [rows // n] * n
    splits = [int(s) for s in splits]
    if len(splits) != n or sum(splits) != rows or min(splits) < 0:
        raise ValueError(f"all_to_all_single: {what}_split_sizes {splits} must be {n} "
                         f"non-negative sizes summing to dim 0 of the {what} ({rows})")
    return [s * per_row for s in splits]


def _alltoallv(pg, name, send, sc, recv, rc, finish, async_op, keep, call):
    sd = [0, *itertools.accumulate(sc[:-1])]
    rd = [0, *itertools.accumulate(rc[:-1])]
    return _run(pg, name, lambda: [pg._comm.Ialltoallv([send, (sc, sd)], [recv, (rc, rd)])],
                finish, None, 0, async_op, keep=keep, call=call)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[i]`` to rank ``i``; receive rank ``i``'s into
    ``output_tensor_list[i]``."""
    pg = _group(group, "all_to_all")
    if pg is None:
        return None
    n = pg.size()
    for what, lst in (("output_tensor_list", output_tensor_list),
                      ("input_tensor_list", input_tensor_list)):
        if not isinstance(lst, (list, tuple)) or len(lst) != n:
            raise ValueError(f"all_to_all: {what} must be a list of {n} tensors")
        for i, t in enumerate(lst):
            check_tensor("all_to_all", t, f"{what}[{i}]")
    dt = input_tensor_list[0].dtype
    for t in list(output_tensor_list) + list(input_tensor_list):
        if t.dtype != dt:
            raise TypeError(f"all_to_all: every tensor must have dtype {dt}, got {t.dtype}")
    send = _cat(input_tensor_list, dt)
    recv = ptcore.empty(sum(t.numel() for t in output_tensor_list), dtype=send.dtype)
    rc = [t.numel() for t in output_tensor_list]

    def finish():
        off = 0
        with no_grad():
            for t, c in zip(output_tensor_list, rc):
                t.copy_(_back(recv[off:off + c], t))
                off += c
    sc = [t.numel() for t in input_tensor_list]
    return _alltoallv(pg, "all_to_all", send, sc, recv, rc, finish, async_op, (send, recv),
                      _pair_call(pg, "all_to_all", dt, sc, rc))


# --------------------------------------------------------------------------- point to point
def _not_self(pg, peer, what, name):
    if peer == pg.rank():
        # torch's gloo refuses these too (a RuntimeError from its transport)
        raise RuntimeError(f"{name}: the {what} rank {pg._ranks[peer]} is this process's own "
                           "rank; a process cannot send messages to itself")


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without blocking; returns a ``Work``.

    With the agreement checks on, a header (dtype, number of elements) goes ahead of the
    data; a receive that disagrees raises, and this rank raises the same error in its next
    wait on any operation."""
    check_tensor("isend", tensor)
    pg = _group(group, "isend")
    if pg is None:
        return None
    peer = _group_rank(pg, dst, group_dst, "dst", "isend")
    _not_self(pg, peer, "destination", "isend")
    buf = Buffer(tensor, writeback=False)
    if not _config.DISTRIBUTED_CHECKS:
        return _run(pg, "isend", lambda: [pg._comm.Isend(buf.mpi, peer, tag)], None, None,
                    async_op=True, keep=buf, check=False, peer=peer)
    hdr = _p2p.header(tensor)
    return _run(pg, "isend", lambda: _p2p.post_send(pg, buf.mpi, peer, tag, hdr), None, None,
                async_op=True, keep=(buf, hdr), check=False, peer=peer)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank if None) without blocking.

    With the agreement checks on, the sender's header is compared with ``tensor``: a
    different dtype or number of elements raises ``ValueError`` naming both."""
    check_tensor("irecv", tensor)
    pg = _group(group, "irecv")
    if pg is None:
        return None
    MPI = pg._MPI
    peer = (MPI.ANY_SOURCE if src is None and group_src is None
            else _group_rank(pg, src, group_src, "src", "irecv"))
    if peer != MPI.ANY_SOURCE:
        _not_self(pg, peer, "source", "irecv")
    buf = Buffer(tensor)
    work = None
    if _config.DISTRIBUTED_CHECKS:
        box = []

        def start():
            box.append(_p2p.Receive(pg, buf.mpi, tensor,
                                    None if peer == MPI.ANY_SOURCE else peer, tag))
            return []

        def finish():
            buf.done()
            work._result = pg._ranks[box[0].source]
    else:
        status = MPI.Status()
        expect = buf.mpi.numel()

        def start():
            return [pg._comm.Irecv(buf.mpi, peer, tag)]

        def finish():
            got = status.Get_count(MPI.BYTE) // max(buf.mpi.element_size(), 1)
            if got != expect:
                raise ValueError(f"recv: received {got} elements from rank "
                                 f"{pg._ranks[status.Get_source()]} but the tensor of shape "
                                 f"{tuple(tensor.shape)} holds {expect}")
            buf.done()
            work._result = pg._ranks[status.Get_source()]
    work = _run(pg, "irecv", start, None, None, async_op=True, keep=buf, check=False,
                peer=None if peer == MPI.ANY_SOURCE else peer)
    if _config.DISTRIBUTED_CHECKS:
        work._check = box[0]
    else:
        work._statuses = [status]
    work._finish = finish
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (blocks until the send buffer can be reused)."""
    pg = _resolve(group, "send")
    if pg._comm is not None and _group_rank(pg, dst, group_dst, "dst", "send") == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")          # torch's words
    w = isend(tensor, dst, group, tag, group_dst)
    if w is not None:
        w.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from ``src`` (any rank if None); returns the sender's rank."""
    w = irecv(tensor, src, group, tag, group_src)
    if w is None:
        return -1
    w.wait()
    return w._result


class P2POp:
    """One send or receive for ``batch_isend_irecv`` (``torch.distributed.P2POp``)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("P2POp: op must be ptcore.distributed.isend or irecv")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """Post every operation of ``p2p_op_list``; returns their ``Work`` handles."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("batch_isend_irecv: expected a non-empty list of P2POp")
    if not all(p.group is p2p_op_list[0].group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")              # torch's words
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
