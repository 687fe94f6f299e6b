"""The one-kernel paths of EmbeddingBag (sum/mean/max bags and their weight
gradient), Embedding's dense weight gradient, and the backward of mean,
adaptive_avg_pool2d, cat, stack and index_select: values against NumPy
references and against torch, strided inputs, dtypes, 1 and 2 threads (the
same bits), bad indices, gradcheck/gradgradcheck."""
import numpy as np
import pytest

import ptcore
from ptcore.autograd import gradcheck, gradgradcheck

F = ptcore.nn.functional
MODES = ["sum", "mean", "max"]


def _np_bags(w, idx, bounds, mode, psw=None, pad=None):
    """NumPy reference of embedding_bag: ``bounds`` the (start, stop) of each bag."""
    out = np.zeros((len(bounds), w.shape[1]), w.dtype)
    for b, (a, z) in enumerate(bounds):
        rows = [(p, idx[p]) for p in range(a, z) if idx[p] != pad]
        if not rows:
            continue
        vals = np.stack([w[r] * (psw[p] if psw is not None else 1) for p, r in rows])
        out[b] = {"sum": vals.sum(0), "mean": vals.mean(0), "max": vals.max(0)}[mode]
    return out


def _fixed(B, L):
    return [(b * L, (b + 1) * L) for b in range(B)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("pad", [None, 2])
def test_embedding_bag_2d_numpy(mode, dtype, pad):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((13, 7)).astype(np.float32 if dtype == ptcore.float32 else np.float64)
    tok = rng.integers(0, 13, (5, 3))
    tok[0] = 2                              # a bag of padding only: zeros
    out = F.embedding_bag(ptcore.tensor(tok), ptcore.tensor(w), mode=mode, padding_idx=pad)
    ref = _np_bags(w, tok.reshape(-1), _fixed(5, 3), mode, pad=pad)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)
    assert out.dtype == dtype and tuple(out.shape) == (5, 7)


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_offsets_and_weight_grad_numpy(mode):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((9, 5))
    idx = rng.integers(0, 9, 11)
    offs = [0, 3, 3, 8]
    bounds = [(0, 3), (3, 3), (3, 8), (8, 11)]
    wt = ptcore.tensor(w, requires_grad=True)
    out = F.embedding_bag(ptcore.tensor(idx), wt, ptcore.tensor(offs), mode=mode)
    np.testing.assert_allclose(out.detach().numpy(), _np_bags(w, idx, bounds, mode), rtol=1e-12)
    g = rng.standard_normal(out.shape)
    out.backward(ptcore.tensor(g))
    ref = np.zeros_like(w)
    for b, (a, z) in enumerate(bounds):
        if a == z:
            continue
        if mode == "max":
            for j in range(w.shape[1]):
                vals = [w[idx[p], j] for p in range(a, z)]
                ref[idx[a + int(np.argmax(vals))], j] += g[b, j]
        else:
            for p in range(a, z):
                ref[idx[p]] += g[b] / ((z - a) if mode == "mean" else 1)
    np.testing.assert_allclose(wt.grad.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_embedding_bag_strided_weight_and_psw():
    rng = np.random.default_rng(2)
    big = rng.standard_normal((8, 12)).astype(np.float32)
    w = ptcore.tensor(big)[:, ::2]                  # non-contiguous rows
    idx = rng.integers(0, 8, (4, 5))
    psw = rng.standard_normal((4, 5)).astype(np.float32)
    out = F.embedding_bag(ptcore.tensor(idx), w, mode="sum",
                          per_sample_weights=ptcore.tensor(psw))
    ref = _np_bags(big[:, ::2], idx.reshape(-1), _fixed(4, 5), "sum", psw=psw.reshape(-1))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_threads_same_bits(mode):
    g = ptcore.Generator().manual_seed(3)
    w = ptcore.randn(1000, 67, generator=g, requires_grad=True)
    tok = ptcore.randint(0, 1000, (301, 17), generator=g)
    res = []
    old = ptcore.get_num_threads()
    try:
        for nt in (1, 2):
            ptcore.set_num_threads(nt)
            w.grad = None
            out = F.embedding_bag(tok, w, mode=mode)
            out.pow(2).sum().backward()
            res.append((out.detach().numpy().copy(), w.grad.numpy().copy()))
    finally:
        ptcore.set_num_threads(old)
    assert np.array_equal(res[0][0], res[1][0]) and np.array_equal(res[0][1], res[1][1])


@pytest.mark.parametrize("bad", [-1, 13])
def test_embedding_bag_bad_index(bad):
    w = ptcore.randn(13, 4)
    with pytest.raises(RuntimeError, match="idx < num_embeddings"):
        F.embedding_bag(ptcore.tensor([[1, bad]]), w)
    with pytest.raises(RuntimeError, match="idx < num_embeddings"):
        F.embedding_bag(ptcore.tensor([1, bad]), w, ptcore.tensor([0]))


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_gradcheck(mode):
    g = ptcore.Generator().manual_seed(4)
    w = ptcore.randn(6, 3, dtype=ptcore.float64, generator=g, requires_grad=True)
    tok = ptcore.tensor([[0, 2, 5], [1, 1, 3]])
    fn = lambda w: F.embedding_bag(tok, w, mode=mode, padding_idx=3)   # noqa: E731
    assert gradcheck(fn, (w,))
    assert gradgradcheck(fn, (w,))
    psw = ptcore.randn(2, 3, dtype=ptcore.float64, generator=g, requires_grad=True)
    if mode == "sum":
        fn2 = lambda w, p: F.embedding_bag(tok, w, mode="sum", per_sample_weights=p)  # noqa: E731
        assert gradcheck(fn2, (w, psw))
        assert gradgradcheck(fn2, (w, psw))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad", [None, 0])
@pytest.mark.parametrize("two_d", [True, False])
def test_embedding_bag_torch(mode, pad, two_d):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((31, 9)).astype(np.float32)
    if two_d:
        idx, offs = rng.integers(0, 31, (7, 5)), None
    else:
        idx, offs = rng.integers(0, 31, 23), np.array([0, 4, 4, 10, 22])
    wt = torch.tensor(w, requires_grad=True)
    wp = ptcore.tensor(w, requires_grad=True)
    ot = torch.nn.functional.embedding_bag(
        torch.tensor(idx), wt, None if offs is None else torch.tensor(offs), mode=mode,
        padding_idx=pad)
    op = F.embedding_bag(ptcore.tensor(idx), wp, None if offs is None else ptcore.tensor(offs),
                         mode=mode, padding_idx=pad)
    assert op.grad_fn.name() == ot.grad_fn.name()
    np.testing.assert_allclose(op.detach().numpy(), ot.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(tuple(ot.shape)).astype(np.float32)
    ot.backward(torch.tensor(g))
    op.backward(ptcore.tensor(g))
    np.testing.assert_allclose(wp.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# backward of mean, adaptive_avg_pool2d, cat, stack, index_select (expanded
# gradients: elementwise rows whose inputs are all broadcast are computed once)
# ---------------------------------------------------------------------------

def _grad(fn, x, gout=None):
    x = x.detach().requires_grad_()
    out = fn(x)
    if gout is None:
        out.sum().backward()
    else:
        (out * gout).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
def test_mean_pool_backward_numpy(dtype):
    g = ptcore.Generator().manual_seed(6)
    x = ptcore.randn(7, 13, dtype=dtype, generator=g)
    np.testing.assert_array_equal(_grad(lambda t: t.mean(1), x), np.full((7, 13), 1 / 13, x.numpy().dtype))
    img = ptcore.randn(3, 5, 7, 9, dtype=dtype, generator=g)
    np.testing.assert_array_equal(_grad(lambda t: F.adaptive_avg_pool2d(t, 1), img),
                                  np.full((3, 5, 7, 9), 1 / 63, img.numpy().dtype))
    strided = ptcore.randn(7, 26, dtype=dtype, generator=g)[:, ::2]
    gw = ptcore.randn(7, dtype=dtype, generator=g)
    ref = np.repeat((gw.numpy() / 13)[:, None], 13, 1)
    np.testing.assert_array_equal(_grad(lambda t: t.mean(1), strided, gw), ref)


def test_cat_stack_index_select_backward_numpy():
    g = ptcore.Generator().manual_seed(7)
    x = ptcore.randn(9, 11, generator=g)
    np.testing.assert_array_equal(_grad(lambda t: ptcore.cat([t, t], 1), x), np.full((9, 11), 2.0, np.float32))
    np.testing.assert_array_equal(_grad(lambda t: ptcore.stack([t, t, t]), x), np.full((9, 11), 3.0, np.float32))
    idx = ptcore.tensor([0, 3, 3, 8, 0, 0])
    ref = np.zeros((9, 11), np.float32)
    np.add.at(ref, idx.numpy(), 1.0)
    np.testing.assert_array_equal(_grad(lambda t: t.index_select(0, idx), x), ref)
    with pytest.raises(IndexError):
        x.index_select(0, ptcore.tensor([9]))


def test_broadcast_rows_elementwise_same_bits():
    g = ptcore.Generator().manual_seed(8)
    col = ptcore.randn(33, 1, generator=g)
    e = col.expand(33, 130)
    for fn in (lambda t: t / 7, lambda t: t * 0.3, lambda t: t + t, ptcore.exp, ptcore.tanh):
        assert np.array_equal(fn(e).numpy(), fn(e.contiguous()).numpy())
    s = ptcore.tensor(2.5).expand(1000)
    assert np.array_equal((s / 3).numpy(), np.full(1000, np.float32(2.5) / np.float32(3)))


@pytest.mark.parametrize("nt", [1, 2])
def test_reductions_backward_threads(nt):
    old = ptcore.get_num_threads()
    try:
        ptcore.set_num_threads(nt)
        x = ptcore.randn(300, 517, generator=ptcore.Generator().manual_seed(9))
        got = _grad(lambda t: t.mean(1), x)
    finally:
        ptcore.set_num_threads(old)
    np.testing.assert_array_equal(got, np.full((300, 517), np.float32(1) / np.float32(517)))


def test_backward_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    img = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    idx = np.array([1, 5, 5, 0])
    for fn_p, fn_t, a in [
            (lambda t: t.mean(1), lambda t: t.mean(1), x),
            (lambda t: F.adaptive_avg_pool2d(t, 1), lambda t: torch.nn.functional.adaptive_avg_pool2d(t, 1), img),
            (lambda t: ptcore.cat([t, t], 1), lambda t: torch.cat([t, t], 1), x),
            (lambda t: ptcore.stack([t, t]), lambda t: torch.stack([t, t]), x),
            (lambda t: t.index_select(0, ptcore.tensor(idx)), lambda t: t.index_select(0, torch.tensor(idx)), x)]:
        tp = ptcore.tensor(a, requires_grad=True)
        tt = torch.tensor(a, requires_grad=True)
        fn_p(tp).sum().backward()
        fn_t(tt).sum().backward()
        np.testing.assert_allclose(tp.grad.numpy(), tt.grad.numpy(), rtol=1e-6, atol=0)


def test_backward_gradgradcheck():
    g = ptcore.Generator().manual_seed(11)
    x = ptcore.randn(3, 4, dtype=ptcore.float64, generator=g, requires_grad=True)
    img = ptcore.randn(1, 2, 3, 3, dtype=ptcore.float64, generator=g, requires_grad=True)
    idx = ptcore.tensor([2, 0, 2])
    for fn, a in [(lambda t: t.mean(1), x), (lambda t: F.adaptive_avg_pool2d(t, 1), img),
                  (lambda t: ptcore.cat([t, t * 2], 1), x), (lambda t: ptcore.stack([t, t]), x),
                  (lambda t: t.index_select(0, idx), x)]:
        assert gradcheck(fn, (a,))
        assert gradgradcheck(fn, (a,))


@pytest.mark.parametrize("dtype", [ptcore.float32, ptcore.float64])
@pytest.mark.parametrize("pad", [None, 1])
def test_embedding_weight_grad_numpy(dtype, pad):
    rng = np.random.default_rng(12)
    w = ptcore.tensor(rng.standard_normal((11, 6)), dtype=dtype, requires_grad=True)
    tok = rng.integers(0, 11, (5, 7))
    out = F.embedding(ptcore.tensor(tok), w, padding_idx=pad)
    gout = ptcore.tensor(rng.standard_normal((5, 7, 6)), dtype=dtype)[:, :, :]
    (out * gout).sum().backward()
    ref = np.zeros((11, 6), gout.numpy().dtype)
    np.add.at(ref, tok.reshape(-1), gout.numpy().reshape(-1, 6))
    if pad is not None:
        ref[pad] = 0
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-6, atol=1e-6)
    w.grad = None
    F.embedding(ptcore.tensor(tok), w).sum().backward()          # an expanded gradient
    ref = np.zeros((11, 6), ref.dtype)
    np.add.at(ref, tok.reshape(-1), 1.0)
    np.testing.assert_array_equal(w.grad.numpy(), ref)
    with pytest.raises(IndexError):
        F.embedding(ptcore.tensor([11]), w)


def test_embedding_gradgradcheck():
    w = ptcore.randn(5, 3, dtype=ptcore.float64, requires_grad=True,
                     generator=ptcore.Generator().manual_seed(13))
    tok = ptcore.tensor([[0, 4, 4], [2, 0, 1]])
    assert gradcheck(lambda w: F.embedding(tok, w) ** 2, (w,))
    assert gradgradcheck(lambda w: F.embedding(tok, w) ** 2, (w,))
