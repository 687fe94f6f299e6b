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


def _node_names(y):
    return type(y.grad_fn).__name__, [type(f).__name__ if f is not None else None
                                      for f, _ in y.grad_fn.next_functions][:3]


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_batch_norm_eval_one_node_matches_torch(shape, affine):
    """Evaluation-mode batch norm is one NativeBatchNormBackward0 node whose next functions
    are the input's and the parameters' (as torch's: torch-pruning walks from a layer's
    output to the layer before it), with torch's output, gradients and gradients of
    gradients; channels-last input stays channels-last."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    rm, rv = rng.standard_normal(C), rng.random(C) + 0.5
    g = rng.standard_normal(shape)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        h = xt * 2.0
        wt = lib.from_numpy(w.copy()).requires_grad_() if affine != "none" else None
        bt = lib.from_numpy(b.copy()).requires_grad_() if affine == "both" else None
        y = lib.nn.functional.batch_norm(h, lib.from_numpy(rm.copy()), lib.from_numpy(rv),
                                         wt, bt, training=False, eps=1e-3)
        params = [t for t in (xt, wt, bt) if t is not None]
        grads = lib.autograd.grad(y, params, lib.from_numpy(g), create_graph=True)
        gg = []
        if affine != "none":      # (without a weight the input's gradient is a constant)
            gg = lib.autograd.grad(sum((q * q).sum() for q in grads), params,
                                   allow_unused=True)
        res.append((_node_names(y), [y, *grads, *[q for q in gg if q is not None]]))
    assert res[0][0] == res[1][0]
    assert len(res[0][1]) == len(res[1][1])
    for a, c in zip(res[0][1], res[1][1]):
        _close(a, c, 1e-12)
    if len(shape) == 4:
        xs = [lib.from_numpy(x.copy()).to(memory_format=lib.channels_last)
              for lib in (ptcore, torch)]
        outs = [lib.nn.functional.batch_norm(t, lib.from_numpy(rm.copy()), lib.from_numpy(rv))
                for lib, t in zip((ptcore, torch), xs)]
        assert outs[0].is_contiguous(memory_format=ptcore.channels_last) and \
            outs[1].is_contiguous(memory_format=torch.channels_last)
        _close(outs[0], outs[1], 1e-12)
