"""A backward pass computes only the convolution gradients it uses (torch's
task_should_compute_output, read by ptcore's conv backward through
ptcore.autograd.function.output_mask): ``autograd.grad(out, x)`` runs no
weight-gradient kernel (a gradient penalty's first backward), ``autograd.grad
(out, weights)`` no input gradient of the first layer; the values, and the
penalty's second-order gradients, are torch's."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional._conv as C

torch = pytest.importorskip("torch")


@pytest.fixture
def kernel_calls(monkeypatch):
    calls = {"weight": 0, "input": 0}
    rw, rx = C._ConvBwdW.apply, C._ConvBwdX.apply

    def w(*a):
        calls["weight"] += 1
        return rw(*a)

    def x(*a):
        calls["input"] += 1
        return rx(*a)
    monkeypatch.setattr(C._ConvBwdW, "apply", w)
    monkeypatch.setattr(C._ConvBwdX, "apply", x)
    return calls


def _nets(dim):
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
    p, t = _nets(dim)
    a = np.random.default_rng(dim).standard_normal((2, 3) + (7,) * dim).astype(np.float32)
    res = {}
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        out = net(x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        if lib is ptcore:
            assert kernel_calls == {"weight": 0, "input": 2}
        ((g ** 2).sum() + out.square().mean()).backward()
        res[lib.__name__] = [g.detach().numpy()] + [q.grad.numpy() for q in net.parameters()]
    for u, v in zip(res["ptcore"], res["torch"]):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5)


def test_grad_of_the_weights_only_runs_no_first_input_gradient(kernel_calls):
    p, t = _nets(2)
    a = np.random.default_rng(5).standard_normal((2, 3, 9, 9)).astype(np.float32)
    got = []
    for lib, net in ((ptcore, p), (torch, t)):
        x = lib.tensor(a, requires_grad=True)
        got.append([g.numpy() for g in lib.autograd.grad(net(x).sum(), list(net.parameters()))])
    # the second conv's input gradient feeds the first conv's weights; the first's own
    # input gradient (toward x, which requires grad but was not asked for) is not made
    assert kernel_calls == {"weight": 2, "input": 1}
    for u, v in zip(*got):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-5)


def test_plain_backward_and_user_functions_keep_needs_input_grad(kernel_calls):
    p, _ = _nets(2)
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
