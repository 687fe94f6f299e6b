"""Custom ``autograd.Function`` compared with ``torch.autograd.Function``."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _np(t):
    return t.detach().numpy()


def make_functions(m):
    F = m.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * ctx.k * g * x ** 2, None

    class Needs(F):
        @staticmethod
        def forward(ctx, a, b):
            ctx.flags = tuple(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g * 2 if ctx.needs_input_grad[0] else None,
                    g * 3 if ctx.needs_input_grad[1] else None)

    class Dirty(F):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class TwoOut(F):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax(-1)
            v = x.sort(-1)[0]
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x)
            return v, idx

        @staticmethod
        def backward(ctx, gv, gi):
            x, = ctx.saved_tensors
            return gv * 0 + 1 if gv is not None else None

    class NoMat(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            r = 0
            if g1 is not None:
                r = r + g1
            if g2 is not None:
                r = r + 2 * g2
            return r

    class Mat(F):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g1 is not None and g2 is not None
            return g1 + 2 * g2

    class Setup(F):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.exp()

    return dict(Cube=Cube, Needs=Needs, Dirty=Dirty, TwoOut=TwoOut, NoMat=NoMat, Mat=Mat,
                Setup=Setup, Once=Once)


def both(fn):
    return fn(ptcore, make_functions(ptcore)), fn(torch, make_functions(torch))


@needs_torch
def test_save_for_backward_and_double_backward():
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        y = F["Cube"].apply(x, 2.0)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        return y, g, gg, y.grad_fn.name()
    p, t = both(run)
    for a, b in zip(p[:3], t[:3]):
        np.testing.assert_allclose(_np(a), _np(b))
    assert p[3] == t[3] == "CubeBackward"


@needs_torch
def test_needs_input_grad():
    def run(m, F):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(A)
        y = F["Needs"].apply(a, b)
        y.sum().backward()
        return y.grad_fn.flags if hasattr(y.grad_fn, "flags") else None, a.grad
    p, t = both(run)
    np.testing.assert_allclose(_np(p[1]), _np(t[1]))


@needs_torch
def test_mark_dirty():
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        h = x * 1
        y = F["Dirty"].apply(h)
        assert y is h
        # the Function's in-place change counts once more (torch: 2, was 1)
        version = h._version
        y.sum().backward()
        return x.grad, h.grad_fn.name(), version
    p, t = both(run)
    np.testing.assert_allclose(_np(p[0]), _np(t[0]))
    assert p[1:] == t[1:]
    x = ptcore.tensor(A, requires_grad=True)
    fns = make_functions(ptcore)
    with pytest.raises(RuntimeError, match="leaf"):
        fns["Dirty"].apply(x)


@needs_torch
def test_mark_non_differentiable():
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        v, i = F["TwoOut"].apply(x)
        v.sum().backward()
        return i.requires_grad, v.requires_grad, x.grad
    p, t = both(run)
    assert p[:2] == t[:2]
    np.testing.assert_allclose(_np(p[2]), _np(t[2]))


@needs_torch
@pytest.mark.parametrize("name", ["NoMat", "Mat"])
def test_set_materialize_grads(name):
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        a, b = F[name].apply(x)
        a.sum().backward()           # b gets no gradient
        return x.grad
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


@needs_torch
def test_setup_context_form():
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        y = m.tensor(A[::-1].copy(), requires_grad=True)
        out = F["Setup"].apply(x, y)
        out.backward(m.ones_like(out))
        return out, x.grad, y.grad
    p, t = both(run)
    for a, b in zip(p, t):
        np.testing.assert_allclose(_np(a), _np(b))


@needs_torch
def test_once_differentiable():
    def run(m, F):
        x = m.tensor(A, requires_grad=True)
        y = F["Once"].apply(x)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError):
            m.autograd.grad(g.sum(), x)
        return g
    p, t = both(run)
    np.testing.assert_allclose(_np(p), _np(t))


def test_function_without_grad_inputs_builds_no_graph():
    F = make_functions(ptcore)
    y = F["Cube"].apply(ptcore.tensor(A), 2.0)
    assert y.grad_fn is None and not y.requires_grad
    with ptcore.no_grad():
        y = F["Cube"].apply(ptcore.tensor(A, requires_grad=True), 2.0)
    assert y.grad_fn is None


def test_wrong_number_of_gradients_raises():
    class Bad(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    x = ptcore.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(x, x).sum().backward()


def test_function_node_freed_without_cyclic_gc():
    """ctx <-> node must not form a reference cycle: the graph (and what
    the ctx holds) is freed by reference counting alone."""
    import gc
    import weakref

    class TwoOut(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            aux = ptcore.zeros(a.shape, dtype=ptcore.int64)
            ctx.save_for_backward(a)
            ctx.mark_non_differentiable(aux)
            return a * 2, aux

        @staticmethod
        def backward(ctx, g, gaux):
            (a,) = ctx.saved_tensors
            return g * 2

    was = gc.isenabled()
    gc.disable()
    try:
        x = ptcore.randn(5, requires_grad=True)
        y, aux = TwoOut.apply(x)
        node = weakref.ref(y.grad_fn)
        aux_ref = weakref.ref(aux)
        y.sum().backward()
        del y, aux
        assert node() is None
        assert aux_ref() is None
        assert x.grad.tolist() == [2.0] * 5
    finally:
        if was:
            gc.enable()


def test_backward_returning_a_non_tensor_raises_runtime_error():
    import ptcore

    class BadRet(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return 1.0
    x = ptcore.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expected Variable .* or None \(got float\)"):
        BadRet.apply(x).sum().backward()
