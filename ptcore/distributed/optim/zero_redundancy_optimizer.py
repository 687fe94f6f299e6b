"""``ZeroRedundancyOptimizer``: optimizer state sharded over the ranks (ZeRO stage 1).

Every rank holds all parameters (and computes, or receives through DDP, the full averaged
gradients) but keeps optimizer state only for its *shard*: the parameters are partitioned
once, per parameter group, largest first, each going to the rank with the fewest elements so
far (torch's greedy partition).  ``step`` runs a local optimizer over the shard, then every
rank broadcasts its updated parameters to the others, so all ranks end with the same
parameters as one optimizer over all of them.

With ``parameters_as_bucket_view=True`` the parameters of each rank's shard are views into one
flat tensor per rank, and the broadcast sends that tensor in one message.
"""
import copy
import itertools
import warnings
from collections import defaultdict

import ptcore
import ptcore.distributed as dist
from ptcore.autograd.grad_mode import no_grad
from ptcore.distributed.algorithms.join import Join, Joinable, JoinHook
from ptcore.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


def _min_index(values):
    """Index of the first smallest value (torch's tie-break: the lowest rank)."""
    best = 0
    for i, v in enumerate(values):
        if v < values[best]:
            best = i
    return best


class _ZeROJoinHook(JoinHook):
    """On a joined rank, shadows the optimizer step: the local step of the rank's shard
    (with the gradients it has) and the parameter broadcasts."""

    def __init__(self, zero):
        if not isinstance(zero, ZeroRedundancyOptimizer):
            raise TypeError("the ZeRO join hook needs a ZeroRedundancyOptimizer")
        self.zero = zero

    def main_hook(self):
        # a joined rank must not notify the join context (it is not training any more)
        self.zero._step(closure=None, notify=False)


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wrap an optimizer class so that its state is sharded over the ranks of a process
    group (``torch.distributed.optim.ZeroRedundancyOptimizer``).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        All the parameters (or parameter groups), the same on every rank.
    optimizer_class : type
        The local optimizer (``ptcore.optim.SGD``, ``ptcore.optim.Adam``, ...), built over
        this rank's shard with ``**defaults``.
    process_group : ProcessGroup, optional
        The ranks that share the state (default: the world).
    parameters_as_bucket_view : bool
        Make the parameters of each rank's shard views into one flat tensor, broadcast in one
        message per rank.
    overlap_with_ddp : bool
        torch's overlap of the step with DDP's backward; not supported here (must be False).
    **defaults
        Options of the local optimizer (``lr``, ``momentum``, ...).

    Notes
    -----
    ``param_groups`` lists all parameters; its options are copied to the local optimizer at
    every step, so changing them (by hand or with an LR scheduler) takes effect.
    ``state_dict()`` needs ``consolidate_state_dict(to)`` first (called on every rank) and
    then works on rank ``to``; it is indexed like a single optimizer over all parameters.
    The optimizer is :class:`~ptcore.distributed.algorithms.join.Joinable`.
    """

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer: overlap_with_ddp=True (overlapping the step with "
                "DDP's backward through a communication hook) is not supported by ptcore; "
                "use overlap_with_ddp=False and call step() after backward")
        params = self._check_params(params)
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self._partition_cache = []
        self._owner_cache = {}
        self._index_cache = []
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank)
        self._default_device = self._all_params[0].device
        self._overlap_with_ddp = False
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self._trainable_mask = self._trainable()
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets = []
        self._build_param_buckets()
        self._all_state_dicts = []
        self.initialized = True

    # ------------------------------------------------------------------ parameters
    def _check_params(self, params):
        if isinstance(params, ptcore.Tensor):
            raise TypeError("params argument should be an iterable of Tensors or dicts, but "
                            f"got {ptcore.typename(params)}")
        try:
            items = list(params)
        except TypeError as e:
            raise TypeError("params argument should be an iterable of Tensors or dicts, but "
                            f"got {type(params).__name__}") from e
        if not items:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, ptcore.Tensor) for p in items):
            self._all_params = items
        elif all(isinstance(p, dict) for p in items):
            self._all_params = []
            for group in items:
                if "params" not in group:
                    raise ValueError("each parameter group passed in params must have a "
                                     "'params' key")
                ps = group["params"]
                self._all_params.extend([ps] if isinstance(ps, ptcore.Tensor) else ps)
        else:
            raise TypeError("params argument should be an iterable of Tensors or dicts")
        first = ptcore.typename(self._all_params[0])
        for p in self._all_params:
            if getattr(p, "is_sparse", False) or ptcore.typename(p) != first:
                raise ValueError("ZeroRedundancyOptimizer only supports parameters of one "
                                 f"dense type, got {first} and {ptcore.typename(p)}")
        return items

    def _trainable(self):
        return [bool(p.requires_grad) for p in self._all_params]

    def _clear_cache(self):
        self._partition_cache = []
        self._owner_cache = {}
        self._index_cache = []

    def _partition_parameters(self, params_per_rank=None):
        """Per rank, the list of its parameter groups (copies of ``param_groups``' options with
        the rank's parameters).  Without ``params_per_rank``, torch's greedy partition;
        with it (one list per rank, a single parameter group, before any partition) that
        assignment."""
        if params_per_rank is None:
            if not self._partition_cache:
                cache = [[] for _ in range(self.world_size)]
                sizes = [0] * self.world_size
                for group in self.param_groups:
                    mine = [[] for _ in range(self.world_size)]
                    for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                        r = _min_index(sizes)
                        mine[r].append(p)
                        sizes[r] += p.numel()
                    self._add_partitioned_group(cache, group, mine)
                self._partition_cache = cache
            return self._partition_cache
        if self._partition_cache:
            raise RuntimeError("params_per_rank can only be given before the parameters have "
                               "been partitioned")
        if len(self.param_groups) != 1:
            raise RuntimeError("params_per_rank only supports a single parameter group")
        if len(params_per_rank) != self.world_size:
            raise ValueError("params_per_rank must have one list per rank (the world size)")
        known = {id(p) for p in self._all_params}
        for ps in params_per_rank:
            for p in ps:
                if id(p) not in known:
                    raise ValueError("params_per_rank holds a parameter that was not given to "
                                     "the ZeroRedundancyOptimizer")
        cache = [[] for _ in range(self.world_size)]
        self._add_partitioned_group(cache, self.param_groups[0],
                                    [list(ps) for ps in params_per_rank])
        self._partition_cache = cache
        return cache

    @staticmethod
    def _add_partitioned_group(cache, group, params_per_rank):
        for r, ps in enumerate(params_per_rank):
            g = copy.copy(group)
            g["params"] = ps
            cache[r].append(g)

    @property
    def _param_to_rank(self):
        """``id(param) -> owning rank``."""
        if not self._owner_cache:
            for r, groups in enumerate(self._partition_parameters()):
                for g in groups:
                    for p in g["params"]:
                        self._owner_cache[id(p)] = r
        return self._owner_cache

    @property
    def _index_to_param(self):
        """All parameters in ``param_groups`` order (the global state-dict indices)."""
        if not self._index_cache:
            self._index_cache = list(itertools.chain.from_iterable(
                g["params"] for g in self.param_groups))
        return self._index_cache

    def _params_of_rank(self, rank):
        return [p for g in self._partition_parameters()[rank] for p in g["params"]]

    def _build_param_buckets(self):
        """With ``parameters_as_bucket_view``: one flat tensor per rank, its trainable
        parameters re-pointed to views of it (frozen ones get their own storage)."""
        if not self.parameters_as_bucket_view:
            return
        self._buckets = []
        with no_grad():
            for r in range(self.world_size):
                params = self._params_of_rank(r)
                trainable = [p for p in params if p.requires_grad]
                for p in params:
                    if not p.requires_grad:
                        p.data = p.data.detach().clone()
                total = sum(p.numel() for p in trainable)
                if total == 0:
                    self._buckets.append(ptcore.zeros(1, device=self._default_device))
                    continue
                bucket = ptcore.empty(total, dtype=trainable[0].dtype, device=trainable[0].device)
                off = 0
                for p in trainable:
                    n = p.numel()
                    view = bucket[off:off + n]
                    view.copy_(p.data.reshape(-1))
                    p.data = view.view(tuple(p.shape))
                    off += n
                self._buckets.append(bucket)

    # ------------------------------------------------------------------ groups
    @staticmethod
    def _sync_param_groups(src, dst):
        """Copy every option but ``params`` from the groups ``src`` to the groups ``dst``."""
        if len(src) != len(dst):
            raise RuntimeError("mismatched numbers of parameter groups")
        for s, d in zip(src, dst):
            for k, v in s.items():
                if k != "params":
                    d[k] = v

    def add_param_group(self, param_group):
        """Add a parameter group; it is partitioned over the ranks like the others (the
        earlier groups keep their owners)."""
        super().add_param_group(param_group)
        if self.initialized:
            self._clear_cache()
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])
            self._build_param_buckets()

    # ------------------------------------------------------------------ step
    def _sync_params(self):
        """Broadcast every rank's shard from its owner."""
        works = []
        for r in range(self.world_size):
            src = dist.get_global_rank(self.process_group, r)
            if self.parameters_as_bucket_view:
                tensors = [self._buckets[r]]
            else:
                tensors = [p.detach() for p in self._params_of_rank(r)]
            for t in tensors:
                works.append(dist.broadcast(t, src=src, group=self.process_group,
                                            async_op=True))
        for w in works:
            w.wait()

    def _step(self, closure, notify=True, **kwargs):
        if notify:
            work = Join.notify_join_context(self)
            if work is not None:
                work.wait()
        mask = self._trainable()
        if mask != self._trainable_mask:
            warnings.warn("ZeroRedundancyOptimizer: the trainable parameters changed; "
                          "rebuilding the parameter buckets", stacklevel=3)
            self._build_param_buckets()
            self._trainable_mask = mask
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        if closure is None:
            loss = self.optim.step(**kwargs)
        else:
            loss = self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._sync_params()
        return loss

    def step(self, closure=None, **kwargs):
        """Step the local optimizer over this rank's shard, then broadcast every shard so
        that all ranks hold the updated parameters.  Returns the closure's loss (or None)."""
        return self._step(closure, **kwargs)

    # ------------------------------------------------------------------ state dict
    def consolidate_state_dict(self, to=0):
        """Gather the local optimizers' state dicts on rank ``to`` (of the process group) so
        that :meth:`state_dict` works there; to be called on every rank."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        gathered = [None] * self.world_size if self.rank == to else None
        dist.gather_object(self.optim.state_dict(), gathered, group=self.process_group,
                           group_dst=to)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self):
        """The whole optimizer's state dict, indexed like one optimizer over all parameters
        (only on the rank given to :meth:`consolidate_state_dict`)."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Call "
                               f"consolidate_state_dict(to={self.rank}) on all ranks first "
                               "to gather the global state here.")
        sd = super().state_dict()
        index = {id(p): i for i, p in enumerate(self._index_to_param)}
        for r, local in enumerate(self._all_state_dicts):
            local_groups = local["param_groups"]
            global_groups = self._partition_parameters()[r]
            if len(local_groups) != len(global_groups):
                raise RuntimeError(f"rank {r}'s local optimizer has {len(local_groups)} "
                                   f"parameter groups, expected {len(global_groups)}")
            for lg, gg in zip(local_groups, global_groups):
                for li, p in zip(lg["params"], gg["params"]):
                    if li in local["state"]:
                        sd["state"][index[id(p)]] = local["state"][li]
        sd["state"] = dict(sorted(sd["state"].items()))
        return sd

    def load_state_dict(self, state_dict):
        """Load a (consolidated) state dict on every rank; each rank keeps the state of its
        own shard.  The given dict is not modified and its tensors are copied."""
        owner = self._param_to_rank
        params = self._index_to_param
        for i, value in state_dict["state"].items():
            p = params[i]
            if owner[id(p)] == self.rank:
                self.optim.state[p] = {
                    k: (v.detach().clone() if isinstance(v, ptcore.Tensor) and v.dim() == 0
                        else v.detach().to(device=p.device, copy=True)
                        if isinstance(v, ptcore.Tensor) else copy.deepcopy(v))
                    for k, v in value.items()}
        # the options of the groups; the state lives in the local optimizer only
        super().load_state_dict({"state": {}, "param_groups": state_dict["param_groups"]})
        self.state = defaultdict(dict)
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    # ------------------------------------------------------------------ Joinable
    def join_hook(self, **kwargs):
        """The hook that shadows :meth:`step` on a rank that ran out of inputs inside a
        :class:`~ptcore.distributed.algorithms.join.Join` context."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        """Device of the parameters (of the join context's bookkeeping)."""
        return self._default_device

    @property
    def join_process_group(self):
        """The optimizer's process group."""
        return self.process_group
