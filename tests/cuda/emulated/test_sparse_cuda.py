"""Sparse tensors on CUDA: COO/CSR/CSC whose index and value tensors live on
the device (``sparse_coo_tensor(..., device='cuda')``, ``.to('cuda')``,
``.cuda()``), with coalescing, conversions, the sparse-dense product and
its gradients, sums, softmax and sparse embedding gradients computed there
by index arithmetic in device ops (ptcore.sparse._index_ops), compared with
the CPU (whose agreement with torch tests/sparse checks)."""
import pytest

import ptcore
from ptcore import nn

I = [[0, 1, 1, 2, 0, 2], [2, 0, 2, 1, 2, 3]]        # (0, 2) stored twice: uncoalesced
V = [3.0, 4.0, 5.0, 6.0, 1.0, -2.0]


def _rand(*shape, seed=0):
    g = ptcore.Generator().manual_seed(seed)
    return ptcore.randn(*shape, generator=g, dtype=ptcore.float64)


def _coo(dev, **kw):
    return ptcore.sparse_coo_tensor(I, V, (3, 4), dtype=ptcore.float64, device=dev, **kw)


def _csr(dev):
    return ptcore.sparse_csr_tensor([0, 2, 3, 5], [0, 3, 1, 0, 2], [1.0, 2, 3, 4, 5], (3, 4),
                                    dtype=ptcore.float64, device=dev)


def _csc(dev):
    return ptcore.sparse_csc_tensor([0, 2, 3, 4, 5], [0, 2, 1, 0, 2], [1.0, 2, 3, 4, 5], (3, 4),
                                    dtype=ptcore.float64, device=dev)


def _same(got, ref):
    if isinstance(ref, ptcore.sparse.SparseTensor):
        assert isinstance(got, ptcore.sparse.SparseTensor) and got.layout is ref.layout
        assert got.device.type == "cuda" and all(p.device.type == "cuda" for p in got._parts)
        assert got.shape == ref.shape and got.is_sparse == ref.is_sparse
        for a, b in zip(got._parts, ref._parts):
            _same(a, b)
        return
    assert isinstance(got, ptcore.Tensor) and got.device.type == "cuda", got
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert ptcore.allclose(got.detach().cpu(), ref.detach(), rtol=1e-12, atol=1e-12), (got, ref)


def _both(fn):
    _same(fn("cuda"), fn("cpu"))


def test_construction_and_moves():
    s = _coo("cuda")
    assert s.device == ptcore.device("cuda", 0) and s.is_cuda and not s.is_cpu
    _both(lambda d: _coo(d))
    moved = ptcore.sparse_coo_tensor(I, V, (3, 4), dtype=ptcore.float64).cuda()
    _same(moved, _coo("cpu"))
    back = moved.cpu()
    assert back.device.type == "cpu" and ptcore.equal(back.to_dense(), _coo("cpu").to_dense())
    assert moved.to("cuda") is moved                    # already there: no copy
    f32 = _coo("cpu").to("cuda", ptcore.float32)
    assert f32.device.type == "cuda" and f32.dtype == ptcore.float32
    # the size inferred from indices on the device
    assert ptcore.sparse_coo_tensor(I, V, device="cuda").shape == (3, 4)
    _both(lambda d: _csr(d))
    _both(lambda d: _csc(d))
    assert "device='cuda:0'" in repr(s)


def test_invalid_indices_raise_on_the_device():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ptcore.sparse_coo_tensor(I, V, (2, 4), device="cuda")
    with pytest.raises(RuntimeError, match="negative index"):
        ptcore.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,), device="cuda")
    with pytest.raises(RuntimeError, match="must be in"):
        ptcore.sparse_csr_tensor([0, 1, 2], [0, 5], [1.0, 2.0], (2, 3), device="cuda")
    with pytest.raises(RuntimeError, match="non-decreasing"):
        ptcore.sparse_csr_tensor([0, 2, 1], [0, 1], [1.0, 2.0], (2, 3), device="cuda")


def test_coalesce_and_structure():
    _both(lambda d: _coo(d).coalesce())
    c = _coo("cuda").coalesce()
    assert c.is_coalesced() and c.indices().device.type == "cuda"
    three = [[0, 0, 1, 0], [1, 1, 0, 1], [2, 2, 2, 0]]
    _both(lambda d: ptcore.sparse_coo_tensor(three, [1.0, 2, 3, 4], (2, 2, 3), device=d).coalesce())
    # hybrid: values with a dense dim
    _both(lambda d: ptcore.sparse_coo_tensor([[0, 1, 0]], _rand(3, 2), (2, 2), device=d).coalesce())
    _both(lambda d: _coo(d).to_dense())
    _both(lambda d: _coo(d).t().coalesce())
    _both(lambda d: _coo(d).transpose(0, 1).coalesce())


@pytest.mark.parametrize("make", [_coo, _csr, _csc], ids=["coo", "csr", "csc"])
def test_conversions(make):
    _both(lambda d: make(d).to_dense())
    _both(lambda d: make(d).to_sparse_coo().coalesce())
    _both(lambda d: make(d).to_sparse_csr())
    _both(lambda d: make(d).to_sparse_csc())


def test_dense_to_sparse():
    x = _rand(4, 5, seed=1)
    x[x.abs() < 0.7] = 0
    _both(lambda d: x.to(d).to_sparse())
    _both(lambda d: x.to(d).to_sparse(1))                       # hybrid (sparse_dim=1)
    _both(lambda d: x.to(d).to_sparse_csr())
    _both(lambda d: x.to(d).to_sparse(layout=ptcore.sparse_csc))
    _both(lambda d: ptcore.tensor(2.5, dtype=ptcore.float64, device=d).to_sparse())
    # differentiable: the values gathered from the dense tensor
    xc = x.cuda().requires_grad_()
    xc.to_sparse().to_dense().mul(2).sum().backward()
    ref = x.clone().requires_grad_()
    ref.to_sparse().to_dense().mul(2).sum().backward()
    _same(xc.grad, ref.grad)


@pytest.mark.parametrize("make", [_coo, _csr, _csc], ids=["coo", "csr", "csc"])
def test_products(make):
    dense = _rand(4, 5, seed=2)
    _both(lambda d: ptcore.sparse.mm(make(d), dense.to(d)))
    _both(lambda d: make(d) @ dense[:, 0].to(d))
    _both(lambda d: _rand(2, 3, seed=3).to(d) @ make(d))
    _both(lambda d: ptcore.sparse.addmm(ptcore.ones(3, 5, dtype=ptcore.float64, device=d), make(d),
                                        dense.to(d), beta=0.5, alpha=2.0))


@pytest.mark.parametrize("make", [_coo, _csr], ids=["coo", "csr"])
def test_product_gradients(make):
    dense = _rand(4, 5, seed=4)
    w = _rand(3, 5, seed=5)
    grads = {}
    for d in ("cpu", "cuda"):
        s = make(d).requires_grad_()
        x = dense.to(d).detach().requires_grad_()
        (ptcore.sparse.mm(s, x) * w.to(d)).sum().backward()
        grads[d] = (x.grad, s.grad)
    _same(grads["cuda"][0], grads["cpu"][0])
    _same(grads["cuda"][1], grads["cpu"][1])    # the values' gradient, in the sparse layout


def test_mixed_devices_raise():
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.sparse.mm(_coo("cuda"), _rand(4, 2))
    with pytest.raises(RuntimeError, match="same device"):
        ptcore.sparse.mm(_coo("cpu"), _rand(4, 2).cuda())


def test_arithmetic_and_reductions():
    _both(lambda d: (_coo(d) + _coo(d)).coalesce())
    _both(lambda d: ptcore.ones(3, 4, dtype=ptcore.float64, device=d) + _coo(d))
    _both(lambda d: (_coo(d) * 2.0).coalesce())
    _both(lambda d: (_coo(d) * ptcore.full((3, 4), 2.0, dtype=ptcore.float64, device=d)).coalesce())
    _both(lambda d: ptcore.sparse.sum(_coo(d)))
    _both(lambda d: ptcore.sparse.sum(_coo(d), 1))
    _both(lambda d: ptcore.sparse.sum(_coo(d), 0))
    _both(lambda d: ptcore.sparse.sum(_coo(d), (0, 1)))
    _both(lambda d: ptcore.sparse.softmax(_coo(d).coalesce(), 1))
    _both(lambda d: ptcore.sparse.log_softmax(_coo(d).coalesce(), 0))


def test_uncoalesced_values_gradient():
    g = {}
    for d in ("cpu", "cuda"):
        s = _coo(d).requires_grad_()
        (s.to_dense() * _rand(3, 4, seed=6).to(d)).sum().backward()
        g[d] = s.grad
    _same(g["cuda"], g["cpu"])
    assert g["cuda"].is_coalesced()


def _embedding(dev, bag=False):
    m = nn.EmbeddingBag(10, 3, sparse=True, mode="sum") if bag else nn.Embedding(10, 3, sparse=True)
    with ptcore.no_grad():
        m.weight.copy_(ptcore.arange(30.0).view(10, 3))
    return m.to(dev)


@pytest.mark.parametrize("opt", ["sgd", "sparse_adam", "adagrad"])
def test_sparse_embedding_training(opt):
    weights = {}
    for d in ("cpu", "cuda"):
        m = _embedding(d)
        o = {"sgd": lambda p: ptcore.optim.SGD(p, lr=0.1),
             "sparse_adam": lambda p: ptcore.optim.SparseAdam(p, lr=0.1),
             "adagrad": lambda p: ptcore.optim.Adagrad(p, lr=0.1)}[opt](m.parameters())
        for _ in range(3):
            o.zero_grad()
            m(ptcore.tensor([[1, 2, 1], [4, 2, 9]], device=d)).pow(2).sum().backward()
            assert m.weight.grad.is_sparse and m.weight.grad.device.type == d
            o.step()
        weights[d] = m.weight.detach()
    _same(weights["cuda"], weights["cpu"])


def test_sparse_embedding_bag_gradient():
    g = {}
    for d in ("cpu", "cuda"):
        m = _embedding(d, bag=True)
        m(ptcore.tensor([1, 2, 4, 5], device=d), ptcore.tensor([0, 2], device=d)).pow(2).sum().backward()
        g[d] = m.weight.grad.coalesce()
    _same(g["cuda"], g["cpu"])
