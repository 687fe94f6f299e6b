"""Training-mode batch norm through the one-pass-per-channel kernels
(ptcore._ops.kernels._norm) against PyTorch: output, running statistics, input,
weight and bias gradients for 2-D to 5-D inputs, without affine parameters,
float32/float64, at 1 and 2 threads (same bits), and double backward."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _close(a, b, tol):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(8, 3), (4, 5, 7), (3, 4, 6, 5), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_batch_norm_training_matches_torch(shape, affine, dt):
    tol = 1e-5 if dt == "float32" else 1e-12
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dt)
    g = rng.standard_normal(shape).astype(dt)
    C = shape[1]
    w = rng.standard_normal(C).astype(dt)
    b = rng.standard_normal(C).astype(dt)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_() if affine else None
        bt = lib.from_numpy(b.copy()).requires_grad_() if affine else None
        rm = lib.zeros(C, dtype=getattr(lib, dt))
        rv = lib.ones(C, dtype=getattr(lib, dt))
        y = lib.nn.functional.batch_norm(xt, rm, rv, wt, bt, training=True, momentum=0.3)
        y.backward(lib.from_numpy(g))
        res.append([y, rm, rv, xt.grad] + ([wt.grad, bt.grad] if affine else []))
    for a, c in zip(*res):
        _close(a, c, tol)


def test_batch_norm_thread_count_independent():
    x = ptcore.randn(16, 64, 9, 9)
    g = ptcore.randn(16, 64, 9, 9)
    outs = []
    old = ptcore.get_num_threads()
    try:
        for nt in (1, 2):
            ptcore.set_num_threads(nt)
            xx = x.clone().requires_grad_()
            m = ptcore.nn.BatchNorm2d(64)
            y = m(xx)
            y.backward(g)
            outs.append((y.detach().numpy(), xx.grad.numpy(), m.weight.grad.numpy()))
    finally:
        ptcore.set_num_threads(old)
    for a, b in zip(*outs):
        assert np.array_equal(a, b)


def test_batch_norm_double_backward_matches_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5)).astype("float64")
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        m = lib.nn.BatchNorm1d(3).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor([0.5, 2.0, -1.0], dtype=lib.float64))
        y = m(xt)
        (gx,) = lib.autograd.grad((y ** 3).sum(), xt, create_graph=True)
        (gx * gx).sum().backward()
        res.append((gx, xt.grad, m.weight.grad, m.bias.grad))
    for a, c in zip(*res):
        _close(a, c, 1e-10)

