"""``autograd.Function`` under torch.func transforms (vmap with
``generate_vmap_rule`` or a ``vmap`` staticmethod, grad inside vmap, backward
after vmap) and ``setup_context``'s inputs, compared with torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((4, 3))
Y = np.random.default_rng(1).standard_normal((4, 3))


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _functions(m):
    class Sq(m.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x * x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return 2 * x * y * g, x * x * g

    class MyExp(m.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    class Sum(m.autograd.Function):
        @staticmethod
        def forward(x, dim):
            return x.sum(dim)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.shape, ctx.dim = inputs[0].shape, inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(ctx.dim).expand(ctx.shape), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            return x.movedim(in_dims[0], 0).sum(dim + 1), 0

    return Sq, MyExp, Sum


def _both(fn):
    return fn(ptcore), fn(torch)


@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (1, 1)])
def test_vmap_of_grad_through_generated_rule(in_dims):
    # the Function's node was not recorded inside vmap: zero gradients
    def run(m):
        Sq = _functions(m)[0]
        x, y = m.tensor(X), m.tensor(Y if in_dims[1] is not None else Y[0])
        if in_dims[0] == 1:
            x, y = x.t().contiguous(), y.t().contiguous()
        f = m.func.grad(lambda a, b: Sq.apply(a, b).pow(2).sum(), argnums=(0, 1))
        return m.func.vmap(f, in_dims=in_dims)(x, y)
    (pa, pb), (ta, tb) = _both(run)
    _close(pa, ta)
    _close(pb, tb)


def test_backward_after_vmap():
    def run(m):
        Sq, MyExp, _ = _functions(m)
        x = m.tensor(X, requires_grad=True)
        y = m.tensor(Y[0], requires_grad=True)
        out = m.vmap(Sq.apply, in_dims=(0, None))(x, y)
        e = m.vmap(MyExp.apply, in_dims=1, out_dims=1)(x)
        ((out ** 2).sum() + (e * m.arange(12.).reshape(4, 3)).sum()).backward()
        return out, x.grad, y.grad
    for p, t in zip(*_both(run)):
        _close(p, t)


def test_jacrev_hessian_and_nested_vmap():
    def run(m):
        _, MyExp, _ = _functions(m)
        x = m.tensor(X)
        return (m.vmap(m.func.jacrev(MyExp.apply))(x),
                m.func.jacrev(m.func.jacrev(lambda t: MyExp.apply(t).sum()))(x[0]),
                m.vmap(m.vmap(m.func.grad(lambda t: MyExp.apply(t).pow(2).sum())))(x),
                m.vmap(m.func.grad(lambda t: MyExp.apply(t).pow(2).sum()), chunk_size=3)(x))
    for p, t in zip(*_both(run)):
        _close(p, t)


def test_vmap_staticmethod_rule_and_its_backward():
    def run(m):
        Sum = _functions(m)[2]
        x = m.tensor(np.arange(24.).reshape(4, 3, 2) / 7)
        return (m.vmap(Sum.apply, in_dims=(1, None))(x, 0),
                m.vmap(m.func.grad(lambda t: Sum.apply(t, 0).pow(2).sum()))(x))
    for p, t in zip(*_both(run)):
        _close(p, t)


def test_non_differentiable_output_under_vmap():
    def run(m):
        class SortF(m.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                v, i = x.sort()
                return v, i

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.mark_non_differentiable(output[1])
                ctx.save_for_backward(output[1])

            @staticmethod
            def backward(ctx, gv, gi):
                i, = ctx.saved_tensors
                return m.zeros_like(gv).scatter(0, i, gv)
        x = m.tensor(X)
        g = m.vmap(m.func.grad(lambda t: (SortF.apply(t)[0] * m.arange(3.)).sum()))(x)
        v, i = m.vmap(SortF.apply)(x)
        return g, v, i
    (pg, pv, pi), (tg, tv, ti) = _both(run)
    _close(pg, tg)
    _close(pv, tv)
    assert pi.tolist() == ti.tolist() and not pi.requires_grad


def _vmap_error(m, kind):
    class F(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2
    if kind == "both":
        F.generate_vmap_rule = True
        F.vmap = staticmethod(lambda info, in_dims, x: (x * 2, 0))
    elif kind == "bad_return":
        F.vmap = staticmethod(lambda info, in_dims, x: x * 2)
    elif kind == "old_style":
        F.generate_vmap_rule = True
        del F.setup_context
        F.forward = staticmethod(lambda ctx, x: x * 2)
    with pytest.raises(RuntimeError) as e:
        m.vmap(F.apply)(m.ones(3, 2))
    return str(e.value)


@pytest.mark.parametrize("kind", ["none", "both", "bad_return", "old_style"])
def test_vmap_errors(kind):
    p, t = _vmap_error(ptcore, kind), _vmap_error(torch, kind)
    assert p.split(".")[0] == t.split(".")[0]


def test_setup_context_sees_forward_defaults():
    # torch binds the arguments to forward's signature: setup_context's
    # inputs include the defaults (a 2-argument call gave a 2-tuple)
    def run(m):
        class Lin(m.autograd.Function):
            @staticmethod
            def forward(x, w, b=None):
                out = x @ w.t()
                return out if b is None else out + b

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, w, b = inputs
                ctx.save_for_backward(x, w)
                ctx.has_b = b is not None

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g @ w, g.t() @ x, g.sum(0) if ctx.has_b else None
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(Y[:2], requires_grad=True)
        Lin.apply(x, w).pow(2).sum().backward()
        Lin.apply(x, w=w).sum().backward()
        return x.grad, w.grad
    for p, t in zip(*_both(run)):
        _close(p, t)



def _bad_function(m, kind):
    class F(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            if kind == "save":
                ctx.save_for_backward(x, 3)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g        # a gradient for the number k

    return F.apply(m.ones(3, requires_grad=True), 2.0).sum().backward()


@pytest.mark.parametrize("kind, exc, match", [
    # the message's index lookup compared tensors (RuntimeError: ambiguous bool)
    ("save", TypeError, "argument 1 is of type int"),
    # the gradient for a non-tensor input was dropped silently
    ("grad", RuntimeError, "returned a gradient different than None at position 2"),
])
def test_function_misuse_errors(kind, exc, match):
    for m in (ptcore, torch):
        with pytest.raises(exc, match=match):
            _bad_function(m, kind)
