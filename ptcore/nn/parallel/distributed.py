"""``DistributedDataParallel``: data-parallel training over a ``ptcore.distributed`` group.

As torch's Reducer: parameters (and buffers) are broadcast from rank 0 at construction;
gradients are copied into flat buckets (about ``bucket_cap_mb`` each, parameters in reverse
registration order, roughly the order backward produces them) from post-accumulate-grad hooks,
and each bucket's averaging all-reduce is started, non-blocking, as soon as all its gradients
are in, while backward goes on computing the rest.  Buckets are launched in bucket order on
every rank (MPI requires the same order of collectives everywhere).  When the last bucket has
been launched, the hook waits for all of them and writes the averaged gradients back.

DDP is a ``Joinable`` (``ptcore.distributed.algorithms.join``): inside ``with ddp.join():`` (or
``Join([ddp, ...])``) a rank that runs out of inputs shadows the others' forward and backward
collectives (buffer broadcast, bucket all-reduces of zeros) until all ranks are done; then
every rank takes the parameters of a rank that joined last.
"""
import contextlib
import itertools
import warnings

import ptcore
from ptcore.autograd.grad_mode import no_grad
from ptcore.nn.modules.module import Module

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024       # torch's: a small first bucket starts early
_BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024


def _dist():
    # lazy: ptcore.distributed (sockets, process groups) loads with the first DDP, not ptcore.nn
    import ptcore.distributed as dist
    return dist


def _join():
    # lazy: as _dist (Join and its hooks are ptcore.distributed's)
    import ptcore.distributed.algorithms.join as join
    return join


class _Bucket:
    __slots__ = ("params", "offsets", "flat", "views", "pending", "work", "index")

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.offsets = list(itertools.accumulate([0] + [p.numel() for p in params]))
        self.flat = ptcore.zeros(self.offsets[-1], dtype=params[0].dtype)
        self.views = [self.flat[a:b].view(tuple(p.shape))
                      for p, a, b in zip(params, self.offsets, self.offsets[1:])]
        self.pending = len(params)
        self.work = None


def _coalesced_broadcast(tensors, pg, src=0):
    """Broadcast ``tensors`` from ``src`` in few large messages (one flat buffer per dtype)."""
    dist = _dist()
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    for dtype, group in by_dtype.items():
        chunk, size = [], 0
        for t in group + [None]:
            if t is None or (chunk and size + t.numel() * t.element_size() > _BROADCAST_BUCKET_BYTES):
                if chunk:
                    flat = ptcore.cat([c.detach().reshape(-1) for c in chunk])
                    dist.broadcast(flat, src=pg._ranks[src], group=pg)
                    off = 0
                    with no_grad():
                        for c in chunk:
                            c.copy_(flat[off:off + c.numel()].view(tuple(c.shape)))
                            off += c.numel()
                chunk, size = [], 0
            if t is not None:
                chunk.append(t)
                size += t.numel() * t.element_size()


class DistributedDataParallel(Module):
    """Data parallelism over processes (``torch.nn.parallel.DistributedDataParallel``).

    Parameters
    ----------
    module : Module
        The model, replicated on every rank.
    device_ids, output_device, dim : optional
        Accepted for torch parity (CPU modules take None).
    broadcast_buffers : bool
        Broadcast rank 0's buffers (batch-norm statistics) at every forward.
    process_group : ProcessGroup, optional
        Group to average over (default: the world).
    bucket_cap_mb : float, optional
        Bucket size in MiB (default 25; the first bucket is 1 MiB, as in torch).
    find_unused_parameters : bool
        Traverse the autograd graph after each forward and mark parameters that do not take
        part as ready, so that their buckets are still reduced.  A parameter that no rank used
        keeps its ``grad``.
    gradient_as_bucket_view : bool
        Make every ``param.grad`` a view into its bucket (saves a copy and the memory).

    Notes
    -----
    The processes must have been started by an MPI launcher and ``init_process_group`` called.
    ``no_sync()`` skips the all-reduce; gradients accumulate locally until the next synced
    backward.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        dist = _dist()
        if not dist.is_initialized():
            raise ValueError("DistributedDataParallel: Default process group has not been "
                               "initialized, please make sure to call init_process_group.")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be a ptcore.nn.Module, got "
                            f"{type(module).__name__}")
        unsupported = sorted(k for k, v in kwargs.items() if v not in (None, False))
        if unsupported:
            raise TypeError(f"DistributedDataParallel: unsupported arguments {unsupported}")
        self.module = module
        pg = process_group if process_group is not None else dist.group.WORLD
        object.__setattr__(self, "process_group", pg)
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._world = dist.get_world_size(pg)
        # names set by _set_params_and_buffers_to_ignore_for_model: neither
        # broadcast nor reduced
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        params = [p for n, p in module.named_parameters()
                  if p.requires_grad and n not in self.parameters_to_ignore]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        if init_sync:
            _coalesced_broadcast([t for n, t in list(module.named_parameters())
                                  + list(module.named_buffers())
                                  if n not in self.parameters_to_ignore], pg)
        self._buckets = self._make_buckets(params)
        self._where = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._params = params
        self._comm_hook = None          # (state, hook) of register_comm_hook
        self._armed = False          # a synced backward is expected
        self._in_backward = False
        self._ready = set()
        self._next_bucket = 0
        self._used = None
        join = _join()
        join.Joinable.register(DistributedDataParallel)
        self._join_config = join._JoinConfig.construct_disabled_join_config()

    def _set_static_graph(self):
        """Declare the graph static (as ``static_graph=True`` in the constructor)."""
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.",
                          stacklevel=2)
            return
        self.static_graph = True
        if self.find_unused_parameters:
            warnings.warn(
                "You passed find_unused_parameters=true to DistributedDataParallel, "
                "`_set_static_graph` will detect unused parameters automatically, so you do not "
                "need to set find_unused_parameters=true, just be sure these unused parameters "
                "will not change during training loop while calling `_set_static_graph`.",
                stacklevel=2)

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        """Before wrapping ``module``: the parameters and buffers (by qualified
        name) that DistributedDataParallel neither broadcasts nor reduces."""
        module._ddp_params_and_buffers_to_ignore = params_and_buffers_to_ignore
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if name in params_and_buffers_to_ignore:
                t._ddp_ignored = True

    # ------------------------------------------------------------------ buckets
    def _make_buckets(self, params):
        buckets, current, size, dtype = [], [], 0, None
        cap = min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (p.dtype != dtype or size + nbytes > cap):
                buckets.append(_Bucket(len(buckets), current))
                current, size = [], 0
                cap = self.bucket_bytes_cap
            current.append(p)
            size += nbytes
            dtype = p.dtype
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        dist = _dist()
        if self._armed and self._in_backward:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`ptcore.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss.")
        joining = self._join_config.enable
        if joining:
            work = _join().Join.notify_join_context(self)
            if work is not None:
                work.wait()
            # tell the joined ranks whether this iteration's backward all-reduces gradients
            self._any_rank(ptcore.is_grad_enabled() and self.require_backward_grad_sync)
        self._sync_buffers(joined=False)
        out = self.module(*inputs, **kwargs)
        if ptcore.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        else:
            self._armed = False
        del dist
        return out

    def _prepare_for_backward(self, out):
        self._armed = True
        self._in_backward = False
        self._ready = set()
        self._next_bucket = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        if self.find_unused_parameters:
            reached = _reachable_leaves(out)
            self._used = ptcore.zeros(len(self._params), dtype=ptcore.int32)
            unused = []
            for i, p in enumerate(self._params):
                if id(p) in reached:
                    self._used[i] = 1
                else:
                    unused.append(p)
            for p in unused:
                self._mark_ready(p, unused=True)

    # ------------------------------------------------------------------ backward
    def _grad_ready(self, p):
        if not self._armed or not self.require_backward_grad_sync:
            return
        self._in_backward = True
        self._mark_ready(p, unused=False)

    def _mark_ready(self, p, unused):
        if id(p) in self._ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by a "
                "parameter receiving two gradients in one iteration (for example backward run "
                "twice through the same graph) or by a parameter marked unused that did take "
                "part in the backward pass.")
        self._ready.add(id(p))
        b, i = self._where[id(p)]
        view = b.views[i]
        with no_grad():
            g = p.grad
            if unused or g is None:
                view.zero_()
            elif g is not view:
                if self.gradient_as_bucket_view:
                    view.copy_(g)
                    p.grad = view
                else:
                    view.copy_(g)
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self):
        dist = _dist()
        while self._next_bucket < len(self._buckets):
            b = self._buckets[self._next_bucket]
            if b.pending:
                return
            if self._comm_hook is not None:
                # the hook reduces (and averages) the bucket; its future gives the result
                state, hook = self._comm_hook
                b.work = hook(state, dist.GradBucket(b.index, b.flat, b.params, b.views,
                                                     b.index == len(self._buckets) - 1))
            else:
                with no_grad():
                    b.flat.div_(self._world)
                b.work = dist.all_reduce(b.flat, group=self.process_group, async_op=True)
            self._next_bucket += 1
        self._finalize()

    def _finalize(self):
        dist = _dist()
        used = None
        if self.find_unused_parameters:
            used = self._used
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.process_group)
        for b in self._buckets:
            res = b.work.wait()
            if self._comm_hook is not None:
                if isinstance(res, (list, tuple)) and len(res) == 1:
                    res = res[0]
                if not isinstance(res, ptcore.Tensor) or res.shape != b.flat.shape:
                    raise RuntimeError("a DDP communication hook's future must give the "
                                       f"bucket's tensor (shape {tuple(b.flat.shape)}), got "
                                       f"{type(res).__name__}")
                if res is not b.flat:
                    with no_grad():
                        b.flat.copy_(res)
            b.work = None
        with no_grad():
            k = 0
            index = {id(p): j for j, p in enumerate(self._params)}
            for b in self._buckets:
                for p, view in zip(b.params, b.views):
                    k += 1
                    if used is not None and not int(used[index[id(p)]]):
                        continue          # unused on every rank: grad left as it was
                    if self.gradient_as_bucket_view:
                        if p.grad is not view:
                            p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad.copy_(view)
        self._armed = False
        self._in_backward = False

    # ------------------------------------------------------------------ API
    def register_comm_hook(self, state, hook):
        """Reduce the gradient buckets with ``hook(state, bucket) -> Future`` (a
        :class:`ptcore.distributed.GradBucket`; the future's value is the reduced bucket
        tensor) instead of the built-in average all-reduce, as torch's; once, before the
        first backward (``ptcore.distributed.algorithms.ddp_comm_hooks.default_hooks``
        has torch's allreduce / fp16 / bf16 compression hooks)."""
        if not callable(hook):
            raise TypeError("register_comm_hook: hook must be callable")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self._comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside this context, backward accumulates gradients locally without all-reduce."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ------------------------------------------------------------------ uneven inputs (Join)
    def _any_rank(self, flag):
        """Whether ``flag`` holds on some rank (an all-reduce)."""
        t = ptcore.tensor([1 if flag else 0], dtype=ptcore.int32)
        _dist().all_reduce(t, group=self.process_group)
        return int(t.item()) > 0

    def _common_rank(self, candidate):
        """The highest group rank among those where ``candidate`` holds (an all-reduce)."""
        dist = _dist()
        t = ptcore.tensor([dist.get_rank(self.process_group) if candidate else -1],
                          dtype=ptcore.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(t.item())

    def _sync_buffers(self, joined):
        """Broadcast the buffers before a forward: from rank 0, or, inside a join context, from
        the highest rank still training (rank 0 may have joined with stale buffers)."""
        if not (self.require_forward_param_sync and self.broadcast_buffers and self._world > 1):
            return
        bufs = list(self.module.buffers())
        if bufs:
            src = self._common_rank(not joined) if self._join_config.enable else 0
            _coalesced_broadcast(bufs, self.process_group, src)

    def _shadow_iteration(self):
        """On a joined rank, the collectives of one forward and backward of the others: the
        buffer broadcast and, if they synchronise gradients, one all-reduce of zeros per
        bucket.  The reduced gradients are written to the parameters as in a backward."""
        sync_grads = self._any_rank(False)
        self._sync_buffers(joined=True)
        if not sync_grads:
            return
        self._armed = True
        self._in_backward = False
        self._ready = set()
        self._next_bucket = 0
        with no_grad():
            for b in self._buckets:
                b.flat.zero_()
                b.pending = 0
                b.work = None
        if self.find_unused_parameters:
            self._used = ptcore.zeros(len(self._params), dtype=ptcore.int32)
        self._launch_ready()

    def _sync_final_model(self, is_last_joiner):
        """Give every rank the parameters (and buffers) of the highest rank that joined last."""
        src = self._common_rank(is_last_joiner)
        tensors = list(self.module.parameters())
        if self.broadcast_buffers:
            tensors += list(self.module.buffers())
        _coalesced_broadcast(tensors, self.process_group, src)

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Context manager for uneven numbers of inputs per rank: a rank that finishes early
        shadows the others' collectives until all are done (``torch``'s ``DDP.join``,
        ``Join([self])``).  Gradients are always averaged over the initial world size
        (joined ranks contribute zeros)."""
        return _join().Join([self], enable, throw_on_early_termination,
                            divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The :class:`~ptcore.distributed.algorithms.join.JoinHook` that shadows this
        module's forward and backward on a joined rank and synchronises the final model."""
        if not kwargs.get("divide_by_initial_world_size", True):
            raise NotImplementedError(
                "DistributedDataParallel.join: divide_by_initial_world_size=False (averaging "
                "over the ranks still training) is not supported; gradients are averaged over "
                "the initial world size")
        ddp = self

        class _DDPJoinHook(_join().JoinHook):
            def main_hook(self):
                ddp._shadow_iteration()

            def post_hook(self, is_last_joiner):
                ddp._sync_final_model(is_last_joiner)
        return _DDPJoinHook()

    @property
    def join_device(self):
        """Device of the join context's bookkeeping (the parameters')."""
        return self._params[0].device

    @property
    def join_process_group(self):
        """The process group gradients are averaged over."""
        return self.process_group

    def _get_ddp_logging_data(self):
        return {"world_size": self._world, "bucket_cap_bytes": self.bucket_bytes_cap,
                "num_buckets": len(self._buckets)}


def _reachable_leaves(out):
    """ids of the leaf tensors reached by walking the autograd graph back from ``out``."""
    roots = []

    def collect(o):
        if isinstance(o, ptcore.Tensor):
            if o.grad_fn is not None:
                roots.append(o.grad_fn)
        elif isinstance(o, dict):
            for v in o.values():
                collect(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                collect(v)
    collect(out)
    seen, leaves, stack = set(), set(), roots
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        var = getattr(fn, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves
