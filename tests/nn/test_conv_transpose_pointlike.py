"""Transposed convolution of a 1x..x1 input (a GAN generator's first layer),
computed as one GEMM, against PyTorch: 1-d/2-d/3-d, stride, bias, unbatched,
float32/float64, gradients of input, weight and bias; and the cases that
stay on the general path (padding, dilation, groups) still agree."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("nd,kw", [
    (2, dict(stride=1)), (2, dict(stride=3)), (1, dict(stride=2)), (3, dict(stride=1)),
    (2, dict(padding=1)), (2, dict(dilation=2)), (2, dict(groups=2)),
])
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose_pointlike_input(nd, kw, dt, bias, batched):
    rng = np.random.default_rng(0)
    ks = (4, 3, 2)[:nd]
    shape = ((5,) if batched else ()) + (4,) + (1,) * nd
    x = rng.standard_normal(shape).astype(dt)
    w = rng.standard_normal((4, 3) + ks).astype(dt)
    b = rng.standard_normal(3 * kw.get("groups", 1)).astype(dt)
    res = []
    for lib in (ptcore, torch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_()
        bt = lib.from_numpy(b.copy()).requires_grad_() if bias else None
        f = getattr(lib.nn.functional, f"conv_transpose{nd}d")
        y = f(xt, wt, bt, **kw)
        y.backward(lib.from_numpy(rng.standard_normal(tuple(y.shape)).astype(dt)) * 0 + 0.5)
        res.append([y, xt.grad, wt.grad] + ([bt.grad] if bias else []))
    tol = 1e-5 if dt == "float32" else 1e-12
    assert tuple(res[0][0].shape) == tuple(res[1][0].shape)
    for a, c in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=tol, atol=tol)
