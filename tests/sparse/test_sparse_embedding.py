"""nn.Embedding(sparse=True): sparse COO gradients (torch's layout) and the
optimizers that take them (SGD, Adagrad, SparseAdam) against torch; the
others refuse them with torch's errors."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

W = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
IDX = [[1, 2, 2], [0, 1, 5]]


def _emb(L, **kw):
    e = L.nn.Embedding(6, 3, sparse=True, **kw)
    with L.no_grad():
        e.weight.copy_(L.tensor(W))
    return e


def test_scale_grad_by_freq_is_refused_as_torch():
    for L in (ptcore, torch):
        e = _emb(L, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported"):
            e(L.tensor(IDX)).sum().backward()


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 5}])
def test_gradient_is_sparse_like_torch(kw):
    grads = []
    for L in (ptcore, torch):
        e = _emb(L, **kw)
        (e(L.tensor(IDX)) ** 2).sum().backward()
        g = e.weight.grad
        assert g.is_sparse and g.sparse_dim() == 1 and g.dense_dim() == 1
        assert not g.is_coalesced()
        grads.append((g._indices().numpy(), g._values().numpy(), g.to_dense().numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_gradients_accumulate_and_mix_with_dense():
    outs = []
    for L in (ptcore, torch):
        e = _emb(L)
        e(L.tensor([1, 3])).sum().backward()
        e(L.tensor([3, 4])).sum().backward()       # sparse + sparse
        outs.append(e.weight.grad.to_dense().numpy())
    np.testing.assert_allclose(outs[0], outs[1])
    # the same weight used densely in the same graph: the sum is dense
    e = _emb(ptcore)
    (e(ptcore.tensor([1, 1])).sum() + (e.weight * 2).sum()).backward()
    expect = np.full((6, 3), 2.0, np.float32)
    expect[1] += 2
    np.testing.assert_allclose(np.asarray(e.weight.grad.to_dense() if not isinstance(
        e.weight.grad, ptcore.Tensor) else e.weight.grad), expect)


OPTS = {
    "SGD": lambda L, p: L.optim.SGD(p, lr=0.1),
    "SGD-momentum": lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9),
    "SGD-nesterov": lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "Adagrad": lambda L, p: L.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
    "SparseAdam": lambda L, p: L.optim.SparseAdam(p, lr=0.1),
    "SparseAdam-maximize": lambda L, p: L.optim.SparseAdam(p, lr=0.1, maximize=True),
}


@pytest.mark.parametrize("name", sorted(OPTS))
def test_optimizers_taking_sparse_gradients(name):
    ws = []
    for L in (ptcore, torch):
        e = _emb(L, padding_idx=5)
        opt = OPTS[name](L, e.parameters())
        for i in range(4):
            opt.zero_grad()
            (e(L.tensor(IDX)) ** 2 * (i + 1)).sum().backward()
            opt.step()
        ws.append(e.weight.detach().numpy())
    np.testing.assert_allclose(ws[0], ws[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, msg", [
    (lambda p: ptcore.optim.Adam(p), "Adam does not support sparse gradients"),
    (lambda p: ptcore.optim.AdamW(p), "Adam does not support sparse gradients"),
    (lambda p: ptcore.optim.RMSprop(p), "RMSprop does not support sparse gradients"),
    (lambda p: ptcore.optim.SGD(p, lr=0.1, weight_decay=0.1), "add\\(sparse, dense\\)"),
    (lambda p: ptcore.optim.Adagrad(p, weight_decay=0.1), "weight_decay"),
])
def test_optimizers_refusing_sparse_gradients(make, msg):
    e = _emb(ptcore)
    opt = make(e.parameters())
    e(ptcore.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match=msg):
        opt.step()


def test_sparse_adam_refuses_dense_gradients():
    p = ptcore.nn.Parameter(ptcore.ones(3))
    opt = ptcore.optim.SparseAdam([p])
    (p * 2).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()
