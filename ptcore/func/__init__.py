"""``ptcore.func``: function transforms with ``torch.func``'s API.

``vmap`` is the batching layer of the dispatch point: the function runs once
on batched tensors and each op is batched by its rule (``ptcore.func._vmap``).
``grad``, ``grad_and_value``, ``vjp`` and ``jacrev`` are built on reverse-mode
``ptcore.autograd``; ``jvp``, ``linearize``, ``jacfwd`` and ``hessian`` on
forward-mode AD (``ptcore/func/_forward.py``, a dual level of their own per
call).  They nest: ``jacfwd(jacrev(f))`` is a Hessian (forward-over-reverse),
``vmap(grad(f))`` gives per-sample gradients.
"""
import builtins
import functools

from ptcore.func._pytree import _broadcast_dims, _flatten, _spec_str, _unflat, _unflatten  # noqa: F401
from ptcore.func._vmap import vmap
from ptcore.func._reverse import (grad, grad_and_value, vjp, jacrev, _argnums,  # noqa: F401
                                  _is_tensor, _jac_rows_by_vmap, _vmap_frames)
from ptcore.func._forward import jvp, linearize, jacfwd, hessian
from ptcore.func._levels import transform_level

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "stack_module_state", "linearize", "replace_all_batch_norm_modules_",
           "functionalize"]


def _pt():
    import ptcore
    return ptcore


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters/buffers temporarily replaced by the given tensors.

    With ``tie_weights`` a value given for one of several names of one tensor
    (tied weights) replaces it under all of them.  Tensors the module assigns
    anew to the replaced names during the call are written back into the
    given dict, as torch does.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (builtins.list, tuple)):
        if not builtins.all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    named = builtins.list(module.named_parameters(remove_duplicate=False))
    named += builtins.list(module.named_buffers(remove_duplicate=False))
    mapping = _untie(named, given) if tie_weights else given
    if strict:
        names = {n for n, _ in named}
        missing, unexpected = sorted(names - set(mapping)), sorted(set(mapping) - names)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(msgs)))
    saved = []
    current = {}
    try:
        for name, value in mapping.items():
            owner = module
            *path, leaf = name.split(".")
            for p in path:
                owner = getattr(owner, p)
            store = None
            for kind in ("_parameters", "_buffers"):
                d = owner.__dict__.get(kind)
                if d is not None and leaf in d:
                    store = d
                    break
            if store is not None:
                saved.append((name, store, leaf, store[leaf]))
                store[leaf] = value
            else:
                cur = getattr(owner, leaf, _MISSING)
                if cur is not _MISSING and cur is not None and not _is_tensor(cur):
                    raise TypeError(f"attribute `{leaf}`: {cur} is not an instance of "
                                    f"ptcore.Tensor")
                saved.append((name, owner.__dict__, leaf, owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for name, store, leaf, old in reversed(saved):
            current[name] = store.get(leaf, _MISSING)
            if old is _MISSING:
                store.pop(leaf, None)
            else:
                store[leaf] = old
        given.update({k: v for k, v in current.items() if k in given and v is not _MISSING})


def _untie(named, given):
    """``given`` with each value for a tied tensor given under all its names."""
    names_of = {}
    for name, t in named:
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if builtins.len(names) > 1 for n in names}
    hit = [n for n in given if n in tied]
    for n in hit:
        names = tied[n]
        values = {id(given[m]) for m in names if m in given}
        if builtins.len(names.intersection(hit)) > 1 and builtins.len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
    out = dict(given)
    for n in hit:
        for m in tied[n]:
            out[m] = given[n]
    return out


_MISSING = object()


def stack_module_state(models):
    """Stack the parameters and buffers of identical ``models`` (``torch.func.stack_module_state``).

    Returns ``(params, buffers)``: dicts from names to tensors with a new
    leading dim of size ``len(models)``, for ``vmap`` over
    :func:`functional_call`.  The stacked parameters are new leaves that
    require grad when the originals do.
    """
    pt = _pt()
    models = builtins.list(models)
    if builtins.len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (builtins.all(m.training for m in models) or
            builtins.all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    t0 = type(models[0])
    if not builtins.all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for name in names:
            ts = [dict(named(m))[name] for m in models]
            s = pt.stack([t.detach() for t in ts])
            n_rg = builtins.sum(builtins.bool(t.requires_grad) for t in ts)
            if 0 < n_rg < builtins.len(ts):
                raise RuntimeError(f"Expected {name} from each model to have the same "
                                   ".requires_grad")
            if n_rg:
                s.requires_grad_(True)
            out[name] = s
        return out
    return (stacked(lambda m: m.named_parameters()),
            stacked(lambda m: m.named_buffers()))


# forward-mode transforms (ptcore/func/_forward.py)
def _is_batch_norm(module):
    # nn's _BatchNorm (BatchNorm1d/2d/3d, SyncBatchNorm, the lazy ones), by class name:
    # func sits below nn in the layers
    return builtins.any(c.__name__ == "_BatchNorm" for c in type(module).__mro__)


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module of ``root`` use batch statistics only, in place
    (``torch.func.replace_all_batch_norm_modules_``): its running statistics become
    None and ``track_running_stats`` False, so that vmap over it works."""
    for m in root.modules():
        if _is_batch_norm(m) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root



def functionalize(func, *, remove="mutations"):
    """``torch.func.functionalize``: ``func`` with its mutations kept off its inputs'
    storage.  ptcore runs eagerly, so the function runs on copies of its tensor
    inputs; an input whose copy was mutated gets the new values copied back (as
    torch propagates input mutations), and the outputs never alias the inputs."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the"
            " program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing"
            " operators {view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        leaves, spec = _flatten((args, kwargs))
        copies = [x.clone() if _is_tensor(x) else x for x in leaves]
        versions = [c._version if _is_tensor(c) else None for c in copies]
        fargs, fkwargs = _unflatten(copies, spec)
        with transform_level():             # (a functorch transform, as torch's)
            out = func(*fargs, **fkwargs)
        for x, c, v in zip(leaves, copies, versions):
            if v is not None and c._version != v:
                x.copy_(c)
        return out
    return wrapped
