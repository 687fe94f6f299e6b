"""The default save and load planners: which rank writes each item, and what a load may
leave out.  They are option holders that :func:`~ptcore.distributed.checkpoint.save` and
:func:`~ptcore.distributed.checkpoint.load` consult; ptcore has no custom-planner protocol
(``SavePlanner`` / ``LoadPlanner`` subclasses)."""
import warnings

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


def _only_flat(flatten_state_dict):
    if not flatten_state_dict:
        raise NotImplementedError(
            "flatten_state_dict=False would store nested containers of tensors as pickled "
            "objects, which ptcore's checkpoint format does not do")


class DefaultSavePlanner:
    """Plan a save: the state dict is flattened into dotted keys, and an item that several
    ranks hold (a replicated tensor or value, the same key on each) is written once.

    Args:
        flatten_state_dict: must be True (the default); see the note below.
        flatten_sharded_tensors: accepted for torch compatibility (ptcore has no sharded
            tensors, so there is nothing to flatten).
        dedup_replicated_tensors: deprecated in torch and without effect; accepted with a
            warning.
        dedup_save_to_lowest_rank: write each replicated item from the lowest rank holding
            it; by default (False), as torch, each goes to the holder with the fewest bytes
            planned so far, balancing the ranks' files.
        enable_plan_caching: accepted for torch compatibility (plans are cheap here).

    ``flatten_state_dict=False`` raises ``NotImplementedError``: torch would pickle nested
    containers of tensors, which ptcore's format never does.
    """

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False,
                 enable_plan_caching=False):
        _only_flat(flatten_state_dict)
        if dedup_replicated_tensors is not None:
            warnings.warn("DefaultSavePlanner's dedup_replicated_tensors argument is "
                          "deprecated and has no effect", stacklevel=2)
        self.flatten_state_dict = True
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.dedup_save_to_lowest_rank = bool(dedup_save_to_lowest_rank)
        self.enable_plan_caching = enable_plan_caching

    def _assign(self, plans):
        """``plans[r]`` lists ``(key, nbytes or None)`` that rank ``r`` holds; the set of
        keys each rank writes, every key once."""
        holders, sizes = {}, {}
        for rank, plan in enumerate(plans):
            for key, nbytes in plan:
                holders.setdefault(key, []).append(rank)
                sizes[key] = nbytes
        planned = [0] * len(plans)
        writes = [set() for _ in plans]
        for key, ranks in holders.items():
            if self.dedup_save_to_lowest_rank:
                chosen = min(ranks)
            else:
                chosen = min(ranks, key=lambda r: planned[r])
            planned[chosen] += sizes[key] or 1
            writes[chosen].add(key)
        return writes


class DefaultLoadPlanner:
    """Plan a load: the target state dict is flattened as at save time and each key is read
    from the checkpoint into it.

    Args:
        flatten_state_dict: must be True (the default), as for :class:`DefaultSavePlanner`.
        flatten_sharded_tensors: accepted for torch compatibility.
        allow_partial_load: when True, keys of the target that the checkpoint lacks are
            left as they are instead of failing the load.
    """

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 allow_partial_load=False):
        _only_flat(flatten_state_dict)
        self.flatten_state_dict = True
        self.flatten_sharded_tensors = flatten_sharded_tensors
        self.allow_partial_load = bool(allow_partial_load)

