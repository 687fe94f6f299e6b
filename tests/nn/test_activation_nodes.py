"""nn.functional activations with autograd: one fused forward kernel, PyTorch's
node (GeluBackward0 ...), and first and second derivatives matching PyTorch,
including its conventions at the kinks (x = 0, +-3, the hardtanh bounds)."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as PF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

_X = np.concatenate([
    np.array([0.0, -0.0, -3.0, 3.0, -1.0, 1.0, 6.0, -6.0, 20.0, -20.0, 1e-3, 2.9999, -2.9999],
             dtype=np.float32),
    (np.random.default_rng(7).standard_normal(64) * 4).astype(np.float32)])

CASES = {
    "gelu": lambda F: F.gelu,
    "gelu_tanh": lambda F: (lambda x: F.gelu(x, approximate="tanh")),
    "silu": lambda F: F.silu,
    "mish": lambda F: F.mish,
    "softplus": lambda F: F.softplus,
    "softplus_beta": lambda F: (lambda x: F.softplus(x, 2.0, 5.0)),
    "elu": lambda F: F.elu,
    "selu": lambda F: F.selu,
    "celu": lambda F: (lambda x: F.celu(x, 0.7)),
    "leaky_relu": lambda F: (lambda x: F.leaky_relu(x, 0.2)),
    "rrelu_eval": lambda F: (lambda x: F.rrelu(x, training=False)),
    "hardsigmoid": lambda F: F.hardsigmoid,
    "hardswish": lambda F: F.hardswish,
    "hardtanh": lambda F: (lambda x: F.hardtanh(x, -1.0, 1.0)),
    "relu6": lambda F: F.relu6,
    "logsigmoid": lambda F: F.logsigmoid,
}
SMOOTH = {"gelu", "gelu_tanh", "silu", "mish", "softplus", "softplus_beta", "elu", "selu",
          "celu", "logsigmoid", "hardswish"}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_activation_node_and_gradients(name):
    t = torch.tensor(_X, requires_grad=True)
    p = ptcore.tensor(_X, requires_grad=True)
    yt = CASES[name](TF)(t * 1)
    yp = CASES[name](PF)(p * 1)
    assert yp.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(yp.detach().numpy(), yt.detach().numpy(), rtol=2e-6, atol=1e-6)
    w = np.linspace(-1, 1, _X.size).astype(np.float32)
    gt, = torch.autograd.grad((yt * torch.tensor(w)).sum(), t, create_graph=True)
    gp, = ptcore.autograd.grad((yp * ptcore.tensor(w)).sum(), p, create_graph=True)
    np.testing.assert_allclose(gp.detach().numpy(), gt.detach().numpy(), rtol=1e-5, atol=2e-6)
    if name in SMOOTH:
        ggt, = torch.autograd.grad((gt * gt).sum(), t)
        ggp, = ptcore.autograd.grad((gp * gp).sum(), p)
        np.testing.assert_allclose(ggp.numpy(), ggt.numpy(), rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_activation_without_grad_matches_with_grad(name):
    # the fused kernel serves both paths: identical forward values
    x = ptcore.tensor(_X)
    f = CASES[name](PF)
    with ptcore.no_grad():
        a = f(x)
    b = f(x.clone().requires_grad_())
    np.testing.assert_array_equal(a.numpy(), b.detach().numpy())


@needs_torch
@pytest.mark.parametrize("shape,n", [((5,), 1), ((4, 3), 3), ((2, 3, 4, 5), 3),
                                     ((2, 3, 4), 1)])
@pytest.mark.parametrize("grads_of", ["both", "input", "weight"])
def test_prelu_node_and_gradients(shape, n, grads_of):
    """prelu is one PreluKernelBackward0 node over the input's node and the weight viewed
    with the input's number of dims (torch-pruning walks it so), with torch's values,
    gradients and gradients of gradients (away from x = 0, where torch's double backward
    takes x >= 0 as the positive side and its backward x > 0)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    w, g = rng.standard_normal(n), rng.standard_normal(shape)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_(grads_of != "weight")
        wt = lib.from_numpy(w.copy()).requires_grad_(grads_of != "input")
        y = lib.nn.functional.prelu(xt * 1.0, wt)
        names = (type(y.grad_fn).__name__,
                 [type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions])
        params = [t for t in (xt, wt) if t.requires_grad]
        grads = lib.autograd.grad(y, params, lib.from_numpy(g), create_graph=True)
        gg = []
        if grads_of == "both":   # (torch's input gradient requires grad, unused, without w)
            gg = lib.autograd.grad(sum((q * q).sum() for q in grads), params)
        res.append((names, [y, *grads, *[q for q in gg if q is not None]]))
    assert res[0][0] == res[1][0]
    assert len(res[0][1]) == len(res[1][1])
    for a, c in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)
