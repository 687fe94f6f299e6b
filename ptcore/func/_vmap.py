"""``ptcore.func.vmap``: vectorizing map through the batching layer.

The mapped inputs become :class:`~ptcore.func._batched.BatchedTensor` s of a
new vmap level (their batch dim moved to the front of the physical tensor),
the function runs *once*, every op it calls is batched by the rules of
:mod:`ptcore.func._batching_rules`, and the outputs' batch dims are moved to
``out_dims``.  ``chunk_size`` runs the batch in chunks of that many samples.
"""
import builtins
import functools
import sys

import ptcore
from ptcore._dispatch import batching as _B
from ptcore._tensor import _TensorBase
from ptcore.func._batched import wrap, maybe_level
import ptcore.func._batching_rules as _rules
import ptcore.func._batching_rules_ops as _rule_ops  # noqa: F401  (registers the rules)
import ptcore.func._batching_rules_nn as _rule_nn  # noqa: F401
import ptcore.func._function_vmap as _fn_vmap  # noqa: F401  (autograd.Function under vmap)
from ptcore.func._pytree import _broadcast_dims, _flatten, _unflatten

__all__ = ["vmap"]

_B.set_handler(_rules.handle)


def _fname(func):
    return getattr(func, "__name__", repr(func))


# the module holding the three steps libraries replace (see _vmap_call)
_STEPS_MODULE = "ptcore._functorch.vmap"


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dimension of its inputs (``torch.func.vmap``).

    Parameters
    ----------
    func : callable
        Takes tensors (or nested tuples/lists/dicts of them) and returns a
        tensor or a nested tuple/list/dict of tensors.
    in_dims : int, None or nested tuple
        The mapped dim of each positional input (None: not mapped).
        Keyword arguments are never mapped.
    out_dims : int, None or tuple
        Where the mapped dim goes in each output (None: the output must not
        depend on the mapped inputs and is returned once).
    randomness : {'error', 'different', 'same'}
        'error' raises if ``func`` calls a random op; 'different' gives each
        sample its own random numbers; 'same' gives every sample the same ones.
    chunk_size : int, optional
        Run the batch in chunks of this many samples (less memory); None
        runs it at once.

    Returns
    -------
    callable
        Runs ``func`` once over the whole batch: each op is batched by its
        rule at the dispatch point (ops with no rule run once per sample, with
        a warning).

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.func import vmap
    >>> x = ptcore.arange(6.).reshape(2, 3)
    >>> vmap(lambda r: (r * r).sum())(x)
    tensor([ 5., 50.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, builtins.int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not callable(func):
        raise TypeError(f"vmap: expected `func` to be callable, got {type(func).__name__}")
    if not (in_dims is None or isinstance(in_dims, (builtins.int, tuple))):
        raise ValueError(f"vmap(f, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    # torch's vmap_impl: the three steps are looked up on ptcore._functorch.vmap (torch's
    # torch._functorch.vmap) at each call, where libraries replace them (tensordict batches
    # its TensorDicts so: they are no tensors, and pass through vmap whole).  That module
    # sits above this layer, so it is found in sys.modules, not imported: a library can
    # only have replaced a step after importing it; until then this module's own run.
    impl = sys.modules.get(_STEPS_MODULE) or sys.modules[__name__]
    size, dims, flat_args, spec = impl._process_batched_inputs(in_dims, args, func)
    if chunk_size is None or chunk_size >= size:
        return _flat_vmap(impl, func, size, dims, flat_args, spec, out_dims, randomness, kwargs)
    gen = ptcore.default_generator
    start_state = gen.get_state() if randomness == "same" else None
    parts = []
    for s in range(0, size, chunk_size):
        n = builtins.min(chunk_size, size - s)
        sub = [a if d is None else a[(builtins.slice(None),) * d + (builtins.slice(s, s + n),)]
               for a, d in zip(flat_args, dims)]
        if start_state is not None:
            gen.set_state(start_state)
        parts.append(_flat_vmap(impl, func, n, dims, sub, spec, out_dims, randomness, kwargs))
    odims = _out_dims_of(func, parts[0], out_dims)
    flat_parts = [_flatten(p)[0] for p in parts]
    outs = []
    for j, d in enumerate(odims):
        col = [p[j] for p in flat_parts]
        outs.append(col[0] if d is None or not isinstance(col[0], _TensorBase)
                    else ptcore.cat(col, d))
    return _unflatten(outs, _flatten(parts[0])[1])


def _flat_vmap(impl, func, size, dims, flat_args, spec, out_dims, randomness, kwargs):
    frame = _B.push(size, randomness)
    try:
        ins = impl._create_batched_inputs(dims, flat_args, frame.level, spec)
        out = func(*ins, **kwargs)
        return impl._unwrap_batched(out, out_dims, frame.level, size, func)
    finally:
        _B.pop(frame)


def _process_batched_inputs(in_dims, args, func):
    """``(batch size, the flat inputs' mapped dims, the flat inputs, their structure)`` of
    ``vmap(func, in_dims)(*args)``, with vmap's checks (torch's
    ``torch._functorch.vmap._process_batched_inputs``)."""
    if builtins.len(args) == 0:
        raise ValueError(f"vmap({_fname(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    if isinstance(in_dims, tuple) and builtins.len(in_dims) != builtins.len(args):
        raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure with "
                         f"{builtins.len(in_dims)} entries but inputs has {builtins.len(args)}.")
    leaves, spec = _flatten(builtins.list(args))
    dims = _broadcast_dims(builtins.list(in_dims) if isinstance(in_dims, tuple) else in_dims,
                           builtins.list(args), "in_dims")
    size = None
    norm = []
    for leaf, d in zip(leaves, dims):
        if d is None:
            norm.append(None)
            continue
        if not isinstance(d, builtins.int):
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims "
                             f"must be int or None, got {d!r}")
        if not isinstance(leaf, _TensorBase):
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={d} for an input but the input is of type {type(leaf)}. "
                             f"We cannot vmap over non-Tensor arguments, please use None as the "
                             f"respective in_dim")
        nd = leaf.dim()
        if not -nd <= d < nd:
            raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {nd} so expected in_dim to satisfy "
                             f"-{nd} <= in_dim < {nd}.")
        d = d % nd
        n = leaf.shape[d]
        if size is None:
            size = n
        elif n != size:
            sizes = [l.shape[dd % l.dim()] for l, dd in zip(leaves, dims) if dd is not None]
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        norm.append(d)
    if size is None:
        raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>): at least one "
                         f"input must be mapped over (got in_dims={in_dims} for "
                         f"{builtins.len(args)} inputs)")
    return size, norm, leaves, spec


def _create_batched_inputs(flat_in_dims, flat_args, vmap_level, args_spec):
    """The positional inputs of the vmapped call: each mapped flat input batched at
    ``vmap_level`` (torch's ``_create_batched_inputs``)."""
    return _unflatten([a if d is None else wrap(a.movedim(d, 0), vmap_level)
                       for a, d in zip(flat_args, flat_in_dims)], args_spec)


def _unwrap_batched(batched_outputs, out_dims, vmap_level, batch_size, func):
    """The vmapped call's outputs as plain tensors, their batch dims at ``out_dims`` (torch's
    ``_unwrap_batched``)."""
    return _unwrap_outputs(func, batched_outputs, out_dims, vmap_level, batch_size)


def _out_dims_of(func, out, out_dims):
    if isinstance(out_dims, tuple) and not isinstance(out, (tuple, builtins.list)):
        if builtins.len(out_dims) != 1:
            raise ValueError(f"vmap({_fname(func)}, ..., out_dims={out_dims})(<inputs>): "
                             f"out_dims is not compatible with the structure of `outputs`. "
                             f"out_dims has structure with {builtins.len(out_dims)} entries but "
                             f"outputs has 1.")
        return [out_dims[0]]
    if isinstance(out_dims, tuple):
        if builtins.len(out_dims) != builtins.len(out):
            raise ValueError(f"vmap({_fname(func)}, ..., out_dims={out_dims})(<inputs>): "
                             f"out_dims is not compatible with the structure of `outputs`. "
                             f"out_dims has structure with {builtins.len(out_dims)} entries but "
                             f"outputs has {builtins.len(out)}.")
        return _broadcast_dims(builtins.list(out_dims), builtins.list(out), "out_dims")
    return _broadcast_dims(out_dims, out, "out_dims")


def _unwrap_outputs(func, out, out_dims, level, size):
    leaves, spec = _flatten(out)
    odims = _out_dims_of(func, out, out_dims)
    res = []
    for leaf, d in zip(leaves, odims):
        if not isinstance(leaf, _TensorBase):
            if d is not None:
                raise ValueError(f"vmap({_fname(func)}, ...): `{_fname(func)}` must only return "
                                 f"Tensors, got type {type(leaf)}. Did you mean to set out_dims= "
                                 f"to None for output?")
            res.append(leaf)
            continue
        p = maybe_level(leaf, level)
        if d is None:
            if p is not None:
                raise ValueError(f"vmap({_fname(func)}, ..., out_dims=None)(<inputs>): Can not "
                                 f"return a BatchedTensor when out_dim is None")
            res.append(leaf)
            continue
        if not isinstance(d, builtins.int):
            raise ValueError(f"vmap: out_dims must be int or None, got {d!r}")
        nd = leaf.dim() + 1
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-nd}, {nd - 1}], but got {d})")
        d = d % nd
        if p is None:
            shape = builtins.list(leaf.shape)
            shape.insert(d, size)
            res.append(leaf.unsqueeze(d).expand(shape))
        else:
            res.append(p.movedim(0, d) if d else p)
    return _unflatten(res, spec)
