"""embedding_bag / EmbeddingBag against PyTorch."""
import numpy as np
import pytest

import ptcore
import ptcore.nn as nn
import ptcore.nn.functional as F

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _pt(t):
    return ptcore.from_numpy(t.detach().cpu().numpy().copy())


def _close(a, b, rtol=1e-6, atol=1e-6):
    a = a.detach().numpy() if isinstance(a, ptcore.Tensor) else np.asarray(a)
    b = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _autograd_works():
    try:
        x = ptcore.ones(2, requires_grad=True)
        (x * x).sum().backward()
        return x.grad is not None
    except Exception:
        return False


needs_autograd = pytest.mark.skipif(not _autograd_works(), reason="autograd not available")

OFFSETS = [([0, 2, 2, 5], False), ([0, 2, 2, 5, 8], True), ([0, 0, 8], True), ([0], False)]


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4, -1])
@pytest.mark.parametrize("offsets,include_last_offset", OFFSETS)
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_embedding_bag_1d(dt, mode, padding_idx, offsets, include_last_offset, idx_dtype):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(10, 3, generator=g, dtype=getattr(torch, dt))
    inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9], dtype=getattr(torch, idx_dtype))
    off = torch.tensor(offsets, dtype=getattr(torch, idx_dtype))
    exp = torch.nn.functional.embedding_bag(inp, w, off, mode=mode, padding_idx=padding_idx,
                                            include_last_offset=include_last_offset)
    got = F.embedding_bag(_pt(inp), _pt(w), _pt(off), mode=mode, padding_idx=padding_idx,
                          include_last_offset=include_last_offset)
    assert got.dtype == getattr(ptcore, dt)
    _close(got, exp)


@needs_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_and_module(mode):
    torch.manual_seed(0)
    tm = torch.nn.EmbeddingBag(12, 4, mode=mode, padding_idx=0)
    pm = nn.EmbeddingBag(12, 4, mode=mode, padding_idx=0)
    assert np.all(pm.weight.detach().numpy()[0] == 0)
    pm.load_state_dict({"weight": _pt(tm.weight)})
    inp = torch.tensor([[1, 0, 3, 3], [0, 0, 0, 0], [11, 2, 5, 7]])
    _close(pm(_pt(inp)), tm(inp))
    assert repr(pm) == repr(tm)


@needs_torch
def test_embedding_bag_per_sample_weights_and_max_norm():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(10, 3, generator=g)
    inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 3, 3])
    psw = torch.rand(8, generator=g)
    exp = torch.nn.functional.embedding_bag(inp, w, off, mode="sum", per_sample_weights=psw,
                                            padding_idx=2)
    got = F.embedding_bag(_pt(inp), _pt(w), _pt(off), mode="sum",
                          per_sample_weights=_pt(psw), padding_idx=2)
    _close(got, exp)
    tw, pw = w.clone(), _pt(w)
    exp = torch.nn.functional.embedding_bag(inp.view(2, 4), tw, mode="mean", max_norm=0.7)
    got = F.embedding_bag(_pt(inp.view(2, 4)), pw, mode="mean", max_norm=0.7)
    _close(got, exp)
    _close(pw, tw)   # the in-place renormalisation of the weight


def test_embedding_bag_from_pretrained():
    w = ptcore.randn(5, 2)
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad
    out = bag(ptcore.tensor([[0, 1], [2, 2]]))
    a = w.numpy()
    np.testing.assert_allclose(out.numpy(), [a[0] + a[1], 2 * a[2]], rtol=1e-6)


def test_embedding_bag_errors():
    w = ptcore.randn(10, 3)
    inp = ptcore.tensor([1, 2, 3])
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(inp, w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(inp.view(1, 3), w, ptcore.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported"):
        F.embedding_bag(inp, w, ptcore.tensor([0]), mode="mean",
                        per_sample_weights=ptcore.ones(3))
    with pytest.raises(ValueError, match="same shape as the input"):
        F.embedding_bag(inp, w, ptcore.tensor([0]), mode="sum",
                        per_sample_weights=ptcore.ones(2))
    with pytest.raises(ValueError, match="mode has to be one of"):
        F.embedding_bag(inp, w, ptcore.tensor([0]), mode="median")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(inp, w, ptcore.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length"):
        F.embedding_bag(inp, w, ptcore.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="idx"):     # (torch: RuntimeError)
        F.embedding_bag(ptcore.tensor([1, 10]), w, ptcore.tensor([0]))
    with pytest.raises(RuntimeError, match="padding_idx must be within"):
        F.embedding_bag(inp, w, ptcore.tensor([0]), padding_idx=10)
    with pytest.raises(RuntimeError, match="scalar types: Long, Int"):
        F.embedding_bag(inp.float(), w, ptcore.tensor([0]))


@needs_torch
@needs_autograd
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradients(mode):
    g = torch.Generator().manual_seed(2)
    w = torch.randn(10, 3, generator=g, dtype=torch.float64, requires_grad=True)
    inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 2, 2, 5])
    psw = torch.rand(8, generator=g, dtype=torch.float64, requires_grad=True) \
        if mode == "sum" else None
    out = torch.nn.functional.embedding_bag(inp, w, off, mode=mode, per_sample_weights=psw,
                                            padding_idx=3)
    cw = torch.randn(out.shape, generator=g, dtype=torch.float64)
    (out * cw).sum().backward()
    pw = _pt(w).requires_grad_()
    ppsw = _pt(psw).requires_grad_() if psw is not None else None
    pout = F.embedding_bag(_pt(inp), pw, _pt(off), mode=mode, per_sample_weights=ppsw,
                           padding_idx=3)
    (pout * _pt(cw)).sum().backward()
    _close(pw.grad, w.grad, 1e-10, 1e-12)
    if psw is not None:
        _close(ppsw.grad, psw.grad, 1e-10, 1e-12)


SPARSE_CASES = [  # mode, per_sample_weights, offsets, include_last_offset, padding_idx, 2-D input
    ("mean", False, [0, 4], False, None, False),
    ("sum", True, [0, 2, 2, 5], False, None, False),
    ("sum", False, [0, 3, 8], True, 4, False),
    ("mean", False, [0, 2, 2, 5, 8], True, 2, False),
    ("sum", True, None, False, -1, True),
]


def _sparse_bag_grad(lib, w0, mode, use_psw, offsets, include_last_offset, padding_idx, two_d):
    w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
    inp = lib.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = None if offsets is None else lib.tensor(offsets)
    if two_d:
        inp = inp.view(2, 4)
    psw = lib.linspace(0.5, 2.0, 8).reshape(inp.shape).double() if use_psw else None
    out = lib.nn.functional.embedding_bag(inp, w, off, mode=mode, sparse=True,
                                          per_sample_weights=psw,
                                          include_last_offset=include_last_offset,
                                          padding_idx=padding_idx)
    (out * lib.arange(out.numel(), dtype=out.dtype).view(out.shape)).sum().backward()
    return w.grad


@needs_torch
@needs_autograd
@pytest.mark.parametrize("case", SPARSE_CASES)
def test_embedding_bag_sparse_gradient(case):
    w0 = np.random.default_rng(0).standard_normal((10, 3)).tolist()
    got = _sparse_bag_grad(ptcore, w0, *case)
    exp = _sparse_bag_grad(torch, w0, *case)
    assert got.layout is ptcore.sparse_coo and exp.layout is torch.sparse_coo
    assert got.is_coalesced() == exp.is_coalesced()
    np.testing.assert_array_equal(got._indices().numpy(), exp._indices().numpy())
    _close(got._values(), exp._values(), 1e-12, 1e-12)
    gc, ec = got.coalesce(), exp.coalesce()
    np.testing.assert_array_equal(gc.indices().numpy(), ec.indices().numpy())
    _close(gc.values(), ec.values(), 1e-12, 1e-12)


@needs_torch
@needs_autograd
@pytest.mark.parametrize("opt", ["SparseAdam", "SGD", "Adagrad"])
def test_embedding_bag_sparse_optimizer_steps(opt):
    """EmbeddingBag(sparse=True) trains with the optimizers that take sparse
    gradients; weights after a few steps match torch's."""
    w0 = np.random.default_rng(1).standard_normal((10, 3)).astype(np.float32)
    res = []
    for lib in (ptcore, torch):
        eb = lib.nn.EmbeddingBag(10, 3, mode="mean", sparse=True)
        with lib.no_grad():
            eb.weight.copy_(lib.from_numpy(w0.copy()))
        kw = {"lr": 0.1} if opt != "SGD" else {"lr": 0.1, "momentum": 0.0}
        o = getattr(lib.optim, opt)(eb.parameters(), **kw)
        for step in range(3):
            inp = lib.tensor([[1, 2, 4, 4], [5, 3, 2, 9], [step, 7, 7, 0]])
            o.zero_grad()
            (eb(inp) ** 2).sum().backward()
            o.step()
        res.append(eb.weight.detach().numpy().copy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6)


def test_embedding_bag_sparse_errors_as_torch():
    w = ptcore.randn(10, 3, requires_grad=True)
    inp = ptcore.tensor([1, 2, 3])
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        F.embedding_bag(inp, w, ptcore.tensor([0]), mode="max", sparse=True)
    out = F.embedding_bag(inp, w, ptcore.tensor([0]), mode="sum", sparse=True,
                          scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
        out.sum().backward()
