"""``ptcore.ops.aten`` with sparse operands, against ``torch.ops.aten``: torch's
operators take a sparse tensor for a ``Tensor`` argument (libraries' sparse
paths call ``torch.ops.aten.mm(sparse, dense)``, ``aten._nnz(adj)`` ...), and
the sparse accessors of a strided tensor raise torch's exception types."""
import numpy as np
import pytest

import ptcore
from ptcore._dispatch import op_schema

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(3)
D = _rng.standard_normal((3, 4)).astype(np.float32)
MASK = np.array([[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]], np.float32)
S = MASK * _rng.standard_normal((3, 4)).astype(np.float32)
R = _rng.standard_normal((4, 2)).astype(np.float32)


def _operands(L):
    return L.tensor(D), L.tensor(S).to_sparse(), L.tensor(R)


def _calls(L):
    a = L.ops.aten
    d, s, r = _operands(L)
    return {
        "mm": lambda: a.mm(s, r),
        "mm.default": lambda: a.mm.default(s, r),
        "_sparse_mm": lambda: a._sparse_mm(s, r),
        "_sparse_mm_csr": lambda: a._sparse_mm(s.to_sparse_csr(), r),
        "_sparse_mm_dense": lambda: a._sparse_mm(d, r),
        "addmm": lambda: a.addmm(L.ones(3, 2), s, r),
        "add_dense_sparse": lambda: a.add(d, s),
        "add_sparse_sparse": lambda: a.add(s, s, alpha=2),
        "sub": lambda: a.sub(s, s),
        "mul_scalar": lambda: a.mul(s, 2.0),
        "div": lambda: a.div(s, 4.0),
        "neg": lambda: a.neg(s),
        "abs": lambda: a.abs(s),
        "relu": lambda: a.relu(s),
        "t": lambda: a.t(s),
        "sum": lambda: a.sum(s),
        "clone": lambda: a.clone(s),
        "detach": lambda: a.detach(s),
        "sparse_mask": lambda: a.sparse_mask(d, s),
        "to_dense": lambda: a.to_dense(s),
        "_to_dense": lambda: a._to_dense(s),
        "_to_dense_default": lambda: a._to_dense.default(s),
        "_nnz": lambda: a._nnz(s),
        "_indices": lambda: a._indices(s),
        "_values": lambda: a._values(s),
        "indices": lambda: a.indices(s.coalesce()),
        "values": lambda: a.values(s.coalesce()),
        "coalesce": lambda: a.coalesce(s),
        "is_coalesced": lambda: a.is_coalesced(s),
        "sparse_dim": lambda: a.sparse_dim(s),
        "dense_dim": lambda: a.dense_dim(s),
        "to_sparse_csr": lambda: a.to_sparse_csr(s),
        "crow_indices": lambda: a.crow_indices(s.to_sparse_csr()),
        "col_indices": lambda: a.col_indices(s.to_sparse_csr()),
        "ccol_indices": lambda: a.ccol_indices(s.to_sparse_csc()),
        "row_indices": lambda: a.row_indices(s.to_sparse_csc()),
    }


def _facts(r):
    """(kind, layout name, dtype name, dense values) of a result."""
    if isinstance(r, (bool, int, float)):
        return ("number", r)
    layout = str(r.layout).split(".")[-1]
    dense = r.to_dense() if layout != "strided" else r
    return ("tensor", layout, str(r.dtype).split(".")[-1], tuple(r.shape),
            np.asarray(dense.tolist()))


@pytest.mark.parametrize("name", sorted(_calls(ptcore)))
def test_aten_with_sparse_operands_matches_torch(name):
    with np.errstate(all="ignore"):
        t = _facts(_calls(torch)[name]())
        p = _facts(_calls(ptcore)[name]())
    assert p[:-1] == t[:-1]
    np.testing.assert_allclose(p[-1], t[-1], rtol=1e-5, atol=1e-6)


_DENSE_ERRORS = ["_nnz", "_indices", "_values", "_to_dense", "indices", "values", "coalesce",
                 "is_coalesced", "crow_indices", "col_indices", "ccol_indices", "row_indices"]


@pytest.mark.parametrize("name", _DENSE_ERRORS)
def test_sparse_only_aten_ops_of_a_dense_tensor_raise_as_torch(name):
    with pytest.raises(Exception) as te:
        getattr(torch.ops.aten, name)(torch.tensor(D))
    with pytest.raises(type(te.value)) as pe:
        getattr(ptcore.ops.aten, name)(ptcore.tensor(D))
    assert "dense" in str(pe.value) or "Strided" in str(pe.value)


@pytest.mark.parametrize("name", ["indices", "values", "coalesce", "is_coalesced",
                                  "crow_indices", "col_indices", "ccol_indices", "row_indices"])
def test_sparse_accessor_methods_of_a_dense_tensor_raise_as_torch(name):
    assert hasattr(torch.tensor(D), name) and hasattr(ptcore.tensor(D), name)
    with pytest.raises(RuntimeError):
        getattr(torch.tensor(D), name)()
    with pytest.raises(RuntimeError, match="Strided"):
        getattr(ptcore.tensor(D), name)()


def test_to_dense_with_a_dtype_raises_as_torch():
    with pytest.raises(RuntimeError, match="dtype"):
        torch.ops.aten._to_dense(torch.tensor(S).to_sparse(), torch.float64)
    with pytest.raises(RuntimeError, match="dtype"):
        ptcore.ops.aten._to_dense(ptcore.tensor(S).to_sparse(), ptcore.float64)


def test_schema_binding_takes_a_sparse_tensor_for_a_tensor_only():
    s = ptcore.tensor(S).to_sparse()
    assert op_schema.is_tensor(s) and op_schema.is_tensor(ptcore.tensor(D))
    assert not op_schema.is_tensor(3.0) and not op_schema.is_tensor([s])
    # a sparse tensor is not a number, a list of ints or a dtype
    with pytest.raises(op_schema.SchemaMismatch, match="Tensor"):
        op_schema.bind(ptcore.ops.aten.sum.dim_IntList._schema, (ptcore.tensor(D), s), {})
    with pytest.raises(RuntimeError):
        torch.ops.aten.sum.dim_IntList(torch.tensor(D), torch.tensor(S).to_sparse())
    # a list of tensors takes sparse elements as torch's Tensor[] does
    schema = op_schema.parse("f(Tensor[] xs) -> Tensor")
    assert op_schema.bind(schema, ([s, ptcore.tensor(D)],), {})[0]["xs"][0] is s
