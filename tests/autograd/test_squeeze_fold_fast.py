"""The recorded fast forms of squeeze/unsqueeze of a contiguous tensor (a
root, or a result with a history of its own) and of a contiguous batch of
rows times a matrix (a Linear's call on a sequence, matmul's folded
product): node names, values, gradients and double backward as PyTorch's,
and the in-place rules on the views unchanged."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _views(lib, x):
    y = x * 2.0                                  # a result with a history
    a = y.unsqueeze(1)                           # UnsqueezeBackward0
    b = x.unsqueeze(-1)                          # of the leaf itself
    c = a.squeeze(1)                             # SqueezeBackward1
    d = y.view(3, 1, 4, 1).squeeze()             # SqueezeBackward0 (a view of a view)
    e = y.view(3, 1, 4).squeeze((1,))            # SqueezeBackward2
    outs = (a, b, c, d, e)
    names = [type(t.grad_fn).__name__ for t in outs]
    w = [lib.arange(t.numel(), dtype=x.dtype).reshape(t.shape) for t in outs]
    loss = sum((t * t * wi).sum() for t, wi in zip(outs, w))
    return names, loss


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_squeeze_unsqueeze_nodes_and_grads_match_torch(dtype):
    x0 = np.random.default_rng(0).standard_normal((3, 4)).astype(dtype)
    res = {}
    for lib in (ptcore, torch):
        x = lib.from_numpy(x0.copy()).requires_grad_()
        names, loss = _views(lib, x)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (g * g).sum().backward()
        res[lib.__name__] = (names, g.detach().numpy(), x.grad.numpy())
    p, t = res["ptcore"], res["torch"]
    assert p[0] == t[0]
    np.testing.assert_allclose(p[1], t[1], rtol=1e-6)
    np.testing.assert_allclose(p[2], t[2], rtol=1e-6)


def test_unsqueeze_of_result_then_inplace_matches_torch():
    x0 = np.arange(6.0).reshape(2, 3)
    res = {}
    for lib in (ptcore, torch):
        x = lib.from_numpy(x0.copy()).requires_grad_()
        y = x * 3.0
        u = y.unsqueeze(0)
        u.mul_(2.0)                               # through the view: y's history changes
        (y * y).sum().backward()
        res[lib.__name__] = (type(y.grad_fn).__name__, x.grad.numpy())
    assert res["ptcore"][0] == res["torch"][0]
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1])


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 3, 5, 4), (1, 1, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_folded_matmul_matches_torch(shape, dtype):
    rng = np.random.default_rng(1)
    a0 = rng.standard_normal(shape).astype(dtype)
    b0 = rng.standard_normal((4, 6)).astype(dtype)
    res = {}
    for lib in (ptcore, torch):
        a = lib.from_numpy(a0.copy()).requires_grad_()
        b = lib.from_numpy(b0.copy()).requires_grad_()
        r = lib.matmul(a, b)
        lin = lib.nn.functional.linear(a, b.t()) if dtype != "complex64" else r
        loss = (r.abs() * r.abs()).sum() + lin.abs().sum()
        ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
        (ga.abs().sum() + gb.abs().sum()).backward()
        res[lib.__name__] = (type(r.grad_fn).__name__, tuple(r.shape), r.detach().numpy(),
                             ga.detach().numpy(), gb.detach().numpy(), a.grad.numpy(),
                             b.grad.numpy())
    p, t = res["ptcore"], res["torch"]
    assert p[:2] == t[:2]
    tol = 1e-4 if dtype != "float64" else 1e-10
    for u, v in zip(p[2:], t[2:]):
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


def test_folded_matmul_errors_match_torch():
    a = ptcore.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ptcore.matmul(a, ptcore.ones(5, 6))
    with pytest.raises(RuntimeError, match="same dtype"):
        ptcore.matmul(a, ptcore.ones(4, 6, dtype=ptcore.float64))


@pytest.mark.parametrize("index", [(0, None), (None, 1), (slice(None), None, 0),
                                   (Ellipsis, None), (None, Ellipsis, 2)])
def test_indexing_views_named_unsqueeze_match_torch(index):
    # (an index with None also selects or slices: its unsqueeze-named node
    # places the gradient through the geometry, not by a reshape)
    x0 = np.random.default_rng(2).standard_normal((3, 4, 5))
    res = {}
    for lib in (ptcore, torch):
        x = lib.from_numpy(x0.copy()).requires_grad_()
        y = (x * 2.0)[index]
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        res[lib.__name__] = (type(y.grad_fn).__name__, x.grad.numpy())
    assert res["ptcore"][0] == res["torch"][0]
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1])
