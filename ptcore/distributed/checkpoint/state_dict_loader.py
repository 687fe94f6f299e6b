"""``load``: every rank fills its own state dict in place from a checkpoint, whatever the
number of ranks that saved it."""
import warnings

import ptcore
from ptcore.distributed.checkpoint._coordination import Coordinator
from ptcore.distributed.checkpoint._traverse import flatten, set_element
from ptcore.distributed.checkpoint.default_planner import DefaultLoadPlanner
from ptcore.distributed.checkpoint.filesystem import FileSystemReader
from ptcore.distributed.checkpoint.state_dict_saver import (
    _check, is_stateful, resolve_no_dist, resolve_storage,
)

__all__ = ["load", "load_state_dict"]


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Load a checkpoint into ``state_dict`` in place (SPMD: every rank calls it with the
    same keys).

    ``state_dict`` is flattened as :func:`~ptcore.distributed.checkpoint.save` flattens;
    every tensor in it receives the saved tensor's values (copied into the same tensor
    object, cast to its dtype; the shapes must match), every other entry is replaced by the
    saved value (as torch, also a tensor where the checkpoint holds a plain value).
    Top-level values with ``state_dict()``/``load_state_dict()`` (modules, optimizers) are
    loaded through them.  Keys the checkpoint lacks fail the load unless
    the :class:`~ptcore.distributed.checkpoint.DefaultLoadPlanner` allows a partial load;
    keys only the checkpoint has are ignored.  Failures (a missing checkpoint, a missing
    key, a shape mismatch) raise
    :class:`~ptcore.distributed.checkpoint.CheckpointException` on every rank, as torch.
    """
    no_dist = resolve_no_dist(no_dist, "load")
    reader = resolve_storage(storage_reader, checkpoint_id, FileSystemReader)
    _check(reader, FileSystemReader, "storage_reader")
    planner = DefaultLoadPlanner() if planner is None else planner
    _check(planner, DefaultLoadPlanner, "planner")
    coord = Coordinator(process_group, no_dist)
    keys = sorted(state_dict.keys())
    targets = {k: (state_dict[k].state_dict() if is_stateful(state_dict[k]) else state_dict[k])
               for k in keys}
    _load_into(targets, reader, planner, coord)
    for k in keys:
        if is_stateful(state_dict[k]):
            state_dict[k].load_state_dict(targets[k])
        else:
            state_dict[k] = targets[k]


def _load_into(target, reader, planner, coord):
    def plan():
        reader.reset()
        flat, paths = flatten(target)
        reads = []
        for key, dest in flat.items():
            item = reader._entry(key)
            if item is None:
                if planner.allow_partial_load:
                    continue
                raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
            is_tensor = "tensor" in item
            if isinstance(dest, ptcore.Tensor) and is_tensor:
                saved = tuple(item["tensor"]["shape"])
                if saved != tuple(dest.shape):
                    raise ValueError(f"Size mismatch between saved {list(saved)} and current: "
                                     f"{list(dest.shape)} for {key}")
            elif is_tensor:
                raise ValueError(f"{key}: the checkpoint holds a tensor, the state dict a "
                                 f"{type(dest).__name__}")
            reads.append((key, dest, paths[key], item))
        return reads

    reads = coord.run(plan)

    def read():
        with ptcore.no_grad():
            for _key, dest, path, item in reads:
                if "tensor" in item:
                    dest.copy_(reader._read_tensor(item))
                else:
                    set_element(target, path, reader._read_value(item))

    coord.run(read)


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated torch spelling of :func:`load` (``coordinator_rank`` must be 0)."""
    warnings.warn("load_state_dict is deprecated; use load", FutureWarning, stacklevel=2)
    if coordinator_rank != 0:
        raise NotImplementedError("ptcore's checkpoint coordinator is always rank 0")
    load(state_dict, storage_reader=storage_reader, process_group=process_group,
         no_dist=no_dist, planner=planner)
