"""Model and optimizer state dicts keyed by parameter names, whatever wraps the model
(``torch.distributed.checkpoint.state_dict``).

:func:`get_state_dict` gives the model's state dict under its original names (without the
``module.`` of DistributedDataParallel, FSDP's ``_fsdp_wrapped_module.`` or
``_orig_mod.``) and the optimizers' state keyed by those names instead of parameter
indices; :func:`set_state_dict` loads such state dicts back.  Together with
:func:`ptcore.distributed.checkpoint.save` / :func:`~ptcore.distributed.checkpoint.load`
they checkpoint plain, DDP and FSDP models alike.

FSDP models give their *full* state dict (FSDP's ``FULL_STATE_DICT``) whatever
``full_state_dict`` says: torch would give sharded DTensors when it is False, which ptcore
does not have; the full tensors are the same on every rank, so a DCP checkpoint writes
each once.
"""
import dataclasses

import ptcore
import ptcore.distributed as dist
from ptcore.distributed.checkpoint._traverse import flatten, set_element
from ptcore.distributed.checkpoint._values import dtype_by_name, dtype_name
from ptcore.distributed.fsdp import (FullOptimStateDictConfig, FullStateDictConfig,
                                     FullyShardedDataParallel, StateDictType)
from ptcore.distributed.fsdp._optim_state import _handles_by_flat
from ptcore.nn.modules.module import _IncompatibleKeys
from ptcore.nn.parallel import DataParallel, DistributedDataParallel

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]

_STATE, _PG, _PARAMS = "state", "param_groups", "params"
_SKIPPED = ("_fsdp_wrapped_module", "_orig_mod", "_checkpoint_wrapped_module")


@dataclasses.dataclass
class StateDictOptions:
    """How :func:`get_state_dict` / :func:`set_state_dict` work.

    - ``full_state_dict``: give full tensors (ptcore's tensors are always full; for FSDP the
      full state dict is given either way).
    - ``cpu_offload``: move the tensors to the CPU; together with ``full_state_dict``, only
      rank 0 gets the state dict and the other ranks an empty one (as torch).
    - ``ignore_frozen_params``: leave out parameters with ``requires_grad=False``.
    - ``keep_submodule_prefixes``: with ``submodules``, keep the submodules' prefixes in
      the keys (deprecated in torch).
    - ``strict``: the ``strict`` of the model's ``load_state_dict``; for optimizers, a
      trainable parameter without saved state is an error.
    - ``broadcast_from_rank0``: the ``set_*`` functions take the state dict of rank 0 (the
      other ranks may pass empty ones) and broadcast it; needs ``full_state_dict``.
    - ``flatten_optimizer_state_dict``: optimizer state dicts as one flat mapping
      (``"state.<fqn>.exp_avg"``, ``"param_groups.<fqn>.lr"``).
    """
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _options(options):
    options = StateDictOptions() if options is None else options
    if not isinstance(options, StateDictOptions):
        raise TypeError(f"options must be a StateDictOptions, got {type(options).__name__}")
    if options.broadcast_from_rank0 and not options.full_state_dict:
        raise ValueError("full_state_dict must be True when broadcast_from_rank0 is True.")
    return options


def _optimizers(optimizers):
    if isinstance(optimizers, ptcore.optim.Optimizer):
        return (optimizers,)
    return tuple(optimizers)


def _has_fsdp(model):
    return any(isinstance(m, FullyShardedDataParallel) for m in model.modules())


def _is_ddp_like(module):
    return isinstance(module, (DataParallel, DistributedDataParallel))


def _clean_key(model, key):
    """``key`` of ``model``'s state dict without the wrappers' components."""
    out, module = [], model
    for atom in key.split("."):
        while isinstance(module, FullyShardedDataParallel):
            module = module._fsdp_wrapped_module
        if atom in _SKIPPED or (atom == "module" and _is_ddp_like(module)):
            module = module._modules.get(atom) if module is not None else None
            continue
        out.append(atom)
        module = module._modules.get(atom) if module is not None else None
    return ".".join(out)


def _full_context(model, options):
    """FSDP's FULL_STATE_DICT for the FSDP units in ``model`` (every rank gets it)."""
    import contextlib
    if not _has_fsdp(model):
        return contextlib.nullcontext()
    return FullyShardedDataParallel.state_dict_type(
        model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=False),
        FullOptimStateDictConfig(rank0_only=False))


def _finish(state_dict, options):
    """Apply ``cpu_offload`` (and, with ``full_state_dict``, rank 0 only)."""
    if not options.cpu_offload:
        return state_dict
    if options.full_state_dict and dist.is_initialized() and dist.get_rank() != 0:
        return {}
    return _map_tensors(state_dict, lambda t: t.cpu())


def _map_tensors(obj, fn):
    if isinstance(obj, ptcore.Tensor):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_map_tensors(v, fn) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_map_tensors(v, fn) for v in obj)
    return obj


# ---------------------------------------------------------------------------- model
def get_model_state_dict(model, *, submodules=None, options=None):
    """The state dict of ``model`` under its original parameter and buffer names (for DDP
    without ``module.``; for FSDP the full state dict).  Collective for FSDP models.

    ``submodules`` (deprecated in torch) keeps only the entries of those submodules."""
    options = _options(options)
    with _full_context(model, options):
        raw = model.state_dict()
    state_dict = {_clean_key(model, k): v for k, v in raw.items()}
    if submodules:
        prefixes = [_clean_key(model, name) + "." for name, m in model.named_modules()
                    if m in set(submodules)]
        kept = {}
        for fqn, value in state_dict.items():
            for prefix in prefixes:
                if fqn.startswith(prefix):
                    kept[fqn if options.keep_submodule_prefixes else fqn[len(prefix):]] = value
        state_dict = kept
    if options.ignore_frozen_params:
        for fqns, p in _param_fqns(model).values():
            if not p.requires_grad:
                for fqn in fqns:
                    state_dict.pop(fqn, None)
    return _finish(state_dict, options)


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load a state dict keyed as :func:`get_model_state_dict` gives into ``model``;
    returns ``model.load_state_dict``'s missing/unexpected keys (``strict`` from the
    options)."""
    options = _options(options)
    if options.broadcast_from_rank0:
        model_state_dict = _broadcast_from_rank0(model_state_dict)
    if not model_state_dict:
        return _IncompatibleKeys([], [])
    if _has_fsdp(model):
        with _full_context(model, options):
            return model.load_state_dict(dict(model_state_dict), strict=options.strict)
    raw_of = {_clean_key(model, k): k for k in model.state_dict(keep_vars=True)}
    state_dict = {raw_of.get(k, k): v for k, v in model_state_dict.items()}
    return model.load_state_dict(state_dict, strict=options.strict)


# ---------------------------------------------------------------------------- optimizer
def _param_fqns(model):
    """``id(parameter) -> (names, parameter)``: for FSDP's flat parameters the original
    names of all the parameters flattened into it."""
    out = {}
    if _has_fsdp(model):
        for h, prefix in _handles_by_flat(model).values():
            out[id(h.flat_param)] = ([prefix + info.fqn for info in h.infos], h.flat_param)
    for name, p in model.named_parameters():
        if id(p) not in out:
            out[id(p)] = ([_clean_key(model, name)], p)
    return out


def _init_optim_state(optim):
    """Create the optimizer's state (as torch: one step on zero gradients with the
    learning rate set to 0) so that it can be saved or loaded into."""
    if optim.state:
        return
    params = [p for g in optim.param_groups for p in g[_PARAMS]]
    if any(p.grad is not None for p in params):
        return
    for p in params:
        if p.requires_grad:
            p.grad = ptcore.zeros_like(p)
    lrs = []
    for group in optim.param_groups:
        if "lr" in group:
            lrs.append(group["lr"])
            group["lr"] = ptcore.tensor(0.0) if isinstance(group["lr"], ptcore.Tensor) else 0.0
    optim.step()
    for group in optim.param_groups:
        if "lr" in group:
            group["lr"] = lrs.pop(0)
    optim.zero_grad(set_to_none=True)


def _fqn_of(fqns, p):
    entry = fqns.get(id(p))
    if entry is None:
        raise KeyError("the optimizer holds a parameter that is not in the model")
    return entry[0][0]


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The state of ``optimizers`` (one or several over ``model``'s parameters) as one
    state dict keyed by parameter names: ``{"state": {fqn: {...}}, "param_groups":
    [{..., "params": [fqn, ...]}]}`` (flat with ``flatten_optimizer_state_dict``).  An
    optimizer without state gets it first (a step with zero gradients and learning rate
    0, as torch).  Collective for FSDP models."""
    options = _options(options)
    merged = {_STATE: {}, _PG: []}
    fsdp = _has_fsdp(model)
    fqns = None if fsdp else _param_fqns(model)
    for optim in _optimizers(optimizers):
        _init_optim_state(optim)
        if fsdp:
            with _full_context(model, options):
                osd = FullyShardedDataParallel.optim_state_dict(model, optim)
        else:
            osd = optim.state_dict()
            order = [p for g in optim.param_groups for p in g[_PARAMS]]
            osd = {_STATE: {_fqn_of(fqns, order[i]): s for i, s in osd[_STATE].items()},
                   _PG: [{**g, _PARAMS: [_fqn_of(fqns, order[i]) for i in g[_PARAMS]]}
                         for g in osd[_PG]]}
        merged[_STATE].update(osd[_STATE])
        merged[_PG].extend(osd[_PG])
    if options.flatten_optimizer_state_dict:
        merged = _flatten_optim(merged)
    return _finish(merged, options)


def _flatten_optim(osd):
    flat = {}

    def nested(prefix, value):
        for k, v in value.items():
            key = f"{prefix}.{k}"
            if isinstance(v, dict):
                nested(key, v)
            elif not isinstance(v, (ptcore.Tensor, int, float)):
                raise NotImplementedError(f"flattening optimizer state supports tensor, int, "
                                          f"float and dict states, got {type(v).__name__}")
            else:
                flat[key] = v

    for fqn, state in osd[_STATE].items():
        nested(f"{_STATE}.{fqn}", state)
    for group in osd[_PG]:
        for fqn in group[_PARAMS]:
            for k, v in group.items():
                if k != _PARAMS:
                    flat[f"{_PG}.{fqn}.{k}"] = v
    return flat


def _unflatten_state(flat, prefix):
    out = {}
    for key, value in flat.items():
        if key.startswith(prefix + "."):
            parts = key[len(prefix) + 1:].split(".")
            node = out
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
    return out


def _split(osd, optim, fqns, strict, flat):
    """The part of the named state dict ``osd`` (nested, or flat when ``flat``) that
    belongs to ``optim``, keyed by names."""
    state, groups = {}, []
    for group in optim.param_groups:
        names = [n for p in group[_PARAMS] for n in fqns[id(p)][0]]
        for p in group[_PARAMS]:
            for name in fqns[id(p)][0]:
                saved = _flat_state(osd, name, optim.state.get(p, {})) if flat else \
                    osd[_STATE].get(name)
                if saved:
                    state[name] = saved
                elif p.requires_grad and strict:
                    raise RuntimeError(f"Missing optimizer state for parameter '{name}' in "
                                       f"checkpoint; to load anyway, use "
                                       f"StateDictOptions(strict=False).")
        hyper = _group_values(osd, group, names, flat)
        if hyper is None:
            raise RuntimeError(f"no saved param group holds the parameters {names}")
        groups.append({**hyper, _PARAMS: names})
    return {_STATE: state, _PG: groups}


def _flat_state(flat, name, current):
    """The state of parameter ``name`` from a flat optimizer state dict; ``current`` (the
    optimizer's own state of it) names the entries."""
    out = {}
    for entry in current:
        key = f"{_STATE}.{name}.{entry}"
        out[entry] = flat[key] if key in flat else _unflatten_state(flat, key)
    return out


def _group_values(osd, group, names, flat):
    if flat:
        if not names:
            return None
        keys = [k for k in group if k != _PARAMS]
        missing = [k for k in keys if f"{_PG}.{names[0]}.{k}" not in osd]
        if missing:
            raise RuntimeError(f"the optimizer state dict lacks {_PG}.{names[0]}.{missing[0]}")
        return {k: osd[f"{_PG}.{names[0]}.{k}"] for k in keys}
    for saved in osd[_PG]:
        if any(n in saved[_PARAMS] for n in names) or (not names and not saved[_PARAMS]):
            return {k: v for k, v in saved.items() if k != _PARAMS}
    return None


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Load an optimizer state dict keyed by parameter names (as
    :func:`get_optimizer_state_dict` gives, nested or flat) into ``optimizers``.  A state
    dict keyed by indices (``optimizer.state_dict()``) is loaded as it is.  Collective for
    FSDP models."""
    options = _options(options)
    if options.broadcast_from_rank0:
        optim_state_dict = _broadcast_from_rank0(optim_state_dict)
    fsdp = _has_fsdp(model)
    fqns = _param_fqns(model)
    flat = _STATE not in optim_state_dict
    with ptcore.no_grad():
        for optim in _optimizers(optimizers):
            _init_optim_state(optim)
            if not optim_state_dict:
                continue
            if not flat and all(isinstance(k, int) for k in optim_state_dict[_STATE]):
                optim.load_state_dict(optim_state_dict)
                continue
            named = _split(optim_state_dict, optim, fqns, options.strict, flat)
            if fsdp:
                with _full_context(model, options):
                    osd = FullyShardedDataParallel.optim_state_dict_to_load(model, optim, named)
            else:
                order = [_fqn_of(fqns, p) for g in optim.param_groups for p in g[_PARAMS]]
                index = {name: i for i, name in enumerate(order)}
                osd = {_STATE: {index[n]: s for n, s in named[_STATE].items()},
                       _PG: [{**g, _PARAMS: [index[n] for n in g[_PARAMS]]}
                             for g in named[_PG]]}
            optim.load_state_dict(osd)


# ---------------------------------------------------------------------------- both
def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules,
                                     options=options))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Load both state dicts (see :func:`set_model_state_dict`,
    :func:`set_optimizer_state_dict`); returns the model's missing/unexpected keys."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys


# ---------------------------------------------------------------------------- broadcast
class _Slot:
    """Where a tensor of rank 0's state dict goes in the broadcast skeleton."""
    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def __reduce__(self):
        return _Slot, (self.dtype, self.shape)


def _broadcast_from_rank0(state_dict):
    """Rank 0's ``state_dict`` on every rank: its structure and plain values as an object,
    then each tensor with ``broadcast``."""
    if not dist.is_initialized():
        return state_dict
    rank0 = dist.get_rank() == 0
    flat, paths = flatten(state_dict) if rank0 else ({}, {})
    skeleton = _map_tensors(state_dict, lambda t: _Slot(dtype_name(t.dtype), list(t.shape))) \
        if rank0 else None
    box = [(skeleton, list(paths.values()))]
    dist.broadcast_object_list(box, src=0)
    skeleton, tensor_paths = box[0]
    tensors = [v for v in flat.values() if isinstance(v, ptcore.Tensor)] if rank0 else []
    out = skeleton
    slots = 0
    for path in tensor_paths:
        node = out
        for step in path:
            node = node[step] if not isinstance(node, dict) else \
                next(v for k, v in node.items() if str(k) == step)
        if not isinstance(node, _Slot):
            continue
        if rank0:
            t = tensors[slots].detach().contiguous().clone()
        else:
            t = ptcore.empty(node.shape, dtype=dtype_by_name(node.dtype))
        dist.broadcast(t, src=0)
        set_element(out, path, t)
        slots += 1
    return out
