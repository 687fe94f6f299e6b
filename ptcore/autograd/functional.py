"""Higher-level autograd functions: vjp, jvp, jacobian, hessian, hvp, vhp."""
from ptcore._tensor import _TensorBase

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
            res.append(x.detach().requires_grad_(True))
    return tuple(res)


def _grad(outs, ins, gos, create_graph, retain_graph=None):
    from ptcore.autograd.engine import grad
    import ptcore
    outs2, gos2 = [], []
    for o, g in zip(outs, gos):
        if o.requires_grad:
            outs2.append(o)
            gos2.append(g)
    if not outs2:
        return tuple(ptcore.zeros_like(x) for x in ins)
    gs = grad(outs2, ins, gos2, create_graph=create_graph, allow_unused=True,
              retain_graph=True if retain_graph is None else retain_graph)
    return tuple(ptcore.zeros_like(x) if g is None else g for g, x in zip(gs, ins))


def _fin(t, create_graph):
    return t if create_graph else t.detach()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``."""
    import ptcore
    inputs, is_t = _tuple(inputs)
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            vs = (ptcore.ones_like(outs[0]),)
        else:
            vs, _ = _tuple(v)
        gs = _grad(outs, ins, vs, create_graph)
    outs = tuple(_fin(o, create_graph) for o in outs)
    gs = tuple(_fin(g, create_graph) for g in gs)
    return (outs if out_t else outs[0]), (gs if is_t else gs[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-vjp trick."""
    import ptcore
    inputs, is_t = _tuple(inputs)
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        vs = (ptcore.ones_like(inputs[0]),)
    else:
        vs, _ = _tuple(v)
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        us = tuple(ptcore.zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grad(outs, ins, us, create_graph=True)
        jv = _grad(gs, us, vs, create_graph=create_graph)
    outs = tuple(_fin(o, create_graph) for o in outs)
    jv = tuple(_fin(g, create_graph) for g in jv)
    return (outs if out_t else outs[0]), (jv if out_t else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (shape ``out.shape + in.shape``)."""
    import ptcore
    inputs, is_t = _tuple(inputs)
    with ptcore.enable_grad():
        ins = _prep(inputs, create_graph)
        out = func(*ins)
        outs, out_t = _tuple(out)
        res = []
        for o in outs:
            rows = [[] for _ in ins]
            for k in range(o.numel()):
                go = ptcore.zeros_like(o)
                go.view(-1)[k] = 1
                gs = _grad((o,), ins, (go,), create_graph)
                for i, g in enumerate(gs):
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
    import ptcore
    inputs_t, is_t = _tuple(inputs)

    def jac_func(*ins):
        with ptcore.enable_grad():
            out = func(*ins)
            if out.numel() != 1:
                raise RuntimeError("The function given to hessian should return a single Tensor "
                                   "containing a single element")
            gs = _grad((out,), ins, (ptcore.ones_like(out),), create_graph=True)
        return gs if is_t else gs[0]
    res = jacobian(jac_func, inputs_t if is_t else inputs_t[0], create_graph=create_graph)
    return res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``."""
    import ptcore
    inputs, is_t = _tuple(inputs)
    vs, _ = _tuple(v) if v is not None else ((ptcore.ones_like(inputs[0]),), False)
    with ptcore.enable_grad():
        ins = _prep(inputs, True)
        out = func(*ins)
        gs = _grad((out,), ins, (ptcore.ones_like(out),), create_graph=True)
        h = _grad(gs, ins, vs, create_graph)
    o = _fin(out, create_graph)
    h = tuple(_fin(x, create_graph) for x in h)
    return o, (h if is_t else h[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` (equal to vhp for the symmetric Hessian)."""
    return vhp(func, inputs, v, create_graph, strict)
