"""Values and gradients (first and second order) of the everyday small calls
whose forward or backward takes a shortened path (``benchmarks/grad_calls.py``:
gather/scatter's one-kernel-call common case, ``x[idx]``'s backward by rows,
clamp's backward by ``where``), compared with torch -- the common case and
the cases next to it that must leave the short path (duplicate and negative
indices, strided and expanded operands, bounds given as tensors)."""
import numpy as np
import pytest

import ptcore

from ag_helpers import arrays, compare

torch = pytest.importorskip("torch")


def _pair(a, dtype="float32", requires_grad=True):
    p = ptcore.tensor(a, dtype=getattr(ptcore, dtype), requires_grad=requires_grad)
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return p, t


def _same(p, t, exact=True):
    assert tuple(p.shape) == tuple(t.shape)
    assert str(p.dtype) == str(t.dtype).replace("torch.", "ptcore.")
    a, b = p.detach().numpy(), t.detach().numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# gather / scatter / scatter_add
# ---------------------------------------------------------------------------

def _index(shape, size, seed, dup=True):
    rng = np.random.default_rng(seed)
    return rng.integers(0, size, shape) if dup else np.argsort(rng.random(shape), -1)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_values_and_grads_float32(dim):
    x = np.random.default_rng(0).standard_normal((6, 5))
    ishape = (4, 3)
    idx = _index(ishape, x.shape[dim], 1)
    px, tx = _pair(x)
    pi, ti = ptcore.tensor(idx), torch.tensor(idx)
    po, to = px.gather(dim, pi), tx.gather(dim, ti)
    _same(po, to)
    (po * po).sum().backward()
    (to * to).sum().backward()
    _same(px.grad, tx.grad)      # duplicates summed in the same order: the same bits


def test_gather_strided_input_and_index():
    x = np.random.default_rng(2).standard_normal((5, 8))
    idx = _index((8, 3), 5, 3)
    px, tx = _pair(x)
    pi, ti = ptcore.tensor(idx).t(), torch.tensor(idx).t()       # (3, 8), strided
    _same(px.t().gather(1, pi), tx.t().gather(1, ti))
    _same(px[:, ::2].gather(0, pi[:, :4]), tx[:, ::2].gather(0, ti[:, :4]))


def test_gather_grad_second_order():
    idx = _index((3, 2), 4, 4)
    compare(lambda L, x: x.gather(1, L.tensor(idx)) ** 2, arrays([(3, 4)]))


def test_gather_errors_still_raised():
    x = ptcore.zeros(3, 4)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(1, ptcore.tensor([[4]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.gather(1, ptcore.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="Size does not match"):
        x.gather(1, ptcore.zeros(4, 1, dtype=ptcore.int64))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, ptcore.zeros(3, dtype=ptcore.int64))
    # an int32 index and an empty one take the general path
    assert x.gather(1, ptcore.tensor([[1]], dtype=ptcore.int32)).tolist() == [[0.0]]
    assert tuple(x.gather(1, ptcore.zeros(0, 0, dtype=ptcore.int64)).shape) == (0, 0)


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_values_match_torch(op, dim):
    rng = np.random.default_rng(5)
    base = rng.standard_normal((5, 6))
    src = rng.standard_normal((4, 6))
    # scatter with duplicates has no defined winner in torch: unique positions there
    idx = _index((4, 3), base.shape[dim], 6, dup=op == "scatter_add") if dim == 1 or \
        op == "scatter_add" else np.stack([rng.permutation(5)[:4] for _ in range(3)], 1)
    pb, tb = _pair(base, requires_grad=False)
    ps, ts = _pair(src, requires_grad=False)
    pi, ti = ptcore.tensor(idx), torch.tensor(idx)
    _same(getattr(pb, op)(dim, pi, ps), getattr(tb, op)(dim, ti, ts))
    # an expanded (stride-0) and a transposed src
    pe, te = ps[:1].expand(4, 6), ts[:1].expand(4, 6)
    _same(getattr(pb, op)(dim, pi, pe), getattr(tb, op)(dim, ti, te))
    pt_, tt_ = ps.t().contiguous().t(), ts.t().contiguous().t()
    _same(getattr(pb, op)(dim, pi, pt_), getattr(tb, op)(dim, ti, tt_))
    # in place (the version counter moves)
    pc, tc = pb.clone(), tb.clone()
    v = pc._version
    getattr(pc, op + "_")(dim, pi, ps)
    getattr(tc, op + "_")(dim, ti, ts)
    _same(pc, tc)
    assert pc._version > v


def test_scatter_overlapping_src_takes_general_path():
    # src a view of self's storage: the general path's overlap checks decide, as before
    for lib in (ptcore, torch):
        x = lib.arange(12.0).view(3, 4)
        x.scatter_(1, lib.tensor([[0], [1], [2]]), x[:, 1:2])
        if lib is ptcore:
            got = x.tolist()
    assert got == x.tolist()
    for lib in (ptcore, torch):
        x = lib.arange(12.0).view(3, 4)
        with pytest.raises(RuntimeError, match="memory location"):
            x.scatter_(1, lib.tensor([[0, 1, 2, 3]] * 3), x)
    # a non-contiguous self also takes the general path
    y = ptcore.zeros(4, 3).t()
    y.scatter_add_(1, ptcore.tensor([[0, 0], [1, 1], [3, 3]]), ptcore.ones(3, 2))
    t = torch.zeros(4, 3).t()
    t.scatter_add_(1, torch.tensor([[0, 0], [1, 1], [3, 3]]), torch.ones(3, 2))
    assert y.tolist() == t.tolist()


def test_scatter_add_grads_second_order():
    idx = _index((3, 2), 4, 7)
    compare(lambda L, x, s: x.scatter_add(1, L.tensor(idx), s * s), arrays([(3, 4), (3, 2)]))


def test_max_dim_grads():
    a = arrays([(4, 5)], "distinct")[0]
    for lib_pair in [_pair(a), _pair(a, "float64")]:
        px, tx = lib_pair
        pv, pk = px.max(1)
        tv, tk = tx.max(1)
        _same(pv, tv)
        assert pk.tolist() == tk.tolist()
        (pv * 3).sum().backward()
        (tv * 3).sum().backward()
        _same(px.grad, tx.grad)
    compare(lambda L, x: x.max(1)[0] ** 2, [a])


# ---------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("idx", [[3, 0, 3, 1, 3], [-1, 0, -5, 2], [[1, 2], [2, 4]], [0]])
def test_index_rows_backward(idx):
    x = np.random.default_rng(8).standard_normal((5, 3))
    for dtype in ("float32", "float64"):
        px, tx = _pair(x, dtype)
        pi, ti = ptcore.tensor(idx), torch.tensor(idx)
        po, to = px[pi], tx[ti]
        _same(po, to)
        po.sum().backward()             # an expanded (stride-0) gradient
        to.sum().backward()
        _same(px.grad, tx.grad)
        w = np.random.default_rng(9).standard_normal(tuple(to.shape))
        (px[pi] * ptcore.tensor(w, dtype=po.dtype)).sum().backward()    # a dense one
        (tx[ti] * torch.tensor(w, dtype=to.dtype)).sum().backward()
        _same(px.grad, tx.grad)


def test_index_rows_backward_other_dtypes_and_shapes():
    # a 3-d source, and a half-precision one (the rows kernel is float32/float64 only)
    x = np.random.default_rng(10).standard_normal((4, 2, 3))
    for dtype in ("float32", "float16", "bfloat16"):
        px, tx = _pair(x, dtype)
        pi, ti = ptcore.tensor([2, 2, 0]), torch.tensor([2, 2, 0])
        (px[pi] * 2).sum().backward()
        (tx[ti] * 2).sum().backward()
        assert px.grad.float().tolist() == tx.grad.float().tolist()


def test_index_rows_grad_second_order():
    compare(lambda L, x: x[L.tensor([2, 0, 2, -1])] ** 2, arrays([(4, 3)]))


def test_index_out_of_range_still_raises():
    x = ptcore.zeros(3, 2, requires_grad=True)
    with pytest.raises(IndexError):
        x[ptcore.tensor([3])]


# ---------------------------------------------------------------------------
# clamp's backward (where(mask, grad, 0))
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda L, x: x.clamp_min(0.1),
    lambda L, x: x.clamp_max(-0.2),
    lambda L, x: x.clamp(-0.5, 0.5),
    lambda L, x: L.clamp(x, min=0.3),
])
def test_clamp_number_bounds(fn):
    compare(lambda L, x: fn(L, x) ** 2, arrays([(3, 4)]))


def test_clamp_tensor_bounds():
    compare(lambda L, x, lo, hi: L.clamp(x, lo, hi) ** 2, arrays([(3, 4), (4,), (3, 1)]))
    compare(lambda L, x, lo: L.clamp_min(x, lo) * 3, arrays([(3, 4), (3, 4)]))
    compare(lambda L, x, hi: L.clamp_max(x, hi) * 3, arrays([(3, 4), (1, 4)]))


def test_clamp_nonfinite_gradient_masked():
    # an inf incoming gradient where the bound is hit gives 0, not NaN (as torch)
    for L in (ptcore, torch):
        x = L.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        y = x.clamp(0.0, 1.0)
        (g,) = L.autograd.grad(y, x, L.tensor([float("inf")] * 3))
        assert [v if v == v else "nan" for v in g.tolist()] == [0.0, float("inf"), 0.0]


def test_normalize_values_and_grads():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 5))
    x[2] = 0.0                  # a zero row: the eps clamp holds there
    px, tx = _pair(x)
    po = ptcore.nn.functional.normalize(px)
    to = torch.nn.functional.normalize(tx)
    _same(po, to, exact=False)      # (the norm's sum accumulates in another order)
    po.sum().backward()
    to.sum().backward()
    _same(px.grad, tx.grad, exact=False)
    compare(lambda L, x: L.nn.functional.normalize(x, dim=0) ** 2, arrays([(3, 4)]))
    compare(lambda L, x: L.nn.functional.normalize(x, p=3.0, dim=1), arrays([(3, 4)]))


# ---------------------------------------------------------------------------
# binary_cross_entropy: the range checks, the loss and its input gradient in one kernel
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_values_and_input_grad(dtype, reduction):
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 1, (30, 51))
    x[0, :3] = [0.0, 1.0, 1e-30]        # the -100 clamps and the eps of the gradient
    t = rng.uniform(0, 1, (30, 51))
    t[1, :4] = [0.0, 1.0, 0.0, 1.0]
    px, tx = _pair(x, dtype)
    pt, tt = _pair(t, dtype, requires_grad=False)
    po = ptcore.nn.functional.binary_cross_entropy(px, pt, reduction=reduction)
    to = torch.nn.functional.binary_cross_entropy(tx, tt, reduction=reduction)
    assert type(po.grad_fn).__name__ == type(to.grad_fn).__name__
    # (torch's kernel takes glibc's scalar log1pf/logf: an ulp from its own log1p/log ops)
    _same(po, to, exact=False)
    if reduction == "none":
        # the one-call kernel gives the bits of the composite it replaces
        ref = (pt - 1) * ptcore.clamp_min(ptcore.log1p(-px), -100) \
            - pt * ptcore.clamp_min(ptcore.log(px), -100)
        np.testing.assert_array_equal(po.detach().numpy(), ref.detach().numpy())
    g = rng.standard_normal(tuple(to.shape)) * 1.7
    (pg,) = ptcore.autograd.grad(po, px, ptcore.tensor(g, dtype=po.dtype))
    (tg,) = torch.autograd.grad(to, tx, torch.tensor(g, dtype=to.dtype))
    _same(pg, tg)                   # torch's order of operations: the same bits


def test_bce_second_order_and_target_grad():
    rng = np.random.default_rng(13)
    x, t = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))
    for red in ("mean", "sum", "none"):
        compare(lambda L, x: L.nn.functional.binary_cross_entropy(x, L.tensor(t), reduction=red),
                [x])
        # a target that requires grad, a weight: the composite's node
        compare(lambda L, x, t: L.nn.functional.binary_cross_entropy(x, t, reduction=red),
                [x, t])
        compare(lambda L, x: L.nn.functional.binary_cross_entropy(
            x, L.tensor(t), weight=L.tensor(t[0]), reduction=red), [x])


@pytest.mark.parametrize("bad", [[0.5, 1.5], [float("nan"), 0.5], [-0.1, 0.5]])
def test_bce_range_errors(bad):
    for lib in (ptcore, torch):
        x = lib.tensor(bad, requires_grad=True)
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            lib.nn.functional.binary_cross_entropy(x, lib.tensor([0.5, 0.5]))
        with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
            lib.nn.functional.binary_cross_entropy(lib.tensor([0.5, 0.5]), x.detach())
    # both out of range: the input's error first, as torch
    with pytest.raises(RuntimeError, match="input"):
        ptcore.nn.functional.binary_cross_entropy(ptcore.tensor([2.0]), ptcore.tensor([2.0]))


# ---------------------------------------------------------------------------
# x ** 2 (x * x by the operators' path; its backward 2 * x without x ** 1)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "bfloat16", "int64"])
def test_pow2_values(dtype):
    a = np.random.default_rng(14).standard_normal((4, 5)) * 3
    for e in (2, 2.0):
        p = ptcore.tensor(a, dtype=getattr(ptcore, dtype))
        t = torch.tensor(a, dtype=getattr(torch, dtype))
        po, to = p.pow(e), t.pow(e)
        assert str(po.dtype) == str(to.dtype).replace("torch.", "ptcore.")
        assert po.tolist() == to.tolist()
        assert (p.t() ** e).tolist() == (t.t() ** e).tolist()     # strided: the general path


def test_pow2_grads():
    compare(lambda L, x: x.pow(2), arrays([(3, 4)]))
    compare(lambda L, x: x ** 2.0 * 3, arrays([(3, 4)]))
    compare(lambda L, x: L.pow(x, 2), arrays([(2, 3)], "cpx"))
    for lib_pair in [_pair(np.arange(-3.0, 3.0))]:
        px, tx = lib_pair
        (px.pow(2) * 1.5).sum().backward()
        (tx.pow(2) * 1.5).sum().backward()
        _same(px.grad, tx.grad)


# ---------------------------------------------------------------------------
# expand's node (the expanded dims summed, found when recorded) and the
# elementwise fast paths over a gradient expanded from one element
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape, to", [((3, 1), (3, 4)), ((1, 4), (2, 4)), ((1, 1), (2, 3)),
                                       ((3,), (2, 3)), ((2, 1, 3), (2, 4, 3)), ((3,), (3,))])
def test_expand_grads(shape, to):
    a = np.random.default_rng(15).standard_normal(shape)
    w = np.random.default_rng(16).standard_normal(to)
    compare(lambda L, x: x.expand(*to) * L.tensor(w), [a])
    compare(lambda L, x: x.expand_as(L.tensor(w)) ** 2, [a])
    px, tx = _pair(a)
    po, to_ = px.expand(*to), tx.expand(*to)
    assert type(po.grad_fn).__name__ == type(to_.grad_fn).__name__
    (po * ptcore.tensor(w, dtype=po.dtype)).sum().backward()
    (to_ * torch.tensor(w, dtype=to_.dtype)).sum().backward()
    _same(px.grad, tx.grad, exact=False)        # (a float32 sum, in another order)


def test_expand_of_transposed_and_of_expanded():
    a = np.random.default_rng(17).standard_normal((3, 2))
    compare(lambda L, x: x.t()[:, :1].expand(2, 3) * 2, [a])
    compare(lambda L, x: x[:1].expand(4, 2).expand(3, 4, 2) * 2, [a])


@pytest.mark.parametrize("fn", [
    lambda L, e, x: -e, lambda L, e, x: e * x, lambda L, e, x: x / e, lambda L, e, x: e - 2.0,
    lambda L, e, x: e * e, lambda L, e, x: e.exp(), lambda L, e, x: L.neg(x.t()),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_ops_on_a_gradient_expanded_from_one_element(fn, dtype):
    if dtype == "int64" and fn(torch, torch.ones((), dtype=torch.int64).expand(1),
                               torch.ones(1, dtype=torch.int64)).dtype.is_floating_point:
        return      # (exp, true division: float results, another path)
    res = []
    for L in (ptcore, torch):
        e = L.tensor(1.5 if dtype != "int64" else 3, dtype=getattr(L, dtype)).expand(3, 4)
        x = L.arange(1, 13, dtype=getattr(L, dtype)).reshape(3, 4)
        r = fn(L, e, x)
        res.append((r.tolist(), tuple(r.stride()), str(r.dtype).split(".")[-1]))
    assert res[0] == res[1]


@pytest.mark.parametrize("bshape", [(4,), (1, 4), (2, 1), (), (2, 4)])
def test_addmm_bias_gradient_reduced_in_the_formula(bshape):
    rng = np.random.default_rng(18)
    b, x, w = rng.standard_normal(bshape), rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    compare(lambda L, b, x, w: L.addmm(b, x, w.t()) ** 2, [b, x, w])
    compare(lambda L, b, x, w: L.addmm(b, x, w.t(), beta=0.5, alpha=2.0), [b, x, w])
    if len(bshape) == 1:
        compare(lambda L, b, x, w: L.nn.functional.linear(x, w, b), [b, x, w])
        px, tx = _pair(x)
        pw, tw = _pair(w)
        pb, tb = _pair(b)
        ptcore.nn.functional.linear(px, pw, pb).sum().backward()
        torch.nn.functional.linear(tx, tw, tb).sum().backward()
        for a, c in ((px, tx), (pw, tw), (pb, tb)):
            _same(a.grad, c.grad, exact=False)


@pytest.mark.parametrize("ord", [2, 2.0, 1, 0, 3.5, -1, float("inf"), -float("inf"), 0.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, True), (-1, False), ((0, 1), True)])
def test_vector_norm_common_call(ord, dim, keepdim):
    a = np.random.default_rng(19).standard_normal((3, 4))
    for dtype in ("float32", "float64"):
        p, t = _pair(a, dtype, requires_grad=False)
        po = ptcore.linalg.vector_norm(p, ord, dim, keepdim)
        to = torch.linalg.vector_norm(t, ord, dim, keepdim)
        _same(po, to, exact=False)
    if ord not in (0,):
        compare(lambda L, x: L.linalg.vector_norm(x, ord, dim, keepdim), [a])


def test_vector_norm_edges_keep_their_errors():
    for L in (ptcore, torch):
        with pytest.raises(RuntimeError, match="identity"):
            L.linalg.vector_norm(L.zeros(0, 3), float("inf"), 0)
        with pytest.raises(IndexError):
            L.linalg.vector_norm(L.zeros(2, 3), 2, 5)
        assert L.linalg.vector_norm(L.tensor(-3.0), 2).item() == 3.0
        assert L.linalg.vector_norm(L.zeros(0, 3), 2).item() == 0.0
    big = 10 ** 400
    with pytest.raises(Exception):
        torch.linalg.vector_norm(torch.ones(2), big)
    with pytest.raises(Exception):
        ptcore.linalg.vector_norm(ptcore.ones(2), big)


@pytest.mark.parametrize("shape", [(3, 4), (), (2, 0), (5,), (2, 1, 3)])
def test_full_sum_backward(shape):
    a = np.random.default_rng(20).standard_normal(shape)
    compare(lambda L, x: x.sum() * 2, [a])
    compare(lambda L, x: x.sum(dim=None, keepdim=True) ** 2 if x.dim() else x.sum() ** 2, [a])
    compare(lambda L, x: x.sum(dtype=L.float64) * 3, [a])
    for L in (ptcore, torch):
        x = L.ones(shape, requires_grad=True)
        x.sum().backward()
        assert tuple(x.grad.shape) == shape and x.grad.tolist() == np.ones(shape).tolist()


# ---------------------------------------------------------------------------
# index_add (embedding's backward): the common case in one kernel call
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1])
# (not bfloat16: duplicates there round each add to bfloat16, torch's kernel does not --
# as before this fast path, which gives the general loop's bits)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_index_add_values(dim, dtype):
    rng = np.random.default_rng(21)
    base = rng.standard_normal((5, 6)) * 4
    idx = [4, 0, 4, 2, 0]
    sshape = [5, 6]
    sshape[dim] = len(idx)
    src = rng.standard_normal(sshape) * 4
    out = []
    for L in (ptcore, torch):
        b = L.tensor(base).to(getattr(L, dtype))
        s_ = L.tensor(src).to(getattr(L, dtype))
        i = L.tensor(idx)
        r = [b.index_add(dim, i, s_), b.index_add(dim, i[::2], s_.narrow(dim, 0, 3)),
             b.index_add(dim, i, s_.t().contiguous().t()),                 # strided source
             b.index_add(dim, i, L.ones((), dtype=b.dtype).expand(*sshape)),   # expanded source
             b.index_add(dim, i, s_, alpha=2)]
        c = b.clone()
        v = c._version
        c.index_add_(dim, i, s_)
        assert c._version > v
        out.append([x.float().tolist() for x in r + [c]])
    assert out[0] == out[1]


def test_index_add_errors_and_embedding_grads():
    for L in (ptcore, torch):
        z = L.zeros(5, 3)
        with pytest.raises(RuntimeError, match="out of bounds"):
            z.index_add(0, L.tensor([5]), L.ones(1, 3))
        with pytest.raises(RuntimeError):
            z.index_add_(0, L.tensor([0, 1]), z[:2])                 # source overlaps self
    w = np.random.default_rng(22).standard_normal((10, 4))
    ids = [[1, 3, 1], [9, 0, 3]]
    compare(lambda L, w: L.nn.functional.embedding(L.tensor(ids), w) ** 2, [w])
    pw, tw = _pair(w)
    ptcore.nn.functional.embedding(ptcore.tensor(ids), pw).sum().backward()
    torch.nn.functional.embedding(torch.tensor(ids), tw).sum().backward()
    _same(pw.grad, tw.grad)
