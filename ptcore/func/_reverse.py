"""The reverse-mode transforms of ``ptcore.func``: ``grad``, ``grad_and_value``,
``vjp`` and ``jacrev``, on ``ptcore.autograd`` (a level of their own per call:
grad mode on, inference mode off).  Inside ``vmap`` they differentiate the
physical (batched) graph, so that ``vmap(grad(f))`` gives per-sample
gradients; ``jacrev`` vmaps the vjp over the rows of the identity."""
import builtins
import functools

from ptcore._dispatch import batching as _B
from ptcore._dispatch import forward_ad as _fwl
from ptcore._dispatch.batching import is_batched
from ptcore._tensor import _TensorBase
from ptcore.autograd.engine import grad as _agrad
from ptcore.autograd.graph import AccumulateGrad
from ptcore.func._batched import to_physical, from_physical
from ptcore.func._levels import transform_level
from ptcore.func._pytree import _flatten, _spec_str, _unflatten
from ptcore.func._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


def _pt():
    import ptcore
    return ptcore


def _is_tensor(x):
    return isinstance(x, _TensorBase)


def _fname(func):
    return getattr(func, "__name__", repr(func))


def _vmap_frames():
    return builtins.list(_B.frames())


# ---------------------------------------------------------------------------
# autograd transforms
# ---------------------------------------------------------------------------

def _outer_tracking(leaves, outer=None):
    """Whether the level outside the transform tracks ``leaves``: grad mode
    there (``outer``, by default now) is on and one of them requires grad."""
    pt = _pt()
    if outer is None:
        outer = pt.is_grad_enabled()
    return outer and builtins.any(_is_tensor(x) and x.requires_grad for x in leaves)


class _tracking:
    """The reverse-mode transforms' own level: grad mode on, inference mode
    off (torch's transforms differentiate under ``inference_mode`` too)."""

    def __enter__(self):
        pt = _pt()
        self._modes = (pt.enable_grad(), pt.inference_mode(False), transform_level())
        for m in self._modes:
            m.__enter__()
        return self

    def __exit__(self, *exc):
        for m in reversed(self._modes):
            m.__exit__(*exc)
        return False


def _reaches_other_leaves(outs, ins, frames):
    """Whether the graph of ``outs`` reaches a tensor requiring grad other
    than the differentiated inputs ``ins``: one the function closed over
    (module parameters, ...), which torch's transforms keep tracking, so that
    the results are differentiable w.r.t. it."""
    if frames:
        # (an unbatched input or output, as under jacfwd over jacrev, is its own graph)
        ins = [to_physical(x, frames) if is_batched(x) else x for x in ins]
        outs = [to_physical(o, frames) if is_batched(o) else o for o in outs]
    own = {id(x) for x in ins}
    stack = []
    for o in outs:
        if not _is_tensor(o) or not o.requires_grad:
            continue
        if o.grad_fn is None:
            if id(o) not in own:
                return True
            continue
        stack.append(o.grad_fn)
    seen = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if type(n) is AccumulateGrad:
            if id(n.variable) not in own:
                return True
            continue
        stack.extend(f for f, _ in n.next_functions)
    return False


def _unbatched_with_batched_tangent(x):
    if is_batched(x):
        return False
    for lv in _fwl.levels():
        tg = _fwl.get_tangent(x, lv.idx)
        if tg is not None and is_batched(tg):
            return True
    return False


def _prep(x, create_graph):
    if not _is_tensor(x):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.is_inference():
        x = x.clone()           # (made under inference mode: a normal copy can take a graph)
    frames = _vmap_frames()
    if frames and _unbatched_with_batched_tangent(x):
        # jacfwd(jacrev(f)): an input the same in every sample whose tangent (a unit
        # vector per sample) is batched: the ordinary graph of x, its backward run
        # under forward AD, gives each sample's tangent of the gradient
        return _fwl.detach(x).requires_grad_(True)
    if frames:
        # inside vmap: the differentiated input is a leaf of the physical
        # (batched) graph, one copy per sample, so that the backward of the
        # batched computation gives per-sample gradients
        p = to_physical(x, frames)
        if p.is_inference():
            p = p.clone()
        p = p.view_as(p) if create_graph and p.requires_grad else p.detach().requires_grad_(True)
        r = from_physical(p, frames)
        inner = r
        for _ in frames[1:]:
            inner = inner._bt_phys
        if builtins.any(st == 0 and n > 1 for n, st in zip(p.shape, p.stride())):
            inner._bt_shared = True     # an expanded leaf: see ptcore.func._batched.physical
        return r
    if create_graph and x.requires_grad:
        return x.view_as(x)
    return _fwl.detach(x).requires_grad_(True)


def _argnums(argnums, nargs, fname):
    if isinstance(argnums, builtins.int):
        idx = (argnums,)
    elif isinstance(argnums, tuple) and argnums and builtins.all(
            isinstance(a, builtins.int) for a in argnums):
        idx = argnums
    else:
        raise RuntimeError(f"{fname}: Expected argnums to be int or tuple of ints, got: "
                           f"{type(argnums)}" if not isinstance(argnums, tuple) else
                           f"{fname}: Expected argnums to be a non-empty tuple of ints")
    norm = []
    for a in idx:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnums={a}, but only {nargs} positional inputs")
        norm.append(a % nargs)
    if builtins.len(set(norm)) != builtins.len(norm):
        raise RuntimeError(f"argnums elements must be unique, got {tuple(norm)}")
    return norm


def _select_and_prepare(args, argnums, fname, outer):
    """Returns (new_args, diff_leaves, diff_spec, create_graph); ``outer``:
    grad mode outside the transform."""
    idx = _argnums(argnums, builtins.len(args), fname)
    chosen = [args[i] for i in idx]
    leaves, spec = _flatten(chosen)
    create_graph = _outer_tracking(leaves, outer)
    prepped = [_prep(x, create_graph) for x in leaves]
    new_chosen = _unflatten(prepped, spec)
    new_args = builtins.list(args)
    for i, v in zip(idx, new_chosen):
        new_args[i] = v
    return new_args, prepped, spec, create_graph


def _grads(outs, ins, gos, create_graph, frames=None, retain_graph=True):
    pt = _pt()
    if frames is None:
        frames = _vmap_frames()
    if frames:
        if not builtins.any(is_batched(t) for t in (*outs, *ins, *gos)):
            # nothing batched (jacfwd over jacrev): the same gradient in every sample
            return _grads(outs, ins, gos, create_graph, frames=[])
        if builtins.any(_unbatched_with_batched_tangent(x) for x in ins):
            raise NotImplementedError(
                "ptcore.func: a reverse-mode transform inside vmap over a forward-mode one "
                "(jacfwd/jvp) whose output is batched while its input is not batched is not "
                "supported; batch the input too (e.g. expand it) or use jacrev")
        # the batched graph is physical: differentiate the physical tensors
        outs = [to_physical(o, frames) for o in outs]
        p_ins = [to_physical(x, frames) for x in ins]
        gos = [to_physical(g, frames) for g in gos]
        gs = _grads(outs, p_ins, gos, create_graph, frames=[], retain_graph=retain_graph)
        return [from_physical(g, frames) for g in gs]
    pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
    if not pairs:
        return [pt.zeros_like(x) for x in ins]
    gs = _agrad([o for o, _ in pairs], ins, [g for _, g in pairs],
                retain_graph=retain_graph or create_graph, create_graph=create_graph,
                allow_unused=True)
    return [pt.zeros_like(x) if g is None else g for g, x in zip(gs, ins)]


def _fin(tree, create_graph):
    if create_graph:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten([_fwl.detach(x) if _is_tensor(x) else x for x in leaves], spec)


def _split_aux(out, has_aux, fname):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and builtins.len(out) == 2):
        raise RuntimeError(f"{fname}(f, ...)(*args): output of function f should be a tuple: "
                           f"(output, aux) if has_aux is True")
    for a in _flatten(out[1])[0]:
        if not _is_tensor(a):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    return out[0], out[1]


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a scalar-valued ``func`` w.r.t. ``args[argnums]``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        pt = _pt()
        outer = pt.is_grad_enabled()
        with _tracking():
            new_args, ins, spec, cg = _select_and_prepare(args, argnums, "grad_and_value",
                                                          outer)
            out = func(*new_args, **kwargs)
            out, aux = _split_aux(out, has_aux, "grad_and_value")
            cg = cg or (outer and _reaches_other_leaves([out], ins, _vmap_frames()))
            if not _is_tensor(out):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe you "
                                   f"wanted to use the vjp or jacrev APIs instead?")
            gs = _grads([out], ins, [pt.ones_like(out)], cg)
        g = _unflatten(gs, spec)
        g = g[0] if isinstance(argnums, builtins.int) else tuple(g)
        g, out = _fin(g, cg), _fin(out, cg)
        if has_aux:
            return g, (out, _fin(aux, cg))
        return g, out
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Gradient of a scalar-valued ``func`` w.r.t. ``args[argnums]`` (``torch.func.grad``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        if has_aux:
            return g, v[1]
        return g
    return wrapper


def _check_float_outputs(outs):
    for o in outs:
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                               f"complex Tensors, got Tensor with dtype {o.dtype}")


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns one gradient per primal."""
    pt = _pt()
    outer = pt.is_grad_enabled()
    with _tracking():
        leaves, spec = _flatten(builtins.list(primals))
        cg = _outer_tracking(leaves, outer)
        frames0 = _vmap_frames()        # the vmaps the graph is batched over
        ins = [_prep(x, cg) for x in leaves]
        out = func(*_unflatten(ins, spec))
        out, aux = _split_aux(out, has_aux, "vjp")
    out_leaves, out_spec = _flatten(out)
    cg = cg or (outer and _reaches_other_leaves(out_leaves, ins, frames0))
    for o in out_leaves:
        if not _is_tensor(o):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty output, with only Tensors, got {type(o)}")
    _check_float_outputs(out_leaves)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function: got "
                               f"{_spec_str(ct_spec)} for outputs {_spec_str(out_spec)}")
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: cotangent has shape {list(c.shape)} "
                                   f"and output has shape {list(o.shape)}")
        # a graph for the outer level's tracking, unless create_graph (by default
        # grad mode at this call) says not
        keep = (cg or _outer_tracking(ct_leaves)) and (
            pt.is_grad_enabled() if create_graph is None else builtins.bool(create_graph))
        with _tracking():
            gs = _grads(out_leaves, ins, ct_leaves, keep, frames=frames0,
                        retain_graph=retain_graph)
        res = _unflatten([_fin(g, keep) for g in gs], spec)
        return tuple(res)

    result = (_fin(out, cg), vjp_fn)
    if has_aux:
        return result + (_fin(aux, cg),)
    return result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Jacobian of ``func`` w.r.t. ``args[argnums]`` by reverse mode (``torch.func.jacrev``).

    For an output of shape ``O`` and an input of shape ``I`` the block has
    shape ``O + I``; tuples of outputs/argnums give nested tuples.
    """
    if chunk_size is not None and (not isinstance(chunk_size, builtins.int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        pt = _pt()
        outer = pt.is_grad_enabled()
        with _tracking():
            new_args, ins, spec, cg = _select_and_prepare(args, argnums, "jacrev", outer)
            out = func(*new_args, **kwargs)
            out, aux = _split_aux(out, has_aux, "jacrev")
            out_leaves, out_spec = _flatten(out)
            cg = cg or (outer and _reaches_other_leaves(out_leaves, ins, _vmap_frames()))
            for o in out_leaves:
                if not _is_tensor(o):
                    raise RuntimeError(f"jacrev(f, ...): Expected f to return Tensors, got "
                                       f"{type(o)}")
            _check_float_outputs(out_leaves)
            blocks = []
            for o in out_leaves:
                if not _vmap_frames() and o.numel() > 0 and not _fwl.levels():
                    # (under forward AD the per-row loop keeps the tangents)
                    # torch's way: vmap the vjp over the rows of the identity
                    try:
                        per_in = [_fin(j, cg) for j in _jac_rows_by_vmap(o, ins, cg,
                                                                          chunk_size)]
                    except RuntimeError:
                        # a backward formula that calls a kernel directly cannot
                        # take batched cotangents: one vjp per row below
                        per_in = None
                    if per_in is not None:
                        per_in = _unflatten(per_in, spec)
                        blocks.append(per_in[0] if isinstance(argnums, builtins.int)
                                      else tuple(per_in))
                        continue
                rows = [[] for _ in ins]
                for k in range(o.numel()):
                    e = pt.zeros(o.numel(), dtype=o.dtype, device=o.device)
                    e[k] = 1
                    gs = _grads([o], ins, [e.view(o.shape)], cg)
                    for r, g in zip(rows, gs):
                        r.append(g)
                per_in = []
                for r, x in zip(rows, ins):
                    if r:
                        j = pt.stack(r).reshape(tuple(o.shape) + tuple(x.shape))
                    else:
                        j = pt.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype,
                                     device=x.device)
                    per_in.append(_fin(j, cg))
                per_in = _unflatten(per_in, spec)
                blocks.append(per_in[0] if isinstance(argnums, builtins.int) else tuple(per_in))
        res = _unflatten(blocks, out_spec)
        if has_aux:
            return res, _fin(aux, cg)
        return res
    return wrapper


def _jac_rows_by_vmap(o, ins, cg, chunk_size):
    """The Jacobian blocks of output ``o`` w.r.t. ``ins``: the vjp of each row
    of the identity, batched by vmap (the backward runs once over all rows)."""
    pt = _pt()
    n = o.numel()
    basis = pt.eye(n, dtype=o.dtype, device=o.device).reshape((n,) + tuple(o.shape))

    def row(ct):
        return tuple(_grads([o], ins, [ct], cg, frames=[]))
    rows = vmap(row, chunk_size=chunk_size)(basis)
    return [r.reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, ins)]
