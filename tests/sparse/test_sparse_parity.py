"""Sparse tensors against torch: cat/stack/bmm/narrow_copy of COO tensors,
sums of coalesced tensors, values not shared with the caller's autograd
state, and ptcore.save/load of sparse tensors (and ptcore.load of torch's
files)."""
import io

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]
VALS = [3.0, 4.0, 5.0, 6.0]


def _both(idx=IDX, vals=VALS, size=(2, 3)):
    return (ptcore.sparse_coo_tensor(ptcore.tensor(idx), ptcore.tensor(vals), size),
            torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), size))


def _same(p, t):
    assert p.layout.name == str(t.layout).split(".")[-1]
    assert tuple(p.shape) == tuple(t.shape)
    if t.layout == torch.sparse_coo:
        assert p.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(p._indices().numpy(), t._indices().numpy())
        np.testing.assert_allclose(p._values().detach().numpy(), t._values().detach().numpy())
    np.testing.assert_allclose(p.to_dense().detach().numpy(), t.to_dense().detach().numpy())


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("op", [
    lambda L, a: L.cat([a, a]),
    lambda L, a: L.cat([a, a * 2], 1),
    lambda L, a: L.cat((a, a, a), dim=-1),
    lambda L, a: L.stack([a, a]),
    lambda L, a: L.stack([a, a * 3], 1),
    lambda L, a: L.stack([a, a], dim=2),
    lambda L, a: a.narrow_copy(1, 1, 2),
    lambda L, a: a.narrow_copy(0, 1, 1),
    lambda L, a: L.narrow_copy(a, 1, 0, 0),
])
def test_coo_cat_stack_narrow(op, coalesce):
    p, t = _both()
    if coalesce:
        p, t = p.coalesce(), t.coalesce()
    _same(op(ptcore, p), op(torch, t))


def test_cat_hybrid_along_dense_dim():
    def make(L):
        h = L.sparse_coo_tensor(L.tensor([[0, 2]]), L.ones(2, 3), (3, 3))
        return L.cat([h, h * 2], 1)
    _same(make(ptcore), make(torch))


def test_cat_csr_raises_as_torch():
    p, t = _both()
    with pytest.raises(RuntimeError):
        torch.cat([t.to_sparse_csr()] * 2)
    with pytest.raises(RuntimeError):
        ptcore.cat([p.to_sparse_csr()] * 2)


def test_cat_errors():
    p, _ = _both()
    with pytest.raises(RuntimeError):
        ptcore.cat([p, ptcore.sparse_coo_tensor(ptcore.tensor(IDX), ptcore.tensor(VALS), (2, 4))])
    with pytest.raises(RuntimeError):
        ptcore.stack([p, p.narrow_copy(1, 0, 2)])


def test_bmm_and_its_gradients():
    idx = [[0, 0, 1, 1], [0, 1, 1, 0], [1, 0, 1, 2]]
    vals = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    dense = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    outs = []
    for L in (ptcore, torch):
        v = L.tensor(vals, requires_grad=True)
        d = L.tensor(dense, requires_grad=True)
        S = L.sparse_coo_tensor(L.tensor(idx), v, (2, 2, 3))
        y = L.bmm(S, d)
        (y * y).sum().backward()
        outs.append((y.detach().numpy(), v.grad.numpy(), d.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_sum_of_coalesced_tensors_is_coalesced():
    (p, t), (p2, t2) = _both(), _both([[0, 1], [0, 0]], [1.0, 2.0])
    _same(p.coalesce() + p2.coalesce(), t.coalesce() + t2.coalesce())
    r = p.coalesce() + p2.coalesce()
    np.testing.assert_array_equal(r.indices().numpy(),
                                  (t.coalesce() + t2.coalesce()).indices().numpy())
    _same(p.coalesce() - p2.coalesce(), t.coalesce() - t2.coalesce())
    assert (p + p2).is_coalesced() is False


def test_requires_grad_does_not_touch_the_values_argument():
    for L in (ptcore, torch):
        v = L.tensor(VALS)
        S = L.sparse_coo_tensor(L.tensor(IDX), v, (2, 3))
        S.requires_grad_()
        assert S.requires_grad and not v.requires_grad
        C = L.sparse_csr_tensor(L.tensor([0, 2, 3]), L.tensor([0, 2, 1]), v[:3], (2, 3))
        C.requires_grad_()
        assert C.requires_grad and not v.requires_grad
        assert L.sparse.mm(L.sparse_coo_tensor(L.tensor(IDX), v, (2, 3)),
                           L.ones(3, 1)).grad_fn is None


def _layouts(L, p):
    return {"coo": p, "coalesced": p.coalesce(), "csr": p.to_dense().to_sparse_csr(),
            "csc": p.to_dense().to_sparse_csc(), "dense": p.to_dense()}


def test_save_load_roundtrip():
    p, t = _both()
    buf = io.BytesIO()
    ptcore.save(_layouts(ptcore, p), buf)
    buf.seek(0)
    r = ptcore.load(buf)
    want = _layouts(torch, t)
    for k in want:
        if k == "dense":
            np.testing.assert_array_equal(r[k].numpy(), want[k].numpy())
        else:
            _same(r[k], want[k])


def test_load_torch_saved_sparse(tmp_path):
    _, t = _both()
    f = tmp_path / "sparse.pt"
    torch.save(_layouts(torch, t), f)
    r = ptcore.load(f)
    want = _layouts(torch, t)
    for k in want:
        if k != "dense":
            _same(r[k], want[k])


def test_load_refuses_out_of_range_sparse_indices(tmp_path):
    bad = torch.sparse_coo_tensor(torch.tensor([[5]]), torch.tensor([1.0]), (2,))
    f = tmp_path / "bad.pt"
    torch.save(bad, f)
    # (torch loads it unchecked unless its invariant checks are on; ptcore
    # always checks the indices of what it loads)
    with pytest.raises(RuntimeError):
        ptcore.load(f)
