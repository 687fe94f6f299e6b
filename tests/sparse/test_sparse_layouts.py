"""ptcore.sparse against torch.sparse and scipy.sparse: construction,
indices/values, coalesce, conversions between COO/CSR/CSC and dense,
zero-copy exchange with scipy.sparse, mm/addmm values and the dense
operand's gradient, errors."""
import numpy as np
import pytest

import ptcore
import ptcore.sparse as S

torch = pytest.importorskip("torch")
sp = pytest.importorskip("scipy.sparse")

rng = np.random.default_rng(5)


def _dense(shape=(6, 5), density=0.35):
    a = rng.standard_normal(shape)
    a[rng.random(shape) > density] = 0
    return a


def test_coo_construction_coalesce_against_torch():
    idx = np.array([[0, 2, 1, 0, 2], [1, 0, 3, 1, 0]])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    p = ptcore.sparse.sparse_coo_tensor(ptcore.from_numpy(idx), ptcore.from_numpy(vals), (3, 4))
    t = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(vals), (3, 4))
    assert p.is_coalesced() == t.is_coalesced() is False
    assert p._nnz() == t._nnz() == 5
    with pytest.raises(RuntimeError, match="uncoalesced"):
        p.indices()
    pc, tc = p.coalesce(), t.coalesce()
    assert pc.is_coalesced()
    assert pc.indices().tolist() == tc.indices().tolist()
    assert pc.values().tolist() == tc.values().tolist()
    np.testing.assert_array_equal(p.to_dense().numpy(), t.to_dense().numpy())
    assert tuple(p.shape) == (3, 4) and p.dtype is ptcore.float64 and p.layout is S.sparse_coo
    # inferred size
    q = S.sparse_coo_tensor(ptcore.from_numpy(idx), ptcore.from_numpy(vals))
    assert tuple(q.shape) == tuple(torch.sparse_coo_tensor(torch.from_numpy(idx),
                                                           torch.from_numpy(vals)).shape)


def test_nd_coo_to_dense():
    a = _dense((3, 4, 5))
    p = ptcore.from_numpy(a).to_sparse()
    t = torch.from_numpy(a).to_sparse()
    assert p.indices().tolist() == t.indices().tolist()
    np.testing.assert_array_equal(p.to_dense().numpy(), a)


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("idx_dtype", ["int32", "int64"])
def test_compressed_against_torch(layout, idx_dtype):
    a = _dense()
    m = (sp.csr_array if layout == "csr" else sp.csc_array)(a)
    comp, plain = m.indptr.astype(idx_dtype), m.indices.astype(idx_dtype)
    pf = S.sparse_csr_tensor if layout == "csr" else S.sparse_csc_tensor
    tf = torch.sparse_csr_tensor if layout == "csr" else torch.sparse_csc_tensor
    p = pf(ptcore.from_numpy(comp), ptcore.from_numpy(plain), ptcore.from_numpy(m.data), a.shape)
    t = tf(torch.from_numpy(comp), torch.from_numpy(plain), torch.from_numpy(m.data), a.shape)
    np.testing.assert_array_equal(p.to_dense().numpy(), t.to_dense().numpy())
    if layout == "csr":
        assert p.crow_indices().tolist() == t.crow_indices().tolist()
        assert p.col_indices().tolist() == t.col_indices().tolist()
        assert str(p.crow_indices().dtype)[7:] == str(t.crow_indices().dtype)[6:]
    else:
        assert p.ccol_indices().tolist() == t.ccol_indices().tolist()
        assert p.row_indices().tolist() == t.row_indices().tolist()


def test_conversions_against_torch():
    a = _dense()
    p, t = ptcore.from_numpy(a), torch.from_numpy(a)
    pr, tr = p.to_sparse_csr(), t.to_sparse_csr()
    assert pr.crow_indices().tolist() == tr.crow_indices().tolist()
    assert pr.col_indices().tolist() == tr.col_indices().tolist()
    np.testing.assert_array_equal(pr.values().numpy(), tr.values().numpy())
    pc, tc = p.to_sparse_csc(), t.to_sparse_csc()
    assert pc.ccol_indices().tolist() == tc.ccol_indices().tolist()
    assert pc.row_indices().tolist() == tc.row_indices().tolist()
    po, to = pr.to_sparse_coo(), tr.to_sparse_coo()
    assert po.indices().tolist() == to.coalesce().indices().tolist()
    for x in (pr, pc, po, pc.to_sparse_csr(), po.to_sparse_csc(), pr.to_sparse_csc(),
              pc.to_sparse_coo()):
        np.testing.assert_array_equal(x.to_dense().numpy(), a)
    np.testing.assert_array_equal(pr.t().to_dense().numpy(), a.T)
    np.testing.assert_array_equal(po.t().to_dense().numpy(), a.T)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_scipy_round_trip_shares_memory(fmt):
    m = sp.random(50, 40, density=0.1, format=fmt, random_state=1)
    x = S.from_scipy(m)
    assert x.layout is (S.sparse_csr if fmt == "csr" else S.sparse_csc)
    assert np.shares_memory(x.values().numpy(), m.data)
    assert np.shares_memory(x._parts[0].numpy(), m.indptr)
    assert np.shares_memory(x._parts[1].numpy(), m.indices)
    back = x.to_scipy()
    assert back.format == fmt
    assert np.shares_memory(back.data, m.data) and np.shares_memory(back.indptr, m.indptr)
    x.values().mul_(2)      # a write through the tensor is seen by SciPy
    np.testing.assert_allclose(back.toarray(), m.toarray())
    np.testing.assert_allclose(x.to_dense().numpy(), m.toarray())


def test_scipy_coo_and_other_formats():
    m = sp.random(20, 30, density=0.2, format="coo", random_state=2)
    x = S.from_scipy(m)
    assert x.layout is S.sparse_coo and np.shares_memory(x._values().numpy(), m.data)
    np.testing.assert_allclose(x.to_dense().numpy(), m.toarray())
    c = x.to_scipy()
    assert c.format == "coo" and np.shares_memory(c.data, m.data)
    lil = sp.lil_matrix(m.toarray())
    np.testing.assert_allclose(S.from_scipy(lil).to_dense().numpy(), m.toarray())
    with pytest.raises(TypeError, match="scipy.sparse"):
        S.from_scipy(np.eye(3))


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_mm_and_dense_gradient_against_torch(layout):
    a = _dense((6, 5))
    b = rng.standard_normal((5, 3))
    conv = {"coo": "to_sparse", "csr": "to_sparse_csr", "csc": "to_sparse_csc"}[layout]
    ps = getattr(ptcore.from_numpy(a), conv)()
    ts = getattr(torch.from_numpy(a), conv)()
    pb = ptcore.from_numpy(b.copy()).requires_grad_()
    tb = torch.from_numpy(b.copy()).requires_grad_()
    w = rng.standard_normal((6, 3))
    pr = S.mm(ps, pb)
    tr = torch.sparse.mm(ts, tb) if layout != "csc" else ts @ tb
    np.testing.assert_allclose(pr.detach().numpy(), tr.detach().numpy(), rtol=1e-12)
    (pr * ptcore.from_numpy(w)).sum().backward()
    (tr * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(pb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose((ps @ pb).detach().numpy(), a @ b, rtol=1e-12)


def test_mm_double_backward_and_addmm():
    a = _dense((4, 4))
    ps = ptcore.from_numpy(a).to_sparse_csr()
    x = ptcore.from_numpy(rng.standard_normal((4, 2))).requires_grad_()
    assert ptcore.autograd.gradcheck(lambda v: S.mm(ps, v), (x,))
    inp = ptcore.from_numpy(rng.standard_normal((4, 2)))
    r = S.addmm(inp, ps, x, beta=0.5, alpha=2.0)
    t = torch.sparse.addmm(torch.from_numpy(inp.numpy()), torch.from_numpy(a).to_sparse(),
                           torch.from_numpy(x.detach().numpy()), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(r.detach().numpy(), t.numpy(), rtol=1e-12)
    assert float(S.sum(ps)) == pytest.approx(float(torch.sparse.sum(torch.from_numpy(a).to_sparse())))


def test_errors():
    i = ptcore.tensor([[0, 1], [1, 5]])
    with pytest.raises(RuntimeError, match="size is inconsistent"):
        S.sparse_coo_tensor(i, ptcore.tensor([1.0, 2.0]), (2, 3))
    with pytest.raises(RuntimeError, match="same nnz"):
        S.sparse_coo_tensor(i, ptcore.tensor([1.0]), (2, 6))
    with pytest.raises(RuntimeError, match="size is inconsistent"):
        torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 5]]), torch.tensor([1.0, 2.0]), (2, 3),
                                check_invariants=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        S.sparse_csr_tensor(ptcore.tensor([0, 1], dtype=ptcore.int32), ptcore.tensor([0]),
                            ptcore.tensor([1.0]), (1, 2))
    with pytest.raises(RuntimeError, match="crow_indices"):
        S.sparse_csr_tensor(ptcore.tensor([0, 2]), ptcore.tensor([0]), ptcore.tensor([1.0]),
                            (1, 2))
    s = ptcore.eye(3).to_sparse_csr()
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        S.mm(s, ptcore.ones(4, 2))
    with pytest.raises(RuntimeError, match="crow_indices expected"):
        ptcore.eye(3).to_sparse().crow_indices()
