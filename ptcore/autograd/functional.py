"""Higher-level autograd functions: vjp, jvp, jacobian, hessian, hvp, vhp."""
from ptcore._tensor import _TensorBase
from ptcore._dispatch import forward_ad as _fwl
from ptcore.autograd.engine import grad
import ptcore
from ptcore.autograd import forward_ad
from ptcore.autograd.forward_ad import _check_and_make_dual
from ptcore.func import jacfwd
from ptcore.func._batched import is_batched
from ptcore.func import _jac_rows_by_vmap

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tuple(x):
    is_t = isinstance(x, tuple)
    return (x if is_t else (x,)), is_t


def _prep(inputs, create_graph):
    res = []
    for x in inputs:
        if not isinstance(x, _TensorBase):
            raise TypeError(f"The inputs given to the function must be Tensors, got {type(x).__name__}")
        if create_graph and x.requires_grad:
            res.append(x.view_as(x))
        else:
            # (keeping forward-mode tangents: forward-over-reverse hessian)
            res.append(_fwl.detach(x).requires_grad_(True))
    return tuple(res)


# torch.autograd.functional's helpers that libraries import by name (pytorch-minimize's
# SciPy minimizer builds its Jacobians from them, with torch._vmap_internals._vmap)

def _as_tuple(inp, arg_name=None, fn_name=None):
    """``(whether inp was a tuple, inp as a tuple)``, a TypeError naming ``arg_name`` and
    ``fn_name`` for an element that is no Tensor; without either name, only ``inp`` as a
    tuple (a list converted), unchecked."""
    if arg_name is None and fn_name is None:
        return tuple(inp) if isinstance(inp, (tuple, list)) else (inp,)
    inp, is_t = _tuple(inp)
    for i, el in enumerate(inp):
        if not isinstance(el, _TensorBase):
            where = f"value at index {i}" if is_t else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or "
                            f"a tuple of Tensors but the {where} has type {type(el)}.")
    return is_t, inp


def _tuple_postprocess(res, to_unpack):
    """Undo :func:`_as_tuple` on ``res``: ``to_unpack`` is one flag (was the input a tuple)
    or two (the outputs' and the inputs')."""
    if isinstance(to_unpack, tuple):
        if len(to_unpack) != 2:
            raise AssertionError("Expected to_unpack tuple to have exactly 2 elements")
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_postprocess(inputs, create_graph):
    """``inputs`` (a tuple of tensors, or of such tuples) detached unless ``create_graph``."""
    if isinstance(inputs[0], _TensorBase):
        return inputs if create_graph else tuple(_fin(t, False) for t in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _construct_standard_basis_for(tensors, tensor_numels):
    """The rows of the ``N x N`` identity (``N = sum(tensor_numels)``) split by columns into
    one ``N x numel`` chunk per tensor, of that tensor's dtype and device."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, "
                             f"but got {len(tensors)} and {len(tensor_numels)}")
    if len(tensors) == 0:
        raise AssertionError("Expected at least one tensor")
    total = sum(tensor_numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, tensor_numels))
    start = 0
    for chunk, n in zip(chunks, tensor_numels):
        chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


class _StrategyError(AssertionError, ValueError):
    """A bad ``strategy`` name: torch asserts (AssertionError); a ValueError too."""


def _check_outputs_are_tensors(outs, fn_name):
    """torch's _as_tuple on a function's outputs: Tensors only (TypeError)."""
    for o in outs:
        if not isinstance(o, _TensorBase):
            raise TypeError(f"The outputs of the user-provided function given to {fn_name} must be "
                            "either a Tensor or a tuple of Tensors but the given outputs of the "
                            f"user-provided function has type {type(o).__name__}.")


def _check_jacobian_requires_grad(jac, strict):
    """strict mode in hessian/vhp/hvp: the gradient must depend on the inputs."""
    if strict:
        for i, g in enumerate(jac):
            if not g.requires_grad:
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is not "
                    "allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example).")


def _single_output(out, fn_name):
    """The one-element Tensor that hessian/vhp/hvp's function must return."""
    if not isinstance(out, _TensorBase):
        if isinstance(out, tuple):
            _check_outputs_are_tensors(out, fn_name)
        else:
            _check_outputs_are_tensors((out,), fn_name)
        raise RuntimeError(f"The function given to {fn_name} must return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return out


_NO_GRAD_OUTPUT = ("Output {} of the user-provided function does not require gradients. The "
                   "outputs must be computed in a differentiable manner from the input when "
                   "running in strict mode.")


def _check_outputs_require_grad(outs, strict, message=_NO_GRAD_OUTPUT):
    """strict mode: every output must depend differentiably on the inputs."""
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(message.format(i))


def _grad(outs, ins, gos, create_graph, retain_graph=None, independent=None):
    """The gradients of ``outs`` w.r.t. ``ins``, zeros for an unused input;
    with ``independent`` (strict mode), an unused input raises RuntimeError
    with that message (formatted with the input's index)."""
    outs2, gos2 = [], []
    for o, g in zip(outs, gos):
        if o.requires_grad:
            outs2.append(o)
            gos2.append(g)
    if not outs2:
        gs = (None,) * len(ins)
    else:
        gs = grad(outs2, ins, gos2, create_graph=create_graph, allow_unused=True,
                  retain_graph=True if retain_graph is None else retain_graph)
    if independent is not None:
        for i, g in enumerate(gs):
            if g is None:
                raise RuntimeError(independent.format(i))
    return tuple(ptcore.zeros_like(x) if g is None else g for g, x in zip(gs, ins))


def _check_kept_graph(gs, strict, create_graph, what="jacobian"):
    """strict with create_graph: each result must depend on the inputs."""
    if strict and create_graph:
        for i, g in enumerate(gs):
            if not g.requires_grad:
                raise RuntimeError(f"The {what} of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")


def _fin(t, create_graph):
    return t if create_graph else t.detach()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``."""
    inputs, is_t = _tuple(inputs)
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        _check_outputs_are_tensors(outs, "vjp")
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            vs = (ptcore.ones_like(outs[0]),)
        else:
            vs, _ = _tuple(v)
        _check_outputs_require_grad(outs, strict)
        gs = _grad(outs, ins, vs, create_graph, independent=(
            "The output of the user-provided function is independent of input {}. This is not "
            "allowed in strict mode.") if strict else None)
        _check_kept_graph(gs, strict, create_graph)
    outs = tuple(_fin(o, create_graph) for o in outs)
    gs = tuple(_fin(g, create_graph) for g in gs)
    return (outs if out_t else outs[0]), (gs if is_t else gs[0])


def _check_v(vs, inputs):
    if len(vs) != len(inputs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(inputs)} but got "
                           f"{len(vs)}.")
    for v, x in zip(vs, inputs):
        if not isinstance(v, _TensorBase):
            raise TypeError(f"The given v should contain only Tensors, got {type(v).__name__}")
        if tuple(v.shape) != tuple(x.shape):
            raise RuntimeError(f"v has invalid size: should be {x.shape} but got {v.shape}.")


class _Level:
    """A forward-AD level of its own (these functions nest with the others)."""

    def __enter__(self):
        self.lv = _fwl.push_level()
        return self.lv.idx

    def __exit__(self, *exc):
        _fwl.pop_level(self.lv.idx)
        return False


def _dual(x, v, lvl):
    return _check_and_make_dual(x, v, lvl)


def _tangents(outs, lvl):
    return tuple(_fwl.detach(t) if t is not None else ptcore.zeros_like(o)
                 for o, t in ((o, _fwl.get_tangent(o, lvl)) for o in outs))


def _forward_jvp(func, inputs, vs):
    """``(outputs, J v)`` by forward-mode AD (detached results)."""
    with _Level() as lvl:
        duals = tuple(_dual(_fwl.detach(x), v, lvl) for x, v in zip(inputs, vs))
        out = func(*duals)
        outs, out_t = _tuple(out)
        for o in outs:
            if not isinstance(o, _TensorBase):
                raise TypeError("The outputs of the user-provided function given to jvp must be "
                                f"either a Tensor or a tuple of Tensors but the given outputs of "
                                f"the user-provided function has type {type(o).__name__}.")
        jv = _tangents(outs, lvl)
        outs = tuple(_fwl.detach(o) for o in outs)
    return outs, out_t, jv


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: by forward-mode AD, or (``create_graph`` or
    ``strict``) by the double-vjp trick, as torch computes it."""
    inputs, is_t = _tuple(inputs)
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        vs = (ptcore.ones_like(inputs[0]),)
    else:
        vs, _ = _tuple(v)
    _check_v(vs, inputs)
    if not create_graph and not strict:
        outs, out_t, jv = _forward_jvp(func, inputs, vs)
        return (outs if out_t else outs[0]), (jv if out_t else jv[0])
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        _check_outputs_are_tensors(outs, "jvp")
        _check_outputs_require_grad(outs, strict)
        us = tuple(ptcore.zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grad(outs, ins, us, create_graph=True, independent=(
            "The output of the user-provided function is independent of input {}. This is not "
            "allowed in strict mode.") if strict else None)
        _check_outputs_require_grad(gs, strict, (
            "The gradient with respect to input {} is independent of the inputs of the "
            "user-provided function. This is not allowed in strict mode."))
        jv = _grad(gs, us, vs, create_graph=create_graph, independent=(
            "The gradient with respect to the input is independent of entry {} in the "
            "grad_outputs when using the double backward trick to compute forward mode "
            "gradients. This is not allowed in strict mode.") if strict else None)
        _check_kept_graph(jv, strict, create_graph)
    outs = tuple(_fin(o, create_graph) for o in outs)
    jv = tuple(_fin(g, create_graph) for g in jv)
    return (outs if out_t else outs[0]), (jv if out_t else jv[0])


_FWD_NEEDS_VECTORIZE = ("Computing Jacobian using forward-AD or forward-over-reverse Hessian is "
                        "only implemented for `vectorize=True`.")


def _jacobian_forward(func, inputs, is_t, create_graph):
    """The Jacobian by forward-mode AD: one JVP per input element, vmapped over
    the unit tangents (``ptcore.func.jacfwd``)."""
    if not create_graph and not any(is_batched(x) for x in inputs):
        # (requiring grad, as torch's duals: a reverse-mode function inside, the
        # forward-over-reverse hessian, differentiates w.r.t. them)
        src = tuple(_fwl.detach(y).requires_grad_(True) for y in inputs)
        with ptcore.enable_grad():
            jac = jacfwd(lambda *a: func(*a), argnums=tuple(range(len(src))))(*src)
        out_t = isinstance(jac, list) or (isinstance(jac, tuple) and len(jac) > 0 and
                                          isinstance(jac[0], tuple))
        res = [list(j) for j in (jac if out_t else (jac,))]
        res = [[_fin(b, False) for b in r] for r in res]
        if not is_t:
            res = tuple(r[0] for r in res)
        return res if out_t else res[0]
    cols = []        # per input: per element, the output tangents
    outs = out_t = None
    for i, x in enumerate(inputs):
        per = []
        for k in range(x.numel()):
            vs = [ptcore.zeros_like(y) for y in inputs]
            e = ptcore.zeros(x.numel(), dtype=x.dtype, device=x.device)
            e[k] = 1
            vs[i] = e.view(x.shape)
            with _Level() as lvl:
                src = inputs if create_graph else tuple(_fwl.detach(y) for y in inputs)
                duals = tuple(_dual(y.requires_grad_(True) if not y.requires_grad and
                                    not create_graph else y, v, lvl) for y, v in zip(src, vs))
                out = func(*duals)
                os, out_t = _tuple(out)
                per.append(_tangents(os, lvl))
                if outs is None:
                    outs = os
        cols.append(per)
    if outs is None:
        outs, out_t = _tuple(func(*inputs))
    res = []
    for j, o in enumerate(outs):
        per_in = []
        for i, x in enumerate(inputs):
            shape = tuple(o.shape) + tuple(x.shape)
            if cols[i]:
                jac = ptcore.stack([c[j] for c in cols[i]], -1).reshape(shape)
            else:
                jac = ptcore.zeros(shape, dtype=o.dtype, device=o.device)
            per_in.append(_fin(jac, create_graph))
        res.append(per_in)
    # torch's _tuple_postprocess of its forward-mode result: lists when both
    # the outputs and the inputs are tuples, a tuple per output otherwise
    if not is_t:
        res = tuple(r[0] for r in res)
    return res if out_t else res[0]


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (shape ``out.shape + in.shape``);
    ``strategy="forward-mode"`` (with ``vectorize=True``, as torch) computes
    it by forward-mode AD."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise _StrategyError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
                         'If your function has more outputs than inputs, "forward-mode" tends to '
                         'be more performant. Otherwise, prefer to use "reverse-mode".')
    inputs, is_t = _tuple(inputs)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian does not support "
                                      "`create_graph=True` with `strategy='forward-mode'`")
        if not vectorize:
            raise NotImplementedError(_FWD_NEEDS_VECTORIZE)
        return _jacobian_forward(func, inputs, is_t, False)
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        _check_outputs_are_tensors(outs, "jacobian")
        _check_outputs_require_grad(outs, strict)
        if strict and vectorize:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        res = []
        for n, o in enumerate(outs):
            if vectorize and o.numel() > 0:
                # torch's vectorize: the vjps of all rows of the identity in one batched
                # backward (vmap); a backward formula that cannot take batched
                # cotangents falls back to the loop below
                try:
                    blocks = _jac_rows_by_vmap(o, ins, create_graph, None)
                except RuntimeError:
                    blocks = None
                if blocks is not None:
                    blocks = [_fin(b, create_graph) for b in blocks]
                    res.append(tuple(blocks) if is_t else blocks[0])
                    continue
            rows = [[] for _ in ins]
            for k in range(o.numel()):
                go = ptcore.zeros_like(o)
                go.view(-1)[k] = 1
                gs = _grad((o,), ins, (go,), create_graph, independent=(
                    f"Output {n} of the user-provided function is independent of input {{}}. "
                    "This is not allowed in strict mode.") if strict else None)
                for i, g in enumerate(gs):
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {n}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[i].append(_fin(g, create_graph))
            per_in = []
            for i, x in enumerate(ins):
                if rows[i]:
                    j = ptcore.stack(rows[i]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    j = ptcore.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                per_in.append(j)
            res.append(tuple(per_in) if is_t else per_in[0])
    return tuple(res) if out_t else res[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise _StrategyError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs_t, is_t = _tuple(inputs)

    def jac_func(*ins):
        with ptcore.enable_grad():
            out = func(*ins)
            _check_outputs_require_grad(_tuple(out)[0], strict)
            out = _single_output(out, "hessian")
            gs = _grad((out,), ins, (ptcore.ones_like(out),), create_graph=True)
        _check_jacobian_requires_grad(gs, strict)
        return gs if is_t else gs[0]
    if outer_jacobian_strategy == "forward-mode":
        if not vectorize:
            raise NotImplementedError(_FWD_NEEDS_VECTORIZE)
        # forward-over-reverse
        return _jacobian_forward(jac_func, inputs_t, is_t, False)
    return jacobian(jac_func, inputs_t if is_t else inputs_t[0], create_graph=create_graph,
                    strict=strict, vectorize=vectorize)


def _v_or_ones(v, inputs_t):
    """The validated ``v`` tuple; None only for one one-element input."""
    if v is None:
        if len(inputs_t) != 1 or inputs_t[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        return (ptcore.ones_like(inputs_t[0]),)
    vs, _ = _tuple(v)
    _check_v(vs, inputs_t)
    return vs


def vhp(func, inputs, v=None, create_graph=False, strict=False, _name="vhp"):
    """``(func(inputs), v^T H)``."""
    inputs, is_t = _tuple(inputs)
    vs = _v_or_ones(v, inputs)
    with ptcore.enable_grad():
        ins = _prep(inputs, True)
        out = func(*ins)
        _check_outputs_require_grad(_tuple(out)[0], strict)
        out = _single_output(out, _name)
        gs = _grad((out,), ins, (ptcore.ones_like(out),), create_graph=True)
        _check_jacobian_requires_grad(gs, strict)
        h = _grad(gs, ins, vs, create_graph, independent=(
            "The hessian of the user-provided function is independent of entry {} in the "
            "grad_jacobian. This is not allowed in strict mode.") if strict else None)
        _check_kept_graph(h, strict, create_graph, "hessian")
    o = _fin(out, create_graph)
    h = tuple(_fin(x, create_graph) for x in h)
    return o, (h if is_t else h[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``: forward-over-reverse (the JVP of the
    gradient) unless ``create_graph`` or ``strict``, then as ``vhp`` (equal
    for the symmetric Hessian)."""
    if create_graph or strict:
        return vhp(func, inputs, v, create_graph, strict, _name="hvp")
    inputs_t, is_t = _tuple(inputs)
    vs = _v_or_ones(v, inputs_t)
    with _Level() as lvl:
        with ptcore.enable_grad():
            leaves = tuple(_fwl.detach(x).requires_grad_(True) for x in inputs_t)
            duals = tuple(_dual(x, t, lvl) for x, t in zip(leaves, vs))
            out = _single_output(func(*duals), "hvp")
            if out.requires_grad:
                gs = grad(out, leaves, allow_unused=True)
            else:
                gs = (None,) * len(leaves)
        hv = tuple(ptcore.zeros_like(x) if g is None else
                   (_fwl.detach(_fwl.get_tangent(g, lvl)) if _fwl.get_tangent(g, lvl) is not None
                    else ptcore.zeros_like(x)) for g, x in zip(gs, inputs_t))
        o = _fwl.detach(out)
    return o, (hv if is_t else hv[0])
