"""FSDP state dicts: the full (unflattened, original names) and the local (flat shard) forms.

The full state dict walks the wrapped module tree as ``Module.state_dict`` does (a module's
parameters in their registration order, then its persistent buffers and extra state, then
its children), looking through the FSDP wrappers, while ``summon_full_params`` has set the
original parameters on their modules as views of the gathered flat tensors.
"""
from collections import OrderedDict

from ptcore.autograd.grad_mode import no_grad
from ptcore.nn.modules.module import Module, _IncompatibleKeys

_WRAPPED = "_fsdp_wrapped_module"
_FLAT = "_flat_param"


def clean_key(key):
    """A parameter or buffer name without the FSDP wrapper's components."""
    return key.replace(_WRAPPED + ".", "").replace("." + _WRAPPED, "")


def _unwrap(module):
    while _WRAPPED in module._modules:
        module = module._modules[_WRAPPED]
    return module


def walk(module, prefix=""):
    """(key, tensor or module, kind) for every state-dict entry under ``module``; kind is
    "param", "buffer" or "extra" (the value is then the module)."""
    module = _unwrap(module)
    order = module.__dict__.get("_fsdp_param_order")
    for name in (order if order is not None else list(module._parameters)):
        if name == _FLAT:
            continue
        if name in module._parameters:
            p = module._parameters[name]
        else:
            p = module.__dict__.get(name)
        if p is not None:
            yield prefix + name, p, "param"
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            yield prefix + name, b, "buffer"
    if type(module).get_extra_state is not Module.get_extra_state:
        yield prefix + "_extra_state", module, "extra"
    for name, child in module._modules.items():
        if child is not None:
            yield from walk(child, prefix + name + ".")


def _buffer_dtype(key, module_of):
    m, name = module_of[key]
    return m.__dict__.get("_fsdp_buffer_dtypes", {}).get(name)


def _owners(module, prefix=""):
    """key -> (module, attribute name) for the buffers (to find their original dtype)."""
    out = {}
    module = _unwrap(module)
    for name in module._buffers:
        out[prefix + name] = (module, name)
    for name, child in module._modules.items():
        if child is not None:
            out.update(_owners(child, prefix + name + "."))
    return out


def full_state_dict(fsdp, prefix="", keep_vars=False):
    """Full tensors, original names; call inside ``summon_full_params(fsdp)``."""
    owners = _owners(fsdp)
    out = OrderedDict()
    for key, value, kind in walk(fsdp):
        if kind == "extra":
            out[prefix + key] = value.get_extra_state()
        elif kind == "param":
            out[prefix + key] = value.detach().clone()      # the gathered memory is freed
        else:
            dt = _buffer_dtype(key, owners)
            v = value if keep_vars else value.detach()
            out[prefix + key] = v.to(dt) if dt is not None else v
    return out


def _incompatible(targets, state_dict, strict):
    missing = [k for k in targets if k not in state_dict]
    unexpected = [k for k in state_dict if k not in targets]
    if strict and (missing or unexpected):
        msg = []
        if unexpected:
            msg.append("Unexpected key(s) in state_dict: " +
                       ", ".join(f'"{k}"' for k in unexpected) + ".")
        if missing:
            msg.append("Missing key(s) in state_dict: " +
                       ", ".join(f'"{k}"' for k in missing) + ".")
        raise RuntimeError("Error(s) in loading state_dict for FullyShardedDataParallel:\n\t"
                           + "\n\t".join(msg))
    return _IncompatibleKeys(missing, unexpected)


def _check_shape(key, value, target, hint=""):
    if tuple(value.shape) != tuple(target.shape):
        raise RuntimeError(f"Error(s) in loading state_dict for FullyShardedDataParallel: size "
                           f"mismatch for {key}: copying a param with shape "
                           f"{tuple(value.shape)}, the shape in current model is "
                           f"{tuple(target.shape)}.{hint}")


def load_full_state_dict(fsdp, state_dict, strict=True):
    """Copy a full state dict into the gathered views; call inside
    ``summon_full_params(fsdp, writeback=True)``."""
    targets = OrderedDict((k, (v, kind)) for k, v, kind in walk(fsdp))
    result = _incompatible(targets, state_dict, strict)
    with no_grad():
        for key, (target, kind) in targets.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if kind == "extra":
                target.set_extra_state(value)
                continue
            _check_shape(key, value, target)
            target.copy_(value)
    return result


def local_state_dict(fsdp, prefix="", keep_vars=False):
    """Each rank's flat shards and the buffers, by cleaned name."""
    out = OrderedDict()
    for name, p in fsdp.named_parameters():
        out[prefix + clean_key(name)] = p if keep_vars else p.detach()
    for name, b in fsdp.named_buffers():
        out[prefix + clean_key(name)] = b if keep_vars else b.detach()
    return out


def load_local_state_dict(fsdp, state_dict, strict=True):
    targets = OrderedDict()
    for name, t in list(fsdp.named_parameters()) + list(fsdp.named_buffers()):
        targets[clean_key(name)] = t
    result = _incompatible(targets, state_dict, strict)
    with no_grad():
        for key, t in targets.items():
            if key in state_dict:
                value = state_dict[key]
                _check_shape(key, value, t, " (a local state dict loads only with the same "
                                            "world size)")
                t.copy_(value)
    return result
