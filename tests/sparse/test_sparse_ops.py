"""Sparse products, reductions, softmax and arithmetic against torch, with
gradients for the dense operands and for the sparse values; a GCN-style
training run gives torch's losses."""
import numpy as np
import pytest

import ptcore

torch = pytest.importorskip("torch")

IDX = [[0, 1, 1, 2, 0, 3], [1, 0, 2, 1, 1, 3]]     # (0, 1) twice: uncoalesced
VAL = [1.0, 2.0, 3.0, 4.0, 5.0, -1.5]
RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))


def _coo(L, requires_grad=False, dtype=None):
    dtype = dtype or L.float64
    return L.sparse_coo_tensor(L.tensor(IDX), L.tensor(VAL, dtype=dtype), (4, 4),
                               requires_grad=requires_grad)


def _dense(x):
    if x.layout is not ptcore.strided and x.layout != torch.strided:
        x = x.to_dense()
    return x.detach().numpy()


def _same(fn, **kw):
    a, b = fn(ptcore), fn(torch)
    np.testing.assert_allclose(_dense(a), _dense(b), rtol=1e-10, atol=1e-12, **kw)
    return a, b


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
@pytest.mark.parametrize("form", ["sparse.mm", "mm", "matmul", "spmm", "@", "dense@", "mv"])
def test_products(layout, form):
    def run(L):
        S = _coo(L)
        if layout != "coo":
            S = S.coalesce()
            S = S.to_sparse_csr() if layout == "csr" else S.to_sparse_csc()
        x = L.tensor(X)
        if form == "sparse.mm":
            return L.sparse.mm(S, x)
        if form == "mm":
            return L.mm(S, x)
        if form == "matmul":
            return L.matmul(S, x)
        if form == "spmm":
            return L.spmm(S, x) if layout == "coo" else L.mm(S, x)
        if form == "@":
            return S @ x
        if form == "dense@":
            return x.T @ S
        return L.mv(S, x[:, 0])
    _same(run)


def test_gradients_of_values_and_dense():
    def run(L):
        S = _coo(L, requires_grad=True)
        x = L.tensor(X, requires_grad=True)
        y = L.sparse.mm(S, x)
        (y.sin() * y).sum().backward()
        return S.grad, x.grad
    (sg, xg), (tsg, txg) = run(ptcore), run(torch)
    np.testing.assert_allclose(_dense(xg), _dense(txg), rtol=1e-10)
    np.testing.assert_allclose(_dense(sg), _dense(tsg), rtol=1e-10)


def test_gradient_through_csr_values():
    def run(L):
        v = L.tensor([1.0, 2.0, 3.0, -2.0], dtype=L.float64, requires_grad=True)
        x = L.tensor(X, requires_grad=True)
        S = L.sparse_csr_tensor(L.tensor([0, 1, 3, 3, 4]), L.tensor([1, 0, 2, 3]), v, (4, 4))
        ((S @ x) ** 2).sum().backward()
        return v.grad, x.grad
    for a, b in zip(run(ptcore), run(torch)):
        np.testing.assert_allclose(_dense(a), _dense(b), rtol=1e-10)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1), None])
def test_sum(dim):
    a, b = _same(lambda L: L.sparse.sum(_coo(L)) if dim is None else L.sparse.sum(_coo(L), dim))
    if dim in (0, 1, -1):
        assert a.is_sparse and b.is_sparse and a.shape == tuple(b.shape)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_and_its_gradient(fn, dim):
    def run(L):
        v = L.tensor(VAL, dtype=L.float64, requires_grad=True)
        S = L.sparse_coo_tensor(L.tensor(IDX), v, (4, 4))
        r = getattr(L.sparse, fn)(S, dim)
        (r.coalesce().values() * L.arange(5, dtype=L.float64)).sum().backward()
        return r, v.grad
    (r, g), (tr, tg) = run(ptcore), run(torch)
    np.testing.assert_allclose(_dense(r), _dense(tr), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_dense(g), _dense(tg), rtol=1e-10, atol=1e-12)


def test_arithmetic():
    _same(lambda L: _coo(L) * 2)
    _same(lambda L: 2 * _coo(L))
    _same(lambda L: _coo(L) + _coo(L))
    _same(lambda L: _coo(L) - _coo(L) * 3)
    _same(lambda L: L.ones(4, 4, dtype=L.float64) + _coo(L))
    _same(lambda L: _coo(L) * L.arange(16, dtype=L.float64).reshape(4, 4))
    _same(lambda L: _coo(L).sum())
    _same(lambda L: _coo(L).t())
    _same(lambda L: _coo(L).transpose(0, 1))
    _same(lambda L: _coo(L) / 4)
    with pytest.raises(RuntimeError, match="add\\(sparse, dense\\)"):
        _coo(ptcore) + ptcore.ones(4, 4, dtype=ptcore.float64)
    a = _coo(ptcore, dtype=ptcore.float32).double()
    assert a.dtype is ptcore.float64 and not a.requires_grad
    assert _coo(ptcore).numel() == 16 and _coo(ptcore).sparse_dim() == 2
    assert _coo(ptcore).dense_dim() == 0 and len(_coo(ptcore)) == 4


def test_mismatches_raise():
    S = _coo(ptcore)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ptcore.sparse.mm(S, ptcore.ones(3, 2, dtype=ptcore.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        S @ ptcore.ones(4, 2)
    # as torch: no sparse kernel (NotImplementedError for COO, RuntimeError for CSR)
    with pytest.raises(NotImplementedError, match="aten::cos"):
        ptcore.cos(S)
    with pytest.raises(NotImplementedError, match="aten::cos"):
        S.cos()
    with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
        ptcore.cos(S.to_sparse_csr())


def test_gcn_training_matches_torch():
    """Two-layer GCN on a random graph: normalised sparse adjacency @ (X W)."""
    rng = np.random.default_rng(1)
    n, f, h, c = 30, 8, 16, 3
    edges = rng.integers(0, n, (2, 90))
    edges = np.concatenate([edges, edges[::-1], np.stack([np.arange(n)] * 2)], 1)
    deg = np.bincount(edges[0], minlength=n).astype(np.float32)
    w = (1 / np.sqrt(deg[edges[0]] * deg[edges[1]])).astype(np.float32)
    feats = rng.standard_normal((n, f)).astype(np.float32)
    labels = rng.integers(0, c, n)
    w1 = (rng.standard_normal((f, h)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((h, c)) * 0.3).astype(np.float32)

    def train(L):
        A = L.sparse_coo_tensor(L.tensor(edges), L.tensor(w), (n, n)).coalesce()
        x, y = L.tensor(feats), L.tensor(labels)
        p1 = L.nn.Parameter(L.tensor(w1))
        p2 = L.nn.Parameter(L.tensor(w2))
        opt = L.optim.Adam([p1, p2], lr=0.05)
        losses = []
        for _ in range(15):
            opt.zero_grad()
            hid = L.relu(L.sparse.mm(A, x @ p1))
            out = A @ (hid @ p2)
            loss = L.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            losses.append(float(loss))
        return losses
    np.testing.assert_allclose(train(ptcore), train(torch), rtol=2e-4)


def _layout_str(x):
    return str(x.layout).split(".")[-1]


def _same_sparse(fn):
    """fn gives torch's values, layout and (COO) coalesced flag."""
    a, b = _same(fn, equal_nan=True)
    assert _layout_str(a) == _layout_str(b)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    if _layout_str(b) == "sparse_coo":
        assert a.is_coalesced() == b.is_coalesced()
        if b.is_coalesced():
            np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())


UNARY = ["abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan", "atanh", "expm1",
         "log1p", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "erf", "erfinv",
         "deg2rad", "rad2deg", "relu", "signbit", "isnan", "isinf", "neg", "positive", "square",
         "nan_to_num"]
SMALL = [0.3, -0.4, 0.5, 0.6, 0.1, -0.9]       # in every function's domain but sqrt's


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("form", ["function", "method"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_value_unary_ops_like_torch(name, form, layout):
    """Zero-preserving elementwise ops on the stored values (COO coalesced
    first: sqrt of duplicates summed, as torch)."""
    def run(L):
        S = L.sparse_coo_tensor(L.tensor(IDX), L.tensor(SMALL, dtype=L.float64), (4, 4))
        if layout == "csr":
            S = S.coalesce().to_sparse_csr()
        return getattr(L, name)(S) if form == "function" else getattr(S, name)()
    try:
        run(torch)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            run(ptcore)
        return
    _same_sparse(run)


@pytest.mark.parametrize("e", [2, 0.5, -1, 3.0])
def test_pow_scalar_like_torch(e):
    _same_sparse(lambda L: _coo(L).pow(e))
    _same_sparse(lambda L: _coo(L) ** e)
    _same_sparse(lambda L: L.pow(_coo(L), e))


def test_pow_and_unsupported_ops_raise_like_torch():
    with pytest.raises(RuntimeError, match="zeroth power"):
        _coo(ptcore).pow(0)
    with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
        _coo(ptcore).coalesce().to_sparse_csr().pow(2)
    with pytest.raises(NotImplementedError):
        ptcore.exp(_coo(ptcore))
    with pytest.raises(NotImplementedError):
        _coo(ptcore).exp()
    assert isinstance(ptcore.sparse_coo, ptcore.layout)
    assert isinstance(_coo(ptcore).coalesce().to_sparse_csr().layout, ptcore.layout)


def test_unary_gradient_through_values():
    v = ptcore.tensor([0.3, -0.4, 0.5, 0.6, 0.1, -0.9], dtype=ptcore.float64, requires_grad=True)
    S = ptcore.sparse_coo_tensor(ptcore.tensor(IDX), v, (4, 4))
    g, = ptcore.autograd.grad(ptcore.sparse.sum(S.pow(2)), v)
    # (0, 1) is stored twice: its coalesced value is 0.3 + 0.1
    np.testing.assert_allclose(g.numpy(), [0.8, -0.8, 1.0, 1.2, 0.8, -1.8])


@pytest.mark.parametrize("case", ["rows", "rows-repeat", "cols", "neg-dim", "coalesced-cols"])
def test_index_select_like_torch(case):
    dim, index = {"rows": (0, [0, 2]), "rows-repeat": (0, [3, 0, 0]), "cols": (1, [1, 2]),
                  "neg-dim": (-1, [3]), "coalesced-cols": (1, [1])}[case]

    def run(L):
        S = _coo(L).coalesce() if case.startswith("coalesced") else _coo(L)
        return S.index_select(dim, L.tensor(index)) if case != "cols" else \
            L.index_select(S, dim, L.tensor(index))
    _same_sparse(run)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unsqueeze_like_torch(dim):
    a, b = _same(lambda L: _coo(L).unsqueeze(dim))
    assert tuple(a.shape) == tuple(b.shape)


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_sparse_mask_like_torch(layout):
    def run(L):
        S = _coo(L).coalesce()
        if layout == "csr":
            S = S.to_sparse_csr()
        return L.arange(16.0, dtype=L.float64).reshape(4, 4).sparse_mask(S)
    _same_sparse(run)


@pytest.mark.parametrize("case", ["square", "csr", "wide", "tall", "laplacian"])
def test_spdiags_like_torch(case):
    def run(L):
        if case == "square":
            return L.sparse.spdiags(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                                    L.tensor([0, -1]), (3, 3))
        if case == "csr":
            return L.sparse.spdiags(L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                                    L.tensor([0, 1]), (3, 4), layout=L.sparse_csr)
        if case == "wide":
            return L.sparse.spdiags(L.tensor([[1.0, 2.0, 3.0]]), L.tensor([2]), (2, 3))
        if case == "tall":
            return L.sparse.spdiags(L.arange(1.0, 13).reshape(3, 4), L.tensor([0, -2, 1]), (5, 4))
        return L.sparse.spdiags(L.tensor([[1.0] * 5, [-2.0] * 5, [1.0] * 5]),
                                L.tensor([-1, 0, 1]), (5, 5)) @ L.arange(5.0)
    _same(run)


@pytest.mark.parametrize("case", ["1", "kw", "3d-2", "3d-1"])
def test_to_sparse_with_sparse_dim_like_torch(case):
    def run(L):
        d = L.tensor([[[0.0, 1.0], [0.0, 0.0]], [[2.0, 0.0], [3.0, 4.0]]])
        if case == "1":
            return L.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).to_sparse(1)
        if case == "kw":
            return d[0].to_sparse(sparse_dim=2)
        return d.to_sparse(2 if case == "3d-2" else 1)
    a, b = _same(run)
    assert (a.sparse_dim(), a.dense_dim()) == (b.sparse_dim(), b.dense_dim())
    np.testing.assert_array_equal(a.indices().numpy(), b.indices().numpy())
    np.testing.assert_array_equal(a.values().numpy(), b.values().numpy())


@pytest.mark.parametrize("case", ["mm", "to_dense", "hybrid", "sum"])
def test_to_sparse_is_differentiable_like_torch(case):
    """Tensor.to_sparse() passes gradients back to the dense tensor (at the
    stored entries), as torch's ToSparseBackward."""
    def run(L):
        A = L.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0], [0.0, 0.0, 4.0]], dtype=L.float64,
                     requires_grad=True)
        x = L.tensor([[1.0], [2.0], [3.0]], dtype=L.float64)
        if case == "mm":
            out = L.sparse.mm(A.to_sparse(), x).sum()
        elif case == "to_dense":
            out = A.to_sparse().to_dense().pow(2).sum()
        elif case == "hybrid":
            out = (A.to_sparse(1).to_dense() * L.arange(9.0, dtype=L.float64).reshape(3, 3)).sum()
        else:
            out = L.sparse.sum(A.to_sparse() * 2)
        return L.autograd.grad(out, A)[0].numpy()
    np.testing.assert_allclose(run(ptcore), run(torch), rtol=1e-12)


@pytest.mark.parametrize("case", ["sparse.sum", "to_dense", "mm", "uncoalesced"])
def test_autograd_grad_with_respect_to_a_sparse_tensor(case):
    """autograd.grad(out, S) for a sparse S that requires grad gives a sparse
    gradient (duplicates of an uncoalesced S share one entry), as torch."""
    def run(L):
        if case == "uncoalesced":
            S = _coo(L, requires_grad=True)
        else:
            S = L.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0], [0.0, 0.0, 4.0]],
                         dtype=L.float64).to_sparse().requires_grad_(True)
        if case == "sparse.sum":
            out = L.sparse.sum(S)
        elif case == "to_dense":
            out = (S.to_dense() ** 2).sum()
        else:
            out = L.sparse.mm(S, L.ones(S.shape[1], 2, dtype=L.float64)).sum()
        g, = L.autograd.grad(out, S)
        assert _layout_str(g) == "sparse_coo"
        return g
    _same(run)


_MMR_A = np.array([[0, 1.5, 0, 2.0], [-2.0, 0, 3.0, 0], [0, 0, 0, 0], [1.0, 0, 0, -1.0]],
                  np.float32)
_MMR_B = np.random.default_rng(7).standard_normal((4, 3)).astype(np.float32)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_sparse_mm_with_reduce_like_torch(reduce):
    res = {}
    for lib in (torch, ptcore):
        b = lib.tensor(_MMR_B, requires_grad=True)
        out = lib.sparse.mm(lib.tensor(_MMR_A).to_sparse_csr(), b, reduce)
        (out * lib.arange(12.0).reshape(4, 3)).sum().backward()
        res[lib.__name__] = (out.detach().numpy().copy(), b.grad.numpy().copy())
    np.testing.assert_allclose(res["ptcore"][0], res["torch"][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(res["ptcore"][1], res["torch"][1], rtol=1e-6, atol=1e-6)


def test_sparse_mm_reduce_refuses_what_torch_refuses():
    for lib in (torch, ptcore):
        a, b = lib.tensor(_MMR_A), lib.tensor(_MMR_B)
        with pytest.raises(RuntimeError, match="prod"):
            lib.sparse.mm(a.to_sparse_csr(), b, "prod")
        with pytest.raises(NotImplementedError):
            lib.sparse.mm(a.to_sparse(), b, "mean")
