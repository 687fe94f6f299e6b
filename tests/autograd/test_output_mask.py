"""A backward pass computes only the gradients it uses (torch's
task_should_compute_output, which its built-in kernels read; ptcore's conv
Functions through ptcore.autograd.function.output_mask, the mm/addmm formulas
through graph.current_output_mask): ``autograd.grad(D(x), x)`` -- a gradient
penalty's first backward -- runs no weight-gradient kernel, ``autograd.grad(loss,
weights)`` no input gradient of the first layer; the values and the penalty's
second-order gradients are torch's, a plain backward() computes every gradient,
and a user's Function sees needs_input_grad fixed at forward time, as torch's."""
import numpy as np
import pytest

import ptcore
import ptcore.autograd._formulas_linalg as FL
import ptcore.nn.functional._conv as C

torch = pytest.importorskip("torch")


def _counting(monkeypatch, calls, owner, names):
    """Count in ``calls`` the calls of ``owner``'s attributes ``names``
    (label -> attribute)."""
    for label, attr in names.items():
        calls[label] = 0
        real = getattr(owner, attr)

        def counted(*a, _real=real, _label=label):
            calls[_label] += 1
            return _real(*a)
        monkeypatch.setattr(owner, attr, counted)
    return calls


def _grads_of_weights(p, t, a):
    """``autograd.grad`` of each net's summed output w.r.t. its parameters, the
    input ``a`` requiring grad (ptcore's then torch's, as arrays)."""
    got = []
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        got.append([g.numpy() for g in lib.autograd.grad(net(x).sum(), list(net.parameters()))])
    return got


def _penalty_matches_torch(p, t, a, calls, penalty, rtol, atol):
    """A gradient penalty on each net: ``g = autograd.grad(out.sum(), x,
    create_graph=True)`` (ptcore's running no weight gradient: ``calls``),
    then ``penalty(g, out).backward()``; g and the parameters' gradients
    (None where a parameter does not reach the penalty) equal torch's."""
    res = {}
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        out = net(x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        if lib is ptcore:
            assert calls == {"weight": 0, "input": 2}
        penalty(g, out).backward()
        res[lib.__name__] = [g.detach().numpy()] + [None if q.grad is None else q.grad.numpy()
                                                    for q in net.parameters()]
    for u, v in zip(res["ptcore"], res["torch"]):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


@pytest.fixture
def kernel_calls(monkeypatch):
    calls = {}
    _counting(monkeypatch, calls, C._ConvBwdW, {"weight": "apply"})
    return _counting(monkeypatch, calls, C._ConvBwdX, {"input": "apply"})


@pytest.fixture
def products(monkeypatch):
    return _counting(monkeypatch, {}, FL, {"input": "_mm_grad_a", "weight": "_mm_grad_b"})


def _conv_nets(dim):
    conv = {1: "Conv1d", 2: "Conv2d", 3: "Conv3d"}[dim]
    ptcore.manual_seed(0)
    p = ptcore.nn.Sequential(getattr(ptcore.nn, conv)(3, 6, 3, padding=1), ptcore.nn.Tanh(),
                             getattr(ptcore.nn, conv)(6, 4, 3, stride=2))
    t = torch.nn.Sequential(getattr(torch.nn, conv)(3, 6, 3, padding=1), torch.nn.Tanh(),
                            getattr(torch.nn, conv)(6, 4, 3, stride=2))
    with torch.no_grad():
        for a, b in zip(p.parameters(), t.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return p, t


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gradient_penalty_runs_no_weight_gradient_and_matches_torch(dim, kernel_calls):
    p, t = _conv_nets(dim)
    a = np.random.default_rng(dim).standard_normal((2, 3) + (7,) * dim).astype(np.float32)
    _penalty_matches_torch(p, t, a, kernel_calls, lambda g, out: (g ** 2).sum() + out.square().mean(),
                           2e-4, 2e-5)


def test_grad_of_the_weights_only_runs_no_first_input_gradient(kernel_calls):
    p, t = _conv_nets(2)
    a = np.random.default_rng(5).standard_normal((2, 3, 9, 9)).astype(np.float32)
    got = _grads_of_weights(p, t, a)
    # the second conv's input gradient feeds the first conv's weights; the first's own
    # input gradient (toward x, which requires grad but was not asked for) is not made
    assert kernel_calls == {"weight": 2, "input": 1}
    for u, v in zip(*got):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5)


def test_plain_backward_and_user_functions_keep_needs_input_grad(kernel_calls):
    p, _ = _conv_nets(2)
    x = ptcore.randn(2, 3, 9, 9, requires_grad=True)
    p(x).sum().backward()
    assert kernel_calls == {"weight": 2, "input": 2}
    seen = []

    class F(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, g

    a = ptcore.randn(3, requires_grad=True)
    b = ptcore.randn(3, requires_grad=True)
    ptcore.autograd.grad(F.apply(a, b).sum(), a)
    assert seen == [(True, True)]          # torch's: fixed at forward time


def _linear_nets(bias):
    ptcore.manual_seed(0)
    p = ptcore.nn.Sequential(ptcore.nn.Linear(6, 12, bias=bias), ptcore.nn.Tanh(),
                             ptcore.nn.Linear(12, 1, bias=bias))
    t = torch.nn.Sequential(torch.nn.Linear(6, 12, bias=bias), torch.nn.Tanh(),
                            torch.nn.Linear(12, 1, bias=bias))
    with torch.no_grad():
        for a, b in zip(p.parameters(), t.parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return p, t


@pytest.mark.parametrize("bias", [True, False])          # addmm / mm
def test_linear_gradient_penalty_runs_no_weight_product_and_matches_torch(bias, products):
    p, t = _linear_nets(bias)
    a = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    _penalty_matches_torch(p, t, a, products, lambda g, out: ((g.norm(dim=1) - 1) ** 2).mean(),
                           1e-4, 1e-6)


def test_linear_weights_only_and_plain_backward(products):
    p, t = _linear_nets(True)
    a = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    got = _grads_of_weights(p, t, a)
    assert products == {"weight": 2, "input": 1}
    for u, v in zip(*got):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    products.update(weight=0, input=0)
    x = ptcore.tensor(a, requires_grad=True)
    p(x).sum().backward()
    assert products == {"weight": 2, "input": 2}
    assert x.grad is not None and all(q.grad is not None for q in p.parameters())
