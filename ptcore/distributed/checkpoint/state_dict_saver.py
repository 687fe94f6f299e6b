"""``save`` / ``async_save``: every rank passes its state dict; tensors and values that
several ranks hold under the same key are written once."""
import concurrent.futures
import warnings

import ptcore
import ptcore.distributed as dist
import ptcore.distributed.checkpoint._values as _values
from ptcore.distributed.checkpoint._coordination import Coordinator
from ptcore.distributed.checkpoint._traverse import flatten
from ptcore.distributed.checkpoint.default_planner import DefaultSavePlanner
from ptcore.distributed.checkpoint.filesystem import FileSystemWriter, metadata_from_items

__all__ = ["async_save", "save", "save_state_dict"]


def resolve_no_dist(no_dist, action):
    """``no_dist``, or True (with torch's warning) when no process group is initialized."""
    if no_dist:
        return True
    if not dist.is_available() or not dist.is_initialized():
        warnings.warn(f"ptcore.distributed is unavailable or uninitialized, assuming the "
                      f"intent is to {action} in a single process.", stacklevel=3)
        return True
    return False


def resolve_storage(storage, checkpoint_id, cls):
    """The storage to use: ``storage`` (moved to ``checkpoint_id`` when given), else a
    ``cls`` on ``checkpoint_id``."""
    if storage is not None:
        if checkpoint_id is not None:
            storage.reset(checkpoint_id)
        return storage
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if "
                           "storage_reader/storage_writer is None.")
    if not cls.validate_checkpoint_id(checkpoint_id):
        raise RuntimeError(f"Cannot use {checkpoint_id!r} as a checkpoint directory; "
                           f"pass a storage_reader/storage_writer.")
    return cls(checkpoint_id)


def is_stateful(obj):
    """Whether ``obj`` has ``state_dict`` and ``load_state_dict`` (torch's ``Stateful``)."""
    return callable(getattr(obj, "state_dict", None)) and \
        callable(getattr(obj, "load_state_dict", None))


def _check(obj, cls, what):
    if not isinstance(obj, cls):
        raise TypeError(f"{what} must be a ptcore {cls.__name__}, got {type(obj).__name__}")


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False):
    """Save ``state_dict`` (nested dicts/lists of tensors and plain values) in SPMD style:
    every rank of ``process_group`` calls it with its own state dict.

    Each tensor or value is stored under its flattened key (``"model.layer.weight"``,
    ``"optim.param_groups.0.lr"``); a key that several ranks hold is written once (see
    :class:`~ptcore.distributed.checkpoint.DefaultSavePlanner`).  Top-level values with
    ``state_dict()``/``load_state_dict()`` (modules, optimizers) are saved through their
    ``state_dict()``.  Without an initialized process group, or with ``no_dist=True``, the
    process saves alone.  ``checkpoint_id`` is the checkpoint directory (or pass a
    :class:`~ptcore.distributed.checkpoint.FileSystemWriter`).  Returns the checkpoint's
    :class:`~ptcore.distributed.checkpoint.metadata.Metadata`.  A failure on any rank
    raises :class:`~ptcore.distributed.checkpoint.CheckpointException` on every rank.

    Non-tensor values must be ``None``, bools, numbers, strings, dtypes, devices or
    lists/tuples/dicts of these (they are stored as JSON, never pickled).
    """
    no_dist = resolve_no_dist(no_dist, "save")
    writer = resolve_storage(storage_writer, checkpoint_id, FileSystemWriter)
    _check(writer, FileSystemWriter, "storage_writer")
    planner = DefaultSavePlanner() if planner is None else planner
    _check(planner, DefaultSavePlanner, "planner")
    coord = Coordinator(process_group, no_dist)
    state_dict = {k: (v.state_dict() if is_stateful(v) else v) for k, v in state_dict.items()}

    def local_plan():
        writer._prepare()
        flat, _ = flatten(state_dict)
        plan, values = [], {}
        for key, value in flat.items():
            if isinstance(value, ptcore.Tensor):
                plan.append((key, value.numel() * value.element_size()))
            else:
                values[key] = _values.encode(value, key)
                plan.append((key, None))
        return flat, values, plan

    flat, values, plan = coord.run(local_plan)
    mine = planner._assign(coord.all_gather(plan))[coord.rank]

    def write():
        tensors = [(k, v) for k, v in flat.items() if k in mine and k not in values]
        items = {k: {"tensor": rec} for k, rec in writer._write(coord.rank, tensors).items()}
        items.update({k: {"value": values[k]} for k in flat if k in mine and k in values})
        return items

    per_rank = coord.run(write, gather=True)
    merged = {}
    for items in per_rank:
        merged.update(items)
    coord.run(lambda: writer._finish(merged) if coord.is_coordinator else None)
    return metadata_from_items(merged)


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None, no_dist=False):
    """:func:`save`, returning a ``concurrent.futures.Future`` of its result.

    ptcore saves synchronously: the checkpoint is complete when this returns, and the
    future is already done (holding the metadata, or the exception the save raised)."""
    future = concurrent.futures.Future()
    try:
        future.set_result(save(state_dict, checkpoint_id=checkpoint_id,
                               storage_writer=storage_writer, planner=planner,
                               process_group=process_group, no_dist=no_dist))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # CheckpointException derives from BaseException
        future.set_exception(exc)
    return future


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated torch spelling of :func:`save` (``coordinator_rank`` must be 0)."""
    warnings.warn("save_state_dict is deprecated; use save", FutureWarning, stacklevel=2)
    if coordinator_rank != 0:
        raise NotImplementedError("ptcore's checkpoint coordinator is always rank 0")
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                no_dist=no_dist, planner=planner)
