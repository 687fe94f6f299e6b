"""``FullyShardedDataParallel`` (torch's FSDP1 API) on ``ptcore.distributed``.

Each FSDP instance is one unit: the parameters of its module that no nested FSDP unit (and
no ignored module) owns are flattened into one padded flat parameter, of which every rank
keeps a contiguous shard (see ``_flat_param``).  The optimizer is built on
``fsdp_model.parameters()``, the shards, and steps locally; the data-parallel math equals
one process training on the concatenated batch.
"""
import contextlib
import copy
import functools
from enum import Enum, auto

import ptcore
import ptcore.distributed as dist
from ptcore.autograd.grad_mode import no_grad
from ptcore.nn.modules.module import Module
from ptcore.nn.parallel.distributed import _coalesced_broadcast

import ptcore.distributed.fsdp._optim_state as _optim_state
import ptcore.distributed.fsdp._state_dict as _state_dict
from ptcore.distributed.fsdp._flat_param import FlatParamHandle, reshard_after_forward
from ptcore.distributed.fsdp.api import (
    BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
    LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision, OptimStateDictConfig,
    ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy, StateDictConfig,
    StateDictSettings, StateDictType,
)
from ptcore.distributed.fsdp.wrap import _recursive_wrap

__all__ = [
    "BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
    "FullyShardedDataParallel", "LocalOptimStateDictConfig", "LocalStateDictConfig",
    "MixedPrecision", "OptimStateDictConfig", "OptimStateKeyType", "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig", "ShardingStrategy", "StateDictConfig", "StateDictSettings",
    "StateDictType",
]

_HYBRID = (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)
_DEFAULT_CONFIGS = {
    StateDictType.FULL_STATE_DICT: (FullStateDictConfig, FullOptimStateDictConfig),
    StateDictType.LOCAL_STATE_DICT: (LocalStateDictConfig, LocalOptimStateDictConfig),
    StateDictType.SHARDED_STATE_DICT: (ShardedStateDictConfig, ShardedOptimStateDictConfig),
}


class OptimStateKeyType(Enum):
    """How an optimizer state dict names parameters: by name (FSDP's full optimizer state
    dicts) or by index (``Optimizer.state_dict``); see
    :meth:`FullyShardedDataParallel.rekey_optim_state_dict`."""
    PARAM_NAME = auto()
    PARAM_ID = auto()


def _process_groups(process_group, strategy, device_mesh):
    """(shard group, replicate group or None)."""
    if device_mesh is not None:
        if process_group is not None:
            raise ValueError("Cannot pass both process_group and device_mesh at the same time. "
                             "Please just pass only one of them.")
        if device_mesh.ndim == 1:
            return device_mesh.get_group(), None
        if device_mesh.ndim == 2 and strategy in _HYBRID:
            return device_mesh.get_group(1), device_mesh.get_group(0)
        raise ValueError(f"FSDP takes a 1-D device mesh (2-D for hybrid sharding), got "
                         f"{device_mesh.ndim}-D")
    if isinstance(process_group, tuple):
        if strategy not in _HYBRID or len(process_group) != 2:
            raise ValueError("a (shard_group, replicate_group) pair of process groups is for "
                             "ShardingStrategy.HYBRID_SHARD / _HYBRID_SHARD_ZERO2")
        return process_group
    return (process_group if process_group is not None else dist.group.WORLD), None


def _cast_inputs(dtype, obj):
    if isinstance(obj, ptcore.Tensor):
        return obj.to(dtype) if obj.is_floating_point() and obj.dtype != dtype else obj
    if isinstance(obj, tuple):
        return tuple(_cast_inputs(dtype, o) for o in obj)
    if isinstance(obj, list):
        return [_cast_inputs(dtype, o) for o in obj]
    if isinstance(obj, dict):
        return {k: _cast_inputs(dtype, v) for k, v in obj.items()}
    return obj


def _register_pre_backward(out, handle):
    """Hook the forward outputs' gradients: the first one to arrive starts the unit's
    backward (``handle.pre_backward``)."""
    def hook(grad):
        handle.pre_backward()

    def visit(o):
        if isinstance(o, ptcore.Tensor):
            if o.requires_grad:
                o.register_hook(hook)
        elif isinstance(o, (list, tuple)):
            for v in o:
                visit(v)
        elif isinstance(o, dict):
            for v in o.values():
                visit(v)
    visit(out)


class FullyShardedDataParallel(Module):
    """Fully sharded data parallelism (``torch.distributed.fsdp.FullyShardedDataParallel``).

    Parameters
    ----------
    module : Module
        The model; its parameters (those not in nested FSDP units or ignored modules) become
        this unit's sharded flat parameter ``_fsdp_wrapped_module._flat_param``.
    process_group : ProcessGroup or (ProcessGroup, ProcessGroup), optional
        Group to shard over (default the world); a (shard, replicate) pair for hybrid
        sharding.
    sharding_strategy : ShardingStrategy, optional
        Default ``FULL_SHARD``.  ``HYBRID_SHARD`` with the world group is ``FULL_SHARD``
        (one node).
    cpu_offload : CPUOffload, optional
        Accepted (ptcore computes on the CPU).
    auto_wrap_policy : callable or ModuleWrapPolicy, optional
        Wrap submodules in nested FSDP units (``ptcore.distributed.fsdp.wrap``).
    backward_prefetch, forward_prefetch, limit_all_gathers : optional
        Accepted for torch parity; ptcore's collectives run synchronously.
    mixed_precision : MixedPrecision, optional
        Gather parameters in ``param_dtype``, reduce gradients in ``reduce_dtype``; the
        shards stay in their dtype.
    ignored_modules, ignored_states : iterable, optional
        Modules (or parameters, for ``ignored_states``) left out of sharding: they stay
        ordinary parameters, replicated and not reduced.
    param_init_fn : callable, optional
        Called on each module of the unit that has meta-device parameters or buffers to
        materialize them (default: ``to_empty(device="cpu")`` and ``reset_parameters()``).
    device_id : optional
        Must be None or the CPU.
    sync_module_states : bool
        Broadcast rank 0's parameters and buffers before sharding.
    use_orig_params : bool
        False (default): ``parameters()`` yields the units' flat shards.  True: the original
        Parameters stay registered; each holds its part of the local shard (1-D, maybe
        empty) between uses and gets its part of the reduced gradient.
    device_mesh : DeviceMesh, optional
        1-D mesh to shard over (2-D: replicate over dim 0, shard over dim 1, for hybrid).

    Notes
    -----
    Build the optimizer on ``fsdp_model.parameters()`` after wrapping.  Outside forward
    and :meth:`summon_full_params` the original parameters of a sharded unit are
    meta-device tensors of their shapes (torch's are views of a freed flat parameter).
    """

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None,
                 device_mesh=None):
        super().__init__()
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        if not isinstance(module, Module):
            raise TypeError(f"FullyShardedDataParallel: module must be a ptcore.nn.Module, "
                            f"got {type(module).__name__}")
        if mixed_precision is not None and mixed_precision.keep_low_precision_grads:
            raise NotImplementedError("MixedPrecision(keep_low_precision_grads=True) is not "
                                      "supported by ptcore: gradients are cast back to the "
                                      "shards' dtype")
        if device_id is not None and ptcore.device(device_id).type != "cpu":
            raise ValueError(f"FullyShardedDataParallel: ptcore runs on the CPU, got "
                             f"device_id={device_id!r}")
        if ignored_modules is not None and ignored_states is not None:
            raise ValueError("Cannot pass both ignored_modules and ignored_states at the same "
                             "time. Please just pass ignored_states.")
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None \
            else sharding_strategy
        if not isinstance(strategy, ShardingStrategy):
            raise TypeError(f"sharding_strategy must be a ShardingStrategy, got {strategy!r}")
        ignored_mods, ignored_params = set(), {}
        for x in (ignored_modules or ignored_states or ()):
            if isinstance(x, FullyShardedDataParallel):
                raise ValueError("ignored_modules should not include FSDP modules")
            if isinstance(x, Module):
                for m in x.modules():
                    ignored_mods.add(m)
                    for p in m.parameters(recurse=False):
                        ignored_params[id(p)] = p
            elif isinstance(x, ptcore.Tensor):
                ignored_params[id(x)] = x
            else:
                raise TypeError(f"ignored_modules/ignored_states takes modules or parameters, "
                                f"got {type(x).__name__}")
        self._ignored_modules = ignored_mods
        self._ignored_params = ignored_params
        self._sharding_strategy = strategy
        self.process_group, self._replicate_pg = _process_groups(process_group, strategy,
                                                                 device_mesh)
        self.rank = dist.get_rank(self.process_group)
        self.world_size = dist.get_world_size(self.process_group)
        self.mixed_precision = mixed_precision
        self.cpu_offload = cpu_offload if cpu_offload is not None else CPUOffload()
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self._use_orig_params = bool(use_orig_params)

        if auto_wrap_policy is not None:
            if any(isinstance(m, FullyShardedDataParallel) for m in module.modules()):
                raise ValueError("FSDP auto wrapping requires modules to not already have FSDP "
                                 "applied but found one in the module")
            kwargs = dict(
                process_group=(self.process_group, self._replicate_pg)
                if strategy in _HYBRID and device_mesh is None else process_group,
                sharding_strategy=strategy, cpu_offload=cpu_offload,
                backward_prefetch=backward_prefetch, mixed_precision=mixed_precision,
                param_init_fn=param_init_fn, device_id=device_id,
                sync_module_states=sync_module_states, forward_prefetch=forward_prefetch,
                limit_all_gathers=limit_all_gathers, use_orig_params=use_orig_params,
                ignored_states=list(ignored_params.values()) or None, device_mesh=device_mesh)

            def wrap_fn(m, overrides):
                return FullyShardedDataParallel(m, **{**kwargs, **overrides})
            _recursive_wrap(module, auto_wrap_policy, wrap_fn, ignored_mods, ignored_params,
                            only_wrap_children=True)

        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m._is_root = False
        self._is_root = True
        self._lazy_done = False
        self._summoned = False

        # meta-device modules: param_init_fn(m), or to_empty + reset_parameters (as torch)
        for m in self._owned_modules(module):
            if any(t.is_meta for t in list(m.parameters(recurse=False)) +
                   list(m.buffers(recurse=False))):
                if param_init_fn is not None:
                    param_init_fn(m)
                else:
                    m.to_empty(device="cpu", recurse=False)
                    if callable(getattr(m, "reset_parameters", None)):
                        m.reset_parameters()
        params, shared, seen = [], [], {}
        for prefix, m in self._owned_modules(module, with_prefix=True):
            for name, p in m._parameters.items():
                if p is None or id(p) in ignored_params:
                    continue
                if p.is_meta:
                    raise RuntimeError(f"FSDP: parameter {prefix}{name} is still on the meta "
                                       f"device after param_init_fn")
                if id(p) in seen:
                    shared.append((m, name, prefix + name, seen[id(p)]))
                else:
                    seen[id(p)] = len(params)
                    params.append((m, name, prefix + name, p))
        if sync_module_states and self.world_size > 1:
            bufs = [b for _, m in self._owned_modules(module, with_prefix=True)
                    for b in m.buffers(recurse=False)]
            _coalesced_broadcast([p for _, _, _, p in params] + bufs, self.process_group)
        self._handle = None
        if params:
            self._handle = FlatParamHandle(params, shared, self.process_group,
                                           self._replicate_pg, strategy, mixed_precision,
                                           self._use_orig_params)
            if self._use_orig_params:
                self._handle.use_sharded_views()
            else:
                for m, name, _, _ in params + shared:
                    m.__dict__.setdefault("_fsdp_param_order", list(m._parameters))
                    del m._parameters[name]
                module.register_parameter("_flat_param", self._handle.flat_param)
                self._handle.set_resting()
        self._fsdp_wrapped_module = module
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config = FullStateDictConfig()
        self._optim_state_dict_config = FullOptimStateDictConfig()

    def _owned_modules(self, module, with_prefix=False):
        """The modules whose direct parameters belong to this unit: ``module``'s subtree,
        not entering nested FSDP units or ignored modules."""
        out, stack = [], [("", module)]
        while stack:
            prefix, m = stack.pop()
            if m in self._ignored_modules:
                continue
            out.append((prefix, m))
            for name, child in reversed(list(m._modules.items())):
                if child is not None and not isinstance(child, FullyShardedDataParallel):
                    stack.append((prefix + name + ".", child))
        return out if with_prefix else [m for _, m in out]

    # ------------------------------------------------------------------ module access
    @property
    def module(self):
        """The wrapped module."""
        return self._fsdp_wrapped_module

    @property
    def sharding_strategy(self):
        """This unit's :class:`ShardingStrategy`."""
        return self._sharding_strategy

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            wrapped = self.__dict__.get("_modules", {}).get("_fsdp_wrapped_module")
            if wrapped is None:
                raise
            return getattr(wrapped, name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module.__getitem__(key)

    # ------------------------------------------------------------------ forward
    def _lazy_init(self):
        self._lazy_done = True
        mp = self.mixed_precision
        if not (self._is_root and mp is not None and mp.buffer_dtype is not None):
            return
        with no_grad():
            for m in _state_dict._unwrap(self._fsdp_wrapped_module).modules():
                for name, b in list(m._buffers.items()):
                    if b is not None and b.is_floating_point() and b.dtype != mp.buffer_dtype:
                        m.__dict__.setdefault("_fsdp_buffer_dtypes", {})[name] = b.dtype
                        m._buffers[name] = b.to(mp.buffer_dtype)

    def forward(self, *args, **kwargs):
        """Gather this unit's parameters, run the wrapped module, reshard (the gradient of
        the gathered parameters is reduced into the shard in backward)."""
        if not self._lazy_done:
            self._lazy_init()
        mp = self.mixed_precision
        if mp is not None and mp.param_dtype is not None and (
                mp.cast_forward_inputs or (self._is_root and mp.cast_root_forward_inputs)):
            args = _cast_inputs(mp.param_dtype, args)
            kwargs = _cast_inputs(mp.param_dtype, kwargs)
        h = self._handle
        if h is None:
            return self._fsdp_wrapped_module(*args, **kwargs)
        full = h.unshard()
        h.set_views(full)
        try:
            if h.reshard_after_forward and full.requires_grad:
                with reshard_after_forward(h, full):
                    out = self._fsdp_wrapped_module(*args, **kwargs)
            else:
                out = self._fsdp_wrapped_module(*args, **kwargs)
        finally:
            h.set_resting()
        if full.requires_grad:
            h.keep_for_backward(full)
            _register_pre_backward(out, h)
        return out

    def apply(self, fn):
        """``fn`` on every submodule and then self (as ``Module.apply``), with the full
        parameters summoned and written back: initialization functions see and set the
        real parameters.  Collective on the root."""
        if not self._is_root or any(u._summoned for u in self.fsdp_modules(self)):
            return super().apply(fn)
        with self.summon_full_params(self, writeback=True):
            return super().apply(fn)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """As ``Module.named_parameters``; inside :meth:`summon_full_params` the names are
        the original ones, without the ``_fsdp_wrapped_module.`` components (as torch)."""
        clean = any(u._summoned for u in self.fsdp_modules(self))
        for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
            yield (_state_dict.clean_key(name) if clean else name), p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """As ``Module.named_buffers``; names cleaned inside :meth:`summon_full_params`."""
        clean = any(u._summoned for u in self.fsdp_modules(self))
        for name, b in super().named_buffers(prefix, recurse, remove_duplicate):
            yield (_state_dict.clean_key(name) if clean else name), b

    # ------------------------------------------------------------------ traversal
    @staticmethod
    def fsdp_modules(module, root_only=False):
        """The FSDP instances in ``module`` (itself included), in ``modules()`` order; with
        ``root_only`` only the outermost ones."""
        return [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)
                and (not root_only or m._is_root)]

    def _units(self):
        return [m for m in self.fsdp_modules(self) if m._handle is not None]

    # ------------------------------------------------------------------ no_sync
    @contextlib.contextmanager
    def no_sync(self):
        """Inside this context backward keeps the (unsharded) gradients locally; the next
        backward outside it reduces their sum.  Call on the root FSDP instance."""
        units = self._units()
        old = [u._handle.no_sync for u in units]
        for u in units:
            u._handle.no_sync = True
        try:
            yield
        finally:
            for u, o in zip(units, old):
                u._handle.no_sync = o

    # ------------------------------------------------------------------ full parameters
    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        """Set the full (gathered, unflattened) parameters on their modules for the duration
        of the context; in-place changes are written back to the shards on exit with
        ``writeback``.  Collective: every rank must enter it."""
        if with_grads:
            raise NotImplementedError(f"with_grads={with_grads}, use_orig_params=False is not "
                                      f"supported (as torch: it needs use_orig_params=True)")
        if rank0_only and writeback:
            raise NotImplementedError("writeback=True and rank0_only=True is not supported, as "
                                      "model parameter shapes will be different across ranks, "
                                      "and writing to them can lead to inconsistencies across "
                                      "ranks.")
        if recurse:
            units = [m for m in FullyShardedDataParallel.fsdp_modules(module)
                     if m._handle is not None]
        elif isinstance(module, FullyShardedDataParallel):
            units = [module] if module._handle is not None else []
        else:
            units = []
        fulls = []
        try:
            for u in units:
                u._summoned = True
                h = u._handle
                full = h.gather(h.dtype)
                keep = not rank0_only or dist.get_rank() == 0
                fulls.append(full if keep else None)
                if keep and h.use_orig:
                    h.use_full_data(full)
                elif keep:
                    # as torch: the original Parameters registered, the flat one not
                    u._fsdp_wrapped_module._parameters.pop("_flat_param", None)
                    h.register_full_params(full)
            yield
        finally:
            for u in units:
                u._summoned = False
            for u, full in zip(units, fulls):
                h = u._handle
                if full is not None and writeback:
                    h.write_back(full)
                if h.use_orig:
                    h.use_sharded_views()
                elif full is not None:
                    h.unregister_full_params()
                    u._fsdp_wrapped_module._parameters["_flat_param"] = h.flat_param

    # ------------------------------------------------------------------ state dicts
    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
        """Set the state-dict type (and configurations) of every FSDP instance in
        ``module``; returns the previous :class:`StateDictSettings`."""
        if not isinstance(state_dict_type, StateDictType):
            raise TypeError(f"state_dict_type must be a StateDictType, got {state_dict_type!r}")
        cfg_cls, optim_cls = _DEFAULT_CONFIGS[state_dict_type]
        cfg = state_dict_config if state_dict_config is not None else cfg_cls()
        ocfg = optim_state_dict_config if optim_state_dict_config is not None else optim_cls()
        if not isinstance(cfg, cfg_cls):
            raise RuntimeError(f"Expected state_config of type {cfg_cls.__name__} but got "
                               f"{type(cfg).__name__}")
        if not isinstance(ocfg, optim_cls):
            raise RuntimeError(f"Expected optim_state_config of type {optim_cls.__name__} but "
                               f"got {type(ocfg).__name__}")
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("set_state_dict_type: no FSDP instance in the module")
        prev = FullyShardedDataParallel.get_state_dict_type(module)
        for u in units:
            u._state_dict_type = state_dict_type
            u._state_dict_config = cfg
            u._optim_state_dict_config = ocfg
        return prev

    @staticmethod
    def get_state_dict_type(module):
        """The :class:`StateDictSettings` of the FSDP instances in ``module`` (which must
        agree)."""
        units = FullyShardedDataParallel.fsdp_modules(module)
        if not units:
            raise ValueError("get_state_dict_type: no FSDP instance in the module")
        u = units[0]
        for v in units[1:]:
            if (v._state_dict_type, v._state_dict_config, v._optim_state_dict_config) != \
                    (u._state_dict_type, u._state_dict_config, u._optim_state_dict_config):
                raise AssertionError("All FSDP modules must have the same state_dict settings.")
        return StateDictSettings(u._state_dict_type, u._state_dict_config,
                                 u._optim_state_dict_config)

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        """Within the context ``state_dict()`` / ``load_state_dict()`` of the FSDP instances
        in ``module`` use ``state_dict_type``."""
        prev = FullyShardedDataParallel.set_state_dict_type(
            module, state_dict_type, state_dict_config, optim_state_dict_config)
        try:
            yield
        finally:
            FullyShardedDataParallel.set_state_dict_type(
                module, prev.state_dict_type, prev.state_dict_config,
                prev.optim_state_dict_config)

    def _check_state_dict_type(self):
        if self._state_dict_type == StateDictType.SHARDED_STATE_DICT:
            raise NotImplementedError("StateDictType.SHARDED_STATE_DICT needs ShardedTensor / "
                                      "DTensor, which ptcore does not have; use "
                                      "FULL_STATE_DICT or LOCAL_STATE_DICT")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """The state dict of the configured :class:`StateDictType` (default
        ``FULL_STATE_DICT``: the full tensors under the unwrapped model's names).
        Collective: every rank must call it."""
        self._check_state_dict_type()
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            sd = _state_dict.local_state_dict(self, prefix, keep_vars)
        else:
            rank0_only = getattr(self._state_dict_config, "rank0_only", False)
            with self.summon_full_params(self, writeback=False, rank0_only=rank0_only):
                sd = _state_dict.full_state_dict(self, prefix, keep_vars)
            if rank0_only and dist.get_rank() != 0:
                sd = type(sd)()
        if destination is not None:
            destination.update(sd)
            return destination
        return sd

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Load a state dict of the configured :class:`StateDictType` (a full state dict
        by default: every rank passes the full tensors).  Collective."""
        self._check_state_dict_type()
        if assign:
            raise NotImplementedError("FSDP load_state_dict(assign=True) is not supported")
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            return _state_dict.load_local_state_dict(self, state_dict, strict)
        with self.summon_full_params(self, writeback=True):
            return _state_dict.load_full_state_dict(self, state_dict, strict)

    # ------------------------------------------------------------------ optimizer state
    @staticmethod
    def full_optim_state_dict(model, optim, optim_input=None, rank0_only=True, group=None):
        """The optimizer's state for the full model: ``{"state": {name: {...}},
        "param_groups": [{..., "params": [name, ...]}]}`` keyed by the original parameter
        names, per-element state in the original shapes.  Collective; with ``rank0_only``
        the other ranks get ``{}``."""
        if optim_input is not None:
            raise NotImplementedError("optim_input is deprecated in torch and not supported; "
                                      "pass the optimizer")
        return _optim_state.full_optim_state_dict(model, optim, rank0_only)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """The optimizer state dict in the form of ``model``'s state-dict type (only
        ``FULL_STATE_DICT``: as :meth:`full_optim_state_dict`, on every rank unless the
        ``FullOptimStateDictConfig`` says ``rank0_only``).  Collective."""
        settings = FullyShardedDataParallel.get_state_dict_type(model)
        if settings.state_dict_type != StateDictType.FULL_STATE_DICT:
            raise NotImplementedError(f"optim_state_dict: only FULL_STATE_DICT is supported by "
                                      f"ptcore, got {settings.state_dict_type}")
        rank0_only = getattr(settings.optim_state_dict_config, "rank0_only", False)
        return _optim_state.full_optim_state_dict(model, optim, rank0_only)

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                                 load_directly=False, group=None):
        """Turn a full optimizer state dict (keyed by parameter names, as
        :meth:`optim_state_dict` gives) into this rank's state dict for ``optim`` (its flat
        shards); with ``load_directly`` load it into ``optim`` and return None."""
        if is_named_optimizer:
            raise NotImplementedError("is_named_optimizer=True is not supported")
        osd = _optim_state.sharded_optim_state_dict(
            model, [g["params"] for g in optim.param_groups], optim_state_dict)
        if load_directly:
            optim.load_state_dict(osd)
            return None
        return osd

    @staticmethod
    def shard_full_optim_state_dict(full_optim_state_dict, model, optim_input=None,
                                    optim=None):
        """This rank's part of a full optimizer state dict, for an optimizer built on
        ``model.parameters()`` (or on ``optim``'s param groups)."""
        groups = [g["params"] for g in optim.param_groups] if optim is not None \
            else [list(model.parameters())]
        return _optim_state.sharded_optim_state_dict(model, groups, full_optim_state_dict)

    @staticmethod
    def scatter_full_optim_state_dict(full_optim_state_dict, model, optim_input=None,
                                      optim=None, group=None):
        """As :meth:`shard_full_optim_state_dict`, with the full state dict given on rank 0
        only (the other ranks pass None).  Collective."""
        box = [full_optim_state_dict if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(box, src=0)
        return FullyShardedDataParallel.shard_full_optim_state_dict(box[0], model,
                                                                    optim=optim)

    @staticmethod
    def rekey_optim_state_dict(optim_state_dict, optim_state_key_type, model,
                               optim_input=None, optim=None):
        """Re-key an optimizer state dict between parameter names and indices: a full
        optimizer state dict of an FSDP model to ``PARAM_ID`` for the unwrapped ``model``'s
        optimizer, or an unwrapped optimizer's state dict to ``PARAM_NAME`` (then
        :meth:`shard_full_optim_state_dict` for the FSDP model).  The indices follow
        ``optim``'s parameters, or ``model.parameters()``."""
        if not isinstance(optim_state_key_type, OptimStateKeyType):
            raise AssertionError(f"Expected optim_state_key_type to be PARAM_NAME or PARAM_ID, "
                                 f"got {optim_state_key_type}")
        if optim_input is not None:
            raise NotImplementedError("optim_input is deprecated in torch and not supported; "
                                      "pass optim")
        keys = list(optim_state_dict["state"])
        if not (all(type(k) is str for k in keys) or all(type(k) is int for k in keys)):
            raise ValueError(f"Invalid parameter keys: {optim_state_dict['state'].keys()}")
        by_name = optim_state_key_type == OptimStateKeyType.PARAM_NAME
        if keys and (type(keys[0]) is str) == by_name:
            return optim_state_dict
        order = [p for g in optim.param_groups for p in g["params"]] if optim is not None \
            else list(model.parameters())
        names = {id(p): _state_dict.clean_key(n) for n, p in model.named_parameters()}
        id_to_name = [names[id(p)] for p in order]
        new_key = id_to_name.__getitem__ if by_name else \
            {name: i for i, name in enumerate(id_to_name)}.__getitem__
        groups = copy.deepcopy(optim_state_dict["param_groups"])
        for g in groups:
            g["params"] = sorted(new_key(k) for k in g["params"])
        return {"state": {new_key(k): v for k, v in optim_state_dict["state"].items()},
                "param_groups": groups}

    # ------------------------------------------------------------------ gradients
    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Clip the gradients of all the shards by their global norm (over every rank);
        returns the total norm.  Collective; call on the root FSDP instance."""
        if not self._is_root:
            raise RuntimeError("`clip_grad_norm_()` should only be called on the root FSDP "
                               "instance")
        norm_type = float(norm_type)
        sharded, local = [], []
        flat_ids = {}
        for u in self._units():
            h = u._handle
            flat_ids[id(h.flat_param)] = h
            for info in h.infos if h.use_orig else ():
                flat_ids[id(info.param)] = h
        for p in self.parameters():
            if p.grad is None:
                continue
            h = flat_ids.get(id(p))
            (sharded if h is not None and h.sharded else local).append(p.grad.detach())
        grads = sharded + local
        dtype = functools.reduce(ptcore.promote_types, [g.dtype for g in grads]) if grads \
            else ptcore.get_default_dtype()
        with no_grad():
            def part(gs):
                if not gs:
                    return ptcore.zeros((), dtype=ptcore.float64)
                norms = ptcore.stack([ptcore.linalg.vector_norm(g.reshape(-1), norm_type)
                                      .to(ptcore.float64) for g in gs])
                if norm_type == float("inf"):
                    return norms.max()
                return (norms ** norm_type).sum()
            s, loc = part(sharded), part(local)
            if norm_type == float("inf"):
                dist.all_reduce(s, op=dist.ReduceOp.MAX, group=self.process_group)
                total = ptcore.maximum(s, loc)
            else:
                dist.all_reduce(s, group=self.process_group)
                total = (s + loc) ** (1.0 / norm_type)
            coef = float(max_norm) / (float(total) + 1e-6)
            if coef < 1.0:
                for p in self.parameters():
                    if p.grad is not None:
                        p.grad.mul_(coef)
        return total.to(dtype)

    # ------------------------------------------------------------------ repr
    def extra_repr(self):
        """Nothing besides the wrapped module (as torch's repr)."""
        return ""
