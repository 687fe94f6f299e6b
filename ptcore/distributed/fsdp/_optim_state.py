"""Optimizer state dicts of FSDP models: between the optimizer's per-shard state (keyed by
parameter index, tensors of the flat shards' size) and the full form keyed by the original
parameter names (tensors of the original shapes), as torch's ``full_optim_state_dict`` /
``optim_state_dict_to_load``.

Per-element state (``exp_avg``, ``momentum_buffer`` ...: tensors with the shard's number of
elements) is gathered and cut into the original parameters; other state (``step``) is
copied to each original parameter.
"""
import copy

import ptcore
import ptcore.distributed as dist
from ptcore.autograd.grad_mode import no_grad

from ptcore.distributed.fsdp._state_dict import _WRAPPED, clean_key


def _handles_by_flat(model):
    """id(flat parameter) -> (handle, name prefix of its unit in ``model``)."""
    out = {}
    for name, m in model.named_modules():
        if _WRAPPED in m._modules and m._handle is not None:      # an FSDP unit
            prefix = clean_key(name + ".") if name else ""
            out[id(m._handle.flat_param)] = (m._handle, prefix)
    return out


def _names(model):
    return {id(p): clean_key(name) for name, p in model.named_parameters()}


def _per_element(h, v):
    return isinstance(v, ptcore.Tensor) and v.dim() == 1 and v.numel() == h.shard_numel


def _gather(h, t):
    if not h.sharded:
        return t.detach()
    out = ptcore.empty(h.padded_numel, dtype=t.dtype)
    dist.all_gather_into_tensor(out, t.detach().contiguous(), group=h.pg)
    return out


def _flat_params_only(model):
    if any(h.use_orig for h, _ in _handles_by_flat(model).values()):
        raise NotImplementedError("FSDP optimizer state dicts with use_orig_params=True are "
                                  "not supported by ptcore")


def full_optim_state_dict(model, optim, rank0_only):
    """The full optimizer state dict (collective)."""
    _flat_params_only(model)
    handles, names = _handles_by_flat(model), _names(model)
    osd = optim.state_dict()
    order = [p for g in optim.param_groups for p in g["params"]]
    state, fqns_of = {}, {}
    for index, p in enumerate(order):
        pstate = osd["state"].get(index)
        entry = handles.get(id(p))
        if entry is None:
            fqns_of[index] = [names[id(p)]]
            if pstate is not None:
                state[names[id(p)]] = {k: (v.clone() if isinstance(v, ptcore.Tensor) else v)
                                       for k, v in pstate.items()}
            continue
        h, prefix = entry
        fqns_of[index] = [prefix + info.fqn for info in h.infos]
        if pstate is None:
            continue
        full = {k: _gather(h, v) for k, v in pstate.items() if _per_element(h, v)}
        for info in h.infos:
            s = {k: full[k][info.offset:info.offset + info.numel].view(info.shape).clone()
                 for k in full}
            s.update({k: (v.clone() if isinstance(v, ptcore.Tensor) else copy.deepcopy(v))
                      for k, v in pstate.items() if k not in full})
            state[prefix + info.fqn] = s
    groups = []
    for g in osd["param_groups"]:
        g = dict(g)
        g["params"] = [fqn for i in g["params"] for fqn in fqns_of[i]]
        groups.append(g)
    if rank0_only and dist.get_rank() != 0:
        return {}
    return {"state": state, "param_groups": groups}


def sharded_optim_state_dict(model, params_by_group, full_osd):
    """The optimizer state dict to load for ``params_by_group`` (lists of this model's
    parameters, the optimizer's param groups) from a full state dict (local; no
    collectives)."""
    _flat_params_only(model)
    handles, names = _handles_by_flat(model), _names(model)
    full_state = full_osd["state"]
    if len(full_osd["param_groups"]) != len(params_by_group):
        raise ValueError(f"the optimizer state dict has {len(full_osd['param_groups'])} param "
                         f"groups, the optimizer {len(params_by_group)}")
    state, groups, index = {}, [], 0
    for params, fgroup in zip(params_by_group, full_osd["param_groups"]):
        ids = []
        for p in params:
            ids.append(index)
            entry = handles.get(id(p))
            if entry is None:
                if names[id(p)] in full_state:
                    state[index] = {k: (v.clone() if isinstance(v, ptcore.Tensor) else v)
                                    for k, v in full_state[names[id(p)]].items()}
                index += 1
                continue
            h, prefix = entry
            per_param = [full_state.get(prefix + info.fqn) for info in h.infos]
            if any(s is None for s in per_param):
                missing = [prefix + i.fqn for i, s in zip(h.infos, per_param) if s is None]
                if len(missing) != len(per_param):
                    raise ValueError(f"optimizer state missing for {missing}")
                index += 1
                continue
            s = {}
            for k, v in per_param[0].items():
                if isinstance(v, ptcore.Tensor) and tuple(v.shape) == h.infos[0].shape \
                        and v.dim() > 0:
                    with no_grad():
                        flat = ptcore.cat([ps[k].reshape(-1).to(v.dtype) for ps in per_param])
                        if h.padded_numel > flat.numel():
                            flat = ptcore.cat([flat, ptcore.zeros(h.padded_numel - flat.numel(),
                                                                  dtype=flat.dtype)])
                        start = h.rank * h.shard_numel if h.sharded else 0
                        s[k] = flat[start:start + h.shard_numel].clone()
                else:
                    s[k] = v.clone() if isinstance(v, ptcore.Tensor) else copy.deepcopy(v)
            state[index] = s
            index += 1
        g = {k: v for k, v in fgroup.items() if k != "params"}
        g["params"] = ids
        groups.append(g)
    return {"state": state, "param_groups": groups}
