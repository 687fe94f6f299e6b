"""Sparse @ dense on the host through SciPy's compiled CSR/CSC kernels, with the
structure converted once per sparse tensor: values and gradients against torch for
every layout (COO coalesced, unsorted and with duplicates; CSR/CSC with int32 and
int64 indices), both orientations (sparse @ dense, dense @ sparse), vectors,
float32/float64/complex; the kept structure follows in-place changes of the indices."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")


def _coo(rng, m, k, nnz, dtype, sort=False, dup=False):
    rows = rng.integers(0, m, nnz)
    cols = rng.integers(0, k, nnz)
    if dup:
        rows[1::7], cols[1::7] = rows[0], cols[0]
    if sort:
        o = np.lexsort((cols, rows))
        rows, cols = rows[o], cols[o]
    vals = rng.standard_normal(nnz)
    if dtype.startswith("complex"):
        vals = vals + 1j * rng.standard_normal(nnz)
    return np.vstack((rows, cols)).astype(np.int64), vals.astype(dtype)


def _pair(idx, vals, shape, layout, index_dtype):
    p = ptcore.sparse_coo_tensor(ptcore.from_numpy(idx.copy()), ptcore.from_numpy(vals.copy()),
                                 shape)
    t = torch.sparse_coo_tensor(torch.from_numpy(idx.copy()), torch.from_numpy(vals.copy()),
                                shape)
    if layout == "coo_coalesced":
        p, t = p.coalesce(), t.coalesce()
    elif layout in ("csr", "csc"):
        p = getattr(p.coalesce(), f"to_sparse_{layout}")()
        t = getattr(t.coalesce(), f"to_sparse_{layout}")()
        if index_dtype == "int32":
            pc, pp = ((p.crow_indices(), p.col_indices()) if layout == "csr" else
                      (p.ccol_indices(), p.row_indices()))
            tc, tp = ((t.crow_indices(), t.col_indices()) if layout == "csr" else
                      (t.ccol_indices(), t.row_indices()))
            make_p = ptcore.sparse_csr_tensor if layout == "csr" else ptcore.sparse_csc_tensor
            make_t = torch.sparse_csr_tensor if layout == "csr" else torch.sparse_csc_tensor
            p = make_p(pc.int(), pp.int(), p.values(), shape)
            t = make_t(tc.int(), tp.int(), t.values(), shape)
    return p, t


@pytest.mark.parametrize("layout", ["coo", "coo_sorted", "coo_dup", "coo_coalesced", "csr",
                                    "csc"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_products_and_gradients_match_torch(layout, dtype):
    rng = np.random.default_rng(hash((layout, dtype)) % 1000)
    m, k, n = 7, 5, 3
    idx, vals = _coo(rng, m, k, 14, dtype, sort=layout == "coo_sorted", dup=layout == "coo_dup")
    for index_dtype in (("int64", "int32") if layout in ("csr", "csc") else ("int64",)):
        ps, ts = _pair(idx, vals, (m, k), layout, index_dtype)
        d = rng.standard_normal((k, n)).astype(dtype)
        e = rng.standard_normal((n, m)).astype(dtype)
        v = rng.standard_normal(k).astype(dtype)
        tol = dict(rtol=1e-5, atol=1e-5) if dtype in ("float32", "complex64") else {}
        for _ in range(2):      # the second product uses the kept structure
            np.testing.assert_allclose(ptcore.sparse.mm(ps, ptcore.from_numpy(d)).numpy(),
                                       torch.sparse.mm(ts, torch.from_numpy(d)).numpy(), **tol)
            np.testing.assert_allclose((ptcore.from_numpy(e) @ ps).numpy(),
                                       (torch.from_numpy(e) @ ts).numpy(), **tol)
            np.testing.assert_allclose(ptcore.mv(ps, ptcore.from_numpy(v)).numpy(),
                                       torch.mv(ts, torch.from_numpy(v)).numpy(), **tol)
        if layout.startswith("coo") and not dtype.startswith("complex"):
            # gradients of the values and of the dense operand, through both orientations
            pv = ptcore.from_numpy(vals.copy()).requires_grad_()
            tv = torch.from_numpy(vals.copy()).requires_grad_()
            pd = ptcore.from_numpy(d.copy()).requires_grad_()
            td = torch.from_numpy(d.copy()).requires_grad_()
            pe = ptcore.from_numpy(e.copy()).requires_grad_()
            te = torch.from_numpy(e.copy()).requires_grad_()
            P = ptcore.sparse_coo_tensor(ptcore.from_numpy(idx), pv, (m, k))
            T = torch.sparse_coo_tensor(torch.from_numpy(idx), tv, (m, k))
            w = rng.standard_normal((m, n)).astype(dtype)
            ((ptcore.sparse.mm(P, pd) * ptcore.from_numpy(w)).sum()
             + (pe @ P).pow(2).sum()).backward()
            ((torch.sparse.mm(T, td) * torch.from_numpy(w)).sum()
             + (te @ T).pow(2).sum()).backward()
            for a, b in ((pv, tv), (pd, td), (pe, te)):
                g = b.grad.to_dense() if b.grad.is_sparse else b.grad
                np.testing.assert_allclose(a.grad.numpy(), g.numpy(), rtol=1e-5, atol=1e-5)


def test_kept_structure_follows_in_place_index_changes():
    idx = ptcore.tensor([[0, 1, 2], [2, 0, 1]])
    s = ptcore.sparse_coo_tensor(idx, ptcore.tensor([1.0, 2.0, 3.0]), (3, 3))
    d = ptcore.eye(3)
    np.testing.assert_array_equal(ptcore.sparse.mm(s, d).numpy(), s.to_dense().numpy())
    s._indices()[1].copy_(ptcore.tensor([0, 1, 2]))      # the diagonal now
    np.testing.assert_array_equal(ptcore.sparse.mm(s, d).numpy(),
                                  np.diag([1.0, 2.0, 3.0]).astype(np.float32))


def test_mixed_dtypes_and_empty_products():
    s = ptcore.sparse_coo_tensor(ptcore.tensor([[0, 1], [1, 0]]), ptcore.tensor([1.0, 2.0]),
                                 (2, 2))
    t = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
    for p_d, t_d in ((ptcore.ones(2, 3, dtype=ptcore.float64), torch.ones(2, 3, dtype=torch.float64)),
                     (ptcore.ones(2, 0), torch.ones(2, 0))):
        try:
            want = torch.sparse.mm(t, t_d)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                ptcore.sparse.mm(s, p_d)
            continue
        got = ptcore.sparse.mm(s, p_d)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy())
    empty = ptcore.sparse_coo_tensor(ptcore.zeros(2, 0, dtype=ptcore.int64), ptcore.zeros(0),
                                     (3, 2))
    assert ptcore.sparse.mm(empty, ptcore.ones(2, 4)).tolist() == [[0.0] * 4] * 3
