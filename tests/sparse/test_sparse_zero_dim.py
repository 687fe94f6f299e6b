"""Sparse COO tensors with no sparse dims (a 0-d tensor's to_sparse(), or
indices of shape (0, nnz)) against torch: to_sparse of a 0-d tensor raised
NumPy's "nonzero on 0d arrays" error; to_dense and coalesce of such a
tensor raised an index_add_ size error (every entry is at the one position)."""
import warnings

import pytest

import ptcore

torch = pytest.importorskip("torch")


def _parts(s):
    return s._indices().shape, s._values().tolist(), s.is_coalesced()


@pytest.mark.parametrize("v", [2.5, 0.0, -1.0])
def test_zero_dim_to_sparse(v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.tensor(v).to_sparse()
        p = ptcore.tensor(v).to_sparse()
        assert tuple(p._indices().shape) == tuple(t._indices().shape)
        assert p._values().tolist() == t._values().tolist()
        assert p.shape == () and p.is_coalesced() == t.is_coalesced()
        assert p.to_dense().item() == t.to_dense().item()
        assert (p + p).to_dense().item() == (t + t).to_dense().item()
        assert (p + p)._values().tolist() == (t + t)._values().tolist()


def test_no_sparse_dims_coalesce_sums_every_entry():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.sparse_coo_tensor(torch.zeros(0, 3, dtype=torch.long), torch.tensor([1., 2, 3]), ())
        p = ptcore.sparse_coo_tensor(ptcore.zeros(0, 3, dtype=ptcore.long), ptcore.tensor([1., 2, 3]), ())
        tc, pc = t.coalesce(), p.coalesce()
        assert tuple(pc._indices().shape) == tuple(tc._indices().shape) == (0, 1)
        assert pc._values().tolist() == tc._values().tolist() == [6.0]
        assert p.to_dense().item() == t.to_dense().item() == 6.0
