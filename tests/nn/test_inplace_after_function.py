"""In-place activations right after layers implemented as autograd Functions
(conv, pooling, batch norm): common in CNNs (``nn.ReLU(inplace=True)``)."""
import numpy as np
import pytest

import ptcore
from ptcore import nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _build(lib):
    m = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(inplace=True),
                          lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(4 * 3 * 3, 3),
                          lib.nn.ReLU(inplace=True))
    return m


@needs_torch
def test_inplace_relu_after_conv_bn_pool_matches_torch():
    tm = _build(torch).double()
    pm = _build(ptcore).double()
    pm.load_state_dict({k: ptcore.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 2, 8, 8))
    tx = torch.tensor(x, requires_grad=True)
    px = ptcore.tensor(x, requires_grad=True)
    (tm(tx) ** 2).sum().backward()
    (pm(px) ** 2).sum().backward()
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (n, p), (_, q) in zip(pm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)


def test_inplace_on_a_returned_input_view_still_raises():
    class Ident(ptcore.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a[0]

        @staticmethod
        def backward(ctx, g):
            r = ptcore.zeros(2, 3, dtype=g.dtype)
            r[0] = g
            return r

    a = ptcore.randn(2, 3, requires_grad=True)
    y = Ident.apply(a * 1)
    # torch names the Function's class (not its node, IdentBackward)
    with pytest.raises(RuntimeError, match="^Output 0 of Ident is a view and is being modified "
                                           "inplace"):
        y.add_(1)
