"""In-place activations and in-place Tensor methods under autograd, against torch.

The activation is applied in place to a non-leaf (a convolution's or batch
norm's output), as GAN generators/discriminators do; gradients of the input
and the weights must match torch's and no version-counter error may be raised.
"""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X0 = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
W0 = (RNG.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)

# name -> f(lib, y) applying the activation in place to y and returning the result
INPLACE = {
    "relu": lambda L, y: L.nn.functional.relu(y, inplace=True),
    "relu_": lambda L, y: L.nn.functional.relu_(y),
    "leaky_relu": lambda L, y: L.nn.functional.leaky_relu(y, 0.2, inplace=True),
    "leaky_relu_": lambda L, y: L.nn.functional.leaky_relu_(y, 0.1),
    "elu": lambda L, y: L.nn.functional.elu(y, 0.7, inplace=True),
    "elu_": lambda L, y: L.nn.functional.elu_(y),
    "celu": lambda L, y: L.nn.functional.celu(y, 1.3, inplace=True),
    "selu": lambda L, y: L.nn.functional.selu(y, inplace=True),
    "hardtanh": lambda L, y: L.nn.functional.hardtanh(y, -0.5, 0.8, inplace=True),
    "relu6": lambda L, y: L.nn.functional.relu6(y * 4, inplace=True),
    "threshold": lambda L, y: L.nn.functional.threshold(y, 0.1, 2.0, inplace=True),
    "rrelu_eval": lambda L, y: L.nn.functional.rrelu(y, 0.1, 0.3, training=False, inplace=True),
    "hardswish": lambda L, y: L.nn.functional.hardswish(y * 3, inplace=True),
    "hardsigmoid": lambda L, y: L.nn.functional.hardsigmoid(y * 3, inplace=True),
    "silu": lambda L, y: L.nn.functional.silu(y, inplace=True),
    "mish": lambda L, y: L.nn.functional.mish(y, inplace=True),
    "dropout_p0": lambda L, y: L.nn.functional.dropout(y, 0.0, inplace=True),
    "LeakyReLU": lambda L, y: L.nn.LeakyReLU(0.2, inplace=True)(y),
    "ReLU": lambda L, y: L.nn.ReLU(inplace=True)(y),
    "ELU": lambda L, y: L.nn.ELU(inplace=True)(y),
    "SiLU": lambda L, y: L.nn.SiLU(inplace=True)(y),
    "Hardswish": lambda L, y: L.nn.Hardswish(inplace=True)(y),
    "ReLU6": lambda L, y: L.nn.ReLU6(inplace=True)(y),
    # in-place Tensor methods
    "Tensor.relu_": lambda L, y: y.relu_(),
    "Tensor.sigmoid_": lambda L, y: y.sigmoid_(),
    "Tensor.tanh_": lambda L, y: y.tanh_(),
    "Tensor.clamp_": lambda L, y: y.clamp_(-0.4, 0.6),
    "Tensor.mul_add_": lambda L, y: y.mul_(1.5).add_(0.3),
    "Tensor.div_sub_": lambda L, y: y.div_(2.0).sub_(0.1),
    "Tensor.exp_": lambda L, y: y.exp_(),
    "Tensor.pow_": lambda L, y: y.pow_(2),
    "Tensor.abs_": lambda L, y: y.abs_(),
    "Tensor.neg_": lambda L, y: y.neg_(),
    "Tensor.masked_fill_": lambda L, y: y.masked_fill_(y > 0.5, 0.0),
    "Tensor.clamp_min_": lambda L, y: y.clamp_min_(0.0),
}


def _run(L, act, norm):
    x = L.tensor(X0, requires_grad=True)
    w = L.tensor(W0, requires_grad=True)
    y = L.nn.functional.conv2d(x, w, padding=1)
    if norm:
        y = L.nn.functional.batch_norm(y, None, None, training=True)
    out = act(L, y)
    (out * out).sum().backward()
    return out.detach(), x.grad, w.grad


@pytest.mark.parametrize("norm", [False, True], ids=["conv", "conv_bn"])
@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_activation_grad_matches_torch(name, norm):
    got = _run(ptcore, INPLACE[name], norm)
    ref = _run(torch, INPLACE[name], norm)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=2e-4, atol=2e-5)


def test_rrelu_training_inplace_backward_consistent():
    # the random slopes cannot match torch's; check the gradient is out / in where in < 0
    x = ptcore.tensor(X0, requires_grad=True)
    y = x * 1.0
    before = y.detach().clone()
    ptcore.nn.functional.rrelu(y, 0.1, 0.3, training=True, inplace=True)
    y.sum().backward()
    neg = before.numpy() < 0
    slope = y.detach().numpy()[neg] / before.numpy()[neg]
    assert np.all((slope >= 0.1 - 1e-6) & (slope <= 0.3 + 1e-6))
    np.testing.assert_allclose(x.grad.numpy()[neg], slope, rtol=1e-5)
    np.testing.assert_array_equal(x.grad.numpy()[~neg], 1.0)


@pytest.mark.parametrize("fn", [
    lambda L, y: L.nn.functional.leaky_relu(y, -0.2, inplace=True),
    lambda L, y: L.nn.functional.elu(y, -1.0, inplace=True),
    lambda L, y: L.nn.functional.celu(y, -1.0, inplace=True),
], ids=["leaky_relu", "elu", "celu"])
def test_negative_slope_inplace_backward_refused_as_torch(fn):
    for L in (torch, ptcore):
        x = L.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        y = x * 1.0
        fn(L, y)                       # the forward runs
        with pytest.raises(RuntimeError, match="negative slope"):
            y.sum().backward()         # backward refuses


def test_negative_slope_inplace_without_grad_is_fine():
    y = ptcore.tensor([-1.0, 2.0])
    ptcore.nn.functional.leaky_relu(y, -0.5, inplace=True)
    np.testing.assert_allclose(y.numpy(), [0.5, 2.0])


@pytest.mark.parametrize("L", [torch, ptcore], ids=["torch", "ptcore"])
def test_inplace_on_leaf_requiring_grad_raises(L):
    x = L.tensor([-1.0, 2.0], requires_grad=True)
    for f in (lambda: L.nn.functional.relu(x, inplace=True),
              lambda: L.nn.functional.leaky_relu(x, 0.1, inplace=True),
              lambda: L.nn.functional.silu(x, inplace=True)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            f()


def _dcgan_step(L):
    L.manual_seed(0)
    nn = L.nn
    g = nn.Sequential(nn.ConvTranspose2d(8, 6, 4, 1, 0, bias=False), nn.BatchNorm2d(6),
                      nn.ReLU(True), nn.ConvTranspose2d(6, 3, 4, 2, 1, bias=False), nn.Tanh())
    d = nn.Sequential(nn.Conv2d(3, 6, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                      nn.Conv2d(6, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8),
                      nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 2, 1, 0, bias=False),
                      nn.Sigmoid())
    with L.no_grad():
        for i, p in enumerate(list(g.parameters()) + list(d.parameters())):
            p.copy_(L.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
    z = L.tensor(np.random.default_rng(99).standard_normal((4, 8, 1, 1)).astype(np.float32))
    fake = g(z)
    out = d(fake).view(-1)
    loss = nn.functional.binary_cross_entropy(out, L.ones(4))
    loss.backward()
    return [loss.detach()] + [p.grad for p in list(g.parameters()) + list(d.parameters())]


def test_dcgan_generator_discriminator_step_matches_torch():
    for a, b in zip(_dcgan_step(ptcore), _dcgan_step(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5)
