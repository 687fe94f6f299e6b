"""One FSDP unit's flat parameter: flattening, sharding, gathering and gradient reduction.

The unit's parameters are concatenated (registration order) into one 1-D tensor, padded
with zeros to a multiple of the shard-group size; each rank keeps its contiguous
``1/world`` slice as the ``_flat_param`` Parameter the optimizer sees.  Before the unit's
forward, :class:`_Unshard` all-gathers the slices into the full flat tensor (cast to the
mixed-precision ``param_dtype``) and the original parameters are set on their modules as
views of it; its backward reduce-scatters the full gradient (sum, then divided by the group
size: the data-parallel average) back to the local slice, or all-reduces it for
``NO_SHARD``.  Under ``FULL_SHARD`` the tensors that autograd saves from the gathered
parameters are stored as (unit, shape, stride, offset) by a saved-tensors pack hook, so the
full tensor is freed after forward and gathered again when the unit's backward starts (a
hook on its outputs' gradients, which also sets the original parameters again for
activation-checkpointing recomputation); ``SHARD_GRAD_OP`` keeps the forward's.
"""
import ptcore
import ptcore.distributed as dist
from ptcore.autograd.function import Function
from ptcore.autograd.graph import saved_tensors_hooks
from ptcore.autograd.grad_mode import no_grad

from ptcore.distributed.fsdp.api import ShardingStrategy


_SHARDED = (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
            ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)
_RESHARD_AFTER_FORWARD = (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD)


class _ParamInfo:
    """Where one original parameter lives: its module/attribute names and its slice."""
    __slots__ = ("module", "name", "fqn", "shape", "numel", "offset", "param")

    def __init__(self, module, name, fqn, shape, numel, offset, param):
        self.module, self.name, self.fqn = module, name, fqn
        self.shape, self.numel, self.offset = shape, numel, offset
        self.param = param


class FlatParamHandle:
    """The flat parameter of one FSDP unit and the collectives on it."""

    def __init__(self, params, shared, pg, replicate_pg, strategy, mixed_precision,
                 use_orig_params=False):
        """``params``: list of (module, name, fqn, Parameter), unique; ``shared``: list of
        (module, name, fqn, index into params) for further references to the same tensor.
        With ``use_orig_params`` the original Parameters stay registered, as views of their
        part of the local shard (1-D, maybe empty) while sharded."""
        dtypes = {p.dtype for _, _, _, p in params}
        if len(dtypes) != 1:
            raise ValueError(f"FSDP requires uniform dtype of the parameters of one unit, got "
                             f"{sorted(str(d) for d in dtypes)}")
        grads = {p.requires_grad for _, _, _, p in params}
        if len(grads) != 1 and not use_orig_params:
            raise ValueError("FSDP with use_orig_params=False does not support a unit mixing "
                             "parameters with requires_grad=True and False (wrap them in "
                             "separate units or pass use_orig_params=True)")
        self.pg, self.replicate_pg, self.strategy = pg, replicate_pg, strategy
        self.world = dist.get_world_size(pg)
        self.rank = dist.get_rank(pg)
        self.sharded = strategy in _SHARDED and self.world > 1
        self.reshard_after_forward = strategy in _RESHARD_AFTER_FORWARD and self.sharded
        self.dtype = dtypes.pop()
        self.param_dtype = self.dtype
        self.reduce_dtype = self.dtype
        if mixed_precision is not None:
            if mixed_precision.param_dtype is not None:
                self.param_dtype = mixed_precision.param_dtype
            self.reduce_dtype = (mixed_precision.reduce_dtype
                                 if mixed_precision.reduce_dtype is not None
                                 else self.param_dtype)
        # as torch: with use_orig_params every parameter starts 16-byte aligned (in the
        # compute dtype) within the flat parameter
        align = 16 // ptcore.empty(0, dtype=self.param_dtype).element_size() \
            if use_orig_params else 1
        self.infos = []
        offset = 0
        for module, name, fqn, p in params:
            offset = -(-offset // align) * align
            self.infos.append(_ParamInfo(module, name, fqn, tuple(p.shape), p.numel(), offset,
                                         p))
            offset += p.numel()
        self.aliases = [(module, name, fqn, self.infos[i]) for module, name, fqn, i in shared]
        self.numel = offset
        world = self.world if self.sharded else 1
        self.padded_numel = -(-offset // world) * world
        self.shard_numel = self.padded_numel // world
        with no_grad():
            flat = ptcore.zeros(self.padded_numel, dtype=self.dtype)
            for info in self.infos:
                flat[info.offset:info.offset + info.numel] = info.param.detach().reshape(-1)
            start = self.rank * self.shard_numel if self.sharded else 0
            shard = flat[start:start + self.shard_numel].clone()
        self.flat_param = ptcore.nn.Parameter(shard, requires_grad=True in grads)
        self.use_orig = use_orig_params
        self.no_sync = False
        self._accum = None          # gradient of the full flat tensor kept under no_sync
        self._bwd_full = None       # the full tensor used by backward
        self._views_for_backward = False

    # ------------------------------------------------------------------ gather
    def gather(self, dtype=None):
        """The full flat tensor (padded), in ``dtype`` (default the compute dtype); no grad."""
        dtype = self.param_dtype if dtype is None else dtype
        with no_grad():
            src = self.flat_param.detach()
            if src.dtype != dtype:
                src = src.to(dtype)
            if not self.sharded:
                return src.clone() if src.dtype == self.dtype else src
            out = ptcore.empty(self.padded_numel, dtype=dtype)
            dist.all_gather_into_tensor(out, src.contiguous(), group=self.pg)
            return out

    def unshard(self):
        """The full flat tensor for forward: differentiable (its gradient is reduced back
        into the shard's ``grad``) when grad mode is on and the parameters require grad."""
        self._views_for_backward = False
        if ptcore.is_grad_enabled() and self.flat_param.requires_grad:
            return _Unshard.apply(self.flat_param, self)
        return self.gather()

    def full_for_backward(self):
        """The full flat tensor for the unit's backward: kept from forward
        (``SHARD_GRAD_OP``, ``NO_SHARD``) or gathered again (``FULL_SHARD``)."""
        if self._bwd_full is None:
            self._bwd_full = self.gather()
        return self._bwd_full

    def keep_for_backward(self, full):
        """After forward: keep the gathered parameters for backward unless resharding."""
        self._bwd_full = None if self.reshard_after_forward else full.detach()

    def pre_backward(self):
        """Before the unit's backward (a hook on its forward outputs): set the original
        parameters again, for code that reads them in backward (activation-checkpointing
        recomputation)."""
        if not self._views_for_backward:
            self._views_for_backward = True
            # requiring grad as in forward, so that a recomputation saves the same tensors
            with ptcore.enable_grad():
                self.set_views(self.full_for_backward().detach().requires_grad_(True))

    def write_back(self, full):
        """Copy this rank's slice of ``full`` (a gathered flat tensor) into the shard."""
        start = self.rank * self.shard_numel if self.sharded else 0
        with no_grad():
            self.flat_param.copy_(full[start:start + self.shard_numel])

    # ------------------------------------------------------------------ views
    def views(self, full):
        """(info, view of ``full``) for every original parameter."""
        return [(info, full[info.offset:info.offset + info.numel].view(info.shape))
                for info in self.infos]

    def set_views(self, full):
        """Set the original parameters on their modules as views of ``full`` (for forward:
        plain tensors through which autograd reaches the flat parameter)."""
        setter = _set_param_slot if self.use_orig else _set_plain_attr
        by_info = {}
        for info, v in self.views(full):
            by_info[id(info)] = v
            setter(info.module, info.name, v)
        for module, name, _, info in self.aliases:
            setter(module, name, by_info[id(info)])

    def local_range(self, info):
        """(start, stop) of ``info``'s elements within this rank's shard (stop >= start)."""
        base = self.rank * self.shard_numel if self.sharded else 0
        lo = min(max(info.offset - base, 0), self.shard_numel)
        hi = min(max(info.offset + info.numel - base, 0), self.shard_numel)
        return lo, hi

    def use_sharded_views(self):
        """``use_orig_params``: each original Parameter's data is its part of the local
        shard (the optimizer's in-place updates land in the flat parameter)."""
        flat = self.flat_param.detach()
        for info in self.infos:
            lo, hi = self.local_range(info)
            v = flat[lo:hi]
            info.param.data = v if self.sharded else v.view(info.shape)
        self.set_resting()

    def register_full_params(self, full):
        """``summon_full_params`` (flat parameters): register the original parameters again,
        as Parameters sharing ``full``'s memory, in their registration order."""
        params = {}
        for info, v in self.views(full):
            params[id(info)] = ptcore.nn.Parameter(v, requires_grad=info.param.requires_grad)
        slots = [(info.module, info.name, params[id(info)]) for info in self.infos]
        slots += [(module, name, params[id(info)]) for module, name, _, info in self.aliases]
        touched = {}
        for module, name, p in slots:
            module.__dict__.pop(name, None)
            touched.setdefault(id(module), (module, {}))[1][name] = p
        for module, new in touched.values():
            current = module._parameters
            order = module.__dict__.get("_fsdp_param_order", [])
            merged = {k: (current[k] if k in current else new[k])
                      for k in order if k in current or k in new}
            merged.update((k, v) for k, v in current.items() if k not in merged)
            current.clear()
            current.update(merged)

    def unregister_full_params(self):
        for info in self.infos:
            info.module._parameters.pop(info.name, None)
        for module, name, _, _ in self.aliases:
            module._parameters.pop(name, None)
        self.set_resting()

    def use_full_data(self, full):
        """``use_orig_params`` in ``summon_full_params``: the Parameters hold full views."""
        for info, v in self.views(full):
            info.param.data = v

    def set_resting(self):
        """Between uses: the original parameters as views of the flat parameter when it is
        not sharded, else as meta-device tensors of their shapes (as torch's views of a
        freed flat parameter, their shapes and dtypes can be read, their values cannot)."""
        if self.use_orig:
            for info in self.infos:
                _set_param_slot(info.module, info.name, info.param)
            for module, name, _, info in self.aliases:
                _set_param_slot(module, name, info.param)
        elif self.sharded:
            by_info = {}
            for info in self.infos:
                by_info[id(info)] = ptcore.empty(info.shape, dtype=self.dtype, device="meta")
                _set_plain_attr(info.module, info.name, by_info[id(info)])
            for module, name, _, info in self.aliases:
                _set_plain_attr(module, name, by_info[id(info)])
        else:
            self.set_views(self.flat_param.detach())

    # ------------------------------------------------------------------ backward
    def reduce_grad(self, grad):
        """The shard's gradient from the full flat gradient (None under ``no_sync``)."""
        self._bwd_full = None
        if self._views_for_backward:
            self._views_for_backward = False
            self.set_resting()
        with no_grad():
            g = grad.to(self.reduce_dtype).contiguous()
            if self._accum is not None:
                g = g + self._accum
                self._accum = None
            if self.no_sync:
                self._accum = g
                return None
            if self.sharded:
                out = ptcore.empty(self.shard_numel, dtype=self.reduce_dtype)
                dist.reduce_scatter_tensor(out, g, group=self.pg)
            else:
                out = g.clone() if g is grad else g
                if self.world > 1:
                    dist.all_reduce(out, group=self.pg)
            if self.world > 1:
                out.div_(self.world)
            if self.replicate_pg is not None and dist.get_world_size(self.replicate_pg) > 1:
                dist.all_reduce(out, group=self.replicate_pg)
                out.div_(dist.get_world_size(self.replicate_pg))
            out = out.to(self.dtype)
            if not self.use_orig:
                return out
            # use_orig_params: the gradient goes to the original Parameters' local parts
            for info in self.infos:
                lo, hi = self.local_range(info)
                if hi == lo or not info.param.requires_grad:
                    continue
                g = out[lo:hi] if self.sharded else out[lo:hi].view(info.shape)
                if info.param.grad is None:
                    info.param.grad = g.clone()
                else:
                    info.param.grad.add_(g)
            return None


def _set_plain_attr(module, name, value):
    """Set a tensor attribute that is not a registered parameter (``module.weight`` as a view
    of the gathered flat tensor)."""
    object.__setattr__(module, name, value)


def _set_param_slot(module, name, value):
    """Put ``value`` in the registered parameter's slot (a plain tensor during forward, the
    Parameter again afterwards), keeping the registration order."""
    module._parameters[name] = value


class _Unshard(Function):
    """All-gather in forward, reduce-scatter (or all-reduce) of the gradient in backward."""

    @staticmethod
    def forward(ctx, shard, handle):
        ctx.handle = handle
        return handle.gather()

    @staticmethod
    def backward(ctx, grad):
        return ctx.handle.reduce_grad(grad), None


# ---------------------------------------------------------------------------
# FULL_SHARD: store saved views of a gathered flat tensor by position, gather again in backward
# ---------------------------------------------------------------------------

_live = {}       # id(full flat tensor) -> (tensor, handle), for the units now in forward


class _SavedView:
    __slots__ = ("handle", "shape", "stride", "offset")

    def __init__(self, handle, t):
        self.handle = handle
        self.shape, self.stride, self.offset = tuple(t.shape), t.stride(), t.storage_offset()


def _pack(t):
    base = t._base if t._base is not None else t
    entry = _live.get(id(base))
    if entry is None or entry[0] is not base or t.dtype != base.dtype:
        return t
    return _SavedView(entry[1], t)


def _unpack(x):
    if isinstance(x, _SavedView):
        return x.handle.full_for_backward().as_strided(x.shape, x.stride, x.offset)
    return x


class reshard_after_forward:
    """Context for a unit's forward: the saved views of ``full`` are packed by position."""

    def __init__(self, handle, full):
        self.handle, self.full = handle, full
        self.hooks = saved_tensors_hooks(_pack, _unpack)

    def __enter__(self):
        _live[id(self.full)] = (self.full, self.handle)
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)
        _live.pop(id(self.full), None)
        return False
