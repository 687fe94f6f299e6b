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


# --- autograd of sparse tensors, conversions, legacy types, modules --------------------

CROW, COL = [0, 1, 3], [1, 0, 2]


def _csr_both(requires_grad):
    out = []
    for L in (ptcore, torch):
        v = L.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)
        out.append((L.sparse_csr_tensor(L.tensor(CROW), L.tensor(COL), v, (2, 3)), v))
    return out


def _grad_fn_name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_to_dense_is_differentiable_in_the_values(layout):
    w = np.arange(6.0).reshape(2, 3) + 1
    res = []
    for L in (ptcore, torch):
        v = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        if layout == "coo":         # uncoalesced: two entries at (1, 0)
            s = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 1], [1, 0, 2, 0]]), v, (2, 3))
        elif layout == "csr":
            s = L.sparse_csr_tensor(L.tensor([0, 1, 4]), L.tensor([1, 0, 1, 2]), v, (2, 3))
        else:
            s = L.sparse_csc_tensor(L.tensor([0, 1, 3, 4]), L.tensor([1, 0, 1, 0]), v, (2, 3))
        assert s.requires_grad and not s.is_leaf
        d = s.to_dense()
        assert _grad_fn_name(d) == "ToDenseBackward0"
        (d * L.tensor(w)).sum().backward()
        res.append((d.detach().numpy(), v.grad.numpy(), _grad_fn_name(s)))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]


def test_sparse_built_from_grad_values_prints_and_is_not_a_leaf():
    (p, pv), (t, tv) = _csr_both(True)
    assert repr(p).replace("ptcore", "torch") == repr(t)
    assert "grad_fn=<SparseCompressedTensorBackward0>" in repr(p)
    assert p.is_leaf is t.is_leaf is False
    with pytest.warns(UserWarning, match="not a leaf"):
        assert p.grad is None


def test_autograd_attributes_as_torch():
    for L in (ptcore, torch):
        s = L.eye(3).to_sparse().requires_grad_()
        assert s.is_leaf and s.requires_grad and s.grad_fn is None and s.grad is None
        assert not (s * 2).is_leaf and (s * 2).requires_grad
        s.requires_grad = False
        assert not s.requires_grad and s.is_leaf
        d = L.eye(3).to_sparse()
        assert d.is_leaf and not d.requires_grad
        p = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([1.0, 2.0]), (2, 2),
                                requires_grad=True)
        assert p.is_leaf
        L.sparse.mm(p, L.ones(2, 1)).sum().backward()
        assert p.grad.layout == p.layout and p.grad.coalesce().values().tolist() == [1.0, 1.0]
        p.grad = None
        assert p.grad is None
        assert p.data.requires_grad is False and p.data.layout == p.layout


def _coo_of(L):
    return L.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]).to_sparse()


@pytest.mark.parametrize("conv", [
    lambda L, s: s.cpu(), lambda L, s: s.coalesce().cpu(), lambda L, s: s.half(),
    lambda L, s: s.double(), lambda L, s: s.float(), lambda L, s: s.bfloat16(),
    lambda L, s: s.int(), lambda L, s: s.long(), lambda L, s: s.bool(),
    lambda L, s: s.to(L.float64), lambda L, s: s.to("cpu"), lambda L, s: s.to("cpu", L.int16),
    lambda L, s: s.to(dtype=L.float16), lambda L, s: s.to(s.double()),
    lambda L, s: s.to(L.ones(1, dtype=L.float64)), lambda L, s: s.type(L.float64),
    lambda L, s: s.type(L.sparse.DoubleTensor), lambda L, s: s.type(f"{L.__name__}.sparse.IntTensor"),
    lambda L, s: s.type(f"{L.__name__}.DoubleTensor"), lambda L, s: s.to_sparse_csr().cpu(),
    lambda L, s: s.to_sparse_csr().double(), lambda L, s: s.type_as(s.int()),
])
def test_conversions_as_torch(conv):
    p, t = conv(ptcore, _coo_of(ptcore)), conv(torch, _coo_of(torch))
    assert str(p.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    _same(p.double(), t.double())       # (no NumPy bfloat16)


def test_type_names_and_predicates_as_torch():
    p, t = _coo_of(ptcore), _coo_of(torch)
    assert p.type() == "ptcore.sparse.FloatTensor" and t.type() == "torch.sparse.FloatTensor"
    assert p.double().type() == "ptcore.sparse.DoubleTensor"
    for x in (p, t):
        assert (x.is_floating_point(), x.is_complex(), x.element_size(), x.is_cpu) == \
            (True, False, 4, True)
    with pytest.raises(RuntimeError, match="Unimplemented backend SparseCsrCPU"):
        p.to_sparse_csr().type()
    if not ptcore.cuda.is_available():
        # the dense tensors' error (sparse tensors move to CUDA where it is usable)
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            p.to("cuda")
    for x, L in ((p, ptcore), (t, torch)):
        with pytest.raises(RuntimeError, match="converting to a different layout"):
            x.type_as(L.ones(1))


@pytest.mark.parametrize("fn", [
    lambda L, s: L.zeros_like(s), lambda L, s: L.zeros_like(s, dtype=L.float64),
    lambda L, s: L.empty_like(s), lambda L, s: L.zeros_like(s.to_sparse_csr()),
    lambda L, s: L.zeros_like(s, layout=L.strided),
])
def test_zeros_like_as_torch(fn):
    p, t = fn(ptcore, _coo_of(ptcore)), fn(torch, _coo_of(torch))
    assert str(p.dtype) .split(".")[1] == str(t.dtype).split(".")[1]
    if t.layout == torch.strided:
        assert isinstance(p, ptcore.Tensor) and p.tolist() == t.tolist()
    else:
        _same(p, t)
        assert p._nnz() == t._nnz() == 0
    with pytest.raises(NotImplementedError):
        ptcore.ones_like(_coo_of(ptcore))


@pytest.mark.parametrize("dense", [[[1.0], [10.0]], [1.0, 10.0, 100.0], [[[1.0]], [[2.0]]],
                                   [[1, 2, 3], [4, 5, 6]], 3.0])
def test_mul_broadcasts_dense_as_torch(dense):
    res = []
    for L in (ptcore, torch):
        v = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = L.sparse_coo_tensor(L.tensor([[0, 1, 1], [1, 0, 2]]), v, (2, 3))
        d = L.tensor(dense, requires_grad=np.ndim(dense) == 2 and
                     isinstance(dense[0][0], float)) if isinstance(dense, list) else dense
        r = s * d
        assert r.layout == L.sparse_coo
        r2 = d * s
        _same(r2, r) if L is ptcore else None
        if tuple(r.shape) != (2, 3):      # (torch's backward of a broadcast result fails)
            res.append((r, None, None))
            continue
        r.to_dense().sum().backward()
        dg = getattr(d, "grad", None)       # (torch's is sparse, ptcore's dense)
        res.append((r, v.grad.numpy(), None if dg is None else
                    (dg.to_dense() if dg.layout != L.strided else dg).numpy()))
    _same(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    if res[1][2] is not None:
        np.testing.assert_array_equal(res[0][2], res[1][2])


def test_mul_broadcast_over_new_leading_dims_coalesces_as_torch():
    idx, vals = [[1, 0, 1], [2, 1, 2]], [1.0, 2.0, 3.0]          # (1, 2) twice
    p, t = _both(idx, vals)
    _same(p * ptcore.ones(2, 2, 3), t * torch.ones(2, 2, 3))
    _same(p * ptcore.ones(2, 3), t * torch.ones(2, 3))


def test_mul_hybrid_and_compressed_as_torch():
    for dense in ([1.0, 2.0, 3.0], np.ones((4, 2, 3))):
        p = ptcore.sparse_coo_tensor(ptcore.tensor([[0, 1]]), ptcore.ones(2, 3), (2, 3))
        t = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(2, 3), (2, 3))
        _same(p * ptcore.tensor(dense), t * torch.tensor(dense, dtype=torch.float32))
    p, t = _coo_of(ptcore).to_sparse_csr(), _coo_of(torch).to_sparse_csr()
    _same(p * ptcore.full((2, 3), 2.0), t * torch.full((2, 3), 2.0))
    with pytest.raises(RuntimeError, match="incompatible sizes"):
        p * ptcore.ones(2, 1)
    with pytest.raises(RuntimeError, match="incompatible sizes"):
        t * torch.ones(2, 1)


def test_dense_to_sparse_coo_as_torch():
    a = np.array([[0.0, 1.5], [2.0, 0.0]])
    _same(ptcore.tensor(a).to_sparse_coo(), torch.tensor(a).to_sparse_coo())


def test_legacy_sparse_types_as_torch():
    """pygcn's ``torch.sparse.FloatTensor(indices, values, shape)`` and the other
    legacy constructors and isinstance checks."""
    for make in (lambda L: L.sparse.FloatTensor(L.tensor([[0, 1], [1, 0]]),
                                                L.tensor([1.0, 2.0]), L.Size([2, 2])),
                 lambda L: L.sparse.FloatTensor(L.tensor([[0, 1], [1, 0]]),
                                                L.tensor([1.0, 2.0], dtype=L.float64), (2, 2)),
                 lambda L: L.sparse.FloatTensor(L.tensor([[0, 2]]), L.tensor([1.0, 2.0])),
                 lambda L: L.sparse.LongTensor(L.tensor([[0, 1]]), L.tensor([3, 4]), (2,)),
                 lambda L: L.sparse.DoubleTensor(2, 3), lambda L: L.sparse.FloatTensor(),
                 lambda L: L.sparse.IntTensor(L.Size([4]))):
        p, t = make(ptcore), make(torch)
        assert str(p.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        _same(p, t)
    for L in (ptcore, torch):
        s = L.sparse_coo_tensor(L.tensor([[0]]), L.tensor([1.0]), (2,))
        assert isinstance(s, L.sparse.FloatTensor) and not isinstance(s, L.sparse.DoubleTensor)
        assert not isinstance(L.ones(2), L.sparse.FloatTensor)
        assert not isinstance(s.to_sparse_csr() if s.dim() == 2 else s, L.FloatTensor)
        v = L.tensor([1.0], requires_grad=True)
        assert not L.sparse.FloatTensor(L.tensor([[0]]), v, (2,)).is_leaf
    assert repr(ptcore.sparse.FloatTensor) == "<class 'ptcore.sparse.FloatTensor'>"


def test_smm_and_sampled_addmm_as_torch():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    m1, m2 = np.arange(8.0).reshape(2, 4), np.arange(12.0).reshape(4, 3) / 10
    res = []
    for L in (ptcore, torch):
        s = L.tensor(a).to_sparse()
        r = s.smm(L.ones(3, 2, dtype=L.float64))
        assert r.layout == L.sparse_coo
        res.append(r.to_dense().numpy())
        c = L.tensor(a).to_sparse_csr().requires_grad_()
        x, y = L.tensor(m1, requires_grad=True), L.tensor(m2, requires_grad=True)
        o = L.sparse.sampled_addmm(c, x, y, beta=0.5, alpha=2.0)
        assert o.layout == L.sparse_csr
        o.values().sum().backward()
        res.append((o.values().detach().numpy(), c.grad.to_dense().numpy(),
                    x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_array_equal(res[0], res[2])
    for a_, b_ in zip(res[1], res[3]):
        np.testing.assert_allclose(a_, b_, rtol=1e-12)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        ptcore.sparse.sampled_addmm(ptcore.eye(2).to_sparse_csr(), ptcore.ones(2, 3),
                                    ptcore.ones(4, 2))
    with pytest.raises(NotImplementedError):
        ptcore.sparse.sampled_addmm(ptcore.eye(2).to_sparse(), ptcore.ones(2, 3),
                                    ptcore.ones(3, 2))


def test_sparse_compressed_tensor_as_torch():
    for layout in ("sparse_csr", "sparse_csc"):
        p, t = (L.sparse_compressed_tensor(L.tensor([0, 1, 3]), L.tensor([1, 0, 2]),
                                           L.tensor([1.0, 2.0, 3.0]), (2, 3) if layout ==
                                           "sparse_csr" else (3, 2), layout=getattr(L, layout))
                for L in (ptcore, torch))
        _same(p, t)
    for L in (ptcore, torch):
        for layout in (None, L.sparse_coo):
            with pytest.raises(RuntimeError, match="expected sparse compressed tensor layout"):
                L.sparse_compressed_tensor(L.tensor([0, 1]), L.tensor([0]), L.ones(1), (1, 1),
                                           layout=layout)


def test_check_sparse_tensor_invariants_api_as_torch():
    for L in (ptcore, torch):
        inv = L.sparse.check_sparse_tensor_invariants
        assert inv.is_enabled() is False
        with inv():
            assert inv.is_enabled() is True
            with inv(enable=False):
                assert inv.is_enabled() is False
            with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
                L.sparse_coo_tensor(L.tensor([[5]]), L.ones(1), (2,))
        assert inv.is_enabled() is False
        inv.enable()
        assert inv.is_enabled()
        inv.disable()

        @inv()
        def f():
            return inv.is_enabled()
        assert f() is True and inv.is_enabled() is False


@pytest.mark.parametrize("key", [0, -1, 1, (1, 2), (0, 0)])
def test_integer_indexing_and_select_as_torch(key):
    p, t = _coo_of(ptcore), _coo_of(torch)
    for conv in (lambda s: s, lambda s: s.to_sparse_csr()):
        rp, rt = conv(p)[key], conv(t)[key]
        if rt.layout == torch.strided:
            assert isinstance(rp, ptcore.Tensor) and rp.tolist() == rt.tolist()
        else:
            _same(rp, rt)
    _same(p.select(1, 2), t.select(1, 2))
    with pytest.raises(IndexError):
        p[2]
    with pytest.raises(NotImplementedError):
        p[0:1]


def test_svd_lowrank_of_sparse_as_torch():
    a = np.random.default_rng(0).standard_normal((8, 5))
    a[a < 0.5] = 0
    p = ptcore.svd_lowrank(ptcore.tensor(a).to_sparse(), q=4)[1]
    t = torch.svd_lowrank(torch.tensor(a).to_sparse(), q=4)[1]
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-8, atol=1e-10)
    p = ptcore.pca_lowrank(ptcore.tensor(a).to_sparse(), q=4, center=False)[1]
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-8, atol=1e-10)
    for x in (ptcore.tensor(a).to_sparse(), torch.tensor(a).to_sparse()):
        np.testing.assert_array_equal(x.mT.to_dense().numpy(), a.T)
        np.testing.assert_array_equal(x.mH.to_dense().numpy(), a.T)
        np.testing.assert_array_equal(x.T.to_dense().numpy(), a.T)


def test_modules_hold_sparse_buffers_and_parameters_as_torch():
    """GCN scripts: ``register_buffer('adj', sparse)``, ``nn.Parameter(sparse)``,
    ``module.double()``/``to()``, ``state_dict``/``load_state_dict``."""
    res = []
    for L in (ptcore, torch):
        assert L.is_tensor(_coo_of(L))
        m = L.nn.Module()
        m.register_buffer("adj", _coo_of(L))
        m.w = L.nn.Parameter(_coo_of(L))
        assert isinstance(m.w, L.nn.Parameter) and m.w.is_leaf and m.w.requires_grad
        m.to(L.float64)
        m.float().double()
        sd = m.state_dict()
        m2 = L.nn.Module()
        m2.register_buffer("adj", L.zeros_like(_coo_of(L)).double())
        m2.w = L.nn.Parameter(L.zeros_like(_coo_of(L)).double())
        m2.load_state_dict(sd)
        m2.adj = L.zeros_like(_coo_of(L))       # assigning a registered buffer
        L.sparse.mm(m2.w, L.ones(3, 1, dtype=L.float64)).sum().backward()
        res.append((str(m.adj.dtype).split(".")[1], str(m.w.dtype).split(".")[1], list(sd),
                    [x.layout == L.sparse_coo for x in sd.values()],
                    m2.w.to_dense().tolist(), m2.w.grad.to_dense().tolist(),
                    list(dict(m.named_parameters())), list(dict(m.named_buffers())),
                    m2.adj._nnz()))
    assert res[0] == res[1]


def test_pca_lowrank_centres_a_sparse_input():
    # torch's sparse branch: A stays sparse, the column means enter as M
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 10))
    a[rng.random(a.shape) < 0.6] = 0
    ptcore.manual_seed(0)
    U, S, V = ptcore.pca_lowrank(ptcore.tensor(a).to_sparse(), q=10, niter=6)
    ref = np.linalg.svd(a - a.mean(0), compute_uv=False)
    np.testing.assert_allclose(S.numpy(), ref, rtol=1e-8)
    with pytest.raises(ValueError, match="2-dimensional"):
        ptcore.pca_lowrank(ptcore.zeros(2, 3, 4).to_sparse(), q=2)


def test_tensor_of_a_sparse_tensor_copies_it_as_torch():
    """``torch.tensor(sparse)`` copy-constructs a sparse tensor (with torch's warning) and
    ``torch.as_tensor(sparse)`` returns it (sentence-transformers' conversion of its sparse
    embeddings); ``is_floating_point``/``is_complex``/``numel`` answer for sparse inputs."""
    p, t = _both()
    p.requires_grad_(True)
    t.requires_grad_(True)
    for L, a in ((ptcore, p), (torch, t)):
        with pytest.warns(UserWarning, match="copy construct"):
            c = L.tensor(a)
        assert c.is_sparse and not c.requires_grad
        with pytest.warns(UserWarning, match="copy construct"):
            d = L.tensor(a, dtype=L.float64, requires_grad=True)
        assert d.dtype == L.float64 and d.requires_grad
        assert L.as_tensor(a) is a
        assert L.as_tensor(a, dtype=L.float64).dtype == L.float64
    _same(ptcore.tensor(p), torch.tensor(t))
    for fn in ("is_floating_point", "is_complex", "numel"):
        assert getattr(ptcore, fn)(p) == getattr(torch, fn)(t), fn


def test_unbind_of_coo_as_torch():
    """``unbind`` (function and method) gives the slices of a COO tensor, and COO slices of
    a CSR one, as torch's."""
    p, t = _both()
    p, t = p.coalesce(), t.coalesce()
    cases = [(lambda L, a, d=d: L.unbind(a, d)) for d in (0, 1, -1)]
    cases += [lambda L, a: a.unbind(0), lambda L, a: a.to_sparse_csr().unbind(0)]
    for case in cases:
        got, want = case(ptcore, p), case(torch, t)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_dense_inplace_operator_with_sparse_operand_as_torch(dtype):
    """``w += s`` / ``w -= s`` write into the dense ``w`` and keep its dtype (PEFT's SHiRA
    adds a float32 sparse delta to a float16 weight); before, the operator fell back to
    ``w + s``, a new float32 tensor."""
    p, t = _both()
    res = []
    for L, s in ((ptcore, p), (torch, t)):
        w = L.ones(2, 3, dtype=getattr(L, dtype))
        w0 = w
        w += s
        w -= s * 0.5
        assert w is w0 and w.dtype == getattr(L, dtype)
        res.append(w.double().numpy())
    np.testing.assert_array_equal(res[0], res[1])
