"""Gradients through chains of views of non-contiguous tensors (the heads of
a fused q/k/v projection: split -> view -> transpose), including in-place
writes through such views and double backward: values, node names, and the
transpose's gradient is a view of the incoming one (no copy)."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

B, T, C, H = 2, 5, 12, 3


def _heads(lib, x):
    # (slices, not split: PyTorch forbids in-place writes to split's views)
    q, k, v = x[:, :, :C], x[:, :, C:2 * C], x.narrow(2, 2 * C, C)
    return [t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v)]


def _run(lib, x, w, inplace):
    xx = lib.from_numpy(x.copy()).requires_grad_()
    y = xx * 1.5
    q, k, v = _heads(lib, y)
    if inplace:
        v.mul_(2.0)                         # through the view chain
    att = (q @ k.transpose(-2, -1)).softmax(-1)
    o = (att @ v).transpose(1, 2).reshape(B, T, C)
    o2 = o.flatten(0, 1).view(B, T, C).permute(2, 0, 1)
    names = [type(t.grad_fn).__name__ for t in (q, o2)]
    (o2 * lib.from_numpy(w.copy())).sum().backward(create_graph=True)
    g = xx.grad
    (g * g).sum().backward()
    return names, g.detach().numpy(), xx.grad.detach().numpy()


@pytest.mark.parametrize("inplace", [False, True])
def test_view_chain_grads_match_torch(inplace):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, 3 * C))
    w = rng.standard_normal((C, B, T))
    p, t = _run(ptcore, x, w, inplace), _run(torch, x, w, inplace)
    assert p[0] == t[0] or inplace     # (after the write PyTorch names q's node AsStrided)
    np.testing.assert_allclose(p[1], t[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p[2], t[2], rtol=1e-10, atol=1e-12)


def test_transpose_gradient_is_a_view():
    x = ptcore.randn(4, 6, requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g))
    g = ptcore.randn(6, 4)
    y.t().backward(g)
    assert seen[0].data_ptr() == g.data_ptr() and tuple(seen[0].shape) == (4, 6)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * g.numpy().T)


@pytest.mark.parametrize("shape", [(4, 3), (5,), (1, 1), (3, 1)])
def test_t_of_a_leaf(shape):
    """t() of a contiguous leaf (a Linear's weight): TBackward0 whose gradient
    is g.t(); and t() of a result changed in place afterwards (the view's
    node is rebuilt, as torch's): gradients equal torch's."""
    rng = np.random.default_rng(len(shape))
    w0 = rng.standard_normal(shape).astype(np.float32)
    g0 = rng.standard_normal(shape[::-1]).astype(np.float32)
    res = []
    for lib in (ptcore, torch):
        w = lib.from_numpy(w0.copy()).requires_grad_()
        wt = w.t()
        assert wt.grad_fn.name() == "TBackward0"
        (wt * 1.0).backward(lib.from_numpy(g0.copy()))
        w2 = lib.from_numpy(w0.copy()).requires_grad_()
        y = w2 * 2.0
        yt = y.t()
        y.mul_(y.detach() + 1.0)             # through the base after the view
        (yt * yt).backward(lib.from_numpy(g0.copy()))
        res.append((w.grad.numpy(), w2.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], g0.T)
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)
