"""``autograd.functional`` (vjp, jvp, jacobian, hessian, hvp, vhp) vs torch."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

X = np.array([0.5, -1.0, 2.0])
Y = np.array([[1.5, 0.25], [-0.75, 0.3]])
V = np.array([0.3, 0.1, -0.2])


def f_vec(m):
    return lambda x: (x.exp() * x.sin()).cumsum(0)


def f_two(m):
    return lambda x, y: (x[:2] * y).tanh().sum(0)


def f_scalar(m):
    return lambda x: (x ** 3).sum() + (x[0] * x[1]).sin()


def f_scalar2(m):
    return lambda x, y: (x[:2] @ y @ x[1:]) ** 2


def _flat(r):
    if isinstance(r, (tuple, list)):
        out = []
        for a in r:
            out.extend(_flat(a))
        return out
    return [r]


def _cmp(p, t):
    p, t = _flat(p), _flat(t)
    assert len(p) == len(t)
    for a, b in zip(p, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = {
    "vjp": lambda m: m.autograd.functional.vjp(f_vec(m), m.tensor(X), m.tensor(V)),
    "vjp-two": lambda m: m.autograd.functional.vjp(f_two(m), (m.tensor(X), m.tensor(Y)),
                                                    m.tensor([1.0, -2.0], dtype=m.float64)),
    "jvp": lambda m: m.autograd.functional.jvp(f_vec(m), m.tensor(X), m.tensor(V)),
    "jvp-two": lambda m: m.autograd.functional.jvp(f_two(m), (m.tensor(X), m.tensor(Y)),
                                                    (m.tensor(V), m.tensor(Y * 2))),
    "jacobian": lambda m: m.autograd.functional.jacobian(f_vec(m), m.tensor(X)),
    "jacobian-two": lambda m: m.autograd.functional.jacobian(f_two(m), (m.tensor(X), m.tensor(Y))),
    "hessian": lambda m: m.autograd.functional.hessian(f_scalar(m), m.tensor(X)),
    "hessian-two": lambda m: m.autograd.functional.hessian(f_scalar2(m), (m.tensor(X), m.tensor(Y))),
    "hvp": lambda m: m.autograd.functional.hvp(f_scalar(m), m.tensor(X), m.tensor(V)),
    "vhp": lambda m: m.autograd.functional.vhp(f_scalar(m), m.tensor(X), m.tensor(V)),
    "vhp-two": lambda m: m.autograd.functional.vhp(f_scalar2(m), (m.tensor(X), m.tensor(Y)),
                                                    (m.tensor(V), m.tensor(Y))),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_vs_torch(name):
    _cmp(CASES[name](ptcore), CASES[name](torch))


@needs_torch
def test_create_graph_results_are_differentiable():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        h = m.autograd.functional.hessian(f_scalar(m), x, create_graph=True)
        assert h.requires_grad
        g, = m.autograd.grad(h.sum(), x)
        return h, g
    _cmp(run(ptcore), run(torch))


def test_results_do_not_require_grad_without_create_graph():
    x = ptcore.tensor(X)
    out, v = ptcore.autograd.functional.vjp(f_vec(ptcore), x, ptcore.tensor(V))
    assert not out.requires_grad and not v.requires_grad
    j = ptcore.autograd.functional.jacobian(f_vec(ptcore), x)
    assert not j.requires_grad and tuple(j.shape) == (3, 3)


STRICT_CASES = {
    "jacobian_constant_output": lambda m, x: m.autograd.functional.jacobian(
        lambda z: m.ones(2, dtype=m.float64), x, strict=True),
    "jacobian_unused_input": lambda m, x: m.autograd.functional.jacobian(
        lambda a, b: a * 2, (x, x), strict=True),
    "jacobian_ok": lambda m, x: m.autograd.functional.jacobian(lambda z: z ** 2, x, strict=True),
    "jacobian_vectorize": lambda m, x: m.autograd.functional.jacobian(
        lambda z: z ** 2, x, strict=True, vectorize=True),
    "jacobian_create_graph_linear": lambda m, x: m.autograd.functional.jacobian(
        lambda z: z * 2, x, strict=True, create_graph=True),
    "jacobian_not_strict_constant": lambda m, x: m.autograd.functional.jacobian(
        lambda z: m.ones(2, dtype=m.float64), x),
    "vjp_constant_output": lambda m, x: m.autograd.functional.vjp(
        lambda z: m.ones(2, dtype=m.float64), x, m.ones(2, dtype=m.float64), strict=True),
    "vjp_unused_input": lambda m, x: m.autograd.functional.vjp(
        lambda a, b: a * 2, (x, x), m.ones(2, dtype=m.float64), strict=True),
    "vjp_ok": lambda m, x: m.autograd.functional.vjp(
        lambda a, b: a * b, (x, x), m.ones(2, dtype=m.float64), strict=True),
}


@needs_torch
@pytest.mark.parametrize("key", sorted(STRICT_CASES))
def test_strict_mode_matches_torch(key):
    fn = STRICT_CASES[key]
    try:
        want = fn(torch, torch.tensor([1.0, 2.0], dtype=torch.float64))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:
            fn(ptcore, ptcore.tensor([1.0, 2.0], dtype=ptcore.float64))
        assert str(info.value) == str(e)
        return
    _cmp(fn(ptcore, ptcore.tensor([1.0, 2.0], dtype=ptcore.float64)), want)


def test_grad_with_empty_inputs_raises_like_torch():
    x = ptcore.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        ptcore.autograd.grad((x * 2).sum(), [])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        ptcore.autograd.grad((x * 2).sum(), ())
