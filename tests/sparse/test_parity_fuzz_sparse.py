"""Differential fuzzing of the sparse layouts against torch 2.13: regression
tests for the differences found (grad_fn names, conversions of tensors whose
values require grad, error types, permute/any/stride/comparisons)."""
import warnings

import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_X = [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]


def _both(f):
    """f(L, x, S) for torch and ptcore: x a dense leaf that requires grad, S
    its COO form."""
    out = []
    for L in (torch, ptcore):
        x = L.tensor(_X, requires_grad=True)
        out.append(f(L, x, x.to_sparse()))
    return out


def _name(r):
    return None if r.grad_fn is None else r.grad_fn.name()


_NAMED = {
    "to_sparse": lambda L, x, S: x.to_sparse(),
    "to_sparse(1)": lambda L, x, S: x.to_sparse(1),
    "to_sparse_csr": lambda L, x, S: x.to_sparse_csr(),
    "to_sparse_csc": lambda L, x, S: x.to_sparse_csc(),
    "coo->csr": lambda L, x, S: S.to_sparse_csr(),
    "csr->coo": lambda L, x, S: x.to_sparse_csr().to_sparse(),
    "t": lambda L, x, S: S.t(),
    "csr.t": lambda L, x, S: x.to_sparse_csr().t(),
    "transpose": lambda L, x, S: S.transpose(0, 1),
    "values": lambda L, x, S: S.values(),
    "S+S": lambda L, x, S: S + S,
    "S-S": lambda L, x, S: S - S,
    "sparse.sum(dim)": lambda L, x, S: L.sparse.sum(S, 0),
    "sum(dim)": lambda L, x, S: S.sum(0),
    "sparse.softmax": lambda L, x, S: L.sparse.softmax(S, 1),
    "sparse.log_softmax": lambda L, x, S: L.sparse.log_softmax(S, 1),
    "sparse.mm": lambda L, x, S: L.sparse.mm(S, L.ones(3, 2)),
    "mm": lambda L, x, S: L.mm(S, L.ones(3, 2)),
    "matmul": lambda L, x, S: L.matmul(S, L.ones(3, 2)),
    "@": lambda L, x, S: S @ L.ones(3, 2),
    "csr@": lambda L, x, S: x.to_sparse_csr() @ L.ones(3, 2),
    "mv": lambda L, x, S: S.mv(L.ones(3)),
    "sparse.addmm": lambda L, x, S: L.sparse.addmm(L.ones(2, 2), S, L.ones(3, 2)),
    "addmm": lambda L, x, S: L.addmm(L.ones(2, 2), S, L.ones(3, 2)),
    "select": lambda L, x, S: S.select(0, 1),
    "narrow_copy": lambda L, x, S: S.narrow_copy(0, 0, 1),
    "sparse_mask": lambda L, x, S: x.sparse_mask(S.detach()),
    "unsqueeze": lambda L, x, S: S.unsqueeze(0),
    "stack": lambda L, x, S: L.stack([S, S]),
    "bmm": lambda L, x, S: L.bmm(S.unsqueeze(0), L.ones(1, 3, 2)),
}


@pytest.mark.parametrize("case", list(_NAMED))
def test_grad_fn_names_as_torch(case):
    t, r = _both(_NAMED[case])
    assert _name(r) == _name(t)


@pytest.mark.parametrize("case", ["coo->csr", "csr->coo", "values", "t", "sparse.sum(dim)",
                                  "sparse.mm", "sparse.addmm", "stack"])
def test_gradients_through_named_ops_as_torch(case):
    grads = []
    for L in (torch, ptcore):
        x = L.tensor(_X, requires_grad=True)
        r = _NAMED[case](L, x, x.to_sparse())
        if r.layout != L.strided:
            r = r.to_dense()
        (r * L.arange(1.0, r.numel() + 1).reshape(r.shape)).sum().backward()
        grads.append(x.grad)
    np.testing.assert_allclose(grads[1].numpy(), grads[0].numpy())


def test_permute_as_torch():
    d = np.random.default_rng(0).normal(size=(2, 3, 4))
    d[d < 0] = 0
    for sparse_dim, perm in ((3, (2, 0, 1)), (3, (0, 1, 2)), (2, (1, 0, 2)), (1, (0, 2, 1))):
        t = torch.from_numpy(d).to_sparse(sparse_dim).permute(*perm)
        r = ptcore.from_numpy(d).to_sparse(sparse_dim).permute(*perm)
        assert tuple(r.shape) == tuple(t.shape) and r.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(r.to_dense().numpy(), t.to_dense().numpy())
    with pytest.raises(RuntimeError, match="sparse and dense"):
        torch.from_numpy(d).to_sparse(2).permute(2, 0, 1)
    with pytest.raises(RuntimeError, match="sparse and dense"):
        ptcore.from_numpy(d).to_sparse(2).permute(2, 0, 1)


def test_metadata_any_and_reshape_as_torch():
    for L in (torch, ptcore):
        S = L.tensor(_X).to_sparse()
        assert S.is_contiguous() is False
        assert tuple(S.stride()) == (0, 0)
        a = S.any()
        assert a.layout == L.strided and a.dtype == L.bool and bool(a)
        assert not bool(L.zeros(2, 3).to_sparse().any())
        with pytest.raises(RuntimeError, match="reshape"):
            S.reshape(-1)


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
@pytest.mark.parametrize("other", ["scalar", "sparse"])
def test_comparisons_have_no_sparse_kernel_as_torch(op, other):
    for L in (torch, ptcore):
        S = L.tensor(_X).to_sparse()
        o = 0 if other == "scalar" else S
        with pytest.raises(NotImplementedError):
            eval(f"S {op} o")
    S = ptcore.tensor(_X).to_sparse()
    assert S in [S] and len({S, S}) == 1       # (hashable; identity still finds it)


def test_softmax_of_a_sparse_tensor_goes_through_torch_sparse():
    for L in (torch, ptcore):
        S = L.tensor(_X).to_sparse()
        with pytest.raises(NotImplementedError):
            L.softmax(S, 1)
        assert L.sparse.softmax(S, 1).layout == L.sparse_coo


@pytest.mark.parametrize("fn", [
    lambda L, S: S @ S.t(),                                 # sparse_matmul
    lambda L, S: S.to_sparse_csr() @ L.ones(3, 2, dtype=L.int64),
    lambda L, S: S.to_sparse_csr() + S.to_sparse_csr(),
    lambda L, S: L.sparse.softmax(S, 1),
    lambda L, S: L.sparse.log_softmax(S, 0),
])
def test_integer_sparse_kernels_raise_as_torch(fn):
    for L in (torch, ptcore):
        S = L.tensor(_X).long().to_sparse()
        with pytest.raises(NotImplementedError):
            fn(L, S)


def test_integer_sparse_addmm_keeps_the_integer_dtype_as_torch():
    out = []
    for L in (torch, ptcore):
        S = L.tensor(_X).long().to_sparse()
        out.append(L.sparse.addmm(L.ones(2, 2, dtype=L.int64), S, L.ones(3, 2, dtype=L.int64),
                                  beta=2, alpha=3))
    assert str(out[1].dtype)[7:] == str(out[0].dtype)[6:] == "int64"
    np.testing.assert_array_equal(out[1].numpy(), out[0].numpy())


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, (0, 1)])
def test_compressed_sum_over_dims_needs_keepdim_as_torch(dim, keepdim):
    out = []
    for L in (torch, ptcore):
        C = L.tensor(_X).to_sparse_csr()
        if not keepdim:
            with pytest.raises(RuntimeError, match="keepdim=False"):
                C.sum(dim, keepdim=False)
            continue
        out.append(C.sum(dim, keepdim=True))
    if out:
        t, r = out
        assert r.layout == ptcore.sparse_csr and tuple(r.shape) == tuple(t.shape)
        np.testing.assert_array_equal(r.to_dense().numpy(), t.to_dense().numpy())


def test_empty_and_coalesced_flags_as_torch():
    for L in (torch, ptcore):
        E = L.zeros(3, 4).to_sparse()
        assert E.t().is_coalesced() and E.transpose(0, 1).is_coalesced()
        assert E.to_sparse_csr().crow_indices().dtype == L.int64
        assert not L.tensor([[0, 1.0], [0, 0]]).to_sparse().t().is_coalesced()


@pytest.mark.parametrize("fn, err", [
    (lambda L, V: V.transpose(0, 1), IndexError),
    (lambda L, V: L.sparse.mm(V, L.ones(4, 1)), IndexError),
    (lambda L, V: V.to_dense().to_sparse_csr(), IndexError),
    (lambda L, V: L.matmul(V, L.ones(4)), NotImplementedError),
])
def test_one_dimensional_errors_as_torch(fn, err):
    for L in (torch, ptcore):
        V = L.tensor([0.0, 1.0, 0.0, 2.0]).to_sparse()
        with pytest.raises(err):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(L, V)


# ---------------------------------------------------------------- hybrid COO tensors

_H = np.random.default_rng(1).normal(size=(3, 4, 2))
_H[np.random.default_rng(2).random((3, 4)) < 0.5] = 0


@pytest.mark.parametrize("sparse_dim", [1, 2])
@pytest.mark.parametrize("dims", [0, 1, 2, -1, (0, 1), (1, 2), (0, 2), (0, 1, 2)])
def test_hybrid_sparse_sum_over_dims_as_torch(sparse_dim, dims):
    t = torch.sparse.sum(torch.from_numpy(_H).to_sparse(sparse_dim), dims)
    r = ptcore.sparse.sum(ptcore.from_numpy(_H).to_sparse(sparse_dim), dims)
    assert (r.layout == ptcore.sparse_coo) == (t.layout == torch.sparse_coo)
    assert tuple(r.shape) == tuple(t.shape)
    if t.layout == torch.sparse_coo:
        assert r.sparse_dim() == t.sparse_dim() and r.is_coalesced() == t.is_coalesced()
        t, r = t.to_dense(), r.to_dense()
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("sparse_dim", [1, 2])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_hybrid_sparse_softmax_and_gradient_as_torch(sparse_dim, dim, fn):
    out = []
    for L in (torch, ptcore):
        x = L.tensor(_H, requires_grad=True)
        r = getattr(L.sparse, fn)(x.to_sparse(sparse_dim), dim).to_dense()
        (r * L.arange(24.0, dtype=L.float64).reshape(3, 4, 2)).sum().backward()
        out.append((r.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10, atol=1e-12)


def test_hybrid_transpose_and_conversions_as_torch():
    for L in (torch, ptcore):
        x = L.from_numpy(_H)
        S2 = x.to_sparse(2)
        np.testing.assert_array_equal(S2.transpose(0, 1).to_dense().numpy(),
                                      x.transpose(0, 1).numpy())
        for S, d0, d1 in ((x.to_sparse(1), 0, 1), (x.to_sparse(1), 1, 2), (S2, 1, 2)):
            with pytest.raises(RuntimeError, match="must be sparse"):
                S.transpose(d0, d1)
        with pytest.raises(RuntimeError, match="dense dimensions"):
            x[:, :, 0].to_sparse(1).t()
        with pytest.raises(RuntimeError, match="sparse_dim"):
            x.to_sparse(1).to_sparse_csr()
        with pytest.raises(RuntimeError, match="dense dims"):
            L.bmm(x.to_sparse(2), L.ones(3, 2, 5, dtype=L.float64))
    t = torch.from_numpy(_H).to_sparse(2).to_sparse_csr()
    r = ptcore.from_numpy(_H).to_sparse(2).to_sparse_csr()
    assert tuple(r.shape) == tuple(t.shape) and r.dense_dim() == t.dense_dim() == 1
    np.testing.assert_array_equal(r.to_dense().numpy(), t.to_dense().numpy())
    np.testing.assert_array_equal(r.crow_indices().numpy(), t.crow_indices().numpy())


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_compressed_sparse_softmax_has_no_kernel_as_torch(fn, layout):
    for L in (torch, ptcore):
        C = getattr(L.tensor(_X), "to_sparse_" + layout)()
        with pytest.raises(NotImplementedError):
            getattr(L.sparse, fn)(C, 1)
