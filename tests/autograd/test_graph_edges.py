"""torch.autograd.graph's edge API: GradientEdge / get_gradient_edge as
inputs and outputs of autograd.grad and backward(inputs=), increment_version,
and register_multi_grad_hook in its two modes, against torch."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(ptcore), fn(torch)


def test_multi_grad_hook_all_mode_follows_the_pass():
    def run(lib):
        G = lib.autograd.graph
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
        c, d = a * b, a * b
        seen = []

        def fn(grads):
            seen.append([None if g is None else g.tolist() for g in grads])
        h = G.register_multi_grad_hook((a, b, c, d), fn)
        c.sum().backward(retain_graph=True)                 # d is not in this pass
        c.sum().backward(inputs=(a,), retain_graph=True)    # b's gradient is not computed
        with pytest.raises(RuntimeError, match="leaf node"):
            lib.autograd.grad(d.sum(), (b,), retain_graph=True)     # as torch: unsupported
        e = a * 1
        h2 = G.register_multi_grad_hook((e, c), fn)
        lib.autograd.grad((e * c).sum(), (e,), retain_graph=True)  # non-leaves: fine
        h2.remove()
        h.remove()
        (c + d).sum().backward()                            # removed: no call
        return seen
    p, t = _both(run)
    assert p == t
    assert len(p) == 3


def test_multi_grad_hook_any_mode_first_gradient_once_per_pass():
    def run(lib):
        G = lib.autograd.graph
        a = lib.ones(3, requires_grad=True)
        b = lib.full((3,), 2.0, requires_grad=True)
        c = lib.ones(3)                                     # no grad: skipped in any mode
        seen = []
        G.register_multi_grad_hook((a, b, c), lambda g: seen.append(g.tolist()), mode="any")
        (a * b).sum().backward(retain_graph=True)
        (a * 5).sum().backward()
        return seen
    p, t = _both(run)
    assert p == t and len(p) == 2


def test_multi_grad_hook_bad_mode():
    for lib in (ptcore, torch):
        with pytest.raises(ValueError, match="mode"):
            lib.autograd.graph.register_multi_grad_hook([lib.ones(1, requires_grad=True)],
                                                        print, mode="some")


def test_gradient_edge_as_input_and_output():
    def run(lib):
        G = lib.autograd.graph
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.exp() * 2
        z = (y ** 2).sum()
        ey, ex = G.get_gradient_edge(y), G.get_gradient_edge(x)
        gy, gx = lib.autograd.grad(z, (ey, ex), retain_graph=True)
        gx2, = lib.autograd.grad(ey, x, grad_outputs=gy, retain_graph=True)
        z.backward(inputs=[ex])
        return (gy.numpy(), gx.numpy(), gx2.numpy(), x.grad.numpy(), ex.output_nr,
                type(ex).__name__, len(ex))
    p, t = _both(run)
    for u, v in zip(p[:4], t[:4]):
        np.testing.assert_allclose(u, v, rtol=1e-6)
    assert p[4:] == t[4:]


def test_gradient_edge_errors():
    for lib in (ptcore, torch):
        G = lib.autograd.graph
        with pytest.raises(RuntimeError, match="does not require gradients"):
            G.get_gradient_edge(lib.ones(2))
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        g, = lib.autograd.grad((x * 2).sum(), G.get_gradient_edge(x), materialize_grads=True,
                               retain_graph=True)
        assert g.tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="materialize_grads"):     # an unused edge
            lib.autograd.grad((x * 2).sum(), G.get_gradient_edge(w), materialize_grads=True)


def test_increment_version():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 1
        v = y._version
        lib.autograd.graph.increment_version(y)
        lib.autograd.graph.increment_version([y, y])
        w = lib.ones(2, requires_grad=True)
        s = (w * w)                            # saves w
        lib.autograd.graph.increment_version(w)
        try:
            s.sum().backward()
            err = None
        except RuntimeError as e:
            err = "modified by an inplace operation" in str(e)
        with lib.inference_mode():
            i = lib.ones(2)
        lib.autograd.graph.increment_version(i)       # no version counter: left alone
        return y._version - v, err
    p, t = _both(run)
    assert p == t == (3, True)


@pytest.mark.parametrize("expr", [
    "x.sum()", "(x + 1).sum()", "(x - 1).sum()", "(x * 2).sum()", "(x * x).sum()",
    "x.view(3, 1).expand(3, 2).sum()", "x.mean()", "x.exp().sum()", "x[1:].sum()",
    "(x / 2).sum()", "x.reshape(1, 3).sum()"])
def test_second_backward_without_retain_graph(expr):
    # torch frees only saved tensors: a graph whose nodes saved none runs
    # again (gradients accumulate), one that saved some raises
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = eval(expr, {"x": x})
        y.backward()
        try:
            y.backward()
        except RuntimeError as e:
            assert "second time" in str(e)
            return "raised"
        return x.grad.tolist()
    p, t = _both(run)
    assert p == t
