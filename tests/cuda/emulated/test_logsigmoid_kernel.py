"""nn.functional.logsigmoid on a CUDA device: one kernel forward (ptc_unary_logsigmoid) and
one backward (ptc_nnact_logsigmoid), against the CPU's composite and torch's values, its
node, ``out=``, the dtype errors and the double backward through the formula."""
import numpy as np
import pytest

import ptcore
import ptcore.nn.functional as F
from kernel_launches import launched
from nn_device_compare import TOL

XS = np.array([-1e4, -50, -20, -3, -0.5, -0.0, 0.0, 0.5, 3, 20, 50, 1e4, np.inf, -np.inf,
               np.nan] + list(np.random.default_rng(0).standard_normal(40)))
DTYPES = [ptcore.float32, ptcore.float64, ptcore.float16, ptcore.bfloat16]


def _close(a, b, dt):
    rtol, atol = TOL[dt]
    assert a.dtype is b.dtype is dt
    assert ptcore.allclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True), \
        (a.double() - b.double()).abs().max()


@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_gradient_equal_the_cpu(dtype):
    x = ptcore.tensor(XS).to(dtype)
    g = ptcore.linspace(-2, 2, x.numel()).to(dtype)
    out = []
    for dev in ("cpu", "cuda"):
        xd = x.detach().to(dev).requires_grad_()
        y = F.logsigmoid(xd)
        y.backward(g.to(dev))
        assert y.grad_fn.name() == "LogSigmoidBackward0"
        out.append((y.detach().cpu(), xd.grad.cpu()))
    (yc, gc), (yd, gd) = out
    _close(yd, yc, dtype)
    _close(gd, gc, dtype)


def test_values_equal_torchs():
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        x = ptcore.tensor(XS).to(getattr(ptcore, dt)).cuda().requires_grad_()
        y = F.logsigmoid(x)
        y.sum().backward()
        tx = torch.tensor(XS).to(getattr(torch, dt)).requires_grad_()
        ty = torch.nn.functional.logsigmoid(tx)
        ty.sum().backward()
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_one_kernel_each_way():
    x = ptcore.randn(64, 33, device="cuda").requires_grad_()
    F.logsigmoid(x).sum().backward()            # (kernels loaded)
    y, fwd = launched(lambda: F.logsigmoid(x))
    assert fwd == ["ptc_unary_logsigmoid_f32_c"], fwd
    _, bwd = launched(lambda: y.backward(ptcore.ones_like(y)))
    assert sum("nnact_logsigmoid" in n for n in bwd) == 1, bwd


def test_strided_input_and_out():
    x = ptcore.randn(8, 10, dtype=ptcore.float64)
    xt = x.cuda().t()
    _close(F.logsigmoid(xt).cpu(), F.logsigmoid(x.t()), ptcore.float64)
    o = ptcore.empty(10, 8, dtype=ptcore.float64, device="cuda")
    r = F.logsigmoid(xt, out=o)
    assert r is o
    _close(o.cpu(), F.logsigmoid(x.t()), ptcore.float64)
    with pytest.raises(RuntimeError):
        F.logsigmoid(xt.requires_grad_(), out=o)      # out= of a result needing grad


def test_integer_input_raises_as_the_cpu():
    for dev in ("cpu", "cuda"):
        with pytest.raises(NotImplementedError, match="log_sigmoid_forward"):
            F.logsigmoid(ptcore.arange(4, device=dev))


def test_double_backward_through_the_formula():
    res = []
    for dev in ("cpu", "cuda"):
        x = ptcore.tensor(XS[:12], dtype=ptcore.float64, device=dev).requires_grad_()
        g, = ptcore.autograd.grad(F.logsigmoid(x).sum(), x, create_graph=True)
        gg, = ptcore.autograd.grad((g * g).sum(), x)
        res.append((g.detach().cpu(), gg.cpu()))
    _close(res[1][0], res[0][0], ptcore.float64)
    _close(res[1][1], res[0][1], ptcore.float64)
