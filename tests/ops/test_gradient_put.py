"""torch.gradient, torch.put and torch.empty_permuted against PyTorch."""
import numpy as np
import pytest

import ptcore

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
pytestmark = needs_torch


def _pair(a, dt="float64"):
    return ptcore.tensor(a.tolist(), dtype=getattr(ptcore, dt)), torch.tensor(a.tolist(), dtype=getattr(torch, dt))


def _close(p, t):
    assert len(p) == len(t)
    for a, b in zip(p, t):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


RNG = np.random.default_rng(3)
X3 = RNG.standard_normal((4, 5, 6))


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("kw", [
    {}, {"spacing": 2.0}, {"spacing": 3}, {"dim": 1}, {"dim": -1, "spacing": 0.5},
    {"dim": (2, 0)}, {"dim": [1], "spacing": [0.25]}, {"spacing": [1.0, 2.0, 0.5]},
    {"coords": True}, {"coords": True, "dim": [2, 1]}])
def test_gradient_matches_torch(kw, edge_order):
    p, t = _pair(X3)
    kw = dict(kw)
    if kw.pop("coords", False):
        dims = kw.get("dim", [0, 1, 2])
        cs = [np.cumsum(RNG.random(X3.shape[d]) + 0.1) for d in dims]
        kw_p = dict(kw, spacing=[ptcore.tensor(c.tolist(), dtype=ptcore.float64) for c in cs])
        kw_t = dict(kw, spacing=[torch.tensor(c.tolist(), dtype=torch.float64) for c in cs])
    else:
        kw_p = kw_t = kw
    _close(ptcore.gradient(p, edge_order=edge_order, **kw_p),
           torch.gradient(t, edge_order=edge_order, **kw_t))


@pytest.mark.parametrize("dt", ["int64", "int32", "float32"])
def test_gradient_dtypes(dt):
    a = np.arange(12).reshape(3, 4) ** 2
    p, t = _pair(a, dt)
    rp, rt = ptcore.gradient(p), torch.gradient(t)
    for x, y in zip(rp, rt):
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)
    assert ptcore.gradient(ptcore.tensor(3.0)) == torch.gradient(torch.tensor(3.0)) == ()


def test_gradient_autograd():
    p, t = _pair(X3)
    p.requires_grad_()
    t.requires_grad_()
    gp = sum((g * g).sum() for g in ptcore.gradient(p, edge_order=2))
    gt = sum((g * g).sum() for g in torch.gradient(t, edge_order=2))
    gp.backward()
    gt.backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda L, x: L.gradient(x, edge_order=3), lambda L, x: L.gradient(L.ones(1, 5)),
    lambda L, x: L.gradient(x, spacing=[1.0, 2.0]), lambda L, x: L.gradient(L.ones(3, dtype=L.uint8)),
    lambda L, x: L.gradient(x, spacing=[L.ones(2, 2)], dim=0), lambda L, x: L.gradient(x, dim=[0, 0]),
    lambda L, x: L.gradient(x, spacing=[1.0], dim=[0, 1]), lambda L, x: L.gradient(x, dim=3)])
def test_gradient_errors(call):
    with pytest.raises(Exception) as et:
        call(torch, torch.ones(4, 5, 6))
    with pytest.raises(type(et.value)) as ep:
        call(ptcore, ptcore.ones(4, 5, 6))
    if isinstance(et.value, RuntimeError) and "appears" not in str(et.value):
        assert str(ep.value) == str(et.value)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_function(accumulate):
    a = np.arange(12.0).reshape(3, 4)
    p, t = _pair(a)
    idx = [0, 11, 5, 0]
    src = [9.0, 8.0, 7.0, 6.0]
    if not accumulate:
        idx, src = idx[:3], src[:3]
    rp = ptcore.put(p, ptcore.tensor(idx), ptcore.tensor(src, dtype=ptcore.float64), accumulate)
    rt = torch.put(t, torch.tensor(idx), torch.tensor(src, dtype=torch.float64), accumulate)
    np.testing.assert_array_equal(rp.numpy(), rt.numpy())
    np.testing.assert_array_equal(p.numpy(), a)          # out of place


@pytest.mark.parametrize("layout", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_empty_permuted_strides(layout):
    p = ptcore.empty_permuted((2, 3, 4), layout, dtype=ptcore.float32)
    t = torch.empty_permuted((2, 3, 4), layout, dtype=torch.float32)
    assert tuple(p.shape) == tuple(t.shape) and p.stride() == t.stride()
    assert p.dtype is ptcore.float32


@pytest.mark.parametrize("args", [((2, 3), (0,)), ((2, 3), (0, 0)), ((2, 3), (0, 2))])
def test_empty_permuted_errors(args):
    with pytest.raises(RuntimeError) as et:
        torch.empty_permuted(*args)
    with pytest.raises(RuntimeError) as ep:
        ptcore.empty_permuted(*args)
    assert str(ep.value) == str(et.value)


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dt", ["float64", "int64"])
def test_index_reduce_matches_torch(reduce, include_self, dim, dt):
    rng = np.random.default_rng(7)
    base = rng.integers(-4, 5, (5, 6)).astype(np.float64)
    n = 7
    shape = [5, 6]
    d = dim % 2
    shape[d] = n
    src = rng.integers(-4, 5, shape).astype(np.float64)
    idx = rng.integers(0, base.shape[d], n)
    p, t = _pair(base, dt)
    ps, ts = _pair(src, dt)
    rp = p.index_reduce(dim, ptcore.tensor(idx.tolist()), ps, reduce, include_self=include_self)
    rt = t.index_reduce(dim, torch.tensor(idx.tolist()), ts, reduce, include_self=include_self)
    np.testing.assert_array_equal(rp.numpy(), rt.numpy())
    p.index_reduce_(dim, ptcore.tensor(idx.tolist()).int(), ps, reduce, include_self=include_self)
    np.testing.assert_array_equal(p.numpy(), rt.numpy())


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("call", [
    lambda L, x, s, i: x.index_reduce(0, i, s, "sum"),
    lambda L, x, s, i: x.index_reduce(0, i.view(2, 1), s, "prod"),
    lambda L, x, s, i: x.index_reduce(0, i.float(), s, "prod"),
    lambda L, x, s, i: x.index_reduce(0, L.tensor([0, 5]), s, "prod"),
    lambda L, x, s, i: x.index_reduce(0, i, s[:, :3], "prod"),
    lambda L, x, s, i: x.index_reduce(0, L.tensor([0, 2, 1]), s, "prod"),
    lambda L, x, s, i: x.index_reduce(0, i, s.double(), "prod")])
def test_index_reduce_errors(call):
    def run(L):
        return call(L, L.ones(3, 4), L.arange(8.0).reshape(2, 4), L.tensor([0, 2]))
    with pytest.raises(Exception) as et:
        run(torch)
    with pytest.raises(type(et.value)) as ep:
        run(ptcore)
    assert str(ep.value) == str(et.value)
