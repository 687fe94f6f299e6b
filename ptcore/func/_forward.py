"""The forward-mode transforms of ``ptcore.func``: ``jvp``, ``linearize``,
``jacfwd`` and ``hessian``, on forward-mode AD (a dual level of their own
per call, so they nest with each other and with the reverse-mode
transforms: ``jacfwd(jacfwd(f))``, ``jacfwd(jacrev(f))``)."""
import builtins
import functools

from ptcore._tensor import _TensorBase
from ptcore._dispatch import forward_ad as _L
from ptcore._dispatch.batching import is_batched
from ptcore.func._levels import transform_level
from ptcore.func._pytree import _flatten, _unflatten
from ptcore.func._reverse import _argnums, _vmap_frames, jacrev
from ptcore.func._vmap import vmap

__all__ = ["jvp", "linearize", "jacfwd", "hessian"]


def _pt():
    import ptcore
    return ptcore


def _fwad():
    # lazy: its import installs the JVP rules (~70 ms): on the first forward-mode transform
    import ptcore.autograd.forward_ad as forward_ad
    return forward_ad


def _structure(tree):
    leaves, spec = _flatten(tree)
    return leaves, spec


def _spec_str(spec):
    if spec[0] == "leaf":
        return "*"
    if spec[0] == "seq":
        return f"{spec[1].__name__}({', '.join(_spec_str(s) for _, s in spec[2])})"
    return f"dict({', '.join(f'{k}: {_spec_str(s)}' for k, (_, s) in zip(spec[2], spec[3]))})"


def _same_spec(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "leaf":
        return True
    if a[0] == "seq":
        return a[1] is b[1] and builtins.len(a[2]) == builtins.len(b[2]) and builtins.all(
            _same_spec(x[1], y[1]) for x, y in zip(a[2], b[2]))
    return a[2] == b[2] and builtins.all(_same_spec(x[1], y[1]) for x, y in zip(a[3], b[3]))


class _level:
    """A dual level of a transform (nests, unlike forward_ad.dual_level),
    with inference mode off (torch's transforms carry tangents under
    ``inference_mode`` too)."""

    def __enter__(self):
        _fwad()
        pt = _pt()
        self.modes = ()
        if pt.is_inference_mode_enabled():     # (grad mode kept as it is)
            self.modes = (pt.inference_mode(False), pt.set_grad_enabled(pt.is_grad_enabled()))
        for m in self.modes:
            m.__enter__()
        self.lv = _L.push_level()
        self.level = transform_level()
        self.level.__enter__()
        return self.lv.idx

    def __exit__(self, *exc):
        self.level.__exit__(*exc)
        _L.pop_level(self.lv.idx)
        for m in reversed(self.modes):
            m.__exit__(*exc)
        return False


def _unwrap(x, lvl):
    """``x`` without its tangent at ``lvl`` (lower levels kept)."""
    if not isinstance(x, _TensorBase) or _L.get_tangent(x, lvl) is None:
        return x
    return _fwad().primal_alias(x, lvl)


def _jvp_impl(func, primals, tangents, has_aux, fname="jvp"):
    pt = _pt()
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = _structure(primals)
    t_leaves, t_spec = _structure(tangents)
    if not _same_spec(p_spec, t_spec):
        raise RuntimeError(
            f"{fname}(f, primals, tangents): Expected primals and tangents to have the same "
            "python structure. For example, if primals is a tuple of 3 tensors, tangents also "
            f"must be. Got primals with structure {_spec_str(p_spec)} and tangents with "
            f"structure {_spec_str(t_spec)}")
    if not p_leaves:
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to contain at "
                           "least one Tensor.")
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(p, _TensorBase) or not isinstance(t, _TensorBase):
            bad = p if not isinstance(p, _TensorBase) else t
            raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents "
                               f"to be Tensors, got {type(bad).__name__}")
    fw = _fwad()
    with _level() as lvl:
        duals = [fw._check_and_make_dual(p, t, lvl) for p, t in zip(p_leaves, t_leaves)]
        out = func(*_unflatten(duals, p_spec))
        if has_aux:
            if not (isinstance(out, tuple) and builtins.len(out) == 2):
                raise RuntimeError(f"{fname}(f, primals, tangents): output of function f should "
                                   "be a tuple: (output, aux) if has_aux is True")
            out, aux = out
        o_leaves, o_spec = _structure(out)
        for o in o_leaves:
            if not isinstance(o, _TensorBase):
                raise RuntimeError(f"{fname}(f, primals, tangents): expected f(*primals) to "
                                   f"return only tensors, got unsupported type {type(o)}")
        res_p, res_t = [], []
        for o in o_leaves:
            t = _L.get_tangent(o, lvl)
            if t is None:
                t = pt.zeros_like(o)
            res_t.append(t)
            res_p.append(_unwrap(o, lvl))
        if has_aux:
            a_leaves, a_spec = _structure(aux)
            for a in a_leaves:
                if not isinstance(a, _TensorBase):
                    raise RuntimeError(f"{fname}(f, primals, tangents): expected aux to "
                                       f"contain only tensors, got unsupported type {type(a)}")
            aux = _unflatten([_unwrap(a, lvl) for a in a_leaves], a_spec)
    res = (_unflatten(res_p, o_spec), _unflatten(res_t, o_spec))
    return res + (aux,) if has_aux else res


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD (``torch.func.jvp``).

    Parameters
    ----------
    func : callable
        Takes ``len(primals)`` arguments (tensors or nested tuples/lists/dicts
        of tensors) and returns a tensor or a nested structure of tensors
        (``(output, aux)`` when ``has_aux``).
    primals : tuple
        The point at which to differentiate.
    tangents : tuple
        One tangent per primal, of the same structure and shapes.
    strict : bool
        Accepted for torch's signature, and ignored (as torch.func.jvp does).
    has_aux : bool
        ``func`` returns ``(output, aux)``; ``aux`` is returned as a third element.

    Returns
    -------
    (output, jvp_out) or (output, jvp_out, aux)

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.func import jvp
    >>> jvp(ptcore.sin, (ptcore.tensor([0.0, 1.0]),), (ptcore.ones(2),))[1]
    tensor([1.0000, 0.5403])
    """
    return _jvp_impl(func, primals, tangents, has_aux)


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP of
    ``func`` at ``primals`` (``torch.func.linearize``)."""
    out, _ = jvp(func, primals, tuple(_unflatten(
        [x.new_zeros(x.shape) if isinstance(x, _TensorBase) else x
         for x in _structure(primals)[0]], _structure(primals)[1])))
    p_spec = _structure(primals)[1]

    def jvp_fn(*tangents):
        t_leaves, t_spec = _structure(tangents)
        if not _same_spec(p_spec, t_spec):
            raise RuntimeError("linearize: expected the tangents to have the structure of the "
                               f"primals: {_spec_str(p_spec)}, got {_spec_str(t_spec)}")
        for p, t in zip(_structure(primals)[0], t_leaves):
            if tuple(p.shape) != tuple(t.shape) or p.dtype is not t.dtype:
                raise RuntimeError(f"linearize: expected tangent of shape {list(p.shape)} and "
                                   f"dtype {p.dtype}, got shape {list(t.shape)} and dtype "
                                   f"{t.dtype}")
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


def _any_batched(args):
    leaves, _ = _structure(builtins.list(args))
    return builtins.any(is_batched(x) for x in leaves)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Jacobian of ``func`` w.r.t. ``args[argnums]`` by forward-mode AD
    (``torch.func.jacfwd``): one JVP per input element, vmapped over the unit
    tangents of all input elements at once.

    For an output of shape ``O`` and an input of shape ``I`` the block has
    shape ``O + I``; tuples of outputs/argnums give nested tuples (as torch).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        frames = _vmap_frames()
        if frames and _any_batched(args):
            # under vmap, of a batched input: the same Jacobian by reverse mode, whose
            # backward the batching layer runs batched
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        pt = _pt()
        idx = _argnums(argnums, builtins.len(args), "jacfwd")
        chosen = [args[i] for i in idx]
        x_leaves, x_spec = _structure(chosen)
        for x in x_leaves:
            if not isinstance(x, _TensorBase):
                raise RuntimeError(f"jacfwd: expected the differentiated inputs to be Tensors, "
                                   f"got {type(x).__name__}")

        def f_of(*xs):
            new = builtins.list(args)
            for i, v in zip(idx, _unflatten(builtins.list(xs), x_spec)):
                new[i] = v
            return func(*new, **kwargs)

        # one JVP per input element, vmapped over the unit tangents of all input
        # elements at once (torch's jacfwd): sample k carries the k-th
        sizes = [x.numel() for x in x_leaves]
        total = builtins.sum(sizes)
        if total == 0:  # no input elements: one call for the output's structure
            r = _jvp_impl(f_of, tuple(x_leaves), tuple(pt.zeros_like(y) for y in x_leaves),
                          has_aux, "jacfwd")
            out, aux = r[0], (r[2] if has_aux else None)
            t_cols = None
        elif frames:
            # inside another jacfwd's vmap (jacfwd(jacfwd(f))): one JVP per element
            cols = []
            for j, x in enumerate(x_leaves):
                for k in range(sizes[j]):
                    ts = [pt.zeros_like(y) for y in x_leaves]
                    e = pt.zeros(sizes[j], dtype=x.dtype, device=x.device)
                    e[k] = 1
                    ts[j] = e.view(x.shape)
                    r = _jvp_impl(f_of, tuple(x_leaves), tuple(ts), has_aux, "jacfwd")
                    if not cols:
                        aux = r[2] if has_aux else None
                    cols.append(_structure(r[1]))
            out = _unflatten([pt.stack(c) for c in zip(*[t for t, _ in cols])], cols[0][1])
            t_cols, _ = _structure(out)
        else:
            basis = []
            off = 0
            for x, n in zip(x_leaves, sizes):
                e = pt.zeros((total, n), dtype=x.dtype, device=x.device)
                e[off:off + n].copy_(pt.eye(n, dtype=x.dtype, device=x.device))
                basis.append(e.view((total,) + tuple(x.shape)))
                off += n

            def push(*ts):
                r = _jvp_impl(f_of, tuple(x_leaves), ts, has_aux, "jacfwd")
                return (r[1], r[2]) if has_aux else r[1]

            # as torch: the output's structure is its tangent's; aux is sample 0's
            r = vmap(push, randomness=randomness)(*basis)
            out = r[0] if has_aux else r
            if has_aux:
                a_leaves, a_spec = _structure(r[1])
                aux = _unflatten([a[0] for a in a_leaves], a_spec)
            t_cols, _ = _structure(out)     # per output leaf: (total, *o.shape)
        o_leaves, o_spec = _structure(out)
        if t_cols is not None:
            o_leaves = [o[0] for o in o_leaves]       # shapes of one sample
        blocks = []
        for oi, o in enumerate(o_leaves):
            per_in = []
            for j, x in enumerate(x_leaves):
                shape = tuple(o.shape) + tuple(x.shape)
                if t_cols is None:
                    jac = pt.zeros(shape, dtype=o.dtype, device=o.device)
                else:
                    off = builtins.sum(sizes[:j])
                    c = t_cols[oi][off:off + sizes[j]]            # (n_j, *o.shape)
                    jac = c.reshape(sizes[j], -1).t().reshape(shape)
                per_in.append(jac)
            per_in = _unflatten(per_in, x_spec)
            blocks.append(per_in[0] if isinstance(argnums, builtins.int) else tuple(per_in))
        res = _unflatten(blocks, o_spec)
        if has_aux:
            return res, aux
        return res
    return wrapper


def hessian(func, argnums=0):
    """Hessian of a scalar-valued ``func``: ``jacfwd(jacrev(func, argnums), argnums)``
    (forward-over-reverse, as ``torch.func.hessian``)."""
    return jacfwd(jacrev(func, argnums), argnums)
