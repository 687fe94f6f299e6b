"""float16/bfloat16 gradients of the activations bit for bit as torch's: its dedicated
backward kernels (tanh_backward, sigmoid_backward, silu/mish/elu/softplus/hardswish
backward, log_sigmoid_backward, _softmax_backward_data) compute in float32 and round
once, where a composite in half precision rounds at every step (about half the
elements differed in the last bit, so bf16 training drifted from torch's)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

NAMES = ["silu", "mish", "elu", "softplus", "tanh", "sigmoid", "hardswish", "logsigmoid",
         "relu", "leaky_relu", "softsign", "tanhshrink", "hardsigmoid", "selu", "celu",
         "hardtanh", "softshrink", "softmax"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", NAMES)
def test_half_activation_gradients_bitwise_as_torch(name, dtype):
    rng = np.random.default_rng(0)
    xv, gv = rng.standard_normal((8, 32)) * 3, rng.standard_normal((8, 32))
    grads = []
    for L in (torch, ptcore):
        x = L.tensor(xv, dtype=getattr(L, dtype)).requires_grad_()
        f = getattr(L.nn.functional, name)
        y = f(x, dim=-1) if name == "softmax" else f(x)
        y.backward(L.tensor(gv, dtype=getattr(L, dtype)))
        assert x.grad.dtype == x.dtype
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "silu", "logsigmoid", "softmax"])
def test_half_double_backward_still_recorded(name):
    # create_graph keeps the differentiable composite (in the half dtype)
    x = ptcore.randn(6, dtype=ptcore.bfloat16).requires_grad_()
    f = getattr(ptcore.nn.functional, name)
    y = (f(x, dim=0) if name == "softmax" else f(x)).pow(2).sum()
    g, = ptcore.autograd.grad(y, x, create_graph=True)
    assert g.dtype == ptcore.bfloat16 and g.requires_grad
    g.sum().backward()
    assert x.grad is not None and x.grad.dtype == ptcore.bfloat16
