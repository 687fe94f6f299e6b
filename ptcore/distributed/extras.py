"""The rest of ``torch.distributed``'s everyday API: backend queries
(``is_backend_available``, ``get_default_backend_for_device``), ``get_node_local_rank``,
subgroups (``new_subgroups``, ``new_subgroups_by_enumeration``), ``all_gather_single`` and
the point-to-point object messages (``send_object_list``, ``recv_object_list``)."""
import os
import warnings

import numpy as np

from ptcore import cuda
from ptcore._tensor import device as _device
from ptcore.distributed.collectives import (_group, all_gather_into_tensor, all_reduce, recv,
                                            send)
from ptcore.distributed.reduce_op import ReduceOp
from ptcore.distributed.object_collectives import _dumps, _loads
from ptcore.distributed.process_group import (Backend, barrier, get_rank, get_world_size,
                                              is_mpi_available, new_group, supports_complex)

__all__ = ["all_gather_coalesced", "all_reduce_coalesced", "breakpoint", "all_gather_single", "get_default_backend_for_device", "get_node_local_rank",
           "is_backend_available", "new_subgroups", "new_subgroups_by_enumeration",
           "recv_object_list", "send_object_list"]


def is_backend_available(backend):
    """True for a backend ptcore can run: ``"gloo"`` (the socket backend) always, ``"mpi"``
    when mpi4py is importable."""
    b = Backend(backend)
    return b == Backend.GLOO or (b == Backend.MPI and is_mpi_available())


def get_default_backend_for_device(device):
    """The backend for tensors of ``device``: ``"mpi"`` for the CPU and CUDA (ptcore's one
    backend; ``init_process_group`` also accepts torch's ``"gloo"``/``"nccl"``)."""
    kind = _device(device).type if isinstance(device, (str, _device)) else None
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"Default backend not registered for device : {device}")
    return Backend.MPI


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node: ``LOCAL_RANK`` (set by ``ptcore.distributed.run``
    and torchrun), else ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """One group per list of ranks (disjoint lists); every rank must call it.  Returns
    ``(the group holding this rank or None, all the groups)``."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen, me, cur, groups = set(), get_rank(), None, []
    for ranks in ranks_per_subgroup_list:
        ranks = [int(r) for r in ranks]
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {ranks} and another "
                                 f"subgroup")
            seen.add(r)
        g = new_group(ranks, timeout=timeout, backend=backend, pg_options=pg_options)
        groups.append(g)
        if me in ranks:
            cur = g
    return cur, groups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split the world into consecutive subgroups of ``group_size`` ranks (every rank must
    call it); returns ``(this rank's subgroup, all the subgroups)``."""
    if group is not None:
        raise NotImplementedError("new_subgroups: splitting a group other than the world is "
                                  "not supported yet")
    world = get_world_size()
    if group_size is None:
        if not cuda.is_available():
            raise ValueError("Default group size only takes effect when CUDA is available. "
                             "If your subgroup using a backend that does not depend on CUDA,"
                             "please pass in 'group_size' correctly.")
        group_size = cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > world:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world})")
    if world % group_size != 0:
        raise ValueError(f"The world size ({world}) must be divisible by 'group_size={group_size}'")
    lists = [list(range(s, s + group_size)) for s in range(0, world, group_size)]
    return new_subgroups_by_enumeration(lists, timeout, backend, pg_options)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` of every rank into ``output_tensor`` (their concatenation or
    stack along dim 0), as ``all_gather_into_tensor``."""
    return all_gather_into_tensor(output_tensor, input_tensor, group=group, async_op=async_op)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
                     use_batch=False):
    """Send the picklable objects of ``object_list`` to rank ``dst`` (received by
    :func:`recv_object_list` into a list of the same length).  Unpickling runs code chosen
    by the sender: the ranks of a job trust each other, as in torch."""
    import ptcore
    if not isinstance(object_list, list):
        raise TypeError("send_object_list: object_list must be a list")
    payloads = [_dumps(o) for o in object_list]
    sizes = ptcore.tensor([len(p) for p in payloads], dtype=ptcore.int64)
    send(sizes, dst, group, group_dst=group_dst)
    data = np.concatenate(payloads) if payloads else np.empty(0, np.uint8)
    send(ptcore.from_numpy(data.copy()), dst, group, group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False):
    """Receive into ``object_list`` the objects :func:`send_object_list` sent (from ``src``,
    any rank when None); returns the sender's rank (-1 outside ``group``)."""
    import ptcore
    if not isinstance(object_list, list):
        raise TypeError("recv_object_list: object_list must be a list")
    sizes = ptcore.zeros(len(object_list), dtype=ptcore.int64)
    sender = recv(sizes, src, group, group_src=group_src)
    if sender == -1:
        return -1
    data = ptcore.empty(int(sizes.sum().item()), dtype=ptcore.uint8)
    recv(data, sender, group)
    buf, off = data.numpy(), 0
    for i, s in enumerate(sizes.tolist()):
        object_list[i] = _loads(buf[off:off + s])
        off += s
    return sender


def _coalesce(tensors, name):
    """The tensors flattened into one buffer (complex ones as real pairs), after torch's
    checks: a list of tensors of one dtype."""
    import ptcore
    if isinstance(tensors, ptcore.Tensor):
        tensors = [tensors]
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, ptcore.Tensor)
                                                         for t in tensors):
        raise TypeError(f"Invalid function argument. {name} must be a list of tensors")
    if len({t.dtype for t in tensors}) > 1:
        raise ValueError("Invalid usage of tensors with different dtypes. Found "
                         f"{sorted({str(t.dtype) for t in tensors})}")
    real = [ptcore.view_as_real(t) if t.is_complex() else t for t in tensors]
    flat = (ptcore.cat([t.reshape(-1) for t in real]) if real else ptcore.empty(0))
    return list(tensors), real, flat


def _split_into(flat, outs):
    off = 0
    for t in outs:
        n = t.numel()
        t.copy_(flat[off:off + n].reshape(tuple(t.shape)))
        off += n


def _then(work, step, async_op):
    """Run ``step`` when ``work`` completes; torch's coalesced collectives hand back the
    work's future when ``async_op``."""
    prev = work._finish

    def finish():
        if prev is not None:
            prev()
        step()
    work._finish = finish
    if async_op:
        return work.get_future()
    work.wait()
    return None


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """All-reduce each tensor of ``tensors`` (one dtype) in place, in one collective
    (deprecated in torch, as here).  With ``async_op`` a future, as torch's."""
    warnings.warn("`torch.distributed.all_reduce_coalesced` will be deprecated. If you must "
                  "use it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    tensors, real, flat = _coalesce(tensors, "tensor")
    if _group(group, "all_reduce_coalesced") is None:
        return None
    if any(t.is_complex() for t in tensors) and not supports_complex(op):
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    work = all_reduce(flat, op, group, async_op=True)
    work._outputs = tensors                    # the future's value: the reduced tensors
    return _then(work, lambda: _split_into(flat, real), async_op)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """``output_tensor_lists[i][j]`` receives rank ``i``'s ``input_tensor_list[j]``, in one
    collective (deprecated in torch, as here)."""
    warnings.warn("`torch.distributed.all_gather_coalesced` will be deprecated. If you must "
                  "use it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    import ptcore
    inputs, real, flat = _coalesce(input_tensor_list, "input_tensor_list")
    if not isinstance(output_tensor_lists, (list, tuple)) or not all(
            isinstance(o, (list, tuple)) for o in output_tensor_lists):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    pg = _group(group, "all_gather_coalesced")
    if pg is None:
        return None
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists must hold {pg.size()} "
                         f"lists (one per rank), got {len(output_tensor_lists)}")
    outs = [[ptcore.view_as_real(t) if t.is_complex() else t for t in lst]
            for lst in output_tensor_lists]
    for lst in outs:
        if [tuple(t.shape) for t in lst] != [tuple(t.shape) for t in real]:
            raise ValueError("all_gather_coalesced: each output list must match the shapes "
                             "of input_tensor_list")
    gathered = ptcore.empty(pg.size() * flat.numel(), dtype=flat.dtype)
    work = all_gather_into_tensor(gathered, flat, group, async_op=True)

    def step():
        n = flat.numel()
        for i, lst in enumerate(outs):
            _split_into(gathered[i * n:(i + 1) * n], lst)
    return _then(work, step, async_op)


_breakpoint_cache = {}


def breakpoint(rank=0, skip=0, timeout_s=3600):
    """Stop in ``pdb`` on rank ``rank`` only; the other ranks wait in a barrier until it goes
    on.  ``skip`` passes over the first ``skip`` calls from the same place.  ``timeout_s``
    (torch lengthens its groups' timeouts) is accepted; the barrier waits as the group's
    timeout allows."""
    import pdb
    import sys
    import traceback
    if skip > 0:
        key = hash(str(traceback.format_exc()))
        counter = _breakpoint_cache.get(key, 0) + 1
        _breakpoint_cache[key] = counter
        if counter <= skip:
            return
    if get_rank() == rank:
        class _DistributedPdb(pdb.Pdb):
            # the terminal's stdin while it talks, as torch's: a spawned child's stdin is not
            def interaction(self, *args, **kwargs):
                saved = sys.stdin
                try:
                    sys.stdin = open("/dev/stdin")
                except OSError:
                    return pdb.Pdb.interaction(self, *args, **kwargs)
                try:
                    return pdb.Pdb.interaction(self, *args, **kwargs)
                finally:
                    sys.stdin.close()
                    sys.stdin = saved
        debugger = _DistributedPdb()
        debugger.message("\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called "
                         f"dist.breakpoint(rank={rank})\n")
        debugger.set_trace(sys._getframe())
    barrier()
